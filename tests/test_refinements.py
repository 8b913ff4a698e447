"""The registry of refinements (hpcswarm.signatures.refinements) and the default signature's
promise: it is made from the swarm's answer, and it beats the filter where genes matter only
together."""

import numpy as np
import pytest

import hpcswarm
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import KnnEvaluator, score_split
from hpcswarm.selection.search import run_search
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.signatures.refinements import (CHOICES, DEFAULT, KINDS, REFINEMENTS,
                                             SIGNATURE_METHOD, SIGNATURE_REFINE,
                                             SUBSAMPLING, final_refine, row_label)
from hpcswarm.signatures.relevance import (balanced_ranking, one_vs_rest, prefix_scores,
                                           relevance_subset, relevance_subset_1se,
                                           shortest_best, within_one_se)
from synthetic import small_data

SETTINGS = {"n_particles": 10, "n_iterations": 8, "ls_tries": 10}


def parity_data(seed, n_samples, n_genes=40, copies=2):
    """Two-bit parity: the class is the XOR of two binary states, each carried by ``copies``
    noisy genes (0, 1; 2, 3; ...); every gene alone is independent of the class."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(n_samples, 2))
    X = rng.normal(size=(n_samples, n_genes))
    for copy in range(copies):
        X[:, 2 * copy:2 * copy + 2] = (2 * bits - 1) * 1.5 + rng.normal(scale=0.5,
                                                                        size=(n_samples, 2))
    return X, bits[:, 0] ^ bits[:, 1]


def test_every_rule_has_a_kind_and_a_function_of_that_kind():
    """Each row names a function of its kind's signature (a trim reads the subset, a
    subsample rule the searches on halves, a rank rule neither)."""
    import inspect

    arguments = {"trim": ["scorer", "data", "y", "mask"],
                 "saturation": ["scorer", "data", "y", "mask", "params", "max_genes"],
                 "swarm": ["scorer", "data", "y", "mask", "personal_bests", "params", "root",
                           "grid"],
                 "rank": ["scorer", "data", "y"],
                 "subsample": ["scorer", "data", "y", "selections"]}
    assert CHOICES == ("none", *REFINEMENTS)
    for name, rule in REFINEMENTS.items():
        assert rule.kind in KINDS
        assert list(inspect.signature(rule.function()).parameters) == arguments[rule.kind]
        assert ("subset" in rule.needs) == (rule.kind in ("trim", "saturation", "swarm"))
    assert SUBSAMPLING == ("stability", "consensus")
    with pytest.raises(ParameterError, match="'refine' must be one of none, prune"):
        SearchSpec.build("pso-lsrg", refine="relevance-all")


def test_the_filter_is_a_baseline_row_and_the_others_are_the_methods_own():
    assert row_label("relevance", "PSO-LSRG") == "Welch-RR filter"
    assert row_label("prune-compact", "PSO-LSRG") == "PSO-LSRG+prune-compact"
    assert REFINEMENTS[DEFAULT].kind != "rank" and "subset" in REFINEMENTS[DEFAULT].needs


@pytest.mark.parametrize("seed", [0, 4])
def test_relevance_subset_keeps_the_best_prefix_of_the_subsets_own_ranking(seed):
    X, y = small_data(seed, n_samples=45, n_genes=60)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    mask = np.zeros(60, dtype=bool)
    mask[np.random.default_rng(seed).choice(60, size=25, replace=False)] = True
    refined = relevance_subset(scorer, X, y, mask)
    genes = np.flatnonzero(mask)
    ranking = genes[balanced_ranking(one_vs_rest(X, y)[:, genes], genes.size)]
    counts = []
    for size in range(1, genes.size + 1):
        prefix = np.zeros(60, dtype=bool)
        prefix[ranking[:size]] = True
        counts.append(scorer.score(prefix).correct)
    assert refined.correct == max(counts) == scorer.score(refined.mask).correct
    assert refined.genes.size == counts.index(max(counts)) + 1
    assert set(refined.genes) <= set(genes)
    assert sorted([*refined.genes, *refined.removed]) == genes.tolist()


def test_the_one_standard_error_cut():
    # best 90 of 100: standard error sqrt(90 * 10 / 100) = 3, so 87 is within it, 86 is not
    assert within_one_se([50, 86, 87, 89, 90, 90], 100) == 3
    assert shortest_best([50, 86, 87, 89, 90, 90], 100) == 5
    assert within_one_se([60, 99, 100, 100], 100) == 3  # no mistake: no standard error


@pytest.mark.parametrize("seed", [0, 4])
def test_the_1se_rule_keeps_a_prefix_of_the_same_ranking_no_longer(seed):
    X, y = small_data(seed, n_samples=45, n_genes=60)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    mask = np.zeros(60, dtype=bool)
    mask[np.random.default_rng(seed).choice(60, size=25, replace=False)] = True
    best, parsimonious = (rule(scorer, X, y, mask) for rule in (relevance_subset,
                                                                relevance_subset_1se))
    genes = np.flatnonzero(mask)
    ranking = genes[balanced_ranking(one_vs_rest(X, y)[:, genes], genes.size)]
    counts = [score.correct for score in prefix_scores(scorer, ranking)]
    size = within_one_se(counts, 45)
    assert np.array_equal(parsimonious.genes, np.sort(ranking[:size]))
    assert size <= best.genes.size
    assert parsimonious.correct == scorer.score(parsimonious.mask).correct


def test_prefixes_scored_one_gene_at_a_time_equal_full_evaluations():
    X, y = small_data(3, n_samples=40, n_genes=50)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    ranking = np.random.default_rng(1).permutation(50)
    for size, score in enumerate(prefix_scores(scorer, ranking), 1):
        mask = np.zeros(50, dtype=bool)
        mask[ranking[:size]] = True
        assert score == scorer.score(mask)


def test_the_default_signature_is_the_swarms_and_beats_the_filter_on_parity():
    X, y = parity_data(0, 80)
    X_test, y_test = parity_data(1, 400)
    signatures = {}
    for seed in (1, 2):
        result = run_search(X, y, "pso-lsrg", SETTINGS, seed=seed, refine=DEFAULT)
        assert set(result.refined.genes) <= set(result.genes)
        signatures[seed] = result.refined
    assert not np.array_equal(signatures[1].genes, signatures[2].genes)
    filtered = run_search(X, y, "pso-lsrg", SETTINGS, seed=1, refine="relevance").refined
    same_filter = run_search(X, y, "pso-lsrg", SETTINGS, seed=2, refine="relevance").refined
    assert np.array_equal(filtered.genes, same_filter.genes)  # a filter ignores the search
    filter_accuracy = score_split(X, y, X_test, y_test, filtered.mask, 1).accuracy
    for refined in signatures.values():
        assert score_split(X, y, X_test, y_test, refined.mask, 1).accuracy > filter_accuracy
        assert refined.genes.size < filtered.genes.size


def test_the_default_signature_is_vlpso_refined_by_its_rule_and_beats_the_filter_on_parity():
    X, y = parity_data(0, 80)
    X_test, y_test = parity_data(1, 400)
    found = {seed: hpcswarm.select(X, y, random_state=seed, n_particles=12, n_iterations=10)
             for seed in (1, 2)}
    for result in found.values():
        assert result.algorithm == SIGNATURE_METHOD
        assert final_refine(SIGNATURE_METHOD) == SIGNATURE_REFINE == result.settings["refine"]
        refined = result.selector.result_.refined
        assert result.chosen_from == "refine" and refined.method == SIGNATURE_REFINE
        assert result.genes.tolist() == refined.genes.tolist()
    assert found[1].gene_names != found[2].gene_names  # the signature is each search's own
    filtered = run_search(X, y, "pso-lsrg", SETTINGS, seed=1, refine="relevance").refined
    filter_accuracy = score_split(X, y, X_test, y_test, filtered.mask, 1).accuracy
    for result in found.values():
        signature = result.selector.support_
        assert score_split(X, y, X_test, y_test, signature, 1).accuracy > filter_accuracy
        assert signature.sum() < filtered.genes.size
