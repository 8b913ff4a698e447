"""Balanced accuracy from per-class counts: exact against scikit-learn on every scoring path.

The engine counts the correct predictions per class of the held-out labels (``class_counts``)
on every path (full evaluations, compiled and numpy, flips of a cached state, batches of
tries, greedy single flips, sample shards, the GPU code path on the host); the objective
``"balanced-accuracy"`` combines the counts. Here every path's counts are compared with the
confusion matrix of scikit-learn's k-NN on the same folds, and every path's balanced accuracy
with ``sklearn.metrics.balanced_accuracy_score`` of those predictions.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, confusion_matrix
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

from hpcswarm.fitness import (DeviceScorer, KnnEvaluator, Score, SubsetFitness, make_objective,
                              make_scorer, score_split)
from hpcswarm.store.records import balanced_accuracy

CLASS_SIZES = (20, 9, 5, 3, 2)
"""Unbalanced classes with two small ones, as in the microarray sets (9 Tumors: 2 to 9)."""


def unbalanced(seed, n_genes=40):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(CLASS_SIZES)), CLASS_SIZES)
    X = rng.normal(size=(y.size, n_genes))
    X[:, :4] += 1.5 * y[:, None]  # a little signal, many mistakes on the small classes
    return X, y


def sklearn_predictions(X, y, folds, mask, k):
    """scikit-learn's k-NN predictions of every held-out sample of ``folds``, and their labels."""
    truth, predicted = [], []
    for train, test in folds:
        model = KNeighborsClassifier(n_neighbors=k, algorithm="brute")
        with threadpool_limits(1):
            model.fit(X[train][:, mask], y[train])
            predicted.append(model.predict(X[test][:, mask]))
        truth.append(y[test])
    return np.concatenate(truth), np.concatenate(predicted)


def sklearn_counts(X, y, folds, mask, k):
    """``(class_correct, balanced accuracy)`` of scikit-learn's predictions on ``folds``."""
    truth, predicted = sklearn_predictions(X, y, folds, mask, k)
    matrix = confusion_matrix(truth, predicted, labels=np.unique(y))
    with warnings.catch_warnings():  # a predicted class without held-out samples
        warnings.simplefilter("ignore", UserWarning)
        return tuple(int(n) for n in matrix.diagonal()), balanced_accuracy_score(truth, predicted)


def flipped(mask, genes):
    out = mask.copy()
    out[genes] = ~out[genes]
    return out


@pytest.mark.filterwarnings("ignore::hpcswarm.fitness.FoldWarning")
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5), (1, 4), (5, "holdout")])
def test_every_path_counts_per_class_as_sklearn_predicts(k, cv, compiled):
    X, y = unbalanced(k + len(str(cv)))
    rng = np.random.default_rng(7)
    scorer = KnnEvaluator(X, y, k=k, cv=cv, seed=3, class_counts=True, compiled=compiled)
    folds = scorer.folds
    mask = rng.random(X.shape[1]) < 0.4

    def check(score, subset):
        class_correct, expected = sklearn_counts(X, y, folds, subset, k)
        assert score.class_correct == class_correct
        assert score.correct == sum(class_correct)
        assert score.balanced_accuracy == pytest.approx(expected, rel=1e-15)

    check(scorer.score(mask), mask)
    for score, subset in zip(scorer.score_many(np.array([mask, ~mask])), (mask, ~mask)):
        check(score, subset)
    state = scorer.new_state(mask)
    genes = rng.choice(X.shape[1], size=3, replace=False)
    check(scorer.score_flip(state, genes), flipped(mask, genes))
    candidates = rng.choice(X.shape[1], size=5, replace=False)
    for score, gene in zip(scorer.score_single_flips(state, candidates), candidates):
        check(score, flipped(mask, [gene]))
    tries = np.array([np.sort(rng.choice(X.shape[1], size=4, replace=False)) for _ in range(6)])
    counts = scorer.score_flips(state, tries)
    assert counts.shape == (6, len(CLASS_SIZES))
    for row, genes in zip(counts, tries):
        assert tuple(row) == sklearn_counts(X, y, folds, flipped(mask, genes), k)[0]
    scorer.apply_flip(state, genes)
    check(scorer.score_flip(state, [0]), flipped(flipped(mask, genes), [0]))


@pytest.mark.filterwarnings("ignore::hpcswarm.fitness.FoldWarning")
@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5), (1, "holdout")])
def test_the_gpu_code_path_and_sample_shards_count_per_class_as_sklearn(k, cv):
    X, y = unbalanced(11)
    rng = np.random.default_rng(2)
    mask = rng.random(X.shape[1]) < 0.5
    tries = np.array([np.sort(rng.choice(X.shape[1], size=2, replace=False)) for _ in range(4)])
    folds = KnnEvaluator(X, y, k=k, cv=cv, seed=4).folds
    expected = [sklearn_counts(X, y, folds, subset, k)
                for subset in [mask] + [flipped(mask, genes) for genes in tries]]
    device = make_scorer(X, y, k=k, cv=cv, seed=4, device="gpu", array_module="numpy",
                         class_counts=True)
    score = device.score(mask)
    assert score.class_correct == expected[0][0]
    assert score.balanced_accuracy == pytest.approx(expected[0][1], rel=1e-15)
    state = device.new_state(mask)
    assert [tuple(row) for row in device.score_flips(state, tries)] == [
        counts for counts, _ in expected[1:]]
    for n_shards in (2, 3):
        for scorers in ([KnnEvaluator(X, y, k=k, cv=cv, seed=4, shard=(i, n_shards),
                                      class_counts=True) for i in range(n_shards)],
                        [DeviceScorer(X, y, xp=np, k=k, cv=cv, seed=4, shard=(i, n_shards),
                                      class_counts=True) for i in range(n_shards)]):
            added = sum(np.array(part.score(mask).class_correct) for part in scorers)
            assert tuple(added) == expected[0][0]
            states = [part.new_state(mask) for part in scorers]
            added = sum(part.score_flips(t, tries) for part, t in zip(scorers, states))
            assert [tuple(row) for row in added] == [counts for counts, _ in expected[1:]]


def test_a_class_without_held_out_samples_does_not_count():
    """sklearn's rule: a class of the predictions with no true sample has no recall."""
    X, y = unbalanced(3)
    test = np.flatnonzero(y != 4)[::3]  # the smallest class (code 4) is never held out
    train = np.setdiff1d(np.arange(y.size), test)
    scorer = KnnEvaluator(X, y, folds=[(train, test)], class_counts=True)
    assert scorer.class_total[4] == 0
    mask = np.ones(X.shape[1], dtype=bool)
    score = scorer.score(mask)
    truth, predicted = sklearn_predictions(X, y, [(train, test)], mask, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = balanced_accuracy_score(truth, predicted)
    assert score.class_correct[4] == 0
    assert score.balanced_accuracy == pytest.approx(expected, rel=1e-15)
    assert score.balanced_accuracy == pytest.approx(
        np.mean([c / t for c, t in zip(score.class_correct[:4], score.class_total[:4])]))


def test_score_split_counts_per_class_of_the_test_labels():
    X, y = unbalanced(5)
    rng = np.random.default_rng(1)
    test = rng.permutation(y.size)[:15]
    train = np.setdiff1d(np.arange(y.size), test)
    mask = rng.random(X.shape[1]) < 0.5
    score = score_split(X[train], y[train], X[test], y[test], mask, 3)
    assert score.class_total == tuple(np.bincount(y[test], minlength=len(CLASS_SIZES)))
    class_correct, expected = sklearn_counts(X, y, [(train, test)], mask, 3)
    assert score.class_correct == class_correct
    assert score.balanced_accuracy == pytest.approx(expected, rel=1e-15)


def test_balanced_accuracy_charges_a_dropped_small_class_its_share():
    """A class of 2 among 39 samples: 2/39 of the plain accuracy, 1/5 of the balanced one."""
    class_total = np.array(CLASS_SIZES)
    every = Score(39, 39, tuple(CLASS_SIZES), tuple(CLASS_SIZES))
    dropped = Score(37, 39, CLASS_SIZES[:4] + (0,), tuple(CLASS_SIZES))
    assert every.accuracy - dropped.accuracy == pytest.approx(2 / 39)
    assert every.balanced_accuracy - dropped.balanced_accuracy == pytest.approx(1 / 5)
    assert balanced_accuracy(np.array([CLASS_SIZES, CLASS_SIZES[:4] + (0,)]),
                             class_total).tolist() == [1.0, dropped.balanced_accuracy]


def test_the_objective_of_many_equals_its_calls_bit_for_bit():
    rng = np.random.default_rng(4)
    class_total = np.array([7, 3, 0, 11, 2, 5, 1, 9, 4, 6])  # more classes than a pairwise block
    correct = rng.integers(0, class_total + 1, size=(50, class_total.size))
    objective = make_objective("balanced-accuracy")
    sizes = rng.integers(0, 4, size=50)
    many = objective.many(correct, class_total, sizes, 10)
    one = [objective(Score(int(c.sum()), int(class_total.sum()), tuple(c.tolist()),
                           tuple(class_total.tolist())), n, 10)
           for c, n in zip(correct, sizes)]
    assert many.tobytes() == np.array(one).tobytes()


def test_subset_fitness_under_balanced_accuracy_on_every_path():
    X, y = unbalanced(9)
    rng = np.random.default_rng(3)
    objective = make_objective("balanced-accuracy")
    with pytest.raises(ValueError, match="counts per class"):
        SubsetFitness(KnnEvaluator(X, y), objective)
    fitness = SubsetFitness(KnnEvaluator(X, y, k=3, cv=5, seed=1, class_counts=True), objective)
    mask = rng.random(X.shape[1]) < 0.5
    state = fitness.new_state(mask)
    tries = np.array([np.sort(rng.choice(X.shape[1], size=3, replace=False)) for _ in range(8)])
    full = [fitness(flipped(mask, genes)) for genes in tries]
    assert fitness.flips(state, tries).tolist() == full == [fitness.flip(state, g) for g in tries]
    genes = rng.choice(X.shape[1], size=6, replace=False)
    assert fitness.single_flips(state, genes).tolist() == [
        fitness(flipped(mask, [g])) for g in genes]
    assert fitness.highest(np.array([0, 3])).tolist() == [-2.0, 1.0]


def test_scores_with_and_without_class_counts_do_not_mix():
    with pytest.raises(ValueError, match="class counts"):
        Score(1, 3) + Score(1, 3, (1, 0), (2, 1))
    with pytest.raises(ValueError, match="add up"):
        Score(2, 3, (1, 0), (2, 1))
    with pytest.raises(ValueError, match="counts per class"):
        Score(2, 3).balanced_accuracy
    assert Score(1, 3, (1, 0), (2, 1)) + Score(2, 2, (1, 1), (1, 1)) == Score(
        3, 5, (2, 1), (3, 2))
