"""In-fold preprocessing steps: parsing, fitting on training rows, applying to other rows."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_selection import f_classif

from hpcswarm.errors import ParameterError
from hpcswarm.selection.preprocess import fit, parse_steps


def test_steps_keep_the_table_order_and_defaults():
    table = {"log2": True, "top_variance": 50, "zscore": True, "minmax": False, "top_anova": 5}
    assert parse_steps(table) == [("log2", 1.0), ("top_variance", 50), ("zscore", None),
                                  ("top_anova", 5)]
    assert parse_steps("log2=0.5, minmax, top_anova=3") == [("log2", 0.5), ("minmax", None),
                                                            ("top_anova", 3)]
    assert parse_steps(None) == [] and parse_steps({}) == []


@pytest.mark.parametrize("spec, fragment", [
    ({"quantile": True}, "preprocess.quantile is not a preprocessing step"),
    ({"top_variance": 0}, "preprocess.top_variance must be a number of genes >= 1"),
    ({"top_anova": True}, "preprocess.top_anova must be a number of genes >= 1"),
    ({"log2": -1}, "preprocess.log2 must be true or a finite pseudocount >= 0"),
    ({"log2": float("inf")}, "preprocess.log2 must be true or a finite pseudocount >= 0"),
    ("log2=inf", "preprocess.log2 must be true or a finite pseudocount >= 0, got inf"),
    ({"zscore": 3}, "preprocess.zscore must be true or false"),
])
def test_bad_steps_name_the_key(spec, fragment):
    with pytest.raises(ParameterError, match=fragment.replace(".", r"\.")):
        parse_steps(spec)


def data(seed=0, n=30, genes=12):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.gamma(2.0, 50.0, size=(n, genes))
    X[:, 3] += 400 * (y == 1)  # a gene that separates the classes
    X[:, 7] = 5.0  # a constant gene
    return X, y


def test_fitted_values_come_from_the_training_rows_only():
    X, y = data()
    train, test = np.arange(0, 20), np.arange(20, 30)
    steps = parse_steps({"log2": 1, "zscore": True})
    fitted, transformed = fit(steps, X[train], y[train])
    logged = np.log2(X[train] + 1)
    np.testing.assert_array_equal(fitted.steps[1]["mean"], logged.mean(axis=0))
    assert fitted.steps[1]["scale"][7] == 1.0  # constant gene: scale 1, values 0
    np.testing.assert_allclose(transformed.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_array_equal(fitted.transform(X[train]), transformed)
    expected = (np.log2(X[test] + 1) - logged.mean(axis=0)) / fitted.steps[1]["scale"]
    np.testing.assert_array_equal(fitted.transform(X[test]), expected)
    noisy = X.copy()
    noisy[test] = -1e6
    again, _ = fit(steps, noisy[train], y[train])
    assert again.record() == fitted.record()


def test_filters_keep_original_gene_indices():
    X, y = data()
    steps = parse_steps("minmax,top_variance=6,top_anova=2")
    fitted, transformed = fit(steps, X, y)
    scaled = (X - X.min(axis=0)) / np.where(np.ptp(X, axis=0) > 0, np.ptp(X, axis=0), 1)
    by_variance = np.sort(np.argsort(-scaled.var(axis=0), kind="stable")[:6])
    np.testing.assert_array_equal(fitted.steps[1]["genes"], by_variance)
    f_stat = np.nan_to_num(f_classif(scaled[:, by_variance], y)[0], nan=-np.inf)
    best = np.sort(by_variance[np.argsort(-f_stat, kind="stable")[:2]])
    np.testing.assert_array_equal(fitted.genes, best)
    assert 3 in fitted.genes and transformed.shape == (30, 2)
    np.testing.assert_array_equal(transformed, scaled[:, best])
    assert fitted.record()[2]["genes"] == best.tolist()


def test_log2_of_log_scale_data_is_an_error():
    """A ParameterError: one line on the command line, a ValueError to Python callers."""
    X, y = data()
    X[4, 2] = -3.0
    with pytest.raises(ParameterError, match=r"preprocess\.log2: 1 value\(s\) with x \+ 1 <= 0") \
            as raised:
        fit(parse_steps("log2"), X, y)
    assert isinstance(raised.value, ValueError)


def test_evaluate_fits_the_steps_inside_each_fold_as_a_pipeline_does(capsys):
    """``evaluate --preprocess`` equals scikit-learn's Pipeline(scaler, k-NN) cross-validated
    on the same folds."""
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import cross_val_predict, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from hpcswarm.__main__ import main
    from hpcswarm.data import load_dataset
    from hpcswarm.fitness import make_folds

    data = load_dataset("builtin:srbct")
    X, y = np.asarray(data.X), data.y
    for option, scaler in (("minmax", MinMaxScaler()), ("zscore", StandardScaler())):
        assert main(["evaluate", "builtin:srbct", "--all", "--k", "3", "--cv", "5", "--seed",
                     "2", "--preprocess", option]) == 0
        ours = json.loads(capsys.readouterr().out)
        pipeline = make_pipeline(scaler, KNeighborsClassifier(n_neighbors=3))
        folds = make_folds(y, 5, 2)
        theirs = cross_val_score(pipeline, X, y, cv=folds, scoring="accuracy")
        sizes = np.array([test.size for _, test in folds])
        assert ours["correct"] == int(round((theirs * sizes).sum()))
        assert ours["total"] == y.size and ours["preprocess"] == option
        pooled = cross_val_predict(pipeline, X, y, cv=folds)
        assert ours["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pooled),
                                                          rel=1e-12)


def test_job_records_fitted_steps_per_task_and_the_bias_note(tmp_path):
    """A job's [preprocess] table (and --set preprocess.KEY): each task's steps and fitted
    parameters are in the results file; genes are indices of the original dataset."""
    import h5py

    from hpcswarm.results.files import read_results
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job
    from hpcswarm.run.protocols import PREPROCESS_BIAS_NOTE

    jobs = Path(__file__).resolve().parents[1] / "jobs"
    out = tmp_path / "wine.h5"
    job = read_job(jobs / "cbpso-wine-biased.toml", [
        "runs=1", "n_iterations=2", "n_particles=4", f"output={out}",
        "preprocess.zscore=true", "preprocess.top_anova=6"])
    assert job.spec.preprocess == (("zscore", None), ("top_anova", 6))
    run_job(job)
    results = read_results(out)
    assert results.attrs["bias_note"].endswith(PREPROCESS_BIAS_NOTE)
    with h5py.File(out, "r") as f:
        task = f["runs/run-000/fold-00"]
        steps = json.loads(task.attrs["preprocessing"])
        selected = task["selected_genes"][()]
    assert [s["step"] for s in steps] == ["zscore", "top_anova"]
    assert len(steps[0]["mean"]) == 13 and len(steps[1]["genes"]) == 6
    assert set(selected.tolist()) <= set(steps[1]["genes"])
    with pytest.raises(ParameterError, match=r"preprocess\.top_anova must be"):
        read_job(jobs / "cbpso-wine-biased.toml", ["preprocess.top_anova=0"])


def test_the_steps_documented_are_the_steps_of_the_registry():
    """The module's list of steps and docs/converting.md's table name the rows of STEPS."""
    import re
    from pathlib import Path

    import hpcswarm.selection.preprocess as preprocess

    documented = re.findall(r"^``(\w+) = ", preprocess.__doc__, flags=re.M)
    assert tuple(documented) == tuple(preprocess.STEPS)
    with pytest.raises(ParameterError, match="steps: " + ", ".join(preprocess.STEPS)):
        parse_steps({"log10": True})
    guide = (Path(__file__).parents[1] / "docs" / "converting.md").read_text()
    section = guide.split("## In-fold preprocessing")[1].split("\n## ")[0]
    described = {name for name in preprocess.STEPS
                 if re.search(rf"(^{name} = |`{name} = )", section, flags=re.M)}
    assert described == set(preprocess.STEPS)


@pytest.mark.parametrize("steps", [
    [("minmax", None)],
    [("log2", 1.0), ("minmax", None)],
    [("minmax", None), ("minmax", None)],
    [("minmax", None), ("zscore", None), ("top_variance", 5)],
    [("log2", 1.0), ("top_anova", 4), ("minmax", None)],
])
def test_fitting_block_by_block_gives_the_bits_of_all_rows_at_once(steps, monkeypatch):
    """Min-max scaling fits a block of rows at a time (and log2 before it transforms a block
    at a time); the steps after a sum's fit see all rows at once: the same bits as
    :func:`fit`, with signed zeros where a minimum could keep either."""
    from hpcswarm.selection import preprocess
    from hpcswarm.selection.prepare import SampleRows

    monkeypatch.setattr(preprocess, "BLOCK_VALUES", 24)  # two rows a block
    X, y = data(seed=4, n=41)
    X[::3, 2] = 0.0
    X[1::3, 2] = -0.0
    X[:, 5] = -0.0
    train = np.arange(40, 0, -2)
    whole, _ = fit(steps, X[train], y[train])
    blocked = preprocess.fit_parameters(steps, SampleRows(X, train), y[train])
    for one, other in zip(whole.steps, blocked.steps):
        assert one.keys() == other.keys()
        for key, value in one.items():
            if isinstance(value, np.ndarray):
                assert value.dtype == other[key].dtype
                assert np.array_equal(value.view(np.uint8), other[key].view(np.uint8)), key
            else:
                assert value == other[key]
    assert np.array_equal(whole.genes, blocked.genes)


def test_a_serial_view_holds_a_plain_array():
    from hpcswarm.node_array import PrivateArray
    from hpcswarm.selection.prepare import prepare

    X, y = data(seed=5)
    view = prepare(X, y, [("minmax", None)], finite=True)
    assert isinstance(view.held, PrivateArray) and type(view.genes.xt) is np.ndarray
    fitted, rows = fit([("minmax", None)], X, y)
    assert np.array_equal(view.genes.xt, rows.T)
