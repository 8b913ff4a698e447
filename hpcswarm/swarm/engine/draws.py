"""Many ``Generator.choice(n, size, replace=False)`` draws at once, the same numbers as one by one.

The local search of Tran et al. (2016, Sect. 3.1) draws, for every try, the genes to flip
from the particle's own stream, whatever the outcome of the earlier tries; a search can
therefore draw all its tries first. One call of ``rng.choice`` costs about 15 µs, mostly
call overhead, and a run at the paper's settings makes 137,000 of them. This module draws
the same sets, and leaves the generator in the same state, from one block of raw 64-bit
outputs.

It follows numpy's ``Generator.choice`` without replacement and without ``p`` (numpy 1.17
to 2.x, ``numpy/random/_generator.pyx``): for ``n <= 10000`` or ``size <= n // 50`` it is
Floyd's algorithm, ``val = bounded(j)`` for ``j = n - size .. n - 1`` (``j`` itself when
``val`` is already chosen), then a Fisher-Yates shuffle of the ``size`` values
(``bounded(i)`` for ``i = size - 1 .. 1``). ``bounded(r)`` is Lemire's method on 32-bit
outputs: ``m = u32 * (r + 1)``, result ``m >> 32``, a redraw only when the low half of
``m`` is below ``2**32 mod (r + 1)`` (probability below ``r / 2**32``). A PCG64 generator
gives its 32-bit outputs as the low, then the high half of each 64-bit output, one half
kept over in its state (``has_uint32``). Since the local search sorts every set, the
shuffle's draws are consumed but their order is not needed.

Anything else (another bit generator, the tail-shuffle branch of large samples, a redraw
in the block, ``size == n``) is drawn one by one with ``rng.choice``, so the result is
always exactly that of the loop; ``tests/test_swarm_draws.py`` checks both branches against
it.
"""

import numpy as np

_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def sorted_choices(rng, n, size, n_draws):
    """``n_draws`` sorted draws of ``size`` distinct integers of ``[0, n)``, one per row.

    Row ``t`` equals ``np.sort(rng.choice(n, size, replace=False))`` made after the rows
    before it, and ``rng`` ends in the state that loop leaves.

    Parameters
    ----------
    rng : numpy.random.Generator
    n, size, n_draws : int
        ``0 < size <= n``.

    Returns
    -------
    ndarray of int64 of shape (n_draws, size)
    """
    if _floyd_applies(rng, n, size) and n_draws > 0:
        rows = _floyd_block(rng, n, size, n_draws)
        if rows is not None:
            return rows
    out = np.empty((n_draws, size), dtype=np.int64)
    for t in range(n_draws):
        out[t] = np.sort(rng.choice(n, size, replace=False))
    return out


def _floyd_applies(rng, n, size):
    return (rng.bit_generator.__class__.__name__ == "PCG64" and 0 < size < n < 2**32
            and (n <= 10000 or size <= n // 50))


def _floyd_block(rng, n, size, n_draws):
    """The block from raw outputs, or None (``rng`` untouched) when a draw needs a redraw."""
    bitgen = rng.bit_generator
    before = bitgen.state
    per_draw = 2 * size - 1  # Floyd's size values, then size - 1 for the shuffle
    n_halves = n_draws * per_draw
    kept = int(before["has_uint32"])
    n_raw = (n_halves - kept + 1) // 2
    raw = bitgen.random_raw(n_raw)
    halves = np.empty(2 * n_raw + kept, dtype=np.uint64)  # low, then high half of each
    halves[:kept] = before["uinteger"]
    halves[kept:] = raw.astype("<u8").view("<u4")
    words = halves[:n_halves].reshape(n_draws, per_draw)
    ranges = np.concatenate([np.arange(n - size, n), np.arange(size - 1, 0, -1)]).astype(np.uint64)
    excl = ranges + np.uint64(1)
    scaled = words * excl  # below 2**64: both factors are below 2**32
    threshold = (np.uint64(2**32) - excl) % excl
    if np.any((scaled & _LOW32) < threshold):
        bitgen.state = before
        return None
    values = (scaled[:, :size] >> _SHIFT32).astype(np.int64)
    state = bitgen.state
    state["has_uint32"] = 2 * n_raw + kept - n_halves  # the last high half, if left over
    if n_raw:  # as next_uint32 leaves it: the high half of the last 64-bit output
        state["uinteger"] = int(raw[-1] >> _SHIFT32)
    bitgen.state = state
    return _floyd_sets(values, n - size)


def _floyd_sets(values, first):
    """Floyd's sets from the draws ``values[:, s]`` of ``bounded(first + s)``, sorted per row.

    Floyd's step ``s`` keeps ``values[:, s]`` unless it was chosen before, and then takes
    ``first + s``. Unless a later value equals such a replacement (rare: rows of that kind
    are replayed step by step), a value was chosen before exactly when it repeats an
    earlier value of its row, which a stable sort of every row finds at once.
    """
    n_draws, size = values.shape
    step = np.arange(size)
    # every row sorted by value, then step (below n * size < 2**63, see _floyd_applies)
    ordered, order = np.divmod(np.sort(values * size + step, axis=1), size)
    places = np.arange(n_draws)[:, None] * size + order  # flat positions in values
    repeated = np.zeros(values.shape, dtype=bool)
    repeated.ravel()[places[:, 1:][ordered[:, 1:] == ordered[:, :-1]]] = True
    chosen = np.where(repeated, first + step, values)
    source = values - first  # the step whose replacement a value would equal
    later = (source >= 0) & (source < step)
    chained = np.zeros(n_draws, dtype=bool)
    if later.any():
        rows, steps = np.nonzero(later)
        chained[rows[repeated[rows, source[rows, steps]]]] = True
    for t in np.flatnonzero(chained):
        taken = set()
        for s in range(size):
            value = int(values[t, s]) if values[t, s] not in taken else first + s
            taken.add(value)
            chosen[t, s] = value
    chosen.sort(axis=1)
    return chosen
