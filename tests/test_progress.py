"""Progress of a job: world rank 0's stderr lines and ``<output stem>.progress.jsonl``."""

import io
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hpcswarm.comm import world
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.progress import (FIELDS, ProgressLines, ProgressReporter, Workload, eta_seconds,
                               format_line, progress_path)
from hpcswarm.run.taskfarm import FarmHooks, farm

JOBS = Path(__file__).resolve().parents[1] / "jobs"
TINY = ["runs=1", "params.n_iterations=2", "params.n_particles=4"]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def row(iteration, evaluations=30, hits=10, seconds=2.0):
    return {"iteration": iteration, "best_fitness": 0.9, "best_size": 5, "mean_size": 6.0,
            "new_subsets": 3, "evaluations": evaluations, "archive_hits": hits,
            "seconds": seconds}


def record(run, seconds):
    return {"run": run, "fold": 0, "group": 0, "seconds": seconds, "iteration": 4,
            "best_fitness": 0.95, "best_size": 4, "evaluations": 40, "archive_hits": 0}


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def tiny_job(tmp_path, *more):
    return read_job(JOBS / "cbpso-wine-biased.toml",
                    TINY + [f"output={tmp_path / 'out.h5'}", *more])


# ------------------------------------------------------------------ the reporter
def test_round_updates_are_throttled_and_task_completions_never(tmp_path):
    clock, stream = Clock(), io.StringIO()
    reporter = ProgressReporter(tmp_path / "p.jsonl", Workload(3, 1),
                                ProgressLines(stream, tty=False), interval=2.0, clock=clock)
    task = SimpleNamespace(run=0, fold=0)
    reporter.round(task, row(0))
    clock.now = 1.0
    reporter.round(task, row(1))  # within 2 s of the last: dropped
    clock.now = 2.5
    reporter.round(task, row(2))
    reporter.task_done(record(0, 3.0))  # a completion always shows
    reporter.task_done(record(1, 5.0))
    reporter.close()
    records = lines_of(tmp_path / "p.jsonl")
    assert [r["event"] for r in records] == ["start", "round", "round", "task", "task", "end"]
    assert [r["iteration"] for r in records if r["event"] == "round"] == [0, 2]
    assert stream.getvalue().count("\n") == len(records)  # one stderr line per update
    assert all(line.startswith("progress: ") for line in stream.getvalue().splitlines())


def test_records_carry_every_key_and_the_figures(tmp_path):
    clock = Clock()
    reporter = ProgressReporter(tmp_path / "p.jsonl", Workload(5, 2),
                                ProgressLines(io.StringIO(), tty=False), clock=clock)
    reporter.round(SimpleNamespace(run=1, fold=3), row(7, evaluations=30, hits=10, seconds=2.0))
    reporter.task_done(record(0, 4.0))
    reporter.task_done(record(1, 6.0))
    reporter.close()
    start, first, *_, last_task, end = lines_of(tmp_path / "p.jsonl")
    for item in (start, first, last_task, end):
        assert list(item) == list(FIELDS)
    assert (first["run"], first["fold"], first["iteration"]) == (1, 3, 7)
    assert first["best_fitness"] == 0.9 and first["best_size"] == 5
    assert first["evaluations_per_second"] == pytest.approx(15.0)
    assert first["archive_hit_rate"] == pytest.approx(0.25)  # 10 hits of 40 subsets asked
    assert first["eta_seconds"] is None  # no task finished yet
    assert (last_task["tasks_done"], last_task["tasks_remaining"]) == (2, 3)
    assert last_task["eta_seconds"] == pytest.approx(5.0 * 2)  # mean 5 s x ceil(3 / 2)
    assert last_task["evaluations_per_second"] == pytest.approx(40 / 6.0)
    assert end["tasks_done"] == 2


def test_eta_from_finished_durations_and_groups():
    assert eta_seconds([], 4, 2) is None
    assert eta_seconds([2.0, 4.0], 4, 2) == pytest.approx(6.0)
    assert eta_seconds([2.0, 4.0], 5, 2) == pytest.approx(9.0)
    assert eta_seconds([2.0], 0, 2) == 0.0


def test_quiet_writes_the_file_but_nothing_on_the_stream(tmp_path):
    stream = io.StringIO()
    reporter = ProgressReporter(tmp_path / "p.jsonl", Workload(1, 1),
                                ProgressLines(stream, quiet=True, tty=False))
    reporter.task_done(record(0, 1.0))
    reporter.close()
    assert stream.getvalue() == ""
    assert [r["event"] for r in lines_of(tmp_path / "p.jsonl")] == ["start", "task", "end"]


def test_a_terminal_gets_one_line_that_rewrites_itself(tmp_path):
    stream = io.StringIO()
    reporter = ProgressReporter(tmp_path / "p.jsonl", Workload(2, 1),
                                ProgressLines(stream, tty=True))
    reporter.task_done(record(0, 1.0))
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") == 2  # start, task: rewritten in place
    assert "[##########..........] 1/2 tasks" in text
    reporter.close()
    assert stream.getvalue().endswith("\n")  # the last state stays on screen


def test_human_line_names_task_fitness_rates_and_eta():
    item = dict.fromkeys(FIELDS)
    item.update(event="round", tasks_done=1, tasks_total=4, run=2, fold=1, iteration=9,
                best_fitness=0.975, best_size=7, evaluations_per_second=123.4,
                archive_hit_rate=0.5, eta_seconds=3725)
    assert format_line(item) == ("progress: 1/4 tasks | run 2 fold 1 round 9 | best 0.975 "
                                 "(7 genes) | 123 eval/s | archive hits 50% | ETA 1:02:05")


# ------------------------------------------------------------------ in a job
def test_a_job_writes_its_progress_file_beside_the_output(tmp_path):
    job = read_job(JOBS / "cbpso-wine-biased.toml",
                   ["runs=3", "params.n_iterations=2", "params.n_particles=4",
                    f"output={tmp_path / 'out.h5'}"])
    stream = io.StringIO()
    run_job(job, progress_stream=stream)
    path = progress_path(job.output)
    assert path == tmp_path / "out.progress.jsonl"
    records = lines_of(path)
    events = [r["event"] for r in records]
    assert events[0] == "start" and events[-1] == "end" and events.count("task") == 3
    assert "round" in events
    tasks = [r for r in records if r["event"] == "task"]
    assert [r["tasks_done"] for r in tasks] == [1, 2, 3]
    assert sorted(r["run"] for r in tasks) == [0, 1, 2]
    assert all(r["best_fitness"] > 0 and r["evaluations_per_second"] > 0 for r in tasks)
    assert tasks[-1]["eta_seconds"] == 0.0
    assert len(stream.getvalue().splitlines()) == len(records)  # one line per update


def test_cli_quiet_silences_stderr_but_keeps_the_file(tmp_path, capsys):
    from hpcswarm import cli

    args = ["run", str(JOBS / "cbpso-wine-biased.toml")]
    for item in TINY + [f"output={tmp_path / 'out.h5'}"]:
        args += ["--set", item]
    assert cli.main(args) == 0
    assert "progress: 1/1 tasks" in capsys.readouterr().err
    assert cli.main(args + ["--overwrite", "--quiet"]) == 0
    assert "progress:" not in capsys.readouterr().err
    assert lines_of(tmp_path / "out.progress.jsonl")[-1]["event"] == "end"


# ------------------------------------------------------------------ the task farm
@pytest.mark.mpi
def test_every_task_completion_reaches_rank_zero_once():
    """Also under mpiexec -n 2: the other group's records arrive by non-blocking sends."""
    with world() as comm:
        tasks = list(range(9))
        seen = []

        def run_task(task, group, progress):
            time.sleep(0.01 * (task % 3))
            progress({"iteration": 0})
            return task * 10

        def summary(task, result, group_index):
            return {"task": task, "result": result, "group": group_index}

        results, assignments = farm(comm, tasks, run_task, group_size=1,
                                    hooks=FarmHooks(summary=summary, on_done=seen.append))
        if comm.rank == 0:
            assert sorted(r["task"] for r in seen) == tasks
            assert all(r["result"] == 10 * r["task"] for r in seen)
            assert {r["task"]: r["group"] for r in seen} == assignments
        else:
            assert seen == []
