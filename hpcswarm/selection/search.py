"""One search on one matrix: fitness from the parameters, the method, the result as JSON.

The spec's ``sample_shards`` S, a divisor of the ranks of ``comm``, makes them
``comm.size / S`` particle groups x S sample shards (:func:`hpcswarm.comm.split_grid`); its
``refine`` refines the selected subset on the same samples (:mod:`hpcswarm.signatures.refine`),
returned in ``refined``; its ``max_genes`` caps every evaluated subset (each method's
``capped_position``). The search keeps its own archive of ``archive_size`` subsets,
replicated on the ranks so that hits do not depend on how particles are spread (see
:mod:`hpcswarm.swarm.engine.loop`); the scorer has none.

>>> from sklearn.datasets import load_wine
>>> X, y = load_wine(return_X_y=True)
>>> result = run_search(X, y, "cbpso", {"n_iterations": 5}, seed=1)
>>> result.mask.shape
(13,)
"""

import os
from dataclasses import dataclass, fields, replace

import numpy as np

from hpcswarm.comm import as_comm, split_grid
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor, SubsetFitness, make_objective, make_scorer
from hpcswarm.fitness.evaluator import scorer_bytes
from hpcswarm.fitness.folds import fold_ids
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.inputs import check_matrix, label_values
from hpcswarm.selection.methods import algorithm_class
from hpcswarm.selection.spec import SearchSpec, SettingError
from hpcswarm.signatures.refinements import REFINEMENTS
from hpcswarm.signatures.subsample import search_subsamples
from hpcswarm.signatures.watched import WatchedScorer
from hpcswarm.store.encoding import finite, tags
from hpcswarm.store.records import SEARCH_ENCODING as RESULT_ENCODING
from hpcswarm.swarm.engine.evaluation import EvaluationService
from hpcswarm.swarm.engine.front import pareto_front
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.engine.state import run_seed_sequence
from hpcswarm.system import MEMORY_SHARE, available_memory, resident_memory


def make_fitness(X, y, params, seed, shards=None, device="cpu", folds=None):
    """The fitness of ``params`` (k, cv, objective, alpha) on ``X, y``, and its scorer.

    Parameters
    ----------
    X : GeneMajor or ndarray of shape (n_samples, n_genes)
        As :func:`~hpcswarm.fitness.scorer.make_scorer` takes it.
    y : ndarray of shape (n_samples,)
    params : dict
        Checked algorithm parameters (:attr:`hpcswarm.selection.spec.SearchSpec.params`).
    seed : int or numpy.random.SeedSequence
        The run seed, which fixes the folds exactly as ``hpcswarm evaluate --seed`` does.
    shards : SerialComm or MPIComm, optional
        The ranks that split the held-out rows of every evaluation between them (sample
        shards, :func:`hpcswarm.comm.split_grid`): this rank decides the ``shards.rank``-th
        share and the correct counts are summed over ``shards`` (one integer Allreduce
        per evaluation). None: no shards.
    device : {"cpu", "gpu"}, default "cpu"
        Where the scorer runs (:data:`hpcswarm.fitness.DEVICES`).
    folds : ndarray of int64 of shape (n_samples,), optional
        The fold ids of ``params``' validation from ``seed``, already drawn and checked
        (:func:`check_validation`, as a door's
        :meth:`~hpcswarm.selection.prepare.TrainingView.validation` draws them once); None:
        drawn here.

    Returns
    -------
    (SubsetFitness, Scorer)

    Raises
    ------
    FitnessMismatch
        ``cv`` or ``k`` cannot run on these samples (:func:`check_validation`).
    """
    try:
        objective = make_objective(params["objective"], params["alpha"])
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    if folds is None:
        folds = check_validation(y, params["k"], params["cv"], seed)
    scorer = make_scorer(X, y, k=params["k"], folds=folds, shards=shards, device=device,
                         class_counts=objective.per_class)
    return SubsetFitness(scorer, objective), scorer


class FitnessMismatch(SettingError):
    """A fitness setting, ``cv`` or ``k``, that cannot run on the samples a search is given.

    Each front door names the setting as its user writes it (a keyword of
    :func:`hpcswarm.select`, ``--param`` of ``hpcswarm run``, a job key), with its value, which
    is often the method's default rather than a choice the user made.

    Parameters
    ----------
    setting : {"cv", "k"}
    value : object
        The setting's value.
    reason : str
        Why it cannot run (the folds' own message).
    where : str
        The samples, as the message names them ("these 8 samples").
    """

    def __init__(self, setting, value, reason, where):
        super().__init__(setting, f"cannot run on {where}: {reason}")
        self.value = value
        self.reason = reason

    def on(self, where):
        """The same mismatch, the samples named otherwise (a subsample half)."""
        return FitnessMismatch(self.setting, self.value, self.reason, where)


def check_validation(y, k, cv, seed, ids=None):
    """The fold ids of the validation ``cv`` on the labels ``y``
    (:func:`hpcswarm.fitness.folds.fold_ids`), drawn once for the scorer; refused when they
    cannot be drawn, or when ``k`` exceeds the training samples of the smallest training
    part, before any scorer is built.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    k : int
    cv : {"loo", "holdout"} or int
    seed : int or numpy.random.SeedSequence
        The folds' seed, as the scorer is given it.
    ids : ndarray of int64 of shape (n_samples,), optional
        The fold ids already drawn from ``seed`` (a job's task carries its own,
        :attr:`hpcswarm.run.protocols.Task.inner_fold_ids`): checked against ``k``, not
        drawn again.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)

    Raises
    ------
    FitnessMismatch
        Naming ``cv`` or ``k``.
    """
    n_samples = int(np.shape(y)[0])
    where = f"these {n_samples} samples"
    try:
        ids = fold_ids(np.asarray(y), cv, seed) if ids is None else ids
    except ValueError as exc:
        raise FitnessMismatch("cv", cv, str(exc), where) from None
    held_out = np.bincount(ids[ids >= 0])
    smallest = n_samples - int(held_out.max(initial=0))
    if k > smallest:
        raise FitnessMismatch("k", k, f"k-NN with k={k} needs {k} training samples in every "
                                      f"fold of cv={cv!r}, the smallest has {smallest}", where)
    return ids


@dataclass(frozen=True)
class SearchRun:
    """How one search runs, none of which changes its result: the keywords of
    :func:`run_search` besides the spec's settings.

    Attributes
    ----------
    comm : SerialComm or MPIComm, optional
        The ranks that run this one swarm together (``None``: serial), e.g. a rank group of
        :func:`hpcswarm.run.taskfarm.farm`. Every rank of ``comm`` calls :func:`run_search` with
        the same arguments and gets the same result; particles are split across the ranks,
        and each rank evaluates its own on its ``X`` (pass a ``GeneMajor`` over the
        memory-mapped ``X_genes``: no matrix travels over MPI and no rank copies it).
    hooks : SearchHooks, optional
        What every round's end calls (:class:`hpcswarm.swarm.engine.loop.SearchHooks`): round
        reports, the job's snapshots and stop; its ``interrupt`` also ends every round of the
        subsample searches of the refinements ``stability`` and ``consensus``.
    resume : dict, optional
        A snapshot of this same search to continue from: the result is that of the
        uninterrupted search.
    folds : ndarray of int64 of shape (n_samples,), optional
        The fold ids of the spec's validation on these samples from this seed, drawn once
        by the door (:meth:`hpcswarm.selection.prepare.TrainingView.validation`); None:
        drawn here.
    """

    comm: object = None
    hooks: SearchHooks = None
    resume: dict = None
    folds: np.ndarray = None

    @classmethod
    def split(cls, options):
        """``(SearchRun, settings)``: the keywords ``options`` of :func:`run_search` parted
        into this run's and the rest, the spec's settings."""
        names = {field.name for field in fields(cls)}
        return (cls(**{name: value for name, value in options.items() if name in names}),
                {name: value for name, value in options.items() if name not in names})


def run_search(X, y, spec, params=None, seed=0, **options):
    """Run one search of ``spec`` on all samples of ``X, y``.

    Parameters
    ----------
    X : GeneMajor or array-like of shape (n_samples, n_genes)
        The samples to search on: a :class:`~hpcswarm.fitness.GeneMajor` (e.g. over a
        dataset's memory-mapped ``X_genes``, read without a copy), or a sample-major matrix
        (the evaluator copies it gene-major).
    y : array-like of shape (n_samples,)
        Labels; checked here (:func:`hpcswarm.inputs.label_values`) with a sample-major
        ``X`` only: a ``GeneMajor`` comes from a front door, which checked both
        (:func:`hpcswarm.selection.prepare.prepare`).
    spec : SearchSpec or str
        The search (:class:`hpcswarm.selection.spec.SearchSpec`), or the name of a method of
        :data:`hpcswarm.selection.methods.METHODS`, completed by ``params`` and the settings of
        :data:`hpcswarm.selection.spec.SPEC_PARAMS` given as keywords (``refine``, ``max_genes``,
        ``sample_shards``, ``device``). The matrix is read as given: the front doors that
        read data (:func:`hpcswarm.select`, the selector, ``hpcswarm run``, a job's tasks) fit
        the spec's ``preprocess`` (by default the method's own,
        :func:`~hpcswarm.selection.spec.preprocess_steps`) first and pass a spec without it.
    params : mapping, optional
        With a method name: overrides of its paper defaults (native values or strings).
    seed : int, default 0
        Run seed: the folds (as ``hpcswarm evaluate --seed``), the particle streams and the
        swarm stream all derive from it.
    **options
        How the search runs, the fields of :class:`SearchRun`: ``comm`` (its ranks),
        ``hooks`` (a :class:`~hpcswarm.swarm.engine.loop.SearchHooks`), ``resume`` (a snapshot),
        ``folds`` (fold ids drawn once by the door); with a method name, also the spec's settings.

    Returns
    -------
    SearchResult
        ``mask`` (the evaluated subset returned), ``fitness`` (its fitness), ``history``,
        ``params`` (complete) and ``extra``; ``extra["score"]`` holds the correct/total
        counts of ``mask`` (under a per-class objective also its ``class_correct``,
        ``class_total`` and ``balanced_accuracy``); ``extra["comm"]`` the bytes the
        particle groups communicated per round (the shards' sums, 8 bytes per evaluation,
        or per evaluation and class under a per-class objective, are not counted). Everything but
        ``extra["comm"]`` and the history's ``seconds`` is bit-identical for any number of
        ranks and shards. ``front`` holds the Pareto front of (inner accuracy, size) among
        the subsets evaluated, each point re-scored (``correct``, ``total``); ``refined`` the
        :class:`~hpcswarm.signatures.refine.Refined` subset, or None.

    Raises
    ------
    ParameterError
        Unknown algorithm or parameter, ill-typed value, bad seed, a shard count that does
        not divide the ranks.
    ValueError
        A sample-major ``X`` not samples x genes of real numbers
        (:func:`hpcswarm.inputs.check_matrix`), or its ``y`` with a missing label or labels
        of mixed types (:func:`hpcswarm.inputs.label_values`).
    """
    run, settings = SearchRun.split(options)
    spec = _as_spec(spec, params, settings)
    if not isinstance(X, GeneMajor):  # a matrix given here directly: this is its edge
        check_matrix(X, "X")
        y = label_values(y, "y")
    try:
        root = run_seed_sequence(seed)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    grid = _grid(as_comm(run.comm), spec.sample_shards)
    hooks = SearchHooks() if run.hooks is None else run.hooks
    try:
        result, score = SpecSearch(spec, root, grid, hooks, run.folds).run(X, y, run.resume)
    finally:
        grid.free()
    result.extra["score"] = {"correct": int(score.correct), "total": int(score.total),
                             "accuracy": float(score.accuracy)}
    if score.class_total:  # a per-class objective: its counts and balanced accuracy too
        result.extra["score"].update(class_correct=list(score.class_correct),
                                     class_total=list(score.class_total),
                                     balanced_accuracy=float(score.balanced_accuracy))
    return result


def _as_spec(spec, params, settings):
    """``spec`` itself, or the spec a method name, its parameters and settings make."""
    if isinstance(spec, SearchSpec):
        if params or settings:
            raise ParameterError(f"run_search: parameters and settings "
                                 f"({', '.join([*(params or ()), *settings])}) belong in the "
                                 f"SearchSpec")
        if spec.preprocess:
            raise ParameterError("run_search reads the matrix as given: fit the spec's "
                                 "preprocess first (hpcswarm.selection.preprocess.fit, as "
                                 "every front door does) and pass the spec without it")
        return spec
    if "preprocess" in settings:
        raise ParameterError("run_search: preprocess applies to a job's tasks "
                             "(hpcswarm.run.protocols.run_task), not to one search")
    return SearchSpec.build(spec, params, preprocess=(), **settings)


CACHE_SHARE = 0.25
"""The share of the memory each rank sees that its particles' states take at most by default."""


def default_cache_bytes(have, held, evaluation):
    """The default cache budget of a rank that sees ``have`` bytes, holds ``held`` now and
    needs ``evaluation`` more for a full evaluation: :data:`CACHE_SHARE` of ``have``, at
    most what the pre-flight's share (:data:`~hpcswarm.system.MEMORY_SHARE`) leaves, so
    that the states never take the memory a full evaluation needs (0 when none is left)."""
    return max(0.0, min(CACHE_SHARE * have, MEMORY_SHARE * have - held - evaluation))


def cache_states(cache_memory, grid, n_held_out, n_samples, n_genes, device_memory=None):
    """Particle states a rank of ``grid`` keeps (:class:`~hpcswarm.fitness.moves.ParticleStates`).

    ``cache_memory`` GB divided by the bytes of one state of the largest sample shard's
    held-out rows (:func:`~hpcswarm.fitness.incremental.state_bytes`); None:
    :func:`default_cache_bytes` of the memory that holds the states. That is
    ``device_memory``, ``(have, held, evaluation)`` bytes of the device of a GPU scorer
    (:meth:`~hpcswarm.fitness.gpu.DeviceScorer.state_memory`), where given; else the memory
    each rank sees (:func:`hpcswarm.system.available_memory`, the node's memory or cgroup
    limit over the grid's ranks, at most one a core), what the process holds now and a
    full evaluation's needs (:func:`~hpcswarm.fitness.evaluator.scorer_bytes`). The
    smallest over the grid's shards of a particle group, which must make the same calls
    (collective over ``grid.shards``).
    """
    if cache_memory is None and device_memory is not None:
        budget = default_cache_bytes(*device_memory)
    elif cache_memory is None:
        ranks = min(grid.n_groups * grid.n_shards, os.cpu_count() or 1)
        budget = default_cache_bytes(available_memory(ranks)[0], resident_memory(),
                                     scorer_bytes(n_samples, n_genes, grid.n_shards))
    else:
        budget = cache_memory * 1e9
    rows = -(-n_held_out // grid.n_shards)
    states = int(budget // state_bytes(rows, n_samples, n_genes))
    return int(grid.shards.allreduce_min(np.array([states]))[0])


def _grid(comm, sample_shards):
    """``comm`` split into particle groups x ``sample_shards`` sample shards
    (:func:`hpcswarm.comm.split_grid`)."""
    try:
        return split_grid(comm, sample_shards)
    except ValueError:
        raise ParameterError(f"sample_shards={sample_shards!r} must be a positive divisor "
                             f"of the {comm.size} rank(s) that run the search") from None


@dataclass(frozen=True)
class SpecSearch:
    """The search of ``spec`` from the seed ``root`` on the ranks of ``grid``, its rounds
    ending with ``hooks``.

    Attributes
    ----------
    spec : SearchSpec
    root : numpy.random.SeedSequence
    grid : Grid
        Particle groups x sample shards (:func:`hpcswarm.comm.split_grid`).
    hooks : SearchHooks
    folds : ndarray of int64, optional
        The fold ids of the spec's validation on the samples of :meth:`run` from ``root``,
        drawn once by the door (:attr:`SearchRun.folds`); None: drawn by :meth:`run`.
    """

    spec: SearchSpec
    root: np.random.SeedSequence
    grid: object
    hooks: SearchHooks
    folds: np.ndarray = None

    def run(self, X, y, resume=None):
        """The search on ``X, y`` (from the snapshot ``resume``, if any), its front scored
        and its subset refined; with the returned subset's score."""
        spec = self.spec
        fitness, scorer = make_fitness(X, y, spec.params, self.root, self.grid.shards,
                                       spec.device, self.folds)
        states = cache_states(spec.cache_memory, self.grid, scorer.total, len(y),
                              scorer.n_genes, scorer.state_memory())
        evaluator = EvaluationService.for_params(fitness, spec.params, self.grid.particles,
                                                 states)
        search = algorithm_class(spec.algorithm)(evaluator, spec.params, seed=self.root,
                                                 hooks=self.hooks, max_genes=spec.max_genes)
        result = search.run(resume)
        score = fitness.score(result.mask)
        result.front = scored_front(scorer, result.front)
        if spec.refine != "none":
            watched = (scorer if self.hooks.phase is None
                       else WatchedScorer(scorer, self.hooks.phase, f"refine {spec.refine}"))
            inputs = RefineInputs(watched, X, y, result.mask,
                                  lambda: self.subsample_selections(X, y), result.params,
                                  spec.max_genes,
                                  lambda: personal_bests(search, scorer.n_genes), self.root,
                                  self.grid)
            result.refined = REFINEMENTS[spec.refine].apply(inputs)
        return result, score

    def subsample_selections(self, X, y):
        """What searches of this spec (then ``prune-compact``) on subsamples of ``X, y``
        selected (:func:`hpcswarm.signatures.subsample.search_subsamples`), run one after the other
        on the same grid; each round of each ends with the ``interrupt`` hook only
        (:meth:`~hpcswarm.swarm.engine.loop.SearchHooks.without_snapshots`)."""
        one = replace(self, spec=replace(self.spec, refine="prune-compact"),
                      hooks=self.hooks.without_snapshots(), folds=None)  # other samples

        def search(part, labels, seed):
            try:
                return replace(one, root=seed).run(part, labels)[0].refined.genes
            except FitnessMismatch as exc:
                raise exc.on(f"the subsample halves of refine={self.spec.refine!r} (searches "
                             f"on {len(labels)} of the {len(y)} samples each)") from None

        return search_subsamples(search, X, y, self.spec.subsamples, self.root)


@dataclass(frozen=True)
class RefineInputs:
    """What a refinement may read (:attr:`hpcswarm.signatures.refinements.Refinement.needs`): the
    task's scorer and training samples, the search's subset, the subsample searches (run only
    when a rule asks for them, by calling ``selections()``), the search's complete parameters,
    its size cap (None: none), its particles' personal bests at its end (gathered from their
    owners only when a rule asks for them, by calling ``personal_bests()``: ndarray of bool of
    shape (n_particles, n_genes), :func:`personal_bests`), the task's seed (a
    :class:`numpy.random.SeedSequence`) and the search's ranks (:class:`hpcswarm.comm.Grid`,
    over which a rule may share its work)."""

    scorer: object
    data: object
    y: np.ndarray
    mask: np.ndarray
    selections: object
    params: dict
    max_genes: object
    personal_bests: object
    root: object
    grid: object = None



def personal_bests(search, n_genes):
    """The personal best of every particle of ``search`` at its end, ndarray of bool of shape
    (n_particles, n_genes), the same on every rank; no rows for a search without particles
    (all empty for CSO, which keeps none).

    A row is live only on the rank that owns its particle
    (:class:`~hpcswarm.swarm.engine.state.SwarmState`'s notes), so each rank's rows are packed
    to bits and allgathered once over the particle groups (collective: ``n_genes / 8`` bytes
    per particle), as the best subset's row is shared.
    """
    state = getattr(search, "state", None)
    rows = getattr(state, "pbest_mask", None)
    if rows is None:
        return np.zeros((0, n_genes), dtype=bool)
    deal = search.ownership
    particles = np.arange(deal.n_items, dtype=np.int64)
    local = np.packbits(np.asarray(rows, dtype=bool)[deal.owned(particles)], axis=1)
    table = deal.allgather(search.comm, local, particles)
    return np.unpackbits(table, axis=1, count=n_genes).astype(bool)


def scored_front(scorer, front):
    """The front entries scored again (``correct``, ``total``), dominated ones dropped.

    The search's tracker keeps the best subset per size by fitness
    (:mod:`hpcswarm.swarm.engine.front`); their correct counts decide the front of (inner
    accuracy, size), so that the combined objective's front is filtered here too.
    """
    scored = []
    for entry in front:
        mask = np.zeros(scorer.n_genes, dtype=bool)
        mask[entry["genes"]] = True
        score = scorer.score(mask)
        scored.append({**entry, "correct": int(score.correct), "total": int(score.total)})
    keep = pareto_front([(e["correct"], e["size"]) for e in scored])
    return [scored[i] for i in keep]


def result_document(result, seed, gene_names=None, data=None):
    """The JSON-ready dict of a search result.

    Parameters
    ----------
    result : SearchResult
    seed : int
    gene_names : sequence of str, optional
        Names of all genes, to name the selected ones.
    data : str, optional
        The dataset as given on the command line.
    """
    genes = result.genes.tolist()
    document = {
        **tags(RESULT_ENCODING),
        "data": data,
        "algorithm": result.algorithm,
        "seed": seed,
        "params": result.params,
        "n_genes_total": int(result.mask.size),
        "selected_genes": genes,
        "selected_gene_names": [str(gene_names[g]) for g in genes] if gene_names is not None
        else None,
        "n_selected": len(genes),
        "fitness": result.fitness,
        "history": result.history,
        "extra": result.extra,
        "front": [{"size": p["size"], "fitness": p["fitness"], "correct": p["correct"],
                   "total": p["total"], "genes": np.asarray(p["genes"]).tolist()}
                  for p in result.front],
        "refined": None,
    }
    if result.refined is not None:
        refined = result.refined.genes.tolist()
        document["refined"] = {
            "method": result.refined.method, "genes": refined,
            "gene_names": [str(gene_names[g]) for g in refined] if gene_names is not None
            else None, "correct": result.refined.correct, "total": result.refined.total,
            "removed": result.refined.removed.tolist()}
    return finite(document)
