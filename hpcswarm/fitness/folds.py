"""Validation splits fixed once from a seed: leave-one-out, stratified n-fold, holdout.

Xue, Zhang and Browne (2012, Sect. 3) insist that every fitness evaluation of a run uses
the same n folds; the folds are therefore drawn once, here, and handed to the evaluator.

The evaluator holds them as one fold id per sample (:func:`fold_ids`): a held-out sample
of fold ``f`` is classified by every sample outside fold ``f``, so membership costs O(n)
memory however many folds there are (leave-one-out has n of them).

Stratified n-fold follows one of two rules (:func:`fold_rule`):

* ``"sklearn"``: scikit-learn's :class:`~sklearn.model_selection.StratifiedKFold` (shuffled),
  whenever it accepts the labels, i.e. while some class has at least n samples. A class
  smaller than n is then missing from some test folds; scikit-learn warns, and so do we,
  once (:class:`FoldWarning`).
* ``"round-robin"``: where every class is smaller than n (Tran et al.'s 9 Tumors: 60 samples,
  classes of 2 to 9, 10 folds), scikit-learn refuses. The papers ran Weka, whose stratified
  cross-validation (``Instances.stratify``) sorts the samples by class and deals them to the
  folds in turn; this rule does the same, each class shuffled from the seed, the deal
  continuing from one class to the next. Every class is then spread as evenly as its size
  allows (its count in two folds differs by at most one) and fold sizes differ by at most one.

Only what cannot work is refused: more folds than samples (a fold would be empty).

The stratified n-fold and holdout splits are scikit-learn's algorithms (``StratifiedKFold``
with ``shuffle=True``, ``StratifiedShuffleSplit`` with one split), written out here in a few
lines of numpy so that the engine does not import scikit-learn (over a second per process);
they draw from the same legacy ``RandomState`` seeded with the same ``random_state``, and
``tests/test_fitness_folds.py`` checks they give scikit-learn's folds.
"""

import contextvars
import math
import os
import sys
import warnings
from contextlib import contextmanager

import numpy as np

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
        if text.isascii() and text.isdigit():
            cv = int(text)
        else:
            raise ValueError(f"cv must be 'loo', 'holdout' or an integer n >= 2, got {cv!r}")
    if isinstance(cv, (bool, np.bool_)) or not isinstance(cv, (int, np.integer)):
        raise ValueError(f"cv must be 'loo', 'holdout' or an integer n >= 2, got {cv!r}")
    if cv < 2:
        raise ValueError(f"cv must be 'loo', 'holdout' or an integer n >= 2, got {cv}")
    return int(cv)


class FoldWarning(UserWarning):
    """Stratified folds that leave a small class out of some test folds (shown once)."""


def fold_rule(y, cv):
    """The rule that deals the folds of ``cv`` on labels ``y``: ``"sklearn"`` or ``"round-robin"``.

    Leave-one-out and holdout are ``"loo"`` and ``"holdout"``; n-fold is ``"sklearn"``
    while some class has at least n samples (scikit-learn's ``StratifiedKFold`` accepts the
    labels), else ``"round-robin"`` (Weka's deal, see the module notes).
    """
    cv = parse_cv(cv)
    if cv in ("loo", "holdout"):
        return cv
    counts = np.unique(np.asarray(y), return_counts=True)[1]
    return "sklearn" if counts.max() >= cv else "round-robin"


def round_robin_folds(y, n_folds, rng):
    """Fold number of every sample, dealt class by class in turn (Weka's stratified CV).

    The samples of each class (classes in sorted order) are shuffled by ``rng`` and put one
    after the other; sample number ``p`` of that sequence goes to fold ``p mod n_folds``.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    n_folds : int
        At most ``n_samples``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
    """
    order = np.concatenate([rng.permutation(np.flatnonzero(y == label))
                            for label in np.unique(y)])
    fold_of = np.empty(y.shape[0], dtype=np.int64)
    fold_of[order] = np.arange(order.size) % n_folds
    return fold_of


_WARNED = set()
"""What :func:`warn_once` has issued in this process, by key (a :class:`FoldWarning`:
``(n_folds, the small classes)``), each shown once: Python's own once-per-location rule
forgets them whenever a filter changes (as scikit-learn's ``cross_val_score`` does around
every fit), and the outer folds of a protocol give the same classes different counts."""


def warn_once(key, message, category):
    """``warnings.warn(message, category)`` at the user's line (:func:`user_stacklevel`)
    the first time this process meets ``key``; nothing after."""
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, category, stacklevel=user_stacklevel())

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""The folder of the ``hpcswarm`` package: frames under it are not the user's code."""


def user_stacklevel():
    """The ``stacklevel`` of a ``warnings.warn`` in the caller of this function that names
    the first frame outside the ``hpcswarm`` package: the user's call (scikit-learn's when
    a scikit-learn tool fits the selector), not the line of hpcswarm that warns."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_CLASS_NAMES = contextvars.ContextVar("hpcswarm_class_names", default=None)
"""The class names that :func:`classes_named` gives the codes of the labels (None: the labels
are shown as they are)."""


@contextmanager
def classes_named(class_names):
    """Inside the block, a :class:`FoldWarning` calls each class by its name: the labels the
    folds are drawn on are class codes, which index ``class_names`` (a dataset's), so that
    the command line names a class as a Python caller whose labels are the names sees it."""
    token = _CLASS_NAMES.set(list(class_names))
    try:
        yield
    finally:
        _CLASS_NAMES.reset(token)


def _class_name(label):
    """``label``'s name under :func:`classes_named`, else ``label`` itself."""
    names = _CLASS_NAMES.get()
    if names is None or not isinstance(label, int) or not 0 <= label < len(names):
        return label
    return names[label]


def _warn_small_classes(y, n_folds):
    classes, counts = np.unique(y, return_counts=True)
    small = [(label, count) for label, count in zip(classes.tolist(), counts.tolist())
             if count < n_folds]
    named = ", ".join(f"{_class_name(label)!r} ({count})" for label, count in small)
    fewest = min(count for _, count in small)
    remedy = (f"cv={fewest} puts each class in every test fold, " if fewest >= 2 else "")
    warn_once((n_folds, tuple(label for label, _ in small)),
              f"stratified {n_folds}-fold: class(es) {named} have fewer samples than folds, "
              f"so some test folds hold none of them (scikit-learn's StratifiedKFold, kept "
              f"as it accepts these labels); {remedy}cv='loo' (leave-one-out) tests every "
              f"sample alone", FoldWarning)


def random_state_from_seed(seed):
    """A 32-bit ``random_state`` for scikit-learn splitters derived from ``seed``.

    ``seed`` is an int or a :class:`numpy.random.SeedSequence`; the same seed gives the same
    folds on every rank and in every run.
    """
    sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return int(sequence.generate_state(1)[0])


def stratified_kfold(y, n_folds, random_state):
    """Fold number of every sample, as scikit-learn's ``StratifiedKFold(n_folds,
    shuffle=True, random_state=random_state)`` deals them.

    The classes, in order of first appearance, get per fold the counts of a round robin
    over the labels sorted; each class's fold numbers (``0 0 .. 1 1 ..``) are shuffled by
    the ``RandomState`` in turn and given to its samples in order. Some class must have at
    least ``n_folds`` samples (scikit-learn refuses the labels otherwise).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    n_folds : int
    random_state : int
        Seed of the legacy ``numpy.random.RandomState`` scikit-learn draws from.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
    """
    _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    by_appearance = np.unique(first, return_inverse=True)[1][inverse.reshape(-1)]
    n_classes = first.size
    ordered = np.sort(by_appearance)
    allocation = np.array([np.bincount(ordered[i::n_folds], minlength=n_classes)
                           for i in range(n_folds)])
    rng = np.random.RandomState(random_state)
    fold_of = np.empty(y.shape[0], dtype=np.int64)
    for label in range(n_classes):
        folds = np.arange(n_folds).repeat(allocation[:, label])
        rng.shuffle(folds)
        fold_of[by_appearance == label] = folds
    return fold_of


def _approximate_mode(class_counts, n_draws, rng):
    """scikit-learn's ``_approximate_mode``: per-class counts of ``n_draws`` draws, the
    largest remainders first, ties broken by ``rng``."""
    continuous = class_counts / class_counts.sum() * n_draws
    floored = np.floor(continuous)
    need_to_add = int(n_draws - floored.sum())
    if need_to_add > 0:
        remainder = continuous - floored
        for value in np.sort(np.unique(remainder))[::-1]:
            (candidates,) = np.where(remainder == value)
            add_now = min(len(candidates), need_to_add)
            floored[rng.choice(candidates, size=add_now, replace=False)] += 1
            need_to_add -= add_now
            if need_to_add == 0:
                break
    return floored.astype(int)


def stratified_holdout(y, test_fraction, random_state):
    """One ``(train_idx, test_idx)`` split, as scikit-learn's ``StratifiedShuffleSplit(
    n_splits=1, test_size=test_fraction, random_state=random_state)`` draws it.

    ``ceil(test_fraction n)`` test samples, shared among the classes by the approximate
    mode of the hypergeometric distribution; each class's samples permuted by the
    ``RandomState`` and cut into its training and test parts.

    Raises
    ------
    ValueError
        A class with fewer than 2 samples, or fewer training or test samples than classes.
    """
    n_samples = y.shape[0]
    n_test = math.ceil(test_fraction * n_samples)
    n_train = n_samples - n_test
    classes, codes, class_counts = np.unique(y, return_inverse=True, return_counts=True)
    if n_train < classes.size or n_test < classes.size:
        raise ValueError(f"a stratified holdout of {n_samples} samples keeps {n_train} for "
                         f"training and {n_test} for testing, fewer than the "
                         f"{classes.size} classes")
    members = np.split(np.argsort(codes.reshape(-1), kind="stable"),
                       np.cumsum(class_counts)[:-1])
    rng = np.random.RandomState(random_state)
    n_train_of = _approximate_mode(class_counts, n_train, rng)
    n_test_of = _approximate_mode(class_counts - n_train_of, n_test, rng)
    train, test = [], []
    for count, index, n_in, n_out in zip(class_counts, members, n_train_of, n_test_of):
        shuffled = index.take(rng.permutation(count), mode="clip")
        train.append(shuffled[:n_in])
        test.append(shuffled[n_in:n_in + n_out])
    return np.concatenate(train), np.concatenate(test)


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
        If ``cv`` is not a scheme, n-fold asks for more folds than samples, a class has
        fewer than the 2 samples a holdout needs, or leave-one-out has fewer than 2 samples.

    Warns
    -----
    FoldWarning
        n-fold on labels with a class smaller than n, dealt by scikit-learn (see
        :func:`fold_rule`), once per process for the same folds and small classes,
        attributed to the caller's line outside hpcswarm.
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
    if cv == "holdout":
        small = counts < 2
        if small.any():
            raise ValueError(f"class {classes[small][0].item()!r} has {int(counts[small][0])} "
                             f"samples, fewer than the 2 that a stratified holdout needs")
        return _sorted_pairs([stratified_holdout(y, HOLDOUT_TEST_FRACTION,
                                                 random_state_from_seed(seed))])
    if cv > n_samples:
        raise ValueError(f"{cv}-fold cross-validation needs at least {cv} samples, got "
                         f"{n_samples}: a fold would be empty")
    if fold_rule(y, cv) == "round-robin":
        sequence = seed if isinstance(seed, np.random.SeedSequence) \
            else np.random.SeedSequence(seed)
        fold_of = round_robin_folds(y, cv, np.random.default_rng(sequence))
        return [(np.flatnonzero(fold_of != f).astype(np.int64),
                 np.flatnonzero(fold_of == f).astype(np.int64)) for f in range(cv)]
    if counts.min() < cv:
        _warn_small_classes(y, cv)
    fold_of = stratified_kfold(y, cv, random_state_from_seed(seed))
    return [(np.flatnonzero(fold_of != f).astype(np.int64),
             np.flatnonzero(fold_of == f).astype(np.int64)) for f in range(cv)]


def _sorted_pairs(splits):
    return [(np.sort(train).astype(np.int64), np.sort(test).astype(np.int64))
            for train, test in splits]


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

    ``folds`` may also be the ids themselves (an integer ndarray of shape (n_samples,), as
    :func:`fold_ids` gives them), so that folds drawn once are not drawn again.

    Raises
    ------
    ValueError
        Empty or out-of-range indices, overlapping test parts, or a training part that is
        not the complement of its test part.
    """
    if isinstance(folds, np.ndarray) and folds.ndim == 1 and folds.dtype.kind in "iu":
        return _checked_ids(folds, n_samples)  # ids already, as fold_ids gives them
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


def _checked_ids(ids, n_samples):
    """Fold ids given as such: one per sample, each a fold (numbered from 0, none skipped)
    or :data:`NOT_HELD_OUT`, every fold training on some sample."""
    ids = ids.astype(np.int64)
    held = ids[ids != NOT_HELD_OUT]
    if ids.shape != (n_samples,) or held.size == 0 or held.min() < 0:
        raise ValueError(f"fold ids must be one per sample ({n_samples}), each a fold number "
                         f">= 0 or {NOT_HELD_OUT}")
    sizes = np.bincount(held)
    if (sizes == 0).any() or (sizes >= n_samples).any():
        raise ValueError("fold ids must number the folds from 0, each holding out some "
                         "samples and training on the others")
    return ids


def folds_from_ids(ids):
    """The ``(train_idx, test_idx)`` pairs of fold ids, in fold order (as :func:`make_folds`)."""
    ids = np.asarray(ids)
    index = np.arange(ids.size, dtype=np.int64)
    return [(index[ids != fold], index[ids == fold]) for fold in range(int(ids.max()) + 1)]
