"""The paired one-sided Wilcoxon signed-rank test: against scipy, by hand, by enumeration."""

import itertools

import numpy as np
import pytest
from scipy.stats import rankdata, wilcoxon

from hpcswarm.results.significance import EXACT_PAIRS, compare, signed_rank_null, signed_rank_test


def _brute_force(d, alternative):
    """The one-sided p-value by enumerating every sign pattern of the nonzero differences."""
    d = np.asarray(d, float)
    d = d[d != 0]
    ranks = rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    sums = [sum(r for r, s in zip(ranks, signs) if s)
            for signs in itertools.product((0, 1), repeat=d.size)]
    sums = np.array(sums)
    hits = sums >= observed - 1e-9 if alternative == "greater" else sums <= observed + 1e-9
    return hits.mean()


@pytest.mark.parametrize("alternative", ["greater", "less"])
@pytest.mark.parametrize("seed", range(4))
def test_exact_p_matches_scipy_without_ties_or_zeros(seed, alternative):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=12), rng.normal(size=12)
    ours = signed_rank_test(x, y, alternative)
    theirs = wilcoxon(x, y, alternative=alternative, method="exact")
    assert ours.method == "exact" and not ours.ties and ours.nonzero == 12
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12)
    assert ours.statistic == pytest.approx(float(np.sum(rankdata(np.abs(x - y))[x > y])))


def test_hand_computed_small_cases():
    # three pairs, all higher: T+ = 6, the only outcome of 8 with T+ >= 6
    result = signed_rank_test([0.9, 0.8, 0.7], [0.5, 0.5, 0.5], "greater")
    assert result.p_value == pytest.approx(1 / 8) and result.min_p == pytest.approx(1 / 8)
    assert not result.reachable(0.05)
    assert "too few runs and folds to reach alpha = 0.05" in result.describe(0.05)
    assert "smallest p reachable is 0.125" in result.describe(0.05)
    # five pairs, all higher: 1/32 < 0.05, reachable
    five = signed_rank_test(np.arange(5) + 1.0, np.zeros(5), "greater")
    assert five.p_value == pytest.approx(1 / 32) and five.reachable(0.05)
    assert "too few" not in five.describe(0.05)
    # d = (1, -2, 3): T+ = 1 + 3 = 4; of the 8 sign patterns T+ in {0,1,2,3,3,4,5,6}: 3 >= 4
    mixed = signed_rank_test([1.0, -2.0, 3.0], [0.0, 0.0, 0.0], "greater")
    assert mixed.statistic == 4 and mixed.p_value == pytest.approx(3 / 8)
    assert signed_rank_test([1.0, -2.0, 3.0], [0.0, 0.0, 0.0], "less").p_value == \
        pytest.approx(6 / 8)


def test_zero_differences_are_dropped_and_n_says_so():
    x = [0.75, 0.875, 1.0, 0.5, 0.625]
    y = [0.75, 0.75, 0.875, 0.5, 0.5]  # two zeros, three pairs higher by 1/8
    result = signed_rank_test(x, y, "greater")
    assert result.pairs == 5 and result.nonzero == 3 and result.ties
    assert result.p_value == pytest.approx(1 / 8) and result.min_p == pytest.approx(1 / 8)
    assert "n = 3 pairs that differ of 5" in result.describe(0.05)
    # 7/8 - 6/8 and 1/8 are one tie once rounded
    assert signed_rank_test([7 / 8, 0.3], [6 / 8, 0.3 - 1 / 8]).ties


@pytest.mark.parametrize("seed", range(5))
def test_exact_with_ties_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = rng.integers(-3, 4, size=11) / 8.0
    for alternative in ("greater", "less"):
        result = signed_rank_test(d, np.zeros_like(d), alternative)
        assert result.p_value == pytest.approx(_brute_force(d, alternative), abs=1e-12)


def test_null_distribution_sums_to_one_and_is_symmetric():
    null = signed_rank_null(np.array([2, 4, 5, 5, 10]))  # doubled mid-ranks with a tie
    assert null.sum() == pytest.approx(1.0) and np.allclose(null, null[::-1])


def test_normal_approximation_beyond_exact_limit_matches_scipy():
    rng = np.random.default_rng(3)
    x = rng.normal(0.1, 1, size=EXACT_PAIRS + 50)
    y = rng.normal(0, 1, size=x.size)
    ours = signed_rank_test(x, y, "greater")
    theirs = wilcoxon(x, y, alternative="greater", method="approx", correction=False)
    assert ours.method.startswith("normal approximation")
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)


def test_no_differing_pair():
    result = signed_rank_test([0.5, 0.5], [0.5, 0.5])
    assert result.p_value == 1.0 and result.nonzero == 0 and not result.reachable(0.05)


def test_compare_symbols():
    low = np.linspace(0.80, 0.85, 10)
    high = low + np.linspace(0.01, 0.10, 10)
    symbol, test = compare(high, low)
    assert symbol == "+" and test.alternative == "greater" and test.p_value < 0.05
    symbol, test = compare(low, high)
    assert symbol == "-" and test.alternative == "less"
    symbol, test = compare(low[:3], high[:3])  # three pairs: 1/8 at best
    assert symbol == "=" and test.p_value == pytest.approx(1 / 8)


@pytest.mark.parametrize("args, message", [
    (([1.0, 2.0], [1.0]), "same length"),
    (([1.0, np.nan], [1.0, 2.0]), "finite"),
])
def test_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        signed_rank_test(*args)
    with pytest.raises(ValueError, match="alternative"):
        signed_rank_test([1.0], [0.0], "two-sided")
    with pytest.raises(ValueError, match="alpha"):
        compare([1.0], [0.0], alpha=1.5)
