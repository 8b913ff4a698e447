"""The k-NN fitness arithmetic written once for any array module: numpy here, CuPy on a GPU.

Every function takes the array module ``xp`` (``numpy`` or ``cupy``) and arrays of that
module, and calls only functions both modules have, so the same code runs in CI with numpy
and on a device with CuPy. They compute what the CPU engine computes: the Gram-form
distances of a full evaluation (:func:`~hpcswarm.fitness.distances.gram_rows`), the
incremental update of a cached state by flipped genes (Tran, Xue, Zhang and Nguyen 2016,
Sect. 3.2; :func:`~hpcswarm.fitness.distances.flip_terms`), the one-gene flips of the greedy
steps (:mod:`~hpcswarm.fitness.single_flips`) and the multi-gene tries of the local search
(:mod:`~hpcswarm.fitness.multi_flips`), each with the same rounding bound, and the decision
of the rows that bound settles (:func:`settle_rows`, the rule of
:func:`~hpcswarm.fitness.knn.knn_predict`). A row the bound leaves open is reported, for the
caller to decide by the CPU's exact refinement; the correct counts are then the CPU path's,
because both decide every row from exact distances.
"""

from hpcswarm.fitness.distances import gram_bound_factor
from hpcswarm.fitness.incremental import flip_drift, slack_bound


def to_host(xp, array):
    """``array`` as a numpy array (a copy from the device for CuPy, itself for numpy)."""
    return xp.asnumpy(array) if hasattr(xp, "asnumpy") else array


def exclude_own_fold(xp, dist2, row_folds, folds):
    """Set to ``inf`` (in place) the columns of each row's own fold.

    Parameters
    ----------
    dist2 : array of shape (n_rows, n_samples)
    row_folds : array of int of shape (n_rows,)
        Fold id of each row (a held-out sample: ``>= 0``).
    folds : array of int of shape (n_samples,)
        Fold id of every column (:func:`~hpcswarm.fitness.folds.fold_ids`).
    """
    dist2[row_folds[:, None] == folds[None, :]] = xp.inf
    return dist2


def gram_distances(xp, values, sq, rows):
    """Gram-form squared distances of the samples ``rows`` to every sample.

    ``sq[i] + sq[j] - 2 x_i . x_j`` over the selected genes, as
    :func:`~hpcswarm.fitness.distances.gram_rows`, with its bound
    ``gram_bound_factor(n_selected) * (sq[i] + sq[j])``.

    Parameters
    ----------
    values : array of float64 of shape (n_selected, n_samples)
    sq : array of shape (n_samples,)
        Squared norms over the selected genes.
    rows : array of int of shape (n_rows,)

    Returns
    -------
    array of shape (n_rows, n_samples)
    """
    dist2 = xp.matmul(values[:, rows].T, values)
    dist2 *= -2.0
    dist2 += sq[None, :]
    dist2 += sq[rows, None]
    return dist2


def flip_terms(xp, added, removed):
    """The factors of the change of the distances when the genes ``added`` enter and
    ``removed`` leave: ``change[i, j] = left[:, i] @ right[:, j]``.

    One product of inner size F + 2, as :func:`~hpcswarm.fitness.distances.flip_terms`: the
    change of ``dist2[i, j]`` is ``d_i + d_j - 2 (sum_added x_gi x_gj - sum_removed x_gi
    x_gj)``, erring by at most ``0.5 * gram_bound_factor(F) * (magnitude_i + magnitude_j)``.

    Parameters
    ----------
    added, removed : array of float64 of shape (n_added, n_samples), (n_removed, n_samples)

    Returns
    -------
    left, right : array of shape (F + 2, n_samples)
    delta_sq, magnitude : array of shape (n_samples,)
        The change of the squared norms, and the squared norms over the flipped genes.
    """
    sq_added = (added * added).sum(axis=0)
    sq_removed = (removed * removed).sum(axis=0)
    delta_sq = sq_added - sq_removed
    ones = xp.ones_like(delta_sq)
    left = xp.concatenate([added, removed, delta_sq[None], ones[None]])
    right = xp.concatenate([-2.0 * added, 2.0 * removed, ones[None], delta_sq[None]])
    return left, right, delta_sq, sq_added + sq_removed


def single_flip_distances(xp, dist2, sq, drift, n_selected, values, rows, leaving):
    """Distances and slacks of a cached subset with each of B genes flipped alone.

    ``dist2[r, j] +- (x_gi - x_gj)^2`` (``i`` the sample of row ``r``), the one-gene update of
    Tran et al. (2016, Sect. 3.2) computed directly, with the bound of
    :func:`~hpcswarm.fitness.single_flips.single_flip_distances`.

    Parameters
    ----------
    dist2 : array of shape (n_rows, n_samples)
        The cached distances (``inf`` on each row's own fold); left unchanged.
    sq, drift : array of shape (n_samples,)
        The cached squared norms and drift bound.
    n_selected : int
        Genes of the cached subset.
    values : array of float64 of shape (B, n_samples)
        The B genes' values.
    rows : array of int of shape (n_rows,)
    leaving : bool
        Whether the B genes all leave the subset (else they all enter).

    Returns
    -------
    dist2 : array of shape (B, n_rows, n_samples)
    slack : array of shape (B, n_samples)
        ``|dist2[b, r, j] - exact reference| <= slack[b, rows[r]] + slack[b, j]``.
    """
    change = values[:, rows, None] - values[:, None, :]
    change *= change
    squares = values * values
    if leaving:
        flipped = dist2[None] - change
        sq, n_selected = sq - squares, n_selected - 1
    else:
        change += dist2[None]
        flipped = change
        sq, n_selected = sq + squares, n_selected + 1
    return flipped, slack_bound(sq, flip_drift(drift, sq, squares, 1), n_selected)


def multi_flip_distances(xp, dist2, sq, drift, values, leaving, n_selected, rows):
    """Distances and slacks of a cached subset with each of B gene sets flipped together.

    ``dist2[r, j] + d_i + d_j - 2 G_b[i, j]`` with the signed Gram matrix
    ``G_b = sum_{g in F_b} s_g x_g x_g^T`` and ``d = diag(G_b)`` (Tran et al. 2016,
    Sect. 3.2), one batched product, with the bound of
    :func:`~hpcswarm.fitness.multi_flips.multi_flip_distances`.

    Parameters
    ----------
    dist2 : array of shape (n_rows, n_samples)
        The cached distances; left unchanged.
    sq, drift : array of shape (n_samples,)
    values : array of float64 of shape (B, n_flipped, n_samples)
    leaving : array of bool of shape (B, n_flipped)
        Whether each flipped gene leaves the subset (else it enters).
    n_selected : array of int of shape (B,)
        Genes of each try's subset.
    rows : array of int of shape (n_rows,)

    Returns
    -------
    dist2 : array of shape (B, n_rows, n_samples)
    slack : array of shape (B, n_samples)
    """
    n_flipped = values.shape[1]
    signed = values * xp.where(leaving, -1.0, 1.0)[:, :, None]
    gram = xp.matmul(values[:, :, rows].transpose(0, 2, 1), signed)
    delta_sq = (values * signed).sum(axis=1)
    magnitude = (values * values).sum(axis=1)
    gram *= -2.0
    gram += delta_sq[:, rows, None]
    gram += delta_sq[:, None, :]
    gram += dist2[None]
    sq = sq[None, :] + delta_sq
    new_drift = flip_drift(drift[None, :], sq, magnitude, n_flipped)
    return gram, slack_bound(sq, new_drift, n_selected[:, None])


def full_slack(sq, n_selected):
    """The bound of a full evaluation's Gram-form distances, per sample (see
    :func:`~hpcswarm.fitness.distances.gram_bound_factor`)."""
    return gram_bound_factor(n_selected) * sq


def settle_rows(xp, dist2, slack_rows, slack_cols, codes, row_codes, k, n_classes,
                row_tally, n_tallies):
    """The correct k-NN predictions of the rows whose k nearest neighbours the bound settles,
    counted per tally (:class:`~hpcswarm.fitness.rowblocks.HeldOutRows`: one for all rows, or
    one per class).

    The rule of :func:`~hpcswarm.fitness.knn.knn_predict`: with ``b`` a row's k-th smallest
    distance and ``e = slack_row + max(slack_cols)``, the columns with ``dist2 <= b + 2 e``
    hold every column whose exact distance can be among the k smallest; where exactly k
    qualify they are the neighbours, and the row's vote (the class of the nearest for
    k = 1, else the majority, ties to the smallest class code) is exact. The other rows are
    *open*: only exact distances decide them.

    Parameters
    ----------
    dist2 : array of shape (..., n_rows, n_samples)
        ``inf`` on the columns a row may not use.
    slack_rows : array of shape (..., n_rows)
    slack_cols : array of shape (..., n_samples)
    codes : array of int of shape (n_samples,)
        Class codes of the columns.
    row_codes : array of int of shape (n_rows,)
        Class codes of the rows.
    k, n_classes : int
    row_tally : array of int of shape (n_rows,)
        The tally a correct prediction of each row is counted in.
    n_tallies : int

    Returns
    -------
    correct : array of int of shape (..., n_tallies)
        Correct predictions among the settled rows, per tally.
    open_rows : array of bool of shape (..., n_rows)
    """
    if k == 1:
        nearest = xp.argmin(dist2, axis=-1)
        kth = xp.take_along_axis(dist2, nearest[..., None], axis=-1)[..., 0]
    else:
        kth = xp.partition(dist2, k - 1, axis=-1)[..., k - 1]
    limit = kth + 2.0 * (slack_rows + slack_cols.max(axis=-1, keepdims=True))
    near = dist2 <= limit[..., None]
    settled = near.sum(axis=-1) == k
    if k == 1:
        predicted = codes[nearest]
    else:
        votes = xp.stack([(near & (codes == c)).sum(axis=-1) for c in range(n_classes)])
        predicted = votes.argmax(axis=0)
    hits = settled & (predicted == row_codes)
    if n_tallies == 1:
        correct = hits.sum(axis=-1)[..., None]
    else:
        correct = xp.stack([(hits & (row_tally == t)).sum(axis=-1) for t in range(n_tallies)],
                           axis=-1)
    return correct, ~settled
