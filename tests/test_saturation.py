"""``refine = "saturation-margin"`` and ``"saturation-exchange"``: the search's subset unless it
saturates the inner validation, then the margin's choice from VLPSO's first division (anew, or
by exchanges at the subset's size)."""

import numpy as np
import pytest

from hpcswarm.fitness import GeneMajor, KnnEvaluator
from hpcswarm.fitness.margins import exchange_margin_sums, label_codes, margin_sum
from hpcswarm.selection.search import run_search
from hpcswarm.signatures import saturation
from hpcswarm.signatures.refine import prune_compact
from hpcswarm.signatures.saturation import first_division, saturation_exchange, saturation_margin
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import relevance_order, relevance_scores
from synthetic import small_data, vlpso_saturates


def easy_data():
    """Three classes 8 SD apart on genes 0 to 2, 60 genes in all: one of those genes
    classifies every sample."""
    return small_data(seed=3, n_samples=36, n_genes=60, n_informative=3, shift=8.0)


def mask_of(n_genes, genes):
    mask = np.zeros(n_genes, dtype=bool)
    mask[list(genes)] = True
    return mask


SETTINGS = {"n_particles": 8, "n_iterations": 6, "n_divisions": 3, "change_after": 2,
            "refresh_gap": 2}
SU_12 = {"gene_order": "su", "n_divisions": 12}
FEWER_PARTICLES = pytest.mark.filterwarnings("ignore:vlpso. n_divisions=3 reduced to 2")


@pytest.mark.parametrize("settings, max_genes", [(SETTINGS, None), (SETTINGS, 9),
                                                  ({**SETTINGS, "gene_order": "f"}, None),
                                                  pytest.param({**SETTINGS, "n_particles": 2},
                                                               None, marks=FEWER_PARTICLES)])
def test_the_first_division_is_the_genes_vlpsos_first_division_searches(settings, max_genes):
    X, y = easy_data()
    result = run_search(X, y, "vlpso", settings, seed=2, max_genes=max_genes)
    n_divisions = min(settings["n_divisions"], settings["n_particles"])
    length = (max_genes or X.shape[1]) // n_divisions
    expected = mask_of(X.shape[1], result.extra["ranking"][:length])
    assert np.array_equal(first_division(X, y, result.params, max_genes), expected)


def test_without_vlpsos_settings_the_first_twelfth_of_the_su_order():
    X, y = easy_data()
    scores = relevance_scores(GeneMajor.of(X), y, np.arange(X.shape[1]))
    expected = mask_of(X.shape[1], relevance_order(scores)[:60 // 12])
    assert np.array_equal(first_division(X, y, {}), expected)
    # another method's swarm size is no VLPSO division count
    assert np.array_equal(first_division(X, y, {"n_particles": 4}), expected)
    assert np.count_nonzero(first_division(X[:, :5], y, {})) == 1  # never empty


def test_a_subset_that_misses_an_inner_prediction_is_kept_as_it_is():
    X, y = easy_data()
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    noise = mask_of(X.shape[1], [20, 31, 45])
    assert scorer.score(noise).correct < scorer.score(noise).total
    refined = saturation_margin(scorer, X, y, noise, SU_12)
    assert np.array_equal(refined.mask, noise) and refined.removed.size == 0
    assert refined.method == "saturation-margin"
    assert (refined.correct, refined.total) == (scorer.score(noise).correct, scorer.total)


def test_a_saturated_subset_is_replaced_by_the_margins_choice_from_the_first_division():
    X, y = easy_data()
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    smallest = mask_of(X.shape[1], [0])          # one gene already classifies every sample
    assert scorer.score(smallest).correct == scorer.total
    start = first_division(X, y, SU_12)
    refined = saturation_margin(scorer, X, y, smallest, SU_12)
    expected = prune_compact(scorer, X, y, start)
    assert np.array_equal(refined.mask, expected.mask)
    assert refined.correct == refined.total == scorer.total
    assert not np.any(refined.mask & ~start)     # genes of the first division only
    assert np.array_equal(np.sort(refined.removed), np.flatnonzero(start & ~refined.mask))
    # the relative margin chose more than the one gene the size tie-break would keep
    assert np.count_nonzero(refined.mask) > 1


def test_a_first_division_that_misses_a_prediction_leaves_the_subset(monkeypatch):
    """Even where the backward path from those genes would reach every inner prediction."""
    X, y = small_data(seed=3, n_samples=36, n_genes=60, n_informative=3, shift=3.0)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    smallest = mask_of(X.shape[1], [0, 1, 2])
    assert scorer.score(smallest).correct == scorer.total
    missing = np.flatnonzero([scorer.score(mask_of(60, [0, 1, 2, *range(3, 3 + extra)])).correct
                              < scorer.total for extra in range(1, 30)])
    start = mask_of(60, [0, 1, 2, *range(3, 4 + int(missing[0]))])
    assert scorer.score(start).correct < scorer.total
    assert prune_compact(scorer, X, y, start).correct == scorer.total  # the path would climb
    monkeypatch.setattr(saturation, "first_division", lambda *args: start)
    refined = saturation_margin(scorer, X, y, smallest, SU_12)
    assert np.array_equal(refined.mask, smallest) and refined.removed.size == 0


def test_the_size_cap_bounds_the_signature():
    X, y = easy_data()
    result = run_search(X, y, "vlpso", SETTINGS, seed=2, max_genes=2,
                        refine="saturation-margin")
    assert result.refined.correct == result.refined.total
    assert 1 <= np.count_nonzero(result.refined.mask) <= 2


@pytest.mark.parametrize("cv", ["loo", 5])
def test_the_rule_in_a_vlpso_search_reads_the_search_only_where_it_saturates(cv):
    X, y = easy_data()
    settings = {**SETTINGS, "cv": cv}
    plain = run_search(X, y, "vlpso", settings, seed=2)
    refined = run_search(X, y, "vlpso", settings, seed=2, refine="saturation-margin")
    assert np.array_equal(plain.mask, refined.mask)   # the search itself is unchanged
    assert refined.refined.method == "saturation-margin"
    assert refined.refined.correct == refined.refined.total
    assert not np.array_equal(refined.refined.mask, refined.mask)


def relative_margin(X, y, genes):
    """``e(F) / r(F)`` of the genes ``genes``, from scratch."""
    codes, counted = label_codes(y)
    values = X[:, genes].T
    return margin_sum(values, codes, counted) / np.sqrt(values.var(axis=1).sum())


def exchanges_from_scratch(scorer, X, y, mask, pool):
    """The exchange rule written plainly: every exchange scored and measured from scratch."""
    mask = mask.copy()
    for _ in range(np.count_nonzero(mask)):
        current = relative_margin(X, y, np.flatnonzero(mask))
        best, best_ratio = None, -np.inf
        for out in np.flatnonzero(mask):
            for come in np.flatnonzero(pool & ~mask):
                trial = mask.copy()
                trial[[out, come]] = [False, True]
                if scorer.score(trial).correct < scorer.total:
                    continue
                ratio = relative_margin(X, y, np.flatnonzero(trial))
                if ratio > best_ratio:
                    best, best_ratio = trial, ratio
        if best is None or best_ratio <= current + 1e-9 * max(1.0, abs(current)):
            return mask
        mask = best
    return mask


def test_the_exchange_margin_sums_are_those_of_the_exchanged_subsets():
    X, y = small_data(seed=4, n_samples=30, n_genes=20, shift=1.5)
    y = y.copy()
    y[0] = 3                       # a class of one sample: no nearhit, left out of the sums
    codes, counted = label_codes(y)
    assert not counted[0]
    inside, outside = X[:, [0, 4, 9]].T, X[:, [1, 2, 15, 19]].T
    whole, exchanged = exchange_margin_sums(inside, outside, codes, counted)
    assert whole == margin_sum(inside, codes, counted)
    for a in range(3):
        for b in range(4):
            subset = np.vstack([np.delete(inside, a, axis=0), outside[b:b + 1]])
            assert exchanged[a, b] == pytest.approx(margin_sum(subset, codes, counted),
                                                    rel=1e-12)


def test_a_subset_that_misses_is_kept_by_the_exchange_rule():
    X, y = easy_data()
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    noise = mask_of(X.shape[1], [20, 31, 45])
    refined = saturation_exchange(scorer, X, y, noise, SU_12)
    assert np.array_equal(refined.mask, noise) and refined.removed.size == 0
    assert refined.method == "saturation-exchange"
    assert (refined.correct, refined.total) == (scorer.score(noise).correct, scorer.total)


@pytest.mark.parametrize("cv", ["loo", 5])
def test_a_saturated_subset_keeps_its_size_and_takes_the_exchanges_of_largest_margin(cv):
    """Three planted genes and three noise genes that together classify every sample: the
    rule exchanges noise for the first division's planted genes (ten of them), as the plain
    search written in the test does, and never loses an inner prediction."""
    X, y = small_data(seed=3, n_samples=36, n_genes=120, n_informative=10, shift=4.5)
    scorer = KnnEvaluator(X, y, k=1, cv=cv, seed=1)
    start = mask_of(120, [0, 1, 2, 40, 61, 95])
    assert scorer.score(start).correct == scorer.total
    pool = first_division(X, y, SU_12)
    assert np.count_nonzero(pool) == 10
    refined = saturation_exchange(scorer, X, y, start, SU_12)
    assert np.count_nonzero(refined.mask) == 6
    assert not np.any(refined.mask[[40, 61, 95]])
    assert refined.correct == refined.total == scorer.score(refined.mask).correct
    assert np.array_equal(refined.mask, exchanges_from_scratch(scorer, X, y, start, pool))
    came_in = refined.mask & ~start
    assert came_in.any() and not np.any(came_in & ~pool)
    assert sorted(refined.removed) == np.flatnonzero(start & ~refined.mask).tolist()
    assert (relative_margin(X, y, refined.genes)
            > relative_margin(X, y, np.flatnonzero(start)))


def test_the_exchange_rule_in_a_vlpso_search_keeps_the_search_and_its_size():
    X, y = vlpso_saturates()
    settings = {**SETTINGS, "n_divisions": 2}
    plain = run_search(X, y, "vlpso", settings, seed=1)
    refined = run_search(X, y, "vlpso", settings, seed=1, refine="saturation-exchange")
    assert np.array_equal(plain.mask, refined.mask)   # the search itself is unchanged
    assert refined.refined.method == "saturation-exchange"
    assert refined.refined.correct == refined.refined.total
    assert np.count_nonzero(refined.refined.mask) == np.count_nonzero(refined.mask)
    assert not np.array_equal(refined.refined.mask, refined.mask)   # the rule fired


@pytest.mark.parametrize("seed", [3, 5, 6])
def test_genes_of_other_scales_are_weighed_by_the_relative_margin(seed):
    """Genes scaled by factors of 0.2 to 5: the raw margin, or the spread kept wrongly, would
    choose other exchanges than the plain search of the test."""
    X, y = small_data(seed=seed, n_samples=36, n_genes=120, n_informative=10, shift=4.5)
    X = X * np.random.default_rng(0).uniform(0.2, 5.0, size=X.shape[1])
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    start = mask_of(120, [0, 1, 2, 40, 61, 95])
    assert scorer.score(start).correct == scorer.total
    refined = saturation_exchange(scorer, X, y, start, SU_12)
    pool = first_division(X, y, SU_12)
    assert np.array_equal(refined.mask, exchanges_from_scratch(scorer, X, y, start, pool))
    assert not np.array_equal(refined.mask, start)


def steer(monkeypatch, X, steps):
    """``exchange_margin_sums`` replaced: at each step, margin sum 0 for the subset and
    ``steps[i][(out, in)]`` for the exchanges named (0 for the others); all 0 after them."""
    steps = list(steps)

    def gene_of(row):
        return int(np.flatnonzero((X.T == row).all(axis=1))[0])

    def steered(values, incoming, codes, counted):
        inside, entering = [gene_of(v) for v in values], [gene_of(v) for v in incoming]
        exchanged = np.zeros((len(inside), len(entering)))
        for (out, come), margin in (steps.pop(0) if steps else {}).items():
            exchanged[inside.index(out), entering.index(come)] = margin
        return 0.0, exchanged

    monkeypatch.setattr(saturation, "exchange_margin_sums", steered)


def test_an_exchange_that_loses_an_inner_prediction_is_not_taken(monkeypatch):
    X, y = easy_data()
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    pool = [gene for gene in np.flatnonzero(first_division(X, y, SU_12)) if gene != 0]
    saturating = [scorer.score(mask_of(60, [gene])).correct == scorer.total for gene in pool]
    losing, keeping = pool[saturating.index(False)], pool[saturating.index(True)]
    steer(monkeypatch, X, [{(0, losing): 2.0, (0, keeping): 1.0}])
    refined = saturation_exchange(scorer, X, y, mask_of(60, [0]), SU_12)
    assert refined.genes.tolist() == [keeping]


def test_a_gene_for_its_identical_copy_is_no_gain():
    """The copy's exchange sums come out of updated sums, the subset's from its genes; the
    rounding between them is not a gain."""
    X, y = small_data(seed=3, n_samples=36, n_genes=60, n_informative=3, shift=8.0)
    order = np.flatnonzero(first_division(X, y, SU_12))
    X = X.copy()
    X[:, order[1:]] = X[:, [order[0]]]        # the first division: one gene and its copies
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    start = mask_of(60, [order[0]])
    assert scorer.score(start).correct == scorer.total
    refined = saturation_exchange(scorer, X, y, start, SU_12)
    assert np.array_equal(refined.mask, start) and refined.removed.size == 0


def test_a_gene_exchanged_out_twice_is_removed_once(monkeypatch):
    """Margins that send gene 0 out, back in and out again: the results file's
    ``refined_removed`` must hold each gene once, so the rule lists it once."""
    X, y = easy_data()
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    start = mask_of(60, [0, 1, 2])
    pool = np.flatnonzero(first_division(X, y, SU_12))
    first, second = [gene for gene in pool if gene not in (0, 1, 2)][:2]
    steer(monkeypatch, X, [{(0, first): 1.0}, {(first, 0): 1.0}, {(0, second): 1.0}])
    refined = saturation_exchange(scorer, X, y, start, SU_12)
    assert refined.genes.tolist() == sorted([second, 1, 2])
    assert refined.removed.tolist() == [0]


def test_a_gain_within_rounding_is_no_gain(monkeypatch):
    X, y = easy_data()
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    pool = [gene for gene in np.flatnonzero(first_division(X, y, SU_12)) if gene != 0]
    keeping = next(gene for gene in pool
                   if scorer.score(mask_of(60, [gene])).correct == scorer.total)
    steer(monkeypatch, X, [{(0, keeping): 1e-13}])   # above the subset's 0 by rounding only
    refined = saturation_exchange(scorer, X, y, mask_of(60, [0]), SU_12)
    assert refined.genes.tolist() == [0]
    steer(monkeypatch, X, [{(0, keeping): 1e-6}])
    assert saturation_exchange(scorer, X, y, mask_of(60, [0]), SU_12).genes.tolist() == [keeping]
