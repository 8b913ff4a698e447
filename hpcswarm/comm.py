"""The only module that knows MPI (with :mod:`hpcswarm.node_array`, the arrays a node's ranks
share): a serial communicator, the MPI one, and block partitions.

Library code takes ``comm=None`` meaning serial and turns it into a :class:`SerialComm`
with :func:`as_comm`. :func:`world` wraps a duplicate of ``MPI.COMM_WORLD`` (``Dup()``) so
that hpcswarm's messages never mix with a caller's. Both communicators satisfy the
:class:`Comm` protocol (the collectives the swarm and the task farm need), count the bytes
they send, and use mpi4py's upper-case buffer methods for arrays.

Every communicator made by :func:`world`, :meth:`Comm.split` or :func:`split_grid` is owned
by whoever made it and released with ``free()`` (collective), or by a ``with`` block::

    with world() as comm, split_grid(comm, n_shards=2) as grid:
        ...  # grid.particles, grid.shards

``bytes_sent`` counts the payload a rank hands to MPI: its own contribution to a reduction
or a gather, the rows it sends to other ranks in an all-to-all, the buffer it broadcasts as
root (receivers count nothing). Pickled-object methods (``allgather``, ``bcast``, ``gather``)
are for small control messages outside the hot loop and are not counted. Summed over the
ranks of a communicator this is the data that must leave some rank, independent of how the
MPI library routes it (trees, rings, shared memory).
"""

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


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


def block_owner(n_items, size, item):
    """Rank owning ``item`` under :func:`block_range` (the inverse map). Pure."""
    if not 0 <= item < n_items:
        raise ValueError(f"item {item} is outside [0, {n_items})")
    base, extra = divmod(n_items, size)
    if item < extra * (base + 1):
        return item // (base + 1)
    return extra + (item - extra * (base + 1)) // base


def block_counts(n_items, size):
    """Number of items each rank owns under :func:`block_range`, as an int array."""
    bounds = [block_range(n_items, size, rank) for rank in range(size)]
    return np.array([stop - start for start, stop in bounds], dtype=np.int64)


@runtime_checkable
class Comm(Protocol):
    """What hpcswarm needs from a communicator; :class:`SerialComm` and :class:`MPIComm`.

    Array methods take and return numpy arrays (buffers, counted in ``bytes_sent``); the
    lower-case object methods (``allgather``, ``bcast``, ``gather``, ``isend``, ``poll``)
    are for small pickled control messages. Every method but the messages is collective.
    """

    rank: int
    size: int
    bytes_sent: int

    def allreduce_sum(self, array): ...
    def allreduce_max(self, array): ...
    def allreduce_min(self, array): ...
    def allgatherv(self, local, counts=None): ...
    def allgather_array(self, local): ...
    def broadcast(self, array, root=0): ...
    def alltoallv(self, send, send_counts, recv_counts): ...
    def allgather(self, obj): ...
    def bcast(self, obj, root=0): ...
    def gather(self, obj, root=0): ...
    def barrier(self): ...
    def progress(self): ...
    def split(self, color, key): ...
    def counter(self): ...
    def isend(self, obj, dest, tag): ...
    def poll(self, tag): ...
    def ranks_on_node(self): ...
    def colors_on_node(self, color): ...
    def node_array(self, shape, dtype): ...
    def free(self): ...
    def __enter__(self): ...
    def __exit__(self, *exc_info): ...


class _Owned:
    """``with comm:`` frees ``comm`` at the end of the block."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.free()


class SerialComm(_Owned):
    """A communicator of one rank: every collective returns its own input."""

    rank = 0
    size = 1

    def __init__(self):
        self.bytes_sent = 0
        self._mailbox = []

    def allreduce_sum(self, array):
        """Element-wise sum over ranks (exact for integer arrays)."""
        return np.array(array, copy=True)

    def allreduce_max(self, array):
        """Element-wise maximum over ranks."""
        return np.array(array, copy=True)

    def allreduce_min(self, array):
        """Element-wise minimum over ranks."""
        return np.array(array, copy=True)

    def allgatherv(self, local, counts=None):
        """Concatenate every rank's rows (axis 0) in rank order.

        ``counts`` (rows per rank, known on every rank) saves the exchange of the counts.
        """
        return np.array(local, copy=True)

    def allgather_array(self, local):
        """Stack every rank's equally shaped array: ndarray of shape (size,) + local.shape."""
        return np.array(local, copy=True)[None]

    def broadcast(self, array, root=0):
        """``root``'s array (same shape and dtype on every rank) on every rank."""
        return np.array(array, copy=True)

    def alltoallv(self, send, send_counts, recv_counts):
        """Rows ``send`` (grouped by destination rank) exchanged; rows received by source.

        Parameters
        ----------
        send : ndarray of shape (sum(send_counts), ...)
            Rows for rank 0 first, then rank 1, ...
        send_counts, recv_counts : sequence of int of length ``size``
            Rows to each rank / from each rank (the caller knows both).

        Returns
        -------
        ndarray of shape (sum(recv_counts), ...)
        """
        return np.array(send, copy=True)

    def allgather(self, obj):
        """List of every rank's (small, pickled) object in rank order."""
        return [obj]

    def bcast(self, obj, root=0):
        """``root``'s (small, pickled) object on every rank."""
        return obj

    def gather(self, obj, root=0):
        """List of every rank's object on ``root``; ``None`` elsewhere."""
        return [obj]

    def barrier(self):
        """Wait for every rank (nothing to wait for)."""

    def progress(self):
        """Let pending one-sided operations targeting this rank complete (nothing pending)."""

    def split(self, color, key):
        """Sub-communicator of the ranks with the same ``color`` (this one)."""
        return SerialComm()

    def counter(self):
        """A counter shared by the ranks, handing out 0, 1, 2, ... (see :class:`SharedCounter`)."""
        return SerialCounter()

    def isend(self, obj, dest, tag):
        """Post a small (pickled) message to ``dest`` without waiting; returns a request."""
        self._mailbox.append((tag, obj))
        return _DoneRequest()

    def poll(self, tag):
        """Every message with ``tag`` that has arrived, without waiting (a list, maybe empty)."""
        mine = [obj for t, obj in self._mailbox if t == tag]
        self._mailbox = [(t, obj) for t, obj in self._mailbox if t != tag]
        return mine

    def ranks_on_node(self):
        """Ranks of this communicator on this node (collective)."""
        return 1

    def colors_on_node(self, color):
        """The ``color`` of each rank of this communicator on this node, in rank order
        (collective): this one's."""
        return [color]

    def node_array(self, shape, dtype):
        """An array of ``shape`` and ``dtype`` held once by this communicator's ranks on
        each node (collective): a :class:`~hpcswarm.node_array.PrivateArray`."""
        from hpcswarm.node_array import PrivateArray

        return PrivateArray(SerialComm(), shape, dtype)

    def free(self):
        """Release the communicator (nothing to release)."""


class _DoneRequest:
    """The request of a message that needs no waiting."""

    def wait(self):
        """Nothing to wait for."""


class SerialCounter:
    """The :class:`SharedCounter` of a single rank."""

    def __init__(self):
        self._next = 0

    def next(self):
        """The next value."""
        value, self._next = self._next, self._next + 1
        return value

    def free(self):
        """Release the counter (nothing to release)."""


class SharedCounter:
    """A counter held by rank 0 of a communicator, incremented atomically by any rank.

    mpi4py's ``Counter`` (MPI-3 fetch-and-add on a one-sided window): a rank draws the next
    value without the other ranks taking part, which is what lets idle rank groups take the
    next task while others still compute. Creation and :meth:`free` are collective.
    """

    def __init__(self, comm):
        from mpi4py.util.sync import Counter

        self._counter = Counter(comm=comm, typecode="q")

    def next(self):
        """The next value."""
        return next(self._counter)

    def free(self):
        """Release the window (collective)."""
        self._counter.free()


class MPIComm(_Owned):
    """An mpi4py intracommunicator behind the :class:`Comm` protocol.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        Owned by this object (a duplicate made by :func:`world` or a split of one) and
        released by :meth:`free`.
    """

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.bytes_sent = 0

    def _reduce(self, array, op):
        send = np.ascontiguousarray(array)
        recv = np.empty_like(send)
        self.comm.Allreduce(send, recv, op=op)
        self.bytes_sent += send.nbytes
        return recv

    def allreduce_sum(self, array):
        """Element-wise sum over ranks (exact for integer arrays)."""
        from mpi4py import MPI

        return self._reduce(array, MPI.SUM)

    def allreduce_max(self, array):
        """Element-wise maximum over ranks."""
        from mpi4py import MPI

        return self._reduce(array, MPI.MAX)

    def allreduce_min(self, array):
        """Element-wise minimum over ranks."""
        from mpi4py import MPI

        return self._reduce(array, MPI.MIN)

    def allgatherv(self, local, counts=None):
        """Concatenate every rank's rows (axis 0) in rank order.

        ``counts`` (rows per rank, known on every rank) saves the exchange of the counts.
        """
        local = np.ascontiguousarray(local)
        if counts is None:
            rows = np.array(self.comm.allgather(local.shape[0]), dtype=np.int64)
            self.bytes_sent += 8
        else:
            rows = np.asarray(counts, dtype=np.int64)
            if rows.shape != (self.size,) or rows[self.rank] != local.shape[0]:
                raise ValueError(f"counts {rows.tolist()} do not match this rank's "
                                 f"{local.shape[0]} rows")
        row_items = int(np.prod(local.shape[1:], dtype=np.int64))
        out = np.empty((int(rows.sum()),) + local.shape[1:], dtype=local.dtype)
        self.comm.Allgatherv(local, [out, rows * row_items])
        self.bytes_sent += local.nbytes
        return out

    def allgather_array(self, local):
        """Stack every rank's equally shaped array: ndarray of shape (size,) + local.shape."""
        local = np.ascontiguousarray(local)
        out = np.empty((self.size,) + local.shape, dtype=local.dtype)
        self.comm.Allgather(local, out)
        self.bytes_sent += local.nbytes
        return out

    def broadcast(self, array, root=0):
        """``root``'s array (same shape and dtype on every rank) on every rank."""
        buffer = np.array(array, copy=True, order="C")
        self.comm.Bcast(buffer, root=root)
        if self.rank == root:
            self.bytes_sent += buffer.nbytes
        return buffer

    def alltoallv(self, send, send_counts, recv_counts):
        """Rows ``send`` (grouped by destination rank) exchanged; rows received by source.

        Parameters
        ----------
        send : ndarray of shape (sum(send_counts), ...)
            Rows for rank 0 first, then rank 1, ...
        send_counts, recv_counts : sequence of int of length ``size``
            Rows to each rank / from each rank (the caller knows both).

        Returns
        -------
        ndarray of shape (sum(recv_counts), ...)
        """
        send = np.ascontiguousarray(send)
        send_counts = np.asarray(send_counts, dtype=np.int64)
        recv_counts = np.asarray(recv_counts, dtype=np.int64)
        row_items = int(np.prod(send.shape[1:], dtype=np.int64))
        recv = np.empty((int(recv_counts.sum()),) + send.shape[1:], dtype=send.dtype)
        self.comm.Alltoallv([send, send_counts * row_items], [recv, recv_counts * row_items])
        row_bytes = row_items * send.itemsize
        self.bytes_sent += int(send_counts.sum() - send_counts[self.rank]) * row_bytes
        return recv

    def allgather(self, obj):
        """List of every rank's (small, pickled) object in rank order."""
        return self.comm.allgather(obj)

    def bcast(self, obj, root=0):
        """``root``'s (small, pickled) object on every rank."""
        return self.comm.bcast(obj, root=root)

    def gather(self, obj, root=0):
        """List of every rank's object on ``root``; ``None`` elsewhere."""
        return self.comm.gather(obj, root=root)

    def barrier(self):
        """Wait for every rank."""
        self.comm.Barrier()

    def progress(self):
        """Drive MPI progress so that one-sided operations targeting this rank complete.

        MPICH completes a passive-target fetch-and-add only when the target rank enters
        the library; a rank computing a swarm calls this once per iteration.
        """
        self.comm.Iprobe()

    def split(self, color, key):
        """Sub-communicator of the ranks with the same ``color``, ordered by ``key``."""
        return MPIComm(self.comm.Split(color, key))

    def counter(self):
        """A :class:`SharedCounter` held by rank 0 (collective)."""
        return SharedCounter(self.comm)

    def isend(self, obj, dest, tag):
        """Post a small (pickled) message to ``dest`` without waiting; returns a request.

        The sender must ``wait()`` on the request before the communicator is freed, and the
        receiver must :meth:`poll` until it has every message it expects.
        """
        return self.comm.isend(obj, dest=dest, tag=tag)

    def poll(self, tag):
        """Every message with ``tag`` that has arrived, without waiting (a list, maybe empty)."""
        from mpi4py import MPI

        received = []
        status = MPI.Status()
        while self.comm.iprobe(source=MPI.ANY_SOURCE, tag=tag, status=status):
            received.append(self.comm.recv(source=status.Get_source(), tag=tag))
        return received

    def ranks_on_node(self):
        """Ranks of this communicator on this node (collective)."""
        from mpi4py import MPI

        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        try:
            return node.Get_size()
        finally:
            node.Free()

    def colors_on_node(self, color):
        """The ``color`` of each rank of this communicator on this node, in rank order
        (collective; small pickled objects)."""
        from mpi4py import MPI

        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        try:
            return node.allgather(color)
        finally:
            node.Free()

    def node_array(self, shape, dtype):
        """An array of ``shape`` and ``dtype`` held once by this communicator's ranks on
        each node (collective): a :class:`~hpcswarm.node_array.SharedArray`, or for a
        communicator of one rank a :class:`~hpcswarm.node_array.PrivateArray`."""
        from mpi4py import MPI

        from hpcswarm.node_array import PrivateArray, SharedArray

        if self.size == 1:
            return PrivateArray(SerialComm(), shape, dtype)
        return SharedArray(MPIComm(self.comm.Split_type(MPI.COMM_TYPE_SHARED)), shape, dtype)

    def free(self):
        """Release the MPI communicator (collective); a second call does nothing."""
        from mpi4py import MPI

        if self.comm != MPI.COMM_NULL:
            self.comm.Free()


@dataclass(frozen=True)
class Grid:
    """A communicator's ranks laid out as particle groups x sample shards (row-major).

    World rank ``r`` of a grid with ``n_shards`` columns sits in particle group
    ``r // n_shards`` and shard ``r % n_shards``: the shards of one particle group are
    consecutive ranks (on one node when the launcher fills nodes in rank order).

    Attributes
    ----------
    particles : Comm
        The ranks holding the same sample shard, one per particle group (the swarm's
        exchange runs here).
    shards : Comm
        The ranks of this rank's particle group, one per sample shard (their Scores of one
        subset add up, :meth:`hpcswarm.fitness.score.Score.__add__`).
    n_groups, n_shards : int
    """

    particles: Comm
    shards: Comm
    n_groups: int
    n_shards: int

    def free(self):
        """Release both communicators (collective)."""
        self.particles.free()
        self.shards.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.free()


def grid_position(size, rank, n_shards):
    """``(particle group, shard)`` of ``rank`` in a grid of ``size`` ranks. Pure.

    Raises
    ------
    ValueError
        ``n_shards`` is not a positive divisor of ``size``.
    """
    if isinstance(n_shards, bool) or not isinstance(n_shards, (int, np.integer)) \
            or n_shards < 1 or size % n_shards:
        raise ValueError(f"n_shards must divide the {size} ranks, got {n_shards!r}")
    return divmod(rank, int(n_shards))


def split_grid(comm, n_shards):
    """``comm`` split into a :class:`Grid` of ``comm.size // n_shards`` particle groups x
    ``n_shards`` sample shards (collective; free the grid when done).

    Parameters
    ----------
    comm : Comm
    n_shards : int
        A divisor of ``comm.size``; 1 gives one shard (every rank its own particle group).
    """
    group, shard = grid_position(comm.size, comm.rank, n_shards)
    particles = comm.split(shard, comm.rank)
    shards = comm.split(group, comm.rank)
    return Grid(particles, shards, comm.size // int(n_shards), int(n_shards))


def as_comm(comm):
    """``comm`` itself, or a :class:`SerialComm` for ``None``."""
    return SerialComm() if comm is None else comm


def _mpi_is_initialised():
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()


LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
                      "OMPI_COMM_WORLD_RANK", "MPI_LOCALNRANKS", "MPI_LOCALRANKID",
                      "MV2_COMM_WORLD_SIZE")
"""Environment variables an MPI launcher (MPICH's and Intel MPI's mpiexec, Open MPI's mpirun,
PMI/PMIx servers, MVAPICH) sets in every process it starts."""


def launched_by_mpi(environ=None):
    """Whether this process was started by an MPI launcher (``mpiexec``, ``mpirun``, or
    ``srun`` with more than one task), read from the environment alone. Pure for a given
    ``environ`` (default :data:`os.environ`)."""
    environ = os.environ if environ is None else environ
    if any(environ.get(name, "").strip() for name in LAUNCHER_VARIABLES):
        return True
    if not environ.get("SLURM_STEP_ID", "").strip().isdigit():  # a batch script, not a step
        return False
    tasks = environ.get("SLURM_STEP_NUM_TASKS") or environ.get("SLURM_NTASKS") or ""
    return tasks.strip().isdigit() and int(tasks) > 1


def start_mpi():
    """Initialise MPI (importing ``mpi4py.MPI`` does; nothing happens the second time) when an
    MPI launcher started this process (:func:`launched_by_mpi`), so that :func:`world_rank` is
    this process's rank under ``mpiexec``; otherwise nothing: a serial command neither imports
    mpi4py nor starts MPI, and works where MPI cannot start."""
    if not launched_by_mpi():
        return
    import warnings

    with warnings.catch_warnings():  # another MPI's launcher: refuse_split_world says so
        warnings.simplefilter("ignore", RuntimeWarning)
        from mpi4py import MPI  # noqa: F401 - the import initialises MPI


def world():
    """An :class:`MPIComm` over a private duplicate of ``COMM_WORLD`` (size 1 without mpiexec)."""
    from mpi4py import MPI

    return MPIComm(MPI.COMM_WORLD.Dup())


def launch_world():
    """The communicator of a command: :func:`world` when an MPI launcher started this process
    (:func:`launched_by_mpi`) or MPI is already running, else a :class:`SerialComm` (MPI is
    neither imported nor started)."""
    if launched_by_mpi() or _mpi_is_initialised():
        return world()
    return SerialComm()


def world_size_and_library():
    """Size of ``COMM_WORLD`` and the first line of the MPI library's version (starts MPI).

    The library line, e.g. ``"MPICH Version: 4.2.0"`` or ``"Open MPI v5.0.3, ..."``, is
    ``MPI.Get_library_version()`` with its blanks collapsed. Called first, when a launcher
    announced several tasks: mpi4py's own warning about another MPI's launcher variables is
    silenced, the caller's error names both.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        from mpi4py import MPI

    version = MPI.Get_library_version().strip().splitlines()[0]
    return MPI.COMM_WORLD.Get_size(), " ".join(version.split())


def world_rank():
    """This process's rank in ``COMM_WORLD`` (0 when MPI was never started)."""
    if not _mpi_is_initialised():
        return 0
    return sys.modules["mpi4py.MPI"].COMM_WORLD.Get_rank()


ABORT_GRACE_SECONDS = 0.5
"""How long a rank waits between its last message and aborting the job: the launcher
forwards a rank's standard error through its own process (MPICH's Hydra proxy, srun's step
daemon), and an abort that reaches it first ends the job before the message is read, so the
user would see a failed job without its reason."""


def abort_world(code):
    """End every rank of the job at once (only this process when MPI was never started),
    :data:`ABORT_GRACE_SECONDS` after the caller's last message."""
    if _mpi_is_initialised() and sys.modules["mpi4py.MPI"].COMM_WORLD.Get_size() > 1:
        time.sleep(ABORT_GRACE_SECONDS)
        sys.modules["mpi4py.MPI"].COMM_WORLD.Abort(code)


def ranks_sharing_my_cores(my_cores):
    """How many ranks on this node may run on exactly the cores ``my_cores`` (1 without MPI).

    Ranks that a launcher bound to cores of their own see different affinity sets; ranks
    left unbound (or bound as a group, e.g. a SLURM job's cpuset) see the same set and must
    share it.
    """
    if not _mpi_is_initialised():
        return 1
    from mpi4py import MPI

    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        sets = node.allgather(tuple(sorted(my_cores)))
    finally:
        node.Free()
    return sets.count(tuple(sorted(my_cores)))


def default_threads_per_rank(n_cores, n_sharing_ranks):
    """BLAS threads one rank may use so that ranks x threads never exceed the cores.

    ``n_cores`` cores are available to this rank (its affinity set) and ``n_sharing_ranks``
    ranks of the node have that same set: they share it evenly, one thread at least. A rank
    bound to cores of its own (``srun --cpus-per-task=4``) uses all of them. Pure.
    """
    return max(1, n_cores // max(1, n_sharing_ranks))


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""The environment variables by which a user or a batch script limits BLAS/OpenMP threads."""


def environment_threads(environ):
    """The thread limit the environment sets: the smallest positive count among
    :data:`THREAD_VARIABLES` (of ``OMP_NUM_THREADS``'s nested levels, ``"4,2"``, the first),
    or None when none holds one. A value that is no positive integer is ignored, as the
    libraries themselves ignore it. Pure.
    """
    counts = []
    for name in THREAD_VARIABLES:
        first = environ.get(name, "").split(",")[0].strip()
        if first.isdecimal() and int(first) > 0:
            counts.append(int(first))
    return min(counts, default=None)


def cores_left_free(n_cores, load_average, n_online):
    """How many of this process's ``n_cores`` cores other processes leave free. Pure.

    ``load_average`` is the machine's one-minute load average (:func:`os.getloadavg`: the
    runnable processes on all its ``n_online`` cores), taken to fall evenly on every core,
    so that this process's share of it is ``load_average * n_cores / n_online``; the cores
    left are that many fewer, rounded to the nearest, and one at least.
    """
    busy = load_average * n_cores / max(1, n_online)
    return max(1, int(n_cores - busy + 0.5))


def threads_to_pin(threads=None, n_sharing_ranks=None):
    """The BLAS/OpenMP threads of this rank: ``threads``, else the environment's limit or
    the cores the machine's load leaves free, shared by this node's ranks.

    ``threads=None`` picks :func:`default_threads_per_rank` for this node's cores, and no
    more than ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` or ``MKL_NUM_THREADS`` allow when
    one is set (:func:`environment_threads`): a batch script or a user who set one chose the
    threads. When none is set, the cores that other processes keep busy are left to them
    (:func:`cores_left_free`, from the one-minute load average): OpenBLAS threads spin
    while they wait, so on a shared machine two threads on two busy cores ran an SVD of
    SRBCT 16 times slower than one thread (0.58 s against 0.036 s, load 5 on 2 cores).
    ``n_sharing_ranks`` is the number of ranks that share this process's cores (None: asked
    of MPI's node communicator, :func:`ranks_sharing_my_cores`, a collective call). An
    integer ``threads`` overrides every rule (the ``--threads`` option, ``n_threads``) and
    must be positive.
    """
    if threads is None:
        my_cores = os.sched_getaffinity(0)
        if n_sharing_ranks is None:
            n_sharing_ranks = ranks_sharing_my_cores(my_cores)
        threads = default_threads_per_rank(len(my_cores), n_sharing_ranks)
        limit = environment_threads(os.environ)
        if limit is None:
            free = cores_left_free(len(my_cores), os.getloadavg()[0], os.cpu_count() or 1)
            limit = default_threads_per_rank(free, n_sharing_ranks)
        threads = min(threads, limit)
    if threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads}")
    return threads


def pin_threads(threads=None):
    """Limit BLAS/OpenMP threads of this process for good; returns the number chosen.

    For a process that hpcswarm owns from start to end (an MPI script); ``threads`` as in
    :func:`threads_to_pin`. A command run inside a longer-lived process uses
    :func:`pinned_threads`, which gives the previous limits back.
    """
    from threadpoolctl import threadpool_limits

    threads = threads_to_pin(threads)
    threadpool_limits(limits=threads)
    return threads


@contextmanager
def pinned_threads(threads=None, n_sharing_ranks=None):
    """Limit BLAS/OpenMP threads within a ``with`` block; yields the number chosen.

    ``threads`` and ``n_sharing_ranks`` as in :func:`threads_to_pin`. The limits of every thread pool are restored
    when the block ends, so that a command called in-process (``hpcswarm.cli.main`` from
    Python or a test) leaves the caller's thread settings as it found them.
    """
    from threadpoolctl import threadpool_limits

    threads = threads_to_pin(threads, n_sharing_ranks)
    with threadpool_limits(limits=threads):
        yield threads
