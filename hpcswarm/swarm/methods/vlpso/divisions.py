"""VLPSO's particles of different lengths: the swarm size, the divisions and the length change.

Tran, Xue & Zhang 2019, Sec. III-B and III-C. A particle of length ``L`` can select only
the ``L`` most relevant genes (the first ``L`` of the symmetric-uncertainty order). The swarm
is cut into ``n_divisions`` divisions of consecutive particles; division ``j`` (from 0) has
length ``(j + 1) * max_length // n_divisions``, so the last one spans every gene. When the
best subset has stalled, the division whose pbests have the best mean fitness gives its
length as the new maximum, and the other divisions take the lengths
``k * new_max // n_divisions``, ``k = 1, 2, ...`` in division order (``VLSwarm.reinit`` and
``ResizeParticles`` of ``xyjigsaw/VarLenPSO``).
"""

import numpy as np

POPULATION_LIMITS = (100, 300)
"""Bounds of the paper's swarm size (``VarLenPSOMain.VECLPSO``: ``n_genes / 20`` within
[100, 300])."""


def swarm_size(n_particles: int, n_genes: int) -> int:
    """The swarm size: ``n_particles``, or for 0 the paper's ``n_genes // 20`` clamped to
    :data:`POPULATION_LIMITS`."""
    if n_particles:
        return int(n_particles)
    low, high = POPULATION_LIMITS
    return int(min(max(n_genes // 20, low), high))


def fitting_divisions(n_divisions: int, n_particles: int) -> int:
    """The divisions a swarm of ``n_particles`` is cut into: ``n_divisions``, or
    ``n_particles`` when the swarm is smaller (a division of one particle each; VLPSO says
    so with a :class:`~hpcswarm.errors.SettingNote`)."""
    return int(min(n_divisions, n_particles))


def division_of(n_particles: int, n_divisions: int) -> np.ndarray:
    """Division of every particle: contiguous runs whose sizes differ by at most one (the
    later ones larger), ndarray of int of shape (n_particles,)."""
    return (np.arange(n_particles) * n_divisions) // n_particles


def division_lengths(max_length: int, n_divisions: int) -> np.ndarray:
    """Initial length of each division: ``(j + 1) * max_length // n_divisions``, at least 1
    (Sec. III-B), ndarray of int of shape (n_divisions,)."""
    j = np.arange(1, n_divisions + 1)
    return np.maximum(j * int(max_length) // n_divisions, 1)


def best_division(pbest_fitness, division, n_divisions: int) -> int:
    """The division whose pbests have the highest mean fitness (ties: the first)."""
    sums = np.bincount(division, weights=pbest_fitness, minlength=n_divisions)
    counts = np.bincount(division, minlength=n_divisions)
    return int(np.argmax(sums / counts))


def changed_lengths(lengths, best: int):
    """The length change (Sec. III-C): the new division lengths and the new maximum.

    Division ``best`` keeps its length, which becomes the maximum ``M``; the others, in
    division order, take ``k * M // n_divisions`` (at least 1) for ``k = 1, 2, ...``. When
    ``best`` already has the longest length nothing changes (``VLSwarm.reinit``: "best size
    unchanged").

    Parameters
    ----------
    lengths : ndarray of int of shape (n_divisions,)
        The current length of each division.
    best : int

    Returns
    -------
    (ndarray of int of shape (n_divisions,), int)
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    new_max = int(lengths[best])
    if new_max == int(lengths.max()):
        return lengths.copy(), new_max
    n_divisions = lengths.size
    others = np.flatnonzero(np.arange(n_divisions) != best)
    changed = lengths.copy()
    changed[others] = np.maximum(np.arange(1, n_divisions) * new_max // n_divisions, 1)
    return changed, new_max


def lengths_problem(lengths, max_length: int, n_genes: int):
    """What makes ``lengths`` division lengths that neither the initial cut nor a length
    change gives (a phrase), or None.

    Both leave one division (the last, after the cut; the best, after a change) at the
    maximum ``M = max_length`` and the others, in division order, at ``k * M // n_divisions``
    (at least 1) for ``k = 1, 2, ...`` (Sec. III-B and III-C, :func:`division_lengths`,
    :func:`changed_lengths`), with ``1 <= M <= n_genes``.

    Parameters
    ----------
    lengths : ndarray of int of shape (n_divisions,)
    max_length, n_genes : int
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if not 1 <= max_length <= n_genes:
        return f"the maximum length {max_length} is outside [1, {n_genes}]"
    others = np.maximum(np.arange(1, lengths.size) * max_length // lengths.size, 1)
    if not any(np.array_equal(np.insert(others, longest, max_length), lengths)
               for longest in np.flatnonzero(lengths == max_length)):
        return (f"the division lengths {lengths.tolist()} are not those of a cut of "
                f"{max_length} genes into {lengths.size} divisions")
    return None
