"""The stored reference searches and jobs, and how each is turned into a comparable document.

Every method (the five papers' swarms and the baselines) runs one small search on SRBCT and on
a synthetic planted-signal matrix; three small jobs cover the biased, unbiased and holdout
protocols. A document holds everything a result says except wall-clock seconds, group numbers
and creation times, which legitimately differ between runs. ``tests/reference/*.json`` hold the
documents of the code these results must never drift from (``make_references.py`` there).
"""

import json
import os
import subprocess
import sys

import numpy as np

from synthetic import SMALL, small_data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SRBCT_SETTINGS = {
    "pso": {"n_particles": 10, "n_iterations": 5},
    "bpso": {"n_particles": 10, "n_iterations": 5},
    "pso-rg": {"n_particles": 10, "n_iterations": 5},
    "pso-ls": {"n_particles": 8, "n_iterations": 4, "ls_tries": 30},
    "pso-lsrg": {"n_particles": 12, "n_iterations": 8, "ls_tries": 40},
    "cbpso": {"n_particles": 10, "n_iterations": 5},
    "cso": {"n_particles": 10, "n_iterations": 6},
    "fsipso": {"n_particles": 8, "n_iterations": 6, "n_subspaces": 3},
    "sfr": {"max_size": 8},
    "fsr": {"n_particles": 6, "n_iterations": 3, "max_size": 3},
    "vlpso": {"n_particles": 12, "n_iterations": 6, "n_divisions": 3, "change_after": 2},
    "all-genes": {},
    "sfs": {"max_steps": 4},
    "sbs": {"max_steps": 3},
    "gsbs": {"max_steps": 3},
    "lfs": {"max_steps": 4},
}
"""Small settings per method on SRBCT (83 x 2308): enough rounds for local search, resets,
CSO's pairings and FSIPSO's sub-spaces to act, a few seconds in all."""

SYNTHETIC_SETTINGS = {**SMALL, "all-genes": {}, "sfs": {}, "sbs": {"max_steps": 10},
                      "gsbs": {"max_steps": 10}, "lfs": {}}

SWARM_METHODS = ("pso", "bpso", "pso-rg", "pso-ls", "pso-lsrg", "cbpso", "cso", "fsipso",
                 "fsr", "vlpso")
"""The swarm methods, each searched again with the balanced-accuracy objective (per-class
counts on every evaluation path)."""

LONG_SETTINGS = {
    "vlpso": {"n_particles": 20, "n_iterations": 16, "n_divisions": 4, "change_after": 5},
    "pso": {"n_particles": 12, "n_iterations": 12},
    "bpso": {"n_particles": 12, "n_iterations": 12},
    "cbpso": {"n_particles": 12, "n_iterations": 12},
}
"""Longer SRBCT searches, where particles settle and most moves flip a few genes: what an
evaluation from a particle's previous subset must score exactly as a full one."""


def _cases():
    cases = {}
    for method, params in SRBCT_SETTINGS.items():
        cases[f"srbct-{method}"] = {"data": "srbct", "algorithm": method, "params": params,
                                    "seed": 7}
    for method, params in SYNTHETIC_SETTINGS.items():
        cases[f"synthetic-{method}"] = {"data": "synthetic", "algorithm": method,
                                        "params": params, "seed": 3}
    for method in SWARM_METHODS:
        balanced = {**SRBCT_SETTINGS[method], "objective": "balanced-accuracy"}
        cases[f"srbct-balanced-{method}"] = {"data": "srbct", "algorithm": method,
                                             "params": balanced, "seed": 5}
    for method, params in LONG_SETTINGS.items():
        cases[f"srbct-long-{method}"] = {"data": "srbct", "algorithm": method,
                                         "params": params, "seed": 9}
    return cases


SEARCH_CASES = _cases()

REPRESENTATIVE_CASES = ("srbct-balanced-vlpso", "srbct-long-vlpso", "srbct-balanced-cso")
"""The balanced-objective and longer cases ``make test`` runs (the others are slow)."""

JOB_CASES = {
    "pso-lsrg-unbiased": ["data=builtin:srbct", "algorithm=pso-lsrg", "protocol=unbiased",
                          "folds=3", "runs=2", "seed=11", "n_particles=6", "n_iterations=4",
                          "ls_tries=10"],
    "cso-holdout": ["data=sklearn:wine", "algorithm=cso", "protocol=holdout", "runs=2",
                    "seed=5", "n_particles=8", "n_iterations=5"],
    "cbpso-biased": ["data=sklearn:breast_cancer", "algorithm=cbpso", "protocol=biased",
                     "runs=2", "seed=2", "n_particles=8", "n_iterations=5"],
}
"""``--set`` overrides of small jobs, one per protocol (``run`` with no job file)."""


def _data(name):
    if name == "synthetic":
        return small_data(seed=1, n_samples=36, n_genes=60)
    from hpcswarm.data import load_dataset

    dataset = load_dataset("builtin:srbct")
    return np.asarray(dataset.X), np.asarray(dataset.y)


def _plain(value):
    return json.loads(json.dumps(value, allow_nan=True, default=_default))


def _default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(type(value))


def search_document(case):
    """Everything one search returns but its seconds and communicated bytes."""
    from hpcswarm.selection.search import run_search

    X, y = _data(case["data"])
    result = run_search(X, y, case["algorithm"], dict(case["params"]), seed=case["seed"])
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    extra = {k: v for k, v in result.extra.items() if k != "comm"}
    return _plain({"genes": result.genes, "fitness": result.fitness, "params": result.params,
                   "history": history, "extra": extra})


def job_document(sets, folder):
    """Everything a job's results file holds but timings, group numbers and creation time."""
    from hpcswarm.results.files import read_results

    job = os.path.join(folder, "job.toml")
    fields = dict(item.split("=", 1) for item in sets[:2])
    with open(job, "w") as out:
        out.write(f'data = "{fields["data"]}"\nalgorithm = "{fields["algorithm"]}"\n'
                  'output = "job.h5"\nname = "reference"\n')
    output = os.path.join(folder, "job.h5")
    command = [sys.executable, "-m", "hpcswarm", "run", job, "--quiet"]
    for item in sets[2:]:
        command += ["--set", item]
    subprocess.run(command, check=True, cwd=folder, env={**os.environ, "PYTHONPATH": ROOT})
    results = read_results(output)
    table = {k: v for k, v in results.table.items() if k not in ("seconds", "group")}
    seconds = results.history_columns.index("seconds")
    histories = [np.delete(h, seconds, axis=1) for h in results.histories]
    return _plain({"table": table, "genes": results.genes, "histories": histories,
                   "params": results.attrs["params"]})
