"""Stability of gene selection across the folds and runs of a job, and the ranked gene list.

A signature a biologist validates should not change with the samples it was selected on.
Over the subsets S_1 .. S_T that a method selected in the T tasks (every fold of every run):

* Kuncheva's consistency index (Kuncheva 2007, "A stability index for feature selection",
  Eq. 4) of a pair of subsets of equal size k out of n genes with r genes in common,
  ``(r n - k^2) / (k (n - k))``: the overlap corrected for the overlap of two random subsets
  (``k^2 / n``), 1 for identical subsets, about 0 for independent ones. For subsets of sizes
  ``k_a != k_b`` (our searches fix no size) the same correction is taken with the expected
  overlap ``k_a k_b / n`` and the largest possible one ``min(k_a, k_b)``:
  ``(r - k_a k_b / n) / (min(k_a, k_b) - k_a k_b / n)``, which is Kuncheva's index when the
  sizes agree (Lustgarten et al. 2009 correct for chance the same way but divide by the
  range of r, which differs from Kuncheva's for equal sizes). A pair in which a subset is
  empty or holds every gene says nothing and is left out.
* The Jaccard index ``|S_a & S_b| / |S_a | S_b|`` (Kalousis et al. 2007), not corrected for
  chance: large subsets overlap by chance.

Both are averaged over the ``T (T - 1) / 2`` pairs, and separately over the pairs of one run's
folds (how much a signature depends on the samples it saw) and the pairs of different runs.

* The stability estimator of Nogueira, Sechidis & Brown (2018, "On the Stability of Feature
  Selection Algorithms", JMLR 18(174), Definition 4) with its variance (their Theorem 7) and
  approximate confidence interval (Corollary 9). With ``p_f`` the fraction of the T subsets
  that hold gene f and ``k`` the mean subset size out of ``d`` genes,
  ``phi = 1 - (T / (T - 1)) mean_f p_f (1 - p_f) / ((k / d) (1 - k / d))``: Kuncheva's
  chance correction for subsets of any size, with a known sampling distribution, so that a
  figure from ten folds comes with the interval it deserves.
* The correlation-aware estimator of Sechidis, Papangelou, Nogueira, Weatherall & Brown
  ("On the Stability of Feature Selection in the Presence of Feature Correlations",
  ECML-PKDD 2019, proceedings 2020, LNCS 11906, pp. 327-342): with ``Z`` the ``T x d``
  matrix of the subsets' indicators, ``S`` its unbiased sample covariance, ``C`` a
  ``d x d`` similarity matrix of the genes (1 on the diagonal) and ``Sigma_0`` the
  covariance of ``Z`` when every subset is drawn at random with the same sizes (diagonal
  ``(k/d)(1 - k/d)``, off the diagonal ``mean(k_i (k_i - 1)) / (d (d - 1)) - (k/d)^2``),
  ``phi_C = 1 - tr(C S) / tr(C Sigma_0)``. A fold that selects gene b where another selected
  a gene a that correlates with it is not counted as a change of mind: the covariance of a
  and b, negative for such a swap, offsets their variances. With ``C`` the identity it is
  Nogueira's estimate. The authors' code takes ``C`` as given; here it is built as Bommert's
  ``stabm`` (``stabilitySechidis``) builds it from a similarity matrix: the absolute Pearson
  correlation of two genes over all samples where it reaches :data:`SIMILARITY_THRESHOLD`,
  else 0 (:func:`correlated_pairs`).
"""

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.stats import rankdata


def _membership(subsets, n_genes):
    member = np.zeros((len(subsets), n_genes), dtype=np.float64)
    for row, genes in enumerate(subsets):
        member[row, np.asarray(genes, dtype=np.int64)] = 1.0
    return member


def _selection_frequencies(subsets, n_genes):
    """``(member, frequency, sizes)``: the tasks x genes 0/1 matrix ``Z`` of Nogueira et al.
    (2018), each gene's selection frequency ``p_f`` (its column means) and each task's size
    ``k_i`` (its row sums), the quantities both estimates start from."""
    member = _membership(subsets, n_genes)
    return member, member.mean(axis=0), member.sum(axis=1)


def stability(subsets, n_genes):
    """Mean pairwise Kuncheva index and Jaccard index of selected subsets.

    Parameters
    ----------
    subsets : sequence of array-like of int
        The genes selected in each task.
    n_genes : int

    Returns
    -------
    dict
        ``kuncheva``, ``jaccard`` (None when no pair qualifies) and ``pairs`` (the number of
        pairs averaged for Kuncheva's index).
    """
    member = _membership(subsets, n_genes)
    common = member @ member.T  # exact: integer counts below 2**53
    return _pair_means(common, np.triu_indices(len(subsets), k=1), n_genes)


def _pair_means(common, pairs, n_genes):
    """Mean Kuncheva and Jaccard indices over the index ``pairs`` ``(a, b)`` of the tasks,
    given ``common``, the genes each pair of tasks shares (its diagonal: the sizes)."""
    a, b = pairs
    sizes = np.diag(common)
    r, ka, kb = common[a, b], sizes[a], sizes[b]
    expected = ka * kb / n_genes
    top = np.minimum(ka, kb) - expected
    usable = (ka > 0) & (kb > 0) & (ka < n_genes) & (kb < n_genes) & (top > 0)
    kuncheva = (r[usable] - expected[usable]) / top[usable]
    union = ka + kb - r
    jaccard = r[union > 0] / union[union > 0]
    return {"kuncheva": float(kuncheva.mean()) if kuncheva.size else None,
            "jaccard": float(jaccard.mean()) if jaccard.size else None,
            "pairs": int(kuncheva.size)}


def nogueira(subsets, n_genes, alpha=0.05):
    """Nogueira et al.'s (2018) stability estimate with its (1 - alpha) confidence interval.

    Parameters
    ----------
    subsets : sequence of array-like of int
        The genes selected in each task (at least two tasks).
    n_genes : int
    alpha : float, default 0.05

    Returns
    -------
    dict or None
        ``estimate`` (Definition 4), ``variance`` (Theorem 7: ``4 / T^2 sum_i (phi_i -
        mean phi)^2`` over the per-subset terms ``phi_i``), ``lower`` and ``upper`` (the
        normal interval of Corollary 9) and ``alpha``. None with fewer than two subsets, or
        when the mean size is 0 or ``n_genes`` (the estimate is undefined).
    """
    n_sets = len(subsets)
    if n_sets < 2:
        return None
    member, frequency, sizes = _selection_frequencies(subsets, n_genes)
    mean_size = frequency.sum()
    spread = (mean_size / n_genes) * (1.0 - mean_size / n_genes)
    if spread <= 0:
        return None
    estimate = 1.0 - (n_sets / (n_sets - 1)) * np.mean(frequency * (1.0 - frequency)) / spread
    per_set = ((member @ frequency) / n_genes - sizes * mean_size / n_genes ** 2
               + estimate / 2 * (2 * sizes * mean_size / n_genes ** 2 - sizes / n_genes
                                 - mean_size / n_genes + 1)) / spread
    variance = 4.0 / n_sets ** 2 * float(np.sum((per_set - per_set.mean()) ** 2))
    half = NormalDist().inv_cdf(1 - alpha / 2) * variance ** 0.5
    return {"estimate": float(estimate), "variance": variance, "lower": float(estimate - half),
            "upper": float(estimate + half), "alpha": alpha}


SIMILARITY_THRESHOLD = 0.9
"""Least absolute Pearson correlation at which two genes are similar in :func:`sechidis`'s
matrix ``C`` (the default of ``stabm``'s ``stabilitySechidis``)."""

SIMILARITY_WORK = 2e10
"""Most multiply-adds (``n_samples x n_genes^2 / 2``) :func:`gene_similarity` spends on the
correlations (a few seconds on one core)."""


@dataclass(frozen=True)
class GeneSimilarity:
    """The off-diagonal entries of Sechidis et al.'s similarity matrix ``C``, sparse.

    Attributes
    ----------
    genes : ndarray of int64
        The genes whose correlations were computed (sorted); pairs outside them are 0.
    first, second : ndarray of int64
        The pairs ``first < second`` whose entry is not 0 (each pair once).
    weight : ndarray of float64
        Their entries, ``|r|`` of the pair.
    threshold : float
        The least ``|r|`` kept.
    """

    genes: np.ndarray
    first: np.ndarray
    second: np.ndarray
    weight: np.ndarray
    threshold: float


def correlated_pairs(X, genes, threshold=SIMILARITY_THRESHOLD, block_cells=1 << 22):
    """The pairs of ``genes`` whose absolute Pearson correlation over the rows of ``X`` is at
    least ``threshold``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
    genes : array-like of int
        Columns of ``X`` to correlate (a gene of constant value correlates with none).
    threshold : float, default :data:`SIMILARITY_THRESHOLD`
        In (0, 1].
    block_cells : int
        Most entries of the correlation matrix held at once.

    Returns
    -------
    GeneSimilarity
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must lie in (0, 1], got {threshold}")
    genes = np.unique(np.asarray(genes, dtype=np.int64))
    values = np.asarray(X[:, genes], dtype=np.float64)
    values = values - values.mean(axis=0)
    norms = np.sqrt(np.sum(values ** 2, axis=0))
    values = np.divide(values, norms, out=np.zeros_like(values), where=norms > 0)
    step = max(1, block_cells // max(1, genes.size))
    first, second, weight = [], [], []
    for start in range(0, genes.size, step):
        stop = min(start + step, genes.size)
        r = np.abs(values[:, start:stop].T @ values[:, start:])
        a, b = np.nonzero(r >= threshold)
        keep = a < b  # the upper triangle: row a is gene start + a, column b gene start + b
        first.append(genes[start + a[keep]])
        second.append(genes[start + b[keep]])
        weight.append(np.minimum(r[a[keep], b[keep]], 1.0))
    return GeneSimilarity(genes, np.concatenate(first) if first else genes[:0],
                          np.concatenate(second) if second else genes[:0],
                          np.concatenate(weight) if weight else np.zeros(0), float(threshold))


def gene_similarity(X, threshold=SIMILARITY_THRESHOLD, work=SIMILARITY_WORK):
    """Sechidis et al.'s ``C`` over every gene of ``X``, or None when that costs more than
    ``work`` multiply-adds (``n_samples x n_genes^2 / 2``; the measure is then not reported).

    There is no cheaper matrix over the selected genes only: ``tr(C Sigma_0)`` sums ``C``
    over every pair of genes (``Sigma_0``'s off-diagonal entries are all equal and not 0
    when the subsets' sizes differ), so correlated pairs that no subset holds still move the
    estimate. On modules of 100 correlated genes (2,000 genes, ten subsets of 2 to 400
    genes) ``C`` restricted to the selected genes gives -2.34 where the whole ``C`` gives
    -0.92.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
    threshold : float, default :data:`SIMILARITY_THRESHOLD`
    work : float, default :data:`SIMILARITY_WORK`

    Returns
    -------
    GeneSimilarity or None
    """
    n_samples, n_genes = X.shape
    if n_samples * n_genes ** 2 / 2 > work:
        return None
    return correlated_pairs(X, np.arange(n_genes), threshold)


def sechidis(subsets, n_genes, similarity=None):
    """Sechidis et al.'s correlation-aware stability estimate ``phi_C``.

    Parameters
    ----------
    subsets : sequence of array-like of int
        The genes selected in each task (at least two tasks).
    n_genes : int
    similarity : GeneSimilarity, optional
        The off-diagonal entries of ``C``; None: ``C`` is the identity (Nogueira's estimate).

    Returns
    -------
    float or None
        ``1 - tr(C S) / tr(C Sigma_0)``; None with fewer than two subsets, when the mean size
        is 0 or ``n_genes``, or when ``similarity`` was computed over part of the genes only
        (results files of earlier versions: ``tr(C Sigma_0)`` needs every pair,
        :func:`gene_similarity`).
    """
    n_sets = len(subsets)
    if n_sets < 2:
        return None
    member, frequency, sizes = _selection_frequencies(subsets, n_genes)
    share = sizes.mean() / n_genes
    if share <= 0 or share >= 1:
        return None
    numerator = n_sets / (n_sets - 1) * float(np.sum(frequency * (1 - frequency)))
    denominator = n_genes * share * (1 - share)
    if similarity is not None and similarity.genes.size != n_genes:
        return None
    if similarity is not None and similarity.first.size:
        centred = member - frequency
        for start in range(0, similarity.first.size, 1 << 16):
            a = similarity.first[start:start + (1 << 16)]
            b = similarity.second[start:start + (1 << 16)]
            w = similarity.weight[start:start + (1 << 16)]
            covariance = np.einsum("ij,ij->j", centred[:, a], centred[:, b]) / (n_sets - 1)
            numerator += 2 * float(np.sum(w * covariance))
        joint = float(np.mean(sizes * (sizes - 1))) / (n_genes * (n_genes - 1)) - share ** 2
        denominator += 2 * joint * float(np.sum(similarity.weight))
    if denominator <= 0:
        return None
    return float(1.0 - numerator / denominator)


def stability_summary(subsets, runs, n_genes, alpha=0.05, similarity=None):
    """Stability of a job's selections: over all tasks, within runs, between runs.

    Parameters
    ----------
    subsets : sequence of array-like of int
        The genes selected in each task.
    runs : array-like of int
        The run of each task.
    n_genes : int
    alpha : float, default 0.05
        Level of Nogueira et al.'s confidence interval.
    similarity : GeneSimilarity, optional
        Sechidis et al.'s ``C`` (:func:`gene_similarity`); without it ``sechidis`` is None.

    Returns
    -------
    dict
        ``all`` (:func:`stability` over every pair of tasks), ``folds`` (pairs of tasks of
        the same run: the folds of one outer split), ``runs`` (pairs of tasks of different
        runs), ``nogueira`` (:func:`nogueira` over every task, or None) and ``sechidis``
        (:func:`sechidis` over every task with ``similarity``, or None).
    """
    member = _membership(subsets, n_genes)
    common = member @ member.T  # exact: integer counts below 2**53
    runs = np.asarray(runs)
    a, b = np.triu_indices(len(subsets), k=1)
    same = runs[a] == runs[b]
    return {"all": _pair_means(common, (a, b), n_genes),
            "folds": _pair_means(common, (a[same], b[same]), n_genes),
            "runs": _pair_means(common, (a[~same], b[~same]), n_genes),
            "nogueira": nogueira(subsets, n_genes, alpha),
            "sechidis": None if similarity is None else sechidis(subsets, n_genes, similarity)}


def ranked_genes(subsets, runs, gene_names):
    """Every gene selected at least once, most often selected first, with its mean rank.

    Parameters
    ----------
    subsets : sequence of array-like of int
        The genes selected in each task.
    runs : array-like of int
        The run of each task.
    gene_names : sequence of str

    Returns
    -------
    list of dict
        ``index`` (0-based column), ``name``, ``count`` (tasks that selected it),
        ``frequency`` (count / tasks) and ``mean_rank``: in each run the genes are ranked by
        how many of the run's folds selected them (1 = most often; ties share their mean
        rank; genes the run never selected share the ranks after the others), and the ranks
        are averaged over the runs. Sorted by frequency, then mean rank, then index.
    """
    member = _membership(subsets, len(gene_names))
    runs = np.asarray(runs)
    counts = member.sum(axis=0)
    ranks = np.array([rankdata(-member[runs == run].sum(axis=0), method="average")
                      for run in np.unique(runs)])
    mean_rank = ranks.mean(axis=0)
    chosen = np.flatnonzero(counts > 0)
    order = chosen[np.lexsort((chosen, mean_rank[chosen], -counts[chosen]))]
    return [{"index": int(i), "name": str(gene_names[i]), "count": int(counts[i]),
             "frequency": float(counts[i] / max(1, len(subsets))),
             "mean_rank": float(mean_rank[i])} for i in order]
