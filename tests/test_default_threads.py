"""The BLAS threads of ``select`` and the selector: ``n_threads``, else the machine's free cores."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from threadpoolctl import threadpool_info

import hpcswarm
from hpcswarm import comm as comm_module
from hpcswarm.selection import search as search_module
from hpcswarm.selector import SwarmFeatureSelector


def _pools():
    return {pool["num_threads"] for pool in threadpool_info()}


@pytest.fixture
def spied(monkeypatch):
    """The thread counts of the BLAS pools while each search runs."""
    seen = []
    real = search_module.run_search  # the search of the selector's view

    def spy(*args, **kwargs):
        seen.append(_pools())
        return real(*args, **kwargs)

    monkeypatch.setattr(search_module, "run_search", spy)
    for name in comm_module.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return seen


def test_n_threads_sets_the_search_threads_and_fit_restores_them(spied):
    X, y = load_wine(return_X_y=True)
    before = _pools()
    SwarmFeatureSelector("sfs", random_state=0, n_threads=1).fit(X, y)
    assert spied == [{1}] and _pools() == before


def test_a_loaded_machine_gets_one_thread_per_search(spied, monkeypatch):
    monkeypatch.setattr(comm_module.os, "getloadavg", lambda: (50.0, 50.0, 50.0))
    X, y = load_wine(return_X_y=True)
    found = hpcswarm.select(X, y, algorithm="sfs")
    assert spied == [{1}]
    assert found.gene_names == hpcswarm.select(X, y, algorithm="sfs", n_threads=2).gene_names


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_n_threads_is_refused(bad):
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="n_threads"):
        SwarmFeatureSelector("sfs", n_threads=bad).fit(X, y)
