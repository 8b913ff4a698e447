"""Phenotype tables as class labels: ``--labels TABLE --label COLUMN``.

A phenotype (sample annotation) table is a CSV or TSV file, gzip or not, with a header: one
row per sample, a sample-id column and annotation columns (UCSC Xena and GDC clinical
tables, GTEx sample attributes, ``pData`` of an ExpressionSet, a GEO sample sheet). The class
of each sample of the matrix is the cell of COLUMN in the row whose sample id equals the
sample's name. The sample-id column is ``--sample-column`` or the first header among the usual
names (:data:`SAMPLE_COLUMNS`, case-insensitive), else an empty first header cell (R's
row names).

Samples of the matrix without a row, or with an empty cell, are left without a label (an
error listing the first few, or dropped with ``--drop-unlabelled``); rows for samples the
matrix does not hold are ignored and counted in the summary.
"""

import csv

import numpy as np

from hpcswarm.data.textio import read_lines
from hpcswarm.errors import DataError

SAMPLE_COLUMNS = ("sample", "sample_id", "sampleid", "sample_name", "samples", "sampid",
                  "sample_submitter_id", "submitter_id", "geo_accession", "gsm", "barcode",
                  "cell", "cell_id", "obs_names", "id", "name")
"""Usual headers of the sample-id column, in the order they are looked for."""


def _rows(path):
    lines = [line for line in read_lines(path) if line.strip() and not line.startswith("#")]
    if len(lines) < 2:
        raise DataError(f"{path}: a phenotype table needs a header and at least one row")
    sep = "\t" if "\t" in lines[0] else ","
    rows = [[c.strip() for c in row] for row in csv.reader(lines, delimiter=sep)]
    header, body = rows[0], rows[1:]
    if all(len(row) == len(header) + 1 for row in body):  # R's write.table: no corner cell
        header = [""] + header
    for lineno, row in enumerate(body, 2):
        if len(row) != len(header):
            raise DataError(f"{path}: line {lineno}: {len(row)} fields, expected {len(header)} "
                            "like the header (ragged row)")
    return header, body


def _sample_column(header, sample_column, path):
    if sample_column is not None:
        if sample_column not in header:
            raise DataError(f"{path}: no sample-id column {sample_column!r} "
                            f"(columns: {', '.join(repr(h) for h in header[:8])}"
                            f"{', ...' if len(header) > 8 else ''})")
        return header.index(sample_column)
    lowered = [h.lower() for h in header]
    for name in SAMPLE_COLUMNS:
        if name in lowered:
            return lowered.index(name)
    if header[0] == "":
        return 0
    raise DataError(f"{path}: no sample-id column among the usual names ({', '.join(SAMPLE_COLUMNS)}); "
                    "name it with --sample-column")


def read_phenotype(path, column, sample_column=None):
    """The class of each sample id of a phenotype table.

    Parameters
    ----------
    path : Path
    column : str
        Header of the class column.
    sample_column : str or None
        Header of the sample-id column; by default the first of :data:`SAMPLE_COLUMNS`.

    Returns
    -------
    dict
        Sample id -> class text (empty when the cell is empty).

    Raises
    ------
    DataError
        No such column, no sample-id column, a ragged row, or a sample id given twice with
        different classes.
    """
    header, body = _rows(path)
    if column not in header:
        raise DataError(f"{path}: no column {column!r} for the label (columns: "
                        f"{', '.join(repr(h) for h in header[:8])}{', ...' if len(header) > 8 else ''})")
    where, what = _sample_column(header, sample_column, path), header.index(column)
    classes = {}
    for lineno, row in enumerate(body, 2):
        sample, value = row[where], row[what]
        if sample in classes and classes[sample] != value:
            raise DataError(f"{path}: line {lineno}: sample {sample!r} again, with class "
                            f"{value!r} where an earlier row says {classes[sample]!r}")
        classes[sample] = value
    return classes


def attach_phenotype(source, path, table, column, *, sample_column=None, transpose=False):
    """Set ``source.labels`` from a phenotype table, matched by sample name.

    Parameters
    ----------
    source : MatrixSource
        Read without labels; modified in place (labels, sources, notes).
    path : Path
        The matrix file, named in errors.
    table : str or Path
        The phenotype table.
    column : str
        Its class column.
    sample_column : str or None
        Its sample-id column.
    transpose : bool
        The conversion swaps the file's rows and columns (so the samples are the other names).
    """
    genes_rows = bool(source.rows_are_genes) != bool(transpose)
    names = source.col_names if genes_rows else source.row_names
    if names is None:
        raise DataError(f"{path}: its samples have no names to match the phenotype table "
                        f"{table} against")
    classes = read_phenotype(table, str(column), sample_column)
    _check_orientation(source, path, table, classes, genes_rows, transpose)
    present = set(names)
    source.labels = np.array([classes.get(name) for name in names], dtype=object)
    source.sources = [*source.sources, ("labels", table)]
    ignored = sum(1 for sample in classes if sample not in present)
    if ignored:
        source.notes = [*source.notes, f"ignored {ignored} phenotype row(s) of {table} for "
                        "samples not in the matrix"]
    source.label_origin = f"in {table} (column {column!r})"


def _check_orientation(source, path, table, classes, genes_rows, transpose):
    """Refuse a matrix read the wrong way round for its phenotype table: some of the samples
    it would have lack a label, and the names on its other axis match more of the table's
    samples (a genes-as-rows file read without ``--genes-as-rows``), with one
    :class:`DataError` saying which way the file looks."""
    samples, other = ((source.col_names, source.row_names) if genes_rows
                      else (source.row_names, source.col_names))
    labelled = sum(1 for name in samples if name in classes)
    if other is None or labelled == len(samples):
        return
    across = sum(1 for name in other if name in classes)
    if across <= labelled:
        return
    axes = ("row", "column") if genes_rows else ("column", "row")
    if genes_rows:
        looks, fix = "samples as rows", "--transpose swaps its rows and columns"
    elif source.rows_are_genes or transpose:
        looks, fix = "genes as rows", "convert it without --transpose"
    else:
        looks, fix = "genes as rows", "convert it with --genes-as-rows"
    raise DataError(f"{path}: {across} of its {len(other)} {axes[0]} names are samples of the "
                    f"phenotype table {table}, but only {labelled} of its {len(samples)} "
                    f"{axes[1]} names: the file looks like {looks} ({fix})")
