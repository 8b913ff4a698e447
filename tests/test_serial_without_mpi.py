"""Serial commands never start MPI: outside ``mpiexec``/``srun`` they work where MPI cannot
start (here: importing mpi4py fails), and ``--help`` loads neither MPI nor the engine."""

import os
import subprocess
import sys

import pytest

from cli_checks import REPO
from hpcswarm.comm import launched_by_mpi

JOB = REPO / "jobs" / "cbpso-wine-biased.toml"
CSV = "sample,class,g0,g1,g2\n" + "".join(f"s{i},{'AB'[i % 2]},{i % 7},{i % 3},{i * i % 5}\n"
                                          for i in range(12))
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "OMPI_", "MPI_", "SLURM_", "MV2_", "HYDRA_", "HYDI_")


def _environment(shim=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (shim, REPO) if p is not None)
    return env


@pytest.fixture(scope="module")
def no_mpi(tmp_path_factory):
    """An environment in which ``import mpi4py`` raises, as MPI that cannot start would."""
    shim = tmp_path_factory.mktemp("shim")
    (shim / "mpi4py").mkdir()
    (shim / "mpi4py" / "__init__.py").write_text(
        'raise ImportError("test shim: MPI cannot start on this machine")\n')
    return _environment(shim)


def _hpcswarm(env, *argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "hpcswarm", *map(str, argv)], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_every_serial_command_works_where_mpi_cannot_start(no_mpi, tmp_path):
    (tmp_path / "in.csv").write_text(CSV)
    for argv in (["--version"], ["--help"], ["convert", "in.csv", "d.h5"], ["info", "d.h5"],
                 ["evaluate", "d.h5", "--all", "--cv", "3"],
                 ["run", JOB, "--quiet", "--set", "output=r.h5", "--set", "runs=1",
                  "--set", "params.n_iterations=2", "--set", "params.n_particles=4"],
                 ["report", "r.h5", "--json", "report.json"]):
        done = _hpcswarm(no_mpi, *argv, cwd=tmp_path)
        assert done.returncode == 0, (argv, done.stderr)
        assert "MPI" not in done.stderr, (argv, done.stderr)
    assert {"d.h5", "r.h5", "report.json"} <= {p.name for p in tmp_path.iterdir()}


def test_a_user_error_is_still_one_line_without_mpi(no_mpi, tmp_path):
    done = _hpcswarm(no_mpi, "info", tmp_path / "missing.h5")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"hpcswarm: error: {tmp_path / 'missing.h5'}: "
                                                "no such file"]


@pytest.mark.parametrize("command", [[], ["convert"], ["run"], ["report"], ["evaluate"]])
def test_help_loads_neither_mpi_nor_the_engine(command):
    code = ("import sys\nfrom hpcswarm.__main__ import main\n"
            f"try:\n    main({command + ['--help']!r})\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'mpi4py', 'numba', 'sklearn'}), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], env=_environment(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("environ, launched", [
    ({}, False),
    ({"PMI_RANK": "0", "PMI_SIZE": "2"}, True),           # MPICH's mpiexec
    ({"PMI_SIZE": "1", "PMI_RANK": "0"}, True),           # mpiexec -n 1 is still MPI
    ({"OMPI_COMM_WORLD_SIZE": "4"}, True),                # Open MPI's mpirun
    ({"PMIX_RANK": "0"}, True),                           # a PMIx launcher
    ({"MPI_LOCALNRANKS": "2"}, True),                     # Hydra
    ({"SLURM_STEP_ID": "0", "SLURM_NTASKS": "4", "SLURM_PROCID": "1"}, True),  # srun -n 4
    ({"SLURM_STEP_ID": "0", "SLURM_NTASKS": "1", "SLURM_PROCID": "0"}, False),  # srun -n 1
    ({"SLURM_NTASKS": "8", "SLURM_PROCID": "0"}, False),  # the batch script, not a step
])
def test_launch_is_read_from_the_environment(environ, launched):
    assert launched_by_mpi(environ) is launched


def test_the_data_layer_loads_neither_the_engine_nor_mpi_nor_the_job():
    code = ("import sys\nimport hpcswarm.data, hpcswarm.data.formats, hpcswarm.data.build\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mpi4py', 'numba', "
            "'sklearn') or m in ('hpcswarm.fitness', 'hpcswarm.run.preflight', 'hpcswarm.run.job')))")
    done = subprocess.run([sys.executable, "-c", code], env=_environment(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
