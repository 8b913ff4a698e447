"""What a format reader hands over, not yet checked: a matrix in memory (:class:`RawTable`)
or read block by block (:class:`MatrixSource`), with labels and names."""

from dataclasses import dataclass, field

import numpy as np

from hpcswarm.errors import DataError

#: Cell spellings read as a missing value (NaN), to be reported by the finite-values check.
MISSING_TOKENS = frozenset({"", "?", "na", "nan", "n/a", "null"})


@dataclass(eq=False)
class RawTable:
    """A matrix as read from one input file, before validation.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
        Values as float64; may still hold NaN or infinities.
    labels : ndarray of shape (n_labels,)
        One label per sample as read (strings or numbers); the count is checked later.
    gene_names, sample_names : list of str or None
        Identifiers from the file, None when it has none.
    class_order : list of str or None
        The order in which the file declares its classes (ARFF nominal spec, CLS header).
    sources : list of (role, path)
        Files read, e.g. ``[("source", "a.gct"), ("labels", "a.cls")]``, for provenance.
    label_places : list of str or None
        Where each label was read, e.g. ``"line 7"`` of the file holding the labels (the
        ``labels`` source when there is one), named by the label checks.
    notes : list of str
        What the reader decided that the user should know, shown in the conversion summary
        (e.g. which column became the sample names).
    """

    X: np.ndarray
    labels: np.ndarray
    gene_names: list = None
    sample_names: list = None
    class_order: list = None
    sources: list = field(default_factory=list)
    label_places: list = None
    notes: list = field(default_factory=list)

    def source(self):
        """The same table as a :class:`MatrixSource` (rows are samples)."""
        X = np.asarray(self.X, dtype=np.float64)
        step = max(1, BLOCK_CELLS // max(1, X.shape[-1])) if X.ndim else 1
        return MatrixSource(
            shape=X.shape, rows_are_genes=False, labels=self.labels,
            blocks=lambda: (X[start:start + step] for start in range(0, X.shape[0], step)),
            row_names=self.sample_names, col_names=self.gene_names,
            class_order=self.class_order, sources=self.sources, notes=list(self.notes),
            label_places=self.label_places, label_file=dict(self.sources).get("labels"))


BLOCK_CELLS = 1 << 22
"""Values per block a reader parses or a writer copies at a time (32 MiB of float64): bounds
the memory of a conversion independently of the matrix's size."""


@dataclass(eq=False)
class MatrixSource:
    """A matrix read block by block, with its labels and names, before validation.

    Parameters
    ----------
    shape : (int, int)
        Rows and columns as stored in the file.
    rows_are_genes : bool
        Each row of the file is a gene (GCT, series matrix, genes-as-rows tables) rather than
        a sample.
    labels : ndarray of shape (n_labels,)
        One label per sample, in sample order; ``None``, an empty string or NaN marks a sample
        without a label.
    blocks : callable
        ``blocks()`` iterates over consecutive blocks of rows, float64 arrays of shape
        ``(rows in block, shape[1])``, covering every row once; may be called only once.
    row_names, col_names : list of str or None
        Names of the rows and columns (genes or samples as ``rows_are_genes`` says).
    class_order : list of str or None
        Declared order of the classes.
    sources : list of (role, path)
        Files read, for provenance.
    provenance : dict
        Further attributes to keep (e.g. a GEO series accession and platform).
    notes : list of str
        Lines for the conversion summary (e.g. phenotype rows that matched no sample).
    label_places : list of str or None
        Where each label was read (``"line 7"``), named when a label is missing.
    label_file : path or None
        The separate file the labels come from, if any (named instead of the matrix's file).
    label_origin : str
        Where the labels come from, for the message about samples without one.
    """

    shape: tuple
    rows_are_genes: bool
    labels: np.ndarray
    blocks: object
    row_names: list = None
    col_names: list = None
    class_order: list = None
    sources: list = field(default_factory=list)
    provenance: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    label_origin: str = ""
    label_places: list = None
    label_file: object = None


def parse_float_cells(cells, path, locate):
    """Convert a rectangular list of rows of strings to a float64 matrix.

    Parameters
    ----------
    cells : list of list of str
        Rows of equal length.
    path : str or Path
        The file the cells come from, named in the error message.
    locate : callable
        ``locate(i, j)`` describes where cell ``(i, j)`` is in the file (line, column).

    Returns
    -------
    ndarray of shape (len(cells), len(cells[0]))
        Values; the spellings in :data:`MISSING_TOKENS` become NaN.

    Raises
    ------
    DataError
        At the first cell that is neither a number nor a missing-value spelling. A number is
        written in ASCII without ``_``, as :func:`numpy.loadtxt` (the CSV/TSV reader) reads
        it: Python's ``float`` would also take ``1_000`` and digits of other scripts.
    """
    text = "".join(map("".join, cells))
    if text.isascii() and "_" not in text:
        try:
            return np.array(cells, dtype=np.float64)
        except ValueError:
            pass
    out = np.empty((len(cells), len(cells[0]) if cells else 0), dtype=np.float64)
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            text = cell.strip()
            if text.lower() in MISSING_TOKENS:
                out[i, j] = np.nan
                continue
            out[i, j] = _number(text, path, locate, i, j)
    return out


def _number(text, path, locate, i, j):
    """The value of one cell's ``text`` (stripped, not a missing-value spelling)."""
    if text.isascii() and "_" not in text:
        try:
            return float(text)
        except ValueError:
            pass
    raise DataError(f"{path}: non-numeric cell {text!r} at {locate(i, j)}")
