"""One test per mechanism of the papers, each failing if the mechanism is missing or wrong."""

import numpy as np
import pytest

from hpcswarm.fitness.moves import ParticleStates
from hpcswarm.fitness.subset import SubsetFitness
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import make_fitness, run_search
from hpcswarm.swarm.engine.evaluation import EvaluationService
from hpcswarm.swarm.engine.ordering import better
from hpcswarm.swarm.methods.bpso import CBPSO
from hpcswarm.swarm.methods.cso import CSO
from hpcswarm.swarm.methods.fsipso import FSIPSO
from hpcswarm.swarm.methods.pso import PSOLS, PSOLSRG, PSORG
from hpcswarm.swarm.methods.subset_ranking import FSR
from hpcswarm.swarm.operators.local_search import draw_tries, local_search
from hpcswarm.swarm.operators.ranking import rank_genes, single_gene_accuracies
from synthetic import SMALL, small_data




class Spy:
    """A SubsetFitness proxy counting the calls of each evaluation path."""

    def __init__(self, fitness):
        self._fitness = fitness
        self.calls = {"call": 0, "many": 0, "flip": 0, "flips": 0, "tries": 0, "new_state": 0,
                      "apply_flip": 0}
        self.many_masks = []

    def __getattr__(self, name):
        return getattr(self._fitness, name)

    def __call__(self, mask):
        self.calls["call"] += 1
        return self._fitness(mask)

    def many(self, masks):
        self.calls["many"] += 1
        self.many_masks.append(np.array(masks))
        return self._fitness.many(masks)

    def new_state(self, mask):
        self.calls["new_state"] += 1
        return self._fitness.new_state(mask)

    def flip(self, state, genes):
        self.calls["flip"] += 1
        return self._fitness.flip(state, genes)

    def flips(self, state, flips):
        self.calls["flips"] += 1
        self.calls["tries"] += len(flips)
        return self._fitness.flips(state, flips)

    def apply_flip(self, state, genes):
        self.calls["apply_flip"] += 1
        return self._fitness.apply_flip(state, genes)


def build(cls, overrides, seed=0, data=None):
    X, y = data if data is not None else small_data()
    params = algorithm_params(cls.name, overrides)
    fitness, _ = make_fitness(X, y, params, seed)
    spy = Spy(fitness)
    return cls(EvaluationService.for_params(spy, params), params, seed=seed), spy, fitness


def stagnation_rounds(history, after):
    """Rounds at which ``after`` rounds in a row have passed without improvement of the best."""
    fired, count, previous = [], 0, None
    for row in history:
        key = (row["best_fitness"], row["best_size"])
        improved = previous is None or better(key[0], key[1], previous[0], previous[1])
        count = 0 if improved else count + 1
        if count == after:
            fired.append(row["iteration"])
            count = 0
        previous = key
    return fired


# ---------------------------------------------------------------- PSO-LSRG gbest reset
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gbest_reset_fires_after_exactly_three_stagnant_rounds(seed):
    algo, _, _ = build(PSOLSRG, {"n_particles": 5, "n_iterations": 16, "ls_tries": 3}, seed)
    algo.advance()
    while not algo.done():
        algo.advance()
        if algo.events and algo.events[-1]["iteration"] == algo.iteration:
            assert not algo.gbest_mask.any() and not algo.gbest_position.any()
            assert algo.gbest_fitness < algo.best_fitness
    resets = [e["iteration"] for e in algo.events if e["event"] == "gbest_reset"]
    assert resets == stagnation_rounds(algo.history, 3)
    assert resets, "the run never stagnated: the test would not check anything"
    # the reset never touches the returned subset
    assert algo.best_mask.any()


def test_pso_ls_never_resets_and_pso_rg_never_searches_locally():
    ls, _, _ = build(PSOLS, {"n_particles": 5, "n_iterations": 12, "ls_tries": 3})
    ls.run()
    assert ls.events == [] and stagnation_rounds(ls.history, 3)
    rg, spy, _ = build(PSORG, {"n_particles": 5, "n_iterations": 12})
    rg.run()
    assert spy.calls["flip"] == 0 and spy.calls["new_state"] == 0


# ---------------------------------------------------------------- local search
def one_try_at_a_time(fitness, mask, value, n_tries, n_flip, rng):
    """The local search of Tran et al. Sec. 3.1-3.2 as first written: one try per call."""
    current = np.array(mask, dtype=bool)
    size = int(current.sum())
    state = fitness.new_state(current)
    tried, values, improved = [], [], []
    for _ in range(n_tries):
        genes = np.sort(rng.choice(current.size, n_flip, replace=False))
        candidate_value = fitness.flip(state, genes)
        candidate_size = size + int((~current[genes]).sum()) - int(current[genes].sum())
        candidate = current.copy()
        candidate[genes] = ~candidate[genes]
        tried.append(candidate)
        values.append(candidate_value)
        improved.append(better(candidate_value, candidate_size, value, size))
        if improved[-1]:
            fitness.apply_flip(state, genes)
            current = candidate
            value, size = float(candidate_value), candidate_size
    return current, value, tried, values, improved


@pytest.mark.parametrize("n_flip, density", [(2, 0.5), (1, 0.1), (6, 0.9), (3, 0.03)])
@pytest.mark.parametrize("needed", [None, "all"])
def test_local_search_equals_one_try_at_a_time_and_is_incremental_only(n_flip, density,
                                                                        needed):
    X, y = small_data()
    fitness, _ = make_fitness(X, y, algorithm_params("pso-lsrg"), 0)
    rng = np.random.default_rng(3)
    everything = None if needed is None else (lambda sizes, highest: np.ones(sizes.size, bool))
    for trial in range(5):
        mask = rng.random(X.shape[1]) < density
        value = fitness(mask)
        spy = Spy(fitness)
        tried, values = [], []

        def observe(current, flips, found, sizes):
            for genes, size in zip(flips, sizes):
                tried.append(current.copy())
                tried[-1][genes] = ~current[genes]
                assert tried[-1].sum() == size
            values.extend(found)

        seed = int(rng.integers(2**32))
        search_rng, loop_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        tries = draw_tries(search_rng, X.shape[1], n_flip, 30)
        found, found_value, flipped = local_search(spy, mask, value, tries, observe=observe,
                                                   needed=everything)
        assert spy.calls["flip"] == 0 and spy.calls["new_state"] == (spy.calls["tries"] > 0)
        assert spy.calls["call"] == 0 and spy.calls["many"] == 0
        assert not better(value, mask.sum(), found_value, found.sum())
        assert fitness(found) == found_value
        assert np.array_equal(flipped, found != mask)
        expected, expected_value, expected_tried, expected_values, improved = \
            one_try_at_a_time(fitness, mask, value, 30, n_flip, loop_rng)
        assert np.array_equal(found, expected) and found_value == expected_value
        assert np.array_equal(np.array(tried), np.array(expected_tried))
        scored = ~np.isnan(values)
        assert np.array_equal(np.array(values)[scored], np.array(expected_values)[scored])
        assert spy.calls["tries"] >= scored.sum()
        # a try left unscored could not have been better: its subset was not all correct,
        # or all correct and still not better than the current subset
        assert not np.any(np.array(improved)[~scored])
        if needed is not None:
            assert scored.all() and spy.calls["tries"] >= 30
        assert search_rng.bit_generator.state == loop_rng.bit_generator.state


def test_local_search_scores_only_the_tries_that_could_beat_the_current_subset():
    X, y = small_data()
    X[:, :3] += 4.0 * y[:, None]
    fitness, _ = make_fitness(X, y, algorithm_params("pso-lsrg"), 0)
    start = np.zeros(X.shape[1], dtype=bool)
    start[:3] = True
    assert fitness(start) == 1.0  # every prediction right: only smaller tries can win
    spy = Spy(fitness)
    seen = []

    def observe(mask, flips, values, sizes):
        seen.extend((mask.sum(), size, value) for size, value in zip(sizes, values))

    local_search(spy, start, 1.0, draw_tries(np.random.default_rng(0), X.shape[1], 3, 30),
                 observe=observe)
    assert len(seen) == 30 and 0 < spy.calls["tries"] < 30 and spy.calls["new_state"] == 1
    for current, size, value in seen:
        assert np.isnan(value) == (size >= current or size == 0)  # empty: the worst
    # one gene at the highest fitness: a one-gene flip empties it or adds a gene, never
    # better, so nothing is scored and no distance state is made
    spy = Spy(fitness)
    found, value, flipped = local_search(spy, start & (np.arange(X.shape[1]) == 0), 1.0,
                                         draw_tries(np.random.default_rng(0), X.shape[1], 1, 10))
    assert spy.calls["tries"] == spy.calls["new_state"] == 0
    assert value == 1.0 and found.sum() == 1 and not flipped.any()


class RecordingLSRG(PSOLSRG):
    """PSO-LSRG noting every new pbest and what the local search made of it."""

    def after_pbests(self, improved):
        before = [(self.state.pbest_fitness[i], self.state.pbest_mask[i].sum()) for i in improved]
        super().after_pbests(improved)
        self.log = getattr(self, "log", [])
        for i, (value, size) in zip(improved, before):
            after = (self.state.pbest_fitness[i], self.state.pbest_mask[i].sum())
            self.log.append((value, size) + after)


def test_local_search_runs_on_each_new_pbest_through_the_incremental_path():
    algo, spy, fitness = build(RecordingLSRG, {"n_particles": 6, "n_iterations": 5,
                                               "ls_tries": 7})
    algo.run()
    assert spy.calls["tries"] >= 7 * len(algo.log) and spy.calls["new_state"] == len(algo.log)
    assert spy.calls["many"] == 5 and spy.calls["call"] == 0
    for value, size, new_value, new_size in algo.log:
        assert not better(value, size, new_value, new_size)
    assert any(better(n, s2, v, s1) for v, s1, n, s2 in algo.log), "local search never helped"
    for i in range(6):
        pbest = algo.state.pbest_mask[i]
        assert fitness(pbest) == algo.state.pbest_fitness[i]
        assert np.array_equal(pbest, algo.state.pbest_position[i] > 0.6)


# ---------------------------------------------------------------- CSO
def test_cso_re_evaluates_exactly_the_losers_and_winners_pass_unchanged():
    algo, spy, _ = build(CSO, {"n_particles": 10, "n_iterations": 8})
    algo.advance()
    assert spy.calls["many"] == 1 and len(spy.many_masks[0]) == 10
    for round_ in range(1, 8):
        fitness_before = algo.state.fitness.copy()
        sizes_before = algo.state.sizes()
        position_before = algo.state.position.copy()
        velocity_before = algo.state.velocity.copy()
        algo.advance()
        losers = algo.last_losers
        winners = np.setdiff1d(np.arange(10), losers)
        assert losers.size == 5 and winners.size == 5
        assert np.array_equal(spy.many_masks[-1], algo.state.mask[losers])
        assert spy.calls["many"] == round_ + 1
        assert np.array_equal(algo.state.position[winners], position_before[winners])
        assert np.array_equal(algo.state.velocity[winners], velocity_before[winners])
        assert np.array_equal(algo.state.fitness[winners], fitness_before[winners])
        assert not np.array_equal(algo.state.position[losers], position_before[losers])
        # each winner is at least as good as some loser it met: no loser beats every winner
        best_loser = max(losers, key=lambda i: (fitness_before[i], -sizes_before[i]))
        best_winner = max(winners, key=lambda i: (fitness_before[i], -sizes_before[i]))
        assert not better(fitness_before[best_loser], sizes_before[best_loser],
                          fitness_before[best_winner], sizes_before[best_winner])


# ---------------------------------------------------------------- FSIPSO
def test_fsipso_search_space_grows_at_the_right_generations():
    # T = 10 generations, M = 5: phase length 2, sub-spaces join at updates t = 2, 4, 6, 8
    algo, _, fitness = build(FSIPSO, {"n_particles": 6, "n_iterations": 11, "n_subspaces": 5})
    algo.run()
    assert [e["iteration"] for e in algo.events] == [3, 5, 7, 9]
    assert [e["search_space"] for e in algo.events] == [16, 24, 32, 40]
    expected_order = rank_genes(single_gene_accuracies(fitness, np.arange(40)))
    assert np.array_equal(algo.order, expected_order)
    assert set(expected_order[:3]) == {0, 1, 2}


def test_fsipso_untouched_dimensions_stay_zero():
    algo, _, _ = build(FSIPSO, {"n_particles": 6, "n_iterations": 11, "n_subspaces": 5})
    algo.advance()
    while True:
        outside = np.setdiff1d(np.arange(40), algo.active)
        s = algo.state
        for array in (s.position, s.velocity, s.pbest_position):
            assert not array[:, outside].any()
        assert not s.mask[:, outside].any() and not algo.gbest_position[outside].any()
        assert np.array_equal(np.sort(algo.active),
                              np.sort(np.concatenate(algo.subspaces[:algo.phase])))
        if algo.done():
            break
        algo.advance()
    assert algo.phase == 5 and algo.active.size == 40


def test_fsipso_mutation_rate_is_one_over_search_space():
    from hpcswarm.swarm.operators.particle import reflect_mutation

    rng = np.random.default_rng(0)
    x = np.full(200_000, 0.25)
    mutated = reflect_mutation(x, 1 / 8, rng)
    assert set(np.unique(mutated)) == {0.25, 0.75}
    assert abs(np.mean(mutated == 0.75) - 1 / 8) < 0.005


# ---------------------------------------------------------------- CBPSO
class RecordingCBPSO(CBPSO):
    def after_move(self):
        self.before_complement = self.state.position.copy()
        super().after_move()


@pytest.mark.parametrize("seed", [0, 3])
def test_cbpso_complements_exactly_half_after_three_stagnant_rounds(seed):
    algo, _, _ = build(RecordingCBPSO, {"n_particles": 9, "n_iterations": 25}, seed)
    algo.advance()
    while not algo.done():
        algo.advance()
        fired = [e for e in algo.events if e["iteration"] == algo.iteration]
        if fired:
            chosen = np.array(fired[0]["particles"])
            others = np.setdiff1d(np.arange(9), chosen)
            assert chosen.size == 4 and np.unique(chosen).size == 4
            pre, now = algo.before_complement, algo.state.position
            assert np.array_equal(now[chosen], 1.0 - pre[chosen])
            # the evaluated subsets are the complemented ones
            assert np.array_equal(algo.state.mask[chosen], pre[chosen] < 0.5)
            assert np.array_equal(now[others], pre[others])
    fired = [e["iteration"] for e in algo.events]
    assert fired, "the run never stagnated: the test would not check anything"
    # the complement is applied in the move that follows the third stagnant round
    assert fired == [r + 1 for r in stagnation_rounds(algo.history, 3)
                     if r + 1 < len(algo.history)]


# ---------------------------------------------------------------- FSR
def test_fsr_subsets_have_exactly_d_genes_and_half_the_swarm_starts_from_d_minus_1():
    algo, spy, _ = build(FSR, {"n_particles": 6, "n_iterations": 4, "max_size": 5,
                               "target": "none"})
    result = algo.run()
    subsets = result.extra["subsets"]
    assert [s["size"] for s in subsets] == [1, 2, 3, 4, 5]
    assert all(len(s["genes"]) == s["size"] for s in subsets)
    sizes = [np.unique(m.sum(axis=1)) for m in spy.many_masks]
    assert [s.tolist() for s in sizes] == [[d] for d in range(1, 6) for _ in range(4)]
    # the first round of step d: particles 0-2 hold the (d-1) subset plus one gene
    for d in range(2, 6):
        first = spy.many_masks[(d - 1) * 4]
        previous = np.zeros(40, dtype=bool)
        previous[subsets[d - 2]["genes"]] = True
        for row in first[:3]:
            assert (row & previous).sum() == d - 1
    assert result.mask.sum() in range(1, 6)


# ---------------------------------------------------------------- operators and schedules
def test_initialisation_strategies_select_their_share_of_genes():
    from hpcswarm.swarm.operators.initialisation import initial_position, strategy_of

    rng = np.random.default_rng(0)
    for strategy, size in [("normal", 50), ("small", 10), ("large", 67)]:
        position = initial_position(strategy, 100, 0.6, rng)
        assert (position > 0.6).sum() == size and position.min() >= 0 and position.max() <= 1
    assert [strategy_of("mixed", i, 30) for i in (0, 19, 20, 29)] == ["small", "small",
                                                                       "large", "large"]


def test_pso_initial_sizes_follow_the_mixed_strategy():
    from hpcswarm.swarm.methods.pso import PSO

    algo, spy, _ = build(PSO, {"n_particles": 9, "n_iterations": 1, "init": "mixed"},
                         data=small_data(n_genes=60))
    algo.run()
    assert spy.many_masks[0].sum(axis=1).tolist() == [6] * 6 + [40] * 3


def test_inertia_decreases_linearly_as_table_2():
    from hpcswarm.swarm.methods.particle_swarm import inertia

    assert inertia(0.9, 0.4, 0, 70) == 0.9
    assert inertia(0.9, 0.4, 35, 70) == pytest.approx(0.65)
    assert inertia(0.7298, None, 50, 70) == 0.7298


def test_velocity_is_clamped_and_positions_stay_in_the_unit_box():
    from hpcswarm.swarm.operators.particle import continuous_position, pso_velocity

    rng = np.random.default_rng(1)
    x = rng.random(1000)
    v = pso_velocity(np.zeros(1000), x, np.ones(1000), np.zeros(1000) + 1, 0.9, 2.0, 2.0, 0.6,
                     rng)
    assert v.max() <= 0.6 and v.max() == 0.6 and v.min() >= 0
    assert continuous_position(x, v).max() == 1.0


def test_binary_transfer_follows_the_sigmoid():
    from hpcswarm.swarm.operators.particle import binary_position, sigmoid

    rng = np.random.default_rng(2)
    assert sigmoid(np.array([0.0]))[0] == 0.5
    bits = binary_position(np.full(100_000, 1.0), rng)
    assert set(np.unique(bits)) == {0.0, 1.0}
    assert abs(bits.mean() - sigmoid(np.array([1.0]))[0]) < 0.01


def test_cso_loser_update_is_equation_3_and_4():
    from hpcswarm.swarm.operators.particle import cso_loser_update

    v, xl, xw, mean = (np.array([0.1, -0.2]), np.array([0.2, 0.9]), np.array([0.6, 0.1]),
                       np.array([0.4, 0.5]))
    r = np.random.default_rng(5).random((3, 2))
    new_v, new_x = cso_loser_update(v, xl, xw, mean, 0.1, np.random.default_rng(5))
    expected = r[0] * v + r[1] * (xw - xl) + 0.1 * r[2] * (mean - xl)
    assert np.array_equal(new_v, expected)
    assert np.array_equal(new_x, np.clip(xl + expected, 0, 1))


def test_repair_size_gives_exactly_d_genes_keeping_what_it_can():
    from hpcswarm.swarm.operators.particle import repair_size

    rng = np.random.default_rng(3)
    for _ in range(20):
        mask = rng.random(30) < rng.random()
        d = int(rng.integers(1, 30))
        repaired = repair_size(mask, d, rng)
        assert repaired.sum() == d
        if mask.sum() >= d:
            assert not (repaired & ~mask).any()
        else:
            assert not (mask & ~repaired).any()


@pytest.mark.parametrize("name", ["pso", "bpso", "cbpso", "pso-lsrg", "fsipso", "fsr", "vlpso"])
def test_subsets_that_cannot_matter_are_not_scored_and_change_nothing(name, monkeypatch):
    """A particle whose subset could not beat its pbest even with every prediction right
    (nor enter the front) is not scored; the run is the one that scores every subset."""
    X, y = small_data()
    X[:, :3] += 4.0 * y[:, None]  # every prediction right is within reach
    scored = []
    values = ParticleStates.values  # what the evaluation service scores particles through

    def counting(self, particles, masks):
        scored.append(len(masks))
        return values(self, particles, masks)

    monkeypatch.setattr(ParticleStates, "values", counting)
    pruned = run_search(X, y, name, SMALL[name], seed=2)
    pruned_scored = sum(scored)
    scored.clear()
    monkeypatch.setattr(SubsetFitness, "highest", lambda self, sizes: np.full(len(sizes), np.inf))
    every = run_search(X, y, name, SMALL[name], seed=2)
    assert np.array_equal(pruned.mask, every.mask) and pruned.fitness == every.fitness
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in pruned.history] == \
        [{k: v for k, v in row.items() if k != "seconds"} for row in every.history]
    assert [(p["size"], p["fitness"], list(p["genes"])) for p in pruned.front] == \
        [(p["size"], p["fitness"], list(p["genes"])) for p in every.front]
    if name in ("fsipso", "fsr"):  # in so few rounds the combined fitness stays below the
        assert pruned_scored <= sum(scored)  # pbests'; FSR stops a size once all are right
    else:
        assert pruned_scored < sum(scored)
