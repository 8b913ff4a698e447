"""hpcswarm: MPI-parallel particle-swarm gene selection with a k-NN wrapper fitness."""

__version__ = "0.1.0"
