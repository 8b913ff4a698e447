"""The loop apart from evaluation: an injected termination rule and evaluation service, and
methods composed from mechanisms."""

import numpy as np
import pytest

from synthetic import small_data

from hpcswarm.selection.methods import METHODS, algorithm_params
from hpcswarm.selection.search import make_fitness
from hpcswarm.swarm.engine.evaluation import EvaluationService
from hpcswarm.swarm.engine.termination import RoundLimit
from hpcswarm.swarm.methods.bpso import Complement
from hpcswarm.swarm.methods.particle_swarm import ParticleSwarm
from hpcswarm.swarm.methods.pso import PSO
from hpcswarm.swarm.operators.local_search import LocalSearch
from hpcswarm.swarm.operators.mechanisms import GbestReset


def _search(cls, name, overrides, seed=4, **options):
    X, y = small_data(seed=2, n_samples=30, n_genes=40)
    params = algorithm_params(name, overrides)
    fitness, _ = make_fitness(X, y, params, seed)
    return cls(EvaluationService.for_params(fitness, params), params, seed=seed, **options)


def _rows(result):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]


def test_an_injected_termination_stops_the_loop_and_changes_nothing_else():
    settings = {"n_particles": 6, "n_iterations": 7}
    full = _search(PSO, "pso", settings).run()
    short = _search(PSO, "pso", settings, termination=RoundLimit(3)).run()
    assert len(full.history) == 7 and len(short.history) == 3
    assert _rows(short) == _rows(full)[:3]


def test_the_default_termination_is_the_methods_own():
    assert _search(PSO, "pso", {"n_iterations": 5}).termination == RoundLimit(5, None)
    fsr = METHODS["fsr"]
    assert _search(fsr, "fsr", {"max_size": 4}).termination == RoundLimit(4)  # target: inner
    sfr = METHODS["sfr"]
    assert _search(sfr, "sfr", {"max_size": 0}).termination == RoundLimit(40)  # every gene


class PSOWithReset(PSO):
    """PSO plus gbest resetting, composed here as a new method would be."""

    name = "pso-with-reset"
    MECHANISMS = (GbestReset(),)
    PARAMS = METHODS["pso-rg"].PARAMS


def test_a_method_composed_from_pso_and_a_mechanism_is_that_variant():
    settings = {"n_particles": 5, "n_iterations": 14}
    composed = _search(PSOWithReset, "pso-rg", settings).run()
    registered = _search(METHODS["pso-rg"], "pso-rg", settings).run()
    assert np.array_equal(composed.mask, registered.mask)
    assert _rows(composed) == _rows(registered)
    assert composed.extra["events"] == registered.extra["events"]
    assert any(e["event"] == "gbest_reset" for e in composed.extra["events"])


@pytest.mark.parametrize("name, mechanisms", [
    ("pso", ()), ("bpso", ()), ("fsipso", ()), ("cbpso", (Complement,)),
    ("pso-rg", (GbestReset,)), ("pso-ls", (LocalSearch,)),
    ("pso-lsrg", (LocalSearch, GbestReset)),
])
def test_each_swarm_is_its_mechanisms_and_declares_their_parameters(name, mechanisms):
    cls = METHODS[name]
    assert issubclass(cls, ParticleSwarm)
    assert tuple(type(m) for m in cls.MECHANISMS) == mechanisms
    names = [p.name for p in cls.PARAMS]
    for mechanism in cls.MECHANISMS:
        assert all(p.name in names for p in mechanism.PARAMS)
    assert cls.supports_max_genes == (LocalSearch not in mechanisms)
    assert getattr(cls, "use_local_search", False) == (LocalSearch in mechanisms)


def test_a_nested_service_shares_the_account_but_keeps_its_own_best():
    X, y = small_data(seed=2, n_samples=30, n_genes=40)
    params = algorithm_params("pso", {})
    fitness, _ = make_fitness(X, y, params, 0)
    outer = EvaluationService.for_params(fitness, params)
    mask = np.zeros(40, dtype=bool)
    mask[:3] = True
    outer.observe_shared(mask, float(fitness(mask)))
    inner = outer.nested()
    assert inner.evaluations == outer.evaluations == 1
    assert inner.front is outer.front and inner.archive is outer.archive
    assert not inner.best_mask.any() and inner.best_fitness < outer.best_fitness
    inner.observe_shared(mask, outer.best_fitness)  # met by the outer run already
    assert inner.new_subsets == 0 and inner.evaluations == 2 and outer.evaluations == 1


def test_a_service_state_round_trips():
    search = _search(PSO, "pso", {"n_particles": 4, "n_iterations": 2})
    search.run()
    state = search.evaluator.state()
    assert set(state) == set(EvaluationService.STATE)
    fresh = _search(PSO, "pso", {"n_particles": 4, "n_iterations": 2}).evaluator
    fresh.restore(state)
    assert fresh.best_fitness == search.evaluator.best_fitness
    assert np.array_equal(fresh.best_mask, search.evaluator.best_mask)
    assert fresh.evaluations == search.evaluator.evaluations
