"""Run ``hpcswarm run JOB ...`` and interrupt it at a chosen point (tests/test_checkpoint.py).

    interrupt_job.py MODE N RANK -- RUN-ARGS...

MODE ``sigterm``: world rank RANK sends itself SIGTERM when it takes its N-th snapshot (the
job must checkpoint, stop on every rank and exit with status 3). ``crash-in-write``: world
rank 0 dies (``os._exit(9)``, like a lost node) during its N-th checkpoint write, after the
temporary file is written and before the rename. ``crash-after-write``: world rank 0 dies
right after its N-th checkpoint write. ``sigterm-in-subsamples``: world rank RANK sends itself
SIGTERM at the N-th round of a refinement's subsample searches.
"""

import os
import signal
import sys


def main():
    mode, n, rank, run_args = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[5:]
    from hpcswarm.run import checkpoint
    from hpcswarm.run import job as job_module
    from hpcswarm.comm import world_rank

    calls = {"snapshots": 0, "writes": 0}
    take = job_module.take_snapshot
    write = checkpoint.write_checkpoint
    replace = os.replace

    def counted_snapshot(search):
        calls["snapshots"] += 1
        if mode == "sigterm" and world_rank() == rank and calls["snapshots"] == n:
            os.kill(os.getpid(), signal.SIGTERM)
        return take(search)

    def crashing_replace(source, target):
        if str(target).endswith(".checkpoint.h5") and calls["writes"] + 1 == n:
            os._exit(9)
        return replace(source, target)

    def counted_write(*args, **kwargs):
        write(*args, **kwargs)
        calls["writes"] += 1
        if mode == "crash-after-write" and calls["writes"] == n:
            os._exit(9)

    interrupt = job_module.TaskHooks.interrupt

    def counted_interrupt(hooks):
        calls["subsample rounds"] = calls.get("subsample rounds", 0) + 1
        if (mode == "sigterm-in-subsamples" and world_rank() == rank
                and calls["subsample rounds"] == n):
            os.kill(os.getpid(), signal.SIGTERM)
        return interrupt(hooks)

    job_module.TaskHooks.interrupt = counted_interrupt
    job_module.take_snapshot = counted_snapshot
    checkpoint.write_checkpoint = counted_write
    if mode == "crash-in-write":
        os.replace = crashing_replace
    from hpcswarm.__main__ import main as entry

    return entry(["run", *run_args])


if __name__ == "__main__":
    sys.exit(main())
