"""studies.relieff: skrebate's ReliefF weights, bit for bit, over all genes at once."""

import numpy as np
import pytest
from skrebate import ReliefF

from studies.relieff import pairwise_sum, relieff_weights


def skrebate_weights(X, y, k):
    label_type = "binary" if np.unique(y).size == 2 else "multiclass"
    return ReliefF(n_neighbors=k, label_type=label_type,
                   n_jobs=1).fit(X.copy(), y).feature_importances_


def scaled(X):
    span = np.ptp(X, axis=0)
    return (X - X.min(axis=0)) / np.where(span > 0, span, 1)


@pytest.mark.parametrize("classes", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("genes", ["continuous", "mixed", "threshold", "discrete",
                                   "tied samples"])
@pytest.mark.parametrize("k", [1, 4, 10])
def test_the_weights_are_skrebate_s_bit_for_bit(classes, genes, k):
    rng = np.random.default_rng(100 * classes + k + len(genes))
    y = rng.integers(0, classes, size=31)
    y[:classes] = rng.permutation(classes)  # the classes first met in no particular order
    X = rng.standard_normal((31, 40))
    if genes == "mixed":  # genes of three values are discrete to skrebate
        X[:, :12] = rng.integers(0, 3, size=(31, 12))
    elif genes == "threshold":  # 10 distinct values: discrete; 11: continuous
        for gene, values in enumerate((10, 11, 10, 11)):
            X[:, gene] = np.r_[np.arange(values), rng.integers(0, values, 31 - values)]
    elif genes == "discrete":
        X = rng.integers(0, 4, size=(31, 40)).astype(np.float64)
    elif genes == "tied samples":  # equal distances: numpy's argsort order decides
        X[16:] = X[:15]
        y[16:] = y[:15]
    X = scaled(X)
    assert np.array_equal(relieff_weights(X, y, k), skrebate_weights(X, y, k))


def test_a_class_smaller_than_k_and_a_class_of_one_score_as_in_skrebate():
    # skrebate counts a sample among its own hits when its class has k samples or fewer: a
    # class of one sample has the sample itself as its only hit
    rng = np.random.default_rng(8)
    y = np.array([0] * 12 + [1] * 4 + [2])
    X = scaled(rng.standard_normal((17, 25)) + 2.0 * np.eye(3)[y] @ rng.normal(size=(3, 25)))
    assert np.array_equal(relieff_weights(X, y, 10), skrebate_weights(X, y, 10))
    two = y[:16].copy()
    assert np.array_equal(relieff_weights(X[:16], two, 10), skrebate_weights(X[:16], two, 10))


def test_string_labels_in_any_order_score_as_in_skrebate():
    # the miss classes are added in the order of their first sample, as skrebate adds them
    rng = np.random.default_rng(9)
    y = np.array(list("cabbcacabcbacbaccbab"))
    X = scaled(rng.standard_normal((20, 15)))
    assert np.array_equal(relieff_weights(X, y, 3), skrebate_weights(X, y, 3))


def test_the_pairwise_sum_is_numpy_s_one_dimensional_sum():
    rng = np.random.default_rng(2)
    for count in range(1, 129):
        columns = rng.standard_normal((50, count)) * 10.0 ** rng.integers(-3, 4, size=(50, 1))
        expected = np.array([row.copy().sum() for row in columns])
        assert pairwise_sum(columns).tobytes() == expected.tobytes()


def test_what_skrebate_would_compute_otherwise_is_refused():
    X = np.zeros((4, 3))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing"):
        relieff_weights(X, np.array([0, 0, 1, 1]), 1)
    with pytest.raises(ValueError, match="same class"):
        relieff_weights(np.eye(4), np.zeros(4), 1)
    with pytest.raises(ValueError, match="float64"):  # skrebate computes float32 in float32
        relieff_weights(np.eye(4, dtype=np.float32), np.array([0, 0, 1, 1]), 1)
    with pytest.raises(ValueError, match="k must be"):
        relieff_weights(np.eye(4), np.array([0, 0, 1, 1]), 0)
