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

Ties between genes are broken by the lower original index. Fitting on the training rows only
is what keeps the test rows out of the selection (Ambroise & McLachlan 2002: a filter fitted on
all samples before cross-validation biases the error estimate, as a wrapper does). The fitted
parameters (kept genes as indices of the original dataset, means, scales, minima, ranges) are
plain arrays, recorded per task in the results file.
"""

import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hpcswarm.errors import ParameterError


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
    """

    name: str
    parse: Callable
    fit: Callable
    apply: Callable
    filters: bool = False


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
         _log2),
    Step("zscore", _switch, _zscore_fit,
         lambda fitted, values, kept: ((values - fitted["mean"]) / fitted["scale"], kept)),
    Step("minmax", _switch, _minmax_fit,
         lambda fitted, values, kept: ((values - fitted["minimum"]) / fitted["range"], kept)),
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
    return _fit(steps, rows, y, transform=True)


def fit_parameters(steps, rows, y):
    """The :class:`Fitted` steps of :func:`fit`, without the transformed rows: the output of
    the last step is never made (a front door writes it gene-major itself,
    :func:`hpcswarm.selection.prepare.prepare`), so that one value step costs no copy of
    the rows."""
    return _fit(steps, rows, y, transform=False)[0]


def _fit(steps, rows, y, transform):
    values = np.asarray(rows, dtype=np.float64)
    kept = np.arange(values.shape[1], dtype=np.int64)
    fitted = Fitted()
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


def transformed_bytes(steps, n_train, n_genes):
    """Bytes of the private copies a task with preprocessing holds (pre-flight estimate).

    The search reads a transformed copy of the training rows instead of the shared
    memory-mapped file: while fitting, a step's input and output (8 bytes per training value
    each, at most all genes), then the transformed rows and their gene-major copy for the
    search. A filter step shrinks the latter to its N genes; the estimate counts all genes.
    """
    if not steps:
        return 0
    return 2 * 8 * n_train * n_genes


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
