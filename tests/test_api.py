"""``hpcswarm.select`` on data in memory: NumPy, pandas DataFrame, AnnData (var/uns written
back), a Dataset, the result's views and plots, the errors that name the missing key or the
unusable labels, and its keywords against the search specification."""

import inspect
import json
import os
import subprocess
import sys
import typing

import numpy as np
import pytest

import hpcswarm
from hpcswarm import SwarmFeatureSelector
from hpcswarm.comm import SerialComm
from hpcswarm.data import load_dataset
from hpcswarm.selection.methods import METHODS
from hpcswarm.selection.spec import SETTINGS, SPEC_PARAMS, search_arguments
from hpcswarm.signatures.refinements import DEFAULT, SIGNATURE_METHOD, final_refine

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
    result = hpcswarm.select(X, y, algorithm="bpso", random_state=5, **SMALL)
    selector = SwarmFeatureSelector("bpso", random_state=5, refine=final_refine("bpso"),
                                    **SMALL).fit(X, y)
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
    assert list(table.columns) == ["column", "score", "mean_0", "mean_1", "anova_f"]
    assert table["score"].tolist() == result.selector.scores_[result.genes].tolist()
    for name, row in table.iterrows():
        assert row["mean_1"] == pytest.approx(X[y == 1, int(row["column"])].mean())
        assert row["anova_f"] > 10  # the two informative genes
    front = result.front_frame()
    assert front["size"].tolist() == result.front["size"].tolist()
    assert len(result.history_frame()) == len(result.history)
    frame["tissue"] = np.where(y == 1, "tumour", "normal")  # the label as a column
    named = hpcswarm.select(frame, "tissue", algorithm="sfs", n_features_to_select=2)
    assert named.gene_names == result.gene_names and "tissue" not in named.all_gene_names


def test_preprocess_names_original_genes_with_numpy_and_pandas():
    X, y = informative(seed=3)
    X[:, [0, 5]] *= 3.0  # noise of variance 9: kept by top_variance with genes 3 and 7
    names = [f"ENSG{i:05d}" for i in range(X.shape[1])]
    frame = pandas.DataFrame(X, columns=names)
    by_array = hpcswarm.select(X, y, algorithm="sfs", preprocess="top_variance=4")
    by_frame = hpcswarm.select(frame, y, algorithm="sfs", preprocess={"top_variance": 4})
    assert by_array.genes.tolist() == by_frame.genes.tolist()
    assert set(by_array.genes) <= {0, 3, 5, 7} and len(by_array.genes) >= 1
    assert by_array.gene_names == [f"gene{g}" for g in by_array.genes]
    assert by_frame.gene_names == [names[g] for g in by_frame.genes]
    assert by_frame.front["gene_names"][0] == [names[g] for g in by_frame.front["genes"][0]]
    assert by_frame.to_frame()["column"].tolist() == by_frame.genes.tolist()
    assert np.array_equal(by_frame.selector.transform(X), frame[by_frame.gene_names].values)
    assert by_frame.settings["preprocess"] == {"top_variance": 4}
    frame["tissue"] = np.where(y == 1, "tumour", "normal")  # top_anova reads named classes
    named = hpcswarm.select(frame, "tissue", algorithm="sfs", preprocess="top_anova=2")
    assert set(named.gene_names) <= {"ENSG00003", "ENSG00007"} and named.gene_names


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
                             n_features_to_select=3, random_state=1)
    selected = adata.var["hpcswarm_selected"]
    assert selected.dtype == bool
    assert adata.var_names[selected.to_numpy()].tolist() == result.gene_names
    scores, ranks = adata.var["hpcswarm_score"], adata.var["hpcswarm_rank"]
    assert scores.tolist() == result.selector.scores_.tolist()
    assert sorted(ranks) == list(range(1, adata.n_vars + 1))
    assert adata.var_names[ranks.to_numpy() <= len(result.genes)].tolist() == result.gene_names
    params = adata.uns["hpcswarm"]["params"]  # as scanpy names a tool's settings
    assert params["algorithm"] == "sfs" and params["random_state"] == 1
    assert params["layer"] == "logcounts" and params["max_genes"] == "none"
    assert params["labels"] == "cell_type" and params["k"] == 1 and params["cv"] == "loo"
    assert params["refine"] == final_refine("sfs")
    uns = adata.uns["hpcswarm"]
    assert uns["inner_accuracy"] == result.inner_accuracy
    assert list(uns["selected_genes"]) == result.gene_names
    adata.write_h5ad(tmp_path / "cells.h5ad")
    back = anndata.read_h5ad(tmp_path / "cells.h5ad")
    assert back.var["hpcswarm_selected"].tolist() == selected.tolist()
    assert back.var["hpcswarm_rank"].tolist() == ranks.tolist()
    assert back.uns["hpcswarm"]["params"]["k"] == 1
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
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_particle'"):
        hpcswarm.select(X, y, n_particle=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="NumPy array, a pandas DataFrame, an AnnData"):
        hpcswarm.select(X.tolist(), y)
    with pytest.raises(ValueError, match="labels: 35 labels for 36 samples"):
        hpcswarm.select(X, y[1:])
    with pytest.raises(ValueError, match="gene_names: 3 names for 12 genes"):
        hpcswarm.select(X, y, gene_names=["a", "b", "c"])


def test_a_communicator_runs_the_same_selection():
    X, y = informative(seed=5)
    serial = hpcswarm.select(X, y, algorithm="bpso", random_state=2, **SMALL)
    over = hpcswarm.select(X, y, algorithm="bpso", random_state=2, comm=SerialComm(), **SMALL)
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
    with pytest.raises(ValueError, match="already exists; pass overwrite=True") as refused:
        result.plot_expression(folder, title="again")
    assert "--overwrite" not in str(refused.value)  # a Python error names Python arguments
    assert heatmap.read_bytes() == before and not strips.exists()  # both checked first
    assert result.plot_expression(folder, title="again", overwrite=True) == [heatmap, strips]
    assert heatmap.read_bytes() != before and strips.exists()
    with pytest.raises(ValueError, match="prefix must be the start of a file name"):
        result.plot_expression(tmp_path, prefix="../elsewhere")
    with pytest.raises(ValueError, match="folder: .* exists and is not a folder"):
        result.plot_expression(heatmap)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures"]


def test_plot_expression_never_replaces_a_special_file(tmp_path):
    """ValueError naming the argument, before anything is written: a FIFO or a link to a
    device among the files, with or without overwrite; a folder that is a file."""
    pytest.importorskip("matplotlib")
    result = hpcswarm.select(*informative(), algorithm="sfs")
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "signature-heatmap.png")
    (tmp_path / "device").mkdir()
    os.symlink(os.devnull, tmp_path / "device" / "signature-by-class.png")
    (tmp_path / "a-file").write_text("mine")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for folder, overwrite, message in [
            ("fifo", False, "signature-heatmap.png is a FIFO"),
            ("fifo", True, "signature-heatmap.png is a FIFO"),
            ("device", True, "signature-by-class.png is a character device"),
            ("a-file", False, "a-file exists and is not a folder")]:
        with pytest.raises(ValueError, match=f"^folder: .*{message}") as refused:
            result.plot_expression(tmp_path / folder, overwrite=overwrite)
        assert "--overwrite" not in str(refused.value)
    with pytest.raises(ValueError, match="^folder: .*cannot create the folder .*too long"):
        result.plot_expression(tmp_path / "new" / ("d" * 300))  # not an OSError of pathlib
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_import_hpcswarm_stays_light_and_lists_select():
    code = ("import sys, hpcswarm; "
            "print(sorted(m for m in ('pandas', 'anndata', 'matplotlib', 'sklearn') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert {"select", "Selection"} <= set(dir(hpcswarm))


API_ONLY = {"data", "labels", "n_features_to_select", "params", "random_state", "comm", "layer",
            "gene_names", "inplace", "key_added", "verbose", "n_threads", "seed"}
"""The arguments of ``select`` that are not settings of the search specification."""

KIND_TYPES = {"int": (int,), "float": (float,), "str": (str,), "choice": (str,),
              "cv": (str, int), "bool": (bool,), "optional_float": (float,)}
"""The Python types a keyword must accept for each kind of :class:`~hpcswarm.params.Param`."""


def test_select_takes_the_search_specification_as_typed_keywords():
    rows = {}
    for name in METHODS:
        rows.update(search_arguments(name))
    keywords = inspect.signature(hpcswarm.select).parameters
    hints = typing.get_type_hints(hpcswarm.select)
    derived = [name for name in keywords if name not in API_ONLY]
    assert {param.name for param in SPEC_PARAMS} | set(SETTINGS) <= set(derived)
    assert all(parameter.kind is not parameter.VAR_KEYWORD for parameter in keywords.values())
    for name in derived:
        if name == "preprocess":  # no row: a table of steps (dict) or their text
            assert set(typing.get_args(hints[name])) == {type(None), dict, str}
            assert keywords[name].default is None
            continue
        row = rows[name]  # a KeyError: a keyword that is no setting of the specification
        accepted = typing.get_args(hints[name]) or (hints[name],)
        assert set(KIND_TYPES[row.kind]) <= set(accepted), name
        default = keywords[name].default
        assert default is None or default == row.default or name in ("refine", "algorithm")
    assert keywords["algorithm"].default == SIGNATURE_METHOD in METHODS
    assert keywords["refine"].default is None  # the final signature's, by method
    selector = inspect.signature(SwarmFeatureSelector.__init__).parameters
    assert set(selector) - {"self"} == set(derived) | {"params", "random_state", "comm",
                                                       "n_features_to_select", "verbose",
                                                       "n_threads"}
    selector_hints = typing.get_type_hints(SwarmFeatureSelector.__init__)
    assert all(selector_hints[name] == hints[name] for name in derived)
    assert selector["refine"].default is None  # the final signature's, by method


def test_the_default_refinement_is_the_final_signature_jobs():
    X, y = informative(seed=7)
    result = hpcswarm.select(X, y, algorithm="bpso", **SMALL)
    assert result.settings["refine"] == final_refine("bpso") == DEFAULT
    assert result.selector.result_.refined.method == DEFAULT


def test_the_default_signature_job_runs_on_each_fold_the_search_select_runs(tmp_path):
    from dataclasses import replace

    import h5py

    from hpcswarm.data import Dataset, write_dataset
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job
    from hpcswarm.selection.preprocess import fit
    from hpcswarm.selection.search import run_search

    X, y = informative(seed=9)
    write_dataset(Dataset(X, y, ["a", "b"], [f"g{i}" for i in range(X.shape[1])], None, {}),
                  tmp_path / "data.h5")
    small = {"n_particles": 4, "n_iterations": 3}
    job = read_job("jobs/default-signature.toml",
                   [f"data={tmp_path / 'data.h5'}", "runs=1", "folds=3", "n_divisions=2",
                    *(f"{key}={value}" for key, value in small.items()),
                    f"output={tmp_path / 'out.h5'}"])
    spec = SwarmFeatureSelector(params={"n_divisions": 2}, **small).search_spec()  # select's
    assert job.spec == replace(spec, sample_shards=job.spec.sample_shards)
    run_job(job, quiet=True)
    with h5py.File(tmp_path / "out.h5", "r") as results:
        group = results["runs/run-000/fold-01"]
        train, genes = group["train_index"][()], group["selected_genes"][()]
        key = tuple(int(k) for k in group.attrs["spawn_key"])
        seed = int(results.attrs["seed"])
    _, X_train = fit(spec.preprocess, X[train], y[train])
    found = run_search(X_train, y[train], replace(spec, preprocess=()),
                       seed=np.random.SeedSequence(seed, spawn_key=key))
    assert np.array_equal(np.flatnonzero(found.mask), genes)


def test_seed_still_works_with_a_deprecation_warning_at_the_caller():
    X, y = informative(seed=8)
    with pytest.warns(DeprecationWarning, match="random_state") as caught:
        old = hpcswarm.select(X, y, algorithm="sfs", seed=3)
    assert caught[0].filename == __file__
    new = hpcswarm.select(X, y, algorithm="sfs", random_state=3)
    assert old.gene_names == new.gene_names and old.settings["random_state"] == 3
    with pytest.raises(TypeError, match="both seed and random_state"):
        with pytest.warns(DeprecationWarning):
            hpcswarm.select(X, y, algorithm="sfs", seed=3, random_state=4)


@pytest.mark.parametrize("labels, problem", [
    (np.zeros(36, dtype=int), "one class only"),
    (np.where(np.arange(36) < 3, None, np.arange(36) % 2).astype(object),
     "3 sample\\(s\\) without a label"),
    (np.r_[np.nan, np.arange(35) % 2.0], "1 sample\\(s\\) without a label"),
    (np.linspace(20.0, 80.0, 36), "36 distinct float values among 36 samples"),
    (np.array(["a", 1] * 18, dtype=object), "mixed types"),
    (np.array([0, 1.0, True] * 12, dtype=object), "mixed types \\(bool, float, int\\)"),
    (np.arange(36) % 4 / 2, "float values that are not whole numbers \\(0.5, 1.5\\)"),
    (np.where(np.arange(36) % 2, np.inf, 0.0), "float values that are not whole numbers \\(inf\\)"),
    (np.arange(36) % 2 + 1j, "complex labels cannot be classes"),
    ([f"patient{i}" for i in range(36)], "every sample has a class of its own"),
])
def test_labels_that_name_no_classes_are_refused(labels, problem):
    X, _ = informative()
    with pytest.raises(ValueError, match=f"labels: {problem}"):
        hpcswarm.select(X, labels, algorithm="sfs")


def test_a_frame_with_unusable_labels_or_columns_is_refused_by_name():
    X, y = informative(seed=9)
    frame = pandas.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    frame["age"] = np.linspace(20.0, 80.0, len(y))
    with pytest.raises(ValueError, match="labels \\(column 'age'\\): 36 distinct float"):
        hpcswarm.select(frame, "age", algorithm="sfs")
    frame["age"] = pandas.Categorical(np.where(y == 1, 30.5, 60.5))  # categorical: classes
    assert hpcswarm.select(frame, "age", algorithm="sfs").gene_names
    frame["tissue"] = pandas.array(np.where(y == 1, "tumour", None), dtype="string")
    with pytest.raises(ValueError, match="column 'tissue'\\): 18 sample\\(s\\) without"):
        hpcswarm.select(frame, "tissue", algorithm="sfs")
    frame["tissue"] = np.where(y == 1, "tumour", "normal")
    with pytest.raises(ValueError, match="data: column\\(s\\) 'tissue' \\(object\\) are not "
                                         "numbers"):
        hpcswarm.select(frame.drop(columns="age"), y, algorithm="sfs")
    twice = pandas.DataFrame(X, columns=[f"g{i % 11}" for i in range(X.shape[1])])
    with pytest.raises(ValueError, match="data: gene 'g0' is named twice \\(columns 0 and 11"):
        hpcswarm.select(twice, y, algorithm="sfs")
    with pytest.raises(ValueError, match="gene_names: gene 'a' is named twice"):
        hpcswarm.select(X, y, gene_names=["a"] * X.shape[1])


def test_a_labels_series_is_matched_on_the_frames_index():
    X, y = informative(seed=10)
    samples = [f"s{i}" for i in range(len(y))]
    frame = pandas.DataFrame(X, index=samples, columns=[f"g{i}" for i in range(X.shape[1])])
    in_order = pandas.Series(np.where(y == 1, "B", "T"), index=samples)
    shuffled = in_order.iloc[np.random.default_rng(0).permutation(len(y))]
    first = hpcswarm.select(frame, in_order, algorithm="bpso", **SMALL)
    second = hpcswarm.select(frame, shuffled, algorithm="bpso", **SMALL)
    assert second.gene_names == first.gene_names
    assert second.labels.tolist() == in_order.tolist()
    with pytest.raises(ValueError, match="Series's index does not match.*'s0'"):
        hpcswarm.select(frame, in_order.reset_index(drop=True), algorithm="sfs")
    table = pandas.concat([shuffled, pandas.Series(["B"], index=["not-a-row"])])  # more samples
    assert hpcswarm.select(frame, table, algorithm="bpso", **SMALL).gene_names == first.gene_names
    twice = frame.set_axis(["s0"] * len(y), axis=0)
    with pytest.raises(ValueError, match="DataFrame's index names sample 's0' more than once"):
        hpcswarm.select(twice, in_order, algorithm="sfs")


def test_an_int_column_of_a_frame_made_from_an_array_names_the_labels():
    X, y = informative(seed=15)
    frame = pandas.DataFrame(np.column_stack([X, y]))  # columns 0..12, the labels last
    result = hpcswarm.select(frame, 12, algorithm="sfs")
    assert "12" not in result.all_gene_names and result.settings["labels"] == 12
    assert result.genes.tolist() == hpcswarm.select(X, y, algorithm="sfs").genes.tolist()
    with pytest.raises(ValueError, match="labels: no column 13 in the DataFrame"):
        hpcswarm.select(frame, 13, algorithm="sfs")


def test_an_anndata_with_a_missing_label_or_genes_named_twice_is_refused():
    adata = anndata_object(seed=11)
    adata.obs["cell_type"] = adata.obs["cell_type"].astype(object)
    adata.obs.iloc[2, 0] = np.nan
    with pytest.raises(ValueError, match="obs column 'cell_type'\\): 1 sample\\(s\\) without "
                                         "a label .* position\\(s\\) 2"):
        hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs")
    adata = anndata_object(seed=11)
    adata.obs["one"] = "B"
    with pytest.raises(ValueError, match="obs column 'one'\\): one class only \\('B'\\)"):
        hpcswarm.select(adata, "one", layer="logcounts", algorithm="sfs")
    adata.var_names = ["G0"] * 2 + [f"G{i}" for i in range(2, adata.n_vars)]
    with pytest.raises(ValueError, match="data.var_names: gene 'G0' is named twice"):
        hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs")


def test_a_dataset_keeps_its_class_names_and_load_dataset_gives_an_ndarray(tmp_path):
    dataset = load_dataset("builtin:srbct")
    assert type(dataset.X) is np.ndarray and type(dataset.X.astype(np.float32)) is np.ndarray
    assert isinstance(dataset.X.base, np.memmap) and dataset.memory_mapped  # a view, no copy
    anndata = pytest.importorskip("anndata")
    anndata.AnnData(dataset.X[:, :5]).write_h5ad(tmp_path / "srbct.h5ad")
    greedy = {"algorithm": "sfs", "params": {"max_steps": 2}}
    result = hpcswarm.select(dataset, **greedy)
    assert set(result.labels) == {"BL", "EWS", "NB", "RMS"}
    assert result.gene_names == [dataset.gene_names[g] for g in result.genes]
    assert [c for c in result.to_frame().columns if c.startswith("mean_")] == [
        "mean_BL", "mean_EWS", "mean_NB", "mean_RMS"]
    codes = hpcswarm.select(dataset.X, dataset.y, **greedy)
    assert codes.genes.tolist() == result.genes.tolist()  # the search reads the same labels
    with pytest.raises(ValueError, match="labels: a Dataset brings its own"):
        hpcswarm.select(dataset, dataset.y, algorithm="sfs")


@pytest.mark.parametrize("make, problem", [
    (lambda X: X.astype(complex), "complex numbers \\(complex128\\) are not expression values"),
    (lambda X: X.astype(str), "text \\(<U\\d+\\) are not expression values"),
    (lambda X: X.astype("datetime64[s]"), "dates \\(datetime64\\[s\\]\\) are not"),
    (lambda X: X[:0], "no samples"),
    (lambda X: np.where(np.arange(12) == 5, np.nan, X), "36 value\\(s\\) are missing or infinite "
                                                      "\\(NaN or inf\\), the first at sample 0, "
                                                      "gene 5 \\('gene5'\\)"),
])
def test_data_that_is_no_matrix_of_finite_numbers_is_refused_as_data(make, problem):
    """Checked before any conversion, which would drop imaginary parts or read the text."""
    X, y = informative()
    with pytest.raises(ValueError, match=f"^data: {problem}"):
        hpcswarm.select(make(X), y, algorithm="sfs")


def test_a_missing_value_of_a_frame_or_an_anndata_layer_names_its_gene():
    X, y = informative(seed=12)
    frame = pandas.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    frame["g4"] = pandas.array([1.0] * 35 + [None], dtype="Float64")
    with pytest.raises(ValueError, match="^data: 1 value.* sample 35, gene 4 \\('g4'\\)"):
        hpcswarm.select(frame, y, algorithm="sfs")
    adata = anndata_object(seed=12)
    adata.layers["logcounts"][3, 2] = np.inf
    with pytest.raises(ValueError, match="^data.layers\\['logcounts'\\]: 1 value.* gene 2 "
                                         "\\('G2'\\)"):
        hpcswarm.select(adata, "cell_type", layer="logcounts", algorithm="sfs")
    adata.X = adata.X.astype(complex)
    with pytest.raises(ValueError, match="^data.X: complex numbers"):
        hpcswarm.select(adata, "cell_type", algorithm="sfs")


def test_gene_names_and_write_back_arguments_of_the_wrong_kind_are_refused():
    X, y = informative()
    with pytest.raises(TypeError, match="gene_names: give a sequence of names.*'abcdefghijkl'"):
        hpcswarm.select(X, y, algorithm="sfs", gene_names="abcdefghijkl")
    with pytest.raises(TypeError, match="gene_names: give a sequence of names.*got int"):
        hpcswarm.select(X, y, algorithm="sfs", gene_names=12)
    with pytest.raises(ValueError, match="gene_names: 1 gene\\(s\\) without a name .* "
                                         "column\\(s\\) 3"):
        hpcswarm.select(X, y, algorithm="sfs",
                        gene_names=[None if i == 3 else f"g{i}" for i in range(12)])
    with pytest.raises(TypeError, match="inplace must be True or False, got 'no'"):
        hpcswarm.select(X, y, algorithm="sfs", inplace="no")
    with pytest.raises(TypeError, match="key_added must be a str, got 3"):
        hpcswarm.select(X, y, algorithm="sfs", key_added=3)
    adata = anndata_object(seed=13)
    with pytest.raises(ValueError, match="gene_names: an AnnData's genes are named by its "
                                         "var_names"):
        hpcswarm.select(adata, "cell_type", algorithm="sfs", gene_names=list(adata.var_names))


def test_the_result_keeps_class_names_and_is_plain_json():
    X, y = informative(seed=14)
    as_bytes = np.where(y == 1, b"tumour", b"normal")  # as h5py reads text
    result = hpcswarm.select(X, as_bytes, algorithm="sfs", n_features_to_select=np.int64(2),
                             random_state=np.random.default_rng(1), k=np.int64(1))
    assert sorted(set(result.labels.tolist())) == ["normal", "tumour"]
    assert [c for c in result.to_frame().columns if c.startswith("mean_")] == [
        "mean_normal", "mean_tumour"]
    assert all(type(name) is str for name in result.gene_names)
    settings = json.loads(json.dumps(result.settings))
    assert settings["n_features_to_select"] == 2
    assert settings["random_state"] == result.selector.seed_
    plain = json.loads(json.dumps(result.to_dict()))
    assert plain["gene_names"] == result.gene_names and plain["genes"] == result.genes.tolist()
    assert plain["front"]["size"] == result.front["size"].tolist()
    assert plain["front"]["gene_names"] == result.front["gene_names"]
    assert len(plain["history"]) == len(result.history) and plain["params"]["k"] == 1
    boolean = hpcswarm.select(X, y == 1, algorithm="sfs")
    assert [c for c in boolean.to_frame().columns if c.startswith("mean_")] == [
        "mean_False", "mean_True"]
    as_objects = hpcswarm.select(X, y.astype(object), algorithm="sfs")  # a pandas object column
    assert as_objects.gene_names == hpcswarm.select(X, y, algorithm="sfs").gene_names


def test_select_and_the_selector_maximise_the_balanced_accuracy_objective():
    """``objective="balanced-accuracy"`` reaches the search: its fitness is the balanced
    accuracy (per-class counts) of its subset on the run's folds, not the plain accuracy."""
    from hpcswarm.selection.search import make_fitness
    from hpcswarm.swarm.engine.state import run_seed_sequence

    rng = np.random.default_rng(2)
    y = np.repeat([0, 1, 2], [20, 8, 5])
    X = rng.normal(size=(y.size, 12))
    X[:, 3] += 1.5 * y
    settings = {"algorithm": "bpso", "objective": "balanced-accuracy", "random_state": 4,
                **SMALL}
    result = hpcswarm.select(X, y, **settings)
    selector = result.selector
    assert result.params["objective"] == "balanced-accuracy"
    _, scorer = make_fitness(X, y, selector.result_.params, run_seed_sequence(selector.seed_))
    score = scorer.score(selector.result_.mask)
    assert selector.fitness_ == score.balanced_accuracy != score.accuracy
    assert selector.result_.extra["score"]["balanced_accuracy"] == selector.fitness_
    again = SwarmFeatureSelector(**{k: v for k, v in settings.items() if k != "algorithm"},
                                 algorithm="bpso").fit(X, y)
    assert again.fitness_ == selector.fitness_


def test_select_and_the_selector_share_one_copy_of_the_settings_documentation():
    """The settings both take are documented once (hpcswarm.selector's texts), with the
    objectives of the registry."""
    from hpcswarm.selector import METHOD_SETTINGS_DOC, SEARCH_SETTINGS_DOC
    from hpcswarm.store.objectives import OBJECTIVE_TABLE

    for doc in (hpcswarm.select.__doc__, hpcswarm.SwarmFeatureSelector.__doc__):
        assert SEARCH_SETTINGS_DOC in doc and METHOD_SETTINGS_DOC in doc
        assert "SETTINGS_DOC" not in doc
    assert all(f'``"{name}"``' in METHOD_SETTINGS_DOC for name in OBJECTIVE_TABLE)
