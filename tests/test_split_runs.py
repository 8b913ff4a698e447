"""One experiment split over several allocations with ``first_run``: the same tasks and, pooled
by ``report``, the same table as one job with every run."""

import numpy as np

from hpcswarm import cli
from hpcswarm.results.report import build_report
from hpcswarm.run.protocols import make_tasks


def test_first_run_gives_the_tasks_of_the_longer_job():
    y = np.arange(40) % 2
    every = make_tasks(y, "unbiased", 5, seed=3, folds=4, inner_cv="loo")
    part = make_tasks(y, "unbiased", range(3, 5), seed=3, folds=4, inner_cv="loo")
    assert [t.run for t in part] == [3] * 4 + [4] * 4
    for mine, theirs in zip(part, every[12:]):
        assert (mine.run, mine.fold, mine.spawn_key) == (theirs.run, theirs.fold, theirs.spawn_key)
        assert np.array_equal(mine.train, theirs.train) and np.array_equal(mine.test, theirs.test)


def test_report_pools_the_parts_of_one_experiment(tmp_path):
    job = tmp_path / "wine.toml"
    job.write_text('data = "sklearn:wine"\nalgorithm = "cbpso"\nprotocol = "holdout"\nseed = 4\n'
                   '[params]\nn_particles = 4\nn_iterations = 3\n')
    for output, runs, first in (("all.h5", 3, 0), ("a.h5", 2, 0), ("b.h5", 1, 2)):
        assert cli.main(["run", str(job), "--quiet", "--set", f"output={tmp_path / output}",
                         "--set", f"runs={runs}", "--set", f"first_run={first}"]) == 0
    whole = build_report([tmp_path / "all.h5"])
    pooled = build_report([tmp_path / "b.h5", tmp_path / "a.h5"])
    drop = ("file",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in pooled["rows"]] == \
        [{k: v for k, v in r.items() if k not in drop} for r in whole["rows"]]
    assert pooled["genes"][0]["top"] == whole["genes"][0]["top"]
    assert pooled["rows"][-1]["runs"] == 3
    # the same file twice is read once (with a note), not one experiment of doubled runs
    twice = build_report([tmp_path / "a.h5", tmp_path / "a.h5"])
    assert [r["runs"] for r in twice["rows"] if r["method"] == "cbpso"] == [2]
    assert any("counted once" in note for note in twice["notes"])


def _without_init(path):
    """The results file ``path`` as a version before VLPSO's ``init`` and ``gene_order``
    wrote it: its ``params`` lack the keys (their run was the normal initialisation's, on
    the symmetric uncertainty order)."""
    import json

    import h5py

    with h5py.File(path, "r+") as results:
        params = json.loads(results.attrs["params"])
        del params["init"], params["gene_order"]
        results.attrs["params"] = json.dumps(params)


def test_a_part_written_before_a_parameter_existed_pools_with_todays_equal_part(tmp_path):
    from hpcswarm.results.files import read_results

    job = tmp_path / "wine.toml"
    job.write_text('data = "sklearn:wine"\nalgorithm = "vlpso"\nprotocol = "holdout"\nseed = 4\n'
                   '[params]\nn_particles = 4\nn_iterations = 2\nn_divisions = 2\n')
    for output, first, init in (("old.h5", 0, "normal"), ("new.h5", 1, "normal"),
                                ("uniform.h5", 1, "uniform")):
        assert cli.main(["run", str(job), "--quiet", "--set", f"output={tmp_path / output}",
                         "--set", "runs=1", "--set", f"first_run={first}",
                         "--set", f"init={init}"]) == 0
    _without_init(tmp_path / "old.h5")
    params = read_results(tmp_path / "old.h5").attrs["params"]
    assert (params["init"], params["gene_order"]) == ("normal", "su")
    pooled = build_report([tmp_path / "old.h5", tmp_path / "new.h5"])
    assert [r["runs"] for r in pooled["rows"] if r["method"] == "vlpso"] == [2]
    apart = build_report([tmp_path / "old.h5", tmp_path / "uniform.h5"])
    assert [r["runs"] for r in apart["rows"] if r["method"] == "vlpso"] == [1, 1]
