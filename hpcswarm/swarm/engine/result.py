"""What a search returns: its result, plain data.

A search (:class:`~hpcswarm.swarm.engine.loop.SearchAlgorithm`) records one history row per round
(the fields of :data:`hpcswarm.store.records.HISTORY_FIELDS`) and ends with a :class:`SearchResult`,
plain data readable without the engine.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SearchResult:
    """Outcome of one search.

    Attributes
    ----------
    algorithm : str
    params : dict
        Every parameter of the run, defaults included.
    mask : ndarray of shape (n_genes,), bool
        The selected subset, exactly as it was evaluated.
    fitness : float
        Its fitness (maximised; ``-error`` for the error objective).
    history : list of dict
        One row per round with the keys of :data:`~hpcswarm.store.records.HISTORY_FIELDS`.
    extra : dict
        Method-specific records (mechanism events, rankings).
    front : list of dict
        The best subset of each size among every subset the search evaluated, dominated
        ones dropped where the objective allows (:mod:`hpcswarm.swarm.engine.front`), in
        increasing size: ``size``, ``fitness`` (as scored during the search), ``genes``.
    refined : Refined or None
        The subset refined after the search (:mod:`hpcswarm.signatures.refine`), when asked for.
    """

    algorithm: str
    params: dict
    mask: np.ndarray
    fitness: float
    history: list
    extra: dict = field(default_factory=dict)
    front: list = field(default_factory=list)
    refined: object = None

    @property
    def genes(self):
        """Indices of the selected genes, ndarray of int."""
        return np.flatnonzero(self.mask)
