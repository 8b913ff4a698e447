"""VLPSO's gene orders (``gene_order``): the statistics they read, and the order a search
takes."""

import numpy as np
import pytest
from sklearn.feature_selection import f_classif

from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.methods.vlpso import gene_order as orders
from hpcswarm.swarm.methods.vlpso.gene_order import (anova_f, balanced_ranking, gene_order, one_vs_rest)
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import relevance_order, relevance_scores
from synthetic import small_data

SETTINGS = {"n_particles": 6, "n_iterations": 4, "n_divisions": 3, "change_after": 2}


def test_anova_f_is_scikit_learns_statistic_with_its_undefined_cases():
    X, y = small_data(seed=2, n_genes=12)
    X[:, 5] = 7.0  # no spread at all: undefined
    X[:, 6] = 1e150 * y  # classes apart, none spread: infinite, and no square overflows
    with np.errstate(divide="ignore", invalid="ignore"), pytest.warns(UserWarning):
        expected, _ = f_classif(X, y)
    found = anova_f(X, y)
    assert np.isnan(found[5]) and found[6] == np.inf  # scikit-learn's sums lose gene 6
    keep = ~np.isin(np.arange(12), [5, 6])
    assert np.allclose(found[keep], expected[keep], rtol=1e-10)
    assert np.isnan(anova_f(X, np.zeros(y.size, dtype=int))).all()  # one class


def test_each_order_ranks_the_informative_genes_first_with_ties_to_the_lower_index():
    X, y = small_data(seed=2, n_genes=20, n_informative=3, shift=3.0)
    X[:, 10] = X[:, 11] = 0.5  # two constant genes tie: the lower index first
    data = GeneMajor.from_samples(X)
    for name in orders.GENE_ORDERS:
        order = gene_order(name, data, y)
        assert sorted(order.tolist()) == list(range(20))
        if name != "welch-rr":  # the middle class's best gene against the rest is noise
            assert set(order[:3].tolist()) == {0, 1, 2}, name
    by_f = gene_order("f", data, y)
    assert by_f.tolist().index(10) < by_f.tolist().index(11)
    assert by_f.tolist()[-2:] == [10, 11]  # undefined F last
    assert np.array_equal(gene_order("welch-rr", data, y),
                          balanced_ranking(one_vs_rest(X, y), 20))
    assert np.array_equal(gene_order("su", data, y),
                          relevance_order(relevance_scores(data, y, np.arange(20))))
    with pytest.raises(ValueError, match="unknown gene order 'x'"):
        gene_order("x", data, y)


def test_a_gene_statistic_does_not_depend_on_the_block_it_is_read_in(monkeypatch):
    X, y = small_data(seed=5, n_genes=25)
    whole = {name: gene_order(name, GeneMajor.from_samples(X), y) for name in ("welch-rr", "f")}
    statistics = one_vs_rest(X, y), anova_f(X, y)
    monkeypatch.setattr(orders, "BLOCK_GENES", 3)
    assert np.array_equal(one_vs_rest(X, y), statistics[0])
    assert np.array_equal(anova_f(X, y), statistics[1], equal_nan=True)
    for name, order in whole.items():
        assert np.array_equal(gene_order(name, GeneMajor.from_samples(X), y), order)


@pytest.mark.parametrize("name", orders.GENE_ORDERS)
def test_vlpso_searches_the_prefixes_of_the_order_it_is_given(name):
    X, y = small_data(seed=3, n_genes=30)
    result = run_search(X, y, "vlpso", {**SETTINGS, "gene_order": name}, seed=1)
    expected = gene_order(name, GeneMajor.from_samples(X), y)
    assert result.extra["ranking"] == expected.tolist()
    assert result.params["gene_order"] == name


def test_vlpso_by_default_keeps_the_papers_order_and_refuses_an_unknown_one():
    X, y = small_data(seed=3, n_genes=30)
    default = run_search(X, y, "vlpso", SETTINGS, seed=1)
    assert default.params["gene_order"] == "su"
    assert default.extra["ranking"] == run_search(
        X, y, "vlpso", {**SETTINGS, "gene_order": "su"}, seed=1).extra["ranking"]
    assert default.extra["ranking"] != run_search(
        X, y, "vlpso", {**SETTINGS, "gene_order": "f"}, seed=1).extra["ranking"]
    with pytest.raises(ParameterError, match="gene_order"):
        run_search(X, y, "vlpso", {**SETTINGS, "gene_order": "t"}, seed=1)
