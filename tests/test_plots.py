"""The plots of :mod:`hpcswarm.results.report.plots`: the signature's expression by class
(library call and ``evaluate --plot``) and the refined signatures on the front plot."""

import numpy as np
import pytest

from hpcswarm import cli
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.results.files import read_results
from hpcswarm.results.report.plots import class_groups, expression_plot_files, separation
from hpcswarm.results.report import build_report
from small_jobs import run_small_job

PNG = b"\x89PNG"


def two_class_data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.array([0] * 6 + [1] * 9)
    X = rng.normal(size=(15, 5))
    X[:, 1] += 5.0 * y          # high in class 1
    X[:, 4] += 5.0 * (1 - y)    # high in class 0
    return X, y


def test_class_groups_and_separation():
    codes, names = class_groups(np.array(["T", "B", "T"]))
    assert codes.tolist() == [1, 0, 1] and names == ["B", "T"]
    codes, names = class_groups(np.array([1, 0, 1]), ["normal", "tumour"])
    assert names == ["normal", "tumour"]
    X, y = two_class_data()
    f = separation(X, y)
    assert f.argsort()[-2:].tolist() in ([1, 4], [4, 1]) and f.min() >= 0
    assert separation(np.ones((4, 1)), np.array([0, 0, 1, 1])).tolist() == [0.0]


def test_expression_plots_are_written_as_png(tmp_path):
    pytest.importorskip("matplotlib")
    from hpcswarm.results.report.plots import expression_heatmap, write_expression_plots

    X, y = two_class_data()
    names = [f"G{i}" for i in range(5)]
    written = write_expression_plots(X, y, names, [1, 3, 4], tmp_path, ["normal", "tumour"],
                                     title="toy")
    assert written == expression_plot_files(tmp_path)
    assert all(p.read_bytes()[:4] == PNG for p in written)
    with pytest.raises(DataError, match="already exists"):
        write_expression_plots(X, y, names, [1], tmp_path)
    fig = expression_heatmap(X, y, names, [1, 3, 4], ["normal", "tumour"])
    heat = fig.axes[1]
    rows = [label.get_text() for label in heat.get_yticklabels()]
    assert rows == ["G4", "G1", "G3"] or rows == ["G4", "G3", "G1"]  # grouped by class
    assert "normal (n=6)" in [t.get_text() for t in fig.axes[0].texts]
    with pytest.raises(ValueError, match="no genes"):
        expression_heatmap(X, y, names, [])


def test_evaluate_plot_draws_the_gene_list(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    genes = tmp_path / "genes.txt"
    genes.write_text("proline\nflavanoids\n")
    folder = tmp_path / "new" / "plots"
    assert cli.main(["evaluate", "sklearn:wine", "--genes", str(genes), "--plot",
                     str(folder)]) == 0
    out = capsys.readouterr().out
    assert '"genes_used": 2' in out and "wrote signature-heatmap.png" in out
    assert all(p.read_bytes()[:4] == PNG for p in expression_plot_files(folder))
    with pytest.raises(DataError, match="already exists"):
        cli.main(["evaluate", "sklearn:wine", "--genes", str(genes), "--plot", str(folder)])
    assert cli.main(["evaluate", "sklearn:wine", "--genes", str(genes), "--plot",
                     str(folder), "--overwrite"]) == 0


def test_evaluate_plot_without_matplotlib_fails_before_any_work(tmp_path, monkeypatch):
    import hpcswarm.results.report.plots

    monkeypatch.setattr(hpcswarm.results.report.plots, "plotting_available", lambda: False)
    folder = tmp_path / "plots"
    with pytest.raises(ParameterError, match="--plot needs matplotlib"):
        cli.main(["evaluate", "sklearn:wine", "--all", "--plot", str(folder)])
    assert not folder.exists()


JOB = """data = "sklearn:wine"
algorithm = "pso-lsrg"
name = "LSRG"
protocol = "unbiased"
folds = 3
runs = 1
seed = 4
refine = "prune"
[params]
n_particles = 6
n_iterations = 3
ls_tries = 5
"""


@pytest.fixture(scope="module")
def pruned(tmp_path_factory):
    job, _ = run_small_job(tmp_path_factory.mktemp("front"), JOB, "lsrg.h5")
    return job.output


def test_front_entries_carry_the_refined_signatures(pruned):
    (front,) = build_report([pruned])["fronts"]
    table = read_results(pruned).table
    assert front["refine"] == "prune"
    assert [t["refined"]["size"] for t in front["tasks"]] == table["refined_size"].tolist()
    assert [t["refined"]["inner"] for t in front["tasks"]] == (
        table["refined_train_correct"] / table["refined_train_total"]).tolist()
    assert all(0 <= t["refined"]["test"] <= 1 for t in front["tasks"])


def test_front_plot_marks_the_refined_signatures(pruned):
    pytest.importorskip("matplotlib")
    from hpcswarm.results.report.plots import front_figure

    (entry,) = build_report([pruned])["fronts"]
    inner, test = front_figure(entry).axes[:2]
    for panel in (inner, test):
        marked = [c for c in panel.collections if c.get_label() == "prune signature of each task"]
        assert len(marked) == 1 and len(marked[0].get_offsets()) == len(entry["tasks"])


def test_report_plots_create_their_folder_and_check_every_file_first(pruned, tmp_path):
    pytest.importorskip("matplotlib")
    from hpcswarm.results.report.plots import plot_files, write_plots

    report = build_report([pruned])
    folder = tmp_path / "new" / "plots"
    files = plot_files(report, folder)
    assert write_plots(report, folder) == files
    for path in files[:-1]:
        path.unlink()
    with pytest.raises(DataError, match="already exists"):
        write_plots(report, folder)
    assert [path for path in files if path.exists()] == files[-1:]


def test_the_convergence_plot_draws_the_best_subsets_size_below_its_fitness():
    pytest.importorskip("matplotlib")
    from types import SimpleNamespace

    from hpcswarm.results.report.plots import convergence_figure
    from hpcswarm.results.report.model import ConvergenceEntry

    flat = ConvergenceEntry(dataset="srbct", method="VLPSO", file="r.h5", objective="accuracy",
                            best_fitness=[1.0, 1.0, 1.0], best_accuracy=[1.0, 1.0, 1.0],
                            best_size=[540.0, 310.0, 120.0])  # the fitness flat, the size not
    figure = convergence_figure(SimpleNamespace(convergence=[flat]))
    fitness, sizes = figure.axes
    assert list(fitness.lines[0].get_ydata()) == [1.0, 1.0, 1.0]
    assert list(sizes.lines[0].get_ydata()) == [540.0, 310.0, 120.0]
    assert "genes" in sizes.get_ylabel()
