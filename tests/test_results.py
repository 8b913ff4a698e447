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
        assert sorted(task) == ["front", "history", "selected_genes", "test_class_correct",
                                "test_class_total", "test_index", "train_index"]
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
