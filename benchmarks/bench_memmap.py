"""Resident memory of N ranks opening one dataset: memory-mapped versus a private copy each.

Run serially or under MPI (the figures that matter come from two or more ranks)::

    python benchmarks/bench_memmap.py
    mpiexec -n 2 python benchmarks/bench_memmap.py [--samples 1000 --genes 50000 --dir /tmp]

Rank 0 writes a synthetic float64 matrix (default 1000 x 50000 = 400 MB = 381 MiB) with
hpcswarm's own writer into a temporary folder. Then every rank (1) opens it with
``open_dataset`` and touches the whole matrix, (2) drops it and reads it into memory with h5py
(the private-copy baseline) and touches it, (3) builds the k-NN evaluator (1-NN
leave-one-out) the way every rank did before the searches read ``X_genes``, on a private
gene-major float64 copy (``KnnEvaluator(X)``), and (4) the way it does now, on the file's memory-mapped ``X_genes``
(``KnnEvaluator(GeneMajor(X_genes))``), each followed by one evaluation of half the genes
and held while the figures are taken. After each step a rank reports, in MiB (as are the
JSON keys ``*_mb``), from ``/proc/self/status`` and ``/proc/self/smaps_rollup``, the growth of
VmRSS, of its file-backed part RssFile (page-cache pages it shares with the other ranks), of
its anonymous part RssAnon (private memory), and of Pss (proportional set size: a shared page
counts 1/k in each of the k processes mapping it, so the ranks' Pss add up to what the node
really spends). The last line is one JSON object.
"""

import argparse
import ctypes
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from hpcswarm.comm import world
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor, KnnEvaluator

MB = 1024 * 1024


def memory_kb():
    """VmRSS, RssFile, RssAnon (``/proc/self/status``) and Pss (``smaps_rollup``), in kB."""
    fields = {}
    for name in ("/proc/self/status", "/proc/self/smaps_rollup"):
        with open(name) as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssFile", "RssAnon", "Pss"):
                    fields[key] = int(value.split()[0])
    return fields


def release_freed_memory():
    """Give freed heap pages back to the system (glibc ``malloc_trim``), so that a growth
    counts live memory only: neither hidden by the reuse of memory an earlier step freed nor
    inflated by freed temporaries the allocator keeps."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def growth(before, after):
    """Growth of each memory figure, in MiB."""
    return {key: round((after[key] - before[key]) / 1024, 1) for key in before}


def make_file(folder, n_samples, n_genes):
    """Write a random (n_samples, n_genes) float64 dataset; returns its path."""
    rng = np.random.default_rng(12345)
    X = rng.random((n_samples, n_genes))
    path = Path(folder) / "bench.h5"
    write_dataset(Dataset(X=X, y=np.arange(n_samples) % 2, class_names=["a", "b"],
                          gene_names=[f"g{j}" for j in range(n_genes)]), path)
    return path


def touch(X):
    """Read every value (a sum over the whole matrix)."""
    return float(np.asarray(X).sum())


def measure(comm, path):
    """This rank's memory growth and time for the memory-mapped open and the private copy."""
    comm.barrier()
    before = memory_kb()
    start = time.perf_counter()
    dataset = open_dataset(path)
    total = touch(dataset.X)
    mapped_seconds = time.perf_counter() - start
    comm.barrier()  # every rank holds its mapping when the figures are taken
    mapped = growth(before, memory_kb())
    mapped_flag = dataset.memory_mapped
    del dataset
    comm.barrier()
    before = memory_kb()
    start = time.perf_counter()
    with h5py.File(path, "r") as f:
        X = f["X"][()]
    copy_total = touch(X)
    copy_seconds = time.perf_counter() - start
    comm.barrier()
    copy = growth(before, memory_kb())
    del X
    if copy_total != total:
        raise RuntimeError("the memory map and the copy disagree")
    return {"rank": comm.rank, "memory_mapped": mapped_flag,
            "memmap": dict(mapped, seconds=round(mapped_seconds, 3)),
            "private_copy": dict(copy, seconds=round(copy_seconds, 3)),
            **measure_evaluators(comm, path)}


def measure_evaluators(comm, path):
    """This rank's memory growth while it holds an evaluator on a copy, then on ``X_genes``."""
    dataset = open_dataset(path)
    mask = np.random.default_rng(0).random(dataset.n_genes) < 0.5
    sources = {"evaluator_copy": lambda: np.asarray(dataset.X),
               "evaluator_gene_major": lambda: GeneMajor(dataset.X_genes)}
    figures, scores = {}, []
    for mode, source in sources.items():
        release_freed_memory()
        comm.barrier()
        before = memory_kb()
        start = time.perf_counter()
        evaluator = KnnEvaluator(source(), dataset.y, k=1, cv="loo")
        scores.append(evaluator.score(mask))
        seconds = time.perf_counter() - start
        release_freed_memory()  # the evaluation's temporaries: live memory only is counted
        comm.barrier()
        figures[mode] = dict(growth(before, memory_kb()), seconds=round(seconds, 3))
        del evaluator
    if scores[0] != scores[1]:
        raise RuntimeError("the evaluators on the copy and on X_genes disagree")
    return figures


def main(argv=None):
    """Write the file, measure every rank, print the table and the JSON line on rank 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--genes", type=int, default=50000)
    parser.add_argument("--dir", default=None,
                        help="folder for the temporary file (default: the system's temp folder)")
    args = parser.parse_args(argv)
    with world() as comm:
        return measure_all(args, comm)


def measure_all(args, comm):
    """Build the matrix, measure every rank's memory growth, print the table on rank 0."""
    folder = tempfile.mkdtemp(prefix="hpcswarm-bench-", dir=args.dir) if comm.rank == 0 else None
    try:
        path = comm.bcast(make_file(folder, args.samples, args.genes) if comm.rank == 0 else None)
        rows = comm.gather(measure(comm, path))
    finally:
        comm.barrier()
        if comm.rank == 0:
            shutil.rmtree(folder, ignore_errors=True)
    if comm.rank != 0:
        return
    matrix_mb = args.samples * args.genes * 8 / MB
    print(f"matrix {args.samples} x {args.genes} float64 = {matrix_mb:.0f} MiB, "
          f"{comm.size} rank(s); growth in MiB")
    print(f"{'rank':>4} {'mode':<20} {'VmRSS':>8} {'RssFile':>8} {'RssAnon':>8} {'Pss':>8} "
          f"{'seconds':>8}")
    for row in rows:
        for mode in ("memmap", "private_copy", "evaluator_copy", "evaluator_gene_major"):
            m = row[mode]
            print(f"{row['rank']:>4} {mode:<20} {m['VmRSS']:>8} {m['RssFile']:>8} "
                  f"{m['RssAnon']:>8} {m['Pss']:>8} {m['seconds']:>8}")
    summary = {
        "matrix_mb": round(matrix_mb, 1),
        "ranks": comm.size,
        "memory_mapped": all(row["memory_mapped"] for row in rows),
        "memmap_rss_mb": [row["memmap"]["VmRSS"] for row in rows],
        "memmap_rss_file_mb": [row["memmap"]["RssFile"] for row in rows],
        "memmap_private_mb": [row["memmap"]["RssAnon"] for row in rows],
        "memmap_pss_total_mb": round(sum(row["memmap"]["Pss"] for row in rows), 1),
        "copy_rss_mb": [row["private_copy"]["VmRSS"] for row in rows],
        "copy_private_mb": [row["private_copy"]["RssAnon"] for row in rows],
        "copy_pss_total_mb": round(sum(row["private_copy"]["Pss"] for row in rows), 1),
        "evaluator_copy_private_mb": [row["evaluator_copy"]["RssAnon"] for row in rows],
        "evaluator_gene_major_private_mb": [row["evaluator_gene_major"]["RssAnon"]
                                            for row in rows],
        "per_rank": rows,
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    sys.exit(main())
