"""``hpcswarm run --dry-run`` states the plan of a search, or of a job's searches, and exits
without searching; a real search or job opens with its plan in one line."""

import numpy as np
import pytest

import hpcswarm.run.job
import hpcswarm.run.plan
import hpcswarm.selection.search
from cli_checks import assert_one_error, folder_state, run_cli
from hpcswarm.comm import world
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.results.files import read_results
from hpcswarm.run.cost_model import farmed_seconds
from hpcswarm.run.dry_run import NOTHING_LEFT, JobSearches, job_plan_lines, job_plan_note
from hpcswarm.run.job import run_job_file


def test_the_plan_states_the_grid_the_memory_and_the_states_then_exits(capsys, monkeypatch,
                                                                       tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hpcswarm.selection.search, "run_search", None)  # never searches
    status, out, err = run_cli(capsys, "run", "--data", "builtin:srbct", "--algorithm",
                               "vlpso", "--dry-run", "--quiet")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == ("plan: 1 rank(s) = 1 particle group(s) x 1 sample shard(s); 115 "
                        "particles, at most 115 per group")  # SRBCT's 2,308 genes: 115
    assert lines[1].startswith("memory per rank: ") and "swarm " in lines[1]
    one = state_bytes(83, 83, 2308)
    assert lines[2] == (f"particle states per rank: 115 of 115 particle(s), "
                        f"{115 * one / 1e9:.3g} GB ({one / 1e6:.4g} MB a state)")
    assert lines[3].startswith("expected time: ") and "an estimate of the cost model" in lines[3]
    assert len(lines) == 4 and folder_state(tmp_path) == {}
    budget = 2.5 * one / 1e9  # two states
    status, out, err = run_cli(capsys, "run", "--data", "builtin:srbct", "--algorithm",
                               "vlpso", "--dry-run", "--cache-memory", budget)
    assert "particle states per rank: 2 of 115 particle(s)" in out
    assert "particle_states" in out.splitlines()[1]  # an explicit budget is in the estimate
    status, out, err = run_cli(capsys, "run", "--data", "builtin:srbct", "--algorithm",
                               "vlpso", "--dry-run", "--cache-memory", "0")
    assert out.splitlines()[-1].startswith("note: the cache budget holds no particle state")
    assert "0 of 115 particles cached" in out.splitlines()[-2]
    status, out, err = run_cli(capsys, "run", "--data", "builtin:srbct", "--algorithm",
                               "pso", "--dry-run")
    assert "expected time: the cost model describes vlpso only" in out.splitlines()


def test_a_search_opens_with_its_plan_in_one_line_unless_quiet(capsys, tmp_path):
    search = ["run", "--data", "builtin:srbct", "--algorithm", "vlpso", "--param",
              "n_particles=6", "--param", "n_iterations=2", "--output"]
    status, out, err = run_cli(capsys, *search, tmp_path / "a.json")
    assert status == 0, err
    (plan,) = out.splitlines()
    assert plan.startswith("plan: 1 rank(s) = 1 particle group(s) x 1 sample shard(s), 6 "
                           "particles; ")
    assert "6 of 6 particles of a group cached" in plan and "; expected " in plan
    status, out, err = run_cli(capsys, *search, tmp_path / "b.json", "--quiet")
    assert status == 0 and out == ""


JOB = ('name = "tiny"\ndata = "builtin:srbct"\nalgorithm = "vlpso"\nprotocol = "final-signature"\n'
       'runs = 1\nfolds = 3\nseed = 1\n')


def test_a_job_dry_run_states_each_search_and_writes_nothing(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # where the job's outputs would go
    monkeypatch.setattr(hpcswarm.run.job, "farm", None)  # never searches
    monkeypatch.setattr(hpcswarm.run.plan, "take_lock", None)  # never locks
    job = tmp_path / "tiny.toml"
    job.write_text(JOB)
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, "run", job, "--dry-run", "--set", "params.n_particles=12")
    assert status == 0, err
    assert folder_state(tmp_path) == before  # no output, checkpoint, progress file nor lock
    lines = out.splitlines()
    assert lines[0].startswith("tiny: vlpso on builtin:srbct, final-signature protocol, 1 "
                               "run(s) x 3 fold(s) + 1 search(es) on all samples = 4 tasks")
    heads = [line for line in lines if not line.startswith(("  ", "note: "))][1:]
    # SRBCT's 83 samples in 3 outer folds train on 55, 55 and 56 rows; the final search on 83
    assert heads[:3] == ["2 fold search(es) on 55 training rows, each on a group of 1 rank(s):",
                         "1 fold search(es) on 56 training rows, each on a group of 1 rank(s):",
                         "1 final search(es) on all 83 samples, each on a group of 1 rank(s):"]
    assert lines.count("  plan: 1 rank(s) = 1 particle group(s) x 1 sample shard(s); 12 "
                       "particles, at most 12 per group") == 3
    one = state_bytes(83, 83, 2308)
    assert (f"  particle states per rank: 12 of 12 particle(s), {12 * one / 1e9:.3g} GB "
            f"({one / 1e6:.4g} MB a state)") in lines
    assert heads[3].startswith("expected job time: ") and len(heads) == 4
    assert "an estimate of the cost model" in heads[3]
    assert sum("per multiply-add" in line for line in lines) == 1  # the constants once


def test_a_job_dry_run_refuses_what_the_run_would(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    job = tmp_path / "tiny.toml"
    job.write_text(JOB + 'wrong_key = 1\n')
    status, out, err = run_cli(capsys, "run", job, "--dry-run")
    assert_one_error(status, err, "wrong_key")
    job.write_text(JOB)
    (tmp_path / "tiny.h5").write_text("finished")
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, "run", job, "--dry-run")
    assert_one_error(status, err, "tiny.h5", "already exists")
    assert folder_state(tmp_path) == before and out == ""
    (tmp_path / "table.csv").write_text("gene,a,b\ng1,1,2\n")  # a file the run converts
    job.write_text(JOB.replace("builtin:srbct", "table.csv") + 'output = "other.h5"\n')
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, "run", job, "--dry-run")
    assert_one_error(status, err, "table.csv", "not yet converted")
    assert folder_state(tmp_path) == before  # no cache folder, no converted file


def test_a_job_opens_with_its_plan_in_one_line_unless_quiet(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    job = tmp_path / "wine.toml"
    job.write_text(JOB.replace("builtin:srbct", "sklearn:wine").replace("final-signature",
                                                                       "unbiased")
                   + "[params]\nn_particles = 4\nn_iterations = 2\nn_divisions = 4\n")
    status, out, err = run_cli(capsys, "run", job, "--set", "output=loud.h5")
    assert status == 0, err
    lines = out.splitlines()
    (plan,) = [line for line in lines if line.startswith("plan: ")]
    assert lines.index(plan) == 1  # after the opening line, before the summary
    assert plan.startswith("plan: 1 group(s) of 1 rank(s), each 1 particle group(s) x 1 "
                           "sample shard(s), 4 particles; ")
    assert "4 of 4 particles of a group cached" in plan and "; the job expected in " in plan
    status, out, err = run_cli(capsys, "run", job, "--set", "output=quiet.h5", "--quiet")
    assert status == 0 and not any(line.startswith("plan: ") for line in out.splitlines())
    loud, quiet = read_results(tmp_path / "loud.h5"), read_results(tmp_path / "quiet.h5")
    for column in ("test_correct", "train_fitness", "evaluations", "subset_size"):
        assert np.array_equal(loud.table[column], quiet.table[column]), column
    assert all(np.array_equal(a, b) for a, b in zip(loud.genes, quiet.genes))


def test_a_job_with_every_task_finished_plans_no_search():
    searches = JobSearches(shapes=[], n_groups=2, group_size=1, seconds=None)
    assert job_plan_lines(searches) == [NOTHING_LEFT]
    assert job_plan_note(searches) == f"plan: {NOTHING_LEFT}"


def test_the_farm_model_deals_the_longest_search_first():
    assert farmed_seconds([1.0, 2.0, 3.0, 2.0], 2) == 4.0  # 3 + 1 and 2 + 2
    assert farmed_seconds([1.0, 2.0, 3.0, 2.0], 1) == 8.0
    assert farmed_seconds([5.0], 4) == 5.0


@pytest.mark.mpi
def test_a_job_dry_run_agrees_on_every_rank_and_only_rank_zero_prints(monkeypatch, tmp_path):
    """Also under mpiexec -n 2: the pre-flight and each group's grid are collective."""
    monkeypatch.chdir(tmp_path)
    job = tmp_path / "tiny.toml"
    job.write_text(JOB)
    printed = []
    with world() as comm:
        run_job_file(job, ["params.n_particles=12"], comm=comm, print0=printed.append,
                     dry_run=True)
        assert (len(printed) > 5) == (comm.rank == 0)
        if comm.rank == 0:
            groups = "2 group(s) of 1" if comm.size == 2 else "1 group(s) of 1"
            assert groups in printed[0]
            assert printed[-1].startswith("expected job time: ")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tiny.toml"]
