"""Leave-one-out hypothesis margins of 1-NN on a gene subset, and after each one-gene removal.

Gilad-Bachrach, Navot & Tishby (2004), "Margin based feature selection - theory and
algorithms", ICML, Sect. 2-4: the hypothesis margin of a training sample ``x`` for 1-NN is

    theta(x) = (||x - nearmiss(x)|| - ||x - nearhit(x)||) / 2,

``nearhit`` and ``nearmiss`` its nearest other sample of its own class and of another class,
distances over the genes of the subset only. It is positive exactly when the leave-one-out
1-NN classifies ``x`` correctly (barring ties), and its size says by how much: their
generalisation bound for 1-NN on a feature subset tightens as the margin grows and as the
number of features falls, and their G-flip scores a subset ``F`` by the sum of the margins
of the training samples, each left out of its own neighbour search, neighbours found in
``F`` itself (with the linear utility). :func:`margin_sum` is that ``e(F)``;
:func:`margin_sums` gives ``e(F)`` and ``e`` of every one-gene removal at once, and
:func:`exchange_margin_sums` ``e`` of every exchange of one gene of ``F`` for one outside it.

A sample whose class has no other training sample has no ``nearhit``: it is left out of the
sum (its margin would be minus infinity for every subset). Distances are Euclidean on the
raw values, as the k-NN of the papers, summed gene by gene in a fixed order (no Gram
product), so a subset's margin sum does not depend on the order its genes were removed in.
"""

import numpy as np

from hpcswarm.fitness.compiled import Kernel


def label_codes(y):
    """Class codes of ``y`` and which samples have another sample of their class.

    Returns
    -------
    codes : ndarray of int64 of shape (n_samples,)
    counted : ndarray of bool of shape (n_samples,)
        The samples that have a ``nearhit`` (their class has at least two samples).
    """
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    codes = codes.astype(np.int64)
    return codes, np.bincount(codes)[codes] > 1


def _distance_source(values, out):
    n_genes, n = values.shape
    out[:] = 0.0
    for g in range(n_genes):
        v = values[g]
        for i in range(n):
            for j in range(i + 1, n):
                d = v[i] - v[j]
                out[i, j] += d * d
    for i in range(n):
        for j in range(i + 1, n):
            out[j, i] = out[i, j]


def _margin_sum_source(dist2, removed, added, codes, counted):
    """Sum of margins with ``removed`` taken out of dist2 and then ``added`` put in (values of
    one gene each, or empty), distances clipped at 0."""
    n = dist2.shape[0]
    changed = removed.size or added.size
    total = 0.0
    for i in range(n):
        if not counted[i]:
            continue
        hit = np.inf
        miss = np.inf
        for j in range(n):
            if j == i:
                continue
            d = dist2[i, j]
            if removed.size:
                d -= (removed[i] - removed[j]) ** 2
            if added.size:
                d += (added[i] - added[j]) ** 2
            if changed and d < 0.0:
                d = 0.0
            if codes[j] == codes[i]:
                if d < hit:
                    hit = d
            elif d < miss:
                miss = d
        total += 0.5 * (np.sqrt(miss) - np.sqrt(hit))
    return total


def _removal_sums_source(values, dist2, candidates, codes, counted, out):
    nothing = np.empty(0)
    for c in range(candidates.size):
        out[c] = _margin_sum(dist2, values[candidates[c]], nothing, codes, counted)


def _exchange_sums_source(dist2, inside, outside, codes, counted, out):
    """``out[a, b]``: the margin sum with row ``a`` of ``inside`` exchanged for row ``b`` of
    ``outside``, from ``dist2`` of the subset."""
    for a in range(inside.shape[0]):
        for b in range(outside.shape[0]):
            out[a, b] = _margin_sum(dist2, inside[a], outside[b], codes, counted)


_distances = Kernel(_distance_source)
_margin_sum = Kernel(_margin_sum_source)
_removal_sums = Kernel(_removal_sums_source, calls={"_margin_sum": _margin_sum})
_exchange_sums = Kernel(_exchange_sums_source, calls={"_margin_sum": _margin_sum})


def subset_distances(values):
    """Squared Euclidean distances between samples over the genes of ``values``.

    Parameters
    ----------
    values : ndarray of shape (n_selected, n_samples)
        Gene-major values of the subset's genes (e.g. :meth:`GeneMajor.take`).

    Returns
    -------
    ndarray of float64 of shape (n_samples, n_samples)
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty((values.shape[1], values.shape[1]))
    _distances(values, out)
    return out


def margin_sum(values, codes, counted):
    """``e(F)``: the sum of the leave-one-out hypothesis margins over the ``counted`` samples.

    Parameters
    ----------
    values : ndarray of shape (n_selected, n_samples)
        Gene-major values of the subset ``F``.
    codes, counted : ndarray of shape (n_samples,)
        From :func:`label_codes`.

    Returns
    -------
    float
    """
    return float(_margin_sum(subset_distances(values), np.empty(0), np.empty(0), codes, counted))


def margin_sums(values, candidates, codes, counted):
    """``e(F)``, and ``e(F - {g})`` for each candidate gene ``g`` of ``F``, from one pass.

    Parameters
    ----------
    values : ndarray of shape (n_selected, n_samples)
        Gene-major values of ``F``.
    candidates : ndarray of int
        Rows of ``values`` (genes of ``F``) to remove, one at a time.
    codes, counted : ndarray of shape (n_samples,)
        From :func:`label_codes`.

    Returns
    -------
    whole : float
        ``e(F)``, equal to :func:`margin_sum` of ``values``.
    removals : ndarray of float64 of shape (len(candidates),)
        ``e(F - {g})`` per candidate. Costs ``n_samples^2`` per candidate (and for ``whole``)
        after one ``n_selected n_samples^2`` pass.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    candidates = np.asarray(candidates, dtype=np.int64)
    distances = subset_distances(values)
    out = np.empty(candidates.size)
    _removal_sums(values, distances, candidates, codes, counted, out)
    return float(_margin_sum(distances, np.empty(0), np.empty(0), codes, counted)), out


def exchange_margin_sums(values, incoming, codes, counted):
    """``e(F)``, and ``e(F - {g} + {h})`` for each gene ``g`` of ``F`` and each ``h`` outside it.

    Parameters
    ----------
    values, codes, counted
        As for :func:`margin_sums`.
    incoming : ndarray of shape (n_incoming, n_samples)
        Gene-major values of the genes that may come in (none of them in ``F``).

    Returns
    -------
    whole : float
        ``e(F)``, as :func:`margin_sums` returns it.
    exchanges : ndarray of float64 of shape (n_selected, n_incoming)
        ``e`` with row ``a`` of ``values`` exchanged for row ``b`` of ``incoming``, from the
        distances of ``F`` (one ``n_samples^2`` pass per exchange). Taking a gene's squares
        out of the sum loses precision where that gene's scale dwarfs the others' (as in
        :func:`margin_sums`); on genes scaled alike, as a job's min-max scaling leaves them,
        it agrees with :func:`margin_sum` of the exchanged subset to rounding.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    incoming = np.ascontiguousarray(incoming, dtype=np.float64)
    distances = subset_distances(values)
    out = np.empty((values.shape[0], incoming.shape[0]))
    _exchange_sums(distances, values, incoming, codes, counted, out)
    return float(_margin_sum(distances, np.empty(0), np.empty(0), codes, counted)), out
