"""The ETA of a job's progress before its first task ends: from the seconds per round of rank
0's search and the rounds of a search."""

import io
import json
from pathlib import Path
from types import SimpleNamespace

from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.progress import ProgressLines, ProgressReporter, Workload, task_seconds

JOBS = Path(__file__).resolve().parents[1] / "jobs"


def first_round(iteration, seconds):
    return {"iteration": iteration, "best_fitness": 0.9, "best_size": 5, "mean_size": 6.0,
            "new_subsets": 3, "evaluations": 30, "archive_hits": 0, "seconds": seconds}


def test_a_search_is_timed_from_its_rounds_so_far():
    assert task_seconds(2.0, 1, 10) == 10.0  # 2 rounds in 2 s, 10 rounds: 10 s
    assert task_seconds(3.0, 2, 3) == 3.0
    assert task_seconds(2.0, 1, None) is None


def test_the_first_rounds_give_an_eta(tmp_path):
    stream = io.StringIO()
    reporter = ProgressReporter(tmp_path / "p.jsonl", Workload(3, 1, n_rounds=10),
                                ProgressLines(stream, tty=False))
    reporter.round(SimpleNamespace(run=0, fold=0), first_round(1, 2.0))
    # 10 s per task, 3 tasks on one group, 2 s of them spent: 28 s left
    assert stream.getvalue().splitlines()[-1].endswith("ETA 0:00:28")
    reporter.close()
    lines = io.StringIO()
    unknown = ProgressReporter(tmp_path / "q.jsonl", Workload(3, 1),
                               ProgressLines(lines, tty=False))
    unknown.round(SimpleNamespace(run=0, fold=0), first_round(1, 2.0))
    assert lines.getvalue().splitlines()[-1].endswith("ETA ?")
    unknown.close()


def test_a_jobs_first_round_has_an_eta(tmp_path):
    job = read_job(JOBS / "cbpso-wine-biased.toml",
                   ["runs=1", "params.n_iterations=2", "params.n_particles=4",
                    f"output={tmp_path / 'out.h5'}"])
    stream = io.StringIO()
    run_job(job, progress_stream=stream)
    records = [json.loads(line) for line in
               (tmp_path / "out.progress.jsonl").read_text().splitlines()]
    first = next(r for r in records if r["event"] == "round")
    assert first["tasks_done"] == 0 and first["eta_seconds"] is not None
    assert "ETA ?" not in [line for line in stream.getvalue().splitlines()
                           if "round" in line][0]
