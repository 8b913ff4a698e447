"""The search specification: one declaration, from which the job schema, the command line and
the selector's arguments derive."""

import numpy as np
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


@pytest.mark.parametrize("X_of, y_of, problem", [
    (lambda X: X, lambda y: np.r_[np.nan, y[1:]], "y: 1 sample\\(s\\) without a label"),
    (lambda X: X, lambda y: np.where(y == 1, None, y), "y: 10 sample\\(s\\) without a label"),
    (lambda X: X, lambda y: np.array([0, "1"] * 10, dtype=object), "y: mixed types"),
    (lambda X: X + 1j, lambda y: y, "X: complex numbers"),
    (lambda X: X.astype(str), lambda y: y, "X: text"),
])
def test_run_search_refuses_a_matrix_or_labels_no_search_can_read(X_of, y_of, problem):
    """A NaN label was one more class; a complex matrix lost its imaginary parts."""
    from hpcswarm.selection.search import run_search

    X, y = np.random.default_rng(1).normal(size=(20, 6)), np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match=f"^{problem}"):
        run_search(X_of(X), y_of(y), "sfs")


def _docstring_entries(obj):
    """The names of the numpydoc ``Parameters`` entries of ``obj``'s docstring."""
    import inspect
    import re

    text = inspect.getdoc(obj).split("Parameters\n----------\n", 1)[1]
    text = re.split(r"\n\n[A-Z][a-z]+\n-+\n", text, maxsplit=1)[0]
    return set(re.findall(r"^(\w+) : ", text, flags=re.MULTILINE))


def test_every_search_setting_is_a_keyword_a_flag_and_a_job_key_with_its_default():
    """Each search setting (the method, the rows of SPEC_PARAMS, preprocess) is a parameter of
    the selector and a keyword of select, both documented, with the row's default (None: the
    spec's default, as build reads it); a row is a ``run`` flag and a job key, ``preprocess``
    a job table and an ``evaluate`` flag, whose forms the two faces read as the job does; the
    reference pages render the rows they are generated from."""
    import inspect
    from pathlib import Path

    import hpcswarm
    from hpcswarm import SwarmFeatureSelector
    from hpcswarm.run.jobfile import SCHEMA, build_job
    from hpcswarm.selection.spec import SETTINGS, SPEC
    from hpcswarm.selector import PYTHON_NAMES, SEARCH_SETTINGS
    from hpcswarm.signatures.refinements import SIGNATURE_METHOD

    keys = {key.name.rpartition(".")[2]: key for key in SCHEMA}
    flags = _run_options()
    faces = {"the selector": (SwarmFeatureSelector.__init__, SwarmFeatureSelector),
             "select": (hpcswarm.select, hpcswarm.select)}  # (signature, docstring)
    for name in ("algorithm", *SETTINGS):
        param = SPEC.get(name)  # None: preprocess, a table of steps
        if param is not None:
            assert (keys[name].kind, keys[name].default) == (param.kind, param.default)
            assert flags[name].default is None  # the spec's default, unless given
        for face, (function, documented) in faces.items():
            keyword = inspect.signature(function).parameters[name]
            assert name in _docstring_entries(documented), (face, name)
            if param is not None and param.required:  # the method: the Python API picks one
                assert keyword.default == SIGNATURE_METHOD
                continue
            if name == "refine":  # None, on both faces: the final signature's, by method
                assert keyword.default is None
                continue
            default = SearchSpec.build("cbpso").preprocess if param is None else param.default
            assert keyword.default in (default, None), (face, name)
            if keyword.default is None:
                assert SearchSpec.build("cbpso", **{name: None}) == SearchSpec.build(
                    "cbpso", **{name: default})
    assert set(SEARCH_SETTINGS) == set(SETTINGS) == {p.name for p in SPEC_PARAMS
                                                     if not p.required} | {"preprocess"}
    table = {"log2": 0.5, "zscore": False, "top_variance": 5}
    job = build_job({"data": "builtin:srbct", "algorithm": "cbpso", "preprocess": table})
    evaluate = cli.build_parser().parse_args(["evaluate", "x.h5", "--all", "--preprocess",
                                              "log2=0.5,top_variance=5"])
    for given in (table, evaluate.preprocess):
        selector = SwarmFeatureSelector("cbpso", preprocess=given)
        assert selector.search_spec().preprocess == job.spec.preprocess == (
            ("log2", 0.5), ("top_variance", 5))
    for job_key, keyword in PYTHON_NAMES.items():
        assert job_key in keys and job_key in flags
        assert all(keyword in inspect.signature(f).parameters for f, _ in faces.values())
    docs = Path(__file__).resolve().parent.parent / "docs"
    assert "```{hpcswarm-params} hpcswarm.selection.spec.SPEC_PARAMS" in (docs / "api.md").read_text()
    assert "```{hpcswarm-params} hpcswarm.run.jobfile.SCHEMA" in (docs / "reference.md").read_text()
