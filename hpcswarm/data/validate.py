"""Rules shared by the checks of :mod:`hpcswarm.data.build`: option values, label coding,
unique names, and the record of what a conversion removed.

Every problem of the data becomes a :class:`~hpcswarm.errors.DataError` naming the file and
saying what is wrong and where (a bad option value, a :class:`~hpcswarm.errors.ParameterError`);
nothing is normalised: values stay as distributed.
"""

from dataclasses import dataclass, field

import numpy as np

from hpcswarm.errors import DataError, ParameterError

DTYPES = ("float64", "float32")
NAN_POLICIES = ("error", "drop-genes", "drop-samples")


@dataclass
class Cleaning:
    """What :func:`hpcswarm.data.build.build` removed, for the conversion report."""

    constant_genes: list = field(default_factory=list)
    nonfinite_genes: list = field(default_factory=list)
    nonfinite_samples: list = field(default_factory=list)
    unlabelled_samples: list = field(default_factory=list)
    small_classes: list = field(default_factory=list)
    """``(class, samples)`` of the classes dropped by ``min_class_size``."""
    notes: list = field(default_factory=list)
    """Further lines for the summary (e.g. phenotype rows that matched no sample)."""


def check_choice(name, value, allowed):
    """Raise :class:`ParameterError` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ParameterError(f"{name} must be one of {choices}, got {value!r}")


def _label_text(value):
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _label_sort_key(names):
    """Numeric order when every label reads as a number ("2" before "10"), else alphabetical."""
    try:
        for name in names:
            float(name)
    except ValueError:
        return None
    return float


def encode_labels(labels, class_order=None):
    """Class codes and names for a vector of labels.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        Strings or numbers.
    class_order : list of str or None
        Declared order of the classes; classes without samples are left out. Without it,
        labels are ordered by value when all are numbers, else alphabetically.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        int64 codes in ``0 .. n_classes - 1``.
    class_names : list of str
    """
    labels = np.asarray(labels)
    if labels.dtype.kind in "iufb":
        values, y = np.unique(labels, return_inverse=True)
        return y.astype(np.int64).ravel(), [_label_text(v) for v in values]
    text = np.array([str(v) for v in labels.tolist()], dtype=object)
    present = set(text.tolist())
    if class_order is None:
        names = sorted(present, key=_label_sort_key(present))
    else:
        names = [name for name in class_order if name in present]
    code = {name: i for i, name in enumerate(names)}
    return np.array([code[t] for t in text], dtype=np.int64), names


def check_unique(names, what, path):
    """Raise :class:`DataError` at the first repeated name of ``names``."""
    seen = set()
    duplicates = []
    for name in names:
        if name in seen:
            duplicates.append(name)
        seen.add(name)
    if duplicates:
        raise DataError(
            f"{path}: duplicate {what} name{'s' if len(duplicates) > 1 else ''}: "
            f"{duplicates[0]!r}" + (f" and {len(duplicates) - 1} more" if len(duplicates) > 1 else "")
        )


