"""Opening one dataset on every rank (run serially and under ``mpiexec -n 2 pytest -m mpi``)."""

import os

import numpy as np
import pytest

from hpcswarm.comm import world
from hpcswarm.data import load_dataset
from hpcswarm.data.sources import open_data


@pytest.mark.mpi
def test_every_rank_maps_the_bundled_file():
    with world() as comm:
        dataset = open_data("builtin:srbct")
        assert dataset.memory_mapped and isinstance(dataset.X, np.memmap)
        digests = comm.allgather((float(np.asarray(dataset.X).sum()), dataset.y.tobytes(), dataset.sha256))
        assert all(d == digests[0] for d in digests)


@pytest.mark.mpi
def test_each_rank_checks_its_block_of_genes_and_all_agree(tmp_path_factory, monkeypatch):
    """The value check is split: rank r scans block_range(n_genes, size, r) alone, and the
    combined findings name the same first bad cell on every rank."""
    import h5py

    import hpcswarm.data.values as values
    from hpcswarm.comm import block_range
    from hpcswarm.data import write_dataset
    from hpcswarm.data.dataset import Dataset
    from hpcswarm.errors import DataError

    with world() as comm:
        folder = comm.bcast(str(tmp_path_factory.mktemp("blocks")) if comm.rank == 0 else None)
        path = f"{folder}/d.h5"
        if comm.rank == 0:
            X = np.random.default_rng(0).normal(size=(6, 9))
            write_dataset(Dataset(X=X, y=np.arange(6) % 2, class_names=["a", "b"],
                                  gene_names=[f"g{j}" for j in range(9)]), path)
            os.utime(path)  # touched since it was written: its writer's check is not trusted
        comm.barrier()
        scanned = []
        original = values.scan_genes
        monkeypatch.setattr(values, "scan_genes",
                            lambda X, Xg, a, b: scanned.append((a, b)) or original(X, Xg, a, b))
        load_dataset(path, comm)
        assert scanned == [block_range(9, comm.size, comm.rank)]
        comm.barrier()
        if comm.rank == 0:
            with h5py.File(path, "r+") as f:
                f["X_genes"][8, 1] = 0.5  # the last gene: the last rank's block
        comm.barrier()
        with pytest.raises(DataError, match=r"'X_genes' is not the transpose .* sample 2, "
                                            r"gene 'g8'"):
            load_dataset(path, comm)
