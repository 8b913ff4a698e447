"""HDF5 files written by other tools: the values are checked (finite, ``X_genes`` equal to
``X`` transposed) by blocks of genes that ranks can share, the matrices are mapped only where
their bytes are, the converters' name and shape checks apply, and values near the ends of the
floating-point range give the accuracy of the same values at a normal scale."""

import json

import h5py
import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from cli_checks import assert_one_error, folder_state, run_cli
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.data.values import combine, fletcher_sums, scale_exponent, scan_genes
from hpcswarm.errors import DataError
from hpcswarm.fitness import KnnEvaluator


def labelled(X, rng=None):
    n_samples, n_genes = X.shape
    return Dataset(X=X, y=np.arange(n_samples) % 2, class_names=["A", "B"],
                   gene_names=[f"g{j}" for j in range(n_genes)],
                   sample_names=[f"s{i}" for i in range(n_samples)])


@pytest.fixture
def path(tmp_path):
    X = np.random.default_rng(3).normal(size=(8, 5))
    write_dataset(labelled(X), tmp_path / "d.h5")
    return tmp_path / "d.h5"


def _rewrite(path, key, data=None, **options):
    with h5py.File(path, "r+") as f:
        data = f[key][()] if data is None else data
        attrs = dict(f[key].attrs)
        del f[key]
        f.create_dataset(key, data=data, **options).attrs.update(attrs)


def test_gene_major_copy_that_is_not_the_transpose_is_refused(path, capsys):
    with h5py.File(path, "r+") as f:
        f["X_genes"][4, 6] += 1.0  # finite, but not X's value
    before = folder_state(path.parent)
    status, out, err = run_cli(capsys, "evaluate", path, "--all")
    assert_one_error(status, err, str(path), "'X_genes' is not the transpose of 'X'",
                     "sample 's6', gene 'g4'")
    assert out == "" and folder_state(path.parent) == before


def test_block_scans_combine_to_the_whole_scan(path):
    """What ranks do: each scans its block of genes, the maxima combine to the whole scan."""
    with h5py.File(path, "r+") as f:
        f["X_genes"][3, 1] = 7.0
        f["X"][2, 4] = np.nan
        f["X_genes"][4, 2] = np.nan
    dataset = open_dataset(path, check_values=False)
    whole = scan_genes(dataset.X, dataset.X_genes, 0, 5)
    parts = [scan_genes(dataset.X, dataset.X_genes, a, b) for a, b in ((0, 2), (2, 4), (4, 5))]
    np.testing.assert_array_equal(combine(*parts), whole)
    assert whole[0] == -(4 * 8 + 2) and whole[2] == -(3 * 8 + 1)  # first cells, gene-major
    with pytest.raises(DataError, match=r"'X' holds NaN .* sample 's2', gene 'g4'"):
        open_dataset(path)


def _swapped(tmp_path, values, cells):
    """A file of ``values`` (samples x genes) whose X_genes has the two ``(gene, sample)``
    cells swapped."""
    path = tmp_path / "swapped.h5"
    write_dataset(labelled(values), path)
    (g1, s1), (g2, s2) = cells
    with h5py.File(path, "r+") as f:
        genes = f["X_genes"][()]
        genes[g1, s1], genes[g2, s2] = genes[g2, s2], genes[g1, s1]
        f["X_genes"][...] = genes
    return path


SWAPS = {  # values, two cells (gene, sample) of X_genes swapped; the first names the error
    "two genes in one sample": ("normal", [(1, 7), (3, 7)]),
    "two samples in one gene": ("normal", [(2, 5), (2, 9)]),
    "x and -x, even distance": ("signs", [(0, 2), (0, 4)]),
    "sign and a mantissa bit": ("sign-and-bit", [(4, 0), (4, 2)]),
    "integers, distance 512": ("integers", [(3, 10), (3, 522)]),
    "one ulp apart, distance 256": ("ulp", [(1, 300), (1, 556)]),
}


def _swap_values(kind, dtype):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 5)).astype(dtype)
    if kind == "signs":
        X[2, 0], X[4, 0] = 1.5, -1.5
    elif kind == "sign-and-bit":  # bit patterns differ in the sign and the same bit of each half
        X[0, 4] = 1.0
        bits = np.array(1.0, dtype=dtype).view(f"u{X.itemsize}")
        flips = np.array((1 << (8 * X.itemsize - 1)) | (1 << (4 * X.itemsize - 1)),
                         dtype=bits.dtype)  # unsigned as the bits (numpy 1 has no weak ints)
        X[2, 4] = (bits ^ flips).view(dtype)
    elif kind == "integers":
        X = rng.integers(0, 8, size=X.shape).astype(dtype)
        X[10, 3], X[522, 3] = 3.0, 5.0
    elif kind == "ulp":
        X[300, 1] = 1.0
        X[556, 1] = np.nextafter(X.dtype.type(1.0), X.dtype.type(2.0))
    return X


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(SWAPS))
def test_a_single_swapped_pair_is_named_by_its_first_cell(tmp_path, case, dtype):
    """Each matrix is checked by per-gene checksums read in its own order; a swap (which
    keeps every sum of values) is still found, and named by its first cell in gene-major
    order, as a comparison of every cell names it."""
    kind, cells = SWAPS[case]
    path = _swapped(tmp_path, _swap_values(kind, dtype), cells)
    (gene, sample), _ = sorted(cells)
    with pytest.raises(DataError, match=rf"'X_genes' is not the transpose of 'X': at sample "
                                        rf"'s{sample}', gene 'g{gene}'"):
        open_dataset(path)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_checksums_see_every_single_change_and_swap(dtype):
    """Fletcher sums of a gene change with any one changed cell, and with any two cells
    swapped, here over structured values (small integers, their negatives, one ulp apart)."""
    rng = np.random.default_rng(0)
    n = 64
    values = rng.choice(np.array([1.0, -1.0, 2.0, 3.0, -3.0, 5.0, 0.5, 1.0 + 2.0 ** -20],
                                 dtype=dtype), size=n)
    countdown = np.arange(n, 0, -1, dtype=np.uint64)

    def sums(row):
        out = np.empty((2, 1, values.itemsize // 4), dtype=np.uint64)
        fletcher_sums(row[None, :], countdown, out)
        return out

    reference = sums(values)
    for s in range(n):
        changed = values.copy()
        changed[s] = np.nextafter(changed[s], dtype(np.inf))
        assert (sums(changed) != reference).any()
        for t in range(s + 1, n):
            if values[s] != values[t]:
                swapped = values.copy()
                swapped[[s, t]] = swapped[[t, s]]
                assert (sums(swapped) != reference).any(), (s, t)


def test_negative_zero_agrees_with_zero(path):
    """Agreement is equality of values, as a comparison of every cell: -0.0 in X_genes where
    X holds 0.0 is no difference (their bit patterns differ, the cell-by-cell check settles it)."""
    with h5py.File(path, "r+") as f:
        f["X"][3, 2] = 0.0
        f["X_genes"][2, 3] = -0.0
    assert np.signbit(open_dataset(path).X_genes[2, 3])


@pytest.mark.parametrize("dtype", [">f8", ">f4"])
def test_big_endian_matrices_are_read_in_native_order(path, dtype):
    original = {key: np.array(getattr(open_dataset(path), key)) for key in ("X", "X_genes")}
    for key in ("X", "X_genes"):
        _rewrite(path, key, data=original[key].astype(dtype))
    dataset = open_dataset(path)
    assert dataset.X.dtype.isnative and dataset.X.dtype == np.dtype(dtype).newbyteorder("=")
    np.testing.assert_array_equal(dataset.X, original["X"].astype(dtype))
    np.testing.assert_array_equal(dataset.X_genes, original["X_genes"].astype(dtype))
    assert not dataset.memory_mapped and "other byte order" in dataset.notes[0]


def test_external_link_is_refused(path, tmp_path, capsys):
    other = tmp_path / "other.h5"
    with h5py.File(path, "r") as f, h5py.File(other, "w") as g:
        g["X"] = f["X"][()] + 1.0
    with h5py.File(path, "r+") as f:
        del f["X"]
        f["X"] = h5py.ExternalLink(str(other), "/X")
    status, out, err = run_cli(capsys, "info", path)
    assert_one_error(status, err, str(path), "'X' is a link to another file")


def test_external_storage_is_refused(path, tmp_path):
    raw = tmp_path / "values.bin"
    with h5py.File(path, "r") as f:
        data = f["X_genes"][()]
    data.tofile(raw)
    with h5py.File(path, "r+") as f:
        del f["X_genes"]
        f.create_dataset("X_genes", shape=data.shape, dtype=data.dtype,
                         external=[(str(raw), 0, data.nbytes)])
    with pytest.raises(DataError, match=r"d.h5: 'X_genes' keeps its values in other files"):
        open_dataset(path)


def test_duplicate_gene_names_are_refused(path, capsys):
    with h5py.File(path, "r+") as f:
        f["gene_names"][3] = "g1"
    status, out, err = run_cli(capsys, "info", path)
    assert_one_error(status, err, str(path), "duplicate gene name: 'g1'")


@pytest.mark.parametrize("shape", [(0, 5), (8, 0)])
def test_an_empty_matrix_is_one_line(tmp_path, capsys, shape):
    path = tmp_path / "empty.h5"
    write_dataset(labelled(np.random.default_rng(0).normal(size=(8, 5))), path)
    with h5py.File(path, "r+") as f:
        for key in ("X", "X_genes", "y", "gene_names", "sample_names"):
            del f[key]
        f["X"] = np.zeros(shape)
        f["X_genes"] = np.zeros(shape[::-1])
        f["y"] = np.zeros(shape[0], dtype=np.int64)
        f["gene_names"] = [f"g{j}" for j in range(shape[1])]
    status, out, err = run_cli(capsys, "info", path)
    assert_one_error(status, err, str(path), f"'X' has {shape[0]} samples and {shape[1]} genes")


def test_scale_is_one_for_ordinary_values():
    for value, dtype in ((1e6, np.float64), (1e-30, np.float64), (1e12, np.float32),
                         (1e-12, np.float32), (0.0, np.float64)):
        assert scale_exponent(value, dtype, 20000) == 0


def _sklearn_accuracy(X, y, folds):
    correct = 0
    for train, test in folds:
        model = KNeighborsClassifier(n_neighbors=1, algorithm="brute")
        correct += int((model.fit(X[train], y[train]).predict(X[test]) == y[test]).sum())
    return correct / len(y)


@pytest.mark.parametrize("dtype, factor", [(np.float64, 1e300), (np.float64, 1e-300),
                                           (np.float64, 1.7e308), (np.float64, 5e-320),
                                           (np.float32, 3e38), (np.float32, 1e-38),
                                           (np.float32, 1e-44)])
def test_extreme_values_give_the_accuracy_of_normal_ones(tmp_path, capsys, dtype, factor):
    rng = np.random.default_rng(11)
    normal = rng.integers(1, 9, size=(30, 12)).astype(np.float64)
    normal[:, :3] += 3.0 * (np.arange(30) % 2)[:, None]  # the classes differ in three genes
    X = (normal / normal.max() * factor).astype(dtype)  # near the top or bottom of the range
    dataset = labelled(X)
    write_dataset(dataset, tmp_path / "x.h5")
    status, out, err = run_cli(capsys, "evaluate", tmp_path / "x.h5", "--all", "--cv", "5",
                               "--seed", "4")
    assert status == 0, err
    assert "scaled by 2^" in err  # the note says what was done
    # the same values at a normal scale (a power of two: exact), scored by scikit-learn
    shift = -np.frexp(np.abs(X.astype(np.float64)).max())[1]
    at_normal_scale = np.ldexp(X.astype(np.float64), shift)
    folds = KnnEvaluator(at_normal_scale, dataset.y, k=1, cv=5, seed=4).folds
    expected = _sklearn_accuracy(at_normal_scale, dataset.y, folds)
    assert json.loads(out)["accuracy"] == expected
    assert expected > 0.5  # the classes are separable: not every neighbour tied


def test_commands_print_the_notes_of_the_data_layer(path, capsys):
    """The data layer returns its notes; the command prints each once, as a note."""
    _rewrite(path, "X_genes", chunks=(2, 2), compression="gzip")
    for argv in (["info", path], ["evaluate", path, "--all", "--cv", "2"]):
        status, out, err = run_cli(capsys, *argv)
        assert status == 0, err
        assert err.strip().splitlines() == [f"hpcswarm: note: {path}: X_genes is chunked, "
                                            "compressed or compact; read into memory, not "
                                            "memory-mapped"]


def test_a_matrix_never_written_is_refused(path):
    """HDF5 would give its fill value (zeros) for every cell: a dataset of ties."""
    with h5py.File(path, "r+") as f:
        shape, attrs = f["X"].shape, dict(f["X"].attrs)
        del f["X"], f["X_genes"]
        f.create_dataset("X", shape=shape, dtype="f8").attrs.update(attrs)
        f.create_dataset("X_genes", shape=shape[::-1], dtype="f8").attrs.update(attrs)
    with pytest.raises(DataError, match=r"d.h5: 'X' has no values stored"):
        open_dataset(path)
