"""The validators of data given in Python, each input checked once at its door
(:func:`hpcswarm.select`, :class:`~hpcswarm.selector.SwarmFeatureSelector`): the matrix
(:func:`checked_matrix`: dense, or sparse by :func:`check_sparse`), class labels, gene
names, table columns. :func:`hpcswarm.selection.search.run_search`, the engine's own entry,
reads the matrix and label checks that hold for any search (:func:`check_matrix`,
:func:`label_values`) when it is given a matrix directly, and the data layer reads an
``.h5ad`` file's sparse arrays by the same rules (:func:`indptr_problem`,
:func:`index_problem`); this module needs numpy only, so it sits in the root's foundation
layer, below every package.

The matrix must hold finite real numbers, samples x genes (2-D): complex numbers, text,
dates and missing or infinite values are refused before any conversion could hide them.

A selection separates classes, so the labels must name at least two of them, every sample
must have one, some class must hold two samples (labels all distinct are sample names),
and they must look like classes: a float column with more values distinct than not (ages,
a score), or with values that are not whole numbers (0.5, 1.5), is a measurement, refused
unless it is declared categorical (a pandas ``Categorical``). Labels of one Python type
(text, whole numbers, booleans) keep their values as the class names; labels mixing types
(``1`` and ``"1"``, ``1`` and ``1.0``) are refused.

Errors are ``ValueError`` (``TypeError`` for a value of the wrong type) naming the Python
argument. pandas is never imported here: its objects are recognised by their attributes.
"""

import numbers

import numpy as np

CONTINUOUS_SHARE = 0.5
"""A float label array with more than this share of distinct values looks continuous."""


def is_missing(value) -> bool:
    """Whether one label is missing: None, a float NaN, pandas' ``NA`` or ``NaT``."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    return type(value).__name__ in ("NAType", "NaTType")


def _shown(values, limit=5):
    listed = ", ".join(repr(v) for v in values[:limit])
    return listed + (", ..." if len(values) > limit else "")


_NOT_NUMBERS = {"c": "complex numbers", "U": "text",
                "S": "text (bytes)", "M": "dates", "m": "time spans",
                "V": "records (a structured array)"}
"""The dtype kinds a matrix of expression values cannot have, as the error names them."""


def check_matrix(values, argument: str = "X") -> None:
    """Refuse an array that is not samples x genes of real numbers, before any conversion.

    Only objects with a ``dtype`` (NumPy arrays, memory maps, scipy.sparse matrices) are
    looked at; a list is converted by scikit-learn, then checked by :func:`check_finite`.

    Raises
    ------
    ValueError
        An array that is not 2-D, without samples, or of complex numbers, text, dates or
        records; an object array with a text cell that is no number (named by position).
    TypeError
        An object array with a cell of another type (a dict, a list), named by position.
    """
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind is None:
        return
    shape = getattr(values, "shape", ())
    if len(shape) != 2:
        raise ValueError(f"{argument} must be samples x genes (2-D), got shape {shape}")
    if shape[0] == 0:
        raise ValueError(f"{argument}: no samples (shape {shape}); a selection needs samples "
                         f"of at least two classes")
    if kind in _NOT_NUMBERS:
        unsupported = " (Complex data not supported)" if kind == "c" else ""
        raise ValueError(f"{argument}: {_NOT_NUMBERS[kind]} ({values.dtype}) are not "
                         f"expression values{unsupported}; give real numbers")
    if kind == "O" and isinstance(values, np.ndarray):
        try:
            values.astype(np.float64)
        except (TypeError, ValueError) as exc:  # the first cell that is no number, named
            first = next(((at, cell) for at, cell in np.ndenumerate(values)
                          if not _is_number(cell)), None)
            where = ("" if first is None else f" the value at sample {first[0][0]}, gene "
                     f"{first[0][1]} is {first[1]!r},")
            raise type(exc)(f"{argument}:{where} not a number ({exc}); drop the columns that "
                            f"are not genes") from None


def _is_number(cell) -> bool:
    try:
        float(cell)
    except (TypeError, ValueError):
        return False
    return True


def check_finite(values, argument: str = "X", gene_names=None) -> None:
    """Refuse missing or infinite values of a matrix of numbers, naming the first one.

    Parameters
    ----------
    values : ndarray or scipy.sparse matrix of shape (n_samples, n_genes)
        Numbers; other dtypes (``object``) are left to the conversion that follows.
    argument : str
        The Python argument named in the error.
    gene_names : sequence of str, optional
        Names of the columns, to name the first gene with a missing value.

    Raises
    ------
    ValueError
        NaN or infinite values, counted, with the sample and gene of the first.
    """
    stored = getattr(values, "data", values) if hasattr(values, "tocoo") else values
    if getattr(getattr(stored, "dtype", None), "kind", None) != "f":
        return
    with np.errstate(over="ignore", invalid="ignore"):  # a finite sum: all finite, no copy
        if np.isfinite(np.sum(stored, dtype=np.float64)):
            return
    bad = ~np.isfinite(stored)
    if not bad.any():
        return
    if hasattr(values, "tocoo"):  # scipy.sparse: the stored values' rows and columns
        coo = values.tocoo()
        positions = np.column_stack([coo.row, coo.col])[~np.isfinite(coo.data)]
    else:
        positions = np.argwhere(bad)
    row, column = (int(v) for v in positions[0])
    gene = f" ({gene_names[column]!r})" if gene_names is not None else ""
    raise ValueError(f"{argument}: {len(positions)} value(s) are missing or infinite (NaN or "
                     f"inf), the first at sample {row}, gene {column}{gene}; drop or impute "
                     f"them first")


def _label_group(value) -> str:
    """The kind of one label: text, bytes, bool, integer, real, or the type's name."""
    if isinstance(value, str):
        return "text"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "integer"
    if isinstance(value, numbers.Real):
        return "real"
    return type(value).__name__


def _mixed_types(values, argument) -> ValueError:
    """The error for labels whose types cannot be ordered into classes, naming the types."""
    kinds = sorted({type(v).__name__ for v in values})
    return ValueError(f"{argument}: mixed types ({', '.join(kinds)}) cannot be ordered into "
                      f"classes; give every label as text or every one as a number")


def _typed_labels(values, argument):
    """Object labels as an array of their one type (text, bytes, bool, integer, real);
    ValueError when they mix types, which classes cannot (1, 1.0 and True are one value)."""
    groups = {_label_group(v) for v in values}
    if len(groups) > 1:
        raise _mixed_types(values, argument)
    (group,) = groups or {"text"}
    if group == "bool":
        return values.astype(bool)
    if group == "real":
        return values.astype(np.float64)
    if group == "integer":
        typed = np.array(values.tolist())
        if typed.dtype.kind not in "iu":
            raise ValueError(f"{argument}: whole-number labels beyond 64 bits; give the "
                             f"classes as text or small numbers")
        return typed
    return values


def label_values(labels, argument: str = "y") -> np.ndarray:
    """The labels as a 1-D ndarray, every one present and all of one type; the classes they
    make are not judged (:func:`check_labels` does).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        A sequence, an ndarray, a pandas ``Series`` or ``Categorical`` (its categories as
        text).
    argument : str
        The Python argument named in errors.

    Returns
    -------
    ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        Not one label per sample, missing labels (None, NaN, pandas ``NA``), labels of
        mixed types, complex labels, bytes that are not UTF-8 text (other bytes are read
        as text).
    """
    categorical = getattr(getattr(labels, "dtype", None), "name", None) == "category"
    values = labels.to_numpy() if hasattr(labels, "to_numpy") else np.asarray(labels)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(f"{argument}: labels must be one class per sample (1-D), got shape "
                         f"{values.shape}")
    if values.dtype.kind in "fc":
        missing = np.flatnonzero(np.isnan(values))
    elif values.dtype.kind == "O":
        missing = np.flatnonzero([is_missing(v) for v in values])
    else:
        missing = np.empty(0, dtype=np.int64)
    if missing.size:
        raise ValueError(f"{argument}: {missing.size} sample(s) without a label (None, NaN or "
                         f"NA) at position(s) {_shown(missing.tolist())}; drop those samples "
                         f"or give them a class")
    if categorical:  # the categories are the classes, whatever their type
        return values.astype(str)
    if values.dtype.kind == "O":
        values = _typed_labels(values, argument)
    if values.dtype.kind == "c":
        raise ValueError(f"{argument}: complex labels cannot be classes (Complex data not "
                         f"supported)")
    if values.dtype.kind == "S" or (values.dtype.kind == "O" and values.size
                                    and isinstance(values[0], bytes)):
        try:
            values = np.array([bytes(v).decode("utf-8") for v in values])
        except UnicodeDecodeError:
            raise ValueError(f"{argument}: labels given as bytes that are not UTF-8 text; "
                             f"give them as str") from None
    try:
        np.unique(values)
    except TypeError:
        raise _mixed_types(values, argument) from None
    return values


def check_labels(labels, argument: str = "y") -> np.ndarray:
    """The labels as a 1-D ndarray, refused unless they name classes.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        A sequence, an ndarray, a pandas ``Series`` or ``Categorical``.
    argument : str
        The Python argument named in errors (``"y"``, ``"labels"``, ``"obs['cell_type']"``).

    Returns
    -------
    ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        As :func:`label_values`; a single class, a class of its own for every sample
        (sample names), or float labels that look continuous (more than
        :data:`CONTINUOUS_SHARE` of them distinct, or values that are not whole numbers)
        and are not categorical.
    """
    categorical = getattr(getattr(labels, "dtype", None), "name", None) == "category"
    values = label_values(labels, argument)
    classes = np.unique(values)
    if classes.size < 2:
        shown = f" ({classes.tolist()[0]!r})" if classes.size else ""
        raise ValueError(f"{argument}: one class only{shown}; a selection needs samples of at "
                         f"least two classes")
    if (values.dtype.kind == "f" and not categorical
            and classes.size > CONTINUOUS_SHARE * values.size):
        raise ValueError(f"{argument}: {classes.size} distinct float values among "
                         f"{values.size} samples look like a measurement, not classes; give "
                         f"class labels (bin the values, or make them categorical)")
    if classes.size == values.size:
        raise ValueError(f"{argument}: every sample has a class of its own ({values.size} "
                         f"distinct labels), as sample names would; no sample could be "
                         f"classified by another of its class: give class labels")
    if values.dtype.kind == "f" and not categorical:
        fractional = classes[~np.isfinite(classes) | (classes != np.round(classes))]
        if fractional.size:
            raise ValueError(f"{argument}: float values that are not whole numbers "
                             f"({_shown(fractional.tolist())}) look like a measurement, not "
                             f"classes; give class labels (bin the values, or make them "
                             f"categorical)")
    return values


def check_gene_names(names, argument: str) -> list:
    """``names`` as a list of str, refused if one is missing or given twice.

    Raises
    ------
    TypeError
        ``names`` given as one string (its characters are not names).
    ValueError
        A missing name (None, NaN) or a repeated one, named with its positions.
    """
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{argument}: give a sequence of names, one per gene, not the one "
                        f"string {names!r}")
    try:
        names = list(names)
    except TypeError:
        raise TypeError(f"{argument}: give a sequence of names, one per gene, got "
                        f"{type(names).__name__}") from None
    missing = [position for position, name in enumerate(names) if is_missing(name)]
    if missing:
        raise ValueError(f"{argument}: {len(missing)} gene(s) without a name (None or NaN) at "
                         f"column(s) {_shown(missing)}; name every gene")
    names = [str(name) for name in names]
    first = {}
    for position, name in enumerate(names):
        if name in first:
            raise ValueError(f"{argument}: gene {name!r} is named twice (columns "
                             f"{first[name]} and {position}); give each gene its own name")
        first[name] = position
    return names


def check_columns(frame, argument: str = "X") -> list:
    """The column names of a pandas ``DataFrame`` of genes, as str, refused unless every
    column is numeric and named once.

    Raises
    ------
    ValueError
        No columns, columns that are not numbers (named, with their types), or a missing or
        repeated name.
    """
    if len(frame.columns) == 0:
        raise ValueError(f"{argument}: no columns; give at least one gene")
    kinds = getattr(frame, "dtypes", ())
    other = [(str(name), str(kind)) for name, kind in zip(frame.columns, kinds)
             if getattr(kind, "kind", "O") not in "biuf"]
    if other:
        listed = ", ".join(f"{name!r} ({kind})" for name, kind in other[:5])
        raise ValueError(f"{argument}: column(s) {listed}{', ...' if len(other) > 5 else ''} "
                         f"are not numbers; drop them, or name the class column as the labels")
    return check_gene_names(frame.columns, argument)


SPARSE_AXES = {"csr": ("row", "column"), "csc": ("column", "row")}
"""Each compressed sparse format: the axis its ``indptr`` runs along (one entry per row of
it, and one more) and the axis its ``indices`` count."""


def indptr_problem(indptr, n_major: int, n_minor: int, n_stored: int,
                   major: str = "row") -> str:
    """What is wrong with the ``indptr`` of a compressed sparse matrix, or ``""``.

    The rules scipy trusts without checking them when it densifies (a column index past the
    end makes it write outside its array; an ``indptr`` running backwards puts values in
    the wrong cells), the same for a file's matrix (:mod:`hpcswarm.data.h5ad`) and one in
    memory (:func:`check_sparse`).

    Parameters
    ----------
    indptr : ndarray of int
        Start of every row of the compressed axis in ``indices``, and their end.
    n_major, n_minor : int
        Rows of the compressed axis; cells in each of them.
    n_stored : int
        The values stored (the length of ``data`` and ``indices``).
    major : str
        How the compressed axis is named (``"row"``, ``"column"``).

    Returns
    -------
    str
        Empty when ``indptr`` has one entry per row and one more, of an integer type,
        starting at 0, never decreasing, with at most one entry per cell of a row, and
        ending at ``n_stored``; else the problem, to follow "indptr".
    """
    indptr = np.asarray(indptr)
    if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
        return f"has shape {indptr.shape}, not ({n_major + 1},) ({n_major} {major}s and one more)"
    if indptr.dtype.kind not in "iu":
        return f"holds {indptr.dtype} values, not whole numbers"
    counts = np.diff(indptr.astype(np.int64))
    if indptr[0] != 0:
        return f"starts at {indptr[0]}, not 0"
    if (counts < 0).any():
        return f"runs backwards at {major} {int(np.argmax(counts < 0))}"
    if (counts > n_minor).any():
        return (f"gives {major} {int(np.argmax(counts > n_minor))} more entries than its "
                f"{n_minor} cells")
    if indptr[-1] != n_stored:
        return f"ends at {indptr[-1]}, not at the {n_stored} stored values"
    return ""


def index_problem(indices, n_minor: int, minor: str = "column") -> str:
    """What is wrong with the ``indices`` of a compressed sparse matrix, or ``""``: each must
    be a whole number in ``[0, n_minor)``, the cells of a row of the compressed axis."""
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        return f"{minor} indices of type {indices.dtype}, not whole numbers"
    if indices.size and (indices.min() < 0 or indices.max() >= n_minor):
        bad = int(indices.min() if indices.min() < 0 else indices.max())
        return f"the {minor} index {bad}, outside [0, {n_minor})"
    return ""


def check_sparse(values, argument: str = "X") -> None:
    """Refuse a scipy.sparse matrix whose arrays scipy would misread, before it reads them.

    A CSR or CSC matrix (what an ``AnnData`` holds) is checked by :func:`indptr_problem`
    and :func:`index_problem`, a COO one by its row and column indices; its declared shape
    must be two whole numbers and its stored values numbers, one per index. Nothing is
    densified or copied.

    Raises
    ------
    ValueError
        A damaged matrix: what is wrong and where.
    TypeError
        A sparse format other than CSR, CSC and COO.
    """
    shape = tuple(getattr(values, "shape", ()))
    if len(shape) != 2 or any(not isinstance(n, numbers.Integral) or n < 0 for n in shape):
        raise ValueError(f"{argument}: a sparse matrix of shape {shape}, not samples x genes")
    fmt = getattr(values, "format", None)
    data = np.asarray(values.data)
    if data.ndim != 1 or data.dtype.kind not in "biufc":
        raise ValueError(f"{argument}: a damaged sparse matrix: its stored values are "
                         f"{data.dtype} of shape {data.shape}, not numbers")
    if fmt == "coo":
        for coords, n_cells, axis in ((values.row, shape[0], "row"),
                                      (values.col, shape[1], "column")):
            problem = index_problem(coords, n_cells, axis)
            if not problem and np.shape(coords) != data.shape:
                problem = f"{np.shape(coords)[0]} {axis} indices for {data.size} values"
            if problem:
                raise ValueError(f"{argument}: a damaged sparse matrix: {problem}")
        return
    if fmt not in SPARSE_AXES:
        raise TypeError(f"{argument}: a sparse matrix in {fmt!r} format; give it as CSR or "
                        f"CSC (.tocsr())")
    major, minor = SPARSE_AXES[fmt]
    n_major, n_minor = shape if fmt == "csr" else shape[::-1]
    indices = np.asarray(values.indices)
    problem = (f"{indices.size} {minor} indices for {data.size} stored values"
               if indices.shape != data.shape else "")
    if not problem:
        found = indptr_problem(values.indptr, n_major, n_minor, data.size, major)
        problem = f"its indptr {found}" if found else ""
    if not problem:
        found = index_problem(indices, n_minor, minor)
        problem = f"it holds {found}" if found else ""
    if problem:
        raise ValueError(f"{argument}: a damaged sparse matrix: {problem}")


def checked_matrix(values, argument: str = "X", gene_names=None) -> np.ndarray:
    """A front door's matrix as a 2-D float64 ndarray of finite values, checked before any
    conversion could hide a problem: :func:`check_matrix`, a sparse matrix's structure
    (:func:`check_sparse`) before scipy densifies it, then :func:`check_finite`.

    Parameters
    ----------
    values : ndarray or scipy.sparse matrix of shape (n_samples, n_genes)
    argument : str
        The Python argument named in errors.
    gene_names : sequence of str, optional
        To name the first gene with a missing value.

    Returns
    -------
    ndarray of float64 of shape (n_samples, n_genes)
        ``values`` itself when it is one (no copy); else converted (a sparse matrix
        densified once checked).

    Raises
    ------
    ValueError, TypeError
        As :func:`check_matrix`, :func:`check_sparse` and :func:`check_finite`.
    """
    check_matrix(values, argument)
    if hasattr(values, "tocoo"):  # scipy.sparse
        check_sparse(values, argument)
        check_finite(values, argument, gene_names)
        return values.toarray().astype(np.float64, copy=False)
    values = np.asarray(values, dtype=np.float64)
    check_finite(values, argument, gene_names)
    return values
