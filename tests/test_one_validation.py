"""One validation per kind of input, whatever the door: a damaged sparse matrix is refused by
``select`` as ``convert`` refuses it, and every in-memory door checks its matrix and labels
once, with the validators of :mod:`hpcswarm.inputs`, before anything reaches the scorer."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse

import hpcswarm
import hpcswarm.inputs as inputs
from hpcswarm.selector import SwarmFeatureSelector


def two_classes(n_samples=24, n_genes=10, seed=0):
    """A small matrix with two classes, a few zeros so that sparse storage drops them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(5.0, 1.0, (n_samples, n_genes))
    X[X < 4.5] = 0.0
    return X, np.arange(n_samples) % 2


DAMAGE = {
    "negative-index": ("matrix.indices[0] = -1", "it holds the column index -1, outside"),
    "index-past-the-end": ("matrix.indices[0] = 10 ** 9",
                           "it holds the column index 1000000000, outside [0, 10)"),
    "indptr-backwards": ("matrix.indptr[2], matrix.indptr[3] = matrix.indptr[3], "
                         "matrix.indptr[2] + 1", "its indptr runs backwards at row 2"),
    "indptr-end": ("matrix.indptr[-1] -= 1", "its indptr ends at"),
}
"""Damage done in place to a CSR matrix's arrays (24 x 10), and what the error then
says. Each makes scipy's densifying misbehave on the code before these checks: values in
wrong cells, writes outside its array, or an abort."""

DOORS_OF_A_SPARSE_MATRIX = {
    "AnnData X": ("hpcswarm.select(anndata.AnnData(X=matrix, obs=obs), 'kind', "
                  "algorithm='sfs')", "data.X"),
    "AnnData layer": ("hpcswarm.select(anndata.AnnData(X=np.zeros(matrix.shape), obs=obs, "
                      "layers={'counts': matrix}), 'kind', layer='counts', algorithm='sfs')",
                      "data.layers['counts']"),
    "scipy CSR": ("hpcswarm.select(matrix, y, algorithm='sfs')", "data"),
}

CASE = """
matrix = scipy.sparse.csr_matrix(np.random.default_rng(0).normal(5.0, 1.0, (24, 10)))
{damage}
try:
    {door}
    print("accepted", flush=True)
except ValueError as exc:
    print(exc, flush=True)
"""
"""One damaged matrix through one door, printing the error (or ``accepted``)."""


def test_a_damaged_sparse_matrix_is_one_error_through_every_door_of_select():
    """Every damage through every door of ``select``, in a child process (on the code
    before these checks scipy aborts the interpreter, writes outside its array or puts
    values in wrong cells): one ``ValueError`` naming the argument and the problem in the
    words of ``convert``'s refusal of the same arrays in a file."""
    pytest.importorskip("anndata")
    cases = [(damage, door) for damage in DAMAGE for door in DOORS_OF_A_SPARSE_MATRIX]
    script = "\n".join(
        ["import numpy as np, pandas, scipy.sparse, anndata, hpcswarm",
         "y = np.arange(24) % 2",
         "obs = pandas.DataFrame({'kind': [f'c{v}' for v in y]}, "
         "index=[f's{i}' for i in range(24)])"]
        + [CASE.format(damage=DAMAGE[damage][0], door=DOORS_OF_A_SPARSE_MATRIX[door][0])
           for damage, door in cases])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(cases)
    for (damage, door), line in zip(cases, lines):
        argument = DOORS_OF_A_SPARSE_MATRIX[door][1]
        assert line.startswith(f"{argument}: a damaged sparse matrix: {DAMAGE[damage][1]}"), (
            damage, door, line)


def test_a_csc_matrix_counts_its_indices_along_the_samples():
    X, y = two_classes()
    matrix = scipy.sparse.csc_matrix(X)
    matrix.indices[0] = 24  # a row index past the end: refused before scipy reads it
    with pytest.raises(ValueError, match=r"^data: a damaged sparse matrix: it holds the row "
                                         r"index 24, outside \[0, 24\)"):
        hpcswarm.select(matrix, y, algorithm="sfs")


def sparse_anndata(matrix, y):
    anndata = pytest.importorskip("anndata")
    import pandas

    obs = pandas.DataFrame({"kind": [f"c{v}" for v in y]},
                           index=[f"s{i}" for i in range(matrix.shape[0])])
    return anndata.AnnData(X=matrix, obs=obs)


def test_a_sound_sparse_matrix_selects_what_its_dense_values_select():
    X, y = two_classes()
    dense = hpcswarm.select(X, y, algorithm="sfs", random_state=3)
    for matrix in (scipy.sparse.csr_matrix(X), scipy.sparse.csc_matrix(X),
                   scipy.sparse.coo_matrix(X)):
        chosen = hpcswarm.select(matrix, y, algorithm="sfs", random_state=3)
        assert chosen.gene_names == dense.gene_names
        assert chosen.inner_accuracy == dense.inner_accuracy


def test_the_rules_of_a_file_and_of_memory_are_one():
    """``convert`` reads an .h5ad file's arrays by the same rules (their wording too)."""
    assert inputs.indptr_problem(np.array([0, 2, 1, 3]), 3, 4, 3) == "runs backwards at row 1"
    assert inputs.index_problem(np.array([0, 4]), 4, "row") == "the row index 4, outside [0, 4)"
    assert inputs.index_problem(np.array([0.0]), 4) == ("column indices of type float64, not "
                                                        "whole numbers")
    assert inputs.indptr_problem(np.array([0, 5]), 1, 4, 5) == ("gives row 0 more entries "
                                                                "than its 4 cells")
    assert inputs.indptr_problem(np.array([0, 1, 2]), 2, 4, 2) == ""


def test_a_sparse_matrix_is_refused_by_the_selector_before_any_densifying():
    X, y = two_classes()
    matrix = scipy.sparse.csr_matrix(X)
    matrix.indices[0] = -1
    with pytest.raises(TypeError, match="[Ss]parse"):
        SwarmFeatureSelector("sfs").fit(matrix, y)


# ------------------------------------------------------------------ each check once
VALIDATORS = ("check_matrix", "check_sparse", "check_finite", "check_labels", "label_values",
              "check_gene_names", "check_columns", "checked_matrix")
"""The validators of :mod:`hpcswarm.inputs`: the only code that turns Python input into
the arrays a search reads."""


def patch_everywhere(monkeypatch, original, replacement):
    """Replace the function ``original`` under every name a loaded hpcswarm module holds it by
    (``from hpcswarm.inputs import check_labels`` binds a name of its own)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("hpcswarm"):
            for name, value in list(vars(module).items()):
                if value is original:
                    monkeypatch.setattr(module, name, replacement)


@pytest.fixture
def calls(monkeypatch):
    """The validators' calls in order, and the scorer's builds after them (``"scorer"``)."""
    import hpcswarm.api  # noqa: F401 - loaded, so that its names are patched too
    import hpcswarm.fitness.scorer as scorer
    import hpcswarm.selection.search  # noqa: F401

    seen = []

    def counting(name, function):
        def counted(*args, **kwargs):
            seen.append(name)
            return function(*args, **kwargs)
        return counted

    for name in VALIDATORS:
        if hasattr(inputs, name):  # every one, on the code before a validator existed too
            patch_everywhere(monkeypatch, getattr(inputs, name),
                             counting(name, getattr(inputs, name)))
    patch_everywhere(monkeypatch, scorer.make_scorer, counting("scorer", scorer.make_scorer))
    return seen


def _frame(X):
    pandas = pytest.importorskip("pandas")
    return pandas.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])


DOORS = {
    "select(ndarray)": lambda X, y: hpcswarm.select(X, y, algorithm="sfs"),
    "select(DataFrame)": lambda X, y: hpcswarm.select(_frame(X), y, algorithm="sfs"),
    "select(csr)": lambda X, y: hpcswarm.select(scipy.sparse.csr_matrix(X), y,
                                                algorithm="sfs"),
    "select(AnnData)": lambda X, y: hpcswarm.select(
        sparse_anndata(scipy.sparse.csr_matrix(X), y), "kind", algorithm="sfs"),
    "selector.fit": lambda X, y: SwarmFeatureSelector("sfs").fit(X, y),
    "selector.fit(DataFrame)": lambda X, y: SwarmFeatureSelector("sfs").fit(_frame(X), y),
}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_each_door_checks_its_matrix_and_labels_once_before_the_scorer(calls, door):
    X, y = two_classes()
    DOORS[door](X, y)
    first_scorer = calls.index("scorer")
    checks = calls[:first_scorer]
    assert "scorer" in calls and "scorer" not in checks
    assert checks.count("check_finite") == 1, checks
    assert checks.count("check_labels") == 1, checks
    assert checks.count("label_values") == 1, checks  # the one check_labels makes
    # a frame's columns are judged by their types (and the array they make by its shape)
    assert checks.count("check_matrix") <= 1, checks
    assert checks.count("check_columns") == ("DataFrame" in door), checks
    assert not set(calls[first_scorer:]) & set(VALIDATORS), "a check after the scorer"
    if "csr" in door or "AnnData" in door:
        assert checks.count("check_sparse") == 1


def test_select_scans_the_values_and_checks_the_labels_once(calls):
    X, y = two_classes()
    hpcswarm.select(X, y, algorithm="vlpso", n_iterations=2)
    assert {name: calls.count(name) for name in ("check_matrix", "check_finite",
                                                 "check_labels", "label_values")} == {
        "check_matrix": 1, "check_finite": 1, "check_labels": 1, "label_values": 1}


def test_the_view_a_door_prepares_is_not_scanned_again(monkeypatch):
    """The gene-major view of checked values is built as known finite: no second scan."""
    import hpcswarm.selection.prepare as prepare

    built = []
    real = prepare.GeneMajor

    def spy(*args, **kwargs):
        built.append(kwargs.get("finite", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(prepare, "GeneMajor", spy)
    X, y = two_classes()
    hpcswarm.select(X, y, algorithm="sfs")
    SwarmFeatureSelector("sfs", preprocess="zscore").fit(X, y)
    assert built == [True, True]


def test_a_job_checks_its_labels_once_not_in_every_task(calls, tmp_path, capsys):
    from cli_checks import run_cli

    status, _, err = run_cli(capsys, "run", "jobs/pso-lsrg-srbct-unbiased.toml", "--set",
                             "runs=1", "--set", "folds=3", "--set", "params.n_iterations=1",
                             "--set", "params.n_particles=4", "--set",
                             f"output={tmp_path / 'job.h5'}", "--quiet")
    assert status == 0, err
    assert calls.count("scorer") >= 3  # every task's search
    assert calls.count("label_values") + calls.count("check_labels") <= 1
    assert calls.count("check_matrix") + calls.count("check_finite") <= 1


@pytest.fixture
def drawn(monkeypatch):
    """The ``cv`` of every draw of folds (:func:`hpcswarm.fitness.folds.make_folds`), in order."""
    import hpcswarm.fitness.folds as folds

    schemes = []
    real = folds.make_folds

    def spy(*args, **kwargs):
        schemes.append(args[1] if len(args) > 1 else kwargs.get("cv"))
        return real(*args, **kwargs)

    patch_everywhere(monkeypatch, real, spy)
    return schemes


def test_the_folds_of_a_search_are_drawn_once(drawn):
    X, y = two_classes()
    hpcswarm.select(X, y, algorithm="sfs", cv=3)
    assert drawn == [3]


def test_a_jobs_tasks_draw_their_folds_once(drawn, tmp_path, capsys):
    """Each task's validation folds are drawn once, when the task is made: its search, its
    inner test's scorer and its PCA baseline read that draw (a biased task has no outer
    split, so every draw is a task's)."""
    from cli_checks import run_cli

    status, _, err = run_cli(capsys, "run", "jobs/pso-lsrg-srbct-biased.toml", "--set",
                             "data=builtin:srbct", "--set", "runs=2", "--set", "fitness.cv=3",
                             "--set", "params.n_iterations=1", "--set", "params.n_particles=4",
                             "--set", f"output={tmp_path / 'job.h5'}", "--quiet")
    assert status == 0, err
    assert drawn == [3, 3]


def test_select_draws_its_folds_once_for_the_search_and_the_cut(drawn):
    """A signature cut to ``n_features_to_select`` by elimination scores on the search's
    folds, not on a second draw."""
    X, y = two_classes()
    selector = SwarmFeatureSelector("all-genes", n_features_to_select=3, cv=3,
                                    random_state=0).fit(X, y)
    assert selector.chosen_from_ == "eliminate"
    assert drawn == [3]


# ------------------------------------------------------------------ memory
@pytest.mark.slow  # a few seconds of searching
def test_select_copies_the_matrix_once():
    """Peak traced memory of ``select`` (the matrix made while tracing) stays within 2.2
    times the matrix: the matrix and its one gene-major copy, the particles' distance
    states (a cache sized from the machine's memory) off
    (``benchmarks/bench_prepare_memory.py`` measures the figures of ``docs/benchmarks.md``)."""
    import tracemalloc

    settings = {"n_particles": 12, "n_iterations": 1, "max_genes": 50, "random_state": 0,
                "cache_memory": 0}
    rng = np.random.default_rng(0)
    hpcswarm.select(rng.standard_normal((40, 30)), np.arange(40) % 2,
                    **dict(settings, max_genes=5))  # imports and compilation, untraced
    tracemalloc.start()
    try:
        X = rng.standard_normal((2000, 5000))
        hpcswarm.select(X, np.arange(2000) % 2, **settings)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 2.2 * X.nbytes


# ------------------------------------------------------------------ settings before data
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_alpha_out_of_the_open_interval_is_refused_before_the_data(alpha):
    """The combined objective refuses alpha = 0 or 1 (Li et al., Eq. 3 weighs both terms):
    the specification refuses it too, so that no data are read first."""
    from hpcswarm.errors import ParameterError

    with pytest.raises(ParameterError, match=r"alpha. must be in \(0, 1\), got"):
        hpcswarm.select(np.array([["not data"]]), [0], algorithm="sfs", alpha=alpha)
