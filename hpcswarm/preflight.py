"""Checks made before any computation of a job, each ending every rank with one clear message.

Every check gives the same verdict on every rank: a check made on one rank is broadcast, a
check made on each rank (the dataset opens, the memory suffices) is allgathered and the
first failing rank's message raised everywhere, so that no rank is left in a collective.
"""

import math
import uuid
from pathlib import Path

from hpcswarm.errors import DataError, HpcswarmError, ParameterError
from hpcswarm.system import available_memory, cgroup_limit  # noqa: F401 - machine queries

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


def state_memory(n_train, n_genes, sample_shards=1):
    """Bytes of one cached evaluator state of a sample shard. Pure.

    The distances of the shard's ``ceil(n_train / S)`` held-out rows to every training
    sample, two vectors of norms and drift, and a mask:
    ``8 ceil(n / S) n + 16 n + genes`` (:mod:`hpcswarm.fitness.incremental`).
    """
    rows = -(-n_train // max(1, sample_shards))
    return 8 * rows * n_train + 16 * n_train + n_genes


def estimate_memory(n_train, n_genes, n_particles, archive_size, local_search=False,
                    sample_shards=1):
    """Bytes one rank needs for one task (an estimate). Pure.

    Swarm state 26 B x particles x genes (replicated on the group's ranks); one cached
    evaluator state of this rank's sample shard (:func:`state_memory`) for the methods that
    keep one (a local search or a greedy step holds one at a time and drops it); the
    archive, ~200 B x ``archive_size``; a copy of the task's training rows,
    8 x n_train x genes (what a full evaluation of every gene gathers and the baselines read;
    the search itself reads the memory-mapped matrix, whose pages the ranks of a node share
    and which is not counted).
    """
    swarm = SWARM_BYTES_PER_GENE * n_particles * n_genes
    states = state_memory(n_train, n_genes, sample_shards) if local_search else 0
    archive = ARCHIVE_BYTES_PER_ENTRY * archive_size
    rows = 8 * n_train * n_genes
    return swarm + states + archive + rows


def checkpoint_memory(n_groups, n_particles, n_genes):
    """Bytes world rank 0 holds for the checkpoint: the latest swarm snapshot of every group's
    running task (26 B x particles x genes each, see :mod:`hpcswarm.checkpoint`). Pure."""
    return n_groups * SWARM_BYTES_PER_GENE * n_particles * n_genes


def task_memory(job, dataset, tasks, sample_shards, rank0_groups):
    """``(estimated bytes of one rank of job with sample_shards shards, training samples)``.

    ``rank0_groups``: the rank groups whose snapshots the rank holds (world rank 0), or 0.
    A job with in-fold preprocessing adds each rank's private transformed copy of a task's
    training rows (:func:`hpcswarm.preprocess.transformed_bytes`).
    """
    from hpcswarm.methods import algorithm_class
    from hpcswarm.preprocess import transformed_bytes

    params = job.params
    n_train = max((len(task.train) for task in tasks), default=0)
    try:
        local_search = bool(getattr(algorithm_class(job.algorithm), "use_local_search", False))
    except (HpcswarmError, KeyError):
        local_search = False
    n_particles = int(params.get("n_particles", 1))
    need = estimate_memory(n_train, dataset.X.shape[1], n_particles,
                           int(params.get("archive_size", 0) or 0), local_search,
                           sample_shards)
    need += transformed_bytes(job.preprocess, n_train, dataset.X.shape[1])
    if rank0_groups:
        need += checkpoint_memory(rank0_groups, n_particles, dataset.X.shape[1])
    return need, n_train


def choose_sample_shards(job, dataset, tasks, group_size, comm, memory_limit=None):
    """The job's sample shards: ``job.sample_shards``, or for 0 the fewest that fit.

    Automatic: the smallest divisor of ``group_size`` whose estimate (:func:`estimate_memory`)
    fits every rank's memory (the largest such choice over the ranks, so that every rank
    agrees); ``group_size`` when none does, which :func:`check_memory` then refuses with the
    count that would fit.
    """
    if job.sample_shards:
        return job.sample_shards
    import numpy as np

    have, _ = available_memory(comm.ranks_on_node(), memory_limit)
    groups = -(-comm.size // max(1, group_size)) if comm.rank == 0 else 0
    divisors = [s for s in range(1, group_size + 1) if group_size % s == 0]
    fitting = [s for s in divisors
               if task_memory(job, dataset, tasks, s, groups)[0] <= MEMORY_SHARE * have]
    mine = fitting[0] if fitting else group_size
    return int(comm.allreduce_max(np.array([mine], dtype=np.int64))[0])


def check_memory(job, dataset, tasks, group_size, comm, memory_limit=None, sample_shards=1):
    """DataError on every rank if the estimate exceeds 80 % of a rank's memory.

    World rank 0 also counts the checkpoint's snapshots (:func:`checkpoint_memory`). The
    message names the sample shard count that would fit, when one would.
    """
    groups = -(-comm.size // max(1, group_size)) if comm.rank == 0 else 0
    need, n_train = task_memory(job, dataset, tasks, sample_shards, groups)
    ranks = comm.ranks_on_node()
    have, what = available_memory(ranks, memory_limit)
    problem = None
    where = f" (on rank {comm.rank})" if comm.size > 1 else ""
    if need > MEMORY_SHARE * have:
        hint = "use more nodes, fewer ranks per node or a larger --memory-limit"
        enough = next((s for s in range(sample_shards + 1, max(n_train, 1) + 1)
                       if task_memory(job, dataset, tasks, s, groups)[0] <= MEMORY_SHARE * have),
                      None)
        if enough is not None:
            hint = (f"layout.sample_shards = {enough} would fit (groups of a multiple of "
                    f"{enough} ranks), or {hint}")
        problem = ("DataError",
                   f"not enough memory{where}: a rank needs an estimated {need / 1e9:.3g} GB "
                   f"({n_train} training samples x {dataset.X.shape[1]} genes, "
                   f"{job.params.get('n_particles', 1)} particles, {sample_shards} sample "
                   f"shard(s)), more than {int(100 * MEMORY_SHARE)}% of the {have / 1e9:.3g} "
                   f"GB per rank ({what}); {hint}")
    agree(comm, problem)
    return need, have
