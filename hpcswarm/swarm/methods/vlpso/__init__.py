"""Variable-length PSO (Tran, Xue & Zhang 2019): every file of the method together.

:mod:`~hpcswarm.swarm.methods.vlpso.algorithm` is the search;
:mod:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty` orders the genes (Sec. III-A);
:mod:`~hpcswarm.swarm.methods.vlpso.divisions` cuts the swarm into lengths (Sec. III-B, III-C);
:mod:`~hpcswarm.swarm.methods.vlpso.exemplars` chooses the comprehensive-learning exemplars
(Sec. III-D); :mod:`~hpcswarm.swarm.methods.vlpso.local_search` and its compiled pass
:mod:`~hpcswarm.swarm.methods.vlpso.redundancy_kernel` are the optional local search of the
authors' code.
"""
