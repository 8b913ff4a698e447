"""Refinements by searches on subsamples (hpcswarm.signatures.subsample): halves, known answers,
promises."""

import json

import h5py
import numpy as np
import pytest

from hpcswarm.errors import ParameterError
from hpcswarm.fitness import KnnEvaluator
from hpcswarm.run.jobfile import build_job
from hpcswarm.run.protocols import make_tasks, run_task
from hpcswarm.selection.search import run_search
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.signatures.subsample import (SubsampleSelections, complementary_halves,
                                consensus_prune, search_subsamples, stability_prefix,
                                standard_error, subsample_seed)
from hpcswarm.swarm.engine.loop import SearchHooks
from synthetic import informative_genes, small_data

SETTINGS = {"n_particles": 8, "n_iterations": 6, "ls_tries": 5}


def test_complementary_halves_split_every_class_in_two_disjoint_halves():
    y = np.repeat(np.arange(3), [7, 10, 4])
    root = np.random.SeedSequence(5, spawn_key=(1, 0, 2))
    halves = complementary_halves(y, 6, root)
    assert len(halves) == 6
    for first, second in zip(halves[::2], halves[1::2]):
        assert np.intersect1d(first, second).size == 0
        assert np.array_equal(np.union1d(first, second), np.arange(y.size))
        for part in (first, second):
            counts = np.bincount(y[part], minlength=3)
            assert np.all(np.abs(2 * counts - np.bincount(y)) <= 1)  # each class cut in two
    again = complementary_halves(y, 6, np.random.SeedSequence(5, spawn_key=(1, 0, 2)))
    assert all(np.array_equal(a, b) for a, b in zip(halves, again))
    other = complementary_halves(y, 6, np.random.SeedSequence(6, spawn_key=(1, 0, 2)))
    assert not all(np.array_equal(a, b) for a, b in zip(halves, other))


def test_subsample_seeds_are_none_of_the_swarms():
    root = np.random.SeedSequence(3, spawn_key=(0, 0, 1))
    keys = {subsample_seed(root, b).spawn_key for b in range(4)}
    assert keys == {(0, 0, 1, 2, b) for b in range(4)}  # the swarm uses children 0 and 1


def test_frequency_ranking_and_error_bound():
    selections = SubsampleSelections([np.array([3, 1]), np.array([1, 7]), np.array([1, 3]),
                                      np.array([9])], n_genes=10)
    assert selections.frequency[[1, 3, 7, 9, 0]].tolist() == [0.75, 0.5, 0.25, 0.25, 0.0]
    assert selections.ranking().tolist() == [1, 3, 7, 9]  # ties to the lower column
    # Meinshausen & Buhlmann: q = 1.75 genes per subsample out of p = 10, threshold 0.75
    assert selections.error_bound(0.75) == pytest.approx(1.75 ** 2 / (0.5 * 10))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("rule", ["stability", "consensus"])
def test_planted_genes_are_kept_and_noise_dropped(rule, seed):
    # gene g < 3 marks class g: three genes that classify together, 57 of noise
    X, y = informative_genes(seed, n_samples=45, n_genes=60, n_informative=3, shift=4.0)
    result = run_search(X, y, "pso-lsrg", SETTINGS, seed=seed, refine=rule, subsamples=6)
    assert result.refined.method == rule
    assert result.refined.genes.tolist() == [0, 1, 2]
    assert result.refined.correct == result.refined.total
    if seed == 2:  # the search itself missed a planted gene; the subsample searches did not
        assert np.count_nonzero(result.genes < 3) == 2


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_subsamples_keep_the_planted_genes_far_more_often_than_noise(seed):
    X, y = small_data(seed, n_samples=45, n_genes=60)  # genes 0-2: three copies of one signal
    frequency = _selections(X, y, seed).frequency
    assert frequency[:3].mean() >= 0.6
    assert frequency[:3].mean() >= 5 * frequency[3:].mean()


def _selections(X, y, seed, n_subsamples=6):
    spec = SearchSpec.build("pso-lsrg", SETTINGS, refine="prune-compact")
    return search_subsamples(lambda part, labels, s: run_search(part, labels, spec, seed=s)
                             .refined.genes, X, y, n_subsamples, np.random.SeedSequence(seed))


def test_one_standard_error_is_never_zero():
    assert standard_error(75, 75) == pytest.approx(75 * np.sqrt(76 / 77 * 1 / 77 / 75))
    assert 0 < standard_error(75, 75) < standard_error(60, 75)


@pytest.mark.parametrize("seed", [0, 4])
def test_stability_keeps_the_best_inner_count_of_its_prefixes_within_one_error(seed):
    X, y = small_data(seed, n_samples=45, n_genes=60)
    selections = _selections(X, y, seed)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    refined = stability_prefix(scorer, X, y, selections)
    ranking = selections.ranking()
    counts = []
    for size in range(1, ranking.size + 1):
        mask = np.zeros(X.shape[1], dtype=bool)
        mask[ranking[:size]] = True
        counts.append(scorer.score(mask).correct)
    floor = max(counts) - standard_error(max(counts), y.size)
    assert refined.correct >= floor and refined.correct == scorer.score(refined.mask).correct
    assert all(count < floor for count in counts[:refined.genes.size - 1])  # the shortest
    assert np.array_equal(np.sort(ranking[:refined.genes.size]), refined.genes)


@pytest.mark.parametrize("seed", [0, 4])
def test_consensus_never_lowers_the_inner_count_of_the_union(seed):
    X, y = small_data(seed, n_samples=45, n_genes=60)
    selections = _selections(X, y, seed)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    union = np.zeros(X.shape[1], dtype=bool)
    union[selections.ranking()] = True
    refined = consensus_prune(scorer, X, y, selections)
    assert refined.correct >= scorer.score(union).correct
    assert refined.correct == scorer.score(refined.mask).correct
    assert set(refined.genes.tolist()) <= set(np.flatnonzero(union).tolist())
    assert set(refined.removed.tolist()) == set(np.flatnonzero(union & ~refined.mask).tolist())


def test_the_search_uses_the_subsample_searches_a_job_draws():
    X, y = small_data(2, n_samples=45, n_genes=60)
    result = run_search(X, y, "pso-lsrg", SETTINGS, seed=7, refine="stability", subsamples=4)
    selections = _selections(X, y, 7, n_subsamples=4)
    scorer = KnnEvaluator(X, y, k=1, cv="loo")
    assert np.array_equal(result.refined.genes, stability_prefix(scorer, X, y, selections).genes)


def test_subsamples_must_be_even():
    with pytest.raises(ParameterError, match="even"):
        SearchSpec.build("pso-lsrg", SETTINGS, refine="stability", subsamples=5)
    document = {"data": "builtin:srbct", "algorithm": "pso-lsrg", "refine": "stability",
                "subsamples": 3}
    with pytest.raises(ParameterError, match="subsamples.*even"):
        build_job(document, source="job.toml")


class _Stop(Exception):
    pass


def test_a_task_can_be_stopped_during_its_subsample_searches():
    from hpcswarm.data import Dataset

    X, y = small_data(1, n_samples=45, n_genes=60)
    data = Dataset(X, y, ["a", "b", "c"], [f"g{i}" for i in range(60)])
    (task, *_) = make_tasks(y, "unbiased", 1, 3, folds=3, inner_cv="loo")
    spec = SearchSpec.build("pso-lsrg", SETTINGS, refine="stability", subsamples=4)
    calls = []

    def interrupt():
        calls.append(1)
        if len(calls) == 3:
            raise _Stop

    with pytest.raises(_Stop):
        run_task(task, data, spec, SearchHooks(interrupt=interrupt))
    whole = run_task(task, data, spec)  # what a resumed task computes again
    assert run_task(task, data, spec, SearchHooks(interrupt=lambda: None)).refined == whole.refined


@pytest.mark.slow
def test_a_final_signature_by_consensus_lists_each_genes_subsample_frequency(tmp_path, capsys):
    from hpcswarm import cli
    from hpcswarm.data import Dataset, write_dataset
    from hpcswarm.results.files import read_results
    from hpcswarm.store.records import TaskRecord

    X, y = informative_genes(1, n_samples=45, n_genes=60, n_informative=3, shift=4.0)
    write_dataset(Dataset(X, y, ["a", "b", "c"], [f"g{i}" for i in range(60)]),
                  tmp_path / "data.h5")
    job = tmp_path / "job.toml"
    job.write_text(f'data = "{tmp_path / "data.h5"}"\nalgorithm = "pso-lsrg"\n'
                   'protocol = "final-signature"\nrefine = "consensus"\nfolds = 3\n'
                   'subsamples = 4\nseed = 5\n'
                   "[params]\nn_particles = 8\nn_iterations = 6\nls_tries = 5\n")
    output = tmp_path / "out.h5"
    assert cli.main(["run", str(job), "--quiet", "--set", f"output={output}"]) == 0
    results = read_results(output)
    final = results.final
    assert final.refine == "consensus"
    assert final.subsample_frequency.shape == final.genes.shape
    assert np.all((final.subsample_frequency > 0) & (final.subsample_frequency <= 1))
    with h5py.File(output, "r") as f:  # every task's refined genes carry theirs
        task = f["runs/run-000/fold-00"]
        assert task["refined_frequency"].shape == task["refined_genes"].shape
    record = TaskRecord.from_json(json.loads(json.dumps(_first_task_json(output))))
    assert record.refined.frequency is not None and record.refined.frequency.size
    summary = json.loads(output.with_suffix(".json").read_text())
    genes = summary["final_signature"]["genes"]
    assert [g["subsample_frequency"] for g in genes] == final.subsample_frequency.tolist()
    header = output.with_suffix(".signature.tsv").read_text().splitlines()[0]
    assert header == "gene\tfeature\tcolumn\tfold_frequency\tsubsample_frequency"
    capsys.readouterr()
    assert cli.main(["report", str(output)]) == 0
    assert "Subsample frequency" in capsys.readouterr().out


def _first_task_json(path):
    """The JSON form of the first task of a results file (what a checkpoint keeps)."""
    from hpcswarm.results.files import read_results
    from hpcswarm.store.records import TaskRecord

    row = {k: v[0] for k, v in read_results(path).table.items()}
    with h5py.File(path, "r") as f:
        return TaskRecord.from_hdf5(f["runs/run-000/fold-00"], row, "consensus").as_json()
