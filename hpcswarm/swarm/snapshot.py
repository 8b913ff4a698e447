"""A search's complete state at the end of a round, independent of the ranks, and its restoration.

Checkpoint and restart (see :mod:`hpcswarm.checkpoint`): a search resumed from the snapshot
of round ``t`` plays rounds ``t + 1, ...`` exactly as the uninterrupted search would, bit for
bit, whatever the number of ranks before and after, because everything a later round reads
is in the snapshot:

* the swarm (:class:`~hpcswarm.swarm.state.SwarmState`): each rank owns the rows of its
  particles (positions, velocities, masks, personal bests, and each particle's generator,
  packed by :func:`~hpcswarm.swarm.state.pack_rng`); the group's rank 0 gathers them into
  full-size arrays, so a resumed run can deal the particles to any number of ranks. The
  per-particle scalars (fitness, sizes) are already identical on every rank after a round;
* the rest is what the method says it needs
  (:meth:`~hpcswarm.swarm.core.SearchAlgorithm.method_state`, the attributes its classes list
  in ``STATE``: gbest, stagnation count, best subset,
  history, events, counters, the replicated archive and set of subsets seen,
  method-specific records such as FSIPSO's active genes or CSO's losers), plus the
  swarm-wide generator; all of it is the same on every rank of the group at a round's end
  (:mod:`hpcswarm.swarm.core`), so rank 0's copy is pickled as it is. A cached distance
  state of the fitness engine (a greedy baseline's, SFR's prefix) is a cache: the method
  keeps its mask and rebuilds it in ``restore`` with one Gram product; every score computed
  from it is the same (the engine's scores are exact, see :mod:`hpcswarm.fitness.incremental`).

Not kept: the fitness engine, the communicator, the hooks, the round ledger (empty at a
round's end), the bytes-sent counters (per rank; a resumed run counts its own) and which
particles this rank owns (recomputed).
"""

import pickle
import time

import numpy as np

from hpcswarm.swarm.state import RNG_STATE_BYTES, SwarmState, pack_rng, unpack_rng

SWARM_ROWS = ("position", "velocity", "mask", "pbest_position", "pbest_mask")
"""Per-particle rows of a swarm that live only on the rank owning the particle."""

SWARM_SCALARS = ("fitness", "size", "pbest_fitness", "pbest_size")
"""Per-particle scalars of a swarm, identical on every rank at a round's end."""


def _gather_swarm(search):
    """Full-size swarm arrays on the group's rank 0 (collective over ``search.comm``), else None."""
    state = search.state
    owned = np.arange(*search.bounds)
    part = {name: getattr(state, name)[owned] for name in SWARM_ROWS}
    part["rng_states"] = np.array([pack_rng(state.rngs[i]) for i in owned],
                                  dtype=np.uint8).reshape(owned.size, RNG_STATE_BYTES)
    parts = search.comm.gather(part, root=0)
    if parts is None:
        return None
    arrays = {name: np.concatenate([p[name] for p in parts]) for name in part}
    arrays.update({name: getattr(state, name).copy() for name in SWARM_SCALARS})
    return arrays


def take_snapshot(search):
    """The state of ``search`` after its last recorded round (collective over ``search.comm``).

    Returns
    -------
    dict or None
        On the group's rank 0: ``iteration`` (the last round played), ``elapsed`` (seconds
        since the search started), ``arrays`` (the swarm's per-particle arrays, empty for a
        method without a swarm) and ``method_state`` (the search's ``method_state()`` and the
        swarm-wide generator, pickled bytes). None on the other ranks.
    """
    has_swarm = hasattr(search, "state")
    arrays = _gather_swarm(search) if has_swarm else {}
    if search.comm.rank != 0:
        return None
    attributes = {"search": search.method_state()}
    if has_swarm:
        attributes["swarm_rng"] = search.state.swarm_rng
    return {"iteration": int(search.iteration),
            "elapsed": time.perf_counter() - search._started,
            "arrays": arrays,
            "method_state": pickle.dumps(attributes, protocol=pickle.HIGHEST_PROTOCOL)}


def restore_snapshot(search, snapshot):
    """Put ``search`` (freshly built, same arguments) in the state ``snapshot`` describes.

    Every rank of ``search.comm`` calls it with the same snapshot; the swarm's particles are
    dealt to the ranks of this communicator, whatever their number when the snapshot was
    taken.
    """
    attributes = pickle.loads(snapshot["method_state"])
    search.restore_method_state(attributes["search"])
    arrays = snapshot["arrays"]
    if arrays:
        rngs = [unpack_rng(packed) for packed in arrays["rng_states"]]
        search.state = SwarmState(rngs=rngs, swarm_rng=attributes["swarm_rng"],
                                  **{name: np.array(arrays[name])
                                     for name in SWARM_ROWS + SWARM_SCALARS})
        search.local = search.partition(search.state.n_particles)
    search._started = time.perf_counter() - float(snapshot["elapsed"])
