"""One search, declared and run: the method registry, the search's specification, its memory,
in-fold preprocessing.

- :mod:`~hpcswarm.selection.methods`: every method by name
  (:data:`~hpcswarm.selection.methods.METHODS`: the swarms of the papers and the baselines)
  and its checked parameters.
- :mod:`~hpcswarm.selection.spec`: :class:`~hpcswarm.selection.spec.SearchSpec`, one
  declaration of a search (method, parameters, refinement, size cap, preprocessing, sample
  shards, device); the job keys, the ``run`` flags and the selector's arguments derive from
  its rows.
- :mod:`~hpcswarm.selection.search`: :func:`~hpcswarm.selection.search.run_search`, one
  search on one matrix: the fitness from the parameters, the method, its refinement, the
  result.
- :mod:`~hpcswarm.selection.preprocess`: in-fold preprocessing steps, fitted on a task's
  training rows.
- :mod:`~hpcswarm.selection.prepare`: :func:`~hpcswarm.selection.prepare.prepare`, the one
  path from a door's checked samples to the gene-major view a search reads (preprocessing,
  exact scaling, the one copy), called by every front door.
- :mod:`~hpcswarm.selection.memory`: the memory one rank needs for one search.

Why together: what one search is, whoever runs it (a job's protocols, the selector,
``hpcswarm run --algorithm``). It sits above the methods' own packages (:mod:`hpcswarm.swarm`,
:mod:`hpcswarm.baselines`), so that neither imports the other's registry, and above
:mod:`hpcswarm.signatures`, whose rules a search applies.

May import: :mod:`hpcswarm.results`, :mod:`hpcswarm.signatures`, :mod:`hpcswarm.baselines`,
:mod:`hpcswarm.swarm`, :mod:`hpcswarm.data`, :mod:`hpcswarm.datasets`, :mod:`hpcswarm.params`,
:mod:`hpcswarm.fitness`, :mod:`hpcswarm.store` and the root's foundation (errors, system,
comm). Never :mod:`hpcswarm.run`, the public API or the command line.
"""
