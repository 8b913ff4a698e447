"""hpcswarm: MPI-parallel particle-swarm gene selection with a k-NN wrapper fitness."""

from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = ["Selection", "SwarmFeatureSelector", "__version__", "select"]

_LAZY = {"SwarmFeatureSelector": "hpcswarm.selector", "select": "hpcswarm.api",
         "Selection": "hpcswarm.api"}
"""Public names imported on first use, so that ``import hpcswarm`` loads neither scikit-learn
nor MPI (nor pandas, anndata or matplotlib)."""

if TYPE_CHECKING:  # what a type checker reads for the lazy names
    from hpcswarm.api import Selection, select
    from hpcswarm.selector import SwarmFeatureSelector


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hpcswarm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
