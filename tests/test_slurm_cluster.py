"""The SLURM scripts on a real cluster: sbatch, srun worlds, time-limit signals, job arrays.

Every test submits ``slurm/run_lsrg.sh`` or ``slurm/run_array.sh`` with ``sbatch``, waits for
the job to end and compares the results with the same job run by ``mpiexec -n 2`` (or
serially) outside SLURM. They need a SLURM cluster whose controller answers ``scontrol ping``
and a node with 2 CPUs: CI starts a one-node cluster with ``.ci/slurm-cluster`` and exports
its ``SLURM_CONF``. Without one they are skipped with the reason, unless
``HPCSWARM_TEST_SLURM=required`` (set by ``.ci/run``), which turns the skip into a failure.
Serial pass only.
"""

import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hpcswarm.results.files import read_results
from hpcswarm.results.report import build_report

REPO = Path(__file__).resolve().parent.parent
MPIEXEC = Path(sys.executable).parent / "mpiexec"
LSRG_JOB = REPO / "jobs" / "pso-lsrg-srbct-unbiased.toml"
# the headline job, reduced: bundled SRBCT, one run of 4 outer folds, small swarms
REDUCED = ["data=builtin:srbct", "runs=1", "folds=4", "n_particles=6", "n_iterations=3",
           "ls_tries=5"]
# The time-limited job: the headline job's searches (Tran et al.'s settings) on runs of 2
# folds, as many runs as make its searches last REFERENCE_SECONDS on this machine (measured
# on the first run's tasks, start-up aside), so that SLURM's warning arrives while it
# computes: slurmctld looks at time limits every 30 s and sends USR1@75 of a 2-minute job 15
# to 45 s after its start.
LONGER = ["data=builtin:srbct", "folds=2"]
REFERENCE_SECONDS = 90
TIME_LIMITED = ["--time=00:02:00", "--signal=B:USR1@75"]


def _slurm_unavailable():
    """Why no SLURM cluster can run the tests here, or None."""
    for command in ("sbatch", "scontrol", "sinfo"):
        if shutil.which(command) is None:
            return f"no {command} on PATH (apt-get install slurm-wlm; .ci/slurm-cluster start DIR)"
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30)
    if ping.returncode != 0 or "UP" not in ping.stdout:
        return f"no slurmctld answers 'scontrol ping': {(ping.stdout + ping.stderr).strip()}"
    cpus = subprocess.run(["sinfo", "--noheader", "--format=%c"], capture_output=True,
                          text=True, timeout=30).stdout.split()
    if not any(c.isdigit() and int(c) >= 2 for c in cpus):
        return f"no SLURM node with 2 CPUs (sinfo CPUs: {cpus})"
    if not MPIEXEC.exists():
        return f"no mpiexec next to {sys.executable} for the reference runs"
    return None


@pytest.fixture(scope="module")
def cluster():
    reason = _slurm_unavailable()
    if reason is not None:
        if os.environ.get("HPCSWARM_TEST_SLURM") == "required":
            pytest.fail(f"HPCSWARM_TEST_SLURM=required but {reason}")
        pytest.skip(reason)


def _environment(**extra):
    """This environment without any launcher's variables (SLURM_CONF kept): the job's python
    is the one running the tests, used as it is (no virtualenv to activate)."""
    env = {k: v for k, v in os.environ.items()
           if k == "SLURM_CONF" or not k.startswith(("SLURM_", "SRUN_", "SBATCH_", "PMI_", "PMIX_",
                                                      "OMPI_", "HYDRA_", "HPCSWARM_"))}
    env.update(HPCSWARM_VENV="", HPCSWARM_PYTHON=sys.executable, **extra)
    return env


def _submit_dir(path):
    """A submit directory like a checkout: slurm/ beside the job files."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "slurm").symlink_to(REPO / "slurm")
    return path


# The base states of a job that has ended. Any other state is waited out: scontrol shows a
# job's flag in place of its base state when it has one, and a running job is shown as
# SIGNALING while its --signal warning is on the way (with ExitCode 0:0), as STAGE_OUT,
# STOPPED or RESIZING, and so on (https://slurm.schedmd.com/job_state_codes.html).
_ENDED = {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
          "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT"}


def _job_states(job_id):
    """(state, exit status) of every element of a job, from ``scontrol show job``."""
    shown = subprocess.run(["scontrol", "--oneliner", "show", "job", job_id],
                           capture_output=True, text=True, timeout=30, check=True).stdout
    states = []
    for line in shown.splitlines():
        fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
        code, signal_number = (int(x) for x in fields["ExitCode"].split(":"))
        states.append((fields["JobState"], code or (128 + signal_number if signal_number else 0)))
    return states


def sbatch(submit, script, options, args, **extra):
    """sbatch slurm/<script> from ``submit`` and wait for the job (or every element of an
    array) to end: (highest exit status, log text, seconds from submission to end).

    The end is polled every 0.2 s (``sbatch --wait`` polls at growing intervals, up to 32 s
    late); the cluster keeps ended jobs (MinJobAge) long enough to read their exit status.
    """
    started = time.monotonic()
    done = subprocess.run(["sbatch", "--parsable", "--output=job-%A_%a.log",
                           "--error=job-%A_%a.log", *options, str(REPO / "slurm" / script), *args],
                          cwd=submit, env=_environment(**extra), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip().split(";")[0]
    while any(state not in _ENDED for state, _ in _job_states(job_id)):
        assert time.monotonic() - started < 900, f"job {job_id} still running after 900 s"
        time.sleep(0.2)
    status = max(code for _, code in _job_states(job_id))
    logs = "".join(p.read_text() for p in sorted(submit.glob(f"job-{job_id}_*.log")))
    return status, logs, time.monotonic() - started


def _sets(items):
    return [arg for item in items for arg in ("--set", item)]


def mpiexec_job(job, items, cwd):
    """The same job under ``mpiexec -n 2`` outside SLURM."""
    cwd.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "hpcswarm", "run",
                           str(job), "--quiet", *_sets(items)], cwd=cwd, env=_environment(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


_COLUMNS = ("test_correct", "test_total", "baseline_correct", "train_fitness", "evaluations",
            "subset_size")


def _tasks(path):
    """(run, fold) -> the task's numbers, selected genes and history (timings aside)."""
    results = read_results(path)
    timing = [c for c, name in enumerate(results.history_columns) if name == "seconds"]
    return {(int(run), int(fold)): ([results.table[c][i] for c in _COLUMNS],
                                    results.genes[i].tolist(),
                                    np.delete(results.histories[i], timing, axis=1).tolist())
            for i, (run, fold) in enumerate(zip(results.table["run"], results.table["fold"]))}


def _run_seconds(path):
    """Seconds of the searches of a one-run results file on its two ranks: the slower of its
    two folds, which the two rank groups search at once (process start-up aside)."""
    return float(np.max(read_results(path).table["seconds"]))


def assert_same_results(path, *references):
    """The tasks of ``path`` are those of the references (the parts of one job) exactly."""
    expected = {}
    for reference in references:
        expected.update(_tasks(reference))
    found = _tasks(path)
    assert sorted(found) == sorted(expected)
    for key, task in found.items():
        assert task == expected[key], f"run {key[0]} fold {key[1]} differs"


def test_split_world_refused_under_srun_mpi_none(cluster, tmp_path):
    """srun --mpi=none makes two singleton MPICH worlds: both tasks stop with the message,
    exit 2, and no results, summary, progress or checkpoint file appears."""
    submit = _submit_dir(tmp_path)
    status, log, _ = sbatch(submit, "run_lsrg.sh", ["--ntasks=2"],
                            [str(LSRG_JOB), *_sets(REDUCED + ["output=split.h5"])],
                            HPCSWARM_LAUNCHER_ARGS="--mpi=none")
    assert status == 2, log
    assert log.count("hpcswarm: error: srun started 2 tasks (SLURM_STEP_NUM_TASKS=2)") == 2, log
    assert "MPICH" in log and "srun --mpi=pmi2" in log and "HPCSWARM_LAUNCHER=mpiexec" in log
    assert sorted(p.name for p in submit.iterdir() if not p.name.startswith("job-")) == ["slurm"]


def test_two_tasks_under_sbatch_equal_mpiexec(cluster, tmp_path):
    """sbatch --ntasks=2 slurm/run_lsrg.sh: srun gets --mpi=pmi2 for PyPI's MPICH, one world
    of 2 ranks, the results of mpiexec -n 2."""
    mpiexec_job(LSRG_JOB, REDUCED + ["output=ref.h5"], tmp_path / "mpiexec")
    submit = _submit_dir(tmp_path / "slurm")
    status, log, seconds = sbatch(submit, "run_lsrg.sh", ["--ntasks=2"],
                                  [str(LSRG_JOB), *_sets(REDUCED + ["output=out.h5"])])
    assert status == 0, log
    assert "srun MPI plugin: --mpi=pmi2 for MPICH" in log
    assert "4 tasks on 2 rank(s)" in log
    assert read_results(submit / "out.h5").attrs["n_ranks"] == 2
    assert_same_results(submit / "out.h5", tmp_path / "mpiexec" / "ref.h5")
    print(f"sbatch of the reduced job: {seconds:.1f} s")


def test_time_limit_stops_with_checkpoint_and_resubmission_finishes(cluster, tmp_path):
    """--time=00:02:00 --signal=B:USR1@75: status 3 and a checkpoint; the same command
    submitted again (with the script's own time limit) finishes with the uninterrupted
    results."""
    started = time.monotonic()  # the uninterrupted job: its first run, then the others
    mpiexec_job(LSRG_JOB, LONGER + ["runs=1", "output=ref0.h5"], tmp_path / "mpiexec")
    references = [tmp_path / "mpiexec" / "ref0.h5"]
    runs = max(2, math.ceil(REFERENCE_SECONDS / _run_seconds(references[0])))
    mpiexec_job(LSRG_JOB, LONGER + [f"runs={runs - 1}", "first_run=1", "output=rest.h5"],
                tmp_path / "mpiexec")
    references.append(tmp_path / "mpiexec" / "rest.h5")
    print(f"uninterrupted reference: {runs} run(s) in {time.monotonic() - started:.1f} s")
    submit = _submit_dir(tmp_path / "slurm")
    args = [str(LSRG_JOB), *_sets(LONGER + [f"runs={runs}", "output=out.h5"])]
    status, log, seconds = sbatch(submit, "run_lsrg.sh", ["--ntasks=2", *TIME_LIMITED], args)
    assert status == 3, log
    assert "SIGUSR1 at" in log and "forwarding SIGUSR1 to srun" in log
    assert "stopped early with a checkpoint" in log
    assert (submit / "out.checkpoint.h5").is_file() and not (submit / "out.h5").exists()
    print(f"interrupted sbatch: {seconds:.1f} s")
    status, log, seconds = sbatch(submit, "run_lsrg.sh", ["--ntasks=2"], args)
    assert status == 0, log
    assert "resuming from " in log and "out.checkpoint.h5: " in log, log
    print(f"resubmission: {seconds:.1f} s")
    assert_same_results(submit / "out.h5", *references)


def test_array_of_first_run_slices_pools_into_one_table(cluster, tmp_path):
    """run_array.sh over two job files, runs 0-1 and 2 of one experiment (first_run): both
    elements finish and 'report' pools them into the table of the whole experiment."""
    submit = _submit_dir(tmp_path / "slurm")
    experiment = ('data = "sklearn:wine"\nalgorithm = "cbpso"\nprotocol = "holdout"\nseed = 4\n'
                  '{slice}[params]\nn_particles = 4\nn_iterations = 3\n')
    (submit / "part0.toml").write_text(
        experiment.format(slice='runs = 2\nfirst_run = 0\noutput = "part0.h5"\n'))
    (submit / "part1.toml").write_text(
        experiment.format(slice='runs = 1\nfirst_run = 2\noutput = "part1.h5"\n'))
    (submit / "whole.toml").write_text(
        experiment.format(slice='runs = 3\noutput = "whole.h5"\n'))
    (submit / "parts.txt").write_text("part0.toml\npart1.toml\n")
    status, log, seconds = sbatch(submit, "run_array.sh", ["--array=0-1", "--ntasks=1"], [],
                                  HPCSWARM_JOB_LIST="parts.txt")
    assert status == 0, log
    assert "array index 0 of 0-1: part0.toml" in log and "array index 1 of 0-1: part1.toml" in log
    print(f"sbatch of the 2-element array: {seconds:.1f} s")
    done = subprocess.run([sys.executable, "-m", "hpcswarm", "run", "whole.toml", "--quiet"],
                          cwd=submit, env=_environment(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    pooled = build_report([submit / "part0.h5", submit / "part1.h5"])
    whole = build_report([submit / "whole.h5"])
    assert [{k: v for k, v in row.items() if k != "file"} for row in pooled["rows"]] == \
        [{k: v for k, v in row.items() if k != "file"} for row in whole["rows"]]
    assert pooled["genes"][0]["top"] == whole["genes"][0]["top"]
    assert pooled["rows"][-1]["runs"] == 3
