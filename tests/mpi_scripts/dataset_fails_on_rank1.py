"""Run ``hpcswarm run JOB.toml`` on every rank with the dataset failing to open on rank 1 only.

Used by tests/test_preflight.py under ``mpiexec -n 2``: the pre-flight check must end every
rank with status 2 and rank 1's message, before any computation, without a hang.
Arguments: the job file, then ``--set`` items.
"""

import sys

from hpcswarm.run import plan as plan_module
from hpcswarm.comm import world_rank
from hpcswarm.errors import DataError


def main():
    load = plan_module.load_job_dataset

    def failing_load(job, comm=None, convert=True):
        dataset = load(job, comm, convert)
        if world_rank() == 1:
            raise DataError("injected: cannot map the matrix on this node")
        return dataset

    plan_module.load_job_dataset = failing_load
    from hpcswarm.__main__ import main as entry

    return entry(["run", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
