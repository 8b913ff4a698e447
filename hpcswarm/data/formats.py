"""Input formats: which reader handles a file, chosen by ``--format`` or the file extension."""

from pathlib import Path

from hpcswarm.errors import DataError, ParameterError

#: File extension -> format name.
EXTENSIONS = {
    ".arff": "arff",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "tsv",
    ".mat": "mat",
    ".gct": "gct",
    ".h5": "hdf5",
    ".hdf5": "hdf5",
}
INPUT_FORMATS = ("arff", "csv", "tsv", "mat", "gct")

#: Reader options and their defaults (meaning "not given").
READER_DEFAULTS = {"label": None, "labels": None, "genes_as_rows": False, "sep": None,
                   "x_var": "X", "y_var": "Y"}

#: Reader options each format takes.
READER_OPTIONS = {
    "arff": ("label",),
    "csv": ("label", "labels", "genes_as_rows", "sep"),
    "tsv": ("label", "labels", "genes_as_rows", "sep"),
    "mat": ("x_var", "y_var"),
    "gct": ("labels",),
}


def detect_format(path, fmt=None):
    """Format name of ``path``: ``fmt`` when given, else from the extension.

    Raises
    ------
    ParameterError
        ``fmt`` is not a known format.
    DataError
        The extension is not recognised.
    """
    if fmt is not None:
        if fmt not in INPUT_FORMATS:
            raise ParameterError(f"format must be one of {', '.join(INPUT_FORMATS)}, got {fmt!r}")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        raise DataError(
            f"{path}: unknown format (extension {suffix or 'none'!r}); "
            f"known extensions: {', '.join(sorted(EXTENSIONS))}, "
            f"or give --format {'|'.join(INPUT_FORMATS)}"
        )
    return EXTENSIONS[suffix]


def read_table(path, fmt, options):
    """Run the reader of ``fmt`` on ``path`` with the reader options found in ``options``.

    Returns
    -------
    RawTable

    Raises
    ------
    ParameterError
        A reader option that ``fmt`` does not take was given.
    """
    for key, default in READER_DEFAULTS.items():
        if key not in READER_OPTIONS[fmt] and options.get(key, default) != default:
            raise ParameterError(f"--{key.replace('_', '-')} does not apply to {fmt} input ({path})")
    kwargs = {k: options[k] for k in READER_OPTIONS[fmt] if options.get(k) is not None}
    if fmt == "arff":
        from hpcswarm.data.arff import read_arff

        return read_arff(path, **kwargs)
    if fmt in ("csv", "tsv"):
        from hpcswarm.data.delimited import read_delimited

        kwargs.setdefault("sep", "," if fmt == "csv" else "\t")
        return read_delimited(path, **kwargs)
    if fmt == "mat":
        from hpcswarm.data.matlab import read_mat

        return read_mat(path, **kwargs)
    from hpcswarm.data.gct import read_gct

    return read_gct(path, **kwargs)
