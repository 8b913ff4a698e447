"""The generated design sets: sizes, determinism, and the property each one plants."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import f as f_distribution
from scipy.stats import f_oneway

from hpcswarm.data import load_dataset, open_dataset, write_dataset
from hpcswarm.datasets.panel import (PANEL_SETS, imbalanced, many_classes, modules, panel_set,
                                     parity)
from hpcswarm.errors import DataError

ROOT = Path(__file__).resolve().parents[1]


def loo_1nn(X, y):
    """1-NN leave-one-out accuracy (Euclidean)."""
    squared = np.sum(X ** 2, axis=1)
    distance = squared[:, None] + squared[None, :] - 2 * X @ X.T
    np.fill_diagonal(distance, np.inf)
    return float(np.mean(y[np.argmin(distance, axis=1)] == y))


@pytest.fixture(scope="module")
def panel():
    return {name: panel_set(name) for name in PANEL_SETS}


def test_shapes_and_class_counts(panel):
    wide = panel["many-classes"]
    counts = np.bincount(wide.y)
    assert wide.X.shape == (60, 5000) and 9 <= counts.size <= 11
    assert counts.min() >= 2 and counts.max() <= 9 and counts.sum() == 60
    assert panel["parity"].X.shape == (96, 2000)
    assert np.bincount(panel["parity"].y).tolist() == [48, 48]
    assert panel["modules"].X.shape == (72, 2000)
    assert np.bincount(panel["modules"].y).tolist() == [24] * 3
    small = np.bincount(panel["imbalanced"].y)
    assert sorted(small.tolist()) == [5, 33, 62] and small.min() / small.sum() == 0.05
    for drawn in panel.values():
        assert drawn.X.dtype == np.float64 and drawn.y.dtype == np.int64
        assert len(drawn.gene_names) == drawn.X.shape[1] == len(set(drawn.gene_names))
        assert len(drawn.class_names) == drawn.y.max() + 1 and np.all(np.isfinite(drawn.X))


def test_same_seed_same_set_other_seed_other_set():
    for generator, arguments in PANEL_SETS.values():
        a, b = generator(**arguments), generator(**arguments)
        assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
        assert all(np.array_equal(a.informative[k], b.informative[k]) for k in a.informative)
        c = generator(seed=arguments["seed"] + 1)
        assert not np.array_equal(a.X, c.X)


def test_planted_genes_are_shuffled_away_from_the_first_columns(panel):
    for drawn in panel.values():
        planted = np.concatenate(list(drawn.informative.values()))
        assert planted.max() >= drawn.X.shape[1] // 2


def test_many_classes_need_their_markers(panel):
    drawn = panel["many-classes"]
    markers = np.concatenate(list(drawn.informative.values()))
    assert markers.size == 30
    assert loo_1nn(drawn.X[:, markers], drawn.y) >= 0.9
    assert loo_1nn(drawn.X, drawn.y) < 0.3  # all 5000 genes: the noise hides the markers
    assert loo_1nn(drawn.X[:, markers[:1]], drawn.y) < 0.3  # one gene: one class at most


@pytest.mark.parametrize("n_parity", [2, 3])
def test_parity_has_no_marginal_signal_but_joint_signal(n_parity, panel):
    drawn = panel["parity"] if n_parity == 2 else parity(7, n_parity=3)
    genes = drawn.informative["parity"]
    assert genes.size == n_parity
    for gene in genes:
        groups = [drawn.X[drawn.y == c, gene] for c in (0, 1)]
        statistic = max(f_oneway(*groups).statistic, 0.0)  # 0 up to rounding
        assert f_distribution.sf(statistic, 1, drawn.y.size - 2) > 0.05
        assert abs(groups[0].mean()) < 1e-12 and abs(groups[1].mean()) < 1e-12
    assert loo_1nn(drawn.X[:, genes], drawn.y) >= 0.95
    assert loo_1nn(drawn.X[:, genes[:-1]], drawn.y) < 0.7  # one short: no better than chance
    assert loo_1nn(drawn.X, drawn.y) < 0.7


def test_the_parity_docs_state_the_class_variances_the_set_has(panel):
    """The panel's parity genes have class means of 0 but class variances of their own draws;
    the module's description and docs/signatures.md give them as the drawn set has them (the
    set is not redrawn: the stored design-panel figures of docs/benchmarks.md come from it)."""
    import hpcswarm.datasets.panel as module

    drawn = panel["parity"]
    signatures = (ROOT / "docs" / "signatures.md").read_text(encoding="utf-8")
    for gene in drawn.informative["parity"]:
        even, odd = (drawn.X[drawn.y == c, gene] for c in (0, 1))
        stated = f"{even.var():.2f} against {odd.var():.2f}"
        assert stated in " ".join(module.__doc__.split()) and stated in signatures
    assert "same class means and variances" not in signatures


def test_modules_are_strongly_correlated_and_module_0_carries_the_class(panel):
    drawn = panel["modules"]
    assert len(drawn.informative) == 20
    for genes in drawn.informative.values():
        correlation = np.corrcoef(drawn.X[:, genes].T)
        assert correlation[np.triu_indices(genes.size, 1)].min() > 0.8
    module = drawn.informative["module 0"]
    assert loo_1nn(drawn.X[:, module], drawn.y) >= 0.9
    assert loo_1nn(drawn.X[:, drawn.informative["module 1"]], drawn.y) < 0.6
    outside = np.setdiff1d(np.arange(drawn.X.shape[1]),
                           np.concatenate(list(drawn.informative.values())))
    noise = np.corrcoef(drawn.X[:, outside[:50]].T)
    assert np.abs(noise[np.triu_indices(50, 1)]).max() < 0.6


def test_imbalanced_small_class_is_found_by_its_markers(panel):
    drawn = panel["imbalanced"]
    small = int(np.argmin(np.bincount(drawn.y)))
    markers = drawn.informative[f"class {drawn.class_names[small]}"]
    predicted_small = (drawn.y == small).astype(int)
    assert loo_1nn(drawn.X[:, markers], predicted_small) >= 0.95


@pytest.mark.parametrize("call, message", [
    (lambda: many_classes(1, sizes=(3,)), "sizes"),
    (lambda: many_classes(1, n_genes=10), "n_genes"),
    (lambda: parity(1, n_parity=4), "n_parity"),
    (lambda: parity(1, n_samples=10), "multiple of 4"),
    (lambda: modules(1, module_size=1), "module_size"),
    (lambda: imbalanced(1, markers=0), "markers"),
    (lambda: panel_set("xor"), "name must be one of"),
])
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_panel_names_open_as_datasets_and_write_as_hdf5(tmp_path):
    dataset = load_dataset("panel:parity")
    drawn = panel_set("parity")
    assert np.array_equal(dataset.X, drawn.X) and dataset.class_names == ["even", "odd"]
    planted = json.loads(dataset.attrs["planted"])
    assert planted["parity"] == [drawn.gene_names[g] for g in drawn.informative["parity"]]
    write_dataset(dataset, tmp_path / "parity.h5")
    again = open_dataset(tmp_path / "parity.h5")
    assert np.array_equal(np.asarray(again.X), drawn.X)
    assert again.attrs["source"] == "panel:parity"
    with pytest.raises(DataError, match="panel:xor: not a generated design set"):
        load_dataset("panel:xor")
