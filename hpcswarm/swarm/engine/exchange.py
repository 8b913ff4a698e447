"""The exchange between the ranks running one search: who owns what, dealing work, shipping
rows, settling a round.

A method and its evaluation service (:mod:`hpcswarm.swarm.engine.evaluation`) decide *what*
travels; this module is *how*:

* who owns which particle is a :class:`~hpcswarm.swarm.engine.deal.Deal` (contiguous blocks,
  or a deal by cost where the particles' costs differ);
* :func:`balanced_blocks`: work (subsets to evaluate, local searches) dealt to the ranks in
  contiguous runs of about equal cost, whoever owns the particles;
* :func:`ship`: rows sent from the ranks that hold them to the ranks that need them, in one
  all-to-all whose order both sides derive from the same item list (no count exchange);
* :func:`settle_round`: each rank's ledger of the round (its subsets' keys, its computed
  evaluations, its first best subset) made common: the same distinct keys, evaluation count
  and best subset on every rank.

Every function here is collective over ``comm`` where it communicates, and gives the same
result on every rank.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness import WORST_FITNESS


def balanced_blocks(costs, n_ranks):
    """Rank of each item when items are dealt in contiguous runs of about equal total cost.

    Item ``j`` goes to the rank whose share ``[r T / P, (r + 1) T / P)`` of the total cost
    ``T`` holds the middle of the item's own cost interval; integer arithmetic, so every
    rank computes the same deal. Returns a non-decreasing int64 array.
    """
    costs = np.asarray(costs, dtype=np.int64)
    if costs.size == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(costs)
    total = int(ends[-1])
    return np.minimum(((2 * ends - costs) * n_ranks) // (2 * total), n_ranks - 1)


def ship(comm, rows, source, dest):
    """Send each item's row from the rank that holds it to the rank that needs it (collective).

    Parameters
    ----------
    comm : Comm
    rows : ndarray of shape (n_out, ...)
        This rank's rows of the items it sends: those with ``source == rank`` and
        ``dest != rank``, in item order.
    source, dest : array-like of int of shape (n_items,)
        For every item, the rank holding its row and the rank needing it; the same on every
        rank. An item with ``source == dest`` does not travel.

    Returns
    -------
    ndarray of shape (n_in, ...)
        The rows of the items with ``dest == rank`` and ``source != rank``, in item order.

    Notes
    -----
    One ``alltoallv``: the sender orders its rows by destination, the receiver knows from
    ``source`` and ``dest`` how many rows come from each rank and which items they are.
    Only the rows that change rank are counted in ``comm.bytes_sent``.
    """
    rows = np.asarray(rows)
    source = np.asarray(source, dtype=np.int64)
    dest = np.asarray(dest, dtype=np.int64)
    outgoing = np.flatnonzero((source == comm.rank) & (dest != comm.rank))
    incoming = np.flatnonzero((dest == comm.rank) & (source != comm.rank))
    send_order = np.argsort(dest[outgoing], kind="stable")
    recv_order = np.argsort(source[incoming], kind="stable")
    received = comm.alltoallv(rows[send_order], np.bincount(dest[outgoing], minlength=comm.size),
                              np.bincount(source[incoming], minlength=comm.size))
    in_item_order = np.empty_like(received)
    in_item_order[recv_order] = received
    return in_item_order


@dataclass(frozen=True)
class SettledRound:
    """A round's ledgers made common (the same on every rank).

    Attributes
    ----------
    keys : ndarray of uint8 of shape (n_subsets, 16)
        The keys of every subset evaluated this round, all ranks, in rank order.
    computed : int
        Evaluations computed this round, all ranks.
    best : (float, int, ndarray of bool) or None
        The round's first best subset ``(fitness, size, mask)`` when it beats the best so
        far (as ``beats`` judged it), else None; ``size`` as the ledgers' order compares it.
    """

    keys: np.ndarray
    computed: int
    best: tuple


def settle_round(comm, ledger, n_genes, beats):
    """Make the ranks' ledgers of a round common (collective).

    One allgather of a 7-number record per rank, one allgatherv of the round's 16-byte keys
    and, when the round's best subset beats the best so far, one broadcast of its packed
    mask from the rank that found it.

    Parameters
    ----------
    comm : Comm
    ledger : RoundLedger
        This rank's: ``keys`` (ndarray of uint8 of shape (n_subsets, 16)), ``computed``
        (int) and ``best`` (``(fitness, size, phase, particle, mask)`` of its first strictly
        best subset, or None).
    n_genes : int
    beats : callable
        ``beats(fitness, size)``: whether a subset beats the best so far (the same on every
        rank).

    Returns
    -------
    SettledRound
        The round's best is the first in the order (fitness desc, size asc, phase,
        particle, rank): a swarm evaluation's particle index, whoever owns the particle;
        local-search tries (particle 0), dealt in contiguous runs, by rank.
    """
    best, local_keys = ledger.best, ledger.keys
    record = np.array([best[0] if best else WORST_FITNESS, best[1] if best else 0,
                       best[2] if best else 0, best[3] if best else 0, len(local_keys),
                       ledger.computed, best is not None], dtype=float)
    table = comm.allgather_array(record)
    keys = comm.allgatherv(local_keys, counts=table[:, 4].astype(np.int64))
    computed = int(table[:, 5].sum())
    ranks = np.flatnonzero(table[:, 6])
    if ranks.size == 0:
        return SettledRound(keys, computed, None)
    winner = int(ranks[np.lexsort((ranks, table[ranks, 3], table[ranks, 2], table[ranks, 1],
                                   -table[ranks, 0]))[0]])
    value, size = float(table[winner, 0]), int(table[winner, 1])
    if not beats(value, size):
        return SettledRound(keys, computed, None)
    packed = (np.packbits(best[4]) if comm.rank == winner
              else np.zeros((n_genes + 7) // 8, dtype=np.uint8))
    packed = comm.broadcast(packed, root=winner)
    return SettledRound(keys, computed,
                        (value, size, np.unpackbits(packed, count=n_genes).astype(bool)))
