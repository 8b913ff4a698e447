"""AnnData ``.h5ad`` files, through the ``anndata`` package (the optional extra
``hpcswarm[anndata]``).

Samples are the observations (``obs_names``), genes the variables (``var_names``); the class
is an ``obs`` column (``--label``), the matrix ``X`` or a layer (``--layer``). Only ``obs``
and ``var`` are read whole (by anndata); the matrix is read block by block through h5py and
densified a block at a time: a CSR matrix by blocks of observations, a CSC one by blocks of
variables, each along its compressed axis.

A sparse matrix is the three arrays of anndata's encoding (``data``, ``indices``, ``indptr``
and the attribute ``shape``), which scipy and anndata trust: a column index past the end
makes scipy's densifying write outside its array (SIGSEGV), a negative one or an ``indptr``
that runs backwards puts values in the wrong cells. They are therefore read through h5py and
checked here, in numpy, before scipy sees them: their declared shapes and types before any
read (:func:`~hpcswarm.store.reading.check_declared`), ``indptr`` when the file is opened
(one entry per row of the compressed axis and one more, starting at 0, never decreasing, at
most one entry per cell of a row, ending at the number of stored values), and every index,
block by block, before scipy densifies its block, by the rules that an AnnData in memory
is checked by too (:func:`hpcswarm.inputs.indptr_problem`,
:func:`~hpcswarm.inputs.index_problem`). What scipy is then given cannot make it write
outside its array, so unlike MATLAB v5 files (:mod:`hpcswarm.data.matlab`) this reader needs
no reading in a child process first.
"""

import h5py
import numpy as np

from hpcswarm.data.table import BLOCK_CELLS, MatrixSource
from hpcswarm.errors import DataError
from hpcswarm.inputs import SPARSE_AXES, index_problem, indptr_problem
from hpcswarm.store.encoding import damaged_file
from hpcswarm.store.reading import check_declared, checked_read

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


_SPARSE = {"csr_matrix": SPARSE_AXES["csr"], "csc_matrix": SPARSE_AXES["csc"]}
"""Each sparse encoding: the axis it compresses (``indptr`` has one entry per row of it, and
one more) and the axis its ``indices`` count (:data:`hpcswarm.inputs.SPARSE_AXES`)."""


def _shape(element, kind, path, what):
    """The matrix's (observations, variables): a sparse one's ``shape`` attribute (two whole
    numbers, not negative), a dense one's dataset shape (2-D numbers)."""
    if kind == "array":
        if not isinstance(element, h5py.Dataset):
            raise DataError(f"{path}: a damaged AnnData file: {what} is a group, not a dense "
                            "array")
        check_declared(element, what, (None, None), "biuf", whole=False)
        return element.shape
    shape = np.asarray(element.attrs["shape"])
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or (shape < 0).any():
        raise DataError(f"{path}: a damaged AnnData file: {what}'s shape attribute is "
                        f"{shape.tolist()!r}, not two whole numbers >= 0")
    return tuple(int(n) for n in shape)


def _checked_indptr(element, kind, shape, path, what):
    """The ``indptr`` of the sparse matrix ``element`` (``kind``) of ``shape``, read once the
    three arrays' declared shapes and types are found sane, and checked: 0 first, never
    decreasing, at most one entry per cell of a row, the number of stored values last."""
    major, minor = _SPARSE[kind]
    n_major, n_minor = shape if major == "row" else shape[::-1]
    for key in ("data", "indices", "indptr"):
        if not isinstance(element.get(key), h5py.Dataset):
            raise DataError(f"{path}: a damaged AnnData file: {what} has no dataset '{key}'")
    check_declared(element["data"], f"{what}'s data", (range(n_major * n_minor + 1),),
                   "biuf", whole=False)
    n_stored = element["data"].shape[0]
    check_declared(element["indices"], f"{what}'s indices", (n_stored,), "iu", whole=False)
    indptr = checked_read(element["indptr"], f"{what}'s indptr", (n_major + 1,), "iu")
    problem = indptr_problem(indptr, n_major, n_minor, n_stored, major)
    if problem:
        raise DataError(f"{path}: a damaged AnnData file: {what}'s indptr {problem}")
    return indptr.astype(np.int64)


def _sparse_block(element, indptr, start, stop, n_minor, path, what, minor):
    """Rows ``start:stop`` of the compressed axis as a dense float64 block of shape
    ``(stop - start, n_minor)``, densified by scipy once its indices are found in range (a
    value stored twice in a cell is summed)."""
    import scipy.sparse

    first, last = indptr[start], indptr[stop]
    indices = element["indices"][first:last]
    data = element["data"][first:last]
    problem = index_problem(indices, n_minor, minor)
    if problem:
        raise DataError(f"{path}: a damaged AnnData file: {what} holds {problem}")
    block = scipy.sparse.csr_matrix((data, indices, indptr[start:stop + 1] - first),
                                    shape=(stop - start, n_minor))
    return block.toarray().astype(np.float64, copy=False)


def _blocks(path, layer, indptr):
    """Dense float64 blocks along the matrix's own major axis (``indptr``: a sparse one's,
    checked by :func:`_checked_indptr`; None for a dense one)."""
    with h5py.File(path, "r") as f, damaged_file(path, "AnnData file"):
        element, what = _matrix(f, layer, path)
        kind = _encoding(element)
        if kind in _SPARSE:
            major, minor = _SPARSE[kind]
            shape = _shape(element, kind, path, what)
            n_major, n_minor = shape if major == "row" else shape[::-1]
            step = max(1, BLOCK_CELLS // max(1, n_minor))
            for start in range(0, n_major, step):
                stop = min(n_major, start + step)
                yield _sparse_block(element, indptr, start, stop, n_minor, path, what, minor)
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
        shape = _shape(element, kind, path, what)
        if shape != (len(obs), len(var)):
            raise DataError(f"{path}: {what} has shape {shape}, obs and var say "
                            f"{(len(obs), len(var))}")
        indptr = _checked_indptr(element, kind, shape, path, what) if kind in _SPARSE else None
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
        blocks=lambda: _blocks(path, layer, indptr),
        row_names=genes if csc else samples, col_names=samples if csc else genes,
        sources=[("source", path)])


def _missing(value):
    return value is None or (isinstance(value, float) and np.isnan(value))
