"""GEO series matrix files (``GSE*_series_matrix.txt[.gz]``), as GEOquery's ``getGEO`` and
GEO2R read them.

Layout::

    !Series_geo_accession   "GSE1234"
    !Series_platform_id     "GPL570"
    !Sample_title           "ctrl 1"   "AD 1"  ...
    !Sample_geo_accession   "GSM1"     "GSM2"  ...
    !Sample_characteristics_ch1  "disease state: control"  "disease state: AD"  ...
    !Sample_characteristics_ch1  "age: 70"  "age: 81"  ...
    !series_matrix_table_begin
    "ID_REF"   "GSM1"  "GSM2" ...
    "1007_s_at"  7.12  null ...
    !series_matrix_table_end

The expression table is the block between the two markers, found by them (never by line
numbers): quoted probe ids as rows, quoted GSM ids as columns, one gene per row; ``null``,
``NA`` or an empty cell is a missing value (``--nan``). Class labels come from the
``!Sample_*`` header lines: ``--label "disease state"`` takes, for each sample, the
``key: value`` cell of the repeated ``!Sample_characteristics_ch1`` lines whose key matches
(each cell carries its own key, and samples may list their characteristics in different
orders); ``--label title`` or ``--label source_name_ch1`` takes a whole ``!Sample_`` line.
The series accession and platform are kept in the dataset's provenance.
"""

import csv
from contextlib import contextmanager

import numpy as np

from hpcswarm.data.delimited import read_delimited
from hpcswarm.data.textio import text_lines
from hpcswarm.errors import DataError

BEGIN = "!series_matrix_table_begin"
END = "!series_matrix_table_end"
_CHARACTERISTICS = "!sample_characteristics_ch1"


def _cells(line):
    return [c.strip() for c in next(csv.reader([line], delimiter="\t"))]


def _header(path):
    """The ``!`` lines before the table, as (name, cells), and the table's first two lines."""
    lines, table = [], []
    with text_lines(path) as stream:
        for line in stream:
            if table or line.strip().lower() == BEGIN:
                table.append(line)
                if len(table) == 3:
                    break
            elif line.startswith("!"):
                cells = _cells(line)
                lines.append((cells[0], cells[1:]))
    if not table:
        raise DataError(f"{path}: no series matrix table ({BEGIN} not found)")
    rows = [line for line in table[1:] if line.strip()]
    if len(rows) < 2 or rows[1].strip().lower() == END:
        raise DataError(f"{path}: the series matrix table is empty; RNA-seq series keep their "
                        "data in supplementary files (download the counts table from the "
                        "series page and convert it, with --labels for the sample classes)")
    return lines


def _table_lines(path):
    """``lines()`` for the table block: ``(line number, text)`` from the header row on."""

    @contextmanager
    def lines():
        with text_lines(path) as stream:
            yield _block(stream, path)

    return lines


def _block(stream, path):
    inside = False
    for lineno, line in enumerate(stream, 1):
        marker = line.strip().lower()
        if not inside:
            inside = marker == BEGIN
            continue
        if marker == END:
            return
        yield lineno, line
    raise DataError(f"{path}: the series matrix table has no {END} line (truncated file?)")


def _first(lines, name):
    found = [cells for key, cells in lines if key.lower() == name.lower()]
    return found[0] if found else None


def characteristic_keys(lines):
    """Keys of the ``key: value`` cells of the characteristics lines, in order of appearance."""
    keys = {}
    for key, cells in lines:
        if key.lower() == _CHARACTERISTICS:
            for cell in cells:
                if ":" in cell:
                    keys.setdefault(cell.split(":", 1)[0].strip(), None)
    return list(keys)


def sample_labels(lines, label, path):
    """One label per sample (in ``!Sample_geo_accession`` order), None where a sample has none.

    Parameters
    ----------
    lines : list of (str, list of str)
        The ``!`` header lines.
    label : str
        A characteristic's key, or the name of a ``!Sample_`` line (with or without the
        ``!Sample_`` prefix).
    path : Path
    """
    line_name = label if label.lower().startswith("!sample_") else f"!Sample_{label}"
    whole = _first(lines, line_name)
    if whole is not None and line_name.lower() != _CHARACTERISTICS:
        return [cell or None for cell in whole]
    wanted = label.strip().lower()
    found = None
    for key, cells in lines:
        if key.lower() != _CHARACTERISTICS:
            continue
        if found is None:
            found = [None] * len(cells)
        for i, cell in enumerate(cells):
            name, sep, value = cell.partition(":")
            if sep and name.strip().lower() == wanted and value.strip():
                found[i] = value.strip()
    if found is None or all(v is None for v in found):
        keys = ", ".join(repr(k) for k in characteristic_keys(lines)) or "none"
        raise DataError(f"{path}: no characteristic or !Sample_ line {label!r} for the label "
                        f"(characteristics: {keys}; or a whole line such as title, "
                        "source_name_ch1)")
    return found


def read_series_matrix(path, *, label=None, labels_elsewhere=False):
    """Read a GEO series matrix, streamed (see the module's description).

    Parameters
    ----------
    path : Path
    label : str or None
        Characteristic key or ``!Sample_`` line naming the class.
    labels_elsewhere : bool
        The labels come from a phenotype table matched by GSM id later.

    Returns
    -------
    MatrixSource
        Genes as rows; provenance ``series`` and ``platform``.
    """
    lines = _header(path)
    source = read_delimited(path, sep="\t", genes_as_rows=True, labels_elsewhere=True,
                            row_names=True, lines=_table_lines(path))
    if not labels_elsewhere:
        if label is None:
            keys = ", ".join(repr(k) for k in characteristic_keys(lines)) or "none"
            raise DataError(f"{path}: name the class with --label: a characteristic "
                            f"({keys}) or a !Sample_ line such as title, source_name_ch1")
        accessions = _first(lines, "!Sample_geo_accession")
        if accessions is None:
            raise DataError(f"{path}: no !Sample_geo_accession line to match the labels to "
                            "the table's columns")
        by_sample = dict(zip(accessions, sample_labels(lines, str(label), path)))
        source.labels = np.array([by_sample.get(name) for name in source.col_names or []],
                                 dtype=object)
        source.label_origin = f"(no {label!r} in the !Sample_ lines)"
    for key, attr in (("!Series_geo_accession", "series"), ("!Series_platform_id", "platform")):
        values = [cells[0] for name, cells in lines if name.lower() == key.lower() and cells]
        if values:
            source.provenance[attr] = ",".join(values)
    return source
