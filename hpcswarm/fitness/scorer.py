"""What the searches need from a fitness engine (:class:`Scorer`), and the one factory of it.

A scorer counts the correct k-NN predictions of the held-out samples of fixed validation
folds for a gene subset, as a :class:`~hpcswarm.fitness.score.Score`; the objective
(:class:`~hpcswarm.fitness.subset.SubsetFitness`) turns that into the number a search
maximises. The exact serial engine is :class:`~hpcswarm.fitness.evaluator.KnnEvaluator`;
any other engine (batched flips, held-out rows sharded over ranks, a GPU) implements the same
protocol, and :func:`make_scorer` is the only place that chooses and builds one.

A scorer's held-out rows may be split into blocks (e.g. one per rank of a sample shard): the
Scores of the blocks add up (``Score.__add__``) to the Score of all rows, because each
held-out prediction depends only on its own row of distances. A scorer built with
``class_counts`` counts the correct predictions per class of the held-out labels on every
path (Scores with ``class_correct``; ``score_flips`` counts of shape (n_tries, n_classes)),
for objectives such as balanced accuracy; the counts add up over blocks the same way.
"""

from typing import Protocol, runtime_checkable

import numpy as np

from hpcswarm.errors import ParameterError
from hpcswarm.fitness.evaluator import KnnEvaluator
from hpcswarm.fitness.gpu import gpu_scorer


@runtime_checkable
class CachedState(Protocol):
    """A scorer's cached evaluation of one subset, updated by flips (opaque otherwise)."""

    mask: np.ndarray
    """ndarray of bool of shape (n_genes,): the subset the state describes."""
    n_selected: int
    """Number of genes in ``mask``."""


@runtime_checkable
class Scorer(Protocol):
    """Validation Scores of gene subsets on folds fixed at construction.

    Every method returns exactly the Score a full evaluation of the same subset gives
    (incremental paths included), so that a search's result does not depend on which path
    scored a subset. ``mask`` is ndarray of bool of shape (n_genes,); ``genes`` an array of
    distinct int gene indices.
    """

    n_genes: int
    """Length of every mask."""
    class_counts: bool
    """Whether the Scores hold counts per class (``class_correct``, ``class_total``)."""
    class_total: tuple
    """Held-out predictions per class (empty without ``class_counts``)."""

    @property
    def total(self) -> int:
        """Held-out predictions per evaluation (the ``total`` of every Score)."""

    @property
    def data(self):
        """The training samples it scores, gene-major
        (:class:`~hpcswarm.fitness.genemajor.GeneMajor`): what a method that reads values
        (VLPSO's symmetric-uncertainty ranking) reads."""

    @property
    def codes(self) -> np.ndarray:
        """Class code of every training sample, ndarray of int of shape (n_samples,)."""

    def state_memory(self):
        """``(have, held, evaluation)`` bytes of the device that holds the cached states,
        for a search's default cache budget; None: they are host arrays."""

    def score(self, mask):
        """Score of the genes of ``mask``; the empty subset scores ``Score(0, total)``."""

    def score_many(self, masks):
        """List of Scores, one per row of ``masks`` (ndarray of bool, (n_masks, n_genes))."""

    def new_state(self, mask) -> CachedState:
        """A cached state of ``mask`` for the flips below."""

    def score_flip(self, state, genes):
        """Score of ``state.mask`` with ``genes`` flipped together; ``state`` unchanged."""

    def apply_flip(self, state, genes):
        """Move ``state`` (in place) to its mask with ``genes`` flipped."""

    def score_new_state(self, mask, reuse=None):
        """``(score(mask), new_state(mask))`` from one product; ``mask`` non-empty; the new
        state may take over the memory of ``reuse``, a state no longer needed."""

    def score_move(self, state, genes):
        """Score of ``state.mask`` with ``genes`` flipped, ``state`` moved there in the same
        pass (``score_flip`` then ``apply_flip``); the flipped subset non-empty."""

    def score_single_flips(self, state, genes):
        """List of Scores of ``state.mask`` with each gene of ``genes`` flipped alone."""

    def score_flips(self, state, flips):
        """Correct predictions (int64 array of shape (n_tries,), or (n_tries, n_classes)
        with ``class_counts``) of ``state.mask`` with each row of ``flips`` (n_tries,
        n_flipped) flipped together; ``state`` unchanged, ``apply_flip`` of a row keeps it."""


def cpu_scorer(data, y, *, array_module=None, **settings) -> KnnEvaluator:
    """The exact engine on the host's cores (``array_module`` does not apply)."""
    return KnnEvaluator(data, y, **settings)


SCORERS = {"cpu": cpu_scorer, "gpu": gpu_scorer}
"""The scorer of each ``device``: ``builder(data, y, *, array_module, k, cv, seed, folds,
shard, sum_counts, compiled, class_counts) -> Scorer``. A new engine is one module of this package and one row here."""

DEVICES = tuple(SCORERS)
"""The values of ``device`` (the search specification's choices)."""


def make_scorer(data, y, *, k: int = 1, cv="loo", seed=0, folds=None, shards=None,
                device: str = "cpu", array_module: str | None = None,
                compiled: bool = True, class_counts: bool = False) -> Scorer:
    """The scorer of every search, job task and ``hpcswarm evaluate``.

    Parameters
    ----------
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
        The samples (a :class:`~hpcswarm.fitness.genemajor.GeneMajor` over a dataset's
        memory-mapped ``X_genes`` is read without a copy).
    y : ndarray of shape (n_samples,)
    k : int, default 1
        Neighbours.
    cv : {"loo", "holdout"} or int, default "loo"
        Validation scheme (:func:`~hpcswarm.fitness.folds.make_folds`).
    seed : int or numpy.random.SeedSequence, default 0
        Fixes the folds.
    folds : sequence of (train_idx, test_idx), optional
        Explicit folds instead of ``cv`` and ``seed``, or their fold ids
        (:func:`~hpcswarm.fitness.folds.fold_ids`: folds drawn once, not drawn again).
    shards : Comm, optional
        The ranks of a sample shard group (:attr:`hpcswarm.comm.Grid.shards`): each decides
        a contiguous share of the held-out rows and the correct counts are summed over them
        (one integer Allreduce per evaluation). None or one rank: every row here.
    device : {"cpu", "gpu"}, default "cpu"
        ``"gpu"``: the products and row decisions on a CUDA device through CuPy (the
        ``[gpu]`` extra), the same Scores bit for bit.
    array_module : {"cupy", "numpy"}, optional
        The array module of ``device="gpu"``; ``"numpy"`` runs the GPU code path on the
        host (tests). Default: the environment variable ``HPCSWARM_GPU_ARRAY_MODULE``, else
        ``"cupy"`` (:func:`~hpcswarm.fitness.gpu.gpu_array_module`). Ignored on the CPU.
    compiled : bool, default True
        False: the CPU decides the rows by the numpy path, without numba's one-off cost
        (for a process that scores once: :func:`~hpcswarm.fitness.compiled.worth_compiling`).
        The same Scores either way. The GPU's host decides its open rows by that path anyway.
    class_counts : bool, default False
        Count the correct predictions per class of the held-out labels as well (summed over
        ``shards`` in the same Allreduce): what an objective with
        :attr:`~hpcswarm.fitness.objectives.Objective.per_class` needs.

    Returns
    -------
    Scorer
        The exact :class:`~hpcswarm.fitness.evaluator.KnnEvaluator` on the CPU, the
        :class:`~hpcswarm.fitness.gpu.DeviceScorer` on a GPU (sharded over ``shards``),
        without its own archive (the searches keep a rank-invariant one,
        :mod:`hpcswarm.swarm.engine.loop`).

    Raises
    ------
    ParameterError
        ``k``, ``cv`` or the folds do not fit the data (e.g. a class too small for ``cv``);
        an unknown ``device``; ``"gpu"`` without CuPy or a CUDA device.
    """
    if device not in SCORERS:
        raise ParameterError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    sharded = {}
    if shards is not None and shards.size > 1:
        sharded = {"shard": (shards.rank, shards.size), "sum_counts": shards.allreduce_sum}
    try:
        return SCORERS[device](data, y, array_module=array_module, k=k, cv=cv, seed=seed,
                               folds=folds, compiled=compiled, class_counts=class_counts,
                               **sharded)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
