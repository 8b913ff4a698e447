"""Independent searches farmed out to rank groups, each search spread over its group's ranks.

Used by tests/test_mpi_jobs.py under ``mpiexec -n 4`` with groups of 2: every task is one
``run_search(..., comm=group, hooks=SearchHooks(progress=progress))``. World rank 0 checks
every result against a serial run of the same task and prints one JSON line: which group ran
which task, and whether all results matched.
"""

import json
import sys

import numpy as np

from hpcswarm.comm import pin_threads, world
from hpcswarm.run.taskfarm import farm
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.loop import SearchHooks

TASKS = [("pso-lsrg", {"n_particles": 5, "n_iterations": 4, "ls_tries": 3}, seed)
         for seed in range(3)] + [("cso", {"n_particles": 6, "n_iterations": 5}, seed)
                                  for seed in range(3)]


def data():
    rng = np.random.default_rng(0)
    y = np.arange(30) % 3
    X = rng.normal(size=(30, 25))
    X[:, :3] += 2.0 * y[:, None]
    return X, y


def comparable(result):
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return result.mask.tolist(), result.fitness, history


def main():
    with world() as comm:
        pin_threads(1)
        X, y = data()

        def run_task(task, group, progress):
            name, params, seed = task
            result = run_search(X, y, name, params, seed=seed, comm=group,
                                hooks=SearchHooks(progress=progress))
            return comparable(result) + (group.size,)

        results, assignments = farm(comm, TASKS, run_task, group_size=2)
        if comm.rank == 0:
            matched = [result[:3] == comparable(run_search(X, y, name, params, seed=seed))
                       for (name, params, seed), result in zip(TASKS, results)]
            print(json.dumps({"matched": matched, "assignments": assignments,
                              "group_sizes": [result[3] for result in results]}), flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
