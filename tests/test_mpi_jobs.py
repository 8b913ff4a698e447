"""Whole MPI jobs in a subprocess: rank groups running searches, and a failing rank.

These tests launch ``mpiexec`` themselves (helper scripts in ``tests/mpi_scripts``), so they
run in the serial pass of ``make test`` only; they skip where no ``mpiexec`` sits next to the
Python interpreter.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "mpi_scripts"
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def launch(n_ranks, script, timeout, args=()):
    """Run ``script`` (or ``-m hpcswarm`` for None) under ``mpiexec -n n_ranks``;
    (completed process, seconds)."""
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "MPI"))}
    env["PYTHONPATH"] = str(SCRIPTS.parent.parent)
    program = ["-m", "hpcswarm"] if script is None else [str(SCRIPTS / script)]
    started = time.perf_counter()
    done = subprocess.run([str(MPIEXEC), "-n", str(n_ranks), sys.executable, *program, *args],
                          capture_output=True, text=True, timeout=timeout, env=env)
    return done, time.perf_counter() - started


@pytest.mark.slow
def test_run_command_on_two_ranks_writes_the_serial_result_once(tmp_path):
    from hpcswarm import cli

    args = ["run", "--data", "builtin:srbct", "--algorithm", "cso", "--param", "n_particles=6",
            "--param", "n_iterations=4", "--seed", "2", "--threads", "1"]
    assert cli.main(args + ["--output", str(tmp_path / "serial.json")]) == 0
    done, _ = launch(2, None, timeout=120, args=args + ["--output", str(tmp_path / "two.json")])
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serial.json", "two.json"]
    serial, two = (json.loads((tmp_path / name).read_text()) for name in ("serial.json", "two.json"))
    for doc in (serial, two):
        for row in doc["history"]:
            row.pop("seconds")
    assert two["extra"].pop("comm")["ranks"] == 2 and serial["extra"].pop("comm")["ranks"] == 1
    assert two == serial


def test_threads_option_is_checked():
    from hpcswarm import cli
    from hpcswarm.errors import ParameterError

    with pytest.raises(ParameterError, match="--threads"):
        cli.main(["run", "--data", "builtin:srbct", "--algorithm", "cso", "--threads", "0"])


@pytest.mark.slow
def test_rank_groups_run_searches_concurrently_with_serial_results():
    done, _ = launch(4, "farm_searches.py", timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(report["matched"]), report
    assert set(report["group_sizes"]) == {2}
    assert set(report["assignments"].values()) == {0, 1}, report  # both groups took tasks


def test_a_failing_rank_ends_the_job_promptly_with_its_message():
    done, seconds = launch(2, "fail_on_rank1.py", timeout=60)
    assert done.returncode != 0
    assert "hpcswarm: rank 1 failed" in done.stderr
    assert "RuntimeError: injected failure on rank 1" in done.stderr
    assert seconds < 30, f"the job took {seconds:.0f} s to end"
