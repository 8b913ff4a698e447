"""The compiled one-pass decision of 1-NN row blocks equals the numpy path: the same cached
distances bit for bit and the same counts, on every validation scheme and sample shard."""

import json

import numpy as np
import pytest

from hpcswarm.fitness import KnnEvaluator, rowblocks, row_kernel
from engine_probes import counting_decide, tie_prone_datasets

pytestmark = pytest.mark.skipif(not row_kernel.AVAILABLE, reason="numba is not installed")


def evaluators(X, y, cv, shard, compiled):
    evaluator = KnnEvaluator(X, y, cv=cv, seed=4, shard=shard)
    evaluator._rows.compiled = compiled
    return evaluator


@pytest.mark.parametrize("name, X, y", list(tie_prone_datasets(31, 47, 80)),
                         ids=["normal", "integers", "offset"])
@pytest.mark.parametrize("cv", ["loo", 5, "holdout"])
@pytest.mark.parametrize("shard", [(0, 1), (0, 2), (1, 2), (2, 3)])
def test_compiled_rows_equal_the_numpy_path(name, X, y, cv, shard, monkeypatch):
    monkeypatch.setattr(rowblocks, "ROW_BLOCK_BYTES", 8 * 47 * 5)  # blocks of 5 rows
    compiled, reference = (evaluators(X, y, cv, shard, flag) for flag in (True, False))
    assert compiled._rows.compiled and not reference._rows.compiled
    rng = np.random.default_rng(len(name))
    opened = counting_decide(compiled)
    for _ in range(4):
        mask = rng.random(80) < 0.4
        assert compiled.score(mask) == reference.score(mask)
        states = compiled.new_state(mask), reference.new_state(mask)
        assert np.array_equal(states[0].dist2, states[1].dist2)  # inf included
        for _ in range(3):
            genes = np.sort(rng.choice(80, size=int(rng.integers(1, 5)), replace=False))
            assert compiled.score_flip(states[0], genes) == reference.score_flip(states[1], genes)
            compiled.apply_flip(states[0], genes)
            reference.apply_flip(states[1], genes)
        assert np.array_equal(states[0].dist2, states[1].dist2)
    if name == "integers" and compiled._rows.rows.size:
        assert opened  # rows the bound left open were decided exactly


def test_k_above_one_keeps_the_numpy_path():
    rng = np.random.default_rng(2)
    evaluator = KnnEvaluator(rng.normal(size=(20, 6)), np.arange(20) % 2, k=3)
    assert not evaluator._rows.compiled


def test_compiled_false_keeps_the_numpy_path_with_equal_scores():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(40, 12)), np.arange(40) % 3
    plain, compiled = (KnnEvaluator(X, y, compiled=flag) for flag in (False, None))
    assert not plain._rows.compiled and compiled._rows.compiled
    mask = rng.random(12) < 0.5
    assert plain.score(mask) == compiled.score(mask)


def test_one_scoring_compiles_only_past_the_breakeven():
    from hpcswarm.fitness.compiled import BREAKEVEN_CELLS, worth_compiling

    assert not worth_compiling(10_000 * 10_000)  # numba's one-off cost is not repaid
    assert worth_compiling(BREAKEVEN_CELLS) and worth_compiling(50_000 * 50_000)


def test_evaluate_scores_a_small_set_by_the_numpy_path(monkeypatch, capsys):
    from hpcswarm import cli
    from hpcswarm.fitness import scorer

    made = []
    real = scorer.cpu_scorer
    monkeypatch.setitem(scorer.SCORERS, "cpu",
                        lambda *a, **kw: made.append(real(*a, **kw)) or made[-1])
    assert cli.main(["evaluate", "builtin:srbct", "--all"]) == 0
    assert not made[0]._rows.compiled
    assert json.loads(capsys.readouterr().out)["correct"] == 76  # 76/83, as the compiled path


def test_a_kernel_numba_cannot_cache_is_compiled_without_a_cache(monkeypatch):
    """Where numba finds no folder it may write its cache in (a read-only install and home:
    its RuntimeError 'cannot cache function ... no locator available'), the kernel is
    compiled without a cache and gives the same result."""
    pytest.importorskip("numba")
    from numba.core.dispatcher import Dispatcher

    from hpcswarm.fitness.compiled import Kernel

    def no_locator(self):
        raise RuntimeError(f"cannot cache function {self.py_func.__name__!r}: no locator "
                           "available for file 'kernels.py'")

    monkeypatch.setattr(Dispatcher, "enable_caching", no_locator)

    def total(values):
        out = 0.0
        for value in values:
            out += value
        return out

    kernel = Kernel(total)
    assert kernel(np.arange(5.0)) == 10.0
    assert type(kernel.compiled()._cache).__name__ == "NullCache"  # numba's "no cache"
