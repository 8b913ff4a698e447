"""The deal of particles to particle groups by expected cost: balance, determinism, layout."""

import numpy as np
import pytest

from hpcswarm.comm import block_range
from hpcswarm.swarm.engine.deal import Deal, deal_by_cost, full_costs, moved_costs
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths, division_of

PAPER_SWARM = 300


def vlpso_selected(max_length, n_particles=PAPER_SWARM, n_divisions=12):
    """Half the length of each particle of VLPSO's initial divisions (its expected genes)."""
    lengths = division_lengths(max_length, n_divisions)[division_of(n_particles, n_divisions)]
    return np.maximum(lengths // 2, 1)


def loads(deal, costs, cached_costs, cache_slots):
    """Each group's cost: its ``cache_slots`` first particles in the deal's order cached."""
    total = np.zeros(deal.size, dtype=np.int64)
    taken = np.zeros(deal.size, dtype=np.int64)
    for particle in deal.order:
        group = deal.owner[particle]
        cached = taken[group] < cache_slots
        total[group] += cached_costs[particle] if cached else costs[particle]
        taken[group] += cached
    return total


@pytest.mark.parametrize("cache_slots", [0, 1, 3])
@pytest.mark.parametrize("max_length", [2000, 20000])
@pytest.mark.parametrize("n_groups", [2, 3, 16, 64, 256])
def test_no_group_costs_more_than_the_mean_plus_the_largest_particle(n_groups, max_length,
                                                                      cache_slots):
    selected = vlpso_selected(max_length)
    deal = Deal.by_cost(selected, n_groups, 0, cache_slots)
    costs, cached = full_costs(selected), moved_costs(selected)
    load = loads(deal, costs, cached, cache_slots)
    assert load.max() * n_groups <= load.sum() + costs.max() * n_groups
    assert np.bincount(deal.owner, minlength=n_groups).min() >= 1


@pytest.mark.parametrize("n_groups", [2, 16, 64])
def test_contiguous_blocks_of_vlpso_divisions_overload_the_last_group(n_groups):
    """The deal the cost deal replaces breaks the bound: the last block holds the longest."""
    costs = full_costs(vlpso_selected(20000))
    blocks = Deal.blocks(costs.size, n_groups, 0)
    load = np.bincount(blocks.owner, weights=costs, minlength=n_groups)
    assert load[-1] == load.max()
    assert load.max() * n_groups > load.sum() + costs.max() * n_groups


def test_the_deal_is_the_same_on_every_rank_and_every_call():
    selected = vlpso_selected(5000, n_particles=101, n_divisions=7)
    deals = [Deal.by_cost(selected, 8, rank, 2) for rank in range(8)]
    for deal in deals + [Deal.by_cost(selected.copy(), 8, 0, 2)]:
        assert np.array_equal(deal.owner, deals[0].owner)
        assert np.array_equal(deal.order, deals[0].order)
    assert np.concatenate([deal.local() for deal in deals]).size == 101
    assert sorted(np.concatenate([deal.local() for deal in deals]).tolist()) == list(range(101))


def test_ties_go_to_the_lower_particle_and_the_lower_group():
    assert deal_by_cost([5] * 7, 3).tolist() == [0, 1, 2, 0, 1, 2, 0]
    assert deal_by_cost([1, 9, 1, 9], 2).tolist() == [0, 0, 1, 1]
    assert deal_by_cost([4, 3, 3, 2, 2], 2).tolist() == [0, 1, 1, 0, 0]
    assert deal_by_cost([], 4).size == 0


def test_cache_slots_go_to_each_groups_costliest_particles():
    """Two groups of one slot each: the two longest particles take the slots (at their cached
    cost), and the rest is dealt by the full costs."""
    owner = deal_by_cost([100, 90, 10, 10, 10], 2, [5, 5, 10, 10, 10], cache_slots=1)
    assert owner.tolist() == [0, 1, 0, 1, 0]
    deal = Deal.by_cost([50, 40, 30, 20], 2, 0, cache_slots=1)
    assert deal.order.tolist() == [0, 1, 2, 3]
    assert deal.priority([3, 1, 2]).tolist() == [1, 2, 0]  # particle 1 first, then 2, then 3


def test_moved_costs_are_below_full_costs_and_full_where_a_move_is_not_worth_it():
    selected = np.array([1, 10, 11, 12, 100, 20000])
    moved = moved_costs(selected)
    assert (moved <= full_costs(selected)).all()
    assert moved[:3].tolist() == full_costs(selected[:3]).tolist()  # 4 (1 + 8) > 3 x 11
    assert moved[3:].tolist() == [1 + 8 + 1, 10 + 8 + 1, 2000 + 8 + 1]


@pytest.mark.parametrize("size", [1, 3, 7])
def test_blocks_are_the_contiguous_ranges_of_block_range(size):
    for rank in range(size):
        deal = Deal.blocks(23, size, rank)
        assert deal.local().tolist() == list(range(*block_range(23, size, rank)))
        indices = np.array([0, 4, 9, 22])
        assert deal.owned(indices).tolist() == [i for i in indices
                                                if i in range(*block_range(23, size, rank))]
        assert deal.counts(indices).sum() == 4
