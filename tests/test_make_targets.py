"""The test commands: ``make test`` (the README's) is the fast serial suite and the fast
collective tests under 2 ranks; ``make check`` (CI) adds everything else, and ``.ci/run``
runs it as ``make test`` then ``make test-full``."""

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def dry_run(target):
    """The test and documentation commands ``make TARGET`` would run (``make -n``), without
    the set-up of the environment."""
    done = subprocess.run(["make", "-n", "-s", target], cwd=REPO, capture_output=True,
                          text=True, check=True)
    return [line for line in done.stdout.splitlines() if "-m pytest" in line or "sphinx" in line]


def pytest_runs(target):
    """The pytest runs of ``make TARGET``: (ranks, marker expression, paths) each."""
    runs = []
    for line in dry_run(target):
        if "-m pytest" not in line:
            continue
        ranks = re.search(r"mpiexec -n (\d+)", line)
        words = shlex.split(line.split("-m pytest", 1)[1])
        marker = words[words.index("-m") + 1] if "-m" in words else ""
        runs.append((int(ranks[1]) if ranks else 1, marker,
                     tuple(w for w in words if w.startswith("tests"))))
    return runs


def test_make_test_is_the_fast_suite_serially_and_under_two_ranks():
    assert pytest_runs("test") == [(1, "not slow", ("tests",)),
                                   (2, "mpi and not slow", ("tests",))]


def test_make_check_runs_every_test_under_every_rank_count_and_the_docs():
    runs = pytest_runs("check")
    assert runs[:2] == pytest_runs("test")
    assert {m for ranks, m, paths in runs if ranks == 1 and paths == ("tests",)} == \
        {"not slow", "slow"}  # every test, serially
    assert {m for ranks, m, paths in runs if ranks == 2 and paths == ("tests",)} == \
        {"mpi and not slow", "mpi and slow"}  # every collective test on 2 ranks
    invariance = ("tests/test_mpi_invariance.py", "tests/test_mpi_comm.py")
    assert (3, "mpi", invariance) in runs and (4, "mpi", invariance) in runs
    assert any("sphinx -W" in line for line in dry_run("check"))  # warnings as errors


def test_ci_runs_the_readme_test_command_then_the_rest_of_make_check():
    steps = re.findall(r"^make (\S+)$", (REPO / ".ci" / "run").read_text(), flags=re.M)
    assert steps == ["test", "test-full"]
    assert dry_run("check") == [line for step in steps for line in dry_run(step)]
    assert "```shell\nmake test\n```" in (REPO / "README.md").read_text()


class Config:
    """The command line's arguments as the collection hook sees them."""

    def __init__(self, args):
        self.args = args


class Item:
    """A collected test as the collection hook sees it."""

    def __init__(self, nodeid):
        self.nodeid, self.markers = nodeid, []

    def add_marker(self, marker):
        self.markers.append(marker.name)


def test_the_listed_cases_are_marked_slow_and_a_missing_one_is_an_error():
    from conftest import SLOW_CASES, pytest_collection_modifyitems

    case, *others = SLOW_CASES
    listed, sibling = Item(case), Item(case.split("[")[0] + "[another]")
    pytest_collection_modifyitems(None, [listed, sibling, *map(Item, others)])
    assert listed.markers == ["slow"] and sibling.markers == []
    with pytest.raises(pytest.UsageError, match="not a collected case"):
        pytest_collection_modifyitems(None, [sibling, *map(Item, others)])
    pytest_collection_modifyitems(None, [Item("tests/test_other.py::test_x")])  # not collected


def test_a_case_named_on_the_command_line_runs_alone():
    from conftest import SLOW_CASES, pytest_collection_modifyitems

    case, *others = SLOW_CASES
    sibling = case.split("[")[0] + "[another]"
    named = Config([sibling])  # `pytest 'tests/test_x.py::test_y[another]'` collects it alone
    pytest_collection_modifyitems(named, [Item(sibling), *map(Item, others)])
    with pytest.raises(pytest.UsageError, match="not a collected case"):
        pytest_collection_modifyitems(Config(["tests"]), [Item(sibling), *map(Item, others)])
