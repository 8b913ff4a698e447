"""Paired one-sided Wilcoxon signed-rank test of two methods over matched (run, fold) tasks.

Two rows of a report that ran on the same outer splits (the same job seed, or one row derived
from the other, such as a search and its pruned subsets) were tested on the same held-out
samples in every (run, fold) task. The test compares their per-fold accuracies pair by pair
(Wilcoxon 1945, "Individual comparisons by ranking methods"): the differences ``d_i``, with the
pairs of equal accuracy dropped (Wilcoxon's handling of zero differences, as
``scipy.stats.wilcoxon(zero_method="wilcox")``), are ranked by ``|d_i|`` (tied ``|d_i|`` share
their mean rank) and ``T+``, the sum of the ranks of the positive differences, is referred to
its distribution under the null hypothesis that each sign is + or - with probability 1/2.

That distribution is computed exactly, conditional on the observed ranks, for up to
:data:`EXACT_PAIRS` pairs that differ: with no tied ``|d_i|`` it is the distribution of
``scipy.stats.wilcoxon(method="exact")``; with ties it is the exact permutation distribution of
the mid-rank statistic given the observed ranks (a conditional test), where scipy would fall
back to an approximation.
Above :data:`EXACT_PAIRS` the normal approximation with the tie correction is used
(``scipy.stats.wilcoxon(method="approx")``, no continuity correction).

With ``m`` pairs that differ, the smallest one-sided p-value any outcome can give is
``2 ** -m`` (every difference of the same sign): 1/8 with three pairs, 1/32 with five. When
that exceeds ``alpha`` the test cannot reject whatever the accuracies, and a report must say
so rather than print "no significant difference".
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, rankdata

EXACT_PAIRS = 400
"""Most pairs that differ for which the exact distribution is computed (above: normal
approximation)."""

ALTERNATIVES = ("greater", "less")

_DECIMALS = 12
"""Differences are rounded to this many decimals before zeros and ties are found, so that
``7/8 - 6/8`` and ``1/8`` are one value (accuracies are ratios of small integers)."""


@dataclass(frozen=True)
class PairedTest:
    """The outcome of :func:`signed_rank_test`.

    Attributes
    ----------
    alternative : str
        ``"greater"`` (the first sample above the second) or ``"less"``.
    p_value : float
        One-sided p-value (1.0 when no pair differs).
    statistic : float
        ``T+``, the rank sum of the positive differences.
    pairs : int
        Matched pairs given.
    nonzero : int
        Pairs whose difference is not zero (the ``m`` the test ranks).
    ties : bool
        Whether some nonzero ``|d_i|`` are tied (mid-ranks used).
    method : str
        ``"exact"``, ``"exact (mid-ranks, ties)"``, ``"normal approximation (tie-corrected)"``
        or ``"none (no pair differs)"``.
    min_p : float
        Smallest one-sided p-value reachable with these pairs, ``2 ** -nonzero``.
    """

    alternative: str
    p_value: float
    statistic: float
    pairs: int
    nonzero: int
    ties: bool
    method: str
    min_p: float

    def reachable(self, alpha):
        """Whether some outcome of these pairs could reach ``alpha`` (``min_p <= alpha``)."""
        return self.min_p <= alpha

    def describe(self, alpha):
        """One line: the test, n, p; or why it cannot reach ``alpha``."""
        text = (f"one-sided Wilcoxon signed-rank ({self.alternative}), {self.method}, "
                f"n = {self.nonzero} pairs that differ of {self.pairs}, p = {self.p_value:.3g}")
        if not self.reachable(alpha):
            text += (f"; too few runs and folds to reach alpha = {alpha}: the smallest p "
                     f"reachable is {self.min_p:.3g}")
        return text


def _checked(x, y):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or y.shape != x.shape:
        raise ValueError(f"x and y must be 1-D of the same length, got shapes {x.shape} and "
                         f"{y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite")
    return x, y


def signed_rank_null(doubled_ranks):
    """Exact null distribution of ``2 T+`` for the given doubled ranks.

    Parameters
    ----------
    doubled_ranks : ndarray of int
        Twice the (mid-)rank of each nonzero difference (integers: mid-ranks are multiples of
        1/2).

    Returns
    -------
    ndarray of float64
        ``P(2 T+ = s)`` for ``s = 0 .. sum(doubled_ranks)``: each rank enters the sum with
        probability 1/2, independently.
    """
    total = int(np.sum(doubled_ranks))
    probability = np.zeros(total + 1)
    probability[0] = 1.0
    reach = 0
    for rank in np.asarray(doubled_ranks, dtype=np.int64):
        shifted = np.zeros_like(probability)
        shifted[rank:reach + rank + 1] = probability[:reach + 1]
        probability = 0.5 * (probability + shifted)
        reach += int(rank)
    return probability


def signed_rank_test(x, y, alternative="greater"):
    """One-sided paired Wilcoxon signed-rank test of ``x`` against ``y``.

    Parameters
    ----------
    x, y : array-like of float, of shape (n_pairs,)
        Matched values (per-fold accuracies of two methods on the same test samples).
    alternative : {"greater", "less"}
        ``"greater"``: the differences ``x - y`` tend to be positive; ``"less"``: negative.

    Returns
    -------
    PairedTest
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got "
                         f"{alternative!r}")
    x, y = _checked(x, y)
    d = np.round(x - y, _DECIMALS)
    d = d[d != 0]
    n_pairs, m = x.size, d.size
    min_p = 0.5 ** m
    if m == 0:
        return PairedTest(alternative, 1.0, 0.0, n_pairs, 0, False, "none (no pair differs)",
                          1.0)
    ranks = rankdata(np.abs(d))  # mid-ranks: multiples of 1/2
    ties = bool(np.unique(np.abs(d)).size < m)
    statistic = float(ranks[d > 0].sum())
    if m <= EXACT_PAIRS:
        null = signed_rank_null(np.rint(2 * ranks).astype(np.int64))
        observed = int(round(2 * statistic))
        tail = null[observed:].sum() if alternative == "greater" else null[:observed + 1].sum()
        p = float(min(1.0, tail))
        method = "exact (mid-ranks, ties)" if ties else "exact"
    else:
        mean = m * (m + 1) / 4.0
        _, counts = np.unique(np.abs(d), return_counts=True)
        variance = m * (m + 1) * (2 * m + 1) / 24.0 - np.sum(counts ** 3 - counts) / 48.0
        z = (statistic - mean) / math.sqrt(variance)
        p = float(norm.sf(z) if alternative == "greater" else norm.cdf(z))
        method = "normal approximation (tie-corrected)"
    return PairedTest(alternative, p, statistic, n_pairs, m, ties, method, min_p)


def compare(x, y, alpha=0.05):
    """Whether ``x`` is significantly above or below ``y``: both one-sided tests.

    Each direction is tested at ``alpha``, rejecting at ``p <= alpha`` (a loss and a gain
    are separate questions; a row that shows either has passed a one-sided test at
    ``alpha``), the rule by which :meth:`PairedTest.reachable` says whether ``2 ** -m``
    can reach ``alpha``.

    Parameters
    ----------
    x, y : array-like of float, of shape (n_pairs,)
        Matched per-fold accuracies.
    alpha : float, default 0.05

    Returns
    -------
    tuple of (str, PairedTest)
        ``"+"`` when ``x`` is significantly greater (one-sided ``p <= alpha``), ``"-"`` when
        significantly less, ``"="`` otherwise; and the one-sided test with the smaller p-value (the direction of the
        observed differences).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    greater = signed_rank_test(x, y, "greater")
    less = signed_rank_test(x, y, "less")
    if greater.p_value <= alpha:
        return "+", greater
    if less.p_value <= alpha:
        return "-", less
    return "=", (greater if greater.p_value <= less.p_value else less)
