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
subset is kept.

``refine = "saturation-exchange"`` keeps the size the search chose and changes which genes
fill it. Where the search's subset saturates, genes of the subset are exchanged one for one
with genes of the first division (:func:`first_division`), each step taking the exchange
that keeps every inner prediction correct and raises the margin relative to the samples'
spread the most (the criterion of ``prune-compact``), until none raises it or as many
exchanges as the subset has genes have been made: a variant of the fixed-size exchange step
of Somol & Pudil's oscillating search (2000, ICPR, Sec. 2), which removes and then adds one
feature where this rule takes the best pair at once, scored by the margin of Gilad-Bachrach
et al. Sizes stay those of the search, so where the search kept few genes the signature does
too. Only the training samples and the inner validation of the search are read; the test
samples never are.
"""

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.margins import exchange_margin_sums, label_codes
from hpcswarm.signatures.refine import Refined, prune_compact, relative_margin
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths
from hpcswarm.swarm.methods.vlpso.gene_order import gene_order

NAME = "saturation-margin"
"""The rule's ``refine`` value."""

EXCHANGE = "saturation-exchange"
"""The exchange rule's ``refine`` value."""

GAIN_TOLERANCE = 1e-9
"""The relative gain in ``e(F) / r(F)`` an exchange must exceed to be taken: an exchange's ratio
comes from updated sums and the subset's from sums over its genes, which differ by rounding
(about 1e-15 relative), so that an exchange of a gene for an identical copy is no gain."""

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


def _best_exchange(scorer, state, data, pool, codes, counted):
    """The exchange of a gene of ``state.mask`` for one of ``pool`` outside it that keeps every
    inner prediction and raises ``e(F) / r(F)`` most: a row ``(out, in)`` of gene indices, or
    None where none raises it (ties: the lower gene out, then the lower gene in)."""
    inside = np.flatnonzero(state.mask)
    incoming = np.flatnonzero(pool & ~state.mask)
    if incoming.size == 0:
        return None
    values, entering = data.take(inside), data.take(incoming)
    whole, exchanged = exchange_margin_sums(values, entering, codes, counted)
    spread = values.var(axis=1)
    held = spread.sum()
    current = float(relative_margin(np.float64(whole), held))
    ratios = relative_margin(exchanged, held - spread[:, None] + entering.var(axis=1)[None, :])
    flips = np.stack(np.meshgrid(inside, incoming, indexing="ij"), axis=-1).reshape(-1, 2)
    correct = np.asarray(scorer.score_flips(state, flips))
    if correct.ndim == 2:   # counts per class
        correct = correct.sum(axis=1)
    ratios = np.where(correct.reshape(ratios.shape) == scorer.total, ratios, -np.inf)
    best = int(np.argmax(ratios))   # the first of the largest
    gained = ratios.flat[best] > current + GAIN_TOLERANCE * max(1.0, abs(current))
    return flips[best] if gained else None


def saturation_exchange(scorer, data, y, mask, params, max_genes=None):
    """The search's subset, or where it saturates the inner validation, the same number of
    genes exchanged one for one towards the largest relative margin.

    Parameters
    ----------
    scorer, data, y, mask, params, max_genes
        As for :func:`saturation_margin` (``max_genes`` bounds the first division, which the
        incoming genes come from).

    Returns
    -------
    Refined
        ``mask`` itself when it misses an inner prediction. Else, from ``mask``, at most
        ``n`` steps (``n`` its genes), each the exchange of a gene of the subset for one of
        the first division outside it whose subset classifies every inner prediction and has
        the largest ``e(F) / r(F)`` (:func:`~hpcswarm.signatures.refine.prune_compact`'s
        criterion: ties to the lower gene out, then the lower gene in), taken only if that
        ratio exceeds the subset's by more than :data:`GAIN_TOLERANCE`; ``removed`` the genes
        of ``mask`` it no longer holds, in the order they were first exchanged out. A step
        scores ``n`` times the first division's genes exchanges, each ``n_samples^2`` for its
        margins and as much for its inner validation.
    """
    mask = np.array(mask, dtype=bool)
    score = scorer.score(mask)
    exchanged_out = []
    if score.correct == score.total and mask.any():
        data = GeneMajor.of(data)
        codes, counted = label_codes(y)
        pool = first_division(data, y, params, max_genes)
        state = scorer.new_state(mask)
        for _ in range(np.count_nonzero(mask)):
            exchange = _best_exchange(scorer, state, data, pool, codes, counted)
            if exchange is None:
                break
            scorer.apply_flip(state, exchange)
            exchanged_out.append(int(exchange[0]))
        kept = np.array(state.mask, dtype=bool)
        exchanged_out = [gene for gene in dict.fromkeys(exchanged_out)
                         if mask[gene] and not kept[gene]]
        mask = kept
    return Refined(EXCHANGE, mask, int(score.correct), int(score.total),
                   np.array(exchanged_out, dtype=np.int64))
