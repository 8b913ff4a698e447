"""A stand-in for CuPy that forwards to numpy: the GPU scripts run end to end on a CPU.

With ``tests/numpy_cupy`` first on ``PYTHONPATH``, ``import cupy`` finds this module:
every array function is numpy's (module ``__getattr__``), and the few CUDA calls that
hpcswarm and its GPU benchmark make (device count, device selection and properties, its
memory and memory pool, synchronisation, ``asnumpy``) answer as one device named
``"numpy stand-in"`` would. Its arrays are the host's, so its memory is the host's:
``memGetInfo`` gives the host's available and physical memory (a test that needs a small
device replaces it), and its pool keeps no block.
``benchmarks/gpu_check.sh --small`` uses it on a machine without CuPy; nothing here is
imported by hpcswarm itself.
"""

import os
import types

import numpy

__version__ = f"numpy-stand-in ({numpy.__version__})"

DEVICE_NAME = b"numpy stand-in"


class CUDARuntimeError(RuntimeError):
    """CuPy's error of a failing CUDA runtime call (never raised by the stand-in)."""


class Device:
    """One device, id 0: ``use`` and ``synchronize`` have nothing to do on the host."""

    def __init__(self, device=0):
        self.id = int(device)

    def use(self):
        return None

    def synchronize(self):
        return None


def _device_count():
    return 1


def _memory_info():
    """``(free, total)`` bytes, as ``cudaMemGetInfo``: the host's available and physical
    memory, which the stand-in's arrays take."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


def _device_properties(index):
    return {"name": DEVICE_NAME, "totalGlobalMem": _memory_info()[1]}


runtime = types.SimpleNamespace(getDeviceCount=_device_count,
                                getDeviceProperties=_device_properties,
                                memGetInfo=_memory_info,
                                CUDARuntimeError=CUDARuntimeError)
cuda = types.SimpleNamespace(Device=Device, runtime=runtime)


class MemoryPool:
    """CuPy's pool of device blocks kept for reuse: the stand-in's arrays are numpy's, given
    back to the host when dropped, so it keeps none."""

    def free_bytes(self):
        return 0


_POOL = MemoryPool()


def get_default_memory_pool():
    """The pool of device blocks (:class:`MemoryPool`)."""
    return _POOL


def asnumpy(array):
    """``array`` as a numpy array (already one)."""
    return numpy.asarray(array)


def __getattr__(name):
    return getattr(numpy, name)
