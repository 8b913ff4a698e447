"""A particle's subset scored from its previous one gives the full evaluation's fitness.

:class:`hpcswarm.fitness.moves.ParticleStates` keeps each particle's distance state between
rounds. Every path it takes (a move scored from the state, a full product writing a state, a
full product beyond the budget, a repeat) must give exactly the fitness of a full evaluation,
and whole searches must not depend on the cache budget: none, a few states (partly full) or
every particle's.
"""

import numpy as np
import pytest

import hpcswarm.selection.search
import hpcswarm.swarm.engine.evaluation
from hpcswarm import select
from hpcswarm.cli import build_parser

from hpcswarm.fitness import SubsetFitness, make_objective, make_scorer
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.fitness.moves import ParticleStates, worth_moving
from hpcswarm.run.jobfile import read_job
from hpcswarm.selection.search import run_search
from synthetic import small_data
from test_mpi_invariance import comparable


def _fitness(objective="accuracy", n_genes=120, device="cpu", **scorer):
    X, y = small_data(seed=4, n_samples=40, n_genes=n_genes)
    made = make_objective(objective, 0.9)
    return SubsetFitness(make_scorer(X, y, class_counts=made.per_class, device=device,
                                     **scorer), made)


def _walk(rng, n_genes, n_particles, n_rounds, events):
    """Masks of ``n_particles`` particles over ``n_rounds``: mostly small moves, and at the
    rounds of ``events`` a cut to a tenth of the genes ("cut") or a fresh subset ("far")."""
    masks = rng.random((n_particles, n_genes)) < 0.6
    for round_ in range(n_rounds):
        event = events.get(round_)
        for mask in masks:
            if event == "cut":
                mask[np.flatnonzero(mask)[len(np.flatnonzero(mask)) // 10 + 1:]] = False
            elif event == "far":
                mask[:] = rng.random(n_genes) < 0.5
            else:
                flips = rng.choice(n_genes, size=int(rng.integers(0, 4)), replace=False)
                mask[flips] = ~mask[flips]
        yield masks.copy()


@pytest.mark.parametrize("max_states", [0, 2, 5])
@pytest.mark.parametrize("objective, scorer", [
    ("accuracy", {}), ("balanced-accuracy", {"k": 3, "cv": 4}),
    ("error", {"k": 5, "cv": "holdout"})])
def test_every_path_gives_the_full_evaluation(max_states, objective, scorer):
    fitness = _fitness(objective, **scorer)
    states = ParticleStates(fitness, max_states)
    rng = np.random.default_rng(0)
    for masks in _walk(rng, fitness.n_genes, 5, 14, {6: "cut", 10: "far"}):
        particles = np.arange(5)
        np.testing.assert_array_equal(states.values(particles, masks), fitness.many(masks))
    counts = states.counts
    assert len(states) == min(max_states, 5)
    assert counts.uncached == 14 * (5 - max_states)
    if max_states:
        assert counts.moved > 0 and counts.rebuilt >= 3 * max_states  # start, cut, far
        assert counts.repeated > 0  # moves of no gene keep the state's value
        assert counts.moved_genes < counts.selected_genes - counts.full_genes


def test_a_budget_of_zero_never_builds_a_state(monkeypatch):
    fitness = _fitness()
    monkeypatch.setattr(fitness.scorer, "new_state", None)
    monkeypatch.setattr(fitness.scorer, "score_new_state", None)
    states = ParticleStates(fitness, 0)
    masks = np.random.default_rng(1).random((3, fitness.n_genes)) < 0.5
    np.testing.assert_array_equal(states.values([0, 1, 2], masks), fitness.many(masks))
    assert len(states) == 0


def test_moves_far_or_long_or_due_take_the_full_product():
    assert worth_moving(2, 100, 0)
    assert worth_moving(67, 100, 0)  # both products symmetric: a move up to 3/4
    assert not worth_moving(68, 100, 0)  # far: cheaper in full
    assert not worth_moving(3, 10, 0)  # short subset: the passes over the state dominate
    assert not worth_moving(2, 100, 799)  # the drift due for a rebuild


@pytest.mark.parametrize("module", ["numpy"])
def test_the_device_scorer_moves_states_as_the_cpu(module, monkeypatch):
    cpu = _fitness("balanced-accuracy", k=3, cv=4)
    device = _fitness("balanced-accuracy", k=3, cv=4, device="gpu", array_module=module)
    ours, theirs = ParticleStates(device, 3), ParticleStates(cpu, 3)
    rng = np.random.default_rng(2)
    for masks in _walk(rng, cpu.n_genes, 4, 8, {5: "cut"}):
        np.testing.assert_array_equal(ours.values(range(4), masks),
                                      theirs.values(range(4), masks))
    assert ours.counts == theirs.counts and ours.counts.moved > 0


SWARMS = {
    "vlpso": {"n_particles": 12, "n_iterations": 12, "n_divisions": 3, "change_after": 4},
    "pso": {"n_particles": 8, "n_iterations": 8},
    "bpso": {"n_particles": 8, "n_iterations": 8},
    "cbpso": {"n_particles": 8, "n_iterations": 10},
    "pso-lsrg": {"n_particles": 6, "n_iterations": 6, "ls_tries": 4},
    "cso": {"n_particles": 8, "n_iterations": 6},
}
"""Swarms long enough for particles to settle and move a few genes a round."""

SETTLING = ("vlpso", "pso-lsrg")
"""The swarms whose particles move a few genes a round here (PSO's, BPSO's and CBPSO's
positions flip many genes of these small subsets each round: full products)."""

REPRESENTATIVE = ("vlpso", "pso-lsrg")


def recorded_states(monkeypatch):
    """The list of the :class:`ParticleStates` the searches make from now on, in order."""
    made = []

    class Recorded(ParticleStates):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(hpcswarm.swarm.engine.evaluation, "ParticleStates", Recorded)
    return made


def _budgets(n_samples, n_genes):
    """None (the default), a budget of two states (partly full) and zero, in GB."""
    return [None, 2 * state_bytes(n_samples, n_samples, n_genes) / 1e9, 0.0]


@pytest.mark.parametrize("objective", ["accuracy", "balanced-accuracy"])
@pytest.mark.parametrize("name", [name if name in REPRESENTATIVE
                                  else pytest.param(name, marks=pytest.mark.slow)
                                  for name in sorted(SWARMS)])
def test_a_search_does_not_depend_on_the_cache_budget(name, objective, monkeypatch):
    made = recorded_states(monkeypatch)
    X, y = small_data(seed=2, n_samples=40, n_genes=150)
    params = {**SWARMS[name], "objective": objective}
    found, counts = [], []
    for budget in _budgets(*X.shape):
        made.clear()
        found.append(comparable(run_search(X, y, name, params, seed=3, cache_memory=budget)))
        counts.append(made[0].counts)
    assert found[0] == found[1] == found[2]
    if name != "cso":  # CSO's archive computes subsets away from their particles' states
        assert counts[0].rebuilt > 0 and counts[0].uncached == 0
        assert counts[1].rebuilt > 0 and counts[1].uncached > 0
    if name in SETTLING:
        assert counts[0].moved > 0 and counts[1].moved > 0
    assert counts[2].moved == counts[2].rebuilt == 0


def test_select_the_job_file_and_run_pass_the_cache_budget(monkeypatch, tmp_path):
    seen = []
    real = hpcswarm.selection.search.cache_states
    monkeypatch.setattr(hpcswarm.selection.search, "cache_states",
                        lambda memory, *rest: seen.append(memory) or real(memory, *rest))
    X, y = small_data(seed=2, n_samples=30, n_genes=40)
    select(X, y, algorithm="pso", n_particles=4, n_iterations=2, cache_memory=0.25)
    assert seen and set(seen) == {0.25}
    job = tmp_path / "job.toml"
    job.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\ncache_memory = 0.5\n')
    assert read_job(str(job)).spec.cache_memory == 0.5
    assert read_job(str(job), ["cache_memory=0"]).spec.cache_memory == 0.0
    assert "cache_memory" not in read_job(str(job)).identity()  # results do not depend on it
    flags = build_parser().parse_args(["run", "--algorithm", "pso", "--data", "x.h5",
                                       "--cache-memory", "2"])
    assert flags.cache_memory == 2.0


def test_the_default_budget_leaves_a_full_evaluation_its_memory():
    from hpcswarm.selection.search import default_cache_bytes

    assert default_cache_bytes(10e9, 1e9, 1e9) == 2.5e9  # a quarter of what the rank sees
    assert default_cache_bytes(10e9, 5e9, 1e9) == pytest.approx(2e9)  # what 80 % leaves
    assert default_cache_bytes(10e9, 7e9, 2e9) == 0.0  # nothing left: every subset in full


def test_the_symmetric_change_stays_within_the_flip_bound():
    """:func:`~hpcswarm.fitness.distances.flip_gram` against the exact change of every pair,
    on values of very different scales, within ``0.5 gram_bound_factor(F)`` of the
    magnitudes, as :func:`~hpcswarm.fitness.distances.flip_rows`."""
    from hpcswarm.fitness.distances import (exact_sq_distances, flip_gram, flip_rows,
                                            flip_terms, gram_bound_factor)

    rng = np.random.default_rng(5)
    n = 30
    for n_added, n_removed in [(3, 0), (0, 4), (7, 5)]:
        added = rng.normal(size=(n_added, n)) * 10.0 ** rng.integers(-3, 4, size=(n_added, 1))
        removed = rng.normal(size=(n_removed, n)) * 10.0 ** rng.integers(-3, 4,
                                                                         size=(n_removed, 1))
        left, right, delta_sq, magnitude = flip_terms(added, removed)
        exact = np.array([[exact_sq_distances(added.T[i], added.T[[j]])[0]
                           - exact_sq_distances(removed.T[i], removed.T[[j]])[0]
                           for j in range(n)] for i in range(n)])
        bound = 0.5 * gram_bound_factor(n_added + n_removed) * (magnitude[:, None]
                                                                + magnitude[None, :])
        for change in (flip_gram(added, removed, delta_sq, np.empty((n, n))),
                       flip_rows(left, right, slice(0, n), np.empty((n, n)))):
            assert np.all(np.abs(change - exact) <= bound)
