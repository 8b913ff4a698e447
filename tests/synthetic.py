"""Small synthetic data sets shared by the test modules (pytest puts ``tests/`` on the path)."""

from functools import partial

import numpy as np


def small_data(seed=0, n_samples=30, n_genes=40, n_informative=3, shift=2.0):
    """Three classes, the first ``n_informative`` genes shifted by ``shift`` per class, the
    rest normal noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    X = rng.normal(size=(n_samples, n_genes))
    X[:, :n_informative] += shift * y[:, None]
    return X, y


# Small settings that keep every method to a fraction of a second on small_data.
SMALL = {
    "pso": {"n_particles": 8, "n_iterations": 6},
    "bpso": {"n_particles": 8, "n_iterations": 6},
    "pso-rg": {"n_particles": 8, "n_iterations": 6},
    "pso-ls": {"n_particles": 6, "n_iterations": 4, "ls_tries": 5},
    "pso-lsrg": {"n_particles": 6, "n_iterations": 4, "ls_tries": 5},
    "cbpso": {"n_particles": 8, "n_iterations": 6},
    "cso": {"n_particles": 8, "n_iterations": 6},
    "fsipso": {"n_particles": 8, "n_iterations": 7, "n_subspaces": 3},
    "sfr": {"max_size": 10},
    "fsr": {"n_particles": 6, "n_iterations": 3, "max_size": 3},
    "vlpso": {"n_particles": 8, "n_iterations": 6, "n_divisions": 3, "change_after": 2,
              "refresh_gap": 2},
}


def vlpso_saturates():
    """Data on which VLPSO classifies every inner prediction, so that the margin's rules
    (``saturation-*``) choose anew."""
    return small_data(seed=3, n_samples=36, n_genes=60, shift=8.0)


def personal_best_wins(seed):
    """Data on which a particle's personal best beats VLPSO's subset on the fresh split of
    the ``neighbour-purity*`` rules (seeds 0 and 4 checked)."""
    return small_data(seed=seed, n_samples=36, n_genes=60, shift=3.0, n_informative=6)


def vlpso_signature_rules(seed):
    """``(rule, data)`` for every ``saturation`` and ``swarm`` rule of the refinement registry,
    in its order, each with a data set on which it fires on VLPSO: :func:`vlpso_saturates`
    for the margin's, :func:`personal_best_wins` of ``seed`` for the purity's."""
    from hpcswarm.signatures.refinements import REFINEMENTS

    data = {"saturation": vlpso_saturates, "swarm": partial(personal_best_wins, seed)}
    return [(name, data[rule.kind]) for name, rule in REFINEMENTS.items() if rule.kind in data]


def informative_genes(seed=0, n_samples=36, n_genes=12, n_informative=2, shift=4.0):
    """Three classes; gene ``g`` (for ``g < n_informative``, at most 3) is shifted by ``shift``
    in the samples of class ``g``; the rest is noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    X = rng.normal(size=(n_samples, n_genes))
    for gene in range(n_informative):
        X[:, gene] += shift * (y == gene)
    return X, y
