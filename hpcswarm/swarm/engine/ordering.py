"""The order of subsets every method uses: higher fitness first, then fewer genes.

This is the pbest/gbest updating rule of Xue, Zhang & Browne 2014 ("updating mechanism 2",
the "-2" of PSO(4-2)); ties that remain between particles are broken by the lower particle
index, so the choice does not depend on how particles are spread over ranks.

:class:`Ordering` holds the rule with its one switch: without the size tie-break (the
traditional pbest/gbest update that Xue et al.'s mechanism refines: fitness alone) subsets of
equal fitness are equal, and the first met is kept. The module's functions are the default
order's.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Ordering:
    """Higher fitness first, then (with ``fewer_genes``) fewer genes, then the first met.

    Parameters
    ----------
    fewer_genes : bool
        Whether fewer genes break a tie in fitness (Xue, Zhang & Browne 2014, the updating
        mechanism of PSO(4-2)); false: fitness alone decides, the traditional update.
    """

    fewer_genes: bool = True

    def tie_sizes(self, sizes) -> np.ndarray:
        """The sizes as this order compares them: ``sizes``, or zeros without the size
        tie-break (every subset of a fitness then ties). Returns ndarray of int64."""
        sizes = np.asarray(sizes, dtype=np.int64)
        return sizes if self.fewer_genes else np.zeros_like(sizes)

    def better(self, fitness_a: float, size_a: int, fitness_b: float, size_b: int) -> bool:
        """Whether subset a (fitness, size) strictly beats subset b: higher fitness, then
        fewer genes where the order counts them."""
        return fitness_a > fitness_b or (self.fewer_genes and fitness_a == fitness_b
                                         and size_a < size_b)

    def beats(self, fitness, sizes, fitness_b: float, size_b) -> np.ndarray:
        """:meth:`better` of each subset of ``fitness`` and ``sizes`` (arrays) against subset
        b; False where the fitness is NaN. Returns ndarray of bool."""
        fitness = np.asarray(fitness, dtype=float)
        return (fitness > fitness_b) | ((fitness == fitness_b)
                                        & (self.tie_sizes(sizes) < self.tie_sizes(size_b)))

    def best_index(self, fitness, sizes) -> int:
        """Index of the best particle: highest fitness, then fewest genes where the order
        counts them, then lowest index.

        Parameters
        ----------
        fitness : ndarray of shape (n_particles,)
        sizes : ndarray of shape (n_particles,)

        Returns
        -------
        int
        """
        fitness = np.asarray(fitness, dtype=float)
        order = np.lexsort((np.arange(fitness.size), self.tie_sizes(sizes), -fitness))
        return int(order[0])


FEWER_GENES = Ordering()
"""The default order: higher fitness, then fewer genes, then the first met."""

better = FEWER_GENES.better
beats = FEWER_GENES.beats
best_index = FEWER_GENES.best_index
