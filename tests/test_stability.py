"""Stability of selections: Kuncheva and Jaccard by pairs of folds and runs, and Nogueira et
al.'s (2018) estimator with its confidence interval, against their definitions."""

from statistics import NormalDist

import numpy as np
import pytest

from hpcswarm.signatures.stability import (correlated_pairs, gene_similarity, nogueira, sechidis,
                                           stability, stability_summary)


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


def _phi_c_dense(Z, C):
    """Sechidis et al.'s estimator with dense matrices, as the authors' MATLAB code
    (effectiveStabilityWithRedundancy.m) computes it."""
    M, d = Z.shape
    k = Z.sum(axis=1)
    q = k.mean() / d
    sigma0 = np.full((d, d), np.mean(k * (k - 1)) / (d * (d - 1)) - q ** 2)
    np.fill_diagonal(sigma0, q * (1 - q))
    return 1 - np.sum(C * np.cov(Z, rowvar=False)) / np.sum(C * sigma0)


def _indicators(subsets, n_genes):
    Z = np.zeros((len(subsets), n_genes))
    for row, genes in enumerate(subsets):
        Z[row, genes] = 1
    return Z


def test_sechidis_is_nogueira_with_the_identity_and_one_for_identical_subsets():
    rng = np.random.default_rng(4)
    subsets = [rng.choice(30, size=rng.integers(2, 9), replace=False) for _ in range(7)]
    assert sechidis(subsets, 30) == pytest.approx(nogueira(subsets, 30)["estimate"])
    empty = correlated_pairs(rng.normal(size=(20, 30)), np.arange(30), threshold=0.99)
    assert empty.first.size == 0
    assert sechidis(subsets, 30, empty) == pytest.approx(nogueira(subsets, 30)["estimate"])
    assert sechidis([[1, 4, 7]] * 5, 30) == pytest.approx(1.0)
    assert sechidis([[1]], 30) is None and sechidis([[], []], 30) is None


def test_sechidis_matches_the_dense_definition():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(25, 12))
    X[:, 5] = X[:, 2] + 0.1 * rng.normal(size=25)
    X[:, 9] = -X[:, 2] + 0.2 * rng.normal(size=25)
    similarity = correlated_pairs(X, np.arange(12), threshold=0.8)
    assert {(a, b) for a, b in zip(similarity.first, similarity.second)} == {(2, 5), (2, 9),
                                                                           (5, 9)}
    C = np.eye(12)
    C[similarity.first, similarity.second] = C[similarity.second, similarity.first] = \
        similarity.weight
    r = np.abs(np.corrcoef(X, rowvar=False))
    assert np.allclose(C[[2, 2, 5], [5, 9, 9]], r[[2, 2, 5], [5, 9, 9]])
    subsets = [rng.choice(12, size=rng.integers(2, 6), replace=False) for _ in range(6)]
    subsets += [[2, 0], [5, 0], [9, 1]]
    assert sechidis(subsets, 12, similarity) == pytest.approx(
        _phi_c_dense(_indicators(subsets, 12), C))


def test_swapping_a_gene_for_its_correlated_copy_is_not_instability():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 50))
    X[:, 7] = 2 * X[:, 3] + 1  # a perfectly correlated copy of gene 3
    similarity = gene_similarity(X)
    assert list(zip(similarity.first, similarity.second)) == [(3, 7)]
    subsets = [[0, 1, 3], [0, 1, 7], [0, 1, 3], [0, 1, 7]]
    assert sechidis(subsets, 50, similarity) == pytest.approx(1.0)
    assert nogueira(subsets, 50)["estimate"] < 0.8
    summary = stability_summary(subsets, [0, 0, 1, 1], 50, similarity=similarity)
    assert summary["sechidis"] == pytest.approx(1.0)
    assert stability_summary(subsets, [0, 0, 1, 1], 50)["sechidis"] is None


def test_correlated_genes_no_subset_holds_still_count():
    """tr(C Sigma_0) sums C over every pair: a C over the selected genes only is wrong."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 40))
    for copy in range(20, 40):  # genes 20..39: copies of gene 20, selected by no subset
        X[:, copy] = X[:, 20] + 0.01 * rng.normal(size=30)
    subsets = [[0, 1], [2, 3, 4, 5, 6, 7], [1], [8, 9, 10, 11], [0, 12, 13, 14, 15, 16, 17]]
    whole = gene_similarity(X)
    assert whole.genes.size == 40 and whole.first.size == 20 * 19 // 2
    C = np.eye(40)
    C[whole.first, whole.second] = C[whole.second, whole.first] = whole.weight
    expected = _phi_c_dense(_indicators(subsets, 40), C)
    assert sechidis(subsets, 40, whole) == pytest.approx(expected)
    assert abs(expected - nogueira(subsets, 40)["estimate"]) > 0.01
    # a matrix over part of the genes (files of earlier versions) gives no figure
    part = correlated_pairs(X, np.arange(18))
    assert sechidis(subsets, 40, part) is None


def test_gene_similarity_is_none_when_the_whole_matrix_costs_too_much():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(10, 100))
    X[:, 60] = X[:, 20]
    whole = gene_similarity(X, work=10 * 100 ** 2 / 2)
    assert whole.genes.size == 100 and (20, 60) in set(zip(whole.first, whole.second))
    assert gene_similarity(X, work=10 * 100 ** 2 / 2 - 1) is None
    with pytest.raises(ValueError, match="threshold"):
        correlated_pairs(X, [1, 2], threshold=0)
