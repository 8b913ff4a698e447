"""The papers' tables from results files: accuracy and size per method, top genes, convergence.

- Methods table (Tran et al. Tables 3 and 5; Gu et al. Table 2; Li et al. Tables II-III):
  average subset size, best and mean +/- std accuracy over runs (a run's accuracy pools its
  folds), and a paired one-sided Wilcoxon signed-rank test (:mod:`hpcswarm.results.significance`)
  of each row's per-fold accuracies against a reference row's, over the (run, fold) tasks
  that held out the same samples: ``+`` significantly higher than the reference, ``-``
  significantly lower, ``=`` no significant difference (Tran et al.'s convention; Gu et al.
  and Li et al. write the reverse, from the reference's side). The reference is the
  reference method, and for a refined row (``NAME+prune``) its search row ``NAME``. The p
  column gives the one-sided p and n, the pairs whose accuracies differ; a note says when n
  is too small for any outcome to reach alpha (the smallest p is ``2 ** -n``). The all-genes
  k-NN under the same protocol is the ``All`` row of each dataset.
- A refined method (a job with ``refine = "prune"``, :mod:`hpcswarm.signatures.refine`) has its own
  row, ``NAME+prune``, right after the search's row, from the same runs and folds.
- Stability (:mod:`hpcswarm.signatures.stability`): Kuncheva's consistency index and the mean
  pairwise Jaccard index of the subsets selected across the folds and runs, per method; Nogueira et
  al.'s estimate with its interval, and Sechidis et al.'s, which does not count a swap of a
  gene for one strongly correlated with it as a change (from the correlated gene pairs the
  job stored, ``/gene_similarity``; blank for files without them).
- Top genes (Tran et al. Table 6): the genes most often selected across runs and folds;
  ``--genes FILE`` writes every selected gene with its frequency and mean rank.
- Signatures by size: every task keeps the Pareto front of (inner accuracy, size) of the
  subsets its search evaluated (:mod:`hpcswarm.swarm.engine.front`). For a budget of at most b
  genes the report takes, in each task, the front point of at most b genes with the highest
  *inner* accuracy and gives its mean size, inner accuracy and test accuracy (pooled over
  each run's folds), over the tasks whose front has such a point (their number is shown).
  The budgets are read from the fronts (:func:`default_budgets`) or given (``--sizes``).
  Choosing a point by its test accuracy instead would let the test fold
  take part in the selection and bring back the selection bias that the outer
  cross-validation removes (Ambroise & McLachlan 2002; Tran et al. Sect. 4.6): the test
  accuracy of a front point is only reported, never used to choose it.
- Convergence (Tran et al. Fig. 3; Li et al. Fig. 2): mean gbest fitness per round, shown
  as the inner accuracy behind it (:func:`fitness_accuracy`: CSO's fitness is minus the
  error rate, Gu et al. 2018 Eq. 5).

Inputs: results files, and a single search's JSON (``run --output FILE.json``), read as one
biased task (:func:`hpcswarm.results.files.read_search_document`); a file given twice is read once.

Text tables go to the terminal; CSV, Markdown, JSON and PNG (matplotlib, optional) on request.

The package, one job per module: :mod:`~hpcswarm.results.report.model` (the report as dataclasses),
:mod:`~hpcswarm.results.report.methods` (the methods compared: files pooled, refined views, paired
tests), :mod:`~hpcswarm.results.report.figures` (a method's signatures by size and convergence),
:mod:`~hpcswarm.results.report.build` (the report from results files),
:mod:`~hpcswarm.results.report.text` (terminal and Markdown), :mod:`~hpcswarm.results.report.files`
(CSV, JSON, gene lists) and
:mod:`~hpcswarm.results.report.command` (the ``report`` command). It reads results files
(:mod:`hpcswarm.results.files`) and imports no engine.
"""

from hpcswarm.results.report.plots import plot_files, plotting_available, write_plots
from hpcswarm.results.report.build import (ALL_GENES, FRONT_NOTE, PCA_KNN, SINGLE_SEARCH,
                                   STABILITY_GENES, build_report, dataset_label)
from hpcswarm.results.report.command import ReportOptions, ReportOutputs, report_command
from hpcswarm.results.report.figures import (BUDGETS, accuracy_curve, default_budgets,
                                             fitness_accuracy, signature_budgets)
from hpcswarm.results.report.files import (CSV_FILES, METHOD_COLUMNS, REPORT_ENCODING, csv_texts,
                                   gene_list_paths, genes_text, json_document)
from hpcswarm.results.report.methods import (distinct_files, matched_accuracies, pool_parts,
                                     refined_points, refined_view, significance, with_refined)
from hpcswarm.results.report.model import (BudgetRow, ConvergenceEntry, FinalEntry, FrontEntry,
                                   FrontPointRow, GeneCount, GeneEntry, MethodRow, RankedGene,
                                   Report, TaskFront, as_report, plain)
from hpcswarm.results.report.text import markdown_text, text_lines

__all__ = [
    "ALL_GENES", "BUDGETS", "CSV_FILES", "FRONT_NOTE", "METHOD_COLUMNS", "PCA_KNN",
    "REPORT_ENCODING", "SINGLE_SEARCH", "STABILITY_GENES", "BudgetRow", "ConvergenceEntry",
    "FinalEntry", "FrontEntry", "FrontPointRow", "GeneCount", "GeneEntry", "MethodRow",
    "RankedGene", "Report", "ReportOptions", "ReportOutputs", "TaskFront", "accuracy_curve",
    "as_report", "build_report", "csv_texts", "dataset_label", "default_budgets",
    "distinct_files", "fitness_accuracy", "gene_list_paths", "genes_text", "json_document",
    "markdown_text", "matched_accuracies", "plain", "plot_files", "plotting_available",
    "pool_parts", "refined_points", "refined_view", "report_command", "signature_budgets",
    "significance", "text_lines", "with_refined", "write_plots",
]
