"""Checkpoint and restart: snapshots of every method, and whole jobs interrupted by a
signal, by a crash during a checkpoint write and by a crash between writes, then resumed on the
same or another number of ranks; the results must equal the uninterrupted run's.

The interrupted runs are subprocesses (``tests/mpi_scripts/interrupt_job.py``), launched
directly or under ``mpiexec``, so these tests belong to the serial pass of ``make test``.
"""

import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

from search_snapshots import snapshot_at
from synthetic import SMALL, small_data
from test_mpi_jobs import MPIEXEC, SCRIPTS, launch
from test_records import record

from hpcswarm.baselines import BASELINES
from hpcswarm.selection.methods import ALGORITHMS
from hpcswarm.selection.search import run_search


def _without_seconds(history):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in history]


def _front(result):
    return [(p["size"], p["fitness"], p["correct"], list(p["genes"])) for p in result.front]


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS) + sorted(BASELINES))
def test_a_search_resumed_from_any_round_ends_as_the_uninterrupted_one(algorithm):
    X, y = small_data(3, 30, 24)
    params = SMALL.get(algorithm, {})  # the baselines need no settings
    full = run_search(X, y, algorithm, params, seed=7)
    for stop_at in range(len(full.history) - 1):
        snapshot = snapshot_at(X, y, algorithm, params, stop_at, seed=7)
        resumed = run_search(X, y, algorithm, params, seed=7, resume=snapshot)
        assert np.array_equal(resumed.mask, full.mask)
        assert resumed.fitness == full.fitness
        assert _without_seconds(resumed.history) == _without_seconds(full.history)
        assert resumed.extra.get("events") == full.extra.get("events")
        assert _front(resumed) == _front(full)


# ---------------------------------------------------------------------- whole jobs
def _write_job(folder, algorithm="pso-lsrg", **extra):
    from hpcswarm.data import Dataset, write_dataset

    X, y = small_data(5, 36, 60)
    data = folder / "data.h5"
    if not data.exists():
        write_dataset(Dataset(X=X, y=y, class_names=["a", "b", "c"],
                              gene_names=[f"g{i}" for i in range(X.shape[1])]), data)
    params = {"pso-lsrg": "n_particles = 8\nn_iterations = 14\nls_tries = 6\n",
              "cso": "n_particles = 8\nn_iterations = 14\n[fitness]\ncv = 3\n",
              "vlpso": "n_particles = 6\nn_iterations = 8\nn_divisions = 3\nchange_after = 2\n"
                       "local_search = true\nls_tries = 6\n"}[algorithm]
    lines = [f'data = "{data}"', f'algorithm = "{algorithm}"', 'protocol = "unbiased"',
             "folds = 3", "runs = 2", "seed = 11", "checkpoint_every = 2", "checkpoint_seconds = 0",
             *(f"{key} = {value}" for key, value in extra.items()), "[params]", params]
    job = folder / f"{algorithm}.toml"
    job.write_text("\n".join(lines))
    return job


def _run(job, output, *extra):
    from hpcswarm import cli

    assert cli.main(["run", str(job), "--quiet", "--set", f"output={output}", *extra]) == 0


def _interrupt(job, output, mode, n, rank=0, ranks=None):
    args = [mode, str(n), str(rank), "--", str(job), "--quiet", "--set", f"output={output}",
            "--threads", "1"]
    if ranks is None:
        env = dict(os.environ, PYTHONPATH=str(SCRIPTS.parent.parent))
        return subprocess.run([sys.executable, str(SCRIPTS / "interrupt_job.py"), *args],
                              capture_output=True, text=True, timeout=300, env=env)
    return launch(ranks, "interrupt_job.py", timeout=300, args=args)[0]


def _tables(path):
    """Every dataset of a results file but wall times and group numbers (which may differ)."""
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and not name.endswith(("seconds", "group")):
            value = obj[()]
            found[name] = value[:, :-1] if name.endswith("history") else value  # seconds last
    with h5py.File(path, "r") as f:
        assert list(f["runs/run-000/fold-00/history"].attrs["columns"])[-1] == "seconds"
        f.visititems(visit)
    return found


def _assert_same_results(a, b):
    first, second = _tables(a), _tables(b)
    assert first.keys() == second.keys()
    for name in first:
        assert np.array_equal(first[name], second[name]), name


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference")
    job = _write_job(folder)
    _run(job, folder / "ref.h5")
    return folder, job, folder / "ref.h5"


@pytest.mark.slow
@pytest.mark.parametrize("mode, n", [("sigterm", 1), ("sigterm", 9), ("crash-in-write", 1),
                                     ("crash-in-write", 6), ("crash-after-write", 4)])
def test_a_job_interrupted_and_resumed_gives_the_uninterrupted_results(reference, tmp_path,
                                                                       mode, n):
    folder, job, ref = reference
    output = tmp_path / "out.h5"
    checkpoint = tmp_path / "out.checkpoint.h5"
    done = _interrupt(job, output, mode, n)
    if mode == "sigterm":
        assert done.returncode == 3, done.stderr
        assert "stopped by SIGTERM" in done.stderr and "--resume" in done.stderr
    else:
        assert done.returncode == 9, done.stderr
    assert not output.exists()
    if mode == "crash-in-write" and n == 1:
        assert not checkpoint.exists()  # the first write never completed: nothing to resume
    else:
        with h5py.File(checkpoint, "r") as f:  # the previous checkpoint is whole
            assert f.attrs["encoding-type"] == "hpcswarm-checkpoint"
            assert len(f["finished"]) + len(f["inflight"]) >= 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")] or mode.startswith(
        "crash")
    _run(job, output, "--resume")
    _assert_same_results(ref, output)
    assert not checkpoint.exists()  # removed once the results are written


@pytest.mark.slow
def test_a_job_with_vlpsos_local_search_interrupted_and_resumed_gives_the_same_results(
        tmp_path):
    job = _write_job(tmp_path, "vlpso")
    _run(job, tmp_path / "ref.h5")
    with h5py.File(tmp_path / "ref.h5", "r") as f:
        events = [event for run in f["runs"].values() for fold in run.values()
                  for event in json.loads(fold.attrs["extra"])["events"]]
    assert sum(e["kept"] for e in events if e["event"] == "local_search") > 0
    output = tmp_path / "out.h5"
    done = _interrupt(job, output, "sigterm", 3)
    assert done.returncode == 3, done.stderr
    _run(job, output, "--resume")
    _assert_same_results(tmp_path / "ref.h5", output)


def test_the_checkpoint_holds_finished_tasks_and_the_swarms_of_running_ones(reference,
                                                                             tmp_path, capsys):
    folder, job, _ = reference
    output = tmp_path / "out.h5"
    assert _interrupt(job, output, "sigterm", 9).returncode == 3
    with h5py.File(tmp_path / "out.checkpoint.h5", "r") as f:
        assert len(f["finished"]) == 1 and len(f["inflight"]) == 1
        swarm = f["inflight"][next(iter(f["inflight"]))]
        assert swarm["position"].shape == (8, 60) and swarm["rng_states"].shape == (8, 48)
        # task 0 took snapshots 1-7 (rounds 1, 3, ..., 13); task 1's second (round 3) raised
        # the signal, so task 1 stopped at the end of round 4 with a last snapshot
        assert swarm["pbest_mask"].dtype == bool and swarm.attrs["iteration"] == 4
        finished_seconds = f["finished/task-000000"].attrs["seconds"]
    capsys.readouterr()
    _run(job, output, "--resume")
    assert "1 task(s) finished, 1 to continue from their snapshots" in capsys.readouterr().out
    with h5py.File(output, "r") as f:  # task 0 was taken from the checkpoint, not recomputed
        assert f["tasks/seconds"][0] == finished_seconds


@pytest.mark.slow
def test_an_existing_checkpoint_needs_resume_or_overwrite(reference, tmp_path):
    from hpcswarm import cli
    from hpcswarm.errors import DataError, ParameterError

    folder, job, _ = reference
    output = tmp_path / "out.h5"
    assert _interrupt(job, output, "sigterm", 3).returncode == 3
    with pytest.raises(DataError, match="checkpoint of an unfinished run.*--resume"):
        cli.main(["run", str(job), "--quiet", "--set", f"output={output}"])
    with pytest.raises(ParameterError, match="another job.*seed"):
        cli.main(["run", str(job), "--quiet", "--set", f"output={output}", "--set", "seed=12",
                  "--resume"])
    _run(job, output, "--resume")
    with pytest.raises(DataError, match="already complete"):
        cli.main(["run", str(job), "--quiet", "--set", f"output={output}", "--resume"])


@pytest.mark.slow
def test_a_stop_during_the_subsample_searches_resumes_to_the_uninterrupted_results(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    job = _write_job(folder, refine='"stability"', subsamples=2)
    _run(job, tmp_path / "ref.h5")
    output = tmp_path / "out.h5"
    done = _interrupt(job, output, "sigterm-in-subsamples", 20)
    assert done.returncode == 3, done.stderr
    assert "stopped by SIGTERM" in done.stderr
    _run(job, output, "--resume")
    _assert_same_results(tmp_path / "ref.h5", output)


def test_resume_without_a_checkpoint_starts_from_the_beginning(reference, tmp_path):
    folder, job, ref = reference
    _run(job, tmp_path / "out.h5", "--resume")
    _assert_same_results(ref, tmp_path / "out.h5")


@pytest.mark.slow
@pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")
@pytest.mark.parametrize("rank", [0, 1])
def test_a_signal_on_one_rank_stops_every_rank_and_another_rank_count_resumes(reference,
                                                                               tmp_path, rank):
    folder, job, ref = reference
    output = tmp_path / "out.h5"
    done = _interrupt(job, output, "sigterm", 2, rank=rank, ranks=2)
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("stopped by SIGTERM") == 1  # rank 0 alone reports
    _run(job, output, "--resume")  # serial
    _assert_same_results(ref, output)


def _resume_serial_stop_on_two_ranks(job, output, layout):
    """Stop ``job`` serially by SIGTERM after 5 rounds, then resume it on 2 ranks with the
    ``layout`` override (``KEY=VALUE``)."""
    assert _interrupt(job, output, "sigterm", 5).returncode == 3
    done, _ = launch(2, None, timeout=300, args=["run", str(job), "--quiet", "--resume",
                                                  "--set", f"output={output}",
                                                  "--set", layout])
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")
def test_a_serial_checkpoint_resumes_on_two_ranks_in_one_group(tmp_path):
    job = _write_job(tmp_path, "cso")
    _run(job, tmp_path / "ref.h5")
    output = tmp_path / "out.h5"
    _resume_serial_stop_on_two_ranks(job, output, "layout.group_size=2")
    _assert_same_results(tmp_path / "ref.h5", output)


@pytest.mark.slow
@pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")
def test_a_job_on_two_sample_shards_resumes_on_one_and_back(reference, tmp_path):
    folder, job, ref = reference
    output = tmp_path / "out.h5"
    args = ["sigterm", "2", "1", "--", str(job), "--quiet", "--set", f"output={output}",
            "--threads", "1", "--set", "layout.sample_shards=2"]
    done = launch(2, "interrupt_job.py", timeout=300, args=args)[0]
    assert done.returncode == 3, done.stderr
    assert "2 sample shards" not in done.stderr  # --quiet: nothing but the stop message
    _run(job, output, "--resume")  # one rank, one shard
    _assert_same_results(ref, output)
    # a serial checkpoint resumed by one group of 2 shards
    output = tmp_path / "again.h5"
    _resume_serial_stop_on_two_ranks(job, output, "layout.sample_shards=2")
    _assert_same_results(ref, output)
    with h5py.File(output, "r") as f:
        assert f.attrs["sample_shards"] == 2 and f.attrs["group_size"] == 2


def test_resume_needs_a_job_file():
    from hpcswarm import cli
    from hpcswarm.errors import ParameterError

    with pytest.raises(ParameterError, match="--resume applies to a job file"):
        cli.main(["run", "--data", "builtin:srbct", "--algorithm", "cso", "--resume"])


def test_checkpoint_writes_are_spaced_and_nothing_is_lost(tmp_path):
    from hpcswarm.run.checkpoint import Checkpoint, CheckpointKeeper
    from hpcswarm.run.protocols import make_tasks

    tasks = make_tasks(np.arange(12) % 2, "unbiased", 1, seed=0, folds=3, inner_cv="loo")
    now = [0.0]
    keeper = CheckpointKeeper(tmp_path / "c.h5", {"job": 1}, tasks, min_seconds=60,
                              clock=lambda: now[0])
    keeper.done(0, record(0, 0), 0)  # the first write is immediate
    first = (tmp_path / "c.h5").stat().st_mtime_ns
    now[0] = 30.0
    keeper.done(1, record(0, 1), 2)  # too soon: kept for later
    assert (tmp_path / "c.h5").stat().st_mtime_ns == first and keeper.dirty
    now[0] = 61.0
    keeper.maybe_write()
    reread = Checkpoint(tmp_path / "c.h5", {"job": 1}, len(tasks))
    assert sorted(reread.finished) == [0, 1] and not keeper.dirty
    assert reread.results()[1] == (record(0, 1), 2)
    reread.close()


def test_checkpoint_key_is_checked(tmp_path):
    from hpcswarm.errors import ParameterError
    from hpcswarm.run.jobfile import read_job

    job = _write_job(tmp_path)
    assert read_job(job, ["output=x.h5"]).checkpoint.name == "x.checkpoint.h5"
    for value, message in (("c.txt", "must end in .h5"), ("x.h5", "must differ")):
        with pytest.raises(ParameterError, match=f"checkpoint.*{message}"):
            read_job(job, ["output=x.h5", f"checkpoint={value}"])


# ---------------------------------------------------------------------- identity
def _checkpoint_of(job, tmp_path):
    """A checkpoint written by ``job`` (one finished task), as a resumed run would find it."""
    from hpcswarm.data import load_dataset
    from hpcswarm.data.sources import dataset_sha256
    from hpcswarm.run.checkpoint import CheckpointKeeper, checkpoint_identity
    from hpcswarm.run.plan import draw_tasks

    dataset = load_dataset(job.data)
    tasks, _ = draw_tasks(job, dataset.y)
    keeper = CheckpointKeeper(job.checkpoint, checkpoint_identity(job, dataset_sha256(dataset)),
                              tasks)
    keeper.done(0, record(0, 0), 0)
    return job.checkpoint


@pytest.mark.parametrize("change, key", [
    ("preprocess.zscore=true", 'preprocess = [] in the checkpoint, [["zscore", null]] in '
                               "this job"),
    ("max_genes=0", None), ("params.ls_tries=5", "params.ls_tries = 6 in the checkpoint, 5 in "
                                                 "this job"),
    ("device=gpu", 'device = "cpu" in the checkpoint, "gpu" in this job')])
def test_a_resume_with_a_setting_that_changes_results_is_refused_and_keeps_the_checkpoint(
        tmp_path, monkeypatch, change, key):
    from hpcswarm.errors import ParameterError

    monkeypatch.setenv("HPCSWARM_GPU_ARRAY_MODULE", "numpy")  # the GPU path on the host
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job

    path = _write_job(tmp_path)
    checkpoint = _checkpoint_of(read_job(path, [f"output={tmp_path / 'out.h5'}"]), tmp_path)
    stored = checkpoint.read_bytes()
    changed = read_job(path, [f"output={tmp_path / 'out.h5'}", change])
    if key is None:  # a default written out is the same experiment
        assert changed.identity() == read_job(path, [f"output={tmp_path / 'out.h5'}"]).identity()
        return
    with pytest.raises(ParameterError, match=f"another job \\({re.escape(key)}\\)") as caught:
        run_job(changed, resume=True, quiet=True)
    assert "\n" not in str(caught.value)
    assert checkpoint.read_bytes() == stored
    assert not (tmp_path / "out.h5").exists()


def _without_init(checkpoint):
    """``checkpoint`` as a VLPSO job wrote it before the ``init`` and ``gene_order``
    parameters existed: its stored identity holds neither."""
    with h5py.File(checkpoint, "r+") as f:
        identity = json.loads(f.attrs["identity"])
        del identity["params"]["init"], identity["params"]["gene_order"]
        f.attrs["identity"] = json.dumps(identity, sort_keys=True)


@pytest.mark.slow
def test_a_vlpso_checkpoint_written_before_init_resumes_as_the_normal_initialisation(tmp_path):
    from hpcswarm.errors import ParameterError
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job

    path = _write_job(tmp_path, "vlpso", refine='"prune"')  # as the stored record's
    output = f"output={tmp_path / 'out.h5'}"
    _without_init(_checkpoint_of(read_job(path, [output]), tmp_path))
    stored = read_job(path, [output]).checkpoint.read_bytes()
    uniform = read_job(path, [output, 'params.init="uniform"'])
    with pytest.raises(ParameterError, match='another job \\(params.init = "normal" in the '
                                             'checkpoint, "uniform" in this job\\)'):
        run_job(uniform, resume=True, quiet=True)  # the old searches started as "normal"
    by_f = read_job(path, [output, 'params.gene_order="f"'])
    with pytest.raises(ParameterError, match='another job \\(params.gene_order = "su" in the '
                                             'checkpoint, "f" in this job\\)'):
        run_job(by_f, resume=True, quiet=True)  # and ordered the genes by SU
    assert uniform.checkpoint.read_bytes() == stored
    run_job(read_job(path, [output]), resume=True, quiet=True)
    assert (tmp_path / "out.h5").exists()


def test_a_refused_resume_names_every_differing_key_with_both_values(tmp_path, capsys):
    """Two settings changed on the command line: both named, each with the checkpoint's value
    and this job's, in one line; the checkpoint and the folder are left as they were."""
    from cli_checks import assert_one_error, folder_state, run_cli
    from hpcswarm.run.jobfile import read_job

    path = _write_job(tmp_path)
    output = tmp_path / "out.h5"
    _checkpoint_of(read_job(path, [f"output={output}"]), tmp_path)
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "run", path, "--quiet", "--resume", "--set",
                             f"output={output}", "--set", "objective=balanced-accuracy",
                             "--set", "ls_tries=5")
    assert_one_error(status, err, "this checkpoint belongs to another job (params.ls_tries = 6 "
                     "in the checkpoint, 5 in this job; params.objective = \"accuracy\" in the "
                     "checkpoint, \"balanced-accuracy\" in this job)")
    assert folder_state(tmp_path) == before


def test_settings_that_do_not_change_results_are_left_out_of_the_identity(tmp_path):
    from hpcswarm.run.jobfile import SCHEMA, read_job

    path = _write_job(tmp_path)
    job = read_job(path, ["output=a.h5"])
    moved = read_job(path, ["output=elsewhere/b.h5", "checkpoint_every=3", "name=other",
                            "checkpoint_seconds=5", "layout.group_size=2",
                            "layout.sample_shards=2", "description=text"])
    assert moved.identity() == job.identity()
    neutral = {key.name.rpartition(".")[2] for key in SCHEMA if key.neutral}
    assert not neutral & set(job.identity())
    assert {"algorithm", "params", "preprocess", "device", "convert", "seed", "runs",
            "first_run", "refine", "max_genes", "protocol", "folds"} == set(job.identity())
