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
by an hpcswarm writer of that target (:func:`temporaries_of`).
"""

import json
import os
import secrets
from contextlib import contextmanager
from pathlib import Path

from hpcswarm.errors import DataError

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
    the file is flushed to disk and renamed to ``path``.

    Parameters
    ----------
    path : str or Path
    overwrite : bool, default True
        Replace an existing ``path``; without it, a ``path`` that exists when the content
        is complete is an error and stays as it was.

    Raises
    ------
    DataError
        The folder is missing or not writable, ``path`` is a folder, or exists (without
        ``overwrite``); nothing is left behind.
    """
    path = Path(path)
    temporary = temporary_path(path)
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise DataError(f"{path}: cannot write in {str(path.parent)!r} ({exc.strerror})") from None
    try:
        yield temporary
        _fsync_path(temporary)
        if not overwrite and path.exists():
            raise DataError(f"{path}: already exists (use --overwrite to replace it)")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise DataError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    try:
        _fsync_path(path.parent)
    except OSError:  # a folder some file systems cannot flush; the rename itself is done
        pass


def write_text(path, text, *, overwrite=True):
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path, overwrite=overwrite) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_json(path, document, *, overwrite=True, indent=None):
    """Write ``document`` as JSON (no NaN or infinity, a final newline) to ``path`` atomically."""
    write_text(path, json.dumps(document, allow_nan=False, indent=indent) + "\n",
               overwrite=overwrite)
