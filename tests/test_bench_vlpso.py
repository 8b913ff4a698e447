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
def test_every_size_gets_its_figures_and_the_model_is_checked_against_them(tmp_path):
    stdout = _bench(tmp_path, "--sizes", "60x240", "90x360", "--particles", "12",
                    "--rounds", "2", "--repeats", "1", "--eval-masks", "3",
                    "--su-size", "120x200", "--folder", str(tmp_path))
    document = json.loads(stdout.strip().splitlines()[-1])
    rows = document["results"]
    assert [(r["n_samples"], r["n_genes"]) for r in rows] == [(60, 240), (90, 360)]
    for r in rows:
        assert r["same_results"] and r["peak_bytes"] > 0 and r["eval_over_gemm"] > 0
        assert len(r["eval_s"]) == len(r["gemm_s"]) == len(r["eval_sizes"]) == 3
        assert set(r["iteration_s"]) == {"1 rank"} and set(r["su_s"]) == {"1 rank"}
        assert r["iteration_s"]["1 rank"][0] <= r["iteration_s"]["1 rank"][2]
    checked = {(n, d, what) for n, d, what, _, _ in document["model"]["checks"]}
    assert checked == {(n, d, what) for n, d in [(60, 240), (90, 360)]
                       for what in ("1 rank", "SU, 1 rank")} | {(120, 200, "SU, 1 rank")}
    assert document["su_large"]["n_samples"] == 120
    # ranks as particle groups (at most the paper's 300 particles) x shards, all used
    ranks = [row[:3] for row in document["model"]["searches"]]
    assert ranks == [[1, 1, 1], [64, 64, 1], [256, 256, 1], [1024, 256, 4]]
    assert sorted(p.name for p in tmp_path.glob("*.h5")) == ["vlpso-60x240.h5",
                                                             "vlpso-90x360.h5"]


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
