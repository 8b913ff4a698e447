"""The archive of evaluated subsets: exact hit counts, bounded memory, LRU eviction."""

import numpy as np
import pytest

from hpcswarm.fitness import Archive, KnnEvaluator, Score, SubsetFitness, make_objective


@pytest.fixture
def data():
    rng = np.random.default_rng(4)
    return rng.normal(size=(30, 40)), rng.integers(0, 2, size=30), rng.random((6, 40)) < 0.5


def test_hits_and_misses_are_counted_exactly(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y, archive_size=100)
    first = [evaluator.score(m) for m in masks]
    assert (evaluator.hits, evaluator.misses, evaluator.evaluations) == (0, 6, 6)
    again = [evaluator.score(m.copy()) for m in masks[::-1]]
    assert again == first[::-1]
    assert (evaluator.hits, evaluator.misses, evaluator.evaluations) == (6, 6, 6)


def test_incremental_path_goes_through_the_archive(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y, archive_size=100)
    state = evaluator.new_state(masks[0])
    genes = np.array([1, 5])
    flipped = masks[0].copy()
    flipped[genes] = ~flipped[genes]
    score = evaluator.score_flip(state, genes)
    assert evaluator.score(flipped) == score
    assert (evaluator.hits, evaluator.misses, evaluator.evaluations) == (1, 1, 1)
    evaluator.score_flip(state, genes)
    assert (evaluator.hits, evaluator.evaluations) == (2, 1)


def test_bounded_archive_evicts_least_recently_used(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y, archive_size=2)
    evaluator.score(masks[0])
    evaluator.score(masks[1])
    evaluator.score(masks[0])  # hit: masks[0] becomes the most recent
    evaluator.score(masks[2])  # evicts masks[1]
    assert len(evaluator.archive) == 2 and evaluator.archive.evictions == 1
    evaluator.score(masks[0])
    assert evaluator.hits == 2
    evaluator.score(masks[1])
    assert evaluator.hits == 2 and evaluator.evaluations == 4


def test_disabled_archive_stores_nothing(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y, archive_size=0)
    evaluator.score(masks[0])
    evaluator.score(masks[0])
    assert (len(evaluator.archive), evaluator.hits, evaluator.evaluations) == (0, 0, 2)


def test_score_many_computes_each_distinct_subset_once(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y, archive_size=0)
    batch = np.vstack([masks[:3], masks[:3]])
    scores = evaluator.score_many(batch)
    assert evaluator.evaluations == 3
    assert scores == [KnnEvaluator(X, y).score(m) for m in batch]
    values = SubsetFitness(KnnEvaluator(X, y), make_objective("error")).many(batch)
    assert values.tolist() == [-s.error for s in scores]


def test_archive_validates_its_size():
    with pytest.raises(ValueError, match="archive_size"):
        Archive(-1)
    archive = Archive(1)
    archive.put(b"a", Score(1, 2))
    archive.put(b"b", Score(2, 2))
    assert archive.get(b"a") is None and archive.get(b"b") == Score(2, 2)
    assert (archive.hits, archive.misses, archive.evictions) == (1, 1, 1)
