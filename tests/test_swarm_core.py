"""Shared swarm machinery: parameters, streams, ordering, loop, result invariants, JSON."""

import dataclasses
import json

import numpy as np
import pytest

from hpcswarm.errors import DataError, ParameterError
from hpcswarm.fitness.archive import mask_key
from hpcswarm.selection.methods import ALGORITHMS, algorithm_params
from hpcswarm.selection.search import make_fitness, result_document, run_search
from hpcswarm.store.atomic import write_json
from hpcswarm.swarm import HISTORY_FIELDS
from hpcswarm.swarm.engine.ledger import RoundLedger
from hpcswarm.swarm.engine.ordering import best_index, better
from hpcswarm.swarm.engine.state import particle_streams, run_seed_sequence
from hpcswarm.swarm.operators.mean import swarm_mean
from hpcswarm.swarm.params import parse_assignments
from synthetic import SMALL, small_data


def test_every_algorithm_has_small_settings():
    assert set(SMALL) == set(ALGORITHMS)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_returned_mask_reevaluates_to_reported_fitness(name):
    X, y = small_data()
    result = run_search(X, y, name, SMALL[name], seed=4)
    fitness, _ = make_fitness(X, y, algorithm_params(name, SMALL[name]), 4)
    assert result.mask.any()
    assert fitness(result.mask) == result.fitness
    assert result.history[-1]["best_fitness"] == result.fitness
    assert result.history[-1]["best_size"] == result.mask.sum()


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_history_rows_and_monotone_best(name):
    X, y = small_data()
    result = run_search(X, y, name, SMALL[name], seed=1)
    assert all(tuple(row) == HISTORY_FIELDS for row in result.history)
    assert [row["iteration"] for row in result.history] == list(range(len(result.history)))
    best = [(row["best_fitness"], -row["best_size"]) for row in result.history]
    assert best == sorted(best)
    evaluations = [row["evaluations"] for row in result.history]
    assert evaluations == sorted(evaluations) and evaluations[0] > 0
    assert result.history[0]["new_subsets"] > 0
    assert 0 < result.extra["best_found_at"] <= evaluations[-1]


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_same_seed_same_result_other_seed_other_run(name):
    X, y = small_data()
    first = run_search(X, y, name, SMALL[name], seed=7)
    again = run_search(X, y, name, SMALL[name], seed=7)
    assert np.array_equal(first.mask, again.mask) and first.fitness == again.fitness
    strip = [{k: v for k, v in row.items() if k != "seconds"} for row in first.history]
    assert strip == [{k: v for k, v in row.items() if k != "seconds"} for row in again.history]


def test_round_count_is_n_iterations_and_target_stops_early():
    X, y = small_data()
    result = run_search(X, y, "bpso", {"n_particles": 6, "n_iterations": 5}, seed=0)
    assert len(result.history) == 5
    assert result.history[-1]["evaluations"] <= 5 * 6
    easy = run_search(X, y, "bpso", {"n_particles": 6, "n_iterations": 50, "target": 0.0},
                      seed=0)
    assert len(easy.history) == 1


def test_ordering_prefers_fitness_then_fewer_genes_then_lower_index():
    assert better(0.9, 10, 0.8, 1)
    assert better(0.9, 3, 0.9, 4)
    assert not better(0.9, 4, 0.9, 4)
    assert best_index([0.5, 0.9, 0.9, 0.9], [1, 5, 3, 3]) == 2
    assert best_index([0.1, 0.1], [2, 2]) == 0


def test_particle_streams_depend_on_index_only():
    root = run_seed_sequence(11)
    whole = [g.random(4) for g in particle_streams(root, range(6))]
    part = [g.random(4) for g in particle_streams(root, [3, 4])]
    assert np.array_equal(whole[3], part[0]) and np.array_equal(whole[4], part[1])
    assert not np.array_equal(whole[0], whole[1])


def test_swarm_mean():
    assert np.array_equal(swarm_mean(np.array([[0.0, 1.0], [1.0, 1.0]])), [0.5, 1.0])


def test_defaults_are_the_papers_settings():
    lsrg = algorithm_params("pso-lsrg")
    assert (lsrg["n_particles"], lsrg["n_iterations"], lsrg["w"], lsrg["w_final"]) == (100, 70, 0.9, 0.4)
    assert (lsrg["c1"], lsrg["theta"], lsrg["k"], lsrg["cv"], lsrg["reset_after"]) == (2.0, 0.6, 1, "loo", 3)
    assert (lsrg["ls_tries"], lsrg["ls_flip"]) == (100, 0.02)
    cso = algorithm_params("cso")
    assert (cso["n_particles"], cso["n_iterations"], cso["phi"], cso["theta"]) == (100, 200, 0.1, 0.5)
    assert (cso["k"], cso["cv"], cso["objective"]) == (5, 10, "error") and cso["archive_size"] > 0
    fsi = algorithm_params("fsipso")
    assert (fsi["n_particles"], fsi["n_subspaces"], fsi["objective"], fsi["alpha"]) == (30, 5, "combined", 0.9)
    assert (fsi["k"], fsi["cv"], fsi["theta"]) == (5, 5, 0.6)
    cb = algorithm_params("cbpso")
    assert (cb["n_particles"], cb["n_iterations"], cb["w"], cb["c1"], cb["vmax"]) == (20, 100, 1.0, 2.0, 6.0)
    assert algorithm_params("bpso")["vmax"] == 6.0


def test_unknown_key_names_it_and_the_allowed_ones():
    with pytest.raises(ParameterError, match=r"'bogus'.*allowed: .*c1.*n_particles"):
        algorithm_params("pso", {"bogus": "1"})


@pytest.mark.parametrize(
    "key, value",
    [("n_particles", "ten"), ("n_particles", "2.5"), ("w", "fast"), ("cv", "1"),
     ("objective", "recall"), ("theta", "1.5"), ("init", "huge"), ("target", "x")],
)
def test_ill_typed_value_names_the_key(key, value):
    with pytest.raises(ParameterError, match=f"'{key}'"):
        algorithm_params("pso", {key: value})


def test_string_values_are_parsed():
    params = algorithm_params("pso", {"n_particles": "12", "cv": "loo", "target": "none",
                                      "w_final": "0.4", "init": "small"})
    assert (params["n_particles"], params["cv"], params["target"], params["w_final"]) == (12, "loo", None, 0.4)
    assert algorithm_params("cso", {"cv": "3"})["cv"] == 3


def test_cross_parameter_checks_and_unknown_algorithm():
    with pytest.raises(ParameterError, match="n_particles"):
        algorithm_params("cso", {"n_particles": 7})
    with pytest.raises(ParameterError, match="n_subspaces"):
        algorithm_params("fsipso", {"n_iterations": 4, "n_subspaces": 5})
    with pytest.raises(ParameterError, match="pso-lsrg"):
        algorithm_params("nope")
    with pytest.raises(ParameterError, match="alpha"):
        run_search(*small_data(), "fsipso", {"alpha": 1.0})


def test_parse_assignments():
    assert parse_assignments(["a=1", " b = x=y "]) == {"a": "1", "b": "x=y"}
    with pytest.raises(ParameterError, match="key=value"):
        parse_assignments(["novalue"])


def test_json_document_is_valid_and_written_atomically(tmp_path):
    X, y = small_data()
    result = run_search(X, y, "cso", SMALL["cso"], seed=2)
    names = [f"g{i}" for i in range(X.shape[1])]
    document = result_document(result, 2, names, "synthetic")
    path = tmp_path / "out.json"
    write_json(path, document)
    loaded = json.loads(path.read_text())
    assert loaded["selected_genes"] == result.genes.tolist()
    assert loaded["selected_gene_names"] == [names[g] for g in result.genes]
    assert loaded["fitness"] == result.fitness and loaded["params"]["cv"] == 10
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    with pytest.raises(DataError):
        write_json(tmp_path / "missing" / "out.json", document)
    with pytest.raises(DataError):
        write_json(tmp_path, document)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    odd = dataclasses.replace(result, fitness=float("nan"))
    json.dumps(result_document(odd, 2), allow_nan=False)


def _one_by_one(masks, values, computed, phases, particles):
    """The ledger of subsets added one at a time, and the first strictly best by hand."""
    ledger, best = RoundLedger(), None
    for mask, value, flag, phase, particle in zip(masks, values, computed, phases, particles):
        ledger.add_many(mask[None, :], [value], [flag], phase, [particle])
        if not np.isnan(value) and (best is None or better(value, mask.sum(), *best[:2])):
            best = (value, mask.sum(), phase, particle, mask)
    assert np.array_equal(ledger.keys, np.array([np.frombuffer(mask_key(m), np.uint8)
                                                 for m in masks]).reshape(-1, 16))
    assert ledger.computed == sum(computed)
    assert ledger.best[:4] == best[:4] and np.array_equal(ledger.best[4], best[4])
    return ledger


def test_a_ledger_adds_many_subsets_as_one_by_one():
    rng = np.random.default_rng(2)
    masks = rng.random((40, 30)) < 0.3
    values = rng.integers(0, 3, size=40) / 2.0  # many equal values: the size and order decide
    computed = masks.any(axis=1)
    phases = [0] + [1] * 39
    particles = np.arange(40) * 3
    one = _one_by_one(masks, values, computed, phases, particles)
    many = RoundLedger()
    many.add_many(masks[:1], values[:1], computed[:1], 0, particles[:1])
    for start in range(1, 40, 13):
        many.add_many(masks[start:start + 13], values[start:start + 13],
                      computed[start:start + 13], 1, particles[start:start + 13])
    assert np.array_equal(one.keys, many.keys) and one.computed == many.computed
    assert one.best[:4] == many.best[:4] and np.array_equal(one.best[4], many.best[4])


def test_a_ledger_adds_flipped_subsets_as_built_ones_and_never_keeps_an_unknown_fitness():
    rng = np.random.default_rng(5)
    mask = rng.random(30) < 0.3
    flips = np.sort(np.array([rng.choice(30, 4, replace=False) for _ in range(40)]), axis=1)
    built = np.array([mask] * 40)
    built[np.arange(40)[:, None], flips] ^= True
    values = rng.integers(0, 3, size=40) / 2.0
    values[rng.random(40) < 0.5] = np.nan  # decided without their fitness
    values[0] = np.nan
    sizes = built.sum(axis=1)
    one = _one_by_one(built, values, sizes > 0, [1] * 40, [0] * 40)
    many = RoundLedger()
    for start in range(0, 40, 9):
        many.add_flips(mask, flips[start:start + 9], values[start:start + 9],
                       sizes[start:start + 9], sizes[start:start + 9] > 0, 1)
    assert np.array_equal(one.keys, many.keys) and one.computed == many.computed
    assert one.best[:4] == many.best[:4] and np.array_equal(one.best[4], many.best[4])
