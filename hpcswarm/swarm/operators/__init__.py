"""What the methods are composed from: particle operators, initial positions and mechanisms.

:mod:`~hpcswarm.swarm.operators.particle` holds the functions of one particle's arrays (moves,
thresholds, repairs); :mod:`~hpcswarm.swarm.operators.initialisation` the initial positions;
:mod:`~hpcswarm.swarm.operators.mechanisms` the steps a PSO-family method adds to its round,
among them the local search of :mod:`~hpcswarm.swarm.operators.local_search`;
:mod:`~hpcswarm.swarm.operators.ranking` the single-gene ranking and
:mod:`~hpcswarm.swarm.operators.mean` the swarm's mean position. They use the engine, never a
method.
"""
