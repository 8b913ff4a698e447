"""PCA + k-NN keeping 95 % of the variance (Gu, Cheng & Jin 2018, Sect. 4: "PCA-kNN").

Not a gene selector: the classifier sees principal components, so this baseline has its own
evaluation functions, with the same split arguments and :class:`~hpcswarm.fitness.Score`
counts as the gene selectors' test (:func:`hpcswarm.fitness.score_split`):

* :func:`pca_knn_split`: PCA fitted on the training rows only, the training and test rows
  projected on its components, k-NN trained on the projected training rows (the protocols'
  ``unbiased`` folds and ``holdout`` split);
* :func:`pca_knn_cv`: the same inside every fold of a validation scheme (the ``biased``
  protocol's inner cross-validation, the folds of :func:`hpcswarm.fitness.make_folds`).

PCA is centred, unscaled (raw expression values, as the distances of the gene selectors),
and keeps the fewest leading components whose explained variance ratio exceeds ``variance``
(scikit-learn's rule for ``PCA(n_components=0.95)``). The k-NN is the engine's
(:func:`~hpcswarm.fitness.score_split`): exact Euclidean distances, ties to the lowest
training index, votes to the smallest class.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness import Score, make_folds, score_split

DEFAULT_VARIANCE = 0.95
"""Share of the training variance kept (Gu et al. 2018: "the variance covered ... is 0.95")."""


@dataclass(frozen=True)
class PcaKnnResult:
    """Test counts of PCA + k-NN and the number of components kept.

    Attributes
    ----------
    score : Score
        Correct predictions out of all test rows (summed over folds), per class too.
    n_components : tuple of int
        Components kept by each fitted PCA (one per fold).
    """

    score: Score
    n_components: tuple

    @property
    def correct(self):
        """Correct test predictions."""
        return self.score.correct

    @property
    def total(self):
        """Test predictions."""
        return self.score.total

    @property
    def accuracy(self):
        """``correct / total``."""
        return self.score.accuracy


def _check_variance(variance):
    if isinstance(variance, bool) or not isinstance(variance, (int, float, np.floating)) or not (
            0.0 < variance <= 1.0):
        raise ValueError(f"variance must be a number in (0, 1], got {variance!r}")
    return float(variance)


def fit_pca(X_train, variance=DEFAULT_VARIANCE):
    """Principal axes of the training rows keeping a share of their variance.

    Parameters
    ----------
    X_train : array-like of shape (n_train, n_genes)
        The only rows PCA sees.
    variance : float in (0, 1], default 0.95
        Keep the fewest leading components whose cumulative explained variance ratio exceeds
        it (all components with 1.0).

    Returns
    -------
    mean : ndarray of shape (n_genes,)
        Training mean, subtracted before projecting.
    components : ndarray of shape (n_components, n_genes)
        Orthonormal principal axes, by decreasing variance.
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    variance = _check_variance(variance)
    if X_train.ndim != 2 or X_train.shape[0] < 1:
        raise ValueError(f"X_train must be 2-D with at least one row, got shape {X_train.shape}")
    mean = X_train.mean(axis=0)
    centred = X_train - mean
    if centred.shape[0] < centred.shape[1]:
        axes = _axes_from_gram(centred, variance)
        if axes is not None:
            return mean, axes
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    explained = singular ** 2
    if explained.sum() == 0.0:  # constant training rows: one (arbitrary) axis
        return mean, axes[:1]
    return mean, axes[:_kept(explained, variance)]


GRAM_FLOOR = 1e-6
"""Smallest eigenvalue of the Gram matrix, relative to its largest, that a kept component may
have for :func:`_axes_from_gram` (below it, the SVD): eigenvalues of ``X X^T`` carry an
absolute rounding error of about ``n eps`` times the largest, so a kept one at least this
share of it is accurate to better than 1e-8 relative, and its axis ``X^T u / s`` too."""


def _kept(explained, variance):
    """The fewest leading components whose cumulative share of ``explained`` (variances by
    decreasing size, summing to more than 0) exceeds ``variance``, all of them at most."""
    cumulative = np.cumsum(explained / explained.sum())
    return min(int(np.searchsorted(cumulative, variance, side="right")) + 1, explained.size)


def _axes_from_gram(centred, variance):
    """The principal axes of centred rows from their ``n x n`` Gram matrix, or None.

    With fewer rows than genes, the right singular vectors of ``X`` are ``X^T u_i / s_i``
    for the eigenpairs ``(s_i^2, u_i)`` of ``X X^T`` (the kernel trick of Schölkopf, Smola &
    Müller 1998, with a linear kernel): one ``n x n x p`` product and an ``n x n``
    eigendecomposition instead of the SVD of ``n x p``, the same axes up to sign and
    rounding. None when no variance is left or a kept eigenvalue lies below
    :data:`GRAM_FLOOR` of the largest (the SVD is then the accurate one).
    """
    eigenvalues, vectors = np.linalg.eigh(centred @ centred.T)
    eigenvalues, vectors = eigenvalues[::-1], vectors[:, ::-1]
    if not eigenvalues[0] > 0.0:
        return None
    explained = np.clip(eigenvalues, 0.0, None)
    n_components = _kept(explained, variance)
    if eigenvalues[n_components - 1] < GRAM_FLOOR * eigenvalues[0]:
        return None
    axes = (centred.T @ vectors[:, :n_components]) / np.sqrt(eigenvalues[:n_components])
    return np.ascontiguousarray(axes.T)


def pca_knn_split(X_train, y_train, X_test, y_test, k=1, variance=DEFAULT_VARIANCE,
                  classes=None):
    """Test score of k-NN on the principal components of the training rows (PCA-kNN).

    Parameters
    ----------
    X_train : array-like of shape (n_train, n_genes)
    y_train : array-like of shape (n_train,)
    X_test : array-like of shape (n_test, n_genes)
        Projected on the training PCA; never used to fit it.
    y_test : array-like of shape (n_test,)
    k : int, default 1
    variance : float, default 0.95
    classes : array-like, optional
        The sorted labels the test counts per class are kept over
        (:func:`~hpcswarm.fitness.score_split`; default: the labels of both parts).

    Returns
    -------
    PcaKnnResult
        Its Score counts per class too, for the test's balanced accuracy.
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    X_test = np.asarray(X_test, dtype=np.float64)
    if X_test.ndim != 2 or X_test.shape[1:] != X_train.shape[1:]:
        raise ValueError(f"X_test must be 2-D with the {X_train.shape[1:]} genes of X_train, "
                         f"got shape {X_test.shape}")
    mean, components = fit_pca(X_train, variance)
    train = (X_train - mean) @ components.T
    test = (X_test - mean) @ components.T
    every = np.ones(components.shape[0], dtype=bool)
    score = score_split(train, y_train, test, y_test, every, k, classes)
    return PcaKnnResult(score, (int(components.shape[0]),))


def pca_knn_cv(X, y, k=1, cv="loo", seed=0, variance=DEFAULT_VARIANCE, folds=None):
    """Cross-validated PCA-kNN: PCA and k-NN fitted inside every training fold only.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_genes)
    y : array-like of shape (n_samples,)
    k : int, default 1
    cv : {"loo", "holdout"} or int, default "loo"
        Validation scheme of :func:`hpcswarm.fitness.make_folds` (the folds the k-NN fitness
        of a gene selector with the same ``cv`` and ``seed`` uses).
    seed : int or numpy.random.SeedSequence, default 0
    variance : float, default 0.95
    folds : sequence of (train_idx, test_idx), optional
        Explicit folds instead of ``cv`` and ``seed``.

    Returns
    -------
    PcaKnnResult
        Counts summed over folds, per class of ``y`` too (the balanced accuracy of the
        pooled held-out predictions); one component count per fold.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if folds is None:
        folds = make_folds(y, cv, seed)
    classes = np.unique(y)
    results = [pca_knn_split(X[train], y[train], X[test], y[test], k, variance, classes)
               for train, test in folds]
    return PcaKnnResult(sum(r.score for r in results),
                        tuple(n for r in results for n in r.n_components))
