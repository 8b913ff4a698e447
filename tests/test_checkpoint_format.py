"""A checkpoint holds plain data only (records and search states in their HDF5 encodings, no
pickle), resuming from it runs no unpickling, and an old checkpoint that pickled them is
refused unread with one line saying the job must restart."""

import os
import pickle
from dataclasses import replace
from types import SimpleNamespace

import h5py
import numpy as np
import pytest

from cli_checks import assert_one_error, folder_state, run_cli
from search_snapshots import taken_at
from synthetic import SMALL, small_data
from test_checkpoint import _checkpoint_of, _front, _write_job
from test_records import record

from hpcswarm.run.checkpoint import Checkpoint, write_checkpoint
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.statetree import decode_state, encode_state

PICKLE_HEADERS = tuple(bytes([0x80, protocol, 0x95]) for protocol in (4, 5))
"""How a pickle of protocol 4 or 5 begins (PROTO, then a FRAME)."""


def _checkpoint(path, algorithm="cso"):
    """A checkpoint of one finished task and one running ``algorithm`` search (CSO keeps
    an archive, so its state holds every kind of value), and the data and snapshot."""
    X, y = small_data(3, 30, 24)
    snapshot = taken_at(X, y, algorithm, SMALL[algorithm], 2, seed=7)
    tasks = [SimpleNamespace(number=n, run=0, fold=n) for n in range(2)]
    write_checkpoint(path, {"job": 1}, 2, {0: (tasks[0], record(0, 0), 3)},
                     {1: (tasks[1], snapshot)})
    return X, y, snapshot


def test_a_checkpoint_holds_plain_tagged_data_and_no_pickle(tmp_path):
    path = tmp_path / "c.checkpoint.h5"
    _checkpoint(path)
    assert not any(header in path.read_bytes() for header in PICKLE_HEADERS)
    kinds = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            assert "encoding-type" in obj.attrs, name
            if isinstance(obj, h5py.Dataset):
                text = h5py.check_string_dtype(obj.dtype) is not None
                assert text or obj.dtype.kind in "biuf", (name, obj.dtype)
                kinds[name] = "text" if text else obj.dtype.kind
        f.visititems(visit)
    assert kinds["inflight/task-000001/method_state/tree"] == "text"
    assert {kind for name, kind in kinds.items() if "/method_state/arrays/" in name} == set("biuf")
    assert kinds["finished/task-000000/selected_genes"] == "i"


def test_resuming_a_checkpoint_unpickles_nothing_and_ends_as_the_uninterrupted_run(
        tmp_path, monkeypatch):
    path = tmp_path / "c.checkpoint.h5"
    X, y, _ = _checkpoint(path)

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint was unpickled")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    checkpoint = Checkpoint(path, {"job": 1}, 2, read_all=True)
    try:
        assert checkpoint.results() == {0: (replace(record(0, 0), group=3), 3)}
        snapshot = checkpoint.snapshot(1)
    finally:
        checkpoint.close()
    assert snapshot["source"] == str(path)
    resumed = run_search(X, y, "cso", SMALL["cso"], seed=7, resume=snapshot)
    full = run_search(X, y, "cso", SMALL["cso"], seed=7)
    assert np.array_equal(resumed.mask, full.mask) and resumed.fitness == full.fitness
    assert _front(resumed) == _front(full)


def test_the_method_state_of_every_kind_reads_back_with_its_types():
    rng = np.random.default_rng(5)
    rng.random(3)
    value = {"none": None, "flag": True, "count": 3, "big": 2**90, "name": "x",
             "float": 0.1, "negative_zero": -0.0, "nan": float("nan"), "inf": -np.inf,
             "numpy": np.float64(0.25), "numpy_int": np.int32(-4), "numpy_bool": np.bool_(1),
             "mask": np.array([True, False]), "genes": np.arange(3, dtype=np.int32),
             "rows": [{"iteration": 0, "value": 0.5}], "pair": (1, [2.5]),
             "seen": {b"\x01" * 16, b"\x02" * 16}, "empty": set(), "rng": rng}
    stored = encode_state(value)
    value["mask"][0] = False  # the stored state is a copy
    back = decode_state(stored)
    assert back["mask"].tolist() == [True, False]
    for key in ("none", "flag", "count", "big", "name", "float", "rows", "pair", "seen",
                "empty"):
        assert back[key] == value[key] and type(back[key]) is type(value[key]), key
    assert str(back["negative_zero"]) == "-0.0" and np.isnan(back["nan"])
    assert back["inf"] == -np.inf
    for key in ("numpy", "numpy_int", "numpy_bool"):
        assert back[key] == value[key] and type(back[key]) is type(value[key]), key
    assert back["genes"].dtype == np.int32 and back["genes"].tolist() == [0, 1, 2]
    assert back["rng"].random() == rng.random()


@pytest.mark.parametrize("value, where", [({"archive": object()}, "state.archive"),
                                          ({"keys": {1: 2}}, "state.keys"),
                                          ({"a": [np.array(["text"])]}, r"state.a\[0\]"),
                                          ({"s": {b"ab", b"abc"}}, "state.s")])
def test_a_value_a_snapshot_cannot_store_is_refused_naming_where_it_sits(value, where):
    with pytest.raises(TypeError, match=f"^{where}: "):
        encode_state(value)


@pytest.mark.parametrize("tree, message", [("{", "Expecting"),
                                           ('{"$array": 4}', "array 4 is missing"),
                                           ('{"$code": "os.system"}', "is not a node"),
                                           ('{"$pcg64": "00"}', "has 1 bytes")])
def test_a_damaged_method_state_does_not_read_back(tree, message):
    with pytest.raises(ValueError, match=message):
        decode_state({"tree": tree, "arrays": {}})


def test_an_old_pickled_checkpoint_is_refused_unread_saying_the_job_must_restart(
        tmp_path, capsys):
    from hpcswarm.run.jobfile import read_job

    job = _write_job(tmp_path)
    output = tmp_path / "out.h5"
    checkpoint = _checkpoint_of(read_job(job, [f"output={output}"]), tmp_path)
    marker = tmp_path / "unpickled"

    class Payload:
        def __reduce__(self):
            return os.mkdir, (str(marker),)

    with h5py.File(checkpoint, "r+") as f:  # as hpcswarm 0.1 wrote it: a pickled record
        f.attrs["encoding-version"] = "0.1.0"
        del f["finished/task-000000"]
        f["finished"].create_dataset("task-000000", data=np.frombuffer(
            pickle.dumps(Payload(), protocol=5), dtype=np.uint8))
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "run", job, "--quiet", "--set", f"output={output}",
                             "--resume")
    assert_one_error(status, err, str(checkpoint), "encoding-version '0.1.0'", "pickled",
                     "the job must restart", "--overwrite")
    assert not marker.exists() and folder_state(tmp_path) == before


@pytest.mark.parametrize("damage, message", [
    (lambda f: f.move("inflight/task-000001", "inflight/task-000002"),
     "'inflight/task-000002' names no task of this job"),
    (lambda f: f.move("inflight/task-000001", "inflight/task--00001"),
     "'inflight/task--00001' names no task of this job"),
    (lambda f: f.move("finished/task-000000", "finished/task-0"),
     "'finished/task-0' names no task of this job"),
    (lambda f: f.copy("inflight/task-000001", "finished/task-000001"),
     "task task-000001 is both finished and running"),
    (lambda f: (f.__delitem__("inflight"), f.create_dataset("inflight", data=[1, 2])),
     "'inflight' is not a group"),
], ids=["past-the-tasks", "negative", "unpadded", "finished-and-running", "not-a-group"])
def test_a_checkpoint_naming_tasks_the_job_has_not_is_damaged(tmp_path, damage, message):
    """A crafted checkpoint's task entries (past the job's tasks, negative, a task both
    finished and running, a dataset for the group) are one DataError, never an IndexError
    from deep inside the resume."""
    from hpcswarm.errors import DataError

    path = tmp_path / "job.checkpoint.h5"
    _checkpoint(path)
    with h5py.File(path, "r+") as f:
        damage(f)
    with pytest.raises(DataError, match="damaged checkpoint: its layout") as caught:
        Checkpoint(path, {"job": 1}, 2)
    assert message in str(caught.value) and "--overwrite" in str(caught.value)
