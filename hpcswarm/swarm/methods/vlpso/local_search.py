"""VLPSO's local search on new pbests, guided by symmetric uncertainty (the authors'
``KNNopt.localsearchSU`` and ``VLSwarm.updateFitnessAndLSPbest``, ``xyjigsaw/VarLenPSO``).

Each try draws some of the pbest's selected genes and some of its unselected ones (within the
particle's length), switches off a drawn gene that is redundant with a more relevant drawn
one and switches on a drawn gene more relevant than the drawn selected genes on average
(:func:`flip_set`); the flipped subset replaces the current one when it is better (higher
fitness, then fewer genes). :func:`relevance_search` is the search around one subset,
:class:`RelevanceLocalSearch` runs it on every new pbest of a round, dealt over the ranks.
"""

import numpy as np

from hpcswarm.params import Param
from hpcswarm.swarm.engine.exchange import ship
from hpcswarm.swarm.engine.ordering import FEWER_GENES
from hpcswarm.swarm.engine.state import child_sequence
from hpcswarm.swarm.methods.vlpso.redundancy_kernel import AVAILABLE as COMPILED_AVAILABLE
from hpcswarm.swarm.methods.vlpso.redundancy_kernel import (drawn_flips, entropy_terms,
                                                            kept_genes)
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import (discretised, interval_entropies,
                                                                interval_relevance,
                                                                mutual_symmetric_uncertainty)
from hpcswarm.swarm.operators.local_search import deal_searches, pack_pbest, unpack_pbest

LOCAL_SEARCH = 4
"""Child key of the local-search draws under the run's seed (the swarm uses 0 and 1, the
subsample searches 2, VLPSO's exemplars 3): the search from particle ``i``'s pbest at round
``t`` draws from the child ``(LOCAL_SEARCH, i, t)``, so any rank can run it."""

DRAWS = 10
"""Draws of a try's genes until one gives a non-empty flip set (``KNNopt.localsearchSU``)."""


class GeneTable:
    """The genes as the local search reads them: each gene's MDL intervals
    (:func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.discretised`), their entropy and the
    gene's SU with the class
    (:func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.gene_relevance`,
    the values VLPSO orders the genes by), computed the first time VLPSO's ranking or a try
    reads the gene (:meth:`learn`) and kept; SU between genes is computed for the pairs a
    try compares only, by the compiled pass of
    :mod:`~hpcswarm.swarm.methods.vlpso.redundancy_kernel`
    (:meth:`kept`, the same values) where numba is installed and ``compiled`` is left on,
    else pair by pair (:meth:`between`).

    Parameters
    ----------
    data : GeneMajor
        The training samples (the fitness engine's, ``scorer.data``).
    codes : ndarray of int of shape (n_samples,)
    compiled : bool, default True
        Whether :meth:`kept` may use the compiled pass (numba installed).
    """

    def __init__(self, data, codes, compiled=True):
        self.data = data
        self.codes = np.asarray(codes)
        self.n_classes = int(self.codes.max()) + 1 if self.codes.size else 0
        n_genes, n_samples = int(data.n_genes), self.codes.size
        self.bins = np.zeros((n_genes, n_samples), dtype=interval_dtype(n_samples))
        self.class_su = np.zeros(n_genes)
        self.entropies = np.zeros(n_genes)
        self.known = np.zeros(n_genes, dtype=bool)
        self.compiled = bool(compiled and COMPILED_AVAILABLE)
        self.terms = entropy_terms(n_samples) if self.compiled else None

    @staticmethod
    def bytes_needed(n_samples: int, n_genes: int) -> int:
        """Bytes of the table: an interval per gene and sample (:func:`interval_dtype`), a
        float64 relevance and entropy and a flag per gene (the compiled pass's
        ``n_samples + 1`` entropy terms and its scratch of a try, a few kilobytes, aside)."""
        itemsize = np.dtype(interval_dtype(n_samples)).itemsize
        return int(n_genes) * (itemsize * int(n_samples) + 17)

    def learn(self, genes) -> None:
        """Discretise those of ``genes`` not yet in the table (:meth:`relevance` and
        :meth:`between` call it; VLPSO's ranking too, for its genes, with the local search
        on). A gene's entropy depends on the batch it is learned in (its row of the batch is
        as wide as the batch's widest gene, and numpy sums a row of 8 or more cells in
        another order), so callers keep the batches they have always used."""
        if self.known[genes].all():
            return
        missing = np.unique(genes)
        missing = missing[~self.known[missing]]
        for gene, row in zip(missing.tolist(), self.data.take(missing)):
            self.bins[gene] = discretised(row, self.codes, self.n_classes)
            self.class_su[gene] = interval_relevance(self.bins[gene], self.codes)
        self.entropies[missing] = interval_entropies(self.bins[missing])
        self.known[missing] = True

    def relevance(self, genes) -> np.ndarray:
        """SU with the class of each of ``genes``, ndarray of float64."""
        genes = np.asarray(genes, dtype=np.int64)
        self.learn(genes)
        return self.class_su[genes]

    def between(self, gene: int, others) -> np.ndarray:
        """SU between ``gene`` and each of ``others`` (``SU.get_su``), ndarray of float64."""
        others = np.asarray(others, dtype=np.int64)
        self.learn(others)
        self.learn(np.array([gene]))
        return mutual_symmetric_uncertainty(self.bins[gene], self.bins[others],
                                            (self.entropies[gene], self.entropies[others]))

    def kept(self, ones, relevance) -> np.ndarray:
        """Which of the drawn selected genes ``ones``, sorted by decreasing ``relevance``
        (their SU with the class), the flip rule keeps (:func:`redundancy_pass`), ndarray
        of bool; one compiled call where :attr:`compiled`, the same genes as pair by pair."""
        if not self.compiled:
            return redundancy_pass(ones, relevance, self)
        ones = np.asarray(ones, dtype=np.int64)
        self.learn(ones)
        return kept_genes(ones, np.asarray(relevance, dtype=float), self.bins, self.entropies,
                          self.terms)

    def draw_flips(self, rng, mask, genes, n_ones: int, n_zeros: int) -> np.ndarray:
        """The flip set of one draw: :func:`flip_set` of the genes :func:`taken_genes` takes
        (``n_ones`` selected and ``n_zeros`` unselected genes of ``mask``) from one
        permutation of ``genes`` drawn from ``rng``. Where :attr:`compiled` and
        every gene taken is in the table, all that follows the permutation is one compiled
        call (:data:`~hpcswarm.swarm.methods.vlpso.redundancy_kernel.drawn_flips`); else
        :func:`flip_set` learns the genes taken, in the batches it always learned them in
        (a gene's entropy is summed over a row as wide as its batch's widest gene)."""
        shuffled = rng.permutation(genes)
        if self.compiled:
            flips, learned = drawn_flips(shuffled, mask, n_ones, n_zeros, self.known,
                                         self.class_su, self.bins, self.entropies, self.terms)
            if learned:
                return flips
        return flip_set(*taken_genes(shuffled, mask, n_ones, n_zeros), self)


def interval_dtype(n_samples: int):
    """The smallest unsigned integer type that holds the intervals of ``n_samples`` values
    (at most ``n_samples`` intervals)."""
    return np.min_scalar_type(max(int(n_samples) - 1, 0))


def flip_set(ones, zeros, table) -> np.ndarray:
    """The genes one try flips (``KNNopt.flip``), sorted.

    The drawn selected genes ``ones`` are sorted by decreasing SU with the class (ties in
    draw order); going down that order, each gene still kept switches off every later kept
    gene ``j`` with ``SU(i, j) > SU(j, C)``: ``j`` tells less about the class than about a
    more relevant selected gene (Yu & Liu's approximate Markov blanket). A gene of SU 0 with
    the class after another is switched off without computing ``SU(i, j)``: the authors'
    ``SU.get_su`` gives 1 for a pair with such a gene. Each drawn unselected gene of
    ``zeros`` whose SU with the class exceeds the mean of the drawn selected genes' is
    switched on; with no selected gene drawn none is (the Java's mean of nothing is NaN).

    Parameters
    ----------
    ones, zeros : ndarray of int
        The drawn selected and unselected genes, in draw order.
    table : GeneTable
        Or anything with ``relevance(genes)`` and ``kept(ones, relevance)``, the pass over
        the drawn selected genes (:meth:`GeneTable.kept`, or :func:`redundancy_pass` pair by
        pair).

    Returns
    -------
    ndarray of int64
    """
    ones = np.asarray(ones, dtype=np.int64)
    zeros = np.asarray(zeros, dtype=np.int64)
    if ones.size == 0:
        return np.zeros(0, dtype=np.int64)
    relevance = table.relevance(ones)
    mean = relevance.mean()
    order = np.argsort(-relevance, kind="stable")
    ones, relevance = ones[order], relevance[order]
    kept = table.kept(ones, relevance)
    switched_on = zeros[table.relevance(zeros) > mean] if zeros.size else zeros
    return np.sort(np.concatenate([ones[~kept], switched_on]))


def redundancy_pass(ones, relevance, table) -> np.ndarray:
    """The flip rule's pass over the drawn selected genes, one ``table.between`` call per
    gene still kept (:func:`flip_set`; ``KNNopt.flip``).

    Parameters
    ----------
    ones : ndarray of int64
        The drawn selected genes by decreasing SU with the class.
    relevance : ndarray of float64
        Their SU with the class, in the same order.
    table : GeneTable
        Anything with ``between(gene, others)``.

    Returns
    -------
    ndarray of bool
        The genes kept.
    """
    kept = np.ones(ones.size, dtype=bool)
    for i in range(ones.size - 1):
        if not kept[i]:
            continue
        later = i + 1 + np.flatnonzero(kept[i + 1:])
        irrelevant = relevance[later] == 0
        compared = later[~irrelevant]
        redundant = np.zeros(later.size, dtype=bool)
        redundant[irrelevant] = True
        if compared.size:
            redundant[~irrelevant] = table.between(ones[i], ones[compared]) > relevance[compared]
        kept[later[redundant]] = False
    return kept


def taken_genes(shuffled, mask, n_ones: int, n_zeros: int):
    """The first ``n_ones`` selected and ``n_zeros`` unselected genes (``mask``) of
    ``shuffled``, a random permutation of the particle's length (``KNNopt.halfOnesZeros``),
    each in its order: (ones, zeros), ndarrays of int."""
    chosen = mask[shuffled]
    return shuffled[chosen][:n_ones], shuffled[~chosen][:n_zeros]


def relevance_search(fitness, mask, value, genes, table, rng, flip: float, tries: int,
                     observe=None, needed=None, ordering=FEWER_GENES):
    """The local search of VLPSO around one subset (``KNNopt.localsearchSU``).

    Each of ``tries`` tries takes ``n_flip = int(flip * size)`` genes of the current subset
    (``size`` genes), ``n_zeros = round(u * min(n_flip, len(genes) - size))`` of them
    unselected (``u`` uniform in [0, 1)) and the rest selected (:func:`taken_genes`), redrawn
    up to :data:`DRAWS` times until :func:`flip_set` is not empty
    (:meth:`GeneTable.draw_flips`); a try whose draws all give an empty set is not scored.
    The flipped subset is scored by the fitness engine's incremental path (``fitness.flip``
    of the current subset's cached state) and becomes the current subset when it beats it
    (``ordering``: higher fitness, then fewer genes). The result is never worse than the
    input. A try whose highest possible fitness (``fitness.highest``) cannot beat the
    current subset, and that ``needed`` does not ask for, is not scored (observed with the
    fitness NaN, as
    :func:`hpcswarm.swarm.operators.local_search.local_search` does): it could not be kept.

    Parameters
    ----------
    fitness : SubsetFitness
    mask : ndarray of shape (n_genes,), bool
        Starting subset (a new pbest), within ``genes``.
    value : float
        Its fitness.
    genes : ndarray of int
        The genes the subset may hold (the particle's length of the SU order).
    table : GeneTable
    rng : numpy.random.Generator
    flip : float
        Share of the current subset's genes drawn per try.
    tries : int
    observe : callable, optional
        ``observe(mask, flips, values, sizes)`` for each scored try (see
        :meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.observe_flips`).
    needed : callable, optional
        ``needed(sizes, highest)``: whether a try must be scored even when it cannot beat
        the current subset (e.g. to enter the front), ndarray of bool.
    ordering : Ordering
        The order of subsets (:mod:`hpcswarm.swarm.engine.ordering`).

    Returns
    -------
    mask : ndarray of shape (n_genes,), bool
    value : float
    accepted : int
        Tries that replaced the current subset.
    """
    current = np.array(mask, dtype=bool)
    genes = np.asarray(genes, dtype=np.int64)
    size = int(current.sum())
    state = None  # made when a first try is scored
    accepted = 0
    for _ in range(tries):
        n_flip = int(flip * size)
        if n_flip == 0:  # the size only changes when a try is kept: no try can flip
            break
        n_zeros = int(np.floor(rng.random() * min(n_flip, genes.size - size) + 0.5))
        flips = np.zeros(0, dtype=np.int64)
        for _ in range(DRAWS):
            flips = table.draw_flips(rng, current, genes, n_flip - n_zeros, n_zeros)
            if flips.size:
                break
        if flips.size == 0:
            continue
        new_size = size + flips.size - 2 * int(current[flips].sum())
        sizes = np.array([new_size])
        highest = fitness.highest(sizes)
        wanted = ordering.beats(highest, sizes, value, size)
        if needed is not None:
            wanted |= needed(sizes, highest)
        found = np.nan
        if wanted[0]:
            state = fitness.new_state(current) if state is None else state
            found = float(fitness.flip(state, flips))
        if observe is not None:
            observe(current, flips[None, :], np.array([found]), sizes)
        if ordering.beats(found, new_size, value, size):
            fitness.apply_flip(state, flips)
            current[flips] = ~current[flips]
            value, size = found, new_size
            accepted += 1
    return current, value, accepted


class RelevanceLocalSearch:
    """VLPSO's local search on the new pbests of a round (``VLSwarm.updateFitnessAndLSPbest``).

    With ``local_search`` on, each particle whose pbest a round's evaluation replaced runs
    :func:`relevance_search` from it (``ls_tries`` tries drawing ``ls_flip`` of its genes);
    a better subset found becomes its pbest, whose position over the particle's length is
    then that subset's, 1.0 where selected and 0.0 elsewhere. Every try's draws come from
    the stream ``(LOCAL_SEARCH, i, round)``, so a search gives the same subset on any rank.
    Each round with new pbests to search records a ``local_search`` event: the searches
    run, the pbests they improved and the tries kept.

    Parallel runs: the searches of a round are dealt evenly over the ranks
    (:func:`~hpcswarm.swarm.operators.local_search.deal_searches`); a search run away from its
    particle's owner receives the pbest as packed bits with its fitness
    (``n_genes / 8 + 8`` bytes) and returns the same, and the event's three counts are
    summed over the ranks (24 bytes per rank).
    """

    PARAMS = (
        Param("local_search", "bool", False,
              "local search on new pbests (the authors' Java switches it off)"),
        Param("ls_tries", "int", 100, "local-search tries per new pbest", low=1),
        Param("ls_flip", "float", 0.25, "share of the pbest's selected genes drawn per try "
              "(above 0: a try of none flips nothing)", low=0, high=1, low_open=True),
    )

    def __init__(self):
        self.table = None

    def gene_table(self, search) -> GeneTable:
        """The table of ``search``'s training samples, made at the first call."""
        if self.table is None:
            scorer = search.fitness.scorer
            self.table = GeneTable(scorer.data, scorer.codes)
        return self.table

    def run(self, search, improved) -> None:
        """Search from the new pbests ``improved`` (this rank's) of VLPSO ``search``, dealt
        over the ranks (collective), and record the event."""
        self.gene_table(search)
        s, comm, n_genes = search.state, search.comm, search.n_genes
        jobs, owner, worker = deal_searches(search, improved)
        if jobs.size == 0:
            return
        row_bytes = (n_genes + 7) // 8 + 8
        outgoing = (owner == comm.rank) & (worker != comm.rank)
        incoming = (worker == comm.rank) & (owner != comm.rank)
        sent = np.array([pack_pbest(s.pbest_mask[i], s.pbest_fitness[i])
                         for i in jobs[outgoing]], dtype=np.uint8).reshape(-1, row_bytes)
        guests = dict(zip(jobs[incoming].tolist(), ship(comm, sent, owner, worker)))
        counts = np.zeros(3, dtype=np.int64)  # searches, pbests improved, tries kept
        returned = []
        for i in jobs[worker == comm.rank].tolist():
            if i in guests:
                start, value = unpack_pbest(guests[i], n_genes)
            else:
                start, value = s.pbest_mask[i], float(s.pbest_fitness[i])
            mask, found, accepted = self.search_from(search, i, start, value)
            counts += (1, accepted > 0, accepted)
            if i in guests:
                returned.append(pack_pbest(mask, found))
            elif accepted:
                adopt(search, i, mask, found)
        back = ship(comm, np.array(returned, dtype=np.uint8).reshape(-1, row_bytes), worker,
                    owner)
        for i, row in zip(jobs[outgoing].tolist(), back):
            mask, found = unpack_pbest(row, n_genes)
            if not np.array_equal(mask, s.pbest_mask[i]):
                adopt(search, i, mask, found)
        searches, improved_pbests, kept = (int(c) for c in comm.allreduce_sum(counts))
        search.event("local_search", searches=searches, improved=improved_pbests, kept=kept)

    def search_from(self, search, i, mask, value):
        """:func:`relevance_search` from particle ``i``'s pbest ``mask`` of fitness ``value``
        with ``search``'s settings, its tries observed by the evaluator."""
        p, evaluator = search.params, search.evaluator
        rng = np.random.default_rng(child_sequence(search.seed_sequence, LOCAL_SEARCH, int(i),
                                                   search.iteration))
        return relevance_search(search.fitness, mask, value, search.order[:search.lengths[i]],
                                self.table, rng, p["ls_flip"], p["ls_tries"],
                                observe=evaluator.observe_flips, needed=evaluator.front.open,
                                ordering=evaluator.ordering)


def adopt(search, i, mask, value) -> None:
    """Make a local search's subset particle ``i``'s pbest (on its owner): its position
    1.0 on the subset's genes, 0.0 elsewhere (``VLSwarm.updateFitnessAndLSPbest``)."""
    s = search.state
    s.pbest_position[i] = mask.astype(float)
    s.pbest_mask[i] = mask
    s.pbest_fitness[i] = value
    s.pbest_size[i] = int(np.count_nonzero(mask))
