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


def gram_sq_distances(rows_a, rows_b):
    """Squared distances between two sets of samples through one Gram product.

    Parameters
    ----------
    rows_a : ndarray of shape (n_selected, n_a)
        Gene-major values of the selected genes (one row per gene).
    rows_b : ndarray of shape (n_selected, n_b)
        The same genes of the second set of samples.

    Returns
    -------
    dist2 : ndarray of shape (n_a, n_b)
        Approximate squared distances.
    sq_a, sq_b : ndarray of shape (n_a,), (n_b,)
        Squared norms of the samples over the selected genes. With
        ``f = gram_bound_factor(n_selected)``,
        ``|dist2[i, j] - exact[i, j]| <= f * (sq_a[i] + sq_b[j])``.
    """
    sq_a = np.einsum("gi,gi->i", rows_a, rows_a)
    sq_b = np.einsum("gi,gi->i", rows_b, rows_b)
    return sq_a[:, None] + sq_b[None, :] - 2.0 * (rows_a.T @ rows_b), sq_a, sq_b


def flip_terms(added_rows, removed_rows):
    """The factors of the change of all-pairs squared distances when genes enter and leave.

    The incremental update of Tran et al. (2016), Sect. 3.2: the distance over the new
    subset is the old one plus the squared differences over the genes that enter, minus
    those over the genes that leave. In Gram form the change of ``dist2[i, j]`` is
    ``d_i + d_j - 2 (sum_added x_gi x_gj - sum_removed x_gi x_gj)`` with ``d`` the change of
    the squared norms; here it is one product ``left[:, i] . right[:, j]`` of F + 2 terms
    (the flipped genes, then ``d`` against ones and ones against ``d``), so that a block of
    rows costs one matrix product of inner size F + 2, O(n_rows n_samples F).

    Parameters
    ----------
    added_rows, removed_rows : ndarray of shape (n_added, n_samples), (n_removed, n_samples)
        Gene-major values of the genes that enter and of those that leave.

    Returns
    -------
    left, right : ndarray of shape (F + 2, n_samples)
        ``change[i, j] = left[:, i] @ right[:, j]`` (see :func:`flip_rows`).
    delta_sq : ndarray of shape (n_samples,)
        Change of every sample's squared norm.
    magnitude : ndarray of shape (n_samples,)
        Squared norms over all flipped genes (unsigned). The change of ``dist2[i, j]`` errs
        by at most ``0.5 * gram_bound_factor(F) * (magnitude[i] + magnitude[j])``: the
        product of F + 2 terms of absolute sum at most ``2 (magnitude[i] + magnitude[j])``
        errs by ``gamma_{F+2}`` times that, and ``d`` itself by ``gamma_F magnitude``,
        together under ``(3 F + 5) u (magnitude[i] + magnitude[j])``.
    """
    delta_sq, magnitude = flip_norms(added_rows, removed_rows)
    ones = np.ones_like(delta_sq)
    left = np.concatenate([added_rows, removed_rows, delta_sq[None], ones[None]])
    right = np.concatenate([-2.0 * added_rows, 2.0 * removed_rows, ones[None], delta_sq[None]])
    return left, right, delta_sq, magnitude


def flip_norms(added_rows, removed_rows):
    """The change of every sample's squared norm when genes enter and leave, and its squared
    norm over all the flipped genes (the ``delta_sq`` and ``magnitude`` of :func:`flip_terms`).

    Parameters
    ----------
    added_rows, removed_rows : ndarray of shape (n_added, n_samples), (n_removed, n_samples)

    Returns
    -------
    delta_sq, magnitude : ndarray of shape (n_samples,)
    """
    sq_added = np.einsum("gi,gi->i", added_rows, added_rows)
    sq_removed = np.einsum("gi,gi->i", removed_rows, removed_rows)
    return sq_added - sq_removed, sq_added + sq_removed


def flip_rows(left, right, rows, out):
    """The change (see :func:`flip_terms`) of the distances of ``rows`` to every sample.

    Parameters
    ----------
    left, right : ndarray of shape (F + 2, n_samples)
    rows : slice or ndarray of int
    out : ndarray of shape (n_rows, n_samples)
        C-contiguous; overwritten and returned.
    """
    return np.matmul(left[:, rows].T, right, out=out)


def flip_gram(added_rows, removed_rows, delta_sq, out):
    """The change (see :func:`flip_terms`) of the distances of every sample to every sample.

    Where the held-out rows are every sample, the change is symmetric:
    ``2 (R^T R - A^T A) + d_i + d_j`` with ``A``, ``R`` the values of the genes that enter
    and leave and ``d = delta_sq``. Its two products are symmetric ones (BLAS ``syrk``),
    half the multiply-adds of :func:`flip_rows`. Error: each product errs by at most
    ``gamma_F`` times half ``magnitude[i] + magnitude[j]`` (doubled by the exact factor 2),
    ``d`` by ``gamma_(F+1) magnitude``, and the three sums of terms of absolute sum at most
    ``2 (magnitude[i] + magnitude[j])`` by ``6 u`` times that sum: about
    ``(2 F + 7) u (magnitude[i] + magnitude[j])`` in all, within the
    ``0.5 * gram_bound_factor(F) = (4 F + 16) u`` of :func:`flip_terms`, so the drift bound
    of a state (:func:`~hpcswarm.fitness.incremental.flip_drift`) holds unchanged.

    Parameters
    ----------
    added_rows, removed_rows : ndarray of shape (n_added, n_samples), (n_removed, n_samples)
        C-contiguous gene-major values.
    delta_sq : ndarray of shape (n_samples,)
    out : ndarray of shape (n_samples, n_samples)
        C-contiguous; overwritten and returned.
    """
    np.matmul(added_rows.T, added_rows, out=out)
    np.subtract(np.matmul(removed_rows.T, removed_rows), out, out=out)
    out *= 2.0
    out += delta_sq[None, :]
    out += delta_sq[:, None]
    return out


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
