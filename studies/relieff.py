"""ReliefF weights as ``skrebate.ReliefF`` computes them, each sample's update taken over all
genes at once.

ReliefF (Kononenko 1994; Robnik-Sikonja & Kononenko 2003, Fig. 3): for each training sample,
its ``k`` nearest hits and, of each other class, its ``k`` nearest misses; a gene's weight
falls by its differences to the hits and rises by its differences to the misses.
``skrebate`` 0.8.4 (Urbanowicz et al. 2018) scores every (sample, gene) pair in a Python call,
5 to 25 seconds a fit on a microarray's training rows (the peers study fits it six times a
task). This module makes the same arithmetic, in the same order, one numpy operation per
sample over every gene, so that its weights equal skrebate's bit for bit on float64 rows
(``tests/test_relieff.py`` compares them on binary and multi-class labels, continuous,
discrete and mixed genes, genes at the discrete threshold, tied distances and classes of one
sample), and so does every ranking read from them.

skrebate's choices, each kept here (``skrebate/relieff.py`` and ``skrebate/scoring_utils.py``):

- a gene with at most ``categorical_threshold`` (10) distinct values on the rows is discrete:
  its difference is 0 or 1; any other gene is continuous, its difference ``|a - b|`` over its
  range on the rows, and where both kinds are present (``mixed``) a continuous difference
  above the gene's standard deviation counts 1 (skrebate's ramp);
- the distance is Manhattan over the continuous genes scaled to their range, plus the number
  of discrete genes that differ (``mixed``), or the Hamming fraction (discrete genes only);
- the neighbours are taken in the order of numpy's default ``argsort`` of the distances, the
  sample itself last, up to ``k`` hits and ``k`` misses (binary) or ``k`` of each miss class
  (multi-class); so a sample whose class has ``k`` samples or fewer is among its own hits
  (difference 0), and every sample has a hit and a miss;
- binary: the mean difference to the misses less the mean difference to the hits, over the
  number of samples;
- multi-class: each miss class's summed differences weighted by its share of the misses found
  and by the number of miss classes, over the misses found, less the hits' mean difference,
  over the number of samples (``scoring_utils.compute_score``);
- the weights are the samples' updates added in sample order.

Only what the peers study uses is built: float64 rows without missing values, binary or
multi-class labels, an integer ``k`` from 1 to 128 (numpy's pairwise block, which
:func:`pairwise_sum` follows).
"""

import sys

import numpy as np
from scipy.spatial.distance import pdist, squareform

CATEGORICAL_THRESHOLD = 10
"""skrebate's ``categorical_threshold``: a gene with at most this many distinct values on the
rows is discrete."""
PAIRWISE_BLOCK = 128
"""numpy's ``PW_BLOCKSIZE``: up to this many values, its pairwise sum is one block of eight
partial sums."""


def pairwise_sum(columns):
    """Row by row, the sum of ``columns`` (genes x 1 to :data:`PAIRWISE_BLOCK` values) in the
    order of numpy's pairwise summation of a 1-D array (``ndarray.sum``: sequential below 8
    values, else eight partial sums added in pairs, then the remainder), as skrebate sums one
    gene's differences; ``ndarray.sum(axis=1)`` adds in another order. The same order as
    ``hpcswarm.swarm.methods.vlpso.redundancy_kernel._block_sum``, which sums one row of
    scalars in compiled code (its accumulators updated in place); here every gene at once."""
    count = columns.shape[1]
    if count < 8:
        total = np.full(columns.shape[0], -0.0)
        for place in range(count):
            total = total + columns[:, place]
        return total
    partial = [columns[:, place].copy() for place in range(8)]
    place = 8
    while place < count - count % 8:
        for lane in range(8):
            partial[lane] = partial[lane] + columns[:, place + lane]
        place += 8
    total = (((partial[0] + partial[1]) + (partial[2] + partial[3]))
             + ((partial[4] + partial[5]) + (partial[6] + partial[7])))
    for rest in range(place, count):
        total = total + columns[:, rest]
    return total


class _Genes:
    """Each gene's kind and scale on the rows, as ``ReliefF._get_attribute_info`` finds them."""

    def __init__(self, X):
        ordered = np.sort(X, axis=0)
        distinct = 1 + np.count_nonzero(np.diff(ordered, axis=0), axis=0)
        self.discrete = distinct <= CATEGORICAL_THRESHOLD
        self.continuous = np.flatnonzero(~self.discrete)
        self.low = ordered[0]
        self.span = ordered[-1] - ordered[0]
        self.mixed = bool(self.discrete.any()) and self.continuous.size > 0
        self.deviation = np.zeros(X.shape[1])
        if self.mixed:  # the ramp's threshold; np.std of each column, as skrebate rounds it
            for gene in self.continuous:
                self.deviation[gene] = np.std(X[:, gene])


def distances(X, genes):
    """The samples' distance matrix of ``ReliefF._distarray_no_missing``."""
    if genes.continuous.size == 0:
        return squareform(pdist(X, metric="hamming"))
    scaled = ((X[:, genes.continuous] - genes.low[genes.continuous])
              / genes.span[genes.continuous])
    manhattan = squareform(pdist(scaled, metric="cityblock"))
    discrete = np.flatnonzero(genes.discrete)
    if discrete.size == 0:
        return manhattan
    return np.add(squareform(pdist(X[:, discrete], metric="hamming")) * X.shape[1],
                  manhattan)


def neighbours(distance_row, sample, y, k, binary):
    """The sample's neighbours in the order ``ReliefF._find_neighbors`` takes them from
    numpy's default ``argsort`` of its distances (the sample itself last): the first ``k`` of
    its own class (the sample too, where its class has ``k`` samples or fewer, as in
    skrebate), and the first ``k`` of the other classes together (binary) or of each other
    class (multi-class)."""
    row = distance_row.copy()
    row[sample] = sys.maxsize
    order = np.argsort(row)
    in_order = y[order]
    groups = (in_order == y[sample]) if binary else in_order
    taken = np.zeros(order.size, dtype=bool)
    for group in np.unique(groups):
        members = groups == group
        taken |= members & (np.cumsum(members) <= k)
    return order[taken]


def differences(X_by_gene, sample, taken, genes):
    """Genes x neighbours: each gene's difference between the sample and each neighbour, as
    ``scoring_utils.ramp_vec`` (continuous genes) and the discrete comparison make it."""
    raw = np.abs(X_by_gene[:, sample, None] - X_by_gene[:, taken])
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = raw / genes.span[:, None]
    if genes.mixed:
        scaled = np.where(raw > genes.deviation[:, None], 1.0, scaled)
    unequal = (X_by_gene[:, sample, None] != X_by_gene[:, taken]).astype(np.float64)
    return np.where(genes.discrete[:, None], unequal, scaled)


def sample_update(difference, hits, labels_taken, miss_classes, n_samples):
    """One sample's update of every gene's weight (``scoring_utils.compute_score``, near
    scoring): binary where ``miss_classes`` is None, else multi-class with the other classes
    in that order (skrebate's, the order of their first sample). Every sample has a hit and a
    miss (:func:`neighbours`), so skrebate's branches for none are never taken."""
    count_hit = hits.sum()
    diff_hit = 0.0 - pairwise_sum(difference[:, hits])
    if miss_classes is None:
        count_miss = (~hits).sum()
        diff_miss = 0.0 + pairwise_sum(difference[:, ~hits])
        return ((diff_hit / count_hit) + (diff_miss / count_miss)) / n_samples
    sums, counts = [], []
    for label in miss_classes:
        places = np.flatnonzero(labels_taken == label)
        total = np.zeros(difference.shape[0])
        for place in places:
            total = total + difference[:, place]
        sums.append(total)
        counts.append(places.size)
    count_miss = float(sum(counts))
    update = np.zeros(difference.shape[0])
    for total, count in zip(sums, counts):
        update = update + total * (count / count_miss) * len(miss_classes)
    update = update / count_miss + diff_hit / count_hit
    return update / n_samples


def relieff_weights(X, y, k):
    """Every gene's ReliefF weight with ``k`` nearest hits and misses (of each other class
    where ``y`` has more than two), equal to ``skrebate.ReliefF(n_neighbors=k,
    label_type="binary" or "multiclass").fit(X, y).feature_importances_``."""
    X = np.asarray(X)
    y = np.asarray(y)
    if X.dtype != np.float64:
        raise ValueError(f"ReliefF: the rows must be float64 (skrebate computes {X.dtype} "
                         f"in {X.dtype}), got {X.dtype}")
    if not 1 <= k <= PAIRWISE_BLOCK:
        raise ValueError(f"ReliefF: k must be 1 to {PAIRWISE_BLOCK}, got {k}")
    if not np.isfinite(X).all():
        raise ValueError("ReliefF: the matrix has missing or infinite values")
    labels, first = np.unique(y, return_index=True)
    if labels.size < 2:
        raise ValueError("ReliefF: all labels are of the same class")
    binary = labels.size == 2
    by_appearance = labels[np.argsort(first)]
    genes = _Genes(X)
    distance = distances(X, genes)
    X_by_gene = np.ascontiguousarray(X.T)
    n_samples = float(X.shape[0])
    updates = []
    for sample in range(X.shape[0]):
        taken = neighbours(distance[sample], sample, y, k, binary)
        labels_taken = y[taken]
        miss_classes = None if binary else by_appearance[by_appearance != y[sample]]
        update = sample_update(differences(X_by_gene, sample, taken, genes),
                               labels_taken == y[sample], labels_taken, miss_classes,
                               n_samples)
        updates.append(np.zeros(X.shape[1]) + update)  # skrebate's scores[gene] += update
    return np.sum(updates, axis=0)
