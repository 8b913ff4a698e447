"""Blocks of draws without replacement: the numbers, and the generator state, of the loop."""

import numpy as np
import pytest

from hpcswarm.swarm.engine.draws import sorted_choices


def one_by_one(rng, n, size, n_draws):
    return np.array([np.sort(rng.choice(n, size, replace=False)) for _ in range(n_draws)],
                    dtype=np.int64).reshape(n_draws, size)


@pytest.mark.parametrize("n, size, n_draws", [
    (2308, 46, 100),     # PSO-LSRG on SRBCT: Floyd's branch
    (40, 2, 30), (7, 6, 9), (100, 1, 5),
    (12600, 252, 4),     # size <= n // 50: Floyd's branch
    (12600, 300, 3),     # the tail shuffle of large samples: drawn one by one
    (20, 20, 2),         # every gene
    (3_000_000_000, 3, 20),  # a redraw is likely in every block: drawn one by one
])
@pytest.mark.parametrize("seed", range(6))
def test_block_equals_the_loop_and_leaves_the_same_state(n, size, n_draws, seed):
    block, loop = np.random.default_rng(seed), np.random.default_rng(seed)
    for rng in (block, loop):  # odd seeds start with a 32-bit half kept in the state
        rng.integers(0, 10, size=seed % 2, dtype=np.uint32)
    assert np.array_equal(sorted_choices(block, n, size, n_draws),
                          one_by_one(loop, n, size, n_draws))
    assert block.bit_generator.state == loop.bit_generator.state
    assert block.random() == loop.random()


def test_other_bit_generators_are_drawn_one_by_one():
    block = np.random.Generator(np.random.Philox(4))
    loop = np.random.Generator(np.random.Philox(4))
    assert np.array_equal(sorted_choices(block, 500, 10, 8), one_by_one(loop, 500, 10, 8))
    assert block.random() == loop.random()
