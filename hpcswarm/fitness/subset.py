"""A gene subset's fitness: a scorer's Score turned into one number by an objective."""

import numpy as np


class SubsetFitness:
    """Fitness of boolean gene masks, for the searches.

    The incremental helpers return, for a mask, exactly (bit for bit) the value of a full
    evaluation of that mask: scores are exact counts and the objective a fixed function of
    them.

    Parameters
    ----------
    scorer : Scorer
        :func:`hpcswarm.fitness.scorer.make_scorer`.
    objective : Objective
        From :func:`hpcswarm.fitness.objectives.make_objective`; a per-class objective
        needs a scorer built with ``class_counts``.
    """

    def __init__(self, scorer, objective):
        if objective.per_class and not scorer.class_counts:
            raise ValueError(f"the {objective.name} objective needs a scorer that counts per "
                             f"class (make_scorer(..., class_counts=True))")
        self.scorer = scorer
        self.objective = objective

    @property
    def n_genes(self):
        """Length of every mask."""
        return self.scorer.n_genes

    def _value(self, score, n_selected):
        return self.objective(score, int(n_selected), self.n_genes)

    def __call__(self, mask):
        """Fitness of ``mask`` (ndarray of bool of shape (n_genes,))."""
        return self._value(self.scorer.score(mask), np.count_nonzero(mask))

    def many(self, masks):
        """Fitness of each row of ``masks`` (ndarray of bool of shape (n_masks, n_genes))."""
        scores = self.scorer.score_many(masks)
        counts = np.count_nonzero(masks, axis=1)
        return np.array([self._value(s, c) for s, c in zip(scores, counts)], dtype=np.float64)

    def score(self, mask):
        """The scorer's Score of ``mask``."""
        return self.scorer.score(mask)

    def new_state(self, mask):
        """Cached distance state of ``mask`` (see ``Scorer.new_state``)."""
        return self.scorer.new_state(mask)

    def scored_state(self, mask, reuse=None):
        """Fitness of the non-empty ``mask`` and a new cached state of it (one product, see
        ``Scorer.score_new_state``; in the memory of the state ``reuse`` where given)."""
        score, state = self.scorer.score_new_state(mask, reuse)
        return self._value(score, state.n_selected), state

    def move(self, state, genes):
        """Fitness of ``state.mask`` with the distinct gene indices ``genes`` flipped, and
        ``state`` moved there (see ``Scorer.score_move``; the subset stays non-empty)."""
        score = self.scorer.score_move(state, genes)
        return self._value(score, state.n_selected)

    def flip(self, state, genes):
        """Fitness of ``state.mask`` with the distinct gene indices ``genes`` flipped."""
        genes = np.asarray(genes)
        score = self.scorer.score_flip(state, genes)
        entering = np.count_nonzero(~state.mask[genes])
        return self._value(score, state.n_selected + 2 * entering - genes.size)

    def flips(self, state, flips):
        """Fitness of ``state.mask`` with each row of ``flips`` flipped, speculatively.

        See ``Scorer.score_flips``; equal, row by row, to ``flip(state, row)``.

        Parameters
        ----------
        state : DistanceState
        flips : ndarray of int of shape (n_tries, n_flipped)

        Returns
        -------
        ndarray of shape (n_tries,)
        """
        flips = np.asarray(flips)
        correct = self.scorer.score_flips(state, flips)
        sizes = state.n_selected + flips.shape[1] - 2 * state.mask[flips].sum(axis=1)
        return self.objective.many(correct, self._totals(), sizes, self.n_genes)

    def _totals(self):
        """The held-out predictions the objective divides by: per class for a per-class
        objective (:attr:`~hpcswarm.fitness.objectives.Objective.per_class`), else all."""
        return self.scorer.class_total if self.objective.per_class else self.scorer.total

    def highest(self, sizes):
        """The highest fitness a subset of each of ``sizes`` genes can have (every held-out
        prediction correct), ndarray of float64: an upper bound of its fitness."""
        sizes = np.asarray(sizes, dtype=np.int64)
        total = self._totals()
        every = np.broadcast_to(total, sizes.shape + np.shape(total))
        return self.objective.many(every, total, sizes, self.n_genes)

    def single_flips(self, state, genes):
        """Fitness of ``state.mask`` with each gene of ``genes`` flipped alone.

        See ``Scorer.score_single_flips``; equal, gene by gene, to
        ``flip(state, [gene])``.

        Returns
        -------
        ndarray of shape (len(genes),)
        """
        genes = np.asarray(genes)
        scores = self.scorer.score_single_flips(state, genes)
        sizes = state.n_selected + np.where(state.mask[genes], -1, 1)
        return np.array([self._value(s, n) for s, n in zip(scores, sizes)], dtype=np.float64)

    def single_flip_scores(self, state, genes):
        """The evaluator's Score of ``state.mask`` with each gene of ``genes`` flipped alone.

        See ``Scorer.score_single_flips``; a list, in the order of ``genes``.
        """
        return self.scorer.score_single_flips(state, genes)

    def apply_flip(self, state, genes):
        """Move ``state`` to its mask with ``genes`` flipped."""
        self.scorer.apply_flip(state, genes)
