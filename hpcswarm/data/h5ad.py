"""AnnData ``.h5ad`` files, through the ``anndata`` package (the optional extra
``hpcswarm[anndata]``).

Samples are the observations (``obs_names``), genes the variables (``var_names``); the class
is an ``obs`` column (``--label``), the matrix ``X`` or a layer (``--layer``). Only ``obs``
and ``var`` are read whole; the matrix is read block by block (``anndata.io.sparse_dataset``
for a sparse one, h5py slices for a dense one) and densified a block at a time: a CSR matrix
by blocks of observations, a CSC one by blocks of variables, each along its compressed axis.
"""

import h5py
import numpy as np

from hpcswarm.data.table import BLOCK_CELLS, MatrixSource
from hpcswarm.errors import DataError
from hpcswarm.store.encoding import damaged_file

EXTRA_HINT = "pip install 'hpcswarm[anndata]'"


def _anndata_io(path):
    try:
        import anndata.io
    except ImportError:
        raise DataError(f"{path}: reading .h5ad needs the anndata package, the optional extra "
                        f"hpcswarm[anndata] ({EXTRA_HINT})") from None
    return anndata.io


def _read_elem(io, f, key, path):
    """anndata's reading of the element ``key`` (``obs``, ``var``) of the open file ``f``; an
    element it cannot read (a damaged file, an encoding it does not know) is one
    :class:`DataError`."""
    try:
        return io.read_elem(f[key])
    except Exception as exc:  # noqa: BLE001 - anndata raises many kinds of error on a damaged file
        first = (str(exc).strip().splitlines() or [""])[0]
        raise DataError(f"{path}: a damaged AnnData file: /{key} does not read "
                        f"({type(exc).__name__}: {first})") from None


def _matrix(f, layer, path):
    if layer is None:
        element, what = f.get("X"), "X"
    else:
        layers = f.get("layers")
        element = layers.get(layer) if isinstance(layers, h5py.Group) else None
        if element is None:
            names = ", ".join(repr(n) for n in (layers.keys() if isinstance(layers, h5py.Group)
                                                else ())) or "none"
            raise DataError(f"{path}: no layer {layer!r} (layers: {names})")
        what = f"layer {layer!r}"
    if element is None:
        raise DataError(f"{path}: no X matrix (an AnnData file without X; choose a --layer)")
    return element, what


def _encoding(element):
    value = element.attrs.get("encoding-type", "array")
    return value.decode() if isinstance(value, bytes) else str(value)


def _blocks(path, layer, io, compressed_rows):
    """Dense float64 blocks along the matrix's own major axis."""
    with h5py.File(path, "r") as f, damaged_file(path, "AnnData file"):
        element, _ = _matrix(f, layer, path)
        kind = _encoding(element)
        if kind in ("csr_matrix", "csc_matrix"):
            matrix = io.sparse_dataset(element)
            n_major = matrix.shape[0] if compressed_rows else matrix.shape[1]
            n_minor = matrix.shape[1] if compressed_rows else matrix.shape[0]
            step = max(1, BLOCK_CELLS // max(1, n_minor))
            for start in range(0, n_major, step):
                if compressed_rows:
                    yield matrix[start:start + step].toarray().astype(np.float64, copy=False)
                else:
                    yield matrix[:, start:start + step].toarray().T.astype(np.float64, copy=False)
        else:
            step = max(1, BLOCK_CELLS // max(1, element.shape[1]))
            for start in range(0, element.shape[0], step):
                yield np.asarray(element[start:start + step], dtype=np.float64)


def read_h5ad(path, *, label=None, layer=None, labels_elsewhere=False):
    """Read an AnnData file.

    Parameters
    ----------
    path : Path
    label : str or None
        ``obs`` column holding the class (required unless ``labels_elsewhere``).
    layer : str or None
        Read ``layers[layer]`` instead of ``X``.
    labels_elsewhere : bool
        The labels come from a phenotype table matched by ``obs_names`` later.

    Returns
    -------
    MatrixSource
        Samples as rows (CSR or dense) or genes as rows (CSC: blocks of variables).
    """
    io = _anndata_io(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise DataError(f"{path}: cannot open as HDF5 ({exc})") from None
    with f, damaged_file(path, "AnnData file"):
        if "obs" not in f or "var" not in f:
            raise DataError(f"{path}: not an AnnData file (no obs or var)")
        obs, var = _read_elem(io, f, "obs", path), _read_elem(io, f, "var", path)
        element, what = _matrix(f, layer, path)
        kind = _encoding(element)
        if kind not in ("csr_matrix", "csc_matrix", "array"):
            raise DataError(f"{path}: {what} is stored as {kind!r}; expected a dense array or a "
                            "CSR/CSC sparse matrix")
        shape = tuple(int(n) for n in (element.attrs["shape"] if kind != "array"
                                       else element.shape))
    if shape != (len(obs), len(var)):
        raise DataError(f"{path}: {what} has shape {shape}, obs and var say "
                        f"{(len(obs), len(var))}")
    samples = [str(n) for n in obs.index]
    genes = [str(n) for n in var.index]
    if labels_elsewhere:
        labels = np.full(len(samples), None, dtype=object)
    elif label is None:
        raise DataError(f"{path}: name the class with --label, one of the obs columns: "
                        f"{', '.join(repr(c) for c in obs.columns) or 'none'}")
    elif label not in obs.columns:
        raise DataError(f"{path}: no obs column {label!r} for the label (obs columns: "
                        f"{', '.join(repr(c) for c in obs.columns) or 'none'})")
    else:
        column = obs[label]
        labels = np.array([None if _missing(v) else v for v in column.tolist()], dtype=object)
        if column.dtype.kind in "iuf" and not any(v is None for v in labels):
            labels = column.to_numpy()
    csc = kind == "csc_matrix"
    return MatrixSource(
        shape=(shape[1], shape[0]) if csc else shape, rows_are_genes=csc, labels=labels,
        blocks=lambda: _blocks(path, layer, io, compressed_rows=not csc),
        row_names=genes if csc else samples, col_names=samples if csc else genes,
        sources=[("source", path)])


def _missing(value):
    return value is None or (isinstance(value, float) and np.isnan(value))
