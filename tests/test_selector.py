"""The scikit-learn face: estimator checks, Pipeline under cross-validation, GridSearchCV,
``random_state`` semantics, communicator, cheap ``import hpcswarm``.

Estimator checks: every check of ``parametrize_with_checks`` runs and passes, for three fast
configurations (the default method PSO-LSRG with a tiny swarm, the greedy SFS, and CSO under
3-fold cross-validation with its archive). The one check scikit-learn itself skips is
``check_array_api_input``: it needs ``SCIPY_ARRAY_API=1`` and array-API namespaces, and the
search converts every input to a NumPy float64 matrix anyway. Methods whose paper default is
10-fold cross-validation (``cso``, ``sfr``, ``fsr``) refuse the checks' smallest data sets
(classes of 5 samples) with a ``ParameterError`` naming the class and the fold count; that
is a property of the data, so they are checked here with ``cv=3``.
"""

import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from synthetic import informative_genes

import hpcswarm
from hpcswarm import SwarmFeatureSelector
from hpcswarm.comm import SerialComm
from hpcswarm.errors import ParameterError
from hpcswarm.selection.search import run_search
from hpcswarm.signatures.refinements import CHOICES

FAST = [
    SwarmFeatureSelector(params={"n_particles": 4, "n_iterations": 3, "n_divisions": 2}),
    SwarmFeatureSelector("pso-lsrg", {"n_particles": 4, "n_iterations": 3, "ls_tries": 2}),
    SwarmFeatureSelector("sfs"),
    SwarmFeatureSelector("cso", {"n_particles": 4, "n_iterations": 3, "cv": 3,
                                 "archive_size": 100}),
    SwarmFeatureSelector("sfs", preprocess="top_variance=3,zscore"),
]


@parametrize_with_checks(FAST)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_pipeline_under_cross_validation_selects_on_training_rows_only():
    X, y = informative_genes()
    model = make_pipeline(SwarmFeatureSelector("sfs", random_state=0), KNeighborsClassifier(1))
    out = cross_validate(model, X, y, cv=4, return_estimator=True)
    assert out["test_score"].mean() > 0.8
    for fitted in out["estimator"]:
        selector = fitted[0]
        assert selector.result_.extra["score"]["total"] == 27  # LOOCV on the 27 training rows
        assert {0, 1} <= set(np.flatnonzero(selector.get_support()))
    assert cross_val_score(model, X, y, cv=3).shape == (3,)


def test_grid_search_over_methods_and_their_parameters():
    X, y = informative_genes(seed=1)
    model = make_pipeline(SwarmFeatureSelector(random_state=0), KNeighborsClassifier(1))
    grid = GridSearchCV(model, {"swarmfeatureselector__algorithm": ["sfs", "lfs"],
                                "swarmfeatureselector__params": [{"k": 1}, {"k": 3}]}, cv=3)
    grid.fit(X, y)
    assert grid.best_params_["swarmfeatureselector__algorithm"] in ("sfs", "lfs")
    assert grid.best_estimator_[0].support_.sum() >= 1


def test_transform_and_feature_names():
    X, y = informative_genes(seed=2)
    selector = SwarmFeatureSelector("sfs", random_state=0).fit(X, y)
    chosen = np.flatnonzero(selector.support_)
    assert np.array_equal(selector.transform(X), X[:, chosen])
    assert selector.get_feature_names_out().tolist() == [f"x{i}" for i in chosen]
    names = np.array([f"gene{i}" for i in range(X.shape[1])], dtype=object)
    assert selector.get_feature_names_out(names).tolist() == names[chosen].tolist()


def test_int_random_state_is_the_run_seed():
    X, y = informative_genes(seed=3)
    params = {"n_particles": 6, "n_iterations": 3, "cv": 3}
    selector = SwarmFeatureSelector("bpso", params, random_state=11).fit(X, y)
    expected = run_search(X, y, "bpso", params, seed=11)
    assert selector.seed_ == 11 and np.array_equal(selector.support_, expected.mask)
    assert selector.fitness_ == expected.fitness
    again = clone(selector).fit(X, y)
    assert np.array_equal(again.support_, selector.support_)


def test_the_refine_docstring_lists_every_rule():
    listed = re.search(r"refine : \{(.*?)\}", SwarmFeatureSelector.__doc__, re.S).group(1)
    assert re.findall(r'"([a-z0-9-]+)"', listed) == list(CHOICES)


def test_random_state_instances_draw_a_new_seed_per_fit():
    X, y = informative_genes(seed=4)
    for make in (np.random.RandomState, np.random.default_rng):
        state = make(5)
        selector = SwarmFeatureSelector("sfs", random_state=state)
        first, second = selector.fit(X, y).seed_, selector.fit(X, y).seed_
        assert first != second
        assert SwarmFeatureSelector("sfs", random_state=make(5)).fit(X, y).seed_ == first
    np.random.seed(9)
    drawn = SwarmFeatureSelector("sfs").fit(X, y).seed_
    assert drawn == np.random.RandomState(9).randint(np.iinfo(np.int32).max)


@pytest.mark.parametrize("bad, shown", [
    (-1, "-1"), (1.5, "1.5"), ("seed", "'seed'"), (True, "True"),
    (np.random.SeedSequence(1), "a SeedSequence"), (np.random.PCG64(1), "a PCG64"),
])
def test_bad_random_state(bad, shown):
    """A bool is no seed (scikit-learn's ``check_random_state`` would take True as 1)."""
    X, y = informative_genes()
    with pytest.raises(ValueError, match=f"^random_state must be None, an int >= 0, a "
                                         f"RandomState or a Generator, got {re.escape(shown)}$"):
        SwarmFeatureSelector("sfs", random_state=bad).fit(X, y)


def test_bad_algorithm_and_parameter_are_named():
    X, y = informative_genes()
    with pytest.raises(ParameterError, match="unknown algorithm 'swarm'.*pso-lsrg.*sfs"):
        SwarmFeatureSelector("swarm").fit(X, y)
    with pytest.raises(ParameterError, match="'n_particles'"):
        SwarmFeatureSelector("pso", {"n_particles": "many"}).fit(X, y)
    with pytest.raises(ValueError, match="params must be a dict"):
        SwarmFeatureSelector("pso", [("k", 1)]).fit(X, y)


def test_preprocess_searches_the_kept_genes_and_reports_original_columns():
    X, y = informative_genes(seed=5)
    X[:, [4, 8, 10]] *= 3.0  # noise of variance 9: above the informative genes' (~4.6)
    selector = SwarmFeatureSelector("sfs", random_state=0,
                                    preprocess={"top_variance": 5, "zscore": True}).fit(X, y)
    kept = selector.preprocessing_.genes
    assert kept.tolist() == [0, 1, 4, 8, 10]
    assert set(np.flatnonzero(selector.support_)) <= set(kept) and selector.support_.size == 12
    assert selector.n_features_in_ == 12
    # the same search as a plain fit on the transformed matrix, its indices mapped back
    plain = SwarmFeatureSelector("sfs", random_state=0).fit(
        selector.preprocessing_.transform(X), y)
    assert np.array_equal(np.flatnonzero(selector.support_), kept[plain.support_])
    assert all(np.array_equal(ours, kept[theirs]) for ours, theirs in
               zip(selector.front_["genes"], plain.front_["genes"]))
    assert np.array_equal(selector.scores_[kept], plain.scores_)
    assert not selector.scores_[np.setdiff1d(np.arange(12), kept)].any()
    assert np.array_equal(selector.ranking_[kept].argsort(), plain.ranking_.argsort())
    assert selector.inner_accuracy_ == plain.inner_accuracy_
    assert np.array_equal(selector.transform(X), X[:, selector.support_])  # untransformed
    assert SwarmFeatureSelector("sfs").fit(X, y).preprocessing_ is None
    capped = SwarmFeatureSelector("sfs", n_features_to_select=8, preprocess="top_variance=5")
    assert set(np.flatnonzero(capped.fit(X, y).support_)) <= set(kept)  # 8 of X's 12 genes


@pytest.mark.parametrize("bad, problem", [
    ("top_variance=0", "preprocess.top_variance must be a number of genes >= 1, got 0"),
    ({"zscore": 3}, "preprocess.zscore must be true or false, got 3"),
    ("scale", "preprocess.scale is not a preprocessing step; steps: log2, zscore, minmax, "
              "top_variance, top_anova"),
    (5, "preprocess must be a table of steps, got 5"),
])
def test_bad_preprocess_steps_are_named(bad, problem):
    with pytest.raises(ParameterError) as raised:
        SwarmFeatureSelector("sfs", preprocess=bad).fit(*informative_genes())
    assert isinstance(raised.value, ValueError) and str(raised.value) == problem


class Uncopyable(SerialComm):
    """A serial communicator that, like an MPI one, cannot be deep-copied."""

    def __deepcopy__(self, memo):
        raise TypeError("cannot copy a communicator")


def test_communicator_is_used_and_shared_by_clones():
    X, y = informative_genes(seed=6)
    comm = Uncopyable()
    selector = SwarmFeatureSelector("sfs", random_state=0, comm=comm)
    assert clone(selector).comm is comm
    fitted = selector.fit(X, y)
    serial = SwarmFeatureSelector("sfs", random_state=0).fit(X, y)
    assert np.array_equal(fitted.support_, serial.support_)
    assert cross_val_score(make_pipeline(selector, KNeighborsClassifier(1)), X, y, cv=3).size == 3


def test_import_hpcswarm_loads_neither_scikit_learn_nor_mpi():
    code = ("import sys, hpcswarm; "
            "print(any(m.split('.')[0] in ('sklearn', 'mpi4py', 'scipy') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert "SwarmFeatureSelector" in dir(hpcswarm)


@pytest.mark.parametrize("exponent", [-1060, 1000])
def test_values_at_either_end_of_the_range_select_as_at_a_normal_scale(exponent):
    """Values near 1e-319 or 1e+301: their squares underflow or overflow, so without the
    power-of-two scaling at the selector's entry every neighbour ties."""
    X, y = informative_genes(seed=3)
    params = {"n_particles": 6, "n_iterations": 3, "cv": 3}
    normal = SwarmFeatureSelector("bpso", params, random_state=11).fit(X, y)
    extreme = SwarmFeatureSelector("bpso", params, random_state=11).fit(np.ldexp(X, exponent), y)
    assert np.array_equal(extreme.support_, normal.support_)
    assert extreme.inner_accuracy_ == normal.inner_accuracy_ > 0.5
