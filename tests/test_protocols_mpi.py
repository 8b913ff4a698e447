"""End to end under ``mpiexec -n 2`` in a subprocess: same results as a serial run."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hpcswarm.results.files import read_results
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job

JOBS = Path(__file__).resolve().parents[1] / "jobs"
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def mpiexec_run(job, overrides, cwd):
    if not MPIEXEC.exists() and shutil.which("mpiexec") is None:
        pytest.skip("no mpiexec")
    launcher = str(MPIEXEC) if MPIEXEC.exists() else shutil.which("mpiexec")
    command = [launcher, "-n", "2", sys.executable, "-m", "hpcswarm", "run", str(job)]
    for item in overrides:
        command += ["--set", item]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600)


def same_tasks(a, b):
    assert [int(x) for x in a.table["run"]] == [int(x) for x in b.table["run"]]
    for column in ("test_correct", "test_total", "test_balanced_accuracy", "baseline_correct",
                   "train_fitness", "evaluations", "subset_size"):
        assert np.array_equal(a.table[column], b.table[column]), column
    assert all(np.array_equal(x, y) for x, y in zip(a.genes, b.genes))


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["accuracy", "balanced-accuracy"])
@pytest.mark.parametrize("group_size", [1, 2])
def test_two_ranks_give_the_serial_results(tmp_path, group_size, objective):
    overrides = ["runs=3", "n_iterations=5", "n_particles=6", f"objective={objective}",
                 f"group_size={group_size}", f"output={tmp_path / 'mpi.h5'}"]
    done = mpiexec_run(JOBS / "cbpso-wine-biased.toml", overrides, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wrote ") == 1  # rank 0 alone prints
    parallel = read_results(tmp_path / "mpi.h5")
    assert parallel.attrs["n_ranks"] == 2
    assert parallel.attrs["params"]["objective"] == objective
    assert parallel.attrs["group_size"] == group_size
    serial_job = read_job(JOBS / "cbpso-wine-biased.toml",
                          overrides[:-2] + [f"output={tmp_path / 'serial.h5'}"])
    run_job(serial_job)
    same_tasks(parallel, read_results(tmp_path / "serial.h5"))


@pytest.mark.slow
def test_unbiased_srbct_job_under_two_ranks(tmp_path, shared_data):
    overrides = ["runs=1", "folds=3", "n_iterations=3", "n_particles=6", "ls_tries=5",
                 f"cache={tmp_path}", f"output={tmp_path / 'lsrg.h5'}"]
    done = mpiexec_run(JOBS / "pso-lsrg-srbct-unbiased.toml", overrides, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "3 tasks on 2 rank(s) in 2 group(s) of 1" in done.stdout
    results = read_results(tmp_path / "lsrg.h5")
    assert sorted(results.table["fold"].tolist()) == [0, 1, 2]
    assert sorted(results.table["group"].tolist()) in ([0, 0, 1], [0, 1, 1], [0, 0, 0],
                                                       [1, 1, 1])


@pytest.mark.slow
def test_existing_output_fails_on_every_rank_with_status_2(tmp_path):
    (tmp_path / "r.h5").write_bytes(b"")
    done = mpiexec_run(JOBS / "cbpso-wine-biased.toml", [f"output={tmp_path / 'r.h5'}"],
                       tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("already exists (use --overwrite") == 1
