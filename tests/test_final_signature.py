"""The final-signature protocol end to end: the outer cross-validation's estimate, then one
search on all samples, recorded in the results file, the JSON summary, the report and a gene
list that ``evaluate --genes`` reads."""

import json

import h5py
import numpy as np
import pytest

from cli_checks import REPO, run_cli
from hpcswarm.data import load_dataset
from hpcswarm.results.files import read_results
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.plan import draw_tasks
from hpcswarm.run.protocols import TaskData, run_task

SETTINGS = ["data=builtin:srbct", "protocol=final-signature", "runs=2", "folds=3",
            "n_particles=4", "n_iterations=2", "ls_tries=2", "refine=relevance-subset-1se"]
# the default refinement of a named method (hpcswarm.signatures.refinements.DEFAULT)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One small final-signature job on SRBCT (two runs of three folds, then the search on
    every sample), and its job."""
    from hpcswarm.run.job import run_job

    folder = tmp_path_factory.mktemp("final")
    job = read_job(REPO / "jobs" / "pso-lsrg-srbct-unbiased.toml",
                   [*SETTINGS, f"output={folder / 'srbct.h5'}"])
    summary = run_job(job, quiet=True)
    return job, summary


@pytest.mark.slow
def test_the_signature_is_the_search_on_every_sample_with_its_refinement(finished):
    job, _ = finished
    dataset = load_dataset("builtin:srbct")
    tasks, _ = draw_tasks(job, dataset.y)
    extra = [task for task in tasks if task.extra]
    assert len(tasks) == 2 * 3 + 1 and len(extra) == 1 and extra[0].train.size == 83
    again = run_task(extra[0], TaskData(np.asarray(dataset.X), dataset.y), job.spec)
    final = read_results(job.output).final
    assert np.array_equal(final.genes, again.refined.genes)
    assert np.array_equal(final.search_genes, again.genes)
    assert (final.inner_correct, final.inner_total) == (again.refined.train_correct, 83)
    assert final.refine == "relevance-subset-1se" and final.spawn_key == (0, 2, 0)


@pytest.mark.slow
def test_the_estimate_and_frequencies_come_from_the_outer_folds_only(finished):
    job, summary = finished
    results = read_results(job.output)
    table = results.table
    assert table["run"].size == 6  # the search on all samples is not a fold of the estimate
    per_run = [table["refined_test_correct"][table["run"] == r].sum()
               / table["refined_test_total"][table["run"] == r].sum() for r in (0, 1)]
    final = results.final
    assert final.estimate["row"] == "PSO-LSRG+relevance-subset-1se"
    assert final.estimate["mean"] == pytest.approx(np.mean(per_run))
    assert final.estimate["n"] == 2
    expected = [np.mean([gene in set(selected.tolist()) for selected in results.refined_genes])
                for gene in final.genes]
    assert np.allclose(final.frequency, expected)
    stable = final.stability
    assert stable["folds"]["pairs"] + stable["runs"]["pairs"] == stable["all"]["pairs"]
    assert summary["final_signature"]["size"] == final.genes.size
    assert summary["accuracy"]["n"] == 2 and summary["tasks"] == 6


@pytest.mark.slow
def test_json_summary_report_and_gene_list_carry_the_signature(finished, tmp_path, capsys):
    job, _ = finished
    final = read_results(job.output).final
    names = load_dataset("builtin:srbct").gene_names
    document = json.loads(job.summary_path.read_text())
    assert [g["name"] for g in document["final_signature"]["genes"]] == \
        [names[g] for g in final.genes]
    assert document["final_signature"]["estimate"]["row"] == "PSO-LSRG+relevance-subset-1se"
    assert document["stability"]["nogueira"]["lower"] <= document["stability"]["nogueira"]["upper"]
    with h5py.File(job.output) as f:
        assert f["final"].attrs["encoding-type"] == "hpcswarm-final-signature"
    status, out, _ = run_cli(capsys, "report", job.output, "--json", tmp_path / "r.json")
    assert status == 0
    assert "Final signature (PSO-LSRG on builtin:srbct)" in out
    assert f"  {final.genes.size} genes; one search on all 83 samples" in out
    assert "estimate of the method (outer cross-validation, row PSO-LSRG+relevance-subset-1se)" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["final_signatures"][0]["size"] == final.genes.size
    listed = [line.split("\t")[0] for line in job.signature_path.read_text().splitlines()
              if line and not line.startswith("#")][1:]
    assert sorted(listed) == sorted(names[g] for g in final.genes)
    status, out, err = run_cli(capsys, "evaluate", "builtin:srbct", "--genes",
                               job.signature_path, "--k", "1", "--cv", "loo")
    assert status == 0, err
    evaluated = json.loads(out)
    assert evaluated["genes_used"] == final.genes.size
    assert evaluated["correct"] == final.inner_correct  # 1-NN LOOCV, the search's own scheme


@pytest.mark.slow
def test_the_gene_list_is_an_output_of_the_job(finished, tmp_path):
    from hpcswarm.errors import DataError
    from hpcswarm.run.job import run_job

    job, _ = finished
    assert job.signature_path.name == "srbct.signature.tsv"
    moved = read_job(REPO / "jobs" / "pso-lsrg-srbct-unbiased.toml",
                     [*SETTINGS, f"output={tmp_path / 'again.h5'}"])
    moved.signature_path.write_text("a file of the user's\n")
    with pytest.raises(DataError, match="again.signature.tsv: already exists"):
        run_job(moved, quiet=True)
    assert moved.signature_path.read_text() == "a file of the user's\n"
    assert not moved.output.exists()
    unbiased = read_job(REPO / "jobs" / "pso-lsrg-srbct-unbiased.toml", ["data=builtin:srbct"])
    assert unbiased.signature_path is None
