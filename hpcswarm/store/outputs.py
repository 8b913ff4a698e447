"""Where a command may write: never over one of its own inputs, and over an existing file only
when that file is named as an output and ``--overwrite`` is given.

Every command that writes (``convert``, ``run`` with a job file or ``--output``, ``report``,
``evaluate --plot``) checks all its output paths here, before any work, against all its input
files, and tries each output folder for a new file (a read-only folder is refused before any
work, not after it). Two paths are the same file when they resolve to the same place through
symbolic links and relative paths (:func:`os.path.realpath`) or, both existing, are one file
under two names (a hard link, :func:`os.path.samefile`). Output folders a command creates are
removed again when it fails (:func:`created_folders`).
"""

import os
from contextlib import contextmanager
from pathlib import Path

from hpcswarm.errors import DataError
from hpcswarm.store.atomic import MARKER, creation_refused, reason, refuse_special


def same_file(a, b):
    """Whether paths ``a`` and ``b`` name the same file (links and relative paths resolved)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


TEMPORARY_EXTRA = len(".") + len(f".{MARKER}-") + 7 + len("-") + 12 + len(".tmp")
"""Bytes a temporary name (:func:`hpcswarm.store.atomic.temporary_path`) adds to its target's name
at most: a process id of up to 7 digits (Linux's largest) and 12 hexadecimal digits."""


def _name_max(folder):
    """The longest file name, in bytes, of the file system of ``folder`` or the nearest
    folder above it that exists (255 where it cannot say)."""
    for path in [Path(folder), *Path(folder).parents]:
        try:
            return os.pathconf(path, "PC_NAME_MAX")
        except (OSError, ValueError):
            continue
    return 255


def name_too_long(path):
    """Why ``path`` can name no file (a name in it longer than the file system of its folder
    allows, typically 255 bytes), in one line; None when every name fits."""
    path = Path(path)
    limit = _name_max(path.parent)
    for part in path.parts:
        length = len(os.fsencode(part))
        if length > limit:
            return (f"a name in the path is {length} bytes, over the limit of {limit} bytes "
                    "per name of its file system")
    return None


def check_name_length(what, path):
    """Raise :class:`DataError` if ``path``, or the temporary name it is written under, is a
    longer name than its folder's file system allows (typically 255 bytes)."""
    path = Path(path)
    length = len(os.fsencode(path.name))
    limit = _name_max(path.parent)
    if length + TEMPORARY_EXTRA > limit:
        raise DataError(f"{what} {path}: the name is {length} bytes, and hpcswarm writes it "
                        f"under a temporary name up to {TEMPORARY_EXTRA} bytes longer, over "
                        f"the limit of {limit} bytes per name of its folder's file system; "
                        "give the output a shorter name")


def input_at(path, inputs):
    """The ``(what, path)`` of ``inputs`` (as :func:`check_not_inputs` takes them) that is
    the same file as ``path`` (:func:`same_file`), or None."""
    for role, source in inputs:
        if source is not None and same_file(path, source):
            return role, Path(source)
    return None


def check_not_inputs(outputs, inputs):
    """Raise :class:`DataError` if an output is one of the command's inputs, or two outputs
    are one file: checked even with ``--overwrite``.

    Parameters
    ----------
    outputs : sequence of (str, path)
        What names each output (an option such as ``"--json"``, or a job key) and its path.
    inputs : sequence of (str, path or None)
        What each input is (``"the dataset"``, ``"the job file"``...) and its path; None for
        inputs that are not files (``sklearn:wine``).
    """
    outputs = [(what, Path(path)) for what, path in outputs]
    for what, path in outputs:
        check_name_length(what, path)
    for position, (what, path) in enumerate(outputs):
        found = input_at(path, inputs)
        if found is not None:
            role, source = found
            raise DataError(f"{what} {path}: is {role} {source} of this command; an output "
                            "never replaces an input, even with --overwrite")
        for other_what, other in outputs[:position]:
            if same_file(path, other):
                raise DataError(f"{what} {path}: is also {other_what} {other}; give each "
                                "output its own file")


def check_outputs(outputs, inputs=(), *, overwrite=False):
    """Raise :class:`DataError` unless every output can be written without losing data.

    Parameters
    ----------
    outputs, inputs
        As :func:`check_not_inputs` takes them.
    overwrite : bool
        Whether existing outputs may be replaced (``--overwrite``); inputs never may.

    Raises
    ------
    DataError
        At the first output that is an input of the command (even with ``overwrite``) or is
        given twice (:func:`check_not_inputs`); then at the first that is not a regular file
        (a folder, a device, a FIFO, a socket, or a link to one:
        :func:`hpcswarm.store.atomic.refuse_special`, even with ``overwrite``), lies in a missing
        folder or one that refuses a new file (read-only: tried with an empty temporary file,
        removed at once), or exists (without ``overwrite``).
    """
    check_not_inputs(outputs, inputs)
    tried = set()
    for what, path in outputs:
        path = Path(path)
        refuse_special(path, what)
        if not os.path.isdir(path.parent):
            raise DataError(f"{what} {path}: the folder {str(path.parent)!r} does not exist")
        if os.path.lexists(path) and not overwrite:  # a dangling link too
            raise DataError(f"{what} {path}: already exists (use --overwrite to replace it)")
        folder = os.path.realpath(path.parent)
        if folder not in tried:
            tried.add(folder)
            refused = creation_refused(path)
            if refused is not None:
                raise DataError(f"{what} {path}: cannot write in {str(path.parent)!r} "
                                f"({refused})")


def missing_folders(folder, what):
    """The folders to create for ``folder`` (outermost first); DataError if ``folder`` or one
    above it exists and is not a folder, or the folder that would hold the outermost refuses
    a new entry (``what``: the option naming it)."""
    missing = []
    for path in [Path(folder), *Path(folder).parents]:
        if os.path.isdir(path):
            break
        if os.path.lexists(path):  # a file, a special file or a link, dangling or not
            raise DataError(f"{what} {folder}: {path} exists and is not a folder")
        missing.append(path)
    if missing:  # tried with a short name: the folder's own may be as long as allowed
        refused = creation_refused(missing[-1].parent / "folder")
        if refused is not None:
            raise DataError(f"{what} {folder}: cannot create the folder {missing[-1]} "
                            f"({refused})")
    return missing[::-1]


@contextmanager
def created_folders(requested):
    """Create the missing output folders of ``requested`` (``(what, folder)`` pairs, folder
    None: none) for the block; if the block fails, remove again those it created (once
    empty: the block's writes leave nothing in them on failure)."""
    missing = [(what, folder, path) for what, folder in requested if folder is not None
               for path in missing_folders(folder, what)]
    created = []
    try:
        for what, folder, path in missing:
            if not os.path.isdir(path):
                try:
                    path.mkdir()
                except OSError as exc:
                    raise DataError(f"{what} {folder}: cannot create the folder {path} "
                                    f"({reason(exc)})") from None
                created.append(path)
        yield
    except BaseException:
        for path in reversed(created):
            try:
                path.rmdir()
            except OSError:
                pass
        raise
