"""The ``info`` summary of a dataset: shape, classes, names, memory mapping, provenance."""

import json

from hpcswarm.errors import DataError, ParameterError

DROPPED_PREFIX = "dropped_"
"""The provenance counts ``convert`` records of what it left out (``dropped_constant_genes``,
``dropped_unlabelled_samples``...): each a count of genes or samples, 0 or more."""


def _check_counts(dataset, spec):
    """Refuse a dataset whose recorded counts of what ``convert`` left out are not counts (a
    damaged file): one :class:`DataError` naming the file and the field."""
    for key, value in sorted(dataset.attrs.items()):
        if key.startswith(DROPPED_PREFIX) and not (
                isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            raise DataError(f"{dataset.path or spec}: a damaged dataset: provenance {key!r} = "
                            f"{value!r} is no count of genes or samples (0 or more)")


def _size(n_bytes):
    if n_bytes < 1024 ** 2:
        return f"{n_bytes / 1024:.1f} KB"
    if n_bytes < 1024 ** 3:
        return f"{n_bytes / 1024 ** 2:.1f} MB"
    return f"{n_bytes / 1024 ** 3:.2f} GB"


def describe(dataset, spec, n_names=5):
    """Lines describing ``dataset`` (opened from ``spec``) for the terminal.

    Parameters
    ----------
    dataset : Dataset
    spec : str
        What the user named (a path or ``builtin:NAME``).
    n_names : int
        How many gene and sample names to show.

    Returns
    -------
    list of str

    Raises
    ------
    ParameterError
        ``n_names`` is negative.
    DataError
        A count ``convert`` recorded of the genes or samples it left out is no count.
    """
    if n_names < 0:
        raise ParameterError(f"names must be 0 or more, got {n_names}")
    _check_counts(dataset, spec)
    X = dataset.X
    where = f" ({dataset.path})" if dataset.path is not None and str(dataset.path) != spec else ""
    if dataset.memory_mapped:
        mapping = "yes (contiguous, uncompressed: ranks share the file's pages)"
    elif dataset.path is not None:
        mapping = "no (X or X_genes is chunked or compressed: each rank reads a private copy)"
    else:
        mapping = "no (converted in memory; write an .h5 with 'convert' to share it between ranks)"
    counts = ", ".join(f"{name} {count}" for name, count in dataset.class_counts())
    genes = ", ".join(dataset.gene_names[:n_names]) + (", ..." if dataset.n_genes > n_names else "")
    lines = [
        f"dataset: {spec}{where}",
        f"shape: {dataset.n_samples} samples x {dataset.n_genes} genes, {X.dtype} ({_size(X.nbytes)})",
        f"classes ({dataset.n_classes}): {counts}",
        f"genes: {genes}",
    ]
    if dataset.sample_names is not None:
        samples = dataset.sample_names[:n_names]
        more = ", ..." if dataset.n_samples > n_names else ""
        lines.append(f"samples: {', '.join(samples)}{more}")
    lines.append(f"memory-mapped: {mapping}")
    for key, value in sorted(dataset.attrs.items()):
        shown = json.dumps(value, sort_keys=True) if isinstance(value, dict) else value
        lines.append(f"provenance: {key} = {shown}")
    lines.append(f"sha256: {dataset.sha256}")
    return lines
