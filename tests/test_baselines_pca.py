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
