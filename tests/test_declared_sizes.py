"""A hostile file is one error line, never a crash: arrays whose declared size no file of
ours can have are refused before they are read, JSON nested beyond reason is refused before
it is parsed, and a damaged sparse AnnData matrix is refused before any library sees it, with
nothing written and no temporary file left behind.

Every hostile file is small: HDF5 lets a chunked dataset of which no chunk was written declare
any shape (here 10^12 elements), and a JSON attribute of 200 KB nests 100,000 deep."""

import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

from cli_checks import REPO, assert_one_error, folder_state, run_cli, run_subprocess
from small_jobs import run_small_job
from test_checkpoint_format import _checkpoint
from test_results import JOB

from hpcswarm.errors import DataError
from hpcswarm.run.checkpoint import Checkpoint
from hpcswarm.store import atomic
from hpcswarm.store.reading import (MAX_JSON_DEPTH, check_declared, checked_read, json_depth,
                                    parse_json)

GOOD = REPO / "tests" / "data" / "good.csv"
HUGE = 10**12
"""Elements a hostile dataset declares: 8 TB of int64, in a file of a few KB."""

DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 deep (Python's parser and any recursive reader end near 1,000)."""


def _declare_huge(group, name, dtype="i8"):
    """Replace ``group[name]`` by a chunked dataset declaring :data:`HUGE` elements, none
    written."""
    if name in group:
        del group[name]
    group.create_dataset(name, shape=(HUGE,), maxshape=(None,), chunks=(1024,), dtype=dtype)


# ------------------------------------------------------------------ the shared helper
def test_a_declared_shape_is_checked_before_the_read(tmp_path):
    with h5py.File(tmp_path / "a.h5", "w") as f:
        _declare_huge(f, "genes")
        f["names"] = np.array([b"a", b"b"])
        with pytest.raises(ValueError, match=r"'genes' declares shape \(1000000000000,\), "
                                             r"expected \(<= 10,\)"):
            checked_read(f["genes"], "'genes'", (range(11),), "iu")
        with pytest.raises(ValueError, match=r"\(8e\+03 GB\), more than the memory"):
            checked_read(f["genes"], "'genes'", (None,), "iu")
        with pytest.raises(ValueError, match="'names' is of type |S1, expected integers"):
            checked_read(f["names"], "'names'", (2,), "iu")
        check_declared(f["genes"], "'genes'", (None,), "iu", whole=False)  # read in parts
        assert checked_read(f["names"], "'names'", (2,), "T").tolist() == [b"a", b"b"]


def test_json_is_parsed_up_to_the_depth_limit_and_refused_past_it():
    limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(limit) == MAX_JSON_DEPTH and parse_json(limit) is not None
    assert json_depth('{"a": "[[[{{{", "b": ["\\"[["]}') == 2  # brackets in strings
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        parse_json("[" + limit + "]")
    with pytest.raises(ValueError, match="nested deeper"):
        parse_json(DEEP)


# ------------------------------------------------------------------ datasets
@pytest.fixture
def dataset(tmp_path, capsys):
    status, _, err = run_cli(capsys, "convert", GOOD, tmp_path / "data.h5")
    assert status == 0, err
    return tmp_path / "data.h5"


@pytest.mark.parametrize("key, fragment", [
    ("gene_names", "'gene_names' has 1000000000000 entries, expected 3"),
    ("sample_names", "'sample_names' has 1000000000000 entries, expected 4"),
    ("class_names", "'class_names' declares shape (1000000000000,), expected (<= 4,)"),
])
def test_info_refuses_names_declaring_more_entries_than_the_matrix(dataset, capsys, key,
                                                                   fragment):
    with h5py.File(dataset, "r+") as f:
        _declare_huge(f, key, h5py.string_dtype())
    status, _, err = run_cli(capsys, "info", dataset)
    assert_one_error(status, err, str(dataset), fragment)


def test_a_matlab_file_declaring_a_matrix_beyond_the_memory_is_one_error(tmp_path, capsys):
    source = tmp_path / "huge.mat"
    with h5py.File(source, "w", userblock_size=512) as f:
        f.create_dataset("X", shape=(10**6, 10**6), chunks=(64, 64), dtype="f8")
        f["Y"] = np.ones((1, 10**6))
    status, _, err = run_cli(capsys, "convert", source, tmp_path / "out.h5")
    assert_one_error(status, err, "huge.mat", "variable 'X' declares shape (1000000, 1000000)",
                     "more than the memory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.mat"]


# ------------------------------------------------------------------ results files
@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    job, _ = run_small_job(tmp_path_factory.mktemp("results"), JOB, "out.h5")
    return job.output


def _damaged_results(finished, tmp_path, change):
    path = tmp_path / "res.h5"
    shutil.copy(finished, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


RESULTS_DAMAGE = {
    "selected-genes": (lambda f: _declare_huge(f["runs/run-000/fold-00"], "selected_genes"),
                       "'/runs/run-000/fold-00/selected_genes' declares shape "
                       "(1000000000000,), expected (<= 13,)"),
    "test-index": (lambda f: _declare_huge(f["runs/run-001/fold-02"], "test_index"),
                   "'/runs/run-001/fold-02/test_index' declares shape (1000000000000,), "
                   "expected (<= 178,)"),
    "front-genes": (lambda f: _declare_huge(f["runs/run-000/fold-01/front"], "genes"),
                    "front/genes' declares shape (1000000000000,)"),
    "task-column": (lambda f: _declare_huge(f["tasks"], "seconds", "f8"),
                    "'tasks/seconds' declares shape (1000000000000,), expected (6,)"),
    "gene-names": (lambda f: _declare_huge(f, "gene_names", h5py.string_dtype()),
                   "more than the memory"),
    "job-nested": (lambda f: f.attrs.modify("job", DEEP), "JSON nested deeper than 100"),
}
"""Damage to a real results file: the change and what the one error line says."""


@pytest.mark.slow  # the cases share a small job's run
@pytest.mark.parametrize("case", sorted(RESULTS_DAMAGE))
def test_report_refuses_a_results_file_declaring_impossible_sizes(finished, tmp_path, capsys,
                                                                   case):
    change, fragment = RESULTS_DAMAGE[case]
    path = _damaged_results(finished, tmp_path, change)
    status, _, err = run_cli(capsys, "report", path)
    assert_one_error(status, err, f"{path}: a damaged results file", fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res.h5"]


def test_report_refuses_a_search_document_nested_too_deep(tmp_path, capsys):
    path = tmp_path / "search.json"
    path.write_text('{"encoding-type": "hpcswarm-search-result", "params": ' + DEEP + "}")
    status, _, err = run_cli(capsys, "report", path)
    assert_one_error(status, err, f"{path}: not an hpcswarm results file nor a search's JSON",
                     "nested deeper than 100 levels")


# ------------------------------------------------------------------ checkpoints
def _tree_nested(f):
    f["inflight/task-000001/method_state/tree"][()] = DEEP


def _position_of_a_million_genes(f):
    snapshot = f["inflight/task-000001"]
    del snapshot["position"]
    snapshot.create_dataset("position", shape=(10**6, 10**6), chunks=(64, 64), dtype="f8")


CHECKPOINT_DAMAGE = {
    "snapshot-position": (
        _position_of_a_million_genes, "the snapshot of running task task-000001",
        "'/inflight/task-000001/position' declares shape (1000000, 1000000), "
        "expected (<= 8, <= 24)"),
    "snapshot-method-array": (
        lambda f: _declare_huge(f["inflight/task-000001/method_state/arrays"], "0"),
        "the snapshot of running task task-000001", "more than the memory"),
    "record-selected-genes": (
        lambda f: _declare_huge(f["finished/task-000000"], "selected_genes"),
        "the record of finished task task-000000",
        "'/finished/task-000000/selected_genes' declares shape (1000000000000,), "
        "expected (<= 24,)"),
    "record-train-index": (
        lambda f: _declare_huge(f["finished/task-000000"], "train_index"),
        "the record of finished task task-000000", "expected (<= 30,)"),
    "identity-nested": (lambda f: f.attrs.modify("identity", DEEP), "its layout",
                        "JSON nested deeper than 100 levels"),
    "method-state-nested": (_tree_nested, "the snapshot of running task task-000001",
                            "JSON nested deeper than 100 levels"),
}
"""Damage to a real checkpoint (a finished task and a running CSO search, 24 genes and 30
samples): the change, the part the error names and what it says of it."""


@pytest.mark.parametrize("case", sorted(CHECKPOINT_DAMAGE))
def test_a_checkpoint_declaring_impossible_sizes_or_nesting_is_damaged(tmp_path, case):
    change, part, fragment = CHECKPOINT_DAMAGE[case]
    path = tmp_path / "job.checkpoint.h5"
    _checkpoint(path)
    with h5py.File(path, "r+") as f:
        change(f)
    before = path.read_bytes()
    with pytest.raises(DataError) as caught:
        Checkpoint(path, {"job": 1}, 2, read_all=True, n_genes=24, n_samples=30,
                   n_particles=8)
    message = str(caught.value)
    assert message.startswith(f"{path}: damaged checkpoint: {part} does not read back")
    assert fragment in message and "\n" not in message
    assert message.endswith("start afresh with --overwrite (the work it holds is lost)")
    assert path.read_bytes() == before


def test_a_snapshot_may_not_hold_more_particles_than_the_method_runs(tmp_path):
    path = tmp_path / "job.checkpoint.h5"
    _checkpoint(path)
    with pytest.raises(DataError, match=r"'/inflight/task-000001/\w+' declares shape "
                                        r"\(8(, 24)?,?\), expected \(<= 7,"):
        Checkpoint(path, {"job": 1}, 2, read_all=True, n_genes=24, n_samples=30,
                   n_particles=7)


# ------------------------------------------------------------------ sparse AnnData
def _sparse_source(tmp_path, layout, damage):
    """An AnnData file whose ``X`` is ``layout`` (csr, csc), its arrays changed by
    ``damage(indices, indptr)`` (in place)."""
    from test_data_real_world import h5ad

    source, X = h5ad(tmp_path, layout)
    with h5py.File(source, "r+") as f:
        indices, indptr = f["X/indices"][()], f["X/indptr"][()]
        damage(indices, indptr)
        for name, values in (("indices", indices), ("indptr", indptr)):
            del f[f"X/{name}"]
            f[f"X/{name}"] = values
    return source, X


def _negative_index(indices, indptr):
    indices[0] = -1


def _index_far_out(indices, indptr):
    indices[0] = 10**9


def _indptr_backwards(indices, indptr):
    indptr[2], indptr[3] = indptr[3], indptr[2]


def _indptr_short_of_the_values(indices, indptr):
    indptr[-1] -= 1


SPARSE_DAMAGE = {
    "negative-index": (_negative_index, "X holds the column index -1, outside [0, 4)"),
    "indptr-backwards": (_indptr_backwards, "X's indptr runs backwards at row 2"),
    "indptr-end": (_indptr_short_of_the_values, "X's indptr ends at"),
}
"""Damage to a CSR ``X`` (5 observations x 4 variables) and what the error line says."""


@pytest.mark.parametrize("case", sorted(SPARSE_DAMAGE))
def test_a_damaged_sparse_matrix_is_refused_and_nothing_is_written(tmp_path, capsys, case):
    damage, fragment = SPARSE_DAMAGE[case]
    source, _ = _sparse_source(tmp_path, "csr", damage)
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "convert", source, tmp_path / "out.h5", "--label",
                             "disease")
    assert_one_error(status, err, f"{source}: a damaged AnnData file: {fragment}")
    assert folder_state(tmp_path) == before


def test_a_csc_index_is_checked_against_the_observations(tmp_path, capsys):
    source, _ = _sparse_source(tmp_path, "csc", _negative_index)
    status, _, err = run_cli(capsys, "convert", source, tmp_path / "out.h5", "--label",
                             "disease")
    assert_one_error(status, err, "X holds the row index -1, outside [0, 5)")


@pytest.mark.slow  # a new interpreter
def test_an_index_far_out_of_range_is_one_error_not_a_crash(tmp_path):
    """scipy's densifying writes outside its array for such an index (SIGSEGV, no message,
    the output's temporary left behind): the command runs in a child process here."""
    source, _ = _sparse_source(tmp_path, "csr", _index_far_out)
    before = folder_state(tmp_path)
    done = run_subprocess("convert", source, tmp_path / "out.h5", "--label", "disease",
                          timeout=120)
    assert_one_error(done.returncode, done.stderr,
                     f"{source}: a damaged AnnData file: X holds the column index 1000000000")
    assert folder_state(tmp_path) == before  # no output, no temporary


def test_a_value_stored_twice_in_a_cell_is_summed_as_scipy_does(tmp_path, capsys):
    import scipy.sparse

    from hpcswarm.data import read_dataset

    def twice(indices, indptr):
        indices[1] = indices[0]  # row 0 stores two values in its first cell

    source, _ = _sparse_source(tmp_path, "csr", twice)
    with h5py.File(source, "r") as f:
        expected = scipy.sparse.csr_matrix(
            (f["X/data"][()], f["X/indices"][()], f["X/indptr"][()]),
            shape=tuple(f["X"].attrs["shape"])).toarray()
    dataset, _ = read_dataset(source, label="disease")
    np.testing.assert_array_equal(dataset.X, expected)


# ------------------------------------------------------------------ temporaries
def test_the_next_convert_removes_a_crashed_ones_temporary_even_when_it_fails(tmp_path,
                                                                             capsys):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = atomic.temporary_path(tmp_path / "out.h5")
    stale = stale.with_name(stale.name.replace(f"-{os.getpid()}-", f"-{gone.stdout.strip()}-"))
    stale.write_bytes(b"\x89HDF\r\n\x1a\n half a file")
    status, _, err = run_cli(capsys, "convert", GOOD, tmp_path / "out.h5", "--label", "nope")
    assert status == 2 and f"removed {stale.name}" in err
    assert list(tmp_path.iterdir()) == []
