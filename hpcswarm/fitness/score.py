"""The outcome of one k-NN validation: how many held-out samples were classified correctly.

Scores of disjoint blocks of held-out rows add up to the Score of their union (each
prediction depends on its own row of distances only), so that rows can be scored apart, e.g.
by the ranks of a sample shard, and summed. A Score may also hold the counts per class of
the held-out samples' labels, from which the balanced accuracy is computed
(:func:`hpcswarm.store.records.balanced_accuracy`, shared with the results' records); they
add up the same way.
"""

from dataclasses import dataclass

from hpcswarm.store.records import balanced_accuracy


@dataclass(frozen=True, slots=True)
class Score:
    """Correctly classified held-out samples out of ``total``, and per class when counted.

    Parameters
    ----------
    correct : int
        Number of held-out samples whose k-NN prediction equals their label.
    total : int
        Number of held-out predictions made (``n_samples`` for leave-one-out and n-fold,
        the size of the test part for a holdout).
    class_correct, class_total : tuple of int, default ()
        The same two counts per class of the held-out samples' labels (class codes
        ``0 .. n_classes - 1``), when the scorer counts per class; they sum to ``correct``
        and ``total``. Empty otherwise.
    """

    correct: int
    total: int
    class_correct: tuple = ()
    class_total: tuple = ()

    def __post_init__(self):
        if self.total < 1:
            raise ValueError(f"a Score needs total >= 1 prediction, got total={self.total}")
        if not 0 <= self.correct <= self.total:
            raise ValueError(f"Score correct={self.correct} is outside [0, total={self.total}]")
        if len(self.class_correct) != len(self.class_total):
            raise ValueError(f"a Score needs as many class_correct as class_total counts, got "
                             f"{len(self.class_correct)} and {len(self.class_total)}")
        if self.class_total and (
                sum(self.class_correct) != self.correct or sum(self.class_total) != self.total
                or any(not 0 <= c <= t for c, t in zip(self.class_correct, self.class_total))):
            raise ValueError(f"Score class counts {self.class_correct} of {self.class_total} "
                             f"do not add up to correct={self.correct} of total={self.total}")

    @property
    def accuracy(self):
        """Fraction of correct predictions, ``correct / total``."""
        return self.correct / self.total

    @property
    def error(self):
        """Fraction of wrong predictions, ``(total - correct) / total``."""
        return (self.total - self.correct) / self.total

    @property
    def balanced_accuracy(self):
        """Mean recall over the classes with held-out samples
        (:func:`~hpcswarm.store.records.balanced_accuracy`).

        Raises
        ------
        ValueError
            The Score holds no counts per class.
        """
        if not self.class_total:
            raise ValueError("balanced accuracy needs a Score with counts per class")
        return float(balanced_accuracy(self.class_correct, self.class_total))

    def __add__(self, other):
        """The Score of two disjoint blocks of held-out rows together (counts add up)."""
        if not isinstance(other, Score):
            return NotImplemented
        if len(self.class_total) != len(other.class_total):
            raise ValueError("Scores with and without (or with other) class counts do not add")
        return Score(self.correct + other.correct, self.total + other.total,
                     tuple(a + b for a, b in zip(self.class_correct, other.class_correct)),
                     tuple(a + b for a, b in zip(self.class_total, other.class_total)))

    def __radd__(self, other):
        """``sum(scores)``: the start value 0 adds nothing."""
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    def as_dict(self):
        """Plain JSON-safe mapping: correct, total, accuracy, error; with counts per class,
        also class_correct, class_total and balanced_accuracy."""
        plain = {"correct": self.correct, "total": self.total,
                 "accuracy": self.accuracy, "error": self.error}
        if not self.class_total:
            return plain
        return plain | {"class_correct": list(self.class_correct),
                        "class_total": list(self.class_total),
                        "balanced_accuracy": self.balanced_accuracy}
