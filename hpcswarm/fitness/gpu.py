"""The k-NN fitness on a GPU (CuPy): the matrix on the device once, only masks sent after.

:class:`DeviceScorer` is the exact engine (:class:`~hpcswarm.fitness.evaluator.KnnEvaluator`:
folds, sample shards, validation of the arguments, the counts summed over shards) with its
arithmetic moved to an array module ``xp``: the Gram products of a full evaluation, the
incremental update of a cached state (Tran, Xue, Zhang and Nguyen 2016, Sect. 3.2), the
one-gene flips of the greedy steps and the multi-gene tries of the local search, and the
decision of every row the rounding bound settles (:mod:`hpcswarm.fitness.device_kernels`).
A row the bound leaves open (a near tie) is copied to the host and decided by the CPU's
exact refinement (:meth:`~hpcswarm.fitness.rowblocks.HeldOutRows.correct`). Both engines
therefore decide every row from the exact distances, and give the same correct counts for
every subset, bit for bit.

The products run in float64 on the device (its own GEMM; no TF32), under the bound of the
CPU path (Higham's ``gamma_n``, which holds in any summation order). The gene-major values
are copied to the device once at construction (in their float32 or float64); an
evaluation sends the selected or flipped gene indices over and brings back a few counts.

With ``xp = numpy`` the same code runs on the host: that is how CI proves it equal to the
CPU path (:func:`gpu_array_module`, :data:`ARRAY_MODULE_VARIABLE`).
"""

import os
import sys

import numpy as np

from hpcswarm.errors import ParameterError
from hpcswarm.fitness.device_kernels import (exclude_own_fold, flip_terms, full_slack,
                                             gram_distances, multi_flip_distances,
                                             settle_rows, single_flip_distances, to_host)
from hpcswarm.fitness.evaluator import KnnEvaluator
from hpcswarm.fitness.incremental import DistanceState, flip_drift, slack_bound

DEVICE_BLOCK_BYTES = 2**30
"""Device memory of one block of distances and its temporaries (1 GiB: 3,355 rows at
10,000 samples)."""

BYTES_PER_DISTANCE = 32
"""Bytes held at once per distance of a block, at most: the float64 distances, a float64
temporary (the change of a flip, or the partition for k > 1), the boolean own-fold and near
masks, with room to spare."""

UPLOAD_GENES = 1024
"""Genes copied to the device per transfer at construction (bounds the host buffer)."""

ARRAY_MODULE_VARIABLE = "HPCSWARM_GPU_ARRAY_MODULE"
"""Environment variable naming the array module of ``device="gpu"``: ``"cupy"`` (default)
or ``"numpy"``, which runs the GPU code path on the host (tests, CI without a device)."""

ARRAY_MODULES = ("cupy", "numpy")

LOCAL_RANK_VARIABLES = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
"""Where launchers put a process's rank among the processes of its node (MPICH's Hydra,
Open MPI, SLURM's srun), read in this order."""

LOCAL_SIZE_VARIABLES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE",
                        "SLURM_NTASKS_PER_NODE")
"""Where launchers put the number of processes of a node (MPICH's Hydra, Open MPI, SLURM
with ``--ntasks-per-node``), read in this order."""


def _first_count(names, environ):
    """The first of the environment variables ``names`` that holds a count, or None."""
    environ = os.environ if environ is None else environ
    for name in names:
        value = environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def node_local_rank(environ=None) -> int:
    """This process's rank among the processes of its node, from the launcher's environment
    (:data:`LOCAL_RANK_VARIABLES`); 0 when no launcher says (a serial run)."""
    found = _first_count(LOCAL_RANK_VARIABLES, environ)
    return 0 if found is None else found


def ranks_sharing_device(index, count, environ=None) -> int:
    """The processes of this node that use device ``index`` of its ``count``: local ranks
    ``index``, ``index + count``, ... below the node's process count
    (:data:`LOCAL_SIZE_VARIABLES`, at least this process's local rank + 1); at least 1."""
    size = max(_first_count(LOCAL_SIZE_VARIABLES, environ) or 1,
               node_local_rank(environ) + 1)
    return max(1, len(range(index, size, count)))


def device_evaluation_bytes(n_samples, n_genes) -> int:
    """Device memory a full evaluation allocates at most beside the values and the states:
    the float64 values of a subset of every gene, gathered, and one block of distances
    (:data:`DEVICE_BLOCK_BYTES`)."""
    return 8 * n_samples * n_genes + DEVICE_BLOCK_BYTES


def gpu_array_module(name: str | None = None):
    """The array module of the GPU scorer: CuPy with a CUDA device, or numpy when asked.

    With CuPy, this process uses the device ``node_local_rank() % n_devices`` (one rank per
    GPU when a node runs as many ranks as it has GPUs), and says which on stderr, with a
    warning when it shares that device with another rank of its node (:func:`report_device`).

    Parameters
    ----------
    name : {"cupy", "numpy"}, optional
        Default: the environment variable :data:`ARRAY_MODULE_VARIABLE`, else ``"cupy"``.

    Returns
    -------
    module
        ``cupy`` or ``numpy``.

    Raises
    ------
    ParameterError
        An unknown name; CuPy not installed; CuPy without a usable CUDA device.
    """
    name = os.environ.get(ARRAY_MODULE_VARIABLE, "cupy") if name is None else name
    if name not in ARRAY_MODULES:
        raise ParameterError(f"the GPU array module must be one of {', '.join(ARRAY_MODULES)} "
                             f"(argument array_module or {ARRAY_MODULE_VARIABLE}), got {name!r}")
    if name == "numpy":
        return np
    try:
        import cupy
    except ImportError:
        raise ParameterError("device 'gpu' needs CuPy, which is not installed: install the "
                             "[gpu] extra (pip install 'hpcswarm[gpu]'; 'hpcswarm[gpu-cuda13]' "
                             "for CUDA 13)") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError without a driver: named below
        raise ParameterError(f"device 'gpu': CuPy finds no usable CUDA device ({exc})") from None
    if count < 1:
        raise ParameterError("device 'gpu': CuPy finds no CUDA device")
    local_rank = node_local_rank()
    index = local_rank % count
    cupy.cuda.Device(index).use()
    report_device(local_rank, index, count, device_name(cupy, index))
    return cupy


_REPORTED = set()
"""The ``(local rank, device)`` pairs :func:`report_device` has reported in this process."""


def device_name(cupy, index) -> str:
    """The name of CUDA device ``index``, or ``"unknown (reason)"``: never raises."""
    try:
        name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:  # a driver or CuPy version without the property: the name only
        return f"unknown ({type(exc).__name__}: {exc})"


def device_lines(local_rank, index, count, name):
    """The stderr lines of a process that uses device ``index`` of the ``count`` of its node.

    A note naming the device, and a warning when the node runs more ranks than it has
    devices (local ranks ``index``, ``index + count``, ... share the device).
    """
    lines = [f"hpcswarm: note: GPU: local rank {local_rank} uses device {index} of {count} "
             f"({name})"]
    if local_rank >= count:
        lines.append(f"hpcswarm: warning: GPU: local rank {local_rank} shares device {index} "
                     f"with local rank {index}: this node runs more ranks than its {count} "
                     f"device(s); run one rank per GPU (e.g. srun --ntasks-per-node equal "
                     f"to --gpus-per-node)")
    return lines


def report_device(local_rank, index, count, name, stream=None):
    """Write :func:`device_lines` to ``stream`` (default stderr), once per process and device."""
    if (local_rank, index) in _REPORTED:
        return
    _REPORTED.add((local_rank, index))
    stream = sys.stderr if stream is None else stream
    for line in device_lines(local_rank, index, count, name):
        print(line, file=stream, flush=True)


def gpu_scorer(data, y, *, array_module: str | None = None, compiled=True,
               **settings) -> "DeviceScorer":
    """The :class:`DeviceScorer` of ``data, y`` on :func:`gpu_array_module`'s array module;
    ``settings`` as :class:`~hpcswarm.fitness.evaluator.KnnEvaluator` takes them
    (``compiled`` does not apply: the host decides its open rows by the numpy path)."""
    return DeviceScorer(data, y, xp=gpu_array_module(array_module), **settings)


class DeviceScorer(KnnEvaluator):
    """The exact k-NN validation scorer with its arithmetic on an array module's device.

    Parameters
    ----------
    X, y, k, cv, seed, folds, shard, sum_counts, class_counts
        As for :class:`~hpcswarm.fitness.evaluator.KnnEvaluator`.
    xp : module
        ``cupy`` (:func:`gpu_array_module`) or ``numpy`` (the same code on the host).

    Notes
    -----
    Device memory: the values (``8 n_genes n_samples`` bytes, 4 for a float32 matrix such
    as a dataset file's ``X_genes``), per cached state
    ``8 n_rows n_samples + 16 n_samples`` bytes, and one block of distances
    (:data:`DEVICE_BLOCK_BYTES`); a search's default cache budget is sized by the device's
    memory (:meth:`state_memory`), not the host's. The host keeps the evaluator's
    :class:`GeneMajor` for the exact refinement of near ties. Scores, states' masks and
    evaluation counts are those of :class:`KnnEvaluator`; a state's arrays live on the
    device.

    Attributes
    ----------
    refined_rows : int
        Rows (of every subset scored so far) that the bound left open and the host decided
        by the exact refinement: the near ties, the part of the work that stays on the CPU.
    """

    use_compiled = False  # the host decides only the open rows, by the reference path

    def __init__(self, X, y, *, xp, k=1, cv="loo", seed=0, folds=None, shard=(0, 1),
                 sum_counts=None, class_counts=False):
        super().__init__(X, y, k=k, cv=cv, seed=seed, folds=folds, shard=shard,
                         sum_counts=sum_counts, class_counts=class_counts)
        self.xp = xp
        self.refined_rows = 0
        data, rows = self._data, self._rows
        # float32 values stay float32 on the device (half the memory), widened exactly to
        # float64 when gathered, as the host's GeneMajor.take widens them
        dtype = np.float32 if data.xt.dtype == np.float32 else np.float64
        self._values = xp.empty((data.n_genes, data.n_samples), dtype=dtype)
        for start in range(0, data.n_genes, UPLOAD_GENES):
            stop = min(start + UPLOAD_GENES, data.n_genes)
            block = data.take(np.arange(start, stop)).astype(dtype, copy=False)
            self._values[start:stop] = xp.asarray(block)
        self._column_folds = xp.asarray(rows.fold)
        self._codes = xp.asarray(rows.codes)
        self._row_samples = xp.asarray(rows.rows)
        self._row_codes = xp.asarray(rows.row_codes)
        self._row_folds = xp.asarray(rows.fold[rows.rows])
        self._row_tally = xp.asarray(rows.row_tally)

    def state_memory(self):
        """``(have, held, evaluation)`` bytes of the device that holds this scorer's states,
        which the default cache budget divides
        (:func:`~hpcswarm.selection.search.default_cache_bytes`): the device's memory over
        the processes of the node that use it (:func:`ranks_sharing_device`), what the
        device holds now (CuPy's ``memGetInfo``: the values uploaded, by every process on
        it; the blocks CuPy's pool keeps free for reuse, an earlier search's states, count
        as free) over the same, and :func:`device_evaluation_bytes`. None when the array
        module is numpy: the states are host arrays, and the host's memory decides."""
        xp = self.xp
        if xp is np:
            return None
        free, total = (int(value) for value in xp.cuda.runtime.memGetInfo())
        free += int(xp.get_default_memory_pool().free_bytes())
        sharing = ranks_sharing_device(xp.cuda.Device().id, xp.cuda.runtime.getDeviceCount())
        return (total // sharing, (total - free) // sharing,
                device_evaluation_bytes(self.n_samples, self.n_genes))

    def _gathered(self, genes):
        """The device values of the host gene indices ``genes``, (len(genes), n_samples)."""
        values = self._values[self.xp.asarray(np.asarray(genes, dtype=np.int64))]
        return values.astype(np.float64, copy=False)

    def _row_blocks(self):
        """``(start, stop)`` of the blocks of this shard's rows on the device."""
        n_rows = self._rows.rows.size
        size = max(1, DEVICE_BLOCK_BYTES // (BYTES_PER_DISTANCE * self.n_samples))
        return [(start, min(start + size, n_rows)) for start in range(0, n_rows, size)]

    def _decided(self, dist2, slack, start, stop, mask_of):
        """Correct counts (int64, (B, n_tallies)) of the rows ``start:stop`` of B subsets.

        ``dist2`` (B, stop - start, n_samples) and ``slack`` (B, n_samples) on the device;
        ``mask_of(b)`` the mask of subset ``b``, for the exact refinement of its open rows.
        """
        xp = self.xp
        correct, open_rows = settle_rows(xp, dist2, slack[:, self._row_samples[start:stop]],
                                         slack, self._codes, self._row_codes[start:stop],
                                         self.k, self.classes.size,
                                         self._row_tally[start:stop], self._rows.n_tallies)
        correct = to_host(xp, correct).astype(np.int64)
        open_rows = to_host(xp, open_rows)
        if not open_rows.any():
            return correct
        subsets, local = np.nonzero(open_rows)
        self.refined_rows += int(subsets.size)
        distances = to_host(xp, dist2[xp.asarray(subsets), xp.asarray(local)])
        slacks = to_host(xp, slack)
        exact = {}
        for b, r, row in zip(subsets.tolist(), local.tolist(), distances):
            if b not in exact:
                exact[b] = self._exact(mask_of(b))
            correct[b] += self._rows.correct(row[None], start + r, start + r + 1, slacks[b],
                                             exact[b])
        return correct

    def _full(self, mask, keep=False, decide=True, into=None):
        """This shard's correct counts over the genes of ``mask`` (one product per row block);
        with ``keep`` a new state of the distances, returned second (in the distance matrix
        of the state ``into`` where given, every row overwritten)."""
        xp = self.xp
        genes = np.flatnonzero(mask)
        values = self._gathered(genes)
        sq = (values * values).sum(axis=0)
        slack = full_slack(sq, genes.size)
        dist2 = (into.dist2 if keep and into is not None
                 else xp.empty((self._rows.rows.size, self.n_samples)) if keep else None)
        correct = self._rows.zeros()
        for start, stop in self._row_blocks():
            block = gram_distances(xp, values, sq, self._row_samples[start:stop])
            exclude_own_fold(xp, block, self._row_folds[start:stop],
                             self._column_folds)
            if keep:
                dist2[start:stop] = block
            if decide:
                correct += self._decided(block[None], slack[None], start, stop,
                                         lambda b: mask)[0]
        state = (DistanceState(mask.copy(), dist2, sq, 0.5 * slack, int(genes.size)) if keep
                 else None)
        return correct, state

    def _flip(self, state, genes, apply=False, decide=True):
        """This shard's correct counts of ``state.mask`` with ``genes`` flipped; with ``apply``
        the change is added to the state in place and the state moves to the flipped subset
        (decided there, unless not ``decide``: zero counts are returned)."""
        xp = self.xp
        leaving = state.mask[genes]
        left, right, delta_sq, magnitude = flip_terms(xp, self._gathered(genes[~leaving]),
                                                      self._gathered(genes[leaving]))
        sq = state.sq + delta_sq
        drift = flip_drift(state.drift, sq, magnitude, genes.size)
        n_selected = state.n_selected + genes.size - 2 * int(np.count_nonzero(leaving))
        mask = state.mask.copy()
        mask[genes] = ~leaving
        slack = slack_bound(sq, drift, n_selected)
        correct = self._rows.zeros()
        for start, stop in self._row_blocks():
            change = xp.matmul(left[:, self._row_samples[start:stop]].T, right)
            change += state.dist2[start:stop]
            if apply:
                state.dist2[start:stop] = change
            if decide:
                correct += self._decided(change[None], slack[None], start, stop,
                                         lambda b: mask)[0]
        if apply:
            state.mask, state.sq, state.drift, state.n_selected = mask, sq, drift, n_selected
        return correct

    def _candidates_per_block(self):
        """Candidates of ``score_single_flips`` per block, the same on every shard."""
        most_rows = -(-self.total // self.shard[1])
        return max(1, DEVICE_BLOCK_BYTES // (BYTES_PER_DISTANCE * most_rows * self.n_samples))

    def _single_flip_scratch(self, n_candidates, size):
        """No host buffers: the device blocks are allocated by the array module's pool."""
        return None

    def _flip_block(self, state, genes, leaving, scratch):
        """This shard's correct counts of ``state.mask`` with each of ``genes`` flipped alone."""
        dist2, slack = single_flip_distances(self.xp, state.dist2, state.sq, state.drift,
                                             state.n_selected, self._gathered(genes),
                                             self._row_samples, leaving)

        def mask_of(b):
            mask = state.mask.copy()
            mask[genes[b]] = not leaving
            return mask

        return self._decided(dist2, slack, 0, self._rows.rows.size, mask_of)

    def _tries_per_block(self, n_flipped):
        """Tries of ``score_flips`` per device block; 0 when one try alone overflows it."""
        per_try = (BYTES_PER_DISTANCE * self._rows.rows.size * self.n_samples
                   + 16 * n_flipped * self.n_samples)
        return DEVICE_BLOCK_BYTES // per_try

    def _flip_block_counts(self, state, block, n_selected, compiled):
        """This shard's correct counts (n_tries, n_tallies) of a block of tries (0 for a try
        emptying the subset)."""
        xp = self.xp
        counts = self._rows.zeros(block.shape[0])
        todo = np.flatnonzero(n_selected > 0)
        if todo.size == 0:
            return counts
        tries = block[todo]
        values = self._gathered(tries.ravel()).reshape(tries.shape + (self.n_samples,))
        dist2, slack = multi_flip_distances(xp, state.dist2, state.sq, state.drift, values,
                                            xp.asarray(state.mask[tries]),
                                            xp.asarray(n_selected[todo]), self._row_samples)

        def mask_of(b):
            mask = state.mask.copy()
            mask[tries[b]] = ~mask[tries[b]]
            return mask

        counts[todo] = self._decided(dist2, slack, 0, self._rows.rows.size, mask_of)
        return counts
