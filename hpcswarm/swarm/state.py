"""Swarm state as per-particle arrays, and the random streams of a run.

One run seed becomes a :class:`numpy.random.SeedSequence`. Particle ``i`` draws from its own
generator, whose seed sequence is the ``(PARTICLE, i)`` child of the run's: it can be built
from the index alone, so a rank owning particles ``[a, b)`` creates exactly the generators
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


def swarm_stream(root):
    """The swarm-wide generator, drawn identically by every rank."""
    return np.random.default_rng(child_sequence(root, SWARM))


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
    pbest_position, pbest_mask, pbest_fitness : ndarray
        Personal bests (unused by CSO, which keeps none).
    rngs : list of numpy.random.Generator
        Particle ``i``'s own stream.
    swarm_rng : numpy.random.Generator
        The stream of swarm-wide draws.
    """

    position: np.ndarray
    velocity: np.ndarray
    mask: np.ndarray
    fitness: np.ndarray
    pbest_position: np.ndarray
    pbest_mask: np.ndarray
    pbest_fitness: np.ndarray
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
            pbest_position=np.zeros(shape),
            pbest_mask=np.zeros(shape, dtype=bool),
            pbest_fitness=np.full(n_particles, worst, dtype=float),
            rngs=list(rngs),
            swarm_rng=swarm_rng,
        )

    @property
    def n_particles(self):
        """Number of particles (rows)."""
        return self.position.shape[0]

    def sizes(self):
        """Number of genes each particle selects now, ndarray of shape (n_particles,)."""
        return self.mask.sum(axis=1)

    def pbest_sizes(self):
        """Number of genes in each personal best."""
        return self.pbest_mask.sum(axis=1)
