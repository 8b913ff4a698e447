"""Partition and thread-count helpers of hpcswarm.comm (pure, no MPI needed)."""

import numpy as np
import pytest

from hpcswarm import comm as comm_module
from hpcswarm.comm import (SerialComm, block_counts, block_range, cores_left_free,
                           default_threads_per_rank, environment_threads, pinned_threads,
                           threads_to_pin)


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


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({}, None),
        ({"OMP_NUM_THREADS": "1"}, 1),
        ({"OPENBLAS_NUM_THREADS": "3", "MKL_NUM_THREADS": "2"}, 2),  # the smallest
        ({"OMP_NUM_THREADS": "4,2"}, 4),  # nested levels: the first
        ({"OMP_NUM_THREADS": "0"}, None),  # no positive count: ignored, as the libraries do
        ({"OMP_NUM_THREADS": "many", "OPENBLAS_NUM_THREADS": " 2 "}, 2),
        ({"HOME": "/root"}, None),
    ],
)
def test_the_environment_thread_limit_is_its_smallest_positive_count(environ, expected):
    assert environment_threads(environ) == expected


@pytest.fixture
def four_cores(monkeypatch):
    """This rank sees four cores of its own (whatever the machine running the test has)."""
    monkeypatch.setattr(comm_module.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(comm_module.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(comm_module.os, "getloadavg", lambda: (0.2, 0.2, 0.2))  # idle
    for name in comm_module.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_thread_limit_in_the_environment_caps_the_default(four_cores):
    assert threads_to_pin() == 4
    four_cores.setenv("OPENBLAS_NUM_THREADS", "1")
    assert threads_to_pin() == 1
    four_cores.setenv("OPENBLAS_NUM_THREADS", "16")  # above the cores: the cores
    assert threads_to_pin() == 4
    assert threads_to_pin(3) == 3  # --threads overrides both


@pytest.mark.parametrize(
    "n_cores, load, n_online, expected",
    [
        (2, 0.1, 2, 2),  # an idle 2-core machine
        (2, 1.0, 2, 1),  # one other busy process
        (2, 5.5, 2, 1),  # loaded past its cores: one thread still
        (4, 30.0, 64, 2),  # a 4-core cpuset of a 64-core node at load 30: its share, 1.9
        (8, 0.0, 8, 8),
    ],
)
def test_cores_left_free_by_the_load(n_cores, load, n_online, expected):
    assert cores_left_free(n_cores, load, n_online) == expected


def test_a_loaded_machine_lowers_the_default_but_not_a_set_limit(four_cores):
    four_cores.setattr(comm_module.os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    assert threads_to_pin(n_sharing_ranks=1) == 1
    assert threads_to_pin(n_sharing_ranks=2) == 1
    four_cores.setattr(comm_module.os, "getloadavg", lambda: (1.6, 1.0, 1.0))
    assert threads_to_pin(n_sharing_ranks=1) == 2
    four_cores.setenv("OMP_NUM_THREADS", "4")  # a limit the user set: the load is not read
    assert threads_to_pin(n_sharing_ranks=1) == 4
    assert threads_to_pin(n_sharing_ranks=2) == 2
    assert threads_to_pin(3) == 3


def test_the_blas_pool_runs_the_environment_limit(four_cores):
    from threadpoolctl import threadpool_info

    four_cores.setenv("OMP_NUM_THREADS", "1")
    with pinned_threads() as threads:
        assert threads == 1
        assert {pool["num_threads"] for pool in threadpool_info()} == {1}


def test_serial_comm_collectives_return_own_input():
    comm = SerialComm()
    data = np.arange(6).reshape(3, 2)
    assert np.array_equal(comm.allreduce_sum(data), data)
    assert np.array_equal(comm.allgatherv(data), data)
    assert comm.allgather("x") == ["x"] and comm.bcast(5) == 5
    counter = comm.counter()
    assert [counter.next() for _ in range(3)] == [0, 1, 2]
