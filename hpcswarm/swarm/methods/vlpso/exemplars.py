"""Comprehensive learning for particles of different lengths (VLPSO, after CLPSO).

In CLPSO (Liang, Qin, Suganthan & Baskar 2006) each dimension ``d`` of particle ``i`` learns
from the pbest of an exemplar particle ``f_i(d)``: itself, or with probability ``Pc_i`` the
winner of a tournament between two other particles. VLPSO (Tran, Xue & Zhang 2019,
Sec. III-D) keeps this, draws the tournament's particles among those long enough to have
dimension ``d``, and sets ``Pc_i`` from the rank of particle ``i``'s fitness.
"""

import numpy as np


def learning_probabilities(pbest_fitness, pbest_size, low=0.05, high=0.5):
    """``Pc`` of every particle from the rank of its pbest (CLPSO's Eq. with ranks).

    ``Pc = low + (high - low) (exp(10 r / (n - 1)) - 1) / (exp(10) - 1)`` with ``r`` the
    particle's rank, 0 for the best pbest (higher fitness, then fewer genes, then lower
    index): the best particle learns mostly from its own pbest, the worst most often from
    others. With ``low = 0.05`` and ``high = 0.5`` this is CLPSO's curve (Liang et al. 2006,
    Sec. II-C) over ranks instead of particle indices.

    Returns
    -------
    ndarray of float64 of shape (n_particles,)
    """
    fitness = np.asarray(pbest_fitness, dtype=float)
    n = fitness.size
    order = np.lexsort((np.arange(n), np.asarray(pbest_size), -fitness))
    rank = np.empty(n)
    rank[order] = np.arange(n)
    scale = rank / (n - 1) if n > 1 else np.zeros(n)
    return low + (high - low) * np.expm1(10.0 * scale) / np.expm1(10.0)


def choose_exemplars(i, lengths, pbest_fitness, pbest_size, pc, rng):
    """Exemplar of each dimension ``d < lengths[i]`` of particle ``i`` (VLPSO Sec. III-D).

    For each dimension, with probability ``pc`` two distinct particles other than ``i``
    whose length exceeds ``d`` are drawn uniformly and the one with the better pbest
    (higher fitness, then fewer genes, then lower index) is the exemplar; otherwise, or
    when no other particle is long enough, it is ``i`` itself. When only one other particle
    is long enough it meets ``i`` in the tournament (``VLSwarm.renewExemplar`` of
    ``xyjigsaw/VarLenPSO`` falls back to ``i`` for a missing contender). Three uniform
    numbers are drawn per dimension, whatever the outcome.

    Parameters
    ----------
    i : int
    lengths : ndarray of int of shape (n_particles,)
        At least two particles.
    pbest_fitness, pbest_size : ndarray of shape (n_particles,)
    pc : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64 of shape (lengths[i],)
    """
    lengths = np.asarray(lengths)
    length = int(lengths[i])
    others = np.flatnonzero(np.arange(lengths.size) != i)
    others = others[np.argsort(-lengths[others], kind="stable")]  # longest first
    # the other particles that have dimension d: the first long_enough[d] of ``others``
    long_enough = np.searchsorted(-lengths[others], -np.arange(length), side="left")
    u = rng.random((3, length))
    learn = u[0] < pc
    first = np.minimum((u[1] * long_enough).astype(np.int64), np.maximum(long_enough - 1, 0))
    second = np.minimum((u[2] * (long_enough - 1)).astype(np.int64),
                        np.maximum(long_enough - 2, 0))
    second += second >= first
    a = others[first]
    b = np.where(learn & (long_enough >= 2), others[np.minimum(second, others.size - 1)], i)
    fitness = np.asarray(pbest_fitness, dtype=float)
    sizes = np.asarray(pbest_size)
    a_wins = ((fitness[a] > fitness[b])
              | ((fitness[a] == fitness[b]) & ((sizes[a] < sizes[b])
                                               | ((sizes[a] == sizes[b]) & (a < b)))))
    exemplar = np.full(length, int(i), dtype=np.int64)
    contest = learn & (long_enough >= 1)
    exemplar[contest] = np.where(a_wins, a, b)[contest]
    return exemplar
