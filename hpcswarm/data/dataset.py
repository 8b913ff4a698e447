"""The in-memory face of a dataset: expression matrix, labels, names and provenance."""

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np


def file_sha256(path):
    """Hex SHA-256 digest of the file at ``path``, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(eq=False)
class Dataset:
    """A labelled gene-expression matrix.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
        Expression values, float64 or float32. A read-only :class:`numpy.memmap` when opened
        from a contiguous, uncompressed hpcswarm HDF5 file, else an in-memory array.
    y : ndarray of shape (n_samples,)
        Class codes, int64 in ``0 .. n_classes - 1``.
    class_names : list of str
        Name of each class code.
    gene_names : list of str
        Identifier of each column of ``X``.
    sample_names : list of str or None
        Identifier of each row of ``X`` when the source had them.
    attrs : dict
        Provenance: source file and its SHA-256, format, conversion options, package version.
    path : Path or None
        The hpcswarm HDF5 file the matrix comes from; None for a dataset converted in memory.
    memory_mapped : bool
        Whether ``X`` and ``X_genes`` are memory maps of ``path``.
    values_finite : bool
        Whether every value of ``X`` is known to be finite (:func:`hpcswarm.data.open_dataset`
        checks every file it opens), so that the fitness engine need not check again. False
        means unknown.
    notes : list of str
        One-line notes for the user about how the dataset was opened (a matrix read into
        memory instead of mapped, values scaled); the data layer never prints them, the
        command does.
    recorded_findings : ndarray of shape (4,) or None
        The values check of every gene (:func:`hpcswarm.data.values.recorded`) as the
        file's writer recorded it, set by :func:`hpcswarm.data.open_dataset` only while the
        file is unchanged since; :func:`hpcswarm.data.values.checked` then trusts it instead
        of reading every value. None: unknown, the values are read and checked.

    Attributes
    ----------
    X_genes : ndarray of shape (n_genes, n_samples)
        The same values gene-major (``X.T``, C-contiguous, same type): what the fitness engine
        reads. Opened from a file, the read-only :class:`numpy.memmap` of its ``/X_genes``
        (set by :func:`hpcswarm.data.hdf5.open_dataset`), shared by every process mapping the
        file; for a dataset built in memory, a copy of ``X`` made on first use and kept.
    """

    X: np.ndarray
    y: np.ndarray
    class_names: list
    gene_names: list
    sample_names: list = None
    attrs: dict = field(default_factory=dict)
    path: Path = None
    memory_mapped: bool = False
    values_finite: bool = False
    notes: list = field(default_factory=list)
    recorded_findings: np.ndarray = None

    @property
    def n_samples(self):
        """Number of rows of ``X``."""
        return self.X.shape[0]

    @property
    def n_genes(self):
        """Number of columns of ``X``."""
        return self.X.shape[1]

    @property
    def n_classes(self):
        """Number of classes."""
        return len(self.class_names)

    def class_counts(self):
        """Samples per class, in class-code order, as a list of ``(name, count)``."""
        counts = np.bincount(self.y, minlength=self.n_classes)
        return list(zip(self.class_names, counts.tolist()))

    @cached_property
    def X_genes(self):
        """Gene-major values, see the class's Attributes (a copy of ``X`` made here when no file
        provided them)."""
        return np.ascontiguousarray(self.X.T)

    @cached_property
    def sha256(self):
        """Hex SHA-256 of the HDF5 file, or of the source file for a dataset converted in memory."""
        if self.path is not None:
            return file_sha256(self.path)
        return self.attrs.get("source_sha256")
