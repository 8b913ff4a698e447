"""``hpcswarm.select`` on data in memory: NumPy, pandas DataFrame, AnnData (var/uns written
back), the result's views and plots, the errors that name the missing key."""

import subprocess
import sys

import numpy as np
import pytest

import hpcswarm
from hpcswarm import SwarmFeatureSelector
from hpcswarm.comm import SerialComm
from hpcswarm.errors import DataError

pandas = pytest.importorskip("pandas")

SMALL = {"n_particles": 6, "n_iterations": 3, "cv": 3}


def informative(seed=0, n_samples=36, n_genes=12):
    """Genes 3 and 7 carry the class; the rest is noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 2
    X = rng.normal(size=(n_samples, n_genes))
    X[:, 3] += 3.0 * y
    X[:, 7] -= 3.0 * y
    return X, y


def test_numpy_array_gives_the_selector_signature_with_default_names():
    X, y = informative()
    result = hpcswarm.select(X, y, algorithm="bpso", seed=5, **SMALL)
    selector = SwarmFeatureSelector("bpso", random_state=5, **SMALL).fit(X, y)
    assert result.genes.tolist() == np.flatnonzero(selector.support_).tolist()
    assert result.gene_names == [f"gene{g}" for g in result.genes]
    assert result.inner_accuracy == selector.inner_accuracy_
    assert result.params["n_particles"] == 6 and len(result.history) == 3
    assert result.front["gene_names"][0] == [f"gene{g}" for g in result.front["genes"][0]]


def test_dataframe_gives_gene_names_from_its_columns():
    X, y = informative(seed=1)
    frame = pandas.DataFrame(X, columns=[f"ENSG{i:05d}" for i in range(X.shape[1])])
    result = hpcswarm.select(frame, y, algorithm="sfs", n_features_to_select=2)
    assert 1 <= len(result.gene_names) <= 2
    assert set(result.gene_names) <= {"ENSG00003", "ENSG00007"}
    table = result.to_frame()
    assert table.index.tolist() == result.gene_names and table.index.name == "gene"
    assert table["column"].tolist() == result.genes.tolist()
    assert list(table.columns) == ["column", "mean_0", "mean_1", "anova_f"]
    for name, row in table.iterrows():
        assert row["mean_1"] == pytest.approx(X[y == 1, int(row["column"])].mean())
        assert row["anova_f"] > 10  # the two informative genes
    front = result.front_frame()
    assert front["size"].tolist() == result.front["size"].tolist()
    assert len(result.history_frame()) == len(result.history)
    frame["tissue"] = np.where(y == 1, "tumour", "normal")  # the label as a column
    named = hpcswarm.select(frame, "tissue", algorithm="sfs", n_features_to_select=2)
    assert named.gene_names == result.gene_names and "tissue" not in named.all_gene_names


def anndata_object(seed=2):
    anndata = pytest.importorskip("anndata")
    X, y = informative(seed=seed)
    obs = pandas.DataFrame({"cell_type": np.where(y == 1, "B", "T")},
                           index=[f"s{i}" for i in range(X.shape[0])])
    var = pandas.DataFrame(index=[f"G{i}" for i in range(X.shape[1])])
    adata = anndata.AnnData(X=np.zeros_like(X), obs=obs, var=var)
    adata.layers["logcounts"] = X
    return adata


def test_anndata_writes_var_and_uns_that_an_h5ad_file_keeps(tmp_path):
    anndata = pytest.importorskip("anndata")
    adata = anndata_object()
    result = hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs",
                             n_features_to_select=3, seed=1)
    selected = adata.var["hpcswarm_selected"]
    assert selected.dtype == bool
    assert adata.var_names[selected.to_numpy()].tolist() == result.gene_names
    uns = adata.uns["hpcswarm"]
    assert uns["settings"]["algorithm"] == "sfs" and uns["settings"]["seed"] == 1
    assert uns["settings"]["layer"] == "logcounts" and uns["settings"]["max_genes"] == "none"
    assert uns["inner_accuracy"] == result.inner_accuracy
    assert list(uns["selected_genes"]) == result.gene_names
    assert '"k": 1' in uns["settings"]["params"]
    adata.write_h5ad(tmp_path / "cells.h5ad")
    back = anndata.read_h5ad(tmp_path / "cells.h5ad")
    assert back.var["hpcswarm_selected"].tolist() == selected.tolist()
    assert back.uns["hpcswarm"]["front_size"].tolist() == result.front["size"].tolist()
    assert list(back.uns["hpcswarm"]["selected_genes"]) == result.gene_names


def test_anndata_inplace_false_and_key_added():
    adata = anndata_object(seed=3)
    hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs", inplace=False)
    assert "hpcswarm_selected" not in adata.var and "hpcswarm" not in adata.uns
    hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs", key_added="run2")
    assert "run2_selected" in adata.var and "run2" in adata.uns


def test_errors_name_the_missing_key():
    adata = anndata_object(seed=4)
    with pytest.raises(ValueError, match="no obs column 'tissue'.*cell_type"):
        hpcswarm.select(adata, "tissue", algorithm="sfs")
    with pytest.raises(ValueError, match="no layer 'counts'.*logcounts"):
        hpcswarm.select(adata, "cell_type", layer="counts", algorithm="sfs")
    X, y = informative()
    with pytest.raises(ValueError, match="labels"):
        hpcswarm.select(X, algorithm="sfs")
    with pytest.raises(ValueError, match="no column 'kind'"):
        hpcswarm.select(pandas.DataFrame(X), "kind", algorithm="sfs")
    with pytest.raises(TypeError, match="unknown keyword argument.*n_particle\\b"):
        hpcswarm.select(X, y, n_particle=5)
    with pytest.raises(TypeError, match="NumPy array, a pandas DataFrame or an AnnData"):
        hpcswarm.select(X.tolist(), y)
    with pytest.raises(ValueError, match="gene_names: 3 names for 12 genes"):
        hpcswarm.select(X, y, gene_names=["a", "b", "c"])


def test_a_communicator_runs_the_same_selection():
    X, y = informative(seed=5)
    serial = hpcswarm.select(X, y, algorithm="bpso", seed=2, **SMALL)
    over = hpcswarm.select(X, y, algorithm="bpso", seed=2, comm=SerialComm(), **SMALL)
    assert over.genes.tolist() == serial.genes.tolist()


def test_plot_expression_writes_two_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    adata = anndata_object(seed=6)
    result = hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs")
    written = result.plot_expression(tmp_path, prefix="cells")
    assert [p.name for p in written] == ["cells-heatmap.png", "cells-by-class.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in written)
    heatmap, strips = result.plot_expression()
    assert heatmap.axes and strips.axes


def test_plot_expression_creates_its_folder_and_replaces_a_file_only_when_told(tmp_path):
    pytest.importorskip("matplotlib")
    result = hpcswarm.select(*informative(), algorithm="sfs")
    folder = tmp_path / "figures" / "signature"
    heatmap, strips = result.plot_expression(folder)
    assert heatmap.parent == folder and heatmap.read_bytes()[:4] == b"\x89PNG"
    before = heatmap.read_bytes()
    strips.unlink()
    with pytest.raises(DataError, match="already exists"):
        result.plot_expression(folder, title="again")
    assert heatmap.read_bytes() == before and not strips.exists()  # both checked first
    assert result.plot_expression(folder, title="again", overwrite=True) == [heatmap, strips]
    assert heatmap.read_bytes() != before and strips.exists()


def test_import_hpcswarm_stays_light_and_lists_select():
    code = ("import sys, hpcswarm; "
            "print(sorted(m for m in ('pandas', 'anndata', 'matplotlib', 'sklearn') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert {"select", "Selection"} <= set(dir(hpcswarm))
