"""Broad GCT 1.2 expression files (genes as rows) with CLS class-label files.

GCT::

    #1.2
    <n_genes> <tab> <n_samples>
    Name <tab> Description <tab> sample_1 ... sample_n
    gene_id <tab> description <tab> value ... value

CLS (whitespace separated)::

    <n_samples> <n_classes> 1
    # class_name_1 ... class_name_k
    label_1 ... label_n          (class names, or 0-based indices into the names line)

The CLS file is ``--labels FILE``, by default the GCT path with the extension ``.cls``.
Either file may be gzip-compressed.
"""

from pathlib import Path

import numpy as np

from hpcswarm.data.table import RawTable, parse_float_cells
from hpcswarm.data.textio import read_lines
from hpcswarm.errors import DataError


def _dims(text, path, lineno, count):
    try:
        values = [int(v) for v in text.split()]
    except ValueError:
        values = []
    if len(values) < count:
        raise DataError(f"{path}: line {lineno}: expected {count} integers, got {text.strip()[:40]!r}")
    return values


def read_cls(path, n_samples):
    """Labels and class order of a CLS file.

    Parameters
    ----------
    path : Path
    n_samples : int
        Samples in the GCT file, for the error message only (the count is checked later).

    Returns
    -------
    labels : ndarray of shape (n_labels,)
    class_order : list of str or None
    """
    lines = [line for line in read_lines(path) if line.strip()]
    if len(lines) < 2:
        raise DataError(f"{path}: a CLS file needs a header line and a labels line")
    declared_samples, declared_classes = _dims(lines[0], path, 1, 2)[:2]
    names = None
    if lines[1].lstrip().startswith("#"):
        names = lines[1].lstrip()[1:].split()
        if len(names) != declared_classes:
            raise DataError(f"{path}: line 2 names {len(names)} classes, "
                            f"the header says {declared_classes}")
        lines = lines[:1] + lines[2:]
    tokens = [token for line in lines[1:] for token in line.split()]
    if len(tokens) != declared_samples:
        raise DataError(f"{path}: {len(tokens)} labels, the header says {declared_samples} "
                        f"(the GCT file has {n_samples} samples)")
    if names is not None and all(t.isdigit() for t in tokens) and not set(tokens) <= set(names):
        indices = [int(t) for t in tokens]
        if max(indices) >= len(names):
            raise DataError(f"{path}: label index {max(indices)} but only {len(names)} class names")
        tokens = [names[i] for i in indices]
    if names is not None:
        unknown = sorted(set(tokens) - set(names))
        if unknown:
            raise DataError(f"{path}: label {unknown[0]!r} is not among the class names {names}")
    return np.array(tokens, dtype=object), names


def default_cls(path):
    """The CLS file beside a GCT file: its name with ``.cls`` for ``.gct`` (``.gz`` removed),
    or that name with ``.gz`` when only the compressed one exists."""
    path = Path(path)
    plain = path.with_suffix("") if path.suffix.lower() == ".gz" else path
    cls = plain.with_suffix(".cls")
    compressed = cls.with_name(cls.name + ".gz")
    return compressed if not cls.is_file() and compressed.is_file() else cls


def read_gct(path, *, labels=None, labels_elsewhere=False):
    """Read a GCT 1.2 file and its CLS labels.

    Parameters
    ----------
    path : Path
    labels : str or Path or None
        CLS file; default :func:`default_cls`.
    labels_elsewhere : bool
        The labels come from a phenotype table: no CLS file is read.

    Returns
    -------
    RawTable
        Samples as rows (the GCT matrix transposed), gene names from the Name column.
    """
    lines = read_lines(path)
    if not lines or lines[0].strip() != "#1.2":
        found = lines[0].strip()[:20] if lines else "an empty file"
        raise DataError(f"{path}: expected a GCT 1.2 file starting with '#1.2', found {found!r}")
    if len(lines) < 3:
        raise DataError(f"{path}: a GCT file needs a dimensions line and a header line")
    n_genes, n_samples = _dims(lines[1], path, 2, 2)[:2]
    header = lines[2].split("\t")
    if len(header) != n_samples + 2:
        raise DataError(f"{path}: line 3: {len(header) - 2} sample columns, line 2 says {n_samples}")
    rows = [(n, line.split("\t")) for n, line in enumerate(lines[3:], 4) if line.strip()]
    if len(rows) != n_genes:
        raise DataError(f"{path}: {len(rows)} gene rows, line 2 says {n_genes}")
    for lineno, fields in rows:
        if len(fields) != n_samples + 2:
            raise DataError(f"{path}: line {lineno}: {len(fields)} fields, "
                            f"expected {n_samples + 2} (ragged row)")
    sample_names = [h.strip() for h in header[2:]]
    gene_names = [fields[0].strip() for _, fields in rows]
    cells = [fields[2:] for _, fields in rows]
    X = parse_float_cells(cells, path, lambda i, j: f"line {rows[i][0]}, sample {sample_names[j]!r}").T
    if labels_elsewhere:
        return RawTable(X=X, labels=np.full(n_samples, None, dtype=object), gene_names=gene_names,
                        sample_names=sample_names, sources=[("source", path)])
    cls = Path(labels) if labels is not None else default_cls(path)
    if labels is None and not cls.is_file():
        raise DataError(f"{path}: no class labels: {cls} does not exist (give --labels FILE.cls)")
    y, class_order = read_cls(cls, n_samples)
    return RawTable(X=X, labels=y, gene_names=gene_names, sample_names=sample_names,
                    class_order=class_order, sources=[("source", path), ("labels", cls)])
