"""The loop shared by every method, its termination, history and result.

A method is a :class:`SearchAlgorithm` subclass that implements ``initialise`` (round 0) and
``step`` (every later round); :meth:`SearchAlgorithm.run` repeats ``step`` until ``done``.
A *round* is one evaluation of (part of) the swarm, so ``n_iterations`` counts evaluation
rounds including the initial one: 70 rounds of 100 particles are the "7000 evaluations" of
Tran et al. Every subset the method evaluates is offered to :meth:`SearchAlgorithm.observe`,
which keeps the best ever seen *with the fitness it was scored with*: the returned mask is
always one that was evaluated, and re-evaluating it gives the reported fitness.

Ordering of subsets (all methods): higher fitness first, then fewer genes. This is the
pbest/gbest updating rule of Xue, Zhang & Browne 2014 ("updating mechanism 2", the "-2" of
PSO(4-2)); ties that remain between particles are broken by the lower particle index, so the
choice does not depend on how particles are spread over ranks. Among different subsets of
equal fitness and size, the best ever kept is the first met in the order (round, swarm
evaluation before local search, particle index, local-search try), an order a parallel
reduction can reproduce.
"""

import abc
import hashlib
import time
from dataclasses import dataclass, field

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.state import particle_streams, run_seed_sequence, swarm_stream

HISTORY_FIELDS = (
    "iteration",
    "best_fitness",
    "best_size",
    "mean_size",
    "new_subsets",
    "evaluations",
    "archive_hits",
    "seconds",
)
"""Keys of a history row: the round; the best subset's fitness and size; the mean size of the
current particles; distinct subsets met for the first time this round (swarm and local
search); evaluations computed so far and archive hits so far (both cumulative, from the
fitness engine); wall seconds since the run started."""


def better(fitness_a, size_a, fitness_b, size_b):
    """Whether subset a (fitness, size) strictly beats subset b: higher fitness, then fewer genes."""
    return fitness_a > fitness_b or (fitness_a == fitness_b and size_a < size_b)


def best_index(fitness, sizes):
    """Index of the best particle: highest fitness, then fewest genes, then lowest index.

    Parameters
    ----------
    fitness : ndarray of shape (n_particles,)
    sizes : ndarray of shape (n_particles,)

    Returns
    -------
    int
    """
    fitness = np.asarray(fitness, dtype=float)
    order = np.lexsort((np.arange(fitness.size), np.asarray(sizes), -fitness))
    return int(order[0])


def swarm_mean(position):
    """Mean position of the swarm, ndarray of shape (n_genes,) (CSO's x-bar, Gu et al. Eq. 3).

    The single place the mean is taken, so that a parallel run can replace it by an
    order-independent reduction.
    """
    return np.asarray(position, dtype=float).mean(axis=0)


def subset_digest(mask):
    """A 16-byte digest identifying the subset ``mask`` (for counting distinct subsets)."""
    return hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).digest()


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
        One row per round with the keys of :data:`HISTORY_FIELDS`.
    extra : dict
        Method-specific records (mechanism events, rankings).
    """

    algorithm: str
    params: dict
    mask: np.ndarray
    fitness: float
    history: list
    extra: dict = field(default_factory=dict)

    @property
    def genes(self):
        """Indices of the selected genes, ndarray of int."""
        return np.flatnonzero(self.mask)


class SearchAlgorithm(abc.ABC):
    """Base of every method: the loop, termination, history and best-subset bookkeeping.

    Parameters
    ----------
    fitness : SubsetFitness
        The objective (``hpcswarm.fitness.SubsetFitness`` or anything with its API).
    params : dict
        Checked parameters (see :func:`hpcswarm.swarm.params.resolve_params`).
    seed : int or numpy.random.SeedSequence
        The run seed; particle and swarm streams are spawned from it.
    evaluator : KnnEvaluator, optional
        Read for the archive hit count of the history.

    Notes
    -----
    Subclasses set ``name`` and ``PARAMS`` and implement ``initialise`` and ``step``.
    """

    name = None
    PARAMS = ()

    def __init__(self, fitness, params, seed=0, evaluator=None):
        self.fitness = fitness
        self.params = dict(params)
        self.seed_sequence = run_seed_sequence(seed)
        self.evaluator = evaluator
        self.n_genes = int(fitness.n_genes)
        self.iteration = -1
        self.history = []
        self.events = []
        self.best_mask = np.zeros(self.n_genes, dtype=bool)
        self.best_fitness = WORST_FITNESS
        self.best_found_at = 0
        self._seen = set()
        self._new_subsets = 0
        self._started = None

    @classmethod
    def validate(cls, params):
        """Checks that involve several parameters (ParameterError); single keys are checked by ``PARAMS``."""

    # ------------------------------------------------------------------ the loop
    def run(self):
        """Initialise, step until done, and return the :class:`SearchResult`."""
        self.advance()
        while not self.done():
            self.advance()
        return self.result()

    def advance(self):
        """Play the next round (round 0 is :meth:`initialise`, later ones :meth:`step`) and record it."""
        if self.iteration < 0:
            self._started = time.perf_counter()
            self.iteration = 0
            self.initialise()
        else:
            self.iteration += 1
            self.step()
        self.record()

    @abc.abstractmethod
    def initialise(self):
        """Round 0: build and evaluate the initial swarm."""

    @abc.abstractmethod
    def step(self):
        """One later round: move, evaluate, update the bests."""

    def done(self):
        """True after ``n_iterations`` rounds, or once the best fitness reaches ``target``."""
        target = self.params.get("target")
        if target is not None and self.best_fitness >= target:
            return True
        return self.iteration + 1 >= self.params["n_iterations"]

    # ------------------------------------------------------------------ streams
    def make_streams(self, n_particles):
        """Per-particle generators and the swarm-wide generator of this run."""
        return particle_streams(self.seed_sequence, range(n_particles)), swarm_stream(
            self.seed_sequence
        )

    # ------------------------------------------------------------------ bookkeeping
    def observe(self, mask, value):
        """Account for one evaluated subset: distinct-subset count and best ever seen."""
        digest = subset_digest(mask)
        if digest not in self._seen:
            self._seen.add(digest)
            self._new_subsets += 1
        size = int(np.count_nonzero(mask))
        if better(value, size, self.best_fitness, int(np.count_nonzero(self.best_mask))):
            self.best_mask = np.array(mask, dtype=bool)
            self.best_fitness = float(value)
            self.best_found_at = int(self.fitness.evaluations)

    def share_seen(self, seen):
        """Count distinct subsets against ``seen`` (an enclosing run's set of digests)."""
        self._seen = seen

    def observe_many(self, masks, values):
        """:meth:`observe` each row of ``masks`` in order."""
        for mask, value in zip(masks, values):
            self.observe(mask, value)

    def mean_size(self):
        """Mean number of genes of the current particles (for the history)."""
        return float(self.state.sizes().mean())

    def record(self):
        """Append this round's row to the history."""
        hits = getattr(self.evaluator, "hits", 0) if self.evaluator is not None else 0
        self.history.append(
            {
                "iteration": self.iteration,
                "best_fitness": float(self.best_fitness),
                "best_size": int(np.count_nonzero(self.best_mask)),
                "mean_size": self.mean_size(),
                "new_subsets": self._new_subsets,
                "evaluations": int(self.fitness.evaluations),
                "archive_hits": int(hits),
                "seconds": time.perf_counter() - self._started,
            }
        )
        self._new_subsets = 0

    def event(self, kind, **details):
        """Record a mechanism firing (gbest reset, complement, phase change) in this round."""
        self.events.append({"iteration": self.iteration, "event": kind, **details})

    def extra(self):
        """Method-specific records, and ``best_found_at``: the evaluation count when the
        returned subset was first scored (at the end of its batch for swarm evaluations)."""
        return {"events": list(self.events), "best_found_at": self.best_found_at}

    def result(self):
        """The :class:`SearchResult` of the run so far."""
        return SearchResult(
            algorithm=self.name,
            params=dict(self.params),
            mask=self.best_mask.copy(),
            fitness=float(self.best_fitness),
            history=list(self.history),
            extra=self.extra(),
        )
