"""Data layer: the hpcswarm HDF5 format, memory-mapped opening, converters per input format.

May import: :mod:`hpcswarm.datasets` (the bundled and generated sets), :mod:`hpcswarm.params`
(the conversion options are ``Param`` rows), :mod:`hpcswarm.fitness` (below it, not used),
:mod:`hpcswarm.store` (atomic writes, encoding tags, the outputs check) and the root's
foundation (errors, system, comm, inputs: the sparse matrix rules an AnnData file is read
by). Never the swarm, the search, the job or anything above.

>>> from hpcswarm.data import load_dataset
>>> ds = load_dataset("builtin:srbct")
>>> ds.X.shape, ds.class_names
((83, 2308), ['BL', 'EWS', 'NB', 'RMS'])
"""

from hpcswarm.data.convert import ConvertReport, convert_file, read_dataset
from hpcswarm.data.dataset import Dataset
from hpcswarm.data.examples import example_path
from hpcswarm.data.hdf5 import open_dataset, write_dataset
from hpcswarm.data.sources import load_dataset

__all__ = [
    "ConvertReport",
    "Dataset",
    "convert_file",
    "example_path",
    "load_dataset",
    "open_dataset",
    "read_dataset",
    "write_dataset",
]
