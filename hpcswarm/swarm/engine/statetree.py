"""A search's method state as plain data: JSON text and numbered arrays, and back.

A snapshot (:mod:`hpcswarm.swarm.engine.snapshot`) keeps what a method says a later round reads
(:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.method_state`) in this form, which a checkpoint
stores as a string dataset and plain numeric datasets (:mod:`hpcswarm.run.checkpoint`): nothing in
it is ever unpickled, so reading a checkpoint runs no code from the file (the reason PyTorch's
``torch.load`` reads ``weights_only``).

The tree holds the values a method state is made of, each read back as the same type with
the same value, bit for bit:

=============================  ==========================================================
value                          stored as
=============================  ==========================================================
None, bool, int, str           itself (JSON)
float                          itself when finite (JSON writes the shortest text that reads
                               back to the same double); ``{"$float": "nan"}``, ``"inf"``,
                               ``"-inf"`` otherwise
numpy scalar                   ``{"$numpy": dtype, "value": ...}``
ndarray (bool, int, float)     ``{"$array": i}``: array number ``i``
list                           a JSON list
tuple                          ``{"$tuple": [...]}``
dict with str keys             a JSON object (a key must not begin with ``$``)
set of equal-length bytes      ``{"$byteset": i}``: the elements, sorted, as the rows of
                               array ``i`` (uint8); the subsets a search has met
PCG64 Generator                ``{"$pcg64": hex}``: its 48-byte state
                               (:func:`~hpcswarm.swarm.engine.state.pack_rng`)
=============================  ==========================================================

Anything else is refused when the snapshot is taken (TypeError naming where it sits), so a
method that keeps a new kind of value fails its snapshot test rather than writing a
checkpoint it cannot read.
"""

import json
import math

import numpy as np

from hpcswarm.store.reading import parse_json
from hpcswarm.swarm.engine.state import (RNG_STATE_BYTES, pack_rng, rng_state_problem, unpack_rng)

ARRAY_KINDS = "biuf"
"""dtype kinds an array of the tree may have (bool, signed, unsigned, float)."""

_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class _Encoder:
    """Builds the tree of one value, collecting its arrays."""

    def __init__(self):
        self.arrays = {}

    def _array(self, array):
        name = str(len(self.arrays))
        self.arrays[name] = np.array(array, copy=True)
        return int(name)

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, np.generic):
            if value.dtype.kind not in ARRAY_KINDS:
                raise TypeError(f"{where}: a numpy {value.dtype} scalar cannot be stored")
            return {"$numpy": value.dtype.str, "value": self.encode(value.item(), where)}
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else {"$float": repr(float(value))}
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in ARRAY_KINDS:
                raise TypeError(f"{where}: an array of dtype {value.dtype} cannot be stored")
            return {"$array": self._array(value)}
        if type(value) is list:
            return [self.encode(item, f"{where}[{i}]") for i, item in enumerate(value)]
        if type(value) is tuple:
            return {"$tuple": [self.encode(item, f"{where}[{i}]")
                               for i, item in enumerate(value)]}
        if type(value) is dict:
            return {self._key(key, where): self.encode(item, f"{where}.{key}")
                    for key, item in value.items()}
        if type(value) is set:
            return {"$byteset": self._array(self._byteset(value, where))}
        if isinstance(value, np.random.Generator):
            if type(value.bit_generator) is not np.random.PCG64:
                raise TypeError(f"{where}: a {type(value.bit_generator).__name__} generator "
                                "cannot be stored (PCG64 only)")
            return {"$pcg64": pack_rng(value).tobytes().hex()}
        raise TypeError(f"{where}: a {type(value).__name__} cannot be stored in a snapshot")

    @staticmethod
    def _key(key, where):
        if not isinstance(key, str) or key.startswith("$"):
            raise TypeError(f"{where}: the dict key {key!r} cannot be stored (a str not "
                            "beginning with '$')")
        return key

    @staticmethod
    def _byteset(value, where):
        lengths = {len(item) if isinstance(item, bytes) else -1 for item in value}
        if -1 in lengths or len(lengths) > 1:
            raise TypeError(f"{where}: only a set of equal-length bytes can be stored")
        width = lengths.pop() if lengths else 0
        data = b"".join(sorted(value))
        return np.frombuffer(data, dtype=np.uint8).reshape(len(value), width)


def encode_state(value):
    """``value`` as ``{"tree": JSON text, "arrays": {name: ndarray}}`` (copies: the search may
    go on changing its own).

    Raises
    ------
    TypeError
        Naming where in ``value`` a value that cannot be stored sits.
    """
    encoder = _Encoder()
    tree = encoder.encode(value, "state")
    return {"tree": json.dumps(tree, allow_nan=False, separators=(",", ":")),
            "arrays": encoder.arrays}


class _Decoder:
    """Reads a tree back, checking every node."""

    def __init__(self, arrays):
        self.arrays = arrays

    def _array(self, index):
        if type(index) is not int or str(index) not in self.arrays:
            raise ValueError(f"array {index!r} is missing")
        array = self.arrays[str(index)]
        if not isinstance(array, np.ndarray) or array.dtype.kind not in ARRAY_KINDS:
            raise ValueError(f"array {index!r} is not a bool or numeric array")
        return np.array(array, copy=True)

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(item) for item in node]
        if not isinstance(node, dict):
            raise ValueError(f"{type(node).__name__} is not a node of a state")
        special = [key for key in node if key.startswith("$")]
        if not special:
            return {key: self.decode(item) for key, item in node.items()}
        kind, body = special[0], node[special[0]]
        if kind == "$numpy":
            return np.dtype(body).type(self.decode(node["value"]))
        if kind == "$float" and body in _FLOATS:
            return _FLOATS[body]
        if kind == "$array":
            return self._array(body)
        if kind == "$tuple" and isinstance(body, list):
            return tuple(self.decode(item) for item in body)
        if kind == "$byteset":
            rows = self._array(body)
            if rows.dtype != np.uint8 or rows.ndim != 2:
                raise ValueError(f"array {body!r} of a set of bytes is not 2-D uint8")
            return {row.tobytes() for row in rows}
        if kind == "$pcg64" and isinstance(body, str):
            packed = np.frombuffer(bytes.fromhex(body), dtype=np.uint8)
            if packed.size != RNG_STATE_BYTES:
                raise ValueError(f"a generator state has {packed.size} bytes, not "
                                 f"{RNG_STATE_BYTES}")
            problem = rng_state_problem(packed)
            if problem is not None:
                raise ValueError(f"a generator state with {problem}")
            return unpack_rng(packed)
        raise ValueError(f"{json.dumps(node)[:80]} is not a node of a state")


def decode_state(state):
    """The value :func:`encode_state` stored in ``state`` (its ``tree`` and ``arrays``).

    Raises
    ------
    ValueError
        Saying what does not read back (damaged JSON, JSON nested deeper than
        :data:`~hpcswarm.store.reading.MAX_JSON_DEPTH`, a missing array, an unknown node).
    """
    try:
        return _Decoder(state["arrays"]).decode(parse_json(state["tree"]))
    except (KeyError, TypeError, OverflowError) as exc:  # a node of the wrong shape
        raise ValueError(f"{type(exc).__name__}: {exc}") from None
