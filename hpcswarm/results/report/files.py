"""The files a report writes beside its text: CSV tables, the JSON document and the ranked
gene lists, each read from the fields of a :class:`~hpcswarm.results.report.model.Report`."""

import csv
import io
import re
from dataclasses import fields
from pathlib import Path

from hpcswarm.results.report.model import MethodRow, as_report, plain
from hpcswarm.signatures.genelist import gene_table
from hpcswarm.store.encoding import tags

REPORT_ENCODING = ("hpcswarm-report", "0.3.0")
"""``encoding-type`` and ``encoding-version`` of the ``--json`` document (0.3.0 added the
rows' ``balanced`` and ``balanced_std``; a 0.2.0 document reads them as None)."""

METHOD_COLUMNS = tuple(f.name for f in fields(MethodRow) if f.name != "dataset_sha256")
"""The columns of ``methods.csv``: every field of a methods-table row but the dataset's
SHA-256."""


def json_document(report):
    """The ``--json`` document: the report's fields (:func:`~hpcswarm.results.report.model.plain`),
    tagged with :data:`REPORT_ENCODING`."""
    return {**tags(REPORT_ENCODING), **plain(report)}


def _render(header, body):
    """CSV text of a header and rows, each row ended by ``\\n``.

    A field holding a line end of either kind (``\\n`` or ``\\r``: gene names may) is
    quoted, so that every CSV reader reads it back whole: each row is written with the
    ``\\r\\n`` terminator, whose characters :mod:`csv` quotes (with ``\\n`` alone Python
    before 3.12 leaves a bare ``\\r`` unquoted), then ended by ``\\n``.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    lines = []
    for row in [header, *body]:
        out.seek(0)
        out.truncate()
        writer.writerow(row)
        lines.append(out.getvalue()[:-2] + "\n")
    return "".join(lines)


CSV_FILES = ("methods.csv", "genes.csv", "convergence.csv", "fronts.csv", "signatures.csv")
"""The files ``--csv DIR`` writes."""


def csv_texts(report):
    """The text of each of :data:`CSV_FILES`, by file name, of a report or its JSON form
    (:func:`~hpcswarm.results.report.model.as_report`)."""
    report = as_report(report)
    methods = _render(METHOD_COLUMNS, [[getattr(r, c) for c in METHOD_COLUMNS]
                                       for r in report.rows])
    genes = _render(["method", "rank", "index", "gene", "count", "frequency"],
                    [[e.method, i + 1, g.index, g.name, g.count, g.frequency]
                     for e in report.genes for i, g in enumerate(e.top)])
    convergence = _render(["method", "round", "mean_best_fitness", "mean_best_accuracy"],
                          [[e.method, t, v,
                            None if e.best_accuracy is None else e.best_accuracy[t]]
                           for e in report.convergence
                           for t, v in enumerate(e.best_fitness)])
    fronts = _render(["dataset", "method", "run", "fold", "size", "inner_accuracy",
                      "test_accuracy"],
                     [[e.dataset, e.method, t.run, t.fold, p.size, p.inner, p.test]
                      for e in report.fronts for t in e.tasks for p in t.points])
    signatures = _render(["dataset", "method", "budget", "mean_size", "inner_accuracy",
                          "test_accuracy", "tasks"],
                         [[e.dataset, e.method, b.budget, b.size, b.inner, b.test, b.tasks]
                          for e in report.fronts for b in e.budgets])
    return dict(zip(CSV_FILES, (methods, genes, convergence, fronts, signatures)))

def genes_text(entry):
    """One method's selected genes, ranked, as a gene list (``--genes``,
    :func:`hpcswarm.signatures.genelist.gene_table`).

    Columns: gene (name), feature (1-based column, Tran et al.'s Table 6 numbering), column
    (0-based), frequency (share of the tasks that selected it), mean_rank (see
    :func:`hpcswarm.signatures.stability.ranked_genes`), selections. The first column pastes into an
    enrichment tool as it is.
    """
    return gene_table(("frequency", "mean_rank", "selections"),
                      [(g.name, g.index, f"{g.frequency:.4f}", f"{g.mean_rank:.2f}",
                        g.count) for g in entry.ranked])


def gene_list_paths(report, genes_path):
    """Where ``--genes PATH`` writes each method's list: the report's first method (its first
    row, the search's own subsets) at ``PATH`` itself, so that the file asked for always
    exists; each other method at ``STEM.METHOD.SUFFIX`` beside it
    (``STEM.DATASET.METHOD.SUFFIX`` when the report spans several datasets), characters other
    than letters, digits and ``+._-`` written as ``_``. Returns ``(path, entry)`` pairs, one
    per method."""
    entries = report.genes
    path = Path(genes_path)
    several = len({entry.dataset for entry in entries}) > 1
    pairs, taken = [(path, entries[0])], set()
    for entry in entries[1:]:
        label = f"{entry.dataset}.{entry.method}" if several else entry.method
        name = f"{path.stem}.{re.sub(r'[^A-Za-z0-9+._-]', '_', label)}"
        unique, count = name, 1
        while unique in taken:
            count += 1
            unique = f"{name}-{count}"
        taken.add(unique)
        pairs.append((path.with_name(unique + path.suffix), entry))
    return pairs


