"""Faults from outside: a write that fails ("File too large" under a file-size limit, as a full
disk or a quota would) is one line naming the output and leaves nothing behind; SIGTERM (what
``scancel`` sends) during ``convert`` or a single search cleans up as Ctrl-C does."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from cli_checks import REPO

JOB = REPO / "jobs" / "cbpso-wine-biased.toml"
LIMITED = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["hpcswarm"] + sys.argv[2:]
runpy.run_module("hpcswarm", run_name="__main__")
"""


def _environment():
    launcher = ("PMI_", "PMIX_", "OMPI_", "MPI_", "SLURM_", "MV2_", "HYDRA_", "HYDI_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(launcher)}
    env["PYTHONPATH"] = str(REPO)
    return env


def _csv(path, n_samples, n_genes, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n_samples, n_genes))
    with open(path, "w") as handle:
        handle.write("sample,class," + ",".join(f"g{j}" for j in range(n_genes)) + "\n")
        for i, row in enumerate(values):
            handle.write(f"s{i},{'AB'[i % 2]}," + ",".join(f"{v:.5f}" for v in row) + "\n")
    return path


def _limited(tmp_path, limit, *argv):
    script = tmp_path / "limited.py"
    script.write_text(LIMITED)
    return subprocess.run([sys.executable, str(script), str(limit), *map(str, argv)],
                          env=_environment(), cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)


def _one_line(done, *fragments):
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("hpcswarm: error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return _csv(tmp_path_factory.mktemp("source") / "in.csv", 60, 200)


@pytest.mark.parametrize("limit", [2_000, 60_000, 150_000])
def test_convert_past_a_file_size_limit_is_one_line(source, tmp_path, limit):
    """The limit cuts the HDF5 metadata, the matrices, or the last flush at close."""
    done = _limited(tmp_path, limit, "convert", source, tmp_path / "out.h5")
    _one_line(done, f"{tmp_path / 'out.h5'}: cannot write (File too large)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["limited.py"]


@pytest.mark.parametrize("option", ["--json", "--markdown", "--genes"])
def test_report_past_a_file_size_limit_is_one_line(tmp_path, option):
    run = subprocess.run([sys.executable, "-m", "hpcswarm", "run", str(JOB), "--quiet",
                          "--set", f"output={tmp_path / 'r.h5'}", "--set", "runs=1",
                          "--set", "params.n_iterations=2", "--set", "params.n_particles=4"],
                         env=_environment(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    before = sorted(p.name for p in tmp_path.iterdir())
    done = _limited(tmp_path, 10, "report", tmp_path / "r.h5", option, tmp_path / "out.txt")
    assert f"{tmp_path / 'out.txt'}: cannot write (File too large)" in done.stderr
    assert "Traceback" not in done.stderr and done.returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["limited.py"])


def _terminate_when_writing(command, folder, pattern):
    """Start ``command``, send SIGTERM as soon as a file matching ``pattern`` appears in
    ``folder`` (the write is under way), and return the finished process."""
    process = subprocess.Popen(command, env=_environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not list(folder.glob(pattern)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    return process.returncode, err


def test_sigterm_during_convert_removes_its_temporary_files(tmp_path):
    # Large enough that the conversion is still writing when the signal comes, on a loaded
    # machine too (at 400 samples the signal could arrive after the output was complete).
    source = _csv(tmp_path / "big.csv", 1200, 3000, seed=1)
    out = tmp_path / "out"
    out.mkdir()
    status, err = _terminate_when_writing(
        [sys.executable, "-m", "hpcswarm", "convert", str(source), str(out / "d.h5")],
        out, ".*")
    assert status == 143, err
    assert err.strip().splitlines() == ["hpcswarm: error: stopped by SIGTERM; no output was "
                                        "left half-written"]
    assert list(out.iterdir()) == []


def test_sigterm_during_a_single_search_leaves_no_output(tmp_path):
    output = tmp_path / "search.json"
    process = subprocess.Popen([sys.executable, "-m", "hpcswarm", "run", "--data",
                                "builtin:srbct", "--algorithm", "bpso", "--param",
                                "n_iterations=100000", "--output", str(output)],
                               env=_environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    time.sleep(8)  # started, searching
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 143, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
