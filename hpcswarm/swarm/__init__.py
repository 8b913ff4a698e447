"""Swarm state, operators and the methods of the papers, over one shared loop.

>>> from hpcswarm.swarm import ALGORITHMS, algorithm_params
>>> sorted(ALGORITHMS)[:3]
['bpso', 'cbpso', 'cso']
"""

from hpcswarm.swarm.core import HISTORY_FIELDS, SearchAlgorithm, SearchResult
from hpcswarm.swarm.registry import ALGORITHMS, algorithm_class, algorithm_params

__all__ = [
    "ALGORITHMS",
    "HISTORY_FIELDS",
    "SearchAlgorithm",
    "SearchResult",
    "algorithm_class",
    "algorithm_params",
]
