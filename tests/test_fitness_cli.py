"""``hpcswarm evaluate``: one JSON object per run, genes by name or index, clear errors."""

import json
import subprocess
import sys

import numpy as np
import pytest

from hpcswarm import cli
from hpcswarm.data import load_dataset
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.fitness import KnnEvaluator
from hpcswarm.fitness.genes import mask_from_genes
from hpcswarm.signatures.genelist import read_gene_list


def run(capsys, *argv):
    assert cli.main(["evaluate", *argv]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    return json.loads(out[0])


def test_all_genes_1nn_loo_on_srbct(capsys):
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import LeaveOneOut, cross_val_predict
    from sklearn.neighbors import KNeighborsClassifier

    dataset = load_dataset("builtin:srbct")
    predicted = cross_val_predict(KNeighborsClassifier(n_neighbors=1), np.asarray(dataset.X),
                                  dataset.y, cv=LeaveOneOut())
    result = run(capsys, "builtin:srbct", "--all", "--k", "1", "--cv", "loo")
    class_total = np.bincount(dataset.y).tolist()
    class_correct = np.bincount(dataset.y[predicted == dataset.y],
                                minlength=len(class_total)).tolist()
    assert result == {"correct": 76, "total": 83, "accuracy": 76 / 83,
                      "balanced_accuracy": balanced_accuracy_score(dataset.y, predicted),
                      "error": 7 / 83, "class_correct": class_correct,
                      "class_total": class_total, "genes_used": 2308, "n_genes": 2308,
                      "k": 1, "cv": "loo", "seed": 0}
    assert list(result)[:4] == ["correct", "total", "accuracy", "balanced_accuracy"]


@pytest.mark.slow
def test_evaluate_imports_no_search():
    code = ("import sys; from hpcswarm.cli import main; "
            "main(['evaluate', 'sklearn:wine', '--all', '--cv', '3']); "
            "print(sorted(m for m in sys.modules if m.startswith(('hpcswarm.swarm', "
            "'hpcswarm.selection.methods'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert json.loads(out[0])["total"] == 178 and out[1] == "[]"


@pytest.mark.parametrize("by", ["name", "column"])
def test_gene_file_by_name_or_by_column(capsys, tmp_path, by):
    dataset = load_dataset("builtin:srbct")
    names = [dataset.gene_names[i] for i in (3, 40, 1000)]
    entries = names if by == "name" else ["3", "40", "1000"]
    genes = tmp_path / "signature.txt"
    genes.write_text(f"# a signature\n{entries[0]}\n{entries[1]}\n\n{entries[2]}\n")
    result = run(capsys, "builtin:srbct", "--genes", str(genes), "--k", "3", "--cv", "5",
                 "--seed", "4", *(["--columns"] if by == "column" else []))
    mask = np.zeros(dataset.n_genes, bool)
    mask[[3, 40, 1000]] = True
    expected = KnnEvaluator(dataset.X, dataset.y, k=3, cv=5, seed=4).score(mask)
    assert (result["correct"], result["total"], result["genes_used"]) == \
        (expected.correct, expected.total, 3)
    assert result["cv"] == 5 and result["genes"] == names


def test_unknown_gene_is_named(tmp_path):
    genes = tmp_path / "genes.txt"
    genes.write_text("no-such-gene\n")
    with pytest.raises(ParameterError, match="line 1: 'no-such-gene' names no gene"):
        cli.main(["evaluate", "builtin:srbct", "--genes", str(genes)])


def test_impossible_scheme_is_a_parameter_error():
    with pytest.raises(ParameterError, match="84-fold .* needs at least 84 samples, got 83"):
        cli.main(["evaluate", "builtin:srbct", "--all", "--cv", "84"])


def test_bad_cv_option_is_one_error_naming_it():
    with pytest.raises(ParameterError, match="argument --cv: cv must be"):
        cli.main(["evaluate", "builtin:srbct", "--all", "--cv", "kfold"])


def test_gene_list_rules(tmp_path):
    names = ["7", "GENE_A", "GENE_B"]
    # "7" is the first gene's name; a number that names no gene is never a column
    assert mask_from_genes(["7", "GENE_B"], names).tolist() == [True, False, True]
    with pytest.raises(ParameterError, match=r"line 4: '2' names no gene of the dataset "
                                             r"\(a gene list holds names; for 0-based columns"):
        mask_from_genes(["7", "2"], names, lines=[3, 4])
    assert mask_from_genes(["0", "2"], names, columns=True).tolist() == [True, False, True]
    with pytest.raises(ParameterError, match=r"'3' is no 0-based column in \[0, 3\)"):
        mask_from_genes(["3"], names, columns=True)
    with pytest.raises(ParameterError, match="empty"):
        mask_from_genes([], names)
    with pytest.raises(DataError, match="missing.txt: no such file"):
        read_gene_list(tmp_path / "missing.txt")


def test_sample_shards_print_the_same_json_as_one_rank(capsys):
    from test_mpi_jobs import launch

    argv = ["builtin:srbct", "--all", "--k", "3", "--cv", "5", "--seed", "2"]
    serial = run(capsys, *argv)
    assert run(capsys, *argv, "--sample-shards", "1") == serial
    done, _ = launch(2, None, 120, ["evaluate", *argv, "--sample-shards", "2"])
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [serial]


def test_sample_shards_must_divide_the_ranks():
    with pytest.raises(ParameterError, match="--sample-shards 2 must be a positive divisor"):
        cli.main(["evaluate", "builtin:srbct", "--all", "--sample-shards", "2"])
