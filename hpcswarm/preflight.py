"""Checks made before any computation of a job, each ending every rank with one clear message.

Every check gives the same verdict on every rank: a check made on one rank is broadcast, a
check made on each rank (the dataset opens, the memory suffices) is allgathered and the
first failing rank's message raised everywhere, so that no rank is left in a collective.
"""

import math
import os
import uuid
from pathlib import Path

from hpcswarm.errors import DataError, HpcswarmError, ParameterError

SWARM_BYTES_PER_GENE = 26
"""Swarm state per particle and gene: position, velocity, pbest (floats) and masks."""
ARCHIVE_BYTES_PER_ENTRY = 200
"""One archive entry: 16-byte key, fitness, dict and LRU overhead."""
MEMORY_SHARE = 0.8
"""Share of the available memory a run may be estimated to use."""


def agree(comm, problem):
    """Raise on every rank the first rank's ``(kind, message)`` problem (None: no problem)."""
    problems = comm.allgather(problem)
    for found in problems:
        if found is not None:
            kind, message = found
            raise (ParameterError if kind == "ParameterError" else DataError)(message)


def check_output_writable(folder):
    """Message if ``folder`` does not exist or a file cannot be created in it, else None."""
    folder = Path(folder)
    if not folder.is_dir():
        return f"{folder}: the output folder does not exist"
    probe = folder / f".hpcswarm-write-test-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return f"{folder}: the output folder is not writable ({exc.strerror})"
    return None


def check_inner_k(tasks, k, inner_cv):
    """ParameterError if the k-NN of the search cannot run on a task's inner folds."""
    for task in tasks:
        smallest = task.smallest_inner_train
        if k > smallest:
            raise ParameterError(
                f"job key 'fitness.k': k={k} exceeds the {smallest} training samples of an "
                f"inner fold ({inner_cv!r}) of run {task.run} fold {task.fold}")


def estimate_memory(n_train, n_genes, n_particles, archive_size, group_size,
                    local_search=False):
    """Bytes one rank needs for one task (an estimate). Pure.

    Swarm state 26 B x particles x genes (replicated on the group's ranks); one cached
    evaluator state (8 n^2 + 16 n + genes bytes, n training rows) per particle of this
    rank whose local search keeps one; the archive, ~200 B x ``archive_size``; a copy of the
    task's training rows, 8 x n_train x genes (what a full evaluation of every gene gathers
    and the baselines read; the search itself reads the memory-mapped matrix, whose pages the
    ranks of a node share and which is not counted).
    """
    particles_here = math.ceil(n_particles / max(1, group_size))
    swarm = SWARM_BYTES_PER_GENE * n_particles * n_genes
    states = particles_here * (8 * n_train ** 2 + 16 * n_train + n_genes) if local_search else 0
    archive = ARCHIVE_BYTES_PER_ENTRY * archive_size
    rows = 8 * n_train * n_genes
    return swarm + states + archive + rows


def cgroup_limit(path="/sys/fs/cgroup/memory.max"):
    """The cgroup v2 memory limit in bytes, or None (no file, or "max")."""
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory(ranks_on_node, limit_gb=None):
    """``(bytes for one rank, description)``: the node's memory (or cgroup limit, or
    ``limit_gb``) divided by the ranks on the node."""
    if limit_gb is not None:
        total, what = int(limit_gb * 1e9), "--memory-limit"
    else:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        what = "physical memory"
        limit = cgroup_limit()
        if limit is not None and limit < total:
            total, what = limit, "cgroup memory.max"
    described = f"{what} {total / 1e9:.3g} GB / {ranks_on_node} rank(s) on the node"
    return total // max(1, ranks_on_node), described


def checkpoint_memory(n_groups, n_particles, n_genes):
    """Bytes world rank 0 holds for the checkpoint: the latest swarm snapshot of every group's
    running task (26 B x particles x genes each, see :mod:`hpcswarm.checkpoint`). Pure."""
    return n_groups * SWARM_BYTES_PER_GENE * n_particles * n_genes


def check_memory(job, dataset, tasks, group_size, comm, memory_limit=None):
    """DataError on every rank if the estimate exceeds 80 % of a rank's memory.

    World rank 0 also counts the checkpoint's snapshots (:func:`checkpoint_memory`); a job
    with in-fold preprocessing, each rank's private transformed copy of a task's training rows
    (:func:`hpcswarm.preprocess.transformed_bytes`).
    """
    from hpcswarm.methods import algorithm_class
    from hpcswarm.preprocess import transformed_bytes

    params = job.params
    n_train = max((len(task.train) for task in tasks), default=0)
    try:
        local_search = bool(getattr(algorithm_class(job.algorithm), "use_local_search", False))
    except (HpcswarmError, KeyError):
        local_search = False
    need = estimate_memory(n_train, dataset.X.shape[1], int(params.get("n_particles", 1)),
                           int(params.get("archive_size", 0) or 0), group_size, local_search)
    need += transformed_bytes(job.preprocess, n_train, dataset.X.shape[1])
    if comm.rank == 0:
        n_groups = -(-comm.size // max(1, group_size))
        need += checkpoint_memory(n_groups, int(params.get("n_particles", 1)),
                                  dataset.X.shape[1])
    ranks = comm.ranks_on_node()
    have, what = available_memory(ranks, memory_limit)
    problem = None
    where = f" (on rank {comm.rank})" if comm.size > 1 else ""
    if need > MEMORY_SHARE * have:
        problem = ("DataError",
                   f"not enough memory{where}: a rank needs an estimated {need / 1e9:.3g} GB "
                   f"({n_train} training samples x {dataset.X.shape[1]} genes, "
                   f"{params.get('n_particles', 1)} particles), more than "
                   f"{int(100 * MEMORY_SHARE)}% of the {have / 1e9:.3g} GB per rank "
                   f"({what}); use more nodes, fewer ranks per node or a larger "
                   f"--memory-limit")
    agree(comm, problem)
    return need, have
