"""Protocols: tasks and seeds, no test-fold leakage, baselines, outputs, every bundled job."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hpcswarm.data import load_dataset
from hpcswarm.data.sources import load_job_dataset
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.results.files import read_results
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.protocols import TaskData, make_tasks, run_task
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.swarm.engine.loop import SearchHooks

JOBS = Path(__file__).resolve().parents[1] / "jobs"

#: Reduced settings per bundled job, so that the whole suite stays fast.
FAST = {
    "pso-lsrg": ["n_iterations=3", "n_particles=6", "ls_tries=5"],
    "pso": ["n_iterations=3", "n_particles=6"],
    "cso": ["n_iterations=3", "n_particles=6"],
    "cbpso": ["n_iterations=3", "n_particles=6"],
    "fsipso": ["n_iterations=4", "n_particles=4", "n_subspaces=2"],
    "fsr": ["n_iterations=3", "n_particles=6", "max_size=2"],
    "sfr": [],
    "vlpso": ["n_iterations=3", "n_particles=6", "n_divisions=3", "change_after=1"],
}


def fast_overrides(path, tmp_path, cache, runs=1):
    algorithm = read_job(path, ["data=builtin:srbct"]).spec.algorithm
    return [f"runs={runs}", "folds=3", f"output={tmp_path / (path.stem + '.h5')}",
            f"cache={cache}", *FAST[algorithm]]


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


# ------------------------------------------------------------------ tasks and seeds
def test_unbiased_tasks_are_stratified_outer_folds_per_run():
    y = np.repeat([0, 1, 2], [10, 12, 8])
    tasks = make_tasks(y, "unbiased", runs=2, seed=7, folds=5, inner_cv="loo")
    assert [(t.run, t.fold) for t in tasks] == [(r, f) for r in range(2) for f in range(5)]
    for run in range(2):
        tests = np.concatenate([t.test for t in tasks if t.run == run])
        assert sorted(tests.tolist()) == list(range(30))  # every sample held out once
    for task in tasks:
        assert not set(task.train) & set(task.test)
        assert np.bincount(y[task.test], minlength=3).min() >= 1
    assert not np.array_equal(tasks[0].test, tasks[5].test)  # each run splits anew
    assert len({t.spawn_key for t in tasks}) == 10
    again = make_tasks(y, "unbiased", runs=2, seed=7, folds=5, inner_cv="loo")
    assert all(np.array_equal(a.test, b.test) for a, b in zip(tasks, again))


def test_holdout_and_biased_tasks():
    y = np.repeat([0, 1], [20, 30])
    holdout = make_tasks(y, "holdout", runs=3, seed=1, inner_cv="loo")
    assert [t.fold for t in holdout] == [0, 0, 0]
    assert all(t.test.size == 15 and t.train.size == 35 for t in holdout)
    biased = make_tasks(y, "biased", runs=2, seed=1, inner_cv="loo")
    assert all(t.train.size == 50 and t.test.size == 0 for t in biased)


def test_seeds_follow_spawn_keys_of_the_job_seed():
    task = make_tasks(np.repeat([0, 1], 10), "unbiased", runs=2, seed=11, folds=2,
                      inner_cv="loo")[3]
    assert (task.run, task.fold, task.spawn_key) == (1, 1, (1, 1, 1))
    sequence = task.seed_sequence(11)
    assert sequence.entropy == 11 and sequence.spawn_key == (1, 1, 1)


def test_schemes_the_samples_cannot_support_fail_on_every_rank_before_running():
    y = np.repeat([0, 1], [4, 20])
    with pytest.raises(ParameterError, match="'folds'.*needs at least 25 samples, got 24"):
        make_tasks(y, "unbiased", runs=1, seed=0, folds=25, inner_cv="loo")
    with pytest.raises(ParameterError, match="'fitness.cv'.*run 0 fold 0.*got 12"):
        make_tasks(y, "unbiased", runs=1, seed=0, folds=2, inner_cv=13)


@pytest.mark.parametrize("counts, rule, note", [
    ([9, 7, 8, 2, 6, 8, 9, 6, 5], "round-robin", "dealt round-robin per class"),  # 9 Tumors
    ([7, 14, 14, 15], "sklearn", "class(es) 'c0' (7) have fewer samples than folds"),  # BT2
], ids=["9-tumors", "brain-tumor-2"])
def test_experiment_ii_runs_on_gems_shaped_labels(counts, rule, note, tmp_path, monkeypatch):
    """Outer stratified 10-fold and an inner 10-fold fitness on Tran et al.'s smallest classes."""
    from hpcswarm.data import Dataset, write_dataset
    from hpcswarm.run.jobfile import build_job

    monkeypatch.setattr("hpcswarm.fitness.folds._WARNED", set())
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(len(counts)), counts)
    X = rng.normal(size=(y.size, 30)) + np.where(np.arange(30) < 4, y[:, None], 0)
    write_dataset(Dataset(X=X, y=y, class_names=[f"c{i}" for i in range(len(counts))],
                          gene_names=[f"g{i}" for i in range(30)], attrs={}),
                  tmp_path / "gems.h5")
    job = build_job({"data": str(tmp_path / "gems.h5"), "algorithm": "bpso",
                     "protocol": "unbiased", "folds": 10, "runs": 1, "refine": "prune",
                     "output": str(tmp_path / "out.h5"),
                     "fitness": {"k": 1, "cv": 10},
                     "params": {"n_particles": 4, "n_iterations": 2}}, base=tmp_path)
    lines = []
    summary = run_job(job, log=lines.append, quiet=True)
    results = read_results(job.output)
    assert json.loads(results.attrs["fold_rules"]) == {"outer": rule, "inner": [rule]}
    assert summary["tasks"] == 10 and results.table["test_total"].sum() == y.size
    assert sum(note in line for line in lines) == 1


# ------------------------------------------------------------------ no leakage
PARAMS = {"n_particles": 6, "n_iterations": 4, "ls_tries": 5}


def test_unbiased_selection_never_sees_the_held_out_fold():
    """Replacing the held-out rows by noise changes nothing the search did."""
    from hpcswarm.selection.methods import algorithm_params

    data = load_dataset("builtin:srbct")
    X, y = np.array(data.X), data.y
    params = algorithm_params("pso-lsrg", PARAMS)
    task = make_tasks(y, "unbiased", runs=1, seed=3, folds=5, inner_cv=params["cv"])[2]
    noisy = X.copy()
    noisy[task.test] = np.random.default_rng(0).normal(0, 5, size=(task.test.size, X.shape[1]))
    first = run_task(task, TaskData(X, y), SearchSpec("pso-lsrg", params))
    second = run_task(task, TaskData(noisy, y), SearchSpec("pso-lsrg", params))
    assert np.array_equal(first.genes, second.genes)
    assert first.train_fitness == second.train_fitness
    assert first.history.without("seconds") == second.history.without("seconds")
    # ... while the held-out rows do reach the test score: it is computed on them
    assert (first.test_correct, first.baseline_correct) != (
        second.test_correct, second.baseline_correct)
    assert first.test_total == task.test.size


def test_in_fold_preprocessing_never_sees_the_held_out_fold():
    """With [preprocess] steps, noise in the held-out rows leaves the fitted preprocessing,
    the selected genes (indices of the original dataset) and the history unchanged."""
    from hpcswarm.selection.methods import algorithm_params
    from hpcswarm.selection.preprocess import parse_steps

    data = load_dataset("builtin:srbct")
    X, y = np.array(data.X), data.y
    params = algorithm_params("pso-lsrg", PARAMS)
    steps = parse_steps({"log2": 1, "zscore": True, "top_variance": 300, "top_anova": 60})
    task = make_tasks(y, "unbiased", runs=1, seed=3, folds=5, inner_cv=params["cv"])[2]
    noisy = X.copy()
    noisy[task.test] = np.random.default_rng(0).gamma(1, 5, size=(task.test.size, X.shape[1]))
    first = run_task(task, TaskData(X, y), SearchSpec("pso-lsrg", params, preprocess=tuple(steps)))
    second = run_task(task, TaskData(noisy, y),
                      SearchSpec("pso-lsrg", params, preprocess=tuple(steps)))
    assert first.preprocessing == second.preprocessing
    kept = first.preprocessing[-1]["genes"]
    assert len(kept) == 60 and set(first.genes.tolist()) <= set(kept)
    assert np.array_equal(first.genes, second.genes)
    assert first.history.without("seconds") == second.history.without("seconds")
    assert (first.test_correct, first.baseline_correct) != (
        second.test_correct, second.baseline_correct)
    # the fit used the training rows only: refitting on them alone gives the same record
    from hpcswarm.selection.preprocess import fit

    alone, _ = fit(steps, X[task.train], y[task.train])
    assert alone.record() == first.preprocessing


class WatchedRows(np.ndarray):
    """A sample-major matrix that records every indexing (a copy of rows is one)."""

    reads = []

    def __getitem__(self, index):
        WatchedRows.reads.append(index)
        return super().__getitem__(index)


@pytest.mark.parametrize("protocol", ["unbiased", "biased"])
def test_the_search_reads_the_memory_mapped_gene_major_file(monkeypatch, protocol):
    """No copy of X[train] while the search runs; its evaluator reads the file's pages."""
    import hpcswarm.selection.search as search
    from hpcswarm.selection.methods import algorithm_params

    data = load_dataset("builtin:srbct")
    assert isinstance(data.X_genes, np.memmap)
    params = algorithm_params("cbpso", {"n_particles": 4, "n_iterations": 3})
    task = make_tasks(data.y, protocol, runs=1, seed=3, folds=5, inner_cv=params["cv"])[0]
    evaluators, reads_during_search, rounds = [], [], []
    make_fitness = search.make_fitness

    def spy(*args, **kwargs):
        fitness, evaluator = make_fitness(*args, **kwargs)
        evaluators.append(evaluator)
        return fitness, evaluator

    monkeypatch.setattr(search, "make_fitness", spy)
    monkeypatch.setattr(WatchedRows, "reads", [])
    X = data.X.view(WatchedRows)

    def progress(row=None):
        rounds.append(row)
        reads_during_search.extend(WatchedRows.reads)

    result = run_task(task, TaskData(X, data.y, data.X_genes), SearchSpec("cbpso", params),
                      SearchHooks(progress=progress))
    assert len(rounds) >= 3 and reads_during_search == []
    assert WatchedRows.reads  # X is read after the search, for the test fold and baselines
    assert np.shares_memory(evaluators[0].data.xt, data.X_genes)
    assert evaluators[0].n_samples == task.train.size
    # the same task on an in-memory copy of X gives the same result
    expected = run_task(task, TaskData(np.array(data.X), data.y), SearchSpec("cbpso", params))
    assert np.array_equal(result.genes, expected.genes)
    assert [(p.train_correct, p.test_correct, p.genes.tolist()) for p in result.front] == \
        [(p.train_correct, p.test_correct, p.genes.tolist()) for p in expected.front]
    result, expected = (replace(one, seconds=0.0, history=one.history.without("seconds"))
                        for one in (result, expected))
    assert result == expected


@pytest.mark.slow
def test_biased_task_reports_the_inner_score_of_all_samples():
    from hpcswarm.selection.methods import algorithm_params

    data = load_dataset("builtin:srbct")
    params = algorithm_params("cbpso", {"n_particles": 4, "n_iterations": 3})
    task = make_tasks(data.y, "biased", runs=1, seed=0, inner_cv=params["cv"])[0]
    result = run_task(task, TaskData(np.array(data.X), data.y), SearchSpec("cbpso", params))
    assert result.test_total == result.train_total == 83
    assert result.test_correct == result.train_correct
    assert (result.baseline_correct, result.baseline_total) == (76, 83)  # 1-NN LOOCV, all


@pytest.mark.parametrize("protocol", ["unbiased", "holdout", "biased"])
def test_a_task_records_the_balanced_accuracy_of_its_test_predictions(protocol):
    """The test counts per class of the selected and the refined subsets: on held-out rows
    scikit-learn's ``balanced_accuracy_score`` of its k-NN's predictions; biased, the inner
    cross-validation's counts, adding up to the inner counts."""
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.neighbors import KNeighborsClassifier

    from hpcswarm.selection.methods import algorithm_params

    data = load_dataset("sklearn:wine")  # 13 genes, classes of 59, 71 and 48
    X = np.array(data.X)
    params = algorithm_params("cbpso", {"n_particles": 4, "n_iterations": 2})
    task = make_tasks(data.y, protocol, runs=1, seed=2, folds=3, inner_cv=params["cv"])[0]
    result = run_task(task, TaskData(X, data.y), SearchSpec("cbpso", params, refine="prune"))
    for subset in (result, result.refined):
        assert sum(subset.test_class_correct) == subset.test_correct
        assert sum(subset.test_class_total) == subset.test_total
        if protocol == "biased":
            assert subset.test_class_total == tuple(np.bincount(data.y))
            continue
        model = KNeighborsClassifier(n_neighbors=1, algorithm="brute")
        model.fit(X[task.train][:, subset.genes], data.y[task.train])
        predicted = model.predict(X[task.test][:, subset.genes])
        assert subset.test_balanced_accuracy == pytest.approx(
            balanced_accuracy_score(data.y[task.test], predicted), rel=1e-15)
    assert result.test_correct == result.train_correct or protocol != "biased"


@pytest.mark.parametrize("protocol", ["unbiased", "biased"])
def test_a_task_records_the_balanced_accuracy_of_its_baselines(protocol):
    """The all-genes and PCA-kNN baselines' counts per class: scikit-learn's
    ``balanced_accuracy_score`` of 1-NN on every gene and of PCA (95 % of the variance) then
    1-NN, trained on the training rows and tested on the held-out ones; biased, of their
    leave-one-out predictions (the inner validation of cbpso)."""
    from sklearn.decomposition import PCA
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import LeaveOneOut, cross_val_predict
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    from hpcswarm.selection.methods import algorithm_params

    data = load_dataset("sklearn:wine")
    X, y = np.array(data.X), data.y
    params = algorithm_params("cbpso", {"n_particles": 4, "n_iterations": 2})
    task = make_tasks(y, protocol, runs=1, seed=2, folds=3, inner_cv=params["cv"])[0]
    result = run_task(task, TaskData(X, y), SearchSpec("cbpso", params))
    models = {"baseline": KNeighborsClassifier(n_neighbors=1, algorithm="brute"),
              "pca": make_pipeline(PCA(n_components=0.95, svd_solver="full"),
                                   KNeighborsClassifier(n_neighbors=1, algorithm="brute"))}
    for prefix, model in models.items():
        class_total = getattr(result, f"{prefix}_class_total")
        assert sum(getattr(result, f"{prefix}_class_correct")) == \
            getattr(result, f"{prefix}_correct")
        assert sum(class_total) == getattr(result, f"{prefix}_total")
        if protocol == "biased":
            truth, predicted = y, cross_val_predict(model, X, y, cv=LeaveOneOut())
        else:
            truth = y[task.test]
            predicted = model.fit(X[task.train], y[task.train]).predict(X[task.test])
        assert class_total == tuple(np.bincount(truth, minlength=3))
        assert getattr(result, f"{prefix}_balanced_accuracy") == pytest.approx(
            balanced_accuracy_score(truth, predicted), rel=1e-15)


# ------------------------------------------------------------------ whole jobs
def test_existing_output_is_an_error_before_any_computation(tmp_path, monkeypatch):
    import hpcswarm.run.plan as plan_module

    (tmp_path / "out.h5").write_text("keep me")
    job = read_job(JOBS / "cbpso-wine-biased.toml", [f"output={tmp_path / 'out.h5'}"])

    def fail(*args, **kwargs):
        raise AssertionError("computation started")

    monkeypatch.setattr(plan_module, "load_job_dataset", fail)
    with pytest.raises(DataError, match="out.h5: already exists.*--overwrite"):
        run_job(job)
    assert (tmp_path / "out.h5").read_text() == "keep me"
    (tmp_path / "out.h5").unlink()
    (tmp_path / "out.json").write_text("{}")
    with pytest.raises(DataError, match="out.json: already exists"):
        run_job(job)


def test_cli_existing_output_exits_2_naming_the_file(tmp_path, capsys):
    from hpcswarm.__main__ import main

    out = tmp_path / "r.h5"
    out.write_bytes(b"")
    status = main(["run", str(JOBS / "cbpso-wine-biased.toml"), "--set", f"output={out}"])
    assert status == 2
    assert f"{out}: already exists (use --overwrite" in capsys.readouterr().err


def test_cli_job_form_rejects_flag_form_options(tmp_path):
    from hpcswarm import cli

    with pytest.raises(ParameterError, match="--data cannot be combined with a job file"):
        cli.main(["run", str(JOBS / "cbpso-wine-biased.toml"), "--data", "builtin:srbct"])
    with pytest.raises(ParameterError, match="job file .*or both --data and --algorithm"):
        cli.main(["run", "--data", "builtin:srbct"])


def test_cli_job_form_runs_and_overwrites(tmp_path, cache, capsys):
    from hpcswarm import cli

    out = tmp_path / "wine.h5"
    args = ["run", str(JOBS / "cbpso-wine-biased.toml"), "--set", "runs=2", "--set",
            "n_iterations=3", "--set", f"output={out}"]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "inner-CV accuracy (biased)" in text and "note: optimistically biased" in text
    first = read_results(out)
    assert cli.main(args + ["--overwrite"]) == 0
    again = read_results(out)
    assert all(np.array_equal(a, b) for a, b in zip(first.genes, again.genes))  # same seeds
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wine.h5", "wine.json",
                                                          "wine.progress.jsonl"]


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(JOBS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_bundled_job_runs_end_to_end(path, tmp_path, cache, request):
    user_data = [] if "\ndata = " in path.read_text() else ["data=builtin:srbct"]
    job = read_job(path, user_data)  # a job that leaves the dataset to the user gets SRBCT
    if not job.data.startswith(("sklearn:", "builtin:")):
        request.getfixturevalue("shared_data")  # skips without ../shared/data
    runs = 1 if job.spec.algorithm == "fsipso" else 2  # fsipso ranks 5966 genes first: one run
    job = read_job(path, user_data + fast_overrides(path, tmp_path, cache, runs=runs))
    summary = run_job(job)
    results = read_results(job.output)
    n_folds = 3 if job.protocol == "unbiased" else 1
    assert len(results.genes) == summary["tasks"] == runs * n_folds
    assert results.attrs["biased"] == (job.protocol == "biased")
    assert summary["subset_size"]["mean"] >= 1
    assert 0 <= summary["accuracy"]["mean"] <= 1
    assert 0 <= summary["all_genes_accuracy"]["mean"] <= 1
    for baseline in ("all_genes_balanced_accuracy", "pca_knn_balanced_accuracy"):
        assert 0 <= summary[baseline]["mean"] <= 1 and summary[baseline]["n"] == runs * n_folds
    assert json.loads(job.summary_path.read_text())["protocol"] == job.protocol


def test_converted_data_is_cached_once_by_content(tmp_path, shared_data):
    job = read_job(JOBS / "cso-colon-holdout.toml", [f"cache={tmp_path}"])
    first = load_job_dataset(job)
    cached = sorted(tmp_path.iterdir())
    assert len(cached) == 1 and cached[0].name.startswith("colon-") and first.memory_mapped
    second = load_job_dataset(job)
    assert sorted(tmp_path.iterdir()) == cached and second.sha256 == first.sha256
    assert first.attrs["source_sha256"]  # provenance of the original file kept


def test_cache_files_of_another_encoding_version_are_not_reused(monkeypatch):
    """A file cached before X_genes existed has another name: the source is converted again."""
    import hpcswarm.data.hdf5 as hdf5
    from hpcswarm.data.sources import cache_name

    now = cache_name("ab" * 32, {"dtype": "float64"})
    monkeypatch.setattr(hdf5, "ENCODING_VERSION", "0.1.0")
    assert cache_name("ab" * 32, {"dtype": "float64"}) != now


def test_sklearn_datasets_come_from_the_installed_package():
    job = read_job(JOBS / "cbpso-wdbc-biased.toml")
    data = load_job_dataset(job)
    assert data.X.shape == (569, 30) and data.class_names == ["malignant", "benign"]
    assert data.attrs["source_sha256"] and data.gene_names[0] == "mean radius"
    bad = read_job(JOBS / "cbpso-wdbc-biased.toml", ["data=sklearn:iris"])
    with pytest.raises(DataError, match="sklearn:iris: not a bundled"):
        load_job_dataset(bad)


# ------------------------------------------------------------------ the registry
def test_every_protocol_counts_its_tasks_without_drawing_them():
    from hpcswarm.run.protocols import PROTOCOLS

    y = np.repeat([0, 1, 2], 10)
    for name, protocol in PROTOCOLS.items():
        tasks = make_tasks(y, name, runs=2, seed=4, folds=5, inner_cv="loo")
        assert len(tasks) == 2 * protocol.n_splits(5) + protocol.n_extra
        assert sum(task.extra for task in tasks) == protocol.n_extra
        assert {task.protocol for task in tasks} == {name}
        assert all(protocol.held_out(task) == (task.test.size > 0) for task in tasks)
        assert bool(protocol.note()) == protocol.biased == (name == "biased")


@pytest.mark.slow
def test_final_signature_adds_one_search_on_every_sample_to_the_unbiased_tasks():
    """The final-signature protocol: ``unbiased``'s tasks (same splits, same seeds), then
    one search on every sample whose seed does not depend on the runs, tested on its inner
    folds (no held-out rows)."""
    from hpcswarm.selection.methods import algorithm_params

    data = load_dataset("builtin:srbct")
    params = algorithm_params("cbpso", {"n_particles": 4, "n_iterations": 2})
    tasks = make_tasks(data.y, "final-signature", runs=1, seed=0, folds=3, inner_cv="loo")
    unbiased = make_tasks(data.y, "unbiased", runs=1, seed=0, folds=3, inner_cv="loo")
    assert len(tasks) == 4 and tasks[-1].extra and tasks[-1].train.size == 83
    for task, twin in zip(tasks, unbiased):
        assert np.array_equal(task.train, twin.train) and task.spawn_key == twin.spawn_key
    later = make_tasks(data.y, "final-signature", range(5, 7), seed=0, folds=3, inner_cv="loo")
    assert later[-1].spawn_key == tasks[-1].spawn_key == (0, 2, 0)
    assert np.array_equal(later[-1].inner_fold_ids, tasks[-1].inner_fold_ids)
    result = run_task(tasks[-1], TaskData(np.array(data.X), data.y), SearchSpec("cbpso", params))
    assert result.test_total == result.train_total == 83
    assert result.test_correct == result.train_correct
