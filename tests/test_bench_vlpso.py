"""``benchmarks/bench_vlpso.py`` runs end to end on tiny sizes: its figures, the cost model's
check against them, and the GPU section on the host (numpy as the GPU path's arrays)."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench(tmp_path, *arguments):
    env = {**os.environ, "PYTHONPATH": ROOT, "OUT": str(tmp_path)}
    done = subprocess.run([sys.executable, "benchmarks/bench_vlpso.py", *arguments],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_both_paths_by_size_per_round_and_the_model_fitted_and_checked(tmp_path):
    stdout = _bench(tmp_path, "--sizes", "60x240", "90x360", "--particles", "12",
                    "--rounds", "10", "--change-after", "3", "--flips-size", "60x240",
                    "--flips-particles", "24", "--flips-rounds", "15", "--folder",
                    str(tmp_path))
    document = json.loads(stdout.strip().splitlines()[-1])
    rows = document["results"]
    assert [(r["n_samples"], r["n_genes"]) for r in rows] == [(60, 240), (90, 360)]
    for r in rows:
        assert r["same_results"] and r["su_s"] > 0 and r["gemm_per_madd"] > 0
        assert set(r["runs"]) == {"1 rank, full", "1 rank, cached"}  # one rank: no 2-rank runs
        full, cached = (r["runs"][f"1 rank, {path}"]["rounds"] for path in ("full", "cached"))
        assert len(full) == len(cached) >= 11  # 10 rounds, a length change on top
        assert all(rank["held"] == 0 and rank["moved"] == 0 for row in full
                   for rank in row["ranks"])
        assert sum(rank["moved"] for row in cached for rank in row["ranks"]) > 0
        assert [row["ranks"][0]["flipped"] for row in full] == [
            row["ranks"][0]["flipped"] for row in cached]  # the same moves on both paths
    model = document["model"]
    assert {(n, d, key) for n, d, key, _, _ in model["checks"]} == {
        (n, d, f"1 rank, {path}") for n, d in [(60, 240), (90, 360)] for path in ("full", "cached")}
    assert 0 < model["idle_scale"] <= 1
    assert model["constants"]["multiply_add"] == pytest.approx(
        model["idle_scale"] * sum(r["gemm_per_madd"] for r in rows) / 2)
    assert all(0 < run["core_share"] <= 1 for r in rows for run in r["runs"].values())
    for tables in model["paper"].values():
        assert [ranks for ranks, _, _ in tables["searches"]] == [1, 64, 256, 1024]
        assert [ranks for ranks, *_ in tables["signatures"]] == [64, 256, 1024]
    flips = document["flips"]
    assert (flips["n_samples"], flips["n_genes"]) == (60, 240) and len(flips["rounds"]) >= 16
    assert "every prediction within 30 %: " in stdout
    assert sorted(p.name for p in tmp_path.glob("*.h5")) == ["vlpso-60x240.h5",
                                                             "vlpso-90x360.h5"]
    (tmp_path / "run.txt").write_text(stdout)
    again = _bench(tmp_path, "--model-from", str(tmp_path / "run.txt"))
    assert again.splitlines() == stdout.splitlines()[-len(again.splitlines()) - 1:-1]


@pytest.mark.slow
def test_the_gpu_section_streams_each_iteration_beside_one_core(tmp_path):
    _bench(tmp_path, "--gpu", "--small", "--rounds", "3", "--particles", "12")
    figures = [json.loads(line)
               for line in (tmp_path / "bench_vlpso.jsonl").read_text().splitlines()]
    assert [f["figure"] for f in figures] == (["vlpso_device"] + ["vlpso_iteration"] * 2
                                              + ["vlpso"])
    assert figures[0]["device"] == "numpy (host)"
    for iteration in figures[1:3]:
        assert iteration["gpu_s"] >= iteration["gpu_evaluation_s"] > 0
        assert iteration["core_s"] > 0 and iteration["evaluations"] > 0
        assert iteration["shard_rows"] < 300
