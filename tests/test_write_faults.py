"""Faults while writing: a full disk during ``convert``, a job's results or checkpoint write and
``report --json``; a process killed in the middle of a write; a damaged checkpoint.

Each ends with one ``hpcswarm: error:`` line naming the file, exit status 2, its own temporary
file removed and every earlier file as it was (the previous checkpoint whole). The disk-full
cases run on a small tmpfs mounted for the test (root only: they skip, with the reason, where
mounting is not allowed); the same paths are also exercised everywhere by making the writer's
flush fail (``ENOSPC``) without a real full disk.
"""

import errno
import os
import shutil
import signal
import subprocess
import sys

import h5py
import pytest

from hpcswarm.store import atomic
from hpcswarm.data import Dataset, write_dataset

from cli_checks import REPO, assert_one_error, folder_state, run_cli
from synthetic import small_data

GOOD = REPO / "tests" / "data" / "good.csv"
WINE_JOB = REPO / "jobs" / "cbpso-wine-biased.toml"
TINY = ["runs=2", "params.n_iterations=2", "params.n_particles=4"]
SCRIPTS = REPO / "tests" / "mpi_scripts"


@pytest.fixture
def disk(tmp_path):
    """A 4 MB tmpfs mounted for the test (unmounted after it)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip() or 'not root'}); "
                    "the tests with a failing flush cover the same code")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder, leave=0):
    """Grow ``folder/filler`` until its file system is full, then give ``leave`` bytes back."""
    handle = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    block = 1 << 16
    try:
        while block:
            try:
                os.write(handle, b"\0" * block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                block //= 2
        os.ftruncate(handle, max(0, os.fstat(handle).st_size - leave))
    finally:
        os.close(handle)


@pytest.fixture
def flush_fails(monkeypatch):
    """Every write through the one atomic writer fails at its flush as on a full disk."""
    def full(handle):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)


def _wine_job(output, *sets):
    argv = ["run", WINE_JOB, "--quiet", "--set", f"output={output}"]
    for item in TINY + list(sets):
        argv += ["--set", item]
    return argv


@pytest.fixture
def results(tmp_path, capsys):
    """res.h5 of a small job, in a folder of its own."""
    folder = tmp_path / "results"
    folder.mkdir()
    status, _, err = run_cli(capsys, *_wine_job(folder / "res.h5"))
    assert status == 0, err
    return folder / "res.h5"


def _no_temporaries(folder):
    return not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


# ------------------------------------------------------------------ convert
def test_convert_on_a_full_disk(disk, capsys):
    fill(disk)
    before = folder_state(disk)
    status, out, err = run_cli(capsys, "convert", GOOD, disk / "out.h5")
    assert_one_error(status, err, "out.h5", "No space left on device")
    assert folder_state(disk) == before


def test_convert_overwrite_on_a_full_disk_keeps_the_old_output(disk, capsys):
    status, _, _ = run_cli(capsys, "convert", GOOD, disk / "out.h5")
    assert status == 0
    fill(disk)
    before = folder_state(disk)
    status, _, err = run_cli(capsys, "convert", GOOD, disk / "out.h5", "--overwrite",
                             "--dtype", "float32")
    assert_one_error(status, err, "out.h5", "No space left on device")
    assert folder_state(disk) == before


def test_convert_with_a_failing_flush(tmp_path, capsys, flush_fails):
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "convert", GOOD, tmp_path / "out.h5")
    assert_one_error(status, err, "out.h5", "No space left on device")
    assert folder_state(tmp_path) == before


# ------------------------------------------------------------------ report
@pytest.mark.parametrize("option, target", [("--json", "r.json"), ("--markdown", "r.md"),
                                            ("--csv", ".")])
def test_report_on_a_full_disk(disk, capsys, results, option, target):
    fill(disk)
    before = folder_state(disk)
    status, out, err = run_cli(capsys, "report", results, option, disk / target)
    assert_one_error(status, err, str(disk), "No space left on device")
    assert folder_state(disk) == before


def test_report_json_with_a_failing_flush(tmp_path, capsys, results, flush_fails):
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "report", results, "--json", tmp_path / "r.json")
    assert_one_error(status, err, "r.json", "No space left on device")
    assert folder_state(tmp_path) == before


# ------------------------------------------------------------------ a job's results
def test_results_write_on_a_full_disk_keeps_the_checkpoint(disk, tmp_path, capsys):
    checkpoint = tmp_path / "kept.checkpoint.h5"
    fill(disk, leave=8192)  # room for the progress file, not for the results
    status, _, err = run_cli(capsys, *_wine_job(disk / "res.h5", f"checkpoint={checkpoint}"))
    assert_one_error(status, err, "res.h5", "No space left on device")
    assert not (disk / "res.h5").exists() and _no_temporaries(disk)
    with h5py.File(checkpoint, "r") as f:  # every finished task is kept for --resume
        assert len(f["finished"]) == 2
    (disk / "filler").unlink()
    status, _, err = run_cli(capsys, *_wine_job(disk / "res.h5", f"checkpoint={checkpoint}"),
                             "--resume")
    assert status == 0, err
    assert (disk / "res.h5").exists() and not checkpoint.exists()


def test_results_write_with_a_failing_flush(tmp_path, capsys, flush_fails):
    status, _, err = run_cli(capsys, *_wine_job(tmp_path / "res.h5"))
    assert_one_error(status, err, "No space left on device")
    assert not (tmp_path / "res.h5").exists() and _no_temporaries(tmp_path)


# ------------------------------------------------------------------ checkpoints
def _small_job(folder, checkpoint):
    """A job on small synthetic data that checkpoints every round."""
    X, y = small_data(5, 36, 60)
    data = folder / "data.h5"
    write_dataset(Dataset(X=X, y=y, class_names=["a", "b", "c"],
                          gene_names=[f"g{i}" for i in range(X.shape[1])]), data)
    job = folder / "job.toml"
    job.write_text("\n".join([
        f'data = "{data}"', 'algorithm = "pso-lsrg"', 'protocol = "unbiased"', "folds = 3",
        "runs = 1", "seed = 11", "checkpoint_every = 1", "checkpoint_seconds = 0",
        f'output = "{folder / "out.h5"}"', f'checkpoint = "{checkpoint}"',
        "[params]", "n_particles = 6", "n_iterations = 8", "ls_tries = 4"]))
    return job


def _interrupt(job, mode, n):
    """Run the job until world rank 0's n-th snapshot (``sigterm``) or checkpoint write
    (``crash-in-write``: killed before the rename; ``crash-after-write``: after it)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(SCRIPTS / "interrupt_job.py"), mode, str(n), "0",
                           "--", str(job), "--quiet", "--threads", "1"],
                          capture_output=True, text=True, timeout=300, env=env)


def test_checkpoint_write_on_a_full_disk_keeps_the_previous_one(disk, tmp_path, capsys):
    job = _small_job(tmp_path, disk / "job.checkpoint.h5")
    assert _interrupt(job, "sigterm", 2).returncode == 3
    assert (disk / "job.checkpoint.h5").exists()
    fill(disk)
    before = folder_state(disk)
    status, _, err = run_cli(capsys, "run", job, "--quiet", "--resume")
    assert_one_error(status, err, "job.checkpoint.h5", "No space left on device")
    assert folder_state(disk) == before  # the previous checkpoint is whole and unchanged
    (disk / "filler").unlink()
    status, _, err = run_cli(capsys, "run", job, "--quiet", "--resume")
    assert status == 0, err


def test_a_killed_write_leaves_a_temporary_the_next_run_removes(tmp_path, capsys):
    checkpoint = tmp_path / "job.checkpoint.h5"
    job = _small_job(tmp_path, checkpoint)
    done = _interrupt(job, "crash-in-write", 3)
    assert done.returncode == 9, done.stderr
    stale = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1 and stale[0].name.startswith(".job.checkpoint.h5.")
    status, out, err = run_cli(capsys, "run", job, "--quiet", "--resume")
    assert status == 0, err
    assert f"removed {stale[0].name}" in out + err and "interrupted write" in out + err
    assert _no_temporaries(tmp_path)
    assert (tmp_path / "out.h5").exists() and not checkpoint.exists()


def test_a_killed_convert_leaves_a_temporary_the_next_convert_removes(tmp_path, capsys):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = atomic.temporary_path(tmp_path / "out.h5")
    stale = stale.with_name(stale.name.replace(f"-{os.getpid()}-", f"-{gone.stdout.strip()}-"))
    stale.write_bytes(b"\x89HDF\r\n\x1a\n half a file")
    status, out, err = run_cli(capsys, "convert", GOOD, tmp_path / "out.h5")
    assert status == 0, err
    assert f"removed {stale.name}" in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5"]


def test_a_live_writers_temporary_is_left_alone(tmp_path, capsys):
    busy = atomic.temporary_path(tmp_path / "out.h5")  # this process is alive
    busy.write_bytes(b"being written")
    status, out, err = run_cli(capsys, "convert", GOOD, tmp_path / "out.h5")
    assert status == 0, err
    assert busy.read_bytes() == b"being written"


def test_a_damaged_checkpoint_points_to_overwrite(tmp_path, capsys):
    checkpoint = tmp_path / "job.checkpoint.h5"
    job = _small_job(tmp_path, checkpoint)
    assert _interrupt(job, "crash-after-write", 12).returncode == 9
    with h5py.File(checkpoint, "r+") as f:
        assert len(f["finished"]) >= 1
        record = f["finished"][sorted(f["finished"])[0]]
        del record["selected_genes"]
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "run", job, "--quiet", "--resume")
    assert_one_error(status, err, "job.checkpoint.h5", "damaged", "--overwrite")
    assert folder_state(tmp_path) == before
    status, _, err = run_cli(capsys, "run", job, "--quiet", "--overwrite")
    assert status == 0, err


def test_a_conversions_scratch_copy_has_no_name_a_killed_process_could_leave(tmp_path):
    """The scratch copy of a conversion that drops genes or samples (a copy of the whole
    matrix) lives in a file without a name in the output's folder: nothing to leave behind
    when the process is killed."""
    import numpy as np

    from hpcswarm.data.build import file_stage

    with file_stage(tmp_path, 3) as stage:
        stage.put(0, np.arange(6.0).reshape(2, 3))
        assert list(tmp_path.iterdir()) == []
        assert [block.tolist() for _, block in stage.blocks()] == [[[0, 1, 2], [3, 4, 5]]]
    assert list(tmp_path.iterdir()) == []
