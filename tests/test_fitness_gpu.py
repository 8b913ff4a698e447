"""The GPU scorer's code path, run with numpy as its array module, equals the CPU engine.

:class:`hpcswarm.fitness.gpu.DeviceScorer` is written against an array module; here it runs
on the host (``array_module="numpy"``) and must give the CPU path's correct counts for every
subset: full evaluations, cached states and their flips, the greedy steps' single flips, the
local search's tries, every search method end to end, with sample shards. The tests at the
end run the same checks on CuPy where a CUDA device is present, and skip elsewhere.
"""

import json

import numpy as np
import pytest

import hpcswarm.search
from hpcswarm.comm import world
from engine_probes import counting_decide, tie_prone_datasets
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor, KnnEvaluator, gpu, make_scorer
from hpcswarm.fitness.gpu import (ARRAY_MODULE_VARIABLE, DeviceScorer, gpu_array_module,
                                  node_local_rank)
from hpcswarm.methods import METHODS
from hpcswarm.search import run_search
from reference_cases import SYNTHETIC_SETTINGS
from synthetic import small_data


def exercise(cpu, device, n_genes, rng):
    """Every Scorer method on the same random subsets and flips, CPU against device."""
    masks = rng.random((4, n_genes)) < 0.5
    masks[-1] = False
    masks[-1, rng.integers(n_genes)] = True  # one gene: single flips may empty it
    assert device.score_many(masks) == cpu.score_many(masks)
    for mask in masks:
        ours, theirs = device.new_state(mask), cpu.new_state(mask)
        genes = rng.choice(n_genes, size=4, replace=False)
        assert device.score_flip(ours, genes) == cpu.score_flip(theirs, genes)
        device.apply_flip(ours, genes)
        cpu.apply_flip(theirs, genes)
        assert np.array_equal(ours.mask, theirs.mask) and ours.n_selected == theirs.n_selected
        everything = rng.permutation(n_genes)
        assert (device.score_single_flips(ours, everything)
                == cpu.score_single_flips(theirs, everything))
        for n_flipped in (1, 3):
            flips = np.array([rng.choice(n_genes, size=n_flipped, replace=False)
                              for _ in range(25)])
            assert np.array_equal(device.score_flips(ours, flips),
                                  cpu.score_flips(theirs, flips))
    assert device.evaluations == cpu.evaluations
    assert device.incremental_evaluations == cpu.incremental_evaluations


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("cv", ["loo", 5, "holdout"])
def test_device_path_equals_the_cpu_path_on_tie_prone_data(k, cv):
    opened = 0
    for name, X, y in tie_prone_datasets(4, 45, 24):
        cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=6)
        device = make_scorer(X, y, k=k, cv=cv, seed=6, device="gpu", array_module="numpy")
        assert isinstance(device, DeviceScorer) and device.total == cpu.total
        refined = counting_decide(device)
        exercise(cpu, device, X.shape[1], np.random.default_rng(len(name)))
        opened += len(refined)
    assert opened > 0  # the exact refinement of the rows the bound leaves open was used


def test_a_float32_matrix_stays_float32_on_the_device_with_the_same_counts():
    X, y = small_data(seed=4, n_samples=40, n_genes=30)
    data = GeneMajor(np.ascontiguousarray(X.T, dtype=np.float32), samples=np.arange(2, 40))
    cpu = KnnEvaluator(data, y[2:], k=3, cv=5, seed=2)
    device = make_scorer(data, y[2:], k=3, cv=5, seed=2, device="gpu", array_module="numpy")
    assert device._values.dtype == np.float32 and device._values.shape == (30, 38)
    exercise(cpu, device, 30, np.random.default_rng(8))


@pytest.mark.parametrize("k, cv", [(1, "loo"), (5, 4)])
def test_device_blocks_of_rows_and_of_tries(k, cv, monkeypatch):
    """Small device blocks: several row blocks per evaluation, one try or none per block;
    then blocks of a few tries each."""
    X, y = small_data(seed=2, n_samples=33, n_genes=20)
    cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=1)
    device = make_scorer(X, y, k=k, cv=cv, seed=1, device="gpu", array_module="numpy")
    monkeypatch.setattr(gpu, "DEVICE_BLOCK_BYTES", gpu.BYTES_PER_DISTANCE * 33 * 5)
    assert len(device._row_blocks()) == 7
    assert device._tries_per_block(2) == 0  # a try is then scored a block of rows at a time
    exercise(cpu, device, 20, np.random.default_rng(3))
    monkeypatch.setattr(gpu, "DEVICE_BLOCK_BYTES", 3 * (gpu.BYTES_PER_DISTANCE + 1) * 33 * 33)
    assert len(device._row_blocks()) == 1 and device._tries_per_block(3) == 2
    exercise(cpu, device, 20, np.random.default_rng(4))


@pytest.mark.parametrize("k, cv", [(1, "loo"), (5, 5), (1, "holdout")])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_device_shards_add_up_to_the_cpu_evaluation(k, cv, n_shards):
    rng = np.random.default_rng(5)
    X = rng.integers(-2, 3, size=(41, 30)).astype(float)  # small integers: many near ties
    y = rng.integers(0, 3, size=41)
    whole = KnnEvaluator(X, y, k=k, cv=cv, seed=2)
    shards = [DeviceScorer(X, y, xp=np, k=k, cv=cv, seed=2, shard=(i, n_shards))
              for i in range(n_shards)]
    mask = rng.random(30) < 0.5
    states = [s.new_state(mask) for s in shards]
    assert sum(s.score(mask).correct for s in shards) == whole.score(mask).correct
    flips = np.array([rng.choice(30, size=3, replace=False) for _ in range(12)])
    expected = [whole.score(_flipped(mask, row)).correct for row in flips]
    assert np.array_equal(sum(s.score_flips(t, flips) for s, t in zip(shards, states)), expected)
    for s, t in zip(shards, states):
        s.apply_flip(t, flips[0])
    mask = _flipped(mask, flips[0])
    genes = rng.permutation(30)
    singles = [s.score_single_flips(t, genes) for s, t in zip(shards, states)]
    for j, gene in enumerate(genes):
        assert (sum(part[j].correct for part in singles)
                == whole.score(_flipped(mask, [gene])).correct)


def _flipped(mask, genes):
    out = mask.copy()
    out[genes] = ~out[genes]
    return out


def _search(method, params, **parallel):
    X, y = small_data(seed=1, n_samples=36, n_genes=60)
    result = run_search(X, y, method, dict(params), seed=3, **parallel)
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return json.dumps([result.genes, result.fitness, history], default=_listed)


def _listed(value):
    return value.tolist()


def _device_scorers(monkeypatch, array_module):
    """Make the searches' scorers the GPU scorer on ``array_module``; the list of those built."""
    built = []

    def device_scorer(*args, device="cpu", **kwargs):  # the search's own choice is the CPU
        assert device == "cpu"
        built.append(make_scorer(*args, **kwargs, device="gpu", array_module=array_module))
        return built[-1]

    monkeypatch.setattr(hpcswarm.search, "make_scorer", device_scorer)
    return built


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("fitness", [{}, {"k": 5, "cv": 5}, {"k": 5, "cv": "holdout"}],
                         ids=["1nn-loo", "5nn-5fold", "5nn-holdout"])
def test_every_method_finds_the_same_genes_on_the_device_path(method, fitness, monkeypatch):
    params = {**SYNTHETIC_SETTINGS[method], **fitness}
    expected = _search(method, params)
    built = _device_scorers(monkeypatch, "numpy")
    assert _search(method, params) == expected
    assert built and all(isinstance(scorer, DeviceScorer) for scorer in built)


def test_the_search_specification_s_device_reaches_the_scorer(monkeypatch):
    """``device="gpu"`` in a search (the spec's setting, as ``--device gpu`` and a job's
    ``device`` give it) builds the device scorer; with the numpy array module it finds the
    CPU search's genes."""
    params = SYNTHETIC_SETTINGS["pso-lsrg"]
    expected = _search("pso-lsrg", params)
    monkeypatch.setenv(ARRAY_MODULE_VARIABLE, "numpy")
    built = []
    monkeypatch.setattr(hpcswarm.search, "make_scorer",
                        lambda *args, **kwargs: built.append(make_scorer(*args, **kwargs))
                        or built[-1])
    assert _search("pso-lsrg", params, device="gpu") == expected
    assert built and all(isinstance(scorer, DeviceScorer) for scorer in built)


@pytest.fixture(scope="module")
def comm():
    with world() as duplicate:
        yield duplicate


@pytest.mark.mpi
@pytest.mark.parametrize("method, params", [
    ("pso-lsrg", {"n_particles": 5, "n_iterations": 4, "ls_tries": 4}),
    ("sbs", {"k": 3, "cv": 5, "max_steps": 4}),
    ("cso", {"n_particles": 6, "n_iterations": 4, "k": 5, "cv": "holdout"}),
])
@pytest.mark.parametrize("layout", ["groups", "shards"])
def test_device_path_over_ranks_gives_the_serial_cpu_result(method, params, layout, comm,
                                                           monkeypatch):
    """Particle groups or sample shards of GPU scorers (one rank each) find the serial CPU
    search's genes, history and fitness on every rank."""
    expected = _search(method, params)
    built = _device_scorers(monkeypatch, "numpy")
    shards = comm.size if layout == "shards" else 1
    found = _search(method, params, comm=comm, sample_shards=shards)
    assert found == expected and len(set(comm.allgather(found))) == 1
    assert built and all(isinstance(scorer, DeviceScorer) for scorer in built)
    if layout == "shards":
        assert {scorer.shard for scorer in built} == {(comm.rank, comm.size)}


def test_device_names_and_missing_cupy_are_parameter_errors(monkeypatch):
    X, y = small_data()
    with pytest.raises(ParameterError, match="device must be one of cpu, gpu, got 'tpu'"):
        make_scorer(X, y, device="tpu")
    with pytest.raises(ParameterError, match="array module must be one of cupy, numpy"):
        make_scorer(X, y, device="gpu", array_module="torch")
    monkeypatch.setenv(ARRAY_MODULE_VARIABLE, "numpy")
    assert gpu_array_module() is np
    assert isinstance(make_scorer(X, y, device="gpu"), DeviceScorer)
    assert type(make_scorer(X, y)) is KnnEvaluator  # the variable concerns the GPU only
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)  # as if not installed
    with pytest.raises(ParameterError, match=r"needs CuPy, which is not installed.*\[gpu\]"):
        make_scorer(X, y, device="gpu", array_module="cupy")


def test_each_rank_of_a_node_takes_its_own_device():
    assert node_local_rank({}) == 0
    assert node_local_rank({"MPI_LOCALRANKID": "3", "SLURM_LOCALID": "1"}) == 3
    assert node_local_rank({"OMPI_COMM_WORLD_LOCAL_RANK": "2"}) == 2
    assert node_local_rank({"SLURM_LOCALID": "5", "MPI_LOCALRANKID": ""}) == 5


def _cupy_with_device():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device")
    return cupy


@pytest.mark.parametrize("k, cv", [(1, "loo"), (5, 5), (5, "holdout")])
def test_cupy_scorer_equals_the_cpu_path(k, cv):
    _cupy_with_device()
    for name, X, y in tie_prone_datasets(4, 45, 24):
        cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=6)
        device = make_scorer(X, y, k=k, cv=cv, seed=6, device="gpu", array_module="cupy")
        exercise(cpu, device, X.shape[1], np.random.default_rng(len(name)))


@pytest.mark.parametrize("method", ["pso-lsrg", "sfs", "cso"])
def test_cupy_search_finds_the_same_genes(method, monkeypatch):
    _cupy_with_device()
    params = SYNTHETIC_SETTINGS[method]
    expected = _search(method, params)
    built = _device_scorers(monkeypatch, "cupy")
    assert _search(method, params) == expected
    assert built


def test_the_gpu_benchmark_runs_small_on_the_host():
    """``benchmarks/bench_gpu.py --small`` (numpy array module): every figure's counts equal."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "bench_gpu.py"),
                          "--small", "--repeats", "1"], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": root}).stdout
    document = json.loads(out.splitlines()[-1])
    assert document["device"] == "numpy (host)"
    assert [row["selected"] for row in document["full"]] == [25, 500]
    assert all(row["equal"] for row in document["full"]) and document["flip"]["equal"]
    assert len(document["pso_lsrg"]["seconds_per_round"]) == 2
