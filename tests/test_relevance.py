"""The relevance refinement (hpcswarm.signatures.relevance): statistics, ranking, known answers,
promises."""

import numpy as np
import pytest
from scipy.stats import f_oneway, ttest_ind

from hpcswarm.fitness import GeneMajor, KnnEvaluator
from hpcswarm.run.jobfile import build_job
from hpcswarm.selection.search import run_search
from hpcswarm.signatures.refinements import DEFAULT, SIGNATURE_REFINE
from hpcswarm.signatures.relevance import (balanced_ranking, one_vs_rest, prefix_scores,
                                relevance_prefix, relevance_subset)
from synthetic import small_data

SETTINGS = {"n_particles": 6, "n_iterations": 4, "ls_tries": 5}


def test_one_vs_rest_is_welchs_statistic_of_each_class_against_the_others():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 25)) * rng.uniform(0.1, 5, size=25)
    y = np.repeat([2, 5, 7], [12, 20, 8])  # codes need not be 0..k-1
    statistics = one_vs_rest(X, y)
    assert statistics.shape == (3, 25)
    for row, code in enumerate([2, 5, 7]):
        expected = np.abs(ttest_ind(X[y == code], X[y != code], equal_var=False).statistic)
        np.testing.assert_allclose(statistics[row], expected, rtol=1e-12)
    assert np.array_equal(one_vs_rest(GeneMajor.from_samples(X), y), statistics)


def test_a_class_of_one_sample_adds_no_variance_and_no_spread_scores_zero():
    X = np.array([[5.0, 1.0, 3.0], [1.0, 1.0, 3.0], [2.0, 1.0, 3.0], [3.0, 2.0, 3.0]])
    y = np.array([0, 1, 1, 1])
    statistics = one_vs_rest(X, y)
    rest = X[1:, 0]
    assert statistics[0, 0] == pytest.approx(abs(5 - rest.mean()) / np.sqrt(rest.var(ddof=1) / 3))
    assert statistics[0, 0] == statistics[1, 0]  # two classes: the same contrast
    assert statistics[0, 1] > 0 and statistics[:, 2].tolist() == [0.0, 0.0]  # constant gene
    assert one_vs_rest(X, np.zeros(4, dtype=int)).tolist() == [[0.0, 0.0, 0.0]]  # one class


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_extreme_magnitudes_give_the_same_statistics(scale):
    X, y = small_data(2, n_samples=30, n_genes=12)
    X = X / np.abs(X).max()  # within [-1, 1], so that X * 1e300 stays finite
    statistics = one_vs_rest(X, y)
    scaled = one_vs_rest(X * scale, y)
    assert np.all(np.isfinite(scaled))
    np.testing.assert_allclose(scaled, statistics, rtol=1e-9)


def test_the_ranking_takes_each_classs_next_gene_in_turn():
    statistics = np.array([[9.0, 8.0, 0.0, 7.0, 0.0],
                           [9.0, 0.0, 5.0, 0.0, 1.0],
                           [0.0, 0.0, 0.0, 0.0, 0.0]])  # ties to the lower column
    # class 0 ranks 0 1 3 2 4, class 1 ranks 0 2 4 1 3, class 2 ranks 0 1 2 3 4
    assert balanced_ranking(statistics, 5).tolist() == [0, 2, 1, 3, 4]
    assert balanced_ranking(statistics, 2).tolist() == [0, 2]
    assert balanced_ranking(statistics, 9).tolist() == [0, 2, 1, 3, 4]


@pytest.mark.parametrize("seed", range(5))
def test_a_small_class_gets_its_gene_where_one_statistic_for_all_classes_would_not(seed):
    # classes of 30, 30 and 4: genes 0-5 part the two large classes widely, gene 6 marks
    # the small class a little less; the ANOVA F ranks gene 6 seventh, the round robin third
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [30, 30, 4])
    X = rng.normal(size=(64, 50))
    X[:, :6] += 6.0 * (y == 1)[:, None]
    X[:, 6] += 5.0 * (y == 2)
    f_rank = np.argsort(-f_oneway(*[X[y == c] for c in range(3)]).statistic)
    assert 6 not in f_rank[:6]
    assert balanced_ranking(one_vs_rest(X, y), 3)[2] == 6
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    refined = relevance_prefix(scorer, X, y)
    assert 6 in refined.genes and 6 not in f_rank[:refined.genes.size]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5])
def test_planted_genes_are_kept_and_noise_dropped(seed):
    # four classes; gene g < 3 marks class g, so that only the three together tell all four
    # apart; 57 genes of noise
    rng = np.random.default_rng(seed)
    y = np.arange(48) % 4
    X = rng.normal(size=(48, 60))
    X[:, :3] += 8.0 * (y[:, None] == np.arange(3))
    result = run_search(X, y, "pso-lsrg", SETTINGS, seed=seed, refine="relevance")
    assert result.refined.method == "relevance"
    assert result.refined.genes.tolist() == [0, 1, 2]
    assert result.refined.correct == result.refined.total
    assert result.refined.removed.size == 0 and result.refined.frequency is None


@pytest.mark.parametrize("seed", [0, 4, 7])
def test_the_cut_keeps_the_best_inner_count_of_its_prefixes_and_is_the_shortest(seed):
    X, y = small_data(seed, n_samples=45, n_genes=60)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    refined = relevance_prefix(scorer, X, y)
    ranking = balanced_ranking(one_vs_rest(X, y), X.shape[1])
    counts = []
    for size in range(1, X.shape[1] + 1):
        mask = np.zeros(X.shape[1], dtype=bool)
        mask[ranking[:size]] = True
        counts.append(scorer.score(mask).correct)
    assert refined.correct == max(counts) == scorer.score(refined.mask).correct
    assert refined.genes.size == counts.index(max(counts)) + 1
    assert np.array_equal(np.sort(ranking[:refined.genes.size]), refined.genes)


def test_the_rule_reads_the_training_samples_only_and_ignores_the_search():
    X, y = small_data(6, n_samples=45, n_genes=60)
    first = run_search(X, y, "pso-lsrg", SETTINGS, seed=1, refine="relevance")
    second = run_search(X, y, "pso-lsrg", SETTINGS, seed=2, refine="relevance")
    assert not np.array_equal(first.genes, second.genes)
    assert np.array_equal(first.refined.genes, second.refined.genes)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    assert np.array_equal(first.refined.genes, relevance_prefix(scorer, X, y).genes)


def test_a_final_signature_job_refines_by_the_default_unless_told_otherwise():
    document = {"data": "builtin:srbct", "algorithm": "pso-lsrg", "protocol": "final-signature"}
    assert build_job(dict(document), source="job.toml").spec.refine == DEFAULT
    assert DEFAULT != "relevance"  # the filter reads no search: never the signature's default
    assert build_job({**document, "refine": "consensus"}, source="job.toml").spec.refine == "consensus"
    assert build_job({**document, "protocol": "unbiased"}, source="job.toml").spec.refine == "none"
    vlpso = build_job({**document, "algorithm": "vlpso"}, source="job.toml")
    assert vlpso.spec.refine == SIGNATURE_REFINE  # the default signature's rule
