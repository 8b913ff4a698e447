"""hpcswarm.signatures.purity: the signature chosen among the swarm's own answers by the
purity of the held-out samples' neighbourhoods on a fresh split."""

import numpy as np
import pytest
from sklearn.feature_selection import f_classif
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.evaluator import KnnEvaluator
from hpcswarm.selection.search import run_search
from hpcswarm.signatures.purity import (NAME, NAME_1SE, NAME_1SE_ANOVA, NAME_ANOVA,
                                        anova_challenge, candidate_tallies, fresh_folds,
                                        neighbour_purity, neighbour_purity_1se,
                                        neighbour_purity_1se_anova, neighbour_purity_anova,
                                        neighbour_tallies, purest, smallest_within_one_se,
                                        swarm_answers, with_anova_tops, within_one_se_of)
from hpcswarm.swarm.methods.vlpso.gene_order import gene_order
from hpcswarm.signatures.relevance import within_one_se
from synthetic import small_data, vlpso_saturates


def neighbour_counts(values, codes, folds, k, neighbours=5):
    """The two tallies summed over the held-out samples."""
    correct, same = neighbour_tallies(values, codes, folds, k, neighbours)
    return int(correct.sum()), int(same.sum())


@pytest.mark.parametrize("k", [1, 3])
def test_the_counts_are_the_classifier_s_and_the_neighbourhoods_own(k):
    X, y = small_data(seed=2, n_samples=45, n_genes=12)
    genes = np.array([0, 1, 5, 9])
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    correct, same = neighbour_counts(GeneMajor.of(X).take(genes), y.astype(np.int64), folds, k)
    expected_correct = expected_same = 0
    for train, test in folds:
        model = KNeighborsClassifier(k, algorithm="brute").fit(X[train][:, genes], y[train])
        expected_correct += int(np.sum(model.predict(X[test][:, genes]) == y[test]))
        nearest = model.kneighbors(X[test][:, genes], 5, return_distance=False)
        expected_same += int(np.sum(y[train][nearest] == y[test][:, None]))
    assert (correct, same) == (expected_correct, expected_same)


def test_equal_distances_go_to_the_lower_training_index_as_in_the_engine():
    # two training samples at the same distance from the held-out one, of different classes
    values = np.array([[0.0, 1.0, -1.0, 5.0]])
    codes = np.array([0, 1, 0, 1])
    folds = [(np.array([1, 2, 3]), np.array([0]))]
    assert neighbour_counts(values, codes, folds, 1, neighbours=2) == (0, 1)
    engine = KnnEvaluator(values.T, codes, k=1, cv="loo")
    # leave-one-out: sample 0's tie goes to sample 1 (wrong), so 2 of 4 correct, not 3
    assert engine.score(np.ones(1, dtype=bool)).correct == 2


def _three_marked_genes(second, third):
    """Two classes of 20 samples and 6 genes: gene 0 shifted by 1.5 between the classes (a
    weak gene), genes 1 and 2 by ``second`` and ``third``; with a 10-fold 1-NN scorer, a seed
    and the search's parameters."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, 6))
    X[:, 0] += 1.5 * y
    X[:, 1] += second * y
    X[:, 2] += third * y
    return X, y, KnnEvaluator(X, y, k=1, cv=10), np.random.SeedSequence(5), {"k": 1, "cv": 10}


def test_the_choice_is_the_most_correct_then_the_purest_then_the_smallest():
    X, y, scorer, root, params = _three_marked_genes(6.0, 6.0)   # genes 1 and 2 clean
    search = np.eye(6, dtype=bool)[0]  # the weak gene alone
    bests = np.array([[0, 1, 0, 0, 0, 1], [0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0],
                      [0, 1, 1, 0, 0, 0]], dtype=bool)
    refined = neighbour_purity(scorer, X, y, search, bests, params, root)
    folds = fresh_folds(y, 10, root)
    counts = [neighbour_counts(GeneMajor.of(X).take(np.flatnonzero(m)), y, folds, 1)
              for m in (search, *bests)]
    keys = [(c, s, -int(m.sum())) for (c, s), m in zip(counts, (search, *bests))]
    assert keys.index(max(keys)) in (2, 3, 4)  # a clean subset, never the weak gene
    assert refined.method == NAME
    assert np.array_equal(refined.mask, [search, *bests][keys.index(max(keys))])
    assert (refined.correct, refined.total) == (scorer.score(refined.mask).correct, 40)
    assert refined.removed.tolist() == [0]
    alone = neighbour_purity(scorer, X, y, search, np.zeros((0, 6), bool), params, root)
    assert np.array_equal(alone.mask, search) and alone.removed.size == 0


def test_the_fresh_folds_are_not_the_search_s_and_follow_the_seed():
    y = np.repeat([0, 1, 2], 12)
    one = fresh_folds(y, 4, np.random.SeedSequence(7))
    again = fresh_folds(y, 4, np.random.SeedSequence(7))
    other = fresh_folds(y, 4, np.random.SeedSequence(8))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(one, again))
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(one, other))


def test_a_vlpso_search_refined_by_purity_keeps_one_of_its_own_answers():
    X, y = vlpso_saturates()
    settings = {"n_particles": 9, "n_iterations": 10, "n_divisions": 3, "change_after": 3}
    result = run_search(X, y, "vlpso", settings, seed=1, refine=NAME)
    again = run_search(X, y, "vlpso", settings, seed=1, refine=NAME)
    assert np.array_equal(result.refined.mask, again.refined.mask)
    assert result.refined.method == NAME and result.refined.mask.any()
    greedy = run_search(X, y, "sfs", {}, seed=1, refine=NAME)  # no particles: its subset
    assert np.array_equal(greedy.refined.mask, greedy.mask)


def test_within_one_standard_error_is_decided_in_integers_as_the_real_rule_says():
    rng = np.random.default_rng(4)
    for _ in range(2000):
        per_sample = rng.integers(0, rng.integers(1, 7), size=rng.integers(1, 40))
        count = int(rng.integers(0, 6 * per_sample.size + 1))
        total = int(per_sample.sum())
        floor = total - np.sqrt(per_sample.size * np.var(per_sample))
        if abs(count - floor) > 1e-9:   # the float rule is unsure only at equality
            assert within_one_se_of(count, per_sample) == (count >= floor)
    hits = np.array([1] * 18 + [0] * 2)   # binomial: sqrt(18 * 2 / 20) = 1.34
    assert within_one_se_of(17, hits) and not within_one_se_of(16, hits)
    assert within_one_se_of(20, np.ones(20, np.int64))
    assert not within_one_se_of(19, np.ones(20, np.int64))   # no error: none below the best
    # at equality it is within: 2 of 4, sqrt(2 * 2 / 4) = 1, as relevance-subset-1se says
    assert within_one_se_of(1, np.array([1, 1, 0, 0])) and within_one_se([1, 2], 4) == 1
    assert within_one_se([16, 17, 18], 20) == 2


def _tally(size, correct, same):
    """A candidate of ``size`` genes whose ``len(same)`` held-out samples make ``correct``
    correct predictions and have ``same`` same-class neighbours each."""
    mask = np.zeros(40, dtype=bool)
    mask[:size] = True
    hits = np.array([1] * correct + [0] * (len(same) - correct), dtype=np.int64)
    return mask, hits, np.array(same, dtype=np.int64)


PURE = [5] * 8 + [4, 4]
"""Same-class neighbours summing to 48 with a standard error of sqrt(10 * 0.16) = 1.26."""


def test_the_one_se_choice_is_the_smallest_the_split_cannot_tell_from_the_purest():
    tallies = [_tally(6, 9, [5] * 10),                # a mistake, the best has none: out
               _tally(30, 10, PURE),                  # the purest (10 correct, 48)
               _tally(12, 10, [5] * 7 + [4, 4, 4]),   # 47: within
               _tally(12, 10, [5] * 6 + [4] * 4),     # 46: as small, not within
               _tally(12, 10, [5] * 7 + [4, 4, 4])]   # equal to the third: the earlier
    assert purest(tallies) == 1
    assert smallest_within_one_se(tallies) == 2
    # the purity alone keeps a candidate out, judged by the best's error, not its own
    assert smallest_within_one_se([_tally(30, 10, PURE), _tally(5, 10, [5] * 8 + [3, 3])]) == 0
    assert smallest_within_one_se([_tally(30, 10, PURE), _tally(12, 10, [5] * 7 + [4] * 3),
                                   _tally(10, 10, [5] * 6 + [4] * 4)]) == 1
    # with a mistake the binomial error lets one more in (sqrt(8 * 2 / 10) = 1.26), not two
    assert smallest_within_one_se([_tally(20, 8, PURE), _tally(5, 7, PURE),
                                   _tally(4, 6, PURE)]) == 1
    # among equal sizes: the most correct, then the purest, then the earliest
    assert smallest_within_one_se([_tally(20, 8, PURE), _tally(5, 7, PURE),
                                   _tally(5, 8, [5] * 7 + [4] * 3)]) == 2
    assert smallest_within_one_se([_tally(20, 10, PURE), _tally(8, 10, [5] * 7 + [4] * 3),
                                   _tally(8, 10, PURE), _tally(8, 10, PURE)]) == 2
    assert purest([_tally(12, 10, PURE), _tally(12, 10, PURE)]) == 0


def test_neighbour_purity_1se_keeps_a_smaller_candidate_than_the_purest():
    X, y, scorer, root, params = _three_marked_genes(4.0, 2.5)   # gene 1 clean, gene 2 fair
    search = np.array([1, 1, 1, 0, 1, 1], dtype=bool)
    bests = np.array([[0, 1, 0, 0, 0, 1], [0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0],
                      [1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0]], dtype=bool)
    folds = fresh_folds(y, 10, root)
    data = GeneMajor.of(X)
    tallies = [(m, *neighbour_tallies(data.take(np.flatnonzero(m)), y, folds, 1))
               for m in (search, *bests[:4])]   # the empty row and the copy are not candidates
    found = candidate_tallies(data, y, folds, 1, swarm_answers(data, y, search, bests))
    assert [t[0].tolist() for t in found] == [t[0].tolist() for t in tallies]
    assert all(np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
               for a, b in zip(found, tallies))
    purest_mask = neighbour_purity(scorer, X, y, search, bests, params, root).mask
    refined = neighbour_purity_1se(scorer, X, y, search, bests, params, root)
    assert refined.method == NAME_1SE
    assert np.array_equal(purest_mask, bests[1])          # genes 1 and 2: the purest
    assert np.array_equal(refined.mask, bests[2])         # gene 1 alone: within one error
    assert np.array_equal(refined.mask, tallies[smallest_within_one_se(tallies)][0])
    assert (refined.correct, refined.total) == (scorer.score(refined.mask).correct, 40)
    assert refined.removed.tolist() == [0, 2, 4, 5]


def test_the_anova_candidates_are_the_filter_s_top_genes_at_each_of_the_swarm_s_sizes():
    X, y, *_ = _three_marked_genes(6.0, 3.0)
    X[:, 2] = X[:, 1]                  # two equal top genes: the lower index first
    data = GeneMajor.of(X)
    search = np.array([1, 0, 0, 1, 1, 0], dtype=bool)
    bests = np.array([[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 1, 0]], dtype=bool)
    found = with_anova_tops(data, y, search, bests)
    assert [m.tolist() for m in found[:4]] == [search.tolist(), *bests.tolist()]
    assert [np.flatnonzero(m).tolist() for m in found[4:]] == [[1], [1, 2], [0, 1, 2]]
    assert with_anova_tops(data, y, np.zeros(6, bool), np.zeros((0, 6), bool))[1:] == []


def test_the_anova_candidates_follow_scikit_learn_s_f_over_unequal_classes():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], [4, 9, 23])
    X = rng.normal(size=(36, 10))
    X[:, :6] += np.array([[3, 0, 0], [0, 2, 0], [0, 0, 1], [2, 2, 0], [0, 1, 3], [1, 0, 2]],
                         float)[:, y].T
    order = np.argsort(-f_classif(X, y)[0], kind="stable")
    masks = np.eye(10, dtype=bool)[:5].cumsum(axis=0).astype(bool)   # sizes 1 to 5
    found = with_anova_tops(GeneMajor.of(X), y, masks[0], masks[1:])[5:]
    expected = [sorted(order[:size].tolist()) for size in range(1, 6)]
    assert [np.flatnonzero(m).tolist() for m in found] == expected
    welch = gene_order("welch-rr", GeneMajor.of(X), y)   # another order would be seen
    assert [sorted(welch[:size].tolist()) for size in range(1, 6)] != expected


def test_neighbour_purity_anova_takes_the_filter_s_genes_where_they_are_purer_at_a_size():
    X, y, scorer, root, params = _three_marked_genes(6.0, 6.0)   # genes 1 and 2 clean
    weak = np.eye(6, dtype=bool)[0]
    none = np.zeros((0, 6), dtype=bool)
    alone = neighbour_purity_1se(scorer, X, y, weak, none, params, root)
    refined = neighbour_purity_anova(scorer, X, y, weak, none, params, root)
    assert np.array_equal(alone.mask, weak)             # the swarm's answer is all it has
    assert refined.method == NAME_ANOVA == "neighbour-purity-anova"
    assert refined.mask.sum() == 1 and refined.mask[[1, 2]].any()   # the filter's, as small
    assert refined.removed.tolist() == [0]
    assert (refined.correct, refined.total) == (scorer.score(refined.mask).correct, 40)


def test_an_equal_filter_candidate_ranks_after_the_swarm_s_answer():
    X, y, scorer, root, params = _three_marked_genes(6.0, 2.0)
    X[:, 4] = X[:, 1]                  # the filter's top gene is gene 1, equal to gene 4
    swarm = np.eye(6, dtype=bool)[4]
    kept = neighbour_purity_anova(scorer, X, y, swarm, np.zeros((0, 6), bool), params, root)
    assert np.flatnonzero(kept.mask).tolist() == [4] and kept.removed.size == 0


def test_neighbour_purity_anova_is_the_one_se_choice_over_both_kinds_of_candidate():
    X, y, scorer, root, params = _three_marked_genes(4.0, 2.5)
    search = np.array([1, 1, 1, 0, 1, 1], dtype=bool)
    bests = np.array([[0, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=bool)
    data = GeneMajor.of(X)
    tallies = candidate_tallies(data, y, fresh_folds(y, 10, root), 1,
                                with_anova_tops(data, y, search, bests))
    assert purest(tallies) != smallest_within_one_se(tallies)   # the two rules differ here
    refined = neighbour_purity_anova(scorer, X, y, search, bests, params, root)
    assert np.array_equal(refined.mask, tallies[smallest_within_one_se(tallies)][0])


def _tallied(X, y, genes, folds):
    """The ``(candidate, correct, same)`` tally of ``genes`` of ``X`` on ``folds`` (1-NN)."""
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[genes] = True
    return (mask, *neighbour_tallies(GeneMajor.of(X).take(np.flatnonzero(mask)), y, folds, 1))


def test_the_filter_s_genes_replace_the_chosen_ones_only_where_the_split_ranks_them_first():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 6))
    X[:, 0] += 1.2 * y                       # the filter's top genes: 0 and 1, weak
    X[:, 1] += 0.9 * y
    sign = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    X[:, 3] = sign * (2 + rng.random(60))    # genes 3 and 4: a parity the filter cannot see
    X[:, 4] = sign * np.where(y == 1, -1, 1) * (2 + rng.random(60))
    folds = fresh_folds(y, 10, np.random.SeedSequence(5))
    data = GeneMajor.of(X)
    parity = _tallied(X, y, [3, 4], folds)
    assert anova_challenge(data, y, folds, 1, parity) is parity           # the swarm's, purer
    weak = _tallied(X, y, [5, 2], folds)                                  # noise genes
    found = anova_challenge(data, y, folds, 1, weak)
    assert np.flatnonzero(found[0]).tolist() == [0, 1]                    # the filter's, purer
    assert found[1].sum() > weak[1].sum() or found[2].sum() > weak[2].sum()
    five = _tallied(X, y, [5], folds)        # more correct, fewer same-class neighbours
    top = _tallied(X, y, [0], folds)
    assert five[1].sum() > top[1].sum() and five[2].sum() < top[2].sum()
    assert anova_challenge(data, y, folds, 1, five) is five              # correct first
    X[:, 2] = X[:, 0]                        # as pure as the filter's top gene: kept
    equal = _tallied(X, y, [2], folds)
    assert anova_challenge(GeneMajor.of(X), y, folds, 1, equal) is equal


def test_at_as_many_correct_the_filter_s_genes_win_by_more_same_class_neighbours():
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 4))
    X[:, 0] += 10 * y
    X[:, 1] += 5 * y
    folds = fresh_folds(y, 10, np.random.SeedSequence(5))
    second = _tallied(X, y, [1], folds)
    first = _tallied(X, y, [0], folds)
    assert first[1].sum() == second[1].sum() and first[2].sum() > second[2].sum()
    found = anova_challenge(GeneMajor.of(X), y, folds, 1, second)
    assert np.flatnonzero(found[0]).tolist() == [0]


def test_neighbour_purity_1se_anova_is_the_1se_choice_unless_the_filter_beats_it_at_its_size():
    X, y, scorer, root, params = _three_marked_genes(4.0, 2.5)   # gene 1 clean: F's first
    search = np.array([1, 1, 1, 0, 1, 1], dtype=bool)
    bests = np.array([[0, 1, 0, 0, 0, 1], [0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0],
                      [1, 0, 0, 0, 0, 0]], dtype=bool)
    one_se = neighbour_purity_1se(scorer, X, y, search, bests, params, root)
    refined = neighbour_purity_1se_anova(scorer, X, y, search, bests, params, root)
    assert refined.method == NAME_1SE_ANOVA == "neighbour-purity-1se-anova"
    assert np.array_equal(refined.mask, one_se.mask)    # gene 1 alone: the filter's too
    bests = np.array([[0, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=bool)
    pair = neighbour_purity_1se_anova(scorer, X, y, search, bests, params, root)
    assert np.flatnonzero(pair.mask).tolist() == [1, 2]   # the 1se choice, not -anova's [1]
    assert np.flatnonzero(neighbour_purity_anova(scorer, X, y, search, bests, params,
                                                 root).mask).tolist() == [1]
    weak = np.eye(6, dtype=bool)[0]
    none = np.zeros((0, 6), dtype=bool)
    replaced = neighbour_purity_1se_anova(scorer, X, y, weak, none, params, root)
    assert np.flatnonzero(replaced.mask).tolist() == [1] and replaced.removed.tolist() == [0]
    assert (replaced.correct, replaced.total) == (scorer.score(replaced.mask).correct, 40)
