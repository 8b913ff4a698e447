"""The order of subsets every method uses: higher fitness first, then fewer genes.

This is the pbest/gbest updating rule of Xue, Zhang & Browne 2014 ("updating mechanism 2",
the "-2" of PSO(4-2)); ties that remain between particles are broken by the lower particle
index, so the choice does not depend on how particles are spread over ranks.
"""

import numpy as np


def better(fitness_a: float, size_a: int, fitness_b: float, size_b: int) -> bool:
    """Whether subset a (fitness, size) strictly beats subset b: higher fitness, then fewer
    genes."""
    return fitness_a > fitness_b or (fitness_a == fitness_b and size_a < size_b)


def beats(fitness, sizes, fitness_b: float, size_b) -> np.ndarray:
    """:func:`better` of each subset of ``fitness`` and ``sizes`` (arrays) against subset b;
    False where the fitness is NaN. Returns ndarray of bool."""
    fitness = np.asarray(fitness, dtype=float)
    return (fitness > fitness_b) | ((fitness == fitness_b) & (np.asarray(sizes) < size_b))


def best_index(fitness, sizes) -> int:
    """Index of the best particle: highest fitness, then fewest genes, then lowest index.

    Parameters
    ----------
    fitness : ndarray of shape (n_particles,)
    sizes : ndarray of shape (n_particles,)

    Returns
    -------
    int
    """
    fitness = np.asarray(fitness, dtype=float)
    order = np.lexsort((np.arange(fitness.size), np.asarray(sizes), -fitness))
    return int(order[0])
