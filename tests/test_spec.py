"""The search specification: one declaration, from which the job schema, the command line and
the selector's arguments derive."""

import pytest

from hpcswarm import cli
from hpcswarm.errors import ParameterError
from hpcswarm.spec import SPEC_PARAMS, SearchSpec, search_arguments


def _run_options():
    parser = cli.build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]
    return {action.dest: action for action in run._actions}


def test_every_search_setting_is_a_run_flag_checked_by_its_row():
    options = _run_options()
    for param in SPEC_PARAMS:
        if param.name != "algorithm":
            assert options[param.name].option_strings == ["--" + param.name.replace("_", "-")]
    with pytest.raises(ParameterError, match="argument --refine: parameter 'refine' must be one "
                                             "of none, prune, prune-margin, prune-compact"):
        cli.build_parser().parse_args(["run", "--refine", "trim"])


def test_the_algorithm_help_lists_the_registry():
    from hpcswarm.methods import METHODS

    assert all(name in _run_options()["algorithm"].help for name in METHODS)


def test_build_checks_every_setting():
    spec = SearchSpec.build("cbpso", {"n_iterations": "3"}, refine="prune", max_genes=5,
                            sample_shards=2, device="cpu")
    assert (spec.params["n_iterations"], spec.refine, spec.max_genes, spec.sample_shards) == (
        3, "prune", 5, 2)
    assert SearchSpec.build("cbpso", max_genes=0).max_genes is None
    with pytest.raises(ParameterError, match="device' must be one of cpu, gpu"):
        SearchSpec.build("cbpso", device="tpu")
    with pytest.raises(ParameterError, match="unknown search setting"):
        SearchSpec.build("cbpso", refinement="prune")
    with pytest.raises(ParameterError, match="not to pso-lsrg"):
        SearchSpec.build("pso-lsrg", max_genes=4)


def test_search_arguments_list_the_settings_and_the_method_parameters():
    rows = search_arguments("cbpso")
    assert [name for name in rows][:len(SPEC_PARAMS)] == [p.name for p in SPEC_PARAMS]
    assert rows["n_particles"].default == 20 and rows["k"].default == 1
    assert rows["device"].default == "cpu" and "n_particles" not in search_arguments()


def test_run_search_takes_a_spec_or_a_name_and_its_settings():
    import numpy as np

    from hpcswarm.search import run_search

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 12)), np.repeat([0, 1], 10)
    spec = SearchSpec.build("cbpso", {"n_iterations": 3, "n_particles": 4}, refine="prune")
    by_spec = run_search(X, y, spec, seed=2)
    by_name = run_search(X, y, "cbpso", {"n_iterations": 3, "n_particles": 4}, seed=2,
                         refine="prune")
    assert np.array_equal(by_spec.mask, by_name.mask)
    assert np.array_equal(by_spec.refined.genes, by_name.refined.genes)
    with pytest.raises(ParameterError, match="belong in the SearchSpec"):
        run_search(X, y, spec, {"k": 3})
