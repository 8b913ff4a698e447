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
    n_rows = dist2.shape[0]
    if k == 1:
        nearest = dist2.argmin(axis=1)
        kth = dist2[np.arange(n_rows), nearest]
    else:
        kth = np.partition(dist2, k - 1, axis=1)[:, k - 1]
    limit = kth + 2.0 * (slack_rows + slack_cols.max())
    near = dist2 <= limit[:, None]
    if k == 1:
        predicted = y_train[nearest]
    else:
        one_hot = np.zeros((y_train.shape[0], n_classes))
        one_hot[np.arange(y_train.shape[0]), y_train] = 1.0
        predicted = (near @ one_hot).argmax(axis=1)
    if np.count_nonzero(near) == n_rows * k:  # every row has exactly its k neighbours
        return predicted
    for row in np.flatnonzero(np.count_nonzero(near, axis=1) > k):
        columns = np.flatnonzero(near[row])
        distances = exact(row, columns)
        nearest_k = columns[np.lexsort((columns, distances))[:k]]
        predicted[row] = np.bincount(y_train[nearest_k], minlength=n_classes).argmax()
    return predicted
