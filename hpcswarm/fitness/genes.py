"""Gene signatures given by the user: one gene per line, by name or by 0-based index."""

import numpy as np

from hpcswarm.data.textio import read_lines
from hpcswarm.errors import ParameterError


def read_gene_list(path):
    """Non-empty, stripped lines of a gene file; lines starting with ``#`` are comments.

    A tab-separated table whose header's first column is ``gene`` (what ``report --genes``
    writes) gives the genes of its first column.

    The file is read as any text input (:func:`hpcswarm.data.textio.read_text`: UTF-8,
    UTF-16 or UTF-32); a missing, unreadable or binary file is a
    :class:`~hpcswarm.errors.DataError` naming it.
    """
    lines = [line.strip() for line in read_lines(path)
             if line.strip() and not line.lstrip().startswith("#")]
    if lines and "\t" in lines[0] and lines[0].split("\t")[0].strip() == "gene":
        return [line.split("\t")[0].strip() for line in lines[1:]]
    return lines


def mask_from_genes(entries, gene_names):
    """Boolean mask over ``gene_names`` of the genes named in ``entries``.

    An entry is first looked up as a gene name; failing that, an integer is a 0-based column
    index (gene names that look like integers, such as clone IDs, therefore win over
    indices). Duplicates are allowed.

    Parameters
    ----------
    entries : sequence of str
    gene_names : sequence of str

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
    position = {str(name): i for i, name in reversed(list(enumerate(gene_names)))}
    mask = np.zeros(len(gene_names), dtype=bool)
    for entry in entries:
        index = position.get(entry)
        if index is None and entry.lstrip("-").isdigit():
            index = int(entry)
            if not 0 <= index < len(gene_names):
                raise ParameterError(f"gene {entry!r} is not a gene name, and as an index it is "
                                     f"outside [0, {len(gene_names)})")
        if index is None:
            raise ParameterError(f"unknown gene {entry!r}: not a gene name of the dataset nor "
                                 "a 0-based index")
        mask[index] = True
    return mask
