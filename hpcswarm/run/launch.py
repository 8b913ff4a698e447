"""Refuse a split world: a launcher started N > 1 tasks but MPI built a world of one rank.

A launcher tells each process it starts how many tasks it started, in the environment: srun
in ``SLURM_STEP_NUM_TASKS`` (``SLURM_NTASKS`` inside a step), MPICH's and Intel MPI's
mpiexec (and ``srun --mpi=pmi2``) in ``PMI_SIZE``, Open MPI's mpirun in
``OMPI_COMM_WORLD_SIZE``. A PMIx launcher publishes the job size through its server only,
not in the environment; its ``PMIX_RANK`` still shows a launch of at least ``PMIX_RANK + 1``
tasks. When the launcher and the MPI library mpi4py is linked to share no process-management
interface (``srun --mpi=none`` with MPICH, ``srun`` without ``--mpi=pmix`` with Open MPI),
every task becomes rank 0 of its own ``COMM_WORLD`` of size 1: each would run the whole job
and all would write the same files. :func:`refuse_split_world` turns that into one error on
every process, before any data is read or any file written.

Only the environment is read here; the world size and the library's name come from
:mod:`hpcswarm.comm`, and MPI is started only when a launcher announced more than one task.
"""

import os
import signal

from hpcswarm.errors import LaunchError

_FIX = ("launch with srun --mpi=pmi2 for MPICH (or an MPICH-derived MPI), srun --mpi=pmix for "
        "Open MPI, or set HPCSWARM_LAUNCHER=mpiexec for slurm/run_lsrg.sh")


def _count(environ, name):
    value = environ.get(name, "").strip()
    return int(value) if value.isdigit() else None


def launched_tasks(environ):
    """The launcher's account of this launch: ``(n_tasks, launcher, evidence)`` or ``None``.

    Parameters
    ----------
    environ : mapping of str to str
        The process environment.

    Returns
    -------
    tuple of (int, str, str) or None
        The largest task count any launcher variable announces, the launcher it points to
        (e.g. ``"srun --mpi=none"``) and the variable as ``NAME=value``; ``None`` when no
        launcher variable is set. Pure.
    """
    step = environ.get("SLURM_STEP_ID", "").strip()
    srun_tasks = _count(environ, "SLURM_STEP_NUM_TASKS")
    srun_variable = "SLURM_STEP_NUM_TASKS"
    if srun_tasks is None and step.isdigit():   # an srun step, not the batch script
        srun_tasks, srun_variable = _count(environ, "SLURM_NTASKS"), "SLURM_NTASKS"
    plugin = environ.get("SLURM_MPI_TYPE")
    srun = "srun" + (f" --mpi={plugin}" if plugin else "")
    pmix_rank = _count(environ, "PMIX_RANK")
    sources = [
        (_count(environ, "OMPI_COMM_WORLD_SIZE"), "Open MPI's mpirun", "OMPI_COMM_WORLD_SIZE"),
        (srun_tasks, srun, srun_variable),
        (_count(environ, "PMI_SIZE"), "a PMI launcher (MPICH's mpiexec, srun --mpi=pmi2)",
         "PMI_SIZE"),
        (None if pmix_rank is None else pmix_rank + 1, "a PMIx launcher", "PMIX_RANK"),
    ]
    announced = [(n, launcher, f"{name}={environ[name]}") for n, launcher, name in sources
                 if n is not None]
    if not announced:
        return None
    n_tasks = max(n for n, _, _ in announced)
    return next(source for source in announced if source[0] == n_tasks)


def split_world_message(n_tasks, launcher, evidence, library):
    """The one-line explanation of a split world, naming the launcher, the library and the fix."""
    return (f"{launcher} started {n_tasks} tasks ({evidence}) but MPI gives this process a world "
            f"of 1 rank: the launcher and the MPI library mpi4py uses ({library}) share no "
            "process-management interface, so every task would run the whole job alone and "
            f"write the same files; {_FIX}")


def hold_sigterm(environ=None):
    """Block SIGTERM from the start of a process that a launcher started with others, until
    :func:`refuse_split_world` has seen its world.

    In a split world every task refuses at once, and ``srun --kill-on-bad-exit`` sends
    SIGTERM to the others as soon as the first exits: a task still starting MPI would die by
    the signal (status 143) instead of refusing (status 2). Blocked, the signal waits; a
    task of a whole world takes it when :func:`refuse_split_world` lets it through.
    """
    launch = launched_tasks(os.environ if environ is None else environ)
    if launch is not None and launch[0] >= 2:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def refuse_split_world(environ=None):
    """Raise :class:`~hpcswarm.errors.LaunchError` on every process of a split world.

    Does nothing (and does not start MPI) when no launcher announced more than one task.
    Called once by the command line before any subcommand reads or writes a file; a
    SIGTERM held by :func:`hold_sigterm` stays blocked in a split world (the process exits
    2 with it pending) and is let through otherwise.
    """
    from hpcswarm.comm import world_size_and_library

    launch = launched_tasks(os.environ if environ is None else environ)
    if launch is None or launch[0] < 2:
        return
    world_size, library = world_size_and_library()
    if world_size == 1:  # ignored too: blocking holds only for this thread
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        raise LaunchError(split_world_message(*launch, library))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
