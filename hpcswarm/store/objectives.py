"""The objectives: how a subset's exact held-out counts become the fitness a search maximises,
and how a stored fitness is read back as an accuracy. One row per objective.

The scorers count (correct held-out predictions, per class where an objective needs them);
an objective is one small function of those counts, in a scalar form (one
:class:`~hpcswarm.fitness.score.Score`) and a batched form (arrays of counts) that agree bit
for bit. Every list of objectives is derived from :data:`OBJECTIVE_TABLE`: the ``objective``
choices and their aliases (:data:`hpcswarm.swarm.params.FITNESS_PARAMS`), the objectives whose
front is pruned by dominance (:data:`hpcswarm.swarm.engine.front.MONOTONE_OBJECTIVES`), the
report's accuracy curve (:func:`hpcswarm.results.report.figures.fitness_accuracy`) and the
table of ``docs/methods.md``. It sits with the records because reading a results file reads a
fitness back through it, and that must not load the fitness engine.

Adding an objective is one :class:`ObjectiveRow` here with its kernels
(``docs/contributing.md`` has a worked example).
"""

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from hpcswarm.store.records import balanced_accuracy

ALPHA_RANGE = (0, 1)
"""The open interval of the accuracy weight ``alpha`` of ``"combined"`` (Li et al., Eq. 3):
at 0 the fitness ignores accuracy, at 1 the size; its parameter refuses both bounds."""


@dataclass(frozen=True)
class ObjectiveRow:
    """One objective.

    Parameters
    ----------
    name : str
        The name a job, the command line and the Python calls give.
    fitness : str
        The fitness as a formula, for the documentation.
    source : str
        The paper (and equation) the objective comes from.
    scalar : callable
        ``(score, n_selected, n_genes, alpha) -> float``, the fitness of one non-empty subset
        from its :class:`~hpcswarm.fitness.score.Score`.
    batched : callable
        ``(correct, total, n_selected, n_genes, alpha) -> ndarray``: the fitness of many
        non-empty subsets from their counts (int arrays; per class for a :attr:`per_class`
        objective), element by element equal to ``scalar``.
    inverse : callable or None
        ``(fitness, size, n_genes, alpha) -> ndarray or None``: the accuracy behind fitness
        values (None where it cannot be had, e.g. ``n_genes`` unknown); None for an
        objective that cannot be inverted.
    aliases : tuple of str, default ()
        Other spellings accepted for ``name`` (scikit-learn's scorer names).
    per_class : bool, default False
        The objective needs correct counts per class (its scorer counts per class).
    monotone : bool, default False
        The fitness rises with the accuracy alone, so a subset that is no more accurate and
        no smaller than another is dominated (the front prunes it).
    """

    name: str
    fitness: str
    source: str
    scalar: Callable
    batched: Callable
    inverse: Optional[Callable]
    aliases: tuple = ()
    per_class: bool = False
    monotone: bool = False


def _combined(accuracy, n_selected, n_genes, alpha):
    """Li et al., Eq. 3: ``alpha * acc + (1 - alpha) * (1 - |S| / D)``."""
    return alpha * accuracy + (1.0 - alpha) * (1.0 - n_selected / n_genes)


def _combined_accuracy(fitness, size, n_genes, alpha):
    if not n_genes:
        return None
    return (fitness - (1.0 - alpha) * (1.0 - np.asarray(size) / n_genes)) / alpha


OBJECTIVE_TABLE = {row.name: row for row in (
    ObjectiveRow(
        "accuracy", "correct held-out predictions / held-out predictions",
        "Tran et al. 2016, Chuang et al. 2008",
        scalar=lambda score, n_selected, n_genes, alpha: score.accuracy,
        batched=lambda correct, total, n_selected, n_genes, alpha: correct / total,
        inverse=lambda fitness, size, n_genes, alpha: fitness.copy(),
        monotone=True),
    ObjectiveRow(
        "error", "minus the error rate", "Gu et al. 2018, Eq. 5",
        scalar=lambda score, n_selected, n_genes, alpha: -score.error,
        batched=lambda correct, total, n_selected, n_genes, alpha: -((total - correct) / total),
        inverse=lambda fitness, size, n_genes, alpha: 1.0 + fitness,
        monotone=True),
    ObjectiveRow(
        "combined", "alpha * accuracy + (1 - alpha) * (1 - size / genes)",
        "Li et al., Eq. 3 (alpha 0.9, as Xue et al. 2012)",
        scalar=lambda score, n_selected, n_genes, alpha: _combined(score.accuracy, n_selected,
                                                                   n_genes, alpha),
        batched=lambda correct, total, n_selected, n_genes, alpha: _combined(
            correct / total, n_selected, n_genes, alpha),
        inverse=_combined_accuracy),
    ObjectiveRow(
        "balanced-accuracy", "mean over classes of correct_c / held-out_c",
        "Tran, Xue & Zhang 2019 (VLPSO); scikit-learn's balanced_accuracy_score",
        scalar=lambda score, n_selected, n_genes, alpha: score.balanced_accuracy,
        batched=lambda correct, total, n_selected, n_genes, alpha: balanced_accuracy(correct,
                                                                                    total),
        inverse=None, aliases=("balanced_accuracy",), per_class=True),
)}
"""Every objective by name, in the order the documentation lists them."""

OBJECTIVE_ALIASES = {alias: row.name for row in OBJECTIVE_TABLE.values()
                     for alias in row.aliases}
"""Other spellings of an objective's name, and the name each stands for."""


def objective_row(name):
    """The row of ``name`` or of one of its aliases; None for a name no row has (a file
    written by another version, or a value that is no name)."""
    if not isinstance(name, str):
        return None
    return OBJECTIVE_TABLE.get(OBJECTIVE_ALIASES.get(name, name))
