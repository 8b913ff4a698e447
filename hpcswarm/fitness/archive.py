"""Memory of evaluated gene subsets, so that a subset met again is not evaluated again.

The archive of Gu, Cheng and Jin (2018, Sect. 3, Algorithm 3): before training a classifier on a
subset, look it up; on a hit reuse the stored result. Keys are a 128-bit BLAKE2b digest of
the packed mask (``numpy.packbits``), so an entry costs about 200 bytes whatever the number
of genes; two different subsets collide with probability about ``2**-128`` per pair.
The archive holds at most ``maxsize`` entries and evicts the least recently used one.
"""

import hashlib
from collections import OrderedDict

import numpy as np

from hpcswarm.fitness.objectives import WORST_FITNESS

KEY_BYTES = 16
"""Bytes of a key (:func:`mask_key`)."""

ENTRY_BYTES = 200
"""Bytes of one entry, at most: the key (a 16-byte ``bytes``), the fitness and the ordered
dict's overhead."""

DEFAULT_ARCHIVE_SIZE = 100_000
"""Default bound on archived subsets of the methods that keep an archive (about 20 MB
whatever the number of genes)."""


def mask_key(mask):
    """Compact key of a boolean gene mask: 16-byte BLAKE2b digest of its packed bits."""
    return hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=KEY_BYTES).digest()


def mask_keys(masks):
    """:func:`mask_key` of every row of ``masks`` (n_masks, n_genes), as an (n_masks, 16)
    uint8 array, packed in one call."""
    return _digests(np.packbits(np.asarray(masks, dtype=bool), axis=1))


def flipped_keys(mask, flips):
    """:func:`mask_key` of ``mask`` with each row of ``flips`` flipped, as :func:`mask_keys`.

    The flipped masks are never built: the packed bits of ``mask`` are XOR-ed with the bits
    of each row's genes (distinct genes of one byte are distinct bits, so their sum is
    their XOR).

    Parameters
    ----------
    mask : ndarray of bool of shape (n_genes,)
    flips : ndarray of int of shape (n_rows, n_flipped)
        Distinct gene indices in each row.

    Returns
    -------
    ndarray of uint8 of shape (n_rows, 16)
    """
    packed = np.packbits(mask)
    flips = np.asarray(flips, dtype=np.int64)
    n_rows, width = flips.shape[0], packed.size
    cells = (np.arange(n_rows)[:, None] * width + (flips >> 3)).ravel()
    bits = np.bincount(cells, weights=(128 >> (flips & 7)).ravel(), minlength=n_rows * width)
    return _digests(packed ^ bits.astype(np.uint8).reshape(n_rows, width))


def _digests(packed):
    """16-byte BLAKE2b digests of the rows of a 2-D uint8 array, as an (n_rows, 16) array."""
    width = packed.shape[1]
    data = np.ascontiguousarray(packed).tobytes()
    digests = b"".join([hashlib.blake2b(data[start:start + width],
                                        digest_size=KEY_BYTES).digest()
                        for start in range(0, len(data), width)])
    return np.frombuffer(digests, dtype=np.uint8).reshape(-1, KEY_BYTES)


class Archive:
    """Bounded least-recently-used map from mask keys to results, counting hits and misses.

    Parameters
    ----------
    maxsize : int
        Largest number of entries kept; 0 disables the archive (the search then neither
        looks up nor stores, and both counters stay 0).
    """

    def __init__(self, maxsize):
        if isinstance(maxsize, bool) or not isinstance(maxsize, (int, np.integer)) or maxsize < 0:
            raise ValueError(f"archive_size must be an integer >= 0, got {maxsize!r}")
        self.maxsize = int(maxsize)
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self._entries = OrderedDict()

    @staticmethod
    def bytes_needed(maxsize):
        """Bytes a full archive of ``maxsize`` entries holds (:data:`ENTRY_BYTES` each)."""
        return ENTRY_BYTES * maxsize

    def __len__(self):
        return len(self._entries)

    def get(self, key):
        """The stored result of ``key``, or ``None``; counts a hit or a miss."""
        value = self._entries.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return value

    def put(self, key, value):
        """Store ``value`` under ``key``, evicting the least recently used entry when full."""
        if self.maxsize == 0:
            return
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)
            self.evictions += 1

    def state(self):
        """What a snapshot keeps of the archive: its bound, its counters and its entries from
        the least to the most recently used (``keys``: uint8 array of shape (n_entries, 16),
        ``values``: float64 array of shape (n_entries,))."""
        keys = np.frombuffer(b"".join(self._entries), dtype=np.uint8).reshape(-1, KEY_BYTES)
        return {"maxsize": self.maxsize, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions, "keys": keys,
                "values": np.array(list(self._entries.values()), dtype=np.float64)}

    @classmethod
    def from_state(cls, state):
        """The archive :meth:`state` describes (ValueError if its arrays do not match, a
        counter is negative or a value is no fitness, between the empty subset's
        :data:`~hpcswarm.fitness.objectives.WORST_FITNESS` and a perfect score)."""
        archive = cls(state["maxsize"])
        archive.hits, archive.misses, archive.evictions = (
            int(state[name]) for name in ("hits", "misses", "evictions"))
        keys, values = state["keys"], state["values"]
        if keys.shape != (values.size, KEY_BYTES) or values.size > archive.maxsize:
            raise ValueError(f"archive keys of shape {keys.shape} for {values.size} values "
                             f"(at most {archive.maxsize})")
        if min(archive.maxsize, archive.hits, archive.misses, archive.evictions) < 0:
            raise ValueError("archive with a negative size or counter")
        if values.dtype != np.float64 or not ((values >= WORST_FITNESS) & (values <= 1)).all():
            raise ValueError(f"archive values outside [{WORST_FITNESS}, 1.0]")
        archive._entries.update(zip((row.tobytes() for row in keys), values.tolist()))
        return archive
