"""The ``info`` summary of a dataset: shape, classes, names, memory mapping, provenance."""

import json

from hpcswarm.errors import ParameterError


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
    """
    if n_names < 0:
        raise ParameterError(f"names must be 0 or more, got {n_names}")
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
