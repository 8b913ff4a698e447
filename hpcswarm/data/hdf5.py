"""The hpcswarm HDF5 layout: writing a dataset atomically and opening it memory-mapped.

Layout (every object carries ``encoding-type`` and ``encoding-version``, as anndata does)::

    /                 encoding-type "hpcswarm-dataset", provenance attributes, and the
                      writer's values check: values-finite (bool, whether every value of X
                      is finite) and values-max-abs (float, the largest |value|), both
                      found as the blocks are written
    /X                (n_samples, n_genes) float64 or float32, contiguous, uncompressed
    /X_genes          (n_genes, n_samples) the same values gene-major (X.T), same type and layout
    /y                (n_samples,) int64 class codes
    /class_names      (n_classes,) UTF-8 strings
    /gene_names       (n_genes,) UTF-8 strings
    /sample_names     (n_samples,) UTF-8 strings, only when the source named its samples

Both matrices are written by blocks of rows (:class:`MatrixTarget`), so that a conversion
streams a file of any size into them with bounded memory.

The values check at opening (:func:`hpcswarm.data.values.checked`: finite, ``X_genes`` equal
to ``X.T``, the largest value) reads both matrices, 0.5-1 s at 10,000 x 20,000. It is not
read again from a file hpcswarm wrote and nothing changed since: its writer wrote both
matrices from the same blocks and found the values finite and their largest magnitude as it
wrote them, then sealed the complete file (:func:`seal`): it set the file's modification time
to one whose fraction of a second is :data:`SEAL_NS`. Any later write, by any tool, gives the
file the time of that write, whose fraction is :data:`SEAL_NS` only by chance (one in a
million on a file system that keeps microseconds, one in a billion with nanoseconds); a copy
gets its own time unless times are preserved (``cp -p``, ``rsync -a``: the same bytes). Such
a file, every file another tool wrote (no ``values-max-abs``), and every file on a file
system that keeps whole seconds only, is checked value by value at every opening, as
before. The seal is in the file's metadata, not in its bytes: converting the same source
twice still gives identical files.

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
import time
from pathlib import Path

import h5py
import numpy as np

from hpcswarm.data.dataset import Dataset
from hpcswarm.data.table import BLOCK_CELLS
from hpcswarm.data.validate import check_names, clean_names
from hpcswarm.data.values import checked, recorded
from hpcswarm.errors import DataError
from hpcswarm.store.atomic import atomic_hdf5
from hpcswarm.store.encoding import (ARRAY_ENCODING, STRINGS_ENCODING, check_tag, damaged_file,
                                     decode_value, read_tag, tag)
from hpcswarm.store.reading import check_declared, checked_read, parse_json

ENCODING_TYPE = "hpcswarm-dataset"
ENCODING_VERSION = "0.2.0"
_STR = h5py.string_dtype("utf-8")
FINITE_ATTRIBUTE = "values-finite"
"""Root attribute: True when every value of ``X`` was found finite as the file was written."""

MAX_ABS_ATTRIBUTE = "values-max-abs"
"""Root attribute: the largest absolute value of ``X`` (of its finite values), found as the
file was written."""

CHECK_ATTRIBUTES = (FINITE_ATTRIBUTE, MAX_ABS_ATTRIBUTE)

SEAL_NS = 271_828_000
"""The fraction of a second (ns) of a sealed file's modification time (:func:`seal`): a
multiple of 1,000, kept by file systems that store microseconds or finer."""


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
    seal(output)


def write_labels_and_names(f, attrs, y, class_names, gene_names, sample_names):
    """Everything of the layout but the matrices: provenance attributes, ``/y`` and names."""
    tag(f, (ENCODING_TYPE, ENCODING_VERSION))
    for key, value in attrs.items():
        f.attrs[key] = _attr_value(value)
    tag(f.create_dataset("y", data=np.asarray(y, dtype=np.int64)), ARRAY_ENCODING)
    for key, names in (("class_names", class_names), ("gene_names", gene_names),
                       ("sample_names", sample_names)):
        if names is not None:
            strings = np.array(names, dtype=object)
            tag(f.create_dataset(key, data=strings, dtype=_STR), STRINGS_ENCODING)


def seal(output):
    """Mark the complete file ``output`` (closed and renamed) as unchanged since its writer
    checked its values: its modification time becomes the last whole second before now plus
    :data:`SEAL_NS`. Where the file system refuses, the file keeps its own time and is
    checked value by value when opened."""
    now = time.time_ns()
    try:
        os.utime(output, ns=(now, (now // 10**9 - 1) * 10**9 + SEAL_NS))
    except OSError:
        pass


def _allocated(f, name, shape, dtype):
    """A contiguous dataset whose storage is allocated now and never filled, so that its
    file offset is known and blocks can be written there directly."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    dset = f.create_dataset(name, shape=shape, dtype=dtype, dcpl=dcpl)
    tag(dset, ARRAY_ENCODING)
    return dset


class MatrixTarget:
    """``/X`` and ``/X_genes`` of an open new file, filled by blocks of rows.

    A block of sample rows is one contiguous stretch of ``/X`` and one column block of
    ``/X_genes`` (and the reverse for gene rows); the file's ``values-finite`` records
    whether every block was finite, ``values-max-abs`` their largest magnitude. Both are
    written with ``pwrite`` at the
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
        f.attrs[MAX_ABS_ATTRIBUTE] = self.max_abs = 0.0
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
        elif block.size:
            self.max_abs = max(self.max_abs, float(block.max()), -float(block.min()))
            self.file.attrs[MAX_ABS_ATTRIBUTE] = self.max_abs
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
        """A scratch copy in an unnamed file of the output's folder."""
        from hpcswarm.data.build import file_stage

        return file_stage(self.folder, n_cols)

    def target(self, n_samples, n_genes, dtype, genes_rows):
        """The file's ``/X`` and ``/X_genes``."""
        return MatrixTarget(self.f, n_samples, n_genes, dtype, genes_rows)


def _strings(f, key, path, length):
    """The names of the string dataset ``key``, or None when the file has none; ``length``
    is their number (an int) or the ``range`` it may lie in, checked before they are read
    (:func:`~hpcswarm.store.reading.checked_read`)."""
    if key not in f:
        return None
    dset = f[key]
    if isinstance(length, int) and dset.ndim == 1 and dset.shape[0] != length:
        raise DataError(f"{path}: '{key}' has {dset.shape[0]} entries, expected {length}")
    return [decode_value(v) for v in checked_read(dset, f"'{key}'", (length,), "T").tolist()]


def _json_or_text(value):
    """The ``options`` attribute as a dict (it is stored as JSON text, nested at most
    :data:`~hpcswarm.store.reading.MAX_JSON_DEPTH` deep)."""
    try:
        return parse_json(value)
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
        dataset; a soft link to a dataset of this file is followed): their bytes are not
        this file's, which the job's identity hashes. Or no values were ever stored.
    """
    link = f.get(key, getlink=True)
    if isinstance(link, h5py.ExternalLink):  # a soft link, within this file, is followed
        raise DataError(f"{path}: '{key}' is a link to another file ({link.filename!r}, "
                        f"{link.path!r}); hpcswarm reads only datasets stored in the file "
                        "itself (convert the source again)")
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
    check_declared(dset, f"'{key}'", (None, None), "f")  # its size, before it is allocated
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
        underflow), or take the check its writer recorded while the file is unchanged since
        (:attr:`Dataset.recorded_findings`, see the module docstring). False leaves that to
        the caller, e.g. split between MPI ranks.

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
    with f, damaged_file(path, "dataset"):
        _check_layout(f, path)
        n_samples, n_genes = f["X"].shape
        y = checked_read(f["y"], "'y'", (n_samples,), "iu").astype(np.int64)
        class_names = _strings(f, "class_names", path, range(n_samples + 1))
        gene_names = _strings(f, "gene_names", path, n_genes)
        sample_names = _strings(f, "sample_names", path, n_samples)
        attrs = {decode_value(k): decode_value(v) for k, v in f.attrs.items()
                 if k not in ("encoding-type", "encoding-version", *CHECK_ATTRIBUTES)}
        findings = _recorded_findings(f, path)
        if "options" in attrs:
            attrs["options"] = _json_or_text(attrs["options"])
        X, X_why = _mapped_or_read(f, "X", path)
        X_genes, genes_why = _mapped_or_read(f, "X_genes", path)
    written = (gene_names, sample_names, class_names)
    gene_names, class_names = clean_names(gene_names), clean_names(class_names)
    sample_names = None if sample_names is None else clean_names(sample_names)
    check_names(gene_names, "gene", path, written[0])
    if sample_names is not None:
        check_names(sample_names, "sample", path, written[1])
    check_names(class_names, "class", path, written[2])
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
    dataset.recorded_findings = findings
    return checked(dataset, str(path)) if check_values else dataset


def _recorded_findings(f, path):
    """The writer's values check of the open file ``f`` at ``path`` (findings of
    :func:`hpcswarm.data.values.recorded`) while the file is sealed (:func:`seal`); None
    otherwise (another tool's file, or changed since)."""
    attrs = f.attrs
    if not all(key in attrs for key in CHECK_ATTRIBUTES) or not bool(attrs[FINITE_ATTRIBUTE]):
        return None
    if os.stat(path).st_mtime_ns % 10**9 != SEAL_NS:
        return None
    n_samples, n_genes = f["X"].shape
    return recorded(float(attrs[MAX_ABS_ATTRIBUTE]), n_genes, n_samples)
