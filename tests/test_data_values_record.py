"""The values check a writer records: trusted while the file is unchanged, else every value
is read again (run serially and under ``mpiexec -n 2 pytest -m mpi``)."""

import os
from pathlib import Path

import h5py
import numpy as np
import pytest

import hpcswarm.data.values as values
from hpcswarm.comm import world
from hpcswarm.data import Dataset, convert_file, load_dataset, open_dataset, write_dataset
from hpcswarm.data.hdf5 import MAX_ABS_ATTRIBUTE, SEAL_NS
from hpcswarm.errors import DataError

DATA = Path(__file__).parent / "data"


def _written(path, X):
    write_dataset(Dataset(X=X, y=np.arange(X.shape[0]) % 2, class_names=["a", "b"],
                          gene_names=[f"g{j}" for j in range(X.shape[1])]), path)
    return path


@pytest.fixture
def scans(monkeypatch):
    """The gene ranges :func:`values.scan_genes` is asked to read."""
    calls = []
    original = values.scan_genes
    monkeypatch.setattr(values, "scan_genes",
                        lambda X, Xg, a, b: calls.append((a, b)) or original(X, Xg, a, b))
    return calls


@pytest.mark.parametrize("scale", [1.0, 1e300, 1e-300])
def test_a_file_hpcswarm_wrote_is_not_read_again_and_its_record_is_the_scan(tmp_path, scans,
                                                                            scale):
    X = np.random.default_rng(0).normal(size=(7, 11)) * scale
    path = _written(tmp_path / "d.h5", X)
    dataset = open_dataset(path)
    assert scans == []
    reference = open_dataset(path, check_values=False)
    assert np.array_equal(reference.recorded_findings,
                          values.scan_genes(reference.X, reference.X_genes, 0, 11))
    reference.recorded_findings = None  # as another tool's file: scanned, the same dataset
    reference = values.checked(reference, str(path))
    assert scans == [(0, 11), (0, 11)]
    assert np.array_equal(np.asarray(dataset.X_genes), np.asarray(reference.X_genes))
    assert dataset.notes == reference.notes  # the same scaling (1e300, 1e-300) and note


def test_a_converted_file_is_not_read_again_and_conversions_stay_identical(tmp_path, scans):
    """The seal is the file's modification time, not its bytes: two conversions of one
    source are the same bytes."""
    first, second = tmp_path / "a.h5", tmp_path / "b.h5"
    convert_file(DATA / "good.csv", first)
    convert_file(DATA / "good.csv", second)
    assert first.read_bytes() == second.read_bytes()
    assert open_dataset(second).recorded_findings is not None and scans == []
    os.utime(first)  # touched: its time is now's
    n_genes = open_dataset(first).n_genes
    assert scans == [(0, n_genes)]


def test_a_file_changed_in_place_by_another_tool_is_read_again(tmp_path, scans):
    path = _written(tmp_path / "d.h5", np.random.default_rng(1).normal(size=(6, 9)))
    with h5py.File(path, "r+") as f:  # h5py writes: a later modification time
        f["X_genes"][4, 2] = 0.5
    with pytest.raises(DataError, match=r"'X_genes' is not the transpose .* gene 'g4'"):
        open_dataset(path)
    assert scans == [(0, 9)]


def test_a_file_without_the_whole_record_is_read_again(tmp_path, scans):
    """Another tool's file (no ``values-max-abs``), even with a sealed modification time:
    scanned; a NaN written by hpcswarm (``values-finite`` false): scanned and named."""
    path = _written(tmp_path / "d.h5", np.ones((4, 3)) * np.arange(4)[:, None])
    sealed = os.stat(path).st_mtime_ns
    assert sealed % 10**9 == SEAL_NS
    with h5py.File(path, "r+") as f:
        del f.attrs[MAX_ABS_ATTRIBUTE]
    os.utime(path, ns=(sealed, sealed))
    assert open_dataset(path).recorded_findings is None and scans == [(0, 3)]
    X = np.ones((4, 3)) * np.arange(4)[:, None]
    X[2, 1] = np.nan
    with pytest.raises(DataError, match=r"'X' holds NaN .* sample 3, gene 'g1'"):
        open_dataset(_written(tmp_path / "nan.h5", X))
    assert scans == [(0, 3), (0, 3)]


@pytest.mark.mpi
def test_every_rank_trusts_the_record_or_every_rank_scans(tmp_path_factory, scans):
    """Rank 0 without the record (as if its file had changed as it opened it): every rank
    scans its block, none waits for another."""
    with world() as comm:
        folder = comm.bcast(str(tmp_path_factory.mktemp("record")) if comm.rank == 0 else None)
        path = f"{folder}/d.h5"
        if comm.rank == 0:
            _written(path, np.random.default_rng(2).normal(size=(6, 8)))
        comm.barrier()
        load_dataset(path, comm)
        assert scans == []
        dataset = open_dataset(path, check_values=False)
        if comm.rank == 0:
            dataset.recorded_findings = None
        values.checked(dataset, path, comm)
        assert len(scans) == 1
