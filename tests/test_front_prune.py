"""Compact signatures: the search's Pareto front of (inner accuracy, size), and pruning."""

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator, make_objective
from hpcswarm.selection.search import run_search
from hpcswarm.signatures.refine import prune, prune_compact, prune_margin
from hpcswarm.swarm.engine.evaluation import EvaluationService
from hpcswarm.swarm.engine.front import FrontTracker, pareto_front
from synthetic import SMALL, small_data

CASES = {
    "pso-lsrg": {**SMALL["pso-lsrg"]},
    "fsipso": {**SMALL["fsipso"]},       # combined objective: front filtered after the search
    "cso": {**SMALL["cso"]},             # archive on: hits are observed too
    "sbs": {"max_steps": 10},
}


def _observed(monkeypatch):
    """Record every (mask, fitness) a search offers to its bookkeeping."""
    seen = []
    shared = EvaluationService.observe_shared

    def spy_shared(self, mask, value, *args, **kwargs):
        seen.append((np.array(mask, dtype=bool), float(value)))
        return shared(self, mask, value, *args, **kwargs)

    many = EvaluationService.observe_many

    def spy_many(self, masks, values, *args, **kwargs):
        seen.extend((np.array(m, dtype=bool), float(v)) for m, v in zip(masks, values))
        return many(self, masks, values, *args, **kwargs)

    monkeypatch.setattr(EvaluationService, "observe_shared", spy_shared)
    flips = EvaluationService.observe_flips

    def spy_flips(self, mask, genes, values, *args, **kwargs):
        for row, value in zip(genes, values):
            tried = np.array(mask, dtype=bool)
            tried[row] = ~tried[row]
            seen.append((tried, float(value)))
        return flips(self, mask, genes, values, *args, **kwargs)

    monkeypatch.setattr(EvaluationService, "observe_many", spy_many)
    monkeypatch.setattr(EvaluationService, "observe_flips", spy_flips)
    return seen


@pytest.mark.parametrize("algorithm", sorted(CASES))
def test_front_is_the_non_dominated_set_of_every_evaluated_subset(algorithm, monkeypatch):
    X, y = small_data(seed=1, n_samples=36, n_genes=60)
    seen = _observed(monkeypatch)
    result = run_search(X, y, algorithm, CASES[algorithm], seed=3)
    params = result.params
    evaluator = KnnEvaluator(X, y, k=params["k"], cv=params["cv"],
                             seed=np.random.SeedSequence(3))
    objective = make_objective(params["objective"], params["alpha"])
    front = result.front
    assert front, "a search that evaluated subsets has a front"
    # every point re-evaluates to its recorded inner accuracy and to the fitness it had
    for point in front:
        mask = np.zeros(X.shape[1], dtype=bool)
        mask[point["genes"]] = True
        score = evaluator.score(mask)
        assert (score.correct, score.total) == (point["correct"], point["total"])
        assert objective(score, point["size"], X.shape[1]) == point["fitness"]
        assert point["size"] == len(point["genes"])
    # non-dominated: sizes increase strictly and so do the correct counts
    sizes = [p["size"] for p in front]
    correct = [p["correct"] for p in front]
    assert sizes == sorted(set(sizes)) and correct == sorted(set(correct))
    # and it is the front of everything the search evaluated (brute force over the spy)
    pairs = {}
    for mask, _ in seen:
        if mask.any():
            pairs.setdefault(mask.tobytes(), (evaluator.score(mask).correct, int(mask.sum())))
    expected = [list(pairs.values())[i] for i in pareto_front(list(pairs.values()))]
    assert [(p["correct"], p["size"]) for p in front] == expected
    # the front ends at the best inner accuracy met
    assert correct[-1] == max(c for c, _ in pairs.values())


@pytest.mark.parametrize("refine", ["prune", "prune-margin", "prune-compact"])
def test_front_does_not_change_the_search(refine):
    X, y = small_data(seed=1, n_samples=36, n_genes=60)
    plain = run_search(X, y, "pso-lsrg", SMALL["pso-lsrg"], seed=3)
    pruned = run_search(X, y, "pso-lsrg", SMALL["pso-lsrg"], seed=3, refine=refine)
    assert np.array_equal(plain.mask, pruned.mask) and plain.fitness == pruned.fitness
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in plain.history] == \
        [{k: v for k, v in row.items() if k != "seconds"} for row in pruned.history]
    assert plain.refined is None and pruned.refined.method == refine


def test_tracker_keeps_lower_genes_on_ties_and_merges_in_any_order():
    rng = np.random.default_rng(0)
    offers = [(rng.random(20) < rng.random(), float(rng.integers(0, 4)) / 4)
              for _ in range(300)]

    def fed(items):
        tracker = FrontTracker(20, monotone=True)
        for mask, value in items:
            tracker.add(mask, value)
        return tracker.entries()

    forward, backward = fed(offers), fed(offers[::-1])
    assert forward == backward
    a, b = FrontTracker(20, True), FrontTracker(20, True)
    for mask, value in offers[:150]:
        a.add(mask, value)
    for mask, value in offers[150:]:
        b.add(mask, value)

    class TwoRanks:
        size = 2

        def allgatherv(self, rows):
            other = FrontTracker(20, True)
            other.best = dict(b.best)
            width = rows.shape[1]
            theirs = np.zeros((len(other.entries()), width), dtype=np.uint8)
            for row, (size, value, packed) in zip(theirs, other.entries()):
                row[:8] = np.array([size], dtype=np.int64).view(np.uint8)
                row[8:16] = np.array([value], dtype=np.float64).view(np.uint8)
                row[16:] = np.frombuffer(packed, dtype=np.uint8)
            return np.concatenate([rows, theirs])

    a.merge(TwoRanks())
    assert a.entries() == forward
    tie = FrontTracker(4, monotone=False)
    tie.add(np.array([False, True, True, False]), 0.5)
    tie.add(np.array([True, False, False, True]), 0.5)   # genes (0, 3) < (1, 2)
    tie.add(np.array([False, False, True, True]), 0.5)
    assert [np.flatnonzero(m).tolist() for _, _, m in tie.masks()] == [[0, 3]]


PRUNERS = {"prune": lambda evaluator, X, y, mask: prune(evaluator, mask),
           "prune-margin": prune_margin, "prune-compact": prune_compact}


@pytest.mark.parametrize("method", sorted(PRUNERS))
@pytest.mark.parametrize("seed", range(4))
def test_pruning_never_lowers_the_inner_accuracy(seed, method):
    X, y = small_data(seed=seed, n_samples=40, n_genes=50)
    rng = np.random.default_rng(seed)
    for cv in ("loo", 5):
        evaluator = KnnEvaluator(X, y, k=1 + 2 * (seed % 2), cv=cv, seed=seed)
        for _ in range(3):
            mask = rng.random(50) < rng.uniform(0.1, 0.9)
            before = evaluator.score(mask)
            pruned = PRUNERS[method](evaluator, X, y, mask)
            assert pruned.method == method
            assert pruned.correct >= before.correct
            assert not np.any(pruned.mask & ~mask)          # only removals
            again = evaluator.score(pruned.mask)            # the recorded count is exact
            assert (again.correct, again.total) == (pruned.correct, pruned.total)
            assert np.count_nonzero(pruned.mask) + pruned.removed.size == np.count_nonzero(mask)
            if method == "prune" and pruned.mask.sum() > 1:  # stopped: every removal loses
                for gene in np.flatnonzero(pruned.mask):
                    fewer = pruned.mask.copy()
                    fewer[gene] = False
                    assert evaluator.score(fewer).correct < pruned.correct


def test_pruning_removes_the_lowest_gene_among_equal_removals():
    # four identical genes: removing any keeps the accuracy; the lowest index goes first
    X = np.repeat(np.array([[0.0], [0.1], [5.0], [5.1]]), 4, axis=1)
    y = np.array([0, 0, 1, 1])
    evaluator = KnnEvaluator(X, y, k=1, cv="loo")
    pruned = prune(evaluator, np.ones(4, dtype=bool))
    assert pruned.removed.tolist() == [0, 1, 2] and np.flatnonzero(pruned.mask).tolist() == [3]


def test_margin_pruning_keeps_the_planted_genes_where_index_ties_keep_a_thin_one():
    # genes 0 and 1 separate the classes by 10, gene 2 by a hair (0.05): every single gene
    # classifies the training samples, so "prune" removes by index down to gene 2; the
    # margins remove gene 2 first and the best point of the path is the planted pair
    y = np.repeat([0, 1], 6)
    rng = np.random.default_rng(0)
    planted = 10.0 * y[:, None] + rng.uniform(0, 1, (12, 2))
    thin = np.r_[np.linspace(0, 0.1, 6), np.linspace(0.15, 0.25, 6)]
    X = np.column_stack([planted, thin])
    evaluator = KnnEvaluator(X, y, k=1, cv="loo")
    everything = np.ones(3, dtype=bool)
    assert prune(evaluator, everything).genes.tolist() == [2]
    pruned = prune_margin(evaluator, X, y, everything)
    assert pruned.genes.tolist() == [0, 1] and pruned.removed.tolist() == [2]
    assert (pruned.correct, pruned.total) == (12, 12)


def test_compact_pruning_keeps_one_of_two_copies_where_margin_pruning_keeps_both():
    # gene 1 separates the classes; gene 0 is a copy of it with a zig-zag of +-0.2 added.
    # Two copies stretch every distance by about sqrt(2): the margin sum grows, so
    # prune-margin keeps both; the spread grows by as much and the margin relative to it
    # falls with the zig-zag, so prune-compact keeps the clean copy (not the lower index)
    y = np.repeat([0, 1], 6)
    clean = 10.0 * y + np.random.default_rng(0).uniform(0, 1, 12)
    X = np.column_stack([clean + 0.2 * np.tile([1.0, -1.0], 6), clean])
    evaluator = KnnEvaluator(X, y, k=1, cv="loo")
    both = np.ones(2, dtype=bool)
    assert prune_margin(evaluator, X, y, both).genes.tolist() == [0, 1]
    compact = prune_compact(evaluator, X, y, both)
    assert compact.genes.tolist() == [1] and compact.removed.tolist() == [0]
    assert (compact.correct, compact.total) == (12, 12)


@pytest.mark.parametrize("method", ["prune-margin", "prune-compact"])
def test_margin_rules_return_the_best_point_of_their_path(method):
    from hpcswarm.fitness.margins import label_codes, margin_sum

    X, y = small_data(seed=3, n_samples=36, n_genes=40)
    evaluator = KnnEvaluator(X, y, k=1, cv="loo")
    everything = np.ones(40, dtype=bool)
    pruned = PRUNERS[method](evaluator, X, y, everything)
    assert {0, 1, 2} <= set(pruned.genes.tolist())      # the informative genes stay
    # walk the path again by its definition and rank every point by the rule
    codes, counted = label_codes(y)
    spread = X.var(axis=0)

    def criterion(subset):
        margin = margin_sum(X[:, subset].T, codes, counted)
        return margin / np.sqrt(spread[subset].sum()) if method == "prune-compact" else margin

    mask, points = everything.copy(), []
    while True:
        correct = evaluator.score(mask).correct
        points.append((correct, criterion(mask), -mask.sum(), mask.copy()))
        removals = []
        for gene in np.flatnonzero(mask):
            fewer = mask.copy()
            fewer[gene] = False
            removals.append((evaluator.score(fewer).correct,
                             margin_sum(X[:, fewer].T, codes, counted), -gene, fewer))
        if mask.sum() == 1 or max(r[0] for r in removals) < correct:
            break
        top = max(r[0] for r in removals)
        mask = max((r for r in removals if r[0] == top), key=lambda r: r[1:3])[3]
    best = max(points, key=lambda p: p[:3])
    assert np.array_equal(pruned.mask, best[3]) and pruned.correct == best[0]
    assert pruned.removed.size == everything.sum() - pruned.mask.sum()


SWARMS = ("pso", "pso-rg", "bpso", "cbpso", "cso", "fsipso")


@pytest.mark.parametrize("algorithm", SWARMS)
def test_max_genes_caps_every_subset_a_swarm_evaluates(algorithm, monkeypatch):
    X, y = small_data(seed=2, n_samples=30, n_genes=40)
    seen = _observed(monkeypatch)
    result = run_search(X, y, algorithm, SMALL[algorithm], seed=5, max_genes=4)
    sizes = [int(mask.sum()) for mask, _ in seen]
    assert sizes and max(sizes) <= 4 and result.genes.size <= 4
    assert max(point["size"] for point in result.front) <= 4
    seen.clear()
    run_search(X, y, algorithm, SMALL[algorithm], seed=5)
    assert max(int(mask.sum()) for mask, _ in seen) > 4  # without the cap: larger subsets


def test_cap_keeps_the_strongest_genes_and_refuses_other_methods():
    from hpcswarm.errors import ParameterError
    from hpcswarm.swarm.operators.particle import cap_selection

    position = np.array([0.9, 0.2, 0.7, 0.95, 0.7, 0.61])
    capped = cap_selection(position, position > 0.6, position, 3, 0.6)
    assert capped.tolist() == [0.9, 0.2, 0.7, 0.95, 0.6, 0.6]  # tie 0.7: lower index kept
    assert cap_selection(position, position > 0.6, position, 5, 0.6) is position
    X, y = small_data()
    with pytest.raises(ParameterError, match="max_genes applies to the swarm methods"):
        run_search(X, y, "sfs", {}, max_genes=3)


def test_single_search_cli_writes_front_and_pruned_subset(tmp_path):
    import json

    from hpcswarm import cli
    from hpcswarm.errors import ParameterError
    from hpcswarm.run.jobfile import build_job

    out = tmp_path / "out.json"
    assert cli.main(["run", "--data", "builtin:srbct",
                     "--algorithm", "bpso", "--param", "n_particles=4", "--param",
                     "n_iterations=2", "--refine", "prune", "--max-genes", "50",
                     "--output", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["n_selected"] <= 50 and document["front"]
    assert all(p["size"] <= 50 for p in document["front"])
    refined = document["refined"]
    assert set(refined["genes"]) <= set(document["selected_genes"])
    assert refined["correct"] >= document["extra"]["score"]["correct"]
    with pytest.raises(ParameterError, match="key 'max_genes'.*not to sfs"):
        build_job({"data": "builtin:srbct", "algorithm": "sfs", "max_genes": 5})


def test_tracker_offered_a_batch_keeps_what_it_keeps_row_by_row():
    rng = np.random.default_rng(3)
    masks = rng.random((200, 16)) < rng.random((200, 1))
    values = rng.integers(0, 5, 200) / 4
    for monotone in (True, False):
        one, batch = FrontTracker(16, monotone), FrontTracker(16, monotone)
        for mask, value in zip(masks, values):
            one.add(mask, value)
        for start in range(0, 200, 37):
            batch.add_many(masks[start:start + 37], values[start:start + 37])
        assert one.entries() == batch.entries()


def test_run_offers_every_refinement():
    from hpcswarm import cli
    from hpcswarm.selection.spec import REFINEMENTS

    run = cli.build_parser()._subparsers._group_actions[0].choices["run"]
    (refine,) = [action for action in run._actions if action.dest == "refine"]
    assert tuple(refine.choices) == REFINEMENTS
