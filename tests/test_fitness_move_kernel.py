"""A move scored by the compiled one-pass kernel gives the counts of a full evaluation.

``score_move`` adds the change of the flipped genes into the state and decides every row in
one compiled pass (:mod:`hpcswarm.fitness.move_kernel`), half the product where the rows are
every sample. Each walk below moves a state many times (its drift growing) on data made to
defeat it (many equal distances; a large common offset, where the Gram form cancels), in
blocks of a few rows so that the symmetric change crosses many block edges, and checks
after every move: the Score against a full evaluation by the numpy path, the state's
distances within their bound of the exact ones, and, on plain data, scikit-learn.
"""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

from hpcswarm.fitness import (KnnEvaluator, SubsetFitness, make_objective, make_scorer,
                              move_kernel)
from hpcswarm.fitness.distances import exact_sq_distances
from hpcswarm.fitness.moves import ParticleStates
from engine_probes import counting_decide, tie_prone_datasets

pytestmark = pytest.mark.skipif(not move_kernel.AVAILABLE, reason="numba is not installed")


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 5 rows: the change of a 47-sample state crosses 9 block edges."""
    monkeypatch.setattr(move_kernel, "MIN_BLOCK_ROWS", 5)
    monkeypatch.setattr(move_kernel, "MOVE_BLOCK_BYTES", 1)


def current_distances(state):
    """Every row of the state's distances as it reads them (the upper triangle mirrored
    where only it is kept), the state untouched."""
    return np.array([state.row(r) for r in range(state.dist2.shape[0])])


def exact_distances(X, mask, rows):
    """The reference distances (:func:`exact_sq_distances`) of ``rows`` to every sample."""
    values = np.ascontiguousarray(X[:, mask])
    return np.array([exact_sq_distances(values[r], values) for r in rows])


def assert_within_bound(evaluator, state, X):
    """Every cached distance within ``slack_i + slack_j`` of the exact one, ``inf`` exactly
    on each row's own fold."""
    rows = evaluator._rows.rows
    own = evaluator._rows.fold[rows][:, None] == evaluator._rows.fold[None, :]
    dist2 = current_distances(state)
    assert np.array_equal(np.isinf(dist2), own)
    slack = state.slack()
    error = np.abs(dist2 - exact_distances(X, state.mask, rows))[~own]
    assert np.all(error <= (slack[rows][:, None] + slack[None, :])[~own])


def walk(evaluator, reference, X, rng, n_moves, most_flipped):
    """Make a state and move it ``n_moves`` times; every Score equal to the reference's full
    one."""
    n_genes = X.shape[1]
    mask = rng.random(n_genes) < 0.5
    score, state = evaluator.score_new_state(mask)  # every sample's rows: the upper triangle
    assert score == reference.score(mask)
    assert_within_bound(evaluator, state, X)
    for _ in range(n_moves):
        genes = rng.choice(n_genes, size=int(rng.integers(1, most_flipped + 1)), replace=False)
        moved = mask.copy()
        moved[genes] = ~moved[genes]
        if not moved.any():
            continue
        mask = moved
        assert evaluator.score_move(state, genes) == reference.score(mask)
        assert np.array_equal(state.mask, mask)
        assert_within_bound(evaluator, state, X)
    return state


REPRESENTATIVE = {("offset", 1, 5, (0, 1)), ("integers", 3, "loo", (0, 1)),
                  ("offset", 1, "holdout", (1, 2)), ("normal", 5, 4, (0, 3))}
"""The cases `make test` runs; `make check` runs every one."""


def move_cases():
    """Every data set x (k, validation) x sample shard, all but a few marked slow."""
    for name, X, y in tie_prone_datasets(31, 47, 80):
        for k, cv in [(1, "loo"), (1, 5), (1, "holdout"), (3, "loo"), (5, 4)]:
            for shard in [(0, 1), (1, 2), (0, 3)]:
                marks = () if (name, k, cv, shard) in REPRESENTATIVE else pytest.mark.slow
                yield pytest.param(name, X, y, k, cv, shard, marks=marks,
                                   id=f"{name}-k{k}-{cv}-shard{shard[0]}of{shard[1]}")


@pytest.mark.parametrize("name, X, y, k, cv, shard", list(move_cases()))
def test_moves_give_full_evaluations(name, X, y, k, cv, shard, small_blocks):
    settings = {"k": k, "cv": cv, "seed": 4, "shard": shard, "class_counts": k == 3}
    evaluator = KnnEvaluator(X, y, **settings)
    reference = KnnEvaluator(X, y, compiled=False, **settings)
    opened = counting_decide(evaluator)
    walk(evaluator, reference, X, np.random.default_rng(len(name) + k), 12, 30)
    if name != "normal" and evaluator._rows.rows.size:
        assert opened  # the bound left rows open: they were decided from exact distances


def test_a_drifted_state_of_many_moves_stays_exact(small_blocks):
    """A hundred moves and more on the offset data (values near 1e7 that differ by about 1): the drift
    grows with every move, and every decision it could change is made exactly."""
    _, X, y = list(tie_prone_datasets(8, 47, 60))[2]
    evaluator = KnnEvaluator(X, y, cv=5, seed=1)
    reference = KnnEvaluator(X, y, cv=5, seed=1, compiled=False)
    opened = counting_decide(evaluator)
    state = walk(evaluator, reference, X, np.random.default_rng(3), 120, 4)
    assert state.drift.max() > 100 * np.finfo(float).eps * np.abs(state.sq).max()
    assert len(opened) > 0


def near_tied_triples(n_triples, n_genes):
    """Triples ``(a, i, b)`` at positions ``t``, ``t + m``, ``t + 2 m`` (``m`` triples), far
    from the other triples, on a common offset of 1e7: ``b`` is nearer to ``i`` than ``a``
    by a relative 1e-6 on every subset, far below the rounding of the Gram form (about
    1e-2 here), and ``i`` has ``b``'s class, so a row decided from the rounded distances
    alone would be wrong about half the time."""
    base = 1e7 + 50.0 * np.arange(n_triples)[:, None] + 3.0 * np.arange(n_genes)[None, :]
    X = np.concatenate([base + 1.0, base, base - (1.0 - 1e-6)])
    y = np.repeat([0, 1, 1], n_triples)
    return X, y


def test_a_near_tie_across_the_diagonal_is_decided_exactly(small_blocks):
    """Row ``i``'s two candidates lie one before and one after its diagonal: the columns
    it gets from the rows before it (the upper triangle) and its own must both count, or
    ``i`` would be settled on ``a``."""
    X, y = near_tied_triples(16, 12)
    evaluator = KnnEvaluator(X, y)
    reference = KnnEvaluator(X, y, compiled=False)
    mask = np.ones(12, dtype=bool)
    mask[[3, 8]] = False
    state = evaluator.new_state(mask)
    for genes in ([3], [0, 8], [5], [0, 3, 5]):
        genes = np.array(genes)
        mask[genes] = ~mask[genes]
        assert evaluator.score_move(state, genes) == reference.score(mask)
        assert reference.score(mask).correct >= 16  # every i finds its b


def sklearn_correct(X, y, folds, k):
    """Correct predictions of scikit-learn's brute-force k-NN on ``folds``."""
    correct = 0
    with threadpool_limits(1):
        for train, test in folds:
            model = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(X[train], y[train])
            correct += int(np.count_nonzero(model.predict(X[test]) == y[test]))
    return correct


@pytest.mark.parametrize("k, cv", [(1, "loo"), (1, 10), (3, 10), (5, "holdout")])
def test_moves_agree_with_sklearn(k, cv, small_blocks):
    rng = np.random.default_rng(20 + k)
    X = rng.normal(size=(60, 90)) * rng.uniform(0.5, 3.0, size=90)
    y = rng.integers(0, 3, size=60)
    X[:, :4] += y[:, None]
    evaluator = KnnEvaluator(X, y, k=k, cv=cv, seed=2)
    mask = rng.random(90) < 0.3
    state = evaluator.new_state(mask)
    for _ in range(6):
        genes = rng.choice(90, size=5, replace=False)
        mask[genes] = ~mask[genes]
        score = evaluator.score_move(state, genes)
        assert score.correct == sklearn_correct(X[:, mask], y, evaluator.folds, k)


def test_the_numpy_path_stays_the_reference(monkeypatch):
    """``compiled=False`` moves a state by the numpy path, with the same Scores."""
    X, y = list(tie_prone_datasets(5, 30, 40))[0][1:]
    called = []
    monkeypatch.setattr(move_kernel, "_upper_kernel",
                        lambda *args: called.append(1) or pytest.fail("compiled"))
    plain = KnnEvaluator(X, y, compiled=False)
    full = KnnEvaluator(X, y)
    rng = np.random.default_rng(0)
    mask = rng.random(40) < 0.5
    state = plain.new_state(mask)
    genes = np.array([1, 7, 30])
    mask[genes] = ~mask[genes]
    assert plain.score_move(state, genes) == full.score(mask)
    assert not called


@pytest.mark.parametrize("device, settings", [("cpu", {}), ("gpu", {"array_module": "numpy"})])
def test_a_rebuilt_state_takes_over_the_old_one_s_memory(device, settings):
    """A particle that moved far is scored by a full product written over its old state's
    distances (fresh pages cost more than the product's pass): a state within its bound of
    the exact distances (the same bits as a new state on the device)."""
    X, y = list(tie_prone_datasets(9, 47, 80))[0][1:]
    scorer = make_scorer(X, y, cv=5, device=device, **settings)
    fitness = SubsetFitness(scorer, make_objective("accuracy", 0.9))
    states = ParticleStates(fitness, 1)
    mask = np.random.default_rng(1).random(80) < 0.5
    states.values([0], mask[None])
    memory = states._entries[0].state.dist2
    value = states.values([0], ~mask[None])
    rebuilt = states._entries[0].state
    assert states.counts.rebuilt == 2 and rebuilt.dist2 is memory
    if rebuilt.upper:  # the upper triangle made by blocks, within its bound
        assert_within_bound(scorer, rebuilt, X)
    else:
        assert np.array_equal(rebuilt.dist2, scorer.new_state(~mask).dist2)
    np.testing.assert_array_equal(value, fitness.many(~mask[None]))


@pytest.mark.parametrize("cv", ["loo", 5])
def test_a_moved_state_serves_every_other_reader_whole(cv):
    """A move of every sample's rows keeps only the upper triangle; the readers of whole
    rows (a flip scored or applied, one-gene and multi-gene flips, the numpy path) make
    the state whole first and score as a full evaluation does."""
    X, y = list(tie_prone_datasets(6, 47, 60))[0][1:]
    evaluator = KnnEvaluator(X, y, cv=cv, seed=3)
    reference = KnnEvaluator(X, y, cv=cv, seed=3, compiled=False)
    rng = np.random.default_rng(5)
    mask = rng.random(60) < 0.5
    state = evaluator.new_state(mask)

    def moved(genes):
        genes = np.array(genes)
        mask[genes] = ~mask[genes]
        assert evaluator.score_move(state, genes) == reference.score(mask)
        assert state.upper

    def flipped(genes):
        other = mask.copy()
        other[genes] = ~other[genes]
        return reference.score(other)

    moved([1, 4, 9])
    single = evaluator.score_single_flips(state, [2, 3, 40])
    assert single == [flipped([g]) for g in (2, 3, 40)] and not state.upper
    moved([7])
    assert evaluator.score_flip(state, [11, 12]) == flipped([11, 12]) and not state.upper
    moved([20, 21])
    tries = np.array([[5, 6], [30, 31]])
    assert list(evaluator.score_flips(state, tries)) == [flipped(t).correct for t in tries]
    moved([0])
    evaluator.apply_flip(state, np.array([13]))
    mask[13] = ~mask[13]
    assert reference.score(mask) == evaluator.score(mask)
    np.testing.assert_array_equal(np.isinf(state.dist2), np.isinf(reference.new_state(mask).dist2))
    moved([13, 14])


def test_whole_and_row_read_the_upper_triangle():
    """``DistanceState.row`` reads a row across the diagonal from the upper triangle, and
    ``whole`` mirrors it into the lower one in blocks, the upper one untouched."""
    from hpcswarm.fitness import incremental

    rng = np.random.default_rng(0)
    n = 23
    full = rng.random((n, n))
    full = full + full.T
    upper = np.triu(full) + np.tril(rng.random((n, n)), -1)  # a stale lower triangle
    state = incremental.DistanceState(np.ones(3, dtype=bool), upper.copy(), np.ones(n),
                                      np.zeros(n), 3, upper=True)
    assert all(np.array_equal(state.row(r), full[r]) for r in range(n))
    original = incremental.WHOLE_BLOCK_VALUES
    try:
        incremental.WHOLE_BLOCK_VALUES = 2 * n  # blocks of 2 rows
        state.whole()
    finally:
        incremental.WHOLE_BLOCK_VALUES = original
    assert np.array_equal(state.dist2, full) and not state.upper


@pytest.mark.parametrize("k, cv", [(1, "loo"), (3, 5)])
def test_a_state_of_rows_beyond_one_block_is_built_by_blocks(k, cv, small_blocks, monkeypatch):
    """Where the rows are every sample but one block does not hold them (above 1,048
    samples), a new state is made by each block's product of its columns from its own first
    sample on (no Gram product of the whole): the same Scores and bounds, moved after."""
    import hpcswarm.fitness.move_kernel as kernel

    X, y = list(tie_prone_datasets(7, 47, 60))[1][1:]
    evaluator = KnnEvaluator(X, y, k=k, cv=cv, seed=5)
    reference = KnnEvaluator(X, y, k=k, cv=cv, seed=5, compiled=False)
    evaluator._rows.block = 10  # five blocks of rows
    products, upper_pass = [], kernel._UpperPass
    monkeypatch.setattr(kernel, "_UpperPass", type("Counted", (upper_pass,), {
        "rows": lambda self, change, *rest: products.append(change.shape)
        or upper_pass.rows(self, change, *rest)}))
    mask = np.random.default_rng(2).random(60) < 0.5
    score, state = evaluator.score_new_state(mask)
    assert products == [(min(5, 47 - start), 47 - start) for start in range(0, 47, 5)]
    assert state.upper and score == reference.score(mask)
    assert_within_bound(evaluator, state, X)
    walk(evaluator, reference, X, np.random.default_rng(9), 6, 10)


def test_move_terms_are_the_signed_values_and_the_norms_of_flip_norms():
    """One compiled pass gives the product's signed factor exactly (times 2 for a gene that
    leaves, -2 for one that enters) and the norms of ``flip_norms`` to their rounding."""
    from hpcswarm.fitness.distances import flip_norms

    rng = np.random.default_rng(4)
    values = rng.normal(size=(9, 31)) * rng.uniform(0.1, 1e3, size=(9, 1))
    leaving = np.array([True, False, False, True, True, False, True, False, False])
    signed, delta_sq, magnitude = move_kernel.move_terms(values, leaving)
    assert np.array_equal(signed, values * np.where(leaving, 2.0, -2.0)[:, None])
    expected_delta, expected_magnitude = flip_norms(values[~leaving], values[leaving])
    tolerance = 9 * np.finfo(float).eps * expected_magnitude
    assert np.all(np.abs(delta_sq - expected_delta) <= tolerance)
    assert np.all(np.abs(magnitude - expected_magnitude) <= tolerance)
    nothing_leaves = move_kernel.move_terms(values, np.zeros(9, dtype=bool))
    assert np.array_equal(nothing_leaves[1], nothing_leaves[2])
