"""Squared Euclidean distances: fast Gram (BLAS) form with a rigorous error bound; exact form.

The Gram form ``||a||^2 + ||b||^2 - 2 a.b`` costs one matrix product but loses digits to
cancellation. Every approximate distance therefore comes with a per-sample bound ``s`` such
that ``|approx[i, j] - exact[i, j]| <= s[i] + s[j]``, where ``exact`` is
:func:`exact_sq_distances`, the reference that defines the neighbour ranking. The k-NN
kernel (:mod:`hpcswarm.fitness.knn`) re-computes exactly the few candidates the bound cannot
separate, so rounding never changes a neighbour. The reference is the distance as Tran et
al. (2016, Sect. 3.3, Fig. 2b) define it: the sum over genes of squared differences.

Bounds (Higham, *Accuracy and Stability of Numerical Algorithms*, Sect. 3.1): a dot product
of m terms computed in any order errs by at most ``gamma_m |a|.|b|`` with
``gamma_m ~ m u``; a sum of m non-negative rounded squares errs by at most
``gamma_{m+2}`` relatively. Both are doubled below as a safety margin.

Data are held gene-major, ``Xt`` of shape (n_genes, n_samples), so that selecting genes
copies contiguous rows.
"""

import numpy as np

UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2


def gram_bound_factor(n_terms):
    """Per-sample error factor of Gram-form squared distances over ``n_terms`` genes.

    Gram form vs. the true value errs by at most ``(2 n + 4) u (sq_i + sq_j)``, and the
    exact reference vs. the true value by ``2 (n + 2) u (sq_i + sq_j)``; doubled for safety.
    """
    return 8.0 * (n_terms + 4) * UNIT_ROUNDOFF


def gram_sq_distances(rows_a, rows_b=None):
    """Squared distances between samples through one Gram product.

    Parameters
    ----------
    rows_a : ndarray of shape (n_selected, n_a)
        Gene-major values of the selected genes (one row per gene).
    rows_b : ndarray of shape (n_selected, n_b), optional
        Second set of samples; ``None`` means ``rows_a`` against itself.

    Returns
    -------
    dist2 : ndarray of shape (n_a, n_b)
        Approximate squared distances (exactly zero on the diagonal when ``rows_b`` is None).
    sq_a, sq_b : ndarray of shape (n_a,), (n_b,)
        Squared norms of the samples over the selected genes. With
        ``f = gram_bound_factor(n_selected)``,
        ``|dist2[i, j] - exact[i, j]| <= f * (sq_a[i] + sq_b[j])``.
    """
    if rows_b is None:
        gram = rows_a.T @ rows_a
        sq = gram.diagonal().copy()
        return sq[:, None] + sq[None, :] - 2.0 * gram, sq, sq
    sq_a = np.einsum("gi,gi->i", rows_a, rows_a)
    sq_b = np.einsum("gi,gi->i", rows_b, rows_b)
    return sq_a[:, None] + sq_b[None, :] - 2.0 * (rows_a.T @ rows_b), sq_a, sq_b


def flipped_sq_distances(dist2, added_rows, removed_rows):
    """Pairwise squared distances after genes enter and leave a subset.

    The incremental update of Tran et al. (2016), Sect. 3.2: the distance over the new
    subset is the old one plus the squared differences over the genes that enter, minus
    those over the genes that leave; done for every pair at once with two symmetric
    products (BLAS ``syrk``) of the flipped genes only, O(n_samples^2 n_flipped).

    Parameters
    ----------
    dist2 : ndarray of shape (n_samples, n_samples)
        Squared distances over the current subset.
    added_rows, removed_rows : ndarray of shape (n_added, n_samples), (n_removed, n_samples)
        Gene-major values of the genes that enter and of those that leave.

    Returns
    -------
    new_dist2 : ndarray of shape (n_samples, n_samples)
        A new array; ``dist2`` is not modified.
    delta_sq : ndarray of shape (n_samples,)
        Change of every sample's squared norm.
    magnitude : ndarray of shape (n_samples,)
        Squared norms over all flipped genes (unsigned). The change of ``dist2[i, j]`` errs
        by at most ``(2 F + 6) u (magnitude[i] + magnitude[j])`` with F flipped genes, within
        ``0.5 * gram_bound_factor(F) * (magnitude[i] + magnitude[j])``.
    """
    gram = added_rows.T @ added_rows
    gram_removed = removed_rows.T @ removed_rows
    sq_added = gram.diagonal().copy()
    sq_removed = gram_removed.diagonal().copy()
    gram -= gram_removed
    delta_sq = sq_added - sq_removed
    gram *= -2.0
    gram += delta_sq[:, None]
    gram += delta_sq[None, :]
    gram += dist2
    return gram, delta_sq, sq_added + sq_removed


def exact_sq_distances(query, candidates):
    """Reference squared distances, the sum of squared differences over the selected genes.

    This is the definition of the neighbour ranking. The sum runs over each row of a
    C-contiguous (n_candidates, n_selected) array, so a distance depends only on the two
    samples and the (sorted) selected genes, never on which other candidates are computed
    alongside it: the full and the incremental paths therefore rank neighbours identically.

    Parameters
    ----------
    query : ndarray of shape (n_selected,)
        Values of the held-out sample on the selected genes, in increasing gene order.
    candidates : ndarray of shape (n_candidates, n_selected)
        Values of the candidate training samples on the same genes.

    Returns
    -------
    ndarray of shape (n_candidates,)
    """
    diff = np.ascontiguousarray(candidates - query[None, :])
    np.multiply(diff, diff, out=diff)
    return diff.sum(axis=1)
