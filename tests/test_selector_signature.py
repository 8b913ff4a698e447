"""The selector's signature: ``n_features_to_select``, ``refine``, ``max_genes``, the swarm
settings as its own keywords (for ``GridSearchCV``), the search's other settings, ``front_``,
``scores_`` and ``ranking_``, ``verbose``, the labels and columns it refuses."""

import inspect
import re
import warnings
from functools import partial

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from synthetic import informative_genes

from hpcswarm import SwarmFeatureSelector
from hpcswarm.data import load_dataset
from hpcswarm.errors import ParameterError
from hpcswarm.selection.methods import METHODS
from hpcswarm.selection.search import make_fitness, run_search
from hpcswarm.selection.spec import SPEC_PARAMS
from hpcswarm.selector import SEARCH_SETTINGS, SETTINGS, choose_signature, signature_size
from hpcswarm.signatures.refine import eliminate_to
from hpcswarm.swarm.engine.state import run_seed_sequence

SMALL = {"n_particles": 6, "n_iterations": 4}


# Genes 0, 1 and 2 carry the class among 30; the rest is noise.
informative = partial(informative_genes, n_genes=30, n_informative=3, shift=3.0)


def test_grid_search_over_a_swarm_setting_and_the_signature_size():
    X, y = informative(seed=1)
    model = make_pipeline(SwarmFeatureSelector("bpso", random_state=0, n_iterations=3, cv=3),
                          KNeighborsClassifier(1))
    grid = GridSearchCV(model, {"swarmfeatureselector__n_particles": [4, 8],
                                "swarmfeatureselector__n_features_to_select": [2, 5]}, cv=3)
    grid.fit(X, y)
    best = grid.best_estimator_[0]
    assert best.result_.params["n_particles"] == grid.best_params_[
        "swarmfeatureselector__n_particles"]
    assert best.support_.sum() <= grid.best_params_["swarmfeatureselector__n_features_to_select"]
    assert len(grid.cv_results_["params"]) == 4


def test_a_grid_over_swarms_and_greedy_methods_shares_the_swarm_settings():
    X, y = informative(seed=2)
    model = make_pipeline(SwarmFeatureSelector(random_state=0, n_particles=4, n_iterations=2,
                                               k=1, cv=3),
                          KNeighborsClassifier(1))
    grid = GridSearchCV(model, {"swarmfeatureselector__algorithm": ["sfs", "bpso", "lfs"]},
                        cv=3, error_score="raise")
    grid.fit(X, y)
    sfs = SwarmFeatureSelector("sfs", random_state=0, n_particles=4, cv=3).fit(X, y)
    assert "n_particles" not in sfs.result_.params  # ignored: sfs has no particles
    assert sfs.result_.params["cv"] == 3


def test_settings_are_method_parameters_and_conflicts_are_refused():
    declared = {p.name for cls in METHODS.values() for p in cls.PARAMS}
    keywords = set(inspect.signature(SwarmFeatureSelector.__init__).parameters)
    assert set(SETTINGS) == keywords & declared and "n_particles" in SETTINGS
    assert set(SEARCH_SETTINGS) == {p.name for p in SPEC_PARAMS} - {"algorithm"} | {"preprocess"}
    selector = SwarmFeatureSelector("bpso", {"n_particles": 5}, n_particles=6)
    with pytest.raises(ValueError, match="n_particles is given both"):
        selector.fit(*informative())
    assert SwarmFeatureSelector("bpso", {"w": 0.5}, n_particles=6,
                                k=None).method_params() == {"w": 0.5, "n_particles": 6}


def test_keyword_settings_run_the_same_search_as_params():
    X, y = informative(seed=3)
    by_keyword = SwarmFeatureSelector("bpso", random_state=4, n_particles=6, n_iterations=3,
                                      cv=3).fit(X, y)
    by_params = SwarmFeatureSelector("bpso", {"n_particles": 6, "n_iterations": 3, "cv": 3},
                                     random_state=4).fit(X, y)
    assert np.array_equal(by_keyword.support_, by_params.support_)
    assert by_keyword.fitness_ == by_params.fitness_


def test_n_features_to_select_20_on_leukemia(shared_data):
    dataset = load_dataset(shared_data / "leukemia.arff")
    X, y = np.asarray(dataset.X), np.asarray(dataset.y)
    selector = SwarmFeatureSelector("bpso", random_state=0, n_features_to_select=20,
                                    n_particles=8, n_iterations=3).fit(X, y)
    assert 1 <= selector.support_.sum() <= 20
    assert selector.result_.mask.sum() <= 20  # the cap of the swarm: min(b, max_genes)
    assert selector.transform(X).shape == (72, int(selector.support_.sum()))
    assert 0.5 < selector.inner_accuracy_ <= 1.0


def test_the_signature_is_the_best_scored_subset_within_the_size():
    X, y = informative(seed=5)
    fitted = SwarmFeatureSelector("sfs", random_state=1, n_features_to_select=2).fit(X, y)
    result = fitted.result_
    inside = [p for p in result.front if p["size"] <= 2]
    best = max(inside, key=lambda p: (p["correct"], -p["size"]))
    assert set(np.flatnonzero(fitted.support_)) == set(np.asarray(best["genes"]).tolist())
    assert fitted.inner_accuracy_ == best["correct"] / best["total"]
    assert fitted.chosen_from_ in ("front", "search")
    everything = SwarmFeatureSelector("sfs", random_state=1).fit(X, y)
    assert everything.support_.sum() > fitted.support_.sum()


def test_a_fraction_of_the_genes():
    assert signature_size(0.1, 30) == 3 and signature_size(0.01, 30) == 1
    assert signature_size(30, 30) == 30 and signature_size(None, 30) is None
    for bad in (0, 31, 0.0, 1.5, True, "20"):
        with pytest.raises(ValueError, match="n_features_to_select"):
            signature_size(bad, 30)
    X, y = informative(seed=6)
    fitted = SwarmFeatureSelector("sfs", random_state=0, n_features_to_select=0.1).fit(X, y)
    assert fitted.support_.sum() <= 3


def test_without_a_scored_subset_in_size_the_smallest_is_cut_by_elimination():
    X, y = informative(seed=7, n_genes=10)
    fitted = SwarmFeatureSelector("all-genes", random_state=0, n_features_to_select=3,
                                  refine="none").fit(X, y)   # no refinement to choose
    assert fitted.chosen_from_ == "eliminate" and fitted.support_.sum() == 3
    result = run_search(X, y, "all-genes", seed=0)
    assert choose_signature(result, 3) == (None, None, None)
    _, scorer = make_fitness(X, y, result.params, run_seed_sequence(0))
    cut = eliminate_to(scorer, result.mask, 3)
    assert np.array_equal(cut.mask, fitted.support_)
    assert cut.removed.size == 7 and cut.correct == scorer.score(cut.mask).correct
    assert fitted.inner_accuracy_ == cut.correct / cut.total
    assert {0, 1, 2} & set(np.flatnonzero(fitted.support_))


def test_refine_gives_the_refined_subset_as_signature():
    X, y = informative(seed=8)
    fitted = SwarmFeatureSelector("bpso", random_state=0, refine="prune", cv=3,
                                  **SMALL).fit(X, y)
    assert fitted.chosen_from_ == "refine"
    assert np.array_equal(fitted.support_, fitted.result_.refined.mask)
    assert fitted.support_.sum() <= fitted.result_.mask.sum()
    with pytest.raises(ValueError, match="parameter .refine. must be one of"):
        SwarmFeatureSelector("bpso", refine="trim").fit(X, y)


def test_max_genes_caps_the_search():
    X, y = informative(seed=9)
    fitted = SwarmFeatureSelector("bpso", random_state=0, max_genes=4, cv=3, **SMALL).fit(X, y)
    assert fitted.result_.mask.sum() <= 4
    assert max(fitted.front_["size"]) <= 4
    with pytest.raises(ParameterError, match="max_genes applies"):
        SwarmFeatureSelector("sfs", max_genes=4).fit(X, y)


def test_front_is_a_table_of_sizes_accuracies_and_genes():
    X, y = informative(seed=10)
    fitted = SwarmFeatureSelector("sfs", random_state=0).fit(X, y)
    front = fitted.front_
    assert len(front["size"]) == len(front["inner_accuracy"]) == len(front["genes"]) >= 1
    assert np.all(np.diff(front["size"]) > 0)
    assert [g.size for g in front["genes"]] == front["size"].tolist()
    assert np.all((front["inner_accuracy"] > 0) & (front["inner_accuracy"] <= 1))


def test_verbose_prints_rounds_and_a_summary(capsys):
    X, y = informative(seed=11)
    SwarmFeatureSelector("bpso", random_state=0, cv=3, **SMALL).fit(X, y)
    assert capsys.readouterr().out == ""
    SwarmFeatureSelector("bpso", random_state=0, cv=3, verbose=1, **SMALL).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "genes selected" in out[0] and "inner accuracy" in out[0]
    SwarmFeatureSelector("bpso", random_state=0, cv=3, verbose=2, **SMALL).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    rounds = [line for line in out if line.startswith("round ")]
    assert len(rounds) >= SMALL["n_iterations"]
    assert all(re.search(r"ETA \d+:\d\d:\d\d$", line) for line in rounds)  # time left
    with pytest.raises(ValueError, match="verbose"):
        SwarmFeatureSelector("sfs", verbose=-1).fit(X, y)


@pytest.mark.mpi
def test_the_signature_over_ranks_is_the_serial_one(capsys):
    import hpcswarm
    from hpcswarm.comm import world

    X, y = informative(seed=12)
    lsrg = {"n_particles": 4, "n_iterations": 2, "params": {"ls_tries": 2}}
    with world() as comm:
        capped = SwarmFeatureSelector("bpso", random_state=3, n_features_to_select=4, cv=3,
                                      verbose=1, comm=comm, **SMALL).fit(X, y)
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == (1 if comm.rank == 0 else 0)
        cut = SwarmFeatureSelector("pso-lsrg", random_state=3, n_features_to_select=2,
                                   comm=comm, **lsrg).fit(X, y)
        selected = hpcswarm.select(X, y, algorithm="bpso", random_state=3, refine="prune",
                                   comm=comm, cv=3, **SMALL)
    assert np.array_equal(capped.support_, SwarmFeatureSelector(
        "bpso", random_state=3, n_features_to_select=4, cv=3, **SMALL).fit(X, y).support_)
    serial_cut = SwarmFeatureSelector("pso-lsrg", random_state=3, n_features_to_select=2,
                                      **lsrg).fit(X, y)
    assert np.array_equal(cut.support_, serial_cut.support_) and cut.support_.sum() <= 2
    assert cut.chosen_from_ == serial_cut.chosen_from_
    serial = hpcswarm.select(X, y, algorithm="bpso", random_state=3, refine="prune", cv=3,
                             **SMALL)
    assert selected.gene_names == serial.gene_names


@pytest.mark.mpi
def test_a_seed_drawn_from_a_random_state_is_rank_zeros_on_every_rank():
    """Each rank's own Generator (or global RandomState) would draw its own seed: folds and
    streams would differ between the ranks of one search."""
    from hpcswarm.comm import world

    X, y = informative(seed=18)
    with world() as comm:
        own = np.random.default_rng(comm.rank)
        fitted = SwarmFeatureSelector("sfs", random_state=own, comm=comm).fit(X, y)
        seeds = comm.allgather(fitted.seed_)
    assert seeds == [np.random.default_rng(0).integers(np.iinfo(np.int32).max)] * len(seeds)


def test_the_search_settings_reach_the_search():
    X, y = informative(seed=13)
    fitted = SwarmFeatureSelector("bpso", random_state=0, refine="stability", subsamples=2,
                                  cv=3, **SMALL).fit(X, y)
    expected = run_search(X, y, "bpso", dict(SMALL, cv=3), seed=0, refine="stability",
                          subsamples=2)
    assert np.array_equal(fitted.support_, expected.refined.mask)
    with pytest.raises(ParameterError, match="subsamples must be even"):
        SwarmFeatureSelector("bpso", subsamples=3, **SMALL).fit(X, y)
    with pytest.raises(ParameterError, match="device"):
        SwarmFeatureSelector("bpso", device="tpu", **SMALL).fit(X, y)


def test_scores_are_front_frequencies_and_the_ranking_puts_the_signature_first():
    X, y = informative(seed=14)
    fitted = SwarmFeatureSelector("sfs", random_state=0, n_features_to_select=2).fit(X, y)
    front = fitted.front_["genes"]
    for gene in range(X.shape[1]):
        assert fitted.scores_[gene] == sum(gene in set(g.tolist()) for g in front) / len(front)
    assert sorted(fitted.ranking_.tolist()) == list(range(1, X.shape[1] + 1))
    size = int(fitted.support_.sum())
    assert np.array_equal(fitted.ranking_ <= size, fitted.support_)
    rest = np.argsort(fitted.ranking_)[size:]
    assert np.all(np.diff(fitted.scores_[rest]) <= 0)  # then by decreasing score


@pytest.mark.parametrize("labels, problem", [
    (np.ones(36), "one class only \\(1.0\\)"),
    ([None, "a", "b"] * 12, "12 sample\\(s\\) without a label"),
    (np.linspace(0.0, 1.0, 36), "36 distinct float values"),
    (np.array([0, 1.0, True] * 12, dtype=object), "mixed types \\(bool, float, int\\)"),
    (np.arange(36) % 4 / 2, "float values that are not whole numbers \\(0.5, 1.5\\)"),
    (np.array([10**30, 1] * 18, dtype=object), "whole-number labels beyond 64 bits"),
    (np.arange(36), "every sample has a class of its own \\(36 distinct labels\\)"),
])
def test_fit_refuses_labels_that_name_no_classes(labels, problem):
    X, _ = informative(n_samples=36)
    with pytest.raises(ValueError, match=f"^y: ({problem})"):
        SwarmFeatureSelector("sfs").fit(X, labels)


def test_fit_names_a_text_column_and_a_gene_named_twice():
    pandas = pytest.importorskip("pandas")
    X, y = informative(seed=15)
    frame = pandas.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    frame["batch"] = "b1"
    with pytest.raises(ValueError, match="X: column\\(s\\) 'batch' \\(object\\)"):
        SwarmFeatureSelector("sfs").fit(frame, y)
    frame = frame.drop(columns="batch").rename(columns={"g1": "g0"})
    with pytest.raises(ValueError, match="X: gene 'g0' is named twice"):
        SwarmFeatureSelector("sfs").fit(frame, y)


@pytest.mark.parametrize("make, problem", [
    (lambda X: X[:, 0], "X must be samples x genes \\(2-D\\), got shape \\(36,\\)"),
    (lambda X: X.astype(str), "X: text \\(<U\\d+\\) are not expression values"),
    (lambda X: X.astype("datetime64[s]"), "X: dates"),
    (lambda X: X + 1j, "X: complex numbers \\(complex128\\) .*Complex data not supported"),
    (lambda X: np.where(X > 2.5, np.inf, X), "X: \\d+ value\\(s\\) are missing or infinite"),
])
def test_fit_refuses_a_matrix_of_other_values_by_name(make, problem):
    X, y = informative()
    with pytest.raises(ValueError, match=f"^{problem}"):
        SwarmFeatureSelector("sfs").fit(make(X), y)


def test_an_object_array_is_read_as_numbers_and_its_first_other_cell_is_named():
    X, y = informative(seed=20)
    plain = SwarmFeatureSelector("sfs", random_state=0).fit(X, y).support_
    as_text = X.astype(str).astype(object)  # numbers as text: read as scikit-learn reads them
    assert np.array_equal(SwarmFeatureSelector("sfs", random_state=0).fit(as_text, y).support_,
                          plain)
    mixed = np.column_stack([X, np.where(y == 1, "tumour", "normal")])  # frame.values
    mixed = mixed.astype(object)
    mixed[:, :-1] = X
    with pytest.raises(ValueError, match="^X: the value at sample 0, gene 30 is '(normal|tumour)'"
                                         ", not a number"):
        SwarmFeatureSelector("sfs").fit(mixed, y)
    mixed[:, -1] = [{"batch": 1}] * len(y)
    with pytest.raises(TypeError, match="^X: the value at sample 0, gene 30 is \\{'batch': 1\\}"
                                        ", not a number \\(float\\(\\) argument must be"):
        SwarmFeatureSelector("sfs").fit(mixed, y)


def test_fit_names_the_column_of_a_missing_value_and_refuses_a_frame_without_columns():
    pandas = pytest.importorskip("pandas")
    X, y = informative(seed=16)
    frame = pandas.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    frame.iloc[7, 4] = np.nan
    with pytest.raises(ValueError, match="^X: 1 value.* sample 7, gene 4 \\('g4'\\)"):
        SwarmFeatureSelector("sfs").fit(frame, y)
    with pytest.raises(ValueError, match="^X: no columns"):
        SwarmFeatureSelector("sfs").fit(frame.iloc[:, :0], y)


def test_labels_of_the_frames_samples_in_another_order_are_a_warning():
    pandas = pytest.importorskip("pandas")
    X, y = informative(seed=21)
    samples = [f"s{i}" for i in range(len(y))]
    frame = pandas.DataFrame(X, index=samples)
    labels = pandas.Series(y, index=samples)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SwarmFeatureSelector("sfs", random_state=0).fit(frame, labels)  # aligned: silent
        SwarmFeatureSelector("sfs", random_state=0).fit(frame, labels.reset_index(drop=True))
    with pytest.warns(UserWarning, match="y holds the samples of X's index in another order"):
        SwarmFeatureSelector("sfs", random_state=0).fit(frame, labels.iloc[::-1])


def test_labels_of_one_type_keep_their_values_whatever_the_container():
    X, y = informative(seed=17)
    plain = SwarmFeatureSelector("sfs", random_state=0).fit(X, y)
    for same in (y.astype(object), np.array(["c0", "c1", "c2"])[y].astype("S2")):
        again = SwarmFeatureSelector("sfs", random_state=0).fit(X, same)
        assert np.array_equal(again.support_, plain.support_)


def test_a_communicator_and_an_algorithm_of_the_wrong_type_are_named():
    X, y = informative()
    with pytest.raises(TypeError, match="comm must be None or a communicator.*got int"):
        SwarmFeatureSelector("sfs", comm=3).fit(X, y)
    with pytest.raises(ParameterError, match="unknown algorithm \\['sfs'\\]; choose one of"):
        SwarmFeatureSelector(["sfs"]).fit(X, y)


def test_an_empty_signature_is_a_warning_at_fit():
    """Four particles of PSO-RG on one gene may never select it (theta = 0.6)."""
    X, y = informative(seed=19)
    tiny = {"random_state": 0, "n_particles": 4, "n_iterations": 2, "cv": 3}
    with pytest.warns(UserWarning, match="^pso-rg: the signature is empty: the search scored "
                                         "no subset of genes") as caught:
        fitted = SwarmFeatureSelector("pso-rg", **tiny).fit(X[:, :1], y)
    assert caught[0].filename == __file__ and not fitted.support_.any()
    assert len(fitted.front_["size"]) == 0
