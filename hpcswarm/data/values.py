"""What the values of a dataset must be before the k-NN engine reads them: finite, the same in
``X`` and its gene-major copy ``X_genes``, and in a range where squared distances are exact.

The check is split by blocks of genes (rows of ``X_genes``): :func:`scan_genes` checks one
block and returns a *findings* vector, findings of several blocks combine by an element-wise
maximum (:func:`combine`; one ``Allreduce`` with ``MAX`` when MPI ranks checked a block each),
and :func:`verdict` turns the combined findings into an error or a power-of-two scale.

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


def scan_genes(X, X_genes, start, stop):
    """Findings of the genes ``start .. stop - 1``: NaN or infinities in ``X`` or ``X_genes``,
    cells where ``X_genes`` is not ``X`` transposed, and the largest absolute value.

    Reads both matrices by blocks of about :data:`~hpcswarm.data.table.BLOCK_CELLS` cells
    (bounded memory, no whole copy).

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
    step = max(1, BLOCK_CELLS // max(1, n_samples))
    for first in range(start, stop, step):
        last = min(stop, first + step)
        genes = np.asarray(X_genes[first:last])
        samples = np.asarray(X[:, first:last]).T
        finite = np.isfinite(genes)
        for slot, bad in enumerate((~np.isfinite(samples), ~finite, genes != samples)):
            if found[slot] == none and bad.any():
                found[slot] = -float(first * n_samples + np.flatnonzero(bad)[0])
        if genes.size:
            magnitude = np.abs(genes, where=finite, out=np.zeros(genes.shape))
            found[3] = max(found[3], float(magnitude.max()))
    return found


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

    Parameters
    ----------
    dataset : Dataset
    where : str
        The file (or source) named in messages and notes.
    comm : Comm, optional
        Every rank opened the same dataset and calls this (collective); None: serial.
    """
    comm = as_comm(comm)
    start, stop = block_range(dataset.n_genes, comm.size, comm.rank)
    findings = comm.allreduce_max(scan_genes(dataset.X, dataset.X_genes, start, stop))
    return scaled(dataset, verdict(dataset, findings, where), where, findings[3])
