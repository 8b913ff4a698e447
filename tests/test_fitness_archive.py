"""The archive of evaluated subsets (kept by the searches): exact hit counts, bounded memory,
LRU eviction; the evaluator itself computes every subset it is asked for."""

import numpy as np
import pytest

from hpcswarm.fitness import Archive, KnnEvaluator, Score, SubsetFitness, make_objective
from hpcswarm.fitness.archive import mask_key, mask_keys


@pytest.fixture
def data():
    rng = np.random.default_rng(4)
    return rng.normal(size=(30, 40)), rng.integers(0, 2, size=30), rng.random((6, 40)) < 0.5


def test_hits_and_misses_are_counted_exactly(data):
    _, _, masks = data
    archive = Archive(100)
    keys = [mask_key(mask) for mask in masks]
    assert [bytes(row) for row in mask_keys(masks)] == keys  # one packing, the same keys
    for i, key in enumerate(keys):
        assert archive.get(key) is None
        archive.put(key, Score(i, 30))
    assert (archive.hits, archive.misses) == (0, 6)
    assert [archive.get(mask_key(mask.copy())) for mask in masks[::-1]] == [
        Score(i, 30) for i in range(5, -1, -1)]
    assert (archive.hits, archive.misses, len(archive)) == (6, 6, 6)


def test_bounded_archive_evicts_least_recently_used(data):
    _, _, masks = data
    archive = Archive(2)
    keys = [mask_key(mask) for mask in masks[:3]]
    archive.put(keys[0], Score(0, 30))
    archive.put(keys[1], Score(1, 30))
    assert archive.get(keys[0]) == Score(0, 30)  # masks[0] becomes the most recent
    archive.put(keys[2], Score(2, 30))  # evicts masks[1]
    assert len(archive) == 2 and archive.evictions == 1
    assert archive.get(keys[1]) is None and archive.get(keys[0]) == Score(0, 30)


def test_the_evaluator_computes_every_request(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y)
    assert not hasattr(evaluator, "archive")
    first = evaluator.score(masks[0])
    assert evaluator.score(masks[0].copy()) == first and evaluator.evaluations == 2
    assert evaluator.score(np.zeros(40, dtype=bool)) == Score(0, 30)
    assert evaluator.evaluations == 2  # the empty subset is not computed


def test_score_many_computes_each_distinct_subset_once(data):
    X, y, masks = data
    evaluator = KnnEvaluator(X, y)
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
