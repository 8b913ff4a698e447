"""Command-line entry point: ``python -m hpcswarm`` or ``mpiexec -n N python -m hpcswarm``.

A user error (:class:`~hpcswarm.errors.HpcswarmError`) is raised identically on every rank,
so rank 0 alone prints it as one line and every rank exits with status 2 (3 for a job stopped
by a signal after writing its checkpoint, :class:`~hpcswarm.run.job.JobInterrupted`). A reader that
closes our standard output early (``hpcswarm info d.h5 | head -1``) ends the command with one
line and status 2 as well. Any other exception on any rank is a bug or a system failure: that
rank prints its traceback and aborts the whole MPI job, so that no other rank is left waiting
in a collective. SIGTERM outside a job's rounds unwinds the command like Ctrl-C (files being
written are removed) and ends it with status 143 (128 + 15, as the signal itself would).
"""

import os
import sys
import traceback

from hpcswarm.errors import HpcswarmError


def main(argv=None):
    from hpcswarm.termination import terminate_like_interrupt

    with terminate_like_interrupt():
        return _main(argv)


def _main(argv):
    from hpcswarm import cli
    from hpcswarm.comm import world_rank, abort_world
    from hpcswarm.termination import Terminated, raise_if_terminated

    try:
        status = cli.main(argv)
        raise_if_terminated()  # a signal whose exception a finaliser swallowed
        return status
    except Terminated as exc:  # temporaries were removed on the way out, as for Ctrl-C
        print(f"hpcswarm: error: stopped by {exc}; no output was left half-written",
              file=sys.stderr, flush=True)
        abort_world(143)  # a rank the signal missed may wait in a collective
        return 143
    except HpcswarmError as exc:
        if world_rank() == 0:
            print(f"hpcswarm: error: {exc}", file=sys.stderr, flush=True)
        return getattr(exc, "exit_code", 2)
    except BrokenPipeError:
        _stdout_closed()
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception:  # noqa: BLE001 - any other failure must end every rank
        sys.stderr.flush()
        # one unbuffered write: the abort must not cut the traceback short
        os.write(2, (f"hpcswarm: rank {world_rank()} failed:\n"
                     + traceback.format_exc()).encode("utf-8", "replace"))
        abort_world(1)
        return 1


def _stdout_closed():
    """Say once that the output was cut short, and point stdout at /dev/null so that Python's
    own flush at exit does not fail on the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    try:
        print("hpcswarm: error: standard output: the reader closed the pipe before the "
              "output ended (broken pipe)", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr went with it


if __name__ == "__main__":
    sys.exit(main())
