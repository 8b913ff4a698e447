"""Where a command may write: never over one of its own inputs, and over an existing file only
when that file is named as an output and ``--overwrite`` is given.

Every command that writes (``convert``, ``run`` with a job file or ``--output``, ``report``)
checks all its output paths here, before any work, against all its input files. Two paths
are the same file when they resolve to the same place through symbolic links and relative
paths (:func:`os.path.realpath`) or, both existing, are one file under two names (a hard link,
:func:`os.path.samefile`).
"""

import os
from pathlib import Path

from hpcswarm.atomic import refuse_special
from hpcswarm.errors import DataError


def same_file(a, b):
    """Whether paths ``a`` and ``b`` name the same file (links and relative paths resolved)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


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
    inputs = [(what, Path(path)) for what, path in inputs if path is not None]
    for position, (what, path) in enumerate(outputs):
        for role, source in inputs:
            if same_file(path, source):
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
        :func:`hpcswarm.atomic.refuse_special`, even with ``overwrite``), lies in a missing
        folder, or exists (without ``overwrite``).
    """
    check_not_inputs(outputs, inputs)
    for what, path in outputs:
        path = Path(path)
        refuse_special(path, what)
        if not path.parent.is_dir():
            raise DataError(f"{what} {path}: the folder {str(path.parent)!r} does not exist")
        if (path.exists() or path.is_symlink()) and not overwrite:
            raise DataError(f"{what} {path}: already exists (use --overwrite to replace it)")
