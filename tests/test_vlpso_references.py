"""VLPSO gives, bit for bit, the stored results of the code before its evaluations were
measured at cohort scale: searches with the paper's divisions on a planted-signal matrix,
on integer-valued genes (many equal count tables of symmetric uncertainty), and with
leave-one-out. The documents are those of :mod:`reference_cases` (``tests/reference/vlpso-*.json``;
``python tests/test_vlpso_references.py`` wrote them).
"""

import json
import os

import numpy as np
import pytest

from reference_cases import _plain
from synthetic import small_data

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")


def planted():
    """Three classes, genes 0-5 shifted by 1.5 per class, the rest normal noise."""
    return small_data(seed=4, n_samples=90, n_genes=480, n_informative=6, shift=1.5)


def integer_valued(seed=5, n_samples=60, n_genes=240):
    """Values in -2..2 (genes share count tables), genes 0-3 shifted by class."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    X = rng.integers(-2, 3, size=(n_samples, n_genes)).astype(float)
    X[:, :4] += y[:, None]
    return X, y


CASES = {
    "planted-divisions": (planted, {"n_iterations": 12}),
    "integer-ties": (integer_valued, {"n_particles": 24, "n_iterations": 10,
                                      "change_after": 3}),
    "planted-loo": (planted, {"n_particles": 12, "n_iterations": 6, "n_divisions": 4,
                              "cv": "loo", "change_after": 2}),
}
"""name: (data, parameter overrides)."""


def document(name):
    """Everything a search returns but seconds and communicated bytes."""
    from hpcswarm.selection.search import run_search

    make, params = CASES[name]
    X, y = make()
    result = run_search(X, y, "vlpso", dict(params), seed=9)
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    extra = {k: v for k, v in result.extra.items() if k != "comm"}
    return _plain({"genes": result.genes, "fitness": result.fitness, "params": result.params,
                   "history": history, "extra": extra})


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_vlpso_matches_its_reference(name):
    with open(os.path.join(HERE, f"vlpso-{name}.json")) as stored:
        expected = json.load(stored)
    assert json.loads(json.dumps(document(name), sort_keys=True)) == expected


if __name__ == "__main__":
    for case in CASES:
        with open(os.path.join(HERE, f"vlpso-{case}.json"), "w") as out:
            json.dump(document(case), out, indent=1, sort_keys=True)
            out.write("\n")
