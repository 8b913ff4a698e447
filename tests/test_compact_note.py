"""A signature far from compact is said so, with its remedy, by select and run."""

import warnings
from pathlib import Path

import numpy as np
import pytest

import hpcswarm
from hpcswarm.run.job import summary_lines
from hpcswarm.signatures.compact import COMPACT_GENES, compact_note

JOBS = Path(__file__).resolve().parents[1] / "jobs"


def test_the_threshold_and_the_line():
    assert compact_note(COMPACT_GENES, 1.0, "fix") is None
    line = compact_note(456, 1.0, "refine='prune-compact' gives a compact one")
    assert line.startswith("456 genes at inner accuracy 1.00 is far from a compact signature")
    assert line.endswith("refine='prune-compact' gives a compact one") and "\n" not in line


def _planted(n_genes=300):
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    X = rng.normal(size=(40, n_genes)) + 4.0 * y[:, None] * (np.arange(n_genes) < 3)
    return X, y


def test_select_warns_of_a_large_answer_and_not_of_a_compact_one():
    X, y = _planted()
    with pytest.warns(UserWarning, match="far from a compact signature.*prune-compact"):
        large = hpcswarm.select(X, y, algorithm="pso", n_particles=4, n_iterations=2,
                                refine="none")
    assert len(large.gene_names) > COMPACT_GENES
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = hpcswarm.select(X, y, algorithm="pso", n_particles=4, n_iterations=2,
                                refine="prune")
    assert len(small.gene_names) <= COMPACT_GENES


def _summary(size, refined=None, final=None):
    summary = {"accuracy": {"best": 0.9, "mean": 0.9, "std": 0.0}, "runs": 1,
               "subset_size": {"mean": size}, "n_genes": 2308, "tasks": 3, "biased": False,
               "all_genes_accuracy": {"mean": 0.8}, "task_seconds": {"mean": 1.0},
               "provenance": {"total_seconds": 3.0, "n_ranks": 1}}
    if refined is not None:
        summary["refined"] = [{"name": "X+prune", "accuracy": summary["accuracy"],
                               "subset_size": {"mean": refined}}]
    if final is not None:
        summary.update(n_samples=83, final_signature={
            "size": final, "refine": "none", "inner_accuracy": 1.0, "genes": [],
            "estimate": {"row": "X"}})
    return summary


@pytest.mark.parametrize("size, refined, final, noted", [
    (916.3, None, None, True), (916.3, 39.3, None, False), (916.3, 39.3, 456, True),
    (916.3, None, 9, False), (12.0, None, None, False)])
def test_run_notes_the_answer_it_gives(size, refined, final, noted):
    from types import SimpleNamespace

    job = SimpleNamespace(name="X", output="a.h5", summary_path="a.json", signature_path=None)
    notes = [line for line in summary_lines(job, _summary(size, refined, final))
             if "far from a compact signature" in line]
    assert len(notes) == noted
    assert all(line.startswith("note: ") and 'refine = "prune-compact"' in line
               for line in notes)
