"""Input formats: a registry of readers (name, extensions, options), chosen by ``--format``,
the file extension or the content, and the options of a conversion.

The format names the command line and job files accept (``--format``, ``[convert] format``)
and the extensions recognised are derived from :data:`READERS`; :data:`CONVERT_PARAMS`
declares every conversion option once, for ``hpcswarm convert`` and a job's ``[convert]``.

A file is gzip when it starts with the gzip magic bytes; its format is then that of its name
without ``.gz`` (``expr.tsv.gz`` is a TSV) or of its content. Text files whose extension says
little (``.txt``, ``.tsv``, none) are also sniffed: a GEO series matrix (``!Series_`` lines),
a GCT file (``#1.2``) or an ARFF file (``@relation``) is recognised by its first lines, and a
file without an extension whose first line has tabs is read as TSV (as UCSC Xena names its
matrices).
"""

from dataclasses import dataclass, field
from pathlib import Path

from hpcswarm.data.arff import read_arff
from hpcswarm.data.delimited import read_delimited
from hpcswarm.data.gct import read_gct
from hpcswarm.data.geo import read_series_matrix
from hpcswarm.data.h5ad import read_h5ad
from hpcswarm.data.matlab import read_mat
from hpcswarm.data.textio import head_lines, is_gzip
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
        ``read(path, **options)`` -> :class:`~hpcswarm.data.table.RawTable` or
        :class:`~hpcswarm.data.table.MatrixSource`.
    fixed : dict
        Options this format always passes (e.g. the separator of TSV).
    sample_names : bool
        Its samples have names, so that a phenotype table can label them (the reader then
        takes ``labels_elsewhere``).
    """

    name: str
    extensions: tuple
    options: tuple
    read: object
    fixed: dict = field(default_factory=dict)
    sample_names: bool = False


READERS = {reader.name: reader for reader in (
    Reader("arff", (".arff",), ("label",), read_arff),
    Reader("csv", (".csv",), ("label", "labels", "genes_as_rows", "sep"), read_delimited,
           {"sep": ","}, sample_names=True),
    Reader("tsv", (".tsv", ".tab", ".txt"), ("label", "labels", "genes_as_rows", "sep"),
           read_delimited, {"sep": "\t"}, sample_names=True),
    Reader("mat", (".mat",), ("x_var", "y_var"), read_mat),
    Reader("gct", (".gct",), ("labels",), read_gct, sample_names=True),
    Reader("geo", (), ("label",), read_series_matrix, sample_names=True),
    Reader("h5ad", (".h5ad",), ("label", "layer"), read_h5ad, sample_names=True),
)}
"""Every input format by name."""

INPUT_FORMATS = tuple(READERS)
HDF5_EXTENSIONS = (".h5", ".hdf5")
EXTENSIONS = {**{extension: reader.name for reader in READERS.values()
                 for extension in reader.extensions},
              **dict.fromkeys(HDF5_EXTENSIONS, "hdf5")}
"""File extension -> format name (``"hdf5"`` for hpcswarm's own files)."""

CONVERT_PARAMS = (
    Param("format", "choice", None, "input format (default: from the extension and content)",
          choices=INPUT_FORMATS),
    Param("label", "str|int", None, "class attribute or column (a row with genes_as_rows), "
          "by name or 0-based index; for a series matrix a characteristic key or a !Sample_ "
          "line (title); for .h5ad an obs column; with a phenotype table its class column"),
    Param("labels", "str", None, "separate labels file (one label per line, or sample,label "
          "lines), a phenotype table with a header (with label COLUMN); for GCT the CLS file"),
    Param("sample_column", "str", None, "sample-id column of the phenotype table (default: "
          "sample, sample_id, id, ... or R's unnamed first column)"),
    Param("drop_unlabelled", "bool", False, "drop samples without a label (no phenotype row, "
          "empty class) instead of refusing them; the count is reported"),
    Param("min_class_size", "int", None, "drop the samples of classes with fewer samples than "
          "this (reported)", low=1),
    Param("genes_as_rows", "bool", False, "CSV/TSV holds one gene per row"),
    Param("sep", "str", None, "CSV/TSV field separator (default from the format)"),
    Param("x_var", "str", "X", "MATLAB variable of the matrix"),
    Param("y_var", "str", "Y", "MATLAB variable of the labels"),
    Param("layer", "str", None, ".h5ad layer to read instead of X"),
    Param("dtype", "choice", "float64", "storage type of X", choices=("float64", "float32")),
    Param("drop_constant", "bool", False, "remove genes constant over all samples"),
    Param("transpose", "bool", False, "swap rows and columns of the matrix as read"),
    Param("nan", "choice", "error", "what to do with NaN, infinite or missing (NA, null, "
          "empty) values", choices=("error", "drop-genes", "drop-samples")),
)
"""Every option of a conversion: ``hpcswarm convert --NAME`` and a job's ``[convert]`` keys."""

PHENOTYPE_OPTIONS = ("labels", "sample_column")
"""Options every format whose samples have names takes (a phenotype table)."""

READER_OPTIONS = {name: tuple(dict.fromkeys(reader.options + (PHENOTYPE_OPTIONS
                                                              if reader.sample_names else ())))
                  for name, reader in READERS.items()}
"""Reader options each format takes."""

READER_DEFAULTS = {param.name: param.default for param in CONVERT_PARAMS
                   if any(param.name in options for options in READER_OPTIONS.values())}
"""Reader options and their defaults (meaning "not given")."""

_SNIFFED = {"!series_": "geo", "!series_matrix": "geo", "#1.2": "gct", "@relation": "arff"}
_VAGUE = ("", ".txt", ".tsv", ".tab")


def _extension(path):
    """The extension that names the format, ``.gz`` removed."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


def check_dataset_name(path, what):
    """Refuse ``path`` as the name of an hpcswarm dataset unless it ends in one of
    :data:`HDF5_EXTENSIONS`: every command opens a dataset by that extension, and reads a file
    named otherwise (``out.csv``, ``out.dat``) as an input format or not at all. ``what``
    names the output in the message (``OUTPUT``)."""
    if Path(path).suffix.lower() not in HDF5_EXTENSIONS:
        suffix = _extension(path)
        fmt = EXTENSIONS.get(suffix)
        read_as = f" ('{suffix}' names {fmt} input)" if fmt not in (None, "hdf5") else ""
        raise DataError(f"{what} {path}: an hpcswarm dataset is an HDF5 file named "
                        f"{' or '.join(HDF5_EXTENSIONS)}{read_as}")


def _sniff(path, suffix):
    """Format named by the first non-blank line of a text file, or None; a file without an
    extension (``TcgaTargetGtex_rsem_gene_tpm.gz``) whose first line has tabs is a TSV."""
    for line in head_lines(path, 20):
        text = line.strip().lower()
        if text and not text.startswith("%"):
            found = next((fmt for prefix, fmt in _SNIFFED.items() if text.startswith(prefix)), None)
            if found is None and suffix == "" and "\t" in line:
                return "tsv"
            return found
    return None


def _binary_container(path):
    """Whether the file is HDF5 or a MATLAB v5 file (never sniffed as text)."""
    with open(path, "rb") as handle:
        start = handle.read(128)
    return start.startswith(b"\x89HDF") or start.startswith(b"MATLAB")


def detect_format(path, fmt=None):
    """Format name of ``path``: ``fmt`` when given, else from its extension and content.

    Raises
    ------
    ParameterError
        ``fmt`` is not a known format.
    DataError
        Neither the extension nor the content says what the file is.
    """
    if fmt is not None:
        if fmt not in INPUT_FORMATS:
            raise ParameterError(f"format must be one of {', '.join(INPUT_FORMATS)}, got {fmt!r}")
        return fmt
    suffix = _extension(path)
    by_extension = EXTENSIONS.get(suffix)
    if by_extension in ("hdf5", "mat", "h5ad"):
        return by_extension
    if suffix in _VAGUE or by_extension is None or is_gzip(path):
        sniffed = _sniff(path, suffix) if not _binary_container(path) else None
        if sniffed is not None:
            return sniffed
    if by_extension is None:
        raise DataError(
            f"{path}: unknown format (extension {suffix or 'none'!r}); "
            f"known extensions: {', '.join(sorted(EXTENSIONS))} (text formats also .gz), "
            f"or give --format {'|'.join(INPUT_FORMATS)}")
    return by_extension


def read_source(path, fmt, options):
    """Run the reader of ``fmt`` on ``path`` with the reader options found in ``options``.

    With both ``labels`` and ``label`` (for a format whose samples have names), ``labels`` is
    a phenotype table and ``label`` its class column (:mod:`hpcswarm.data.phenotype`).

    Returns
    -------
    MatrixSource

    Raises
    ------
    ParameterError
        A reader option that ``fmt`` does not take was given.
    """
    reader = READERS[fmt]
    allowed = READER_OPTIONS[fmt]
    phenotype = (reader.sample_names and options.get("labels") is not None
                 and options.get("label") is not None)
    for key, default in READER_DEFAULTS.items():
        if key not in allowed and options.get(key, default) != default:
            if not (phenotype and key == "label"):
                raise ParameterError(f"--{key.replace('_', '-')} does not apply to {fmt} input "
                                     f"({path})")
    if options.get("labels") is not None and "labels" not in reader.options and not phenotype:
        raise ParameterError(f"--labels with {fmt} input is a phenotype table: name its class "
                             "column with --label")
    if options.get("sample_column") is not None and not phenotype:
        raise ParameterError("--sample-column names the sample-id column of a phenotype table "
                             "(--labels TABLE --label COLUMN)")
    kwargs = {k: options[k] for k in reader.options if options.get(k) is not None}
    if phenotype:
        kwargs.pop("label", None)
        kwargs.pop("labels", None)
        kwargs["labels_elsewhere"] = True
    source = reader.read(Path(path), **{**reader.fixed, **kwargs})
    if not hasattr(source, "blocks"):
        source = source.source()
    if phenotype:
        from hpcswarm.data.phenotype import attach_phenotype

        attach_phenotype(source, path, options["labels"], options["label"],
                         sample_column=options.get("sample_column"),
                         transpose=bool(options.get("transpose")))
    return source
