"""Typed records: their JSON and HDF5 encodings round-trip, and reading results is light."""

import json
import subprocess
import sys
from dataclasses import replace

import h5py
import numpy as np
import pytest

from hpcswarm.results.files import REFINED_COLUMNS, TASK_COLUMNS, task_table
from hpcswarm.store.records import (HISTORY_FIELDS, FrontPoint, History, RefinedSubset, TaskRecord,
                              read_front)

ENGINE = ("numba", "sklearn", "hpcswarm.selection.search", "hpcswarm.swarm", "hpcswarm.fitness",
          "hpcswarm.run.protocols", "hpcswarm.data")


@pytest.mark.parametrize("module", ["hpcswarm.store.records", "hpcswarm.results.files", "hpcswarm.results.report"])
def test_reading_results_loads_no_engine(module):
    """Importing a reader of results (in a fresh interpreter) loads neither numba nor
    scikit-learn, nor the search, the swarm, the fitness engine or the data readers."""
    code = (f"import sys, {module}\n"
            f"print('\\n'.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                            text=True).stdout.split()
    heavy = [name for name in loaded
             if any(name == root or name.startswith(root + ".") for root in ENGINE)]
    assert heavy == []


def record(run=0, fold=1, refined=True):
    rows = [{k: float(i + j) for j, k in enumerate(HISTORY_FIELDS)} for i in range(3)]
    front = (FrontPoint(np.array([4], dtype=np.int64), 0.8, 8, 10, 3, 5),
             FrontPoint(np.array([1, 4, 7], dtype=np.int64), 0.9, 9, 10, 4, 5))
    return TaskRecord(
        run=run, fold=fold, spawn_key=(run, 1, fold), genes=np.array([1, 4, 7, 9]),
        train_fitness=0.9, train_correct=9, train_total=10, test_correct=4, test_total=5,
        baseline_correct=3, baseline_total=5, pca_correct=2, pca_total=5, pca_components=3.0,
        evaluations=120, archive_hits=30, seconds=1.5, history=History.from_rows(rows),
        extra={"score": {"correct": 9, "total": 10, "accuracy": 0.9}}, front=front,
        refined=(RefinedSubset("prune", np.array([1, 4]), np.array([7, 9]), 9, 10, 4, 5,
                               test_class_correct=(1, 3), test_class_total=(2, 3))
                 if refined else None),
        train_index=np.arange(10), test_index=np.arange(10, 15),
        preprocessing=[{"step": "zscore"}], group=2, test_class_correct=(2, 2),
        test_class_total=(2, 3))


def test_json_encoding_round_trips():
    original = record()
    text = json.dumps(original.as_json())
    assert TaskRecord.from_json(json.loads(text)) == original
    without = record(refined=False)
    assert TaskRecord.from_json(without.as_json()) == without


def test_records_compare_field_by_field():
    assert record() == record()
    assert record() != replace(record(), genes=np.array([1, 4, 7, 8]))
    assert record() != replace(record(), front=record().front[:1])
    assert record().history.without("seconds").columns == HISTORY_FIELDS[:-1]


def test_hdf5_encoding_round_trips(tmp_path):
    """A task's group (and its row of the task table) reads back as the same record."""
    original = record()
    with h5py.File(tmp_path / "r.h5", "w") as f:
        group = original.to_hdf5(f.create_group("runs"))
        row = {column: values[0] for column, values in task_table([original]).items()}
        assert set(row) == set(TASK_COLUMNS) | set(REFINED_COLUMNS)
        back = TaskRecord.from_hdf5(group, row, refine="prune")
        assert [p.size for p in read_front(group)] == [1, 3]
    assert back == original


def test_the_test_balanced_accuracy_is_kept_per_task_and_refined_subset():
    original = record()
    assert original.test_balanced_accuracy == (2 / 2 + 2 / 3) / 2
    assert original.refined.test_balanced_accuracy == (1 / 2 + 3 / 3) / 2
    table = task_table([original, replace(original, test_class_correct=(),
                                          test_class_total=())])
    assert table["test_balanced_accuracy"][0] == original.test_balanced_accuracy
    assert np.isnan(table["test_balanced_accuracy"][1])  # not counted: blank, not an error
    assert table["refined_test_balanced_accuracy"][0] == original.refined.test_balanced_accuracy


def test_a_task_written_before_the_counts_per_class_reads_them_as_absent(tmp_path):
    """A task group and table row of encoding-version 0.1.0 (no counts per class, no
    balanced accuracy column) read as a record without them."""
    original = record()
    with h5py.File(tmp_path / "r.h5", "w") as f:
        group = original.to_hdf5(f.create_group("runs"))
        for name in ("test_class_correct", "test_class_total", "refined_test_class_correct",
                     "refined_test_class_total"):
            del group[name]
        group.attrs["encoding-version"] = "0.1.0"
        row = {column: values[0] for column, values in task_table([original]).items()
               if "balanced" not in column}
        back = TaskRecord.from_hdf5(group, row, refine="prune")
    assert back.test_balanced_accuracy is None and back.refined.test_balanced_accuracy is None
    assert back == replace(original, test_class_correct=(), test_class_total=(),
                           refined=replace(original.refined, test_class_correct=(),
                                           test_class_total=()))
    old_json = {k: v for k, v in original.as_json().items() if not k.startswith("test_class")}
    assert TaskRecord.from_json(old_json).test_balanced_accuracy is None
