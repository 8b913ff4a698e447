"""Rank groups and dynamic task hand-out (also run under ``mpiexec -n 2``)."""

import time

import numpy as np
import pytest

from hpcswarm.comm import world
from hpcswarm.run.taskfarm import default_group_size, farm, group_layout


@pytest.fixture(scope="module")
def world_comm():
    with world() as comm:
        yield comm


def test_group_layout_splits_consecutive_ranks():
    layouts = [group_layout(5, rank, 2) for rank in range(5)]
    assert [layout.group_index for layout in layouts] == [0, 0, 1, 1, 2]
    assert {layout.n_groups for layout in layouts} == {3}
    with pytest.raises(ValueError, match="group_size"):
        group_layout(4, 0, 0)


def test_default_group_size_prefers_task_parallelism():
    assert default_group_size(64, 400, 100) == 1
    assert default_group_size(64, 10, 100) == 6
    assert default_group_size(64, 1, 20) == 20


@pytest.mark.mpi
def test_every_task_runs_once_and_results_reach_rank_zero(world_comm):
    tasks = list(range(13))

    def run_task(task, group, progress):
        progress()
        local = np.array([task * (group.rank + 1)], dtype=np.int64)
        return int(group.allreduce_sum(local)[0])

    results, assignments = farm(world_comm, tasks, run_task, group_size=1)
    if world_comm.rank == 0:
        assert results == tasks
        assert sorted(assignments) == tasks
    else:
        assert results is None


@pytest.mark.mpi
def test_slow_task_does_not_idle_other_groups(world_comm):
    """One task lasts 1 s, ten last 0.05 s: the other groups run the fast ones meanwhile."""
    tasks = [1.0] + [0.05] * 10

    def run_task(seconds, group, progress):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            time.sleep(0.01)
            progress()
        return seconds

    _, assignments = farm(world_comm, tasks, run_task, group_size=1)
    if world_comm.rank == 0 and world_comm.size > 1:
        slow_group = assignments[0]
        ran_by_slow_group = [t for t, g in assignments.items() if g == slow_group]
        assert len(ran_by_slow_group) <= 2, assignments
