"""Refinement of a search's selected subset after the search: pruning to a compact signature.

PSO-LSRG's fitness is the inner accuracy alone (Tran et al. 2016, Eq. 3): once it reaches its
maximum nothing in the search removes a gene that does not help. ``refine = "prune"`` takes
the subset a search returned and removes genes one at a time, on the same training samples
and inner validation, while the inner accuracy does not drop: a sequential backward
elimination (the SBS of the papers' baselines) started from the search's answer and stopped
at the first loss. Each step scores every one-gene removal at once
(the scorer's ``score_single_flips``, :class:`~hpcswarm.fitness.scorer.Scorer`: the
incremental update of Tran et al. Sect. 3.2 in blocks) and removes the gene whose removal keeps the most correct
predictions; ties go to the lower gene index (all candidates have one gene fewer). The
result never has a lower inner accuracy than the search's subset, and it is reported as its
own method (e.g. ``PSO-LSRG+prune``) beside the search's, never in its place.

The rule judges the inner accuracy, not the search's objective: under Li et al.'s combined
fitness every removal raises the size term, so the objective alone would accept losses of
accuracy. The test accuracy is never consulted.
"""

from dataclasses import dataclass

import numpy as np

REFINEMENTS = ("none", "prune")
"""Values of the job key ``refine``."""


@dataclass
class Refined:
    """A refined subset.

    Attributes
    ----------
    method : str
        The refinement (``"prune"``).
    mask : ndarray of bool of shape (n_genes,)
    correct, total : int
        Its inner validation score.
    removed : ndarray of int64
        Genes removed, in the order they were removed.
    """

    method: str
    mask: np.ndarray
    correct: int
    total: int
    removed: np.ndarray

    @property
    def genes(self):
        """Indices of the refined subset's genes."""
        return np.flatnonzero(self.mask)


def prune(scorer, mask):
    """Remove genes one at a time while the inner accuracy does not drop.

    Parameters
    ----------
    scorer : Scorer
        The search's scorer (its training samples and validation folds), e.g. a
        :class:`~hpcswarm.fitness.KnnEvaluator`.
    mask : ndarray of bool of shape (n_genes,)
        The subset to prune (the search's answer).

    Returns
    -------
    Refined
        A subset of ``mask`` whose inner correct count is at least that of ``mask``; equal
        to ``mask`` when it is empty or no single removal keeps the count.
    """
    mask = np.array(mask, dtype=bool)
    score = scorer.score(mask)
    removed = []
    if np.count_nonzero(mask) > 1:
        state = scorer.new_state(mask)
        while np.count_nonzero(state.mask) > 1:
            genes = np.flatnonzero(state.mask)
            correct = np.array([s.correct for s in scorer.score_single_flips(state, genes)])
            j = int(np.argmax(correct))  # the first maximum: the lowest gene index
            if correct[j] < score.correct:
                break
            score = type(score)(int(correct[j]), score.total)
            scorer.apply_flip(state, genes[j:j + 1])
            removed.append(int(genes[j]))
        mask = state.mask.copy()
    return Refined("prune", mask, int(score.correct), int(score.total),
                   np.array(removed, dtype=np.int64))


def refine(scorer, mask, method):
    """The refinement ``method`` of ``mask`` (:data:`REFINEMENTS`), or None for ``"none"``."""
    if method == "none":
        return None
    if method == "prune":
        return prune(scorer, mask)
    raise ValueError(f"refine must be one of {', '.join(REFINEMENTS)}, got {method!r}")
