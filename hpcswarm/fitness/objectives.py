"""Fitness functions on top of a validation score, all maximised by every search.

- ``"accuracy"``: validation accuracy (Tran et al. 2016 and Chuang et al. 2008 report it).
- ``"error"``: minus the error rate (Gu et al. 2018 minimise the error rate, their Eq. 5).
- ``"combined"``: ``alpha * acc + (1 - alpha) * (1 - |S| / D)``, Li et al., Eq. (3), with
  alpha = 0.9 as they and Xue et al. (2012) suggest.

The empty subset scores :data:`WORST_FITNESS` under every objective.
"""

from dataclasses import dataclass

import numpy as np

WORST_FITNESS = -2.0
"""Fitness of the empty subset.

PSO-LSRG resets gbest to the empty subset (Tran et al. 2016, Sect. 3, after Chuang et al.
2008), so every non-empty subset must beat it: every objective here takes values in
[-1, 1] on non-empty subsets, and -2.0 lies strictly below while staying finite and
JSON-safe.
"""

OBJECTIVES = ("accuracy", "error", "combined")


@dataclass(frozen=True)
class Objective:
    """A fitness function ``(score, n_selected, n_genes) -> float``, to be maximised.

    Parameters
    ----------
    name : {"accuracy", "error", "combined"}
    alpha : float
        Weight of the accuracy in ``"combined"`` (Li et al., Eq. 3); unused otherwise.
    """

    name: str
    alpha: float = 0.9

    def __call__(self, score, n_selected, n_genes):
        if n_selected == 0:
            return WORST_FITNESS
        if self.name == "accuracy":
            return score.accuracy
        if self.name == "error":
            return -score.error
        return self.alpha * score.accuracy + (1.0 - self.alpha) * (1.0 - n_selected / n_genes)

    def many(self, correct, total, n_selected, n_genes):
        """The fitness of many subsets at once, element by element equal to a call.

        Parameters
        ----------
        correct, n_selected : ndarray of int of shape (n_subsets,)
            Correct predictions (out of ``total``) and genes of each subset.
        total, n_genes : int

        Returns
        -------
        ndarray of float64 of shape (n_subsets,)
        """
        correct = np.asarray(correct, dtype=np.int64)
        n_selected = np.asarray(n_selected, dtype=np.int64)
        if self.name == "accuracy":
            values = correct / total
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
    name : {"accuracy", "error", "combined"}
    alpha : float, default 0.9
        Accuracy weight of ``"combined"``, in the open interval (0, 1).

    Returns
    -------
    Objective
        Callable ``(score, n_selected, n_genes) -> float``; ``"error"`` returns minus the
        error rate, and the empty subset gives :data:`WORST_FITNESS`.
    """
    if name not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}; got {name!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return Objective(name, float(alpha))
