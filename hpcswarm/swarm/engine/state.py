"""Swarm state as per-particle arrays, and the random streams of a run.

One run seed becomes a :class:`numpy.random.SeedSequence`. Particle ``i`` draws from its own
generator, whose seed sequence is the ``(PARTICLE, i)`` child of the run's: it can be built
from the index alone, so a rank owning any particles creates exactly the generators
the serial run uses. Draws that every rank must agree on (CSO pairing, CBPSO's half, FSR's
first subset) come from the one swarm-wide stream ``(SWARM,)``. The cross-validation folds
are drawn by the fitness engine from the run seed itself (as ``hpcswarm evaluate --seed``
does), a sequence distinct from every child above.
"""

from dataclasses import dataclass

import numpy as np

PARTICLE, SWARM = 0, 1


def run_seed_sequence(seed):
    """The run's root :class:`~numpy.random.SeedSequence` from an int seed (or a sequence)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def child_sequence(root, *key):
    """The child of ``root`` at ``key`` (the same sequence ``spawn`` would give at that path)."""
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key))


def particle_streams(root, indices):
    """One generator per particle index in ``indices``, independent of who else exists."""
    return [np.random.default_rng(child_sequence(root, PARTICLE, int(i))) for i in indices]


RNG_STATE_BYTES = 48
"""Size of a particle generator's packed state (:func:`pack_rng`)."""

_MASK64 = (1 << 64) - 1


def pack_rng(rng):
    """The state of a PCG64 generator as 48 bytes (to continue its stream on another rank)."""
    state = rng.bit_generator.state
    words = [state["state"]["state"] >> 64, state["state"]["state"] & _MASK64,
             state["state"]["inc"] >> 64, state["state"]["inc"] & _MASK64,
             state["has_uint32"], state["uinteger"]]
    return np.array(words, dtype=np.uint64).view(np.uint8)


def rng_state_problem(packed):
    """What makes ``packed`` (48 bytes, :func:`pack_rng`) no state a PCG64 generator can be in
    (a phrase completing "a generator state with ..."), or None: its stream increment is
    odd (numpy sets ``inc = 2 seq + 1``), ``has_uint32`` is 0 or 1 and the buffered
    ``uinteger`` fits in 32 bits."""
    words = np.ascontiguousarray(packed).view(np.uint64)
    if not words[3] & 1:
        return "an even increment"
    if words[4] > 1:
        return f"has_uint32 = {int(words[4])}"
    if words[5] >> 32:
        return "a buffered uinteger over 32 bits"
    return None


def unpack_rng(packed, rng=None):
    """A PCG64 generator (``rng`` itself when given) set to the state :func:`pack_rng` made."""
    words = [int(w) for w in np.ascontiguousarray(packed).view(np.uint64)]
    rng = np.random.Generator(np.random.PCG64()) if rng is None else rng
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (words[0] << 64) | words[1], "inc": (words[2] << 64) | words[3]},
        "has_uint32": words[4], "uinteger": words[5],
    }
    return rng


def swarm_stream(root):
    """The swarm-wide generator, drawn identically by every rank."""
    return np.random.default_rng(child_sequence(root, SWARM))


BYTES_PER_PARTICLE_GENE = 3 * 8 + 2 * 1
"""Bytes a :class:`SwarmState` holds per particle and gene: ``position``, ``velocity`` and
``pbest_position`` (float64), ``mask`` and ``pbest_mask`` (bool)."""


@dataclass
class SwarmState:
    """Per-particle arrays of a swarm (row ``i`` is particle ``i``).

    Attributes
    ----------
    position, velocity : ndarray of shape (n_particles, n_genes)
        Continuous position (binary algorithms store 0.0/1.0) and velocity.
    mask : ndarray of shape (n_particles, n_genes), bool
        The subset each particle currently selects.
    fitness : ndarray of shape (n_particles,)
        Fitness of ``mask`` (maximised).
    size : ndarray of shape (n_particles,), int
        Number of genes in ``mask``.
    pbest_position, pbest_mask, pbest_fitness, pbest_size : ndarray
        Personal bests (unused by CSO, which keeps none).
    rngs : list of numpy.random.Generator
        Particle ``i``'s own stream.
    swarm_rng : numpy.random.Generator
        The stream of swarm-wide draws.

    Notes
    -----
    Under a communicator of several ranks every rank holds the full-shape arrays, but only
    the rows of the particles it owns are live in ``position``, ``velocity``, ``mask`` and
    the pbest rows: per-rank memory is then ``O(n_particles x n_genes)``
    (:meth:`bytes_needed`: 27 MB for 100 particles of 10,367 genes), which keeps
    the per-particle code identical to the serial one. The per-particle scalars
    (``fitness``, ``size``, ``pbest_fitness``, ``pbest_size``) are kept identical on every
    rank by an allgather after each evaluation round (``O(n_particles)`` traffic).
    """

    position: np.ndarray
    velocity: np.ndarray
    mask: np.ndarray
    fitness: np.ndarray
    size: np.ndarray
    pbest_position: np.ndarray
    pbest_mask: np.ndarray
    pbest_fitness: np.ndarray
    pbest_size: np.ndarray
    rngs: list
    swarm_rng: np.random.Generator

    @classmethod
    def empty(cls, n_particles, n_genes, rngs, swarm_rng, worst):
        """Zero positions and velocities, empty masks, every fitness ``worst``."""
        if len(rngs) != n_particles:
            raise ValueError(f"rngs must hold {n_particles} generators, got {len(rngs)}")
        shape = (n_particles, n_genes)
        return cls(
            position=np.zeros(shape),
            velocity=np.zeros(shape),
            mask=np.zeros(shape, dtype=bool),
            fitness=np.full(n_particles, worst, dtype=float),
            size=np.zeros(n_particles, dtype=np.int64),
            pbest_position=np.zeros(shape),
            pbest_mask=np.zeros(shape, dtype=bool),
            pbest_fitness=np.full(n_particles, worst, dtype=float),
            pbest_size=np.zeros(n_particles, dtype=np.int64),
            rngs=list(rngs),
            swarm_rng=swarm_rng,
        )

    @staticmethod
    def bytes_needed(n_particles, n_genes):
        """Bytes of the per-particle rows :meth:`empty` allocates for ``n_particles`` x
        ``n_genes`` (:data:`BYTES_PER_PARTICLE_GENE` each; the per-particle scalars and
        generators are not counted)."""
        return BYTES_PER_PARTICLE_GENE * n_particles * n_genes

    @property
    def n_particles(self):
        """Number of particles (rows)."""
        return self.position.shape[0]

    def sizes(self):
        """Number of genes each particle selects now, ndarray of shape (n_particles,) (a copy)."""
        return self.size.copy()
