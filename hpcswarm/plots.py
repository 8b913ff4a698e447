"""Pictures of results and of a signature's data, as PNG files (matplotlib, the optional
``plot`` extra, imported only when a plot is drawn).

- Of a report (:func:`write_plots`, ``hpcswarm report --plots``): convergence (Tran et al.
  Fig. 3), selection frequencies of the top genes (Table 6), the selection stability across
  folds and runs (Kuncheva 2007), and every task's Pareto front of inner accuracy against
  genes, with the refined signatures (``+prune``...) marked on it.
- Of a signature on its data (:func:`expression_heatmap`, :func:`expression_strips`,
  :func:`write_expression_plots`; ``hpcswarm evaluate --genes FILE --plot DIR`` and
  ``hpcswarm.select(...).plot_expression()``): the expression of the selected genes by class,
  as a heatmap of z-scored values with the samples grouped by class, and one strip and box
  plot of the raw values per gene.

Reads plain data (report dictionaries, arrays); imports no engine.
"""

from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from hpcswarm.atomic import atomic_path


def plot_files(report, folder):
    """The PNG files :func:`write_plots` writes in ``folder``, in order."""
    folder = Path(folder)
    files = [folder / "convergence.png"]
    for i, entry in enumerate(report["genes"]):
        name = f"{i + 1}-{_safe(entry['dataset'])}-{_safe(entry['method'])}.png"
        files.append(folder / f"genes-{name}")
        if entry["ranked"]:
            files.append(folder / f"stability-{name}")
    files += [folder / f"front-{i + 1}-{_safe(e['dataset'])}-{_safe(e['method'])}.png"
              for i, e in enumerate(report.get("fronts", []))]
    return files


def write_plots(report, folder, overwrite=False):
    """PNG pictures of the report, each titled with its dataset and method; returns the files.

    ``convergence.png`` (one line per method, labelled dataset: method); per method
    ``genes-N-DATASET-METHOD.png`` (selection frequency of the top genes), and where the
    results hold them ``front-N-...png`` (every task's Pareto front: inner accuracy against
    genes, the test accuracy of each point as a second marker, and the signatures chosen
    by inner accuracy per size budget) and ``stability-N-...png`` (which of the top genes
    each task selected, with Kuncheva's and Jaccard's indices). Needs matplotlib (the
    optional ``plot`` extra); returns None without it. An existing file is replaced only
    with ``overwrite``.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    folder = Path(folder)
    written = []

    def save(fig, name):
        fig.tight_layout()
        target = folder / name
        _save_png(fig, target, overwrite)
        plt.close(fig)
        written.append(target)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    objectives = sorted({str(e["objective"]) for e in report["convergence"]})
    for entry in report["convergence"]:
        ax.plot(entry["best_fitness"], label=f"{entry['dataset']}: {entry['method']}")
    ax.set_xlabel("round (swarm evaluation)")
    ax.set_ylabel(f"mean best fitness ({', '.join(objectives)})")
    ax.set_title("Convergence: best inner-validation fitness per round, mean over runs and "
                 "folds", fontsize=9)
    ax.legend(fontsize=8)
    save(fig, "convergence.png")
    for i, entry in enumerate(report["genes"]):
        name = f"{i + 1}-{_safe(entry['dataset'])}-{_safe(entry['method'])}.png"
        fig, ax = plt.subplots(figsize=(7, 4.5))
        top = entry["top"]
        ax.barh([g["name"] for g in top][::-1], [g["frequency"] for g in top][::-1])
        ax.set_xlabel(f"selection frequency over {entry['tasks']} selections (runs x folds)")
        ax.set_xlim(0, 1)
        ax.set_title(f"{entry['dataset']}: {entry['method']}: the {len(top)} most often "
                     f"selected genes", fontsize=10)
        save(fig, f"genes-{name}")
        if entry["ranked"]:
            _stability_plot(plt, entry, save, f"stability-{name}")
    for i, entry in enumerate(report.get("fronts", [])):
        _front_plot(plt, entry, save,
                    f"front-{i + 1}-{_safe(entry['dataset'])}-{_safe(entry['method'])}.png")
    return written


def _front_plot(plt, entry, save, name):
    """Every task's front (inner accuracy and test accuracy against genes) and the budgets."""
    fig, ax = plt.subplots(figsize=(7, 4.8))
    sizes = [p["size"] for t in entry["tasks"] for p in t["points"]]
    inner = [100 * p["inner"] for t in entry["tasks"] for p in t["points"]]
    ax.scatter(sizes, inner, s=14, marker="o", alpha=0.5, color="tab:blue",
               label="front point: inner accuracy (training folds)")
    if not entry["biased"]:
        test = [100 * p["test"] for t in entry["tasks"] for p in t["points"]]
        ax.scatter(sizes, test, s=16, marker="x", alpha=0.5, color="tab:orange",
                   label="same point: test accuracy (held-out fold)")
    budgets = entry["budgets"]
    if budgets:
        ax.plot([b["size"] for b in budgets], [b["inner"] for b in budgets], "-o",
                color="navy", label="chosen by inner accuracy per budget: mean inner")
        if not entry["biased"]:
            ax.plot([b["size"] for b in budgets], [b["test"] for b in budgets], "-s",
                    color="darkred", label="... and its test accuracy (pooled per run)")
    wide = max(sizes) > 20 * min(sizes)
    if wide:
        ax.set_xscale("log")
    ax.set_xlabel("genes in the subset" + (" (log scale)" if wide else ""))
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"{entry['dataset']}: {entry['method']}: Pareto fronts of "
                 f"{len(entry['tasks'])} searches (inner accuracy vs genes)", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    save(fig, name)


def _stability_plot(plt, entry, save, name):
    """Which of the most often selected genes each task selected (runs x folds)."""
    top = entry["ranked"][:len(entry["top_tasks"])]
    tasks = entry["tasks"]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.28 * len(top)))
    chosen = np.zeros((len(top), tasks))
    for row, selected_in in enumerate(entry["top_tasks"]):
        chosen[row, selected_in] = 1.0
    ax.imshow(chosen, aspect="auto", cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
    ax.set_yticks(range(len(top)))
    ax.set_yticklabels([f"{g['name']} ({100 * g['frequency']:.0f}%)" for g in top],
                       fontsize=7)
    runs = np.asarray(entry["task_runs"])
    starts = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1]])
    ends = np.r_[starts[1:], runs.size]
    for start in starts[1:]:
        ax.axvline(start - 0.5, color="tab:red", linewidth=0.8)
    ax.set_xticks((starts + ends - 1) / 2)
    ax.set_xticklabels([f"run {runs[s]}" for s in starts], fontsize=7,
                       rotation=90 if starts.size > 12 else 0)
    ax.set_xlabel(f"the {tasks} selections, fold by fold within each run (black: gene "
                  f"selected); y labels: gene (selection frequency)", fontsize=8)
    stable = entry["stability"]
    ax.set_title(f"{entry['dataset']}: {entry['method']}: selection of the top {len(top)} genes; "
                 f"Kuncheva {_index_label(stable['kuncheva'])}, Jaccard "
                 f"{_index_label(stable['jaccard'])}", fontsize=9)
    save(fig, name)


def _index_label(value):
    """A stability index in a title: three decimals, ``n/a`` where it is undefined."""
    return "n/a" if value is None else f"{round(value, 3) + 0.0:.3f}"


def _save_png(fig, target, overwrite):
    with atomic_path(target, overwrite=overwrite) as temporary:
        fig.savefig(temporary, dpi=120, format="png")


def _safe(text):
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def plotting_available() -> bool:
    """Whether matplotlib (the optional ``plot`` extra) can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True
