"""All-genes 1-NN leave-one-out accuracy on the real files equals the figures of their README."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

from hpcswarm.data import load_dataset
from hpcswarm.fitness import KnnEvaluator, Score

README_1NN_LOO = {
    "SRBCT.arff": (76, 83),
    "leukemia.arff": (65, 72),
    "colon.mat": (43, 62),
    "lymphoma.mat": (91, 96),
    "Prostate_GE.mat": (85, 102),
    "GLIOMA.mat": (34, 50),
}


@pytest.fixture(scope="module")
def real(shared_data):
    """``real(name)``: the shared file ``name`` loaded, once for all the tests of this file."""
    loaded = {}

    def dataset(name):
        if name not in loaded:
            loaded[name] = load_dataset(shared_data / name)
        return loaded[name]

    return dataset


@pytest.mark.parametrize("name", sorted(README_1NN_LOO))
def test_all_genes_1nn_loo_matches_readme(real, name):
    dataset = real(name)
    evaluator = KnnEvaluator(dataset.X, dataset.y, k=1, cv="loo")
    assert evaluator.score(np.ones(dataset.n_genes, bool)) == Score(*README_1NN_LOO[name])


@pytest.mark.parametrize("name, k, cv", [
    ("colon.mat", 5, 10), ("lymphoma.mat", 3, "loo"), ("Prostate_GE.mat", 3, 10),
    ("SRBCT.arff", 5, 10), ("GLIOMA.mat", 1, 5),
])
def test_agrees_with_sklearn_on_real_files(real, name, k, cv):
    dataset = real(name)
    X, y = np.asarray(dataset.X, dtype=np.float64), dataset.y
    evaluator = KnnEvaluator(X, y, k=k, cv=cv, seed=0)
    mask = np.random.default_rng(0).random(dataset.n_genes) < 0.2
    expected = 0
    model = KNeighborsClassifier(n_neighbors=k, algorithm="brute")
    with threadpool_limits(1):  # OpenMP threads spin-wait badly on a busy machine
        for train, test in evaluator.folds:
            expected += int((model.fit(X[train][:, mask], y[train]).predict(X[test][:, mask])
                             == y[test]).sum())
    assert evaluator.score(mask).correct == expected
