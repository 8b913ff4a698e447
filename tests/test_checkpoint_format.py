"""A checkpoint holds plain data only (records and search states in their HDF5 encodings, no
pickle), resuming from it runs no unpickling, and an old checkpoint that pickled them is
refused unread with one line saying the job must restart."""

import os
import re
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
from hpcswarm.swarm.engine.statetree import decode_state, encode_state

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


def _state(**values):
    """A change of the snapshot's method state: ``values`` replace the search's."""
    return lambda snapshot, attributes: attributes["search"].update(values)


def _search(change):
    """A change of the snapshot's method state by ``change(state)`` (the search's dict)."""
    return lambda snapshot, attributes: change(attributes["search"])


def _swarm(name, change):
    """A change of the snapshot's swarm array ``name`` by ``change(array)`` (in place)."""
    return lambda snapshot, attributes: change(snapshot["arrays"][name])


def _top(**values):
    """A change of the snapshot's own fields (``iteration``, ``elapsed``)."""
    return lambda snapshot, attributes: snapshot.update(values)


def _both(*changes):
    return lambda snapshot, attributes: [change(snapshot, attributes) for change in changes]


def _rng_word(word, value):
    def change(states):
        states[0].view(np.uint64)[word] = value
    return change


def _longer_history(state):
    state["history"] = [dict(state["history"][-1], iteration=i) for i in range(51)]
    state["iteration"] = 50


def _swarm_rng_with_has_uint32(snapshot, attributes):
    rng = attributes["swarm_rng"]
    rng.bit_generator.state = {**rng.bit_generator.state, "has_uint32": 5}


def _item(key, index, value):
    """A change of the array at ``key`` (a path of names into the search's state) at
    ``index``."""
    def change(state):
        for name in key[:-1]:
            state = state[name]
        state[key[-1]][index] = value
    return change


IMPOSSIBLE_SNAPSHOTS = {
    "iteration-negative": ("cso", _both(_top(iteration=-1), _state(iteration=-1)),
                           r"method state 'iteration' holds values outside \[0, inf\]"),
    "iteration-past-the-last-round": (
        "cso", _both(_top(iteration=50), _search(_longer_history)),
        "iteration 50 is past the search's last round, 5"),
    "iteration-not-the-state's": ("cso", _top(iteration=1),
                                  "iteration 1 is not its method state's 2"),
    "iteration-not-an-integer": ("cso", _top(iteration=2.5),
                                 "iteration 2.5 is not its method state's 2"),
    "length-changes-negative": ("vlpso", _state(n_changes=-1), "'n_changes' holds values"),
    "elapsed-negative": ("cso", _top(elapsed=-1.0), "elapsed time -1.0 is not a finite"),
    "elapsed-nan": ("cso", _top(elapsed=float("nan")), "elapsed time nan is not a finite"),
    "best-fitness-nan": ("cso", _state(best_fitness=float("nan")),
                         "'best_fitness' holds values that are not finite"),
    "gbest-fitness-above-one": ("pso-lsrg", _state(gbest_fitness=1.5),
                                r"'gbest_fitness' holds values outside \[-2.0, 1.0\]"),
    "evaluations-negative": ("cso", _state(evaluations=-3), "'evaluations' holds values"),
    "best-found-after-the-evaluations": (
        "cso", _search(lambda s: s.update(best_found_at=s["evaluations"] + 1)),
        "'best_found_at' holds values outside"),
    "counter-as-text": ("cso", _state(archive_hits="3"), "'archive_hits' is a str, not a "
                                                        "number"),
    "stagnation-past-the-rounds": ("pso-lsrg", _state(stagnation=99),
                                   r"'stagnation' holds values outside \[0, 2\]"),
    "history-short": ("cso", _search(lambda s: s["history"].pop()),
                      "'history' is not a list of 3 rows"),
    "history-seconds-nan": ("cso", _search(lambda s: s["history"][0].update(seconds=np.nan)),
                            "'history' row 0 holds seconds = nan"),
    "history-seconds-infinite": (
        "cso", _search(lambda s: s["history"][1].update(seconds=np.inf)),
        "'history' row 1 holds seconds = inf"),
    "history-fitness-above-one": (
        "cso", _search(lambda s: s["history"][0].update(best_fitness=3.0)),
        "'history' row 0 holds best_fitness = 3.0"),
    "pbest-fitness-nan": ("cso", _swarm("pbest_fitness", lambda a: a.__setitem__(0, np.nan)),
                          "'pbest_fitness' holds values that are not finite"),
    "velocity-infinite": ("pso", _swarm("velocity", lambda a: a.__setitem__((0, 0), np.inf)),
                          "'velocity' holds values that are not finite"),
    "size-not-its-mask": ("cso", _swarm("size", lambda a: a.__setitem__(0, a[0] + 1)),
                          r"'size' holds \d+ for particle 0, whose 'mask' has \d+ genes"),
    "particle-generator-even-increment": (
        "cso", _swarm("rng_states", _rng_word(3, 2)), "an even increment"),
    "particle-generator-wide-uinteger": (
        "cso", _swarm("rng_states", _rng_word(5, 2**40)), "a buffered uinteger over 32 bits"),
    "swarm-generator-has-uint32": ("cso", _swarm_rng_with_has_uint32,
                                   "a generator state with has_uint32 = 5"),
    "archive-value-nan": ("cso", _search(_item(("archive", "values"), 0, np.nan)),
                          "archive values outside"),
    "archive-of-another-bound": ("cso", _search(lambda s: s["archive"].update(maxsize=10**6)),
                                 "an archive of 1000000 subsets"),
    "front-fitness-above-one": ("cso", _search(_item(("front", "fitness"), 0, 2.0)),
                                "front fitness values outside"),
    "front-size-not-its-subset": ("cso", _search(_item(("front", "sizes"), 0, 23)),
                                  "front sizes that are not the sizes of its subsets"),
    "greedy-size-not-its-mask": ("sfs", _search(lambda s: s.update(size=s["size"] + 1)),
                                 r"'size' \d+ is not the \d+ genes of 'mask'"),
    "greedy-path-past-the-genes": ("sfs", _search(lambda s: s["path"].__setitem__(0, 24)),
                                   "'path' holds values that are no gene index"),
    "greedy-unknown-stop": ("sfs", _state(stopped="out of patience"),
                            "'stopped' is 'out of patience', not one of"),
    "greedy-stop-not-text": ("sfs", _state(stopped=3), "'stopped' is 3, not one of"),
    "vlpso-exemplar-past-the-particles": ("vlpso", _search(_item(("exemplars",), (0, 0), 8)),
                                          r"'exemplars' holds values outside \[-1, 7\]"),
    "vlpso-learning-probability-above-one": ("vlpso", _search(_item(("pc",), 0, 1.5)),
                                             r"'pc' holds values outside \[0.0, 1.0\]"),
    "fsipso-phase-length-zero": ("fsipso", _state(phase_length=0),
                                 "'phase_length' holds values outside"),
    "fsipso-active-gene-past-the-genes": ("fsipso", _search(_item(("active",), 0, 24)),
                                          r"'active' holds values outside \[0, 23\]"),
    "sfr-limit-past-the-genes": ("sfr", _state(limit=25),
                                 r"'limit' holds values outside \[0, 24\]"),
    "cso-loser-past-the-swarm": ("cso", _search(_item(("last_losers",), 0, 99)),
                                 r"'last_losers' holds values outside \[0, \d+\]"),
    "cso-loser-negative": ("cso", _search(_item(("last_losers",), 0, -1)),
                           r"'last_losers' holds values outside \[0, \d+\]"),
    "fsr-subset-gene-past-the-genes": (
        "fsr", _search(lambda s: s["subsets"][0]["genes"].__setitem__(0, 24)),
        "'subsets' holds an entry that is not"),
    "fsr-subset-not-a-record": ("fsr", _search(lambda s: s["subsets"].__setitem__(0, 7)),
                                "'subsets' holds an entry that is not"),
    "fsr-subsets-not-a-list": ("fsr", _state(subsets=3), "'subsets' is a int, not a list"),
    "ranking-past-the-genes": ("lfs", _search(_item(("ranking",), 0, 24)),
                               r"'ranking' holds values outside \[0, 23\]"),
}
"""Values no search can hold at a round's end, each crafted in a real checkpoint: the method,
the change (of the snapshot and its decoded method state) and what the error says."""


def _crafted_snapshot(path, algorithm, change):
    X, y = small_data(3, 30, 24)
    snapshot = taken_at(X, y, algorithm, SMALL.get(algorithm, {}), 2, seed=7)
    attributes = decode_state(snapshot["method_state"])
    snapshot = {**snapshot, "arrays": {k: a.copy() for k, a in snapshot["arrays"].items()}}
    change(snapshot, attributes)
    snapshot["method_state"] = encode_state(attributes)
    tasks = [SimpleNamespace(number=n, run=0, fold=n) for n in range(2)]
    write_checkpoint(path, {"job": 1}, 2, {0: (tasks[0], record(0, 0), 3)},
                     {1: (tasks[1], snapshot)})
    return X, y


def _assert_damaged(caught, path, message):
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path}: damaged checkpoint: ")
    assert re.search(message, text), text
    assert text.endswith("start afresh with --overwrite (the work it holds is lost)")


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE_SNAPSHOTS))
def test_a_snapshot_holding_an_impossible_value_is_a_damaged_checkpoint(tmp_path, case):
    """Round counters, fitness values, counts, sizes, times, generator states, the archive
    and the front of a crafted snapshot are checked where it is restored: one line naming
    the file and the field, the checkpoint left as it was."""
    from hpcswarm.errors import DataError

    algorithm, change, message = IMPOSSIBLE_SNAPSHOTS[case]
    path = tmp_path / "job.checkpoint.h5"
    X, y = _crafted_snapshot(path, algorithm, change)
    before = path.read_bytes()
    with pytest.raises(DataError) as caught:  # on opening (rank 0 decodes it) or restoring
        checkpoint = Checkpoint(path, {"job": 1}, 2, read_all=True, n_genes=24, n_samples=30)
        try:
            run_search(X, y, algorithm, SMALL.get(algorithm, {}), seed=7,
                       resume=checkpoint.snapshot(1))
        finally:
            checkpoint.close()
    _assert_damaged(caught, path, message)
    assert path.read_bytes() == before


def _front_point(**values):
    return lambda r: replace(r, front=(replace(r.front[0], **values),) + r.front[1:])


IMPOSSIBLE_RECORDS = {
    "accuracy-above-one": (lambda r: replace(r, test_correct=6),
                           "test_correct = 6 of test_total = 5 is no accuracy in"),
    "count-negative": (lambda r: replace(r, baseline_correct=-1),
                       "baseline_correct = -1 of baseline_total = 5"),
    "train-fitness-nan": (lambda r: replace(r, train_fitness=float("nan")),
                          "train_fitness = nan is outside"),
    "gene-past-the-genes": (lambda r: replace(r, genes=np.array([1, 4, 24])),
                            r"selected_genes holds indices outside \[0, 24\)"),
    "gene-negative": (lambda r: replace(r, genes=np.array([-1, 4])),
                      "selected_genes holds indices outside"),
    "gene-twice": (lambda r: replace(r, genes=np.array([4, 4])),
                   "selected_genes holds an index twice"),
    "sample-past-the-samples": (lambda r: replace(r, test_index=np.array([10, 30])),
                                r"test_index holds indices outside \[0, 30\)"),
    "seconds-negative": (lambda r: replace(r, seconds=-1.0),
                         "seconds = -1.0 is not a finite number >= 0"),
    "history-infinite": (lambda r: replace(r, history=replace(
        r.history, values=np.where(r.history.values == 0, np.inf, r.history.values))),
        "history holds values that are not finite"),
    "front-fitness-nan": (_front_point(fitness=float("nan")),
                          "front point 0: train_fitness = nan"),
    "front-accuracy-above-one": (_front_point(train_correct=11),
                                 "front point 0: train_correct = 11 of train_total = 10"),
    "class-counts-above-their-totals": (
        lambda r: replace(r, test_class_correct=(3, 1)),
        r"test_class_correct = \[3, 1\] of test_class_total = \[2, 3\] are no counts"),
    "class-counts-not-adding-up": (
        lambda r: replace(r, test_class_correct=(1, 2)),
        r"test_class_correct = \[1, 2\] of test_class_total = \[2, 3\] are no counts of "
        r"test_correct = 4"),
    "baseline-class-counts-not-adding-up": (
        lambda r: replace(r, baseline_class_correct=(2, 2)),
        r"baseline_class_correct = \[2, 2\] of baseline_class_total = \[2, 3\] are no counts "
        r"of baseline_correct = 3"),
    "pca-class-counts-above-their-totals": (
        lambda r: replace(r, pca_class_correct=(3, 0)),
        r"pca_class_correct = \[3, 0\] of pca_class_total = \[2, 3\] are no counts"),
    "refined-class-counts-above-their-totals": (
        lambda r: replace(r, refined=replace(r.refined, test_class_correct=(4, 0))),
        r"refined test_class_correct = \[4, 0\] of test_class_total = \[2, 3\]"),
    "refined-gene-past-the-genes": (
        lambda r: replace(r, refined=replace(r.refined, genes=np.array([1, 40]))),
        r"refined_genes holds indices outside \[0, 24\)"),
}
"""Values no finished task can have, each crafted in a real checkpoint's record: the change
of the record and what the error says."""


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE_RECORDS))
def test_a_finished_record_holding_an_impossible_value_is_a_damaged_checkpoint(tmp_path,
                                                                               case):
    from hpcswarm.errors import DataError

    change, message = IMPOSSIBLE_RECORDS[case]
    path = tmp_path / "job.checkpoint.h5"
    tasks = [SimpleNamespace(number=n, run=0, fold=n) for n in range(2)]
    write_checkpoint(path, {"job": 1}, 2, {0: (tasks[0], change(record(0, 0)), 3)}, {})
    before = path.read_bytes()
    with pytest.raises(DataError) as caught:
        Checkpoint(path, {"job": 1}, 2, read_all=True, n_genes=24, n_samples=30)
    _assert_damaged(caught, path, "the record of finished task task-000000: " + message)
    assert path.read_bytes() == before


@pytest.mark.parametrize("change, stored, message", [
    ({"test_correct": 6}, {}, "test_correct = 6 of test_total = 5 is no accuracy"),
    ({"genes": np.array([1, 60])}, {}, "selected_genes holds indices outside [0, 60)"),
    ({}, {"test_balanced_accuracy": 1.5},
     "test_balanced_accuracy = 1.5 is no accuracy in [0, 1]"),
], ids=["accuracy-above-one", "gene-past-the-dataset", "stored-balanced-accuracy-above-one"])
def test_run_resume_refuses_an_impossible_finished_record_in_one_line(tmp_path, capsys, change,
                                                                      stored, message):
    """The plan gives the checkpoint the dataset's size: a record's gene index past it, as an
    accuracy above 1 (counted, or stored in the task's row), stops ``run --resume`` with one
    line, nothing written."""
    from hpcswarm.data import load_dataset
    from hpcswarm.data.sources import dataset_sha256
    from hpcswarm.run.checkpoint import CheckpointKeeper, checkpoint_identity
    from hpcswarm.run.jobfile import read_job
    from hpcswarm.run.plan import draw_tasks

    job_file = _write_job(tmp_path)
    output = tmp_path / "out.h5"
    job = read_job(job_file, [f"output={output}"])
    dataset = load_dataset(job.data)
    tasks, _ = draw_tasks(job, dataset.y)
    keeper = CheckpointKeeper(job.checkpoint,
                              checkpoint_identity(job, dataset_sha256(dataset)), tasks)
    keeper.done(0, replace(record(0, 0), **change), 0)
    for column, value in stored.items():
        _stored_figure_changed(job.checkpoint, column, value)
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "run", job_file, "--quiet", "--set", f"output={output}",
                             "--resume")
    assert_one_error(status, err, str(job.checkpoint), "damaged checkpoint",
                     "finished task task-000000", message, "--overwrite")
    assert folder_state(tmp_path) == before


STORED_FIGURES = {
    "balanced-accuracy-above-one": ("test_balanced_accuracy", 1.5,
                                    r"test_balanced_accuracy = 1.5 is no accuracy in \[0, 1\]"),
    "accuracy-not-its-counts": ("test_accuracy", 0.25,
                                r"test_accuracy = 0.25, but its counts give 0.8"),
    "size-not-its-genes": ("subset_size", 9, "subset_size = 9, but the task holds 4 genes"),
    "refined-balanced-accuracy-below-zero": (
        "refined_test_balanced_accuracy", -0.5,
        r"refined_test_balanced_accuracy = -0.5 is no accuracy in \[0, 1\]"),
}
"""Figures of a finished task's ``/tasks`` row that its counts contradict: the column, the
value written over it and what the error says."""


def _stored_figure_changed(path, column, value):
    with h5py.File(path, "r+") as f:
        f["finished/task-000000"].attrs[column] = value


@pytest.mark.parametrize("case", sorted(STORED_FIGURES))
def test_a_stored_figure_its_counts_contradict_is_a_damaged_checkpoint(tmp_path, case):
    from hpcswarm.errors import DataError

    column, value, message = STORED_FIGURES[case]
    path = tmp_path / "job.checkpoint.h5"
    tasks = [SimpleNamespace(number=n, run=0, fold=n) for n in range(2)]
    write_checkpoint(path, {"job": 1}, 2, {0: (tasks[0], record(0, 0), 3)}, {})
    _stored_figure_changed(path, column, value)
    before = path.read_bytes()
    with pytest.raises(DataError) as caught:
        Checkpoint(path, {"job": 1}, 2, read_all=True, n_genes=24, n_samples=30)
    _assert_damaged(caught, path, "the record of finished task task-000000: ")
    assert re.search(message, str(caught.value)), caught.value
    assert path.read_bytes() == before


def test_a_balanced_accuracy_not_counted_stays_legal(tmp_path):
    """NaN where no counts per class were kept (a record of an earlier version)."""
    path = tmp_path / "job.checkpoint.h5"
    tasks = [SimpleNamespace(number=n, run=0, fold=n) for n in range(2)]
    old = replace(record(0, 0), test_class_correct=(), test_class_total=())
    write_checkpoint(path, {"job": 1}, 2, {0: (tasks[0], old, 3)}, {})
    checkpoint = Checkpoint(path, {"job": 1}, 2, read_all=True, n_genes=24, n_samples=30)
    assert checkpoint.results()[0][0] == replace(old, group=3)
    checkpoint.close()
