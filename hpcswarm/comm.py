"""The only module that knows MPI: a serial communicator, the MPI one, and block partitions.

Library functions take ``comm=None`` meaning serial. :func:`world` returns a duplicate of
``MPI.COMM_WORLD`` (``Dup()``) so that hpcswarm's messages never mix with a caller's.
"""

import sys


def block_range(n_items, size, rank):
    """Half-open range ``(start, stop)`` of the items owned by ``rank`` of ``size``.

    Items are dealt in contiguous blocks whose lengths differ by at most one, the first
    ``n_items % size`` ranks holding one more. With more ranks than items, the last ranks
    own the empty range. Pure: computes the partition without communicating.
    """
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"rank {rank} is outside a communicator of size {size}")
    base, extra = divmod(n_items, size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def _mpi_is_initialised():
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()


def world():
    """A private duplicate of ``MPI.COMM_WORLD`` (a size-1 communicator without mpiexec)."""
    from mpi4py import MPI

    return MPI.COMM_WORLD.Dup()


def world_rank():
    """This process's rank in ``COMM_WORLD`` (0 when MPI was never started)."""
    if not _mpi_is_initialised():
        return 0
    return sys.modules["mpi4py.MPI"].COMM_WORLD.Get_rank()


def abort_world(code):
    """End every rank of the job at once (only this process when MPI was never started)."""
    if _mpi_is_initialised() and sys.modules["mpi4py.MPI"].COMM_WORLD.Get_size() > 1:
        sys.modules["mpi4py.MPI"].COMM_WORLD.Abort(code)
