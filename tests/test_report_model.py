"""The report model (:mod:`hpcswarm.results.report.model`): a job's results file and a single
search's JSON read into the same typed model, the writers reading its fields, and its JSON
form read back."""

import json
from dataclasses import fields, make_dataclass, replace

import pytest

from hpcswarm import cli
from hpcswarm.results.files import MethodResults, read_results
from hpcswarm.results.report import (METHOD_COLUMNS, SINGLE_SEARCH, BudgetRow, ConvergenceEntry,
                             FrontEntry, FrontPointRow, GeneCount, GeneEntry, MethodRow,
                             RankedGene, Report, TaskFront, as_report, build_report, csv_texts,
                             json_document, markdown_text, text_lines)
from hpcswarm.results.report.model import Fields
from small_jobs import run_small_job

JOB = """data = "sklearn:wine"
algorithm = "cbpso"
name = "CBPSO"
protocol = "unbiased"
folds = 3
runs = 1
seed = 3
refine = "prune"
[params]
n_particles = 4
n_iterations = 2
"""


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """A job's results file and a single search's JSON document, both on wine."""
    folder = tmp_path_factory.mktemp("model")
    job, _ = run_small_job(folder, JOB, "job.h5", quiet=True)
    search = folder / "search.json"
    assert cli.main(["run", "--data", "sklearn:wine", "--algorithm", "cbpso", "--param",
                     "n_particles=4", "--param", "n_iterations=2", "--refine", "prune",
                     "--output", str(search)]) == 0
    return job.output, search


def _types(report):
    """The class of every part of a report, by where it sits."""
    return {"report": type(report), "rows": {type(r) for r in report.rows},
            "genes": {type(e) for e in report.genes},
            "top": {type(g) for e in report.genes for g in e.top},
            "ranked": {type(g) for e in report.genes for g in e.ranked},
            "convergence": {type(e) for e in report.convergence},
            "fronts": {type(e) for e in report.fronts},
            "budgets": {type(b) for e in report.fronts for b in e.budgets},
            "tasks": {type(t) for e in report.fronts for t in e.tasks},
            "points": {type(p) for e in report.fronts for t in e.tasks
                       for p in [*t.points, t.refined]}}


def test_a_search_document_and_a_job_file_give_the_same_model(sources):
    job_file, search = sources
    job, single = read_results(job_file), read_results(search)
    assert type(job) is type(single) is MethodResults
    assert single.single_search and not job.single_search
    assert "protocol" not in single.attrs and job.attrs["protocol"] == "unbiased"
    expected = {"report": Report, "rows": {MethodRow}, "genes": {GeneEntry},
                "top": {GeneCount}, "ranked": {RankedGene}, "convergence": {ConvergenceEntry},
                "fronts": {FrontEntry}, "budgets": {BudgetRow}, "tasks": {TaskFront},
                "points": {FrontPointRow}}
    from_job, from_search = build_report([job_file]), build_report([search])
    assert _types(from_job) == _types(from_search) == expected
    assert {r.protocol for r in from_search.rows} == {SINGLE_SEARCH}
    assert {r.protocol for r in from_job.rows} == {"unbiased"}


def test_the_json_form_reads_back_to_the_same_tables(sources):
    report = build_report(list(sources))
    document = json.loads(json.dumps(json_document(report)))
    again = as_report(document)
    assert _types(again) == _types(report) | {"ranked": set()}  # the JSON leaves them out
    assert text_lines(again) == text_lines(report)
    assert markdown_text(again) == markdown_text(report)
    assert csv_texts(again) == csv_texts(report)
    assert json_document(again) == document


def test_the_writers_read_fields_so_a_renamed_field_fails_them(sources):
    report = build_report([sources[0]])
    renamed = make_dataclass("RenamedRow", [("average" if f.name == "mean" else f.name, f.type)
                                            for f in fields(MethodRow)],
                             bases=(Fields,), eq=False)
    rows = [renamed(*(getattr(row, f.name) for f in fields(MethodRow))) for row in report.rows]
    changed = replace(report, rows=rows)
    for writer in (text_lines, markdown_text, csv_texts):
        with pytest.raises(AttributeError, match="mean"):
            writer(changed)
    # methods.csv's columns are the row's fields: a rename would change the file's layout
    assert list(METHOD_COLUMNS) == [
        "dataset", "method", "protocol", "biased", "runs", "ave_size", "best", "mean", "std",
        "balanced", "balanced_std", "test", "p_value", "pairs", "min_p", "versus", "kuncheva",
        "jaccard", "file"]


def test_every_part_reads_as_the_mapping_of_its_fields(sources):
    report = build_report([sources[0]])
    row = report.rows[0]
    assert row["mean"] == row.mean and list(row) == [f.name for f in fields(MethodRow)]
    with pytest.raises(KeyError):
        row["average"]
    assert report["fronts"][0]["budgets"][0] == dict(report.fronts[0].budgets[0].items())
    assert BudgetRow(3, 0) == {"budget": 3, "tasks": 0, "size": None, "inner": None,
                               "test": None}


def test_the_task_table_is_typed_and_holds_the_file_columns(sources):
    from hpcswarm.results.files import REFINED_COLUMNS, TASK_COLUMNS, TaskTable

    assert [f.name for f in fields(TaskTable)] == list(TASK_COLUMNS + REFINED_COLUMNS)
    job, single = read_results(sources[0]), read_results(sources[1])
    assert type(job.table) is type(single.table) is TaskTable
    assert set(job.table) == set(TASK_COLUMNS + REFINED_COLUMNS)
    assert single.table.baseline_correct is None and "baseline_correct" not in single.table
    assert single.table.refined_size.tolist() == [single.refined_genes[0].size]
    assert job.table.run is job.table["run"] and job.table.fold.tolist() == [0, 1, 2]
    with pytest.raises(KeyError):
        single.table["pca_correct"]


def test_every_selection_row_gives_its_test_balanced_accuracy_beside_the_plain_one(sources,
                                                                                 tmp_path):
    """The methods table's ``balanced`` (mean +/- std over tasks of the recorded test balanced
    accuracy) for the search and its refined subsets; blank for the baselines, and for a
    results file written before the column existed (read, not refused)."""
    import h5py
    import numpy as np

    job_file = sources[0]
    results = read_results(job_file)
    report = build_report([job_file])
    rows = {row.method: row for row in report.rows}
    for label, column in (("CBPSO", "test_balanced_accuracy"),
                          ("CBPSO+prune", "refined_test_balanced_accuracy")):
        values = results.table[column]
        assert rows[label].balanced == pytest.approx(100 * values.mean())
        assert rows[label].balanced_std == pytest.approx(100 * values.std(ddof=1))
    assert rows["All"].balanced is None and rows["PCA-kNN"].balanced is None
    assert any(f"{rows['CBPSO'].balanced:.2f} +/- " in line for line in text_lines(report))
    assert json_document(report)["rows"][2]["balanced"] == rows["CBPSO"].balanced
    old = tmp_path / "old.h5"
    old.write_bytes(job_file.read_bytes())
    with h5py.File(old, "r+") as f:
        del f["tasks/test_balanced_accuracy"], f["tasks/refined_test_balanced_accuracy"]
        f["tasks"].attrs["encoding-version"] = "0.1.0"
    assert read_results(old).table.test_balanced_accuracy is None
    rows = {row.method: row for row in build_report([old]).rows}
    assert rows["CBPSO"].balanced is None and rows["CBPSO+prune"].balanced is None
    assert np.isclose(rows["CBPSO"].mean, report.rows[2].mean)
