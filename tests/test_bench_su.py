"""``benchmarks/bench_su.py`` runs end to end on a tiny size: both ways, the same bits."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_both_ways_run_side_by_side_with_the_same_bits():
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_su.py", "--size", "60x300", "--repeats", "2"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["same_bits"] and (figures["n_samples"], figures["n_genes"]) == (60, 300)
    assert [len(times) for times in figures["seconds"].values()] == [2, 2]
