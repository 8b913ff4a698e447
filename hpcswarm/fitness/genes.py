"""Gene signatures given by the user, as a mask over the dataset's genes."""

import re

import numpy as np

from hpcswarm.errors import ParameterError

_INDEX = re.compile(r"[0-9]+")
"""A 0-based column (``--columns``): ASCII digits; the other digits Python's ``int`` reads
(other scripts', full-width) are never columns, and a superscript is not a number at all."""


def mask_from_genes(entries, gene_names, *, columns=False, lines=None):
    """Boolean mask over ``gene_names`` of the genes named in ``entries``.

    Each entry is a gene name, compared without surrounding spaces (the name rule of
    :func:`hpcswarm.data.validate.clean_names`), even one that looks like a number (Entrez
    ids): an entry that names no gene is an error, never read as a column. With ``columns``
    every entry is a 0-based column instead, in ASCII digits. Duplicates are allowed.

    Parameters
    ----------
    entries : sequence of str
    gene_names : sequence of str
    columns : bool, default False
        The entries are 0-based columns, not names.
    lines : sequence of int, optional
        The line of its file each entry was read from, named by the error about it.

    Returns
    -------
    ndarray of bool of shape (len(gene_names),)

    Raises
    ------
    ParameterError
        If ``entries`` is empty or an entry names no gene (is no column in range, with
        ``columns``).
    """
    if not entries:
        raise ParameterError("the gene list is empty: give at least one gene")
    position = {}
    for i, name in enumerate(gene_names):
        position.setdefault(str(name), i)
    for i, name in enumerate(gene_names):
        position.setdefault(str(name).strip(), i)
    mask = np.zeros(len(gene_names), dtype=bool)
    for number, entry in enumerate(entries):
        where = f"line {lines[number]}: " if lines is not None else ""
        if columns:
            if not (_INDEX.fullmatch(entry.strip()) and int(entry) < len(gene_names)):
                raise ParameterError(f"{where}{entry!r} is no 0-based column in [0, "
                                     f"{len(gene_names)}) (--columns reads column numbers)")
            index = int(entry)
        else:
            index = position.get(entry, position.get(entry.strip()))
        if index is None:
            hint = (" (a gene list holds names; for 0-based columns, evaluate --columns)"
                    if _INDEX.fullmatch(entry.strip()) else "")
            raise ParameterError(f"{where}{entry!r} names no gene of the dataset{hint}")
        mask[index] = True
    return mask
