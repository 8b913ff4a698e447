"""Objectives (all maximised) and the worst fitness of the empty subset."""

import json
import math

import numpy as np
import pytest

from hpcswarm.fitness import OBJECTIVES, WORST_FITNESS, Score, make_objective


def test_values():
    score = Score(45, 50)
    assert make_objective("accuracy")(score, 10, 100) == 0.9
    assert make_objective("error")(score, 10, 100) == -score.error
    combined = make_objective("combined", alpha=0.9)(score, 10, 100)
    assert math.isclose(combined, 0.9 * 0.9 + 0.1 * 0.9)
    per_class = Score(45, 50, (40, 3, 2), (40, 6, 4))
    assert make_objective("balanced-accuracy")(per_class, 10, 100) == (1 + 0.5 + 0.5) / 3
    assert make_objective("balanced-accuracy").per_class
    assert not any(make_objective(name).per_class for name in ("accuracy", "error", "combined"))


@pytest.mark.parametrize("name", OBJECTIVES)
def test_empty_subset_is_worse_than_every_real_subset(name):
    objective = make_objective(name)
    worst_real = min(objective(Score(a + b, 7, (a, b), (3, 4)), n, 50)
                     for a in range(4) for b in range(5) for n in (1, 25, 50))
    assert objective(Score(0, 7, (0, 0), (3, 4)), 0, 50) == WORST_FITNESS < worst_real
    assert json.loads(json.dumps({"f": WORST_FITNESS}))["f"] == WORST_FITNESS


def test_score_properties_and_errors():
    assert Score(3, 4).accuracy == 0.75 and Score(3, 4).error == 0.25
    assert Score(3, 4).as_dict() == {"correct": 3, "total": 4, "accuracy": 0.75, "error": 0.25}
    assert Score(3, 4, (1, 2), (2, 2)).as_dict() == {
        "correct": 3, "total": 4, "accuracy": 0.75, "error": 0.25, "class_correct": [1, 2],
        "class_total": [2, 2], "balanced_accuracy": 0.75}
    with pytest.raises(ValueError, match="outside"):
        Score(5, 4)
    with pytest.raises(ValueError, match="objective must be one of"):
        make_objective("auc")
    with pytest.raises(ValueError, match="alpha"):
        make_objective("combined", alpha=np.float64(1.0))
