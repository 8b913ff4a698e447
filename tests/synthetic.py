"""Small synthetic data sets shared by the test modules (pytest puts ``tests/`` on the path)."""

import numpy as np


def small_data(seed=0, n_samples=30, n_genes=40):
    """Three classes, genes 0-2 informative, the rest noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    X = rng.normal(size=(n_samples, n_genes))
    X[:, :3] += 2.0 * y[:, None]
    return X, y
