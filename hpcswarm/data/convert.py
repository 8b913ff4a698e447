"""From an input file to a checked dataset: in memory (:func:`read_dataset`) or on disk
(:func:`convert_file`, the ``convert`` command)."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpcswarm.data.build import MemoryDestination, build
from hpcswarm.data.dataset import Dataset, file_sha256
from hpcswarm.data.formats import READER_OPTIONS, check_dataset_name, detect_format, read_source
from hpcswarm.data.hdf5 import (FileDestination, atomic_hdf5, seal,
                                 write_labels_and_names)
from hpcswarm.data.textio import check_readable
from hpcswarm.data.validate import Cleaning
from hpcswarm.errors import DataError
from hpcswarm.store.atomic import remove_stale_temporaries
from hpcswarm.store.outputs import check_outputs
from hpcswarm.version import __version__


BUILD_DEFAULTS = {"dtype": "float64", "drop_constant": False, "transpose": False, "nan": "error",
                  "drop_unlabelled": False, "min_class_size": None}
"""Options of the checks (:func:`hpcswarm.data.build.build`), for every format."""


def _open_source(path, options):
    """Format and :class:`~hpcswarm.data.table.MatrixSource` of ``path``, and the options that
    apply to it (for provenance)."""
    path = Path(path)
    check_readable(path)
    fmt = detect_format(path, options.get("format"))
    if fmt == "hdf5":
        raise DataError(f"{path}: already an HDF5 file; open it directly instead of converting it")
    if options.get("labels") is not None:
        check_readable(options["labels"])
    source = read_source(path, fmt, options)
    used = READER_OPTIONS[fmt] + ("label",) + tuple(BUILD_DEFAULTS)
    return fmt, source, {k: options[k] for k in dict.fromkeys(used) if options.get(k) is not None}


def _options(format, label, labels, genes_as_rows, sep, x_var, y_var, layer, sample_column,
             **build_options):
    reader = {"format": format, "label": label,
              "labels": None if labels is None else str(labels),
              "genes_as_rows": genes_as_rows, "sep": sep, "x_var": x_var, "y_var": y_var,
              "layer": layer, "sample_column": sample_column}
    unknown = set(build_options) - set(BUILD_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown conversion option(s): {', '.join(sorted(unknown))}")
    return {**reader, **BUILD_DEFAULTS, **build_options}


def _provenance(fmt, source, options, cleaning):
    attrs = {"format": fmt, "hpcswarm_version": __version__,
             "options": options}
    for role, path in source.sources:
        attrs[role] = str(path)
        attrs[f"{role}_sha256"] = file_sha256(path)
    attrs.update(source.provenance)
    attrs["dropped_constant_genes"] = len(cleaning.constant_genes)
    attrs["dropped_nonfinite_genes"] = len(cleaning.nonfinite_genes)
    attrs["dropped_nonfinite_samples"] = len(cleaning.nonfinite_samples)
    attrs["dropped_unlabelled_samples"] = len(cleaning.unlabelled_samples)
    attrs["dropped_small_class_samples"] = sum(n for _, n in cleaning.small_classes)
    return attrs


def _build_options(options):
    return {k: options[k] for k in BUILD_DEFAULTS}


def read_dataset(path, *, format=None, label=None, labels=None, genes_as_rows=False, sep=None,
                 x_var="X", y_var="Y", layer=None, sample_column=None, **build_options):
    """Read and check an input file of any supported format, in memory.

    Parameters
    ----------
    path : str or Path
        ARFF, CSV/TSV, MATLAB .mat (v5 or v7.3), GCT, GEO series matrix or AnnData .h5ad
        file; every text format may be gzip-compressed.
    format : {"arff", "csv", "tsv", "mat", "gct", "geo", "h5ad"} or None
        Overrides the choice by extension and content.
    label : str or int or None
        Class attribute/column (name or 0-based index); for genes-as-rows text files, the row;
        for a series matrix, a characteristic's key or a ``!Sample_`` line; for .h5ad, an
        ``obs`` column; with ``labels``, the class column of that phenotype table.
    labels : str or Path or None
        Separate labels file (one label per line, or sample,label lines), a phenotype table
        (with ``label``) or, for GCT, the CLS file.
    genes_as_rows : bool
        CSV/TSV holds one gene per row and one sample per column.
    sep : str or None
        CSV/TSV field separator (default by format: comma or tab).
    x_var, y_var : str
        MATLAB variable names of the matrix and labels.
    layer : str or None
        .h5ad layer read instead of ``X``.
    sample_column : str or None
        Sample-id column of the phenotype table (default: found among the usual names).
    **build_options
        ``dtype``, ``drop_constant``, ``transpose``, ``nan``, ``drop_unlabelled``,
        ``min_class_size``: see :func:`hpcswarm.data.build.build`.

    Returns
    -------
    dataset : Dataset
        In memory (``path`` None), with provenance in ``attrs``.
    cleaning : Cleaning
        Genes and samples removed.
    """
    options = _options(format, label, labels, genes_as_rows, sep, x_var, y_var, layer,
                       sample_column, **build_options)
    fmt, source, used = _open_source(path, options)
    destination = MemoryDestination()
    built = build(source, Path(path), destination, **_build_options(options))
    dataset = Dataset(X=destination.X, y=built.y, class_names=built.class_names,
                      gene_names=[str(n) for n in built.gene_names],
                      sample_names=None if built.sample_names is None
                      else [str(n) for n in built.sample_names])
    dataset.attrs = _provenance(fmt, source, used, built.cleaning)
    return dataset, built.cleaning


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
        for what, names in (("samples without a label", self.cleaning.unlabelled_samples),
                            ("constant genes", self.cleaning.constant_genes),
                            ("genes with NaN/inf", self.cleaning.nonfinite_genes),
                            ("samples with NaN/inf", self.cleaning.nonfinite_samples),
                            ("samples without a label", self.cleaning.unlabelled_samples)):
            if names:
                shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
                out.append(f"  dropped {len(names)} {what}: {shown}")
        if self.cleaning.small_classes:
            small = ", ".join(f"{name} ({n})" for name, n in self.cleaning.small_classes)
            out.append(f"  dropped the samples of classes below --min-class-size: {small}")
        out.extend(f"  {note}" for note in self.cleaning.notes)
        out.append(f"  sha256 {self.sha256}")
        return out


def convert_file(input, output, *, overwrite=False, **options):
    """Convert ``input`` to the hpcswarm HDF5 file ``output`` (the ``convert`` command),
    streamed: memory stays one block of rows whatever the matrix's size.

    Parameters
    ----------
    input : str or Path
    output : str or Path
        Written under a temporary name in its folder, then renamed: a failure leaves no file.
        The temporaries of earlier conversions to ``output`` whose process is gone (killed
        during the write) are removed first, before the input is read, whether or not this
        conversion succeeds (:func:`hpcswarm.store.atomic.remove_stale_temporaries`).
    overwrite : bool
        Replace an existing ``output``; never the input or labels file
        (:func:`hpcswarm.store.outputs.check_outputs`).
    **options
        Options of :func:`read_dataset`.

    Returns
    -------
    ConvertReport
    """
    input, output = Path(input), Path(output)
    check_outputs([("OUTPUT", output)],
                  [("the input", input), ("the labels file", options.get("labels"))],
                  overwrite=overwrite)
    check_dataset_name(output, "OUTPUT")
    remove_stale_temporaries(output)
    defaults = {"format": None, "label": None, "labels": None, "genes_as_rows": False,
                "sep": None, "x_var": "X", "y_var": "Y", "layer": None, "sample_column": None}
    options = _options(**{**defaults, **options})
    fmt, source, used = _open_source(input, options)
    with atomic_hdf5(output, overwrite=overwrite) as f:
        built = build(source, input, FileDestination(f, output.parent), **_build_options(options))
        write_labels_and_names(f, _provenance(fmt, source, used, built.cleaning), built.y,
                               built.class_names, [str(n) for n in built.gene_names],
                               None if built.sample_names is None
                               else [str(n) for n in built.sample_names])
    seal(output)
    counts = np.bincount(built.y, minlength=len(built.class_names)).tolist()
    return ConvertReport(input=input, output=output, format=fmt, n_samples=built.y.size,
                         n_genes=len(built.gene_names), dtype=options["dtype"],
                         class_counts=list(zip(built.class_names, counts)),
                         cleaning=built.cleaning, sha256=file_sha256(output))

