"""Opening text inputs, plain or gzip-compressed, with one clear error for a missing,
unreadable, truncated or binary file.

A file is gzip when it starts with the gzip magic bytes (``1f 8b``), whatever its name: every
text format (CSV/TSV, GCT, CLS, ARFF, GEO series matrix, labels and phenotype tables) is read
through :func:`text_lines`, so each may be compressed.
"""

import gzip
import io
import zlib
from contextlib import contextmanager
from pathlib import Path

from hpcswarm.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"


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
def text_lines(path):
    """The lines of a UTF-8 (or Latin-1) text file, plain or gzip, without line ends.

    Yields an iterator of ``str``; a file starting with a UTF-8 byte-order mark loses it.
    Lines are decoded one at a time, so a large file is never held whole.

    Raises
    ------
    DataError
        The file is missing, unreadable, binary, or a truncated or damaged gzip file.
    """
    with _binary(path) as stream:
        yield _decoded_lines(stream, path)


def _raw_lines(stream, path):
    """Lines of bytes; read and decompression errors become one :class:`DataError`."""
    lines = iter(stream)
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            return
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise DataError(f"{path}: truncated or damaged gzip file ({exc})") from None
        except OSError as exc:
            raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
        yield raw


def _decoded_lines(stream, path):
    first = True
    for raw in _raw_lines(stream, path):
        if first:
            if b"\x00" in raw[:8192]:
                raise DataError(f"{path}: binary content where text was expected")
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            first = False
        yield _decode(raw).rstrip("\r\n")


def read_lines(path):
    """All lines of a text file (see :func:`text_lines`) as a list."""
    with text_lines(path) as lines:
        return list(lines)


def head_lines(path, count):
    """The first ``count`` lines of a text file (fewer if it is shorter); for sniffing a format."""
    with text_lines(path) as lines:
        out = []
        for line in lines:
            out.append(line)
            if len(out) == count:
                break
        return out
