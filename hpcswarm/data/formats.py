"""Input formats: one registry entry per format (extensions, content sniffing, reader options,
reader), from which the choice of reader, the ``--format`` choices and the option checks come.

A file is gzip when it starts with the gzip magic bytes; its format is then that of its name
without ``.gz`` (``expr.tsv.gz`` is a TSV) or of its content. Text files whose extension says
little (``.txt``, ``.tsv``, none) are also sniffed: a GEO series matrix (``!Series_`` lines),
a GCT file (``#1.2``) or an ARFF file (``@relation``) is recognised by its first lines, and a
file without an extension whose first line has tabs is read as TSV (as UCSC Xena names its
matrices).
"""

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from hpcswarm.data.textio import head_lines, is_gzip
from hpcswarm.errors import DataError, ParameterError


@dataclass(frozen=True)
class Format:
    """One input format: ``read`` is ``"module:function"`` in :mod:`hpcswarm.data`."""

    name: str
    extensions: tuple
    options: tuple
    read: str
    sample_names: bool
    """Whether its samples have names (so that a phenotype table can label them)."""


FORMATS = {f.name: f for f in (
    Format("arff", (".arff",), ("label",), "arff:read_arff", False),
    Format("csv", (".csv",), ("label", "labels", "genes_as_rows", "sep"),
           "delimited:read_delimited", True),
    Format("tsv", (".tsv", ".tab", ".txt"), ("label", "labels", "genes_as_rows", "sep"),
           "delimited:read_delimited", True),
    Format("mat", (".mat",), ("x_var", "y_var"), "matlab:read_mat", False),
    Format("gct", (".gct",), ("labels",), "gct:read_gct", True),
    Format("geo", (), ("label",), "geo:read_series_matrix", True),
    Format("h5ad", (".h5ad",), ("label", "layer"), "h5ad:read_h5ad", True),
)}
INPUT_FORMATS = tuple(FORMATS)
HDF5_EXTENSIONS = (".h5", ".hdf5")

#: Reader options and their defaults (meaning "not given").
READER_DEFAULTS = {"label": None, "labels": None, "genes_as_rows": False, "sep": None,
                   "x_var": "X", "y_var": "Y", "layer": None, "sample_column": None}

#: Reader options each format takes (a phenotype table, ``--labels`` with ``--label``, and
#: ``--sample-column`` apply to every format whose samples have names).
READER_OPTIONS = {name: f.options + (("labels", "sample_column") if f.sample_names else ())
                  for name, f in FORMATS.items()}
READER_OPTIONS = {name: tuple(dict.fromkeys(options)) for name, options in READER_OPTIONS.items()}

_SNIFFED = {"!series_": "geo", "!series_matrix": "geo", "#1.2": "gct", "@relation": "arff"}
_VAGUE = ("", ".txt", ".tsv", ".tab")


def _extension(path):
    """The extension that names the format, ``.gz`` removed."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


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
    if suffix in HDF5_EXTENSIONS:
        return "hdf5"
    by_extension = next((f.name for f in FORMATS.values() if suffix in f.extensions), None)
    if by_extension in ("mat", "h5ad"):
        return by_extension
    if suffix in _VAGUE or by_extension is None or is_gzip(path):
        sniffed = _sniff(path, suffix) if not _binary_container(path) else None
        if sniffed is not None:
            return sniffed
    if by_extension is None:
        known = sorted({e for f in FORMATS.values() for e in f.extensions} | set(HDF5_EXTENSIONS))
        raise DataError(
            f"{path}: unknown format (extension {suffix or 'none'!r}); "
            f"known extensions: {', '.join(known)} (each also gzip-compressed), "
            f"or give --format {'|'.join(INPUT_FORMATS)}")
    return by_extension


def _binary_container(path):
    """Whether the file is HDF5 or a MATLAB v5 file (never sniffed as text)."""
    with open(path, "rb") as handle:
        start = handle.read(128)
    return start.startswith(b"\x89HDF") or start.startswith(b"MATLAB")


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
    entry = FORMATS[fmt]
    allowed = READER_OPTIONS[fmt]
    phenotype = (entry.sample_names and options.get("labels") is not None
                 and options.get("label") is not None)
    for key, default in READER_DEFAULTS.items():
        if key not in allowed and options.get(key, default) != default:
            if not (phenotype and key == "label"):
                raise ParameterError(f"--{key.replace('_', '-')} does not apply to {fmt} input "
                                     f"({path})")
    if options.get("labels") is not None and "labels" not in entry.options and not phenotype:
        raise ParameterError(f"--labels with {fmt} input is a phenotype table: name its class "
                             "column with --label")
    if options.get("sample_column") is not None and not phenotype:
        raise ParameterError("--sample-column names the sample-id column of a phenotype table "
                             "(--labels TABLE --label COLUMN)")
    kwargs = {k: options[k] for k in entry.options if options.get(k) is not None}
    if phenotype:
        kwargs.pop("label", None)
        kwargs.pop("labels", None)
        kwargs["labels_elsewhere"] = True
    if fmt in ("csv", "tsv"):
        kwargs.setdefault("sep", "," if fmt == "csv" else "\t")
    module, function = entry.read.split(":")
    reader = getattr(import_module(f"hpcswarm.data.{module}"), function)
    source = reader(Path(path), **kwargs)
    if not hasattr(source, "blocks"):
        source = source.source()
    if phenotype:
        from hpcswarm.data.phenotype import attach_phenotype

        attach_phenotype(source, path, options["labels"], options["label"],
                         sample_column=options.get("sample_column"),
                         transpose=bool(options.get("transpose")))
    return source
