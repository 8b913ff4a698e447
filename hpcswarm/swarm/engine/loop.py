"""The loop shared by every method: initialise, step until done, result.

A method is a :class:`SearchAlgorithm` subclass that implements ``initialise`` (round 0) and
``step`` (every later round); :meth:`SearchAlgorithm.run` repeats ``step`` until its
termination rule (:mod:`hpcswarm.swarm.engine.termination`) says it is done. The method proposes
subsets; an injected evaluation service
(:class:`~hpcswarm.swarm.engine.evaluation.EvaluationService`)
scores them and keeps the account described below.
A *round* is one evaluation of (part of) the swarm, so ``n_iterations`` counts evaluation
rounds including the initial one: 70 rounds of 100 particles are the "7000 evaluations" of
Tran et al. Every subset the method evaluates is offered to the evaluation service, which
keeps the best ever seen *with the fitness it was scored with*: the returned mask is always
one that was evaluated, and re-evaluating it gives the reported fitness.

Ordering of subsets (all methods, :mod:`hpcswarm.swarm.engine.ordering`): higher fitness first, then
fewer genes, then the lower particle index. Among different subsets of
equal fitness and size, the best ever kept is the first met in the order (round, swarm
evaluation before local search, particle index, local-search try), an order a parallel
reduction can reproduce.

Parallel runs (``comm`` of several ranks). Particles are dealt to the ranks
(:class:`~hpcswarm.swarm.engine.deal.Deal`): in contiguous blocks of equal count, or, for a
method whose particles differ in expected cost (:meth:`SearchAlgorithm.expected_genes`), by
that cost; ``local`` is a rank's particles in increasing index. A rank moves and evaluates
only its own particles with their own generators; every quantity the methods share is
settled by collectives on the (fitness, size) scalars, with rows of ``n_genes`` values
travelling only when they must:

* the best subset ever evaluated: each rank keeps the first strictly best subset of the round
  in its own scan order (its particles in increasing index); an allgather of (fitness, size,
  phase, particle) per rank finds the global first best under the order above, and only
  that rank broadcasts the mask (packed bits, ``n_genes / 8`` bytes) when it beats the best
  so far;
* distinct subsets (``new_subsets``) and the archive: the 16-byte keys of the subsets
  evaluated in a round are allgathered, so every rank holds the same set of keys seen and
  the same archive, processed in particle-index order (``O(n_evaluated x 16)`` bytes);
* ``evaluations`` is counted by the search, not read from the fitness engine: per round,
  the non-empty subsets of the swarm that were computed (archive misses when the archive is
  on; every evaluated particle when it is off) plus every non-empty local-search try. It is
  then the same with any number of ranks (the engine's own counter, whose within-batch
  de-duplication sees only one rank's particles, is not). A subset that could not matter,
  decided without its distances (the ``needed`` rule of
  :meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.evaluate`,
  :func:`hpcswarm.swarm.operators.local_search.local_search`), counts as the evaluation the method
  makes.

With these rules the history (every key but ``seconds``), the selected subset and its
fitness are bit-identical for any number of ranks, 1 included; ``extra["comm"]`` holds the
bytes communicated per round, summed over the ranks.
"""

import abc
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from hpcswarm.swarm.engine.evaluation import EvaluationService
from hpcswarm.swarm.engine.handover import hand_over
from hpcswarm.swarm.engine.result import SearchResult
from hpcswarm.swarm.engine.snapshot import ArraySpec, restore_snapshot
from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.engine.state import (SwarmState, particle_streams, run_seed_sequence,
                                         swarm_stream)
from hpcswarm.swarm.engine.termination import RoundLimit, Termination

__all__ = ["SearchAlgorithm", "SearchHooks", "SearchResult"]


@dataclass(frozen=True)
class SearchHooks:
    """What a search calls at each round's end, on every rank: the one shape of a job's hooks,
    made once per task (:class:`hpcswarm.run.job.TaskHooks`) and passed unchanged from
    :func:`hpcswarm.run.protocols.run_task` through :func:`hpcswarm.selection.search.run_search` to
    the loop (:meth:`SearchAlgorithm.advance`). Every hook is optional.

    Attributes
    ----------
    progress : callable, optional
        ``progress(row)`` with the history row just recorded (a dict of
        :data:`~hpcswarm.store.records.HISTORY_FIELDS`): the task farm's hook that lets MPI progress
        operations and lets world rank 0 report progress, see :func:`hpcswarm.run.taskfarm.farm`.
    checkpoint : callable, optional
        ``checkpoint(search)`` after ``progress``: the job's hook that takes snapshots
        (:func:`hpcswarm.swarm.engine.snapshot.take_snapshot`, collective) and may stop the search
        by raising.
    interrupt : callable, optional
        ``interrupt()`` at the round's end of a search without a ``checkpoint`` hook: the
        job's hook that may stop the task by raising, called in the searches whose state the
        job does not keep (a refinement's subsample searches, :meth:`without_snapshots`; a
        resumed task runs them again, to the same result).
    phase : callable, optional
        ``phase(name, genes_left)`` from the steps after the search (a refinement's each
        elimination step, with the genes left; its each exchange step, and the baselines and
        test, with None): the job's hook that reports them
        (:class:`hpcswarm.run.progress.ProgressReporter`).
    """

    progress: Optional[Callable] = None
    checkpoint: Optional[Callable] = None
    interrupt: Optional[Callable] = None
    phase: Optional[Callable] = None

    def round_end(self, search):
        """What the loop calls after recording a round of ``search``: ``progress`` with its
        row, then ``checkpoint`` with the search, or ``interrupt`` when there is none."""
        if self.progress is not None:
            self.progress(search.history[-1])
        if self.checkpoint is not None:
            self.checkpoint(search)
        elif self.interrupt is not None:
            self.interrupt()

    def without_snapshots(self):
        """The hooks of a search run inside this one whose state no snapshot keeps (a
        refinement's subsample searches): no round reports, no snapshots, only
        ``interrupt`` and ``phase``."""
        return SearchHooks(interrupt=self.interrupt, phase=self.phase)


class SearchAlgorithm(abc.ABC):
    """Base of every method: the loop (initialise, step, done, result) and its history.

    Parameters
    ----------
    evaluator : EvaluationService
        Scores the subsets and keeps the run's account (best subset, counts, front); it
        holds the fitness engine and the communicator (:meth:`EvaluationService.for_params`
        makes the one a method's parameters ask for). Every rank of its ``comm`` builds the
        algorithm with the same arguments and calls :meth:`run`.
    params : dict
        Checked parameters (see :func:`hpcswarm.swarm.params.resolve_params`).
    seed : int or numpy.random.SeedSequence
        The run seed; particle and swarm streams are spawned from it.
    hooks : SearchHooks, optional
        What each round's end calls (none by default).
    max_genes : int, optional
        A cap on the genes of every subset the swarm evaluates, applied as a repair of the
        positions over it (methods with ``supports_max_genes``; see their ``capped_position``).
    termination : Termination, optional
        When to stop (default: :meth:`default_termination`).

    Notes
    -----
    Subclasses set ``name``, ``PARAMS`` and ``STATE`` and implement ``initialise`` and
    ``step``; they score subsets through ``self.evaluator``.
    """

    name = None
    PARAMS = ()
    PREPROCESS = ()
    """The in-fold preprocessing the method's paper reads the data through, ``(step, value)``
    pairs of :mod:`hpcswarm.selection.preprocess` (value steps only, so that the genes
    searched are the data's): the default of a search's ``preprocess``, read by every front
    door (:func:`hpcswarm.selection.spec.preprocess_steps`)."""
    supports_max_genes = False
    use_local_search = False
    """Whether the method runs a local search on a cached distance state (one at a time)."""
    scores_single_flips = False
    """Whether the method scores one-gene flips of a cached state in batches (a greedy step's
    candidates, a single-gene ranking), for the memory estimate
    (:func:`hpcswarm.fitness.evaluator.block_bytes`)."""
    STATE = ("iteration", "history", "events")
    """Attributes a later round reads, kept by a snapshot (:meth:`method_state`) with the
    evaluator's account; each subclass lists its own in its ``STATE`` (the swarm's arrays
    are kept by :mod:`hpcswarm.swarm.engine.snapshot` itself)."""
    STATE_VALUES = {"iteration": ArraySpec("i", (), 0)}
    """What the arrays and numbers of ``STATE`` must be (:meth:`state_values`); the round is
    checked against the stop rule
    (:meth:`~hpcswarm.swarm.engine.termination.Termination.last_round`) and the ties between values
    by :meth:`state_problem`."""

    def __init__(self, evaluator: EvaluationService, params: dict, seed=0,
                 hooks: Optional[SearchHooks] = None, max_genes: Optional[int] = None,
                 termination: Optional[Termination] = None):
        self.evaluator = evaluator
        self.fitness = evaluator.fitness
        self.comm = evaluator.comm
        self.params = dict(params)
        self.seed_sequence = run_seed_sequence(seed)
        self.hooks = SearchHooks() if hooks is None else hooks
        self.max_genes = None if max_genes is None else int(max_genes)
        self.n_genes = int(self.fitness.n_genes)
        self.termination = (self.default_termination(self.params, self.n_genes)
                            if termination is None else termination)
        self.iteration = -1
        self.history = []
        self.events = []
        self.started = None

    @classmethod
    def default_termination(cls, params: dict, n_genes: int) -> Termination:
        """The method's stop rule with checked ``params`` on ``n_genes`` genes:
        ``n_iterations`` rounds, or the best fitness at ``target``."""
        return RoundLimit(params["n_iterations"], params.get("target"))

    @classmethod
    def attribute_names(cls) -> tuple:
        """The attributes listed in the ``STATE`` of the class and its bases, in order."""
        return tuple(dict.fromkeys(name for klass in reversed(cls.__mro__)
                                   for name in klass.__dict__.get("STATE", ())))

    @classmethod
    def state_values(cls) -> dict:
        """The arrays and numbers of :meth:`method_state` a snapshot is checked for before it
        is restored (name -> :class:`~hpcswarm.swarm.engine.snapshot.ArraySpec`, in the order they
        are checked): the evaluator's and those the ``STATE_VALUES`` of the class and its
        bases declare."""
        specs = dict(EvaluationService.STATE_VALUES)
        for klass in reversed(cls.__mro__):
            specs.update(klass.__dict__.get("STATE_VALUES", {}))
        return specs

    @classmethod
    def state_problem(cls, state: dict, params: dict, n_genes: int):
        """What ties between the values of a method state (checked by :meth:`state_values`)
        are broken, for the method with checked ``params`` on ``n_genes`` genes (a phrase), or
        None: here the evaluator's account
        (:meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.state_problem`); a method whose
        values must agree with one another or with its parameters says so too."""
        return EvaluationService.state_problem(state, params, n_genes)

    @classmethod
    def swarm_problem(cls, arrays: dict, state: dict, params: dict, n_genes: int):
        """What ties between a snapshot's swarm ``arrays`` (checked by
        :func:`~hpcswarm.swarm.engine.snapshot.check_swarm_arrays`) and its method ``state`` are
        broken, for the method with checked ``params`` on ``n_genes`` genes (a phrase), or
        None: none here; a method with a swarm says what its particles must hold."""
        return None

    @classmethod
    def state_names(cls) -> tuple:
        """Keys of :meth:`method_state`: the evaluator's account, then
        :meth:`attribute_names`."""
        return EvaluationService.STATE + cls.attribute_names()

    def method_state(self) -> dict:
        """What a snapshot keeps of this search at a round's end (the keys of
        :meth:`state_names`; a dict, the same on every rank of ``comm``)."""
        return {**self.evaluator.state(),
                **{name: getattr(self, name) for name in self.attribute_names()}}

    def restore_method_state(self, state: dict) -> None:
        """Take back what :meth:`method_state` returned (on a search built with the same
        arguments)."""
        state = dict(state)
        self.evaluator.restore({name: state.pop(name) for name in EvaluationService.STATE})
        for name, value in state.items():
            setattr(self, name, value)

    @classmethod
    def validate(cls, params):
        """Checks that involve several parameters (ParameterError); single keys are checked
        by ``PARAMS``."""

    @classmethod
    def swarm_size(cls, params, n_genes):
        """Particles the method runs with ``params`` on ``n_genes`` genes (for the memory
        estimate, :meth:`hpcswarm.swarm.engine.state.SwarmState.bytes_needed`):
        ``params["n_particles"]``, 1 for a method without a swarm."""
        return int(params.get("n_particles", 1))

    @classmethod
    def cached_states(cls, params):
        """Cached distance states of the fitness engine the method with checked ``params``
        holds at once beside its swarm (for the memory estimate,
        :func:`hpcswarm.fitness.evaluator.scorer_bytes`): here one with a local search, else
        none; a method that keeps one otherwise says so."""
        return int(cls.use_local_search)

    @classmethod
    def table_bytes(cls, params, n_samples, n_genes):
        """Bytes of the tables the method with checked ``params`` builds from the
        ``n_samples`` x ``n_genes`` training matrix beside its swarm and the engine's states
        (for the memory estimate): none here; a method that builds one says so."""
        return 0

    # ------------------------------------------------------------------ the loop
    def run(self, resume=None) -> "SearchResult":
        """Initialise, step until done, and return the :class:`SearchResult`.

        ``resume``: a snapshot of this search (:func:`hpcswarm.swarm.engine.snapshot.take_snapshot`)
        to continue from instead of initialising; the result is the uninterrupted one.
        """
        if resume is None:
            self.advance()
        else:
            restore_snapshot(self, resume)
        while not self.done():
            self.advance()
        return self.result()

    def advance(self):
        """Play the next round (round 0 is :meth:`initialise`, later ones :meth:`step`) and
        record it."""
        if self.iteration < 0:
            self.started = time.perf_counter()
            self.iteration = 0
            self.initialise()
        else:
            self.iteration += 1
            self.step()
        self.record()
        self.hooks.round_end(self)

    @abc.abstractmethod
    def initialise(self):
        """Round 0: build and evaluate the initial swarm."""

    @abc.abstractmethod
    def step(self):
        """One later round: move, evaluate, update the bests."""

    def done(self) -> bool:
        """Whether the termination rule stops the search after the round just recorded."""
        return self.termination.done(self)

    @classmethod
    def swarm_shape(cls, params: dict, n_genes: int):
        """(n_particles, n_genes) of the swarm a snapshot of this method with checked
        ``params`` on ``n_genes`` genes holds, or None for a method without a swarm
        (:func:`hpcswarm.swarm.engine.snapshot.check_swarm_arrays`)."""
        return None

    # ------------------------------------------------------------------ streams and layout
    def make_streams(self, n_particles):
        """Per-particle generators and the swarm-wide generator of this run.

        Generators are made for every particle (cheap), but a rank draws only from those of
        the particles it owns.
        """
        return particle_streams(self.seed_sequence, range(n_particles)), swarm_stream(
            self.seed_sequence
        )

    def new_swarm(self, n_particles):
        """An empty swarm of ``n_particles`` (:class:`~hpcswarm.swarm.engine.state.SwarmState`,
        every fitness the worst) with their streams (:meth:`make_streams`), kept as ``state``,
        and this rank's own particles as ``local`` (:meth:`partition`); returns the
        per-particle generators."""
        rngs, swarm_rng = self.make_streams(n_particles)
        self.state = SwarmState.empty(n_particles, self.n_genes, rngs, swarm_rng,
                                      worst=WORST_FITNESS)
        self.local = self.partition(n_particles)
        return rngs

    def partition(self, n_particles):
        """This rank's particles, increasing: ndarray of int (maybe empty).

        Sets ``ownership`` (:class:`~hpcswarm.swarm.engine.deal.Deal`, who owns which particle,
        dealt by the evaluator by :meth:`expected_genes`).
        """
        self.n_particles = int(n_particles)
        self.ownership = self.evaluator.deal(self.n_particles, self.expected_genes())
        return self.ownership.local()

    def expected_genes(self):
        """The genes each particle is expected to select, for the deal of the particles by
        cost (ndarray of int of shape (n_particles,)), or None for particles alike, dealt in
        contiguous blocks of equal count: here None; a method whose particles differ says
        so (VLPSO's lengths)."""
        return None

    def redeal(self):
        """Deal the particles again by :meth:`expected_genes` (collective; after a change of
        the particles' expected costs): the particles that change rank are handed over with
        their rows and generators (:func:`~hpcswarm.swarm.engine.handover.hand_over`), and
        ``local`` and ``ownership`` follow."""
        old = self.ownership
        new = self.evaluator.deal(self.n_particles, self.expected_genes())
        if not new.same_owners(old):
            hand_over(self.comm, self.state, old, new)
        self.ownership, self.local = new, new.local()

    # ------------------------------------------------------------------ records
    @property
    def best_mask(self):
        """The best subset evaluated so far (the evaluator's), ndarray of bool."""
        return self.evaluator.best_mask

    @property
    def best_fitness(self):
        """Its fitness as it was scored."""
        return self.evaluator.best_fitness

    def mean_size(self):
        """Mean number of genes of the current particles (for the history)."""
        return float(self.state.sizes().mean())

    def record(self):
        """Append this round's row to the history and close the evaluator's round."""
        account = self.evaluator
        row = {
            "iteration": self.iteration,
            "best_fitness": float(account.best_fitness),
            "best_size": account.best_size,
            "mean_size": self.mean_size(),
            "new_subsets": account.new_subsets,
            "evaluations": int(account.evaluations),
            "archive_hits": int(account.archive_hits),
            "seconds": time.perf_counter() - self.started,
        }
        self.history.append(row)
        account.close_round()

    def event(self, kind, **details):
        """Record a mechanism firing (gbest reset, complement, phase change) in this round."""
        self.events.append({"iteration": self.iteration, "event": kind, **details})

    def extra(self):
        """Method-specific records, and ``best_found_at``: the evaluation count when the
        returned subset was first scored (at the end of its batch for swarm evaluations)."""
        return {"events": list(self.events), "best_found_at": self.evaluator.best_found_at}

    def result(self) -> "SearchResult":
        """The :class:`SearchResult` of the run so far (collective: gathers the byte counts).

        ``extra["comm"]`` (see :meth:`EvaluationService.communication`) is the only part
        that depends on the number of ranks (with ``seconds`` in the history).
        """
        account = self.evaluator
        extra = self.extra()
        extra["comm"] = account.communication()
        account.front.merge(self.comm)
        front = [{"size": size, "fitness": value, "genes": np.flatnonzero(mask)}
                 for size, value, mask in account.front.masks()]
        return SearchResult(
            algorithm=self.name,
            params=dict(self.params),
            mask=account.best_mask.copy(),
            fitness=float(account.best_fitness),
            history=list(self.history),
            extra=extra,
            front=front,
        )
