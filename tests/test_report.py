"""The report command: methods table with rank-sum tests, top genes, convergence, formats."""

import csv
import json

import numpy as np
import pytest

from hpcswarm import cli
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.jobfile import read_job
from hpcswarm.job import run_job
from hpcswarm.report import build_report, significance
from hpcswarm.results import read_results

JOB = """# a test job
data = "sklearn:wine"
algorithm = "{algorithm}"
name = "{name}"
protocol = "{protocol}"
folds = 3
runs = 3
seed = 9
[params]
n_particles = 6
n_iterations = 3
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    paths = []
    for algorithm, name, protocol in (("cbpso", "CBPSO", "unbiased"), ("bpso", "BPSO", "unbiased"),
                                      ("cbpso", "CBPSO-biased", "biased")):
        job_file = folder / f"{name}.toml"
        job_file.write_text(JOB.format(algorithm=algorithm, name=name, protocol=protocol))
        job = read_job(job_file, [f"output={folder / (name + '.h5')}"])
        run_job(job)
        paths.append(job.output)
    return paths


def test_significance_symbols():
    low, high = np.linspace(0.80, 0.85, 10), np.linspace(0.90, 0.95, 10)
    assert significance(high, low)[0] == "+"
    assert significance(low, high)[0] == "-"
    assert significance(low, low + 1e-9)[0] == "="
    assert significance([1.0, 1.0], [1.0, 1.0]) == ("=", 1.0)
    assert significance([0.9], [0.8, 0.7]) == ("=", 1.0)


def test_methods_table_with_all_genes_and_reference(files):
    report = build_report(files[:2], reference="BPSO", top=5)
    rows = {row["method"]: row for row in report["rows"]}
    assert list(rows) == ["All", "PCA-kNN", "CBPSO", "BPSO"] and report["reference"] == "BPSO"
    assert rows["BPSO"]["test"] == "ref" and rows["CBPSO"]["test"] in "+-="
    assert rows["All"]["ave_size"] == 13 and rows["CBPSO"]["runs"] == 3
    assert 1 <= rows["PCA-kNN"]["ave_size"] < 13 and rows["PCA-kNN"]["runs"] == 3
    assert 0 <= rows["CBPSO"]["best"] <= 100 and rows["CBPSO"]["mean"] <= rows["CBPSO"]["best"]
    assert [len(entry["top"]) for entry in report["genes"]] == [5, 5]
    assert report["genes"][0]["tasks"] == 9
    assert len(report["convergence"][0]["best_fitness"]) == 3


def test_biased_rows_are_marked(files, capsys):
    assert cli.main(["report", str(files[0]), str(files[2])]) == 0
    out = capsys.readouterr().out
    assert "CBPSO-biased*" in out and "* optimistically biased" in out
    assert "Most frequently selected genes: CBPSO (9 selections" in out
    assert "Mean gbest fitness (accuracy) per round: CBPSO" in out


def test_text_csv_markdown_json_and_plots(files, tmp_path, capsys):
    status = cli.main(["report", *map(str, files[:2]), "--csv", str(tmp_path), "--markdown",
                       str(tmp_path / "t.md"), "--json", str(tmp_path / "t.json"), "--plots",
                       str(tmp_path), "--top", "3"])
    assert status == 0
    out = capsys.readouterr().out
    assert "Ave-Size" in out and "Mean +/- Std" in out and "vs CBPSO" in out
    with open(tmp_path / "methods.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["method"] for r in rows] == ["All", "PCA-kNN", "CBPSO", "BPSO"]
    with open(tmp_path / "genes.csv") as handle:
        assert len(list(csv.DictReader(handle))) == 6
    assert (tmp_path / "convergence.csv").read_text().startswith("method,round,")
    assert "| Dataset | Method |" in (tmp_path / "t.md").read_text()
    document = json.loads((tmp_path / "t.json").read_text())
    assert document["encoding-type"] == "hpcswarm-report" and len(document["rows"]) == 4
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "note: matplotlib is not installed" in out
    else:
        assert (tmp_path / "convergence.png").is_file()


def test_report_errors(files, tmp_path):
    with pytest.raises(ParameterError, match="--reference 'PSO' names no method"):
        build_report(files, reference="PSO")
    with pytest.raises(DataError, match="no such results file"):
        build_report([tmp_path / "none.h5"])
    with pytest.raises(DataError, match="--csv .*no such folder"):
        cli.main(["report", str(files[0]), "--csv", str(tmp_path / "missing")])


def test_plots_through_a_stand_in_matplotlib(files, tmp_path, monkeypatch):
    """The plotting path, with a stand-in for matplotlib (an optional extra)."""
    import sys
    import types

    from hpcswarm.report import write_plots

    calls = []

    class Axes:
        def __getattr__(self, name):
            return lambda *args, **kwargs: calls.append(name)

    class Figure:
        def tight_layout(self):
            pass

        def savefig(self, path, **kwargs):
            assert kwargs.get("format") == "png"
            with open(path, "wb") as handle:
                handle.write(b"\x89PNG")

    pyplot = types.SimpleNamespace(subplots=lambda **kwargs: (Figure(), Axes()),
                                   close=lambda fig: None)
    matplotlib = types.SimpleNamespace(use=lambda backend: None, pyplot=pyplot)
    monkeypatch.setitem(sys.modules, "matplotlib", matplotlib)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot)
    written = write_plots(build_report(files[:2]), tmp_path)
    assert [p.name for p in written] == [
        "convergence.png", "genes-1-sklearn-wine-CBPSO.png", "stability-1-sklearn-wine-CBPSO.png",
        "genes-2-sklearn-wine-BPSO.png", "stability-2-sklearn-wine-BPSO.png",
        "front-1-sklearn-wine-CBPSO.png", "front-2-sklearn-wine-BPSO.png"]
    assert all(p.read_bytes() == b"\x89PNG" for p in written)
    assert "plot" in calls and "barh" in calls and "imshow" in calls and "scatter" in calls
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)


def test_stability_indices_by_hand():
    from hpcswarm.stability import ranked_genes, stability

    assert stability([[0, 1, 2], [0, 1, 2]], 10) == {"kuncheva": 1.0, "jaccard": 1.0, "pairs": 1}
    pair = stability([[0, 1, 2], [0, 1, 3]], 10)   # Kuncheva 2007 Eq. 4: (r n - k^2)/(k(n-k))
    assert pair["kuncheva"] == pytest.approx((2 * 10 - 9) / (3 * 7)) and pair["jaccard"] == 0.5
    nested = stability([[0, 1], [0, 1, 2, 3]], 10)  # one inside the other: as close as can be
    assert nested["kuncheva"] == pytest.approx(1.0) and nested["jaccard"] == 0.5
    assert stability([[0], []], 10) == {"kuncheva": None, "jaccard": 0.0, "pairs": 0}
    ranked = ranked_genes([[0, 1], [0], [1], [1]], [0, 0, 1, 1], ["a", "b", "c", "d"])
    assert [(g["name"], g["count"], g["mean_rank"]) for g in ranked] == [("b", 3, 1.5),
                                                                          ("a", 2, 2.0)]


@pytest.fixture(scope="module")
def pruned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pruned")
    job_file = folder / "job.toml"
    job_file.write_text(JOB.format(algorithm="pso-lsrg", name="LSRG", protocol="unbiased")
                        .replace("[params]", 'refine = "prune"\n[params]\nls_tries = 5'))
    job = read_job(job_file, [f"output={folder / 'lsrg.h5'}"])
    run_job(job)
    return job.output


def test_pruned_rows_fronts_stability_and_gene_list(pruned, tmp_path, capsys):
    report = build_report([pruned])
    rows = {row["method"]: row for row in report["rows"]}
    assert list(rows) == ["All", "PCA-kNN", "LSRG", "LSRG+prune"]
    assert rows["LSRG+prune"]["ave_size"] <= rows["LSRG"]["ave_size"]
    for name in ("LSRG", "LSRG+prune"):
        assert -1 <= rows[name]["kuncheva"] <= 1 and 0 <= rows[name]["jaccard"] <= 1
    assert rows["All"]["kuncheva"] is None
    (front,) = report["fronts"]
    assert front["method"] == "LSRG" and len(front["tasks"]) == 9
    for task in front["tasks"]:
        sizes = [p["size"] for p in task["points"]]
        inner = [p["inner"] for p in task["points"]]
        assert sizes == sorted(set(sizes)) and inner == sorted(set(inner))
        assert all(0 <= p["test"] <= 1 for p in task["points"])
    budgets = front["budgets"]
    assert budgets and [b["budget"] for b in budgets] == sorted(b["budget"] for b in budgets)
    assert all(b["size"] <= b["budget"] for b in budgets)
    genes = tmp_path / "genes.tsv"
    assert cli.main(["report", str(pruned), "--genes", str(genes), "--csv", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Signatures by size: sklearn:wine: LSRG" in out and "Kuncheva" in out
    lines = genes.read_text().splitlines()
    assert lines[0].split("\t")[:3] == ["gene", "frequency", "mean_rank"]
    methods = {line.split("\t")[-1] for line in lines[1:]}
    assert methods == {"LSRG", "LSRG+prune"}
    with open(tmp_path / "methods.csv") as handle:
        assert {"kuncheva", "jaccard"} <= set(csv.DictReader(handle).fieldnames)
    assert (tmp_path / "signatures.csv").read_text().startswith("dataset,method,budget,")


def test_margin_pruned_row_is_named_by_its_rule_beside_the_search(tmp_path):
    job_file = tmp_path / "job.toml"
    job_file.write_text(JOB.format(algorithm="pso-lsrg", name="LSRG", protocol="unbiased")
                        .replace("runs = 3", "runs = 1")
                        .replace("[params]", 'refine = "prune-margin"\n[params]\nls_tries = 5'))
    job = read_job(job_file, [f"output={tmp_path / 'lsrg.h5'}"])
    run_job(job)
    method = read_results(job.output)
    assert method.attrs["refine"] == "prune-margin"
    table = method.table
    assert np.all(table["refined_train_correct"] >= table["train_correct"])
    for selected, refined in zip(method.genes, method.refined_genes):
        assert set(refined.tolist()) <= set(selected.tolist())
    rows = [row["method"] for row in build_report([job.output])["rows"]]
    assert rows == ["All", "PCA-kNN", "LSRG", "LSRG+prune-margin"]
