"""Greedy baselines (all-genes, SFS, SBS, LFS, GSBS): known answers, an independent oracle,
incremental = full evaluation, the loop's invariants, and the registry / command line."""

import json

import numpy as np
import pytest

from hpcswarm import cli
from hpcswarm.baselines import BASELINES, greedy
from hpcswarm.comm import world
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import KnnEvaluator
from hpcswarm.fitness.subset import SubsetFitness
from hpcswarm.selection.methods import algorithm_class, algorithm_params
from hpcswarm.selection.search import make_fitness, run_search
from hpcswarm.swarm import HISTORY_FIELDS

GREEDY = ("sfs", "sbs", "lfs", "gsbs")


def three_groups(seed=0, per_class=8, n_noise=6):
    """Gene 0 tells class 0 from {1, 2}, gene 1 tells class 1 from {0, 2}; together they tell
    all three apart; genes 2.. are small noise. The best greedy path adds genes 0 and 1."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), per_class)
    X = rng.normal(scale=0.3, size=(y.size, 2 + n_noise))
    X[:, 0] += np.where(y == 0, 0.0, 10.0)
    X[:, 1] += np.where(y == 1, 10.0, 0.0)
    return X, y


def copies(seed=1, n_samples=20, n_copies=4):
    """Every gene a copy of one informative gene: every subset of the same size ties."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 2
    gene = rng.normal(size=n_samples) + 1.5 * y
    return np.repeat(gene[:, None], n_copies, axis=1), y


# ---------------------------------------------------------------- an independent oracle
def loo_1nn_correct(X, y, genes):
    """Correct 1-NN leave-one-out predictions on ``genes``, written from scratch."""
    if len(genes) == 0:
        return -1
    Z = X[:, list(genes)]
    d = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    return int(np.count_nonzero(y[d.argmin(axis=1)] == y))


def oracle(X, y, forward, highest_index_wins=False, allowed=None):
    """Naive greedy search: (path, final subset) with the documented rules."""
    n_genes = X.shape[1]
    current = set() if forward else set(range(n_genes))
    value = loo_1nn_correct(X, y, sorted(current))
    path = []
    while True:
        pool = [g for g in range(n_genes) if (g not in current) == forward
                and (allowed is None or g in allowed)]
        if not pool:
            return path, current
        scored = [(loo_1nn_correct(X, y, sorted(current ^ {g})), g) for g in pool]
        best = max(s for s, _ in scored)
        ties = [g for s, g in scored if s == best]
        gene = ties[-1] if highest_index_wins else ties[0]
        improves = best > value if forward else best >= value and len(current) > 1
        if not improves:
            return path, current
        current ^= {gene}
        value = best
        path.append(gene)


# ---------------------------------------------------------------- known answers
def test_sfs_adds_the_two_informative_genes_then_stops():
    X, y = three_groups()
    result = run_search(X, y, "sfs")
    assert sorted(result.extra["path"]) == [0, 1] and set(result.genes) == {0, 1}
    assert result.fitness == 1.0 and result.extra["stopped"] == "no improving step"
    singles = [KnnEvaluator(X, y).score(np.eye(X.shape[1], dtype=bool)[g]).correct
               for g in range(X.shape[1])]
    assert result.extra["path"][0] == int(np.argmax(singles))  # step 1: the best gene alone
    assert len(result.history) == 3  # two steps taken, a third that improves nothing


def test_sbs_keeps_the_informative_genes_and_never_loses_accuracy():
    X, y = three_groups()
    result = run_search(X, y, "sbs")
    assert {0, 1} <= set(result.genes) and result.fitness == 1.0
    assert result.extra["start_fitness"] <= result.fitness
    assert all(b >= a for a, b in zip(result.extra["path_fitness"], result.extra["path_fitness"][1:]))


def test_ties_sbs_removes_lowest_index_gsbs_highest_sfs_stops_at_one_gene():
    X, y = copies()
    sbs, gsbs, sfs = (run_search(X, y, name) for name in ("sbs", "gsbs", "sfs"))
    assert sbs.extra["path"] == [0, 1, 2] and sbs.genes.tolist() == [3]
    assert gsbs.extra["path"] == [3, 2, 1] and gsbs.genes.tolist() == [0]
    assert sfs.extra["path"] == [0] and sfs.genes.tolist() == [0]  # an equal-fitness gene is not better
    assert sbs.fitness == gsbs.fitness == sfs.fitness


def test_lfs_fixed_set_and_fixed_width_candidate_sets():
    X, y = three_groups()
    fixed_set = run_search(X, y, "lfs", {"n_ranked": 1})
    ranking = fixed_set.extra["ranking"]
    assert fixed_set.genes.tolist() == ranking == [fixed_set.extra["path"][0]]
    assert fixed_set.extra["stopped"] == "no candidates" and fixed_set.fitness < 1.0
    width = run_search(X, y, "lfs", {"n_ranked": 1, "lfs_type": "fixed-width"})
    assert set(width.genes) == {0, 1} and width.fitness == 1.0  # the 2nd ranked gene got in
    everything = run_search(X, y, "lfs", {"n_ranked": X.shape[1]})
    sfs = run_search(X, y, "sfs")
    assert everything.extra["path"] == sfs.extra["path"]


def test_all_genes_is_one_evaluation_of_every_gene():
    X, y = three_groups()
    result = run_search(X, y, "all-genes", {"k": 3, "cv": 4}, seed=2)
    expected = KnnEvaluator(X, y, k=3, cv=4, seed=2)
    assert result.mask.all() and len(result.history) == 1
    assert result.fitness == expected.score(result.mask).accuracy
    assert result.history[0]["evaluations"] == 1


@pytest.mark.parametrize("seed", [3, 4, 5])
@pytest.mark.parametrize("name, forward, highest", [("sfs", True, False), ("sbs", False, False),
                                                    ("gsbs", False, True)])
def test_paths_equal_a_naive_oracle(seed, name, forward, highest):
    rng = np.random.default_rng(seed)
    y = np.arange(18) % 3
    X = rng.normal(size=(18, 7))
    X[:, seed % 7] += y  # one weakly informative gene
    result = run_search(X, y, name)
    path, final = oracle(X, y, forward, highest_index_wins=highest)
    assert result.extra["path"] == path and set(result.genes) == final


def test_lfs_equals_the_oracle_restricted_to_the_top_ranked_genes():
    rng = np.random.default_rng(8)
    y = np.arange(21) % 3
    X = rng.normal(size=(21, 9))
    X[:, [2, 6]] += y[:, None]
    result = run_search(X, y, "lfs", {"n_ranked": 4})
    singles = [loo_1nn_correct(X, y, [g]) for g in range(9)]
    top = set(np.argsort(-np.array(singles), kind="stable")[:4].tolist())
    assert set(result.extra["ranking"]) == top
    path, final = oracle(X, y, True, allowed=top)
    assert result.extra["path"] == path and set(result.genes) == final


# ---------------------------------------------------------------- evaluation paths
@pytest.mark.parametrize("name", GREEDY)
def test_incremental_full_and_auto_evaluation_agree_bit_for_bit(name):
    X, y = three_groups(seed=2, n_noise=70)  # 72 genes: "auto" switches path below FULL_BELOW
    runs = [run_search(X, y, name, {"evaluation": mode, "k": 3, "cv": 4}, seed=1)
            for mode in ("incremental", "full", "auto")]
    for other in runs[1:]:
        assert other.extra["path"] == runs[0].extra["path"]
        assert other.extra["path_fitness"] == runs[0].extra["path_fitness"]
        assert other.fitness == runs[0].fitness


# ---------------------------------------------------------------- the loop's invariants
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_result_history_and_determinism_as_the_swarms(name):
    X, y = three_groups(seed=5)
    params = {"objective": "combined", "cv": 3}
    result = run_search(X, y, name, params, seed=4)
    fitness, _ = make_fitness(X, y, algorithm_params(name, params), 4)
    assert fitness(result.mask) == result.fitness
    assert all(tuple(row) == HISTORY_FIELDS for row in result.history)
    assert result.history[-1]["best_fitness"] == result.fitness
    assert result.history[-1]["best_size"] == result.mask.sum()
    best = [(row["best_fitness"], -row["best_size"]) for row in result.history]
    assert best == sorted(best)
    assert result.history[0]["evaluations"] > 0 and result.history[0]["new_subsets"] > 0
    assert result.extra["score"]["total"] == y.size
    again = run_search(X, y, name, params, seed=4)
    assert np.array_equal(again.mask, result.mask) and again.fitness == result.fitness


def test_max_steps_bounds_the_path():
    X, y = three_groups()
    result = run_search(X, y, "sbs", {"max_steps": 2})
    assert len(result.extra["path"]) == 2 and result.extra["stopped"] == "max_steps"
    assert result.mask.sum() == X.shape[1] - 2


# ---------------------------------------------------------------- registry and command line
def test_registry_knows_the_baselines_and_their_defaults():
    for name, cls in BASELINES.items():
        assert algorithm_class(name) is cls
    sfs = algorithm_params("sfs")
    assert (sfs["k"], sfs["cv"], sfs["objective"], sfs["archive_size"]) == (1, "loo", "accuracy", 0)
    lfs = algorithm_params("lfs")
    assert (lfs["n_ranked"], lfs["lfs_type"]) == (50, "fixed-set")
    with pytest.raises(ParameterError, match="sfs.*gsbs"):
        algorithm_class("greedy")
    with pytest.raises(ParameterError, match="'lfs_type'"):
        algorithm_params("lfs", {"lfs_type": "floating"})


def test_run_command_accepts_a_baseline(tmp_path):
    out = tmp_path / "sfs.json"
    assert cli.main(["run", "--data", "builtin:srbct", "--algorithm", "sfs",
                     "--param", "max_steps=2", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["algorithm"] == "sfs" and doc["n_selected"] == 2
    assert sorted(doc["extra"]["path"]) == doc["selected_genes"]
    assert doc["history"][-1]["evaluations"] == 2308 + 2307


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_any_number_of_ranks_gives_the_serial_run(name):
    """Under ``mpiexec -n P``: candidates split over the ranks, the same run bit for bit."""
    X, y = three_groups(seed=7, n_noise=9)
    params = {"cv": 3, "k": 3}
    alone = run_search(X, y, name, params, seed=2)
    with world() as comm:
        together = run_search(X, y, name, params, seed=2, comm=comm)
    assert np.array_equal(alone.mask, together.mask) and alone.fitness == together.fitness
    drop = {"seconds"}
    assert [{k: v for k, v in row.items() if k not in drop} for row in alone.history] == \
        [{k: v for k, v in row.items() if k not in drop} for row in together.history]
    assert {k: v for k, v in alone.extra.items() if k != "comm"} == \
        {k: v for k, v in together.extra.items() if k != "comm"}


def test_a_job_file_runs_a_baseline_under_the_unbiased_protocol(tmp_path):
    """Baselines go through the same job files, protocols and results as the swarms."""
    import h5py

    from hpcswarm.__main__ import main

    job = tmp_path / "sfs.toml"
    output = tmp_path / "sfs-wine.h5"
    job.write_text(f'data = "sklearn:wine"\nalgorithm = "sfs"\nfolds = 3\nruns = 1\n'
                   f'output = "{output}"\n')
    assert main(["run", str(job)]) == 0
    with h5py.File(output) as results:
        assert results.attrs["algorithm"] == "sfs"
        assert results.attrs["protocol"] == "unbiased"
        sizes = results["tasks/subset_size"][:]
    assert sizes.shape == (3,) and (sizes >= 1).all() and (sizes < 13).all()


# ---------------------------------------------------------------- candidates left unscored
@pytest.mark.parametrize("name", GREEDY)
@pytest.mark.parametrize("evaluation", ["auto", "full"])
def test_candidates_left_unscored_change_nothing(name, evaluation, monkeypatch):
    """Stopping a step at the first candidate with every prediction right (and skipping a
    step no candidate can win) gives the run that scores every candidate."""
    rng = np.random.default_rng(4)
    y = np.arange(30) % 3
    X = rng.normal(size=(30, 40))
    X[:, :3] += 4.0 * y[:, None]  # several genes tell the classes apart alone
    params = {"evaluation": evaluation, "n_ranked": 20} if name == "lfs" else {
        "evaluation": evaluation}
    scored = []
    single_flips = SubsetFitness.single_flips

    def counting(self, state, genes):
        scored.append(len(genes))
        return single_flips(self, state, genes)

    monkeypatch.setattr(SubsetFitness, "single_flips", counting)
    monkeypatch.setattr(greedy, "FIRST_CHUNK", 1)
    pruned = run_search(X, y, name, params, seed=0)
    pruned_scored = sum(scored)
    scored.clear()
    monkeypatch.setattr(greedy, "FIRST_CHUNK", 10**6)
    monkeypatch.setattr(SubsetFitness, "highest", lambda self, sizes: np.full(len(sizes), np.inf))
    every = run_search(X, y, name, params, seed=0)
    assert pruned.fitness == every.fitness == 1.0
    assert np.array_equal(pruned.mask, every.mask)
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in pruned.history] == \
        [{k: v for k, v in row.items() if k != "seconds"} for row in every.history]
    assert pruned.extra == every.extra
    if evaluation == "auto" and name != "lfs":
        assert pruned_scored < sum(scored)
