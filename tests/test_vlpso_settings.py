"""VLPSO's settings as users give them: refused where they can only give nothing, fitted where
a default does not fit, errors that name the argument or job key to change."""

import json

import numpy as np
import pytest

from cli_checks import assert_one_error, run_cli
from hpcswarm import select
from hpcswarm.errors import ParameterError
from hpcswarm.run.jobfile import read_job
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selector import SwarmFeatureSelector
from synthetic import SMALL, small_data


@pytest.mark.parametrize("algorithm", ["vlpso", "pso", "cso", "fsipso"])
def test_a_threshold_of_one_is_refused_as_it_selects_nothing(algorithm):
    assert algorithm_params(algorithm, {"theta": 0.999})["theta"] == 0.999
    with pytest.raises(ParameterError, match=r"'theta' must be in \[0, 1\), got 1.0"):
        algorithm_params(algorithm, {"theta": 1.0})
    with pytest.raises(ParameterError, match=r"'theta' must be in \[0, 1\)"):
        algorithm_params(algorithm, {"theta": "1"})


def test_a_job_with_a_threshold_of_one_names_the_key(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\n[params]\ntheta = 1.0\n')
    with pytest.raises(ParameterError, match=r"params.theta.*\[0, 1\)"):
        read_job(path)


SMALL_VLPSO = {"n_particles": 6, "n_iterations": 3, "params": {"n_divisions": 3}}


def _wine():
    from hpcswarm.data import load_dataset

    dataset = load_dataset("sklearn:wine")  # genes on scales from 0.1 to 1000
    return np.asarray(dataset.X), dataset.y


def test_select_scales_every_gene_to_the_training_range_by_default():
    X, y = _wine()
    default = select(X, y, random_state=4, **SMALL_VLPSO)
    scaled = select(X, y, random_state=4, preprocess={"minmax": True}, **SMALL_VLPSO)
    raw = select(X, y, random_state=4, preprocess={}, **SMALL_VLPSO)
    assert [step["step"] for step in default.selector.preprocessing_.steps] == ["minmax"]
    assert raw.selector.preprocessing_ is None
    assert default.genes.tolist() == scaled.genes.tolist()
    assert default.selector.fitness_ == scaled.selector.fitness_
    assert default.selector.fitness_ != raw.selector.fitness_


def test_the_selector_and_run_select_what_select_selects(capsys, tmp_path):
    X, y = _wine()
    expected = select(X, y, random_state=4, preprocess="minmax", **SMALL_VLPSO)
    selector = SwarmFeatureSelector(random_state=4, n_particles=6, n_iterations=3,
                                    params={"n_divisions": 3}).fit(X, y)
    assert np.flatnonzero(selector.support_).tolist() == expected.genes.tolist()
    output = tmp_path / "search.json"
    status, _, err = run_cli(capsys, "run", "--data", "sklearn:wine", "--algorithm", "vlpso",
                             "--param", "n_particles=6", "--param", "n_iterations=3",
                             "--param", "n_divisions=3", "--seed", "4", "--output", output)
    assert status in (0, None), err
    document = json.loads(output.read_text())
    assert document["selected_genes"] == expected.genes.tolist()
    assert document["fitness"] == expected.selector.fitness_


@pytest.mark.parametrize("table, steps", [
    ("", (("minmax", None),)),
    ("[preprocess]\n", ()),
    ("[preprocess]\nminmax = false\n", ()),
    ("[preprocess]\nzscore = true\n", (("zscore", None),)),
])
def test_a_vlpso_job_without_a_preprocess_table_scales_as_the_other_front_doors(
        tmp_path, table, steps):
    path = tmp_path / "job.toml"
    path.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\n' + table)
    assert read_job(path).spec.preprocess == steps
    path.write_text('data = "builtin:srbct"\nalgorithm = "cbpso"\n')
    assert read_job(path).spec.preprocess == ()


def test_one_declaration_gives_every_front_door_its_default_preprocessing():
    from hpcswarm.selection.spec import SearchSpec
    from hpcswarm.swarm.methods.vlpso.algorithm import VLPSO

    assert VLPSO.PREPROCESS == (("minmax", None),)
    assert SearchSpec.build("vlpso").preprocess == VLPSO.PREPROCESS
    assert SwarmFeatureSelector().search_spec().preprocess == VLPSO.PREPROCESS
    assert SwarmFeatureSelector(preprocess="").search_spec().preprocess == ()


def test_a_swarm_smaller_than_its_divisions_runs_with_fewer_divisions_and_a_note():
    from hpcswarm.errors import SettingNote
    from hpcswarm.selection.search import run_search

    X, y = small_data()
    with pytest.warns(SettingNote, match=r"vlpso: n_divisions=12 reduced to 5, the swarm's "
                                         r"n_particles"):
        result = run_search(X, y, "vlpso", {"n_particles": 5, "n_iterations": 3}, seed=1)
    assert result.params["n_divisions"] == 5
    assert sorted(set(result.extra["lengths"])) == [8, 16, 24, 32, 40]  # one per division


def test_select_with_a_small_swarm_runs_and_the_command_line_says_why(capsys, monkeypatch):
    X, y = _wine()
    with pytest.warns(UserWarning, match="n_divisions=12 reduced to 6"):
        select(X, y, n_particles=6, n_iterations=2)
    monkeypatch.setattr("hpcswarm.fitness.folds._WARNED", set())  # the command: a new process
    status, _, err = run_cli(capsys, "run", "--data", "sklearn:wine", "--algorithm", "vlpso",
                             "--param", "n_particles=6", "--param", "n_iterations=2")
    assert status in (0, None)
    assert "hpcswarm: warning: vlpso: n_divisions=12 reduced to 6" in err


def test_max_genes_caps_the_longest_particle():
    from hpcswarm.selection.search import run_search

    X, y = small_data()
    result = run_search(X, y, "vlpso", SMALL["vlpso"], seed=2, max_genes=4)
    assert max(result.extra["lengths"]) <= 4
    assert result.mask.sum() <= 4
    assert all(row["best_size"] <= 4 for row in result.history)
    assert all(point["size"] <= 4 for point in result.front)
    uncapped = run_search(X, y, "vlpso", SMALL["vlpso"], seed=2)
    assert max(uncapped.extra["lengths"]) > 4


def test_a_vlpso_job_takes_max_genes(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\nmax_genes = 50\n')
    assert read_job(path).spec.max_genes == 50


def _few(n_samples=8):
    rng = np.random.default_rng(0)
    return rng.random((n_samples, 20)), np.arange(n_samples) % 2


def test_a_default_cv_too_large_for_the_samples_names_the_argument():
    X, y = _few()
    with pytest.raises(ParameterError, match=r"^cv=10 \(the default\) cannot run on these 8 "
                                             r"samples: 10-fold "
                                             r"cross-validation needs at least 10 samples, got "
                                             r"8.*; pass another cv \(a keyword of select\(\)"):
        select(X, y)
    with pytest.raises(ParameterError, match=r"^cv=10 \(the default\) cannot run on these 8"):
        SwarmFeatureSelector().fit(X, y)
    with pytest.raises(ParameterError, match=r"^cv=10 cannot run on these 8 samples"):
        SwarmFeatureSelector(cv=10).fit(X, y)  # given: no "(the default)"


def test_a_k_above_the_training_samples_names_the_argument():
    X, y = _few()
    with pytest.raises(ParameterError, match=r"^k=8 cannot run on these 8 samples: k-NN with "
                                             r"k=8 needs 8 training samples .* the smallest "
                                             r"has 7; pass another k"):
        select(X, y, cv="loo", k=8)


def test_subsample_halves_too_small_for_the_cv_are_named_as_the_cause(capsys, tmp_path,
                                                                    monkeypatch):
    X, y = _few()
    with pytest.warns(UserWarning, match="n_divisions"), pytest.raises(
            ParameterError, match=r"^cv=5 cannot run on the subsample halves of "
                                  r"refine='stability' \(searches on 4 of the 8 samples each\): "
                                  r"5-fold cross-validation needs at least 5 samples, got 4"):
        select(X, y, refine="stability", cv=5, n_particles=4, n_iterations=2)
    monkeypatch.setattr("hpcswarm.fitness.folds._WARNED", set())  # as in a new process
    with pytest.warns(UserWarning, match="n_divisions"), pytest.raises(
            ParameterError, match=r"^cv=5 cannot run on the subsample halves"):
        SwarmFeatureSelector(refine="stability", cv=5, n_particles=4, n_iterations=2).fit(X, y)
    data = tmp_path / "few.csv"
    data.write_text("label," + ",".join(f"g{i}" for i in range(20)) + "\n" + "".join(
        f"c{label}," + ",".join(f"{v:.4f}" for v in row) + "\n" for row, label in zip(X, y)))
    status, _, err = run_cli(capsys, "run", "--data", data, "--algorithm", "vlpso")
    assert_one_error(status, err, "cv=10 (the default of vlpso) cannot run on these 8 samples",
                     "give another with --param cv=")
    assert "--param cv=10" not in err  # a flag the user never passed
    status, _, err = run_cli(capsys, "run", "--data", data, "--algorithm", "vlpso", "--refine",
                             "stability", "--param", "cv=5", "--param", "n_particles=4")
    err = "\n".join(line for line in err.splitlines() if "warning" not in line)
    assert_one_error(status, err, "--param cv=5 cannot run on the subsample halves of "
                                  "refine='stability'")


def _first_selections(init):
    """Per particle but each division's first: (selected genes, length) at the initial round."""
    from hpcswarm.selection.search import run_search
    from hpcswarm.swarm.engine.loop import SearchHooks

    X, y = small_data(0, 30, 200)
    seen = []

    def inspect(search):
        if search.iteration == 0:
            first = np.r_[True, search.division[1:] != search.division[:-1]]
            seen.extend((int(search.state.mask[i].sum()), int(search.lengths[i]))
                        for i in np.flatnonzero(~first))

    run_search(X, y, "vlpso", {"n_particles": 40, "n_iterations": 1, "n_divisions": 2,
                               "init": init}, seed=1, hooks=SearchHooks(checkpoint=inspect))
    return np.array(seen)


def test_the_authors_uniform_initialisation_selects_about_two_fifths():
    normal, uniform = _first_selections("normal"), _first_selections("uniform")
    assert (normal[:, 0] == np.round(normal[:, 1] / 2)).all()  # Xue et al.'s half, exactly
    share = uniform[:, 0].sum() / uniform[:, 1].sum()  # U[0, 1] above theta = 0.6
    assert abs(share - 0.4) < 0.03 and (uniform[:, 0] != np.round(uniform[:, 1] / 2)).any()


def test_the_authors_settings_can_be_written_as_parameters():
    params = algorithm_params("vlpso", {"w_final": "none", "init": "uniform", "cv": "loo"})
    assert (params["w_final"], params["init"], params["cv"], params["k"]) == (
        None, "uniform", "loo", 1)
    with pytest.raises(ParameterError, match="'init' must be one of normal, uniform"):
        algorithm_params("vlpso", {"init": "mixed"})


def test_a_local_search_that_draws_no_gene_is_refused():
    with pytest.raises(ParameterError, match=r"'ls_flip' must be in \(0, 1\], got 0.0"):
        algorithm_params("vlpso", {"ls_flip": 0})
    assert algorithm_params("vlpso", {"ls_flip": 0.01})["ls_flip"] == 0.01
    assert algorithm_params("pso-ls", {"ls_flip": 0})["ls_flip"] == 0  # one gene, at least


def test_a_job_with_a_local_search_of_no_gene_names_the_key(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\n[params]\nls_flip = 0.0\n')
    with pytest.raises(ParameterError, match=r"params.ls_flip.*\(0, 1\]"):
        read_job(path)


def test_a_capped_swarm_of_few_divisions_resumes_from_its_checkpoint():
    from hpcswarm.selection.methods import algorithm_class
    from hpcswarm.selection.search import run_search
    from hpcswarm.swarm.engine.loop import SearchHooks
    from hpcswarm.swarm.engine.snapshot import check_snapshot, take_snapshot
    from search_snapshots import through_checkpoint

    X, y = small_data()
    params = {"n_particles": 5, "n_iterations": 8, "change_after": 2}
    taken = []

    def hook(search):
        if search.iteration == 4:
            taken.append(take_snapshot(search))

    with pytest.warns(UserWarning, match="n_divisions"):
        full = run_search(X, y, "vlpso", params, seed=3, max_genes=6,
                          hooks=SearchHooks(checkpoint=hook))
        snapshot = through_checkpoint(taken[0])
        check_snapshot(algorithm_class("vlpso"), algorithm_params("vlpso", params), 40,
                       snapshot)  # as a resumed job checks it, with the parameters as written
        resumed = run_search(X, y, "vlpso", params, seed=3, max_genes=6, resume=snapshot)
    assert resumed.genes.tolist() == full.genes.tolist()
    assert resumed.history[-1]["best_fitness"] == full.history[-1]["best_fitness"]
