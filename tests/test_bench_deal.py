"""``benchmarks/bench_deal.py`` runs end to end: the deal's table, and under ``mpiexec -n 2``
the old deal and the new one in turn with the same results."""

import json
import os
import subprocess
import sys

import pytest

from cli_checks import MPIEXEC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
@pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")
def test_the_deal_by_cost_beats_contiguous_blocks_side_by_side():
    done = subprocess.run(
        [str(MPIEXEC), "-n", "2", sys.executable, "benchmarks/bench_deal.py", "--size",
         "60x300", "--particles", "12", "--rounds", "3", "--repeats", "1", "--groups", "2",
         "16"], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    uncached = [row for row in figures["balance"] if row["cache_slots"] == 0]
    assert [row["groups"] for row in uncached] == [2, 16, 2, 16]
    assert all(row["new"] <= row["bound"] and row["new"] < row["old"] for row in uncached)
    rounds = figures["rounds"]
    assert rounds["equal"] and rounds["groups"] == 2
    assert [len(seconds) for seconds in rounds["seconds"].values()] == [1, 1]
