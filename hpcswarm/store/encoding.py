"""How values are stored: encoding tags, and values made plain for JSON and HDF5 attributes.

Encoding tags say what every stored object is (``encoding-type``, ``encoding-version``).

As anndata does (``anndata/_io/specs/registry.py``), every HDF5 group and dataset hpcswarm
writes, and every JSON document, carries the two keys; a reader checks the type and the major
version before it trusts the layout. An encoding is a pair ``(type, version)``.
"""

import json
import math
from contextlib import contextmanager

import numpy as np

from hpcswarm.errors import DataError, HpcswarmError

TYPE, VERSION = "encoding-type", "encoding-version"
"""The two attribute (or JSON) keys."""

ARRAY_ENCODING = ("array", "0.2.0")
"""A dataset of numbers (every file hpcswarm writes tags its arrays so)."""

STRINGS_ENCODING = ("string-array", "0.2.0")
"""A dataset of UTF-8 strings."""

GROUP_ENCODING = ("dict", "0.1.0")
"""A group holding named members."""


def tag(obj, encoding):
    """Write ``encoding`` into the attributes of an HDF5 object (file, group or dataset)."""
    obj.attrs[TYPE], obj.attrs[VERSION] = encoding
    return obj


def write_array(parent, name, data):
    """A new dataset ``name`` of ``parent`` (an HDF5 file or group) holding ``data``, tagged
    :data:`ARRAY_ENCODING`."""
    return tag(parent.create_dataset(name, data=data), ARRAY_ENCODING)


def tags(encoding):
    """``encoding`` as the two leading keys of a JSON document (a dict)."""
    return {TYPE: encoding[0], VERSION: encoding[1]}


def decode_value(value):
    """A Python value from an h5py attribute or string element (bytes -> str, numpy -> item)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_tag(obj):
    """``(type, version)`` of an HDF5 object as strings; ``""`` for a missing attribute."""
    return tuple(str(decode_value(obj.attrs.get(key, ""))) for key in (TYPE, VERSION))


def check_tag(obj, encoding, path, what, hint=""):
    """DataError unless ``obj`` has ``encoding``'s type and major version.

    Parameters
    ----------
    obj : h5py.File or h5py.Group or h5py.Dataset
    encoding : (str, str)
        The expected type and the version this hpcswarm writes.
    path : str or Path
        The file, named in the message.
    what : str
        What the file should be (e.g. ``"results file"``), named in the message.
    hint : str, optional
        What to do about a wrong type, appended to that message after ``"; "``.
    """
    kind, version = read_tag(obj)
    if kind != encoding[0]:
        raise DataError(f"{path}: not an hpcswarm {what} ({TYPE} {kind or 'missing'!r}, "
                        f"expected {encoding[0]!r}){'; ' + hint if hint else ''}")
    if version.split(".")[0] != encoding[1].split(".")[0]:
        raise DataError(f"{path}: {what} {VERSION} {version!r} is not supported "
                        f"(this hpcswarm reads {encoding[1]})")


@contextmanager
def damaged_file(path, what):
    """Read the objects of the HDF5 file ``path`` (a ``what``: "dataset", "results file")
    with the errors h5py raises on a damaged one (a broken object header, a truncated heap:
    ``KeyError``, ``OSError``, ``RuntimeError``; a string type or text that does not decode:
    ``TypeError``, ``ValueError``) turned into one :class:`DataError` naming it; hpcswarm's
    own errors pass unchanged."""
    try:
        yield
    except HpcswarmError:
        raise
    except (KeyError, OSError, RuntimeError, TypeError, ValueError) as exc:
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # unquoted
        first = (str(text).strip().splitlines() or [""])[0]  # one line, whatever the library
        raise DataError(f"{path}: a damaged {what} ({type(exc).__name__}: {first})") from None


def finite(value):
    """``value`` as plain Python types, every non-finite float replaced by None.

    JSON has no NaN or infinity; ``-0.0`` becomes ``0.0``. Dicts, lists and tuples are
    converted item by item (tuples become lists).
    """
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    if isinstance(value, (float, np.floating)):
        return float(value) + 0.0 if math.isfinite(value) else None  # + 0.0: no "-0.0"
    if isinstance(value, np.integer):
        return int(value)
    return value


def json_text(value):
    """``value`` as compact JSON text with sorted keys (an HDF5 attribute), via :func:`finite`."""
    return json.dumps(finite(value), allow_nan=False, sort_keys=True)
