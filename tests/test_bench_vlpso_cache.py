"""``benchmarks/bench_vlpso_cache.py`` runs end to end on a tiny size: both paths, the same
results, and a per-round table whose multiply-adds the cache lowers."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_both_paths_run_side_by_side_with_the_same_results(tmp_path):
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_vlpso_cache.py", "--sizes", "60x400", "--rounds",
         "8", "--repeats", "1", "--particles", "12", "--folder", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stdout + done.stderr
    (figures,) = json.loads(done.stdout.strip().splitlines()[-1])["results"]
    assert figures["same_results"] and (figures["n_samples"], figures["n_genes"]) == (60, 400)
    full, cached = figures["per_round"]["full"], figures["per_round"]["cached"]
    assert len(full) == len(cached) == 8
    assert full[0]["multiply_adds"] == cached[0]["multiply_adds"]  # every first one in full
    assert sum(r["multiply_adds"] for r in cached) < sum(r["multiply_adds"] for r in full)
    assert sum(r["hits"] for r in cached) > 0 and all(r["hits"] == 0 for r in full)
    assert all(r["state_bytes"] == 0 for r in full) and cached[-1]["state_bytes"] > 0
