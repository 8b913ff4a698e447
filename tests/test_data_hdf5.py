"""The hpcswarm HDF5 layout: encoding attributes, the gene-major copy, memory-mapped opening,
the read path for chunked or compressed files, atomic writes, and the clear refusal of other
HDF5 files and of files written before the gene-major copy existed."""

import subprocess
import sys

import h5py
import numpy as np
import pytest

from hpcswarm.data import Dataset, example_path, load_dataset, open_dataset, write_dataset
from hpcswarm.errors import DataError, ParameterError


def small_dataset(dtype=np.float64):
    rng = np.random.default_rng(0)
    return Dataset(X=rng.normal(size=(6, 5)).astype(dtype), y=np.array([0, 1, 0, 1, 2, 2]),
                   class_names=["a", "b", "c"], gene_names=[f"g{j}" for j in range(5)],
                   sample_names=[f"s{i}" for i in range(6)],
                   attrs={"source": "made.csv", "options": {"dtype": "float64"}})


def test_every_object_says_what_it_is(tmp_path):
    path = tmp_path / "d.h5"
    write_dataset(small_dataset(), path)
    with h5py.File(path, "r") as f:
        assert f.attrs["encoding-type"] == "hpcswarm-dataset"
        for key in ("X", "X_genes", "y", "class_names", "gene_names", "sample_names"):
            assert "encoding-type" in f[key].attrs and "encoding-version" in f[key].attrs
        for key in ("X", "X_genes"):
            assert f[key].chunks is None and f[key].compression is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gene_major_copy_is_the_transpose(tmp_path, dtype, monkeypatch):
    import hpcswarm.data.hdf5 as hdf5

    monkeypatch.setattr(hdf5, "BLOCK_CELLS", 10)  # 6 samples x 5 genes: three blocks of 2 rows
    original = small_dataset(dtype)
    write_dataset(original, tmp_path / "d.h5")
    with h5py.File(tmp_path / "d.h5", "r") as f:
        assert f["X_genes"].dtype == dtype and f["X_genes"].shape == (5, 6)
        np.testing.assert_array_equal(f["X_genes"][()], original.X.T)
    dataset = open_dataset(tmp_path / "d.h5")
    assert isinstance(dataset.X_genes, np.memmap) and dataset.X_genes.flags.c_contiguous
    assert dataset.X_genes.dtype == dtype and not dataset.X_genes.flags.writeable
    np.testing.assert_array_equal(dataset.X_genes, original.X.T)


def test_in_memory_dataset_makes_its_gene_major_copy_once():
    dataset = small_dataset(np.float32)
    genes = dataset.X_genes
    assert genes is dataset.X_genes and genes.flags.c_contiguous and genes.dtype == np.float32
    np.testing.assert_array_equal(genes, dataset.X.T)
    assert not np.shares_memory(genes, dataset.X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_trip_is_memory_mapped_and_read_only(tmp_path, dtype):
    path = tmp_path / "d.h5"
    original = small_dataset(dtype)
    write_dataset(original, path)
    dataset = open_dataset(path)
    assert isinstance(dataset.X, np.memmap) and dataset.memory_mapped
    assert dataset.X.dtype == dtype
    np.testing.assert_array_equal(dataset.X, original.X)
    np.testing.assert_array_equal(dataset.y, original.y)
    assert dataset.y.dtype == np.int64
    assert (dataset.class_names, dataset.gene_names, dataset.sample_names) == (
        original.class_names, original.gene_names, original.sample_names)
    assert dataset.attrs == original.attrs
    assert (dataset.n_samples, dataset.n_genes, dataset.n_classes) == (6, 5, 3)
    assert dataset.class_counts() == [("a", 2), ("b", 2), ("c", 2)]
    assert len(dataset.sha256) == 64
    with pytest.raises(ValueError):
        dataset.X[0, 0] = 1.0


@pytest.mark.parametrize("keys", [("X",), ("X_genes",), ("X", "X_genes")])
def test_chunked_compressed_file_opens_in_memory_with_a_note(tmp_path, capsys, keys):
    path = tmp_path / "d.h5"
    write_dataset(small_dataset(), path)
    with h5py.File(path, "r+") as f:
        for key in keys:
            data = f[key][()]
            attrs = dict(f[key].attrs)
            del f[key]
            f.create_dataset(key, data=data, chunks=(2, 2), compression="gzip").attrs.update(attrs)
    dataset = open_dataset(path)
    assert not dataset.memory_mapped
    for key in ("X", "X_genes"):
        assert isinstance(getattr(dataset, key), np.memmap) == (key not in keys)
    np.testing.assert_array_equal(dataset.X, small_dataset().X)
    np.testing.assert_array_equal(dataset.X_genes, small_dataset().X.T)
    assert capsys.readouterr().err == ""  # the data layer returns its notes, never prints
    err = dataset.notes
    assert len(err) == 1 and "not memory-mapped" in err[0] and "d.h5" in err[0]
    assert f"{' and '.join(keys)} {'is' if len(keys) == 1 else 'are'} chunked" in err[0]


def test_file_without_gene_major_copy_says_to_convert_again(tmp_path):
    """A file written by hpcswarm before encoding-version 0.2.0 has no X_genes."""
    path = tmp_path / "old.h5"
    write_dataset(small_dataset(), path)
    with h5py.File(path, "r+") as f:
        del f["X_genes"]
        f.attrs["encoding-version"] = "0.1.0"
    with pytest.raises(DataError, match=r"old.h5: no gene-major matrix 'X_genes' \(encoding-"
                       r"version 0.1.0, written by an earlier hpcswarm\); convert the source "
                       r"again"):
        open_dataset(path)


def test_gene_major_copy_of_the_wrong_shape_is_refused(tmp_path):
    path = tmp_path / "d.h5"
    write_dataset(small_dataset(), path)
    with h5py.File(path, "r+") as f:
        del f["X_genes"]
        f["X_genes"] = small_dataset().X  # not transposed
    with pytest.raises(DataError, match=r"'X_genes' has shape \(6, 5\).*expected \(5, 6\)"):
        open_dataset(path)


def test_failed_write_leaves_no_file(tmp_path):
    bad = small_dataset()
    bad.gene_names = [object()] * 5  # not encodable as UTF-8 strings
    with pytest.raises(TypeError):
        write_dataset(bad, tmp_path / "d.h5")
    assert list(tmp_path.iterdir()) == []


def test_existing_file_needs_overwrite(tmp_path):
    path = tmp_path / "d.h5"
    write_dataset(small_dataset(), path)
    with pytest.raises(DataError, match="already exists"):
        write_dataset(small_dataset(), path)
    write_dataset(small_dataset(np.float32), path, overwrite=True)
    assert open_dataset(path).X.dtype == np.float32
    assert [p.name for p in tmp_path.iterdir()] == ["d.h5"]


def test_other_hdf5_files_are_refused(tmp_path):
    path = tmp_path / "plain.h5"
    with h5py.File(path, "w") as f:
        f["X"] = np.zeros((2, 2))
    with pytest.raises(DataError, match="plain.h5: not an hpcswarm dataset"):
        open_dataset(path)
    with h5py.File(path, "r+") as f:
        f.attrs["encoding-type"] = "hpcswarm-dataset"
        f.attrs["encoding-version"] = "9.0.0"
    with pytest.raises(DataError, match="encoding-version '9.0.0' is not supported"):
        open_dataset(path)
    text = tmp_path / "text.h5"
    text.write_text("hello")
    with pytest.raises(DataError, match="text.h5: cannot open as HDF5"):
        open_dataset(text)
    with pytest.raises(DataError, match="missing.h5: no such file"):
        open_dataset(tmp_path / "missing.h5")


def test_inconsistent_file_is_refused(tmp_path):
    path = tmp_path / "d.h5"
    write_dataset(small_dataset(), path)
    with h5py.File(path, "r+") as f:
        del f["gene_names"]
        f["gene_names"] = np.array([b"only-one"])
    with pytest.raises(DataError, match="'gene_names' has 1 entries, expected 5"):
        open_dataset(path)


def test_a_damaged_file_is_one_error_naming_it(tmp_path):
    """What h5py raises on a damaged file (here names that are not UTF-8) is a DataError."""
    path = tmp_path / "d.h5"
    write_dataset(small_dataset(), path)
    with h5py.File(path, "r+") as f:
        del f["gene_names"]
        f.create_dataset("gene_names", data=np.array([b"g", b"\xff\xfe", b"h", b"i", b"j"],
                                                     dtype=object),
                         dtype=h5py.string_dtype("utf-8"))
    with pytest.raises(DataError, match="d.h5: a damaged dataset \\(UnicodeDecodeError: "):
        open_dataset(path)


def test_builtin_srbct():
    assert example_path().name == "srbct.h5" and example_path().is_file()
    dataset = load_dataset("builtin:srbct")
    assert dataset.memory_mapped and dataset.X.shape == (83, 2308)
    assert dataset.class_counts() == [("BL", 11), ("EWS", 29), ("NB", 18), ("RMS", 25)]
    assert dataset.attrs["source"] == "SRBCT.arff"
    with pytest.raises(DataError, match="builtin:nope: no such bundled dataset"):
        load_dataset("builtin:nope")
    with pytest.raises(ParameterError, match="conversion options"):
        load_dataset("builtin:srbct", dtype="float32")
    assert load_dataset("builtin:srbct", dtype=None).memory_mapped


def test_two_processes_share_the_mapped_pages(tmp_path):
    """Each process maps the same file: the pages of X and X_genes (read once when the file is
    opened, by the check for NaN) are file-backed (RssFile), not private."""
    path = tmp_path / "d.h5"
    n_rows, n_cols = 2000, 1000  # 16 MB
    write_dataset(Dataset(X=np.ones((n_rows, n_cols)), y=np.arange(n_rows) % 2, class_names=["a", "b"],
                          gene_names=[str(j) for j in range(n_cols)]), path)
    probe = (
        "import sys, numpy as np\n"
        "from hpcswarm.data import open_dataset\n"
        "def rss():\n"
        "    f = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "    return int(f['RssAnon'].split()[0]), int(f['RssFile'].split()[0])\n"
        "a0, f0 = rss(); ds = open_dataset(sys.argv[1])\n"
        "total = float(np.asarray(ds.X).sum()) + float(np.asarray(ds.X_genes).sum())\n"
        "a1, f1 = rss()\n"
        "print(total, a1 - a0, f1 - f0)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True)
    total, anon_kb, file_kb = out.stdout.split()
    assert float(total) == 2 * n_rows * n_cols
    assert int(file_kb) > 0.9 * 2 * n_rows * n_cols * 8 / 1024  # both matrices file-backed ...
    assert int(anon_kb) < 0.1 * n_rows * n_cols * 8 / 1024  # ... not a private copy


def test_the_file_records_whether_its_values_are_finite(tmp_path):
    import h5py

    from hpcswarm.errors import DataError
    from hpcswarm.fitness import GeneMajor

    finite, holed = small_dataset(), small_dataset()
    holed.X[2, 3] = np.nan
    for name, dataset, expected in (("finite.h5", finite, True), ("nan.h5", holed, False)):
        write_dataset(dataset, tmp_path / name)
        with h5py.File(tmp_path / name, "r") as f:
            assert bool(f.attrs["values-finite"]) is expected
    opened = open_dataset(tmp_path / "finite.h5")
    assert opened.values_finite is True and "values-finite" not in opened.attrs
    with pytest.raises(DataError, match="NaN"):
        open_dataset(tmp_path / "nan.h5")
    # the engine checks values it is not told are finite, block by block
    with h5py.File(tmp_path / "nan.h5", "r") as f:
        holed_genes = f["X_genes"][()]
    with pytest.raises(ValueError, match="NaN"):
        GeneMajor(holed_genes)
    assert GeneMajor(holed_genes, finite=True).n_genes == 5


def test_soft_links_within_the_file_are_followed(tmp_path):
    """A soft link to a dataset of the same file is read (memory-mapped as the dataset
    itself); only a link to another file is refused, naming that file."""
    path = tmp_path / "d.h5"
    original = small_dataset()
    write_dataset(original, path)
    with h5py.File(path, "r+") as f:
        f.move("X", "values/X")
        f["X"] = h5py.SoftLink("/values/X")
    dataset = open_dataset(path)
    assert isinstance(dataset.X, np.memmap)
    np.testing.assert_array_equal(dataset.X, original.X)
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as g:
        g["X"] = original.X
    with h5py.File(path, "r+") as f:
        del f["X"]
        f["X"] = h5py.ExternalLink(str(other), "/X")
    with pytest.raises(DataError, match=f"'X' is a link to another file \\('{other}', '/X'\\)"):
        open_dataset(path)
