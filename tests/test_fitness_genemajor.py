"""The evaluator on a dataset file's memory-mapped gene-major matrix: bit for bit the
copy-based evaluator's scores, flips and search histories, and no private copy of the matrix."""

import numpy as np
import pytest

from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor, KnnEvaluator
from hpcswarm.selection.search import run_search

N_SAMPLES, N_GENES = 66, 120


def opened(tmp_path, dtype):
    """A file-backed dataset with exact distance ties (half-integer values) and 3 classes."""
    rng = np.random.default_rng(7)
    y = np.arange(N_SAMPLES) % 3
    X = np.round(2.0 * rng.normal(size=(N_SAMPLES, N_GENES))) / 2.0
    X[:, :4] += y[:, None]
    path = tmp_path / "d.h5"
    write_dataset(Dataset(X=X.astype(dtype), y=y, class_names=["a", "b", "c"],
                          gene_names=[f"g{j}" for j in range(N_GENES)]), path)
    return open_dataset(path)


def subsets(dataset):
    """All samples, and a 90 % subset (the training rows of one unbiased outer fold)."""
    rng = np.random.default_rng(3)
    everything = np.arange(dataset.n_samples)
    return [everything, np.sort(rng.choice(everything, size=int(0.9 * everything.size),
                                           replace=False))]


def state_bytes(state):
    return state.dist2.tobytes() + state.sq.tobytes() + state.drift.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k, cv", [(1, "loo"), (5, "loo"), (1, 10), (5, 10)])
def test_scores_and_flips_are_bit_identical_to_the_copy(tmp_path, dtype, k, cv):
    dataset = opened(tmp_path, dtype)
    for rows in subsets(dataset):
        y = dataset.y[rows]
        mapped = KnnEvaluator(GeneMajor(dataset.X_genes, rows), y, k=k, cv=cv, seed=2)
        copied = KnnEvaluator(np.asarray(dataset.X)[rows], y, k=k, cv=cv, seed=2)
        rng = np.random.default_rng(k)
        mask = rng.random(N_GENES) < 0.5
        assert mapped.score(mask) == copied.score(mask)
        states = mapped.new_state(mask), copied.new_state(mask)
        assert state_bytes(states[0]) == state_bytes(states[1])
        for step in range(25):
            genes = rng.choice(N_GENES, size=int(rng.integers(1, 6)), replace=False)
            assert mapped.score_flip(states[0], genes) == copied.score_flip(states[1], genes)
            if step % 2 == 0:
                mapped.apply_flip(states[0], genes)
                copied.apply_flip(states[1], genes)
            assert state_bytes(states[0]) == state_bytes(states[1])
        assert mapped.evaluations == copied.evaluations


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, settings", [
    ("pso-lsrg", {"n_particles": 6, "n_iterations": 4, "ls_tries": 5}),
    ("cso", {"n_particles": 6, "n_iterations": 4}),
])
def test_search_histories_are_bit_identical_to_the_copy(tmp_path, dtype, name, settings):
    dataset = opened(tmp_path, dtype)
    rows = subsets(dataset)[1]
    y = dataset.y[rows]
    mapped = run_search(GeneMajor(dataset.X_genes, rows), y, name, settings, seed=5)
    copied = run_search(np.asarray(dataset.X)[rows], y, name, settings, seed=5)

    def comparable(result):
        return ([{key: value for key, value in row.items() if key != "seconds"}
                 for row in result.history], result.mask.tolist(), result.fitness,
                result.extra["score"])

    assert comparable(mapped) == comparable(copied)


def test_the_evaluator_reads_the_file_not_a_copy(tmp_path):
    dataset = opened(tmp_path, np.float64)
    assert isinstance(dataset.X_genes, np.memmap)
    rows = subsets(dataset)[1]
    evaluator = KnnEvaluator(GeneMajor(dataset.X_genes, rows), dataset.y[rows])
    assert np.shares_memory(evaluator.data.xt, dataset.X_genes)
    assert isinstance(evaluator.data.xt.base, np.memmap)
    assert (evaluator.n_samples, evaluator.n_genes) == (rows.size, N_GENES)
    # a sample-major in-memory matrix is the caller's own: copied gene-major as before
    X = np.asarray(dataset.X)[rows]
    copied = KnnEvaluator(X, dataset.y[rows])
    assert not np.shares_memory(copied.data.xt, X) and copied.data.xt.flags.c_contiguous


def test_take_gathers_genes_of_the_samples_in_use_as_float64():
    xt = np.arange(24, dtype=np.float32).reshape(4, 6)
    data = GeneMajor(xt, [5, 1, 3])
    block = data.take(np.array([2, 0]))
    assert block.dtype == np.float64 and block.flags.c_contiguous
    np.testing.assert_array_equal(block, xt[[2, 0]][:, [5, 1, 3]])
    np.testing.assert_array_equal(data.take(np.array([3]), np.array([2])), [[21.0]])
    assert data.take(np.array([], dtype=np.int64)).shape == (0, 3)
    assert (data.n_genes, data.n_samples) == (4, 3)


@pytest.mark.parametrize("xt, samples, message", [
    (np.zeros(3), None, "2-D real matrix"),
    (np.array([["a"]]), None, "2-D real matrix"),
    (np.zeros((2, 3)), [0, 3], r"within \[0, 3\)"),
    (np.zeros((2, 3)), [[0]], "1-D array"),
    (np.array([[0.0, np.nan, 1.0]]), [0, 2], None),
    (np.array([[0.0, np.nan, 1.0]]), [1], "xt holds NaN"),
])
def test_bad_gene_major_data(xt, samples, message):
    if message is None:  # a NaN outside the samples in use is never read
        assert GeneMajor(xt, samples).n_samples == 2
        return
    with pytest.raises(ValueError, match=message):
        GeneMajor(xt, samples)
