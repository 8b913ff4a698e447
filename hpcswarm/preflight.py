"""Checks made before any computation of a job, each ending every rank with one clear message,
and the arithmetic of the memory estimates (pure; :mod:`hpcswarm.plan` applies them).

Every check gives the same verdict on every rank: a check made on one rank is broadcast, a
check made on each rank (the dataset opens, the memory suffices) is allgathered and the
first failing rank's message raised everywhere, so that no rank is left in a collective.
"""

import uuid
from pathlib import Path

from hpcswarm.errors import DataError, ParameterError

SWARM_BYTES_PER_GENE = 26
"""Swarm state per particle and gene: position, velocity, pbest (floats) and masks."""
ARCHIVE_BYTES_PER_ENTRY = 200
"""One archive entry: 16-byte key, fitness, dict and LRU overhead."""
MEMORY_SHARE = 0.8
"""Share of the available memory a run may be estimated to use."""


def agree(comm, problem):
    """Raise on every rank the first rank's ``(kind, message)`` problem (None: no problem)."""
    problems = comm.allgather(problem)
    for found in problems:
        if found is not None:
            kind, message = found
            raise (ParameterError if kind == "ParameterError" else DataError)(message)


def check_device(device, comm):
    """ParameterError on every rank if the scorer's ``device`` cannot run on one of them
    (``"gpu"`` without CuPy or a CUDA device: :func:`hpcswarm.fitness.gpu.gpu_array_module`);
    called before the job writes anything, its lock file included."""
    if device != "gpu":
        return
    from hpcswarm.fitness.gpu import gpu_array_module  # here: CPU jobs never import it

    problem = None
    try:
        gpu_array_module()
    except ParameterError as exc:
        problem = ("ParameterError", str(exc))
    agree(comm, problem)


def check_output_writable(folder):
    """Message if ``folder`` does not exist or a file cannot be created in it, else None."""
    folder = Path(folder)
    if not folder.is_dir():
        return f"{folder}: the output folder does not exist"
    probe = folder / f".hpcswarm-write-test-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return f"{folder}: the output folder is not writable ({exc.strerror})"
    return None


def check_inner_k(tasks, k, inner_cv):
    """ParameterError if the k-NN of the search cannot run on a task's inner folds."""
    for task in tasks:
        smallest = task.smallest_inner_train
        if k > smallest:
            raise ParameterError(
                f"job key 'fitness.k': k={k} exceeds the {smallest} training samples of an "
                f"inner fold ({inner_cv!r}) of run {task.run} fold {task.fold}")


def state_memory(n_train, n_genes, sample_shards=1):
    """Bytes of one cached evaluator state of a sample shard. Pure.

    The distances of the shard's ``ceil(n_train / S)`` held-out rows to every training
    sample, two vectors of norms and drift, and a mask:
    ``8 ceil(n / S) n + 16 n + genes`` (:mod:`hpcswarm.fitness.incremental`).
    """
    rows = -(-n_train // max(1, sample_shards))
    return 8 * rows * n_train + 16 * n_train + n_genes


def estimate_memory(n_train, n_genes, n_particles, archive_size, local_search=False,
                    sample_shards=1):
    """Bytes one rank needs for one task (an estimate). Pure.

    Swarm state 26 B x particles x genes (replicated on the group's ranks); one cached
    evaluator state of this rank's sample shard (:func:`state_memory`) for the methods that
    keep one (a local search or a greedy step holds one at a time and drops it); the
    archive, ~200 B x ``archive_size``; a copy of the task's training rows,
    8 x n_train x genes (what a full evaluation of every gene gathers and the baselines read;
    the search itself reads the memory-mapped matrix, whose pages the ranks of a node share
    and which is not counted).
    """
    swarm = SWARM_BYTES_PER_GENE * n_particles * n_genes
    states = state_memory(n_train, n_genes, sample_shards) if local_search else 0
    archive = ARCHIVE_BYTES_PER_ENTRY * archive_size
    rows = 8 * n_train * n_genes
    return swarm + states + archive + rows


def checkpoint_memory(n_groups, n_particles, n_genes):
    """Bytes world rank 0 holds for the checkpoint: the latest swarm snapshot of every group's
    running task (26 B x particles x genes each, see :mod:`hpcswarm.checkpoint`). Pure."""
    return n_groups * SWARM_BYTES_PER_GENE * n_particles * n_genes
