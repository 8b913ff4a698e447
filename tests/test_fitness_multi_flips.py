"""Blocks of multi-gene flips: every try equals ``score_flip`` and the full evaluation exactly,
on the compiled kernel and on the numpy path."""

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator, SubsetFitness, make_objective
from hpcswarm.fitness import evaluator as evaluator_module
from hpcswarm.fitness import flip_kernel, rowblocks
from hpcswarm.fitness.objectives import OBJECTIVES
from hpcswarm.fitness.score import Score
from engine_probes import counting_decide, drifted_state, tie_prone_datasets


PATHS = ["numpy"] + (["compiled"] if flip_kernel.AVAILABLE else [])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name, X, y", list(tie_prone_datasets(29, 45, 120)),
                         ids=["normal", "integers", "offset"])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 10), (5, "loo"), (1, 10), (1, "holdout"),
                                   (3, "holdout")])
def test_flip_blocks_equal_one_flip_at_a_time_and_full_scores(path, name, X, y, k, cv,
                                                              monkeypatch):
    monkeypatch.setattr(evaluator_module, "tries_per_block", lambda n_rows, n_samples, n_flips: 7)
    rng = np.random.default_rng(k)
    n_genes = X.shape[1]
    batched, single, full, state, reference, mask = drifted_state(X, y, k, cv, rng)
    batched.use_compiled = path == "compiled"
    undecided = counting_decide(batched)
    n_flip = 5
    flips = np.array([np.sort(rng.choice(n_genes, n_flip, replace=False)) for _ in range(30)])
    correct = batched.score_flips(state, flips)
    assert np.array_equal(state.mask, mask)
    for row, count in zip(flips, correct):
        flipped = mask.copy()
        flipped[row] = ~flipped[row]
        assert Score(int(count), batched.total) == single.score_flip(reference, row) == \
            full.score(flipped)
    assert batched.evaluations == batched.incremental_evaluations == len(flips)
    if name != "normal":  # ties and cancellation exercise the exact refinement
        assert len(undecided) > 0
    # keeping a try moves the state as a fresh flip would
    batched.apply_flip(state, flips[4])
    mask[flips[4]] = ~mask[flips[4]]
    assert np.array_equal(state.mask, mask)
    assert batched.score_flips(state, flips[:3]).tolist() == [
        full.score(np.where(np.isin(np.arange(n_genes), f), ~mask, mask)).correct
        for f in flips[:3]]


@pytest.mark.parametrize("path", PATHS)
def test_a_try_that_empties_the_subset_scores_zero_and_is_not_counted(path):
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(20, 10)), np.arange(20) % 2
    evaluator = KnnEvaluator(X, y)
    evaluator.use_compiled = path == "compiled"
    mask = np.zeros(10, dtype=bool)
    mask[[2, 7]] = True
    state = evaluator.new_state(mask)
    correct = evaluator.score_flips(state, np.array([[2, 7], [2, 3], [0, 1]]))
    assert correct[0] == 0 and evaluator.evaluations == 2
    assert correct[1] == evaluator.score(np.isin(np.arange(10), [3, 7])).correct


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_subset_fitness_flips_equal_flip(objective):
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(30, 50)), np.arange(30) % 3
    objective = make_objective(objective)
    fitness = SubsetFitness(KnnEvaluator(X, y, class_counts=objective.per_class), objective)
    state = fitness.new_state(rng.random(50) < 0.3)
    flips = np.array([np.sort(rng.choice(50, 4, replace=False)) for _ in range(20)])
    assert fitness.flips(state, flips).tolist() == [fitness.flip(state, row) for row in flips]


def test_bad_flip_sets_are_refused():
    evaluator = KnnEvaluator(np.eye(6), np.arange(6) % 2)
    state = evaluator.new_state(np.ones(6, dtype=bool))
    for flips, message in [(np.array([1, 2]), "2-D"), (np.array([[0.5, 1.0]]), "2-D"),
                           (np.array([[0, 6]]), r"\[0, 6\)"), (np.array([[1, 1]]), "distinct")]:
        with pytest.raises(ValueError, match=message):
            evaluator.score_flips(state, flips)


def _shard_sums(X, y, k, cv, n_shards, path, mask, moves, flips):
    shards = [KnnEvaluator(X, y, k=k, cv=cv, seed=3, shard=(i, n_shards))
              for i in range(n_shards)]
    total = np.zeros(len(flips), dtype=np.int64)
    for shard in shards:
        shard.use_compiled = path == "compiled"
        state = shard.new_state(mask)
        shard.apply_flip(state, moves)
        total += shard.score_flips(state, flips)
    return total


@pytest.mark.parametrize("n_shards", [1, 2, 3, 50])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (1, 5), (1, "holdout"), (3, "loo"), (5, 4)])
def test_compiled_and_numpy_paths_and_shards_give_the_same_counts(k, cv, n_shards):
    """Every configuration: both paths, each shard's counts (summed by hand here, by
    ``sum_counts`` under MPI) add up to the unsharded counts and to full evaluations."""
    rng = np.random.default_rng(11)
    X = rng.integers(-2, 3, size=(44, 70)).astype(float)  # many near ties
    y = np.arange(44) % 3
    mask = rng.random(70) < 0.4
    moves = rng.choice(70, size=4, replace=False)
    flips = np.array([np.sort(rng.choice(70, 3, replace=False)) for _ in range(25)])
    counts = {path: _shard_sums(X, y, k, cv, n_shards, path, mask, moves, flips)
              for path in PATHS}
    full = KnnEvaluator(X, y, k=k, cv=cv, seed=3)
    mask[moves] = ~mask[moves]
    expected = [full.score(np.where(np.isin(np.arange(70), f), ~mask, mask)).correct
                for f in flips]
    for path in PATHS:
        assert counts[path].tolist() == expected, path


@pytest.mark.parametrize("path", PATHS)
def test_a_try_too_large_for_a_block_is_scored_a_block_of_rows_at_a_time(path, monkeypatch):
    monkeypatch.setattr(evaluator_module, "tries_per_block", lambda n_rows, n_samples, n: 0)
    monkeypatch.setattr(rowblocks, "ROW_BLOCK_BYTES", 8 * 40 * 6)  # blocks of 6 rows
    rng = np.random.default_rng(12)
    X, y = rng.integers(-2, 3, size=(40, 50)).astype(float), np.arange(40) % 2
    evaluator = KnnEvaluator(X, y, cv=4, seed=1)
    evaluator.use_compiled = path == "compiled"
    full = KnnEvaluator(X, y, cv=4, seed=1)
    mask = rng.random(50) < 0.5
    state = evaluator.new_state(mask)
    flips = np.array([np.sort(rng.choice(50, 4, replace=False)) for _ in range(12)])
    assert evaluator.score_flips(state, flips).tolist() == [
        full.score(np.where(np.isin(np.arange(50), f), ~mask, mask)).correct for f in flips]
    assert evaluator.evaluations == 12


@pytest.mark.parametrize("class_counts, tallies", [(False, 1), (True, 3)])
def test_the_counts_of_a_batch_are_summed_over_the_shards_once(class_counts, tallies):
    rng = np.random.default_rng(13)
    X, y = rng.normal(size=(30, 40)), np.arange(30) % 3
    calls = []

    def sum_counts(counts):
        calls.append(counts.copy())
        return counts

    evaluator = KnnEvaluator(X, y, shard=(0, 2), sum_counts=sum_counts,
                             class_counts=class_counts)
    state = evaluator.new_state(rng.random(40) < 0.5)
    calls.clear()
    flips = np.array([np.sort(rng.choice(40, 3, replace=False)) for _ in range(40)])
    evaluator.score_flips(state, flips)
    assert len(calls) == 1 and calls[0].shape == (40, tallies)
