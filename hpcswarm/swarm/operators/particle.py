"""Particle operators: functions of one particle's arrays that take their draws from ``rng``.

Each returns new arrays and never touches the swarm; the algorithms call them once per
particle with that particle's own generator, so a particle's trajectory depends only on its
stream and on the shared pbest/gbest/mean values.
"""

import numpy as np


def pso_velocity(velocity, position, pbest, gbest, w, c1, c2, vmax, rng):
    """Velocity update of PSO with clamping (Tran et al. Eq. 1; Kennedy & Eberhart 1995).

    ``v' = w v + c1 r1 (pbest - x) + c2 r2 (gbest - x)``, clamped to ``[-vmax, vmax]``, with
    ``r1`` and ``r2`` drawn uniformly in [0, 1) independently for every dimension.

    Parameters
    ----------
    velocity, position, pbest, gbest : ndarray of shape (n_dims,)
    w, c1, c2, vmax : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_dims,)
    """
    r1 = rng.random(velocity.shape)
    r2 = rng.random(velocity.shape)
    new = w * velocity + c1 * r1 * (pbest - position) + c2 * r2 * (gbest - position)
    return np.clip(new, -vmax, vmax)


def continuous_position(position, velocity):
    """Position update ``x' = x + v`` kept inside [0, 1] (Tran et al. Eq. 2)."""
    return np.clip(position + velocity, 0.0, 1.0)


def threshold_mask(position, theta):
    """Selected genes of a continuous position: ``x > theta`` (Tran et al. Sec. 3; Gu et al. Alg. 2)."""
    return position > theta


def sigmoid(velocity):
    """Transfer function ``1 / (1 + exp(-v))`` of binary PSO (Chuang et al. Eq. 3)."""
    return 1.0 / (1.0 + np.exp(-velocity))


def binary_position(velocity, rng):
    """Binary PSO position: bit ``d`` is 1 when ``r3 < S(v_d)`` (Chuang et al. Eq. 4), as 0.0/1.0."""
    return (rng.random(velocity.shape) < sigmoid(velocity)).astype(float)


def cso_loser_update(velocity, loser, winner, mean, phi, rng):
    """Loser learns from the winner and the swarm mean (Gu et al. Eq. 3-4), kept in [0, 1].

    ``v' = R1 v + R2 (x_w - x_l) + phi R3 (x_mean - x_l)``; ``x' = x_l + v'``.

    Parameters
    ----------
    velocity, loser, winner, mean : ndarray of shape (n_dims,)
    phi : float
    rng : numpy.random.Generator

    Returns
    -------
    (velocity, position) : tuple of ndarray of shape (n_dims,)
    """
    r1 = rng.random(velocity.shape)
    r2 = rng.random(velocity.shape)
    r3 = rng.random(velocity.shape)
    new_velocity = r1 * velocity + r2 * (winner - loser) + phi * r3 * (mean - loser)
    return new_velocity, np.clip(loser + new_velocity, 0.0, 1.0)


def reflect_mutation(position, rate, rng):
    """FSIPSO mutation ``x -> 1 - x`` of each element with probability ``rate`` (Li et al. Eq. 6)."""
    flip = rng.random(position.shape) < rate
    return np.where(flip, 1.0 - position, position)


def repair_size(mask, size, rng):
    """Force exactly ``size`` selected genes by random exclusion or inclusion (Xue et al. 2012, Alg. 2 l. 10-16).

    Parameters
    ----------
    mask : ndarray of shape (n_genes,), bool
    size : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_genes,), bool
    """
    repaired = np.array(mask, dtype=bool)
    selected = np.flatnonzero(repaired)
    if selected.size > size:
        repaired[rng.choice(selected, selected.size - size, replace=False)] = False
    elif selected.size < size:
        free = np.flatnonzero(~repaired)
        repaired[rng.choice(free, size - selected.size, replace=False)] = True
    return repaired


def random_subset(n_genes, size, rng):
    """A mask selecting ``size`` genes drawn uniformly without replacement."""
    mask = np.zeros(n_genes, dtype=bool)
    mask[rng.choice(n_genes, size, replace=False)] = True
    return mask


def cap_selection(position, selected, priority, max_genes, unselected_value):
    """One particle's position with at most ``max_genes`` genes selected (the size cap's repair).

    The selected genes of highest ``priority`` are kept (ties: the lower index); the others
    get ``unselected_value``, the nearest position at which a gene is not selected, so that
    the particle stays where the search put it in every other dimension.

    Parameters
    ----------
    position : ndarray of shape (n_genes,)
    selected : ndarray of bool of shape (n_genes,)
        The genes ``position`` selects.
    priority : ndarray of shape (n_genes,)
        How strongly each gene is selected (the continuous position; a binary particle's
        velocity, the log-odds of its bit).
    max_genes : int
    unselected_value : float

    Returns
    -------
    ndarray of shape (n_genes,)
        ``position`` itself when it selects at most ``max_genes`` genes, else a repaired copy.
    """
    chosen = np.flatnonzero(selected)
    if chosen.size <= max_genes:
        return position
    order = chosen[np.lexsort((chosen, -priority[chosen]))]
    repaired = np.array(position, dtype=float)
    repaired[order[max_genes:]] = unselected_value
    return repaired

