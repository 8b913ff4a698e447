"""One search on one matrix: fitness from the parameters, the method, the result as JSON.

>>> from sklearn.datasets import load_wine
>>> X, y = load_wine(return_X_y=True)
>>> result = run_search(X, y, "cbpso", {"n_iterations": 5}, seed=1)
>>> result.mask.shape
(13,)
"""

import numpy as np

from hpcswarm.comm import as_comm, split_grid
from hpcswarm.encoding import finite, tags
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import SubsetFitness, make_objective, make_scorer
from hpcswarm.methods import algorithm_class, algorithm_params
from hpcswarm.refine import refine as refine_subset
from hpcswarm.swarm.core import RoundHooks
from hpcswarm.swarm.evaluation import EvaluationService
from hpcswarm.swarm.front import pareto_front
from hpcswarm.swarm.state import run_seed_sequence

RESULT_ENCODING = ("hpcswarm-search-result", "0.1.0")
"""``encoding-type`` and ``encoding-version`` written in every result file."""


def make_fitness(X, y, params, seed, shards=None):
    """The fitness of ``params`` (k, cv, objective, alpha) on ``X, y``, and its scorer.

    Parameters
    ----------
    X : GeneMajor or ndarray of shape (n_samples, n_genes)
        As :func:`~hpcswarm.fitness.scorer.make_scorer` takes it.
    y : ndarray of shape (n_samples,)
    params : dict
        Checked algorithm parameters.
    seed : int or numpy.random.SeedSequence
        The run seed, which fixes the folds exactly as ``hpcswarm evaluate --seed`` does.
    shards : SerialComm or MPIComm, optional
        The ranks that split the held-out rows of every evaluation between them (sample
        shards, :func:`hpcswarm.comm.split_grid`): this rank decides the ``shards.rank``-th
        share and the correct counts are summed over ``shards`` (one integer Allreduce
        per evaluation). None: no shards.

    Returns
    -------
    (SubsetFitness, Scorer)
    """
    try:
        objective = make_objective(params["objective"], params["alpha"])
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    scorer = make_scorer(X, y, k=params["k"], cv=params["cv"], seed=seed, shards=shards)
    return SubsetFitness(scorer, objective), scorer


def run_search(X, y, algorithm, params=None, seed=0, comm=None, progress=None, checkpoint=None,
               resume=None, sample_shards=1, refine="none", max_genes=None):
    """Run one search of ``algorithm`` on all samples of ``X, y``.

    Parameters
    ----------
    X : GeneMajor or array-like of shape (n_samples, n_genes)
        The samples to search on: a :class:`~hpcswarm.fitness.GeneMajor` (e.g. over a
        dataset's memory-mapped ``X_genes``, read without a copy), or a sample-major matrix
        (the evaluator copies it gene-major).
    y : array-like of shape (n_samples,)
    algorithm : str
        A name of :data:`hpcswarm.methods.METHODS`.
    params : mapping, optional
        Overrides of the algorithm's paper defaults (native values or strings).
    seed : int, default 0
        Run seed: the folds (as ``hpcswarm evaluate --seed``), the particle streams and the
        swarm stream all derive from it.
    comm : SerialComm or MPIComm, optional
        The ranks that run this one swarm together (``None``: serial), e.g. a rank group of
        :func:`hpcswarm.taskfarm.farm`. Every rank of ``comm`` calls ``run_search`` with the
        same arguments and gets the same result; particles are split across the ranks, and
        each rank evaluates its own on its ``X`` (pass a ``GeneMajor`` over the memory-mapped
        ``X_genes``: no matrix travels over MPI and no rank copies it).
    progress : callable, optional
        ``progress(row)`` once per round on every rank, ``row`` the history row just
        recorded (the task farm's ``progress``).
    checkpoint : callable, optional
        ``checkpoint(search)`` once per round on every rank (the job's snapshot hook, see
        :class:`hpcswarm.swarm.core.SearchAlgorithm`).
    resume : dict, optional
        A snapshot of this same search (same data, algorithm, parameters and seed) to
        continue from; the result is that of the uninterrupted search.
    sample_shards : int, default 1
        A divisor S of ``comm.size``: the ranks form ``comm.size / S`` particle groups x S
        sample shards (:func:`hpcswarm.comm.split_grid`). The particles are dealt over the
        particle groups; the S ranks of a group evaluate every subset together, each
        deciding ``1 / S`` of the held-out rows from ``1 / S`` of the cached distances.
    refine : {"none", "prune", "prune-margin", "prune-compact"}, default "none"
        A refinement of the selected subset after the search, on the same samples
        (:mod:`hpcswarm.refine`), returned in ``refined``; the search itself is the same
        either way.
    max_genes : int, optional
        Cap on the genes of every subset a swarm method evaluates, applied as a repair of
        the positions over it (see each method's ``capped_position``); None: no cap.

    Returns
    -------
    SearchResult
        ``mask`` (the evaluated subset returned), ``fitness`` (its fitness), ``history``,
        ``params`` (complete) and ``extra``; ``extra["score"]`` holds the correct/total
        counts of ``mask``; ``extra["comm"]`` the bytes the particle groups communicated per
        round (the shards' sums, 8 bytes per evaluation, are not counted). Everything but
        ``extra["comm"]`` and the history's ``seconds`` is bit-identical for any number of
        ranks and shards. ``front`` holds the Pareto front of (inner accuracy, size) among
        the subsets evaluated, each point re-scored (``correct``, ``total``); ``refined`` the
        :class:`~hpcswarm.refine.Refined` subset, or None.

    Notes
    -----
    The search keeps its own archive of ``archive_size`` subsets, replicated on the ranks so
    that hits do not depend on how particles are spread (see :mod:`hpcswarm.swarm.core`);
    the scorer has none.

    Raises
    ------
    ParameterError
        Unknown algorithm or parameter, ill-typed value, bad seed, a shard count that does
        not divide the ranks.
    """
    resolved = algorithm_params(algorithm, params)
    cls = algorithm_class(algorithm)
    if max_genes is not None and not cls.supports_max_genes:
        raise ParameterError(f"max_genes applies to the swarm methods without local search "
                             f"(pso, pso-rg, bpso, cbpso, cso, fsipso), not to {algorithm}")
    if max_genes is not None and (isinstance(max_genes, bool) or int(max_genes) < 1):
        raise ParameterError(f"max_genes must be an integer >= 1, got {max_genes!r}")
    try:
        root = run_seed_sequence(seed)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    comm = as_comm(comm)
    try:
        grid = split_grid(comm, sample_shards)
    except ValueError:
        raise ParameterError(f"sample_shards={sample_shards!r} must be a positive divisor of "
                             f"the {comm.size} rank(s) that run the search") from None
    try:
        fitness, scorer = make_fitness(X, y, resolved, root, grid.shards)
        evaluator = EvaluationService.for_params(fitness, resolved, grid.particles)
        search = cls(evaluator, resolved, seed=root, hooks=RoundHooks(progress, checkpoint),
                     max_genes=max_genes)
        result = search.run(resume)
        score = fitness.score(result.mask)
        result.front = scored_front(scorer, result.front)
        try:
            result.refined = refine_subset(scorer, result.mask, refine, X, y)
        except ValueError as exc:
            raise ParameterError(str(exc)) from None
    finally:
        grid.free()
    result.extra["score"] = {"correct": int(score.correct), "total": int(score.total),
                             "accuracy": float(score.accuracy)}
    return result


def scored_front(scorer, front):
    """The front entries scored again (``correct``, ``total``), dominated ones dropped.

    The search's tracker keeps the best subset per size by fitness
    (:mod:`hpcswarm.swarm.front`); their correct counts decide the front of (inner
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
