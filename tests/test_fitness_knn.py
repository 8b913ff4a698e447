"""Exactness of the k-NN engine against scikit-learn and a brute-force reference, tie rules."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

from hpcswarm.fitness import KnnEvaluator, Score, make_folds, score_split
from hpcswarm.fitness.distances import exact_sq_distances


def brute_predict(X_train, y_train, X_test, k):
    """k-NN by direct sums of squared differences; ties: lowest index, then smallest class."""
    classes, codes = np.unique(y_train, return_inverse=True)
    predicted = []
    for x in X_test:
        d = ((X_train - x) ** 2).sum(axis=1)
        nearest = np.lexsort((np.arange(d.size), d))[:k]
        predicted.append(classes[np.bincount(codes[nearest], minlength=classes.size).argmax()])
    return np.array(predicted)


def fold_correct(predict, X, y, folds, mask):
    Xs = X[:, mask]
    return sum(int((predict(Xs[tr], y[tr], Xs[te]) == y[te]).sum()) for tr, te in folds)


def sklearn_predict(k):
    def predict(X_train, y_train, X_test):
        model = KNeighborsClassifier(n_neighbors=k, algorithm="brute")
        with threadpool_limits(1):  # OpenMP threads spin-wait badly on a busy machine
            return model.fit(X_train, y_train).predict(X_test)
    return predict


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("cv", ["loo", 10, "holdout"])
def test_agrees_with_sklearn_on_random_data(k, cv):
    rng = np.random.default_rng(100 * k + len(str(cv)))
    n_samples = 40 if cv == "loo" else 70  # one scikit-learn fit per sample under LOO
    X = rng.normal(size=(n_samples, 120)) * rng.uniform(0.5, 3.0, size=120)
    y = rng.integers(0, 3, size=n_samples)
    evaluator = KnnEvaluator(X, y, k=k, cv=cv, seed=5)
    for _ in range(3):
        mask = rng.random(120) < rng.uniform(0.05, 0.9)
        expected = fold_correct(sklearn_predict(k), X, y, evaluator.folds, mask)
        assert evaluator.score(mask) == Score(expected, evaluator.total)


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("cv", ["loo", 10])
def test_integer_data_with_forced_ties_follow_the_documented_rules(k, cv):
    rng = np.random.default_rng(k)
    X = rng.integers(0, 3, size=(50, 12)).astype(float)
    y = rng.integers(0, 3, size=50)
    evaluator = KnnEvaluator(X, y, k=k, cv=cv, seed=2)
    for _ in range(4):
        mask = rng.random(12) < 0.4
        if not mask.any():
            continue
        expected = fold_correct(lambda a, b, c: brute_predict(a, b, c, k), X, y,
                                evaluator.folds, mask)
        assert evaluator.score(mask).correct == expected
        if k == 1:  # scikit-learn has a rule for equal distances only at k = 1: first index
            assert expected == fold_correct(sklearn_predict(1), X, y, evaluator.folds, mask)


def test_equal_distances_lowest_training_index_wins():
    # sample 0 is at distance 1 from samples 1 (class 1) and 2 (class 0)
    X = np.array([[0.0], [1.0], [-1.0], [10.0], [11.0]])
    y = np.array([0, 1, 0, 1, 1])
    folds = [(np.array([1, 2, 3, 4]), np.array([0]))]
    assert KnnEvaluator(X, y, k=1, folds=folds).score(np.ones(1, bool)).correct == 0
    y[[1, 2]] = y[[2, 1]]
    assert KnnEvaluator(X, y, k=1, folds=folds).score(np.ones(1, bool)).correct == 1


def test_equal_votes_smallest_class_wins():
    X = np.array([[0.0], [1.0], [2.0], [30.0]])
    folds = [(np.array([1, 2, 3]), np.array([0]))]
    for labels, correct in (([5, 3, 5, 5], 0), ([3, 5, 3, 3], 1)):
        # neighbours of sample 0 at k=2: samples 1 and 2, one vote each for classes 3 and 5
        y = np.array(labels)
        assert KnnEvaluator(X, y, k=2, folds=folds).score(np.ones(1, bool)).correct == correct
        assert sklearn_predict(2)(X[1:], y[1:], X[:1])[0] == 3


def test_cancellation_does_not_change_neighbours():
    # huge common offset, tiny differences: the Gram form alone loses every digit that matters
    rng = np.random.default_rng(0)
    X = 1e8 + rng.integers(0, 4, size=(40, 30)) + rng.normal(scale=1e-3, size=(40, 30))
    y = rng.integers(0, 2, size=40)
    folds = make_folds(y, "loo", 0)
    for k in (1, 3):
        evaluator = KnnEvaluator(X, y, k=k)
        for _ in range(3):
            mask = rng.random(30) < 0.5
            expected = fold_correct(lambda a, b, c: brute_predict(a, b, c, k), X, y, folds, mask)
            assert evaluator.score(mask).correct == expected


def test_exact_distances_do_not_depend_on_the_batch():
    rng = np.random.default_rng(3)
    query, candidates = rng.normal(size=1001), rng.normal(size=(9, 1001))
    together = exact_sq_distances(query, candidates)
    alone = np.array([exact_sq_distances(query, candidates[i:i + 1])[0] for i in range(9)])
    assert together.tobytes() == alone.tobytes()


@pytest.mark.parametrize("k", [1, 3, 5])
def test_score_split_agrees_with_sklearn_and_ties(k):
    rng = np.random.default_rng(k)
    X = rng.normal(size=(80, 50))
    y = rng.integers(0, 4, size=80)
    mask = rng.random(50) < 0.3
    predicted = sklearn_predict(k)(X[:55][:, mask], y[:55], X[55:][:, mask])
    score = score_split(X[:55], y[:55], X[55:], y[55:], mask, k)
    assert (score.correct, score.total) == (int((predicted == y[55:]).sum()), 25)
    assert score.balanced_accuracy == pytest.approx(balanced_accuracy_score(y[55:], predicted),
                                                    rel=1e-15)
    Xi = rng.integers(0, 2, size=(80, 6)).astype(float)
    expected = int((brute_predict(Xi[:55], y[:55], Xi[55:], k) == y[55:]).sum())
    assert score_split(Xi[:55], y[:55], Xi[55:], y[55:], np.ones(6, bool), k).correct == expected


def class_hits(predicted, y, classes):
    """Correct predictions per class of ``classes``."""
    return tuple(int(((predicted == y) & (y == c)).sum()) for c in classes)


@pytest.mark.parametrize("k", [1, 3])
def test_score_split_counts_per_class_the_labels_sklearn_predicts(k):
    rng = np.random.default_rng(10 + k)
    X = rng.normal(size=(60, 30))
    y = np.array(["ALL", "AML", "MLL"])[rng.integers(0, 3, size=60)]
    classes = np.unique(y)
    mask = rng.random(30) < 0.4
    predicted = sklearn_predict(k)(X[:40][:, mask], y[:40], X[40:][:, mask])
    score = score_split(X[:40], y[:40], X[40:], y[40:], mask, k)
    assert score.class_correct == class_hits(predicted, y[40:], classes)
    assert score.correct == (predicted == y[40:]).sum()
    Xi = rng.integers(0, 2, size=(60, 5)).astype(float)
    predicted = brute_predict(Xi[:40], y[:40], Xi[40:], k)
    assert score_split(Xi[:40], y[:40], Xi[40:], y[40:], np.ones(5, bool), k).class_correct \
        == class_hits(predicted, y[40:], classes)
    assert score_split(X[:40], y[:40], X[40:], y[40:], np.zeros(30, bool), k).class_correct \
        == (0, 0, 0)


def test_empty_subset_scores_zero():
    X, y = np.arange(20.0).reshape(10, 2), np.repeat([0, 1], 5)
    evaluator = KnnEvaluator(X, y)
    assert evaluator.score(np.zeros(2, bool)) == Score(0, 10)
    assert evaluator.evaluations == 0
    assert score_split(X, y, X, y, np.zeros(2, bool), 1) == Score(0, 10, (0, 0), (5, 5))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"k": 0}, ValueError, "k must be an integer >= 1"),
    ({"k": 10}, ValueError, "k=10 exceeds the 9 training samples"),
    ({"cv": 20}, ValueError, "needs at least 20 samples, got 10"),
])
def test_bad_parameters(kwargs, error, message):
    X, y = np.arange(20.0).reshape(10, 2), np.repeat([0, 1], 5)
    with pytest.raises(error, match=message):
        KnnEvaluator(X, y, **kwargs)


def test_bad_masks():
    evaluator = KnnEvaluator(np.arange(20.0).reshape(10, 2), np.repeat([0, 1], 5))
    with pytest.raises(TypeError, match="boolean"):
        evaluator.score(np.ones(2, int))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        evaluator.score(np.ones(3, bool))
