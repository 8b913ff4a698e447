"""VLPSO's local search (``local_search``, off by default): the flip rule on a hand-made SU
table, SU between genes, the search around one subset, and the search in VLPSO's rounds."""

import numpy as np
import pytest

from hpcswarm.fitness import GeneMajor
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import make_fitness, run_search
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.engine.ordering import better
from hpcswarm.swarm.methods.vlpso.algorithm import searched_after
from hpcswarm.swarm.methods.vlpso.local_search import (GeneTable, flip_set, redundancy_pass,
                                                       relevance_search, taken_genes)
from hpcswarm.swarm.methods.vlpso.redundancy_kernel import (AVAILABLE, _pairwise_sum_kernel,
                                                            entropy_terms, pair_su)
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import (discretised, gene_relevance,
                                                                interval_entropies,
                                                                mutual_symmetric_uncertainty,
                                                                symmetric_uncertainty)
from search_snapshots import taken_at
from synthetic import small_data

SETTINGS = {"n_particles": 8, "n_iterations": 8, "n_divisions": 3, "change_after": 2,
            "refresh_gap": 2, "local_search": True, "ls_tries": 10}


class HandTable:
    """SU with the class and between genes from dicts; records the pairs asked for."""

    def __init__(self, relevance, pairs):
        self._relevance, self._pairs, self.asked = relevance, pairs, []

    def relevance(self, genes):
        return np.array([self._relevance[int(g)] for g in genes], dtype=float)

    def between(self, gene, others):
        self.asked.append((int(gene), [int(g) for g in others]))
        return np.array([self._pairs[frozenset((int(gene), int(g)))] for g in others])

    def kept(self, ones, relevance):
        return redundancy_pass(ones, relevance, self)


# ---------------------------------------------------------------- the flip rule
def test_the_flip_rule_on_a_hand_made_table():
    # selected genes drawn: 10 (SU 0.5), 11 (0.75), 12 (0.25), 13 (0, irrelevant), 14 (0.5)
    # by decreasing SU, ties in draw order: 11, 10, 14, 12, 13
    # 11 vs 10: SU 0.6 > 0.5, 10 off; 11 vs 14: 0.1 < 0.5, kept; 11 vs 12: 0.2 < 0.25, kept;
    # 13 has SU 0 with the class: off, never compared
    # 14 vs 12: 0.35 > 0.25, 12 off (10, already off, is never compared: SU(10, 12) = 0.99)
    # mean SU of the drawn selected genes: (0.5 + 0.75 + 0.25 + 0 + 0.5) / 5 = 0.4
    # unselected drawn: 20 (0.45) on, 21 (0.4, not above) stays off, 22 (0.9) on
    relevance = {10: 0.5, 11: 0.75, 12: 0.25, 13: 0.0, 14: 0.5, 20: 0.45, 21: 0.4, 22: 0.9}
    pairs = {frozenset((11, 10)): 0.6, frozenset((11, 14)): 0.1, frozenset((11, 12)): 0.2,
             frozenset((14, 12)): 0.35, frozenset((10, 12)): 0.99, frozenset((10, 14)): 0.99}
    table = HandTable(relevance, pairs)
    flips = flip_set([10, 11, 12, 13, 14], [20, 21, 22], table)
    assert flips.tolist() == [10, 12, 13, 20, 22]
    assert table.asked == [(11, [10, 14, 12]), (14, [12])]


def test_no_gene_is_switched_on_without_a_selected_gene_drawn():
    table = HandTable({5: 0.9, 6: 0.1}, {})
    assert flip_set([], [5, 6], table).size == 0
    # one selected gene: nothing to compare; an unselected gene above its SU comes in
    assert flip_set([6], [5], table).tolist() == [5]


def test_draws_stay_within_the_particles_length():
    rng = np.random.default_rng(0)
    mask = np.zeros(20, dtype=bool)
    genes = np.array([7, 3, 9, 1, 15, 4])  # the particle's length of the SU order
    mask[[7, 9, 15]] = True
    for _ in range(20):
        ones, zeros = taken_genes(rng.permutation(genes), mask, 2, 3)
        assert ones.size == 2 and set(ones.tolist()) <= {7, 9, 15}
        assert zeros.size == 3 and set(zeros.tolist()) <= {3, 1, 4}


# ---------------------------------------------------------------- SU between genes
def test_su_between_genes_is_the_su_of_two_discrete_variables():
    a = np.array([0, 0, 0, 1])
    others = np.array([[0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 1], [2, 2, 2, 2], [0, 0, 0, 1]])
    su = mutual_symmetric_uncertainty(a, others)
    assert su[0] == pytest.approx(0.343712, abs=1e-6)  # the hand value of test_swarm_vlpso
    assert su.tolist() == pytest.approx([symmetric_uncertainty(a, b) for b in others])
    assert su[4] == pytest.approx(1.0) and su[3] == 0.0
    assert mutual_symmetric_uncertainty(np.zeros(4, dtype=int), others[3:4]).tolist() == [0.0]


def test_the_gene_table_reads_each_gene_once_and_agrees_with_the_ranking():
    X, y = small_data(1, 30, 12)
    data = GeneMajor.from_samples(X)
    table = GeneTable(data, y)
    assert table.relevance([2, 0, 2]).tolist() == [gene_relevance(X[:, g], y, 3)
                                                    for g in (2, 0, 2)]
    bins = [discretised(X[:, g], y, 3) for g in (0, 1, 2)]
    assert table.between(0, [1, 2]).tolist() == pytest.approx(
        [symmetric_uncertainty(bins[0], bins[1]), symmetric_uncertainty(bins[0], bins[2])])
    assert np.flatnonzero(table.known).tolist() == [0, 1, 2]
    assert table.bins.dtype == np.uint8
    assert GeneTable.bytes_needed(30, 12) == 12 * (30 + 17)
    assert GeneTable.bytes_needed(300, 12) == 12 * (2 * 300 + 17)


# ---------------------------------------------------------------- the compiled pass
compiled = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")


@compiled
def test_the_compiled_su_equals_numpys_bit_for_bit():
    rng = np.random.default_rng(1)
    for trial in range(400):
        n = int(rng.integers(2, 120))
        widths = rng.integers(1, int(rng.integers(1, 16)) + 1, 5)  # joint tables up to 225
        bins = np.stack([rng.integers(0, k, n) for k in widths]).astype(np.uint8)
        if trial % 3 == 0:  # skewed counts
            bins[1] = np.where(rng.random(n) < 0.9, 0, bins[1])
        h = interval_entropies(bins)
        expected = mutual_symmetric_uncertainty(bins[0], bins[1:], (h[0], h[1:]))
        k_x, k_y = int(bins[0].max()) + 1, int(bins[1:].max()) + 1
        found = [pair_su(bins, 0, j, k_y, k_x * k_y, h[0], h[j], entropy_terms(n))
                 for j in range(1, 5)]
        assert found == expected.tolist()


@compiled
def test_the_compiled_sum_is_numpys_pairwise_sum():
    rng = np.random.default_rng(2)
    values = rng.random(3000) * 10.0 ** rng.integers(-8, 8, 3000)
    for n in list(range(1, 300)) + [1000, 2999]:
        assert 0.0 + _pairwise_sum_kernel(values, n) == values[None, :n].sum(axis=1)[0]


@compiled
def test_the_compiled_pass_keeps_the_genes_the_pair_by_pair_pass_keeps():
    rng = np.random.default_rng(3)
    y = np.arange(60) % 4
    X = rng.normal(size=(60, 80)) + rng.uniform(0, 1.5, 80) * y[:, None]
    table = GeneTable(GeneMajor.from_samples(X), y)
    assert table.compiled
    differ = 0
    for _ in range(200):
        ones = rng.choice(80, int(rng.integers(2, 40)), replace=False)
        relevance = table.relevance(ones)
        order = np.argsort(-relevance, kind="stable")
        ones, relevance = ones[order], relevance[order]
        kept = table.kept(ones, relevance)
        assert kept.tolist() == redundancy_pass(ones, relevance, table).tolist()
        differ += not kept.all()
    assert differ > 100


def _draw_data(seed):
    rng = np.random.default_rng(seed)
    y = np.arange(60) % 4
    X = rng.normal(size=(60, 120)) + rng.uniform(0, 1.5, 120) * y[:, None]
    X[:, 100:110] = X[:, [3] * 10]  # tied relevance: the stable order decides
    X[:, 110:] = 0.0  # relevance 0
    return GeneMajor.from_samples(X), y


@compiled
def test_a_compiled_draw_flips_the_genes_numpy_flips_and_learns_the_same_batches():
    # two tables filled in by the draws only: the compiled draw must leave every gene it
    # cannot rule to numpy, which learns the batches it always learned (entropies included)
    data, y = _draw_data(5)
    compiled_table, numpy_table = GeneTable(data, y), GeneTable(data, y)
    assert compiled_table.compiled
    rng = np.random.default_rng(6)
    flipped = switched_on = 0
    for trial in range(400):
        genes = rng.permutation(120)[:int(rng.integers(2, 121))]
        mask = np.zeros(120, dtype=bool)
        mask[rng.choice(genes, int(rng.integers(0, genes.size + 1)), replace=False)] = True
        n_ones, n_zeros = int(rng.integers(0, 30)), int(rng.integers(0, 30))
        compiled_rng, numpy_rng = np.random.default_rng(trial), np.random.default_rng(trial)
        found = compiled_table.draw_flips(compiled_rng, mask, genes, n_ones, n_zeros)
        drawn = taken_genes(numpy_rng.permutation(genes), mask, n_ones, n_zeros)
        expected = flip_set(*drawn, numpy_table)
        assert found.dtype == np.int64 and found.tolist() == expected.tolist()
        assert compiled_rng.random() == numpy_rng.random()
        flipped += found.size > 0
        switched_on += (~mask[found]).any()
    assert 100 < flipped < 400 and switched_on > 50
    assert compiled_table.known.tolist() == numpy_table.known.tolist()
    assert compiled_table.entropies.tobytes() == numpy_table.entropies.tobytes()


@compiled
def test_a_compiled_draw_compares_with_numpys_mean_bit_for_bit():
    # nine selected genes whose relevances numpy sums pairwise (eight accumulators), and one
    # unselected gene set exactly at numpy's mean of them, in the draw's order: not above it,
    # though it is above the mean of the same values summed one after another
    data, y = _draw_data(7)
    table = GeneTable(data, y)
    table.learn(np.arange(120))
    genes = np.arange(10)
    mask = np.ones(120, dtype=bool)
    mask[9] = False
    rng = np.random.default_rng(8)
    for trial in range(200):
        values = rng.uniform(0.05, 0.95, 9)
        order = np.random.default_rng(trial).permutation(genes)
        ones = order[order != 9]
        in_order = 0.0
        for value in values:
            in_order += value
        if in_order / 9 < values.mean():  # a mean summed in order would switch gene 9 on
            break
    else:
        pytest.fail("no relevances whose sum in order differs from numpy's")
    table.class_su[ones] = values
    table.class_su[9] = values.mean()
    numpy_rng = np.random.default_rng(trial)
    expected = flip_set(*taken_genes(numpy_rng.permutation(genes), mask, 9, 1), table)
    assert 9 not in expected.tolist()
    found = table.draw_flips(np.random.default_rng(trial), mask, genes, 9, 1)
    assert found.tolist() == expected.tolist()


# ---------------------------------------------------------------- the search around a subset
def test_the_search_is_never_worse_and_stays_within_the_length():
    X, y = small_data(2, 30, 24)
    fitness = make_fitness(X, y, algorithm_params("vlpso", {"local_search": True}), 0)[0]
    table = GeneTable(fitness.scorer.data, fitness.scorer.codes)
    genes = np.arange(16)  # the particle's length
    rng = np.random.default_rng(4)
    kept = 0
    for start in range(5):
        mask = np.zeros(24, dtype=bool)
        mask[rng.choice(genes, 8, replace=False)] = True
        value = float(fitness.many(mask[None])[0])
        seen = []
        found, found_value, accepted = relevance_search(
            fitness, mask, value, genes, table, np.random.default_rng(start), 0.25, 20,
            observe=lambda m, f, v, s: seen.append((v[0], s[0])))
        assert not found[16:].any()
        assert found_value == float(fitness.many(found[None])[0])
        assert found_value >= value and (found_value > value or found.sum() <= mask.sum())
        assert accepted <= len(seen) <= 20
        kept += accepted
    assert kept > 0


# ---------------------------------------------------------------- in VLPSO's rounds
def test_the_searched_moves_are_the_even_ones_before_the_20th():
    assert [m for m in range(1, 40) if searched_after(m)] == list(range(2, 20, 2))


def test_off_by_default_and_a_switch_from_text():
    assert algorithm_params("vlpso")["local_search"] is False
    params = algorithm_params("vlpso", {"local_search": "true", "ls_flip": "0.5"})
    assert params["local_search"] is True and params["ls_flip"] == 0.5
    assert params["ls_tries"] == 100


def _pbests_after_round_0(params):
    taken = {}

    def hook(search):
        if search.iteration == 0:
            s = search.state
            taken["pbests"] = (s.pbest_fitness.copy(), s.pbest_size.copy())
            taken["inside"] = all(not s.pbest_mask[i, search.order[search.lengths[i]:]].any()
                                  for i in search.local)

    result = run_search(*small_data(0, 30, 24), "vlpso", params, seed=3,
                        hooks=SearchHooks(checkpoint=hook))
    return taken, result


def test_the_pbests_after_a_search_round_are_never_worse_than_without_it():
    searched, result = _pbests_after_round_0(SETTINGS)
    plain, _ = _pbests_after_round_0({**SETTINGS, "local_search": False})
    pairs = zip(*searched["pbests"], *plain["pbests"])
    outcome = [better(f, s, f0, s0) or (f, s) == (f0, s0) for f, s, f0, s0 in pairs]
    assert all(outcome)
    assert any(better(f, s, f0, s0) for f, s, f0, s0 in zip(*searched["pbests"],
                                                           *plain["pbests"]))
    assert searched["inside"]
    events = [e for e in result.extra["events"] if e["event"] == "local_search"]
    assert events[0]["iteration"] == 0 and events[0]["searches"] == SETTINGS["n_particles"]
    assert sum(e["kept"] for e in events) > 0
    changes = [e["iteration"] for e in result.extra["events"] if e["event"] == "length_change"]
    assert changes and not set(changes) & {e["iteration"] for e in events}
    for event in events[1:]:  # the round's move: rounds so far less the length changes
        move = event["iteration"] - sum(1 for c in changes if c <= event["iteration"])
        assert searched_after(move)


def _graded_data(seed=0, n_samples=48, n_genes=60):
    """Four classes; the first half of the genes shifted by a random multiple of the class."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 4
    X = rng.normal(size=(n_samples, n_genes))
    X[:, :n_genes // 2] += rng.uniform(0.3, 1.2, n_genes // 2) * y[:, None]
    return X, y


def test_a_search_with_local_search_finds_what_it_found_before():
    # pinned from the pair-by-pair pass (one numpy call per kept gene), before the compiled
    # pass: its SU comparisons (joint tables of 4 to 12 cells) must give the same search
    params = {"n_particles": 10, "n_iterations": 8, "n_divisions": 3, "change_after": 2,
              "refresh_gap": 2, "local_search": True, "ls_tries": 20, "ls_flip": 0.5}
    result = run_search(*_graded_data(), "vlpso", params, seed=11)
    assert np.flatnonzero(result.mask).tolist() == [2, 4, 8, 9, 10, 13, 16, 20, 23, 25, 27,
                                                     28, 29]
    assert result.fitness == 0.9791666666666666
    events = [(e["iteration"], e["searches"], e["improved"], e["kept"])
              for e in result.extra["events"] if e["event"] == "local_search"]
    assert events == [(0, 10, 10, 63), (5, 1, 0, 0), (8, 2, 2, 3)]


def test_with_the_search_off_no_search_runs():
    _, result = _pbests_after_round_0({**SETTINGS, "local_search": False})
    assert not [e for e in result.extra["events"] if e["event"] == "local_search"]


@pytest.mark.parametrize("stop_at", [1, 2])
def test_a_search_with_local_search_resumes_as_the_uninterrupted_one(stop_at):
    X, y = small_data(0, 30, 24)
    full = run_search(X, y, "vlpso", SETTINGS, seed=5)
    snapshot = taken_at(X, y, "vlpso", SETTINGS, stop_at, seed=5)
    resumed = run_search(X, y, "vlpso", SETTINGS, seed=5, resume=snapshot)
    strip = [{k: v for k, v in row.items() if k != "seconds"} for row in full.history]
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in resumed.history] == strip
    assert resumed.mask.tolist() == full.mask.tolist() and resumed.fitness == full.fitness
    assert resumed.extra["events"] == full.extra["events"]
