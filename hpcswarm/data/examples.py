"""Datasets bundled inside the package (see :mod:`hpcswarm.datasets`)."""

from importlib import resources
from pathlib import Path

from hpcswarm.errors import DataError

EXAMPLES = ("srbct",)


def example_path(name="srbct"):
    """Path of the bundled example dataset ``name`` (an hpcswarm HDF5 file).

    Raises
    ------
    DataError
        ``name`` is not a bundled dataset.
    """
    if name not in EXAMPLES:
        raise DataError(f"builtin:{name}: no such bundled dataset (bundled: {', '.join(EXAMPLES)})")
    return Path(resources.files("hpcswarm.datasets").joinpath(f"{name}.h5"))
