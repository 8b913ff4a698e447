"""Checks made before any computation of a job, each ending every rank with one clear message
(:mod:`hpcswarm.run.plan` makes them, and its memory checks).

Every check gives the same verdict on every rank: a check made on one rank is broadcast, a
check made on each rank (the dataset opens, the memory suffices) is allgathered and the
first failing rank's message raised everywhere, so that no rank is left in a collective.
"""

from pathlib import Path

from hpcswarm.errors import DataError, ParameterError
from hpcswarm.store.atomic import creation_refused


def agree(comm, problem):
    """Raise on every rank the first rank's ``(kind, message)`` problem (None: no problem)."""
    problems = comm.allgather(problem)
    for found in problems:
        if found is not None:
            kind, message = found
            raise (ParameterError if kind == "ParameterError" else DataError)(message)


def check_device(device, comm):
    """ParameterError on every rank if the scorer's ``device`` cannot run on one of them
    (``"gpu"`` without CuPy or a CUDA device: :func:`hpcswarm.fitness.gpu.gpu_array_module`);
    called before the job writes anything, its lock file included."""
    if device != "gpu":
        return
    from hpcswarm.fitness.gpu import gpu_array_module  # here: CPU jobs never import it

    problem = None
    try:
        gpu_array_module()
    except ParameterError as exc:
        problem = ("ParameterError", str(exc))
    agree(comm, problem)


def check_output_writable(folder):
    """Message if ``folder`` does not exist or a file cannot be created in it, else None."""
    folder = Path(folder)
    if not folder.is_dir():
        return f"{folder}: the output folder does not exist"
    refused = creation_refused(folder / "write-test")
    if refused is not None:
        return f"{folder}: the output folder is not writable ({refused})"
    return None


def check_inner_k(tasks, k, inner_cv):
    """ParameterError if the k-NN of the search cannot run on a task's inner folds."""
    for task in tasks:
        smallest = task.smallest_inner_train
        if k > smallest:
            raise ParameterError(
                f"job key 'fitness.k': k={k} exceeds the {smallest} training samples of an "
                f"inner fold ({inner_cv!r}) of run {task.run} fold {task.fold}")
