"""Batched one-gene flips: every candidate equals ``score_flip`` and the full evaluation exactly."""

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator, SubsetFitness, make_objective
from hpcswarm.fitness import evaluator as evaluator_module
from hpcswarm.fitness.single_flips import BLOCK_BYTES, CANDIDATE_BYTES, block_size
from engine_probes import counting_decide, drifted_state


def datasets():
    rng = np.random.default_rng(23)
    yield "normal", rng.normal(size=(45, 120)), rng.integers(0, 3, size=45)
    # small integers: many equal distances, so the bound leaves many candidates open
    yield "integers", rng.integers(-2, 3, size=(45, 120)).astype(float), rng.integers(0, 3, 45)
    # large common offset: cancellation and drift are both large
    offset = 1e7 + rng.integers(0, 3, size=(45, 120)) + rng.normal(scale=1e-4, size=(45, 120))
    yield "offset", offset, rng.integers(0, 3, size=45)


@pytest.mark.parametrize("name, X, y", list(datasets()), ids=["normal", "integers", "offset"])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 10), (5, "loo"), (1, 10), (3, "holdout")])
def test_batched_flips_equal_single_flips_and_full_scores(name, X, y, k, cv, monkeypatch):
    monkeypatch.setattr(evaluator_module, "block_size", lambda n_rows, n_samples: 17)
    rng = np.random.default_rng(k)
    n_genes = X.shape[1]
    batched, single, full, state, reference, mask = drifted_state(X, y, k, cv, rng)
    undecided = counting_decide(batched)
    genes = rng.permutation(n_genes)  # entering and leaving genes, in any order
    scores = batched.score_single_flips(state, genes)
    assert np.array_equal(state.mask, mask)
    for gene, score in zip(genes, scores):
        flipped = mask.copy()
        flipped[gene] = ~flipped[gene]
        assert score == single.score_flip(reference, [gene]) == full.score(flipped)
    assert batched.evaluations == batched.incremental_evaluations == n_genes
    if name != "normal":  # ties and cancellation exercise the exact refinement
        assert len(undecided) > 0
    if name == "offset":
        assert len(undecided) == n_genes


@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5)])
def test_from_and_to_the_empty_subset(k, cv):
    rng = np.random.default_rng(5)
    X, y = rng.integers(0, 4, size=(30, 12)).astype(float), rng.integers(0, 2, size=30)
    evaluator = KnnEvaluator(X, y, k=k, cv=cv)
    full = KnnEvaluator(X, y, k=k, cv=cv)
    state = evaluator.new_state(np.zeros(12, bool))
    scores = evaluator.score_single_flips(state, np.arange(12))
    assert scores == [full.score(np.eye(12, dtype=bool)[g]) for g in range(12)]
    evaluator.apply_flip(state, [4])
    scores = evaluator.score_single_flips(state, np.arange(12))
    assert scores[4].correct == 0  # back to the empty subset: not computed
    assert evaluator.evaluations == 12 + 11


def test_counters_as_score_flip():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(25, 30)), rng.integers(0, 2, size=25)
    evaluator = KnnEvaluator(X, y)
    state = evaluator.new_state(rng.random(30) < 0.5)
    evaluator.score_flip(state, [3])
    first = evaluator.score_single_flips(state, np.arange(30))
    assert (evaluator.evaluations, evaluator.incremental_evaluations) == (31, 31)
    assert evaluator.score_single_flips(state, np.arange(30)[::-1]) == first[::-1]
    assert (evaluator.evaluations, evaluator.incremental_evaluations) == (61, 61)


def test_subset_fitness_single_flips_equal_flips():
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(30, 40)), rng.integers(0, 3, size=30)
    fitness = SubsetFitness(KnnEvaluator(X, y, k=3, cv=5),
                            make_objective("combined"))
    state = fitness.new_state(rng.random(40) < 0.3)
    genes = rng.permutation(40)
    values = fitness.single_flips(state, genes)
    assert values.tolist() == [fitness.flip(state, [gene]) for gene in genes]
    assert fitness.single_flips(state, np.array([], dtype=int)).shape == (0,)


def test_rejects_bad_gene_lists():
    evaluator = KnnEvaluator(np.arange(40.0).reshape(10, 4), np.repeat([0, 1], 5))
    state = evaluator.new_state(np.ones(4, bool))
    for genes, message in (([1, 1], "distinct"), ([4], r"\[0, 4\)"), ([0.5], "int gene indices")):
        with pytest.raises(ValueError, match=message):
            evaluator.score_single_flips(state, np.array(genes))


def test_block_fits_the_byte_budget():
    for n_rows, n_samples in ((10, 10), (83, 83), (102, 102), (25, 250), (2000, 2000)):
        size = block_size(n_rows, n_samples)
        assert size >= 1
        assert size == 1 or size * CANDIDATE_BYTES * n_rows * n_samples <= BLOCK_BYTES
