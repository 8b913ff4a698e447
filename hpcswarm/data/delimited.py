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

The table is streamed: a first pass over its lines finds the shape, the names and the labels
without splitting the value cells; blocks of rows are then parsed by numpy's compiled reader
(:func:`numpy.loadtxt`), so a cohort-sized file (thousands of samples x tens of thousands of
genes, gzip or not) is never held as Python text. A block with a missing-value spelling or a
bad cell is parsed again line by line to read the former as NaN and locate the latter.
"""

import csv
import re
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.data.table import BLOCK_CELLS, MISSING_TOKENS, MatrixSource, parse_float_cells
from hpcswarm.data.textio import read_lines, text_lines
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


def _is_row_numbering(values):
    """Whether ``values`` are the integers 1..n or 0..n-1 in order (an index column)."""
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return False
    start = numbers[0] if numbers else None
    return start in (0.0, 1.0) and numbers == [start + i for i in range(len(numbers))]


def _names_column(header, column, j):
    """Why column ``j`` (its cells ``column``) holds row names (a phrase for the summary), or
    None if it holds values."""
    shown = f"column {j + 1}" + (f" ({header[j]!r})" if header[j] else "")
    if _header_key(header[j]) in ROW_NAME_HEADERS:
        return shown
    if not _is_number(column[0]):
        return shown
    if len(column) > 1 and _is_row_numbering(column):
        return f"{shown}, which holds the row numbers 1..n"
    return None


def _last_empty(line, sep):
    """Whether the last field of a line is empty (the line ends with the separator)."""
    if '"' in line:
        return not split_fields(line, sep)[-1]
    return not line[line.rfind(sep) + 1:].strip()


@dataclass
class _Layout:
    """What the first pass found: header, body line numbers and the first field of each."""

    header: list
    width: int = 0
    fields: int = 0
    """Fields per line as written (the width, plus one for a separator ending every line)."""
    linenos: list = field(default_factory=list)
    first_fields: list = field(default_factory=list)
    kept_lines: dict = field(default_factory=dict)


def _scan(path, lines, sep, keep_line):
    """First pass: header, body line numbers, first fields; trailing separators, R's short
    header and ragged rows decided once every line is seen.

    ``keep_line(name)`` says whether to keep a row's whole text (a candidate label row).
    """
    header, counts, trailing = None, [], []
    layout = None
    with lines() as numbered:
        for lineno, line in numbered:
            if _blank(line, sep):
                continue
            if header is None:
                header = split_fields(line, sep)
                layout = _Layout(header=header)
                continue
            name = _field(line, sep, 0, 2)
            layout.linenos.append(lineno)
            layout.first_fields.append(name)
            counts.append(_field_count(line, sep))
            trailing.append(_last_empty(line, sep))
            if keep_line(name):
                layout.kept_lines[len(layout.linenos) - 1] = line
    if layout is None or not layout.linenos:
        raise DataError(f"{path}: needs a header row and at least one data row")
    header = layout.header
    extra = 0
    if all(trailing) and len(set(counts)) == 1 and counts[0] > 1:  # a separator ending every line
        width = counts[0] - 1
        if len(header) == width + 1 and not header[-1]:
            header = header[:-1]
        if len(header) in (width, width - 1):
            counts, extra = [c - 1 for c in counts], 1
    width = len(header)
    if width > 0 and all(c == width + 1 for c in counts):  # R's write.table: no corner cell
        header = [""] + header
        width += 1
    for lineno, count, ends in zip(layout.linenos, counts, trailing):
        if count != width:
            hint = " (the line ends with a separator)" if count == width + 1 and ends else ""
            raise DataError(f"{path}: line {lineno}: {count} fields, expected {width} like the "
                            f"header (ragged row){hint}")
    if width < 2:
        raise DataError(f"{path}: a single column; is the separator {sep!r} right? (--sep)")
    layout.header, layout.width, layout.fields = header, width, width + extra
    return layout


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
    layout = _scan(path, lines, sep, lambda name: False)
    header = layout.header
    label_col = _label_position(header, label, True if outside else None, "label column", path)
    first = 1 if label_col == 0 else 0
    column = layout.first_fields if first == 0 else _column(lines, sep, layout, first)
    names_from = (f"column {first + 1}" if row_names else None) if row_names is not None \
        else _names_column(header, column, first)
    name_col = first if names_from is not None else None
    value_cols = [j for j in range(layout.width) if j not in (label_col, name_col)]
    if not value_cols:
        raise DataError(f"{path}: no gene columns left besides the names and labels")
    sample_names = column if name_col is not None else None
    gene_names = [header[j] for j in value_cols]
    sources, places, label_file = [("source", path)], None, None
    if label_col is not None:
        y = np.array(_column(lines, sep, layout, label_col), dtype=object)
        places = [f"line {n}" for n in layout.linenos]
    elif labels is not None:
        y, places = read_labels_file(labels, sample_names)
        sources.append(("labels", labels))
        label_file = labels
    else:
        y = np.full(len(layout.linenos), None, dtype=object)
    return MatrixSource(
        shape=(len(layout.linenos), len(value_cols)), rows_are_genes=False, labels=y,
        blocks=lambda: parse_rows(path, lines, sep, layout.linenos, value_cols,
                                  lambda j: f"column {gene_names[j]!r}"),
        row_names=sample_names, col_names=gene_names, sources=sources,
        notes=[] if names_from is None else [f"sample names from {names_from}"],
        label_places=places, label_file=label_file)


def _column(lines, sep, layout, col):
    """The cells of column ``col`` of every body row (a second, light pass)."""
    wanted = set(layout.linenos)
    with lines() as numbered:
        return [_field(line, sep, col, layout.fields) for lineno, line in numbered
                if lineno in wanted]


def _genes_as_rows(path, lines, sep, label, labels, outside, row_names):
    layout = _scan(path, lines, sep, lambda name: name == label or name.lower() in _LABEL_NAMES)
    header = layout.header
    names_from = (f"column 1" if row_names else None) if row_names is not None \
        else _names_column(header, layout.first_fields, 0)
    first = 0 if names_from is None else 1
    n_rows = len(layout.linenos)
    row_names = layout.first_fields if first else [str(i) for i in range(n_rows)]
    label_row = _label_position(row_names, label, True if outside else None, "label row", path)
    keep = [i for i in range(n_rows) if i != label_row]
    if not keep:
        raise DataError(f"{path}: no gene rows left besides the labels")
    sample_names = header[first:] if any(header[first:]) else None
    gene_names = [row_names[i] for i in keep] if first else None
    value_cols = list(range(first, layout.width))
    sources, places, label_file = [("source", path)], None, None
    if label_row is not None:
        if label_row not in layout.kept_lines:
            layout.kept_lines[label_row] = _line_at(lines, layout.linenos[label_row])
        cells = split_fields(layout.kept_lines[label_row], sep)[first:layout.width]
        y = np.array(cells, dtype=object)
        places = [f"line {layout.linenos[label_row]}, column {first + j + 1}"
                  for j in range(len(y))]
    elif labels is not None:
        y, places = read_labels_file(labels, sample_names)
        sources.append(("labels", labels))
        label_file = labels
    else:
        y = np.full(len(value_cols), None, dtype=object)

    def describe(j):
        return f"sample {header[first + j]!r}" if sample_names else f"column {first + j + 1}"

    linenos = [layout.linenos[i] for i in keep]
    return MatrixSource(
        shape=(len(keep), len(value_cols)), rows_are_genes=True, labels=y,
        blocks=lambda: parse_rows(path, lines, sep, linenos, value_cols, describe),
        row_names=gene_names, col_names=sample_names, sources=sources,
        notes=[] if names_from is None else [f"gene names from {names_from}"],
        label_places=places, label_file=label_file)


def _line_at(lines, wanted):
    with lines() as numbered:
        for lineno, line in numbered:
            if lineno == wanted:
                return line
    raise AssertionError(f"line {wanted} vanished between two reads")
