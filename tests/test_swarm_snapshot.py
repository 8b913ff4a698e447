"""A damaged snapshot of a swarm is refused with a DataError naming the array, before anything
is restored; the CLI then prints one line and exits 2."""

import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from search_snapshots import snapshot_at
from synthetic import SMALL, small_data
from test_checkpoint import _interrupt, _write_job
from test_mpi_jobs import SCRIPTS

from hpcswarm.errors import DataError
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.snapshot import SWARM_ARRAYS
from hpcswarm.swarm.engine.statetree import decode_state, encode_state


def _snapshot(algorithm, stop_at=1):
    """A snapshot of a small ``algorithm`` search at the end of round ``stop_at``."""
    X, y = small_data(3, 30, 24)
    return X, y, snapshot_at(X, y, algorithm, SMALL.get(algorithm, {}), stop_at, seed=7)


def _resume(X, y, algorithm, snapshot):
    return run_search(X, y, algorithm, SMALL.get(algorithm, {}), seed=7, resume=snapshot)


def _damaged(snapshot, name, change):
    arrays = dict(snapshot["arrays"])
    changed = change(arrays[name].copy())
    if changed is None:
        del arrays[name]
    else:
        arrays[name] = changed
    return {**snapshot, "arrays": arrays, "source": "run.checkpoint.h5"}


def _with_nan(array):
    array[0, 0] = np.nan
    return array


def _above_one(array):
    array[-1, -1] = 1.5
    return array


def _too_large(array):
    array[0] = 10**6
    return array


DAMAGES = {
    "truncated": ("position", lambda a: a[:-1],
                  r"'position' has shape \(\d+, 24\), expected \(\d+, 24\)"),
    "missing": ("velocity", lambda a: None, "'velocity' is missing"),
    "wrong dtype": ("pbest_position", lambda a: a.astype(np.float32),
                    "'pbest_position' has dtype float32"),
    "mask as numbers": ("mask", lambda a: a.astype(np.int8), "'mask' has dtype int8"),
    "not finite": ("velocity", _with_nan, "'velocity' holds values that are not finite"),
    "out of range": ("position", _above_one, r"'position' holds values outside \[0.0, 1.0\]"),
    "size over the genes": ("pbest_size", _too_large, r"'pbest_size' holds values outside"),
    "short generator state": ("rng_states", lambda a: a[:, :40], "'rng_states' has shape"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("algorithm", ["pso-lsrg", "cso"])
def test_a_damaged_swarm_array_is_refused_naming_it(algorithm, damage):
    name, change, message = DAMAGES[damage]
    X, y, snapshot = _snapshot(algorithm)
    with pytest.raises(DataError, match="^run.checkpoint.h5: damaged checkpoint: .*" + message):
        _resume(X, y, algorithm, _damaged(snapshot, name, change))


def test_every_swarm_array_of_a_snapshot_is_checked():
    X, y, snapshot = _snapshot("pso")
    assert set(snapshot["arrays"]) == set(SWARM_ARRAYS)
    for name in SWARM_ARRAYS:
        with pytest.raises(DataError, match=f"'{name}' is missing"):
            _resume(X, y, "pso", _damaged(snapshot, name, lambda a: None))


def test_an_intact_snapshot_still_resumes_with_a_nan_fitness():
    # a particle that could not matter keeps the fitness NaN (not scored): that is no damage
    X, y, snapshot = _snapshot("pso-lsrg")
    full = run_search(X, y, "pso-lsrg", SMALL["pso-lsrg"], seed=7)
    arrays = snapshot["arrays"]
    assert arrays["fitness"].dtype == np.float64
    assert _resume(X, y, "pso-lsrg", snapshot).fitness == full.fitness


def test_a_method_state_without_an_attribute_is_refused_naming_it():
    X, y, snapshot = _snapshot("pso-lsrg")
    attributes = decode_state(snapshot["method_state"])
    del attributes["search"]["gbest_position"]
    damaged = {**snapshot, "method_state": encode_state(attributes)}
    with pytest.raises(DataError, match="method state lacks 'gbest_position'"):
        _resume(X, y, "pso-lsrg", damaged)


def test_swarm_arrays_in_the_snapshot_of_a_method_without_a_swarm_are_refused():
    X, y, snapshot = _snapshot("pso-lsrg")
    X, y, sfr = _snapshot("sfr")
    with pytest.raises(DataError, match="are those of a swarm, but sfr keeps none"):
        _resume(X, y, "sfr", {**sfr, "arrays": snapshot["arrays"]})


@pytest.mark.slow
def test_the_cli_reports_a_damaged_checkpoint_array_in_one_line(tmp_path):
    job = _write_job(tmp_path)
    output = tmp_path / "out.h5"
    assert _interrupt(job, output, "sigterm", 9).returncode == 3
    checkpoint = tmp_path / "out.checkpoint.h5"
    with h5py.File(checkpoint, "r+") as f:
        name = next(iter(f["inflight"]))
        swarm = f["inflight"][name]
        truncated = swarm["velocity"][()][:-2]
        del swarm["velocity"]
        swarm.create_dataset("velocity", data=truncated)
    env = dict(os.environ, PYTHONPATH=str(SCRIPTS.parent.parent))
    done = subprocess.run([sys.executable, "-m", "hpcswarm", "run", str(job), "--quiet",
                           "--set", f"output={output}", "--resume", "--threads", "1"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hpcswarm: error: ")
    assert str(checkpoint) in lines[0] and "'velocity' has shape (6, 60)" in lines[0]
    assert not output.exists() and checkpoint.exists()


STATE_DAMAGES = {
    "gbest_position": ("pso-lsrg", lambda a: a[:-1], "'gbest_position' has shape"),
    "best_mask": ("pso-lsrg", lambda a: a.astype(float), "'best_mask' has dtype float64"),
    "mask": ("sfs", lambda a: a.astype(np.int64), "'mask' has dtype int64"),
    "order": ("sfr", lambda a: a + 100, r"'order' holds values outside \[0, 23\]"),
}


@pytest.mark.parametrize("name", sorted(STATE_DAMAGES))
def test_a_damaged_array_of_the_method_state_is_refused_naming_it(name):
    algorithm, change, message = STATE_DAMAGES[name]
    X, y, snapshot = _snapshot(algorithm, stop_at=0)
    attributes = decode_state(snapshot["method_state"])
    attributes["search"][name] = change(attributes["search"][name])
    damaged = {**snapshot, "method_state": encode_state(attributes)}
    with pytest.raises(DataError, match="damaged checkpoint: the snapshot's method state "
                                        + message):
        _resume(X, y, algorithm, damaged)


@pytest.mark.parametrize("part, key", [("archive", "keys"), ("front", "packed")])
def test_a_damaged_archive_or_front_of_the_method_state_is_refused(part, key):
    X, y, snapshot = _snapshot("cso")
    attributes = decode_state(snapshot["method_state"])
    attributes["search"][part][key] = attributes["search"][part][key][:, :-1]
    damaged = {**snapshot, "method_state": encode_state(attributes),
               "source": "run.checkpoint.h5"}
    with pytest.raises(DataError, match="^run.checkpoint.h5: damaged checkpoint: the "
                                        "snapshot's method state does not read back"):
        _resume(X, y, "cso", damaged)
