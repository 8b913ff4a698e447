"""Single feature ranking (SFR) and BPSO feature subset ranking (FSR) (Xue, Zhang & Browne 2012).

SFR (Algorithm 1) ranks genes alone and scores the top-d prefixes, d = 1, 2, ...; FSR
(Algorithm 2) runs, for d = 1, 2, ..., a binary PSO whose particles are repaired to exactly d
genes, half of the swarm starting from the (d-1)-gene subset of the previous step. Both
return the best of their d-gene subsets (higher fitness, then fewer genes) and list them all
in ``extra``. One round of the shared loop is one value of d.
"""

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.engine.loop import SearchAlgorithm, SearchHooks
from hpcswarm.swarm.engine.snapshot import ArraySpec
from hpcswarm.swarm.engine.termination import RoundLimit
from hpcswarm.swarm.methods.bpso import BPSO
from hpcswarm.swarm.methods.particle_swarm import SWARM_PARAMS
from hpcswarm.swarm.operators.particle import random_subset, repair_size
from hpcswarm.swarm.operators.ranking import rank_genes, single_gene_accuracies
from hpcswarm.swarm.params import FITNESS_PARAMS, Param, override

_MAX_SIZE_DOC = "largest subset size d tried (0: every size up to the number of genes)"


def size_limit(max_size, n_genes):
    """The last d of a ranking run: ``max_size`` capped at ``n_genes`` (0 means ``n_genes``)."""
    return n_genes if max_size == 0 else min(max_size, n_genes)


def limit_problem(problem, state, params, n_genes):
    """``problem`` (the account's, :meth:`SearchAlgorithm.state_problem`) or, if there is
    none, what is wrong with a snapshot's ``limit``: the last size of ``max_size``."""
    if problem is not None:
        return problem
    limit = size_limit(params["max_size"], n_genes)
    return None if state["limit"] == limit else f"'limit' is {state['limit']}, not {limit}"


class SFR(SearchAlgorithm):
    """Wrapper single feature ranking (Xue, Zhang & Browne 2012, Algorithm 1).

    Defaults (Sec. 5): 5-NN 10-fold accuracy, every prefix size. The paper ranks on a
    training set and scores prefixes on a test set; in this run (the biased protocol) both
    use the fitness of the run. Prefixes grow by one gene through the incremental
    evaluation, so trying every size costs one cheap evaluation per gene.

    Parallel runs: the single-gene ranking (D evaluations, the bulk of the work) is split
    across the ranks and its accuracies allgathered (``8 D`` bytes); the prefix curve, one
    incremental evaluation per round, is computed by every rank alike (no communication).
    """

    name = "sfr"
    PARAMS = (Param("max_size", "int", 0, _MAX_SIZE_DOC, low=0),) + override(
        FITNESS_PARAMS, k=5, cv=10
    )
    scores_single_flips = True

    @classmethod
    def cached_states(cls, params):
        """One: the prefix's cached state, kept for the whole search (``prefix_state``; the
        ranking's state of the empty subset is dropped before it is made)."""
        return 1
    STATE = ("order", "limit", "prefix", "curve")
    STATE_VALUES = {"order": ArraySpec("i", ("genes",), 0, "last_gene", distinct=True),
                    "limit": ArraySpec("i", (), 0, "genes"),
                    "prefix": ArraySpec("b", ("genes",))}

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and SFR's: the last d
        of ``max_size``, the prefix the first ``iteration + 1`` genes of ``order`` and the
        curve one fitness per prefix scored."""
        problem = limit_problem(super().state_problem(state, params, n_genes), state, params,
                                n_genes)
        if problem is not None:
            return problem
        prefix = np.zeros(n_genes, dtype=bool)
        prefix[state["order"][:state["iteration"] + 1]] = True
        if not np.array_equal(state["prefix"], prefix):
            return "'prefix' is not the first genes of 'order', one a round"
        curve = state["curve"]
        if not (isinstance(curve, list) and len(curve) == state["iteration"] + 1
                and all(type(value) is float and WORST_FITNESS <= value <= 1.0
                        for value in curve)):
            return f"'curve' is not {state['iteration'] + 1} fitness values, one a round"
        return None

    def initialise(self):
        self.order = rank_genes(single_gene_accuracies(self.fitness, np.arange(self.n_genes),
                                                       self.comm))
        self.evaluator.count(evaluations=self.n_genes)
        self.limit = size_limit(self.params["max_size"], self.n_genes)
        self.prefix = np.zeros(self.n_genes, dtype=bool)
        self.prefix[self.order[0]] = True
        self.curve = [float(self.fitness(self.prefix))]
        self.evaluator.observe_shared(self.prefix, self.curve[-1])
        self.prefix_state = self.fitness.new_state(self.prefix)

    def restore_method_state(self, state):
        """Take back :meth:`method_state`; the prefix's cached state is rebuilt (one Gram
        product), its scores being exact."""
        super().restore_method_state(state)
        self.prefix_state = self.fitness.new_state(self.prefix)

    def step(self):
        gene = self.order[self.iteration : self.iteration + 1]
        value = float(self.fitness.flip(self.prefix_state, gene))
        self.fitness.apply_flip(self.prefix_state, gene)
        self.prefix[gene] = True
        self.curve.append(value)
        self.evaluator.observe_shared(self.prefix, value)

    @classmethod
    def default_termination(cls, params, n_genes):
        """One round per prefix size d, up to ``max_size``."""
        return RoundLimit(size_limit(params["max_size"], n_genes))

    def mean_size(self):
        return float(self.iteration + 1)

    def extra(self):
        return {**super().extra(), "ranking": self.order.tolist(), "prefix_fitness": self.curve}


class FixedSizeBPSO(BPSO):
    """The BPSO of one FSR step: every particle repaired to exactly ``size`` genes.

    Particles ``0 .. n//2 - 1`` start from ``seed_mask`` (the previous step's subset,
    repaired to ``size`` by adding random genes), the others from random ``size``-gene
    subsets (Xue et al. 2012, Algorithm 2 lines 6-7); positions are repaired after every move,
    before evaluation (lines 10-16). The streams are the enclosing FSR run's, so one particle
    keeps one generator through every step.
    """

    name = "fsr-step"

    def __init__(self, evaluator, params, size, seed_mask, streams, hooks=None):
        super().__init__(evaluator, params, hooks=hooks)
        self.size = size
        self.seed_mask = seed_mask
        self.streams = streams

    def make_streams(self, n_particles):
        return self.streams

    def initial_position(self, i):
        if i < self.params["n_particles"] // 2:
            return self.seed_mask.astype(float)
        return random_subset(self.n_genes, self.size, self.state.rngs[i]).astype(float)

    def after_move(self):
        s = self.state
        for i in self.local:
            s.position[i] = repair_size(s.mask[i], self.size, s.rngs[i]).astype(float)
        self.refresh_masks(self.local)


class FSR(SearchAlgorithm):
    """BPSO feature subset ranking (Xue, Zhang & Browne 2012, Algorithm 2).

    Defaults (Sec. 5): BPSO with w = 0.768, c1 = c2 = 1.49618, vmax = 6, 30 particles,
    100 rounds per size, stopping a size early at fitness ``target`` = 1 (line 8,
    "fitness = 1"), 5-NN 10-fold accuracy, and d up to ``max_size`` = 60 (the largest
    dataset of the paper, Sonar, has 60 features; on gene data the paper's "every d up to D"
    is out of reach).

    Choices where the paper is ambiguous:

    * The first subset S (line 4) is one gene drawn from the swarm-wide stream, so the half
      of the swarm seeded with S at d = 1 already has d genes.
    * "Half of the swarm" is the particles of index below ``n_particles // 2``.
    * The subset recorded for d is the best d-gene subset the step evaluated.
    """

    name = "fsr"
    PARAMS = (Param("max_size", "int", 60, _MAX_SIZE_DOC, low=0),) + override(
        SWARM_PARAMS,
        w=0.768, vmax=6.0, target=1.0, k=5, cv=10,
    )
    STATE = ("limit", "streams", "subset", "subsets")
    STATE_VALUES = {"limit": ArraySpec("i", (), 0, "genes"), "subset": ArraySpec("b", ("genes",))}

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and FSR's: the last d
        of ``max_size``; ``subsets`` holds, for d = 1, 2, ... up to one a round, a record of
        the size d, its fitness and its d distinct gene indices, the last of which are
        ``subset``; ``streams`` are a generator per particle and the swarm's."""
        problem = limit_problem(super().state_problem(state, params, n_genes), state, params,
                                n_genes)
        if problem is not None:
            return problem
        streams = state["streams"]
        generators = (isinstance(streams, (list, tuple)) and len(streams) == 2
                      and isinstance(streams[0], list) and [*streams[0], streams[1]])
        if not (generators and len(generators) == params["n_particles"] + 1
                and all(isinstance(rng, np.random.Generator) for rng in generators)):
            return (f"'streams' are not {params['n_particles']} particle generators and the "
                    "swarm's")
        if not isinstance(state["subsets"], list):
            return f"'subsets' is a {type(state['subsets']).__name__}, not a list"
        for d, record in enumerate(state["subsets"], start=1):
            genes = record.get("genes") if isinstance(record, dict) else None
            if not (isinstance(record, dict) and set(record) == {"size", "fitness", "genes"}
                    and type(record["size"]) is int and record["size"] == d
                    and isinstance(record["fitness"], (float, np.floating))
                    and WORST_FITNESS <= record["fitness"] <= 1.0
                    and isinstance(genes, list) and len(set(genes)) == len(genes) == d
                    and all(type(gene) is int and 0 <= gene < n_genes for gene in genes)):
                return (f"'subsets' holds an entry that is not the size {d}, fitness and {d} "
                        f"distinct gene indices in [0, {n_genes}) of a subset")
        subsets = state["subsets"]
        if len(subsets) != state["iteration"] + 1:
            return f"'subsets' holds {len(subsets)} sizes after {state['iteration'] + 1} rounds"
        if np.flatnonzero(state["subset"]).tolist() != sorted(subsets[-1]["genes"]):
            return "'subset' is not the genes of the last of 'subsets'"
        return None

    def initialise(self):
        self.limit = size_limit(self.params["max_size"], self.n_genes)
        self.streams = self.make_streams(self.params["n_particles"])
        self.subset = random_subset(self.n_genes, 1, self.streams[1])
        self.subsets = []
        self.grow()

    def step(self):
        self.grow()

    def grow(self):
        """Run the BPSO of the next size d and record its best d-gene subset."""
        size = len(self.subsets) + 1
        inner_params = {k: v for k, v in self.params.items() if k != "max_size"}
        outer = self.evaluator
        inner = FixedSizeBPSO(outer.nested(), inner_params, size, self.subset, self.streams,
                              hooks=SearchHooks(progress=self.hooks.progress))
        found = inner.run()
        outer.new_subsets += sum(row["new_subsets"] for row in found.history)
        outer.evaluations = inner.evaluator.evaluations
        outer.archive_hits = inner.evaluator.archive_hits
        self.subset = found.mask
        self.subsets.append({"size": size, "fitness": found.fitness,
                             "genes": found.genes.tolist()})
        outer.observe_shared(found.mask, found.fitness, computed=False)

    @classmethod
    def default_termination(cls, params, n_genes):
        """One round per size d, up to ``max_size`` (each round runs a whole BPSO)."""
        return RoundLimit(size_limit(params["max_size"], n_genes))

    def mean_size(self):
        return float(len(self.subsets))

    def extra(self):
        return {**super().extra(), "subsets": self.subsets}

