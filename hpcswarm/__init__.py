"""hpcswarm: MPI-parallel particle-swarm gene selection with a k-NN wrapper fitness.

The public API is ``select``, ``Selection`` and ``SwarmFeatureSelector`` (imported on first
use), and :func:`hpcswarm.data.load_dataset`; the command line is ``python -m hpcswarm``.

The package is in layers, bottom first; a module imports its own layer and those below,
never one above (``tests/test_import_graph.py`` checks it; each package's docstring says
why it sits where it does):

1. the root's foundation: :mod:`~hpcswarm.version`, :mod:`~hpcswarm.errors`,
   :mod:`~hpcswarm.termination` (SIGTERM outside a job's rounds, which the atomic writes
   of the store check before an output appears), :mod:`~hpcswarm.system` (what the machine offers), :mod:`~hpcswarm.comm` (with
   :mod:`~hpcswarm.node_array`, the arrays a node's ranks share, the only modules that know
   MPI) and :mod:`~hpcswarm.inputs` (the validators of data given in
   Python, for ``select``, the selector and ``run_search``, and the sparse-matrix rules a
   file's AnnData is read by);
2. :mod:`hpcswarm.store`: atomic writes, allowed outputs, encoding tags, typed records;
3. :mod:`hpcswarm.fitness`: the k-NN cross-validation engine;
4. :mod:`hpcswarm.params`: one declaration per parameter;
5. :mod:`hpcswarm.datasets`: bundled and generated sets;
6. :mod:`hpcswarm.data`: the HDF5 format and the readers;
7. :mod:`hpcswarm.swarm`: the engine, the operators and the methods of the papers;
8. :mod:`hpcswarm.baselines`: the greedy wrappers and PCA + k-NN;
9. :mod:`hpcswarm.signatures`: refinements, stability, the final signature, gene lists;
10. :mod:`hpcswarm.results`: results files, the report, plots;
11. :mod:`hpcswarm.selection`: one search (methods by name, its specification, preprocessing);
12. :mod:`hpcswarm.run`: a job (job files, plan, protocols, task farm, checkpoint);
13. the public face: :mod:`~hpcswarm.selector`, :mod:`~hpcswarm.api` and this package,
    which offers their names;
14. the command line: :mod:`~hpcswarm.cli` and ``__main__``.
"""

from typing import TYPE_CHECKING

from hpcswarm.version import __version__

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
