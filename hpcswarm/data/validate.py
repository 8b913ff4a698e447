"""Checks that turn a :class:`~hpcswarm.data.table.RawTable` into a :class:`Dataset`.

Every problem of the data becomes a :class:`~hpcswarm.errors.DataError` naming the file and
saying what is wrong and where (a bad option value, a :class:`~hpcswarm.errors.ParameterError`);
nothing is normalised: values stay as distributed.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.data.dataset import Dataset
from hpcswarm.data.table import MISSING_TOKENS
from hpcswarm.errors import DataError, ParameterError

DTYPES = ("float64", "float32")
NAN_POLICIES = ("error", "drop-genes", "drop-samples")


@dataclass
class Cleaning:
    """What :func:`build_dataset` removed, and the reader's notes, for the conversion report."""

    constant_genes: list = field(default_factory=list)
    nonfinite_genes: list = field(default_factory=list)
    nonfinite_samples: list = field(default_factory=list)
    unlabelled_samples: list = field(default_factory=list)
    notes: list = field(default_factory=list)


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


def _check_labels(table, path, drop_unlabelled, cleaning):
    """Replace ``table.labels`` by class names (:func:`label_text`); a missing label is an
    error naming the labels' file and the first such sample, or with ``drop_unlabelled`` the
    sample is removed (reported in ``cleaning``)."""
    where = table.label_file or path
    names = []
    for i, value in enumerate(table.labels.tolist()):
        try:
            names.append(label_text(value))
        except ValueError as exc:
            raise DataError(f"{where}: {_describe_label(table, i)}: the label {exc}") from None
    missing = [i for i, name in enumerate(names) if name is None]
    if not missing:
        table.labels = np.array(names, dtype=object)
        return
    if not drop_unlabelled:
        value = table.labels[missing[0]]
        shown = repr(value) if isinstance(value, str) else str(value)
        raise DataError(
            f"{where}: {_describe_label(table, missing[0])} has no label "
            f"({shown}); {len(missing)} sample(s) unlabelled "
            "(--drop-unlabelled leaves them out)")
    keep = np.array([name is not None for name in names])
    cleaning.unlabelled_samples = [
        table.sample_names[i] if table.sample_names is not None else str(i + 1) for i in missing]
    table.X = table.X[keep]
    table.labels = np.array([name for name in names if name is not None], dtype=object)
    if table.sample_names is not None:
        table.sample_names = [n for n, k in zip(table.sample_names, keep) if k]
    if table.label_places is not None:
        table.label_places = [p for p, k in zip(table.label_places, keep) if k]
    if table.X.shape[0] == 0:
        raise DataError(f"{where}: every sample is unlabelled")


def _describe_label(table, i):
    """Where the label of sample ``i`` was read, and the sample."""
    place = "" if table.label_places is None else f"{table.label_places[i]}, "
    return place + _describe_sample(table, i)


def _describe_sample(table, i):
    if table.sample_names is not None:
        return f"sample {table.sample_names[i]!r} (row {i + 1})"
    return f"sample {i + 1}"


def _describe_gene(table, j):
    return f"gene {table.gene_names[j]!r} (column {j + 1})"


def _check_finite(table, path, nan_policy, cleaning):
    bad = ~np.isfinite(table.X)
    n_bad = int(bad.sum())
    if n_bad == 0:
        return
    if nan_policy == "error":
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(
            f"{path}: {n_bad} NaN or infinite value{'s' if n_bad > 1 else ''} "
            f"in {int(bad.any(axis=1).sum())} sample(s) and {int(bad.any(axis=0).sum())} gene(s); "
            f"the first is {table.X[i, j]} at {_describe_sample(table, i)}, {_describe_gene(table, j)} "
            f"(--nan drop-genes or --nan drop-samples removes them)"
        )
    if nan_policy == "drop-genes":
        keep = ~bad.any(axis=0)
        cleaning.nonfinite_genes = [n for n, k in zip(table.gene_names, keep) if not k]
        table.X = table.X[:, keep]
        table.gene_names = [n for n, k in zip(table.gene_names, keep) if k]
    else:
        keep = ~bad.any(axis=1)
        cleaning.nonfinite_samples = [
            table.sample_names[i] if table.sample_names is not None else str(i + 1)
            for i in np.flatnonzero(~keep)
        ]
        table.X = table.X[keep]
        table.labels = np.asarray(table.labels)[keep]
        if table.sample_names is not None:
            table.sample_names = [n for n, k in zip(table.sample_names, keep) if k]
    if table.X.size == 0:
        raise DataError(f"{path}: no values left after --nan {nan_policy}")


def _check_unique(names, what, path):
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


def _drop_constant(table, cleaning):
    X = table.X
    keep = (X.max(axis=0) != X.min(axis=0)) if X.shape[0] else np.ones(X.shape[1], bool)
    if keep.all():
        return
    cleaning.constant_genes = [n for n, k in zip(table.gene_names, keep) if not k]
    table.X = X[:, keep]
    table.gene_names = [n for n, k in zip(table.gene_names, keep) if k]


def build_dataset(table, path, *, dtype="float64", drop_constant=False, transpose=False, nan="error",
                  drop_unlabelled=False):
    """Check a raw table and turn it into a :class:`Dataset` held in memory.

    Parameters
    ----------
    table : RawTable
        What the reader found; modified in place.
    path : str or Path
        The input file, named in every error message.
    dtype : {"float64", "float32"}
        Storage type of ``X``.
    drop_constant : bool
        Remove genes whose value is the same in every sample (reported in the cleaning).
    transpose : bool
        The file holds genes as rows where samples were expected (or the reverse): swap them.
    nan : {"error", "drop-genes", "drop-samples"}
        What to do about NaN or infinite values.
    drop_unlabelled : bool
        Remove the samples without a label (empty, ``NA``, NaN...) instead of refusing them.

    Returns
    -------
    dataset : Dataset
        With ``path=None`` and ``attrs`` still empty.
    cleaning : Cleaning
        Genes and samples removed.
    """
    check_choice("dtype", dtype, DTYPES)
    check_choice("nan", nan, NAN_POLICIES)
    cleaning = Cleaning()
    X = np.asarray(table.X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError(f"{path}: the expression matrix has {X.ndim} dimension(s), expected 2")
    if transpose:
        X = X.T
        table.gene_names, table.sample_names = table.sample_names, table.gene_names
    table.X = X
    if table.gene_names is None:
        table.gene_names = [f"g{j + 1}" for j in range(X.shape[1])]
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"{path}: the matrix is empty ({X.shape[0]} samples x {X.shape[1]} genes)")
    labels = np.asarray(table.labels).ravel()
    if labels.size != X.shape[0]:
        hint = "; try --transpose" if labels.size == X.shape[1] else ""
        raise DataError(f"{path}: {labels.size} labels for {X.shape[0]} samples "
                        f"(the label count must match the sample count{hint})")
    table.labels = labels
    _check_unique(table.gene_names, "gene", path)
    if table.sample_names is not None:
        _check_unique(table.sample_names, "sample", path)
    _check_labels(table, path, drop_unlabelled, cleaning)
    _check_finite(table, path, nan, cleaning)
    y, class_names = encode_labels(table.labels, table.class_order)
    if len(class_names) < 2:
        raise DataError(
            f"{path}: a single class ({class_names[0]!r}, {y.size} samples); "
            "selecting genes needs at least two classes"
        )
    if drop_constant:
        _drop_constant(table, cleaning)
        if table.X.shape[1] == 0:
            raise DataError(f"{path}: every gene is constant")
    dataset = Dataset(
        X=np.ascontiguousarray(table.X, dtype=np.dtype(dtype)),
        y=y,
        class_names=class_names,
        gene_names=[str(n) for n in table.gene_names],
        sample_names=None if table.sample_names is None else [str(n) for n in table.sample_names],
    )
    return dataset, cleaning
