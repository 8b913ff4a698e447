"""Pre-flight checks of ``run JOB.toml``: one clear message, exit 2, before any computation."""

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from hpcswarm import cli
from hpcswarm.comm import SerialComm
from hpcswarm.data import load_dataset
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.run import job as job_module
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.plan import (choose_sample_shards, node_copy_share, search_memory,
                           search_needs, task_memory, task_needs)
from hpcswarm.run.preflight import check_output_writable
from hpcswarm.run.protocols import make_tasks
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.system import available_memory, cgroup_limit

JOBS = Path(__file__).resolve().parents[1] / "jobs"
SCRIPTS = Path(__file__).resolve().parent / "mpi_scripts"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
JOB = JOBS / "cbpso-wine-biased.toml"
TINY = ["runs=1", "params.n_iterations=2", "params.n_particles=4"]


def cli_args(tmp_path, *sets, output="out.h5"):
    args = ["run", str(JOB)]
    for item in TINY + [f"output={tmp_path / output}", *sets]:
        args += ["--set", item]
    return args


@pytest.fixture
def no_computation(monkeypatch):
    """Make any task computation fail loudly: a pre-flight error must come first."""
    def forbidden(*args, **kwargs):
        raise AssertionError("a task ran before the pre-flight checks ended")

    monkeypatch.setattr(job_module, "run_task", forbidden)


def refused(tmp_path, capsys, *extra_args, sets=()):
    from hpcswarm.__main__ import main as entry

    status = entry(cli_args(tmp_path, *sets) + list(extra_args))
    err = capsys.readouterr().err
    assert status == 2, err
    assert not (tmp_path / "out.h5").exists()
    assert not (tmp_path / "out.progress.jsonl").exists()  # nothing started
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("hpcswarm: error: "), err
    return lines[0]


# ------------------------------------------------------------------ process state
def test_the_command_gives_the_thread_limits_back(tmp_path, capsys, no_computation):
    """``--threads`` holds while the command runs only: raised BLAS/OpenMP pools left behind
    in the calling process oversubscribe the cores of whatever it computes next."""
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=1):
        refused(tmp_path, capsys, "--threads", "2", sets=["data=builtin:nope"])
        assert {pool["num_threads"] for pool in threadpool_info()} == {1}


# ------------------------------------------------------------------ output folder
def test_missing_output_folder(tmp_path, capsys, no_computation):
    line = refused(tmp_path, capsys, sets=[f"output={tmp_path / 'nowhere' / 'out.h5'}"])
    assert "does not exist" in line and "nowhere" in line


def test_unwritable_output_folder_is_refused(tmp_path, capsys, no_computation, monkeypatch):
    real = os.open

    def deny_probe(path, flags, *args, **kwargs):
        if Path(path).name.startswith(".write-test."):  # the folder's probe
            raise PermissionError(13, "Permission denied")
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny_probe)
    line = refused(tmp_path, capsys)
    assert f"{tmp_path}: the output folder is not writable (Permission denied)" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_not_writable(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert "not writable" in check_output_writable(folder)
    finally:
        folder.chmod(0o700)


def test_write_probe_leaves_nothing_behind(tmp_path):
    assert check_output_writable(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_existing_output_needs_overwrite(tmp_path, capsys, no_computation):
    (tmp_path / "out.h5").write_bytes(b"")
    from hpcswarm.__main__ import main as entry

    assert entry(cli_args(tmp_path)) == 2
    assert "out.h5: already exists (use --overwrite" in capsys.readouterr().err


# ------------------------------------------------------------------ dataset, folds
def test_dataset_that_does_not_open(tmp_path, capsys, no_computation):
    line = refused(tmp_path, capsys, sets=["data=builtin:nope"])
    assert "the dataset does not open: builtin:nope: no such bundled dataset" in line


def test_more_outer_folds_than_samples(tmp_path, capsys, no_computation):
    line = refused(tmp_path, capsys, sets=["protocol=unbiased", "folds=179"])
    assert "job key 'folds'" in line and "needs at least 179 samples, got 178" in line


def test_inner_cv_with_more_folds_than_a_training_part_has_samples(tmp_path, capsys, no_computation):
    line = refused(tmp_path, capsys, sets=["protocol=unbiased", "folds=3", "fitness.cv=150"])
    assert "job key 'fitness.cv'" in line and "run 0 fold" in line


def test_k_larger_than_an_inner_training_fold(tmp_path, capsys, no_computation):
    line = refused(tmp_path, capsys, sets=["fitness.k=178"])
    assert "job key 'fitness.k': k=178 exceeds the 177 training samples" in line


# ------------------------------------------------------------------ memory
def test_memory_estimate_adds_its_parts():
    n, genes = 100, 1000
    # the gathered values and a full evaluation's block of rows with its k-NN temporaries
    swarm, rows = 26 * 10 * genes, 8 * n * genes + 17 * 2**20
    assert search_memory(SearchSpec.build("pso", {"n_particles": 10}), n, genes) == swarm + rows
    archived = SearchSpec.build("pso", {"n_particles": 10, "archive_size": 500})
    assert search_memory(archived, n, genes) == swarm + rows + 200 * 500
    state = 8 * n * n + 16 * n + genes
    local = SearchSpec.build("pso-lsrg", {"n_particles": 10})
    assert search_memory(local, n, genes) == swarm + rows + state
    # a shard holds the distances of its share of the held-out rows (ceil(100 / 3) = 34)
    shard = 8 * 34 * n + 16 * n + genes
    assert search_memory(local, n, genes, sample_shards=3) == swarm + rows + shard
    # the greedy baselines and SFR keep one cached state from step to step, FSIPSO's ranking
    # one at its start; FSR none
    for name in ("sfs", "sbs", "gsbs", "lfs", "sfr", "fsipso"):
        assert search_needs(SearchSpec.build(name), n, genes)["scorer"] == rows + state, name
    assert search_needs(SearchSpec.build("fsr"), n, genes)["scorer"] == rows
    # their one-gene flips: a block holds one candidate at least, 25 B per distance
    big = 3000
    for name, flips in (("sfs", 25 * big * big), ("pso-lsrg", 17 * 2**20)):
        spec = SearchSpec.build(name)
        assert search_needs(spec, big, genes)["scorer"] == (
            8 * big * genes + 8 * big * big + 16 * big + genes + flips), name
    # preprocessing: z-scoring fits on the rows in float64 with two temporaries of their
    # size, then the transformed copy; min-max scaling fits a block of rows at a time
    blocks, per_gene = 4 * 8 * n * genes, 4 * 8 * genes  # 100 rows: one block
    steps = SearchSpec.build("pso", {"n_particles": 10}, preprocess=[("zscore", True)])
    assert search_memory(steps, n, genes) == (swarm + rows + blocks + per_gene
                                              + 3 * 8 * n * genes + 8 * n * genes)
    scaled = SearchSpec.build("pso", {"n_particles": 10}, preprocess=[("minmax", True)])
    assert search_memory(scaled, n, genes) == swarm + rows + blocks + per_gene + 8 * n * genes


def test_the_transformed_copy_counts_its_share_of_a_node():
    """The ranks of a rank group on a node hold one transformed copy: each counts its share,
    so the estimate shrinks with the ranks that share it; the fitting's peak does not."""
    from hpcswarm.selection.preprocess import fitting_bytes, transformed_bytes

    n, genes, steps = 9000, 20000, [("minmax", True)]
    shared = [transformed_bytes(steps, n, genes, 1 / ranks) for ranks in (1, 2, 4, 64)]
    assert shared == sorted(shared, reverse=True)
    assert shared[0] == fitting_bytes(steps, n, genes) + 8 * n * genes
    assert shared[-1] == fitting_bytes(steps, n, genes) + 8 * n * genes // 64
    assert fitting_bytes(steps, n, genes) < 10e6  # blocks, not a copy of the rows
    assert fitting_bytes([("zscore", True)], n, genes) > 3 * 8 * n * genes  # all rows at once
    # a filter's copy holds its genes only
    assert (transformed_bytes([("top_variance", 100)], n, genes)
            == fitting_bytes([("top_variance", 100)], n, genes) + 8 * n * 100)
    spec = SearchSpec.build("vlpso", {"n_particles": 10})
    assert (search_memory(spec, n, genes, 4, copy_share=1 / 64)
            < search_memory(spec, n, genes, 4, copy_share=1 / 2)
            < search_memory(spec, n, genes, 4))
    assert node_copy_share(SerialComm(), 0) == 1.0


@pytest.mark.parametrize("algorithm, params, preprocess, shards", [
    ("pso-lsrg", {}, [], 2),
    ("vlpso", {}, [], 1),
    ("vlpso", {"local_search": True}, [], 2),
    ("cso", {"archive_size": 300}, [("log2", True), ("top_variance", 50)], 1),
    ("sfs", {}, [], 3),
    ("fsipso", {}, [], 2),
])
def test_the_plans_total_is_the_sum_of_each_parts_stated_need(algorithm, params, preprocess,
                                                              shards):
    from hpcswarm.fitness.archive import Archive
    from hpcswarm.fitness.evaluator import scorer_bytes
    from hpcswarm.fitness.incremental import state_bytes
    from hpcswarm.selection.methods import algorithm_class
    from hpcswarm.selection.preprocess import transformed_bytes
    from hpcswarm.swarm.engine.evaluation import archive_size
    from hpcswarm.swarm.engine.snapshot import snapshot_bytes
    from hpcswarm.swarm.engine.state import SwarmState

    dataset = load_dataset("builtin:srbct")
    spec = SearchSpec.build(algorithm, params, preprocess=preprocess)
    job = replace(read_job(JOB, TINY), data="builtin:srbct", spec=spec)
    tasks = make_tasks(dataset.y, job.protocol, 1, job.seed, inner_cv=job.spec.params["cv"])
    n_train, n_genes = max(len(task.train) for task in tasks), dataset.n_genes
    method = algorithm_class(algorithm)
    n_particles = method.swarm_size(spec.params, n_genes)
    stated = {
        "swarm": SwarmState.bytes_needed(n_particles, n_genes),
        "archive": Archive.bytes_needed(archive_size(spec.params)),
        "scorer": scorer_bytes(n_train, n_genes, shards, method.cached_states(spec.params),
                               method.scores_single_flips),
        "preprocessing": transformed_bytes(spec.preprocess, n_train, n_genes),
        "tables": method.table_bytes(spec.params, n_train, n_genes),
        "particle_states": 0,  # the default budget takes only what the rest leaves
    }
    assert search_needs(spec, n_train, n_genes, shards) == stated
    assert search_memory(spec, n_train, n_genes, shards) == sum(stated.values())
    rows = -(-n_train // shards)
    one_state = state_bytes(rows, n_train, n_genes)
    for gb in (2.5 * one_state / 1e9, 1e3):  # two states and a half; more than every one
        capped = replace(spec, cache_memory=gb)
        assert (search_needs(capped, n_train, n_genes, shards)["particle_states"]
                == min(int(gb * 1e9), n_particles * one_state))
    needs, n = task_needs(job, dataset, tasks, shards, 0)
    assert (needs, n) == (stated, n_train)
    assert task_memory(job, dataset, tasks, shards, 0) == (sum(stated.values()), n_train)
    snapshot = snapshot_bytes(n_particles, n_genes)
    assert task_memory(job, dataset, tasks, shards, 3) == (sum(stated.values()) + 3 * snapshot,
                                                           n_train)


def test_available_memory_is_shared_by_the_node_ranks():
    have, what = available_memory(4, limit_gb=8)
    assert have == 2 * 10**9 and "--memory-limit 8 GB / 4 rank(s)" in what
    detected, _ = available_memory(1)
    assert detected > 0


def test_cgroup_limit(tmp_path):
    (tmp_path / "max").write_text("max\n")
    (tmp_path / "limited").write_text("2147483648\n")
    assert cgroup_limit(tmp_path / "max") is None
    assert cgroup_limit(tmp_path / "limited") == 2147483648
    assert cgroup_limit(tmp_path / "absent") is None


def test_memory_refusal_names_estimate_and_limit(tmp_path, capsys, no_computation):
    line = refused(tmp_path, capsys, "--memory-limit", "0.000001")
    assert "not enough memory: a rank needs an estimated" in line
    assert "more than 80% of the 1e-06 GB per rank (--memory-limit 1e-06 GB / 1 rank(s)" in line


def test_memory_refusal_names_the_shard_count_that_would_fit(tmp_path, capsys, no_computation):
    from hpcswarm.__main__ import main as entry

    # SRBCT, PSO-LSRG, biased: one state of the 83 samples' distances, halved by 2 shards
    path = JOBS / "pso-lsrg-srbct-unbiased.toml"
    sets = TINY + ["data=builtin:srbct", "protocol=biased", f"output={tmp_path / 'out.h5'}"]
    job = read_job(path, sets)
    dataset = load_dataset("builtin:srbct")
    tasks = make_tasks(dataset.y, job.protocol, 1, job.seed, inner_cv="loo")
    needs = [task_memory(job, dataset, tasks, shards, 1)[0] for shards in (1, 2)]  # rank 0: 1 group
    limit = (needs[0] + needs[1]) / 2 / 0.8 / 1e9  # fits with 2 shards, not with 1
    args = ["run", str(path), "--memory-limit", repr(limit)]
    for item in sets:
        args += ["--set", item]
    assert entry(args) == 2
    line = capsys.readouterr().err.strip()
    assert "1 sample shard(s)" in line and "layout.sample_shards = 2 would fit" in line
    assert not (tmp_path / "out.h5").exists()
    automatic = replace(job, spec=replace(job.spec, sample_shards=0))
    assert choose_sample_shards(automatic, dataset, tasks, 4, SerialComm(), limit) == 2
    assert choose_sample_shards(automatic, dataset, tasks, 4, SerialComm(), 100.0) == 1


def test_memory_within_the_limit_runs(tmp_path):
    job = read_job(JOB, TINY + [f"output={tmp_path / 'out.h5'}"])
    assert job_module.run_job(job, memory_limit=1.0, quiet=True)["tasks"] == 1


@pytest.mark.parametrize("limit", ["0", "-1", "nan", "inf"])
def test_memory_limit_must_be_positive(tmp_path, limit):
    with pytest.raises(ParameterError, match="--memory-limit must be a positive"):
        cli.main(cli_args(tmp_path) + ["--memory-limit", limit])


@pytest.mark.parametrize("limit", [float("inf"), float("nan"), 0, True])
def test_a_memory_limit_given_in_python_is_checked_as_the_option(limit):
    with pytest.raises(ParameterError, match="--memory-limit must be a positive number of GB"):
        available_memory(1, limit)


def test_errors_are_user_errors_raised_before_any_task(tmp_path, no_computation):
    job = read_job(JOB, TINY + [f"output={tmp_path / 'out.h5'}"])
    with pytest.raises(DataError, match="not enough memory"):
        job_module.run_job(job, memory_limit=1e-9)


# ------------------------------------------------------------------ every rank agrees
@pytest.mark.slow
def test_dataset_failing_on_rank_1_only_ends_every_rank_with_status_2(tmp_path):
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "MPI"))}
    env["PYTHONPATH"] = str(SCRIPTS.parent.parent)
    command = [str(MPIEXEC), "-n", "2", sys.executable,
               str(SCRIPTS / "dataset_fails_on_rank1.py"), str(JOB)]
    for item in TINY + [f"output={tmp_path / 'out.h5'}"]:
        command += ["--set", item]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    seconds = time.perf_counter() - started
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("hpcswarm: error: the dataset does not open (on rank 1): "
                             "sklearn:wine: injected: cannot map the matrix") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.h5").exists()
    assert seconds < 45


def test_rank_0_counts_one_swarm_snapshot_per_group():
    from hpcswarm.swarm.engine.snapshot import snapshot_bytes

    assert snapshot_bytes(100, 2308) == 26 * 100 * 2308
    assert snapshot_bytes(30, 10) == 26 * 30 * 10
    dataset = load_dataset("sklearn:wine")
    job = read_job(JOB, TINY)  # 4 particles of wine's 13 genes
    tasks = make_tasks(dataset.y, job.protocol, 1, job.seed, inner_cv=job.spec.params["cv"])
    assert task_needs(job, dataset, tasks, 1, 4)[0]["checkpoint"] == 4 * 26 * 4 * 13
    assert "checkpoint" not in task_needs(job, dataset, tasks, 1, 0)[0]


def test_rank_0_counts_the_snapshot_of_the_swarm_the_papers_rule_gives():
    from hpcswarm.swarm.engine.snapshot import snapshot_bytes

    dataset = load_dataset("builtin:srbct")  # VLPSO's n_particles = 0: 2308 // 20 = 115
    job = replace(read_job(JOB, TINY), data="builtin:srbct", spec=SearchSpec.build("vlpso"))
    tasks = make_tasks(dataset.y, job.protocol, 1, job.seed, inner_cv=job.spec.params["cv"])
    assert task_needs(job, dataset, tasks, 1, 2)[0]["checkpoint"] == 2 * snapshot_bytes(115, 2308)


def test_a_snapshots_swarm_rows_are_its_stated_need():
    from hpcswarm.fitness import GeneMajor
    from hpcswarm.selection.search import run_search
    from hpcswarm.swarm.engine.loop import SearchHooks
    from hpcswarm.swarm.engine.snapshot import SWARM_ROWS, snapshot_bytes, take_snapshot

    dataset = load_dataset("sklearn:wine")  # VLPSO's n_particles = 0: at least 100
    spec = SearchSpec.build("vlpso", {"n_iterations": 1}, preprocess=())  # the file's values
    snapshots = []
    hooks = SearchHooks(checkpoint=lambda search: snapshots.append(take_snapshot(search)))
    run_search(GeneMajor(dataset.X_genes, finite=dataset.values_finite), dataset.y, spec,
               hooks=hooks)
    arrays = snapshots[-1]["arrays"]
    assert sum(arrays[name].nbytes for name in SWARM_ROWS) == snapshot_bytes(100, 13)


# ------------------------------------------------------------------ job size
def test_a_job_too_large_for_the_machine_is_refused_at_once(tmp_path, capsys, monkeypatch,
                                                            no_computation):
    import hpcswarm.run.plan as plan_module

    def forbidden(*args, **kwargs):
        raise AssertionError("the task list was drawn before the job size was checked")

    monkeypatch.setattr(plan_module, "make_tasks", forbidden)
    started = time.perf_counter()
    line = refused(tmp_path, capsys, sets=["runs=1000000000"])
    assert time.perf_counter() - started < 5  # arithmetic, not a billion tasks
    assert "for the task list alone (1000000000 run(s) make 1000000000 tasks" in line
    assert "job key 'runs'" in line
    assert list(tmp_path.iterdir()) == []


def test_first_run_beyond_the_last_run_number_is_refused_before_anything(tmp_path, capsys,
                                                                          no_computation):
    line = refused(tmp_path, capsys, sets=[f"first_run={2**63 - 1}"])
    assert "key 'first_run' (from --set) must be an integer <= 2147483646" in line
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ one job, one writer
def test_a_second_run_of_the_same_job_is_refused_naming_the_holder(tmp_path, capsys,
                                                                    no_computation):
    import socket

    from hpcswarm.run.joblock import JobLock

    holder = JobLock(tmp_path / "out.h5")
    assert holder.acquire() is None
    try:
        line = refused(tmp_path, capsys)
        assert "another run of this job is under way" in line
        assert f"host {socket.gethostname()}, PID {os.getpid()}" in line
        assert (tmp_path / "out.h5.lock").exists()  # the holder's lock is left alone
    finally:
        holder.release()
    assert list(tmp_path.iterdir()) == []


def test_a_second_run_writing_the_same_checkpoint_is_refused(tmp_path, capsys,
                                                             no_computation):
    """Two runs with different outputs but one checkpoint (a job array whose job file names
    it) would replace each other's checkpoint, and the first to finish would delete it."""
    import socket

    from hpcswarm.run.joblock import JobLock

    holder = JobLock(tmp_path / "shared.h5", role="checkpoint")
    assert holder.acquire() is None
    try:
        line = refused(tmp_path, capsys, sets=[f"checkpoint={tmp_path / 'shared.h5'}"])
        assert "shared.h5.lock: another run writes this checkpoint" in line
        assert f"host {socket.gethostname()}, PID {os.getpid()}" in line
        assert "give this run another checkpoint" in line
    finally:
        holder.release()
    assert list(tmp_path.iterdir()) == []  # the output's lock, taken first, was given back


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    import socket

    from hpcswarm.run.joblock import JobLock

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (tmp_path / "out.h5.lock").write_text(f"{socket.gethostname()} {done.stdout.strip()}\n")
    job = read_job(JOB, TINY + [f"output={tmp_path / 'out.h5'}"])
    assert job_module.run_job(job, quiet=True)["tasks"] == 1
    assert not (tmp_path / "out.h5.lock").exists()  # released and removed at the end


def test_the_lock_is_released_when_a_check_fails(tmp_path, capsys, no_computation):
    refused(tmp_path, capsys, sets=["data=builtin:nope"])
    assert list(tmp_path.iterdir()) == []


def test_a_lock_held_by_a_dead_process_of_this_host_is_stale(tmp_path, monkeypatch):
    """Where the lock is still reported held (a network file system), a holder of this host
    whose process is gone is detected and its lock file replaced."""
    import socket

    from hpcswarm.run import joblock

    path = tmp_path / "out.h5.lock"
    path.write_text(f"{socket.gethostname()} 999999999\n")
    calls = _held_once(monkeypatch)
    lock = joblock.JobLock(tmp_path / "out.h5")
    assert lock.acquire() is None and len(calls) == 2
    assert path.read_text() == f"{socket.gethostname()} {os.getpid()}\n"
    lock.release()
    assert not path.exists()


def _held_once(monkeypatch):
    """Make the lock report itself held once (as a network file system that lost track of a
    dead holder does), then taken; returns the list of calls."""
    import errno
    import fcntl

    from hpcswarm.run import joblock

    real, calls = fcntl.flock, []

    def held_once(handle, operation):
        calls.append(operation)
        if len(calls) == 1:
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        return real(handle, operation)

    monkeypatch.setattr(joblock.fcntl, "flock", held_once)
    return calls


@pytest.mark.parametrize("pid", ["99999999999999999999", "0"])
def test_a_lock_naming_a_process_id_no_process_can_have_is_stale(tmp_path, monkeypatch, pid):
    """A holder's process id past the system's range (``os.kill`` raises OverflowError) or 0
    (``os.kill`` reads it as this process group) is no live process: the lock is stale."""
    import socket

    from hpcswarm.run import joblock

    (tmp_path / "out.h5.lock").write_text(f"{socket.gethostname()} {pid}\n")
    calls = _held_once(monkeypatch)
    lock = joblock.JobLock(tmp_path / "out.h5")
    assert lock.acquire() is None and len(calls) == 2
    lock.release()


def test_a_lock_whose_process_id_is_no_ascii_number_names_no_holder(tmp_path, monkeypatch):
    """Digits that are no ASCII number (a superscript two) are not a holder's process id."""
    import socket

    from hpcswarm.run import joblock

    (tmp_path / "out.h5.lock").write_text(f"{socket.gethostname()} \u00b2\n")
    _held_once(monkeypatch)
    problem = joblock.JobLock(tmp_path / "out.h5").acquire()
    assert "another run of this job is under way (host an unknown host" in problem


@pytest.mark.slow
def test_a_job_takes_over_a_lock_naming_a_huge_process_id(tmp_path, capsys, monkeypatch):
    import socket

    from hpcswarm.__main__ import main as entry

    (tmp_path / "out.h5.lock").write_text(f"{socket.gethostname()} 99999999999999999999\n")
    _held_once(monkeypatch)
    status = entry(cli_args(tmp_path) + ["--quiet"])
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err, err
    assert (tmp_path / "out.h5").exists() and not (tmp_path / "out.h5.lock").exists()
