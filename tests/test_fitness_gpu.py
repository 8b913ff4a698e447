"""The GPU scorer's code path, run with numpy as its array module, equals the CPU engine.

:class:`hpcswarm.fitness.gpu.DeviceScorer` is written against an array module; here it runs
on the host (``array_module="numpy"``) and must give the CPU path's correct counts for every
subset: full evaluations, cached states and their flips, the greedy steps' single flips, the
local search's tries, every search method end to end, with sample shards. The tests at the
end run the same checks on CuPy where a CUDA device is present, and skip elsewhere.
"""

import importlib.util
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hpcswarm.selection.search
from hpcswarm.comm import world
from engine_probes import counting_decide, tie_prone_datasets
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor, KnnEvaluator, gpu, make_scorer
from hpcswarm.fitness.device_kernels import gram_distances
from hpcswarm.fitness.distances import gram_bound_factor
from hpcswarm.fitness.gpu import (ARRAY_MODULE_VARIABLE, DeviceScorer,
                                  device_evaluation_bytes, device_lines, device_name,
                                  gpu_array_module, node_local_rank, ranks_sharing_device,
                                  report_device)
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.selection.methods import METHODS
from hpcswarm.selection.search import run_search
from hpcswarm.system import MEMORY_SHARE
from reference_cases import SYNTHETIC_SETTINGS
from synthetic import small_data, vlpso_signature_rules
from test_bench_vlpso import vlpso_gpu_figures
from test_particle_states import recorded_states


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


@pytest.mark.parametrize("class_counts", [False, True])
@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("cv", ["loo", 5, "holdout"])
def test_device_path_equals_the_cpu_path_on_tie_prone_data(k, cv, class_counts):
    opened = 0
    for name, X, y in tie_prone_datasets(4, 45, 24):
        cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=6, class_counts=class_counts)
        device = make_scorer(X, y, k=k, cv=cv, seed=6, device="gpu", array_module="numpy",
                             class_counts=class_counts)
        assert isinstance(device, DeviceScorer) and device.total == cpu.total
        refined = counting_decide(device)
        exercise(cpu, device, X.shape[1], np.random.default_rng(len(name)))
        opened += len(refined)
    assert opened > 0  # the exact refinement of the rows the bound leaves open was used


def _array_module(name):
    """numpy, or CuPy with a CUDA device (the test skips without one)."""
    return np if name == "numpy" else _cupy_with_device()


@pytest.mark.parametrize("module", ["numpy", "cupy"])
def test_a_float32_matrix_stays_float32_on_the_device_with_the_same_counts(module):
    xp = _array_module(module)
    X, y = small_data(seed=4, n_samples=40, n_genes=30)
    data = GeneMajor(np.ascontiguousarray(X.T, dtype=np.float32), samples=np.arange(2, 40))
    cpu = KnnEvaluator(data, y[2:], k=3, cv=5, seed=2)
    device = DeviceScorer(data, y[2:], xp=xp, k=3, cv=5, seed=2)
    assert device._values.dtype == np.float32 and device._values.shape == (30, 38)
    exercise(cpu, device, 30, np.random.default_rng(8))


@pytest.mark.parametrize("class_counts", [False, True])
@pytest.mark.parametrize("module", ["numpy", "cupy"])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (5, 4)])
def test_device_blocks_of_rows_and_of_tries(k, cv, module, class_counts, monkeypatch):
    """Small device blocks: several row blocks per evaluation, one try or none per block;
    then blocks of a few tries each."""
    xp = _array_module(module)
    X, y = small_data(seed=2, n_samples=33, n_genes=20)
    cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=1, class_counts=class_counts)
    device = DeviceScorer(X, y, xp=xp, k=k, cv=cv, seed=1, class_counts=class_counts)
    monkeypatch.setattr(gpu, "DEVICE_BLOCK_BYTES", gpu.BYTES_PER_DISTANCE * 33 * 5)
    assert len(device._row_blocks()) == 7
    assert device._tries_per_block(2) == 0  # a try is then scored a block of rows at a time
    exercise(cpu, device, 20, np.random.default_rng(3))
    monkeypatch.setattr(gpu, "DEVICE_BLOCK_BYTES", 3 * (gpu.BYTES_PER_DISTANCE + 1) * 33 * 33)
    assert len(device._row_blocks()) == 1 and device._tries_per_block(3) == 2
    exercise(cpu, device, 20, np.random.default_rng(4))


def _counts(score, class_counts):
    """A Score's correct counts: per class, or all together."""
    return np.array(score.class_correct if class_counts else score.correct)


@pytest.mark.parametrize("class_counts", [False, True])
@pytest.mark.parametrize("module", ["numpy", "cupy"])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (5, 5), (1, "holdout")])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_device_shards_add_up_to_the_cpu_evaluation(k, cv, n_shards, module, class_counts):
    xp = _array_module(module)
    rng = np.random.default_rng(5)
    X = rng.integers(-2, 3, size=(41, 30)).astype(float)  # small integers: many near ties
    y = rng.integers(0, 3, size=41)
    whole = KnnEvaluator(X, y, k=k, cv=cv, seed=2, class_counts=class_counts)
    shards = [DeviceScorer(X, y, xp=xp, k=k, cv=cv, seed=2, shard=(i, n_shards),
                           class_counts=class_counts)
              for i in range(n_shards)]
    mask = rng.random(30) < 0.5
    states = [s.new_state(mask) for s in shards]
    assert np.array_equal(sum(_counts(s.score(mask), class_counts) for s in shards),
                          _counts(whole.score(mask), class_counts))
    flips = np.array([rng.choice(30, size=3, replace=False) for _ in range(12)])
    expected = [_counts(whole.score(_flipped(mask, row)), class_counts) for row in flips]
    assert np.array_equal(sum(s.score_flips(t, flips) for s, t in zip(shards, states)), expected)
    for s, t in zip(shards, states):
        s.apply_flip(t, flips[0])
    mask = _flipped(mask, flips[0])
    genes = rng.permutation(30)
    singles = [s.score_single_flips(t, genes) for s, t in zip(shards, states)]
    for j, gene in enumerate(genes):
        assert np.array_equal(sum(_counts(part[j], class_counts) for part in singles),
                              _counts(whole.score(_flipped(mask, [gene])), class_counts))


def _adversary(strength, y):
    """A stand-in for ``gram_distances`` that errs by ``strength`` times the bound of the
    Gram form, ``gram_bound_factor(n) (sq_i + sq_j)``, against the truth: the distances to
    a row's own class are raised, those to the other classes lowered.

    On small integers the products are exact, so the error is the adversary's alone: with
    ``strength <= 1`` the distances keep the contract the scorer's slack promises
    (:func:`~hpcswarm.fitness.distances.gram_sq_distances`), and with ``strength <= 0.5``
    the contract of a cached state's drift (half that slack). Where a nearest neighbour of
    the other class ties with one of the row's own class, only the full margin
    ``2 (slack_row + max slack)`` keeps the row open for the exact refinement.
    """
    codes = np.unique(y, return_inverse=True)[1]

    def distances(xp, values, sq, rows):
        dist2 = gram_distances(xp, values, sq, rows)
        bound = gram_bound_factor(values.shape[0]) * (sq[rows, None] + sq[None, :])
        same = xp.asarray(codes)[rows][:, None] == xp.asarray(codes)[None, :]
        return dist2 + strength * bound * xp.where(same, 1.0, -1.0)

    return distances


def _tied_integers(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(-1, 2, size=(60, 16)).astype(float), np.arange(60) % 3


@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5)])
def test_adversary_at_the_full_bound_cannot_change_a_full_evaluation(k, cv, monkeypatch):
    """Gram distances as wrong as the bound allows (95 %): every count is the exact one.
    A margin half as wide (``settle_rows``), or a tenth of the slack (``_full``), settles
    tied rows on the adversary's neighbour and miscounts."""
    X, y = _tied_integers(7)
    monkeypatch.setattr(gpu, "gram_distances", _adversary(0.95, y))
    cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=4)
    device = DeviceScorer(X, y, xp=np, k=k, cv=cv, seed=4)
    masks = np.random.default_rng(1).random((12, 16)) < 0.3
    masks[:, 0] = True
    assert device.score_many(masks) == cpu.score_many(masks)
    assert device.refined_rows > 0  # the adversary's ties went to the host


@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5)])
def test_adversary_at_a_state_s_drift_bound_cannot_change_a_flip(k, cv, monkeypatch):
    """A cached state whose distances err by 95 % of its drift bound, then flipped: every
    flip's count is the exact one (a tenth of the flip's slack in ``_flip`` miscounts)."""
    X, y = _tied_integers(8)
    monkeypatch.setattr(gpu, "gram_distances", _adversary(0.475, y))
    cpu = KnnEvaluator(X, y, k=k, cv=cv, seed=4)
    device = DeviceScorer(X, y, xp=np, k=k, cv=cv, seed=4)
    rng = np.random.default_rng(2)
    before = device.refined_rows
    for mask in rng.random((6, 16)) < 0.3:
        mask[:2] = True
        ours = device.new_state(mask)
        for genes in (rng.choice(np.arange(2, 16), size=n, replace=False) for n in (1, 2, 3)):
            assert device.score_flip(ours, genes) == cpu.score(_flipped(mask, genes))
            tries = np.array([rng.choice(np.arange(2, 16), size=genes.size, replace=False)
                              for _ in range(4)])
            assert np.array_equal(device.score_flips(ours, tries),
                                  [cpu.score(_flipped(mask, t)).correct for t in tries])
    assert device.refined_rows > before


def test_a_rank_names_its_gpu_and_warns_when_it_shares_one(monkeypatch, capsys):
    """Each rank says which device it uses; a rank beyond the node's device count warns.
    The CuPy branch of ``gpu_array_module`` runs here on the numpy stand-in of CuPy."""
    assert device_lines(1, 1, 2, "H100") == [
        "hpcswarm: note: GPU: local rank 1 uses device 1 of 2 (H100)"]
    shared = device_lines(3, 1, 2, "H100")
    assert shared[0].endswith("local rank 3 uses device 1 of 2 (H100)")
    assert shared[1].startswith("hpcswarm: warning: GPU: local rank 3 shares device 1 with "
                                "local rank 1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        "cupy", os.path.join(root, "tests", "numpy_cupy", "cupy", "__init__.py"))
    stand_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stand_in)
    monkeypatch.setitem(sys.modules, "cupy", stand_in)  # for this test only
    monkeypatch.setattr(gpu, "_REPORTED", set())
    monkeypatch.setenv("MPI_LOCALRANKID", "1")
    assert gpu_array_module("cupy") is stand_in
    gpu_array_module("cupy")  # reported once per process and device
    err = capsys.readouterr().err.splitlines()
    assert err == ["hpcswarm: note: GPU: local rank 1 uses device 0 of 1 (numpy stand-in)",
                   *device_lines(1, 0, 1, "numpy stand-in")[1:]]
    stream = io.StringIO()
    report_device(0, 0, 1, "x", stream=stream)  # a new pair: reported
    assert stream.getvalue() == "hpcswarm: note: GPU: local rank 0 uses device 0 of 1 (x)\n"


def test_a_device_name_lookup_never_fails():
    class Broken:
        class cuda:
            class runtime:
                @staticmethod
                def getDeviceProperties(index):
                    raise RuntimeError("no such property")

    assert device_name(Broken, 0) == "unknown (RuntimeError: no such property)"


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

    monkeypatch.setattr(hpcswarm.selection.search, "make_scorer", device_scorer)
    return built


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("fitness", [{}, {"k": 5, "cv": 5}, {"k": 5, "cv": "holdout"},
                                     {"k": 3, "cv": 4, "objective": "balanced-accuracy"}],
                         ids=["1nn-loo", "5nn-5fold", "5nn-holdout", "3nn-4fold-balanced"])
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
    monkeypatch.setattr(hpcswarm.selection.search, "make_scorer",
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


@pytest.mark.mpi
@pytest.mark.parametrize("budget", [0.0, state_bytes(36, 36, 60) / 1e9, None],
                         ids=["off", "partly-full", "default"])
@pytest.mark.parametrize("layout", ["groups", "shards"])
def test_device_vlpso_over_ranks_with_the_cache_gives_the_serial_cpu_result(budget, layout,
                                                                            comm,
                                                                            monkeypatch):
    """VLPSO's particles' states on GPU scorers of particle groups or sample shards, the
    cache off, partly full or at the default budget: the serial CPU search's result on
    every rank."""
    params = CACHED_SWARMS["vlpso"]
    expected = _search("vlpso", params, cache_memory=0.0)
    made = recorded_states(monkeypatch)
    built = _device_scorers(monkeypatch, "numpy")
    shards = comm.size if layout == "shards" else 1
    found = _search("vlpso", params, comm=comm, sample_shards=shards, cache_memory=budget)
    assert found == expected and len(set(comm.allgather(found))) == 1
    assert built and all(isinstance(scorer, DeviceScorer) for scorer in built)
    assert (made[0].counts.moved > 0) == (budget != 0.0)
    if budget:  # one state's bytes: not every particle of the rank has one
        assert made[0].counts.uncached > 0


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


def test_ranks_of_a_node_that_share_a_device_divide_its_memory():
    assert ranks_sharing_device(0, 1, {}) == 1
    assert ranks_sharing_device(0, 4, {"MPI_LOCALNRANKS": "4"}) == 1
    assert ranks_sharing_device(1, 2, {"OMPI_COMM_WORLD_LOCAL_SIZE": "5"}) == 2  # 1 and 3
    assert ranks_sharing_device(0, 2, {"SLURM_NTASKS_PER_NODE": "5"}) == 3  # 0, 2 and 4
    assert ranks_sharing_device(1, 2, {"SLURM_LOCALID": "3"}) == 2  # no size: at least 3 + 1


STAND_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_cupy", "cupy",
                        "__init__.py")


def _stand_in_cupy(monkeypatch, free, total):
    """The numpy stand-in of CuPy (``tests/numpy_cupy``) imported as ``cupy``, its device of
    ``total`` bytes with ``free`` of them free; the search's GPU scorers use it."""
    spec = importlib.util.spec_from_file_location("cupy", STAND_IN)
    stand_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stand_in)
    monkeypatch.setattr(stand_in.runtime, "memGetInfo", lambda: (free, total))
    monkeypatch.setitem(sys.modules, "cupy", stand_in)
    monkeypatch.setenv(ARRAY_MODULE_VARIABLE, "cupy")
    return stand_in


def test_the_stand_in_s_device_memory_is_the_host_s():
    spec = importlib.util.spec_from_file_location("cupy", STAND_IN)
    stand_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stand_in)
    free, total = stand_in.cuda.runtime.memGetInfo()
    assert 0 < free <= total == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert stand_in.cuda.runtime.getDeviceProperties(0)["totalGlobalMem"] == total


def test_a_device_s_memory_is_shared_by_its_ranks_and_its_pool_s_free_blocks_are_free(
        monkeypatch):
    stand_in = _stand_in_cupy(monkeypatch, 10**9, 4 * 10**9)
    monkeypatch.setattr(stand_in.MemoryPool, "free_bytes", lambda pool: 5 * 10**8)
    X, y = small_data()
    scorer = DeviceScorer(X, y, xp=stand_in)
    evaluation = device_evaluation_bytes(*X.shape)
    assert scorer.state_memory() == (4 * 10**9, 25 * 10**8, evaluation)
    monkeypatch.setenv("MPI_LOCALNRANKS", "2")  # two ranks on the one device
    assert scorer.state_memory() == (2 * 10**9, 125 * 10**7, evaluation)
    assert DeviceScorer(X, y, xp=np).state_memory() is None  # host arrays
    assert KnnEvaluator(X, y).state_memory() is None


CACHED_SWARMS = {
    "vlpso": {"n_particles": 8, "n_iterations": 10, "n_divisions": 3, "change_after": 4},
    "pso-lsrg": {"n_particles": 6, "n_iterations": 5, "ls_tries": 4},
    "pso": {"n_particles": 6, "n_iterations": 6},
    "bpso": {"n_particles": 6, "n_iterations": 6},
    "cbpso": {"n_particles": 6, "n_iterations": 6},
}
"""The swarms that keep particle states, long enough for VLPSO's and PSO-LSRG's particles to
settle and move a few genes a round."""


@pytest.mark.parametrize("method", [name if name in ("vlpso", "pso-lsrg")
                                    else pytest.param(name, marks=pytest.mark.slow)
                                    for name in CACHED_SWARMS])
def test_device_searches_equal_the_cpu_s_with_the_cache_off_partly_full_and_on(method,
                                                                                 monkeypatch):
    """On the device (the CuPy stand-in), a search keeps its particles' states on the device
    and its default budget is the device's memory: one with room for 2.5 states keeps 2 of
    them (the host's memory would give every particle one). With the cache off, that
    default (partly full) and a budget for every particle, the search equals the CPU's."""
    X, y = small_data(seed=1, n_samples=36, n_genes=60)
    params = CACHED_SWARMS[method]
    expected = run_search(X, y, method, params, seed=3, cache_memory=0.0)
    one = state_bytes(36, 36, 60)
    total = 8 * 2**30
    held = int(MEMORY_SHARE * total) - device_evaluation_bytes(36, 60) - int(2.5 * one)
    _stand_in_cupy(monkeypatch, total - held, total)
    made, budgets = recorded_states(monkeypatch), []
    for budget in (0.0, None, 1.0):
        made.clear()
        found = run_search(X, y, method, params, seed=3, device="gpu", cache_memory=budget)
        assert _comparable(found) == _comparable(expected)
        budgets.append((made[0].max_states, made[0].counts))
    (off, off_counts), (partly, partly_counts), (full, full_counts) = budgets
    assert (off, partly, full) == (0, 2, int(1e9 // one))
    assert off_counts.rebuilt == off_counts.moved == 0
    assert partly_counts.rebuilt > 0 and partly_counts.uncached > 0
    assert full_counts.rebuilt > 0 and full_counts.uncached == 0
    if method in ("vlpso", "pso-lsrg"):
        assert partly_counts.moved > 0 and full_counts.moved > 0


def _comparable(result):
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return result.genes.tolist(), result.fitness, history, result.extra["score"]


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


@pytest.mark.parametrize("budget", [0.0, None, 2 * state_bytes(36, 36, 60) / 1e9],
                         ids=["off", "default", "two-states"])
def test_cupy_search_keeps_its_states_on_the_device_with_the_cpu_s_results(budget,
                                                                           monkeypatch):
    """VLPSO on CuPy with the cache off, at the default budget (the device's memory) and
    partly full: the CPU's genes, fitness and history; a state's distances on the device."""
    cupy = _cupy_with_device()
    X, y = small_data(seed=1, n_samples=36, n_genes=60)
    params = CACHED_SWARMS["vlpso"]
    expected = run_search(X, y, "vlpso", params, seed=3, cache_memory=0.0)
    monkeypatch.setenv(ARRAY_MODULE_VARIABLE, "cupy")
    made = recorded_states(monkeypatch)
    found = run_search(X, y, "vlpso", params, seed=3, device="gpu", cache_memory=budget)
    assert _comparable(found) == _comparable(expected)
    assert (made[0].counts.moved > 0) == (budget != 0.0)
    scorer = make_scorer(X, y, device="gpu", array_module="cupy")
    assert isinstance(scorer.new_state(np.arange(60) < 30).dist2, cupy.ndarray)
    have, held, _ = scorer.state_memory()
    assert 0 < held < have <= cupy.cuda.runtime.memGetInfo()[1]


@pytest.mark.parametrize("module", ["numpy", "cupy"])
def test_vlpso_local_search_finds_the_same_genes_on_the_device_path(module, monkeypatch):
    """VLPSO's local search scores its tries one at a time (``score_flip``) on the device."""
    if module == "cupy":
        _cupy_with_device()
    params = {**SYNTHETIC_SETTINGS["vlpso"], "local_search": True, "ls_tries": 10}
    expected = _search("vlpso", params)
    built = _device_scorers(monkeypatch, module)
    assert _search("vlpso", params) == expected
    assert built and all(isinstance(scorer, DeviceScorer) for scorer in built)


@pytest.mark.parametrize("module", ["numpy", "cupy"])
@pytest.mark.parametrize("gene_order", ["welch-rr", "f"])
def test_vlpso_orders_the_genes_as_on_the_cpu_on_the_device_path(gene_order, module,
                                                                  monkeypatch):
    """The gene order is computed from the training samples before the search, the same on
    the device path."""
    if module == "cupy":
        _cupy_with_device()
    params = {**SYNTHETIC_SETTINGS["vlpso"], "gene_order": gene_order}
    expected = _search("vlpso", params)
    assert expected != _search("vlpso", SYNTHETIC_SETTINGS["vlpso"])
    built = _device_scorers(monkeypatch, module)
    assert _search("vlpso", params) == expected
    assert built and all(isinstance(scorer, DeviceScorer) for scorer in built)


def _run_script(tmp_path, *command, stand_in=False):
    """Run ``command`` from the repository root with ``OUT=tmp_path``; its stdout and the
    figures it wrote to ``tmp_path / bench_gpu.jsonl``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = [os.path.join(root, "tests", "numpy_cupy")] if stand_in else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path + [root]), "OUT": str(tmp_path),
           "PYTHON": sys.executable}
    done = subprocess.run(list(command), capture_output=True, text=True, cwd=root, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (tmp_path / "bench_gpu.jsonl").read_text().splitlines()
    return done.stdout, [json.loads(line) for line in lines]


def _check_figures(stdout, figures, rounds):
    names = [figure["figure"] for figure in figures]
    assert names == (["device", "setup", "headline", "ties", "full", "flip"]
                     + ["pso_round"] * rounds + ["pso"])
    assert all(figure["equal"] for figure in figures if "equal" in figure)
    headline = figures[2]
    assert headline["selected"] == 500 and headline["rows"] == 600
    assert {"gpu_s", "gemm_s", "tflops", "refined_rows", "core_s"} <= set(headline)
    assert figures[3]["refined_rows"] > 0  # the integer case has near ties for the host
    assert figures[-1]["scorers"] == ["DeviceScorer"]  # the search used the GPU scorer
    printed = [line for line in stdout.splitlines() if not line.startswith("gpu_check")]
    assert printed.index(next(line for line in printed if line.startswith("headline:"))) < \
        printed.index(next(line for line in printed if line.startswith("integer ties")))


def test_the_gpu_benchmark_streams_its_figures_small_on_the_host(tmp_path):
    """``bench_gpu.py --small`` (numpy array module): each figure printed and written to
    ``$OUT/bench_gpu.jsonl`` in order, the headline first; every count equal."""
    stdout, figures = _run_script(tmp_path, sys.executable, "benchmarks/bench_gpu.py",
                                  "--small", "--repeats", "1")
    assert figures[0]["device"] == "numpy (host)"
    _check_figures(stdout, figures, rounds=2)


@pytest.mark.slow
def test_the_gpu_check_script_runs_end_to_end_with_the_numpy_stand_in(tmp_path):
    """``gpu_check.sh --small`` on a CPU: the stand-in plays CuPy (preflight, benchmark, the
    CuPy tests), status 0, the figures under ``$OUT``."""
    stdout, figures = _run_script(tmp_path, "bash", "benchmarks/gpu_check.sh", "--small",
                                  "--repeats", "1")
    assert "preflight: cuBLAS matmul and NVRTC elementwise kernels fine" in stdout
    assert figures[0]["device"] == "numpy stand-in"
    _check_figures(stdout, figures, rounds=2)
    vlpso = vlpso_gpu_figures(tmp_path, rounds=12)
    assert vlpso[0]["device"] == "numpy stand-in"
    assert " passed" in stdout and "GPU tests failed" not in stdout


@pytest.mark.parametrize("rule, data", vlpso_signature_rules(0))
def test_vlpso_s_signature_rules_on_the_device_equal_the_cpu_s(rule, data, monkeypatch):
    """VLPSO's signature chosen by the margin where it saturates its inner validation (the
    exchanges and the path scored by the device's scorer), or among its subset and the
    particles' personal bests (and the ANOVA filter's top genes at their sizes, or at the
    chosen one's size as its challenger) by the purity of the held-out samples'
    neighbourhoods (the device's search leaves the same personal bests): on the device (the
    CuPy stand-in) the rule gives the CPU's genes."""
    X, y = data()
    params = CACHED_SWARMS["vlpso"]
    expected = run_search(X, y, "vlpso", params, seed=1, refine=rule)
    _stand_in_cupy(monkeypatch, 8 * 2**30, 8 * 2**30)
    found = run_search(X, y, "vlpso", params, seed=1, device="gpu", refine=rule)
    assert _comparable(found) == _comparable(expected)
    assert np.array_equal(found.refined.mask, expected.refined.mask)
    assert not np.array_equal(found.refined.mask, found.mask)   # the rule fired
