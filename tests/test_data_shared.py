"""The real datasets of ``../shared/data``: shapes and class counts of its README, and the
all-genes 1-NN leave-one-out accuracies read back through the memory-mapped path."""

import numpy as np
import pytest

from hpcswarm.__main__ import main
from hpcswarm.data import open_dataset

# file -> (samples, genes, class counts in class-code order, 1-NN LOO correct)
EXPECTED = {
    "SRBCT.arff": (83, 2308, {"BL": 11, "EWS": 29, "NB": 18, "RMS": 25}, 76),
    "leukemia.arff": (72, 5147, {"ALL": 47, "AML": 25}, 65),
    "colon.mat": (62, 2000, {"1": 22, "2": 40}, 43),
    "lymphoma.mat": (96, 4026, {"1": 46, "2": 10, "3": 9, "4": 11, "5": 6, "6": 6, "7": 4, "8": 2, "9": 2}, 91),
    "Prostate_GE.mat": (102, 5966, {"1": 50, "2": 52}, 85),
    "GLIOMA.mat": (50, 4434, {"1": 14, "2": 7, "3": 14, "4": 15}, 34),
}


def loo_1nn_correct(X, y):
    """Leave-one-out 1-NN (Euclidean) correct count, computed directly with numpy."""
    X = np.asarray(X, dtype=np.float64)
    sq = (X * X).sum(axis=1)
    d = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    np.fill_diagonal(d, np.inf)
    return int((y[d.argmin(axis=1)] == y).sum())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shared_file_converts_to_readme_figures(shared_data, tmp_path, capsys, name):
    n_samples, n_genes, counts, loo = EXPECTED[name]
    output = tmp_path / (name.split(".")[0] + ".h5")
    assert main(["convert", str(shared_data / name), str(output)]) == 0
    assert f"{n_samples} samples x {n_genes} genes" in capsys.readouterr().out
    dataset = open_dataset(output)
    assert dataset.memory_mapped and dataset.X.dtype == np.float64
    assert dataset.X.shape == (n_samples, n_genes)
    assert dict(dataset.class_counts()) == counts
    assert dataset.attrs["source_sha256"] == dataset.attrs["source_sha256"].lower()
    assert loo_1nn_correct(dataset.X, dataset.y) == loo


def test_bundled_srbct_matches_the_shared_arff(shared_data):
    from hpcswarm.data import example_path, read_dataset

    bundled = open_dataset(example_path("srbct"))
    fresh, _ = read_dataset(shared_data / "SRBCT.arff")
    np.testing.assert_array_equal(bundled.X, fresh.X)
    np.testing.assert_array_equal(bundled.y, fresh.y)
    assert bundled.gene_names == fresh.gene_names
    assert bundled.attrs["source_sha256"] == fresh.attrs["source_sha256"]
    assert loo_1nn_correct(bundled.X, bundled.y) == 76
