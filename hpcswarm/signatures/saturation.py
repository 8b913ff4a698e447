"""The signature where the inner accuracy saturates: chosen by the margin, not by the size.

A wrapper's fitness is the inner 1-NN accuracy on the training samples. With 60 to 80
samples many subsets classify every inner prediction correctly, and once the best subset
does, the fitness cannot tell them apart: VLPSO (Tran, Xue & Zhang 2019, Sec. III) then
prefers the subset with fewer genes, so the search walks down to the smallest subset that
still classifies every training sample, and does it by a hair. That is the point where a
wrapper fits its few samples (Ambroise & McLachlan 2002; Kohavi & John 1997, Sec. 5).

``refine = "saturation-margin"`` leaves the search's subset as it is unless it is saturated
(its inner count equals the number of inner predictions). Where it is, the fitness has no
signal left but the size, and the signature is chosen by the 1-NN hypothesis margin instead
(Gilad-Bachrach, Navot & Tishby 2004, ICML): the backward path of ``prune-compact``
(:func:`hpcswarm.signatures.refine.prune_compact`) is walked from the genes VLPSO's first
division searches (:func:`first_division`: the first ``max_length // n_divisions`` genes of
the search's gene order, Sec. III-A and III-B), and the point of the path that still
classifies every inner prediction with the largest margin relative to the samples' spread is
the signature. If those genes do not classify every inner prediction themselves, the search's
subset is kept. Only the training samples and the inner validation of the search are read;
the test samples never are.
"""

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.margins import label_codes
from hpcswarm.signatures.refine import Refined, prune_compact
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths
from hpcswarm.swarm.methods.vlpso.gene_order import gene_order

NAME = "saturation-margin"
"""The rule's ``refine`` value."""

DIVISIONS = 12
"""VLPSO's divisions of the swarm (Tran, Xue & Zhang 2019, Sec. IV), for a search without them."""


def first_division(data, y, params, max_genes=None):
    """The genes VLPSO's first division searches, as a mask of shape (n_genes,).

    The first ``(max_length // n_divisions)`` genes (at least one) of the gene order
    ``params["gene_order"]`` on the training samples ``data`` (labels ``y``), ``max_length``
    the genes or ``max_genes`` if fewer, ``n_divisions`` the search's divisions (Sec. III-A
    and III-B; :func:`~hpcswarm.swarm.methods.vlpso.divisions.division_lengths`; a VLPSO
    search's parameters hold them as fitted to its swarm). A search of another method has no
    such settings: symmetric uncertainty and :data:`DIVISIONS` divisions.
    """
    data = GeneMajor.of(data)
    codes, _ = label_codes(y)
    n_divisions = params.get("n_divisions", DIVISIONS)
    max_length = data.n_genes if max_genes is None else min(data.n_genes, max_genes)
    order = gene_order(params.get("gene_order", "su"), data, codes)
    start = np.zeros(data.n_genes, dtype=bool)
    start[order[:division_lengths(max_length, n_divisions)[0]]] = True
    return start


def saturation_margin(scorer, data, y, mask, params, max_genes=None):
    """The search's subset, or where it saturates the inner validation, the margin's choice.

    Parameters
    ----------
    scorer : Scorer
        The search's scorer (its training samples and inner validation folds).
    data : GeneMajor or array-like of shape (n_samples, n_genes)
        The scorer's training samples.
    y : array-like of shape (n_samples,)
        Their labels.
    mask : ndarray of bool of shape (n_genes,)
        The search's subset.
    params : mapping
        The search's complete parameters (``gene_order``, ``n_divisions``, ``n_particles``
        for VLPSO), read by :func:`first_division`.
    max_genes : int or None
        The search's size cap: the start, and so the signature, keeps at most as many genes.

    Returns
    -------
    Refined
        ``mask`` itself (nothing removed) when it misses an inner prediction, or when the
        first division's genes do; else the point of ``prune-compact``'s path from the first
        division's genes (:func:`first_division`) with the largest relative margin among
        those that classify every inner prediction (the path never loses one),
        ``removed`` the genes removed from that start.
    """
    mask = np.array(mask, dtype=bool)
    score = scorer.score(mask)
    kept = Refined(NAME, mask, int(score.correct), int(score.total), np.zeros(0, np.int64))
    if score.correct < score.total:
        return kept
    data = GeneMajor.of(data)
    start = first_division(data, y, params, max_genes)
    if scorer.score(start).correct < score.total:
        return kept
    chosen = prune_compact(scorer, data, y, start)
    return Refined(NAME, chosen.mask, chosen.correct, chosen.total, chosen.removed)
