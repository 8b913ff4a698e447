"""Swarm state, operators and the methods of the papers, over one shared loop.

By role: :mod:`~hpcswarm.swarm.engine` (the loop, the evaluation service, the swarm's state
and snapshots), :mod:`~hpcswarm.swarm.operators` (what methods are composed from) and
:mod:`~hpcswarm.swarm.methods` (one module per paper, VLPSO's files together); the methods'
parameters in :mod:`~hpcswarm.swarm.params`. The methods by name are in
:mod:`hpcswarm.selection.methods`.

May import: :mod:`hpcswarm.data` and :mod:`hpcswarm.datasets` (below it, not used),
:mod:`hpcswarm.params`, :mod:`hpcswarm.fitness`, :mod:`hpcswarm.store` (the records' history
fields) and the root's foundation (errors, system, comm). Never the baselines, the method
registry (:mod:`hpcswarm.selection`), the job or anything above.

>>> from hpcswarm.swarm import HISTORY_FIELDS
>>> HISTORY_FIELDS[:2]
('iteration', 'best_fitness')
"""

from hpcswarm.store.records import HISTORY_FIELDS
from hpcswarm.swarm.engine.evaluation import EvaluationService
from hpcswarm.swarm.engine.loop import SearchAlgorithm, SearchHooks
from hpcswarm.swarm.engine.result import SearchResult

__all__ = ["HISTORY_FIELDS", "EvaluationService", "SearchAlgorithm", "SearchHooks",
           "SearchResult"]
