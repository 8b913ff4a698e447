"""A method's figures read from its tasks: the signatures by size read from the fronts, and
the convergence curve as inner accuracy."""

import numpy as np

from hpcswarm.results.files import mean_curve
from hpcswarm.results.report.model import BudgetRow
from hpcswarm.store.encoding import finite
from hpcswarm.store.objectives import objective_row

BUDGETS = (1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)
"""Signature sizes (most genes) at which the report reads the fronts."""


def default_budgets(fronts):
    """Signature sizes read from the fronts themselves: the smallest size of any front, the
    smallest at which every front has a point, and the :data:`BUDGETS` between the first and
    the first that takes every front's last point."""
    smallest = min(front[0].size for front in fronts)
    everywhere = max(front[0].size for front in fronts)
    largest = max(front[-1].size for front in fronts)
    chosen = []
    for budget in sorted({b for b in BUDGETS if b >= smallest} | {smallest, everywhere}):
        chosen.append(budget)
        if budget >= largest:
            break
    return chosen


def signature_budgets(method, budgets=None):
    """Per size budget, the front points chosen by inner accuracy alone, summarised.

    In every task, the point of the task's front with at most ``b`` genes and the highest
    inner accuracy (the largest such point: accuracy grows along a front). ``budgets``
    default to :func:`default_budgets`. Returns a list of
    :class:`~hpcswarm.results.report.model.BudgetRow`: ``budget``, ``tasks`` (the tasks whose front
    has a point of at most ``b`` genes: the means are over those), ``size`` (mean),
    ``inner`` (mean inner accuracy, %), ``test`` (test accuracy pooled over each run's
    folds, mean over runs, %; None for the biased protocol); ``size``, ``inner`` and
    ``test`` are None when no front has a point that small.
    """
    fronts = method.fronts or []
    if not fronts or not all(fronts):
        return []
    runs = method.table.run
    out = []
    for budget in (default_budgets(fronts) if budgets is None else sorted(set(budgets))):
        chosen = [(run, [p for p in front if p.size <= budget])
                  for run, front in zip(runs, fronts)]
        chosen = [(run, inside[-1]) for run, inside in chosen if inside]
        row = BudgetRow(budget, len(chosen))
        if chosen:
            points = [p for _, p in chosen]
            row.size = float(np.mean([p.size for p in points]))
            row.inner = 100 * float(np.mean([p.inner_accuracy for p in points]))
            if all(p.test_total > 0 for p in points):
                kept = np.array([run for run, _ in chosen])
                correct = np.array([p.test_correct for p in points])
                total = np.array([p.test_total for p in points])
                row.test = 100 * float(np.mean([correct[kept == r].sum()
                                                / total[kept == r].sum()
                                                for r in np.unique(kept)]))
        out.append(row)
    return out


def fitness_accuracy(fitness, size, objective, alpha=0.9, n_genes=None):
    """The validation accuracy behind a fitness value, by the objective's
    :attr:`~hpcswarm.store.objectives.ObjectiveRow.inverse`.

    NaN for the empty subset (a fitness below -1, outside every objective's range on
    non-empty subsets) and None for an objective it cannot invert (unknown, without an
    inverse, or ``combined`` without ``n_genes``).

    Parameters
    ----------
    fitness, size : ndarray of shape (n,)
    objective : str or None
    alpha : float
    n_genes : int, optional
        Genes the search chose from.
    """
    fitness = np.asarray(fitness, dtype=float)
    row = objective_row(objective)
    accuracy = row.inverse(fitness, size, n_genes, alpha) if row and row.inverse else None
    if accuracy is None:
        return None
    return np.where(fitness < -1.0, np.nan, accuracy)


def accuracy_curve(method):
    """Mean over tasks of the best subset's inner accuracy per round (from its fitness,
    :func:`fitness_accuracy`); None when the objective cannot be inverted. Shorter runs
    hold their last value, as in :func:`hpcswarm.results.files.mean_curve`."""
    params = method.attrs.get("params") or {}
    job = method.attrs.get("job") or {}
    n_genes = None if job.get("preprocess") else len(method.gene_names)
    columns = method.history_columns
    curves = []
    for history in method.histories:
        accuracy = fitness_accuracy(history[:, columns.index("best_fitness")],
                                    history[:, columns.index("best_size")],
                                    params.get("objective"), params.get("alpha", 0.9), n_genes)
        if accuracy is None:
            return None
        curves.append(accuracy[:, None])
    return finite(mean_curve(curves, ["best_accuracy"], "best_accuracy").tolist())


