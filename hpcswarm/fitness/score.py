"""The outcome of one k-NN validation: how many held-out samples were classified correctly.

Scores of disjoint blocks of held-out rows add up to the Score of their union (each
prediction depends on its own row of distances only), so that rows can be scored apart, e.g.
by the ranks of a sample shard, and summed.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Score:
    """Correctly classified held-out samples out of ``total``.

    Parameters
    ----------
    correct : int
        Number of held-out samples whose k-NN prediction equals their label.
    total : int
        Number of held-out predictions made (``n_samples`` for leave-one-out and n-fold,
        the size of the test part for a holdout).
    """

    correct: int
    total: int

    def __post_init__(self):
        if self.total < 1:
            raise ValueError(f"a Score needs total >= 1 prediction, got total={self.total}")
        if not 0 <= self.correct <= self.total:
            raise ValueError(f"Score correct={self.correct} is outside [0, total={self.total}]")

    @property
    def accuracy(self):
        """Fraction of correct predictions, ``correct / total``."""
        return self.correct / self.total

    @property
    def error(self):
        """Fraction of wrong predictions, ``(total - correct) / total``."""
        return (self.total - self.correct) / self.total

    def __add__(self, other):
        """The Score of two disjoint blocks of held-out rows together (counts add up)."""
        if not isinstance(other, Score):
            return NotImplemented
        return Score(self.correct + other.correct, self.total + other.total)

    def __radd__(self, other):
        """``sum(scores)``: the start value 0 adds nothing."""
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    def as_dict(self):
        """Plain JSON-safe mapping: correct, total, accuracy, error."""
        return {"correct": self.correct, "total": self.total,
                "accuracy": self.accuracy, "error": self.error}
