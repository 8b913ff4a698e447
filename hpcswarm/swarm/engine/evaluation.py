"""The evaluation service of a search: it scores subsets and keeps the account of a run.

The search proposes subsets; this service scores them and owns everything that must come
out the same whatever the number of ranks (the module notes of :mod:`hpcswarm.swarm.engine.loop`
give the rules): the exchange of work and values between the ranks, the replicated archive
(:mod:`hpcswarm.swarm.engine.archived`), each rank's ledger of the round and its settlement
(:mod:`hpcswarm.swarm.engine.ledger`, :func:`~hpcswarm.swarm.engine.exchange.settle_round`), the
best
subset ever evaluated, the front of subsets met (:mod:`hpcswarm.swarm.engine.front`), the counts
of the history, and the bytes sent per round.

A method records what it evaluates in one of two ways: :meth:`EvaluationService.evaluate`
(and, for local-search tries, :meth:`EvaluationService.observe_flips`) for subsets each rank
scores for its own particles, closed once per round by :meth:`EvaluationService.settle`;
:meth:`EvaluationService.observe_shared` for a subset every rank scored alike.
"""

import numpy as np

from hpcswarm.comm import as_comm
from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.fitness.archive import KEY_BYTES, Archive, mask_key
from hpcswarm.fitness.moves import ParticleStates
from hpcswarm.swarm.engine.archived import (ARCHIVED, REPEATED, TO_COMPUTE, compute_dealt, look_up,
                                            share_keys)
from hpcswarm.swarm.engine.deal import Deal
from hpcswarm.swarm.engine.exchange import settle_round
from hpcswarm.swarm.engine.front import MONOTONE_OBJECTIVES, FrontTracker
from hpcswarm.swarm.engine.ledger import RoundLedger, flipped
from hpcswarm.swarm.engine.ordering import FEWER_GENES, Ordering
from hpcswarm.swarm.engine.snapshot import ArraySpec


def archive_size(params: dict) -> int:
    """Subsets the archive of a method with checked ``params`` holds at most (0: none)."""
    return int(params.get("archive_size", 0) or 0)


class EvaluationService:
    """Scores a search's subsets and keeps the run's account (best subset, counts, front).

    Parameters
    ----------
    fitness : SubsetFitness
        The objective (``hpcswarm.fitness.SubsetFitness`` or anything with its API).
    comm : SerialComm or MPIComm, optional
        The ranks that run the search together (``None``: serial).
    archive_size : int
        Subsets the replicated archive remembers (0: off; Gu et al. 2018, Sec. 3).
    monotone : bool
        Whether the objective lets the front drop dominated sizes
        (:data:`~hpcswarm.swarm.engine.front.MONOTONE_OBJECTIVES`).
    cache_states : int
        Distance states this rank keeps of its particles between rounds, so that a particle
        is scored from its previous subset (:class:`~hpcswarm.fitness.moves.ParticleStates`;
        0: every subset in full). The same on every sample shard of a particle group.
    ordering : Ordering
        The order of subsets of the best subset ever evaluated and of the search's pbests
        (:mod:`~hpcswarm.swarm.engine.ordering`; default: higher fitness, then fewer genes).

    Attributes
    ----------
    best_mask, best_fitness, best_found_at
        The best subset ever evaluated, its fitness, and the evaluation count at the end of
        the round that first scored it.
    evaluations, archive_hits, new_subsets : int
        Counts of the history (:data:`~hpcswarm.store.records.HISTORY_FIELDS`).
    front : FrontTracker
    ownership : Deal or None
        Who owns which particle (:meth:`deal`).
    states : ParticleStates
        This rank's particles' cached states (used without archive only: with it, subsets
        are computed away from their owners).
    """

    STATE = ("best_mask", "best_fitness", "best_found_at", "evaluations", "archive_hits",
             "archive", "_seen", "front")
    """Keys of :meth:`state`: what a later round reads of the account."""

    STATE_VALUES = {"best_mask": ArraySpec("b", ("genes",)),
                    "best_fitness": ArraySpec("f", (), WORST_FITNESS, 1.0),
                    "evaluations": ArraySpec("i", (), 0),
                    "best_found_at": ArraySpec("i", (), 0, "evaluations"),
                    "archive_hits": ArraySpec("i", (), 0)}
    """The arrays and numbers of :meth:`state`, checked before a snapshot is restored: the
    best fitness between the empty subset's and a perfect score, counts not negative, the
    best subset found within the evaluations made."""

    def __init__(self, fitness, comm=None, archive_size: int = 0, monotone: bool = False,
                 cache_states: int = 0, ordering: Ordering = FEWER_GENES):
        self.fitness = fitness
        self.ordering = ordering
        self.comm = as_comm(comm)
        self.n_genes = int(fitness.n_genes)
        self.archive = Archive(int(archive_size))
        self.front = FrontTracker(self.n_genes, monotone)
        self.best_mask = np.zeros(self.n_genes, dtype=bool)
        self.best_fitness = WORST_FITNESS
        self.best_found_at = 0
        self.evaluations = 0
        self.archive_hits = 0
        self.new_subsets = 0
        self.ownership = None
        self.states = ParticleStates(fitness, cache_states)
        self._seen = set()
        self._ledger = RoundLedger(ordering)
        self._round_bytes = []
        self._bytes_mark = self.comm.bytes_sent

    @classmethod
    def for_params(cls, fitness, params: dict, comm=None,
                   cache_states: int = 0) -> "EvaluationService":
        """The service a method's checked ``params`` ask for (``archive_size``, ``objective``,
        ``size_tiebreak`` where the method has it), keeping up to ``cache_states`` particle
        states."""
        return cls(fitness, comm, archive_size(params),
                   params.get("objective") in MONOTONE_OBJECTIVES, cache_states,
                   Ordering(bool(params.get("size_tiebreak", True))))

    def nested(self) -> "EvaluationService":
        """A service for a search run inside this one (FSR's BPSO of one size): it shares
        this one's subsets seen, archive and front and counts on from its counts, with a
        best subset of its own and no particle states (its particles are not this one's)."""
        inner = EvaluationService(self.fitness, self.comm, ordering=self.ordering)
        inner._seen, inner.archive, inner.front = self._seen, self.archive, self.front
        inner.evaluations, inner.archive_hits = self.evaluations, self.archive_hits
        return inner

    # ------------------------------------------------------------------ layout
    def deal(self, n_particles: int, selected=None) -> Deal:
        """Deal ``n_particles`` to the ranks and keep the layout; returns it.

        Without ``selected``, in contiguous blocks of equal count (rank order is particle
        order). With ``selected`` (the genes each particle is expected to select, ints), by
        expected cost (:meth:`~hpcswarm.swarm.engine.deal.Deal.by_cost`), counting as cached
        as many states a rank as the rank keeping the fewest keeps (:attr:`states`; one
        allreduce, so that every rank deals alike). When a particle changes rank its state
        stays behind: every state is dropped, and each particle's next subset is scored by
        a full product.
        """
        comm = self.comm
        if selected is None:
            deal = Deal.blocks(int(n_particles), comm.size, comm.rank)
        else:
            slots = int(comm.allreduce_min(np.array([self.states.max_states]))[0])
            deal = Deal.by_cost(selected, comm.size, comm.rank, slots)
        if not deal.same_owners(self.ownership):
            self.states.clear()
        self.ownership = deal
        return deal

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, state, indices, needed=None) -> None:
        """Fitness of the current subsets of particles ``indices`` of the swarm ``state``.

        ``indices`` is sorted and the same on every rank; each rank reads the masks of the
        particles it owns and writes their sizes and fitness into ``state``. Without archive
        this is local: each rank scores its own masks (the deal gives each rank about the
        same cost), each from its particle's previous subset where :attr:`states` holds it
        (the same values as full products; the costliest particles of the rank first, those
        the deal counted cached); with ``needed``, only on the non-empty ones for
        which ``needed(particles, sizes)`` (ndarray of bool) is true: the others get the
        fitness NaN, are observed so (see :meth:`observe_flips`) and count as evaluations
        all the same. ``needed`` must be true for every subset whose fitness could matter to
        the method, the best subset ever seen or the front. With the archive on (whose
        entries and hits depend on every subset's value) ``needed`` is not used, and every
        subset is computed in full (it is computed wherever the costs deal it, away from the
        rank that holds its particle's previous subset):

        1. the 16-byte key and the size of every subset are allgathered (24 bytes each) and
           every rank walks them in particle-index order: a key in the archive, or met
           earlier in the same batch, is a hit; the empty subset costs nothing; the other
           keys must be computed;
        2. the subsets to compute are dealt to the ranks in contiguous runs of about equal
           cost (genes + 1 per subset: a Gram product grows with the subset), whoever owns
           the particles (the subsets of a batch are in particle order), so that CSO's
           random losers do not pile up on one rank; a subset computed away from its owner
           travels as packed bits (``n_genes / 8`` bytes);
        3. the computed values are allgathered (8 bytes each), and hits, repeats and the
           archive are filled and updated identically on every rank.

        Fitness and sizes of other ranks' particles are shared afterwards by :meth:`share`.
        """
        indices = np.asarray(indices, dtype=np.int64)
        mine = self.ownership.owned(indices)
        masks = state.mask[mine]
        state.size[mine] = np.count_nonzero(masks, axis=1)
        if self.archive.maxsize == 0:
            self._evaluate_local(state, mine, masks, needed)
        else:
            self._evaluate_archived(state, indices, masks)

    def _evaluate_local(self, state, mine, masks, needed):
        """Each rank scores its own subsets (those ``needed``), no archive."""
        todo = np.ones(mine.size, dtype=bool)
        if needed is not None:
            todo = (state.size[mine] == 0) | needed(mine, state.size[mine])
        state.fitness[mine] = np.nan
        if todo.any():
            scored = mine[todo][self.ownership.priority(mine[todo])]
            state.fitness[scored] = self.states.values(scored, state.mask[scored])
        self.observe_many(masks, state.fitness[mine], computed=state.size[mine] > 0,
                          particles=mine)

    def _evaluate_archived(self, state, indices, masks):
        """Steps 1-3 of :meth:`evaluate` with the archive on (collective)."""
        comm, deal = self.comm, self.ownership
        mine = deal.owned(indices)
        keys, sizes = share_keys(comm, masks, state.size[mine], deal, indices)
        status, values, first = look_up(self.archive, keys, sizes)
        todo = np.flatnonzero(status == TO_COMPUTE)
        owners = deal.owner[indices]
        values[todo] = compute_dealt(comm, self.fitness, masks, todo, sizes[todo] + 1, owners)
        for pos, key in enumerate(keys):
            if status[pos] == TO_COMPUTE:
                self.archive.put(key, float(values[pos]))
            elif status[pos] == REPEATED:
                values[pos] = values[first[key]]
        hits = (status == ARCHIVED) | (status == REPEATED)
        self.archive_hits += int(np.count_nonzero(hits))
        state.fitness[indices] = values
        self.observe_many(masks, state.fitness[mine],
                          computed=status[owners == comm.rank] == TO_COMPUTE, particles=mine)

    def share(self, state, indices, names) -> None:
        """Make the arrays ``names`` of ``state`` (per-particle scalars) identical on every rank.

        Each rank contributes its own entries of the sorted global ``indices``: one
        allgather of ``8 len(names)`` bytes per particle
        (:meth:`~hpcswarm.swarm.engine.deal.Deal.allgather`).
        """
        indices = np.asarray(indices, dtype=np.int64)
        mine = self.ownership.owned(indices)
        local = np.stack([getattr(state, name)[mine].astype(float) for name in names], axis=1)
        table = self.ownership.allgather(self.comm, local, indices)
        for column, name in enumerate(names):
            array = getattr(state, name)
            array[indices] = table[:, column].astype(array.dtype)

    # ------------------------------------------------------------------ the account
    def observe_many(self, masks, values, computed, particles) -> None:
        """Account for the swarm's subsets this rank evaluated (rows of ``masks``, in order;
        settled by :meth:`settle`).

        ``values``: their fitness; ``computed``: whether each counts as an evaluation (false
        for archive hits and the empty subset); ``particles``: whose subsets they are
        (increasing; the tie order of the round's best subset is particle order, before
        every local-search try of the round).
        """
        self._ledger.add_many(masks, values, computed, 0, particles)
        self.front.add_many(masks, values)

    def observe_flips(self, mask, flips, values, sizes, phase: int = 1) -> None:
        """:meth:`observe_many` of ``mask`` with each row of ``flips`` flipped, without
        building those subsets (but the few the front keeps).

        Parameters
        ----------
        mask : ndarray of bool of shape (n_genes,)
        flips : ndarray of int of shape (n_rows, n_flipped)
            Distinct gene indices in each row.
        values : ndarray of shape (n_rows,)
            The fitness of each flipped subset, or NaN for a local-search try decided
            without it (:func:`hpcswarm.swarm.operators.local_search.local_search`): one that cannot
            beat its search's current subset, which was observed earlier in the round, nor
            enter the front. Such a try is never the round's best.
        sizes : ndarray of int of shape (n_rows,)
            Genes of each flipped subset; the non-empty ones count as evaluations.
        phase : int
        """
        sizes, values = np.asarray(sizes), np.asarray(values, dtype=float)
        self._ledger.add_flips(mask, flips, values, sizes, sizes > 0, phase)
        known = np.flatnonzero(~np.isnan(values))  # NaN rows are never front candidates
        for row in known[self.front.candidates(sizes[known], values[known])]:
            self.front.add(flipped(mask, flips[row]), values[row])

    def observe_shared(self, mask, value: float, computed: bool = True) -> None:
        """Account for a subset every rank evaluated identically (no communication)."""
        self.front.add(mask, value)
        key = mask_key(mask)
        if key not in self._seen:
            self._seen.add(key)
            self.new_subsets += 1
        self.evaluations += int(bool(computed))
        if self.beats_best(value, int(np.count_nonzero(mask))):
            self.best_mask = np.array(mask, dtype=bool)
            self.best_fitness = float(value)
            self.best_found_at = self.evaluations

    def count(self, evaluations: int = 0, new_subsets: int = 0) -> None:
        """Count evaluations and distinct subsets a method made without observing them one
        by one (a single-gene ranking, a greedy step's candidates)."""
        self.evaluations += int(evaluations)
        self.new_subsets += int(new_subsets)

    def settle(self) -> None:
        """Close the round's ledgers on every rank (collective,
        :func:`~hpcswarm.swarm.engine.exchange.settle_round`).

        Afterwards the distinct-subset count, ``evaluations`` and the best subset
        (``best_found_at``: the evaluation count at the end of the round that first scored
        it) are identical on every rank.
        """
        ledger, self._ledger = self._ledger, RoundLedger(self.ordering)
        settled = settle_round(self.comm, ledger, self.n_genes, self.beats_best)
        met = set(np.ascontiguousarray(settled.keys).view("V16").ravel().tolist())
        met -= self._seen
        self._seen |= met
        self.new_subsets += len(met)
        self.evaluations += settled.computed
        if settled.best is not None:
            self.best_fitness, _, self.best_mask = settled.best
            self.best_found_at = self.evaluations

    @property
    def best_size(self) -> int:
        """Genes of the best subset ever evaluated."""
        return int(np.count_nonzero(self.best_mask))

    def beats_best(self, fitness: float, size: int) -> bool:
        """Whether a subset of ``fitness`` and ``size`` beats the best subset seen so far."""
        return self.ordering.better(fitness, size, self.best_fitness, self.best_size)

    # ------------------------------------------------------------------ rounds and bytes
    def close_round(self) -> int:
        """End the round's counts: returns the distinct subsets met this round (and starts
        the next count at zero) and notes the bytes this rank sent."""
        met, self.new_subsets = self.new_subsets, 0
        self._round_bytes.append(self.comm.bytes_sent - self._bytes_mark)
        self._bytes_mark = self.comm.bytes_sent
        return met

    def communication(self) -> dict:
        """Bytes communicated per round, summed over the ranks (collective).

        Returns a dict: ``ranks``, ``bytes_per_round`` (list, one entry per history row)
        and ``bytes_per_round_max_rank`` (the largest single rank's share of each round).
        """
        local = np.array(self._round_bytes, dtype=np.int64)
        total = self.comm.allreduce_sum(local)
        most = self.comm.allreduce_max(local)
        return {"ranks": int(self.comm.size), "bytes_per_round": total.tolist(),
                "bytes_per_round_max_rank": most.tolist()}

    # ------------------------------------------------------------------ snapshot
    def state(self) -> dict:
        """What a snapshot keeps of the account at a round's end (the keys of :data:`STATE`;
        the same on every rank once the front is merged), as plain values: the archive and
        the front by their own ``state()``."""
        return {**{name: getattr(self, name) for name in self.STATE},
                "archive": self.archive.state(), "front": self.front.state()}

    @staticmethod
    def rebuilt(state: dict, maxsize: int, n_genes: int, monotone: bool):
        """The archive and front of the account :meth:`state` returned, for a service whose
        archive holds ``maxsize`` subsets and whose front is of ``n_genes`` genes and of a
        ``monotone`` objective or not (ValueError if they are not those, or do not read back)."""
        archive = Archive.from_state(state["archive"])
        front = FrontTracker.from_state(state["front"])
        if archive.maxsize != maxsize:
            raise ValueError(f"an archive of {archive.maxsize} subsets, not {maxsize}")
        if (front.n_genes, front.monotone) != (n_genes, monotone):
            raise ValueError(f"a front of {front.n_genes} genes, monotone {front.monotone}, "
                             f"not {n_genes}, {monotone}")
        return archive, front

    @classmethod
    def state_problem(cls, state: dict, params: dict, n_genes: int):
        """What makes the account of a method state (:meth:`state`) one the service of a
        method with checked ``params`` on ``n_genes`` genes cannot take back (a phrase), or
        None: an archive or front that does not read back or is of another bound, number of
        genes or kind of objective (:meth:`rebuilt`), or subsets seen that are no keys."""
        try:
            cls.rebuilt(state, archive_size(params), n_genes,
                        params.get("objective") in MONOTONE_OBJECTIVES)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
            return f"does not read back ({exc!r})"
        seen = state["_seen"]
        if not (isinstance(seen, set) and all(isinstance(key, bytes) and len(key) == KEY_BYTES
                                              for key in seen)):
            return f"holds subsets seen that are not a set of {KEY_BYTES}-byte keys"
        return None

    def restore(self, state: dict) -> None:
        """Take back what :meth:`state` returned (ValueError if its archive or front is not
        one this service keeps: another bound, number of genes or kind of objective)."""
        archive, front = self.rebuilt(state, self.archive.maxsize, self.front.n_genes,
                                      self.front.monotone)
        for name in self.STATE:
            setattr(self, name, state[name])
        self.archive, self.front = archive, front
