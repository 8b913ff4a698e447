"""Greedy wrapper baselines on the swarms' loop: all genes, SFS, SBS, LFS and GSBS.

Every method here is a :class:`~hpcswarm.swarm.engine.loop.SearchAlgorithm`, scored by the same
fitness engine, so ``run_search``, ``hpcswarm run --algorithm sfs``, the protocols and the
report treat it as any swarm. One round of the shared loop is one greedy step: of every
candidate one-gene change of the current subset the best is taken if it is better than the
current subset.

Ordering and tie rules (the swarms' ordering, :func:`hpcswarm.swarm.engine.ordering.better`): a
subset
beats another if its fitness is higher, or equal with fewer genes. The candidates of a step
all have the same size, so the best is the one of highest fitness, ties to the lowest gene
index. The step is taken only if that candidate beats the current subset, hence:

* **SFS** (sequential forward selection, Whitney 1971; Li et al. compare against it) starts
  from the empty subset, adds one gene per step, and stops when no addition *raises* the
  fitness (an addition at equal fitness has more genes, so it is not better). This is also
  Weka's ``GreedyStepwise`` forward, which Li et al. ran.
* **SBS** (sequential backward selection, Marill & Green 1963) starts from all genes,
  removes one gene per step, and stops when every removal *lowers* the fitness (a removal
  at equal fitness is better: one gene fewer).
* **GSBS** (greedy stepwise backward selection, Xue, Zhang & Browne 2012, Sect. 5: Weka's
  ``GreedyStepwise`` with backward search) is SBS with Weka's scan rule among equal
  candidates: Weka keeps a candidate when ``merit >= best so far`` while scanning genes in
  increasing index, so the *highest* index wins a tie. Its stop rule ("stops when the
  deletion of any remaining attribute results in a decrease in evaluation") is SBS's.
* **LFS** (linear forward selection, Gutlein, Frank, Hall & Karwath 2009; Xue et al. 2012
  compare against it) ranks every gene alone by its wrapper accuracy (the ranking of
  :mod:`hpcswarm.swarm.operators.ranking`, also SFR's), then runs SFS over a restricted candidate
  set of ``n_ranked`` genes (Weka's default k = 50): ``"fixed-set"`` (Weka's default) the
  top ``n_ranked`` genes of the ranking, once and for all; ``"fixed-width"`` the
  ``n_ranked`` best-ranked genes not yet selected, so that each added gene lets the next
  one of the ranking in. Weka drives LFS by best-first search with a 5-expansion
  stall limit; here the hill climb of SFS drives it (the same step and stop as SFS), so
  that LFS differs from SFS only by its candidate set.
* **All genes** (``"all-genes"``): the k-NN on every gene, one evaluation.

Evaluation: a step over thousands of candidates is thousands of one-gene changes of the
same subset, scored by the engine's incremental path in batched calls
(``SubsetFitness.single_flips`` on a cached distance state: O(n_samples^2) each, blocks of
candidates sharing each numpy call, :mod:`hpcswarm.fitness.single_flips`) and, for the
first step of forward searches (the empty subset, :data:`FULL_BELOW`), by full
evaluations. Both give the same value bit for bit (``evaluation`` selects one path, for
benchmarks). Candidates that cannot change the step are not scored: all of them when even
a candidate with every prediction right could not beat the current subset, and those
after the first candidate (in the order of the tie rule) that has every prediction right
(:meth:`GreedySearch.score_candidates`); the step, its path and its counts are those of
scoring them all, and every candidate still counts as an evaluation. Candidate subsets of a greedy run are all distinct (sizes change by one per
step), so the archive is useless here and off by default.

Fitness defaults: 1-NN leave-one-out accuracy (Tran et al. 2016), overridable with ``k``,
``cv``, ``objective``, ``alpha`` as for the swarms.
"""

import numpy as np

from hpcswarm.comm import block_counts, block_range
from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.engine.loop import SearchAlgorithm
from hpcswarm.swarm.engine.ordering import better
from hpcswarm.swarm.engine.snapshot import ArraySpec
from hpcswarm.swarm.engine.termination import MethodStop, RoundLimit
from hpcswarm.swarm.operators.ranking import rank_genes, single_gene_accuracies
from hpcswarm.swarm.params import FITNESS_PARAMS, Param

FULL_BELOW = 1
"""In ``evaluation="auto"``, candidates of a subset of fewer genes than this (the empty
subset's: single genes) are scored by full evaluations, otherwise by batched one-gene flips
of a cached state. A batched flip costs 0.03-0.05 ms CPU on SRBCT and Prostate_GE (one
thread) whatever the subset size, a full evaluation 0.1-0.2 ms at 1-40 genes and more
beyond; on single genes, whose distances tie everywhere, both are dominated by the exact
tie-breaking and the full evaluation is the cheaper (``benchmarks/bench_greedy.py`` prints
the costs)."""

EVALUATIONS = ("auto", "incremental", "full")

FIRST_CHUNK = 64
"""Candidates of a step scored in the first call; each further call scores twice as many,
until one reaches the highest fitness possible (:meth:`GreedySearch.score_candidates`)."""

GREEDY_PARAMS = (
    Param("max_steps", "int", 0,
          "most genes added or removed (0: until no step improves)", low=0),
    Param("evaluation", "choice", "auto",
          "how candidates are scored: auto, incremental (one-gene flips), full", choices=EVALUATIONS),
) + FITNESS_PARAMS


class AllGenes(SearchAlgorithm):
    """The k-NN on every gene ("All" in Tran et al. 2016, Gu et al. 2018): one evaluation."""

    name = "all-genes"
    PARAMS = FITNESS_PARAMS

    def initialise(self):
        mask = np.ones(self.n_genes, dtype=bool)
        self.evaluator.observe_shared(mask, float(self.fitness(mask)))

    def step(self):  # never called: done after round 0
        raise RuntimeError("all-genes has a single round")

    @classmethod
    def default_termination(cls, params, n_genes):
        return RoundLimit(1)

    def mean_size(self):
        return float(self.n_genes)


class GreedySearch(SearchAlgorithm):
    """Hill climbing by one-gene changes: the step, stop rule and bookkeeping of every greedy method.

    Subclasses set ``forward`` and ``last_wins`` (the tie rule among equal candidates: the
    lowest gene index wins, or the highest) and may override :meth:`candidate_genes` (the
    genes a step may flip).

    ``extra`` holds ``path`` (genes added or removed, in order), ``path_fitness`` (the
    fitness after each of those steps), ``start_fitness``, ``stopped`` (why the search ended:
    ``"no improving step"``, ``"max_steps"`` or ``"no candidates"``) and
    ``candidates_scored`` (candidate subsets evaluated in all).
    """

    forward = True
    last_wins = False
    PARAMS = GREEDY_PARAMS
    STATE = ("mask", "size", "value", "start_fitness", "path", "path_fitness", "stopped",
             "candidates_scored")
    STATE_VALUES = {"mask": ArraySpec("b", ("genes",)), "size": ArraySpec("i", (), 0, "genes"),
                    "value": ArraySpec("f", (), WORST_FITNESS, 1.0),
                    "start_fitness": ArraySpec("f", (), WORST_FITNESS, 1.0),
                    "candidates_scored": ArraySpec("i", (), 0)}
    STOP_REASONS = ("no candidates", "no improving step", "max_steps")
    """Why a search may have ended (its ``stopped``; None while it goes on)."""
    scores_single_flips = True

    @classmethod
    def cached_states(cls, params):
        """One: the current subset's cached state, kept from step to step (``cache``)."""
        return 1

    # ------------------------------------------------------------------ the loop
    def initialise(self):
        self.mask = np.zeros(self.n_genes, dtype=bool) if self.forward else np.ones(
            self.n_genes, dtype=bool)
        self.size = int(self.mask.sum())
        self.value = float(self.fitness(self.mask))  # the empty subset: WORST_FITNESS, free
        self.start_fitness = self.value
        if self.size:
            self.evaluator.observe_shared(self.mask, self.value)
        self.cache = None
        self.path, self.path_fitness = [], []
        self.stopped = None
        self.candidates_scored = 0
        self.prepare()
        self.greedy_step()

    def prepare(self):
        """Set-up before the first step (LFS ranks the genes here)."""

    @classmethod
    def state_names(cls):
        """:meth:`SearchAlgorithm.state_names`, and ``cached``."""
        return super().state_names() + ("cached",)

    def method_state(self):
        """:meth:`SearchAlgorithm.method_state`, and whether a cached state of ``mask`` is kept."""
        return {**super().method_state(), "cached": self.cache is not None}

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and the greedy search's:
        ``size`` counts ``mask``; ``path`` holds one distinct gene index per step taken (at
        most one a round, at most ``max_steps``), ``mask`` the start with those genes flipped,
        and ``path_fitness`` their fitness, the last of which is ``value`` (``start_fitness``
        before any step); ``stopped`` is None or one of :attr:`STOP_REASONS`; ``cached`` is
        a bool."""
        problem = super().state_problem(state, params, n_genes)
        if problem is not None:
            return problem
        if state["size"] != state["mask"].sum():
            return f"'size' {state['size']} is not the {state['mask'].sum()} genes of 'mask'"
        path, fitness = state["path"], state["path_fitness"]
        if not (isinstance(path, list) and isinstance(fitness, list)
                and len(path) == len(fitness)):
            return "'path' and 'path_fitness' are not lists of one entry per step"
        n_genes = state["mask"].size
        if not all(type(gene) is int and 0 <= gene < n_genes for gene in path):
            return f"'path' holds values that are no gene index in [0, {n_genes})"
        if not all(type(value) is float and WORST_FITNESS <= value <= 1.0
                   for value in fitness):
            return f"'path_fitness' holds values outside [{WORST_FITNESS}, 1.0]"
        stopped = state["stopped"]
        if stopped is not None and not (type(stopped) is str and stopped in cls.STOP_REASONS):
            return f"'stopped' is {stopped!r}, not one of {cls.STOP_REASONS} or None"
        steps = len(path)
        if (len(set(path)) != steps or steps > state["iteration"] + 1
                or (params["max_steps"] and steps > params["max_steps"])):
            return (f"'path' does not hold distinct genes, at most one a round and "
                    f"max_steps = {params['max_steps']}")
        flipped = np.zeros(n_genes, dtype=bool)
        flipped[path] = True
        if not np.array_equal(state["mask"], flipped if cls.forward else ~flipped):
            return "'mask' is not the start with the genes of 'path' flipped"
        if state["value"] != (fitness[-1] if fitness else state["start_fitness"]):
            return "'value' is not the fitness of the last step ('start_fitness' before one)"
        if type(state["cached"]) is not bool:
            return f"'cached' is {state['cached']!r}, not a bool"
        return None

    def restore_method_state(self, state):
        """Take back :meth:`method_state`; a cached state is rebuilt from ``mask`` (one Gram
        product), its scores being exact."""
        state = dict(state)
        cached = state.pop("cached")
        super().restore_method_state(state)
        self.cache = self.fitness.new_state(self.mask) if cached else None

    def step(self):
        self.greedy_step()

    @classmethod
    def default_termination(cls, params, n_genes):
        """Stop once a step says why (:meth:`finished`)."""
        return MethodStop()

    def finished(self):
        """Whether the search has stopped: no improving step, no candidates, or ``max_steps``
        steps taken."""
        return self.stopped is not None

    def mean_size(self):
        return float(self.size)

    def greedy_step(self):
        """Score the candidate changes, take the best if it beats the current subset.

        A candidate's fitness is at most ``fitness.highest`` of its size (every prediction
        right): when that cannot beat the current subset (e.g. SFS once every prediction is
        right), no candidate can, and the step stops without scoring them. They count as
        evaluations all the same, as in a step that scores them.
        """
        genes = self.candidate_genes()
        if genes.size == 0:
            self.stopped = "no candidates"
            return
        size = self.size + (1 if self.forward else -1)
        highest = float(self.fitness.highest([size])[0])
        self.candidates_scored += int(genes.size)
        # the empty subset is not computed
        self.evaluator.count(evaluations=int(genes.size) if size else 0)
        fresh = self.fresh_candidates(genes)
        if not better(highest, size, self.value, self.size):
            self.evaluator.count(new_subsets=fresh)
            self.stopped = "no improving step"
            return
        values = self.score_candidates(genes, highest)
        best = self.choose(values)
        gene, value = int(genes[best]), float(values[best])
        if not better(value, size, self.value, self.size):
            self.evaluator.count(new_subsets=fresh)
            self.stopped = "no improving step"
            return
        if self.cache is not None:
            self.fitness.apply_flip(self.cache, np.array([gene]))
        self.mask[gene] = self.forward
        self.size, self.value = size, value
        self.path.append(gene)
        self.path_fitness.append(value)
        if self.params["max_steps"] and len(self.path) >= self.params["max_steps"]:
            self.stopped = "max_steps"
        self.evaluator.count(new_subsets=fresh - 1)  # observe_shared counts the chosen one
        self.evaluator.observe_shared(self.mask, value, computed=False)  # counted above

    # ------------------------------------------------------------------ plug-ins
    def candidate_genes(self):
        """Genes a step may flip, ndarray of int in increasing order."""
        return np.flatnonzero(~self.mask if self.forward else self.mask)

    def choose(self, values):
        """Index of the best candidate: highest fitness, ties to the first (lowest gene index)
        or, with ``last_wins``, to the last; NaN (not scored) is never the best."""
        values = np.where(np.isnan(values), -np.inf, values)
        if self.last_wins:
            return int(values.size - 1 - np.argmax(values[::-1]))
        return int(np.argmax(values))

    def fresh_candidates(self, genes):
        """How many candidate subsets of this step were never met before (all of them: sizes
        change by one per step, so a greedy run never meets a subset twice)."""
        return int(genes.size)

    def score_candidates(self, genes, highest):
        """Fitness of the current subset with each gene of ``genes`` flipped alone, or NaN
        where it cannot matter.

        The one place that scores a step's candidates: one-gene flips of the cached distance
        state in batched calls, or full evaluations (see :data:`FULL_BELOW`), equal bit for
        bit. They are scored in the order of the tie rule (increasing gene index, or
        decreasing with ``last_wins``), in chunks of :data:`FIRST_CHUNK` candidates that
        double, until a candidate reaches ``highest``, the highest fitness the step's size
        allows: no later candidate can beat it, so the rest are left NaN. With a
        communicator of P ranks, ``genes`` is split in contiguous blocks
        (:func:`~hpcswarm.comm.block_range`), each rank scores its block in that order and the
        values are allgathered (``8 len(genes)`` bytes in all): every rank gets the same array,
        whose best is the serial run's, so every rank takes the same step and keeps the
        same cached state, and the run is identical for any number of ranks.

        Parameters
        ----------
        genes : ndarray of int of shape (n_candidates,)
        highest : float
            ``fitness.highest`` of the candidates' size.

        Returns
        -------
        ndarray of shape (n_candidates,)
        """
        start, stop = block_range(genes.size, self.comm.size, self.comm.rank)
        mine = genes[start:stop]
        order = np.arange(mine.size)[::-1] if self.last_wins else np.arange(mine.size)
        values = np.full(mine.size, np.nan)
        done, chunk = 0, FIRST_CHUNK
        while done < mine.size:
            part = order[done:done + chunk]
            values[part] = self.score_genes(mine[part])
            done += part.size
            chunk *= 2
            if np.any(values[part] >= highest):
                break
        return self.comm.allgatherv(values, counts=block_counts(genes.size, self.comm.size))

    def score_genes(self, genes):
        """Fitness of the current subset with each of ``genes`` flipped alone, ndarray."""
        mode = self.params["evaluation"]
        if mode == "full" or (mode == "auto" and self.size < FULL_BELOW):
            self.cache = None
            values = np.empty(genes.size)
            mask = self.mask.copy()
            for j, gene in enumerate(genes):
                mask[gene] = not mask[gene]
                values[j] = self.fitness(mask)
                mask[gene] = not mask[gene]
            return values
        if self.cache is None:
            self.cache = self.fitness.new_state(self.mask)
        return self.fitness.single_flips(self.cache, genes)

    def extra(self):
        return {**super().extra(), "path": list(self.path), "path_fitness": list(self.path_fitness),
                "start_fitness": self.start_fitness, "stopped": self.stopped,
                "candidates_scored": self.candidates_scored}


class SFS(GreedySearch):
    """Sequential forward selection: add the best gene while the fitness rises (Whitney 1971).

    Li et al. (FSIPSO paper, Table II) compare against it (Weka's greedy stepwise forward).
    """

    name = "sfs"
    forward = True


class SBS(GreedySearch):
    """Sequential backward selection: remove the best gene while the fitness does not fall
    (Marill & Green 1963; Li et al., Table II)."""

    name = "sbs"
    forward = False


class GSBS(SBS):
    """Greedy stepwise backward selection as Weka's ``GreedyStepwise -B`` (Xue et al. 2012, Sect. 5).

    SBS whose ties between equally good removals go to the highest gene index (Weka scans
    genes in increasing order and keeps a candidate whose merit is ``>=`` the best so far).
    """

    name = "gsbs"

    last_wins = True


class LFS(GreedySearch):
    """Linear forward selection (Gutlein, Frank, Hall & Karwath 2009; Xue et al. 2012, Sect. 5).

    SFS restricted to ``n_ranked`` genes of the single-gene wrapper ranking: the top genes
    (``lfs_type="fixed-set"``, Weka's default) or the best-ranked genes not selected yet
    (``"fixed-width"``). ``extra["ranking"]`` holds the ranking (the first ``n_ranked``).
    """

    name = "lfs"
    forward = True
    PARAMS = (
        Param("n_ranked", "int", 50, "genes of the ranking considered (Weka's k)", low=1),
        Param("lfs_type", "choice", "fixed-set",
              "candidate set: fixed-set (top genes) or fixed-width (top genes not selected)",
              choices=("fixed-set", "fixed-width")),
    ) + GREEDY_PARAMS
    STATE = ("ranking",)
    STATE_VALUES = {"ranking": ArraySpec("i", ("genes",), 0, "last_gene", distinct=True)}

    def prepare(self):
        accuracies = single_gene_accuracies(self.fitness, np.arange(self.n_genes), self.comm)
        self.ranking = rank_genes(accuracies)
        self.evaluator.count(evaluations=self.n_genes, new_subsets=self.n_genes)

    def fresh_candidates(self, genes):
        return 0 if self.size == 0 else int(genes.size)  # step 1 meets ranked single genes

    def candidate_genes(self):
        width = self.params["n_ranked"]
        if self.params["lfs_type"] == "fixed-set":
            top = self.ranking[:width]
            return np.sort(top[~self.mask[top]])
        free = self.ranking[~self.mask[self.ranking]]
        return np.sort(free[:width])

    def extra(self):
        return {**super().extra(), "ranking": self.ranking[:self.params["n_ranked"]].tolist()}


#: The baselines by command-line name (known to ``algorithm_class``, so to ``run_search``).
BASELINES = {cls.name: cls for cls in (AllGenes, SFS, SBS, LFS, GSBS)}

__all__ = ["AllGenes", "BASELINES", "FULL_BELOW", "GSBS", "GreedySearch", "LFS", "SBS", "SFS"]
