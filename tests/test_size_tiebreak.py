"""VLPSO's ``size_tiebreak``: fewer genes break ties in fitness (the default, Xue, Zhang &
Browne 2014), or fitness alone decides and the first subset met is kept."""

import numpy as np
import pytest

from hpcswarm.errors import ParameterError
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.ledger import RoundLedger
from hpcswarm.swarm.engine.ordering import FEWER_GENES, Ordering
from synthetic import small_data

FITNESS_ALONE = Ordering(fewer_genes=False)

#: A small VLPSO whose inner accuracy is 1.0 from round 0 on :func:`saturated`.
SETTINGS = {"n_particles": 8, "n_iterations": 12, "n_divisions": 3, "change_after": 2,
            "refresh_gap": 2}


def saturated():
    """Three classes, ten genes shifted by 3 sd per class: many subsets separate them all."""
    return small_data(seed=1, n_samples=30, n_genes=40, n_informative=10, shift=3.0)


def test_fitness_alone_ties_equal_fitness_and_keeps_the_lower_index():
    assert FEWER_GENES.better(0.9, 3, 0.9, 4) and not FITNESS_ALONE.better(0.9, 3, 0.9, 4)
    assert FITNESS_ALONE.better(0.9, 30, 0.8, 4) and not FITNESS_ALONE.better(0.8, 3, 0.9, 40)
    assert FITNESS_ALONE.beats([0.9, 0.9, 1.0, np.nan], [1, 9, 50, 1], 0.9, 5).tolist() == [
        False, False, True, False]
    assert FEWER_GENES.beats([0.9, 0.9], [1, 9], 0.9, 5).tolist() == [True, False]
    assert FITNESS_ALONE.best_index([0.5, 0.9, 0.9, 0.9], [1, 5, 3, 3]) == 1
    assert FEWER_GENES.best_index([0.5, 0.9, 0.9, 0.9], [1, 5, 3, 3]) == 2
    assert FITNESS_ALONE.tie_sizes([4, 7]).tolist() == [0, 0]


def test_a_ledger_without_the_size_tiebreak_keeps_the_first_of_equal_fitness():
    masks = np.zeros((3, 6), dtype=bool)
    masks[0, :5] = masks[1, :2] = masks[2, :1] = True
    values, particles = [0.5, 1.0, 1.0], np.array([0, 1, 2])
    first, smallest = RoundLedger(FITNESS_ALONE), RoundLedger()
    for ledger in (first, smallest):
        ledger.add_many(masks, values, [True] * 3, 0, particles)
    assert first.best[3] == 1 and np.array_equal(first.best[4], masks[1])
    assert smallest.best[3] == 2 and np.array_equal(smallest.best[4], masks[2])


def test_a_saturated_search_shrinks_by_size_only_with_the_tiebreak():
    """At inner accuracy 1.0 from round 0 the default search keeps only size as a signal and
    shrinks its best subset; without the tie-break the first subset at 1.0 (round 0) stays
    the best, and every later round counts towards the length change."""
    X, y = saturated()
    default = run_search(X, y, "vlpso", SETTINGS, seed=3)
    alone = run_search(X, y, "vlpso", {**SETTINGS, "size_tiebreak": False}, seed=3)
    assert default.params["size_tiebreak"] is True and alone.params["size_tiebreak"] is False
    for result in (default, alone):
        assert {row["best_fitness"] for row in result.history} == {1.0}
    assert default.history[-1]["best_size"] < default.history[0]["best_size"]
    assert {row["best_size"] for row in alone.history} == {alone.history[0]["best_size"]}
    assert alone.extra["best_found_at"] == alone.history[0]["evaluations"]
    assert len(alone.genes) == alone.history[0]["best_size"] > len(default.genes)
    changes = [e for e in alone.extra["events"] if e["event"] == "length_change"]
    assert len(changes) > len([e for e in default.extra["events"]
                               if e["event"] == "length_change"])


def test_the_tiebreak_is_a_boolean_setting():
    X, y = saturated()
    with pytest.raises(ParameterError, match="size_tiebreak"):
        run_search(X, y, "vlpso", {**SETTINGS, "size_tiebreak": "sometimes"}, seed=3)
