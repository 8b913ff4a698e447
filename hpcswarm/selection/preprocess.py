"""In-fold preprocessing: ordered steps fitted on a task's training rows, applied to its test rows.

Steps (the ``[preprocess]`` table of a job, in the table's order, or ``--preprocess`` of
``evaluate``), one :class:`Step` row each in :data:`STEPS`:

``log2 = C``
    ``log2(x + C)`` (pseudocount ``C``, ``true`` meaning 1), for counts or intensities on a
    linear scale. Nothing is fitted; a value with ``x + C <= 0`` is an error (the data are
    probably on a log scale already).
``zscore = true``
    Per gene, subtract the training mean and divide by the training standard deviation
    (``ddof=0``; a gene constant on the training rows gets scale 1).
``minmax = true``
    Per gene, map the training minimum and maximum to 0 and 1 (a constant gene: range 1).
``top_variance = N``
    Keep the N genes of highest variance on the training rows (after the steps before it).
``top_anova = N``
    Keep the N genes of highest ANOVA F statistic between the classes of the training rows
    (:func:`sklearn.feature_selection.f_classif`; genes with an undefined F rank last).

Ties between genes are broken by the lower original index.

Fitting reads the training rows a block at a time where that gives the same bits as all rows
at once (:attr:`Step.fit_blocks`: a minimum and a maximum are exact whatever the order of
their terms), so that min-max scaling holds no float64 copy of the rows. The steps whose fit
is a sum (z-scoring's mean and standard deviation, a variance, an ANOVA F statistic) are
fitted on all rows at once, by numpy's and scikit-learn's own reductions: a floating-point
sum depends on the order of its terms, and blocks would change the fitted values' last bits
(and with them the genes a filter keeps). Fitting on the training rows only
is what keeps the test rows out of the selection (Ambroise & McLachlan 2002: a filter fitted on
all samples before cross-validation biases the error estimate, as a wrapper does). The fitted
parameters (kept genes as indices of the original dataset, means, scales, minima, ranges) are
plain arrays, recorded per task in the results file.
"""

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hpcswarm.errors import ParameterError

BLOCK_VALUES = 1 << 18
"""Values (2 MiB of float64) of one block of training rows fitted or transformed at a time."""

BLOCK_COPIES = 4
"""Blocks of rows that fitting or transforming one block holds at a time: the rows read,
their float64 values, a step's output and its intermediate (``x + C`` before its ``log2``,
``x - minimum`` before its division)."""


@dataclass(frozen=True)
class Step:
    """One preprocessing step.

    Attributes
    ----------
    name : str
        Its key in ``[preprocess]`` and ``--preprocess``.
    parse : callable
        ``(value, key) -> parsed``: the value a job or the command line gives (not
        ``false``, which leaves the step out), checked; ParameterError naming ``key``.
    fit : callable
        ``(values, y, parsed, kept) -> dict``: the step's fitted parameters on training
        ``values`` (rows x the genes ``kept``, original indices) of classes ``y``.
    apply : callable
        ``(fitted, values, kept) -> (values, kept)``: the fitted step on rows of ``kept``.
    filters : bool, default False
        It keeps some genes (at most its ``N``) rather than transforming values.
    fit_blocks : callable, optional
        ``(blocks, parsed) -> dict``: the same fitted parameters, bit for bit, from an
        iterable of blocks of the training rows (float64, all genes, in row order); None: the
        fit needs all rows at once (a sum, whose value depends on the order of its terms).
    """

    name: str
    parse: Callable
    fit: Callable
    apply: Callable
    filters: bool = False
    fit_blocks: Callable = None


def _pseudocount(value, key):
    pseudocount = 1.0 if value is True else value
    if isinstance(pseudocount, bool) or not isinstance(pseudocount, (int, float)) \
            or not 0 <= pseudocount < float("inf"):
        raise ParameterError(f"{key} must be true or a finite pseudocount >= 0, got {value!r}")
    return float(pseudocount)


def _switch(value, key):
    if value is not True:
        raise ParameterError(f"{key} must be true or false, got {value!r}")
    return None


def _n_genes(value, key):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{key} must be a number of genes >= 1, got {value!r}")
    return int(value)


def _log2(fitted, values, kept):
    shifted = values + fitted["pseudocount"]
    if not (shifted > 0).all():
        raise ParameterError(f"preprocess.log2: {int((shifted <= 0).sum())} value(s) "
                             f"with x + {fitted['pseudocount']:g} <= 0 (already on a log "
                             f"scale, or negative values?)")
    return np.log2(shifted), kept


def _zscore_fit(values, y, parsed, kept):
    varies = values.max(axis=0) > values.min(axis=0)  # std of a constant is not 0
    return {"mean": values.mean(axis=0), "scale": np.where(varies, values.std(axis=0), 1.0)}


def _minmax_fit(values, y, parsed, kept):
    low, high = values.min(axis=0), values.max(axis=0)
    return {"minimum": low, "range": np.where(high > low, high - low, 1.0)}


def _minmax_fit_blocks(blocks, parsed):
    """:func:`_minmax_fit` a block of rows at a time: each gene's minimum and maximum over
    the blocks' own. Exact, and the same bits: numpy's elementwise minimum keeps its second
    operand on a tie (0.0 against -0.0), as its reduction over rows does row by row, so the
    minimum of the blocks' minima is the one of all rows (signed zeros included)."""
    low = high = None
    for block in blocks:
        if low is None:
            low, high = block.min(axis=0), block.max(axis=0)
        else:
            np.minimum(low, block.min(axis=0), out=low)
            np.maximum(high, block.max(axis=0), out=high)
    return {"minimum": low, "range": np.where(high > low, high - low, 1.0)}


def _anova_fit(values, y, n, kept):
    from sklearn.feature_selection import f_classif

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", UserWarning)  # constant genes: F undefined
        f_stat, _ = f_classif(values, y)
    return {"n": n, "genes": _top(f_stat, n, kept)}


def _keep(fitted, values, kept):
    """A filter's fitted genes kept of the rows of ``kept``."""
    positions = np.searchsorted(kept, fitted["genes"])
    return values[:, positions], fitted["genes"]


STEPS = {step.name: step for step in (
    Step("log2", _pseudocount, lambda values, y, pseudocount, kept: {"pseudocount": pseudocount},
         _log2, fit_blocks=lambda blocks, pseudocount: {"pseudocount": pseudocount}),
    Step("zscore", _switch, _zscore_fit,
         lambda fitted, values, kept: ((values - fitted["mean"]) / fitted["scale"], kept)),
    Step("minmax", _switch, _minmax_fit,
         lambda fitted, values, kept: ((values - fitted["minimum"]) / fitted["range"], kept),
         fit_blocks=_minmax_fit_blocks),
    Step("top_variance", _n_genes,
         lambda values, y, n, kept: {"n": n, "genes": _top(values.var(axis=0), n, kept)},
         _keep, filters=True),
    Step("top_anova", _n_genes, _anova_fit, _keep, filters=True),
)}
"""Every preprocessing step by name."""


def parse_steps(spec, where="preprocess"):
    """Ordered ``(name, value)`` steps from a job table or an ``evaluate`` option.

    Parameters
    ----------
    spec : dict or str or None
        The ``[preprocess]`` table (keys in document order), or text such as
        ``"log2,zscore,top_variance=500"`` (``log2=0.5`` sets the pseudocount).
    where : str
        Named in error messages.

    Returns
    -------
    list of (str, float or int or None)
        ``log2``: the pseudocount; filters: N; ``zscore``/``minmax``: None. Entries set to
        ``false`` are left out.

    Raises
    ------
    ParameterError
        An unknown step or a bad value.
    """
    if spec is None:
        return []
    if isinstance(spec, str):
        items = []
        for part in (p.strip() for p in spec.split(",") if p.strip()):
            name, sep, value = part.partition("=")
            items.append((name.strip(), _text_value(value.strip()) if sep else True))
    elif isinstance(spec, dict):
        items = list(spec.items())
    else:
        raise ParameterError(f"{where} must be a table of steps, got {spec!r}")
    steps = []
    for name, value in items:
        key = f"{where}.{name}"
        if name not in STEPS:
            raise ParameterError(f"{key} is not a preprocessing step; steps: {', '.join(STEPS)}")
        if value is not False:
            steps.append((name, STEPS[name].parse(value, key)))
    return steps


def _text_value(text):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass
class Fitted:
    """Preprocessing fitted on one task's training rows.

    Attributes
    ----------
    steps : list of dict
        Per step, its name and fitted parameters: ``pseudocount``; ``mean`` and ``scale``;
        ``minimum`` and ``range``; ``genes`` (kept, as indices of the original dataset).
    genes : ndarray of int64
        The genes the transformed matrix holds, as indices of the original dataset.
    """

    steps: list = field(default_factory=list)
    genes: np.ndarray = None

    def transform(self, rows):
        """Apply the fitted steps to sample rows of the ORIGINAL genes.

        Parameters
        ----------
        rows : ndarray of shape (n_rows, n_original_genes)

        Returns
        -------
        ndarray of shape (n_rows, len(self.genes))
            float64, a new array.
        """
        kept = np.arange(np.asarray(rows).shape[1])
        values = np.array(rows, dtype=np.float64)
        for step in self.steps:
            values, kept = _apply(step, values, kept)
        return values

    def record(self):
        """The steps as plain values (lists), for the results file."""
        return [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in step.items()}
                for step in self.steps]


def _apply(step, values, kept):
    """One fitted step on ``values`` (rows x the genes ``kept``)."""
    return STEPS[step["step"]].apply(step, values, kept)


def _top(scores, n, kept):
    """The ``n`` genes of highest score (NaN last, ties by lower index), sorted by index."""
    order = np.argsort(-np.nan_to_num(scores, nan=-np.inf), kind="stable")
    return np.sort(kept[order[:n]])


def row_blocks(rows, start=0, stop=None):
    """Consecutive blocks of the rows ``start`` to ``stop`` (default all) of ``rows``
    (anything of 2-D ``shape`` whose slices of rows are arrays), each of about
    :data:`BLOCK_VALUES` values (one row at least)."""
    stop = rows.shape[0] if stop is None else stop
    step = max(1, BLOCK_VALUES // max(1, rows.shape[1]))
    return (rows[begin:min(begin + step, stop)] for begin in range(start, stop, step))


def fit(steps, rows, y):
    """Fit ``steps`` on training rows.

    Parameters
    ----------
    steps : list of (str, value)
        From :func:`parse_steps`.
    rows : ndarray of shape (n_train, n_genes)
        The training rows of the original dataset.
    y : ndarray of shape (n_train,)
        Their class codes (for ``top_anova``).

    Returns
    -------
    fitted : Fitted
    transformed : ndarray of shape (n_train, len(fitted.genes))
        The training rows transformed (what the search then reads).
    """
    values = np.asarray(rows, dtype=np.float64)
    return _fit(steps, values, y, _unfitted(values.shape[1]), transform=True)


def fit_parameters(steps, rows, y):
    """The :class:`Fitted` steps of :func:`fit`, without the transformed rows (a front door
    writes them gene-major itself, :func:`hpcswarm.selection.prepare.prepare`).

    The leading steps that fit block by block (:attr:`Step.fit_blocks`: ``log2``,
    ``minmax``) read :func:`row_blocks` of ``rows`` through the steps before them, so that
    they hold no float64 copy of the rows; from the first step that needs all rows at once,
    the rows transformed by the steps before it are made once (in float64, block by block)
    and the rest is fitted as :func:`fit` does; the output of the last step is never made.

    Parameters
    ----------
    steps : list of (str, value)
    rows : ndarray or array-like of shape (n_train, n_genes)
        The training rows: an array, or anything of that ``shape`` whose slices of rows are
        arrays (a task's rows of a memory-mapped dataset, read a block at a time).
    y : ndarray of shape (n_train,)
    """
    fitted = _unfitted(rows.shape[1])
    for position, (name, value) in enumerate(steps):
        if STEPS[name].fit_blocks is None:
            return _fit(steps[position:], _transformed(fitted, rows), y, fitted,
                        transform=False)[0]
        blocks = (fitted.transform(block) for block in row_blocks(rows))
        fitted.steps.append({"step": name, **STEPS[name].fit_blocks(blocks, value)})
    return fitted


def _unfitted(n_genes):
    """No step fitted yet: every gene kept."""
    return Fitted(genes=np.arange(n_genes, dtype=np.int64))


def _transformed(fitted, rows):
    """All ``rows`` through the steps ``fitted`` so far, in float64: ``rows`` itself when it
    is a float64 array and no step was fitted, else one copy written block by block."""
    if not fitted.steps and isinstance(rows, np.ndarray):
        return np.asarray(rows, dtype=np.float64)
    values = np.empty((rows.shape[0], fitted.genes.size), dtype=np.float64)
    start = 0
    for block in row_blocks(rows):
        values[start:start + block.shape[0]] = fitted.transform(block)
        start += block.shape[0]
    return values


def _fit(steps, values, y, fitted, transform):
    """Fit ``steps`` on ``values`` (float64 rows of the genes ``fitted.genes``) after the
    steps ``fitted`` holds; with ``transform`` the last step's output too."""
    kept = fitted.genes
    for position, (name, value) in enumerate(steps):
        step = {"step": name, **STEPS[name].fit(values, y, value, kept)}
        if transform or position < len(steps) - 1:
            values, kept = _apply(step, values, kept)
        elif STEPS[name].filters:
            kept = step["genes"]
        fitted.steps.append(step)
    fitted.genes = kept
    return fitted, values


def kept_genes(steps, n_genes):
    """How many of ``n_genes`` genes the fitted ``steps`` keep (what a task's search then
    reads): each filter the ``N`` best of those before it, all of them when fewer; known
    before any fit."""
    for name, value in steps:
        if STEPS[name].filters:
            n_genes = min(int(value), n_genes)
    return n_genes


def fitting_bytes(steps, n_train, n_genes):
    """Bytes that fitting ``steps`` on ``n_train`` x ``n_genes`` training rows holds at its
    peak (:func:`fit_parameters`; pre-flight estimate).

    Steps fitted block by block hold :data:`BLOCK_COPIES` blocks of rows (of
    :func:`row_blocks`: about :data:`BLOCK_VALUES` values, at most all rows, at least one)
    and four values per gene and step (minimum, maximum, a block's, the range). From the
    first step fitted on all rows at once on, the rows in float64 besides, and two
    temporaries of their size (a step's output and its intermediate, such as z-scoring's
    ``values - mean`` before its division; the deviations of a variance; scikit-learn's
    rows by class and their squares for the ANOVA F).
    """
    block_rows = min(n_train, max(1, BLOCK_VALUES // max(1, n_genes)))
    held = BLOCK_COPIES * 8 * block_rows * n_genes + 4 * 8 * n_genes * len(steps)
    if all(STEPS[name].fit_blocks is not None for name, _ in steps):
        return held
    return held + 3 * 8 * n_train * n_genes


def transformed_bytes(steps, n_train, n_genes, copy_share=1.0):
    """Bytes a rank of a task with preprocessing holds for it (pre-flight estimate).

    The search reads a transformed gene-major copy of the training rows (of the genes the
    steps keep, :func:`kept_genes`) instead of the shared memory-mapped file; the ranks of a
    rank group on one node hold one copy between them
    (:func:`hpcswarm.selection.prepare.prepare`), so a rank counts ``copy_share`` of it.
    Fitting the steps (:func:`fitting_bytes`) is counted beside it (it ends before the copy
    is made: an upper bound).

    Parameters
    ----------
    steps : list of (str, value)
    n_train, n_genes : int
    copy_share : float, default 1
        The copies on a rank's node over its ranks: the rank groups with ranks on the node
        over those ranks (1: a private copy, a serial search).
    """
    if not steps:
        return 0
    copy = 8 * n_train * kept_genes(steps, n_genes)
    return fitting_bytes(steps, n_train, n_genes) + math.ceil(copy * copy_share)


def score_in_folds(X, y, mask, steps, folds, k):
    """k-NN validation of ``mask``'s genes with ``steps`` fitted inside every fold.

    In each fold (those the fitness engine makes, :func:`hpcswarm.fitness.make_folds`), the
    steps are fitted on the training rows of the chosen genes and applied to the held-out
    rows, which are then scored by k-NN on every gene the steps keep
    (:func:`hpcswarm.fitness.score_split`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
    y : ndarray of shape (n_samples,)
    mask : ndarray of bool, shape (n_genes,)
    steps : list of (str, value)
    folds : sequence of (train_idx, test_idx)
    k : int

    Returns
    -------
    Score
        Counts summed over the folds, per class of ``y`` too (its balanced accuracy is that
        of the pooled held-out predictions).
    """
    from hpcswarm.fitness import score_split

    genes, classes = np.flatnonzero(mask), np.unique(y)
    scores = []
    for train, test in folds:
        fitted, train_rows = fit(steps, np.asarray(X[train])[:, genes], y[train])
        test_rows = fitted.transform(np.asarray(X[test])[:, genes])
        scores.append(score_split(train_rows, y[train], test_rows, y[test],
                                  np.ones(train_rows.shape[1], dtype=bool), k, classes))
    return sum(scores)
