"""Input formats: a registry of readers (name, extensions, options), chosen by ``--format`` or
the file extension, and the options of a conversion.

The format names the command line and job files accept (``--format``, ``[convert] format``)
and the extensions recognised are derived from :data:`READERS`; :data:`CONVERT_PARAMS`
declares every conversion option once, for ``hpcswarm convert`` and a job's ``[convert]``.
"""

from dataclasses import dataclass, field
from pathlib import Path

from hpcswarm.data.arff import read_arff
from hpcswarm.data.delimited import read_delimited
from hpcswarm.data.gct import read_gct
from hpcswarm.data.matlab import read_mat
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.params import Param


@dataclass(frozen=True)
class Reader:
    """One input format.

    Attributes
    ----------
    name : str
        The format's name (``--format NAME``).
    extensions : tuple of str
        File extensions (lower case, with the dot) that select it.
    options : tuple of str
        The reader options (:data:`CONVERT_PARAMS`) it takes.
    read : callable
        ``read(path, **options)`` -> :class:`~hpcswarm.data.table.RawTable`.
    fixed : dict
        Options this format always passes (e.g. the separator of TSV).
    """

    name: str
    extensions: tuple
    options: tuple
    read: object
    fixed: dict = field(default_factory=dict)


READERS = {reader.name: reader for reader in (
    Reader("arff", (".arff",), ("label",), read_arff),
    Reader("csv", (".csv",), ("label", "labels", "genes_as_rows", "sep"), read_delimited,
           {"sep": ","}),
    Reader("tsv", (".tsv", ".tab", ".txt"), ("label", "labels", "genes_as_rows", "sep"),
           read_delimited, {"sep": "\t"}),
    Reader("mat", (".mat",), ("x_var", "y_var"), read_mat),
    Reader("gct", (".gct",), ("labels",), read_gct),
)}
"""Every input format by name."""

INPUT_FORMATS = tuple(READERS)
HDF5_EXTENSIONS = (".h5", ".hdf5")
EXTENSIONS = {**{extension: reader.name for reader in READERS.values()
                 for extension in reader.extensions},
              **dict.fromkeys(HDF5_EXTENSIONS, "hdf5")}
"""File extension -> format name (``"hdf5"`` for hpcswarm's own files)."""

CONVERT_PARAMS = (
    Param("format", "choice", None, "input format (default: from the extension)",
          choices=INPUT_FORMATS),
    Param("label", "str|int", None, "class attribute or column (a row with genes_as_rows), "
          "by name or 0-based index"),
    Param("labels", "str", None, "separate labels file (one label per line, or sample,label "
          "lines); for GCT the CLS file"),
    Param("genes_as_rows", "bool", False, "CSV/TSV holds one gene per row"),
    Param("sep", "str", None, "CSV/TSV field separator (default from the format)"),
    Param("x_var", "str", "X", "MATLAB variable of the matrix"),
    Param("y_var", "str", "Y", "MATLAB variable of the labels"),
    Param("dtype", "choice", "float64", "storage type of X", choices=("float64", "float32")),
    Param("drop_constant", "bool", False, "remove genes constant over all samples"),
    Param("transpose", "bool", False, "swap rows and columns of the matrix as read"),
    Param("nan", "choice", "error", "what to do with NaN or infinite values",
          choices=("error", "drop-genes", "drop-samples")),
)
"""Every option of a conversion: ``hpcswarm convert --NAME`` and a job's ``[convert]`` keys."""

READER_OPTIONS = {name: reader.options for name, reader in READERS.items()}
"""Reader options each format takes."""

READER_DEFAULTS = {param.name: param.default for param in CONVERT_PARAMS
                   if any(param.name in reader.options for reader in READERS.values())}
"""Reader options and their defaults (meaning "not given")."""


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
    reader = READERS[fmt]
    for key, default in READER_DEFAULTS.items():
        if key not in reader.options and options.get(key, default) != default:
            raise ParameterError(f"--{key.replace('_', '-')} does not apply to {fmt} input ({path})")
    kwargs = {k: options[k] for k in reader.options if options.get(k) is not None}
    return reader.read(path, **{**reader.fixed, **kwargs})
