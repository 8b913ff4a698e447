"""The checks every reader makes of a task's stored figures, before trusting them.

A task's record (:class:`~hpcswarm.store.records.TaskRecord`) is read back from a results
file (``report``) and from a checkpoint (``--resume``), each with its row of the ``/tasks``
table: its counts, its derived accuracies and sizes. :func:`stored_task_problem` is the one
check both readers make: the counts are counts (``0 <= correct <= total``, per class adding up
to the whole), fitness values lie between the empty subset's and a perfect score, gene and
sample indices are distinct and inside the dataset, and every figure the row stores beside
the counts (accuracies, balanced accuracies, subset sizes) is the one its counts give. A
balanced accuracy that was not counted (a file written before counts per class were kept) is
NaN, which stays legal. Each problem is one phrase naming the field, which the reader puts
after the file's name.
"""

import math

import numpy as np

from hpcswarm.store.records import WORST_FITNESS, column_value


_COUNT_PAIRS = (("train_correct", "train_total"), ("test_correct", "test_total"),
                ("baseline_correct", "baseline_total"), ("pca_correct", "pca_total"))
"""The (correct, total) counts of a record (and of its front's points and refined subset)."""


def _indices_problem(name, values, bound):
    """What makes ``values`` no 1-D array of distinct indices in [0, ``bound``) (a phrase),
    or None (``bound`` None: no upper bound)."""
    values = np.asarray(values)
    if values.ndim != 1 or (values.size and values.dtype.kind not in "iu"):
        return f"{name} is no 1-D array of indices"
    high = np.inf if bound is None else bound
    if values.size and (values.min() < 0 or values.max() >= high):
        return f"{name} holds indices outside [0, {high})"
    if np.unique(values).size != values.size:
        return f"{name} holds an index twice"
    return None


def _counts_problem(where, source, none=()):
    """The first ``correct``/``total`` pair of ``source`` (a record, a front point, a
    refined subset) that is no accuracy in [0, 1], as a phrase, or None; a pair in ``none``
    (a front point's ``(-1, -1)``: no held-out data) stands for no accuracy."""
    for correct, total in _COUNT_PAIRS:
        if not hasattr(source, correct):
            continue
        pair = (getattr(source, correct), getattr(source, total))
        if pair not in none and not 0 <= pair[0] <= pair[1]:
            return (f"{where}{correct} = {getattr(source, correct)} of {total} = "
                    f"{getattr(source, total)} is no accuracy in [0, 1]")
    return None


def _class_counts_problem(where, source, prefix="test"):
    """What makes the counts per class of ``source`` (a record or a refined subset) under
    ``prefix`` (``test``; a record's ``baseline`` and ``pca`` too) no counts of its
    predictions (a phrase), or None: as many correct counts as totals, each
    ``0 <= correct <= total``, summing to ``{prefix}_correct`` and ``{prefix}_total``. None
    when it has none (a record of an earlier version)."""
    correct = getattr(source, f"{prefix}_class_correct")
    total = getattr(source, f"{prefix}_class_total")
    if not correct and not total:
        return None
    all_correct = getattr(source, f"{prefix}_correct")
    all_total = getattr(source, f"{prefix}_total")
    if (len(correct) != len(total) or any(not 0 <= c <= t for c, t in zip(correct, total))
            or sum(correct) != all_correct or sum(total) != all_total):
        return (f"{where}{prefix}_class_correct = {list(correct)} of {prefix}_class_total = "
                f"{list(total)} are no counts of {prefix}_correct = {all_correct} of "
                f"{prefix}_total = {all_total}")
    return None


def _fitness_problem(where, value):
    if not WORST_FITNESS <= value <= 1.0:  # NaN too
        return f"{where}train_fitness = {value!r} is outside [{WORST_FITNESS}, 1.0]"
    return None


def record_problem(record, n_genes=None, n_samples=None):
    """What makes a finished task's record impossible (a phrase naming the field), or None.

    Accuracies are counts ``0 <= correct <= total`` (per class too, adding up to the test's
    and the baselines' counts); fitness values lie between the empty
    subset's and a perfect score; gene indices are distinct and below ``n_genes``, sample
    indices below ``n_samples`` (when given); times, counts and the history are finite and
    not negative (the best fitness of the history excepted).
    """
    problems = [
        _counts_problem("", record),
        *(_class_counts_problem("", record, prefix) for prefix in ("test", "baseline", "pca")),
        _fitness_problem("", record.train_fitness),
        _indices_problem("selected_genes", record.genes, n_genes),
        _indices_problem("train_index", record.train_index, n_samples),
        _indices_problem("test_index", record.test_index, n_samples),
    ]
    for name in ("train_total", "test_total"):
        if getattr(record, name) < 1:
            problems.append(f"{name} = {getattr(record, name)} counts no sample")
    for name in ("seconds", "pca_components", "evaluations", "archive_hits"):
        value = getattr(record, name)
        if not 0 <= value < np.inf:
            problems.append(f"{name} = {value!r} is not a finite number >= 0")
    values = record.history.values
    if values.dtype.kind != "f" or not np.isfinite(values).all():
        problems.append("history holds values that are not finite")
    for i, point in enumerate(record.front):
        problems += [_counts_problem(f"front point {i}: ", point, none=((-1, -1),)),
                     _fitness_problem(f"front point {i}: ", point.fitness),
                     _indices_problem(f"front point {i}: genes", point.genes, n_genes)]
    refined = record.refined
    if refined is not None:
        problems += [_counts_problem("refined ", refined),
                     _class_counts_problem("refined ", refined),
                     _indices_problem("refined_genes", refined.genes, n_genes),
                     _indices_problem("refined_removed", refined.removed, n_genes)]
        frequency = np.zeros(0) if refined.frequency is None else refined.frequency
        if not ((frequency >= 0) & (frequency <= 1)).all():  # NaN too
            problems.append("refined_frequency holds values outside [0, 1]")
    return next((problem for problem in problems if problem is not None), None)


STORED_FIGURES = ("test_accuracy", "test_balanced_accuracy", "subset_size",
                  "baseline_accuracy", "baseline_balanced_accuracy", "pca_accuracy",
                  "pca_balanced_accuracy", "refined_size", "refined_test_accuracy",
                  "refined_test_balanced_accuracy")
"""The columns of a task's ``/tasks`` row that are derived from its record: each must be the
value its counts (or its genes) give (:func:`~hpcswarm.store.records.column_value`)."""


def _figure(value):
    """A stored or derived figure as a float (None, a figure not counted, as NaN)."""
    return math.nan if value is None else float(value)


def row_problem(row, record):
    """The first figure of ``row`` (a task's ``/tasks`` row: a mapping of column -> value)
    that is not the one ``record``'s counts give, as a phrase naming it, or None.

    An accuracy must lie in [0, 1], and each figure must equal its record's: an accuracy or
    balanced accuracy the one its counts give (NaN where a balanced accuracy was not
    counted), a size the number of its genes; a column the row lacks (a file written before
    it existed) is not checked."""
    for column in STORED_FIGURES:
        if column not in row or (column.startswith("refined_") and record.refined is None):
            continue
        stored = _figure(row[column])
        try:
            expected = _figure(column_value(record, column))
        except ZeroDivisionError:  # a baseline with no total (read as 0 from an old file)
            expected = math.nan
        if column.endswith("accuracy") and not (0 <= stored <= 1 or math.isnan(stored)):
            return f"{column} = {stored!r} is no accuracy in [0, 1]"
        if math.isnan(stored) and math.isnan(expected):
            continue
        if math.isclose(stored, expected, rel_tol=1e-12, abs_tol=0.0):
            continue
        if column.endswith("size"):
            holder = "refined subset" if column.startswith("refined_") else "task"
            return f"{column} = {stored:g}, but the {holder} holds {expected:g} genes"
        given = ("no counts per class were kept" if math.isnan(expected)
                 else f"its counts give {expected!r}")
        return f"{column} = {stored!r}, but {given}"
    return None


def stored_task_problem(record, row, n_genes=None, n_samples=None):
    """What makes a stored task impossible (a phrase naming the field), or None: its record
    (:func:`record_problem`), then the figures its row stores beside the counts
    (:func:`row_problem`)."""
    return record_problem(record, n_genes, n_samples) or row_problem(row, record)
