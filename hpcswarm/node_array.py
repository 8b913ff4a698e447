"""Arrays held once per node: the ranks of a communicator on one node share one copy.

A rank group's transformed training matrix is the same on each of its ranks; rather than a
private copy per rank, the ranks of the group on one node hold one copy between them, in an
MPI-3 shared-memory window (``MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)``, then
``MPI_Win_allocate_shared`` on that node communicator, each rank mapping node rank 0's
segment with ``MPI_Win_shared_query``). Each rank writes its own part, :meth:`publish` makes
every part visible to every rank, and :meth:`free` releases the window (collective over the
node's ranks; the array must not be read afterwards). A serial communicator, or one of a
single rank, gets a :class:`PrivateArray`: a plain numpy array behind the same methods.

With :mod:`hpcswarm.comm`, the only modules that know MPI; the communicators make these
(:meth:`hpcswarm.comm.MPIComm.node_array`), handing in the node's communicator.
"""

import numpy as np


class PrivateArray:
    """A plain array with the methods of :class:`SharedArray` (one rank writes all of it).

    Parameters
    ----------
    node : SerialComm
        The ranks sharing the array: this one.
    shape : tuple of int
    dtype : numpy dtype

    Attributes
    ----------
    array : ndarray
        C-contiguous, uninitialised.
    node : SerialComm
    """

    def __init__(self, node, shape, dtype):
        self.array = np.empty(shape, dtype=dtype)
        self.node = node

    def publish(self):
        """Make every rank's writes visible to every rank (there is no other rank)."""

    def free(self):
        """Release the array (the garbage collector does)."""


class SharedArray:
    """An array held once by the ranks of an MPI communicator on one node.

    Parameters
    ----------
    node : MPIComm
        The ranks of a communicator on this node (``MPI_COMM_TYPE_SHARED``), owned by the
        array and freed by :meth:`free`: each writes its part, then all call
        :meth:`publish`.
    shape : tuple of int
    dtype : numpy dtype

    Attributes
    ----------
    array : ndarray
        C-contiguous, uninitialised, in node rank 0's segment of the window (its memory
        counts once on the node).
    node : MPIComm
    """

    def __init__(self, node, shape, dtype):
        from mpi4py import MPI

        dtype = np.dtype(dtype)
        self.node = node
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        self._window = MPI.Win.Allocate_shared(size if self.node.rank == 0 else 0,
                                               dtype.itemsize, comm=self.node.comm)
        memory, _ = self._window.Shared_query(0)
        self.array = np.ndarray(shape, dtype=dtype, buffer=memory)

    def publish(self):
        """Make every rank's writes visible to every rank of the node (collective: a fence
        on the window, which completes each rank's stores before any rank reads on)."""
        self._window.Fence()

    def free(self):
        """Release the window and the node communicator (collective); a second call does
        nothing. The array must not be read afterwards."""
        from mpi4py import MPI

        if self._window != MPI.WIN_NULL:
            self._window.Free()
            self.node.free()
