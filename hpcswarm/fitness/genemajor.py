"""Gene-major expression values of a set of samples, gathered gene by gene without a whole copy.

The fitness engine reads the values of the selected genes for every sample (one Gram product,
:mod:`hpcswarm.fitness.distances`), so it holds data gene-major: a gene's values are one
contiguous row. A :class:`GeneMajor` wraps such a matrix (for a dataset file, the memory map
of its ``/X_genes``, shared by every rank through the page cache; see
:mod:`hpcswarm.data.hdf5`) plus the samples in use (a task's training rows) and gathers only
the genes asked for, so that the ranks of an MPI job never read a private copy of the matrix.
"""

import numpy as np

FINITE_CHECK_GENES = 1024
"""Genes checked for NaN/inf per block at construction (bounds the temporary memory)."""


class GeneMajor:
    """Values of some samples, gene by gene, as float64 on request.

    Parameters
    ----------
    xt : ndarray of shape (n_genes, n_all_samples)
        Gene-major values (float64 or float32; a :class:`numpy.memmap` stays a view of its file,
        read only where genes are gathered).
    samples : array-like of int of shape (n_samples,), optional
        The columns of ``xt`` in use, in this order (e.g. the training rows of a task); None
        means all of them. A proper subset costs one more gather per read (of the gene rows
        read); all columns in order are read as None.
    name : str, default "xt"
        How error messages name ``xt``.
    finite : bool, default False
        The values are known to be finite (a dataset file records it when it is written,
        :mod:`hpcswarm.data.hdf5`): no check. Otherwise the values of the samples in use are
        checked block by block, which reads the whole matrix once.

    Attributes
    ----------
    n_genes, n_samples : int

    Raises
    ------
    ValueError
        ``xt`` is not a 2-D real matrix, ``samples`` is out of range, or the values of the
        samples in use hold NaN or infinities.
    """

    def __init__(self, xt, samples=None, *, name="xt", finite=False):
        xt = np.asarray(xt)
        if xt.ndim != 2 or xt.dtype.kind not in "fiu":
            raise ValueError(f"{name} must be a 2-D real matrix (n_genes, n_samples), got "
                             f"shape {xt.shape} and type {xt.dtype}")
        if samples is not None:
            samples = np.asarray(samples)
            if (samples.ndim != 1 or not np.issubdtype(samples.dtype, np.integer)
                    or (samples.size and (samples.min() < 0 or samples.max() >= xt.shape[1]))):
                raise ValueError(f"samples must be a 1-D array of column indices within "
                                 f"[0, {xt.shape[1]})")
            samples = samples.astype(np.intp, copy=False)
            if np.array_equal(samples, np.arange(xt.shape[1])):  # all, in order: no gather
                samples = None
        self._xt = xt
        self._samples = samples
        self.n_genes = xt.shape[0]
        self.n_samples = xt.shape[1] if samples is None else samples.size
        if finite:
            return
        for start in range(0, self.n_genes, FINITE_CHECK_GENES):
            block = self.take(np.arange(start, min(start + FINITE_CHECK_GENES, self.n_genes)))
            if not np.isfinite(block).all():
                raise ValueError(f"{name} holds NaN or infinite values")

    @classmethod
    def from_samples(cls, X, *, name="X"):
        """A float64 gene-major copy of the sample-major matrix ``X`` (n_samples, n_genes).

        For a caller's in-memory matrix; the copy takes ``8 n_samples n_genes`` bytes.
        """
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_genes), got shape {X.shape}")
        return cls(np.ascontiguousarray(X.T, dtype=np.float64), name=name)

    @classmethod
    def of(cls, data, *, name="X"):
        """``data`` itself when it is a :class:`GeneMajor`, else :meth:`from_samples` of the
        sample-major matrix ``data``."""
        return data if isinstance(data, cls) else cls.from_samples(data, name=name)

    def subsample(self, positions):
        """The same values for some of the samples in use: ``positions`` among
        ``0 .. n_samples - 1``, in this order (no copy of the matrix; no new check)."""
        positions = np.asarray(positions, dtype=np.intp)
        columns = positions if self._samples is None else self._samples[positions]
        return GeneMajor(self._xt, columns, finite=True)

    @property
    def xt(self):
        """The whole gene-major matrix (all its columns, not only the samples in use)."""
        return self._xt

    def take(self, genes, samples=None, out=None):
        """Values of ``genes`` for the samples in use, as a new float64 array (or in ``out``).

        Parameters
        ----------
        genes : ndarray of int of shape (n_selected,)
        samples : ndarray of int, optional
            Positions among the samples in use (``0 .. n_samples - 1``); None means all.
        out : ndarray of float64 of shape (n_selected, n_samples), optional
            Where to write the values of all samples (a buffer reused by the caller: fresh
            arrays of a megabyte cost their page faults at every call). ``genes`` must then
            be valid indices: they are not checked.

        Returns
        -------
        ndarray of shape (n_selected, n_samples or len(samples))
            C-contiguous float64 (float32 values converted exactly, as ``astype`` does), the
            same array whatever ``xt``'s origin, so that products over it are bit-identical.
        """
        if samples is not None:  # a few samples (a near tie refined): read only their values
            columns = samples if self._samples is None else self._samples[samples]
            block = self._xt[np.ix_(genes, columns)]
        elif out is not None and self._samples is None and self._xt.dtype == np.float64:
            return self._xt.take(genes, axis=0, out=out, mode="clip")  # unbuffered: no checks
        else:  # whole gene rows, then the samples in use (faster than one 2-D gather)
            block = self._xt.take(genes, axis=0)
            if self._samples is not None:
                block = block.take(self._samples, axis=1)
        if out is None:
            return np.asarray(block, dtype=np.float64)
        np.copyto(out, block)
        return out
