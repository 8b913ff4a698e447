"""A distance state's memory, its pages faulted in by one call, is ordinary float64 memory."""

import mmap

import numpy as np
import pytest

from hpcswarm.fitness import prefaulted
from hpcswarm.fitness.prefaulted import PREFAULT_BYTES, prefaulted_empty


@pytest.mark.parametrize("shape", [(3, 5), (512, 512), (300, 1000)])
def test_an_array_of_any_size_is_writable_contiguous_float64(shape):
    array = prefaulted_empty(shape)
    assert array.shape == shape and array.dtype == np.float64
    assert array.flags.c_contiguous and array.flags.writeable
    rng = np.random.default_rng(0)
    left, right = rng.normal(size=(7, shape[0])), rng.normal(size=(7, shape[1]))
    np.matmul(left.T, right, out=array)  # a product written in place, as a state's Gram
    assert np.array_equal(array, left.T @ right)


def owner(array):
    """The object that holds an array's memory (the end of its chain of bases)."""
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


@pytest.mark.skipif(not hasattr(mmap, "MAP_POPULATE"), reason="no MAP_POPULATE here")
def test_a_large_array_is_its_own_populated_mapping_and_a_small_one_is_not():
    large = prefaulted_empty((PREFAULT_BYTES // 8,))
    assert isinstance(owner(large), mmap.mmap)
    small = prefaulted_empty((PREFAULT_BYTES // 8 - 1,))
    assert not isinstance(owner(small), mmap.mmap)


def test_a_mapping_that_fails_is_a_memory_error(monkeypatch):
    class Refused:
        MAP_PRIVATE, MAP_ANONYMOUS, MAP_POPULATE = mmap.MAP_PRIVATE, mmap.MAP_ANONYMOUS, 0x8000

        @staticmethod
        def mmap(*args, **kwargs):
            raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(prefaulted, "mmap", Refused)
    with pytest.raises(MemoryError, match="distance state"):
        prefaulted_empty((1024, 1024))
