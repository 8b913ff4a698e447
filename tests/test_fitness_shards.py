"""Sample shards: the correct counts of the shards of the held-out rows add up to the whole.

Each shard decides a contiguous share of the held-out rows from its own cached rows
(:class:`hpcswarm.fitness.rowblocks.HeldOutRows`); here the shards run one after another
in one process, each without a partner to sum with, and their Scores are added by hand.
"""

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator
from hpcswarm.fitness import rowblocks


def data():
    rng = np.random.default_rng(5)
    X = rng.integers(-2, 3, size=(41, 60)).astype(float)  # small integers: many near ties
    return X, rng.integers(0, 3, size=41)


def added(scores):
    """The correct counts of the shards' Scores added up: all together, and per class when
    the Scores hold counts per class (each shard's Score is of its own rows only)."""
    scores = list(scores)
    return (sum(score.correct for score in scores),
            tuple(np.sum([score.class_correct for score in scores], axis=0, dtype=int)))


def whole_counts(score):
    """What :func:`added` gives for the Score of every row."""
    return score.correct, tuple(np.array(score.class_correct, dtype=int))


@pytest.mark.parametrize("class_counts", [False, True])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5), (5, "holdout")])
@pytest.mark.parametrize("n_shards", [2, 3, 7])
def test_shards_add_up_to_the_whole_evaluation(k, cv, n_shards, class_counts, monkeypatch):
    monkeypatch.setattr(rowblocks, "ROW_BLOCK_BYTES", 8 * 41 * 4)  # blocks of 4 rows
    X, y = data()
    rng = np.random.default_rng(k)
    whole = KnnEvaluator(X, y, k=k, cv=cv, seed=2, class_counts=class_counts)
    shards = [KnnEvaluator(X, y, k=k, cv=cv, seed=2, shard=(i, n_shards),
                           class_counts=class_counts)
              for i in range(n_shards)]
    assert sum(s._rows.rows.size for s in shards) == whole.total
    assert len(whole._rows.blocks()) > 1
    mask = rng.random(60) < 0.5
    states = [s.new_state(mask) for s in shards]
    assert sum(s.dist2.shape[0] for s in states) == whole.total
    assert added(s.score(mask) for s in shards) == whole_counts(whole.score(mask))
    for _ in range(6):
        genes = rng.choice(60, size=int(rng.integers(1, 6)), replace=False)
        flipped = mask.copy()
        flipped[genes] = ~flipped[genes]
        expected = whole_counts(whole.score(flipped))
        assert added(s.score_flip(t, genes) for s, t in zip(shards, states)) == expected
        for s, t in zip(shards, states):
            s.apply_flip(t, genes)
        mask = flipped
    candidates = rng.permutation(60)[:15]
    single = [s.score_single_flips(t, candidates) for s, t in zip(shards, states)]
    for j, gene in enumerate(candidates):
        flipped = mask.copy()
        flipped[gene] = ~flipped[gene]
        assert added(part[j] for part in single) == whole_counts(whole.score(flipped))


def test_more_shards_than_rows_leaves_some_empty():
    X, y = data()
    mask = np.ones(60, dtype=bool)
    shards = [KnnEvaluator(X, y, cv="holdout", shard=(i, 20)) for i in range(20)]
    whole = KnnEvaluator(X, y, cv="holdout")
    assert any(s._rows.rows.size == 0 for s in shards)
    assert added(s.score(mask) for s in shards) == whole_counts(whole.score(mask))
    states = [s.new_state(mask) for s in shards]
    assert added(s.score_flip(t, [3]) for s, t in zip(shards, states)) == \
        whole_counts(whole.score(np.where(np.arange(60) == 3, False, mask)))


@pytest.mark.parametrize("shard", [(2, 2), (0, 0), (-1, 3), "ab"])
def test_bad_shards(shard):
    X, y = data()
    with pytest.raises(ValueError, match="shard"):
        KnnEvaluator(X, y, shard=shard)
