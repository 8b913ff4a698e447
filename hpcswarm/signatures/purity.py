"""The signature chosen among the swarm's own answers by how pure their neighbourhoods are.

A wrapper's fitness is the inner accuracy of the k-NN classifier on the training samples.
With 50 to 100 samples many subsets classify every inner prediction, and from then on the
fitness cannot rank them (Ambroise & McLachlan 2002; Kohavi & John 1997, Sec. 5): VLPSO
(Tran, Xue & Zhang 2019, Sec. III) ends with the smallest of them, and its particles' personal
bests with many others. Tran et al.'s own code scores its local search's tries by a class
distance beside the accuracy for that reason (``KNNopt.java``: 91-149); a graded count of
the same kind needs no real numbers: how many of each held-out sample's
:data:`NEIGHBOURS` nearest training samples share its class, the k-NN estimate of its class
probability (Fix & Hodges 1951; Cover & Hart 1967), summed over the held-out samples. It
rises as a sample lies deeper inside its class, where the 1-NN count stops at "correct", so
it is a margin in counts (in the spirit of the hypothesis margin of Gilad-Bachrach, Navot &
Tishby 2004).

``refine = "neighbour-purity"`` reads the search's subset and the personal best of every
particle at the search's end (none for a method without particles), validates each again on
a fresh split of the training samples (the search's scheme, ``cv``, its folds drawn from a
stream of the task's seed that the search never draws from, so that the choice is not made
on the folds the swarm fitted; Tran, Xue, Zhang & Nguyen 2016 on selection bias; under
leave-one-out, which draws nothing, they are the search's own), and keeps
the candidate with the most correct predictions of the search's classifier (``k``), then
the most same-class neighbours, then the fewest genes, then the earliest (the search's
subset first, then the particles in order). Distances are the engine's exact squared
distances (:func:`hpcswarm.fitness.distances.exact_sq_distances`), neighbours ranked by
(distance, training index) as the engine ranks them, votes tied to the smallest class code;
every count is an integer computed from the same values on every rank, so the choice is the
same on any number of ranks, shards and devices. Only the training samples are read.
"""

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.distances import exact_sq_distances
from hpcswarm.fitness.folds import make_folds
from hpcswarm.fitness.margins import label_codes
from hpcswarm.signatures.refine import Refined

NAME = "neighbour-purity"
"""The rule's ``refine`` value."""

NEIGHBOURS = 5
"""The nearest training samples whose classes are counted for each held-out sample."""

STREAM = 7741
"""The spawn-key word of the fresh split's folds, below the task's seed (the search spawns
its streams from the same seed with other keys)."""


def fresh_folds(y, cv, root):
    """The folds of the scheme ``cv`` on labels ``y``, drawn from the stream :data:`STREAM` of
    the task's seed ``root`` (a :class:`numpy.random.SeedSequence`)."""
    seed = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, STREAM))
    return make_folds(y, cv, seed)


def neighbour_counts(values, codes, folds, k, neighbours=NEIGHBOURS):
    """Correct k-NN predictions and same-class neighbours of the held-out samples of ``folds``.

    Parameters
    ----------
    values : ndarray of float64 of shape (n_selected, n_samples)
        The samples' values on the subset's genes, in increasing gene order.
    codes : ndarray of int64 of shape (n_samples,)
        Class codes.
    folds : list of (ndarray, ndarray)
        ``(train_idx, test_idx)`` pairs.
    k : int
        The classifier's neighbours (majority vote, ties to the smallest class code).
    neighbours : int
        The nearest training samples counted for purity (at most those a fold has).

    Returns
    -------
    (int, int)
        The correct predictions, and the held-out samples' same-class training samples among
        their ``neighbours`` nearest, both summed over the folds.
    """
    correct = same = 0
    n_classes = int(codes.max()) + 1
    for train, test in folds:
        candidates = np.ascontiguousarray(values[:, train].T)
        reach = min(max(k, neighbours), train.size)
        for sample in test:
            distances = exact_sq_distances(values[:, sample], candidates)
            nearest = codes[train[np.argsort(distances, kind="stable")[:reach]]]
            votes = np.bincount(nearest[:k], minlength=n_classes)
            correct += int(votes.argmax() == codes[sample])
            same += int(np.count_nonzero(nearest[:neighbours] == codes[sample]))
    return correct, same


def neighbour_purity(scorer, data, y, mask, personal_bests, params, root):
    """The search's subset or a particle's personal best, whichever the fresh split ranks first.

    Parameters
    ----------
    scorer : Scorer
        The search's scorer: it scores the chosen subset on the search's own inner
        validation, as every refinement reports it.
    data : GeneMajor or array-like of shape (n_samples, n_genes)
        The training samples.
    y : array-like of shape (n_samples,)
        Their labels.
    mask : ndarray of bool of shape (n_genes,)
        The search's subset.
    personal_bests : ndarray of bool of shape (n_particles, n_genes)
        Each particle's personal best at the search's end (no rows for a method without
        particles; empty rows are not candidates).
    params : mapping
        The search's complete parameters: its classifier's ``k`` and validation ``cv``.
    root : numpy.random.SeedSequence
        The task's seed, from which the fresh split's folds are drawn (:func:`fresh_folds`).

    Returns
    -------
    Refined
        The chosen subset, scored by ``scorer``; ``removed`` the search's genes it does not
        hold.
    """
    mask = np.array(mask, dtype=bool)
    data = GeneMajor.of(data)
    codes, _ = label_codes(y)
    folds = fresh_folds(codes, params["cv"], root)
    candidates = [mask, *(np.asarray(row, dtype=bool) for row in personal_bests)]
    best, best_key, seen = mask, None, set()
    for candidate in candidates:
        genes = np.flatnonzero(candidate)
        if genes.size == 0 or genes.tobytes() in seen:  # a copy ranks after its first
            continue
        seen.add(genes.tobytes())
        correct, same = neighbour_counts(data.take(genes), codes, folds, params["k"])
        key = (correct, same, -genes.size)
        if best_key is None or key > best_key:  # on equal keys the earlier stays
            best, best_key = candidate, key
    score = scorer.score(best)
    return Refined(NAME, best.copy(), int(score.correct), int(score.total),
                   np.flatnonzero(mask & ~best).astype(np.int64))
