"""The hpcswarm HDF5 layout: writing a dataset atomically and opening it memory-mapped.

Layout (every object carries ``encoding-type`` and ``encoding-version``, as anndata does)::

    /                 encoding-type "hpcswarm-dataset", provenance attributes, and
                      values-finite (bool): whether every value of X is finite, checked
                      as X_genes is written, so that readers need not check it again
    /X                (n_samples, n_genes) float64 or float32, contiguous, uncompressed
    /X_genes          (n_genes, n_samples) the same values gene-major (X.T), same type and layout
    /y                (n_samples,) int64 class codes
    /class_names      (n_classes,) UTF-8 strings
    /gene_names       (n_genes,) UTF-8 strings
    /sample_names     (n_samples,) UTF-8 strings, only when the source named its samples

``X`` and ``X_genes`` are contiguous and uncompressed so that every MPI rank maps the same
page-cache pages (numpy memmap at the dataset's file offset) instead of reading a private copy.
``X_genes`` is what the fitness engine reads: a gene's values are one contiguous row, so a
subset of genes is gathered row by row (reading genes out of the sample-major ``X`` made an
incremental evaluation about 2x slower), at the price of a file twice the matrix's size.

Encoding versions: 0.2.0 added ``X_genes``; a 0.1.0 file (without it) is refused with a
message to convert the source again (a job's conversion cache names its files by the encoding
version, so it converts them again by itself).
"""

import json
import sys
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

from hpcswarm.atomic import atomic_path
from hpcswarm.data.dataset import Dataset
from hpcswarm.encoding import check_tag, decode_value, read_tag, tag
from hpcswarm.errors import DataError

ENCODING_TYPE = "hpcswarm-dataset"
ENCODING_VERSION = "0.2.0"
_ARRAY = ("array", "0.2.0")
_STRINGS = ("string-array", "0.2.0")
_STR = h5py.string_dtype("utf-8")
FINITE_ATTRIBUTE = "values-finite"
"""Root attribute: True when every value of ``X`` was found finite as the file was written."""
_WRITE_BLOCK = 1024
"""Genes transposed into ``X_genes`` per write (bounds the temporary memory of a write)."""


def _attr_value(value):
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True)
    return value


def write_dataset(dataset, output, *, overwrite=False):
    """Write ``dataset`` to ``output`` under a temporary name in the same folder, then rename.

    Parameters
    ----------
    dataset : Dataset
    output : str or Path
    overwrite : bool
        Replace an existing ``output``; without it an existing file is an error.

    Raises
    ------
    DataError
        ``output`` exists (without ``overwrite``) or its folder is missing or not writable. A
        failure leaves no partial file behind.
    """
    with atomic_hdf5(output, overwrite=overwrite) as f:
        tag(f, (ENCODING_TYPE, ENCODING_VERSION))
        for key, value in dataset.attrs.items():
            f.attrs[key] = _attr_value(value)
        tag(f.create_dataset("X", data=np.ascontiguousarray(dataset.X)), _ARRAY)
        f.attrs[FINITE_ATTRIBUTE] = _write_gene_major(f, dataset.X)
        tag(f.create_dataset("y", data=np.asarray(dataset.y, dtype=np.int64)), _ARRAY)
        for key in ("class_names", "gene_names", "sample_names"):
            names = getattr(dataset, key)
            if names is not None:
                strings = np.array(names, dtype=object)
                tag(f.create_dataset(key, data=strings, dtype=_STR), _STRINGS)


def _write_gene_major(f, X):
    """``X_genes`` = ``X.T``, contiguous, written a block of genes at a time (no whole copy).

    Returns whether every value is finite (checked on the blocks as they are written).
    """
    X = np.asarray(X)
    dset = f.create_dataset("X_genes", shape=X.shape[::-1], dtype=X.dtype)
    finite = True
    for start in range(0, X.shape[1], _WRITE_BLOCK):
        block = X[:, start:start + _WRITE_BLOCK].T
        finite = finite and bool(np.isfinite(block).all())
        dset[start:start + _WRITE_BLOCK] = block
    tag(dset, _ARRAY)
    return finite


@contextmanager
def atomic_hdf5(output, *, overwrite=False):
    """A new HDF5 file that appears at ``output`` whole, or not at all.

    The block writes an ``h5py.File`` created under a temporary name in ``output``'s folder
    and closed when the block ends; then :func:`hpcswarm.atomic.atomic_path` flushes it to
    disk and renames it to ``output``. On any error, or an interruption, the temporary file
    is removed and ``output`` is untouched.

    Raises
    ------
    DataError
        ``output`` exists (without ``overwrite``), or its folder is missing or not writable.
    """
    output = Path(output)
    check_output(output, overwrite=overwrite)
    with atomic_path(output, overwrite=overwrite) as temporary:
        with h5py.File(temporary, "w") as f:
            yield f


def check_output(output, *, overwrite=False):
    """Raise :class:`DataError` if ``output`` cannot be written as a new dataset file."""
    output = Path(output)
    if output.is_dir():
        raise DataError(f"{output}: is a directory, expected an output file name")
    if output.exists() and not overwrite:
        raise DataError(f"{output}: already exists (use --overwrite to replace it)")
    if not output.parent.is_dir():
        raise DataError(f"{output}: the folder {str(output.parent)!r} does not exist")


def _strings(f, key, path, length=None):
    if key not in f:
        return None
    names = [decode_value(v) for v in f[key][()].tolist()]
    if length is not None and len(names) != length:
        raise DataError(f"{path}: '{key}' has {len(names)} entries, expected {length}")
    return names


def _json_or_text(value):
    """The ``options`` attribute as a dict (it is stored as JSON text)."""
    try:
        return json.loads(value)
    except (TypeError, json.JSONDecodeError):
        return value


def _mappable_offset(dset):
    """File offset of a dataset numpy can map, or None (chunked, compressed, unallocated)."""
    if dset.chunks is not None or dset.compression is not None or dset.dtype.byteorder == ">":
        return None
    return dset.id.get_offset()


def _mapped_or_read(dset, path):
    """``dset`` as a read-only :class:`numpy.memmap` of ``path`` where numpy can map it, else
    read into memory."""
    offset = _mappable_offset(dset)
    if offset is None:
        return dset[()]
    return np.memmap(path, mode="r", dtype=dset.dtype, offset=offset, shape=dset.shape, order="C")


def _check_layout(f, path):
    check_tag(f, (ENCODING_TYPE, ENCODING_VERSION), path, "dataset",
              hint="convert the source with 'python -m hpcswarm convert'")
    version = read_tag(f)[1]
    for key in ("X", "y", "class_names", "gene_names"):
        if not isinstance(f.get(key), h5py.Dataset):
            raise DataError(f"{path}: the dataset '{key}' is missing")
    X, y = f["X"], f["y"]
    if X.ndim != 2 or X.dtype not in (np.float64, np.float32):
        raise DataError(f"{path}: 'X' is {X.ndim}-D {X.dtype}, expected 2-D float64 or float32")
    genes = f.get("X_genes")
    if not isinstance(genes, h5py.Dataset):
        raise DataError(f"{path}: no gene-major matrix 'X_genes' (encoding-version {version}, "
                        f"written by an earlier hpcswarm); convert the source again with "
                        f"'python -m hpcswarm convert'")
    if genes.shape != X.shape[::-1] or genes.dtype != X.dtype:
        raise DataError(f"{path}: 'X_genes' has shape {genes.shape} and type {genes.dtype}, "
                        f"expected {X.shape[::-1]} {X.dtype} (the transpose of 'X')")
    if y.shape != (X.shape[0],) or y.dtype.kind not in "iu":
        raise DataError(f"{path}: 'y' has shape {y.shape} and type {y.dtype}, "
                        f"expected {X.shape[0]} integers")


def open_dataset(path):
    """Open an hpcswarm HDF5 file, memory-mapping ``X`` and ``X_genes`` when their layout allows.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Dataset
        ``X`` and ``X_genes`` are read-only :class:`numpy.memmap` of the file when they are
        contiguous and uncompressed, so that processes opening the same file share its pages;
        otherwise the one that is not is read into memory and a one-line note goes to stderr
        (world rank 0 only).

    Raises
    ------
    DataError
        The file is missing, not HDF5, not an hpcswarm dataset (or one written before
        ``X_genes`` existed) or inconsistent.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file" if not path.exists() else f"{path}: not a regular file")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise DataError(f"{path}: cannot open as HDF5 ({exc})") from None
    with f:
        _check_layout(f, path)
        dset = f["X"]
        y = f["y"][()].astype(np.int64)
        class_names = _strings(f, "class_names", path)
        gene_names = _strings(f, "gene_names", path, dset.shape[1])
        sample_names = _strings(f, "sample_names", path, dset.shape[0])
        attrs = {k: decode_value(v) for k, v in f.attrs.items()
                 if k not in ("encoding-type", "encoding-version", FINITE_ATTRIBUTE)}
        values_finite = decode_value(f.attrs.get(FINITE_ATTRIBUTE, False)) is True
        if "options" in attrs:
            attrs["options"] = _json_or_text(attrs["options"])
        X = _mapped_or_read(dset, path)
        X_genes = _mapped_or_read(f["X_genes"], path)
    if y.size and (y.min() < 0 or y.max() >= len(class_names)):
        raise DataError(f"{path}: class codes in 'y' run outside 0..{len(class_names) - 1}")
    in_memory = [name for name, array in (("X", X), ("X_genes", X_genes))
                 if not isinstance(array, np.memmap)]
    if in_memory:
        from hpcswarm.comm import world_rank

        if world_rank() == 0:
            print(f"hpcswarm: note: {path}: {' and '.join(in_memory)} "
                  f"{'is' if len(in_memory) == 1 else 'are'} chunked, compressed or unallocated; "
                  "read into memory, not memory-mapped",
                  file=sys.stderr, flush=True)
    dataset = Dataset(X=X, y=y, class_names=class_names, gene_names=gene_names,
                      sample_names=sample_names, attrs=attrs, path=path,
                      memory_mapped=not in_memory, values_finite=values_finite)
    dataset.X_genes = X_genes
    return dataset
