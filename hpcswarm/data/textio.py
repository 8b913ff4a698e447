"""Opening text inputs with one clear error for a missing, unreadable or binary file."""

from pathlib import Path

from hpcswarm.errors import DataError


def check_readable(path):
    """Raise :class:`DataError` unless ``path`` is an existing regular file."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if not path.is_file():
        raise DataError(f"{path}: not a regular file")


def read_lines(path):
    """All lines of a UTF-8 (or Latin-1) text file, without line ends.

    Raises
    ------
    DataError
        The file is missing, unreadable or binary.
    """
    check_readable(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None
    if b"\x00" in data[:8192]:
        raise DataError(f"{path}: binary content where text was expected")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.splitlines()
