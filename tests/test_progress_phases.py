"""Progress after the search (refinement steps, baselines) and the closing time line."""

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from sklearn.datasets import load_wine

from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.progress import ProgressLines, ProgressReporter, Workload, progress_path
from hpcswarm.run.timing import JobTimes
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.loop import SearchHooks
from synthetic import vlpso_saturates

JOBS = Path(__file__).resolve().parents[1] / "jobs"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_refinement_is_reported_step_by_step_with_an_eta(tmp_path):
    clock, stream = Clock(), io.StringIO()
    reporter = ProgressReporter(tmp_path / "p.jsonl", Workload(3, 1),
                                ProgressLines(stream, tty=False), interval=2.0, clock=clock)
    task = SimpleNamespace(run=0, fold=1, number=0)
    reporter.phase(task, "refine prune", 400)  # a new phase: reported at once
    clock.now = 1.0
    reporter.phase(task, "refine prune", 399)  # within 2 s: dropped
    clock.now = 4.0
    reporter.phase(task, "refine prune", 200)  # two steps in 4 s, 200 genes left
    reporter.phase(task, "baselines and test", None)  # a new phase again
    records = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    phases = [r for r in records if r["event"] == "phase"]
    assert [(r["phase"], r["genes_left"]) for r in phases] == [
        ("refine prune", 400), ("refine prune", 200), ("baselines and test", None)]
    # 2 s a step x 200 genes / 2 = 200 s left in this task; this one's 204 s twice more
    assert phases[1]["eta_seconds"] == 200 + 2 * 204
    assert "run 0 fold 1 refine prune: 200 genes left | ETA 0:10:08" in stream.getvalue()


def test_a_job_reports_its_refinement_and_baselines(tmp_path):
    job = read_job(JOBS / "cbpso-wine-biased.toml",
                   ["runs=1", "params.n_iterations=2", "params.n_particles=4", "refine=prune",
                    f"output={tmp_path / 'out.h5'}"])
    stream = io.StringIO()
    run_job(job, progress_stream=stream)
    records = [json.loads(line) for line in progress_path(job.output).read_text().splitlines()]
    phases = [r["phase"] for r in records if r["event"] == "phase"]
    assert phases[0] == "refine prune" and phases[-1] == "baselines and test"
    assert "refine prune:" in stream.getvalue() and "genes left" in stream.getvalue()


def test_the_phase_hook_changes_no_refinement():
    X, y = load_wine(return_X_y=True)
    seen = []
    plain = run_search(X, y, "pso", {"n_particles": 6, "n_iterations": 3}, seed=4,
                       refine="prune")
    watched = run_search(X, y, "pso", {"n_particles": 6, "n_iterations": 3}, seed=4,
                         refine="prune",
                         hooks=SearchHooks(phase=lambda name, left: seen.append((name, left))))
    assert np.array_equal(plain.refined.mask, watched.refined.mask)
    assert plain.refined.correct == watched.refined.correct
    lefts = [left for _, left in seen]
    assert seen and {name for name, _ in seen} == {"refine prune"}
    assert lefts == sorted(lefts, reverse=True) and lefts[0] == plain.mask.sum()


def test_the_exchange_rule_s_steps_are_reported_and_change_nothing():
    X, y = vlpso_saturates()
    settings = {"n_particles": 8, "n_iterations": 6, "n_divisions": 2, "change_after": 2,
                "refresh_gap": 2}
    seen = []
    plain = run_search(X, y, "vlpso", settings, seed=1, refine="saturation-exchange")
    watched = run_search(X, y, "vlpso", settings, seed=1, refine="saturation-exchange",
                         hooks=SearchHooks(phase=lambda name, left: seen.append((name, left))))
    assert np.array_equal(plain.refined.mask, watched.refined.mask)
    assert np.array_equal(plain.refined.removed, watched.refined.removed)
    steps = len(watched.refined.removed)   # here each step takes out a gene of the search's
    assert steps > 0 and seen == [("refine saturation-exchange", None)] * (steps + 1)


def test_the_time_line_adds_up_its_parts():
    clock = Clock()
    times = JobTimes(startup=2.0, clock=clock)
    times.preflight, times.tasks, times.writing = 0.5, 30.0, 1.0
    times.add_tasks([SimpleNamespace(seconds=10.0, history=SimpleNamespace(last={"seconds": 1.0})),
                     SimpleNamespace(seconds=20.0, history=SimpleNamespace(last={"seconds": 3.0}))])
    clock.now = 31.6
    assert times.line() == (
        "time: 2.0 s start-up, 0.5 s pre-flight, 30.0 s tasks, 1.0 s writing the results; "
        "33.5 s of 33.6 s wall. The 2 tasks: 4.0 s searching, 26.0 s after the search "
        "(refinement, baselines, test)")


def test_run_ends_with_a_time_line_that_accounts_for_its_wall_time(tmp_path, capsys):
    from hpcswarm import cli

    args = ["run", str(JOBS / "cbpso-wine-biased.toml"), "--quiet"]
    for item in ["runs=2", "params.n_iterations=2", "params.n_particles=4",
                 f"output={tmp_path / 'out.h5'}"]:
        args += ["--set", item]
    assert cli.main(args) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    parts, wall = map(float, re.search(r"; ([\d.]+) s of ([\d.]+) s wall", last).groups())
    assert last.startswith("time: ") and "The 2 tasks" in last
    assert wall - 0.2 <= parts <= wall  # measured one after the other
