"""Leave-one-out 1-NN hypothesis margins (Gilad-Bachrach, Navot & Tishby 2004)."""

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator
from hpcswarm.fitness.margins import (label_codes, margin_sum, margin_sums,
                                      subset_distances)


def brute_margins(X, y):
    """Per-sample margins by their definition, with scipy's distances."""
    from scipy.spatial.distance import cdist

    d = cdist(X, X)
    np.fill_diagonal(d, np.inf)
    same = y[:, None] == y[None, :]
    hit = np.where(same, d, np.inf).min(axis=1)
    miss = np.where(~same, d, np.inf).min(axis=1)
    return (miss - hit) / 2


@pytest.mark.parametrize("seed", range(3))
def test_margin_sum_is_the_sum_of_the_definition(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 12))
    y = rng.integers(0, 3, 25)
    y[:2] = 3                                   # a class of two
    codes, counted = label_codes(y)
    assert counted.all()
    assert margin_sum(X.T, codes, counted) == pytest.approx(brute_margins(X, y).sum(), rel=1e-12)
    assert np.allclose(subset_distances(X.T), ((X[:, None] - X[None]) ** 2).sum(-1), rtol=1e-12)


def test_margin_is_positive_exactly_where_leave_one_out_is_correct():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 6))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    margins = brute_margins(X, y)
    evaluator = KnnEvaluator(X, y, k=1, cv="loo")
    assert evaluator.score(np.ones(6, dtype=bool)).correct == np.count_nonzero(margins > 0)


def test_removal_sums_equal_the_sums_of_the_smaller_subsets():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 9))
    y = rng.integers(0, 2, 30)
    codes, counted = label_codes(y)
    candidates = np.array([0, 4, 8, 3])
    whole, sums = margin_sums(X.T, candidates, codes, counted)
    expected = [margin_sum(np.delete(X.T, g, axis=0), codes, counted) for g in candidates]
    assert np.allclose(sums, expected, rtol=1e-12)
    assert whole == margin_sum(X.T, codes, counted)     # the same pass, the same bits


def test_a_sample_alone_in_its_class_is_left_out():
    X = np.array([[0.0], [1.0], [3.0], [10.0]])
    y = np.array([0, 0, 1, 2])                  # classes 1 and 2: one sample each
    codes, counted = label_codes(y)
    assert counted.tolist() == [True, True, False, False]
    # samples 0 and 1: nearhit at 1, nearmiss (sample 2) at 3 and 2
    assert margin_sum(X.T, codes, counted) == pytest.approx((3 - 1) / 2 + (2 - 1) / 2)
