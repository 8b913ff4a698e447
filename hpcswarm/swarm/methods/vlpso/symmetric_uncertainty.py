"""Genes ranked by symmetric uncertainty with the class, on MDL-discretised values.

VLPSO orders the features by decreasing relevance before its search (Tran, Xue & Zhang 2019,
Sec. III-A): the relevance of a gene X to the class C is the symmetric uncertainty

    SU(X, C) = 2 IG(X | C) / (H(X) + H(C)),   IG(X | C) = H(X) - H(X | C),

with entropies in bits, computed on the gene's values discretised by the supervised MDL
method of Fayyad & Irani (1993). The authors' code does the same with Weka's supervised
``Discretize`` filter on the training samples (``SU.java`` of ``xyjigsaw/VarLenPSO``).
VLPSO's local search also compares two discretised genes by the same SU
(:func:`mutual_symmetric_uncertainty`, ``SU.get_su``). Everything here is a function of the
training samples the search is given.
"""

import numpy as np

from hpcswarm.comm import as_comm, block_counts, block_range

GENE_BLOCK = 256
"""Genes read from the engine's matrix at once when ranking."""

NEAR_MINIMUM = 2.0 ** -40
"""A cut whose :func:`_rough_information` lies within ``NEAR_MINIMUM * n_classes ** 2`` of
its gene's least is computed exactly (:func:`block_cut_points`): thousands of times the most
by which the rough value can differ from the exact one."""

SPLIT_CELLS = 1 << 17
"""Class counts (genes x samples x classes, float64) that :func:`block_cut_points` holds at
once: 1 MiB an array, a few such arrays at a time (below the peak of a search beside its
matrix and the matrix's copy: 8 MiB arrays raised ``select``'s at 2,000 x 5,000 from 2.15 to 2.53
times the matrix)."""


def entropy(counts) -> float:
    """Shannon entropy in bits of a distribution given by its counts (zeros allowed)."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    if total == 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())


def count_entropy(counts) -> float:
    """:func:`entropy` of integer counts summed in increasing order of the counts: a function
    of their multiset, the same bits for any order of the cells of a table."""
    return entropy(np.sort(np.asarray(counts).ravel()))


def _row_entropies(counts, totals=None):
    """Entropy in bits of each row of ``counts`` (ndarray of shape (n_rows, n_classes)).

    ``totals`` (ndarray of shape (n_rows, 1)) are the sums of the rows where the caller
    knows them; counts are whole numbers, so that these are the very values summed here."""
    if totals is None:
        totals = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    return -_information_terms(p).sum(axis=1)


def _information_terms(p):
    """``p log2(p)`` of each of the probabilities ``p`` (ndarray of float64), 0 where p is 0."""
    return p * np.log2(p, out=np.zeros(p.shape), where=p > 0)


def mdl_cut_points(values, codes, n_classes):
    """Cut points of one gene by the MDL principle (Fayyad & Irani 1993).

    The samples are sorted by value; the cut (a midpoint between two consecutive distinct
    values) that minimises the class entropy of the two parts is accepted when its
    information gain exceeds ``(log2(C) + delta) / N``, with
    ``delta = log2(3^k - 2) - (k Ent(S) - k1 Ent(S1) - k2 Ent(S2))`` (``k``, ``k1``, ``k2``
    the classes present in the set and its parts), and each part is cut again the same way.
    ``C`` is the number of candidate cuts (distinct values less one): Weka's "better
    encoding" of the cut point, which the authors' ``SU.java`` switches on, where Fayyad &
    Irani write ``N - 1``. Ties between equally good cuts go to the lowest value.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
    codes : ndarray of int of shape (n_samples,)
        Class codes ``0 .. n_classes - 1``.
    n_classes : int

    Returns
    -------
    ndarray of float64
        The accepted cut points, sorted.
    """
    order = np.argsort(values, kind="stable")
    values = np.asarray(values, dtype=float)[order]
    onehot = np.zeros((values.size, n_classes))
    onehot[np.arange(values.size), np.asarray(codes)[order]] = 1.0
    cuts = []
    _split(values, onehot, 0, values.size, cuts)
    return np.array(sorted(cuts), dtype=float)


def _split(values, onehot, lo, hi, cuts):
    """Accept the best cut of the sorted samples ``[lo, hi)`` if MDL allows, then recurse."""
    n = hi - lo
    if n < 2:
        return
    left = np.cumsum(onehot[lo:hi], axis=0)[:-1]  # class counts of [lo, lo + i + 1)
    total = left[-1] + onehot[hi - 1]
    candidates = np.flatnonzero(values[lo:hi - 1] < values[lo + 1:hi])
    if candidates.size == 0:
        return
    left = left[candidates]
    right = total - left
    n_left = (candidates + 1).astype(float)
    info = (n_left * _row_entropies(left) + (n - n_left) * _row_entropies(right)) / n
    best = int(np.argmin(info))
    whole = entropy(total)
    gain = whole - info[best]
    k = np.count_nonzero(total)
    k1, k2 = np.count_nonzero(left[best]), np.count_nonzero(right[best])
    delta = np.log2(3.0 ** k - 2) - (k * whole - k1 * entropy(left[best])
                                      - k2 * entropy(right[best]))
    if gain <= (np.log2(candidates.size) + delta) / n:
        return
    at = lo + int(candidates[best]) + 1  # first sample of the right part
    cuts.append(0.5 * (values[at - 1] + values[at]))
    _split(values, onehot, lo, at, cuts)
    _split(values, onehot, at, hi, cuts)


def block_cut_points(rows, codes, n_classes):
    """:func:`mdl_cut_points` of each of several genes (Fayyad & Irani 1993; Tran, Xue & Zhang
    2019, Sec. III-A), the same bits, the first split of every gene searched for all at once.

    The first split is most of the work (most genes get no cut, so it is their only one):
    the class information of every candidate cut of every gene. Here it is a few array
    operations a batch of genes, and it gives the cut :func:`_split` gives, because:

    - the class counts below a candidate (a change of value) are those of the values up to
      it whatever the order of tied values, so a faster, unstable sort gives the same counts
      (exact whole numbers in float64) at every candidate, here and in the parts that
      :func:`_split` searches next, and the same midpoints;
    - the information of every cut is first computed roughly
      (:func:`_rough_information`: the very terms of :func:`_row_entropies`, summed class
      after class instead of row by row), within far less than :data:`NEAR_MINIMUM` times
      ``n_classes ** 2`` of the exact value, so that every cut of exactly least information
      is among those roughly within that margin of the least;
    - those few (usually one a gene) are computed exactly as :func:`_split` does: their rows
      of counts stacked, gene after gene, into one ``(n_rows, n_classes)`` array that
      :func:`_row_entropies` sums row by row (each row's sum does not depend on the rows
      around it), and the first least of each gene's taken in order of value;
    - the MDL test uses the same scalars (:func:`entropy` of the same counts, the same
      operations elementwise over the genes).

    An accepted gene's two parts are then searched by :func:`_split`, one gene at a time.

    Parameters
    ----------
    rows : ndarray of shape (n_genes, n_samples)
        Each row the values of one gene.
    codes : ndarray of int of shape (n_samples,)
        Class codes ``0 .. n_classes - 1``.
    n_classes : int

    Returns
    -------
    list of ndarray of float64
        Each gene's accepted cut points, sorted.
    """
    rows = np.asarray(rows)
    n_genes, n_samples = rows.shape
    cuts = [[] for _ in range(n_genes)]
    if n_samples >= 2:
        batch = max(1, SPLIT_CELLS // (n_samples * n_classes))
        for first in range(0, n_genes, batch):
            _first_splits(rows[first:first + batch], np.asarray(codes), n_classes,
                          cuts[first:first + batch])
    return [np.array(sorted(gene_cuts), dtype=float) for gene_cuts in cuts]


def _first_splits(rows, codes, n_classes, cuts):
    """:func:`_split` of ``[0, n_samples)`` of each row of ``rows`` at once (see
    :func:`block_cut_points`), each gene's cuts appended to its list in ``cuts``."""
    n_genes, n = rows.shape
    order = np.argsort(rows, axis=1)  # tied values in any order (see block_cut_points)
    values = np.take_along_axis(np.asarray(rows, dtype=float), order, axis=1)
    classes = codes[order]
    # below[c, g, i]: the samples of class c among gene g's first i + 1, as floats
    below = np.cumsum(classes == np.arange(n_classes)[:, None, None], axis=2)[:, :, :-1]
    below = below.astype(float)
    total = np.bincount(codes, minlength=n_classes).astype(float)
    is_candidate = values[:, :-1] < values[:, 1:]
    rough = np.where(is_candidate, _rough_information(below, total), np.inf)
    margin = NEAR_MINIMUM * n_classes ** 2
    near = is_candidate & (rough <= rough.min(axis=1, keepdims=True) + margin)
    position = np.nonzero(near)[1]  # gene after gene, increasing
    left = np.ascontiguousarray(below[:, near].T)
    n_left = (position + 1).astype(float)
    info = (n_left * _row_entropies(left, n_left[:, None])
            + (n - n_left) * _row_entropies(total - left, (n - n_left)[:, None])) / n
    exact = np.full(near.shape, np.inf)
    exact[near] = info
    n_candidates = np.count_nonzero(is_candidate, axis=1)
    genes = np.flatnonzero(n_candidates)
    best = np.argmin(exact[genes], axis=1)
    left_best = np.ascontiguousarray(below[:, genes, best].T)
    right_best = total - left_best
    whole = entropy(total)
    gain = whole - exact[genes, best]
    k = np.count_nonzero(total)
    k1, k2 = np.count_nonzero(left_best, axis=1), np.count_nonzero(right_best, axis=1)
    entropies_left = np.array([entropy(counts) for counts in left_best])
    entropies_right = np.array([entropy(counts) for counts in right_best])
    delta = np.log2(3.0 ** k - 2) - (k * whole - k1 * entropies_left - k2 * entropies_right)
    accepted = gain > (np.log2(n_candidates[genes]) + delta) / n
    for gene, at in zip(genes[accepted].tolist(), (best[accepted] + 1).tolist()):
        cuts[gene].append(0.5 * (values[gene, at - 1] + values[gene, at]))
        onehot = (classes[gene][:, None] == np.arange(n_classes)).astype(float)
        _split(values[gene], onehot, 0, at, cuts[gene])
        _split(values[gene], onehot, at, n, cuts[gene])


def _rough_information(below, total):
    """The class information of every cut of each gene, ``(n_left Ent(S1) + n_right
    Ent(S2)) / n`` (Fayyad & Irani 1993), ndarray of shape (n_genes, n_samples - 1): the terms
    of :func:`_row_entropies` summed class after class, within about
    ``(2 n_classes + 4) 2^-53 log2(n_classes)`` of :func:`_split`'s value, which sums each
    row of terms at once (two sums of the same ``n_classes`` terms of one sign, whose sizes
    add up to at most ``log2(n_classes)``, then the same few operations).

    Parameters
    ----------
    below : ndarray of shape (n_classes, n_genes, n_samples - 1)
        The samples of each class up to each cut, in order of value, as floats.
    total : ndarray of shape (n_classes,)
        The samples of each class.
    """
    n = below.shape[2] + 1
    n_left = np.arange(1, n, dtype=float)
    entropies_left, entropies_right = np.zeros(below.shape[1:]), np.zeros(below.shape[1:])
    for counts, class_total in zip(below, total):
        entropies_left -= _information_terms(counts / n_left)
        entropies_right -= _information_terms((class_total - counts) / (n - n_left))
    return (n_left * entropies_left + (n - n_left) * entropies_right) / n


def symmetric_uncertainty(bins, codes) -> float:
    """SU between a discrete variable and the class: ``2 IG / (H(X) + H(C))`` (Yu & Liu 2003;
    Tran, Xue & Zhang 2019, Sec. III-A).

    Each entropy is summed over its counts in increasing order (:func:`count_entropy`), so
    that two variables whose (value, class) count tables are equal up to a relabelling of
    their values or of the classes (a gene and its negation, say) get exactly equal SU, not
    two values that differ in the last bit by the order of the sums: genes of equal
    relevance then tie exactly and keep their index order (:func:`relevance_order`).

    Parameters
    ----------
    bins, codes : ndarray of int of shape (n_samples,)
        The discrete values (e.g. interval numbers) and the class codes.

    Returns
    -------
    float
        In [0, 1]; 0 for a constant variable (no information), and when both are constant.
    """
    bins, codes = np.asarray(bins), np.asarray(codes)
    _, x = np.unique(bins, return_inverse=True)
    _, c = np.unique(codes, return_inverse=True)
    joint = np.zeros((x.max() + 1, c.max() + 1), dtype=np.int64)
    np.add.at(joint, (x, c), 1)
    h_x, h_c = count_entropy(joint.sum(axis=1)), count_entropy(joint.sum(axis=0))
    if h_x + h_c == 0:
        return 0.0
    gain = h_x + h_c - count_entropy(joint)
    return float(2.0 * gain / (h_x + h_c))


def gene_relevance(values, codes, n_classes) -> float:
    """SU of one gene with the class after MDL discretisation of its values
    (:func:`interval_relevance` of :func:`discretised`)."""
    return interval_relevance(discretised(values, codes, n_classes), codes)


def discretised(values, codes, n_classes):
    """The interval of each of a gene's values under its MDL cut points
    (:func:`mdl_cut_points`), ndarray of int64 from 0: the discrete gene ``SU.java`` works on."""
    return intervals_under(mdl_cut_points(values, codes, n_classes), values)


def intervals_under(cuts, values):
    """The interval of each of ``values`` between sorted ``cuts``, ndarray of int64 from 0."""
    return np.searchsorted(cuts, values, side="right")


def interval_relevance(intervals, codes) -> float:
    """SU with the class of a :func:`discretised` gene (0 when MDL accepted no cut: every
    value in interval 0, one interval carries no information). A cut lies between two
    values, so some value lies above it: a gene with a cut has a value in interval 1."""
    if not np.any(intervals):
        return 0.0
    return symmetric_uncertainty(intervals, codes)


def interval_entropies(intervals):
    """Entropy in bits of each row of discrete values (:func:`discretised` genes), ndarray of
    float64 of shape (n_rows,).

    Parameters
    ----------
    intervals : ndarray of int of shape (n_rows, n_samples)
        Values from 0.
    """
    intervals = np.asarray(intervals, dtype=np.int64)
    n_rows = intervals.shape[0]
    if n_rows == 0:
        return np.zeros(0)
    k = int(intervals.max()) + 1
    counts = np.bincount((np.arange(n_rows)[:, None] * k + intervals).ravel(),
                         minlength=n_rows * k).reshape(n_rows, k)
    return _row_entropies(counts.astype(float))


def mutual_symmetric_uncertainty(bins, others, entropies=None):
    """SU between one discrete gene and each of several others (``SU.get_su`` of the authors'
    ``SU.java``, Tran, Xue & Zhang 2019): :func:`symmetric_uncertainty` with another gene in
    place of the class, for many genes at once.

    Parameters
    ----------
    bins : ndarray of int of shape (n_samples,)
        The intervals of one gene (:func:`discretised`), from 0.
    others : ndarray of int of shape (n_others, n_samples)
        The intervals of the other genes, from 0.
    entropies : (float, ndarray of shape (n_others,)), optional
        The entropies of ``bins`` and of each of ``others`` (:func:`interval_entropies`),
        when the caller keeps them; computed here otherwise.

    Returns
    -------
    ndarray of float64 of shape (n_others,)
        In [0, 1]; 0 where both genes are constant (no information either way).
    """
    bins = np.asarray(bins, dtype=np.int64)
    others = np.asarray(others, dtype=np.int64).reshape(-1, bins.size)
    n_others = others.shape[0]
    if n_others == 0:
        return np.zeros(0)
    if entropies is None:
        entropies = interval_entropies(bins[None])[0], interval_entropies(others)
    h_x, h_y = entropies
    k_x, k_y = int(bins.max()) + 1, int(others.max()) + 1
    rows = np.arange(n_others)[:, None] * (k_x * k_y)
    joint = np.bincount((rows + bins * k_y + others).ravel(),
                        minlength=n_others * k_x * k_y).reshape(n_others, k_x * k_y)
    total = h_x + np.asarray(h_y, dtype=float)
    gain = total - _row_entropies(joint.astype(float))
    return np.divide(2.0 * gain, total, out=np.zeros(n_others), where=total > 0)


def block_relevance(rows, codes, n_classes):
    """:func:`gene_relevance` of each row of ``rows`` (ndarray of shape (n_genes,
    n_samples)), the same bits (:func:`block_cut_points`), ndarray of float64: 0 where MDL
    accepted no cut, as :func:`interval_relevance` gives."""
    scores = np.zeros(len(rows))
    for j, cuts in enumerate(block_cut_points(rows, codes, n_classes)):
        if cuts.size:
            scores[j] = interval_relevance(intervals_under(cuts, rows[j]), codes)
    return scores


def relevance_scores(data, codes, genes, comm=None, table=None):
    """SU with the class of each of ``genes`` (:func:`gene_relevance`, by blocks of genes:
    :func:`block_relevance`), ndarray of float64.

    Parameters
    ----------
    data : GeneMajor
        The training samples (the fitness engine's, ``scorer.data``).
    codes : ndarray of int of shape (n_samples,)
    genes : ndarray of int
    comm : Comm, optional
        With P ranks the genes are split in contiguous blocks, each rank scores its block and
        the scores are allgathered (``8 len(genes)`` bytes): every rank ends with the same
        array, each value computed exactly as in a serial run.
    table : GeneTable, optional
        VLPSO's local-search table (:class:`~hpcswarm.swarm.methods.vlpso.local_search.GeneTable`,
        anything with ``learn(genes)`` and ``class_su``): this rank's genes are learned into
        it (their intervals from the same MDL cut points) and their scores read from it,
        the same values, so its search does not discretise them again.
    """
    comm = as_comm(comm)
    genes = np.asarray(genes, dtype=np.int64)
    codes = np.asarray(codes)
    n_classes = int(codes.max()) + 1 if codes.size else 0
    start, stop = block_range(genes.size, comm.size, comm.rank)
    scores = np.empty(stop - start)
    for first in range(start, stop, GENE_BLOCK):
        block = genes[first:min(first + GENE_BLOCK, stop)]
        if table is not None:
            table.learn(block)
            scores[first - start:first - start + block.size] = table.class_su[block]
            continue
        scores[first - start:first - start + block.size] = block_relevance(
            data.take(block), codes, n_classes)
    return comm.allgatherv(scores, counts=block_counts(genes.size, comm.size))


def relevance_order(scores):
    """Gene indices by decreasing SU, ties by increasing index, ndarray of int."""
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")
