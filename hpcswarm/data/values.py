"""What the values of a dataset must be before the k-NN engine reads them: finite, the same in
``X`` and its gene-major copy ``X_genes``, and in a range where squared distances are exact.

The check is split by blocks of genes (rows of ``X_genes``): :func:`scan_genes` checks one
block and returns a *findings* vector, findings of several blocks combine by an element-wise
maximum (:func:`combine`; one ``Allreduce`` with ``MAX`` when MPI ranks checked a block each),
and :func:`verdict` turns the combined findings into an error or a power-of-two scale.

Agreement: each matrix is read once, sequentially and in its own order (``X`` by rows of
samples, ``X_genes`` by rows of genes), and reduced to checksums per gene of its values' bit
patterns (:func:`fletcher_sums`); only genes whose checksums differ, or whose values are not
all finite, are compared cell by cell (reading ``X`` across its rows only for them), so
that findings name the same first cell as a comparison of every cell would.

Scaling: the engine's squared Euclidean distances (Gram form ``|a|^2 + |b|^2 - 2 a.b``) of
values near the top of the floating-point range overflow to infinity, those near the bottom
underflow to zero; every neighbour then ties. Multiplying every value by ``2**k`` is exact in
binary floating point (IEEE 754: only the exponent changes) and multiplies every product and
sum the engine forms by ``2**(2k)``, so the neighbour order, hence every accuracy, is that of
the same values at a normal scale. Ordinary data (``k == 0``) is never touched. (Values more
than about ``2**1000`` below the largest are as negligible in the sums as at a normal scale.)
"""

import math

import numpy as np

from hpcswarm.comm import as_comm, block_range
from hpcswarm.data.table import BLOCK_CELLS
from hpcswarm.errors import DataError

FINDINGS = ("nonfinite X", "nonfinite X_genes", "X_genes differs from X.T", "max |value|")
"""Slots of a findings vector. The first three hold ``-(gene * n_samples + sample)`` of the
first such cell in gene-major order (``-n_genes * n_samples``: none), so that the maximum over
blocks is the first cell of the whole matrix; the last holds the largest absolute value."""


def _none(n_genes, n_samples):
    return -float(n_genes * n_samples)


SCAN_CELLS = 1 << 16
"""Values per block of :func:`scan_genes` (256 KiB of float32): a block stays in a core's
cache while its reductions read it again."""


def _words(block):
    """``block``'s bit patterns as 32-bit unsigned words: one per float32 value, two per float64
    value (word ``j`` of value ``i`` of a row at column ``i * words + j``)."""
    return block.view(np.uint32)


def fletcher_sums(genes, countdown, out):
    """Per gene (row of ``genes``) and word ``j`` of its values (:func:`_words`), the two sums
    of Fletcher's checksum (J. G. Fletcher, "An arithmetic checksum for serial transmissions",
    IEEE Trans. Commun. 30(1), 1982) over its ``n`` samples in order, ``A = sum w_i`` and
    ``B = sum (n - i + 1) w_i``, exact modulo ``2**64`` (unsigned wraparound, so independent of
    the order of the additions; each product is below ``2**64``).

    Every difference confined to one or two cells of a gene changes them: words ``w_s`` and
    ``w_t`` changed by ``d_s`` and ``d_t`` (each below ``2**32`` in magnitude) change ``A``
    unless ``d_t = -d_s`` (a swap, for one), and then ``B`` by ``(t - s) d_s``, nonzero and
    below ``2**64`` in magnitude.

    Parameters
    ----------
    genes : ndarray of float32 or float64, of shape (n_genes, n_samples)
        Rows of ``X_genes``.
    countdown : ndarray of uint64 of shape (n_samples,)
        ``n, n - 1, .. 1``.
    out : ndarray of uint64 of shape (2, n_genes, words)
        Receives ``A`` and ``B``.
    """
    words = _words(genes)
    n_words = words.shape[1] // genes.shape[1]
    for j in range(n_words):
        word = words[:, j::n_words]
        np.add.reduce(word, axis=1, dtype=np.uint64, out=out[0, :, j])
        np.einsum("gi,i->g", word, countdown, out=out[1, :, j])  # no product array


def _gene_rows(X_genes, start, stop):
    """:func:`fletcher_sums` of the genes ``start .. stop - 1`` read along rows of ``X_genes``,
    those genes that hold a NaN or an infinity, the first such cell and the largest finite
    ``|value|``."""
    n_genes, n_samples = X_genes.shape
    countdown = np.arange(n_samples, 0, -1, dtype=np.uint64)
    sums = np.empty((2, stop - start, X_genes.dtype.itemsize // 4), dtype=np.uint64)
    nonfinite = np.zeros(stop - start, dtype=bool)
    first_cell, largest = _none(n_genes, n_samples), 0.0
    step = max(1, SCAN_CELLS // n_samples)
    for first in range(start, stop, step):
        last = min(stop, first + step)
        genes = np.asarray(X_genes[first:last])
        high, low = float(genes.max()), float(genes.min())
        if math.isfinite(high) and math.isfinite(low):
            largest = max(largest, high, -low)
        else:
            finite = np.isfinite(genes)
            nonfinite[first - start:last - start] = ~finite.all(axis=1)
            if first_cell == _none(n_genes, n_samples):
                first_cell = -float(first * n_samples + np.flatnonzero(~finite)[0])
            magnitude = np.abs(genes, where=finite, out=np.zeros(genes.shape))
            largest = max(largest, float(magnitude.max()))
        fletcher_sums(genes, countdown, sums[:, first - start:last - start])
    return sums, nonfinite, first_cell, largest


def _sample_rows(X, start, stop):
    """:func:`fletcher_sums` of the genes ``start .. stop - 1`` read along rows of ``X`` (their
    stretch of each row): ``A`` adds the rows' words in turn, ``B`` adds ``A`` after each
    row, so that row ``i`` counts ``n - i + 1`` times."""
    words = X.dtype.itemsize // 4
    sums = np.zeros((2, (stop - start) * words), dtype=np.uint64)
    step = max(1, SCAN_CELLS // (stop - start))
    for first in range(0, X.shape[0], step):
        for row in _words(np.asarray(X[first:first + step, start:stop])):
            np.add(sums[0], row, out=sums[0])
            np.add(sums[1], sums[0], out=sums[1])
    return sums.reshape(2, stop - start, words)


def _cell_by_cell(X, X_genes, genes):
    """The first non-finite cell of ``X`` and the first cell where ``X_genes`` is not ``X.T``
    (NaN is unequal to itself, ``-0.0`` equal to ``0.0``) among ``genes`` (ascending), as
    findings slots; ``X`` is read across its rows, gene block by gene block."""
    n_genes, n_samples = X_genes.shape
    found = [_none(n_genes, n_samples)] * 2
    step = max(1, BLOCK_CELLS // n_samples)
    for first in range(0, len(genes), step):
        block = genes[first:first + step]
        along = np.asarray(X_genes[block])
        across = np.asarray(X[:, block]).T
        for slot, bad in enumerate((~np.isfinite(across), along != across)):
            if found[slot] == _none(n_genes, n_samples) and bad.any():
                gene, sample = divmod(int(np.flatnonzero(bad)[0]), n_samples)
                found[slot] = -float(block[gene] * n_samples + sample)
    return found


def scan_genes(X, X_genes, start, stop):
    """Findings of the genes ``start .. stop - 1``: NaN or infinities in ``X`` or ``X_genes``,
    cells where ``X_genes`` is not ``X`` transposed, and the largest absolute value.

    Reads ``X_genes`` by rows (each gene's values once) and ``X`` by rows of samples (the
    stretch of those genes), by blocks of about :data:`SCAN_CELLS` cells: bounded memory, no
    whole copy, no read across rows. Genes whose :func:`fletcher_sums` differ between the
    two, or that hold a NaN or infinity in ``X_genes``, are then compared cell by cell; in
    the others ``X`` holds the bit patterns of ``X_genes``, finite.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
    X_genes : ndarray of shape (n_genes, n_samples)
    start, stop : int
        Half-open range of genes (e.g. :func:`hpcswarm.comm.block_range` of this rank).

    Returns
    -------
    ndarray of float64 of shape (4,)
        The findings vector (:data:`FINDINGS`).
    """
    n_genes, n_samples = X_genes.shape
    none = _none(n_genes, n_samples)
    found = np.array([none, none, none, 0.0])
    if stop <= start or n_samples == 0:
        return found
    along, suspects, found[1], found[3] = _gene_rows(X_genes, start, stop)
    suspects |= (along != _sample_rows(X, start, stop)).any(axis=(0, 2))
    if suspects.any():
        found[0], found[2] = _cell_by_cell(X, X_genes, start + np.flatnonzero(suspects))
    return found


def recorded(max_abs, n_genes, n_samples):
    """The findings vector of a matrix known finite, with ``X_genes`` equal to ``X.T``, and
    largest absolute value ``max_abs``: what :func:`scan_genes` of every gene would return.

    The writer of an hpcswarm file knows this of what it wrote, and records it
    (:func:`hpcswarm.data.hdf5.open_dataset` reads it back while the file is unchanged).
    """
    none = _none(n_genes, n_samples)
    return np.array([none, none, none, float(max_abs)])


def combine(*findings):
    """Findings of several blocks combined (element-wise maximum, as ``Allreduce`` MAX)."""
    return np.maximum.reduce([np.asarray(f, dtype=np.float64) for f in findings])


def scale_exponent(max_abs, dtype, n_genes):
    """``k`` such that squared distances of values up to ``max_abs * 2**k`` neither overflow
    nor underflow in ``dtype``; 0 when ``max_abs`` already allows it (ordinary data).

    Safe means: a sum of ``n_genes`` squared differences (each below ``(2 max_abs)**2``) stays
    below the largest finite value, and ``max_abs**2`` is a normal number. Otherwise ``k``
    brings the largest value into ``[0.5, 1)``.
    """
    if max_abs == 0 or not math.isfinite(max_abs):
        return 0
    info = np.finfo(dtype)
    exponent = math.frexp(max_abs)[1]  # max_abs < 2**exponent
    overflows = 2 * (exponent + 1) + math.ceil(math.log2(max(1, n_genes))) >= info.maxexp
    underflows = 2 * (exponent - 1) < info.minexp
    return -exponent if overflows or underflows else 0


def _cell(dataset, flat):
    gene, sample = divmod(int(-flat), dataset.X.shape[0])
    name = repr(dataset.sample_names[sample]) if dataset.sample_names else str(sample + 1)
    return sample, gene, f"sample {name}, gene {dataset.gene_names[gene]!r}"


def verdict(dataset, findings, where):
    """The scale exponent :func:`scale_exponent` gives for ``dataset``'s combined findings.

    Parameters
    ----------
    dataset : Dataset
    findings : ndarray of shape (4,)
        Combined over every gene of the dataset.
    where : str
        The file (or source) named in messages.

    Raises
    ------
    DataError
        A NaN or infinity in ``X`` or ``X_genes``, or ``X_genes`` that is not ``X``
        transposed, named by its first cell.
    """
    none = _none(dataset.n_genes, dataset.n_samples)
    for slot, key in ((0, "X"), (1, "X_genes")):
        if findings[slot] != none:
            sample, gene, cell = _cell(dataset, findings[slot])
            value = dataset.X[sample, gene] if key == "X" else dataset.X_genes[gene, sample]
            raise DataError(f"{where}: '{key}' holds NaN or infinite values, the first "
                            f"({value}) at {cell}; convert the source with 'hpcswarm convert "
                            "--nan drop-genes' (or drop-samples)")
    if findings[2] != none:
        sample, gene, cell = _cell(dataset, findings[2])
        raise DataError(f"{where}: 'X_genes' is not the transpose of 'X': at {cell} 'X' holds "
                        f"{dataset.X[sample, gene]!r} and 'X_genes' "
                        f"{dataset.X_genes[gene, sample]!r} (changed by another tool?); "
                        "convert the source again with 'hpcswarm convert'")
    return scale_exponent(findings[3], dataset.X.dtype, dataset.n_genes)


def scaled(dataset, exponent, where, max_abs):
    """``dataset`` with every value of ``X`` and ``X_genes`` multiplied by ``2**exponent``
    (exact), read into memory, and a note saying so; ``dataset`` itself when ``exponent`` is 0.
    """
    if exponent == 0:
        return dataset
    X_genes = np.ldexp(np.asarray(dataset.X_genes), exponent).astype(dataset.X.dtype, copy=False)
    dataset.X = np.ldexp(np.asarray(dataset.X), exponent).astype(dataset.X.dtype, copy=False)
    dataset.X_genes = X_genes
    dataset.memory_mapped = False
    dataset.notes.append(f"{where}: values up to {max_abs:.3g} "
                         f"scaled by 2^{exponent} in memory, so that squared distances neither "
                         "overflow nor underflow (exact: the k-NN results are those of the "
                         "same values at a normal scale)")
    return dataset


def checked(dataset, where, comm=None):
    """``dataset`` after :func:`scan_genes` of every gene, split between the ranks of ``comm``
    (each its :func:`~hpcswarm.comm.block_range`, combined by one ``allreduce_max``), then
    :func:`verdict` and :func:`scaled`.

    A dataset whose file carries its writer's findings, unchanged since
    (:attr:`~hpcswarm.data.dataset.Dataset.recorded_findings`), is not scanned: those
    findings are used, when every rank of ``comm`` has them (one more ``allreduce_max``
    decides, so that every rank scans or none does).

    Parameters
    ----------
    dataset : Dataset
    where : str
        The file (or source) named in messages and notes.
    comm : Comm, optional
        Every rank opened the same dataset and calls this (collective); None: serial.
    """
    comm = as_comm(comm)
    findings = dataset.recorded_findings
    if comm.size > 1:
        missing = comm.allreduce_max(np.array([float(findings is None)]))[0]
        findings = None if missing else findings
    if findings is None:
        start, stop = block_range(dataset.n_genes, comm.size, comm.rank)
        findings = comm.allreduce_max(scan_genes(dataset.X, dataset.X_genes, start, stop))
    return scaled(dataset, verdict(dataset, findings, where), where, findings[3])
