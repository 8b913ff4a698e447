"""Incremental evaluation: the flipped-state score equals the full one bit for bit."""

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator, SubsetFitness, make_objective
from hpcswarm.fitness.incremental import state_bytes


def datasets():
    rng = np.random.default_rng(11)
    yield "normal", rng.normal(size=(45, 200)), rng.integers(0, 3, size=45)
    # int16-like values: exact distance ties occur (as in colon and lymphoma)
    yield "integers", rng.integers(-3, 4, size=(45, 200)).astype(float), rng.integers(0, 2, size=45)
    # large common offset: add/subtract drift and cancellation both matter
    offset = 1e7 + rng.integers(0, 3, size=(45, 200)) + rng.normal(scale=1e-4, size=(45, 200))
    yield "offset", offset, rng.integers(0, 3, size=45)


@pytest.mark.parametrize("name, X, y", list(datasets()), ids=["normal", "integers", "offset"])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 10), (5, "holdout")])
def test_random_flip_sequences_match_full_evaluation(name, X, y, k, cv):
    rng = np.random.default_rng(k)
    incremental = KnnEvaluator(X, y, k=k, cv=cv, seed=1)
    full = KnnEvaluator(X, y, k=k, cv=cv, seed=1)
    objective = make_objective("combined")
    fast, slow = SubsetFitness(incremental, objective), SubsetFitness(full, objective)
    mask = rng.random(200) < 0.5
    state = fast.new_state(mask)
    for step in range(40):
        genes = rng.choice(200, size=int(rng.integers(1, 9)), replace=False)
        flipped = mask.copy()
        flipped[genes] = ~flipped[genes]
        assert incremental.score_flip(state, genes) == full.score(flipped)
        assert np.array_equal(state.mask, mask)  # scoring a flip leaves the state alone
        value = fast.flip(state, genes)
        assert value == slow(flipped)  # bit for bit: == on floats
        if step % 2 == 0:  # accept the flip just scored (its result is reused)
            fast.apply_flip(state, genes)
            mask = flipped
        elif step % 3 == 0:  # move by flips never scored
            genes = rng.choice(200, size=5, replace=False)
            fast.apply_flip(state, genes)
            mask[genes] = ~mask[genes]
        assert np.array_equal(state.mask, mask)
        assert state.n_selected == mask.sum()
    assert incremental.incremental_evaluations == incremental.evaluations == 80


def test_state_from_empty_subset_and_back_to_empty():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 10)), np.repeat([0, 1], 15)
    evaluator = KnnEvaluator(X, y)
    fitness = SubsetFitness(evaluator, make_objective("accuracy"))
    state = fitness.new_state(np.zeros(10, bool))
    genes = np.array([2, 7])
    mask = np.zeros(10, bool)
    mask[genes] = True
    assert fitness.flip(state, genes) == SubsetFitness(KnnEvaluator(X, y), fitness.objective)(mask)
    fitness.apply_flip(state, genes)
    assert fitness.flip(state, genes) == -2.0  # back to the empty subset: WORST_FITNESS


def test_flip_rejects_bad_gene_lists():
    evaluator = KnnEvaluator(np.arange(40.0).reshape(10, 4), np.repeat([0, 1], 5))
    state = evaluator.new_state(np.ones(4, bool))
    for genes, message in (([1, 1], "distinct"), ([4], r"\[0, 4\)"), ([0.5], "int gene indices")):
        with pytest.raises(ValueError, match=message):
            evaluator.score_flip(state, np.array(genes))


def test_state_memory_is_quadratic_in_samples_only():
    rng = np.random.default_rng(0)
    evaluator = KnnEvaluator(rng.normal(size=(20, 3000)), np.repeat([0, 1], 10))
    state = evaluator.new_state(rng.random(3000) < 0.5)
    held = sum(a.nbytes for a in (state.mask, state.dist2, state.sq, state.drift))
    assert held == 8 * 20 * 20 + 16 * 20 + 3000 == state_bytes(20, 20, 3000)


def _peak_bytes(call):
    """Bytes ``call()`` allocates at its peak above what was held before (tracemalloc)."""
    import tracemalloc

    tracemalloc.start()
    try:
        held = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()


def test_a_scorers_blocks_hold_what_it_states():
    from hpcswarm.fitness.evaluator import block_bytes

    rng = np.random.default_rng(0)
    n, genes = 1000, 20
    evaluator = KnnEvaluator(rng.normal(size=(n, genes)), rng.integers(0, 2, n), cv="loo",
                             compiled=False)
    mask = np.ones(genes, dtype=bool)
    evaluator.score(mask)
    # a full evaluation: the gathered values, then a block of rows and its k-NN temporaries
    full = _peak_bytes(lambda: evaluator.score(mask)) - 8 * n * genes
    assert 0.9 * block_bytes(n, n) <= full <= block_bytes(n, n)
    # one-gene flips of a state of 1000 rows: one candidate (25 MB) exceeds the 8 MiB budget
    state = evaluator.new_state(mask)
    flips = _peak_bytes(lambda: evaluator.score_single_flips(state, np.arange(3)))
    assert block_bytes(n, n, single_flips=True) == 25 * n * n
    assert 0.9 * 25 * n * n <= flips <= 25 * n * n + 10**5
