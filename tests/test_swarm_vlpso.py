"""VLPSO (Tran, Xue & Zhang 2019): symmetric uncertainty, divisions, length change, exemplars,
and a known answer on planted genes."""

import numpy as np
import pytest

from hpcswarm.comm import world
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor, score_split
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.methods.vlpso.divisions import (best_division, changed_lengths,
                                                    division_lengths, division_of, swarm_size)
from hpcswarm.swarm.methods.vlpso.exemplars import choose_exemplars, learning_probabilities
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import (gene_relevance, mdl_cut_points,
                                                                relevance_order, relevance_scores,
                                                                symmetric_uncertainty)
from synthetic import informative_genes, small_data


# ---------------------------------------------------------------- symmetric uncertainty
def test_symmetric_uncertainty_matches_a_hand_computed_value():
    # H(X) = H(3/4, 1/4) = 0.811278, H(C) = 1, H(X, C) = H(1/2, 1/4, 1/4) = 1.5
    # IG = 0.811278 + 1 - 1.5 = 0.311278; SU = 2 * 0.311278 / 1.811278 = 0.343712
    assert symmetric_uncertainty([0, 0, 0, 1], [0, 0, 1, 1]) == pytest.approx(0.343712, abs=1e-6)
    assert symmetric_uncertainty([5, 5, 7, 7], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert symmetric_uncertainty([0, 1, 0, 1], [0, 0, 1, 1]) == pytest.approx(0.0)
    assert symmetric_uncertainty([3, 3, 3, 3], [0, 0, 1, 1]) == 0.0


def test_mdl_cuts_between_classes_and_not_in_noise():
    values = np.arange(1.0, 10.0)
    codes = np.repeat([0, 1, 2], 3)
    # first cut 3.5 (ties with 6.5, the lower wins): gain 0.918 > (log2 8 + 1.889) / 9 = 0.543
    # (8 candidate cuts); then 6.5 in the right part: gain 1 > (log2 5 + log2 7 - 2) / 6 = 0.521
    assert mdl_cut_points(values, codes, 3).tolist() == [3.5, 6.5]
    # two values, one candidate cut: gain 1 - H(0.8, 0.2) = 0.278 exceeds
    # (log2 1 + delta) / 20 = 0.185 (delta = log2 7 + 2 H(0.8, 0.2) - 2 = 3.695), where
    # Fayyad & Irani's log2(N - 1) = log2 19 would refuse: (4.248 + 3.695) / 20 = 0.397
    tied = np.repeat([1.0, 2.0], 10)
    tied_codes = np.array([0] * 8 + [1] * 2 + [1] * 8 + [0] * 2)
    assert mdl_cut_points(tied, tied_codes, 2).tolist() == [1.5]
    alternating = np.arange(12) % 2
    assert mdl_cut_points(np.arange(12.0), alternating, 2).size == 0
    assert gene_relevance(np.arange(12.0), alternating, 2) == 0.0
    assert gene_relevance(values, codes, 3) == pytest.approx(1.0)


def test_relevance_order_puts_the_planted_genes_first_and_keeps_index_order_in_ties():
    X, y = informative_genes(seed=1, n_samples=60, n_genes=30, n_informative=2, shift=6.0)
    scores = relevance_scores(GeneMajor.from_samples(X), y, np.arange(30))
    order = relevance_order(scores)
    assert set(order[:2].tolist()) == {0, 1}
    ties = order[scores[order] == 0.0]
    assert ties.tolist() == sorted(ties.tolist())
    assert relevance_order([0.2, 0.5, 0.2, 0.0]).tolist() == [1, 0, 2, 3]


def test_count_tables_equal_up_to_relabelling_give_exactly_equal_su():
    rng = np.random.default_rng(0)
    codes = np.arange(40) % 3
    bins = rng.integers(0, 4, size=40)
    relabelled = np.array([2, 0, 3, 1])[bins]  # the intervals renamed: the same table's rows
    assert symmetric_uncertainty(relabelled, codes) == symmetric_uncertainty(bins, codes)
    classes_renamed = np.array([1, 2, 0])[codes]  # equal classes: the table's columns permuted
    assert symmetric_uncertainty(bins, classes_renamed) == symmetric_uncertainty(bins, codes)


def test_a_gene_and_its_negation_tie_exactly_and_the_lower_index_comes_first():
    # the negation's MDL intervals are the gene's in reverse: its count table is the gene's
    # with the rows permuted; summed in table order the two SU differed in the last bit
    rng = np.random.default_rng(2)
    codes = np.arange(40) % 3
    gene = rng.normal(size=40) + 1.2 * codes
    noise = rng.normal(size=(40, 3))
    X = np.column_stack([-gene, gene, noise])
    scores = relevance_scores(GeneMajor.from_samples(X), codes, np.arange(5))
    assert scores[0] == scores[1] > 0
    assert relevance_order(scores)[:2].tolist() == [0, 1]


@pytest.mark.mpi
def test_the_ranking_spread_over_the_ranks_is_the_serial_one_on_every_rank():
    # genes and their negations (exact ties) on both sides of every block boundary
    rng = np.random.default_rng(3)
    codes = np.arange(45) % 3
    genes = rng.normal(size=(45, 7)) + 0.8 * codes[:, None]
    X = np.column_stack([genes, -genes[:, ::-1], rng.normal(size=(45, 3))])
    data = GeneMajor.from_samples(X)
    serial = relevance_scores(data, codes, np.arange(X.shape[1]))
    with world() as comm:
        spread = relevance_scores(data, codes, np.arange(X.shape[1]), comm)
        orders = comm.allgather(relevance_order(spread).tolist())
    assert spread.tobytes() == serial.tobytes()
    assert orders == [relevance_order(serial).tolist()] * len(orders)
    assert np.array_equal(serial[:7], serial[7:14][::-1])


# ---------------------------------------------------------------- divisions and lengths
def test_swarm_size_follows_the_papers_rule_unless_given():
    assert swarm_size(0, 2308) == 115
    assert swarm_size(0, 1000) == 100 and swarm_size(0, 10000) == 300
    assert swarm_size(12, 2308) == 12


def test_division_lengths_and_contiguous_divisions():
    assert division_lengths(2308, 12).tolist() == [(j * 2308) // 12 for j in range(1, 13)]
    assert division_lengths(2308, 12)[-1] == 2308
    assert division_lengths(5, 12).min() == 1
    division = division_of(115, 12)
    sizes = np.bincount(division)
    assert sizes.size == 12 and sizes.sum() == 115 and sizes.max() - sizes.min() <= 1
    assert np.all(np.diff(division) >= 0)


def test_length_change_keeps_the_best_division_and_rescales_the_others():
    assert best_division(np.array([0.5, 0.9, 0.8, 0.8, 0.1, 0.1]), np.array([0, 0, 1, 1, 2, 2]),
                         3) == 1
    lengths, new_max = changed_lengths(np.array([10, 20, 30, 40]), 1)
    assert new_max == 20 and lengths.tolist() == [5, 20, 10, 15]  # k * 20 // 4, k = 1, 2, 3
    lengths, new_max = changed_lengths(np.array([5, 20, 10, 15]), 2)
    assert new_max == 10 and lengths.tolist() == [2, 5, 10, 7]
    unchanged, new_max = changed_lengths(np.array([10, 20, 30, 40]), 3)
    assert new_max == 40 and unchanged.tolist() == [10, 20, 30, 40]


# ---------------------------------------------------------------- exemplars
def test_learning_probability_rises_from_the_best_to_the_worst_pbest():
    pc = learning_probabilities(np.array([0.7, 0.9, 0.7, 0.5]), np.array([3, 9, 2, 1]))
    assert pc[1] == pytest.approx(0.05) and pc[3] == pytest.approx(0.5)
    assert pc[1] < pc[2] < pc[0] < pc[3]  # equal fitness: fewer genes ranks first


def test_exemplars_are_the_tournament_winners_among_particles_long_enough():
    lengths = np.array([10, 10, 5])
    rng = np.random.default_rng(0)
    fitness, sizes = np.array([0.1, 0.9, 0.5]), np.array([4, 4, 4])
    assert choose_exemplars(0, lengths, fitness, sizes, 1.0, rng).tolist() == [1] * 10
    fitness = np.array([0.1, 0.9, 0.95])
    # d < 5: 1 against 2, and 2 wins; d >= 5: only 1 has the dimension, it meets particle 0
    assert choose_exemplars(0, lengths, fitness, sizes, 1.0, rng).tolist() == [2] * 5 + [1] * 5
    assert choose_exemplars(0, lengths, fitness, sizes, 0.0, rng).tolist() == [0] * 10
    assert choose_exemplars(1, np.array([3, 10]), fitness[:2], sizes[:2], 1.0,
                            rng).tolist()[3:] == [1] * 7  # nobody else is that long


def test_exemplars_never_name_a_particle_too_short():
    rng = np.random.default_rng(4)
    lengths = np.repeat([3, 6, 9, 12], 5)
    fitness, sizes = rng.random(20), rng.integers(1, 9, 20)
    for i in range(20):
        exemplar = choose_exemplars(i, lengths, fitness, sizes, 0.6, rng)
        assert exemplar.size == lengths[i]
        assert np.all((lengths[exemplar] > np.arange(lengths[i])) | (exemplar == i))


# ---------------------------------------------------------------- the search
SETTINGS = {"n_particles": 8, "n_iterations": 8, "n_divisions": 3, "change_after": 1,
            "refresh_gap": 2}


def test_particles_stay_within_their_length_and_the_length_change_follows_the_rule():
    X, y = small_data(0, 30, 24)
    seen = []

    def inspect(search):
        s, order = search.state, search.order
        for i in search.local:
            outside = order[search.lengths[i]:]
            assert not s.position[i, outside].any() and not s.velocity[i, outside].any()
            assert not s.mask[i, outside].any() and not s.pbest_mask[i, outside].any()
        seen.append((search.iteration, search.lengths.copy(), search.max_length,
                     search.n_changes))

    result = run_search(X, y, "vlpso", SETTINGS, seed=3,
                        hooks=SearchHooks(checkpoint=inspect))
    changes = [e for e in result.extra["events"] if e["event"] == "length_change"]
    assert changes and len(result.history) == SETTINGS["n_iterations"] + len(changes)
    assert seen[0][1].tolist() == [8, 8, 8, 16, 16, 16, 24, 24]
    rounds = {iteration: (lengths, top) for iteration, lengths, top, _ in seen}
    for event in changes:
        before, _ = rounds[event["iteration"] - 1]
        after, top = rounds[event["iteration"]]
        per_division = before[np.searchsorted(division_of(8, 3), np.arange(3))]
        expected, expected_top = changed_lengths(per_division, event["best_division"])
        assert after.tolist() == expected[division_of(8, 3)].tolist() and top == expected_top


def test_parameters_are_checked_together():
    assert algorithm_params("vlpso")["n_divisions"] == 12
    with pytest.raises(ParameterError, match="'n_particles' must be 0 .* or at least 2"):
        algorithm_params("vlpso", {"n_particles": 1})
    # a swarm smaller than its divisions is cut into fewer when it is built
    assert algorithm_params("vlpso", {"n_particles": 5, "n_divisions": 6})["n_divisions"] == 6
    assert algorithm_params("vlpso", {"n_particles": 120, "n_divisions": 101})["n_divisions"] == 101
    with pytest.raises(ParameterError, match="pc_low"):
        algorithm_params("vlpso", {"pc_low": 0.6})


def test_vlpso_finds_a_short_subset_with_the_planted_genes():
    X, y = informative_genes(seed=3, n_samples=90, n_genes=300, n_informative=2, shift=6.0)
    train = np.arange(90) < 60
    result = run_search(X[train], y[train], "vlpso",
                        {"n_particles": 20, "n_iterations": 20, "n_divisions": 4,
                         "change_after": 3}, seed=0)
    genes = np.flatnonzero(result.mask)
    assert {0, 1} <= set(genes.tolist()) and genes.size <= 10
    assert result.extra["ranking"][:2] in ([0, 1], [1, 0])
    held_out = score_split(X[train], y[train], X[~train], y[~train], result.mask, 1)
    assert held_out.accuracy >= 0.95


def test_the_memory_estimate_counts_the_swarm_the_papers_rule_gives():
    from hpcswarm.run.plan import search_memory
    from hpcswarm.selection.spec import SearchSpec

    default = SearchSpec.build("vlpso")  # n_particles = 0: genes / 20 within [100, 300]
    explicit = SearchSpec.build("vlpso", {"n_particles": 200})
    assert search_memory(default, 80, 4000) == search_memory(explicit, 80, 4000)
    assert search_memory(default, 80, 4000) > search_memory(
        SearchSpec.build("vlpso", {"n_particles": 100}), 80, 4000)


def test_vlpso_is_the_pbest_round_without_a_gbest_to_switch_off():
    """Comprehensive learning has no gbest term (Liang et al. 2006, Eq. 8): VLPSO is composed
    from the pbest round alone, so it neither keeps nor updates a gbest, where the PSO family
    adds one."""
    from hpcswarm.swarm.methods.particle_swarm import ParticleSwarm, PersonalBestSwarm
    from hpcswarm.swarm.methods.pso import PSO
    from hpcswarm.swarm.methods.vlpso.algorithm import VLPSO

    assert issubclass(VLPSO, PersonalBestSwarm) and not issubclass(VLPSO, ParticleSwarm)
    assert not hasattr(VLPSO, "update_gbest")
    assert not any(name.startswith("gbest") for name in VLPSO.state_names())
    assert {"gbest_position", "stagnation"} <= set(PSO.state_names())
