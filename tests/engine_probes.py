"""Probes into the fitness engine shared by the test modules (pytest puts ``tests/`` on the path)."""

import numpy as np

from hpcswarm.fitness import KnnEvaluator


def tie_prone_datasets(seed, n_samples, n_genes):
    """``(name, X, y)`` of three kinds, labels ``arange(n_samples) % 3``: normal values; small
    integers (many equal distances, so the rounding bound leaves many rows open); a large
    common offset (cancellation and drift are both large)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    shape = (n_samples, n_genes)
    yield "normal", rng.normal(size=shape), y
    yield "integers", rng.integers(-2, 3, size=shape).astype(float), y
    yield "offset", 1e7 + rng.integers(0, 3, size=shape) + rng.normal(scale=1e-4, size=shape), y


def drifted_state(X, y, k, cv, rng):
    """Three evaluators of the same folds and a state reached by updates.

    Returns ``(batched, single, full, state, reference, mask)``: ``state`` is ``batched``'s,
    started from a random half of the genes and moved by one flip of 6 genes to ``mask``
    (its cached distances carry the drift of updates); ``reference`` is ``single``'s fresh
    state of ``mask``; ``full`` scores from scratch.
    """
    batched, single, full = (KnnEvaluator(X, y, k=k, cv=cv, seed=3) for _ in range(3))
    n_genes = X.shape[1]
    start = rng.random(n_genes) < 0.5
    mask = start.copy()
    moves = rng.choice(n_genes, size=6, replace=False)
    mask[moves] = ~mask[moves]
    state = batched.new_state(start)
    batched.apply_flip(state, moves)
    return batched, single, full, state, single.new_state(mask), mask


def counting_decide(evaluator):
    """Count the candidates or tries decided one by one (the bound did not settle them)."""
    calls = []
    decide = evaluator._rows.correct

    def wrapped(*args):
        calls.append(1)
        return decide(*args)

    evaluator._rows.correct = wrapped
    return calls
