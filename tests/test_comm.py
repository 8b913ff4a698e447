"""Partition and thread-count helpers of hpcswarm.comm (pure, no MPI needed)."""

import numpy as np
import pytest

from hpcswarm.comm import SerialComm, block_counts, block_range, default_threads_per_rank


@pytest.mark.parametrize("n_items", [0, 1, 5, 100, 101])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 64, 200])
def test_block_range_covers_items_once_in_order(n_items, size):
    ranges = [block_range(n_items, size, rank) for rank in range(size)]
    owned = np.concatenate([np.arange(start, stop) for start, stop in ranges])
    assert owned.tolist() == list(range(n_items))
    counts = block_counts(n_items, size)
    assert counts.max() - counts.min() <= 1


def test_block_range_rejects_rank_outside_communicator():
    with pytest.raises(ValueError, match="rank 3"):
        block_range(10, 3, 3)


@pytest.mark.parametrize(
    "n_cores, n_sharing, expected",
    [
        (2, 1, 2),  # one process on this laptop
        (2, 2, 1),  # mpiexec -n 2, unbound: the two ranks share both cores
        (2, 4, 1),  # oversubscribed: never fewer than one thread
        (64, 16, 4),  # 16 unbound ranks on a 64-core node
        (40, 40, 1),  # 40 ranks in a SLURM job's 40-core cpuset on a 64-core node
        (4, 1, 4),  # srun --cpus-per-task=4: four cores of its own
    ],
)
def test_threads_never_oversubscribe_the_cores(n_cores, n_sharing, expected):
    threads = default_threads_per_rank(n_cores, n_sharing)
    assert threads == expected
    assert threads * n_sharing <= max(n_cores, n_sharing)


def test_serial_comm_collectives_return_own_input():
    comm = SerialComm()
    data = np.arange(6).reshape(3, 2)
    assert np.array_equal(comm.allreduce_sum(data), data)
    assert np.array_equal(comm.allgatherv(data), data)
    assert comm.allgather("x") == ["x"] and comm.bcast(5) == 5
    counter = comm.counter()
    assert [counter.next() for _ in range(3)] == [0, 1, 2]
