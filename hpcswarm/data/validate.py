"""Rules shared by the checks of :mod:`hpcswarm.data.build`: option values, label texts and
codes, unique names, and the record of what a conversion removed.

Every problem of the data becomes a :class:`~hpcswarm.errors.DataError` naming the file and
saying what is wrong and where (a bad option value, a :class:`~hpcswarm.errors.ParameterError`);
nothing is normalised but names (:func:`clean_names`): values stay as distributed.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.data.table import MISSING_TOKENS
from hpcswarm.errors import DataError, ParameterError

DTYPES = ("float64", "float32")
NAN_POLICIES = ("error", "drop-genes", "drop-samples")


@dataclass
class Cleaning:
    """What :func:`hpcswarm.data.build.build` removed, and the reader's notes, for the
    conversion report."""

    constant_genes: list = field(default_factory=list)
    nonfinite_genes: list = field(default_factory=list)
    nonfinite_samples: list = field(default_factory=list)
    unlabelled_samples: list = field(default_factory=list)
    small_classes: list = field(default_factory=list)
    """``(class, samples)`` of the classes dropped by ``min_class_size``."""
    notes: list = field(default_factory=list)
    """Further lines for the summary (which column became the names, phenotype rows that
    matched no sample)."""


def check_choice(name, value, allowed):
    """Raise :class:`ParameterError` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ParameterError(f"{name} must be one of {choices}, got {value!r}")


def label_text(value):
    """The class a label names, as text, or None for a missing label.

    Missing: None, a float NaN (MATLAB's NaN), or a cell in :data:`MISSING_TOKENS` (empty,
    ``?``, ``NA``...). A label that reads as a number is named by its value, so that ``1``,
    ``1.0`` and ``01`` are one class ``"1"`` (a spreadsheet or MATLAB writes whole numbers
    either way); other text is kept as written, without surrounding spaces.

    Raises
    ------
    ValueError
        An infinite number.
    """
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in MISSING_TOKENS:
            return None
        try:
            number = float(text)
        except ValueError:
            return text
    else:
        number = float(value)
        if math.isnan(number):
            return None
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a class")
    return str(int(number)) if number.is_integer() else repr(number)


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
    labels : sequence of str
        Class names as :func:`label_text` gives them (none missing).
    class_order : list of str or None
        Declared order of the classes; classes without samples are left out. Without it,
        labels are ordered by value when all are numbers, else alphabetically.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        int64 codes in ``0 .. n_classes - 1``.
    class_names : list of str
    """
    text = [str(v) for v in labels]
    present = set(text)
    if class_order is None:
        names = sorted(present, key=_label_sort_key(present))
    else:
        declared = [label_text(name) for name in class_order]
        names = [name for name in dict.fromkeys(declared) if name in present]
        names += sorted(present - set(names), key=_label_sort_key(present))
    code = {name: i for i, name in enumerate(names)}
    return np.array([code[t] for t in text], dtype=np.int64), names


def clean_names(names):
    """Gene, sample or class names as hpcswarm keeps them: text without surrounding spaces.

    The one normalisation of names, applied by ``convert`` (every format) and by loading an
    HDF5 file alike, so that a name matches the same genes whichever way the file was made.
    """
    return [str(name).strip() for name in names]


def check_names(names, what, path, written=None):
    """Raise :class:`DataError` at the first empty name of ``names``, else at the first
    repeated one: a name is how a gene list, a phenotype table or a report finds the gene or
    sample, so each must have one of its own.

    ``written``: the names as the file spells them, before :func:`clean_names`; when the
    name refused is spelt differently there (only spaces, spaces around it), the message
    shows how.
    """
    for i, name in enumerate(names):
        if not name:
            spelt = f" (written {written[i]!r})" if written is not None and written[i] else ""
            raise DataError(f"{path}: {what} {i + 1} of {len(names)} has an empty name{spelt}; "
                            f"give every {what} a name")
    seen = {}
    duplicates = []
    for i, name in enumerate(names):
        if name in seen:
            duplicates.append((seen[name], i))
        seen.setdefault(name, i)
    if duplicates:
        first, second = duplicates[0]
        spelt = ""
        if written is not None and written[first] != written[second]:
            spelt = (f" (written {written[first]!r} and {written[second]!r}; spaces around "
                     "a name are not part of it)")
        raise DataError(
            f"{path}: duplicate {what} name{'s' if len(duplicates) > 1 else ''}: "
            f"{names[first]!r}" + (f" and {len(duplicates) - 1} more" if len(duplicates) > 1 else "")
            + spelt
        )
