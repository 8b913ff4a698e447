"""The cost model of a VLPSO search: the deal, the particle states, the length changes, the
memory, the layouts and the signature's searches."""

from dataclasses import replace

import numpy as np
import pytest

from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.run.cost_model import (CostConstants, balanced_deal, best_search,
                                     first_of_division, groups_on_node, layouts,
                                     node_copy_share, particle_costs, search_cost,
                                     signature_cost)
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths, division_of

SPEC = SearchSpec.build("vlpso", {"n_particles": 24, "n_iterations": 20})
CONSTANTS = CostConstants(multiply_add=1e-10, move_multiply_add=1.3e-10, pair=2e-9,
                          move_pair=1.6e-9, particle=1e-4, exchange=2e-3, swarm=5e-5)
"""A move's passes over its state cost about 8 genes of a product, as in fitness.moves."""
BARE = CostConstants(multiply_add=0.0, move_multiply_add=0.0, pair=0.0, move_pair=0.0,
                     particle=0.0, exchange=0.0, swarm=0.0)
"""Every time constant 0: a test sets the one it checks."""


def test_the_deal_balances_the_longest_particles_better_than_contiguous_blocks():
    lengths = division_lengths(2000, 12)[division_of(300, 12)].astype(float)
    groups, cached = balanced_deal(lengths, 64)
    loads = np.bincount(groups, weights=lengths, minlength=64)
    blocks = np.add.reduceat(lengths, np.arange(0, 300, -(-300 // 64)))
    assert not cached.any() and np.bincount(groups, minlength=64).min() >= 1
    assert loads.max() <= 4 / 3 * loads.mean() + lengths.max()  # Graham's bound for LPT
    assert loads.max() < 0.8 * blocks.max()


def test_the_deal_gives_each_group_at_most_its_states():
    costs = np.arange(1.0, 25.0)
    groups, cached = balanced_deal(costs, 3, costs / 10, states_per_group=2)
    assert np.bincount(groups[cached], minlength=3).tolist() == [2, 2, 2]
    loads = np.bincount(groups, weights=np.where(cached, costs / 10, costs), minlength=3)
    assert loads.max() - loads.min() <= costs.max()


def test_states_make_a_search_cheaper_and_the_first_round_is_full():
    none = search_cost(replace(SPEC, cache_memory=0.0), 500, 2000, constants=CONSTANTS)
    every = search_cost(SPEC, 500, 2000, constants=CONSTANTS, states=24)
    assert none.cached == 0 and every.cached == 24
    assert len(none.round_seconds) == len(every.round_seconds) == 20
    assert every.round_seconds[0] == pytest.approx(none.round_seconds[0])  # full, both
    assert every.round_seconds[1] < none.round_seconds[1]  # the first move, of half a subset
    assert max(every.round_seconds[2:]) < 0.5 * min(none.round_seconds[2:])
    assert every.memory_bytes - none.memory_bytes == pytest.approx(
        24 * state_bytes(500, 500, 2000))


def test_a_length_change_is_a_round_on_top_that_shortens_the_rest():
    change = search_cost(SPEC, 500, 2000, length_changes=[(5, 2000 // 12)], states=24,
                         constants=CONSTANTS)
    none = search_cost(SPEC, 500, 2000, states=24, constants=CONSTANTS)
    assert len(change.round_seconds) == 21
    assert change.round_seconds[:5] == pytest.approx(none.round_seconds[:5])
    assert change.round_seconds[5] > change.round_seconds[6]  # every subset in full, then moves
    full_change, full_none = (search_cost(SPEC, 500, 2000, length_changes=changes, states=0,
                                          constants=CONSTANTS)
                              for changes in ([(5, 2000 // 12)], ()))
    assert sum(full_change.round_seconds) < 0.5 * sum(full_none.round_seconds)
    assert sum(change.round_seconds) < sum(none.round_seconds)


def test_the_busiest_group_sets_a_round_and_shards_split_the_rows():
    one, groups, shards = (search_cost(SPEC, 2000, 2000, g, s, states=0, constants=CONSTANTS)
                           for g, s in ((1, 1), (4, 1), (1, 4)))
    assert 0.25 * one.seconds < groups.seconds < 0.4 * one.seconds
    assert 0.2 * one.seconds < shards.seconds < 0.3 * one.seconds


def test_the_best_layout_fits_the_memory_when_one_does():
    spec = SearchSpec.build("vlpso", {}, preprocess=())
    assert layouts(8, 300) == [(8, 1), (4, 2), (2, 4), (1, 8)]
    roomy, tight = (best_search(spec, 10_000, 20_000, 64, memory_per_rank=memory,
                                constants=CONSTANTS) for memory in (64e9, 4e9))
    assert tight.memory_bytes <= tight.allowed_bytes
    assert roomy.cached > tight.cached and roomy.seconds < tight.seconds


def test_a_signature_farms_its_searches_to_rank_groups():
    spec = SearchSpec.build("vlpso", {"n_iterations": 10})
    found = signature_cost(spec, 1000, 2000, 22, memory_per_rank=4e9, constants=CONSTANTS)
    fold, final = found.fold_search, found.final_search
    loads = np.zeros(found.n_task_groups)
    for seconds in [final.seconds] + [fold.seconds] * 10:
        loads[np.argmin(loads)] += seconds
    assert found.seconds == pytest.approx(loads.max())
    assert fold.seconds < final.seconds  # 900 rows against 1,000
    single = signature_cost(spec, 1000, 2000, 1, memory_per_rank=4e9, constants=CONSTANTS)
    assert single.seconds == pytest.approx(single.final_search.seconds
                                           + 10 * single.fold_search.seconds)


def test_the_flips_fall_with_the_moves():
    constants = CostConstants()
    flips = [constants.flipped(k, False) for k in range(1, 20)]
    assert flips[0] == constants.flipped_first and flips[1] == constants.flipped_second
    assert all(a > b for a, b in zip(flips[1:], flips[2:]))
    assert constants.flipped(3, True) == constants.flipped_after_change


def test_a_rank_group_shares_its_transformed_copy_on_each_node():
    """VLPSO's default min-max scaling at the paper's size: the copy is counted once per
    rank group on a node, so more ranks a node (of one group) hold less each."""
    assert [groups_on_node(g, 64) for g in (1, 32, 48, 64, 100, 256)] == [64, 2, 2, 1, 2, 1]
    assert node_copy_share(64, 64) == 1 / 64 and node_copy_share(32, 64) == 2 / 64
    spec = SearchSpec.build("vlpso", {"n_iterations": 2})
    assert spec.preprocess == (("minmax", None),)
    memory = [search_cost(spec, 10_000, 20_000, 16, 4, ranks_per_node=ranks,
                          constants=CONSTANTS, states=0).memory_bytes
              for ranks in (1, 8, 64)]
    assert memory[0] > memory[1] > memory[2]
    copy = 8 * 10_000 * 20_000
    private = search_cost(spec, 10_000, 20_000, 16, 4, constants=CONSTANTS, states=0,
                          copy_share=1.0).memory_bytes
    assert private - memory[2] == pytest.approx(copy * (1 - 1 / 64))
    assert memory[2] <= 0.8 * 4e9  # within 4 GB a core under the pre-flight's 80 % rule


def test_a_state_on_every_row_is_an_upper_triangle_and_a_small_gram_matrix_symmetric():
    """Where a rank's rows are every sample a product that writes a state, and a move, make
    the upper triangle (half the multiply-adds; every pair decided all the same); a product
    without a state is one symmetric product where one block holds every row (n up to
    1,024)."""
    sizes, flipped = np.array([100.0]), np.array([10.0])
    products = replace(BARE, multiply_add=1.0, move_multiply_add=1.0)
    passes = replace(BARE, pair=1.0, move_pair=1.0)
    for n, whole in ((500, True), (2000, False)):
        uncached, rebuilt, move = particle_costs(sizes, flipped, n, 1, products)
        assert uncached == pytest.approx((0.5 if whole else 1.0) * n * n * 100)
        assert rebuilt == pytest.approx(0.5 * n * n * 100)
        assert move == pytest.approx(0.5 * n * n * 10)
        uncached, rebuilt, move = particle_costs(sizes, flipped, n, 1, passes)
        assert (uncached, rebuilt, move) == pytest.approx((n * n, n * n, n * n))
        for costs in (particle_costs(sizes, flipped, n, 2, products),
                      particle_costs(sizes, flipped, n, 2, passes)):  # half the rows each
            assert costs[0] == pytest.approx(costs[1])
        assert particle_costs(sizes, flipped, n, 2, products)[2] == pytest.approx(
            n // 2 * n * 10)


def test_a_move_costs_its_own_rate_per_multiply_add_and_pair():
    sizes, flipped = np.array([400.0]), np.array([40.0])
    slow = particle_costs(sizes, flipped, 3000, 2, replace(BARE, move_multiply_add=2.0))
    assert slow[2] == pytest.approx(2.0 * 1500 * 3000 * 40) and slow[0] == slow[1] == 0.0
    pass_only = particle_costs(sizes, flipped, 3000, 2, replace(BARE, move_pair=3.0))
    assert pass_only[2] == pytest.approx(3.0 * 1500 * 3000) and pass_only[0] == 0.0
    full = particle_costs(sizes, flipped, 3000, 2, replace(BARE, multiply_add=1.0))
    assert full[2] == 0.0 and full[0] == pytest.approx(1500 * 3000 * 400)


def test_a_round_adds_each_particles_host_work_the_swarms_and_the_exchange():
    one = search_cost(SPEC, 500, 2000, states=0, constants=replace(BARE, particle=1e-3))
    assert one.round_seconds == pytest.approx([24e-3] * 20)  # every particle of the group
    equal = replace(BARE, pair=1e-9)  # every particle the same cost: 12 in each group
    groups, without = (search_cost(SPEC, 500, 2000, 2, states=0,
                                   constants=replace(equal, particle=particle))
                       for particle in (1e-3, 0.0))
    assert np.subtract(groups.round_seconds, without.round_seconds) == pytest.approx(
        [12e-3] * 20)
    for n_groups in (1, 4):  # every rank works for every particle of the swarm
        found = search_cost(SPEC, 500, 2000, n_groups, states=0,
                            constants=replace(BARE, swarm=1e-3))
        assert found.round_seconds == pytest.approx([24e-3] * 20)
    for n_groups, n_shards, steps in ((1, 1, 0), (2, 1, 1), (2, 2, 2), (1, 8, 3)):
        found = search_cost(SPEC, 500, 2000, n_groups, n_shards, states=0,
                            constants=replace(BARE, exchange=1e-3))
        assert found.round_seconds == pytest.approx([steps * 1e-3] * 20)


def test_the_first_particle_of_a_division_selects_its_fuller_subset():
    """VLPSO's first particle of each division starts with every gene of its length."""
    first = first_of_division(24, 12)
    assert first.tolist() == [True, False] * 12
    lengths = division_lengths(2000, 12)[division_of(24, 12)]
    products = replace(BARE, multiply_add=1.0, selected=0.5, selected_first=0.9)
    found = search_cost(SPEC, 500, 2000, states=0, constants=products)
    sizes = np.round(np.where(first, 0.9, 0.5) * lengths)
    assert found.round_seconds[0] == pytest.approx(0.5 * 500 * 500 * sizes.sum())
    dealt = []

    def deal(costs, n_groups, cached_costs, states):  # the search deals by lengths alone
        dealt.append(costs)
        return balanced_deal(costs, n_groups, cached_costs, states)

    search_cost(SPEC, 500, 2000, 2, states=0, constants=products, deal=deal)
    assert dealt[0] == pytest.approx(0.5 * 500 * 500 * np.round(0.5 * lengths))
