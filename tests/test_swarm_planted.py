"""A planted problem: five informative genes among noise genes.

Every method must beat the fitness of all genes; the headline methods must also select most
planted genes, at a rate well above that of the noise genes.
"""

import numpy as np
import pytest

from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import make_fitness, run_search

PLANTED = np.array([5, 77, 123, 150, 199])

BUDGETS = {
    "cso": {"n_particles": 20, "n_iterations": 60},
    "fsipso": {"n_particles": 12, "n_iterations": 31},
    "pso-lsrg": {"n_particles": 10, "n_iterations": 15, "ls_tries": 50},
    "pso-ls": {"n_particles": 8, "n_iterations": 8, "ls_tries": 20},
    "pso-rg": {"n_particles": 10, "n_iterations": 10},
    "pso": {"n_particles": 10, "n_iterations": 10},
    "bpso": {"n_particles": 10, "n_iterations": 10},
    "cbpso": {"n_particles": 10, "n_iterations": 10},
    "sfr": {"max_size": 20},
    "fsr": {"n_particles": 10, "n_iterations": 10, "max_size": 5},
    "vlpso": {"n_particles": 12, "n_iterations": 15, "n_divisions": 4, "change_after": 3},
}


@pytest.fixture(scope="module")
def planted():
    """45 samples of 3 classes, 200 genes; the genes of PLANTED carry the class."""
    rng = np.random.default_rng(0)
    y = np.arange(45) % 3
    X = rng.normal(size=(45, 200))
    centres = 1.5 * np.array([rng.permutation([-1.0, 0.0, 1.0]) for _ in PLANTED]).T
    X[:, PLANTED] += centres[y]
    return X, y


@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_every_method_beats_all_genes(planted, name):
    X, y = planted
    result = run_search(X, y, name, BUDGETS[name], seed=0)
    fitness, _ = make_fitness(X, y, algorithm_params(name, BUDGETS[name]), 0)
    assert result.fitness > fitness(np.ones(X.shape[1], dtype=bool))


@pytest.mark.parametrize("name", ["pso-lsrg", "cso", "fsipso", "vlpso"])
def test_headline_methods_recover_most_planted_genes(planted, name):
    X, y = planted
    mask = run_search(X, y, name, BUDGETS[name], seed=0).mask
    planted_rate = mask[PLANTED].mean()
    noise_rate = np.delete(mask, PLANTED).mean()
    assert mask[PLANTED].sum() >= 3
    assert planted_rate >= 1.5 * noise_rate
