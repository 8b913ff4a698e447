"""Memory for a distance state, its pages faulted in by one system call.

A particle's distance state (:class:`~hpcswarm.fitness.incremental.DistanceState`, 8 bytes a
held-out row and sample: 8 MB at 1,000 samples, 800 MB at 10,000) is written once into
memory the process has never used. Memory from ``np.empty`` is faulted in a page at a time as
it is first written, and where each fault is costly (a virtual machine whose host backs the
guest's memory only when it is touched) that dominates the product: on the project's 2-core
VM, 100 arrays of 8 MB took 5.1 to 5.4 s to fill from ``np.empty``, against 0.28 to 0.39 s
to map with ``MAP_POPULATE`` (the kernel faults every page in one call, Linux's
``mmap(2)``) and 0.04 s to fill after that (2026-12-06, each in a fresh process 15 s after the
last). The values are those of any other memory; only the time to first touch them differs.
"""

import math
import mmap

import numpy as np

PREFAULT_BYTES = 2**20
"""Smallest array given its own populated mapping; smaller ones come from ``np.empty`` (a
mapping is a system call and a whole number of pages, and small arrays reuse the
allocator's memory)."""


def prefaulted_empty(shape):
    """An uninitialised C-contiguous float64 array of ``shape`` whose pages are already in
    memory: an anonymous private mapping made with ``MAP_POPULATE`` where the platform has
    it and the array holds at least :data:`PREFAULT_BYTES`, else ``np.empty(shape)``.

    The mapping lives as long as the array (it is the array's ``base``); :class:`OSError`
    from the mapping (no memory left for it) is raised as :class:`MemoryError`, as
    ``np.empty`` would raise it."""
    n_bytes = 8 * math.prod(shape)
    populate = getattr(mmap, "MAP_POPULATE", None)
    if populate is None or n_bytes < PREFAULT_BYTES:
        return np.empty(shape)
    try:
        memory = mmap.mmap(-1, n_bytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate)
    except OSError as error:
        raise MemoryError(f"cannot map {n_bytes} bytes for a distance state: {error}") from error
    return np.frombuffer(memory, dtype=np.float64).reshape(shape)
