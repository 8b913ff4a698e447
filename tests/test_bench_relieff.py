"""``benchmarks/bench_relieff.py`` runs end to end on a small set: both ways, equal weights."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from hpcswarm.data import Dataset, write_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_both_ways_run_side_by_side_with_equal_weights(tmp_path):
    rng = np.random.default_rng(4)
    y = np.repeat(np.arange(3), 12)
    X = rng.normal(size=(36, 60))
    X[:, :5] += 2.0 * y[:, None]
    path = tmp_path / "small.h5"
    write_dataset(Dataset(X=X, y=y, class_names=["a", "b", "c"],
                          gene_names=[f"g{gene}" for gene in range(60)]), path)
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_relieff.py", "--data", str(path), "--repeats", "2"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    (only,) = figures["sets"]
    assert only["equal"] and only["shape"] == [32, 60]
    assert len(only["skrebate_s"]) == len(only["relieff_s"]) == 2
