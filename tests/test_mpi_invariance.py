"""One swarm over several ranks gives bit for bit the serial result (every algorithm).

Collective tests (``-m mpi``): ``make test`` runs them serially (a world of one rank, through
the MPI communicator) and under ``mpiexec -n 2``, ``make check`` also under ``-n 3``
and ``-n 4``. Each rank runs the search twice, alone (``comm=None``) and with every rank
(``comm=world``), and the two must agree on everything but the history's ``seconds`` and
``extra["comm"]``; the settings make every mechanism fire (gbest resets, complements, FSIPSO
phases, CSO archive hits, local search), and one swarm has fewer particles than 4 ranks. The
ranks run the search as a grid of particle groups x 1, 2 or 3 sample shards, every shard count
that divides the ranks (-n 1: 1; -n 2: 1, 2; -n 3: 1, 3; -n 4: 1, 2).
"""

import hashlib
import json
from dataclasses import replace

import numpy as np
import pytest

from hpcswarm.comm import world
from hpcswarm.selection.methods import ALGORITHMS
from hpcswarm.selection.search import personal_bests, run_search
from hpcswarm.swarm.engine.loop import SearchHooks
from synthetic import small_data, vlpso_signature_rules

pytestmark = pytest.mark.mpi




#: (settings, genes) per algorithm: tiny swarms, enough rounds for the mechanisms to fire.
CASES = {
    "pso": ({"n_particles": 7, "n_iterations": 5}, 30),
    "bpso": ({"n_particles": 7, "n_iterations": 5}, 30),
    "pso-rg": ({"n_particles": 5, "n_iterations": 12}, 30),
    "pso-ls": ({"n_particles": 5, "n_iterations": 4, "ls_tries": 4}, 30),
    "pso-lsrg": ({"n_particles": 5, "n_iterations": 10, "ls_tries": 3}, 30),
    "cbpso": ({"n_particles": 7, "n_iterations": 14}, 30),
    "cso": ({"n_particles": 10, "n_iterations": 14}, 8),
    "fsipso": ({"n_particles": 6, "n_iterations": 9, "n_subspaces": 4}, 30),
    "sfr": ({"max_size": 6}, 30),
    "fsr": ({"n_particles": 5, "n_iterations": 3, "max_size": 3, "target": "none"}, 30),
    "vlpso": ({"n_particles": 7, "n_iterations": 9, "n_divisions": 3, "change_after": 2,
               "refresh_gap": 2}, 30),
}


@pytest.fixture(scope="module")
def comm():
    with world() as duplicate:
        yield duplicate


def comparable(result):
    """Everything of a result that must not depend on the number of ranks."""
    extra = {k: v for k, v in result.extra.items() if k != "comm"}
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    front = [[p["size"], p["fitness"], p["correct"], p["genes"].tolist()] for p in result.front]
    refined = result.refined
    return {"mask": result.mask.tolist(), "fitness": result.fitness, "history": history,
            "extra": extra, "params": result.params, "front": front,
            "refined": None if refined is None else [refined.genes.tolist(), refined.correct]}


def digest(document):
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def test_every_algorithm_has_a_case():
    assert set(CASES) == set(ALGORITHMS)


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_any_rank_count_gives_the_serial_result(name, shards, comm):
    if comm.size % shards:
        pytest.skip(f"{shards} shards do not divide {comm.size} ranks")
    settings, n_genes = CASES[name]
    X, y = small_data(n_genes=n_genes)
    serial = run_search(X, y, name, settings, seed=1, refine="prune")
    rounds = []
    parallel = run_search(X, y, name, settings, seed=1, comm=comm, sample_shards=shards,
                          refine="prune", hooks=SearchHooks(progress=rounds.append))
    same_everywhere = comm.allgather(digest(comparable(parallel)))
    assert len(set(same_everywhere)) == 1
    assert comparable(parallel) == comparable(serial)
    assert len(rounds) == len(serial.history) or name == "fsr"
    traffic = parallel.extra["comm"]
    assert traffic["ranks"] == comm.size // shards
    assert len(traffic["bytes_per_round"]) == len(parallel.history)
    if comm.size > shards:
        assert sum(traffic["bytes_per_round"]) > 0
    # the mechanisms under test fired, so that the comparison covers them
    events = {e["event"] for e in serial.extra["events"]}
    fired = {
        "pso-rg": "gbest_reset" in events,
        "pso-lsrg": "gbest_reset" in events,
        "cbpso": "complement" in events,
        "fsipso": events == {"expand"},
        "cso": serial.history[-1]["archive_hits"] > 0,
    }
    assert fired.get(name, True), (name, events, serial.history[-1])


def test_margin_pruning_is_the_same_on_every_rank(comm):
    settings, n_genes = CASES["pso-lsrg"]
    X, y = small_data(n_genes=n_genes)
    serial = run_search(X, y, "pso-lsrg", settings, seed=1, refine="prune-compact")
    parallel = run_search(X, y, "pso-lsrg", settings, seed=1, comm=comm, refine="prune-compact")
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)
    assert parallel.refined.method == "prune-compact"


@pytest.mark.parametrize("rule", ["relevance", "stability", "consensus"])
def test_refinements_beyond_the_subset_are_the_same_on_every_rank(rule, comm):
    settings, n_genes = CASES["pso-lsrg"]
    X, y = small_data(n_genes=n_genes)
    serial = run_search(X, y, "pso-lsrg", settings, seed=1, refine=rule, subsamples=4)
    parallel = run_search(X, y, "pso-lsrg", settings, seed=1, comm=comm, refine=rule,
                          subsamples=4, sample_shards=2 if comm.size % 2 == 0 else 1)
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)
    assert parallel.refined.method == rule


@pytest.mark.parametrize("rule, data", vlpso_signature_rules(4))
def test_vlpso_s_signature_rules_are_the_same_on_every_rank(rule, data, comm):
    """VLPSO's signature chosen by the margin where it saturates its inner validation (anew,
    or by exchanges at its size), or among its subset and the particles' personal bests on a
    fresh split by the purity of the held-out samples' neighbourhoods (the purest, or the
    smallest within one standard error of it, also among the ANOVA filter's top genes at the
    same sizes, or challenged by the filter's genes at its size): the same on particle groups
    and sample shards as in a serial search."""
    settings, _ = CASES["vlpso"]
    X, y = data()
    serial = run_search(X, y, "vlpso", settings, seed=1, refine=rule)
    parallel = run_search(X, y, "vlpso", settings, seed=1, comm=comm, refine=rule,
                          sample_shards=2 if comm.size % 2 == 0 else 1)
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)
    assert not np.array_equal(parallel.refined.mask, parallel.mask)  # the rule fired


@pytest.mark.parametrize("name", ["bpso", "pso", "vlpso"])
def test_personal_bests_gathered_from_their_owners_are_the_serial_ones(name, comm):
    """Particle groups own their particles' personal bests (live on the owner only); gathered,
    every rank holds the serial search's, and the choice among them is the serial one."""
    settings, n_genes = CASES[name]
    X, y = small_data(n_genes=n_genes)
    ends = {}

    def keep(search):  # at each round's end, the last one's kept (collective)
        ends[search.comm.size] = personal_bests(search, n_genes)

    serial = run_search(X, y, name, settings, seed=1, refine="neighbour-purity",
                        hooks=SearchHooks(checkpoint=keep))
    parallel = run_search(X, y, name, settings, seed=1, comm=comm, refine="neighbour-purity",
                          hooks=SearchHooks(checkpoint=keep))
    assert np.array_equal(ends[comm.size], ends[1])
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)


def test_cso_mean_and_row_exchange_match_serial_with_many_genes(comm):
    """CSO's fixed-point mean and winner rows on a wider matrix (no archive hits needed)."""
    X, y = small_data(n_genes=200)
    settings = {"n_particles": 12, "n_iterations": 6}
    serial = run_search(X, y, "cso", settings, seed=5)
    parallel = run_search(X, y, "cso", settings, seed=5, comm=comm)
    assert comparable(parallel) == comparable(serial)
    if comm.size > 1:
        # per round: the mean (8 bytes per gene per rank) and the winner rows dominate
        assert max(parallel.extra["comm"]["bytes_per_round"][1:]) >= 8 * 200 * comm.size


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("name, settings", [
    ("pso-lsrg", {"n_particles": 3, "n_iterations": 6, "ls_tries": 3}),  # ranks without particles
    ("pso-lsrg", {"n_particles": 6, "n_iterations": 6, "ls_tries": 3, "archive_size": 50}),
    ("cso", {"n_particles": 2, "n_iterations": 6, "archive_size": 0}),
    ("vlpso", {"n_particles": 3, "n_iterations": 6, "n_divisions": 3, "change_after": 1}),
    ("vlpso", {"n_particles": 3, "n_iterations": 6, "n_divisions": 3, "change_after": 1,
               "gene_order": "welch-rr"}),  # statistics of gene blocks, allgathered
    ("vlpso", {"n_particles": 3, "n_iterations": 6, "n_divisions": 3, "change_after": 1,
               "gene_order": "f"}),
    ("vlpso", {"n_particles": 3, "n_iterations": 6, "n_divisions": 3, "change_after": 1,
               "size_tiebreak": False}),  # fitness alone orders the subsets
    ("sbs", {"k": 3, "cv": 5}),  # batched one-gene flips, summed over the shards per block
])
def test_small_swarms_and_archive_settings_match_serial(name, settings, shards, comm):
    if comm.size % shards:
        pytest.skip(f"{shards} shards do not divide {comm.size} ranks")
    X, y = small_data(n_genes=12)
    serial = run_search(X, y, name, settings, seed=2)
    parallel = run_search(X, y, name, settings, seed=2, comm=comm, sample_shards=shards)
    assert comparable(parallel) == comparable(serial)
    if settings.get("archive_size"):
        assert serial.history[-1]["archive_hits"] > 0


#: VLPSO with its local search on (off by default): searches dealt over the ranks.
VLPSO_LOCAL_SEARCH = {"n_particles": 7, "n_iterations": 7, "n_divisions": 3, "change_after": 2,
                      "refresh_gap": 2, "local_search": True, "ls_tries": 6}


def unbalanced_data(n_genes):
    """Classes of 17, 9 and 4 samples, genes 0-2 informative: balanced accuracy differs from
    plain accuracy, so that the per-class counts decide the search."""
    rng = np.random.default_rng(6)
    y = np.repeat([0, 1, 2], [17, 9, 4])
    X = rng.normal(size=(y.size, n_genes))
    X[:, :3] += 1.2 * y[:, None]
    return X, y


@pytest.mark.filterwarnings("ignore::hpcswarm.fitness.FoldWarning")  # the class of 4
@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("name, settings", [
    ("bpso", {"n_particles": 7, "n_iterations": 5}),
    ("pso-lsrg", {"n_particles": 5, "n_iterations": 6, "ls_tries": 3}),  # batches of tries
    ("cso", {"n_particles": 6, "n_iterations": 5}),  # 5-NN 10-fold, numpy flips
    ("sbs", {"k": 3, "cv": 5}),  # one-gene flips, summed over the shards per block
    ("vlpso", VLPSO_LOCAL_SEARCH),
    ("vlpso", {**VLPSO_LOCAL_SEARCH, "size_tiebreak": False}),
])
def test_balanced_accuracy_on_any_rank_count_gives_the_serial_result(name, settings, shards,
                                                                      comm):
    if comm.size % shards:
        pytest.skip(f"{shards} shards do not divide {comm.size} ranks")
    X, y = unbalanced_data(16)
    settings = {**settings, "objective": "balanced-accuracy"}
    serial = run_search(X, y, name, settings, seed=3)
    parallel = run_search(X, y, name, settings, seed=3, comm=comm, sample_shards=shards)
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)
    score = serial.extra["score"]
    assert serial.fitness == score["balanced_accuracy"] != score["accuracy"]
    assert score["class_total"] == [17, 9, 4]


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_vlpso_local_search_matches_serial(shards, comm):
    if comm.size % shards:
        pytest.skip(f"{shards} shards do not divide {comm.size} ranks")
    X, y = small_data(n_genes=30)
    serial = run_search(X, y, "vlpso", VLPSO_LOCAL_SEARCH, seed=4)
    parallel = run_search(X, y, "vlpso", VLPSO_LOCAL_SEARCH, seed=4, comm=comm,
                          sample_shards=shards)
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)
    searched = [e for e in serial.extra["events"] if e["event"] == "local_search"]
    assert sum(e["kept"] for e in searched) > 0


def test_a_shard_count_that_does_not_divide_the_ranks_is_refused(comm):
    from hpcswarm.errors import ParameterError

    X, y = small_data(n_genes=12)
    with pytest.raises(ParameterError, match="must be a positive divisor"):
        run_search(X, y, "pso", {"n_particles": 2, "n_iterations": 1}, comm=comm,
                   sample_shards=5 if comm.size < 5 else comm.size + 1)


class _Stop(Exception):
    pass


def _shard_counts(size):
    return [s for s in (1, 2, 3) if size % s == 0]


def _resumed_cases():
    """(method, params) of every method at its small settings, and VLPSO with its local
    search on."""
    from synthetic import SMALL

    return ([(name, SMALL.get(name, {})) for name in sorted(CASES) + ["sbs"]]
            + [("vlpso", VLPSO_LOCAL_SEARCH)])


@pytest.mark.parametrize("name, params", _resumed_cases(),
                         ids=[*sorted(CASES), "sbs", "vlpso-local-search"])
def test_a_search_resumed_with_another_shard_count_ends_as_the_uninterrupted_one(name, params,
                                                                                 comm):
    from hpcswarm.swarm.engine.snapshot import take_snapshot

    X, y = small_data(3, 30, 24)
    full = run_search(X, y, name, params, seed=7)
    counts = _shard_counts(comm.size)
    for before, after in zip(counts, counts[::-1]):
        taken = []

        def hook(search):
            if search.iteration == 1:
                taken.append(take_snapshot(search))
                raise _Stop

        with pytest.raises(_Stop):
            run_search(X, y, name, params, seed=7, comm=comm, sample_shards=before,
                       hooks=SearchHooks(checkpoint=hook))
        snapshot = comm.bcast(taken[0], root=0)  # complete on world rank 0, as a checkpoint
        resumed = run_search(X, y, name, params, seed=7, comm=comm, sample_shards=after,
                             resume=snapshot)
        assert comparable(resumed)["history"] == comparable(full)["history"]
        assert resumed.mask.tolist() == full.mask.tolist()
        assert resumed.extra.get("events") == full.extra.get("events")
        assert resumed.fitness == full.fitness


CACHE_CASES = {
    "vlpso": ({"n_particles": 9, "n_iterations": 10, "n_divisions": 3, "change_after": 3}, 60),
    "pso-lsrg": ({"n_particles": 6, "n_iterations": 6, "ls_tries": 3}, 60),
    "cbpso": ({"n_particles": 7, "n_iterations": 8}, 60),
    "bpso": ({"n_particles": 7, "n_iterations": 6, "objective": "balanced-accuracy"}, 60),
    "pso": ({"n_particles": 7, "n_iterations": 6}, 60),
    "cso": ({"n_particles": 8, "n_iterations": 6}, 20),
}
"""Swarms whose particles are scored from their previous subsets (CSO's archive: in full)."""


@pytest.mark.parametrize("budget", ["default", "partly full", "none"])
@pytest.mark.parametrize("shards", [1, 2])
@pytest.mark.parametrize("name", [name if name == "vlpso"
                                  else pytest.param(name, marks=pytest.mark.slow)
                                  for name in sorted(CACHE_CASES)])
def test_the_particle_states_give_the_serial_result_on_any_grid(name, shards, budget, comm):
    """Particle groups x sample shards with each particle's state kept (every state, one
    or two a rank, none) find the serial search's result without states."""
    if comm.size % shards:
        pytest.skip(f"{shards} shards do not divide {comm.size} ranks")
    settings, n_genes = CACHE_CASES[name]
    X, y = small_data(n_genes=n_genes)
    one_state = 8 * X.shape[0] * (X.shape[0] + 2) + n_genes  # a state of every held-out row
    memory = {"default": None, "partly full": 1.5 * one_state / 1e9, "none": 0.0}[budget]
    serial = run_search(X, y, name, settings, seed=2, cache_memory=0.0)
    parallel = run_search(X, y, name, settings, seed=2, comm=comm, sample_shards=shards,
                          cache_memory=memory)
    assert len(set(comm.allgather(digest(comparable(parallel))))) == 1
    assert comparable(parallel) == comparable(serial)


REDEALT = ({"n_particles": 7, "n_iterations": 9, "n_divisions": 3, "change_after": 1,
            "refresh_gap": 2}, 60, 1)
"""VLPSO settings, genes and seed whose length changes deal the particles anew on 2, 3 and 4
particle groups (three or four times)."""


@pytest.mark.parametrize("budget", ["default", "partly full", "none"])
@pytest.mark.parametrize("shards", [1, 2])
def test_vlpso_dealt_by_length_anew_at_each_length_change_gives_the_serial_result(shards, budget,
                                                                                   comm):
    """The particles of unequal lengths are dealt by cost, dealt anew (and handed over) when
    the lengths change and only then, and the search, resumed after a new deal on another
    grid too, is the serial one."""
    from hpcswarm.swarm.engine.snapshot import take_snapshot

    if comm.size % shards:
        pytest.skip(f"{shards} shards do not divide {comm.size} ranks")
    settings, n_genes, seed = REDEALT
    X, y = small_data(n_genes=n_genes)
    one_state = 8 * X.shape[0] * (X.shape[0] + 2) + n_genes
    memory = {"default": None, "partly full": 1.5 * one_state / 1e9, "none": 0.0}[budget]
    serial = run_search(X, y, "vlpso", settings, seed=seed, cache_memory=0.0)
    rounds, snapshots = [], []

    def hook(search):
        rounds.append((search.lengths.copy(), search.ownership.owner.copy()))
        if not snapshots and len(rounds) > 1 and not np.array_equal(*(r[1] for r in rounds[-2:])):
            snapshots.append(take_snapshot(search))

    parallel = run_search(X, y, "vlpso", settings, seed=seed, comm=comm, sample_shards=shards,
                          cache_memory=memory, hooks=SearchHooks(checkpoint=hook))
    assert comparable(parallel) == comparable(serial)
    dealt = [i for i in range(1, len(rounds)) if not np.array_equal(rounds[i][1], rounds[i - 1][1])]
    changed = [i for i in range(1, len(rounds)) if not np.array_equal(rounds[i][0],
                                                                       rounds[i - 1][0])]
    assert set(dealt) <= set(changed)
    if comm.size // shards > 1:
        assert len(dealt) >= 3
        assert np.bincount(rounds[0][1]).max() < np.bincount(rounds[0][1]).sum()  # not one rank
        snapshot = comm.bcast(snapshots[0] if snapshots else None, root=0)
        resumed = run_search(X, y, "vlpso", settings, seed=seed, comm=comm,
                             sample_shards=_shard_counts(comm.size)[-1], resume=snapshot)
        assert comparable(resumed)["history"] == comparable(serial)["history"]
        assert resumed.mask.tolist() == serial.mask.tolist()


@pytest.mark.parametrize("name", [name for name in sorted(CASES) if name not in ("sfr", "vlpso")])
def test_any_deal_of_the_particles_gives_the_serial_result(name, comm, monkeypatch):
    """Particles of every method dealt by arbitrary costs (not in contiguous blocks) find the
    serial result: ownership is any assignment."""
    from hpcswarm.swarm.engine.loop import SearchAlgorithm

    monkeypatch.setattr(SearchAlgorithm, "expected_genes",
                        lambda search: (np.arange(search.n_particles) * 7919) % 13 + 1)
    settings, n_genes = CASES[name]
    X, y = small_data(n_genes=n_genes)
    serial = run_search(X, y, name, settings, seed=1)
    parallel = run_search(X, y, name, settings, seed=1, comm=comm)
    assert comparable(parallel) == comparable(serial)


@pytest.mark.slow
@pytest.mark.parametrize("steps", [[("minmax", True)], [("log2", True), ("minmax", True)],
                                   [("minmax", True), ("zscore", True), ("top_anova", 400)]])
def test_a_node_shared_transformed_matrix_gives_the_serial_search(steps, comm):
    """A heavier matrix (the default min-max scaling's copy shared by the node's ranks, each
    writing its block of samples): the values bit for bit, and VLPSO's search on them on
    every shard count, as the serial search on a private copy."""
    from hpcswarm.selection.prepare import prepare
    from hpcswarm.selection.spec import SearchSpec

    X, y = small_data(seed=9, n_samples=301, n_genes=2500, n_informative=6, shift=0.7)
    X = np.abs(X)
    train = np.arange(300, 0, -1)[np.arange(300) % 10 != 3]
    spec = SearchSpec.build("vlpso", {"n_particles": 8, "n_iterations": 4, "n_divisions": 4,
                                      "change_after": 1}, preprocess=steps)
    private = prepare(X, y, spec.preprocess, samples=train, finite=True)
    serial = private.search(spec, seed=4)
    for shards in _shard_counts(comm.size):
        with prepare(X, y, spec.preprocess, samples=train, finite=True, comm=comm) as shared:
            assert np.array_equal(shared.genes.xt.view(np.uint64),
                                  private.genes.xt.view(np.uint64))
            parallel = shared.search(replace(spec, sample_shards=shards), seed=4, comm=comm)
        assert comparable(parallel) == comparable(serial)
