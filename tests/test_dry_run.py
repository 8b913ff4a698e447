"""``hpcswarm run --dry-run`` states the plan of a search and exits without searching."""

import hpcswarm.selection.search
from cli_checks import assert_one_error, folder_state, run_cli
from hpcswarm.fitness.incremental import state_bytes


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


def test_a_job_file_has_no_dry_run(capsys, tmp_path):
    job = tmp_path / "job.toml"
    job.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\n')
    status, out, err = run_cli(capsys, "run", job, "--dry-run")
    assert_one_error(status, err, "--dry-run applies to a single search")
