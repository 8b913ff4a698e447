"""Validation splits fixed once from a seed: leave-one-out, stratified n-fold, holdout.

Xue, Zhang and Browne (2012, Sect. 3) insist that every fitness evaluation of a run uses
the same n folds; the folds are therefore drawn once, here, and handed to the evaluator.

The evaluator holds them as one fold id per sample (:func:`fold_ids`): a held-out sample
of fold ``f`` is classified by every sample outside fold ``f``, so membership costs O(n)
memory however many folds there are (leave-one-out has n of them).
"""

import numpy as np
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

HOLDOUT_TEST_FRACTION = 0.3
"""Share of each class held out by the ``"holdout"`` scheme (Li et al.: 70 % train, 30 % test)."""


def parse_cv(cv):
    """Normalise a validation scheme to ``"loo"``, ``"holdout"`` or an int n >= 2.

    Accepts the strings of the command line too (``"10"`` means 10-fold).
    """
    if isinstance(cv, str):
        text = cv.strip().lower()
        if text in ("loo", "holdout"):
            return text
        if text.isdigit():
            cv = int(text)
        else:
            raise ValueError(f"cv must be 'loo', 'holdout' or an integer n >= 2, got {cv!r}")
    if isinstance(cv, (bool, np.bool_)) or not isinstance(cv, (int, np.integer)):
        raise ValueError(f"cv must be 'loo', 'holdout' or an integer n >= 2, got {cv!r}")
    if cv < 2:
        raise ValueError(f"cv must be 'loo', 'holdout' or an integer n >= 2, got {cv}")
    return int(cv)


def random_state_from_seed(seed):
    """A 32-bit ``random_state`` for scikit-learn splitters derived from ``seed``.

    ``seed`` is an int or a :class:`numpy.random.SeedSequence`; the same seed gives the same
    folds on every rank and in every run.
    """
    sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return int(sequence.generate_state(1)[0])


def make_folds(y, cv, seed):
    """Train/test index pairs of a validation scheme, fixed once from ``seed``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    cv : {"loo", "holdout"} or int
        ``"loo"``: leave-one-out (Tran et al. 2016, Chuang et al. 2008); an int n >= 2:
        stratified n-fold, shuffled with a ``random_state`` derived from ``seed``
        (Gu et al. 2018: 10-fold; Li et al.: 5-fold); ``"holdout"``: one stratified
        70/30 split.
    seed : int or numpy.random.SeedSequence
        Fixes the folds; ignored by ``"loo"``.

    Returns
    -------
    list of (ndarray, ndarray)
        ``(train_idx, test_idx)`` pairs of sorted int64 indices.

    Raises
    ------
    ValueError
        If ``cv`` is not a scheme, or a class has fewer samples than the scheme needs
        (n for n-fold, 2 for holdout, and 2 samples overall for leave-one-out).
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    cv = parse_cv(cv)
    n_samples = y.shape[0]
    index = np.arange(n_samples, dtype=np.int64)
    if cv == "loo":
        if n_samples < 2:
            raise ValueError(f"leave-one-out needs at least 2 samples, got {n_samples}")
        return [(np.delete(index, i), index[i:i + 1]) for i in range(n_samples)]
    classes, counts = np.unique(y, return_counts=True)
    needed = 2 if cv == "holdout" else cv
    small = counts < needed
    if small.any():
        label, count = classes[small][0].item(), int(counts[small][0])
        scheme = "a stratified holdout" if cv == "holdout" else f"stratified {cv}-fold"
        raise ValueError(f"class {label!r} has {count} samples, fewer than the {needed} "
                         f"that {scheme} needs")
    state = random_state_from_seed(seed)
    if cv == "holdout":
        splitter = StratifiedShuffleSplit(n_splits=1, test_size=HOLDOUT_TEST_FRACTION,
                                          random_state=state)
    else:
        splitter = StratifiedKFold(n_splits=cv, shuffle=True, random_state=state)
    return [(np.sort(train).astype(np.int64), np.sort(test).astype(np.int64))
            for train, test in splitter.split(np.zeros((n_samples, 1)), y)]


NOT_HELD_OUT = -1
"""Fold id of a sample that is never held out (the training part of a holdout)."""


def fold_ids(y, cv, seed):
    """Fold id of every sample for a validation scheme, as :func:`make_folds` draws the folds.

    Parameters
    ----------
    y, cv, seed
        As for :func:`make_folds`.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        ``f`` for a sample held out in fold ``f`` (the position of the fold in
        :func:`make_folds`' list), :data:`NOT_HELD_OUT` for a sample only ever trained on.
        Leave-one-out is ``arange(n_samples)``, built without the n folds.
    """
    y = np.asarray(y)
    if parse_cv(cv) == "loo":
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        if y.shape[0] < 2:
            raise ValueError(f"leave-one-out needs at least 2 samples, got {y.shape[0]}")
        return np.arange(y.shape[0], dtype=np.int64)
    return ids_from_folds(make_folds(y, cv, seed), y.shape[0])


def ids_from_folds(folds, n_samples):
    """Fold ids (see :func:`fold_ids`) of explicit ``(train_idx, test_idx)`` pairs.

    Each fold's test part must be disjoint from the others', and its training part every
    sample outside its test part (leave-one-out, n-fold and holdout all are so), which is
    what lets one id per sample describe the folds.

    Raises
    ------
    ValueError
        Empty or out-of-range indices, overlapping test parts, or a training part that is
        not the complement of its test part.
    """
    ids = np.full(n_samples, NOT_HELD_OUT, dtype=np.int64)
    count = 0
    for count, (train, test) in enumerate(folds, start=1):
        train = np.asarray(train, dtype=np.int64)
        test = np.asarray(test, dtype=np.int64)
        for part in (train, test):
            if part.ndim != 1 or part.size == 0 or part.min() < 0 or part.max() >= n_samples:
                raise ValueError(f"fold indices must be non-empty 1-D arrays within "
                                 f"[0, {n_samples})")
        if np.any(ids[test] != NOT_HELD_OUT) or np.unique(test).size != test.size:
            raise ValueError("the test parts of the folds overlap")
        ids[test] = count - 1
        inside = np.zeros(n_samples, dtype=bool)
        inside[train] = True
        if inside[test].any():
            raise ValueError("a fold's training and test indices overlap")
        if np.count_nonzero(inside) + test.size != n_samples:
            raise ValueError("a fold's training part must be every sample outside its test part")
    if count == 0:
        raise ValueError("folds must hold at least one (train_idx, test_idx) pair")
    return ids


def folds_from_ids(ids):
    """The ``(train_idx, test_idx)`` pairs of fold ids, in fold order (as :func:`make_folds`)."""
    ids = np.asarray(ids)
    index = np.arange(ids.size, dtype=np.int64)
    return [(index[ids != fold], index[ids == fold]) for fold in range(int(ids.max()) + 1)]
