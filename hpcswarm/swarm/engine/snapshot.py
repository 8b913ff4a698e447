"""A search's complete state at the end of a round, independent of the ranks, and its restoration.

Checkpoint and restart (see :mod:`hpcswarm.run.checkpoint`): a search resumed from the snapshot
of round ``t`` plays rounds ``t + 1, ...`` exactly as the uninterrupted search would, bit for
bit, whatever the number of ranks before and after, because everything a later round reads
is in the snapshot:

* the swarm (:class:`~hpcswarm.swarm.engine.state.SwarmState`): each rank owns the rows of its
  particles (positions, velocities, masks, personal bests, and each particle's generator,
  packed by :func:`~hpcswarm.swarm.engine.state.pack_rng`); the group's rank 0 gathers them into
  full-size arrays in particle order (whatever the deal), so a resumed run can deal the
  particles to any number of ranks. The
  per-particle scalars (fitness, sizes) are already identical on every rank after a round;
* the rest is what the method says it needs
  (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.method_state`: the evaluator's account and the
  attributes its classes list in ``STATE``: gbest, stagnation count, best subset,
  history, events, counters, the replicated archive and set of subsets seen,
  method-specific records such as FSIPSO's active genes or CSO's losers), plus the
  swarm-wide generator; all of it is the same on every rank of the group at a round's end
  (:mod:`hpcswarm.swarm.engine.loop`), so rank 0's copy is kept, as plain data
  (:func:`~hpcswarm.swarm.engine.statetree.encode_state`: JSON text and numeric arrays, never a
  pickle; the front of subsets met, :mod:`hpcswarm.swarm.engine.front`, which each rank keeps for
  its own particles, is merged over the ranks first). A cached distance
  state of the fitness engine (a greedy baseline's, SFR's prefix) is a cache: the method
  keeps its mask and rebuilds it in ``restore`` with one Gram product; every score computed
  from it is the same (the engine's scores are exact, see :mod:`hpcswarm.fitness.incremental`).

Not kept: the fitness engine, the communicator, the hooks, the round ledger (empty at a
round's end), the bytes-sent counters (per rank; a resumed run counts its own) and which
particles this rank owns (recomputed).
"""

import math
import time
from dataclasses import dataclass

import numpy as np

from hpcswarm.errors import DataError
from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.store.records import HISTORY_FIELDS
from hpcswarm.swarm.engine.state import (RNG_STATE_BYTES, SwarmState, pack_rng, rng_state_problem,
                                         unpack_rng)
from hpcswarm.swarm.engine.statetree import decode_state, encode_state

SWARM_ROWS = ("position", "velocity", "mask", "pbest_position", "pbest_mask")
"""Per-particle rows of a swarm that live only on the rank owning the particle."""

SWARM_SCALARS = ("fitness", "size", "pbest_fitness", "pbest_size")
"""Per-particle scalars of a swarm, identical on every rank at a round's end."""


def snapshot_bytes(n_particles, n_genes):
    """Bytes of a snapshot's swarm rows (:data:`SWARM_ROWS`, gathered on the group's rank 0
    by :func:`take_snapshot`): those of a :class:`~hpcswarm.swarm.engine.state.SwarmState` of
    ``n_particles`` x ``n_genes`` (the scalars, generators and method state not counted)."""
    return SwarmState.bytes_needed(n_particles, n_genes)


def _gather_swarm(search):
    """Full-size swarm arrays on the group's rank 0 (collective over ``search.comm``), else None."""
    state, deal = search.state, search.ownership
    owned = deal.local()
    part = {name: getattr(state, name)[owned] for name in SWARM_ROWS}
    part["rng_states"] = np.array([pack_rng(state.rngs[i]) for i in owned],
                                  dtype=np.uint8).reshape(owned.size, RNG_STATE_BYTES)
    parts = search.comm.gather(part, root=0)
    if parts is None:
        return None
    arrays = {}
    for name in part:
        arrays[name] = np.empty((deal.n_items,) + part[name].shape[1:], dtype=part[name].dtype)
        for rank, rows in enumerate(parts):
            arrays[name][deal.owner == rank] = rows[name]
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
        swarm-wide generator, as :func:`~hpcswarm.swarm.engine.statetree.encode_state` stores them:
        a copy, which later rounds leave alone). None on the other ranks.
    """
    has_swarm = hasattr(search, "state")
    arrays = _gather_swarm(search) if has_swarm else {}
    search.evaluator.front.merge(search.comm)  # every rank's subsets, in rank 0's copy too
    if search.comm.rank != 0:
        return None
    attributes = {"search": search.method_state()}
    if has_swarm:
        attributes["swarm_rng"] = search.state.swarm_rng
    return {"iteration": int(search.iteration),
            "elapsed": time.perf_counter() - search.started,
            "arrays": arrays,
            "method_state": encode_state(attributes)}


@dataclass(frozen=True)
class ArraySpec:
    """What one array or number of a snapshot must be: its dtype kind (``"f"`` float64,
    ``"b"`` bool, ``"i"`` integer, ``"u1"`` bytes), its shape (each entry a number or
    ``"particles"``, ``"genes"``, ``"rng"``, or None for any length; ``()`` for a number,
    which may be a Python or numpy scalar), and the range of its values (``low`` and
    ``high`` may name a limit: ``"genes"``, ``"last_gene"`` (the highest gene index),
    ``"particles"``, ``"last_particle"`` or another number of the state, ``"iteration"``,
    ``"evaluations"``, checked before; NaN allowed or not; ``distinct``: no value twice, so
    that an integer array of shape ``("genes",)`` in [0, ``"last_gene"``] is a permutation of
    the genes)."""

    kind: str
    shape: tuple
    low: object = -np.inf
    high: object = np.inf
    nan: bool = False
    distinct: bool = False


SWARM_ARRAYS = {
    "position": ArraySpec("f", ("particles", "genes"), 0.0, 1.0),
    "velocity": ArraySpec("f", ("particles", "genes")),
    "mask": ArraySpec("b", ("particles", "genes")),
    "pbest_position": ArraySpec("f", ("particles", "genes"), 0.0, 1.0),
    "pbest_mask": ArraySpec("b", ("particles", "genes")),
    "fitness": ArraySpec("f", ("particles",), WORST_FITNESS, 1.0, nan=True),
    "size": ArraySpec("i", ("particles",), 0, "genes"),
    "pbest_fitness": ArraySpec("f", ("particles",), WORST_FITNESS, 1.0),
    "pbest_size": ArraySpec("i", ("particles",), 0, "genes"),
    "rng_states": ArraySpec("u1", ("particles", "rng")),
}
"""Every array of a swarm's snapshot (:data:`SWARM_ROWS`, :data:`SWARM_SCALARS` and the
particles' generator states) and what it must hold: positions stay in [0, 1] (Tran et al.
Eq. 2's clamp, the bits of binary PSO, Gu et al.'s search box), velocities are finite,
fitness values lie between the empty subset's and a perfect score (a swarm particle's
fitness may be NaN: not needed this round), sizes between 0 and the number of genes, each
the count of its mask (:data:`SWARM_SIZES`), and each generator state is one a PCG64
generator can be in (:func:`~hpcswarm.swarm.engine.state.rng_state_problem`)."""

SWARM_SIZES = {"size": "mask", "pbest_size": "pbest_mask"}
"""Each per-particle size of a swarm's snapshot and the mask it counts."""

_NUMBERS = {"f": (float, np.floating), "i": (int, np.integer)}


def array_problem(array, spec: ArraySpec, limits: dict):
    """What is wrong with one snapshot array or number against ``spec`` (a phrase), or None.

    ``limits`` maps the names a spec's shape and range may use (``"particles"``, ``"genes"``,
    a number of the state) to their values.
    """
    sizes = {**limits, "rng": RNG_STATE_BYTES}
    expected = tuple(sizes.get(dim, dim) for dim in spec.shape)
    if spec.shape == () and not isinstance(array, np.ndarray):
        if isinstance(array, (bool, np.bool_)) or not isinstance(array, _NUMBERS[spec.kind]):
            return f"is a {type(array).__name__}, not a number"
        array = np.asarray(array)
    if not isinstance(array, np.ndarray):
        return f"is a {type(array).__name__}, not an array"
    dtypes = {"f": array.dtype == np.float64, "b": array.dtype == np.bool_,
              "i": array.dtype.kind == "i", "u1": array.dtype == np.uint8}
    if not dtypes[spec.kind]:
        return f"has dtype {array.dtype}"
    if len(array.shape) != len(expected) or any(
            dim is not None and length != dim for length, dim in zip(array.shape, expected)):
        return f"has shape {array.shape}, expected {expected}"
    if spec.kind in ("b", "u1"):
        return None
    values = array[~np.isnan(array)] if spec.nan else array
    if spec.kind == "f" and not np.isfinite(values).all():
        return "holds values that are not finite"
    low, high = sizes.get(spec.low, spec.low), sizes.get(spec.high, spec.high)
    if values.size and (values.min() < low or values.max() > high):
        return f"holds values outside [{low}, {high}]"
    if spec.distinct and np.unique(values).size != values.size:
        return "holds a value twice"
    return None


def _refuse(source, what, problem):
    return DataError(f"{source}: damaged checkpoint: the snapshot's {what} {problem}; start "
                     "afresh with --overwrite (the work it holds is lost)")


def check_swarm_arrays(arrays: dict, n_particles: int, n_genes: int, source: str) -> None:
    """Check every array of a swarm's snapshot before it is restored (:data:`SWARM_ARRAYS`,
    :data:`SWARM_SIZES`).

    Raises
    ------
    DataError
        Naming ``source`` (the checkpoint), the first missing or damaged array and what is
        wrong with it.
    """
    limits = {"particles": n_particles, "genes": n_genes}
    for name, spec in SWARM_ARRAYS.items():
        problem = ("is missing" if name not in arrays
                   else array_problem(arrays[name], spec, limits))
        if problem is not None:
            raise _refuse(source, f"array {name!r}", problem)
    for name, mask in SWARM_SIZES.items():
        counts = arrays[mask].sum(axis=1)
        if not np.array_equal(arrays[name], counts):
            particle = int(np.flatnonzero(arrays[name] != counts)[0])
            raise _refuse(source, f"array {name!r}", f"holds {arrays[name][particle]} for "
                          f"particle {particle}, whose {mask!r} has {counts[particle]} genes")
    for particle, packed in enumerate(arrays["rng_states"]):
        problem = rng_state_problem(packed)
        if problem is not None:
            raise _refuse(source, "array 'rng_states'",
                          f"holds for particle {particle} a generator state with {problem}")


def check_state_values(state: dict, specs: dict, n_genes: int, source: str,
                       n_particles: int = 0) -> None:
    """Check the arrays and numbers of a method state (``specs``: name ->
    :class:`ArraySpec`, see :meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.state_values`), in
    order, a range naming another number checked after it; DataError naming the first
    damaged one."""
    limits = {"genes": n_genes, "last_gene": n_genes - 1, "particles": n_particles,
              "last_particle": n_particles - 1}
    for name, spec in specs.items():
        problem = array_problem(state[name], spec, limits)
        if problem is not None:
            raise _refuse(source, f"method state {name!r}", problem)
        if spec.shape == ():
            limits[name] = state[name]


HISTORY_RANGES = {"best_fitness": (WORST_FITNESS, 1.0)}
"""Ranges of the history's numbers other than [0, inf): the best fitness, between the empty
subset's and a perfect score."""


def history_problem(history, iteration: int):
    """What is wrong with the history of a method state at round ``iteration`` (a phrase), or
    None: one row per round played, row ``i`` of round ``i``, every number of
    :data:`~hpcswarm.store.records.HISTORY_FIELDS` finite and in its range."""
    if not isinstance(history, list) or len(history) != iteration + 1:
        return f"is not a list of {iteration + 1} rows (one per round played)"
    for i, row in enumerate(history):
        if not isinstance(row, dict):
            return f"row {i} is a {type(row).__name__}, not a dict"
        for field in HISTORY_FIELDS:
            value = row.get(field)
            low, high = HISTORY_RANGES.get(field, (0, np.inf))
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not (low <= value <= high and math.isfinite(value))
                    or (field == "iteration" and value != i)):
                return f"row {i} holds {field} = {value!r}"
    return None


def events_problem(events, iteration: int):
    """What is wrong with the events of a method state at round ``iteration`` (a phrase), or
    None: a list of records (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.event`), each of a
    round played, in round order, named by a text."""
    if not isinstance(events, list):
        return f"is a {type(events).__name__}, not a list"
    last = 0
    for i, event in enumerate(events):
        round_ = event.get("iteration") if isinstance(event, dict) else None
        if (isinstance(round_, (bool, np.bool_)) or not isinstance(round_, (int, np.integer))
                or not last <= round_ <= iteration or type(event.get("event")) is not str):
            return f"entry {i} is not the record of a round played, in round order"
        last = round_
    return None


def _method_attributes(method, params, n_genes, snapshot, source):
    """The method state of ``snapshot`` read back, checked to hold every attribute the
    ``method`` lists (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.state_names`), each array
    and
    number in its range (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.state_values`), the
    round the snapshot names, a history of that many rounds, events of rounds played and the
    ties between its values (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.state_problem`)."""
    try:
        attributes = decode_state(snapshot["method_state"])
    except ValueError as exc:
        raise _refuse(source, "method state", f"does not read back ({exc})") from None
    state = attributes.get("search") if isinstance(attributes, dict) else None
    missing = (["search"] if not isinstance(state, dict)
               else [name for name in method.state_names() if name not in state])
    if snapshot["arrays"] and not isinstance(attributes.get("swarm_rng"), np.random.Generator):
        missing.append("swarm_rng")
    if missing:
        raise _refuse(source, "method state", f"lacks {', '.join(map(repr, missing))}")
    shape = method.swarm_shape(params, n_genes)
    check_state_values(state, method.state_values(), n_genes, source,
                       0 if shape is None else shape[0])
    iteration = snapshot["iteration"]
    if (isinstance(iteration, (bool, np.bool_)) or not isinstance(iteration, (int, np.integer))
            or iteration != state["iteration"]):
        raise _refuse(source, "iteration", f"{iteration} is not its method state's "
                      f"{state['iteration']}")
    for name, problem in (("history", history_problem(state["history"], state["iteration"])),
                          ("events", events_problem(state["events"], state["iteration"]))):
        if problem is not None:
            raise _refuse(source, f"method state {name!r}", problem)
    try:
        problem = method.state_problem(state, params, n_genes)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
        problem = f"does not read back ({exc!r})"
    if problem is not None:
        raise _refuse(source, "method state", problem)
    return attributes


def check_snapshot(method, params, n_genes, snapshot, termination=None):
    """Check every part of ``snapshot`` against a search of class ``method`` with checked
    ``params`` on ``n_genes`` genes, before anything is restored (or written): a resumed job
    checks every snapshot of its checkpoint so before any work
    (:func:`hpcswarm.run.plan.open_checkpoint`), and :func:`restore_snapshot` again.

    Parameters
    ----------
    method : type
        The :class:`~hpcswarm.swarm.engine.loop.SearchAlgorithm` subclass of the search.
    params : dict
        Its checked parameters.
    n_genes : int
        The genes it searches.
    snapshot : dict
        As :func:`take_snapshot` made it (``source``: the file it was read from).
    termination : Termination, optional
        The search's stop rule (default: the method's own,
        :meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.default_termination`), past whose last
        round a snapshot is damaged.

    Returns
    -------
    dict
        The decoded method state (``search`` and, with a swarm, ``swarm_rng``).

    Raises
    ------
    DataError
        Naming ``snapshot["source"]`` and the first damaged part: one line, the message of a
        damaged checkpoint.
    """
    source = snapshot.get("source", "checkpoint")
    arrays, shape = snapshot["arrays"], method.swarm_shape(params, n_genes)
    if shape is None and arrays:
        raise _refuse(source, "arrays", f"are those of a swarm, but {method.name} keeps none")
    if shape is not None:
        check_swarm_arrays(arrays, *shape, source)
    elapsed = snapshot["elapsed"]
    if not (isinstance(elapsed, (float, np.floating)) and 0 <= elapsed < np.inf):
        raise _refuse(source, "elapsed time", f"{elapsed!r} is not a finite number of seconds")
    attributes = _method_attributes(method, params, n_genes, snapshot, source)
    if shape is not None:
        problem = method.swarm_problem(arrays, attributes["search"], params, n_genes)
        if problem is not None:
            raise _refuse(source, "arrays", problem)
    if termination is None:
        termination = method.default_termination(params, n_genes)
    state = attributes["search"]
    last = termination.last_round(state, n_genes)
    if state["iteration"] > last:
        raise _refuse(source, "iteration", f"{state['iteration']} is past the search's last "
                      f"round, {last}")
    return attributes


def restore_snapshot(search, snapshot):
    """Put ``search`` (freshly built, same arguments) in the state ``snapshot`` describes.

    Every rank of ``search.comm`` calls it with the same snapshot; the swarm's particles are
    dealt to the ranks of this communicator, whatever their number when the snapshot was
    taken. Everything is checked first (:func:`check_snapshot`): a damaged snapshot raises
    DataError naming ``snapshot["source"]`` (the checkpoint file, when the snapshot was read
    from one) and the faulty part.
    """
    source = snapshot.get("source", "checkpoint")
    attributes = check_snapshot(type(search), search.params, search.n_genes, snapshot,
                                search.termination)
    try:  # the archive and the front are rebuilt from their arrays, checked there
        search.restore_method_state(attributes["search"])
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise _refuse(source, "method state", f"does not read back ({exc!r})") from None
    arrays = snapshot["arrays"]
    if arrays:
        rngs = [unpack_rng(packed) for packed in arrays["rng_states"]]
        search.state = SwarmState(rngs=rngs, swarm_rng=attributes["swarm_rng"],
                                  **{name: np.array(arrays[name])
                                     for name in SWARM_ROWS + SWARM_SCALARS})
        search.local = search.partition(search.state.n_particles)
    search.started = time.perf_counter() - float(snapshot["elapsed"])
