"""The report's plots say what they show: whole rounds, labelled folds, a short legend."""

import numpy as np
import pytest

from hpcswarm.results.report import build_report
from small_jobs import run_small_job

pytest.importorskip("matplotlib")

from hpcswarm.results.report.plots import (convergence_figure, front_figure,  # noqa: E402
                                           stability_figure)

JOB = """data = "sklearn:wine"
algorithm = "pso-lsrg"
name = "LSRG"
protocol = "unbiased"
folds = 3
runs = 2
seed = 4
refine = "prune"
[params]
n_particles = 4
n_iterations = 4
ls_tries = 3
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    job, _ = run_small_job(tmp_path_factory.mktemp("labels"), JOB, "lsrg.h5")
    return build_report([job.output])


def test_convergence_is_drawn_at_whole_rounds(report):
    fig = convergence_figure(report)
    fig.canvas.draw()
    for ax in fig.axes:  # the fitness, then the best subset's size, on the same rounds
        (line,) = ax.get_lines()
        assert line.get_xdata().tolist() == [0, 1, 2, 3]
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
    assert len(fig.axes) == 2


def test_every_stability_column_is_labelled_with_its_fold(report):
    entry = next(e for e in report["genes"] if e["method"] == "LSRG")
    fig = stability_figure(entry)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "0", "1", "2"]
    (runs,) = ax.child_axes
    assert [t.get_text() for t in runs.get_xticklabels()] == ["run 0", "run 1"]


def test_the_front_legend_is_short_and_each_panel_shows_one_accuracy(report):
    (entry,) = report["fronts"]
    fig = front_figure(entry)
    inner, test = fig.axes
    assert "inner accuracy" in inner.get_title() and "test accuracy" in test.get_title()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    (legend,) = legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert len(labels) <= 3
    assert not any("test" in label for label in labels)
    chosen = [line for line in test.get_lines() if line.get_label().startswith("best inner")]
    (line,) = chosen
    assert np.allclose(line.get_ydata(), [b["test"] for b in entry["budgets"]
                                          if b["size"] is not None])
