"""From an input file to a checked dataset: in memory (:func:`load_dataset`) or on disk
(:func:`convert_file`, the ``convert`` command)."""

from dataclasses import dataclass
from pathlib import Path

from hpcswarm import __version__
from hpcswarm.data.dataset import file_sha256
from hpcswarm.data.examples import example_path
from hpcswarm.data.formats import READER_OPTIONS, detect_format, read_table
from hpcswarm.data.hdf5 import open_dataset, write_dataset
from hpcswarm.data.textio import check_readable
from hpcswarm.data.validate import Cleaning, build_dataset
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.outputs import check_outputs

BUILTIN_PREFIX = "builtin:"


def read_dataset(path, *, format=None, label=None, labels=None, genes_as_rows=False, sep=None,
                 x_var="X", y_var="Y", dtype="float64", drop_constant=False, transpose=False,
                 nan="error", drop_unlabelled=False):
    """Read and check an input file of any supported format, in memory.

    Parameters
    ----------
    path : str or Path
        ARFF, CSV/TSV, MATLAB .mat (v5 or v7.3) or GCT file.
    format : {"arff", "csv", "tsv", "mat", "gct"} or None
        Overrides the choice by file extension.
    label : str or int or None
        Class attribute/column (name or 0-based index); for genes-as-rows text files, the row.
    labels : str or Path or None
        Separate labels file (one label per line) or, for GCT, the CLS file.
    genes_as_rows : bool
        CSV/TSV holds one gene per row and one sample per column.
    sep : str or None
        CSV/TSV field separator (default by format: comma or tab).
    x_var, y_var : str
        MATLAB variable names of the matrix and labels.
    dtype, drop_constant, transpose, nan, drop_unlabelled
        See :func:`hpcswarm.data.validate.build_dataset`.

    Returns
    -------
    dataset : Dataset
        In memory (``path`` None), with provenance in ``attrs``.
    cleaning : Cleaning
        Genes and samples removed.
    """
    path = Path(path)
    check_readable(path)
    fmt = detect_format(path, format)
    if fmt == "hdf5":
        raise DataError(f"{path}: already an HDF5 file; open it directly instead of converting it")
    if labels is not None:
        check_readable(labels)
    options = {"label": label, "labels": None if labels is None else str(labels),
               "genes_as_rows": genes_as_rows, "sep": sep, "x_var": x_var, "y_var": y_var,
               "dtype": dtype, "drop_constant": drop_constant, "transpose": transpose, "nan": nan,
               "drop_unlabelled": drop_unlabelled}
    table = read_table(path, fmt, options)
    dataset, cleaning = build_dataset(table, path, dtype=dtype, drop_constant=drop_constant,
                                      transpose=transpose, nan=nan,
                                      drop_unlabelled=drop_unlabelled)
    cleaning.notes = list(table.notes)
    used = READER_OPTIONS[fmt] + ("dtype", "drop_constant", "transpose", "nan")
    if drop_unlabelled:
        used += ("drop_unlabelled",)
    attrs = {"format": fmt, "hpcswarm_version": __version__,
             "options": {k: options[k] for k in used if options[k] is not None}}
    for role, source in table.sources:
        attrs[role] = str(source)
        attrs[f"{role}_sha256"] = file_sha256(source)
    attrs["dropped_constant_genes"] = len(cleaning.constant_genes)
    attrs["dropped_nonfinite_genes"] = len(cleaning.nonfinite_genes)
    attrs["dropped_nonfinite_samples"] = len(cleaning.nonfinite_samples)
    if drop_unlabelled:
        attrs["dropped_unlabelled_samples"] = len(cleaning.unlabelled_samples)
    dataset.attrs = attrs
    return dataset, cleaning


@dataclass
class ConvertReport:
    """What :func:`convert_file` did."""

    input: Path
    output: Path
    format: str
    n_samples: int
    n_genes: int
    dtype: str
    class_counts: list
    cleaning: Cleaning
    sha256: str

    def lines(self):
        """Human-readable summary, one string per line."""
        counts = ", ".join(f"{name} {count}" for name, count in self.class_counts)
        out = [
            f"converted {self.input} ({self.format}) -> {self.output}",
            f"  {self.n_samples} samples x {self.n_genes} genes, {self.dtype}, "
            "contiguous, sample- and gene-major (memory-mappable)",
            f"  {len(self.class_counts)} classes: {counts}",
        ]
        out += [f"  {note}" for note in self.cleaning.notes]
        for what, names in (("constant genes", self.cleaning.constant_genes),
                            ("genes with NaN/inf", self.cleaning.nonfinite_genes),
                            ("samples with NaN/inf", self.cleaning.nonfinite_samples),
                            ("samples without a label", self.cleaning.unlabelled_samples)):
            if names:
                shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
                out.append(f"  dropped {len(names)} {what}: {shown}")
        out.append(f"  sha256 {self.sha256}")
        return out


def convert_file(input, output, *, overwrite=False, **options):
    """Convert ``input`` to the hpcswarm HDF5 file ``output`` (the ``convert`` command).

    Parameters
    ----------
    input : str or Path
    output : str or Path
        Written under a temporary name in its folder, then renamed: a failure leaves no file.
    overwrite : bool
        Replace an existing ``output``; never the input or labels file
        (:func:`hpcswarm.outputs.check_outputs`).
    **options
        Passed to :func:`read_dataset`.

    Returns
    -------
    ConvertReport
    """
    input, output = Path(input), Path(output)
    check_outputs([("OUTPUT", output)],
                  [("the input", input), ("the labels file", options.get("labels"))],
                  overwrite=overwrite)
    dataset, cleaning = read_dataset(input, **options)
    write_dataset(dataset, output, overwrite=overwrite)
    return ConvertReport(input=input, output=output, format=dataset.attrs["format"],
                         n_samples=dataset.n_samples, n_genes=dataset.n_genes,
                         dtype=str(dataset.X.dtype), class_counts=dataset.class_counts(),
                         cleaning=cleaning, sha256=file_sha256(output))


def load_dataset(spec, **convert_options):
    """The dataset named by a DATA argument.

    Parameters
    ----------
    spec : str or Path
        ``builtin:NAME`` (a bundled example), an hpcswarm ``.h5``/``.hdf5`` file (opened
        memory-mapped), or any input file :func:`read_dataset` reads (converted in memory with
        ``convert_options``, nothing written).
    **convert_options
        Options of :func:`read_dataset` (None means not given); not allowed with HDF5 files
        and bundled examples.

    Returns
    -------
    Dataset
    """
    text = str(spec)
    convert_options = {k: v for k, v in convert_options.items() if v is not None}
    if text.startswith(BUILTIN_PREFIX) or detect_hdf5(text):
        if convert_options:
            raise ParameterError(f"{text}: conversion options ({', '.join(sorted(convert_options))}) "
                            "apply only to input files that are converted, not to HDF5 datasets")
        if text.startswith(BUILTIN_PREFIX):
            return open_dataset(example_path(text[len(BUILTIN_PREFIX):]))
        return open_dataset(text)
    return read_dataset(text, **convert_options)[0]


def source_path(spec):
    """The file behind a DATA argument (a bundled example's file for ``builtin:NAME``), or
    None for a dataset that is not a file (``sklearn:NAME``, an unknown bundled name)."""
    text = str(spec)
    if text.startswith(BUILTIN_PREFIX):
        try:
            return example_path(text[len(BUILTIN_PREFIX):])
        except DataError:  # no such bundled dataset: opening it will say so
            return None
    if text.startswith("sklearn:"):
        return None
    return Path(text)


def detect_hdf5(path):
    """Whether ``path`` names an hpcswarm HDF5 file by its extension (.h5, .hdf5)."""
    return Path(path).suffix.lower() in (".h5", ".hdf5")
