"""Gene lists: the one tab-separated format hpcswarm writes, and the lists ``evaluate --genes``
reads.

The format (``OUT.signature.tsv``, ``report --genes FILE``): UTF-8 text, one header line whose
first column is ``gene``, then one row per gene, fields separated by tabs, lines ended by
``\\n``. The columns every list has:

``gene``
    The gene's name, exactly as the dataset holds it.
``feature``
    Its 1-based column in the dataset (the numbering of Tran et al.'s Table 6 and of most
    papers' feature tables).
``column``
    Its 0-based column (numpy's, and the dataset file's ``X``).

then the figures of the list (a selection frequency, a mean rank...). A field is written
between double quotes, with every ``"`` inside doubled (the quoting of RFC 4180 and of Python's
:mod:`csv`), when it holds a tab, a quote or a line end, starts with ``#`` or has a leading or
trailing space; any other field is written as it is. Every name a dataset can hold therefore
reads back exactly, including names that look like numbers or start with ``#``; a
spreadsheet or :func:`pandas.read_csv` with ``sep="\\t"`` reads the file as it is.

What ``evaluate --genes FILE`` reads (:func:`read_gene_list`):

- a list in this format (a first line, after any ``#`` comment lines, of tab-separated fields
  the first of which is ``gene``, alone or followed by other columns): the names of its
  ``gene`` column, as written. Any field may be quoted, the header's included (R's
  ``write.table`` quotes every one: ``"gene"`` is ``gene``); or
- a plain list written by hand: one gene per line, surrounding spaces ignored, blank lines
  and lines starting with ``#`` skipped. (A first line ``gene`` is the header of a one-column
  list, never a gene of that name.)

Lines end with ``\n`` or ``\r\n``, or, in a file without ``\n``, with a bare ``\r``
(classic Mac OS, Excel's Macintosh formats).

Every entry is a gene name, even one that looks like a number (Entrez ids): a line that names
no gene of the dataset is an error naming the line. A plain list of 0-based columns is read
as such only when the user says so (``evaluate --columns``). A name matches a gene of the
dataset compared without surrounding spaces, the one name rule of ``convert`` and loading
(:func:`hpcswarm.fitness.genes.mask_from_genes`).
"""

import csv
import re
from typing import NamedTuple

from hpcswarm.errors import DataError


NAME_COLUMNS = ("gene", "feature", "column")
"""The first columns of every gene list hpcswarm writes."""

_QUOTED = re.compile(r'[\t"\r\n]|^#|^\s|\s$')


def quote(field) -> str:
    """One field of a gene list: as it is, or quoted (see the module's description)."""
    text = str(field)
    if _QUOTED.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def gene_table(columns, rows) -> str:
    """A gene list in the format of this module.

    Parameters
    ----------
    columns : sequence of str
        The names of the figures after :data:`NAME_COLUMNS`.
    rows : iterable of tuple
        ``(name, column, *figures)`` per gene, ``column`` its 0-based column; figures are
        written with ``str`` (format numbers before).

    Returns
    -------
    str
        The header and one line per row, each ended by ``\\n``.
    """
    lines = ["\t".join(NAME_COLUMNS + tuple(columns))]
    for name, column, *figures in rows:
        lines.append("\t".join([quote(name), str(int(column) + 1), str(int(column)),
                                *map(quote, figures)]))
    return "\n".join(lines) + "\n"


class GeneList(NamedTuple):
    """The entries of a gene list file, each with the line it was read from."""

    entries: list
    """The names (or, read with ``--columns``, the 0-based columns), in the file's order."""
    lines: list
    """The 1-based line of the file each entry starts on, for the messages naming it."""
    written: bool
    """True for a list in this module's format (genes a search selected), False for a plain
    list typed by hand."""


_AFTER_BARE_CR = re.compile(r"(?<=\r)(?!\n)")


def _cr_lines(lines):
    """``lines`` (ends kept) cut after each bare carriage return when the file ends its lines
    with them alone (classic Mac OS, Excel's Macintosh formats: no ``\n`` anywhere); a file
    of ``\n`` or ``\r\n`` line ends is left as it is, a bare ``\r`` inside its lines being
    part of a quoted name or an error."""
    if any("\n" in line for line in lines):
        return lines
    return [part for line in lines for part in _AFTER_BARE_CR.split(line) if part]


def _fields(lines):
    """The rows of tab-separated ``lines`` (ends kept), quoted fields read as this module
    writes them (:func:`quote`) and as R's ``write.table`` quotes every field."""
    return csv.reader(lines, delimiter="\t", quotechar='"', doublequote=True, strict=False)


def read_gene_list(path) -> GeneList:
    """The genes of a gene list file: this module's format, or a plain list (see the module).

    The file is read as any text input (:func:`hpcswarm.data.textio.read_text`: UTF-8,
    UTF-16 or UTF-32); a missing, unreadable or binary file is a
    :class:`~hpcswarm.errors.DataError` naming it.
    """
    from hpcswarm.data.textio import read_lines  # here: writing a list loads no data reader

    lines = _cr_lines(read_lines(path, keep_ends=True))  # quoted names keep their line ends
    start = 0
    while start < len(lines) and (not lines[start].strip()
                                  or lines[start].lstrip().startswith("#")):
        start += 1
    header = next(_fields(lines[start:start + 1]), [])
    if header and header[0].strip() == "gene":
        rows = _fields(lines[start + 1:])
        entries, numbers, before = [], [], 0  # before: the lines read before this row
        try:
            for row in rows:
                if row and row != [""]:
                    entries.append(row[0])
                    numbers.append(start + 2 + before)
                before = rows.line_num
        except csv.Error:  # a bare carriage return inside a field that is not quoted
            raise DataError(f"{path}: line {start + 1 + rows.line_num}: a line end inside an "
                            "unquoted field (a name holding one is written between double "
                            "quotes)") from None
        return GeneList(entries, numbers, written=True)
    kept = [(line.strip(), number) for number, line in enumerate(lines, start=1)
            if line.strip() and not line.lstrip().startswith("#")]
    return GeneList([entry for entry, _ in kept], [number for _, number in kept],
                    written=False)
