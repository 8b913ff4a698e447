"""The report command: methods table with paired signed-rank tests, top genes, convergence,
formats."""

import csv
import json

import numpy as np
import pytest

from cli_checks import assert_one_error

from hpcswarm import cli
from hpcswarm.__main__ import main
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.results.files import read_results
from hpcswarm.results.report import build_report, significance
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job

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


def _fold_results(path, correct, runs, folds=5, indices=True):
    """A MethodResults of ``runs`` x ``folds`` tasks of 8 held-out samples each, with
    ``correct`` right per task (task t holds out samples 8 f .. 8 f + 7)."""
    from hpcswarm.results.files import MethodResults

    run = np.repeat(np.arange(runs), folds)
    fold = np.tile(np.arange(folds), runs)
    table = {"run": run, "fold": fold, "test_correct": np.asarray(correct),
             "test_total": np.full(run.size, 8)}
    test = [np.arange(8 * f, 8 * f + 8) for f in fold] if indices else None
    return MethodResults(path, {"name": path}, [], [], table, [], [], [], test_indices=test)


def test_paired_test_is_per_fold_and_matched():
    # 2 runs x 5 folds: every fold one sample better -> 10 pairs, p = 2**-10, '+'
    better, worse = _fold_results("a", [7] * 10, 2), _fold_results("b", [6] * 10, 2)
    symbol, test = significance(better, "test", worse, "test")
    assert symbol == "+" and test.nonzero == 10 and test.p_value == pytest.approx(2 ** -10)
    # the rank-sum test of the 2 per-run accuracies could not go below p = 0.121
    assert significance(worse, "test", better, "test")[0] == "-"
    # 3 pairs only: 1/8 at best, '=' and not reachable
    three_a, three_b = _fold_results("a", [7] * 3, 1, 3), _fold_results("b", [6] * 3, 1, 3)
    symbol, test = significance(three_a, "test", three_b, "test")
    assert symbol == "=" and test.min_p == pytest.approx(1 / 8) and not test.reachable(0.05)
    # other held-out samples in every task: nothing is paired
    shifted = _fold_results("c", [6] * 10, 2)
    shifted.test_indices = [t + 1 for t in shifted.test_indices]
    assert significance(better, "test", shifted, "test") == ("", None)
    # without recorded held-out rows, tasks pair only within one file
    assert significance(_fold_results("a", [7] * 10, 2, indices=False), "test",
                        _fold_results("b", [6] * 10, 2, indices=False), "test") == ("", None)


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
    assert "Most frequently selected genes (CBPSO on " in out and "  9 selections; " in out
    assert "Convergence (CBPSO on " in out and "  Mean gbest fitness (accuracy) per round" in out


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
    (tmp_path / "a-file").write_text("")
    with pytest.raises(DataError, match="--csv .*a-file exists and is not a folder"):
        cli.main(["report", str(files[0]), "--csv", str(tmp_path / "a-file" / "csv")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_plots_of_every_method(files, tmp_path):
    pytest.importorskip("matplotlib")
    from hpcswarm.results.report import write_plots

    written = write_plots(build_report(files[:2]), tmp_path)
    assert [p.name for p in written] == [
        "convergence.png", "genes-1-sklearn-wine-CBPSO.png", "stability-1-sklearn-wine-CBPSO.png",
        "genes-2-sklearn-wine-BPSO.png", "stability-2-sklearn-wine-BPSO.png",
        "front-1-sklearn-wine-CBPSO.png", "front-2-sklearn-wine-BPSO.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in written)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)


def test_stability_indices_by_hand():
    from hpcswarm.signatures.stability import ranked_genes, stability

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
    assert "Signatures by size (LSRG on sklearn:wine)" in out and "Kuncheva" in out
    assert not (tmp_path / "genes.LSRG.tsv").exists()  # the first method: the file asked for
    for method, name in (("LSRG", "genes.tsv"), ("LSRG+prune", "genes.LSRG+prune.tsv")):
        lines = (tmp_path / name).read_text().splitlines()
        assert lines[0].split("\t") == ["gene", "feature", "column", "frequency", "mean_rank",
                                        "selections"]
        assert f"ranked genes of {method}" in out
    report = build_report([pruned])
    selected = {g["name"] for g in report["genes"][1]["ranked"]}
    pruned_list = (tmp_path / "genes.LSRG+prune.tsv").read_text().splitlines()[1:]
    assert {line.split("\t")[0] for line in pruned_list} == selected
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


# ------------------------------------------------------------------ outputs round-trip
def test_report_creates_the_folders_it_is_told_to_use(files, tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # no plots: quick
    csv_dir, plots = tmp_path / "out" / "csv", tmp_path / "out" / "plots"
    assert cli.main(["report", str(files[0]), "--csv", str(csv_dir), "--plots", str(plots)]) == 0
    assert (csv_dir / "methods.csv").is_file() and plots.is_dir()
    # a failing check leaves no folder behind
    with pytest.raises(DataError, match="already exists"):
        cli.main(["report", str(files[0]), "--csv", str(csv_dir), "--json",
                  str(tmp_path / "new" / "x.json")])
    assert not (tmp_path / "new").exists()
    with pytest.raises(DataError, match="already exists"):
        cli.main(["report", str(files[0]), "--csv", str(tmp_path / "fresh"), "--markdown",
                  str(csv_dir / "methods.csv")])
    assert not (tmp_path / "fresh").exists()


def test_a_file_given_twice_is_counted_once(files, tmp_path):
    alias = tmp_path / "alias.h5"
    alias.hardlink_to(files[0])
    dotted = files[0].parent / ".." / files[0].parent.name / files[0].name
    once = build_report(files[:1])
    twice = build_report([files[0], dotted, alias])
    assert [r["method"] for r in twice["rows"]] == [r["method"] for r in once["rows"]]
    assert twice["rows"][-1]["runs"] == once["rows"][-1]["runs"] == 3
    assert sum("counted once" in note for note in twice["notes"]) == 2


def test_gene_list_from_report_is_read_by_evaluate(files, tmp_path, capsys):
    genes = tmp_path / "genes.tsv"
    assert cli.main(["report", str(files[0]), "--genes", str(genes)]) == 0
    named = [line.split("\t")[0] for line in genes.read_text().splitlines()[1:]]
    capsys.readouterr()
    assert cli.main(["evaluate", "sklearn:wine", "--genes", str(genes)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["genes_used"] == len(set(named)) > 0


def test_summary_and_last_lines_carry_the_refined_row(pruned):
    from hpcswarm.run.job import summary_lines

    job = read_job(pruned.parent / "job.toml", [f"output={pruned}"])
    summary = json.loads(job.summary_path.read_text())
    with pytest.raises(DataError, match=f"the JSON summary of a job; report reads its results "
                                        f"file {pruned}"):
        build_report([job.summary_path])
    (refined,) = summary["refined"]
    table = read_results(pruned).table
    assert refined["name"] == "LSRG+prune" and refined["refine"] == "prune"
    assert refined["subset_size"]["mean"] == pytest.approx(table["refined_size"].mean())
    assert refined["subset_size"]["mean"] <= summary["subset_size"]["mean"]
    assert 0 <= refined["accuracy"]["mean"] <= 1 and len(refined["accuracy_per_run"]) == 3
    lines = summary_lines(job, summary)
    assert any(line.startswith("LSRG+prune: test accuracy over 3 run(s)") for line in lines)


def test_report_reads_a_single_search_json(tmp_path, capsys):
    output = tmp_path / "single.json"
    assert cli.main(["run", "--data", "sklearn:wine", "--algorithm", "cbpso", "--param",
                     "n_particles=4", "--param", "n_iterations=2", "--refine", "prune",
                     "--output", str(output)]) == 0
    document = json.loads(output.read_text())
    report = build_report([output])
    rows = {row["method"]: row for row in report["rows"]}
    assert list(rows) == ["cbpso", "cbpso+prune"] and rows["cbpso"]["biased"]
    assert rows["cbpso"]["ave_size"] == document["n_selected"]
    assert rows["cbpso"]["mean"] == pytest.approx(100 * document["extra"]["score"]["accuracy"])
    assert rows["cbpso+prune"]["ave_size"] == len(document["refined"]["genes"])
    top = {g["name"] for g in report["genes"][0]["top"]}
    assert top <= set(document["selected_gene_names"])
    assert report["fronts"][0]["budgets"]
    assert len(report["convergence"][0]["best_fitness"]) == len(document["history"])
    assert cli.main(["report", str(output)]) == 0
    assert "* optimistically biased" in capsys.readouterr().out
    (tmp_path / "other.json").write_text('{"encoding-type": "hpcswarm-report"}')
    with pytest.raises(DataError, match="other.json: not an hpcswarm results file nor a "
                                        "search's JSON"):
        build_report([tmp_path / "other.json"])


@pytest.mark.parametrize("key, value, fragment", [
    ("algorithm", None, "'algorithm' must be a method name, got None"),
    ("seed", "0", "'seed' must be an integer, got '0'"),
    ("params", [], "'params' must be a table of parameters"),
    ("n_genes_total", 0, "'n_genes_total' must be a gene count in [1, 16777216], got 0"),
    ("n_genes_total", 10**21, "'n_genes_total' must be a gene count in [1, 16777216], got 1"),
    ("refined", {"genes": [13]}, "'refined.genes' must be a list of gene columns in [0, 13)"),
    ("selected_genes", [-1], "'selected_genes' must be a list of gene columns in [0, 13)"),
    ("selected_genes", [13], "'selected_genes' must be a list of gene columns in [0, 13)"),
    ("selected_genes", [True], "'selected_genes' must be a list of gene columns"),
    ("front", [{"genes": [99]}], "'front[0].genes' must be a list of gene columns"),
    ("history", [], "'history' must be a list of rounds"),
    ("fitness", "high", "'fitness' must be a number"),
])
def test_a_damaged_search_document_names_the_field(tmp_path, capsys, key, value, fragment):
    """A search's JSON edited by hand or cut short: one line naming the field, no traceback
    from deep inside the report."""
    output = tmp_path / "single.json"
    assert cli.main(["run", "--data", "sklearn:wine", "--algorithm", "sfs", "--output",
                     str(output)]) == 0
    document = json.loads(output.read_text())
    document[key] = value
    output.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["report", str(output)]) == 2
    assert_one_error(2, capsys.readouterr().err, "single.json: a damaged search document: "
                     + fragment)


def _score(**changes):
    return lambda document: document["extra"]["score"].update(changes)


def _first_point(**changes):
    return lambda document: document["front"][0].update(changes)


@pytest.mark.parametrize("change, fragment", [
    (_score(balanced_accuracy=1.7),
     "'extra.score.balanced_accuracy' must be an accuracy in [0, 1] (or null), got 1.7"),
    (_score(accuracy=-0.1), "'extra.score.accuracy' must be an accuracy in [0, 1]"),
    (_score(correct=200), "'extra.score.correct' must be a count of correct predictions "
                          "between 0 and a total of at least one sample"),
    (_first_point(total=0), "'front[0].correct' must be a count of correct predictions"),
    (lambda document: document.update(fitness=1.5),
     "'fitness' must be a fitness in [-2.0, 1.0], got 1.5"),
], ids=["balanced-above-one", "accuracy-below-zero", "correct-above-total", "front-no-sample",
        "fitness-above-one"])
def test_a_search_document_with_an_impossible_figure_names_it(tmp_path, capsys, change,
                                                                fragment):
    """A stored figure of a search's JSON is checked on read, as a results file's."""
    output = tmp_path / "single.json"
    assert cli.main(["run", "--data", "sklearn:wine", "--algorithm", "sfs", "--output",
                     str(output)]) == 0
    document = json.loads(output.read_text())
    change(document)
    output.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["report", str(output)]) == 2
    assert_one_error(2, capsys.readouterr().err, "single.json: a damaged search document: "
                     + fragment)


def test_a_search_document_without_its_optional_fields_is_read(tmp_path):
    output = tmp_path / "single.json"
    assert cli.main(["run", "--data", "sklearn:wine", "--algorithm", "sfs", "--output",
                     str(output)]) == 0
    document = json.loads(output.read_text())
    for key in ("refined", "data", "selected_gene_names"):
        document.pop(key)
    output.write_text(json.dumps(document))
    assert main(["report", str(output)]) == 0


def _method(fronts, objective="accuracy", histories=()):
    from hpcswarm.results.files import MethodResults

    runs = np.zeros(len(fronts), dtype=np.int64)
    return MethodResults("m.h5", {"name": "M", "params": {"objective": objective}},
                         [str(i) for i in range(20)], [], {"run": runs}, [], list(histories),
                         ["iteration", "best_fitness", "best_size"], fronts)


def test_signature_sizes_come_from_the_fronts_or_are_asked_for():
    from hpcswarm.results.report import default_budgets, signature_budgets
    from hpcswarm.store.records import FrontPoint

    def point(size, correct):
        return FrontPoint(np.arange(size), correct / 10, correct, 10, correct, 10)

    fronts = [[point(3, 7), point(5, 9)], [point(4, 8), point(6, 9)]]
    assert default_budgets(fronts) == [3, 4, 5, 10]
    rows = signature_budgets(_method(fronts), [20, 1, 4])
    assert [(r["budget"], r["tasks"]) for r in rows] == [(1, 0), (4, 2), (20, 2)]
    assert rows[0]["size"] is rows[0]["inner"] is rows[0]["test"] is None
    assert rows[1]["size"] == 3.5 and rows[1]["inner"] == pytest.approx(75.0)
    assert rows[1]["test"] == pytest.approx(75.0) and rows[2]["size"] == 5.5
    assert signature_budgets(_method(fronts))[0] == {"budget": 3, "tasks": 1, "size": 3.0,
                                                     "inner": 70.0, "test": 70.0}


def test_sizes_option_gives_a_row_for_every_size(pruned, capsys):
    assert cli.main(["report", str(pruned), "--sizes", "20,1,2"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("Signatures by size ("):].splitlines()[4:7]
    assert [line.split()[0] for line in table] == ["1", "2", "20"]
    with pytest.raises(ParameterError, match="--sizes"):
        cli.main(["report", str(pruned), "--sizes", "0,5"])


def test_every_fitness_is_shown_as_an_accuracy():
    from hpcswarm.results.report import accuracy_curve, fitness_accuracy, text_lines

    assert fitness_accuracy([-0.0361], [5], "error")[0] == pytest.approx(0.9639)
    assert fitness_accuracy([0.5], [5], "accuracy")[0] == 0.5
    combined = 0.9 * 0.8 + 0.1 * (1 - 5 / 20)
    assert fitness_accuracy([combined], [5], "combined", 0.9, 20)[0] == pytest.approx(0.8)
    assert fitness_accuracy([combined], [5], "combined") is None
    assert np.isnan(fitness_accuracy([-2.0], [0], "error")[0])  # the empty subset
    history = np.array([[0, -0.1, 4], [1, -0.0361, 3]])
    method = _method([], "error", [history, history[:1]])
    assert accuracy_curve(method) == pytest.approx([0.9, (0.9639 + 0.9) / 2])
    report = {"reference": "M", "alpha": 0.05, "rows": [], "notes": [], "genes": [],
              "convergence": [{"dataset": "toy", "method": "CSO", "objective": "error",
                               "best_fitness": [-0.1, -0.0361], "best_accuracy": [0.9, 0.9639]}]}
    text = "\n".join(text_lines(report))
    assert "Convergence (CSO on toy)" in text
    assert "Mean gbest inner accuracy (from its error fitness) per round" in text
    assert "0.9639" in text and "-0.0361" not in text


def test_rows_carry_the_paired_test_and_say_when_too_few(files, tmp_path):
    report = build_report(files[:2], reference="BPSO")
    rows = {row["method"]: row for row in report["rows"]}
    tested = rows["CBPSO"]
    assert tested["versus"] == "BPSO" and 0 <= tested["pairs"] <= 9
    assert tested["min_p"] == pytest.approx(0.5 ** tested["pairs"])
    assert rows["All"]["versus"] == "BPSO" and rows["BPSO"]["pairs"] is None
    # one run of three folds with a refinement: the refined row is paired with its search
    # row on at most 3 tasks, which cannot reach alpha = 0.05
    job_file = tmp_path / "small.toml"
    job_file.write_text(JOB.replace("runs = 3", "runs = 1").replace(
        "[params]", 'refine = "prune"\n[params]').format(algorithm="bpso", name="B",
                                                         protocol="unbiased"))
    job = read_job(job_file, [f"output={tmp_path / 'small.h5'}"])
    run_job(job)
    report = build_report([job.output])
    refined = next(r for r in report["rows"] if r["method"] == "B+prune")
    assert refined["versus"] == "B" and refined["test"] == "="
    assert refined["min_p"] >= 1 / 8
    notes = " ".join(report["notes"])
    assert "B+prune vs B: one-sided Wilcoxon signed-rank" in notes
    assert "too few runs and folds to reach alpha = 0.05" in notes


def test_results_store_gene_similarity_and_the_report_shows_sechidis(files, capsys):
    from hpcswarm.data import load_dataset
    from hpcswarm.signatures.stability import correlated_pairs, sechidis

    method = read_results(files[0])
    stored = method.similarity
    expected = correlated_pairs(load_dataset("sklearn:wine").X, np.arange(13))
    assert stored.genes.tolist() == list(range(13)) and stored.threshold == 0.9
    for name in ("first", "second", "weight"):
        assert np.array_equal(getattr(stored, name), getattr(expected, name))
    report = build_report(files[:1])
    detail = report["genes"][0]["stability_detail"]
    assert detail["sechidis"] == pytest.approx(sechidis(method.genes, 13, stored))
    summary = json.loads(files[0].with_suffix(".json").read_text())
    assert summary["stability"]["sechidis"] == pytest.approx(detail["sechidis"])
    assert cli.main(["report", str(files[0])]) == 0
    assert "Sechidis" in capsys.readouterr().out


def test_pooled_parts_keep_a_similarity_only_when_every_part_has_the_same(files):
    from dataclasses import replace

    from hpcswarm.results.report import pool_parts

    whole = read_results(files[0])
    parts = []
    for run in (0, 1):
        keep = whole.table["run"] == run
        parts.append(replace(whole, table={k: v[keep] for k, v in whole.table.items()},
                             genes=[g for g, k in zip(whole.genes, keep) if k],
                             histories=[h for h, k in zip(whole.histories, keep) if k],
                             fronts=[f for f, k in zip(whole.fronts, keep) if k],
                             test_indices=[t for t, k in zip(whole.test_indices, keep) if k]))
    (pooled,) = pool_parts(parts)
    assert pooled.similarity is whole.similarity and len(pooled.test_indices) == 6
    parts[1] = replace(parts[1], similarity=None)
    assert pool_parts(parts)[0].similarity is None


# ------------------------------------------------------------------ rows paired by file
def test_a_rejection_at_p_equal_to_alpha_is_marked():
    """Five folds all lower give p = 2 ** -5: a level-alpha test rejects at p <= alpha, so
    at alpha = 2 ** -5 the row is '-' (and reachable: no note)."""
    lower, higher = _fold_results("a", [6] * 5, 1), _fold_results("b", [7] * 5, 1)
    symbol, test = significance(lower, "test", higher, "test", alpha=2 ** -5)
    assert symbol == "-" and test.p_value == 2 ** -5 and test.reachable(2 ** -5)
    assert significance(higher, "test", lower, "test", alpha=2 ** -5)[0] == "+"
    assert significance(lower, "test", higher, "test", alpha=2 ** -6)[0] == "="


def test_tasks_that_trained_on_other_samples_are_not_paired():
    """The same held-out rows but other training rows is another outer split: not paired
    across files."""
    better, worse = _fold_results("a", [7] * 10, 2), _fold_results("b", [6] * 10, 2)
    better.train_indices = [np.arange(40, 48) for _ in range(10)]
    worse.train_indices = [np.arange(40, 48) for _ in range(10)]
    assert significance(better, "test", worse, "test")[0] == "+"
    worse.train_indices = [np.arange(41, 49) for _ in range(10)]
    assert significance(better, "test", worse, "test") == ("", None)


@pytest.mark.slow
def test_a_refined_row_is_tested_against_the_search_row_of_its_own_file(tmp_path):
    """Two results files of one method name (``B``, refined by ``prune``), run with other
    seeds: each ``B+prune`` row is tested against its own file's ``B`` row, whatever the
    order of the files."""
    from hpcswarm.results.report.methods import refined_view

    outputs = []
    for seed in (9, 10):
        job_file = tmp_path / f"seed{seed}.toml"
        job_file.write_text(JOB.replace("runs = 3", "runs = 1").replace("seed = 9", f"seed = {seed}")
                            .replace("[params]", 'refine = "prune"\n[params]')
                            .format(algorithm="bpso", name="B", protocol="unbiased"))
        job = read_job(job_file, [f"output={tmp_path / f'seed{seed}.h5'}"])
        run_job(job)
        outputs.append(job.output)
    for order in (outputs, outputs[::-1]):
        report = build_report(order)
        refined_rows = [row for row in report["rows"] if row["method"] == "B+prune"]
        assert len(refined_rows) == 2
        for row in refined_rows:
            search = read_results(row["file"])
            symbol, test = significance(refined_view(search), "test", search, "test")
            assert row["versus"] == "B" and row["test"] == symbol
            assert (row["p_value"], row["pairs"]) == (test.p_value, test.nonzero)
        assert not any("B+prune vs B: no (run, fold) task" in note for note in report["notes"])
