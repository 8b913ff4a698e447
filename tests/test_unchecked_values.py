"""Values that used to reach the engine unchecked, from HDF5 files written by another tool: NaN
or infinite values, and a single class. ``evaluate``, ``info`` and a job refuse them with one
line naming the file, before any computation, leaving the folder as it was."""

import h5py
import numpy as np
import pytest

from cli_checks import REPO, assert_one_error, folder_state, run_cli

JOB = REPO / "jobs" / "cbpso-wine-biased.toml"
TINY = ["runs=1", "params.n_iterations=2", "params.n_particles=4"]


@pytest.fixture
def dataset(tmp_path, capsys):
    """A valid 20 x 6 hpcswarm dataset converted from a CSV (the CSV is removed)."""
    rng = np.random.default_rng(7)
    lines = ["sample,class," + ",".join(f"g{j}" for j in range(6))]
    for i in range(20):
        lines.append(f"s{i},{'AB'[i % 2]}," + ",".join(f"{v:.3f}" for v in rng.normal(size=6)))
    (tmp_path / "source.csv").write_text("\n".join(lines) + "\n")
    status, _, err = run_cli(capsys, "convert", tmp_path / "source.csv", tmp_path / "data.h5")
    assert status == 0, err
    (tmp_path / "source.csv").unlink()
    return tmp_path / "data.h5"


def _poison(path, value):
    """Write ``value`` into X and X_genes the way another tool could (h5py in place)."""
    with h5py.File(path, "r+") as f:
        f["X"][3, 2] = value
        f["X_genes"][2, 3] = value


def _single_class(path):
    with h5py.File(path, "r+") as f:
        f["y"][...] = 0


def _job(path, output):
    argv = ["run", JOB, "--set", f"data={path}", "--set", f"output={output}"]
    for item in TINY:
        argv += ["--set", item]
    return argv


@pytest.mark.parametrize("value", [np.nan, np.inf])
@pytest.mark.parametrize("command", ["evaluate", "info", "job"])
def test_a_nonfinite_value_is_named_with_the_file(dataset, capsys, value, command):
    _poison(dataset, value)
    folder = dataset.parent
    before = folder_state(folder)
    if command == "job":
        argv = _job(dataset, folder / "out.h5")
    else:
        argv = [command, dataset] + (["--all"] if command == "evaluate" else [])
    status, out, err = run_cli(capsys, *argv)
    assert_one_error(status, err, str(dataset), "'X' holds NaN or infinite values",
                     "sample 's3', gene 'g2'", "--nan")
    assert folder_state(folder) == before  # no results, no progress file, no checkpoint


@pytest.mark.parametrize("command", ["evaluate", "job"])
def test_a_single_class_is_refused_before_any_computation(dataset, capsys, command):
    _single_class(dataset)
    folder = dataset.parent
    before = folder_state(folder)
    argv = _job(dataset, folder / "out.h5") if command == "job" else ["evaluate", dataset, "--all"]
    status, out, err = run_cli(capsys, *argv)
    assert_one_error(status, err, str(dataset), "a single class ('A', 20 samples)")
    assert out == ""
    assert folder_state(folder) == before
