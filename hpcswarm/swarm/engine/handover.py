"""Particles handed from one rank to another when the swarm is dealt anew.

A particle's rows (:data:`~hpcswarm.swarm.engine.snapshot.SWARM_ROWS`) and its generator live
only on the rank that owns it (:class:`~hpcswarm.swarm.engine.state.SwarmState`). When a new
deal (:class:`~hpcswarm.swarm.engine.deal.Deal`) gives it to another rank, :func:`hand_over`
sends them there, the generator as its packed state
(:func:`~hpcswarm.swarm.engine.state.pack_rng`), so the new owner continues the particle's
stream where the old one stopped: the search goes on as if nothing had moved.
"""

import numpy as np

from hpcswarm.swarm.engine.exchange import ship
from hpcswarm.swarm.engine.snapshot import SWARM_ROWS
from hpcswarm.swarm.engine.state import RNG_STATE_BYTES, pack_rng, unpack_rng


def pack_particle(state, i):
    """Particle ``i``'s rows and generator state as one byte row."""
    parts = []
    for name in SWARM_ROWS:
        row = getattr(state, name)[i]
        parts.append(np.packbits(row) if row.dtype == bool
                     else np.ascontiguousarray(row).view(np.uint8))
    parts.append(pack_rng(state.rngs[i]))
    return np.concatenate(parts)


def unpack_particle(state, i, packed):
    """Set particle ``i``'s rows and generator from :func:`pack_particle`'s byte row."""
    n_genes, start = state.mask.shape[1], 0
    for name in SWARM_ROWS:
        array = getattr(state, name)
        width = (n_genes + 7) // 8 if array.dtype == bool else 8 * n_genes
        chunk = packed[start:start + width]
        array[i] = (np.unpackbits(chunk, count=n_genes).astype(bool) if array.dtype == bool
                    else np.ascontiguousarray(chunk).view(np.float64))
        start += width
    unpack_rng(packed[start:start + RNG_STATE_BYTES], state.rngs[i])


def hand_over(comm, state, old, new):
    """Move the particles whose owner differs between the deals ``old`` and ``new`` to their
    new owners (collective: one all-to-all of ``3 x 8 n_genes + 2 n_genes / 8 + 48`` bytes
    per particle moved, :func:`~hpcswarm.swarm.engine.exchange.ship`).

    Parameters
    ----------
    comm : SerialComm or MPIComm
    state : SwarmState
        The swarm, its rows live on the ranks of ``old``; afterwards on those of ``new``.
    old, new : Deal
    """
    moving = np.flatnonzero(old.owner != new.owner)
    source, dest = old.owner[moving], new.owner[moving]
    sent = [pack_particle(state, i) for i in moving[source == comm.rank]]
    width = pack_particle(state, 0).size if state.n_particles else 0
    rows = np.array(sent, dtype=np.uint8).reshape(len(sent), width)
    for i, packed in zip(moving[(dest == comm.rank) & (source != comm.rank)],
                         ship(comm, rows, source, dest)):
        unpack_particle(state, i, packed)
