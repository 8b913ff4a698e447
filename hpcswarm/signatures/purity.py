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
every count is an integer computed from the same values, each candidate's on one of the
search's ranks and shared with all (:func:`candidate_tallies`), so the choice is the same on
any number of ranks, shards and devices. Only the training samples are read.

``refine = "neighbour-purity-1se"`` validates the same candidates on the same fresh split and
applies the one-standard-error rule (Breiman, Friedman, Olshen & Stone 1984, CART, Sect.
3.4.3; Hastie, Tibshirani & Friedman 2009, Sect. 7.10) to both counts: the candidate that
``neighbour-purity`` keeps is the best; a candidate is within one standard error of it when
its correct predictions and its same-class neighbours are each at least the best's less one
standard error of the best's sum over the held-out samples (``sqrt(n var)``, ``var`` the
variance of the best's per-sample counts: for the correct predictions the binomial
``sqrt(c (n - c) / n)``, none when the best makes no mistake, as
:func:`hpcswarm.signatures.relevance.within_one_se`); of those, the one with the fewest
genes, then the most correct predictions, then the most same-class neighbours, then the
earliest. The purity's graded signal still orders the candidates, but a larger subset is
kept only where the fresh split can tell it from a smaller one. Each comparison is made in
integers (:func:`within_one_se_of`), so the choice is the same on every rank.

``refine = "neighbour-purity-anova"`` is ``neighbour-purity-1se`` with more candidates: after
the swarm's, for each size among theirs (in increasing order) the genes of that many highest
one-way ANOVA F statistics on the training samples, the statistic of scikit-learn's
``f_classif`` (:func:`~hpcswarm.swarm.methods.vlpso.gene_order.anova_f`; as ``SelectKBest``
keeps them, but ties go to the lower gene index and genes of undefined F, such as constant
ones, come last). The swarm proposes the sizes; at each, the fresh split weighs its genes
against the filter's, the comparison of wrapper and filter that the gene-selection literature
makes (Kohavi & John 1997; Inza, Larrañaga, Blanco & Cerrolaza 2004). Like the swarm's
answers, each filter candidate is a fixed subset chosen from all the training samples. The
one-standard-error choice is unchanged: among the candidates within one standard error of
the purest, the fewest genes, then the most correct predictions, then the most same-class
neighbours, and only then the earlier, so a filter candidate of the swarm's size replaces
the swarm's answer where it has more correct predictions or same-class neighbours, and the
swarm's answer is kept where both counts are equal. Where the purest makes no mistake and
has no impure neighbourhood the standard errors are zero, and only candidates as clean
qualify.

``refine = "neighbour-purity-1se-anova"`` keeps ``neighbour-purity-1se``'s candidates and
choice, then sets the filter's genes of the same size against the chosen one: the genes of
that many highest ANOVA F statistics on the training samples (as above) replace it where the
fresh split gives them more correct predictions, or as many and more same-class neighbours
(:func:`anova_challenge`). The size stays the one the swarm's answers chose; at that size the
swarm's genes are kept unless the filter's classify the fresh split better, the comparison
of a wrapper's subset with a filter's at equal size.
"""

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.distances import exact_sq_distances
from hpcswarm.fitness.folds import make_folds
from hpcswarm.fitness.margins import label_codes
from hpcswarm.signatures.refine import Refined
from hpcswarm.swarm.methods.vlpso.gene_order import gene_order

NAME = "neighbour-purity"
"""The rule's ``refine`` value."""

NAME_1SE = "neighbour-purity-1se"
"""The ``refine`` value of the rule with the one-standard-error choice."""

NAME_ANOVA = "neighbour-purity-anova"
"""The ``refine`` value of the one-standard-error choice with the filter's candidates."""

NAME_1SE_ANOVA = "neighbour-purity-1se-anova"
"""The ``refine`` value of the one-standard-error choice challenged by the filter's genes at
its size."""

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


def neighbour_tallies(values, codes, folds, k, neighbours=NEIGHBOURS):
    """Each held-out sample's correct k-NN prediction and same-class neighbours, over ``folds``.

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
    (ndarray of int64, ndarray of int64)
        For each held-out sample, in the order of the folds and of their held-out indices: 1
        where the prediction is correct (else 0), and its same-class training samples among
        its ``neighbours`` nearest.
    """
    correct, same = [], []
    n_classes = int(codes.max()) + 1
    for train, test in folds:
        candidates = np.ascontiguousarray(values[:, train].T)
        reach = min(max(k, neighbours), train.size)
        for sample in test:
            distances = exact_sq_distances(values[:, sample], candidates)
            nearest = codes[train[np.argsort(distances, kind="stable")[:reach]]]
            votes = np.bincount(nearest[:k], minlength=n_classes)
            correct.append(int(votes.argmax() == codes[sample]))
            same.append(int(np.count_nonzero(nearest[:neighbours] == codes[sample])))
    return np.array(correct, dtype=np.int64), np.array(same, dtype=np.int64)


def within_one_se_of(count, per_sample):
    """Whether ``count`` is at least ``per_sample.sum()`` less one standard error of that sum,
    ``sqrt(n var)`` with ``var`` the (population) variance of the ``n`` per-sample counts.

    Decided in integers: with ``s`` the sum and ``q`` the sum of squares, ``n var = q - s^2 /
    n``, so ``count`` is within when it is at least ``s`` or when ``n (s - count)^2 <= n q -
    s^2``.
    """
    n = per_sample.size
    total = int(per_sample.sum())
    squares = sum(int(value) ** 2 for value in per_sample)
    return count >= total or n * (total - count) ** 2 <= n * squares - total * total


def swarm_answers(data, codes, mask, personal_bests):
    """The search's subset ``mask``, then each row of ``personal_bests`` (boolean masks);
    ``data`` and ``codes`` are not read (the arguments of every ``gather`` of :func:`choose`)."""
    return [mask, *(np.asarray(row, dtype=bool) for row in personal_bests)]


def anova_tops(data, codes, sizes):
    """For each of ``sizes``, the mask of that many genes of the highest ANOVA F on ``data``
    (``gene_order("f")``: an undefined F last, ties to the lower gene index)."""
    order = gene_order("f", data, codes) if len(sizes) else None
    tops = []
    for size in sizes:
        top = np.zeros(data.n_genes, dtype=bool)
        top[order[:size]] = True
        tops.append(top)
    return tops


def with_anova_tops(data, codes, mask, personal_bests):
    """:func:`swarm_answers`, then the :func:`anova_tops` at each of their sizes, smallest
    first."""
    answers = swarm_answers(data, codes, mask, personal_bests)
    sizes = sorted({int(np.count_nonzero(answer)) for answer in answers} - {0})
    return answers + anova_tops(data, codes, sizes)


def candidate_tallies(data, codes, folds, k, candidates, grid=None):
    """Each of ``candidates`` (boolean masks) with its :func:`neighbour_tallies` on ``folds``.

    Under ``grid`` (:class:`hpcswarm.comm.Grid`, the search's ranks) the candidates are dealt
    round robin over its ranks (particle group by particle group, shard by shard) and each
    rank's integer tallies are allgathered over the shards, then over the particle groups:
    every rank ends with the tallies a serial call computes, at a rank's share of the work.

    Returns
    -------
    list of (ndarray of bool, ndarray of int64, ndarray of int64)
        ``(candidate, correct, same)`` in the order of ``candidates``; empty masks and copies
        of an earlier candidate are left out (a copy ranks after its first).
    """
    distinct, seen = [], set()
    for candidate in candidates:
        genes = np.flatnonzero(candidate)
        if genes.size == 0 or genes.tobytes() in seen:
            continue
        seen.add(genes.tobytes())
        distinct.append((candidate, genes))
    n_ranks, rank = (1, 0) if grid is None else (
        grid.n_groups * grid.n_shards, grid.particles.rank * grid.n_shards + grid.shards.rank)
    counted = {index: neighbour_tallies(data.take(genes), codes, folds, k)
               for index, (_, genes) in enumerate(distinct) if index % n_ranks == rank}
    if grid is not None:
        for comm in (grid.shards, grid.particles):
            counted = {index: tally for part in comm.allgather(counted)
                       for index, tally in part.items()}
    return [(candidate, *counted[index]) for index, (candidate, _) in enumerate(distinct)]


def purest(tallies):
    """The index in ``tallies`` of the candidate with the most correct predictions, then the
    most same-class neighbours, then the fewest genes, then the earliest."""
    keys = [(int(correct.sum()), int(same.sum()), -int(np.count_nonzero(candidate)), -index)
            for index, (candidate, correct, same) in enumerate(tallies)]
    return keys.index(max(keys))


def smallest_within_one_se(tallies):
    """The index in ``tallies`` of the candidate with the fewest genes among those whose
    correct predictions and same-class neighbours are each within one standard error
    (:func:`within_one_se_of`) of those of the candidate :func:`purest` picks; then the most
    correct predictions, the most same-class neighbours, the earliest."""
    _, best_correct, best_same = tallies[purest(tallies)]
    keys = [(-int(np.count_nonzero(candidate)), int(correct.sum()), int(same.sum()), -index)
            for index, (candidate, correct, same) in enumerate(tallies)
            if within_one_se_of(int(correct.sum()), best_correct)
            and within_one_se_of(int(same.sum()), best_same)]
    return -max(keys)[3]


def anova_challenge(data, codes, folds, k, chosen):
    """``chosen``, a ``(candidate, correct, same)`` tally, or the tally of the :func:`anova_tops`
    at its size where those make more correct predictions on ``folds``, or as many and have
    more same-class neighbours."""
    top = anova_tops(data, codes, [int(np.count_nonzero(chosen[0]))])[0]
    if np.array_equal(top, chosen[0]):   # the same genes: nothing to weigh
        return chosen
    challenger = (top, *neighbour_tallies(data.take(np.flatnonzero(top)), codes, folds, k))
    return (chosen, challenger)[purest([chosen, challenger])]   # equal sizes: the counts


def unchallenged(data, codes, folds, k, chosen):
    """``chosen`` as it is (the ``settle`` of the rules without a challenge)."""
    return chosen


def choose(scorer, data, y, mask, personal_bests, params, root, method, pick,
           gather=swarm_answers, settle=unchallenged, grid=None):
    """The candidate that ``pick`` (:func:`purest` or :func:`smallest_within_one_se`) takes
    from the fresh split's tallies of the candidates ``gather`` (:func:`swarm_answers` or
    :func:`with_anova_tops`) lists, after ``settle`` (:func:`unchallenged` or
    :func:`anova_challenge`), as the rule ``method`` reports it; the search's subset where no
    candidate has a gene. The tallies are shared over the ranks of ``grid``, if any
    (:func:`candidate_tallies`)."""
    mask = np.array(mask, dtype=bool)
    data = GeneMajor.of(data)
    codes, _ = label_codes(y)
    folds = fresh_folds(codes, params["cv"], root)
    candidates = gather(data, codes, mask, personal_bests)
    tallies = candidate_tallies(data, codes, folds, params["k"], candidates, grid)
    best = settle(data, codes, folds, params["k"], tallies[pick(tallies)])[0] if tallies else mask
    score = scorer.score(best)
    return Refined(method, best.copy(), int(score.correct), int(score.total),
                   np.flatnonzero(mask & ~best).astype(np.int64))


def neighbour_purity(scorer, data, y, mask, personal_bests, params, root, grid=None):
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
    grid : Grid, optional
        The search's ranks (:class:`hpcswarm.comm.Grid`), over which the candidates' tallies
        are shared (:func:`candidate_tallies`; collective); None: all on this rank.

    Returns
    -------
    Refined
        The chosen subset (:func:`purest`), scored by ``scorer``; ``removed`` the search's
        genes it does not hold.
    """
    return choose(scorer, data, y, mask, personal_bests, params, root, NAME, purest,
                  grid=grid)


def neighbour_purity_1se(scorer, data, y, mask, personal_bests, params, root, grid=None):
    """The smallest of the candidates the fresh split cannot tell from the purest
    (:func:`smallest_within_one_se`); parameters and result as :func:`neighbour_purity`'s."""
    return choose(scorer, data, y, mask, personal_bests, params, root, NAME_1SE,
                  smallest_within_one_se, grid=grid)


def neighbour_purity_anova(scorer, data, y, mask, personal_bests, params, root, grid=None):
    """:func:`neighbour_purity_1se`'s choice among the swarm's answers and the ANOVA filter's
    top genes at each of their sizes (:func:`with_anova_tops`); parameters and result as
    :func:`neighbour_purity`'s."""
    return choose(scorer, data, y, mask, personal_bests, params, root, NAME_ANOVA,
                  smallest_within_one_se, with_anova_tops, grid=grid)


def neighbour_purity_1se_anova(scorer, data, y, mask, personal_bests, params, root,
                               grid=None):
    """:func:`neighbour_purity_1se`'s choice, replaced by the ANOVA filter's genes at its size
    where the fresh split ranks those first (:func:`anova_challenge`); parameters and result
    as :func:`neighbour_purity`'s."""
    return choose(scorer, data, y, mask, personal_bests, params, root, NAME_1SE_ANOVA,
                  smallest_within_one_se, settle=anova_challenge, grid=grid)
