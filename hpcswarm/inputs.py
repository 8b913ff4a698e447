"""Data given in Python, checked once for :func:`hpcswarm.select` and
:class:`~hpcswarm.selector.SwarmFeatureSelector`: class labels, gene names, table columns.

A selection separates classes, so the labels must name at least two of them, every sample
must have one, and they must look like classes: a float column with more values distinct
than not (ages, a score) is a measurement, refused unless it is declared categorical (a
pandas ``Categorical``). Errors are ``ValueError`` naming the Python argument. pandas is
never imported here: its objects are recognised by their attributes.
"""

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
        Missing labels (None, NaN, pandas ``NA``), labels of types that cannot be ordered
        together, a single class, or float labels that look continuous (more than
        :data:`CONTINUOUS_SHARE` of them distinct) and are not categorical.
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
        values = values.astype(str)
    try:
        classes = np.unique(values)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values})
        raise ValueError(f"{argument}: mixed types ({', '.join(kinds)}) cannot be ordered "
                         f"into classes; give every label as text or every one as a number") \
            from None
    if classes.size < 2:
        shown = f" ({classes.tolist()[0]!r})" if classes.size else ""
        raise ValueError(f"{argument}: one class only{shown}; a selection needs samples of at "
                         f"least two classes")
    if (values.dtype.kind == "f" and not categorical
            and classes.size > CONTINUOUS_SHARE * values.size):
        raise ValueError(f"{argument}: {classes.size} distinct float values among "
                         f"{values.size} samples look like a measurement, not classes; give "
                         f"class labels (bin the values, or make them categorical)")
    return values


def check_gene_names(names, argument: str) -> list:
    """``names`` as a list of str, refused if one is given twice.

    Raises
    ------
    ValueError
        A repeated name, named with its positions.
    """
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
        Columns that are not numbers (named, with their types), or a repeated name.
    """
    kinds = getattr(frame, "dtypes", ())
    other = [(str(name), str(kind)) for name, kind in zip(frame.columns, kinds)
             if getattr(kind, "kind", "O") not in "biuf"]
    if other:
        listed = ", ".join(f"{name!r} ({kind})" for name, kind in other[:5])
        raise ValueError(f"{argument}: column(s) {listed}{', ...' if len(other) > 5 else ''} "
                         f"are not numbers; drop them, or name the class column as the labels")
    return check_gene_names(frame.columns, argument)
