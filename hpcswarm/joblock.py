"""One job, one writer: an advisory lock file beside a job's output.

The lock is ``fcntl.flock`` on ``<output>.lock``, which holds the holder's host name and
process id. The kernel drops a ``flock`` when its process dies, so a lock file left by a
killed run is simply taken over; where a lock is still reported held by a process of this
host that no longer exists (a network file system that lost track of it), the file is
replaced too. Released at the end of the run, the lock file is removed.
"""

import errno
import fcntl
import os
import socket
from pathlib import Path


def lock_path(output: Path) -> Path:
    """The lock file of the job writing ``output``."""
    output = Path(output)
    return output.with_name(output.name + ".lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class JobLock:
    """The lock of the job writing ``output``; :meth:`acquire` once, :meth:`release` at exit.

    Parameters
    ----------
    output : Path
        The job's results file.
    """

    def __init__(self, output: Path):
        self.path = lock_path(output)
        self._file = None
        self._found = None  # (text, stat) of a lock file a dead run left

    def acquire(self) -> str:
        """Take the lock; None when taken (or when its folder is missing or read-only, which
        the output checks report), else why not: one line naming the holder's host and PID."""
        for _ in range(2):
            try:
                handle = open(self.path, "a+", encoding="utf-8")
            except (FileNotFoundError, PermissionError):
                return None  # a missing or read-only folder: the output checks name it
            except OSError as exc:
                return f"{self.path}: cannot create the job's lock file ({exc.strerror})"
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = self._holder(handle)
                handle.close()
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    return f"{self.path}: cannot lock the job's lock file ({exc.strerror})"
                if self._stale(holder):
                    self.path.unlink(missing_ok=True)
                    continue
                host, pid = holder or ("an unknown host", "unknown")
                return (f"{self.path}: another run of this job is under way (host {host}, "
                        f"PID {pid}); wait for it to end, or give this run another output")
            handle.seek(0)
            found = handle.read()
            self._found = (found, os.fstat(handle.fileno())) if found else None
            handle.truncate(0)
            handle.write(f"{socket.gethostname()} {os.getpid()}\n")
            handle.flush()
            self._file = handle
            return None
        return f"{self.path}: the job's lock file keeps being replaced by another run"

    @staticmethod
    def _holder(handle):
        handle.seek(0)
        parts = handle.read(256).split()
        if len(parts) == 2 and parts[1].isdigit():
            return parts[0], int(parts[1])
        return None

    @staticmethod
    def _stale(holder) -> bool:
        """Held, but by a process of this host that no longer exists."""
        return (holder is not None and holder[0] == socket.gethostname()
                and not _alive(holder[1]))

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._file is not None

    def release(self, refused: bool = False) -> None:
        """Remove the lock file and drop the lock (nothing if not held). ``refused``: the run
        was refused before it began, so a lock file a dead run had left is put back as it
        was (content and times), leaving the folder untouched."""
        if self._file is None:
            return
        if refused and self._found is not None:
            text, status = self._found
            self._file.truncate(0)
            self._file.write(text)
            self._file.flush()
            os.utime(self.path, ns=(status.st_atime_ns, status.st_mtime_ns))
        else:
            self.path.unlink(missing_ok=True)
        self._file.close()
        self._file = None
