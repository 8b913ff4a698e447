"""CSV/TSV reader: samples as rows (default) or genes as rows, labels in the table or a file.

The first row is the header. The first column holds row names (sample or gene identifiers)
when its header cell is empty or its first value is not a number; a header one cell shorter
than the rows (as R's ``write.table`` writes it) also means row names. Labels come from a
column (samples as rows) or a row (genes as rows) chosen by name or 0-based index, from a
column named ``class`` or ``label`` when nothing is chosen, or from a separate file.
"""

import csv

import numpy as np

from hpcswarm.data.table import MISSING_TOKENS, RawTable, parse_float_cells
from hpcswarm.data.textio import read_lines
from hpcswarm.errors import DataError, ParameterError

_LABEL_NAMES = ("class", "label", "labels", "y", "target")
_SAMPLE_HEADERS = ("", "sample", "samples", "id", "name")


def _is_number(text):
    text = text.strip()
    if text.lower() in MISSING_TOKENS:
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _rows(path, sep):
    """Header and body rows with their line numbers; checks that every row has the same length."""
    lines = read_lines(path)
    numbered = [(n, row) for n, row in enumerate(csv.reader(lines, delimiter=sep), 1)
                if any(cell.strip() for cell in row)]
    if len(numbered) < 2:
        raise DataError(f"{path}: needs a header row and at least one data row")
    (_, header), body = numbered[0], numbered[1:]
    width = len(header)
    if width > 0 and all(len(row) == width + 1 for _, row in body):
        header = [""] + header
        width += 1
    for lineno, row in body:
        if len(row) != width:
            raise DataError(
                f"{path}: line {lineno}: {len(row)} fields, expected {width} like the header "
                "(ragged row)"
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

    A first line naming the columns (``class``, or ``sample,label``) is skipped.

    Parameters
    ----------
    path : Path
    sample_names : list of str or None
        With two-column lines and named samples, labels are matched by sample name.

    Returns
    -------
    ndarray of shape (n_labels,)
    """
    lines = [line.strip() for line in read_lines(path) if line.strip() and not line.startswith("#")]
    fields = [[f.strip() for f in next(csv.reader([line], delimiter="\t" if "\t" in line else ","))]
              for line in lines]
    if fields and all(len(f) == 1 for f in fields):
        if fields[0][0].lower() in _LABEL_NAMES:
            fields = fields[1:]
        return np.array([f[0] for f in fields], dtype=object)
    if not all(len(f) == 2 for f in fields):
        raise DataError(f"{path}: expected one label per line, or 'sample,label' lines")
    if fields and fields[0][0].lower() in _SAMPLE_HEADERS and fields[0][0] not in (sample_names or ()):
        fields = fields[1:]
    if sample_names is None:
        return np.array([label for _, label in fields], dtype=object)
    by_name = dict(fields)
    missing = [name for name in sample_names if name not in by_name]
    if missing:
        raise DataError(f"{path}: no label for sample {missing[0]!r} "
                        f"({len(missing)} samples unlabelled)")
    return np.array([by_name[name] for name in sample_names], dtype=object)


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
    has_row_names = header[0] == "" or not _is_number(body[0][0])
    if genes_as_rows:
        return _genes_as_rows(path, header, linenos, body, has_row_names, label, labels)
    label_col = _label_position(header, label, labels, "label column", path)
    if label_col is not None and label_col == 0:
        has_row_names = header[1] == "" or not _is_number(body[0][1])
    name_col = (1 if label_col == 0 else 0) if has_row_names else None
    value_cols = [j for j in range(len(header)) if j not in (label_col, name_col)]
    if not value_cols:
        raise DataError(f"{path}: no gene columns left besides the names and labels")
    sample_names = None if name_col is None else [row[name_col] for row in body]
    gene_names = [header[j] for j in value_cols]
    cells = [[row[j] for j in value_cols] for row in body]
    X = parse_float_cells(cells, path, lambda i, j: f"line {linenos[i]}, column {gene_names[j]!r}")
    if label_col is not None:
        y = np.array([row[label_col] for row in body], dtype=object)
        sources = [("source", path)]
    else:
        y = read_labels_file(labels, sample_names)
        sources = [("source", path), ("labels", labels)]
    return RawTable(X=X, labels=y, gene_names=gene_names, sample_names=sample_names, sources=sources)


def _genes_as_rows(path, header, linenos, body, has_row_names, label, labels):
    first = 1 if has_row_names else 0
    row_names = [row[0] for row in body] if has_row_names else [str(i) for i in range(len(body))]
    label_row = _label_position(row_names, label, labels, "label row", path)
    keep = [i for i in range(len(body)) if i != label_row]
    if not keep:
        raise DataError(f"{path}: no gene rows left besides the labels")
    sample_names = header[first:] if any(header[first:]) else None
    gene_names = [row_names[i] for i in keep] if has_row_names else None
    cells = [body[i][first:] for i in keep]

    def locate(i, j):
        column = f"sample {header[first + j]!r}" if sample_names else f"column {first + j + 1}"
        return f"line {linenos[keep[i]]}, {column}"

    X = parse_float_cells(cells, path, locate).T
    if label_row is not None:
        y = np.array(body[label_row][first:], dtype=object)
        sources = [("source", path)]
    else:
        y = read_labels_file(labels, sample_names)
        sources = [("source", path), ("labels", labels)]
    return RawTable(X=X, labels=y, gene_names=gene_names, sample_names=sample_names, sources=sources)
