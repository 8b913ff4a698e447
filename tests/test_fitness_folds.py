"""Validation folds: leave-one-out, stratified n-fold fixed by the seed, stratified holdout."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from hpcswarm.fitness import FoldWarning, KnnEvaluator, fold_rule, make_folds
from hpcswarm.fitness.folds import random_state_from_seed

Y = np.repeat([0, 1, 2], [12, 20, 8])


def test_loo_leaves_each_sample_out_once():
    folds = make_folds(Y, "loo", seed=0)
    assert len(folds) == Y.size
    for i, (train, test) in enumerate(folds):
        assert test.tolist() == [i]
        assert train.tolist() == [j for j in range(Y.size) if j != i]


@pytest.mark.parametrize("n_folds", [2, 5, 8])
def test_n_fold_partitions_stratified_and_fixed_by_seed(n_folds):
    folds = make_folds(Y, n_folds, seed=7)
    assert len(folds) == n_folds
    tests = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tests), np.arange(Y.size))
    for train, test in folds:
        assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(Y.size))
        assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
        counts = np.bincount(Y[test], minlength=3)
        assert np.all(np.abs(counts - np.bincount(Y) / n_folds) < 1)
    again = make_folds(Y, n_folds, seed=7)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = make_folds(Y, n_folds, seed=8)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


def test_seed_sequence_and_string_scheme_accepted():
    a = make_folds(Y, "5", seed=np.random.SeedSequence(3))
    b = make_folds(Y, 5, seed=np.random.SeedSequence(3))
    assert all(np.array_equal(x[1], z[1]) for x, z in zip(a, b))


def test_holdout_is_stratified_70_30():
    (train, test), = make_folds(Y, "holdout", seed=1)
    assert train.size + test.size == Y.size and np.intersect1d(train, test).size == 0
    assert test.size == 12
    assert np.array_equal(np.bincount(Y[test], minlength=3), [4, 6, 2])


@pytest.mark.parametrize("cv, message", [
    (41, "41-fold cross-validation needs at least 41 samples, got 40"),
    ("kfold", "cv must be"),
    (1, "cv must be"),
    (True, "cv must be"),
])
def test_bad_schemes_raise_clear_errors(cv, message):
    with pytest.raises(ValueError, match=message):
        make_folds(Y, cv, seed=0)


def test_holdout_needs_two_samples_per_class():
    with pytest.raises(ValueError, match="class 1 has 1 samples"):
        make_folds(np.array([0, 0, 0, 1]), "holdout", seed=0)


@pytest.mark.parametrize("cv", ["loo", 2, 5, "holdout"])
def test_fold_ids_describe_the_folds_of_make_folds(cv):
    from hpcswarm.fitness.folds import NOT_HELD_OUT, fold_ids, folds_from_ids, ids_from_folds

    folds = make_folds(Y, cv, seed=4)
    ids = fold_ids(Y, cv, seed=4)
    assert ids.shape == Y.shape and ids.dtype == np.int64
    assert np.array_equal(ids, ids_from_folds(folds, Y.size))
    rebuilt = folds_from_ids(ids)
    assert len(rebuilt) == len(folds)
    for (train, test), (train2, test2) in zip(folds, rebuilt):
        assert np.array_equal(train, train2) and np.array_equal(test, test2)
    assert (NOT_HELD_OUT in ids) == (cv == "holdout")


@pytest.mark.parametrize("folds, message", [
    ([(np.arange(1, 5), np.array([0])), (np.arange(0, 4), np.array([0, 4]))], "overlap"),
    ([(np.arange(2, 5), np.array([0]))], "every sample outside its test part"),
    ([(np.arange(0, 5), np.array([0]))], "training and test indices overlap"),
    ([], "at least one"),
])
def test_explicit_folds_must_be_one_id_per_sample(folds, message):
    from hpcswarm.fitness.folds import ids_from_folds

    with pytest.raises(ValueError, match=message):
        ids_from_folds(folds, 5)


# Tran et al.'s GEMS sets that scikit-learn's StratifiedKFold does not take as they are
NINE_TUMORS = np.repeat(np.arange(9), [9, 7, 8, 2, 6, 8, 9, 6, 5])
"""60 samples, classes of 2 to 9: every class smaller than 10 folds."""
BRAIN_TUMOR_2 = np.repeat(np.arange(4), [7, 14, 14, 15])
"""50 samples, classes of 7, 14, 14, 15: one class smaller than 10 folds."""


def _check_partition(y, folds, n_folds):
    assert len(folds) == n_folds
    tests = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tests), np.arange(y.size))
    sizes = [test.size for _, test in folds]
    assert max(sizes) - min(sizes) <= 1
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == y.size


def test_nine_tumors_shape_is_dealt_round_robin_per_class():
    assert NINE_TUMORS.size == 60 and np.bincount(NINE_TUMORS).max() < 10
    assert fold_rule(NINE_TUMORS, 10) == "round-robin"
    with pytest.raises(ValueError, match="cannot be greater than the number of members"):
        next(StratifiedKFold(10).split(np.zeros((60, 1)), NINE_TUMORS))
    folds = make_folds(NINE_TUMORS, 10, seed=4)
    _check_partition(NINE_TUMORS, folds, 10)
    per_fold = np.array([np.bincount(NINE_TUMORS[test], minlength=9) for _, test in folds])
    # every class as evenly spread as its size allows: 0 or 1 per fold (all classes < 10)
    assert per_fold.max() == 1
    assert np.array_equal(per_fold.sum(axis=0), np.bincount(NINE_TUMORS))
    again = make_folds(NINE_TUMORS, 10, seed=4)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = make_folds(NINE_TUMORS, 10, seed=5)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


def test_round_robin_deal_continues_from_one_class_to_the_next():
    y = np.repeat(np.arange(3), [5, 6, 2])
    folds = make_folds(y, 7, seed=0)
    _check_partition(y, folds, 7)
    per_fold = np.array([np.bincount(y[test], minlength=3) for _, test in folds])
    assert per_fold.max() == 1 and per_fold.sum() == 13


def test_brain_tumor_2_shape_keeps_sklearn_folds_bit_for_bit_and_warns_once(monkeypatch):
    monkeypatch.setattr("hpcswarm.fitness.folds._WARNED", set())
    assert fold_rule(BRAIN_TUMOR_2, 10) == "sklearn"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        folds = make_folds(BRAIN_TUMOR_2, 10, seed=9)
        make_folds(BRAIN_TUMOR_2, 10, seed=10)
    ours = [w for w in caught if issubclass(w.category, FoldWarning)]
    assert len(ours) == 1 and "class(es) 0 (7)" in str(ours[0].message)
    assert not [w for w in caught if "least populated" in str(w.message)]
    splitter = StratifiedKFold(10, shuffle=True, random_state=random_state_from_seed(9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = [np.sort(test) for _, test in splitter.split(np.zeros((50, 1)), BRAIN_TUMOR_2)]
    assert all(np.array_equal(test, want) for (_, test), want in zip(folds, expected))
    _check_partition(BRAIN_TUMOR_2, folds, 10)


@pytest.mark.parametrize("y", [NINE_TUMORS, BRAIN_TUMOR_2], ids=["9-tumors", "brain-tumor-2"])
def test_inner_ten_fold_fitness_runs_on_gems_shaped_labels(y):
    """An inner 10-fold fitness (bpso's default) on each training part of an outer 10-fold."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(y.size, 12)) + y[:, None]
    mask = np.zeros(12, dtype=bool)
    mask[:5] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FoldWarning)
        for train, _ in make_folds(y, 10, seed=1):
            evaluator = KnnEvaluator(X[train], y[train], k=5, cv=10, seed=2)
            score = evaluator.score(mask)
            assert score.total == train.size and 0 <= score.correct <= train.size


def test_a_training_fold_smaller_than_k_is_one_clear_error():
    y = np.repeat([0, 1], [3, 3])
    with pytest.raises(ValueError, match="k=5 exceeds the 4 training samples of a fold"):
        KnnEvaluator(np.arange(12.0).reshape(6, 2), y, k=5, cv=3)


def _label_vectors():
    """Many label vectors: class counts and orders of every kind, string and int labels."""
    rng = np.random.default_rng(21)
    for trial in range(60):
        n_classes = int(rng.integers(2, 7))
        counts = rng.integers(2, 25, size=n_classes)
        y = rng.permutation(np.repeat(np.arange(n_classes) * 3 + 1, counts))
        yield y if trial % 3 else np.array([f"c{label}" for label in y])
    yield np.repeat([5, 0], [30, 2])  # labels first seen out of sorted order
    yield np.repeat(["b", "a", "c"], [2, 40, 9])


def test_numpy_stratified_folds_are_scikit_learns():
    from sklearn.model_selection import StratifiedShuffleSplit

    checked = 0
    for trial, y in enumerate(_label_vectors()):
        for seed in (trial, 10**6 + trial):
            state = random_state_from_seed(seed)
            for n_folds in (2, 3, 5, 10):
                if np.unique(y, return_counts=True)[1].max() < n_folds or n_folds > y.size:
                    continue
                splitter = StratifiedKFold(n_folds, shuffle=True, random_state=state)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = [np.sort(test) for _, test in splitter.split(y[:, None], y)]
                    folds = make_folds(y, n_folds, seed)
                assert all(np.array_equal(test, want) for (_, test), want in zip(folds, expected))
                checked += 1
            splitter = StratifiedShuffleSplit(1, test_size=0.3, random_state=state)
            try:
                train, test = next(splitter.split(y[:, None], y))
            except ValueError:  # fewer test samples than classes: refused by both
                with pytest.raises(ValueError, match="fewer than the"):
                    make_folds(y, "holdout", seed)
                continue
            ((ours_train, ours_test),) = make_folds(y, "holdout", seed)
            assert np.array_equal(ours_train, np.sort(train))
            assert np.array_equal(ours_test, np.sort(test))
            checked += 1
    assert checked > 400


def test_the_fitness_engine_imports_no_scikit_learn_scipy_or_numba():
    """Importing the engine and the search costs no second-long imports: the folds are
    numpy, the kernels compiled (numba imported) at their first call."""
    import subprocess
    import sys

    code = ("import sys, hpcswarm.fitness, hpcswarm.selection.search; print(sorted({m.split('.')[0] "
            "for m in sys.modules} & {'sklearn', 'scipy', 'numba'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
