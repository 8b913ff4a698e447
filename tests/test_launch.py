"""A launcher's N > 1 tasks that MPI turned into N worlds of one rank are refused.

The environment decides whether a launch announced several tasks (pure, no MPI); the
subprocess tests set a launcher's variables around a process that MPI really starts as a
singleton, which is what ``srun --mpi=none`` does to MPICH, and check that every subcommand
that writes stops with one line and exit status 2 before it reads or writes anything.
Serial pass only: the subprocesses must start outside any launcher.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcswarm.run.launch import launched_tasks, split_world_message

REPO = Path(__file__).resolve().parent.parent
MPIEXEC = Path(sys.executable).parent / "mpiexec"


@pytest.mark.parametrize("environ, expected", [
    ({}, None),
    ({"SLURM_NTASKS": "4", "SLURM_JOB_ID": "7"}, None),             # the batch script itself
    ({"SLURM_STEP_NUM_TASKS": "2", "SLURM_STEP_ID": "0", "SLURM_MPI_TYPE": "none"},
     (2, "srun --mpi=none", "SLURM_STEP_NUM_TASKS=2")),
    ({"SLURM_NTASKS": "3", "SLURM_STEP_ID": "1"}, (3, "srun", "SLURM_NTASKS=3")),
    ({"PMI_SIZE": "4", "PMI_RANK": "1"},
     (4, "a PMI launcher (MPICH's mpiexec, srun --mpi=pmi2)", "PMI_SIZE=4")),
    ({"OMPI_COMM_WORLD_SIZE": "8"}, (8, "Open MPI's mpirun", "OMPI_COMM_WORLD_SIZE=8")),
    ({"PMIX_RANK": "5", "PMIX_NAMESPACE": "x"}, (6, "a PMIx launcher", "PMIX_RANK=5")),
    ({"PMIX_RANK": "0", "SLURM_STEP_NUM_TASKS": "16", "SLURM_MPI_TYPE": "pmix"},
     (16, "srun --mpi=pmix", "SLURM_STEP_NUM_TASKS=16")),
    ({"SLURM_STEP_NUM_TASKS": "1", "PMI_SIZE": "1"}, (1, "srun", "SLURM_STEP_NUM_TASKS=1")),
    ({"PMI_SIZE": ""}, None),
])
def test_launched_tasks_from_environment(environ, expected):
    assert launched_tasks(environ) == expected


def test_message_names_launcher_library_and_fix():
    message = split_world_message(2, "srun --mpi=none", "SLURM_STEP_NUM_TASKS=2",
                                  "MPICH Version: 4.2.0")
    assert "\n" not in message
    for part in ("srun --mpi=none started 2 tasks", "SLURM_STEP_NUM_TASKS=2",
                 "MPICH Version: 4.2.0", "srun --mpi=pmi2", "srun --mpi=pmix",
                 "HPCSWARM_LAUNCHER=mpiexec"):
        assert part in message


def _hpcswarm(args, cwd, launcher_env, mpiexec_ranks=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "PMI_", "PMIX_", "OMPI_", "MPI", "HYDRA_"))}
    env.update(launcher_env, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "hpcswarm", *args]
    if mpiexec_ranks:
        command = [str(MPIEXEC), "-n", str(mpiexec_ranks), *command]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


SRUN_NONE = {"SLURM_STEP_NUM_TASKS": "2", "SLURM_STEP_ID": "0", "SLURM_MPI_TYPE": "none",
             "SLURM_PROCID": "1"}


@pytest.mark.parametrize("launcher_env", [SRUN_NONE, {"OMPI_COMM_WORLD_SIZE": "2"}])
@pytest.mark.parametrize("args", [
    ["run", str(REPO / "jobs" / "cbpso-wine-biased.toml"), "--set", "output=out.h5"],
    ["run", "--data", "missing.h5", "--algorithm", "pso", "--output", "out.json"],
    ["convert", "missing.csv", "out.h5"],
    ["report", "missing.h5", "--csv", "tables"],
    ["evaluate", "missing.h5", "--all"],
])
def test_split_world_refused_before_any_work(tmp_path, args, launcher_env):
    """Exit 2, one line naming the launcher, the library and the fix; no file read or written
    (a missing input is not even noticed)."""
    done = _hpcswarm(args, tmp_path, launcher_env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hpcswarm: error: "), done.stderr
    assert "started 2 tasks" in lines[0] and "world of 1 rank" in lines[0]
    assert "MPICH" in lines[0] or "Open MPI" in lines[0]
    assert "--mpi=pmi2" in lines[0] and "HPCSWARM_LAUNCHER=mpiexec" in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_matching_world_runs(tmp_path):
    """A launcher's count that MPI honours (mpiexec -n 2 inside a 2-task step) is no error."""
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}")
    job = REPO / "jobs" / "cbpso-wine-biased.toml"
    done = _hpcswarm(["run", str(job), "--set", "runs=1", "--set", "params.n_iterations=2",
                      "--set", "params.n_particles=4", "--set", "output=out.h5", "--quiet"],
                     tmp_path, {"SLURM_STEP_NUM_TASKS": "2", "SLURM_STEP_ID": "0"},
                     mpiexec_ranks=2)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.json").read_text())["provenance"]["n_ranks"] == 2
