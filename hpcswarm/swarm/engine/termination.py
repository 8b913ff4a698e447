"""When a search stops: a rule object asked once per round, after the round is recorded.

As pymoo's ``Termination``: the loop (:class:`~hpcswarm.swarm.engine.loop.SearchAlgorithm`) asks
``termination.done(search)``; a method picks its rule
(:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.default_termination`), a caller
may inject another.
"""

from dataclasses import dataclass
from typing import Optional, Protocol


class Termination(Protocol):
    """Anything that says whether a search is finished."""

    def done(self, search) -> bool:
        """Whether ``search`` (after its last recorded round) must stop."""

    def last_round(self, state: dict, n_genes: int) -> int:
        """The last round the rule lets a search of ``n_genes`` genes play, given its method
        state ``state`` (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.method_state`; a
        resumed snapshot of a later round is damaged)."""


@dataclass(frozen=True)
class RoundLimit:
    """Stop after ``n_rounds`` evaluation rounds (the initial one included), or once the
    best fitness reaches ``target`` (FSR's "fitness = 1", Xue, Zhang & Browne 2012,
    Algorithm 2 line 8).

    A round is one evaluation of (part of) the swarm: 70 rounds of 100 particles are the
    "7000 evaluations" of Tran et al. 2016.
    """

    n_rounds: int
    target: Optional[float] = None

    def done(self, search) -> bool:
        if self.target is not None and search.evaluator.best_fitness >= self.target:
            return True
        return search.iteration + 1 >= self.n_rounds

    def last_round(self, state, n_genes) -> int:
        return self.n_rounds - 1


@dataclass(frozen=True)
class MethodStop:
    """Stop when the method says so (``search.finished()``: a greedy search with no
    improving step, the single round of all-genes)."""

    def done(self, search) -> bool:
        return bool(search.finished())

    def last_round(self, state, n_genes) -> int:
        """``n_genes``: a greedy search adds or removes one gene a round."""
        return n_genes
