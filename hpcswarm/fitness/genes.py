"""Gene signatures given by the user, as a mask over the dataset's genes."""

import re

import numpy as np

from hpcswarm.errors import ParameterError

_INDEX = re.compile(r"-?[0-9]+")
"""An entry read as a column: ASCII digits after an optional minus (then refused as out of
range); the other digits Python's ``int`` reads (other scripts', full-width) are never
columns, and a superscript is not a number at all."""


def mask_from_genes(entries, gene_names, *, names_only=False):
    """Boolean mask over ``gene_names`` of the genes named in ``entries``.

    An entry is looked up as a gene name, compared without surrounding spaces (the name rule
    of :func:`hpcswarm.data.validate.clean_names`); failing that, an integer in ASCII digits
    is a 0-based column index (gene names that look like integers, such as clone IDs,
    therefore win over indices). Duplicates are allowed.

    Parameters
    ----------
    entries : sequence of str
    gene_names : sequence of str
    names_only : bool, default False
        Entries are names, never indices (a list hpcswarm wrote,
        :func:`hpcswarm.signatures.genelist.read_gene_list`).

    Returns
    -------
    ndarray of bool of shape (len(gene_names),)

    Raises
    ------
    ParameterError
        If ``entries`` is empty or an entry is neither a gene name nor a valid index.
    """
    if not entries:
        raise ParameterError("the gene list is empty: give at least one gene")
    position = {}
    for i, name in enumerate(gene_names):
        position.setdefault(str(name), i)
    for i, name in enumerate(gene_names):
        position.setdefault(str(name).strip(), i)
    mask = np.zeros(len(gene_names), dtype=bool)
    for entry in entries:
        index = position.get(entry, position.get(entry.strip()))
        if index is None and names_only:
            raise ParameterError(f"unknown gene {entry!r}: not a gene name of the dataset "
                                 "(a gene list with a 'gene' header names genes, not columns)")
        if index is None and _INDEX.fullmatch(entry.strip()):
            index = int(entry)
            if not 0 <= index < len(gene_names):
                raise ParameterError(f"gene {entry!r} is not a gene name, and as an index it is "
                                     f"outside [0, {len(gene_names)})")
        if index is None:
            raise ParameterError(f"unknown gene {entry!r}: not a gene name of the dataset nor "
                                 "a 0-based index")
        mask[index] = True
    return mask
