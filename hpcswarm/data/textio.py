"""Opening text inputs, plain or gzip-compressed, with one clear error for a missing,
unreadable, truncated or binary file.

A file is gzip when it starts with the gzip magic bytes (``1f 8b``), whatever its name: every
text format (CSV/TSV, GCT, CLS, ARFF, GEO series matrix, labels and phenotype tables) is read
through :func:`text_lines`, so each may be compressed.
"""

import codecs
import gzip
import io
import zlib
from contextlib import contextmanager
from pathlib import Path

from hpcswarm.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
"""The signature an HDF5 file starts with (a file without a user block)."""

_BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
"""Byte-order marks of the wide Unicode encodings (UTF-32 first: its LE mark starts like
UTF-16's), as Windows tools such as Notepad and PowerShell write them."""


def check_readable(path):
    """Raise :class:`DataError` unless ``path`` is an existing regular file."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if not path.is_file():
        raise DataError(f"{path}: not a regular file")


def is_gzip(path):
    """Whether the file at ``path`` starts with the gzip magic bytes."""
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


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


def _decode(line):
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("latin-1")


@contextmanager
def _binary(path):
    """The file's bytes, decompressed when it is gzip."""
    check_readable(path)
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None
    with raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        yield io.BufferedReader(gzip.GzipFile(fileobj=raw, mode="rb"), 1 << 20) if compressed else raw


@contextmanager
def text_lines(path, keep_ends=False):
    """The lines of a text file, plain or gzip, without line ends: UTF-8 (with or without a
    byte-order mark), UTF-16 or UTF-32 (with a byte-order mark, or UTF-16 of ASCII text
    without one), or else Latin-1.

    Yields an iterator of ``str``. Lines end at ``\\n``, ``\\r\\n`` or a bare ``\\r``
    (Python's universal newlines). Lines are decoded one at a time, so a large file is never
    held whole. With ``keep_ends`` each line keeps its end (``\\n``, ``\\r\\n`` or ``\\r``) as
    the file spells it, for a reader of quoted fields (:mod:`csv`) whose values may hold line
    ends.

    Raises
    ------
    DataError
        The file is missing, unreadable, binary, not valid in the encoding its mark names, or
        a truncated or damaged gzip file.
    """
    with _binary(path) as stream:
        head = _peek(stream, path)
        wide = _wide_encoding(head)
        if wide is None:
            _check_text(head, path)
            yield _decoded_lines(stream, path, keep_ends)
        else:
            yield _wide_lines(stream, wide, path, keep_ends)


def _wide_lines(stream, encoding, path, keep_ends):
    text = io.TextIOWrapper(stream, encoding=encoding, newline="" if keep_ends else None)
    try:
        for line in _checked(text, path):
            yield line if keep_ends else line.rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid {encoding.upper()} text (byte {exc.start})") from None
    finally:
        text.detach()


def _gzip_error(path, exc):
    return DataError(f"{path}: truncated or damaged gzip file ({exc})")


def _peek(stream, path):
    """The first bytes of the (decompressed) stream, without consuming them."""
    try:
        return stream.peek(8192)[:8192]
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise _gzip_error(path, exc) from None


def _checked(lines, path):
    """``lines`` with read and decompression errors turned into one :class:`DataError`."""
    lines = iter(lines)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise _gzip_error(path, exc) from None
        except OSError as exc:
            raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
        yield line


def _check_text(head, path):
    """Refuse a byte-oriented file whose first bytes hold a NUL byte: binary content, which
    no text format holds (an HDF5 file, whose first line has none, included)."""
    if head.startswith(HDF5_MAGIC):
        raise DataError(f"{path}: an HDF5 file where text was expected (an hpcswarm dataset "
                        "is opened by the extension .h5 or .hdf5)")
    if b"\x00" in head:
        raise DataError(f"{path}: binary content where text was expected")


def _decoded_lines(stream, path, keep_ends):
    first = True
    for raw in _checked(stream, path):
        if first:
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            first = False
        line = _decode(raw)
        if keep_ends:
            yield line
        else:  # a bare carriage return ends a line too (old Mac OS), as in the wide encodings
            yield from line.rstrip("\r\n").split("\r")


def read_lines(path, keep_ends=False):
    """All lines of a text file (see :func:`text_lines`, ``keep_ends`` included) as a list."""
    with text_lines(path, keep_ends) as lines:
        return list(lines)


def read_text(path):
    """The text of a file (see :func:`text_lines`), lines joined by newlines."""
    return "\n".join(read_lines(path))


def head_lines(path, count):
    """The first ``count`` lines of a text file (fewer if it is shorter); for sniffing a format."""
    with text_lines(path) as lines:
        out = []
        for line in lines:
            out.append(line)
            if len(out) == count:
                break
        return out
