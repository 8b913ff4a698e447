"""One batch of subsets scored through a replicated archive, the same on every rank.

Gu, Cheng & Jin 2018 (Sec. 3) keep an archive of the subsets already scored, so that a
subset met again costs a look-up. Here the archive is replicated: every rank walks every
subset of the batch in particle-index order, so hits, repeats and the archive's contents do
not depend on the number of ranks
(:meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.evaluate`
runs the three steps below).
"""

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.fitness.archive import mask_key
from hpcswarm.swarm.engine.exchange import balanced_blocks, ship

TO_COMPUTE, ARCHIVED, REPEATED, EMPTY = 0, 1, 2, 3
"""The status of a subset in a batch (:func:`look_up`)."""


def share_keys(comm, masks, sizes, deal, indices):
    """Every rank's subset keys and sizes, in particle order (24 bytes a subset, collective).

    Parameters
    ----------
    comm : SerialComm or MPIComm
    masks : ndarray of bool of shape (n_local, n_genes)
        This rank's subsets: those of its particles among ``indices``.
    sizes : ndarray of int of shape (n_local,)
    deal : Deal
        Who owns which particle (:class:`~hpcswarm.swarm.engine.deal.Deal`).
    indices : ndarray of int
        The particles of the batch, sorted.

    Returns
    -------
    keys : list of bytes
    sizes : ndarray of int64 of shape (n_subsets,)
    """
    record = np.zeros((masks.shape[0], 24), dtype=np.uint8)
    for row, mask in enumerate(masks):
        record[row, :16] = np.frombuffer(mask_key(mask), dtype=np.uint8)
    record[:, 16:] = sizes.astype(np.int64).reshape(-1, 1).view(np.uint8)
    table = deal.allgather(comm, record, indices)
    keys = [row.tobytes() for row in table[:, :16]]
    return keys, np.ascontiguousarray(table[:, 16:]).view(np.int64).ravel()


def look_up(archive, keys, sizes):
    """Status of each subset (:data:`TO_COMPUTE`, :data:`ARCHIVED`, :data:`REPEATED` or
    :data:`EMPTY`), the values known, and the position of each key's first occurrence to
    compute (a dict)."""
    status = np.zeros(len(keys), dtype=np.int8)
    values = np.full(len(keys), np.nan)
    first = {}
    for pos, key in enumerate(keys):
        if sizes[pos] == 0:
            status[pos], values[pos] = EMPTY, WORST_FITNESS
        elif key in first:
            status[pos] = REPEATED
        else:
            value = archive.get(key)
            if value is None:
                first[key] = pos
            else:
                status[pos], values[pos] = ARCHIVED, value
    return status, values, first


def compute_dealt(comm, fitness, masks, todo, costs, owner):
    """Fitness of the subsets at batch positions ``todo``, dealt to the ranks by cost.

    The subsets are dealt in contiguous runs of about equal cost
    (:func:`~hpcswarm.swarm.engine.exchange.balanced_blocks`), whoever owns the particles; a subset
    computed away from its owner is shipped as packed bits (``n_genes / 8`` bytes). The
    values are allgathered (collective), ndarray of shape (todo.size,).

    Parameters
    ----------
    comm : SerialComm or MPIComm
    fitness : SubsetFitness
    masks : ndarray of bool of shape (n_local, n_genes)
        This rank's subsets of the batch.
    todo : ndarray of int
        Batch positions to compute.
    costs : ndarray of int of shape (todo.size,)
    owner : ndarray of int of shape (n_subsets,)
        The rank holding each subset of the batch (its particle's owner).
    """
    n_genes = masks.shape[1]
    worker = balanced_blocks(costs, comm.size)
    row = np.cumsum(owner == comm.rank) - 1  # this rank's row of each of its subsets
    owner = owner[todo]
    work = todo[worker == comm.rank]
    work_masks = np.zeros((work.size, n_genes), dtype=bool)
    here = owner[worker == comm.rank] == comm.rank
    work_masks[here] = masks[row[work[here]]]
    if comm.size > 1:
        outgoing = (owner == comm.rank) & (worker != comm.rank)
        packed = np.packbits(masks[row[todo[outgoing]]], axis=1).reshape(
            -1, (n_genes + 7) // 8)
        received = ship(comm, packed, owner, worker)
        work_masks[~here] = np.unpackbits(received, axis=1, count=n_genes).astype(bool)
    computed = (np.asarray(fitness.many(work_masks), dtype=float) if work.size
                else np.zeros(0))
    return comm.allgatherv(computed, counts=np.bincount(worker, minlength=comm.size))
