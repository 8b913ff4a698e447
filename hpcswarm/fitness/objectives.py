"""Fitness functions on top of a validation score, all maximised by every search.

- ``"accuracy"``: validation accuracy (Tran et al. 2016 and Chuang et al. 2008 report it).
- ``"error"``: minus the error rate (Gu et al. 2018 minimise the error rate, their Eq. 5).
- ``"combined"``: ``alpha * acc + (1 - alpha) * (1 - |S| / D)``, Li et al., Eq. (3), with
  alpha = 0.9 as they and Xue et al. (2012) suggest.
- ``"balanced-accuracy"``: the mean over classes of the recall of the held-out predictions
  (Tran, Xue and Zhang 2019, VLPSO's fitness; scikit-learn's ``balanced_accuracy_score``),
  from the scorer's correct counts per class (:func:`~hpcswarm.store.records.balanced_accuracy`:
  a class without held-out samples does not count). A class of 2 samples among 60 weighs
  1/C of the fitness, not 2/60, so a search cannot drop a small class cheaply. Its scorer
  must count per class (``make_scorer(..., class_counts=True)``, :attr:`Objective.per_class`).

The empty subset scores :data:`WORST_FITNESS` under every objective.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.store.records import WORST_FITNESS, balanced_accuracy

OBJECTIVES = ("accuracy", "error", "combined", "balanced-accuracy")

PER_CLASS_OBJECTIVES = ("balanced-accuracy",)
"""The objectives computed from correct counts per class (their scorers count per class)."""


@dataclass(frozen=True)
class Objective:
    """A fitness function ``(score, n_selected, n_genes) -> float``, to be maximised.

    Parameters
    ----------
    name : {"accuracy", "error", "combined", "balanced-accuracy"}
    alpha : float
        Weight of the accuracy in ``"combined"`` (Li et al., Eq. 3); unused otherwise.
    """

    name: str
    alpha: float = 0.9

    @property
    def per_class(self):
        """Whether the objective needs correct counts per class (Scores with
        ``class_correct``; ``score_flips`` counts of shape (n_tries, n_classes))."""
        return self.name in PER_CLASS_OBJECTIVES

    def __call__(self, score, n_selected, n_genes):
        if n_selected == 0:
            return WORST_FITNESS
        if self.name == "accuracy":
            return score.accuracy
        if self.name == "error":
            return -score.error
        if self.name == "balanced-accuracy":
            return score.balanced_accuracy
        return self.alpha * score.accuracy + (1.0 - self.alpha) * (1.0 - n_selected / n_genes)

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
        if self.name == "accuracy":
            values = correct / total
        elif self.name == "balanced-accuracy":
            values = balanced_accuracy(correct, total)
        elif self.name == "error":
            values = -((total - correct) / total)
        else:
            values = (self.alpha * (correct / total)
                      + (1.0 - self.alpha) * (1.0 - n_selected / n_genes))
        return np.where(n_selected == 0, WORST_FITNESS, values)


def make_objective(name, alpha=0.9):
    """The objective called ``name``, maximised by every search.

    Parameters
    ----------
    name : {"accuracy", "error", "combined", "balanced-accuracy"}
    alpha : float, default 0.9
        Accuracy weight of ``"combined"``, in the open interval (0, 1).

    Returns
    -------
    Objective
        Callable ``(score, n_selected, n_genes) -> float``; ``"error"`` returns minus the
        error rate, ``"balanced-accuracy"`` needs Scores with counts per class
        (:attr:`Objective.per_class`), and the empty subset gives :data:`WORST_FITNESS`.
    """
    if name not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}; got {name!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return Objective(name, float(alpha))
