"""The one way hpcswarm writes a file: whole under a temporary name beside it, then renamed.

Every output (datasets, results, checkpoints, reports, JSON) goes through
:func:`atomic_path`: the content is written to a temporary file in the target's own folder
(so that the rename never crosses file systems), flushed to disk (``fsync``), and renamed over
the target (atomic on POSIX), after which the folder entry is flushed too. A reader sees the
old file or the new one, never a part. On any error or interruption the temporary file is
removed and the target is untouched.

The temporary file is created with mode ``0o666`` so that the process umask alone decides the
permissions of the result, as for any file the user creates. Its name,
``.<target name>.hpcswarm-<pid>-<random>.tmp``, tells a later run which temporaries were left
by an hpcswarm writer of that target (:func:`temporaries_of`): a process killed during a write
(SIGKILL, a lost node) cannot remove its own, so the next write of the same target, and a job's
pre-flight (the next run of the job, or ``--resume``), remove those whose process is gone
(:func:`remove_stale_temporaries`) and say so. The process id is read defensively
(:func:`process_id`, :func:`process_running`): a number no process can have (0, or one past
the system's range) is a writer that is gone, never an error.

A failing write (a full disk, a quota, an I/O error) is one :class:`DataError` naming the
target and the system's reason, e.g. ``res.h5: cannot write (No space left on device)``.

Only a regular file (or a symbolic link, which the rename replaces, not its target) is ever
replaced: a target that is, or links to, a device (``/dev/null``, ``/dev/stdout``), a FIFO, a
socket or a folder is refused (:func:`special_kind`), with or without ``overwrite``. A file
with other names (hard links) keeps its content: the rename gives the target's name a new
file.

A command that writes several files writes them inside :func:`all_or_nothing`: each is
written whole under its temporary name, and the renames all happen at the end, so that a
write failing half-way (a full disk, a folder that refuses a file) leaves none of them, nor
any temporary, and the files they would replace as they were.

A file written as it grows (a job's progress log) is created by :func:`open_replacing`: a new
file under a temporary name, renamed over the target at once and then written, so that a
symbolic or hard link in its place is replaced, never written through.
"""

import contextvars
import io
import json
import os
import re
import secrets
import stat
import sys
from contextlib import contextmanager
from pathlib import Path

from hpcswarm.errors import DataError
from hpcswarm.termination import raise_if_terminated

MARKER = "hpcswarm"
"""Word in every temporary file name, after the target's name."""


def temporary_path(path):
    """A fresh temporary name for ``path``, in the same folder (not yet created)."""
    path = Path(path)
    return path.parent / f".{path.name}.{MARKER}-{os.getpid()}-{secrets.token_hex(6)}.tmp"


def temporaries_of(path):
    """The temporary files of writes of ``path`` present in its folder (sorted Paths).

    A write in progress or one that a killed process could not clean up; the process id in
    the name (second-to-last dash-separated field) says which process wrote it.
    """
    path = Path(path)
    return sorted(path.parent.glob(f".{path.name}.{MARKER}-*-*.tmp"))


def creation_refused(path):
    """Why ``path``'s folder refuses a new file (the system's one-line reason, e.g.
    ``"Permission denied"``), or None: tried with an empty temporary file of ``path``
    (:func:`temporary_path`), removed at once; ``path`` itself is not touched."""
    temporary = temporary_path(path)
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        return reason(exc)
    try:
        os.unlink(temporary)
    except OSError as exc:
        return reason(exc)
    return None


def process_id(text):
    """The process id ``text`` spells (ASCII digits only), or None for any other text."""
    return int(text) if re.fullmatch(r"[0-9]{1,30}", text) else None


def process_running(pid):
    """Whether process ``pid`` runs on this host; False for a number no process can have
    (0, which :func:`os.kill` reads as this process group, or one past the system's range)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _writer_pid(temporary):
    """The process id in a temporary's name (:func:`temporary_path`), or None."""
    fields = temporary.name[:-len(".tmp")].rsplit("-", 2)
    return process_id(fields[1]) if len(fields) == 3 else None


def remove_stale_temporaries(path):
    """Remove the temporaries of writes of ``path`` whose writer is gone; returns them.

    A temporary whose process still runs on this host is left alone (a write in progress),
    and so is one whose name holds no process id (not written by :func:`temporary_path`); a
    process id no process can have (0, or past the system's range) is a writer that is gone.
    Each removal is reported on stderr with one ``hpcswarm: note:`` line.
    """
    removed = []
    for temporary in temporaries_of(path):
        pid = _writer_pid(temporary)
        if pid is None or process_running(pid):
            continue
        try:
            temporary.unlink()
        except FileNotFoundError:  # another process removed it meanwhile
            continue
        except OSError as exc:
            raise DataError(f"{temporary}: cannot remove this temporary left by an interrupted "
                            f"write ({reason(exc)})") from None
        removed.append(temporary)
        print(f"hpcswarm: note: removed {temporary.name} in {temporary.parent}, a temporary "
              f"left by an interrupted write of {Path(path).name} (process {pid} is gone)",
              file=sys.stderr, flush=True)
    return removed


def reason(exc):
    """The system's one-line reason for an ``OSError`` (h5py's messages span lines)."""
    if exc.errno:
        return os.strerror(exc.errno)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def special_kind(path):
    """What ``path`` is when it exists and is not a regular file (following symbolic links),
    e.g. ``"a character device"``; None for a regular file, a missing one or a dangling link."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def refuse_special(path, what=""):
    """Raise :class:`DataError` if ``path`` is a device, FIFO, socket or folder (or links to
    one): hpcswarm never replaces one, even with ``--overwrite``."""
    kind = special_kind(path)
    if kind is not None:
        link = " (through a symbolic link)" if os.path.islink(path) else ""
        raise DataError(f"{what + ' ' if what else ''}{path}: is {kind}{link}, not a regular "
                        "file; hpcswarm writes only regular files and never replaces this, "
                        "even with --overwrite")


def _fsync_path(path, flags=os.O_RDONLY):
    handle = os.open(path, flags)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


@contextmanager
def atomic_path(path, *, overwrite=True):
    """A temporary path whose content appears at ``path`` whole, or not at all.

    The block writes the yielded path (an empty file already created, e.g. with
    ``h5py.File(temporary, "w")`` or ``open(temporary, "w")``); when it ends without error
    the file is flushed to disk and renamed to ``path`` (inside :func:`all_or_nothing`: when
    that block ends, with the other files written in it).

    Parameters
    ----------
    path : str or Path
    overwrite : bool, default True
        Replace an existing ``path``; without it, a ``path`` that exists when the content
        is complete is an error and stays as it was.

    Raises
    ------
    DataError
        The folder is missing or not writable, ``path`` is not a regular file
        (:func:`refuse_special`), or exists (without ``overwrite``); nothing is left behind.
    """
    path = Path(path)
    temporary = _fresh_temporary(path)
    # from its creation to its rename (or its place in the batch) the temporary is inside
    # the block that removes it, so that a stop signal at any moment leaves none behind
    with _removed_on_failure(temporary, path):
        _create_empty(temporary, path)
        yield temporary
        _fsync_path(temporary)
        pending = _BATCH.get()
        if pending is not None:  # renamed with the others of the batch, at its end
            pending.append((temporary, path, overwrite))
            return
        _rename(temporary, path, overwrite)
    _fsync_folder(path.parent)


def _fresh_temporary(path):
    """The name of a new temporary file of a write of ``path`` (refused where ``path`` is
    not a regular file), the temporaries of earlier writes whose process is gone removed."""
    refuse_special(path)
    remove_stale_temporaries(path)
    return temporary_path(path)


def _create_empty(temporary, path):
    """Create ``temporary`` (a :func:`_fresh_temporary` name of ``path``), empty."""
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise DataError(f"{path}: cannot write in {str(path.parent)!r} ({reason(exc)})") from None


def _rename(temporary, path, overwrite):
    """Rename the complete ``temporary`` to ``path``; on any error, or after a SIGTERM whose
    exception was swallowed (:func:`~hpcswarm.termination.raise_if_terminated`), it is
    removed."""
    with _removed_on_failure(temporary, path):
        raise_if_terminated()
        if not overwrite and os.path.lexists(path):  # a dangling link exists too
            raise DataError(f"{path}: already exists (use --overwrite to replace it)")
        refuse_special(path)  # it may have appeared while the content was written
        os.replace(temporary, path)


@contextmanager
def _removed_on_failure(temporary, path):
    """Remove ``temporary`` when the block fails; an OSError is one DataError naming
    ``path``."""
    try:
        yield
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise DataError(f"{path}: cannot write ({reason(exc)})") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _fsync_folder(folder):
    try:
        _fsync_path(folder)
    except OSError:  # a folder some file systems cannot flush; the rename itself is done
        pass


_BATCH = contextvars.ContextVar("hpcswarm_atomic_batch", default=None)
"""The writes of the innermost :func:`all_or_nothing` block: ``(temporary, path, overwrite)``
of each file written whole and not yet renamed; None outside such a block."""


@contextmanager
def all_or_nothing():
    """The files that :func:`atomic_path` writes inside the block appear together at its end,
    or none of them.

    Each file is written whole under its temporary name as the block goes; when the block
    ends without error, every one is renamed to its target, in the order written. When it
    fails (a full disk, a folder that refuses a file, an interruption), every temporary is
    removed, and no target has changed. A block inside another joins the outer one.

    Raises
    ------
    DataError
        A rename fails (a target that became a folder or a device, or appeared without
        ``overwrite``): the targets renamed before it are written, the others are not, and
        no temporary is left.
    """
    if _BATCH.get() is not None:
        yield
        return
    pending = []
    token = _BATCH.set(pending)
    try:
        yield
    except BaseException:
        for temporary, _, _ in pending:
            temporary.unlink(missing_ok=True)
        raise
    finally:
        _BATCH.reset(token)
    for position, (temporary, path, overwrite) in enumerate(pending):
        try:
            _rename(temporary, path, overwrite)
        except BaseException:
            for left, _, _ in pending[position + 1:]:
                left.unlink(missing_ok=True)
            raise
    for folder in dict.fromkeys(path.parent for _, path, _ in pending):
        _fsync_folder(folder)


def open_replacing(path):
    """A new, empty file at ``path``, open for writing text (UTF-8), for a file written as it
    grows (a progress log).

    The file is created under a temporary name in ``path``'s folder and at once renamed over
    ``path``: a regular file there is replaced, and a symbolic link (dangling or not) or a
    file with other names (hard links) is replaced by the new file, never written through.

    Raises
    ------
    DataError
        ``path`` is not a regular file (:func:`refuse_special`), or its folder is missing or
        refuses the file; nothing is left behind.
    """
    path = Path(path)
    temporary = _fresh_temporary(path)
    with _removed_on_failure(temporary, path):  # from its creation to its rename
        _create_empty(temporary, path)
        handle = open(temporary, "w", encoding="utf-8")
        try:
            _rename(temporary, path, overwrite=True)
        except BaseException:
            handle.close()
            raise
    return handle


def write_text(path, text, *, overwrite=True):
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path, overwrite=overwrite) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_json(path, document, *, overwrite=True, indent=None):
    """Write ``document`` as JSON (no NaN or infinity, a final newline) to ``path`` atomically."""
    write_text(path, json.dumps(document, allow_nan=False, indent=indent) + "\n",
               overwrite=overwrite)


@contextmanager
def atomic_hdf5(output, *, overwrite=False, in_memory=False):
    """A new HDF5 file that appears at ``output`` whole, or not at all.

    The block writes an ``h5py.File`` created under a temporary name in ``output``'s folder
    and closed when the block ends; then :func:`hpcswarm.store.atomic.atomic_path` flushes it to
    disk and renames it to ``output``. On any error, or an interruption, the temporary file
    is removed and ``output`` is untouched.

    Parameters
    ----------
    output : str or Path
    overwrite : bool
        Replace an existing ``output``.
    in_memory : bool
        Build the file in memory and write its bytes to the temporary file at the end (memory:
        the file's size). The HDF5 library then never meets a failing disk: a full disk
        during a write of many objects (results, checkpoints) otherwise leaves HDF5 unable to
        close the file, and every object still open reports the failure again when freed.

    Raises
    ------
    DataError
        ``output`` exists (without ``overwrite``), its folder is missing or not writable, or
        the write fails (a full disk).
    """
    output = Path(output)
    check_output(output, overwrite=overwrite)
    import h5py  # here: the other writers need no HDF5

    with atomic_path(output, overwrite=overwrite) as temporary:
        if not in_memory:
            f = h5py.File(temporary, "w")
            try:
                yield f
            except BaseException:
                try:  # a failed write also fails HDF5's flush at close: the first error counts
                    f.close()
                except (OSError, RuntimeError):
                    pass
                raise
            try:
                f.close()
            except (OSError, RuntimeError) as exc:  # HDF5 flushes its metadata here
                raise DataError(f"{output}: cannot write ({hdf5_reason(exc)})") from None
            return
        image = io.BytesIO()
        with h5py.File(image, "w") as f:
            yield f
        with open(temporary, "wb") as handle:
            handle.write(image.getbuffer())


def hdf5_reason(exc):
    """The system's reason inside an HDF5 library error (``... errno = 27, error message =
    'File too large' ...``), else its first line."""
    match = re.search(r"error message = '([^']*)'", str(exc))
    if match:
        return match.group(1)
    return reason(exc)


def check_output(output, *, overwrite=False):
    """Raise :class:`DataError` if ``output`` cannot be written as a new dataset file."""
    output = Path(output)
    refuse_special(output)
    if os.path.lexists(output) and not overwrite:  # a dangling link too
        raise DataError(f"{output}: already exists (use --overwrite to replace it)")
    if not os.path.isdir(output.parent):
        raise DataError(f"{output}: the folder {str(output.parent)!r} does not exist")
