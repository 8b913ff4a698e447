"""Results files: layout, encodings on every object, provenance, summary, atomic writing."""

import json
import re

import h5py
import numpy as np
import pytest

from hpcswarm import __version__
from hpcswarm.errors import DataError
from hpcswarm.results.files import (TASK_COLUMNS, describe, gene_frequencies, mean_curve,
                              read_results, run_accuracies)
from small_jobs import run_small_job

JOB = """# a test job
name = "CB"
data = "sklearn:wine"
algorithm = "cbpso"
protocol = "unbiased"
folds = 3
runs = 2
seed = 5
[params]
n_particles = 6
n_iterations = 4
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return run_small_job(tmp_path_factory.mktemp("results"), JOB, "out.h5")


def test_every_object_says_what_it_is(finished):
    job, _ = finished
    untagged = []
    with h5py.File(job.output, "r") as f:
        assert f.attrs["encoding-type"] == "hpcswarm-results"

        def check(name, obj):
            if "encoding-type" not in obj.attrs or "encoding-version" not in obj.attrs:
                untagged.append(name)

        f.visititems(check)
        assert sorted(f) == ["class_names", "gene_names", "gene_similarity", "runs", "tasks"]
        assert sorted(f["tasks"]) == sorted(TASK_COLUMNS)
        task = f["runs/run-001/fold-02"]
        assert sorted(task) == ["baseline_class_correct", "baseline_class_total", "front",
                                "history", "pca_class_correct", "pca_class_total",
                                "selected_genes", "test_class_correct", "test_class_total",
                                "test_index", "train_index"]
        assert list(task["history"].attrs["columns"])[:2] == ["iteration", "best_fitness"]
        assert task["history"].shape == (4, len(task["history"].attrs["columns"]))
    assert untagged == []


def test_provenance(finished):
    job, _ = finished
    results = read_results(job.output)
    attrs = results.attrs
    assert attrs["job_text"] == JOB and attrs["hpcswarm_version"] == __version__
    assert attrs["seed"] == 5 and attrs["n_ranks"] == 1 and attrs["protocol"] == "unbiased"
    assert len(attrs["dataset_sha256"]) == 64 and attrs["biased"] is False
    assert attrs["job"]["overrides"] == [f"output={job.output}"]
    assert attrs["params"]["n_particles"] == 6 and attrs["total_seconds"] > 0
    assert results.gene_names[0] == "alcohol" and results.class_names[0] == "class_0"


def test_every_run_and_fold_recorded(finished):
    job, _ = finished
    results = read_results(job.output)
    table = results.table
    assert table["run"].tolist() == [0, 0, 0, 1, 1, 1]
    assert table["fold"].tolist() == [0, 1, 2] * 2
    assert table["test_total"].reshape(2, 3).sum(axis=1).tolist() == [178, 178]
    assert np.array_equal(table["subset_size"], [g.size for g in results.genes])
    assert (table["evaluations"] > 0).all() and (table["seconds"] > 0).all()
    assert np.allclose(table["test_accuracy"], table["test_correct"] / table["test_total"])
    with h5py.File(job.output, "r") as f:
        for run in range(2):
            tests = np.concatenate([f[f"runs/run-{run:03d}/fold-{k:02d}/test_index"][()]
                                    for k in range(3)])
            assert sorted(tests.tolist()) == list(range(178))


def test_summary_beside_the_results(finished):
    job, summary = finished
    on_disk = json.loads(job.summary_path.read_text())
    assert on_disk == json.loads(json.dumps(summary))
    assert on_disk["encoding-type"] == "hpcswarm-results-summary"
    assert on_disk["accuracy"]["n"] == 2 and len(on_disk["accuracy_per_run"]) == 2
    balanced = read_results(job.output).table["test_balanced_accuracy"]
    assert on_disk["balanced_accuracy"]["n"] == 6
    assert on_disk["balanced_accuracy"]["mean"] == pytest.approx(balanced.mean())
    assert on_disk["note"] is None and on_disk["tasks"] == 6
    assert len(on_disk["convergence_best_fitness"]) == 4
    assert sorted(p.name for p in job.output.parent.iterdir()) == [
        "job.toml", "out.h5", "out.json", "out.progress.jsonl"]


def test_figures():
    table = {"run": np.array([0, 0, 1, 1]), "test_correct": np.array([4, 5, 5, 5]),
             "test_total": np.array([5, 5, 5, 5])}
    assert run_accuracies(table).tolist() == [0.9, 1.0]
    stats = describe([0.9, 1.0])
    assert stats["best"] == 1.0 and stats["mean"] == pytest.approx(0.95)
    assert stats["std"] == pytest.approx(np.std([0.9, 1.0], ddof=1))
    top = gene_frequencies([np.array([3, 1]), np.array([3]), np.array([2, 3])],
                           ["a", "b", "c", "d"], 3, top=2)
    assert [(g["name"], g["count"]) for g in top] == [("d", 3), ("b", 1)]
    assert top[0]["frequency"] == 1.0
    curve = mean_curve([np.array([[0, 0.5], [1, 0.7]]), np.array([[0, 0.9]])],
                       ["iteration", "best_fitness"])
    assert curve.tolist() == pytest.approx([0.7, 0.8])


def test_not_a_results_file(tmp_path):
    with pytest.raises(DataError, match="no such results file"):
        read_results(tmp_path / "x.h5")
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.attrs["encoding-type"] = "hpcswarm-dataset"
    with pytest.raises(DataError, match="not an hpcswarm results file"):
        read_results(tmp_path / "d.h5")


@pytest.mark.parametrize("damage, fragment", [
    ("selected_genes", "a damaged results file: run 0 fold 1: selected genes name gene column "
                       "99, outside the 13 genes"),
    ("attribute", "a damaged results file (UnicodeDecodeError: "),
])
def test_a_damaged_results_file_is_one_error_naming_it(finished, tmp_path, damage, fragment):
    """A selection outside the genes (read, it indexed past the names deep in the report) or a
    value h5py cannot decode: one DataError naming the file."""
    job, _ = finished
    path = tmp_path / "damaged.h5"
    path.write_bytes(job.output.read_bytes())
    with h5py.File(path, "r+") as f:
        if damage == "selected_genes":
            fold = f["runs"]["run-000"]["fold-01"]
            genes = fold["selected_genes"][()]
            genes[0] = 99
            fold["selected_genes"][...] = genes
        else:
            f.attrs["name"] = np.bytes_(b"\xff\xfe")
    with pytest.raises(DataError, match=re.escape(f"damaged.h5: {fragment}")):
        read_results(path)


STORED_FIGURES = {
    "balanced-accuracy-above-one": ("test_balanced_accuracy", 1.7,
                                    r"test_balanced_accuracy = 1.7 is no accuracy in \[0, 1\]"),
    "accuracy-not-its-counts": ("test_accuracy", 0.125, r"test_accuracy = 0.125, but its "
                                                        r"counts give"),
    "baseline-balanced-not-its-counts": ("baseline_balanced_accuracy", 0.0,
                                         "baseline_balanced_accuracy = 0.0, but its counts "
                                         "give"),
    "size-not-its-genes": ("subset_size", 0, "subset_size = 0, but the task holds"),
    "correct-above-total": ("test_correct", 99, "test_correct = 99 of test_total"),
}
"""Figures of the ``/tasks`` table that the task's counts contradict: the column, the value
written over its first row and what the error says."""


def _damaged_copy(job, folder, column=None, value=None):
    path = folder / "damaged.h5"
    path.write_bytes(job.output.read_bytes())
    if column is not None:
        with h5py.File(path, "r+") as f:
            values = f["tasks"][column][()]
            values[0] = value
            f["tasks"][column][...] = values
    return path


@pytest.mark.parametrize("case", sorted(STORED_FIGURES))
def test_a_stored_figure_its_counts_contradict_is_a_damaged_results_file(finished, tmp_path,
                                                                         case):
    column, value, message = STORED_FIGURES[case]
    path = _damaged_copy(finished[0], tmp_path, column, value)
    with pytest.raises(DataError, match="damaged.h5: a damaged results file: run 0 fold 0: "
                                        + message):
        read_results(path)


def test_report_refuses_a_balanced_accuracy_above_one_in_one_line(finished, tmp_path, capsys):
    """It was reported as 77.99 ± 47.12 %."""
    from cli_checks import assert_one_error, folder_state, run_cli

    path = _damaged_copy(finished[0], tmp_path, "test_balanced_accuracy", 1.7)
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, "report", path, "--csv", tmp_path / "csv")
    assert_one_error(status, err, f"{path}: a damaged results file: run 0 fold 0: "
                     "test_balanced_accuracy = 1.7 is no accuracy in [0, 1]")
    assert out == "" and folder_state(tmp_path) == before


def test_a_balanced_accuracy_not_counted_stays_legal(finished, tmp_path):
    """A file written before counts per class were kept: its balanced accuracies are NaN."""
    path = _damaged_copy(finished[0], tmp_path)
    with h5py.File(path, "r+") as f:
        for column in ("test", "baseline", "pca"):
            f["tasks"][f"{column}_balanced_accuracy"][...] = np.nan
        for run in f["runs"].values():
            for fold in run.values():
                for name in [name for name in fold if "_class_" in name]:
                    del fold[name]
    assert np.isnan(read_results(path).table.test_balanced_accuracy).all()


@pytest.mark.parametrize("estimate, inner, frequency, fragment", [
    ({"row": "M", "mean": 1.4, "n": 1}, (1, 1), 0.5, "the final signature's estimate mean = 1.4 "
                                                     "is no accuracy in [0, 1]"),
    ({"row": "M", "mean": 0.9, "n": 1}, (5, 4), 0.5, "the final signature's inner_correct = 5 "
                                                     "of inner_total = 4 is no accuracy"),
    ({"row": "M", "mean": 0.9, "n": 1}, (1, 1), 2.0, "the final signature's frequency holds "
                                                     "values outside [0, 1]"),
], ids=["estimate-above-one", "inner-above-one", "frequency-above-one"])
def test_a_final_signature_with_an_impossible_figure_is_a_damaged_results_file(
        finished, tmp_path, estimate, inner, frequency, fragment):
    from hpcswarm.signatures.final import FinalSignature

    path = _damaged_copy(finished[0], tmp_path)
    genes = np.array([0, 3])
    with h5py.File(path, "r+") as f:
        FinalSignature(genes, genes, "none", (0,), *inner, np.full(2, frequency), estimate,
                       {}, None).to_hdf5(f)
    with pytest.raises(DataError, match=re.escape(f"damaged.h5: a damaged results file: "
                                                  f"{fragment}")):
        read_results(path)
