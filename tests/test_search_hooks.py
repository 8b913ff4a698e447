"""One hook shape from a job down to the search loop: :class:`SearchHooks`."""

from types import SimpleNamespace

from hpcswarm.data import Dataset
from hpcswarm.run.protocols import make_tasks, run_task
from hpcswarm.selection.search import SearchRun, run_search
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.swarm.engine.loop import SearchHooks
from synthetic import small_data

SETTINGS = {"n_particles": 4, "n_iterations": 3}


def test_a_rounds_end_reports_then_checkpoints_or_else_interrupts():
    calls = []
    search = SimpleNamespace(history=[{"iteration": 0}, {"iteration": 1}])

    def progress(row):
        calls.append(("progress", row["iteration"]))

    def checkpoint(given):
        calls.append(("checkpoint", given is search))

    def interrupt():
        calls.append(("interrupt",))

    SearchHooks(progress, checkpoint, interrupt).round_end(search)
    assert calls == [("progress", 1), ("checkpoint", True)]
    calls.clear()
    SearchHooks(progress, None, interrupt).round_end(search)
    assert calls == [("progress", 1), ("interrupt",)]
    calls.clear()
    SearchHooks().round_end(search)
    assert calls == []


def test_searches_without_snapshots_keep_only_the_interrupt():
    interrupt = object()
    hooks = SearchHooks(progress=print, checkpoint=print, interrupt=interrupt)
    assert hooks.without_snapshots() == SearchHooks(interrupt=interrupt)


def test_run_search_parts_its_run_from_the_specs_settings():
    hooks = SearchHooks()
    run, settings = SearchRun.split({"hooks": hooks, "resume": None, "refine": "prune"})
    assert run == SearchRun(hooks=hooks) and settings == {"refine": "prune"}


def test_the_hooks_a_task_is_given_reach_the_search_loop_unchanged():
    X, y = small_data(n_genes=20)
    seen = []
    hooks = SearchHooks(checkpoint=lambda search: seen.append(search.hooks))
    run_search(X, y, "cbpso", SETTINGS, seed=1, hooks=hooks)
    assert seen and all(given is hooks for given in seen)
    seen.clear()
    data = Dataset(X, y, ["a", "b", "c"], [f"g{i}" for i in range(20)])
    (task, *_) = make_tasks(y, "unbiased", 1, 3, folds=3, inner_cv="loo")
    run_task(task, data, SearchSpec.build("cbpso", SETTINGS), hooks)
    assert seen and all(given is hooks for given in seen)
