"""CSV/TSV reader: samples as rows (default) or genes as rows, labels in the table or a file.

The first row is the header. The first column holds row names (sample or gene identifiers)
when its header cell is empty or its first value is not a number; a header one cell shorter
than the rows (as R's ``write.table`` writes it) also means row names. Labels come from a
column (samples as rows) or a row (genes as rows) chosen by name or 0-based index, from a
column named ``class`` or ``label`` when nothing is chosen, or from a separate file.

The table is streamed: a first pass over its lines finds the shape, the names and the labels
without splitting the value cells; blocks of rows are then parsed by numpy's compiled reader
(:func:`numpy.loadtxt`), so a cohort-sized file (thousands of samples x tens of thousands of
genes, gzip or not) is never held as Python text. A block with a missing-value spelling or a
bad cell is parsed again line by line to read the former as NaN and locate the latter.
"""

import csv
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.data.table import BLOCK_CELLS, MISSING_TOKENS, MatrixSource, parse_float_cells
from hpcswarm.data.textio import read_lines, text_lines
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


def split_fields(line, sep):
    """The fields of one line, quotes removed and spaces stripped."""
    if '"' in line:
        return [c.strip() for c in next(csv.reader([line], delimiter=sep))]
    return [c.strip() for c in line.split(sep)]


def _field_count(line, sep):
    return len(split_fields(line, sep)) if '"' in line else line.count(sep) + 1


def _field(line, sep, index, width):
    """Field ``index`` of a line of ``width`` fields, without splitting the whole line."""
    if '"' in line:
        return split_fields(line, sep)[index]
    if index < width // 2:
        return line.split(sep, index + 1)[index].strip()
    return line.rsplit(sep, width - index)[1].strip()


def _blank(line, sep):
    """Whether a line holds nothing but separators and spaces (no copy of a normal line)."""
    return not line.strip(sep + " \t")


def file_lines(path):
    """``lines()`` for a whole text file: a context manager of ``(line number, text)``."""
    from contextlib import contextmanager

    @contextmanager
    def lines():
        with text_lines(path) as stream:
            yield enumerate(stream, 1)

    return lines


@dataclass
class _Layout:
    """What the first pass found: header, body line numbers, names, label cells."""

    header: list
    width: int
    has_row_names: bool
    linenos: list = field(default_factory=list)
    first_fields: list = field(default_factory=list)
    label_cells: list = field(default_factory=list)
    kept_lines: dict = field(default_factory=dict)


def _scan(path, lines, sep, label_col_of, keep_line, row_names=None):
    """First pass: header, row count and names, ragged rows, label column cells.

    ``label_col_of(header)`` gives the label column's index (or None) once the header is
    known; ``keep_line(name, index)`` says whether to keep a row's whole text (a candidate
    label row); ``row_names`` forces whether the first column holds names.
    """
    layout = None
    label_col = None
    with lines() as numbered:
        for lineno, line in numbered:
            if _blank(line, sep):
                continue
            if layout is None:
                header = split_fields(line, sep)
                layout = _Layout(header=header, width=len(header), has_row_names=False)
                continue
            count = _field_count(line, sep)
            if not layout.linenos:
                first = split_fields(line, sep)
                if layout.width > 0 and count == layout.width + 1:  # R's write.table header
                    layout.header = [""] + layout.header
                    layout.width += 1
                if layout.width < 2:
                    raise DataError(f"{path}: a single column; is the separator {sep!r} right? "
                                    "(--sep)")
                layout.has_row_names = (row_names if row_names is not None else
                                        layout.header[0] == "" or not _is_number(first[0]))
                label_col = label_col_of(layout.header, layout.has_row_names, first)
            if count != layout.width:
                raise DataError(f"{path}: line {lineno}: {count} fields, expected "
                                f"{layout.width} like the header (ragged row)")
            name = _field(line, sep, 0, layout.width)
            layout.linenos.append(lineno)
            layout.first_fields.append(name)
            if label_col is not None:
                layout.label_cells.append(_field(line, sep, label_col, layout.width))
            if keep_line(name, len(layout.linenos) - 1):
                layout.kept_lines[len(layout.linenos) - 1] = line
    if layout is None or not layout.linenos:
        raise DataError(f"{path}: needs a header row and at least one data row")
    return layout, label_col


def _label_position(names, label, labels, what, path):
    """Position of the labels among ``names``: the one ``label`` names, else the first with a
    usual label name; None when the labels come from elsewhere (a file or a table)."""
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


def parse_rows(path, lines, sep, linenos, value_cols, describe_column):
    """Blocks of parsed rows of a delimited table, in file order.

    Parameters
    ----------
    path : Path
    lines : callable
        ``lines()`` gives a context manager of ``(line number, text)`` pairs of the file.
    sep : str
    linenos : list of int
        The line numbers of the rows to parse (every other line is skipped).
    value_cols : list of int
        The columns holding values.
    describe_column : callable
        ``describe_column(j)`` names value column ``j`` in an error message.

    Yields
    ------
    ndarray of shape (rows, len(value_cols))
        float64; missing-value spellings (:data:`~hpcswarm.data.table.MISSING_TOKENS`) as NaN.
    """
    wanted = set(linenos)
    step = max(1, BLOCK_CELLS // max(1, len(value_cols)))
    block, numbers = [], []
    with lines() as numbered:
        for lineno, line in numbered:
            if lineno not in wanted:
                continue
            block.append(line)
            numbers.append(lineno)
            if len(block) == step:
                yield _parse_block(path, block, numbers, sep, value_cols, describe_column)
                block, numbers = [], []
    if block:
        yield _parse_block(path, block, numbers, sep, value_cols, describe_column)


def _parse_block(path, block, numbers, sep, usecols, describe_column):
    try:
        return np.loadtxt(block, delimiter=sep, usecols=usecols, dtype=np.float64,
                          comments=None, quotechar='"', ndmin=2)
    except ValueError:
        pass
    out = np.empty((len(block), len(usecols)), dtype=np.float64)
    for i, (lineno, line) in enumerate(zip(numbers, block)):
        fields = split_fields(line, sep)
        cells = [[fields[j] for j in usecols]]
        out[i] = parse_float_cells(cells, path,
                                   lambda _, j: f"line {lineno}, {describe_column(j)}")[0]
    return out


def read_delimited(path, *, sep=",", label=None, labels=None, genes_as_rows=False,
                   labels_elsewhere=False, row_names=None, lines=None):
    """Read a CSV or TSV expression table, streamed.

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
    labels_elsewhere : bool
        The labels come from a phenotype table matched by sample name later: the table holds
        none (every label is None).
    row_names : bool or None
        The first column holds row names; None: decided by the header and the first row.
    lines : callable or None
        ``lines()`` gives the ``(line number, text)`` pairs of the table; by default those
        of the whole file (a GEO series matrix passes its table block).

    Returns
    -------
    MatrixSource
    """
    if label is not None and labels is not None:
        raise ParameterError("give either a label column (--label) or a labels file (--labels), "
                             "not both")
    if len(sep) != 1:
        raise ParameterError(f"sep must be a single character, got {sep!r}")
    lines = lines or file_lines(path)
    outside = labels is not None or labels_elsewhere
    if genes_as_rows:
        return _genes_as_rows(path, lines, sep, label, labels, outside, row_names)
    return _samples_as_rows(path, lines, sep, label, labels, outside, row_names)


def _samples_as_rows(path, lines, sep, label, labels, outside, row_names):
    def label_col_of(header, has_row_names, first):
        return _label_position(header, label, True if outside else None, "label column", path)

    layout, label_col = _scan(path, lines, sep, label_col_of, lambda name, i: False, row_names)
    header = layout.header
    has_row_names = layout.has_row_names
    if label_col == 0:
        first = split_fields(_line_at(lines, layout.linenos[0]), sep)
        has_row_names = header[1] == "" or not _is_number(first[1])
    name_col = (1 if label_col == 0 else 0) if has_row_names else None
    value_cols = [j for j in range(layout.width) if j not in (label_col, name_col)]
    if not value_cols:
        raise DataError(f"{path}: no gene columns left besides the names and labels")
    if name_col is None:
        sample_names = None
    elif name_col == 0:
        sample_names = layout.first_fields
    else:
        sample_names = _column(path, lines, sep, layout, name_col)
    gene_names = [header[j] for j in value_cols]
    sources = [("source", path)]
    if label_col is not None:
        y = np.array(layout.label_cells, dtype=object)
    elif labels is not None:
        y = read_labels_file(labels, sample_names)
        sources.append(("labels", labels))
    else:
        y = np.full(len(layout.linenos), None, dtype=object)
    return MatrixSource(
        shape=(len(layout.linenos), len(value_cols)), rows_are_genes=False, labels=y,
        blocks=lambda: parse_rows(path, lines, sep, layout.linenos, value_cols,
                                  lambda j: f"column {gene_names[j]!r}"),
        row_names=sample_names, col_names=gene_names, sources=sources)


def _column(path, lines, sep, layout, col):
    """The cells of column ``col`` of every body row (a second, light pass)."""
    wanted = set(layout.linenos)
    with lines() as numbered:
        return [_field(line, sep, col, layout.width) for lineno, line in numbered
                if lineno in wanted]


def _genes_as_rows(path, lines, sep, label, labels, outside, row_names):
    def candidate(name, index):
        return name == label or name.lower() in _LABEL_NAMES

    layout, _ = _scan(path, lines, sep, lambda header, has_names, first: None, candidate,
                      row_names)
    first = 1 if layout.has_row_names else 0
    n_rows = len(layout.linenos)
    row_names = layout.first_fields if layout.has_row_names else [str(i) for i in range(n_rows)]
    label_row = _label_position(row_names, label, True if outside else None, "label row", path)
    keep = [i for i in range(n_rows) if i != label_row]
    if not keep:
        raise DataError(f"{path}: no gene rows left besides the labels")
    header = layout.header
    sample_names = header[first:] if any(header[first:]) else None
    gene_names = [row_names[i] for i in keep] if layout.has_row_names else None
    value_cols = list(range(first, layout.width))
    sources = [("source", path)]
    if label_row is not None:
        if label_row not in layout.kept_lines:
            layout.kept_lines[label_row] = _line_at(lines, layout.linenos[label_row])
        y = np.array(split_fields(layout.kept_lines[label_row], sep)[first:], dtype=object)
    elif labels is not None:
        y = read_labels_file(labels, sample_names)
        sources.append(("labels", labels))
    else:
        y = np.full(len(value_cols), None, dtype=object)

    def describe(j):
        return f"sample {header[first + j]!r}" if sample_names else f"column {first + j + 1}"

    linenos = [layout.linenos[i] for i in keep]
    return MatrixSource(
        shape=(len(keep), len(value_cols)), rows_are_genes=True, labels=y,
        blocks=lambda: parse_rows(path, lines, sep, linenos, value_cols, describe),
        row_names=gene_names, col_names=sample_names, sources=sources)


def _line_at(lines, wanted):
    with lines() as numbered:
        for lineno, line in numbered:
            if lineno == wanted:
                return line
    raise AssertionError(f"line {wanted} vanished between two reads")
