"""From a :class:`~hpcswarm.data.table.MatrixSource` to a checked matrix, block by block.

The checks of :mod:`hpcswarm.data.validate` applied while the source streams: labels first
(samples without one, classes below ``min_class_size``), then every block of rows goes to its
destination (an array in memory, or the ``/X`` and ``/X_genes`` of an HDF5 file) while the
NaN/infinity counts and per-gene ranges are gathered. When ``--nan drop-*`` or
``--drop-constant`` may remove genes or samples after the fact, the blocks go first to a
scratch copy (memory, or a raw file beside the output) from which the kept part is copied.
Memory is therefore one block plus per-gene and per-sample flags, whatever the matrix's size.
"""

import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.data.table import BLOCK_CELLS
from hpcswarm.data.validate import (DTYPES, NAN_POLICIES, Cleaning, check_choice, check_names,
                                    clean_names, encode_labels, label_text)
from hpcswarm.errors import DataError, ParameterError

MEMORY_FRACTION = 0.8
"""Share of the machine's memory (or disk) a conversion may plan to use."""

_SHOWN = 5
"""Names listed in an error or summary before "...". """


@dataclass(eq=False)
class Built:
    """What :func:`build` made, besides the matrix its destination holds."""

    y: np.ndarray
    class_names: list
    gene_names: list
    sample_names: list
    cleaning: Cleaning = field(default_factory=Cleaning)


def shown(names, count=_SHOWN):
    """The first ``count`` names quoted, with ``...`` when there are more."""
    names = list(names)
    return ", ".join(repr(str(n)) for n in names[:count]) + (", ..." if len(names) > count else "")


def _select_samples(labels, sample_names, path, source, drop_unlabelled, min_class_size,
                    cleaning):
    """Samples kept by the label rules, as a boolean mask, and every label as its class name
    (:func:`~hpcswarm.data.validate.label_text`: ``1`` and ``1.0`` one class, ``NA``, ``?``
    and NaN missing)."""
    where = source.label_file or path
    names = sample_names if sample_names is not None else [str(i + 1) for i in range(labels.size)]

    def place(i):
        at = "" if source.label_places is None else f"{source.label_places[i]}, "
        return f"{at}sample {names[i]!r}"

    text = []
    for i, value in enumerate(labels.tolist()):
        try:
            text.append(label_text(value))
        except ValueError as exc:
            raise DataError(f"{where}: {place(i)}: the label {exc}") from None
    missing = np.array([t is None for t in text], dtype=bool)
    if missing.any():
        lost = [names[i] for i in np.flatnonzero(missing)]
        if not drop_unlabelled:
            first = int(np.flatnonzero(missing)[0])
            value = labels[first]
            value = repr(value) if isinstance(value, str) else str(value)
            origin = f" {source.label_origin}" if source.label_origin else ""
            raise DataError(f"{where}: {place(first)} has no label ({value}); {len(lost)} "
                            f"sample(s) without a label{origin}: {shown(lost)} "
                            "(--drop-unlabelled leaves them out)")
        cleaning.unlabelled_samples = lost
    labels[:] = np.array(["" if t is None else t for t in text], dtype=object)
    keep = ~missing
    if min_class_size is not None:
        if min_class_size < 1:
            raise ParameterError(f"min_class_size must be a positive integer, got {min_class_size}")
        text = np.array(labels, dtype=object)
        values, counts = np.unique(text[keep], return_counts=True)
        small = [(v, int(c)) for v, c in zip(values.tolist(), counts.tolist()) if c < min_class_size]
        if small:
            keep &= ~np.isin(text, [v for v, _ in small])
            cleaning.small_classes = small
    if not keep.any():
        raise DataError(f"{path}: no sample left after the label rules")
    return keep


class _Stats:
    """NaN/infinity flags and per-gene ranges gathered block by block (kept samples only)."""

    def __init__(self, n_samples, n_genes, genes_rows, ranges):
        self.genes_rows = genes_rows
        self.bad_samples = np.zeros(n_samples, dtype=bool)
        self.bad_genes = np.zeros(n_genes, dtype=bool)
        self.n_bad = 0
        self.first = None  # (sample, gene, value), the first in sample-major order
        self.low = np.full(n_genes, np.inf) if ranges else None
        self.high = np.full(n_genes, -np.inf) if ranges else None

    def add(self, start, block):
        bad = ~np.isfinite(block)
        stop = start + block.shape[0]
        if bad.any():
            self.n_bad += int(bad.sum())
            rows, cols = bad.any(axis=1), bad.any(axis=0)
            if self.genes_rows:
                self.bad_genes[start:stop] |= rows
                self.bad_samples |= cols
                j = int(np.argmax(cols))
                i = int(np.argmax(bad[:, j]))
                found = (j, start + i, block[i, j])
            else:
                self.bad_samples[start:stop] |= rows
                self.bad_genes |= cols
                i, j = (int(v) for v in np.argwhere(bad)[0])
                found = (start + i, j, block[i, j])
            if self.first is None or found[:2] < self.first[:2]:
                self.first = found
        if self.low is not None:
            if self.genes_rows:
                self.low[start:stop] = block.min(axis=1, initial=np.inf)
                self.high[start:stop] = block.max(axis=1, initial=-np.inf)
            else:
                np.minimum(self.low, block.min(axis=0, initial=np.inf), out=self.low)
                np.maximum(self.high, block.max(axis=0, initial=-np.inf), out=self.high)


def _kept_blocks(source, genes_rows, keep_samples, path):
    """``(start, block)`` of the source's rows with the dropped samples removed; ``start``
    counts the rows before the block."""
    read = start = 0
    for block in source.blocks():
        block = np.asarray(block, dtype=np.float64)
        if block.ndim != 2 or block.shape[1] != source.shape[1]:
            raise DataError(f"{path}: a block of shape {block.shape} where rows of "
                            f"{source.shape[1]} values were expected")
        rows = block.shape[0]
        if genes_rows:
            block = block if keep_samples.all() else block[:, keep_samples]
        else:
            block = block[keep_samples[read:read + rows]]
        read += rows
        yield start, block
        start += block.shape[0]
    if read != source.shape[0]:
        raise DataError(f"{path}: {read} rows read where {source.shape[0]} were counted")


def _apply_nan_policy(stats, nan, path, sample_names, gene_names, cleaning):
    """Kept genes and samples after ``--nan``; with ``error``, one message counting every
    NaN or infinite value and locating the first (in sample-major order)."""
    keep_genes = np.ones(stats.bad_genes.size, dtype=bool)
    keep_samples = np.ones(stats.bad_samples.size, dtype=bool)
    if stats.n_bad == 0:
        return keep_genes, keep_samples
    if nan == "error":
        i, j, value = stats.first
        where = (f"sample {sample_names[i]!r} (row {i + 1})" if sample_names is not None
                 else f"sample {i + 1}")
        raise DataError(
            f"{path}: {stats.n_bad} NaN or infinite value{'s' if stats.n_bad > 1 else ''} "
            f"in {int(stats.bad_samples.sum())} sample(s) and {int(stats.bad_genes.sum())} "
            f"gene(s); the first is {value} at {where}, gene {gene_names[j]!r} (column {j + 1}) "
            "(--nan drop-genes or --nan drop-samples removes them)")
    if nan == "drop-genes":
        keep_genes = ~stats.bad_genes
        cleaning.nonfinite_genes = [gene_names[j] for j in np.flatnonzero(stats.bad_genes)]
    else:
        keep_samples = ~stats.bad_samples
        cleaning.nonfinite_samples = [
            sample_names[i] if sample_names is not None else str(i + 1)
            for i in np.flatnonzero(stats.bad_samples)]
    if not keep_genes.any() or not keep_samples.any():
        raise DataError(f"{path}: no values left after --nan {nan}")
    return keep_genes, keep_samples


def _masked(blocks, genes_rows, keep_genes, keep_samples):
    """``(start, block)`` of staged rows restricted to the kept genes and samples."""
    keep_rows, keep_cols = (keep_genes, keep_samples) if genes_rows else (keep_samples, keep_genes)
    cols = None if keep_cols.all() else keep_cols
    start = 0
    for row, block in blocks:
        block = block[keep_rows[row:row + block.shape[0]]]
        if cols is not None:
            block = block[:, cols]
        if block.shape[0]:
            yield start, block
            start += block.shape[0]


def _ranges(blocks, genes_rows, n_genes):
    """Per-gene minimum and maximum over ``(start, block)`` blocks."""
    stats = _Stats(0, n_genes, genes_rows, ranges=True)
    for start, block in blocks:
        stats.add(start, block)
    return stats.low, stats.high


def build(source, path, destination, *, dtype="float64", drop_constant=False, transpose=False,
          nan="error", drop_unlabelled=False, min_class_size=None):
    """Check a source and stream its matrix into ``destination``.

    Parameters
    ----------
    source : MatrixSource
        What the reader found.
    path : str or Path
        The input file, named in every error message.
    destination : MemoryDestination or hpcswarm.data.hdf5.FileDestination
        Where the checked matrix goes.
    dtype : {"float64", "float32"}
        Storage type of ``X``.
    drop_constant : bool
        Remove genes whose value is the same in every kept sample.
    transpose : bool
        The file's rows are the other kind (genes where samples were expected, or the reverse).
    nan : {"error", "drop-genes", "drop-samples"}
        What to do about NaN or infinite values.
    drop_unlabelled : bool
        Drop samples without a label instead of refusing them.
    min_class_size : int or None
        Drop the samples of classes with fewer samples than this.

    Returns
    -------
    Built
        Labels, names and what was removed; the matrix is in ``destination``.
    """
    check_choice("dtype", dtype, DTYPES)
    check_choice("nan", nan, NAN_POLICIES)
    if len(source.shape) != 2:
        raise DataError(f"{path}: the expression matrix has {len(source.shape)} dimension(s), "
                        "expected 2")
    genes_rows = bool(source.rows_are_genes) != bool(transpose)
    n_rows, n_cols = source.shape
    n_samples, n_genes = (n_cols, n_rows) if genes_rows else (n_rows, n_cols)
    gene_names = source.row_names if genes_rows else source.col_names
    sample_names = source.col_names if genes_rows else source.row_names
    written = (None if gene_names is None else list(gene_names),
               None if sample_names is None else list(sample_names))
    gene_names = ([f"g{j + 1}" for j in range(n_genes)] if gene_names is None
                  else clean_names(gene_names))
    sample_names = None if sample_names is None else clean_names(sample_names)
    if n_samples == 0 or n_genes == 0:
        raise DataError(f"{path}: the matrix is empty ({n_samples} samples x {n_genes} genes)")
    labels = np.asarray(source.labels).ravel()
    if labels.size != n_samples:
        hint = "; try --transpose" if labels.size == n_genes else ""
        raise DataError(f"{path}: {labels.size} labels for {n_samples} samples "
                        f"(the label count must match the sample count{hint})")
    check_names(gene_names, "gene", path, written[0])
    if sample_names is not None:
        check_names(sample_names, "sample", path, written[1])
    cleaning = Cleaning(notes=list(source.notes))
    labels = labels.astype(object)
    keep = _select_samples(labels, sample_names, path, source, drop_unlabelled,
                           min_class_size, cleaning)
    labels = labels[keep]
    if sample_names is not None:
        sample_names = [name for name, k in zip(sample_names, keep) if k]
    staged = nan != "error" or drop_constant
    destination.check_room(path, int(keep.sum()), n_genes, np.dtype(dtype).itemsize, staged)
    stats = _Stats(labels.size, n_genes, genes_rows, ranges=drop_constant)
    blocks = _kept_blocks(source, genes_rows, keep, path)
    if not staged:
        target = destination.target(labels.size, n_genes, dtype, genes_rows)
        for start, block in blocks:
            stats.add(start, block)
            target.put(start, block)
        _apply_nan_policy(stats, nan, path, sample_names, gene_names, cleaning)
        y, class_names = _encode(labels, source.class_order, path)
        return Built(y=y, class_names=class_names, gene_names=gene_names,
                     sample_names=sample_names, cleaning=cleaning)
    with destination.stage(labels.size if genes_rows else n_genes) as stage:
        for start, block in blocks:
            stats.add(start, block)
            stage.put(start, block)
        keep_genes, keep_samples = _apply_nan_policy(stats, nan, path, sample_names, gene_names,
                                                     cleaning)
        labels = labels[keep_samples]
        y, class_names = _encode(labels, source.class_order, path)
        if drop_constant:
            low, high = stats.low, stats.high
            if not keep_samples.all():
                low, high = _ranges(_masked(stage.blocks(), genes_rows, np.ones_like(keep_genes),
                                            keep_samples), genes_rows, n_genes)
            constant = keep_genes & ~(high > low)
            cleaning.constant_genes = [gene_names[j] for j in np.flatnonzero(constant)]
            keep_genes &= ~constant
            if not keep_genes.any():
                raise DataError(f"{path}: every gene is constant")
        gene_names = [name for name, k in zip(gene_names, keep_genes) if k]
        if sample_names is not None:
            sample_names = [name for name, k in zip(sample_names, keep_samples) if k]
        target = destination.target(labels.size, len(gene_names), dtype, genes_rows)
        for start, block in _masked(stage.blocks(), genes_rows, keep_genes, keep_samples):
            target.put(start, block)
    return Built(y=y, class_names=class_names, gene_names=gene_names, sample_names=sample_names,
                 cleaning=cleaning)


def _encode(labels, class_order, path):
    y, class_names = encode_labels(labels, class_order)
    if len(class_names) < 2:
        raise DataError(
            f"{path}: a single class ({class_names[0]!r}, {y.size} samples); "
            "selecting genes needs at least two classes")
    return y, class_names


class ArrayTarget:
    """The checked matrix in memory, ``X`` of shape (n_samples, n_genes)."""

    def __init__(self, n_samples, n_genes, dtype, genes_rows):
        self.X = np.empty((n_samples, n_genes), dtype=np.dtype(dtype))
        self.genes_rows = genes_rows

    def put(self, start, block):
        """Rows ``start ..`` of the source's orientation (genes or samples)."""
        if self.genes_rows:
            self.X[:, start:start + block.shape[0]] = block.T
        else:
            self.X[start:start + block.shape[0]] = block


class ArrayStage:
    """A scratch copy of the streamed rows in memory."""

    def __init__(self):
        self.parts = []

    def put(self, start, block):
        """Keep a block of rows (they arrive in order)."""
        self.parts.append((start, block))

    def blocks(self):
        """``(start, block)`` of the rows kept, in order."""
        return iter(self.parts)


class FileStage:
    """A scratch copy of the streamed rows as raw float64 in an unnamed file of ``folder``,
    gone when the conversion ends, however it ends (:func:`file_stage`)."""

    def __init__(self, handle, n_cols):
        self.handle = handle
        self.n_cols = n_cols
        self.n_rows = 0

    def put(self, start, block):
        """Append a block of rows."""
        np.ascontiguousarray(block, dtype=np.float64).tofile(self.handle)
        self.n_rows += block.shape[0]

    def blocks(self):
        """``(start, block)`` of the rows written, read back a block at a time."""
        self.handle.flush()
        step = max(1, BLOCK_CELLS // max(1, self.n_cols))
        for start in range(0, self.n_rows, step):
            rows = min(step, self.n_rows - start)
            self.handle.seek(start * self.n_cols * 8)
            block = np.fromfile(self.handle, dtype=np.float64, count=rows * self.n_cols)
            yield start, block.reshape(rows, self.n_cols)


@contextmanager
def file_stage(folder, n_cols):
    """A :class:`FileStage` in a file of ``folder`` that has no name
    (:func:`tempfile.TemporaryFile`: created unnamed, or removed as soon as it is opened), so
    that it is gone however the block ends, a killed process included."""
    try:
        handle = tempfile.TemporaryFile("w+b", dir=folder)
    except OSError as exc:
        raise DataError(f"{folder}: cannot write a scratch file ({exc.strerror})") from None
    with handle:
        yield FileStage(handle, n_cols)


def _gb(n_bytes):
    return f"{n_bytes / 1e9:.3g} GB"


class MemoryDestination:
    """A conversion held in memory: the matrix ends in :attr:`X`."""

    def __init__(self):
        self.X = None

    def check_room(self, path, n_samples, n_genes, itemsize, staged):
        """Refuse a matrix that would not fit in memory (``MEMORY_FRACTION`` of the machine's)."""
        from hpcswarm.system import available_memory

        need = n_samples * n_genes * (itemsize + (8 if staged else 0))
        have, described = available_memory(1)
        if need > MEMORY_FRACTION * have:
            raise DataError(f"{path}: {n_samples} samples x {n_genes} genes need {_gb(need)} in "
                            f"memory, more than {MEMORY_FRACTION:.0%} of {described}; convert it "
                            "to an .h5 file with 'hpcswarm convert' (streamed, bounded memory)")

    @contextmanager
    def stage(self, n_cols):
        """A scratch copy in memory."""
        yield ArrayStage()

    def target(self, n_samples, n_genes, dtype, genes_rows):
        """The final array, kept as :attr:`X`."""
        target = ArrayTarget(n_samples, n_genes, dtype, genes_rows)
        self.X = target.X
        return target
