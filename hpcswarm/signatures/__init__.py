"""From a search's subset to a signature: refinements, stability, the final signature, gene lists.

- :mod:`~hpcswarm.signatures.refinements`: the registry of ``refine`` rules
  (:data:`~hpcswarm.signatures.refinements.REFINEMENTS`), one row per rule naming its kind,
  what it reads and its report label; it imports none of the rules.
- :mod:`~hpcswarm.signatures.refine`: the ``trim`` rules (``prune``, ``prune-compact``,
  ``prune-margin``).
- :mod:`~hpcswarm.signatures.relevance`: relevance rankings, one class against the rest, cut
  by the inner validation (the ``rank`` rules and ``relevance-subset``).
- :mod:`~hpcswarm.signatures.saturation`: the margin's choice where the search's subset
  classifies every inner prediction (the ``saturation`` rules, ``saturation-margin`` and
  ``saturation-exchange``).
- :mod:`~hpcswarm.signatures.purity`: the choice among the search's subset and its particles'
  personal bests by a fresh split and the purity of the held-out samples' neighbourhoods
  (the ``swarm`` rules: ``neighbour-purity``; ``neighbour-purity-1se``, the smallest
  candidate within one standard error of the purest; ``neighbour-purity-anova``, the same
  with the ANOVA filter's top genes at the swarm's sizes among the candidates;
  ``neighbour-purity-1se-anova``, the ``-1se`` choice replaced by the filter's genes at its
  size where the fresh split ranks those first).
- :mod:`~hpcswarm.signatures.subsample`: stability selection and a consensus from searches on
  subsamples (the ``subsample`` rules).
- :mod:`~hpcswarm.signatures.stability`: how far the selections of the folds and runs agree
  (Kuncheva, Jaccard, Nogueira et al., Sechidis et al.).
- :mod:`~hpcswarm.signatures.final`: the final signature of a job, one search on every
  sample beside the estimate of the folds (``/final`` of a results file).
- :mod:`~hpcswarm.signatures.genelist`: the gene lists a signature is written as and
  ``evaluate --genes`` reads.

Why together: what turns the genes a search selected into the signature a user publishes,
and how far it can be trusted. A search applies the rules (:mod:`hpcswarm.selection.search`),
so they sit below the search; the report reads their registry, the stability and the final
signature, so they sit below the results too.

May import: :mod:`hpcswarm.baselines`, :mod:`hpcswarm.swarm`, :mod:`hpcswarm.data`,
:mod:`hpcswarm.datasets`, :mod:`hpcswarm.params`, :mod:`hpcswarm.fitness`,
:mod:`hpcswarm.store` and the root's foundation (errors, system, comm). Never
:mod:`hpcswarm.results`, :mod:`hpcswarm.selection`, :mod:`hpcswarm.run`, the public API or
the command line.
"""
