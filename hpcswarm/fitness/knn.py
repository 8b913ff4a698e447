"""k-NN decision from approximate distances, exact where rounding could matter; tie rules.

Tie rules (the classifier of Tran et al. 2016, Gu et al. 2018 and Li et al.: majority vote
of the k nearest training samples by Euclidean distance, uniform weights):

- **Equal distances**: among training samples at the same (exact, see
  :func:`hpcswarm.fitness.distances.exact_sq_distances`) distance, the one with the lowest
  training index is nearer. For k = 1 this is what scikit-learn's brute-force
  ``KNeighborsClassifier`` does (the first minimum wins). For k > 1 scikit-learn keeps the
  survivors of its heap, which depends on the order of the data (its documentation warns so)
  and is not a rule; ours is stable sorting by (distance, index).
- **Equal votes**: the smallest class code wins, as scikit-learn's ``predict`` (the first
  maximum of the class counts).
"""

import numpy as np


def _near_sets(dist2, slack_rows, slack_cols, k):
    """The nearest column of each row (k = 1), and every column that may be among the k nearest.

    Parameters
    ----------
    dist2 : ndarray of shape (..., n_rows, n_train)
    slack_rows, slack_cols : ndarray of shape (..., n_rows), (..., n_train)
    k : int

    Returns
    -------
    nearest : ndarray of int of shape (..., n_rows), or None when k > 1
        Column of the smallest ``dist2`` of each row, the first one on equal values.
    near : ndarray of bool of shape (..., n_rows, n_train)
        ``dist2 <= b + 2 e`` (see :func:`knn_predict`); holds the k columns of smallest
        ``dist2``.
    """
    if k == 1:
        nearest = dist2.argmin(axis=-1)
        kth = np.take_along_axis(dist2, nearest[..., None], axis=-1)[..., 0]
    else:
        nearest = None
        kth = np.partition(dist2, k - 1, axis=-1)[..., k - 1].copy()  # frees the partition
    limit = kth + 2.0 * (slack_rows + slack_cols.max(axis=-1, keepdims=True))
    # limit repeated along the row, so that the comparison runs on contiguous operands
    # (numpy's loops over a broadcast last axis are several times slower)
    near = dist2.reshape(-1) <= np.repeat(limit.reshape(-1), dist2.shape[-1])
    return nearest, near.reshape(dist2.shape)


def _vote(nearest, near, y_train, n_classes):
    """Uniform vote of each row's neighbours, ties to the smallest class code.

    The class of ``nearest`` (k = 1), else the majority class of the ``near`` columns; valid
    for the rows whose ``near`` holds exactly their k neighbours.
    """
    if nearest is not None:
        return y_train[nearest]
    one_hot = np.zeros((y_train.shape[0], n_classes))
    one_hot[np.arange(y_train.shape[0]), y_train] = 1.0
    return (near @ one_hot).argmax(axis=-1)


def knn_predict(dist2, slack_rows, slack_cols, y_train, k, n_classes, exact):
    """Predicted class codes of held-out samples from approximate squared distances.

    Parameters
    ----------
    dist2 : ndarray of shape (n_rows, n_train)
        Approximate squared distance of each held-out sample (row) to each training sample;
        ``np.inf`` marks a training sample the row may not use (itself, its own fold).
    slack_rows, slack_cols : ndarray of shape (n_rows,), (n_train,)
        Error bounds: ``|dist2[r, j] - exact(r, j)| <= slack_rows[r] + slack_cols[j]``.
    y_train : ndarray of int of shape (n_train,)
        Class codes ``0 .. n_classes - 1`` of the columns.
    k : int
        Number of neighbours; every row must have at least k usable columns.
    n_classes : int
    exact : callable
        ``exact(row, columns) -> ndarray`` of exact squared distances, called only for the
        rows whose k nearest neighbours the bound cannot settle.

    Returns
    -------
    ndarray of int64 of shape (n_rows,)

    Notes
    -----
    Let ``b`` be the k-th smallest approximate distance of a row and
    ``e = slack_row + max(slack_cols)`` the row's largest error. The k samples of smallest
    approximate distance have exact distances at most ``b + e``, so every training sample
    whose exact distance can still be among the k smallest satisfies ``dist2 <= b + 2 e``;
    outside that set exact distances are strictly larger than k others. If exactly k
    samples qualify they are the neighbours (their order does not change a uniform vote);
    otherwise the qualifying samples are ranked by exact distance, then index.
    """
    nearest, near = _near_sets(dist2, slack_rows, slack_cols, k)
    predicted = _vote(nearest, near, y_train, n_classes)
    if np.count_nonzero(near) == dist2.shape[0] * k:  # every row has exactly its k neighbours
        return predicted
    for row in np.flatnonzero(np.count_nonzero(near, axis=1) > k):
        columns = np.flatnonzero(near[row])
        distances = exact(row, columns)
        nearest_k = columns[np.lexsort((columns, distances))[:k]]
        predicted[row] = np.bincount(y_train[nearest_k], minlength=n_classes).argmax()
    return predicted


def knn_predict_settled(dist2, slack_rows, slack_cols, y_train, k, n_classes):
    """:func:`knn_predict` for a block of distance matrices, where the bound settles it.

    The same decision as :func:`knn_predict` for every matrix of the block whose k nearest
    neighbours the bound settles in every row; the others need exact distances and are
    only flagged, for the caller to decide one by one.

    Parameters
    ----------
    dist2 : ndarray of shape (n_matrices, n_rows, n_train)
    slack_rows, slack_cols : ndarray of shape (n_matrices, n_rows), (n_matrices, n_train)
    y_train : ndarray of int of shape (n_train,)
    k, n_classes : int

    Returns
    -------
    predicted : ndarray of int64 of shape (n_matrices, n_rows)
        Valid for the settled matrices only.
    settled : ndarray of bool of shape (n_matrices,)
    """
    nearest, near = _near_sets(dist2, slack_rows, slack_cols, k)
    per_matrix = dist2.shape[1] * k
    if np.count_nonzero(near) == dist2.shape[0] * per_matrix:  # the usual case: all settled
        settled = np.ones(dist2.shape[0], dtype=bool)
    else:
        settled = np.count_nonzero(near, axis=(1, 2)) == per_matrix
    return _vote(nearest, near, y_train, n_classes), settled
