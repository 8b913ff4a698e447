"""Validation folds: leave-one-out, stratified n-fold fixed by the seed, stratified holdout."""

import numpy as np
import pytest

from hpcswarm.fitness import make_folds

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
    (10, "class 2 has 8 samples, fewer than the 10"),
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
