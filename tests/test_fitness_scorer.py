"""The scorer seam: the protocol the searches use, its one factory, Scores adding up."""

import numpy as np
import pytest

from hpcswarm.errors import ParameterError
from hpcswarm.fitness import CachedState, KnnEvaluator, Score, Scorer, make_folds, make_scorer


def data(seed=3, n=36, genes=12):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, genes)) + y[:, None] * rng.normal(size=genes)
    return X, y


def test_the_factory_builds_a_scorer_equal_to_the_exact_engine():
    X, y = data()
    scorer = make_scorer(X, y, k=3, cv=4, seed=5)
    assert isinstance(scorer, Scorer) and scorer.n_genes == 12 and scorer.total == 36
    reference = KnnEvaluator(X, y, k=3, cv=4, seed=5)
    masks = np.random.default_rng(0).random((6, 12)) < 0.5
    assert scorer.score_many(masks) == [reference.score(m) for m in masks]
    state = scorer.new_state(masks[0])
    assert isinstance(state, CachedState)
    flipped = masks[0].copy()
    flipped[[1, 4]] = ~flipped[[1, 4]]
    assert scorer.score_flip(state, [1, 4]) == reference.score(flipped)
    singles = scorer.score_single_flips(state, np.arange(12))
    for gene, score in enumerate(singles):
        one = masks[0].copy()
        one[gene] = not one[gene]
        assert score == reference.score(one)
    scorer.apply_flip(state, [1, 4])
    assert np.array_equal(state.mask, flipped)


def test_bad_settings_are_parameter_errors():
    X, y = data()
    with pytest.raises(ParameterError, match="k must be an integer"):
        make_scorer(X, y, k=0)
    with pytest.raises(ParameterError, match="40-fold cross-validation needs at least 40 samples"):
        make_scorer(X, y, cv=40)


def test_scores_of_disjoint_held_out_blocks_add_up_to_the_whole():
    """What a sample-sharded scorer relies on: each block of held-out rows scored apart."""
    X, y = data(seed=8)
    folds = make_folds(y, 6, 2)
    whole = make_scorer(X, y, k=1, folds=folds)
    blocks = [make_scorer(X, y, k=1, folds=folds[:2]), make_scorer(X, y, k=1, folds=folds[2:])]
    for mask in np.random.default_rng(1).random((5, 12)) < 0.4:
        parts = [block.score(mask) for block in blocks]
        assert parts[0] + parts[1] == sum(parts) == whole.score(mask)
    assert Score(2, 3) + Score(4, 5) == Score(6, 8)
    with pytest.raises(TypeError):
        Score(2, 3) + 1


def test_the_protocol_holds_what_the_methods_read_from_a_scorer():
    """Every attribute the methods, refinements and the search read from a scorer is in the
    protocol (VLPSO ranks the genes from the scorer's samples and class codes), so that every
    engine behind it offers them."""
    import ast
    from pathlib import Path

    import hpcswarm

    read = set()
    package = Path(hpcswarm.__file__).parent
    readers = ("swarm", "signatures", "baselines", "selection")
    for path in (p for folder in readers for p in (package / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "scorer"):
                read.add(node.attr)
    declared = {name for name in dir(Scorer) if not name.startswith("_")}
    declared |= set(Scorer.__annotations__)
    assert {"data", "codes"} <= read and read <= declared
