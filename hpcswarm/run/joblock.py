"""One job, one writer: an advisory lock file beside a job's output, and one beside its
checkpoint.

The lock is ``fcntl.flock`` on ``<output>.lock``, which holds the holder's host name and
process id; the checkpoint's, on ``<checkpoint>.lock``, keeps two runs with different outputs
but one checkpoint (a job array whose job file names it) from replacing each other's
checkpoint, and then deleting it (:class:`JobLocks`). The kernel drops a ``flock`` when its process dies, so a lock file left by a
killed run is simply taken over; where a lock is still reported held by a process of this
host that no longer exists (a network file system that lost track of it), the file is
replaced too, and so is one whose process id no process can have (0, or one past the
system's range: :func:`hpcswarm.store.atomic.process_running`). Released at the end of the run, the lock file is removed.

The lock file is created with ``O_EXCL`` and opened with ``O_NOFOLLOW``: a symbolic link (or
a folder, FIFO or device) in its place is refused, naming it, and never written through, so
that a link to the job's dataset cannot empty it; so is a file with other names (a hard link
of the job file, say), before anything is written to it. Content that is not one host name and
process id (unreadable bytes, a truncated write), or a lock file this user may not open in a
writable folder, is a stale lock left by an earlier run and is replaced like one.
"""

import errno
import fcntl
import os
import socket
import stat
from pathlib import Path

from hpcswarm.store.atomic import process_id, process_running, special_kind
from hpcswarm.store.outputs import same_file


def lock_path(output: Path) -> Path:
    """The lock file of the job writing ``output``."""
    output = Path(output)
    return output.with_name(output.name + ".lock")


def _read_all(fd) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _holder(content: bytes):
    """``(host, pid)`` written by :meth:`JobLock.acquire`, or None for anything else."""
    try:
        parts = content[:256].decode("utf-8").split()
    except UnicodeDecodeError:
        return None
    pid = process_id(parts[1]) if len(parts) == 2 else None
    return None if pid is None else (parts[0], pid)


class JobLock:
    """The lock of the job writing ``output``; :meth:`acquire` once, :meth:`release` at exit.

    Parameters
    ----------
    output : Path
        The job's results file, or the checkpoint (``role="checkpoint"``).
    role : {"output", "checkpoint"}
        What ``output`` is to the job, for the message naming a run that holds the lock.
    """

    def __init__(self, output: Path, role: str = "output"):
        self.path = lock_path(output)
        self.role = role
        self._fd = None
        self._found = None  # (bytes, stat) of a lock file a dead run left

    def _open(self):
        """A descriptor of the lock file, created if missing, never through a link; or the
        one-line reason it cannot be opened, or None for a missing or read-only folder."""
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for _ in range(3):
            try:
                return os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                pass
            except (FileNotFoundError, PermissionError):
                return None  # a missing or read-only folder: the output checks name it
            except OSError as exc:
                if exc.errno == errno.ENAMETOOLONG:
                    return None  # the output checks name the longest name
                return f"{self.path}: cannot create the job's lock file ({exc.strerror})"
            problem = self._refuse_special()
            if problem is not None:
                return problem
            try:
                fd = os.open(self.path, flags)
            except FileNotFoundError:  # removed meanwhile: create it again
                continue
            except PermissionError:  # a stale lock file we may not open: replaced
                problem = self._unlink()
                if problem is not None:
                    return problem
                continue
            except OSError as exc:
                return f"{self.path}: cannot open the job's lock file ({exc.strerror})"
            status = os.fstat(fd)
            # replaced by a special file, or removed, meanwhile: open the new one
            if not stat.S_ISREG(status.st_mode) or status.st_nlink == 0:
                os.close(fd)
                continue
            if status.st_nlink > 1:  # truncating it would empty another file too
                os.close(fd)
                return (f"{self.path}: the job's lock file has {status.st_nlink} names (hard "
                        "links), so it is another file too; hpcswarm never writes a lock over "
                        "another file: remove this name and run again")
            os.set_blocking(fd, True)
            return fd
        return f"{self.path}: the job's lock file keeps being replaced by another run"

    def _refuse_special(self):
        """Why the existing lock file is not a regular file (a symbolic link, a folder, a
        FIFO...), or None."""
        if os.path.islink(self.path):
            return (f"{self.path}: the job's lock file is a symbolic link (to "
                    f"{os.readlink(self.path)!r}); hpcswarm never writes a lock through a "
                    "link: remove the link and run again")
        kind = special_kind(self.path)
        if kind is not None:
            return (f"{self.path}: the job's lock file is {kind}, not a regular file; remove "
                    "it and run again")
        return None

    def _unlink(self):
        """Remove the lock file; None, or why it cannot be removed (one line)."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            return f"{self.path}: cannot remove the job's stale lock file ({exc.strerror})"
        return None

    def acquire(self) -> str:
        """Take the lock; None when taken (or when its folder is missing or read-only, or its
        name too long, which the output checks report), else why not: one line naming the
        holder's host and PID, or the link or special file in the lock file's place."""
        for _ in range(2):
            fd = self._open()
            if fd is None or isinstance(fd, str):
                return fd
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = self._content(fd)
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    return f"{self.path}: cannot lock the job's lock file ({exc.strerror})"
                holder = None if holder is None else _holder(holder)
                if self._stale(holder):
                    problem = self._unlink()
                    if problem is not None:
                        return problem
                    continue
                host, pid = holder or ("an unknown host", "unknown")
                running = ("another run of this job is under way" if self.role == "output"
                           else "another run writes this checkpoint")
                return (f"{self.path}: {running} (host {host}, PID {pid}); wait for it to "
                        f"end, or give this run another {self.role}")
            found = self._content(fd)  # None: unreadable, replaced and not put back
            self._found = (found, os.fstat(fd)) if found else None
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{socket.gethostname()} {os.getpid()}\n".encode(), 0)
            except OSError as exc:  # a full disk: the folder is left as it was
                self._fd = fd
                try:
                    self.release(refused=True)
                except OSError:  # the content found could not be put back either
                    pass
                return f"{self.path}: cannot write the job's lock file ({exc.strerror})"
            self._fd = fd
            return None
        return f"{self.path}: the job's lock file keeps being replaced by another run"

    @staticmethod
    def _content(fd):
        """The lock file's bytes, or None when they cannot be read."""
        try:
            return _read_all(fd)
        except OSError:
            return None

    @staticmethod
    def _stale(holder) -> bool:
        """Held, but by a process of this host that no longer exists."""
        return (holder is not None and holder[0] == socket.gethostname()
                and not process_running(holder[1]))

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def release(self, refused: bool = False) -> None:
        """Remove the lock file and drop the lock (nothing if not held). ``refused``: the run
        was refused before it began, so a lock file a dead run had left is put back as it
        was (content and times), leaving the folder untouched."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if refused and self._found is not None:
                content, status = self._found
                os.ftruncate(fd, 0)
                os.pwrite(fd, content, 0)
                os.utime(fd, ns=(status.st_atime_ns, status.st_mtime_ns))
            else:
                self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)


class JobLocks:
    """The locks of a job: its results file's, then its checkpoint's (:class:`JobLock`).

    Parameters
    ----------
    output, checkpoint : Path
        The job's results file and checkpoint.
    """

    def __init__(self, output: Path, checkpoint: Path):
        locks = [JobLock(output), JobLock(checkpoint, role="checkpoint")]
        if same_file(locks[0].path, locks[1].path):  # one file spelled twice: the output
            del locks[1]  # checks refuse it, naming both keys
        self.locks = tuple(locks)

    @property
    def paths(self):
        """The lock files."""
        return [lock.path for lock in self.locks]

    def acquire(self) -> str:
        """Take both locks; None when taken, else why not (:meth:`JobLock.acquire`), with
        none held."""
        for position, lock in enumerate(self.locks):
            problem = lock.acquire()
            if problem is not None:
                for held in self.locks[:position]:
                    held.release(refused=True)
                return problem
        return None

    def release(self, refused: bool = False) -> None:
        """Release both (:meth:`JobLock.release`)."""
        for lock in reversed(self.locks):
            lock.release(refused)
