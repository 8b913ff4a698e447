"""Fitness functions on top of a validation score, all maximised by every search.

Each objective is a row of :data:`hpcswarm.store.objectives.OBJECTIVE_TABLE` (its name and
aliases, its scalar and batched kernels, whether it needs counts per class); ``docs/methods.md``
tabulates them. :func:`make_objective` checks a name and ``alpha`` and returns the
:class:`Objective` the searches call. ``"balanced-accuracy"`` (scikit-learn's
``balanced_accuracy``) is computed from the scorer's correct counts per class
(:func:`~hpcswarm.store.records.balanced_accuracy`: a class without held-out samples does not
count), so its scorer must count per class (``make_scorer(..., class_counts=True)``,
:attr:`Objective.per_class`).

The empty subset scores :data:`WORST_FITNESS` under every objective.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.store.objectives import ALPHA_RANGE, OBJECTIVE_TABLE, objective_row
from hpcswarm.store.records import WORST_FITNESS

OBJECTIVES = tuple(OBJECTIVE_TABLE)
"""The objectives' names (:data:`~hpcswarm.store.objectives.OBJECTIVE_TABLE`)."""


@dataclass(frozen=True)
class Objective:
    """A fitness function ``(score, n_selected, n_genes) -> float``, to be maximised.

    Parameters
    ----------
    name : str
        A name of :data:`~hpcswarm.store.objectives.OBJECTIVE_TABLE`.
    alpha : float
        Weight of the accuracy in ``"combined"`` (Li et al., Eq. 3); unused otherwise.
    """

    name: str
    alpha: float = 0.9

    @property
    def per_class(self):
        """Whether the objective needs correct counts per class (Scores with
        ``class_correct``; ``score_flips`` counts of shape (n_tries, n_classes))."""
        return OBJECTIVE_TABLE[self.name].per_class

    def __call__(self, score, n_selected, n_genes):
        if n_selected == 0:
            return WORST_FITNESS
        return OBJECTIVE_TABLE[self.name].scalar(score, n_selected, n_genes, self.alpha)

    def many(self, correct, total, n_selected, n_genes):
        """The fitness of many subsets at once, element by element equal to a call.

        Parameters
        ----------
        correct : ndarray of int of shape (n_subsets,), or (n_subsets, n_classes)
            Correct predictions of each subset (per class for a :attr:`per_class` objective).
        total : int, or ndarray of int of shape (n_classes,)
            Held-out predictions (per class for a :attr:`per_class` objective).
        n_selected : ndarray of int of shape (n_subsets,)
            Genes of each subset.
        n_genes : int

        Returns
        -------
        ndarray of float64 of shape (n_subsets,)
        """
        correct = np.asarray(correct, dtype=np.int64)
        n_selected = np.asarray(n_selected, dtype=np.int64)
        values = OBJECTIVE_TABLE[self.name].batched(correct, total, n_selected, n_genes,
                                                     self.alpha)
        return np.where(n_selected == 0, WORST_FITNESS, values)


def make_objective(name, alpha=0.9):
    """The objective called ``name``, maximised by every search.

    Parameters
    ----------
    name : str
        A name of :data:`~hpcswarm.store.objectives.OBJECTIVE_TABLE`, or one of its aliases.
    alpha : float, default 0.9
        Accuracy weight of ``"combined"``, in the open interval
        :data:`~hpcswarm.store.objectives.ALPHA_RANGE`.

    Returns
    -------
    Objective
        Callable ``(score, n_selected, n_genes) -> float``; ``"error"`` returns minus the
        error rate, ``"balanced-accuracy"`` needs Scores with counts per class
        (:attr:`Objective.per_class`), and the empty subset gives :data:`WORST_FITNESS`.
    """
    row = objective_row(name)
    if row is None:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}; got {name!r}")
    low, high = ALPHA_RANGE
    if not low < alpha < high:
        raise ValueError(f"alpha must lie in ({low:g}, {high:g}), got {alpha!r}")
    return Objective(row.name, float(alpha))
