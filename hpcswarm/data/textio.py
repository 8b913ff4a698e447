"""Opening text inputs with one clear error for a missing, unreadable or binary file."""

import codecs
from pathlib import Path

from hpcswarm.errors import DataError


def check_readable(path):
    """Raise :class:`DataError` unless ``path`` is an existing regular file."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if not path.is_file():
        raise DataError(f"{path}: not a regular file")


_BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
"""Byte-order marks of the wide Unicode encodings (UTF-32 first: its LE mark starts like
UTF-16's), as Windows tools such as Notepad and PowerShell write them."""


def _wide_encoding(data):
    """``"utf-32"``/``"utf-16"`` when ``data`` starts with their byte-order mark, or
    ``"utf-16-le"``/``"utf-16-be"`` when every other byte of a BOM-less start is zero (ASCII
    text in UTF-16); None for byte-oriented text."""
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            return encoding
    head = data[:8192]
    if len(head) >= 4 and len(head) % 2 == 0:
        if not any(head[1::2]) and all(head[0::2]):
            return "utf-16-le"
        if not any(head[0::2]) and all(head[1::2]):
            return "utf-16-be"
    return None


def read_text(path):
    """The text of a file in UTF-8 (with or without a byte-order mark), UTF-16 or UTF-32
    (with a byte-order mark, or UTF-16 of ASCII text without one), or else Latin-1.

    Raises
    ------
    DataError
        The file is missing, unreadable, binary or not valid in the encoding its mark names.
    """
    check_readable(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None
    wide = _wide_encoding(data)
    if wide is not None:
        try:
            return data.decode(wide)
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: not valid {wide.upper()} text (byte {exc.start})") from None
    if b"\x00" in data[:8192]:
        raise DataError(f"{path}: binary content where text was expected")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_lines(path):
    """All lines of a text file (see :func:`read_text`), without line ends."""
    return read_text(path).splitlines()
