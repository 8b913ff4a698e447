"""``convert``, ``info``, ``evaluate`` and ``report`` under ``mpiexec -n 2``: world rank 0 alone
reads and writes, its output is printed once, and an error is printed once with every rank
exiting with status 2.

These tests launch ``mpiexec`` themselves, so they belong to the serial pass of ``make test``.
"""

import json

import pytest

from cli_checks import MPIEXEC, REPO, assert_one_error, folder_state, run_cli, run_subprocess

pytestmark = pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")

GOOD = REPO / "tests" / "data" / "good.csv"
MALFORMED = REPO / "tests" / "data" / "malformed"
JOB = REPO / "jobs" / "cbpso-wine-biased.toml"


def test_convert_writes_once(tmp_path):
    done = run_subprocess("convert", GOOD, tmp_path / "out.h5", ranks=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("converted ") == 1
    assert done.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5"]


@pytest.mark.slow
def test_convert_error_prints_once(tmp_path):
    done = run_subprocess("convert", MALFORMED / "ragged.csv", tmp_path / "out.h5", ranks=2)
    assert_one_error(done.returncode, done.stderr, "ragged.csv", "line 3")
    assert list(tmp_path.iterdir()) == []


def test_convert_onto_an_existing_output_prints_once(tmp_path):
    (tmp_path / "out.h5").write_bytes(b"precious")
    before = folder_state(tmp_path)
    done = run_subprocess("convert", GOOD, tmp_path / "out.h5", ranks=2)
    assert_one_error(done.returncode, done.stderr, "out.h5: already exists", "--overwrite")
    assert folder_state(tmp_path) == before


@pytest.mark.slow
def test_info_and_evaluate_print_once(tmp_path, capsys):
    for argv in (["info", "builtin:srbct"], ["evaluate", "builtin:srbct", "--all"]):
        serial = run_cli(capsys, *argv)
        done = run_subprocess(*argv, ranks=2, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == serial[1]
    assert json.loads(done.stdout)["correct"] == 76  # SRBCT all genes, 1-NN LOOCV
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, fragments", [
    (["info", "missing.h5"], ["missing.h5: no such file"]),
    (["evaluate", "builtin:srbct", "--genes", "missing.txt"], ["missing.txt: no such file"]),
    (["evaluate", "builtin:srbct", "--all", "--cv", "1"], ["argument --cv"]),
    (["report", "missing.h5"], ["missing.h5: no such results file"]),
])
def test_an_error_prints_once(tmp_path, argv, fragments):
    done = run_subprocess(*argv, ranks=2, cwd=tmp_path)
    assert_one_error(done.returncode, done.stderr, *fragments)
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_report_writes_once(tmp_path, capsys):
    argv = ["run", JOB, "--set", f"output={tmp_path / 'res.h5'}"]
    for item in ("runs=2", "params.n_iterations=2", "params.n_particles=4"):
        argv += ["--set", item]
    status, _, err = run_cli(capsys, *argv)
    assert status == 0, err
    done = run_subprocess("report", tmp_path / "res.h5", "--json", tmp_path / "report.json",
                          ranks=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Accuracy (%) over runs") == 1
    assert done.stdout.count("wrote ") == 1
    assert json.loads((tmp_path / "report.json").read_text())["rows"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
