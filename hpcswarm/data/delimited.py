"""CSV/TSV reader: samples as rows (default) or genes as rows, labels in the table or a file.

The first row is the header. The first column holds row names (sample or gene identifiers)
when its header cell is empty or a usual row-name header (``id``, ``sample``, ``sample_id``,
``ID_REF``, ``Unnamed: 0``... see :data:`ROW_NAME_HEADERS`), when its first value is not a
number, or when it holds the row numbers ``1..n`` (or ``0..n-1``): an index column read as a
gene would let a search "find" the sample number. A header one cell shorter than the rows
(as R's ``write.table`` writes it) also means row names. The conversion summary says which
column became the names. One separator ending every line (a trailing separator, as some
spreadsheets write) is ignored. Labels come from a column (samples as rows) or a row (genes
as rows) chosen by name or 0-based index, from a column named ``class`` or ``label`` when
nothing is chosen, or from a separate file.
"""

import csv
import re

import numpy as np

from hpcswarm.data.table import MISSING_TOKENS, RawTable, parse_float_cells
from hpcswarm.data.textio import read_lines
from hpcswarm.errors import DataError, ParameterError

_LABEL_NAMES = ("class", "label", "labels", "y", "target")

ROW_NAME_HEADERS = frozenset({
    "", "id", "ids", "name", "names", "rownames", "row_names", "index", "unnamed:_0", "#",
    "sample", "samples", "sample_id", "sampleid", "sample_name", "samplename", "geo_accession",
    "patient", "patient_id", "subject", "subject_id", "case", "case_id", "barcode",
    "gene", "genes", "gene_id", "geneid", "gene_name", "gene_symbol", "symbol", "probe",
    "probe_id", "probeset", "probeset_id", "probe_set_id", "id_ref", "identifier",
})
"""Header cells of a first column of row names, compared after :func:`_header_key` (case,
spaces, dots and dashes ignored): R (``row.names``), pandas (``Unnamed: 0``), GEO series
matrices (``ID_REF``) and the usual sample and probe identifiers."""


def _header_key(text):
    """A header cell compared case-insensitively, with spaces, dots and dashes as ``_``."""
    return re.sub(r"[\s.\-]+", "_", text.strip().lower())


def _is_number(text):
    text = text.strip()
    if text.lower() in MISSING_TOKENS:
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_row_numbering(values):
    """Whether ``values`` are the integers 1..n or 0..n-1 in order (an index column)."""
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return False
    start = numbers[0] if numbers else None
    return start in (0.0, 1.0) and numbers == [start + i for i in range(len(numbers))]


def _names_column(header, body, j):
    """Why column ``j`` holds row names (a phrase for the summary), or None if it holds values."""
    column = [row[j] for row in body]
    shown = f"column {j + 1}" + (f" ({header[j]!r})" if header[j] else "")
    if _header_key(header[j]) in ROW_NAME_HEADERS:
        return shown
    if not _is_number(column[0]):
        return shown
    if len(column) > 1 and _is_row_numbering(column):
        return f"{shown}, which holds the row numbers 1..n"
    return None


def _drop_trailing_separator(header, body):
    """``header, body`` without the empty last field that a separator ending every line adds.

    A line ending in the separator has one more field than it should, and that field is
    empty; when every data line does so (and the header either does too or is one field
    shorter), the field is dropped rather than shifting the header onto the wrong columns.
    """
    if not body or not all(len(row) > 1 and row[-1].strip() == "" for _, row in body):
        return header, body
    widths = {len(row) for _, row in body}
    if len(widths) != 1:
        return header, body
    width = widths.pop()
    if len(header) == width and header[-1].strip() == "":
        header = header[:-1]
    elif len(header) != width - 1:
        return header, body
    return header, [(n, row[:-1]) for n, row in body]


def _rows(path, sep):
    """Header and body rows with their line numbers; checks that every row has the same length."""
    lines = read_lines(path)
    numbered = [(n, row) for n, row in enumerate(csv.reader(lines, delimiter=sep), 1)
                if any(cell.strip() for cell in row)]
    if len(numbered) < 2:
        raise DataError(f"{path}: needs a header row and at least one data row")
    (_, header), body = numbered[0], numbered[1:]
    header, body = _drop_trailing_separator(header, body)
    width = len(header)
    if width > 0 and all(len(row) == width + 1 for _, row in body):
        header = [""] + header
        width += 1
    for lineno, row in body:
        if len(row) != width:
            trailing = (" (the line ends with a separator)"
                        if len(row) == width + 1 and row[-1].strip() == "" else "")
            raise DataError(
                f"{path}: line {lineno}: {len(row)} fields, expected {width} like the header "
                f"(ragged row){trailing}"
            )
    if width < 2:
        raise DataError(f"{path}: a single column; is the separator {sep!r} right? (--sep)")
    cells = [[c.strip() for c in row] for _, row in body]
    return [c.strip() for c in header], [n for n, _ in body], cells


def _label_position(names, label, labels, what, path):
    """Position of the labels among ``names``: the one ``label`` names, else the first with a
    usual label name; None when the labels come from a ``labels`` file instead."""
    if label is not None:
        return _pick(names, label, what, path)
    if labels is not None:
        return None
    found = [i for i, name in enumerate(names) if name.lower() in _LABEL_NAMES]
    if not found:
        raise DataError(f"{path}: no {what} found; name it with --label or give --labels FILE")
    return found[0]


def _pick(names, key, what, path):
    """Index of ``key`` (a name, or a 0-based index) in ``names``."""
    if key in names:
        return names.index(key)
    try:
        index = int(key)
    except (TypeError, ValueError):
        raise DataError(f"{path}: no {what} named {key!r}") from None
    if not -len(names) <= index < len(names):
        raise DataError(f"{path}: {what} index {index} is outside 0..{len(names) - 1}")
    return index % len(names)


def read_labels_file(path, sample_names):
    """Labels from a file of one label per line, or of ``sample,label`` lines (comma or tab).

    A first line naming the columns (``class``, or ``sample,label``) is skipped. A sample
    given twice with different labels is an error (with the same label, a repetition).

    Parameters
    ----------
    path : Path
    sample_names : list of str or None
        With two-column lines and named samples, labels are matched by sample name.

    Returns
    -------
    labels : ndarray of shape (n_labels,)
    places : list of str
        ``"line N"`` of each label.
    """
    numbered = [(n, line.strip()) for n, line in enumerate(read_lines(path), 1)
                if line.strip() and not line.startswith("#")]
    fields = [(n, [f.strip() for f in next(csv.reader([line],
                                                       delimiter="\t" if "\t" in line else ","))])
              for n, line in numbered]
    if fields and all(len(f) == 1 for _, f in fields):
        if fields[0][1][0].lower() in _LABEL_NAMES:
            fields = fields[1:]
        return (np.array([f[0] for _, f in fields], dtype=object),
                [f"line {n}" for n, _ in fields])
    if not all(len(f) == 2 for _, f in fields):
        n = next(n for n, f in fields if len(f) != 2)
        raise DataError(f"{path}: line {n}: expected one label per line, or 'sample,label' lines")
    first = fields[0][1][0] if fields else None
    if first is not None and _header_key(first) in ROW_NAME_HEADERS and \
            first not in (sample_names or ()):
        fields = fields[1:]
    if sample_names is None:
        return (np.array([label for _, (_, label) in fields], dtype=object),
                [f"line {n}" for n, _ in fields])
    by_name = {}
    for n, (name, label) in fields:
        if name in by_name and by_name[name][1] != label:
            raise DataError(f"{path}: line {n}: sample {name!r} labelled {label!r}, but "
                            f"{by_name[name][1]!r} on line {by_name[name][0]}")
        by_name.setdefault(name, (n, label))
    missing = [name for name in sample_names if name not in by_name]
    if missing:
        raise DataError(f"{path}: no label for sample {missing[0]!r} "
                        f"({len(missing)} samples unlabelled)")
    return (np.array([by_name[name][1] for name in sample_names], dtype=object),
            [f"line {by_name[name][0]}" for name in sample_names])


def read_delimited(path, *, sep=",", label=None, labels=None, genes_as_rows=False):
    """Read a CSV or TSV expression table.

    Parameters
    ----------
    path : Path
    sep : str
        Field separator.
    label : str or int or None
        Label column (samples as rows) or row (genes as rows), by name or 0-based index.
    labels : str or Path or None
        Separate labels file (see :func:`read_labels_file`); excludes ``label``.
    genes_as_rows : bool
        One gene per row, one sample per column.

    Returns
    -------
    RawTable
    """
    if label is not None and labels is not None:
        raise ParameterError("give either a label column (--label) or a labels file (--labels), "
                             "not both")
    if len(sep) != 1:
        raise ParameterError(f"sep must be a single character, got {sep!r}")
    header, linenos, body = _rows(path, sep)
    if genes_as_rows:
        return _genes_as_rows(path, header, linenos, body, label, labels)
    label_col = _label_position(header, label, labels, "label column", path)
    first = 1 if label_col == 0 else 0
    names_from = _names_column(header, body, first)
    name_col = first if names_from is not None else None
    value_cols = [j for j in range(len(header)) if j not in (label_col, name_col)]
    if not value_cols:
        raise DataError(f"{path}: no gene columns left besides the names and labels")
    sample_names = None if name_col is None else [row[name_col] for row in body]
    gene_names = [header[j] for j in value_cols]
    cells = [[row[j] for j in value_cols] for row in body]
    X = parse_float_cells(cells, path, lambda i, j: f"line {linenos[i]}, column {gene_names[j]!r}")
    if label_col is not None:
        y = np.array([row[label_col] for row in body], dtype=object)
        places = [f"line {n}" for n in linenos]
        sources = [("source", path)]
    else:
        y, places = read_labels_file(labels, sample_names)
        sources = [("source", path), ("labels", labels)]
    notes = [] if names_from is None else [f"sample names from {names_from}"]
    return RawTable(X=X, labels=y, gene_names=gene_names, sample_names=sample_names,
                    sources=sources, label_places=places, notes=notes)


def _genes_as_rows(path, header, linenos, body, label, labels):
    names_from = _names_column(header, body, 0)
    first = 0 if names_from is None else 1
    row_names = [row[0] for row in body] if first else [str(i) for i in range(len(body))]
    label_row = _label_position(row_names, label, labels, "label row", path)
    keep = [i for i in range(len(body)) if i != label_row]
    if not keep:
        raise DataError(f"{path}: no gene rows left besides the labels")
    sample_names = header[first:] if any(header[first:]) else None
    gene_names = [row_names[i] for i in keep] if first else None
    cells = [body[i][first:] for i in keep]

    def locate(i, j):
        column = f"sample {header[first + j]!r}" if sample_names else f"column {first + j + 1}"
        return f"line {linenos[keep[i]]}, {column}"

    X = parse_float_cells(cells, path, locate).T
    if label_row is not None:
        y = np.array(body[label_row][first:], dtype=object)
        places = [f"line {linenos[label_row]}, column {first + j + 1}" for j in range(len(y))]
        sources = [("source", path)]
    else:
        y, places = read_labels_file(labels, sample_names)
        sources = [("source", path), ("labels", labels)]
    notes = [] if names_from is None else [f"gene names from {names_from}"]
    return RawTable(X=X, labels=y, gene_names=gene_names, sample_names=sample_names,
                    sources=sources, label_places=places, notes=notes)
