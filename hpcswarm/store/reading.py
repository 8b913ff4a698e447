"""Reading what a file declares before trusting it: stored arrays whose declared shape and
type are checked before any read, and JSON whose nesting is bounded.

A file of 100 KB can declare an HDF5 dataset of 10^12 elements (a chunked dataset of which no
chunk was written, or a crafted header); reading it whole exhausts the memory, and a JSON
attribute nested 100,000 deep exhausts the interpreter's stack. Every reader of a file that
hpcswarm did not write in this process (datasets, results files, checkpoints, AnnData and
MATLAB v7.3 sources) therefore reads a stored array through :func:`checked_read` (or checks it
with :func:`check_declared` before reading it in parts) and JSON through :func:`parse_json`.

Both raise :class:`ValueError`, which each reader's handler of a damaged file already reports
in its own words (``a damaged results file``, ``damaged checkpoint``, ``a damaged dataset``).
"""

import json
import math
import re

import numpy as np

from hpcswarm.system import available_memory

MAX_JSON_DEPTH = 100
"""The deepest nesting of arrays and objects :func:`parse_json` reads. What hpcswarm writes
nests fewer than 10 levels (a method state's tree, a job's identity); Python's own parser
and the state decoder recurse once per level, and the interpreter's stack ends near 1,000."""

STRING_BYTES = 64
"""Memory counted per element of a variable-length string dataset read whole (a Python
string object and its pointer)."""

_KIND_WORDS = {"b": "booleans", "i": "integers", "u": "integers", "f": "floats",
               "T": "strings"}

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
"""A JSON string, or an unterminated one up to the end of the text: always a match at a
quote, never a backtrack, so that scanning takes time linear in the text."""


def _is_string(dtype):
    """Whether ``dtype`` is how h5py gives strings: fixed-length bytes, or an object dtype
    that h5py marks as variable-length text or bytes."""
    return dtype.kind == "S" or (dtype.kind == "O" and (dtype.metadata or {}).get("vlen")
                                 in (str, bytes))


def _kind_matches(dtype, kinds):
    return _is_string(dtype) if "T" in kinds and dtype.kind in "SO" else dtype.kind in kinds


def _shape_text(shape):
    """``shape`` (entries: a length, a ``range`` of lengths, or None) as a message writes it."""
    words = ["any" if dim is None else str(dim) if isinstance(dim, int)
             else f"<= {dim.stop - 1}" for dim in shape]
    return "(" + ", ".join(words) + ("," if len(words) == 1 else "") + ")"


def _fits(length, dim):
    return dim is None or (length == dim if isinstance(dim, int) else length in dim)


def declared_bytes(shape, dtype):
    """The memory an array of ``shape`` and ``dtype`` takes once read (Python integers: no
    overflow, whatever the shape)."""
    per_value = STRING_BYTES if dtype.kind == "O" else dtype.itemsize
    return math.prod(int(n) for n in shape) * per_value


def check_declared(dataset, what, shape, kinds, *, whole=True):
    """Check the shape and type ``dataset`` declares, before any of it is read.

    Parameters
    ----------
    dataset : h5py.Dataset
        Anything with ``shape`` and ``dtype``.
    what : str
        The array as a message names it (e.g. ``"'selected_genes' of run-000/fold-00"``).
    shape : tuple
        What the file's own dimensions allow, one entry per axis: a length (exactly it), a
        ``range`` of lengths (e.g. ``range(n_genes + 1)``: at most ``n_genes``), or None
        (any length; the memory still bounds the whole).
    kinds : str or None
        The numpy dtype kinds allowed (``"iu"`` integers, ``"f"`` floats, ``"b"`` booleans),
        ``"T"`` for strings as h5py reads them; None for any (a reader that names a wrong
        type in its own words once the values are read).
    whole : bool, default True
        The array is read whole: its size must also fit the machine's memory
        (:func:`hpcswarm.system.available_memory`); False for one read in parts, or mapped.

    Raises
    ------
    ValueError
        Naming ``what``, the declared shape and type, and what was expected.
    """
    declared, dtype = dataset.shape, dataset.dtype
    if declared is None:
        raise ValueError(f"{what} holds no array (an empty dataspace)")
    if kinds is not None and not _kind_matches(dtype, kinds):
        words = " or ".join(dict.fromkeys(_KIND_WORDS[k] for k in kinds))
        raise ValueError(f"{what} is of type {dtype}, expected {words}")
    if len(declared) != len(shape) or not all(map(_fits, declared, shape)):
        raise ValueError(f"{what} declares shape {declared}, expected {_shape_text(shape)}")
    if whole:
        need = declared_bytes(declared, dtype)
        have, described = available_memory(1)
        if need > have:
            raise ValueError(f"{what} declares shape {declared} of {dtype} "
                             f"({need / 1e9:.3g} GB), more than the memory ({described})")


def checked_read(dataset, what, shape, kinds):
    """``dataset`` read whole, once :func:`check_declared` has found its declared shape and
    type allowed; ValueError (naming ``what``) otherwise, before any read."""
    check_declared(dataset, what, shape, kinds)
    return dataset[()]


def json_depth(text):
    """The deepest nesting of arrays and objects in the JSON ``text`` (str or bytes), found
    without parsing it: the brackets outside its strings, counted in one pass."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    bare = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass")
    codes = np.frombuffer(bare, dtype=np.uint8)
    steps = (np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
             - np.isin(codes, (ord("]"), ord("}"))))
    return int(np.cumsum(steps).max(initial=0))


def parse_json(text):
    """``json.loads(text)``, refused (ValueError) when nested deeper than
    :data:`MAX_JSON_DEPTH` before the parser recurses into it."""
    if isinstance(text, (str, bytes, bytearray)) and json_depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(text)
