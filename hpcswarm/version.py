"""The package's version, in a module that imports nothing.

Written into every dataset, conversion cache key and results file hpcswarm makes; the data
layer and the job read it here, so that none of them imports the package root (which offers
the public face, :mod:`hpcswarm.api`, on first use).
"""

__version__ = "0.1.0"
