"""MATLAB .mat reader: v5 through :func:`scipy.io.loadmat`, v7.3 (HDF5) through h5py.

The matrix variable (``X`` by default) holds samples as rows, genes as columns, as in the
scikit-feature files; integer matrices (int16 in colon.mat and lymphoma.mat) become float64.
The label variable (``Y``) is numeric, a char matrix (one label per row) or a cell array of
strings; numeric labels are named by their values ("1", "2", ...) and coded in sorted order,
and a NaN label is a missing one.

scipy is imported when a v5 file is read, not with the module: importing ``scipy.io`` takes
longer than the rest of ``hpcswarm.data``, and every command that opens an hpcswarm HDF5 file
imports this reader through the registry of input formats.
"""

import h5py
import numpy as np

from hpcswarm.data.hdf5 import decode_value
from hpcswarm.data.table import RawTable
from hpcswarm.data.textio import check_readable
from hpcswarm.errors import DataError
from hpcswarm.store.encoding import damaged_file
from hpcswarm.store.reading import checked_read


def _matrix(value, name, path):
    import scipy.sparse

    if scipy.sparse.issparse(value):
        value = value.toarray()
    value = np.asarray(value)
    if value.dtype.kind not in "iufb":
        raise DataError(f"{path}: variable {name!r} is {value.dtype} data, expected a numeric matrix")
    if value.ndim != 2:
        raise DataError(f"{path}: variable {name!r} has {value.ndim} dimension(s), "
                        "expected a 2-D matrix")
    return value.astype(np.float64)


def _labels_v5(value, name, path):
    value = np.asarray(value)
    if value.dtype.kind in "iufb":
        return value.ravel()
    if value.dtype == object:
        cells = [np.asarray(v).ravel() for v in value.ravel()]
        if all(c.dtype.kind == "U" and c.size == 1 for c in cells):
            return np.array([str(c[0]) for c in cells], dtype=object)
    if value.dtype.kind == "U":
        return np.array([s.strip() for s in value.ravel()], dtype=object)
    raise DataError(f"{path}: variable {name!r} is neither numeric nor a cell array of strings")


def _check_reader_survives(path, names):
    """Read ``names`` of the v5 file ``path`` once in a child process, so that a file that
    crashes scipy's reader is one error line rather than the end of the process.

    scipy's v5 reader is not hardened against crafted files (its documentation says so): a
    variable whose class byte says sparse over dense data kills the process with SIGSEGV
    (scipy 1.17). The child runs scipy alone (no MPI, no hpcswarm); an exception there is
    left for the reader in this process to report with its own message. It costs one more
    read of the file, once per conversion.
    """
    import subprocess
    import sys

    if not sys.executable:  # an embedded interpreter: no child to run
        return
    code = "import sys, scipy.io; scipy.io.loadmat(sys.argv[1], variable_names=sys.argv[2:])"
    child = subprocess.run([sys.executable, "-c", code, str(path), *names],
                           stdin=subprocess.DEVNULL, capture_output=True, check=False)
    if child.returncode < 0:
        raise DataError(f"{path}: cannot read as a MATLAB file (scipy's reader crashed on it, "
                        f"signal {-child.returncode}): a damaged or crafted file")


def _read_v5(path, x_var, y_var):
    import scipy.io

    _check_reader_survives(path, [x_var, y_var])
    try:
        contents = scipy.io.loadmat(path, variable_names=[x_var, y_var])
    except Exception as exc:  # noqa: BLE001 - scipy raises many kinds of error on a damaged file
        raise DataError(f"{path}: cannot read as a MATLAB file ({exc or type(exc).__name__})") from None
    for name in (x_var, y_var):
        if name not in contents:
            raise DataError(f"{path}: no variable {name!r} (choose with --x-var/--y-var)")
    return _matrix(contents[x_var], x_var, path), _labels_v5(contents[y_var], y_var, path)


def _read_v73(path, x_var, y_var):
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise DataError(f"{path}: cannot read as a MATLAB v7.3 (HDF5) file ({exc})") from None
    with f, damaged_file(path, "MATLAB v7.3 (HDF5) file"):
        for name in (x_var, y_var):
            if not isinstance(f.get(name), h5py.Dataset):
                raise DataError(f"{path}: no variable {name!r} (choose with --x-var/--y-var)")
        # MATLAB stores column-major arrays: h5py sees every matrix transposed.
        X = _matrix(_whole(f[x_var], x_var), x_var, path).T
        labels = _labels_v73(f, f[y_var], y_var, path)
    return X, labels


def _whole(dset, name):
    """The values of the variable ``name`` (dataset ``dset``), once the memory they declare
    is found to fit (:func:`~hpcswarm.store.reading.checked_read`); their type and shape are
    checked by the caller, in MATLAB's words."""
    return checked_read(dset, f"variable {name!r}", (None,) * dset.ndim, None)


def _matlab_class(dset):
    return decode_value(dset.attrs.get("MATLAB_class", b""))


def _char_rows(dset):
    """The rows of a MATLAB char matrix stored in v7.3 (UTF-16 code units, column-major: h5py
    sees the matrix transposed, one string per column)."""
    if dset.attrs.get("MATLAB_empty"):
        return [""]
    codes = np.atleast_2d(_whole(dset, dset.name))
    return ["".join(map(chr, codes[:, j].tolist())).strip() for j in range(codes.shape[1])]


def _labels_v73(f, dset, name, path):
    """Labels of a v7.3 variable: numeric, a ``char`` matrix (one label per row) or a cell
    array of strings; MATLAB says which in the ``MATLAB_class`` attribute."""
    kind = _matlab_class(dset)
    if kind == "char":
        return np.array(_char_rows(dset), dtype=object)
    if kind == "cell":
        labels = []
        for ref in np.asarray(_whole(dset, name)).T.ravel():
            cell = f[ref]
            if _matlab_class(cell) != "char":
                raise DataError(f"{path}: variable {name!r} is a cell array of "
                                f"{_matlab_class(cell) or 'unknown'} values, expected strings")
            rows = _char_rows(cell)
            if len(rows) != 1:
                raise DataError(f"{path}: variable {name!r}: cell {len(labels) + 1} holds "
                                f"{len(rows)} strings, expected one")
            labels.append(rows[0])
        return np.array(labels, dtype=object)
    values = _whole(dset, name)
    if values.dtype.kind not in "iufb":
        raise DataError(f"{path}: variable {name!r} is {kind or values.dtype} data, expected "
                        "numeric labels, a char matrix or a cell array of strings")
    return np.asarray(values).ravel()


def read_mat(path, *, x_var="X", y_var="Y"):
    """Read a MATLAB file.

    Parameters
    ----------
    path : Path
    x_var, y_var : str
        Variables holding the (n_samples, n_genes) matrix and the labels.

    Returns
    -------
    RawTable
        Without gene or sample names (the genes are named ``g1`` ... later).
    """
    check_readable(path)
    if h5py.is_hdf5(path):
        X, labels = _read_v73(path, x_var, y_var)
    else:
        X, labels = _read_v5(path, x_var, y_var)
    return RawTable(X=X, labels=labels, sources=[("source", path)],
                    label_places=[f"{y_var}({i + 1})" for i in range(len(labels))])
