"""The design sets of the refinement studies, their tasks and the figures a rule is judged by.

Shared by :mod:`studies.study_refine` (which runs the searches) and
:mod:`studies.study_relevance_variants` (which reads them back): SRBCT, leukemia, colon,
lymphoma, Prostate_GE and GLIOMA from ``../shared/data`` (outside the repository), and a
synthetic planted-signal set written by :func:`synthetic`. The studies that read the design
panel's results files share their command line (:func:`panel_arguments`).
"""

import argparse
import json
from pathlib import Path

import h5py
import numpy as np
from scipy.stats import mannwhitneyu

from hpcswarm.data import Dataset, write_dataset
from hpcswarm.fitness import score_split
from hpcswarm.signatures.stability import stability_summary

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DESIGN_SETS = {"SRBCT": "SRBCT.arff", "leukemia": "leukemia.arff", "colon": "colon.mat",
               "lymphoma": "lymphoma.mat", "Prostate_GE": "Prostate_GE.mat",
               "GLIOMA": "GLIOMA.mat", "synthetic": None}
"""Each design set's file in :data:`SHARED`; None: the synthetic set, written in WORK."""
PAPER_BAR = {"SRBCT": (93.26, 15)}
"""Where the bar also asks for the paper's figures: test accuracy %, genes."""
MAX_SIGNATURE = 30
"""The longest prefix a comparison ranking is cut at: the 30-gene cap that ``relevance``
had when these studies were first run (the tool's rule has had no cap since)."""
PLANTED = 20
"""The synthetic set's genes that carry the class: the first 20."""
SYNTHETIC_SOURCE = "planted signal, benchmarks/study_refine.py"
"""The synthetic set's ``source`` attribute: the label it was first written with, kept so
that the file, and its checksum in the results of earlier runs, stay the same."""


def panel_arguments(description):
    """The command line of a study of the panel's results files: the folder ``work`` that
    holds them, the set ``names`` and ``--json FILE`` for every figure; a study adds its own
    options to the parser returned."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("work", type=Path)
    parser.add_argument("names", nargs="+")
    parser.add_argument("--json", type=Path)
    return parser


def print_row(cells):
    """One row of a study's Markdown table."""
    print("| " + " | ".join(cells) + " |", flush=True)


def print_header(columns):
    """The head of a study's Markdown table: its column names and the rule under them."""
    print_row(columns)
    print("|" + "---|" * len(columns), flush=True)


def write_figures(path, figures):
    """Every figure of a study as JSON into ``path`` (the ``--json`` option), when given."""
    if path is not None:
        path.write_text(json.dumps(figures, indent=1))


def synthetic(path):
    """The planted-signal design set: class means N(0, 1) on the first 20 genes, unit noise."""
    rng = np.random.default_rng([2026, 27])
    y = np.repeat(np.arange(4), [7, 10, 14, 15])
    means = np.zeros((4, 2000))
    means[:, :PLANTED] = rng.normal(size=(4, PLANTED))
    X = means[y] + rng.normal(size=(y.size, 2000))
    order = rng.permutation(y.size)
    write_dataset(Dataset(X[order], y[order], ["A", "B", "C", "D"],
                          [f"g{i:04d}" for i in range(2000)], None,
                          {"source": SYNTHETIC_SOURCE}), path)


def data_path(name, work):
    return (work / "synthetic-data.h5" if DESIGN_SETS[name] is None
            else SHARED / DESIGN_SETS[name])


def tasks(path):
    """Each task of a results file: run, fold, spawn key, training and test rows, genes, refined
    genes, seconds."""
    found = []
    with h5py.File(path, "r") as f:
        seconds = f["tasks"]["seconds"][()]
        for number, (run, fold) in enumerate(zip(f["tasks"]["run"][()], f["tasks"]["fold"][()])):
            group = f["runs"][f"run-{int(run):03d}"][f"fold-{int(fold):02d}"]
            found.append({"run": int(run), "fold": int(fold),
                          "key": tuple(int(k) for k in group.attrs["spawn_key"]),
                          "train": group["train_index"][()], "test": group["test_index"][()],
                          "genes": group["selected_genes"][()],
                          "pruned": group["refined_genes"][()],
                          "seconds": float(seconds[number])})
    return found


def tested(X, y, task, genes):
    """``genes`` (chosen on the task's training samples) scored on its test samples by 1-NN:
    the record :func:`rule_figures` reads (``run``, ``correct``, ``total``, ``genes``)."""
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[genes] = True
    score = score_split(X[task["train"]], y[task["train"]], X[task["test"]], y[task["test"]],
                        mask, 1)
    return {"run": task["run"], "correct": score.correct, "total": score.total,
            "genes": np.asarray(genes)}


def rule_figures(records, base, n_genes, name, compare=True):
    """One rule's figures on one set: test accuracy % per run (folds pooled), the one-sided
    rank-sum p of its fold accuracies against ``base`` (1 without ``compare``), the sizes,
    :func:`~hpcswarm.signatures.stability.stability_summary`, Kuncheva's index between folds and
    whether the bar is met.

    ``records``: per task, ``run``, ``correct``, ``total`` and ``genes``.
    """
    runs = np.array([r["run"] for r in records])
    per_run = [100 * sum(r["correct"] for r in records if r["run"] == run)
               / sum(r["total"] for r in records if r["run"] == run)
               for run in np.unique(runs)]
    folds = np.array([r["correct"] / r["total"] for r in records])
    below = mannwhitneyu(folds, base, alternative="less").pvalue if compare else 1.0
    sizes = np.array([r["genes"].size for r in records])
    summary = stability_summary([r["genes"] for r in records], runs, n_genes)
    kuncheva = summary["folds"]["kuncheva"]
    meets = below >= 0.05 and sizes.mean() <= 30 and kuncheva >= 0.3
    if name in PAPER_BAR:  # and the paper's own figures
        accuracy, genes = PAPER_BAR[name]
        meets = meets and np.mean(per_run) >= accuracy and sizes.mean() <= genes
    return {"per_run": per_run, "below": below, "sizes": sizes, "summary": summary,
            "kuncheva": kuncheva, "meets": meets}
