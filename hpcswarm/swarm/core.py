"""The loop shared by every method, its termination, history and result.

A method is a :class:`SearchAlgorithm` subclass that implements ``initialise`` (round 0) and
``step`` (every later round); :meth:`SearchAlgorithm.run` repeats ``step`` until ``done``.
A *round* is one evaluation of (part of) the swarm, so ``n_iterations`` counts evaluation
rounds including the initial one: 70 rounds of 100 particles are the "7000 evaluations" of
Tran et al. Every subset the method evaluates is offered to
:meth:`SearchAlgorithm.observe_many`, which keeps the best ever seen *with the fitness it was
scored with*: the returned mask is always one that was evaluated, and re-evaluating it gives
the reported fitness.

Ordering of subsets (all methods): higher fitness first, then fewer genes. This is the
pbest/gbest updating rule of Xue, Zhang & Browne 2014 ("updating mechanism 2", the "-2" of
PSO(4-2)); ties that remain between particles are broken by the lower particle index, so the
choice does not depend on how particles are spread over ranks. Among different subsets of
equal fitness and size, the best ever kept is the first met in the order (round, swarm
evaluation before local search, particle index, local-search try), an order a parallel
reduction can reproduce.

Parallel runs (``comm`` of several ranks). Particles are dealt in contiguous blocks,
``local = range(*block_range(n_particles, comm.size, comm.rank))``, so rank order is
particle-index order. A rank moves and evaluates only its own particles with their own
generators; every quantity the methods share is settled by collectives on the (fitness,
size) scalars, with rows of ``n_genes`` values travelling only when they must:

* the best subset ever evaluated: each rank keeps the first strictly best subset of the round
  in its own scan order; an allgather of (fitness, size, phase) per rank finds the global
  first best under the order above, and only that rank broadcasts the mask (packed bits,
  ``n_genes / 8`` bytes) when it beats the best so far;
* distinct subsets (``new_subsets``) and the archive: the 16-byte keys of the subsets
  evaluated in a round are allgathered, so every rank holds the same set of keys seen and
  the same archive, processed in particle-index order (``O(n_evaluated x 16)`` bytes);
* ``evaluations`` is counted by the search, not read from the fitness engine: per round,
  the non-empty subsets of the swarm that were computed (archive misses when the archive is
  on; every evaluated particle when it is off) plus every non-empty local-search try. It is
  then the same with any number of ranks (the engine's own counter, whose within-batch
  de-duplication sees only one rank's particles, is not). A subset that could not matter,
  decided without its distances (the ``needed`` rule of :meth:`SearchAlgorithm.evaluate`,
  :func:`hpcswarm.swarm.pso.local_search`), counts as the evaluation the method makes.

With these rules the history (every key but ``seconds``), the selected subset and its
fitness are bit-identical for any number of ranks, 1 included; ``extra["comm"]`` holds the
bytes communicated per round, summed over the ranks.
"""

import abc
import time
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.comm import as_comm
from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.fitness.archive import Archive, flipped_keys, mask_key, mask_keys
from hpcswarm.swarm.exchange import Blocks, balanced_blocks, settle_round, ship
from hpcswarm.swarm.front import MONOTONE_OBJECTIVES, FrontTracker
from hpcswarm.swarm.snapshot import restore_snapshot
from hpcswarm.swarm.state import particle_streams, run_seed_sequence, swarm_stream


def better(fitness_a, size_a, fitness_b, size_b):
    """Whether subset a (fitness, size) strictly beats subset b: higher fitness, then fewer genes."""
    return fitness_a > fitness_b or (fitness_a == fitness_b and size_a < size_b)


def beats(fitness, sizes, fitness_b, size_b):
    """:func:`better` of each subset of ``fitness`` and ``sizes`` (arrays) against subset b;
    False where the fitness is NaN. Returns ndarray of bool."""
    fitness = np.asarray(fitness, dtype=float)
    return (fitness > fitness_b) | ((fitness == fitness_b) & (np.asarray(sizes) < size_b))


def best_index(fitness, sizes):
    """Index of the best particle: highest fitness, then fewest genes, then lowest index.

    Parameters
    ----------
    fitness : ndarray of shape (n_particles,)
    sizes : ndarray of shape (n_particles,)

    Returns
    -------
    int
    """
    fitness = np.asarray(fitness, dtype=float)
    order = np.lexsort((np.arange(fitness.size), np.asarray(sizes), -fitness))
    return int(order[0])


def fixed_point_bits(n_rows):
    """Fraction bits of the fixed-point sum of ``n_rows`` values in [0, 1].

    As many as float64 carries (52) while ``n_rows * 2**bits`` stays below ``2**62``, so that
    the int64 sum cannot overflow. A function of the row count only, never of the ranks.
    """
    return min(52, 62 - int(n_rows).bit_length())


def swarm_mean(position, n_rows=None, comm=None):
    """Mean position of the swarm, ndarray of shape (n_genes,) (CSO's x-bar, Gu et al. Eq. 3).

    Order-independent: every value (in [0, 1]) is truncated to a multiple of
    ``2**-fixed_point_bits(n_rows)`` (less than ``2**-52`` below it for up to 1023 rows;
    the scaling by a power of two is exact) and summed exactly as int64,
    locally and then over the ranks (an Allreduce of ``8 n_genes`` bytes); the exact sum is
    divided once. A serial run calls the same function, so 1 rank and N ranks give the same
    mean bit for bit, whatever the partition.

    Parameters
    ----------
    position : ndarray of shape (n_local, n_genes)
        This rank's rows (all rows in a serial run), values in [0, 1].
    n_rows : int, optional
        Rows over all ranks (default: ``n_local``, the serial case).
    comm : SerialComm or MPIComm, optional
    """
    position = np.asarray(position, dtype=float)
    n_rows = position.shape[0] if n_rows is None else int(n_rows)
    scale = float(2 ** fixed_point_bits(n_rows))
    local = (position * scale).astype(np.int64).sum(axis=0)
    total = as_comm(comm).allreduce_sum(local)
    return total.astype(float) / scale / n_rows


def flipped(mask, genes):
    """A copy of the bool ``mask`` with the genes ``genes`` (distinct indices) flipped."""
    mask = np.array(mask, dtype=bool)
    mask[genes] = ~mask[genes]
    return mask


class RoundLedger:
    """What one rank evaluated in the current round, before :meth:`SearchAlgorithm.settle`.

    Keeps the 16-byte keys of the subsets (for distinct-subset counting), the number of
    computed evaluations, and the first strictly best subset in this rank's scan order,
    with the phase (0: swarm evaluation, 1: local search) that found it. Memory is 16 bytes
    per subset plus one mask, however many local-search tries the round makes.
    """

    def __init__(self):
        self._key_blocks = []
        self.computed = 0
        self.best = None  # (fitness, size, phase, mask)

    @property
    def keys(self):
        """The keys of the subsets in the order they were added, ndarray of uint8 of shape
        (n_subsets, 16)."""
        if not self._key_blocks:
            return np.zeros((0, 16), dtype=np.uint8)
        return np.concatenate(self._key_blocks)

    def add_many(self, masks, values, computed, phase):
        """Account for evaluated subsets of this rank (rows of ``masks``) in row order: their
        fitness ``values``, whether each was ``computed`` (an evaluation), the ``phase``."""
        masks = np.asarray(masks, dtype=bool)
        self._tally(mask_keys(masks), values, np.count_nonzero(masks, axis=1), computed, phase,
                    masks.__getitem__)

    def add_flips(self, mask, flips, values, sizes, computed, phase):
        """Account for the subsets ``mask`` with each row of ``flips`` flipped (``sizes``
        genes each), as ``add_many`` of those subsets, which are not built."""
        self._tally(flipped_keys(mask, flips), values, sizes, computed, phase,
                    lambda row: flipped(mask, flips[row]))

    def _tally(self, keys, values, sizes, computed, phase, row_mask):
        """Keys and evaluations of every row; the first best row of known (not NaN) fitness."""
        if len(keys) == 0:
            return
        self._key_blocks.append(keys)
        self.computed += int(np.asarray(computed).sum())
        values = np.asarray(values, dtype=float)
        known = np.flatnonzero(~np.isnan(values))
        if known.size == 0:
            return
        first = int(known[np.lexsort((np.asarray(sizes)[known], -values[known]))[0]])
        value, size = float(values[first]), int(sizes[first])
        if self.best is None or better(value, size, self.best[0], self.best[1]):
            self.best = (value, size, int(phase), np.array(row_mask(first), dtype=bool))


@dataclass
class SearchResult:
    """Outcome of one search.

    Attributes
    ----------
    algorithm : str
    params : dict
        Every parameter of the run, defaults included.
    mask : ndarray of shape (n_genes,), bool
        The selected subset, exactly as it was evaluated.
    fitness : float
        Its fitness (maximised; ``-error`` for the error objective).
    history : list of dict
        One row per round with the keys of :data:`~hpcswarm.records.HISTORY_FIELDS`.
    extra : dict
        Method-specific records (mechanism events, rankings).
    front : list of dict
        The best subset of each size among every subset the search evaluated, dominated
        ones dropped where the objective allows (:mod:`hpcswarm.swarm.front`), in
        increasing size: ``size``, ``fitness`` (as scored during the search), ``genes``.
    refined : Refined or None
        The subset refined after the search (:mod:`hpcswarm.refine`), when asked for.
    """

    algorithm: str
    params: dict
    mask: np.ndarray
    fitness: float
    history: list
    extra: dict = field(default_factory=dict)
    front: list = field(default_factory=list)
    refined: object = None

    @property
    def genes(self):
        """Indices of the selected genes, ndarray of int."""
        return np.flatnonzero(self.mask)


class SearchAlgorithm(abc.ABC):
    """Base of every method: the loop, termination, history and best-subset bookkeeping.

    Parameters
    ----------
    fitness : SubsetFitness
        The objective (``hpcswarm.fitness.SubsetFitness`` or anything with its API).
    params : dict
        Checked parameters (see :func:`hpcswarm.swarm.params.resolve_params`).
    seed : int or numpy.random.SeedSequence
        The run seed; particle and swarm streams are spawned from it.
    comm : SerialComm or MPIComm, optional
        The ranks that run this one swarm together (``None``: serial). Every rank of
        ``comm`` builds the algorithm with the same arguments and calls :meth:`run`.
    progress : callable, optional
        Called once per round on every rank with the history row just recorded (a dict of
        :data:`~hpcswarm.records.HISTORY_FIELDS`): the task farm's hook that lets MPI
        progress one-sided operations and lets world rank 0 report progress, see
        :func:`hpcswarm.taskfarm.farm`.
    checkpoint : callable, optional
        ``checkpoint(search)`` on every rank after ``progress``, once per round: the job's
        hook that takes snapshots (:func:`hpcswarm.swarm.snapshot.take_snapshot`, collective)
        and may stop the search by raising.
    max_genes : int, optional
        A cap on the genes of every subset the swarm evaluates, applied as a repair of the
        positions over it (methods with ``supports_max_genes``; see their ``capped_position``).

    Notes
    -----
    Subclasses set ``name``, ``PARAMS`` and ``STATE`` and implement ``initialise`` and
    ``step``.
    Subsets the search evaluates are recorded with :meth:`observe_many` (a rank's own subsets,
    settled collectively by :meth:`settle` once per round) or :meth:`observe_shared` (a
    subset every rank evaluated identically). With ``archive_size > 0`` the search keeps a
    replicated archive (:class:`~hpcswarm.fitness.Archive` of the swarm's subsets, updated
    in particle-index order on every rank); the scorer has none
    (:func:`hpcswarm.fitness.scorer.make_scorer`).
    """

    name = None
    PARAMS = ()
    supports_max_genes = False
    STATE = ("iteration", "history", "events", "best_mask", "best_fitness", "best_found_at",
             "evaluations", "archive_hits", "archive", "_seen", "front")
    """Attributes a later round reads, kept by a snapshot (:meth:`method_state`); each
    subclass lists its own in its ``STATE`` (the swarm's arrays are kept by
    :mod:`hpcswarm.swarm.snapshot` itself). The front of subsets met is merged over the
    ranks before it is kept (:func:`hpcswarm.swarm.snapshot.take_snapshot`)."""

    def __init__(self, fitness, params, seed=0, comm=None, progress=None, checkpoint=None,
                 max_genes=None):
        self.fitness = fitness
        self.params = dict(params)
        self.seed_sequence = run_seed_sequence(seed)
        self.comm = as_comm(comm)
        self.progress = progress
        self.checkpoint = checkpoint
        self.max_genes = None if max_genes is None else int(max_genes)
        self.n_genes = int(fitness.n_genes)
        self.iteration = -1
        self.history = []
        self.events = []
        self.best_mask = np.zeros(self.n_genes, dtype=bool)
        self.best_fitness = WORST_FITNESS
        self.best_found_at = 0
        self.evaluations = 0
        self.archive_hits = 0
        self.archive = Archive(int(self.params.get("archive_size", 0) or 0))
        self.front = FrontTracker(self.n_genes,
                                  self.params.get("objective") in MONOTONE_OBJECTIVES)
        self._seen = set()
        self._new_subsets = 0
        self._ledger = RoundLedger()
        self._round_bytes = []
        self._bytes_mark = self.comm.bytes_sent
        self._started = None

    def method_state(self):
        """What a snapshot keeps of this search at a round's end: the attributes of every
        ``STATE`` of the class and its bases (a dict; the same on every rank of ``comm``)."""
        names = dict.fromkeys(name for cls in reversed(type(self).__mro__)
                              for name in cls.__dict__.get("STATE", ()))
        return {name: getattr(self, name) for name in names}

    def restore_method_state(self, state):
        """Take back what :meth:`method_state` returned (on a search built with the same
        arguments)."""
        for name, value in state.items():
            setattr(self, name, value)

    @classmethod
    def validate(cls, params):
        """Checks that involve several parameters (ParameterError); single keys are checked by ``PARAMS``."""

    # ------------------------------------------------------------------ the loop
    def run(self, resume=None):
        """Initialise, step until done, and return the :class:`SearchResult`.

        ``resume``: a snapshot of this search (:func:`hpcswarm.swarm.snapshot.take_snapshot`)
        to continue from instead of initialising; the result is the uninterrupted one.
        """
        if resume is None:
            self.advance()
        else:
            restore_snapshot(self, resume)
        while not self.done():
            self.advance()
        return self.result()

    def advance(self):
        """Play the next round (round 0 is :meth:`initialise`, later ones :meth:`step`) and record it."""
        if self.iteration < 0:
            self._started = time.perf_counter()
            self.iteration = 0
            self.initialise()
        else:
            self.iteration += 1
            self.step()
        self.record()
        if self.progress is not None:
            self.progress(self.history[-1])
        if self.checkpoint is not None:
            self.checkpoint(self)

    @abc.abstractmethod
    def initialise(self):
        """Round 0: build and evaluate the initial swarm."""

    @abc.abstractmethod
    def step(self):
        """One later round: move, evaluate, update the bests."""

    def done(self):
        """True after ``n_iterations`` rounds, or once the best fitness reaches ``target``."""
        target = self.params.get("target")
        if target is not None and self.best_fitness >= target:
            return True
        return self.iteration + 1 >= self.params["n_iterations"]

    # ------------------------------------------------------------------ streams
    def make_streams(self, n_particles):
        """Per-particle generators and the swarm-wide generator of this run.

        Generators are made for every particle (cheap), but a rank draws only from those of
        the particles it owns.
        """
        return particle_streams(self.seed_sequence, range(n_particles)), swarm_stream(
            self.seed_sequence
        )

    def partition(self, n_particles):
        """This rank's particles: ndarray of the contiguous block it owns (maybe empty).

        Sets ``blocks`` (:class:`~hpcswarm.swarm.exchange.Blocks`, who owns which particle)
        and ``bounds`` (this rank's range).
        """
        self.n_particles = int(n_particles)
        self.blocks = Blocks(self.n_particles, self.comm.size, self.comm.rank)
        self.bounds = self.blocks.bounds
        return self.blocks.local()

    def owned(self, indices):
        """The entries of the sorted global ``indices`` that this rank owns."""
        return self.blocks.owned(indices)

    def counts_per_rank(self, indices):
        """How many of the sorted global ``indices`` each rank owns, int64 array of length size."""
        return self.blocks.counts(indices)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, indices, needed=None):
        """Fitness of the current subsets of particles ``indices`` (the one evaluation seam).

        ``indices`` is sorted and the same on every rank. Without archive this is local:
        each rank calls ``fitness.many`` once on the masks of the particles it owns (the
        blocks hold equal numbers of particles); with ``needed``, only on the non-empty
        ones for which ``needed(particles, sizes)`` (ndarray of bool) is true: the others
        get the fitness NaN, are observed so (see :meth:`observe_flips`) and count as
        evaluations all the same. ``needed`` must be true for every subset whose fitness
        could matter to the method, the best subset ever seen or the front. With the
        archive on (whose entries and hits depend on every subset's value) ``needed`` is
        not used:

        1. the 16-byte key and the size of every subset are allgathered (24 bytes each) and
           every rank walks them in particle-index order: a key in the archive, or met
           earlier in the same batch, is a hit; the empty subset costs nothing; the other
           keys must be computed;
        2. the subsets to compute are dealt to the ranks in contiguous runs of about equal
           cost (genes + 1 per subset: a Gram product grows with the subset), whoever owns
           the particles, so that CSO's random losers do not pile up on one rank; a subset
           computed away from its owner travels as packed bits (``n_genes / 8`` bytes);
        3. the computed values are allgathered (8 bytes each), and hits, repeats and the
           archive are filled and updated identically on every rank.

        Fitness and sizes of other ranks' particles are shared afterwards by :meth:`share`.
        """
        s, comm = self.state, self.comm
        indices = np.asarray(indices, dtype=np.int64)
        mine = self.owned(indices)
        masks = s.mask[mine]
        s.size[mine] = np.count_nonzero(masks, axis=1)
        if self.archive.maxsize == 0:
            todo = np.ones(mine.size, dtype=bool)
            if needed is not None:
                todo = (s.size[mine] == 0) | needed(mine, s.size[mine])
            s.fitness[mine] = np.nan
            if todo.any():
                s.fitness[mine[todo]] = np.asarray(self.fitness.many(masks[todo]), dtype=float)
            self.observe_many(masks, s.fitness[mine], computed=s.size[mine] > 0)
            return
        counts = self.counts_per_rank(indices)
        keys, sizes = self._share_keys(masks, s.size[mine], counts)
        status, values, first = self._look_up(keys, sizes)
        todo = np.flatnonzero(status == 0)
        values[todo] = self._compute_dealt(masks, todo, sizes[todo] + 1, counts)
        for pos, key in enumerate(keys):
            if status[pos] == 0:
                self.archive.put(key, float(values[pos]))
            elif status[pos] == 2:
                values[pos] = values[first[key]]
        self.archive_hits += int(np.count_nonzero((status == 1) | (status == 2)))
        s.fitness[indices] = values
        offset = int(counts[: comm.rank].sum())
        self.observe_many(masks, s.fitness[mine],
                          computed=status[offset:offset + mine.size] == 0)

    def _share_keys(self, masks, sizes, counts):
        """Every rank's subset keys and sizes, in particle order (24 bytes a subset)."""
        record = np.zeros((masks.shape[0], 24), dtype=np.uint8)
        for row, mask in enumerate(masks):
            record[row, :16] = np.frombuffer(mask_key(mask), dtype=np.uint8)
        record[:, 16:] = sizes.astype(np.int64).reshape(-1, 1).view(np.uint8)
        table = self.comm.allgatherv(record, counts=counts)
        keys = [row.tobytes() for row in table[:, :16]]
        return keys, np.ascontiguousarray(table[:, 16:]).view(np.int64).ravel()

    def _look_up(self, keys, sizes):
        """Status of each subset (0 to compute, 1 archived, 2 repeated, 3 empty), the values
        known, and the position of each key's first occurrence to compute."""
        status = np.zeros(len(keys), dtype=np.int8)
        values = np.full(len(keys), np.nan)
        first = {}
        for pos, key in enumerate(keys):
            if sizes[pos] == 0:
                status[pos], values[pos] = 3, WORST_FITNESS
            elif key in first:
                status[pos] = 2
            else:
                value = self.archive.get(key)
                if value is None:
                    first[key] = pos
                else:
                    status[pos], values[pos] = 1, value
        return status, values, first

    def _compute_dealt(self, masks, todo, costs, counts):
        """Fitness of the subsets at positions ``todo``, dealt to the ranks by cost
        (:func:`~hpcswarm.swarm.exchange.balanced_blocks`), each shipped from its owner to
        its worker as packed bits; the values allgathered (collective)."""
        comm = self.comm
        worker = balanced_blocks(costs, comm.size)
        owner = np.repeat(np.arange(comm.size), counts)[todo]
        offset = int(counts[: comm.rank].sum())
        work = todo[worker == comm.rank]
        work_masks = np.zeros((work.size, self.n_genes), dtype=bool)
        here = owner[worker == comm.rank] == comm.rank
        work_masks[here] = masks[work[here] - offset]
        if comm.size > 1:
            outgoing = (owner == comm.rank) & (worker != comm.rank)
            packed = np.packbits(masks[todo[outgoing] - offset], axis=1).reshape(
                -1, (self.n_genes + 7) // 8)
            received = ship(comm, packed, owner, worker)
            work_masks[~here] = np.unpackbits(received, axis=1, count=self.n_genes).astype(bool)
        computed = (np.asarray(self.fitness.many(work_masks), dtype=float) if work.size
                    else np.zeros(0))
        return comm.allgatherv(computed, counts=np.bincount(worker, minlength=comm.size))

    def share(self, indices, names):
        """Make the state arrays ``names`` (per-particle scalars) identical on every rank.

        Each rank contributes its own entries of the sorted global ``indices``: one
        allgather of ``8 len(names)`` bytes per particle.
        """
        s = self.state
        indices = np.asarray(indices, dtype=np.int64)
        mine = self.owned(indices)
        local = np.stack([getattr(s, name)[mine].astype(float) for name in names], axis=1)
        table = self.comm.allgatherv(local, counts=self.counts_per_rank(indices))
        for column, name in enumerate(names):
            array = getattr(s, name)
            array[indices] = table[:, column].astype(array.dtype)

    # ------------------------------------------------------------------ bookkeeping
    def observe_many(self, masks, values, computed, phase=0):
        """Account for subsets this rank evaluated (rows of ``masks``, in order; settled by
        :meth:`settle`).

        ``values``: their fitness; ``computed``: whether each counts as an evaluation (false
        for archive hits and the empty subset); ``phase``: 0 for swarm evaluations, 1 for
        local-search tries (which come after every swarm evaluation of the round in the
        tie order).
        """
        self._ledger.add_many(masks, values, computed, phase)
        self.front.add_many(masks, values)

    def observe_flips(self, mask, flips, values, sizes, phase=1):
        """:meth:`observe_many` of ``mask`` with each row of ``flips`` flipped, without
        building those subsets (but the few the front keeps).

        Parameters
        ----------
        mask : ndarray of bool of shape (n_genes,)
        flips : ndarray of int of shape (n_rows, n_flipped)
            Distinct gene indices in each row.
        values : ndarray of shape (n_rows,)
            The fitness of each flipped subset, or NaN for a local-search try decided
            without it (:func:`hpcswarm.swarm.pso.local_search`): one that cannot beat its
            search's current subset, which was observed earlier in the round, nor enter
            the front. Such a try is never the round's best.
        sizes : ndarray of int of shape (n_rows,)
            Genes of each flipped subset; the non-empty ones count as evaluations.
        phase : int
        """
        sizes, values = np.asarray(sizes), np.asarray(values, dtype=float)
        self._ledger.add_flips(mask, flips, values, sizes, sizes > 0, phase)
        known = np.flatnonzero(~np.isnan(values))  # NaN rows are never front candidates
        for row in known[self.front.candidates(sizes[known], values[known])]:
            self.front.add(flipped(mask, flips[row]), values[row])

    def observe_shared(self, mask, value, computed=True):
        """Account for a subset every rank evaluated identically (no communication)."""
        self.front.add(mask, value)
        key = mask_key(mask)
        if key not in self._seen:
            self._seen.add(key)
            self._new_subsets += 1
        self.evaluations += int(bool(computed))
        size = int(np.count_nonzero(mask))
        if better(value, size, self.best_fitness, int(np.count_nonzero(self.best_mask))):
            self.best_mask = np.array(mask, dtype=bool)
            self.best_fitness = float(value)
            self.best_found_at = self.evaluations

    def settle(self):
        """Close the round's ledgers on every rank (collective,
        :func:`~hpcswarm.swarm.exchange.settle_round`).

        Afterwards the distinct-subset count, ``evaluations`` and the best subset
        (``best_found_at``: the evaluation count at the end of the round that first scored
        it) are identical on every rank.
        """
        ledger, self._ledger = self._ledger, RoundLedger()
        settled = settle_round(self.comm, ledger, self.n_genes, self.beats_best)
        met = set(np.ascontiguousarray(settled.keys).view("V16").ravel().tolist())
        met -= self._seen
        self._seen |= met
        self._new_subsets += len(met)
        self.evaluations += settled.computed
        if settled.best is not None:
            self.best_fitness, _, self.best_mask = settled.best
            self.best_found_at = self.evaluations

    def beats_best(self, fitness, size):
        """Whether a subset of ``fitness`` and ``size`` beats the best subset seen so far."""
        return better(fitness, size, self.best_fitness, int(np.count_nonzero(self.best_mask)))

    def share_ledger(self, outer):
        """Count distinct subsets, evaluations and archive hits on from ``outer`` (an
        enclosing run such as FSR), sharing its set of keys seen and its archive."""
        self._seen = outer._seen
        self.archive = outer.archive
        self.front = outer.front
        self.evaluations = outer.evaluations
        self.archive_hits = outer.archive_hits

    def mean_size(self):
        """Mean number of genes of the current particles (for the history)."""
        return float(self.state.sizes().mean())

    def record(self):
        """Append this round's row to the history, and note the bytes this rank sent."""
        self.history.append(
            {
                "iteration": self.iteration,
                "best_fitness": float(self.best_fitness),
                "best_size": int(np.count_nonzero(self.best_mask)),
                "mean_size": self.mean_size(),
                "new_subsets": self._new_subsets,
                "evaluations": int(self.evaluations),
                "archive_hits": int(self.archive_hits),
                "seconds": time.perf_counter() - self._started,
            }
        )
        self._new_subsets = 0
        self._round_bytes.append(self.comm.bytes_sent - self._bytes_mark)
        self._bytes_mark = self.comm.bytes_sent

    def communication(self):
        """Bytes communicated per round, summed over the ranks (collective).

        Returns a dict: ``ranks``, ``bytes_per_round`` (list, one entry per history row)
        and ``bytes_per_round_max_rank`` (the largest single rank's share of each round).
        """
        local = np.array(self._round_bytes, dtype=np.int64)
        total = self.comm.allreduce_sum(local)
        most = self.comm.allreduce_max(local)
        return {"ranks": int(self.comm.size), "bytes_per_round": total.tolist(),
                "bytes_per_round_max_rank": most.tolist()}

    def event(self, kind, **details):
        """Record a mechanism firing (gbest reset, complement, phase change) in this round."""
        self.events.append({"iteration": self.iteration, "event": kind, **details})

    def extra(self):
        """Method-specific records, and ``best_found_at``: the evaluation count when the
        returned subset was first scored (at the end of its batch for swarm evaluations)."""
        return {"events": list(self.events), "best_found_at": self.best_found_at}

    def result(self):
        """The :class:`SearchResult` of the run so far (collective: gathers the byte counts).

        ``extra["comm"]`` (see :meth:`communication`) is the only part that depends on the
        number of ranks (with ``seconds`` in the history).
        """
        extra = self.extra()
        extra["comm"] = self.communication()
        self.front.merge(self.comm)
        front = [{"size": size, "fitness": value, "genes": np.flatnonzero(mask)}
                 for size, value, mask in self.front.masks()]
        return SearchResult(
            algorithm=self.name,
            params=dict(self.params),
            mask=self.best_mask.copy(),
            fitness=float(self.best_fitness),
            history=list(self.history),
            extra=extra,
            front=front,
        )
