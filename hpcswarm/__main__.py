"""Command-line entry point: ``python -m hpcswarm`` or ``mpiexec -n N python -m hpcswarm``.

A user error (:class:`~hpcswarm.errors.HpcswarmError`) is raised identically on every rank,
so rank 0 alone prints it as one line and every rank exits with status 2 (3 for a job stopped
by a signal after writing its checkpoint, :class:`~hpcswarm.job.JobInterrupted`). Any other
exception on any rank is a bug or a system failure: that rank prints its traceback and aborts
the whole MPI job, so that no other rank is left waiting in a collective.
"""

import sys
import traceback

from hpcswarm.errors import HpcswarmError


def main(argv=None):
    from hpcswarm import cli
    from hpcswarm.comm import world_rank, abort_world

    try:
        return cli.main(argv)
    except HpcswarmError as exc:
        if world_rank() == 0:
            print(f"hpcswarm: error: {exc}", file=sys.stderr, flush=True)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        return 130
    except Exception:  # noqa: BLE001 - any other failure must end every rank
        rank = world_rank()
        print(f"hpcswarm: rank {rank} failed:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
        abort_world(1)
        return 1


if __name__ == "__main__":
    sys.exit(main())
