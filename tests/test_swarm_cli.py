"""The ``run`` subcommand: JSON output, summary, parameter errors."""

import json

import pytest

from hpcswarm import cli
from hpcswarm.__main__ import main as entry
from hpcswarm.errors import ParameterError
from hpcswarm.selection.methods import ALGORITHMS

TINY = ["--param", "n_particles=4", "--param", "n_iterations=3"]


def test_run_writes_json_with_genes_fitness_history(tmp_path):
    out = tmp_path / "result.json"
    status = cli.main(["run", "--data", "builtin:srbct", "--algorithm", "cbpso", *TINY,
                       "--seed", "5", "--output", str(out)])
    assert status == 0
    doc = json.loads(out.read_text())
    assert doc["algorithm"] == "cbpso" and doc["seed"] == 5 and doc["data"] == "builtin:srbct"
    assert doc["params"]["n_particles"] == 4 and doc["params"]["k"] == 1
    assert doc["n_selected"] == len(doc["selected_genes"]) == len(doc["selected_gene_names"])
    assert len(doc["history"]) == 3 and doc["history"][-1]["best_fitness"] == doc["fitness"]
    assert doc["extra"]["score"]["total"] == 83
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_run_without_output_prints_a_summary(capsys):
    assert cli.main(["run", "--data", "builtin:srbct", "--algorithm", "cso", *TINY]) == 0
    text = capsys.readouterr().out
    assert "cso on builtin:srbct (seed 0): fitness" in text and "of 2308 genes" in text


def test_run_maximises_the_balanced_accuracy_objective(tmp_path, capsys):
    out = tmp_path / "result.json"
    assert cli.main(["run", "--data", "builtin:srbct", "--algorithm", "cbpso", *TINY,
                     "--param", "objective=balanced-accuracy", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    score = doc["extra"]["score"]
    assert doc["params"]["objective"] == "balanced-accuracy"
    assert doc["fitness"] == score["balanced_accuracy"] != score["accuracy"]
    assert sum(score["class_total"]) == 83 and sum(score["class_correct"]) == score["correct"]
    assert cli.main(["run", "--data", "builtin:srbct", "--algorithm", "cbpso", *TINY,
                     "--param", "objective=balanced-accuracy"]) == 0
    assert f"balanced accuracy {score['balanced_accuracy']:.4f}" in capsys.readouterr().out


def test_unknown_param_and_bad_value_exit_with_status_2(capsys):
    with pytest.raises(ParameterError, match="'speed'.*allowed"):
        cli.main(["run", "--data", "builtin:srbct", "--algorithm", "pso", "--param", "speed=3"])
    assert entry(["run", "--data", "builtin:srbct", "--algorithm", "pso",
                  "--param", "n_particles=many"]) == 2
    assert "'n_particles'" in capsys.readouterr().err


def test_help_lists_every_algorithm(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(name in text for name in ALGORITHMS)


def test_a_single_search_too_large_for_the_memory_is_refused_before_it_starts(tmp_path,
                                                                              capsys,
                                                                              monkeypatch):
    import hpcswarm.selection.search as search

    def forbidden(*args, **kwargs):
        raise AssertionError("the search started before the memory check")

    monkeypatch.setattr(search.SpecSearch, "run", forbidden)
    out = tmp_path / "result.json"
    status = entry(["run", "--data", "builtin:srbct", "--algorithm", "cbpso", *TINY,
                    "--memory-limit", "0.000001", "--output", str(out)])
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert status == 2 and len(lines) == 1
    assert lines[0].startswith("hpcswarm: error: not enough memory: the search needs")
    assert "83 samples x 2308 genes, 4 particles" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_search_settings_cannot_be_combined_with_a_job_file(tmp_path):
    with pytest.raises(ParameterError, match="--refine, --device cannot be combined"):
        cli.main(["run", "job.toml", "--refine", "prune", "--device", "cpu"])
