"""A scorer that reports the steps of a backward elimination as they are taken.

The pruning refinements (:mod:`hpcswarm.signatures.refine`) walk from the search's subset
down one gene a step, each step one call of ``score_single_flips`` over the genes left: on
a search of hundreds of genes, the longest part of a task after the search. Wrapping the
scorer lets a job report that walk without the rules knowing of progress.
"""


class WatchedScorer:
    """``scorer`` with each ``score_single_flips`` call first reported as
    ``phase(name, genes_left)``; every other attribute is the scorer's own.

    Parameters
    ----------
    scorer : Scorer
        The task's scorer (:mod:`hpcswarm.fitness.scorer`).
    phase : callable
        ``phase(name, genes_left)``, the :class:`~hpcswarm.swarm.engine.loop.SearchHooks` hook.
    name : str
        What the steps are, e.g. ``"refine prune-compact"``.
    """

    def __init__(self, scorer, phase, name):
        self._scorer, self._phase, self._name = scorer, phase, name

    def score_single_flips(self, state, genes, *args, **kwargs):
        """Report ``len(genes)`` genes left, then score their one-gene flips."""
        self._phase(self._name, len(genes))
        return self._scorer.score_single_flips(state, genes, *args, **kwargs)

    def __getattr__(self, attribute):
        return getattr(self._scorer, attribute)
