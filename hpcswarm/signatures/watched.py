"""A scorer that reports the steps of a refinement as they are taken.

The pruning refinements (:mod:`hpcswarm.signatures.refine`) walk from the search's subset
down one gene a step, each step one call of ``score_single_flips`` over the genes left: on
a search of hundreds of genes, the longest part of a task after the search. The exchange
rule (:func:`~hpcswarm.signatures.saturation.saturation_exchange`) scores every exchange of a
step in one call of ``score_flips``, at most as many steps as the subset has genes, each of
the same cost. Wrapping the scorer lets a job report those steps without the rules knowing of
progress.
"""


class WatchedScorer:
    """``scorer`` with each ``score_single_flips`` call first reported as
    ``phase(name, genes_left)``, and each ``score_flips`` call as ``phase(name, None)`` (an
    exchange step leaves the subset's size as it is, so it has no genes left to count down);
    every other attribute is the scorer's own.

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

    def score_flips(self, state, flips, *args, **kwargs):
        """Report a step, then score ``flips``."""
        self._phase(self._name, None)
        return self._scorer.score_flips(state, flips, *args, **kwargs)

    def __getattr__(self, attribute):
        return getattr(self._scorer, attribute)
