"""PCA + k-NN (Gu et al. 2018): PCA fitted on training rows only, 95 % variance, scikit-learn agreement."""

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from hpcswarm.baselines import pca as pca_module
from hpcswarm.baselines import fit_pca, pca_knn_cv, pca_knn_split
from hpcswarm.fitness import make_folds


def data(seed=0, n_samples=30, n_genes=50):
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    X = rng.normal(size=(n_samples, n_genes)) + np.outer(y, rng.normal(size=n_genes))
    return X, y


def test_pca_never_sees_test_rows(monkeypatch):
    X, y = data()
    X[:, 0] = np.arange(X.shape[0])  # a column that names each row
    seen = []
    real = pca_module.fit_pca

    def spy(X_train, variance=pca_module.DEFAULT_VARIANCE):
        seen.append(np.array(X_train[:, 0], dtype=int))
        return real(X_train, variance)

    monkeypatch.setattr(pca_module, "fit_pca", spy)
    folds = make_folds(y, 5, seed=3)
    result = pca_knn_cv(X, y, k=1, cv=5, seed=3)
    assert len(seen) == len(folds) == len(result.n_components)
    for rows, (train, test) in zip(seen, folds):
        assert np.array_equal(rows, train) and not np.intersect1d(rows, test).size
    assert result.total == y.size


def test_test_rows_do_not_change_the_components():
    X, y = data(seed=1)
    train, test = np.arange(20), np.arange(20, 30)
    before = pca_knn_split(X[train], y[train], X[test], y[test])
    wild = X.copy()
    wild[test] *= 1000.0
    mean, components = fit_pca(X[train])
    mean_again, components_again = fit_pca(wild[train])
    assert np.array_equal(components, components_again) and np.array_equal(mean, mean_again)
    assert pca_knn_split(X[train], y[train], wild[test], y[test]).n_components == before.n_components


def test_keeps_95_percent_of_the_variance():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(40, 3)) * np.array([10.0, 5.0, 0.1])  # two strong directions
    axes = np.linalg.qr(rng.normal(size=(30, 3)))[0].T
    X = scores @ axes + rng.normal(scale=0.01, size=(40, 30))
    mean, components = fit_pca(X)
    assert components.shape == (2, 30)
    assert fit_pca(X, variance=0.9999)[1].shape[0] == 3
    assert np.allclose(components @ components.T, np.eye(2))


@pytest.mark.parametrize("k", [1, 3])
def test_matches_scikit_learn_pca_then_knn(k):
    X, y = data(seed=4, n_samples=45, n_genes=60)
    train, test = np.arange(0, 45, 3), np.setdiff1d(np.arange(45), np.arange(0, 45, 3))
    ours = pca_knn_split(X[train], y[train], X[test], y[test], k=k)
    model = make_pipeline(PCA(n_components=0.95, svd_solver="full"),
                          KNeighborsClassifier(n_neighbors=k)).fit(X[train], y[train])
    assert ours.n_components == (model[0].n_components_,)
    assert ours.correct == int(np.count_nonzero(model.predict(X[test]) == y[test]))


def test_loo_default_and_bad_variance():
    X, y = data(seed=5, n_samples=12, n_genes=8)
    result = pca_knn_cv(X, y)
    assert result.total == 12 and len(result.n_components) == 12 and 0 <= result.accuracy <= 1
    with pytest.raises(ValueError, match="variance"):
        fit_pca(X, variance=0.0)
    with pytest.raises(ValueError, match="X_test"):
        pca_knn_split(X, y, X[:, :3], y)


def svd_pca_knn_cv(X, y, folds, k=1, variance=pca_module.DEFAULT_VARIANCE):
    """The computation before the Gram path: an SVD of every fold's centred training rows."""
    from hpcswarm.fitness import score_split

    correct, counts = 0, []
    for train, test in folds:
        mean = X[train].mean(axis=0)
        _, singular, axes = np.linalg.svd(X[train] - mean, full_matrices=False)
        cumulative = np.cumsum(singular ** 2 / (singular ** 2).sum())
        axes = axes[:min(int(np.searchsorted(cumulative, variance, side="right")) + 1,
                         axes.shape[0])]
        every = np.ones(axes.shape[0], dtype=bool)
        correct += score_split((X[train] - mean) @ axes.T, y[train], (X[test] - mean) @ axes.T,
                               y[test], every, k, np.unique(y)).correct
        counts.append(axes.shape[0])
    return correct, tuple(counts)


def _srbct():
    from hpcswarm.data import load_dataset

    dataset = load_dataset("builtin:srbct")
    return np.asarray(dataset.X, dtype=np.float64), np.asarray(dataset.y)


def _panel(name):
    from hpcswarm.datasets.panel import panel_set

    found = panel_set(name)
    return np.asarray(found.X, dtype=np.float64), np.asarray(found.y)


def _low_rank():
    rng = np.random.default_rng(9)
    y = np.arange(40) % 4
    X = rng.normal(size=(40, 5)) @ rng.normal(size=(5, 300)) * 100.0 + 7.0
    X[1] = X[0]  # a duplicated sample: an exact tie between neighbours
    return np.round(X), y


@pytest.mark.parametrize("source, cv, k, variance", [
    (_srbct, 10, 1, 0.95), (_srbct, 3, 3, 0.95), (_srbct, 5, 1, 0.5),
    (lambda: _panel("parity"), 5, 1, 0.95), (lambda: _panel("imbalanced"), 4, 3, 0.95),
    (lambda: data(seed=6, n_samples=24, n_genes=200), "loo", 1, 0.95),
    (_low_rank, 5, 1, 0.999), (_low_rank, "loo", 1, 1.0),
    pytest.param(_srbct, "loo", 1, 0.95, marks=pytest.mark.slow)])
def test_same_counts_as_the_svd_of_every_fold(source, cv, k, variance):
    X, y = source()
    folds = make_folds(y, cv, seed=2)
    ours = pca_knn_cv(X, y, k=k, variance=variance, folds=folds)
    assert (ours.correct, ours.n_components) == svd_pca_knn_cv(X, y, folds, k, variance)


def test_the_gram_axes_are_the_svd_axes_up_to_sign():
    X, _ = _srbct()
    rows = X[:60]
    mean, components = fit_pca(rows)
    centred = rows - mean
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(np.sum(components * axes[:components.shape[0]], axis=1))
    assert np.allclose(components, signs[:, None] * axes[:components.shape[0]], atol=1e-9)
    assert np.allclose(components @ components.T, np.eye(components.shape[0]), atol=1e-12)


def test_gram_path_falls_back_to_the_svd_for_vanishing_variance():
    X, y = _low_rank()  # rank 5: the sixth component on carries no variance
    centred = X - X.mean(axis=0)
    assert pca_module._axes_from_gram(centred, 0.95).shape[0] <= 5
    assert pca_module._axes_from_gram(centred, 1.0) is None  # all 40 axes: the SVD's
    assert fit_pca(X, variance=1.0)[1].shape[0] == 40
