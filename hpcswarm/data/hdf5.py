"""The hpcswarm HDF5 layout: writing a dataset atomically and opening it memory-mapped.

Layout (every object carries ``encoding-type`` and ``encoding-version``, as anndata does)::

    /                 encoding-type "hpcswarm-dataset", provenance attributes, and
                      values-finite (bool): whether every value of X is finite, checked
                      as X_genes is written (open_dataset checks again all the same:
                      another tool may have changed the values in place)
    /X                (n_samples, n_genes) float64 or float32, contiguous, uncompressed
    /X_genes          (n_genes, n_samples) the same values gene-major (X.T), same type and layout
    /y                (n_samples,) int64 class codes
    /class_names      (n_classes,) UTF-8 strings
    /gene_names       (n_genes,) UTF-8 strings
    /sample_names     (n_samples,) UTF-8 strings, only when the source named its samples

Both matrices are written by blocks of rows (:class:`MatrixTarget`), so that a conversion
streams a file of any size into them with bounded memory.

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
import os
import shutil
from pathlib import Path

import h5py
import numpy as np

from hpcswarm.atomic import atomic_hdf5
from hpcswarm.data.dataset import Dataset
from hpcswarm.data.table import BLOCK_CELLS
from hpcswarm.data.validate import check_unique
from hpcswarm.data.values import checked
from hpcswarm.encoding import check_tag, decode_value, read_tag, tag
from hpcswarm.errors import DataError

ENCODING_TYPE = "hpcswarm-dataset"
ENCODING_VERSION = "0.2.0"
_ARRAY = ("array", "0.2.0")
_STRINGS = ("string-array", "0.2.0")
_STR = h5py.string_dtype("utf-8")
FINITE_ATTRIBUTE = "values-finite"
"""Root attribute: True when every value of ``X`` was found finite as the file was written."""


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
    X = np.asarray(dataset.X)
    with atomic_hdf5(output, overwrite=overwrite) as f:
        target = MatrixTarget(f, X.shape[0], X.shape[1], X.dtype, genes_rows=False)
        step = max(1, BLOCK_CELLS // max(1, X.shape[1]))
        for start in range(0, X.shape[0], step):
            target.put(start, X[start:start + step])
        write_labels_and_names(f, dataset.attrs, dataset.y, dataset.class_names,
                               dataset.gene_names, dataset.sample_names)


def write_labels_and_names(f, attrs, y, class_names, gene_names, sample_names):
    """Everything of the layout but the matrices: provenance attributes, ``/y`` and names."""
    tag(f, (ENCODING_TYPE, ENCODING_VERSION))
    for key, value in attrs.items():
        f.attrs[key] = _attr_value(value)
    tag(f.create_dataset("y", data=np.asarray(y, dtype=np.int64)), _ARRAY)
    for key, names in (("class_names", class_names), ("gene_names", gene_names),
                       ("sample_names", sample_names)):
        if names is not None:
            strings = np.array(names, dtype=object)
            tag(f.create_dataset(key, data=strings, dtype=_STR), _STRINGS)


def _allocated(f, name, shape, dtype):
    """A contiguous dataset whose storage is allocated now and never filled, so that its
    file offset is known and blocks can be written there directly."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    dset = f.create_dataset(name, shape=shape, dtype=dtype, dcpl=dcpl)
    tag(dset, _ARRAY)
    return dset


class MatrixTarget:
    """``/X`` and ``/X_genes`` of an open new file, filled by blocks of rows.

    A block of sample rows is one contiguous stretch of ``/X`` and one column block of
    ``/X_genes`` (and the reverse for gene rows); the file's ``values-finite`` records
    whether every block was finite. Both are written with ``pwrite`` at the
    datasets' file offsets: the contiguous one in one call, the other as one short write per
    row. Through h5py, a column block of a contiguous dataset costs a read-modify-write of
    HDF5's 64 KiB sieve buffer per row; memory-mapping it instead would count every touched
    page in the converter's resident memory.

    Parameters
    ----------
    f : h5py.File
        The new file, open for writing.
    n_samples, n_genes : int
    dtype : numpy dtype
        float64 or float32 (native byte order); blocks are cast to it.
    genes_rows : bool
        Blocks hold genes as rows (else samples).
    """

    def __init__(self, f, n_samples, n_genes, dtype, genes_rows):
        self.file = f
        f.attrs[FINITE_ATTRIBUTE] = True  # until a block says otherwise
        self.path = f.filename
        self.dtype = np.dtype(dtype).newbyteorder("=")
        X = _allocated(f, "X", (n_samples, n_genes), self.dtype)
        X_genes = _allocated(f, "X_genes", (n_genes, n_samples), self.dtype)
        major, minor = (X_genes, X) if genes_rows else (X, X_genes)
        self.major_offset, self.minor_offset = major.id.get_offset(), minor.id.get_offset()
        self.major_row = major.shape[1] * self.dtype.itemsize
        self.minor_row = minor.shape[1] * self.dtype.itemsize

    @staticmethod
    def _write(fd, data, offset):
        view = memoryview(data).cast("B")
        while view:
            written = os.pwrite(fd, view, offset)
            view, offset = view[written:], offset + written

    def put(self, start, block):
        """Rows ``start ..`` (genes or samples, as constructed) of both matrices."""
        block = np.ascontiguousarray(block, dtype=self.dtype)
        if not np.isfinite(block).all():
            self.file.attrs[FINITE_ATTRIBUTE] = False
        columns = np.ascontiguousarray(block.T)
        fd = os.open(self.path, os.O_WRONLY)  # an OSError names the output (atomic_path)
        try:
            self._write(fd, block, self.major_offset + start * self.major_row)
            offset = self.minor_offset + start * self.dtype.itemsize
            for i, row in enumerate(columns):
                self._write(fd, row, offset + i * self.minor_row)
        finally:
            os.close(fd)


class FileDestination:
    """A conversion streamed into an open new HDF5 file ``f``; scratch copies beside it."""

    def __init__(self, f, folder):
        self.f = f
        self.folder = Path(folder)

    def check_room(self, path, n_samples, n_genes, itemsize, staged):
        """Refuse a matrix whose file (twice the matrix) and scratch copy would not fit on the
        output's file system."""
        need = n_samples * n_genes * (2 * itemsize + (8 if staged else 0))
        free = shutil.disk_usage(self.folder).free
        if need > free:
            raise DataError(f"{path}: {n_samples} samples x {n_genes} genes need "
                            f"{need / 1e9:.3g} GB in {str(self.folder)!r}, which has "
                            f"{free / 1e9:.3g} GB free")

    def stage(self, n_cols):
        """A scratch copy in a hidden file of the output's folder."""
        from hpcswarm.data.build import file_stage

        return file_stage(self.folder, n_cols)

    def target(self, n_samples, n_genes, dtype, genes_rows):
        """The file's ``/X`` and ``/X_genes``."""
        return MatrixTarget(self.f, n_samples, n_genes, dtype, genes_rows)


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


def _placement(f, key, path):
    """Where the bytes of the dataset ``key`` lie: ``(offset, None)`` when numpy can map them
    (contiguous, unfiltered, allocated inside ``path`` itself, native byte order), else
    ``(None, reason)`` to read them through h5py.

    Raises
    ------
    DataError
        The values are not in this file (an external link, external storage, a virtual
        dataset): their bytes are not this file's, which the job's identity hashes. Or no
        values were ever stored.
    """
    if not isinstance(f.get(key, getlink=True), h5py.HardLink):
        raise DataError(f"{path}: '{key}' is a link to another file; hpcswarm reads only "
                        "datasets stored in the file itself (convert the source again)")
    dset = f[key]
    plist = dset.id.get_create_plist()
    layout = plist.get_layout()
    if layout == h5py.h5d.VIRTUAL or plist.get_external_count():
        raise DataError(f"{path}: '{key}' keeps its values in other files (a virtual dataset "
                        "or external storage); hpcswarm reads only datasets stored in the "
                        "file itself (convert the source again)")
    if dset.size and dset.id.get_storage_size() == 0:
        raise DataError(f"{path}: '{key}' has no values stored (its storage was never written; "
                        "HDF5 would give its fill value for every cell)")
    if layout != h5py.h5d.CONTIGUOUS or plist.get_nfilters():
        return None, "chunked, compressed or compact"
    offset = dset.id.get_offset()
    if not dset.dtype.isnative:
        return None, "in the other byte order"
    return offset, None


def _mapped_or_read(f, key, path):
    """``f[key]`` as a read-only :class:`numpy.memmap` of ``path`` where numpy can map it,
    else read into memory in native byte order; and the reason it was read (or None)."""
    offset, why = _placement(f, key, path)
    dset = f[key]
    if offset is not None:
        return np.memmap(path, mode="r", dtype=dset.dtype, offset=offset, shape=dset.shape,
                         order="C"), None
    values = np.empty(dset.shape, dtype=dset.dtype.newbyteorder("="))
    try:
        if values.size:
            dset.read_direct(values)
    except (OSError, RuntimeError) as exc:
        raise DataError(f"{path}: '{key}' cannot be read ({str(exc).splitlines()[0]})") from None
    return values, why


def _native(dtype):
    """``dtype`` in this machine's byte order."""
    return dtype.newbyteorder("=")


def _check_layout(f, path):
    check_tag(f, (ENCODING_TYPE, ENCODING_VERSION), path, "dataset",
              hint="convert the source with 'python -m hpcswarm convert'")
    version = read_tag(f)[1]
    for key in ("X", "y", "class_names", "gene_names"):
        if not isinstance(f.get(key), h5py.Dataset):
            raise DataError(f"{path}: the dataset '{key}' is missing")
    X, y = f["X"], f["y"]
    if X.ndim != 2 or _native(X.dtype) not in (np.float64, np.float32):
        raise DataError(f"{path}: 'X' is {X.ndim}-D {X.dtype}, expected 2-D float64 or float32")
    if 0 in X.shape:
        raise DataError(f"{path}: 'X' has {X.shape[0]} samples and {X.shape[1]} genes; a "
                        "dataset needs at least one of each")
    genes = f.get("X_genes")
    if not isinstance(genes, h5py.Dataset):
        raise DataError(f"{path}: no gene-major matrix 'X_genes' (encoding-version {version}, "
                        f"written by an earlier hpcswarm); convert the source again with "
                        f"'python -m hpcswarm convert'")
    if genes.shape != X.shape[::-1] or _native(genes.dtype) != _native(X.dtype):
        raise DataError(f"{path}: 'X_genes' has shape {genes.shape} and type {genes.dtype}, "
                        f"expected {X.shape[::-1]} {X.dtype} (the transpose of 'X')")
    if y.shape != (X.shape[0],) or y.dtype.kind not in "iu":
        raise DataError(f"{path}: 'y' has shape {y.shape} and type {y.dtype}, "
                        f"expected {X.shape[0]} integers")


def open_dataset(path, *, check_values=True):
    """Open an hpcswarm HDF5 file, memory-mapping ``X`` and ``X_genes`` when their layout allows.

    Parameters
    ----------
    path : str or Path
    check_values : bool, default True
        Check every value (:func:`hpcswarm.data.values.checked`: finite, ``X_genes`` equal to
        ``X`` transposed, scaled by a power of two where squares would overflow or
        underflow). False leaves that to the caller, e.g. split between MPI ranks.

    Returns
    -------
    Dataset
        ``X`` and ``X_genes`` are read-only :class:`numpy.memmap` of the file when their bytes
        are contiguous, unfiltered and in native byte order, so that processes opening the
        same file share its pages; otherwise the one that is not is read into memory through
        h5py and a one-line note says so (:attr:`Dataset.notes`; nothing is printed).

    Raises
    ------
    DataError
        The file is missing, not HDF5, not an hpcswarm dataset (or one written before
        ``X_genes`` existed) or inconsistent (shapes, labels, repeated or missing names),
        keeps its matrices in other files, holds NaN or infinite values or an ``X_genes``
        that is not ``X`` transposed, or a single class.
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
        if "options" in attrs:
            attrs["options"] = _json_or_text(attrs["options"])
        X, X_why = _mapped_or_read(f, "X", path)
        X_genes, genes_why = _mapped_or_read(f, "X_genes", path)
    check_unique(gene_names, "gene", path)
    if sample_names is not None:
        check_unique(sample_names, "sample", path)
    check_unique(class_names, "class", path)
    if y.size and (y.min() < 0 or y.max() >= len(class_names)):
        raise DataError(f"{path}: class codes in 'y' run outside 0..{len(class_names) - 1}")
    present = np.unique(y)
    if present.size < 2:
        raise DataError(f"{path}: a single class ({class_names[present[0]]!r}, {y.size} samples) "
                        "in 'y'; selecting genes needs at least two classes")
    read = {}
    for key, why in (("X", X_why), ("X_genes", genes_why)):
        if why is not None:
            read.setdefault(why, []).append(key)
    notes = [f"{path}: {' and '.join(keys)} {'is' if len(keys) == 1 else 'are'} {why}; "
             "read into memory, not memory-mapped" for why, keys in read.items()]
    dataset = Dataset(X=X, y=y, class_names=class_names, gene_names=gene_names,
                      sample_names=sample_names, attrs=attrs, path=path,
                      memory_mapped=not read, values_finite=True,  # checked, here or by the caller
                      notes=notes)
    dataset.X_genes = X_genes
    return checked(dataset, str(path)) if check_values else dataset
