"""Opening one dataset on every rank (run serially and under ``mpiexec -n 2 pytest -m mpi``)."""

import numpy as np
import pytest

from hpcswarm.comm import world
from hpcswarm.data import load_dataset


@pytest.mark.mpi
def test_every_rank_maps_the_bundled_file():
    with world() as comm:
        dataset = load_dataset("builtin:srbct")
        assert dataset.memory_mapped and isinstance(dataset.X, np.memmap)
        digests = comm.allgather((float(np.asarray(dataset.X).sum()), dataset.y.tobytes(), dataset.sha256))
        assert all(d == digests[0] for d in digests)
