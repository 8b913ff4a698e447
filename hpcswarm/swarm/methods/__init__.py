"""The methods of the papers, one module each, VLPSO's files in
:mod:`~hpcswarm.swarm.methods.vlpso`.

:mod:`~hpcswarm.swarm.methods.particle_swarm` is the pbest/gbest round the PSO family shares;
:mod:`~hpcswarm.swarm.methods.pso` (Tran et al. 2016), :mod:`~hpcswarm.swarm.methods.bpso`
(Kennedy & Eberhart 1997; Chuang et al. 2011), :mod:`~hpcswarm.swarm.methods.cso` (Gu et al.
2018), :mod:`~hpcswarm.swarm.methods.fsipso` (Li et al. 2021) and
:mod:`~hpcswarm.swarm.methods.subset_ranking` (Xue et al. 2012) build on it or on the engine's
loop alone. They are found by name in :mod:`hpcswarm.selection.methods`.
"""
