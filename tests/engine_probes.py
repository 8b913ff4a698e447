"""Probes into the fitness engine shared by the test modules (pytest puts ``tests/`` on the path)."""

import numpy as np


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


def counting_decide(evaluator):
    """Count the candidates or tries decided one by one (the bound did not settle them)."""
    calls = []
    decide = evaluator._rows.correct

    def wrapped(*args):
        calls.append(1)
        return decide(*args)

    evaluator._rows.correct = wrapped
    return calls
