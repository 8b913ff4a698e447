"""From an input file to a checked dataset: in memory (:func:`read_dataset`) or on disk
(:func:`convert_file`, the ``convert`` command)."""

from dataclasses import dataclass
from pathlib import Path

from hpcswarm import __version__
from hpcswarm.data.dataset import file_sha256
from hpcswarm.data.formats import READER_OPTIONS, detect_format, read_table
from hpcswarm.data.hdf5 import check_output, write_dataset
from hpcswarm.data.textio import check_readable
from hpcswarm.data.validate import Cleaning, build_dataset
from hpcswarm.errors import DataError


def read_dataset(path, *, format=None, label=None, labels=None, genes_as_rows=False, sep=None,
                 x_var="X", y_var="Y", dtype="float64", drop_constant=False, transpose=False,
                 nan="error"):
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
    dtype, drop_constant, transpose, nan
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
               "dtype": dtype, "drop_constant": drop_constant, "transpose": transpose, "nan": nan}
    table = read_table(path, fmt, options)
    dataset, cleaning = build_dataset(table, path, dtype=dtype, drop_constant=drop_constant,
                                      transpose=transpose, nan=nan)
    used = READER_OPTIONS[fmt] + ("dtype", "drop_constant", "transpose", "nan")
    attrs = {"format": fmt, "hpcswarm_version": __version__,
             "options": {k: options[k] for k in used if options[k] is not None}}
    for role, source in table.sources:
        attrs[role] = str(source)
        attrs[f"{role}_sha256"] = file_sha256(source)
    attrs["dropped_constant_genes"] = len(cleaning.constant_genes)
    attrs["dropped_nonfinite_genes"] = len(cleaning.nonfinite_genes)
    attrs["dropped_nonfinite_samples"] = len(cleaning.nonfinite_samples)
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
        for what, names in (("constant genes", self.cleaning.constant_genes),
                            ("genes with NaN/inf", self.cleaning.nonfinite_genes),
                            ("samples with NaN/inf", self.cleaning.nonfinite_samples)):
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
        Replace an existing ``output``.
    **options
        Passed to :func:`read_dataset`.

    Returns
    -------
    ConvertReport
    """
    input, output = Path(input), Path(output)
    check_output(output, overwrite=overwrite)
    if output.exists() and output.resolve() == input.resolve():
        raise DataError(f"{output}: is the input file itself")
    dataset, cleaning = read_dataset(input, **options)
    write_dataset(dataset, output, overwrite=overwrite)
    return ConvertReport(input=input, output=output, format=dataset.attrs["format"],
                         n_samples=dataset.n_samples, n_genes=dataset.n_genes,
                         dtype=str(dataset.X.dtype), class_counts=dataset.class_counts(),
                         cleaning=cleaning, sha256=file_sha256(output))
