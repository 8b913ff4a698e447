"""Stability of selections: Kuncheva and Jaccard by pairs of folds and runs, and Nogueira et
al.'s (2018) estimator with its confidence interval, against their definitions."""

from statistics import NormalDist

import numpy as np
import pytest

from hpcswarm.stability import nogueira, stability, stability_summary


def _kuncheva_pair(a, b, n):
    r, ka, kb = len(set(a) & set(b)), len(a), len(b)
    expected = ka * kb / n
    return (r - expected) / (min(ka, kb) - expected)


def _nogueira_by_definition(Z, alpha):
    """Definition 4, Theorem 7 and Corollary 9 of Nogueira, Sechidis & Brown (2018), one
    feature set at a time."""
    M, d = Z.shape
    p = Z.mean(axis=0)
    kbar = p.sum()
    denom = (kbar / d) * (1 - kbar / d)
    phi_hat = 1 - (M / (M - 1)) * np.mean(p * (1 - p)) / denom
    phi = [(np.mean(Z[i] * p) - Z[i].sum() * kbar / d ** 2
            + phi_hat / 2 * (2 * Z[i].sum() * kbar / d ** 2 - Z[i].sum() / d - kbar / d + 1))
           / denom for i in range(M)]
    variance = 4 / M ** 2 * np.sum((np.array(phi) - np.mean(phi)) ** 2)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return phi_hat, variance, phi_hat - z * variance ** 0.5, phi_hat + z * variance ** 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nogueira_matches_its_definition(seed):
    rng = np.random.default_rng(seed)
    n_genes = 40
    subsets = [rng.choice(n_genes, size=rng.integers(1, 15), replace=False) for _ in range(9)]
    Z = np.zeros((len(subsets), n_genes))
    for row, genes in enumerate(subsets):
        Z[row, genes] = 1
    found = nogueira(subsets, n_genes, alpha=0.1)
    expected = _nogueira_by_definition(Z, 0.1)
    assert found["estimate"] == pytest.approx(expected[0], rel=1e-12)
    assert found["variance"] == pytest.approx(expected[1], rel=1e-10)
    assert (found["lower"], found["upper"]) == pytest.approx(expected[2:], rel=1e-10)
    assert found["lower"] < found["estimate"] < found["upper"]


def test_nogueira_identical_subsets_score_one_and_random_ones_about_zero():
    same = nogueira([[1, 2, 3]] * 5, 50)
    assert same["estimate"] == pytest.approx(1.0)
    assert same["variance"] == pytest.approx(0.0, abs=1e-24)
    rng = np.random.default_rng(7)
    noise = nogueira([rng.choice(2000, 20, replace=False) for _ in range(200)], 2000)
    assert abs(noise["estimate"]) < 0.02
    assert noise["lower"] < 0 < noise["upper"]


def test_nogueira_is_undefined_for_fewer_than_two_subsets_or_no_genes():
    assert nogueira([[1, 2]], 10) is None
    assert nogueira([[], []], 10) is None
    assert nogueira([list(range(10))] * 3, 10) is None


def test_summary_splits_pairs_into_folds_of_a_run_and_different_runs():
    n = 30
    subsets = [[0, 1, 2, 3], [0, 1, 2, 4], [10, 11, 12, 13], [10, 11, 12, 14], [0, 1, 2, 3]]
    runs = [0, 0, 1, 1, 2]
    summary = stability_summary(subsets, runs, n)
    within = [_kuncheva_pair(subsets[0], subsets[1], n), _kuncheva_pair(subsets[2], subsets[3], n)]
    between = [_kuncheva_pair(subsets[a], subsets[b], n)
               for a in range(5) for b in range(a + 1, 5) if runs[a] != runs[b]]
    assert summary["folds"]["kuncheva"] == pytest.approx(np.mean(within))
    assert summary["folds"]["pairs"] == 2
    assert summary["runs"]["kuncheva"] == pytest.approx(np.mean(between))
    assert summary["runs"]["pairs"] == 8
    assert summary["all"] == stability(subsets, n)
    assert summary["folds"]["kuncheva"] > 0.5 > summary["runs"]["kuncheva"]
    assert summary["nogueira"] == nogueira(subsets, n)


def test_summary_of_one_run_has_no_pairs_between_runs():
    summary = stability_summary([[0, 1], [0, 2], [1, 2]], [4, 4, 4], 10)
    assert summary["runs"] == {"kuncheva": None, "jaccard": None, "pairs": 0}
    assert summary["folds"]["pairs"] == 3
