"""The ``report`` command: build the report, check every file it would write, print the text
tables and write the files asked for."""

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

from hpcswarm.results.report.plots import plot_files, plotting_available, write_plots
from hpcswarm.results.report.build import build_report
from hpcswarm.results.report.files import (CSV_FILES, csv_texts, gene_list_paths, genes_text,
                                   json_document)
from hpcswarm.results.report.text import markdown_text, text_lines
from hpcswarm.store.atomic import all_or_nothing, write_json, write_text
from hpcswarm.store.outputs import check_outputs, created_folders, missing_folders


@dataclass(frozen=True)
class ReportOptions:
    """What the report computes (:func:`~hpcswarm.results.report.build.build_report`'s keywords):
    the ``reference`` method, the tests' ``alpha``, the ``top`` genes listed per method and
    the signature ``sizes``."""

    reference: Optional[str] = None
    alpha: float = 0.05
    top: int = 10
    sizes: Optional[Sequence[int]] = None


@dataclass(frozen=True)
class ReportOutputs:
    """The files a report writes besides its text (each None: not written): ``csv_dir``
    (:data:`~hpcswarm.results.report.files.CSV_FILES`), ``markdown``, ``json_path``, ``plots`` (a
    folder of PNG files) and ``genes_path`` (one ranked gene list per method,
    :func:`~hpcswarm.results.report.files.gene_list_paths`); ``overwrite`` replaces existing
    ones."""

    csv_dir: Optional[Path] = None
    markdown: Optional[Path] = None
    json_path: Optional[Path] = None
    plots: Optional[Path] = None
    genes_path: Optional[Path] = None
    overwrite: bool = False


def _plot_view(report):
    """The report without the size budgets no front reaches (the plots draw the others)."""
    return replace(report, fronts=[replace(e, budgets=[b for b in e.budgets if b.tasks])
                                   for e in report.fronts])


def report_command(paths, options=ReportOptions(), outputs=ReportOutputs(), print0=print):
    """The ``report`` command: print the text tables, write the files asked for.

    Every file it would write is checked first (:func:`hpcswarm.store.outputs.check_outputs`): none
    may be one of the results files read, and none may exist unless ``outputs.overwrite``.
    The files are written all or none (:func:`hpcswarm.store.atomic.all_or_nothing`); the
    folders ``outputs.csv_dir`` and ``outputs.plots`` are created if missing (and removed
    again if the checks or a write fail). ``outputs.genes_path``: the ranked genes of each
    method (:func:`~hpcswarm.results.report.files.genes_text`), one list per method, each a
    list ``evaluate --genes`` reads. Returns the :class:`~hpcswarm.results.report.model.Report`.
    """
    for folder, option in ((outputs.csv_dir, "--csv"), (outputs.plots, "--plots")):
        if folder is not None:
            missing_folders(folder, option)
    report = build_report(paths, reference=options.reference, alpha=options.alpha,
                          top=options.top, sizes=options.sizes)
    with created_folders([("--csv", outputs.csv_dir), ("--plots", outputs.plots)]):
        _check_report_outputs(report, paths, outputs)
        for line in text_lines(report):
            print0(line)
        _write_files(report, outputs, print0)
    return report


def _write_files(report, outputs, print0):
    """Write the files of ``outputs`` (checked already), all or none of them
    (:func:`hpcswarm.store.atomic.all_or_nothing`); then say which."""
    overwrite = outputs.overwrite
    said = []
    with all_or_nothing():
        if outputs.csv_dir is not None:
            for name, text in csv_texts(report).items():
                write_text(Path(outputs.csv_dir) / name, text, overwrite=overwrite)
            said.append(f"wrote {', '.join(CSV_FILES)} in {outputs.csv_dir}")
        if outputs.markdown is not None:
            write_text(outputs.markdown, markdown_text(report), overwrite=overwrite)
            said.append(f"wrote {outputs.markdown}")
        if outputs.json_path is not None:
            write_json(outputs.json_path, json_document(report), indent=1, overwrite=overwrite)
            said.append(f"wrote {outputs.json_path}")
        if outputs.genes_path is not None:
            for path, entry in gene_list_paths(report, outputs.genes_path):
                write_text(path, genes_text(entry), overwrite=overwrite)
                said.append(f"wrote {path}: {len(entry.ranked)} ranked genes of {entry.method}")
        if outputs.plots is not None:
            written = write_plots(_plot_view(report), outputs.plots, overwrite)
            if written is None:
                said.append("note: matplotlib is not installed (pip install 'hpcswarm[plot]'); "
                            "no plots written")
            else:
                said.append(f"wrote {', '.join(p.name for p in written)} in {outputs.plots}")
    for line in said:
        print0(line)


def _check_report_outputs(report, paths, outputs):
    """:func:`hpcswarm.store.outputs.check_outputs` on every file the report would write."""
    checked = ([("--csv", Path(outputs.csv_dir) / name) for name in CSV_FILES]
               if outputs.csv_dir is not None else [])
    checked += [(option, path) for option, path in (("--markdown", outputs.markdown),
                                                    ("--json", outputs.json_path))
                if path is not None]
    if outputs.genes_path is not None:
        checked += [("--genes", path) for path, _ in gene_list_paths(report, outputs.genes_path)]
    if outputs.plots is not None and plotting_available():
        checked += [("--plots", path) for path in plot_files(_plot_view(report), outputs.plots)]
    check_outputs(checked, [("the results file", path) for path in paths],
                  overwrite=outputs.overwrite)
