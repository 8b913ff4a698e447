"""Validation splits fixed once from a seed: leave-one-out, stratified n-fold, holdout.

Xue, Zhang and Browne (2012, Sect. 3) insist that every fitness evaluation of a run uses
the same n folds; the folds are therefore drawn once, here, and handed to the evaluator.
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
