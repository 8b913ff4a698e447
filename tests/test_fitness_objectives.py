"""Objectives (all maximised) and the worst fitness of the empty subset."""

import json
import math

import numpy as np
import pytest

from hpcswarm.errors import ParameterError
from hpcswarm.fitness import OBJECTIVES, WORST_FITNESS, Score, make_objective
from hpcswarm.results.report.figures import fitness_accuracy
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.store.objectives import OBJECTIVE_ALIASES, OBJECTIVE_TABLE
from hpcswarm.swarm.engine.front import MONOTONE_OBJECTIVES
from hpcswarm.swarm.params import FITNESS_PARAMS


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


@pytest.mark.parametrize("name", OBJECTIVES)
def test_each_row_kernels_agree_bit_for_bit_and_its_inverse_gives_the_accuracy(name):
    """The scalar form (a Score), the batched form (counts) and the report's inverse of one
    registry row describe one fitness."""
    row = OBJECTIVE_TABLE[name]
    rng = np.random.default_rng(5)
    class_total = np.array([7, 2, 11])
    class_correct = rng.integers(0, class_total + 1, size=(40, 3))
    n_selected = rng.integers(1, 60, size=40)
    objective = make_objective(name, alpha=0.7)
    scores = [Score(int(c.sum()), int(class_total.sum()), tuple(map(int, c)),
                    tuple(map(int, class_total))) for c in class_correct]
    one_by_one = np.array([objective(s, int(n), 60) for s, n in zip(scores, n_selected)])
    counts = (class_correct, class_total) if row.per_class else (class_correct.sum(axis=1),
                                                                  int(class_total.sum()))
    assert np.array_equal(objective.many(*counts, n_selected, 60), one_by_one)
    accuracy = fitness_accuracy(one_by_one, n_selected, name, 0.7, 60)
    if row.inverse is None:
        assert accuracy is None
    else:
        assert np.allclose(accuracy, [s.accuracy for s in scores], rtol=0, atol=1e-12)


def test_the_lists_of_objectives_are_derived_from_the_registry():
    assert OBJECTIVES == tuple(OBJECTIVE_TABLE)
    assert MONOTONE_OBJECTIVES == tuple(n for n, r in OBJECTIVE_TABLE.items() if r.monotone)
    objective_param = next(p for p in FITNESS_PARAMS if p.name == "objective")
    assert objective_param.choices == OBJECTIVES
    assert dict(objective_param.aliases) == OBJECTIVE_ALIASES


def test_scikit_learns_spelling_is_balanced_accuracy():
    params = algorithm_params("pso", {"objective": "balanced_accuracy"})
    assert params["objective"] == "balanced-accuracy"
    assert make_objective("balanced_accuracy") == make_objective("balanced-accuracy")
    assert next(p for p in FITNESS_PARAMS if p.name == "objective").check(
        "balanced_accuracy", "fitness.objective") == "balanced-accuracy"


@pytest.mark.parametrize("alpha", [0, 1, 0.0, 1.0])
def test_alpha_at_a_bound_is_refused_with_the_settings_before_any_data(alpha):
    with pytest.raises(ParameterError, match=r"alpha.*\(0, 1\)"):
        algorithm_params("fsipso", {"alpha": alpha})
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        make_objective("combined", alpha)
