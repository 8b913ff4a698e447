"""The search specification: one declaration, from which the job schema, the command line and
the selector's arguments derive."""

import pytest

from hpcswarm import cli
from hpcswarm.errors import ParameterError
from hpcswarm.selection.spec import SPEC_PARAMS, SearchSpec, search_arguments


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
    from hpcswarm.selection.methods import METHODS

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

    from hpcswarm.selection.search import run_search

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


def _docstring_entries(obj):
    """The names of the numpydoc ``Parameters`` entries of ``obj``'s docstring."""
    import inspect
    import re

    text = inspect.getdoc(obj).split("Parameters\n----------\n", 1)[1]
    text = re.split(r"\n\n[A-Z][a-z]+\n-+\n", text, maxsplit=1)[0]
    return set(re.findall(r"^(\w+) : ", text, flags=re.MULTILINE))


def test_every_search_setting_is_a_keyword_a_flag_and_a_job_key_with_its_default():
    """Each row of SPEC_PARAMS is a parameter of the selector and a keyword of select, both
    documented, with the row's default (None: the spec's default, as build reads it), a
    ``run`` flag and a job key; the reference pages render the rows they are generated from."""
    import inspect
    from pathlib import Path

    import hpcswarm
    from hpcswarm import SwarmFeatureSelector
    from hpcswarm.run.jobfile import SCHEMA
    from hpcswarm.run.protocols import FinalSignature
    from hpcswarm.selection.methods import METHODS
    from hpcswarm.selector import PYTHON_NAMES, SEARCH_SETTINGS

    keys = {key.name.rpartition(".")[2]: key for key in SCHEMA}
    flags = _run_options()
    faces = {"the selector": (SwarmFeatureSelector.__init__, SwarmFeatureSelector),
             "select": (hpcswarm.select, hpcswarm.select)}  # (signature, docstring)
    own_defaults = {("select", "refine"): FinalSignature.default_refine}  # a final signature
    for param in SPEC_PARAMS:
        assert (keys[param.name].kind, keys[param.name].default) == (param.kind, param.default)
        assert flags[param.name].default is None  # the spec's default, unless given
        for face, (function, documented) in faces.items():
            keyword = inspect.signature(function).parameters[param.name]
            assert param.name in _docstring_entries(documented), (face, param.name)
            if param.required:  # the method: the Python API picks one
                assert keyword.default in METHODS
                continue
            expected = own_defaults.get((face, param.name), param.default)
            assert keyword.default in (expected, None), (face, param.name)
            if keyword.default is None:
                assert SearchSpec.build("cbpso", **{param.name: None}) == SearchSpec.build(
                    "cbpso", **{param.name: param.default})
    assert set(SEARCH_SETTINGS) == {p.name for p in SPEC_PARAMS if not p.required}
    for job_key, keyword in PYTHON_NAMES.items():
        assert job_key in keys and job_key in flags
        assert all(keyword in inspect.signature(f).parameters for f, _ in faces.values())
    docs = Path(__file__).resolve().parent.parent / "docs"
    assert "```{hpcswarm-params} hpcswarm.selection.spec.SPEC_PARAMS" in (docs / "api.md").read_text()
    assert "```{hpcswarm-params} hpcswarm.run.jobfile.SCHEMA" in (docs / "reference.md").read_text()
