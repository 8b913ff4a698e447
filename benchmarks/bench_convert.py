"""Peak memory and time of ``hpcswarm convert`` on a cohort-sized gzipped genes-as-rows TSV.

::

    python benchmarks/bench_convert.py [--samples 11000 --genes 20000 --dir /tmp/bench]

Writes (once, then reused from ``--dir``) a synthetic UCSC-Xena-like file: a gzipped TSV with
one gene per row and one sample per column (values like log2 expression, 4 decimals) and a
phenotype table (``sample``, ``group``). Each conversion runs as its own process
(``python -m hpcswarm convert ... --labels pheno.tsv --label group``); its wall time and peak
resident memory (``ru_maxrss`` of that child) are reported.

Baseline, in the same run: the reader of the code before streaming (git revision
``--baseline-rev``, extracted into a temporary folder) on a smaller file (``--small-samples``
x ``--small-genes``, uncompressed and with a labels row, since that reader knew neither gzip
nor phenotype tables) beside the streamed reader on the same small file; the ratio of the two
is what to compare between runs on a shared machine. The last line is one JSON object.
"""

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def write_cohort(path, n_samples, n_genes, *, label_row=False, seed=0):
    """A genes-as-rows TSV, gzipped if ``path`` ends in .gz (and its phenotype table beside
    it), unless already there."""
    pheno = path.with_name(path.name.split(".")[0] + ".pheno.tsv")
    if path.is_file() and pheno.is_file():
        return path, pheno
    rng = np.random.default_rng(seed)
    pool = np.array([f"{v:.4f}" for v in rng.normal(8.0, 2.0, size=4096)], dtype=object)
    samples = [f"TCGA-{i:06d}" for i in range(n_samples)]
    groups = np.array(["tumour", "normal", "metastasis"])[rng.integers(0, 3, n_samples)]
    partial = path.with_name(path.name + ".part")
    opener = (lambda p: gzip.open(p, "wt", compresslevel=1)) if path.suffix == ".gz" else (
        lambda p: open(p, "w"))
    with opener(partial) as out:
        out.write("gene\t" + "\t".join(samples) + "\n")
        if label_row:
            out.write("class\t" + "\t".join(groups) + "\n")
        for j in range(n_genes):
            out.write(f"G{j}\t" + "\t".join(pool[rng.integers(0, pool.size, n_samples)]) + "\n")
    partial.rename(path)
    pheno.write_text("sample\tgroup\n" + "".join(f"{s}\t{g}\n" for s, g in zip(samples, groups)))
    return path, pheno


def run(argv, env=None, cwd=None):
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one child process.

    On a shared machine the CPU time is the steadier figure: the wall time grows with the
    other processes' load."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    out, err = child.stdout.read().decode(), child.stderr.read().decode()
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{out}{err}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def old_package(revision, folder):
    """The ``hpcswarm`` package of ``revision``, extracted into ``folder``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "hpcswarm"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def convert(package_parent, source, output, *options):
    """Run ``convert`` with the ``hpcswarm`` package found in ``package_parent``: without
    ``site`` (``-S``, so that no editable install's import hook takes precedence) and outside
    the repository, with the environment's site-packages for the dependencies."""
    site_packages = Path(np.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{package_parent}{os.pathsep}{site_packages}"}
    argv = [sys.executable, "-S", "-m", "hpcswarm", "convert", str(source), str(output),
            "--genes-as-rows", "--overwrite", *map(str, options)]
    return run(argv, env, cwd=tempfile.gettempdir())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=11000)
    parser.add_argument("--genes", type=int, default=20000)
    parser.add_argument("--small-samples", type=int, default=1000)
    parser.add_argument("--small-genes", type=int, default=10000)
    parser.add_argument("--baseline-rev", default="80561d6",
                        help="git revision of the reader before streaming")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each conversion")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "hpcswarm-bench")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores shared)", flush=True)

    small, _ = write_cohort(args.dir / f"small-{args.small_samples}x{args.small_genes}.tsv",
                            args.small_samples, args.small_genes, label_row=True)
    big, pheno = write_cohort(args.dir / f"cohort-{args.samples}x{args.genes}.tsv.gz",
                              args.samples, args.genes)
    results = {"samples": args.samples, "genes": args.genes,
               "small": [args.small_samples, args.small_genes],
               "gz_mb": big.stat().st_size / 2**20, "old_small": [], "new_small": [], "new_big": []}
    with tempfile.TemporaryDirectory() as folder:
        old = old_package(args.baseline_rev, Path(folder))
        for _ in range(args.repeat):
            results["old_small"].append(convert(old, small, args.dir / "old-small.h5"))
            results["new_small"].append(convert(REPO, small, args.dir / "new-small.h5"))
    for _ in range(args.repeat):
        results["new_big"].append(convert(REPO, big, args.dir / "cohort.h5",
                                          "--labels", pheno, "--label", "group"))
    for name in ("old-small.h5", "new-small.h5", "cohort.h5"):
        (args.dir / name).unlink(missing_ok=True)

    def line(what, runs):
        seconds = [s for s, _, _ in runs]
        peak = [m for _, m, _ in runs]
        cpu = [c for _, _, c in runs]
        return (f"{what:<46} {min(seconds):8.1f} s (max {max(seconds):.1f})"
                f" {min(cpu):8.1f} s CPU {max(peak):9.0f} MiB peak RSS")

    print(f"{'conversion':<46} {'wall':>10}       {'user+sys':>12} {'memory':>14}")
    print(line(f"old reader {args.small_samples} x {args.small_genes} (baseline)", results["old_small"]))
    print(line(f"streamed   {args.small_samples} x {args.small_genes}", results["new_small"]))
    print(line(f"streamed   {args.samples} x {args.genes} ({results['gz_mb']:.0f} MB .gz)",
               results["new_big"]))
    old_s = min(c for _, _, c in results["old_small"])
    new_s = min(c for _, _, c in results["new_small"])
    old_m = max(m for _, m, _ in results["old_small"])
    new_m = max(m for _, m, _ in results["new_small"])
    print(f"small file: streamed/old CPU time {new_s / old_s:.2f}, peak memory {new_m / old_m:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
