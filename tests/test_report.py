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
    assert [p.name for p in written] == ["convergence.png", "genes-1-CBPSO.png",
                                         "genes-2-BPSO.png"]
    assert all(p.read_bytes() == b"\x89PNG" for p in written)
    assert "plot" in calls and "barh" in calls
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)
