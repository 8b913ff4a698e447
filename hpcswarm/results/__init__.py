"""Results files, the papers' tables and their plots: reading and showing what a job wrote.

- :mod:`~hpcswarm.results.files`: the results file of a job (HDF5, written by world rank 0
  through :mod:`hpcswarm.store.atomic`) and its JSON summary, written and read.
- :mod:`~hpcswarm.results.report`: the papers' tables from results files (methods, sizes,
  significance, top genes, convergence, stability, the final signature) and the gene lists.
- :mod:`~hpcswarm.results.significance`: the paired one-sided Wilcoxon signed-rank test of two
  report rows' per-fold accuracies: the report's statistics, not a property of a signature.
- :mod:`~hpcswarm.results.report.plots`: the pictures of a report and of a signature's
  expression by class (matplotlib, imported only when a plot is drawn).

Why together: a job's output read back and shown, by ``report``, ``evaluate --plot`` and
:meth:`hpcswarm.Selection.plot_expression`. Reading results never loads the fitness engine,
the search or MPI (``tests/test_records.py`` checks it); so this package sits below the
search (:mod:`hpcswarm.selection`) and may not import it. The job (:mod:`hpcswarm.run`)
writes results through :mod:`~hpcswarm.results.files`.

May import: :mod:`hpcswarm.signatures` (refinement labels, stability, the final signature,
gene lists), :mod:`hpcswarm.store` and the root's foundation (errors, system, comm); by its
layer also the packages below :mod:`hpcswarm.signatures`, which it does not use. Never
:mod:`hpcswarm.selection`, :mod:`hpcswarm.run`, the public API or the command line.
"""
