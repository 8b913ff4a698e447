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
        model["idle_scale"] * rows[-1]["gemm_per_madd"])  # the largest size's
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
    (tmp_path / "run.txt").write_text(stdout + "\nreal 0m1s\n")  # a shell's time after it
    tables = _bench(tmp_path, "--model-from", str(tmp_path / "run.txt"), "--markdown")
    assert tables.startswith(again)
    rows = [line for line in tables.splitlines()[len(again.splitlines()):]
            if line.startswith("| ")]
    assert [row.split(" | ")[:2] for row in rows[1:5]] == [
        [f"| {size}", path] for size in ("60 x 240", "90 x 360") for path in ("full", "states")]
    assert [row.split(" | ")[0] for row in rows if row[2].isdigit()][4:] == [
        "| 64", "| 256", "| 1,024"] * 2


def vlpso_gpu_figures(folder, rounds):
    """The GPU section's figures in ``folder / bench_vlpso.jsonl``, checked: every round of
    the cached path then of the full path as each ended, the paths the same, then each
    round after the first both paths beside one core, then the search; the figures."""
    figures = [json.loads(line)
               for line in (folder / "bench_vlpso.jsonl").read_text().splitlines()]
    names = [f["figure"] for f in figures]
    n_rounds = names.count("vlpso_round") // 2
    assert n_rounds >= rounds  # the initial evaluation and the moves, length changes on top
    assert names == (["vlpso_device"] + ["vlpso_round"] * 2 * n_rounds + ["vlpso_paths"]
                     + ["vlpso_iteration"] * (n_rounds - 1) + ["vlpso"])
    cached, full = (figures[1 + start:1 + start + n_rounds] for start in (0, n_rounds))
    assert [r["path"] for r in cached + full] == ["cached"] * n_rounds + ["full"] * n_rounds
    assert [r["round"] for r in cached] == [r["round"] for r in full] == list(range(n_rounds))
    assert all(r["held"] == r["moved"] == r["rebuilt"] == 0 for r in full)
    assert sum(r["moved"] for r in cached) > 0 and cached[0]["rebuilt"] > 0
    assert cached[-1]["state_bytes"] == cached[-1]["held"] * figures[0]["state_bytes"] > 0
    for a, b in zip(cached, full):  # the same subsets scored on both paths
        assert a["flipped"] == b["flipped"] and a["compared"] == b["compared"]
        assert a["moved"] + a["rebuilt"] + a["uncached"] + a["repeated"] == b["uncached"]
        assert a["scored"] == b["scored"] > 0 and a["seconds"] >= a["evaluation_s"] > 0
    assert figures[1 + 2 * n_rounds]["same_results"] and figures[-1]["same_results"]
    for iteration in figures[2 + 2 * n_rounds:-1]:
        assert iteration["cached_s"] > 0 and iteration["full_s"] > 0
        assert iteration["core_s"] > 0 and iteration["evaluations"] > 0
    return figures


@pytest.mark.slow
def test_the_gpu_section_streams_each_round_of_both_paths_beside_one_core(tmp_path):
    _bench(tmp_path, "--gpu", "--small", "--rounds", "6", "--particles", "12")
    figures = vlpso_gpu_figures(tmp_path, rounds=6)
    assert figures[0]["device"] == "numpy (host)"
    assert all(f["shard_rows"] < 300 for f in figures if f["figure"] == "vlpso_iteration")
