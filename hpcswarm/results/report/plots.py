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

Reads the fields of a report (:mod:`hpcswarm.results.report.model`) and plain arrays; imports no
engine.
"""

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hpcswarm.results.report.model import FrontEntry, GeneEntry, Report

from hpcswarm.store.atomic import all_or_nothing, atomic_path
from hpcswarm.store.outputs import check_outputs, created_folders


def plot_files(report: "Report", folder: Union[str, Path]) -> list:
    """The PNG files :func:`write_plots` writes in ``folder``, in order."""
    folder = Path(folder)
    files = [folder / "convergence.png"]
    for i, entry in enumerate(report.genes):
        name = _entry_png(i, entry)
        files.append(folder / f"genes-{name}")
        if entry.ranked:
            files.append(folder / f"stability-{name}")
    files += [folder / f"front-{_entry_png(i, e)}" for i, e in enumerate(report.fronts)]
    return files


def _entry_png(position, entry):
    """``N-DATASET-METHOD.png``: the file name of the plots of a report entry."""
    return f"{position + 1}-{_safe(entry.dataset)}-{_safe(entry.method)}.png"


def write_plots(report: "Report", folder: Union[str, Path],
                overwrite: bool = False) -> Optional[list]:
    """PNG pictures of the report, each titled with its dataset and method; returns the files.

    ``convergence.png`` (:func:`convergence_figure`); per method ``genes-N-DATASET-METHOD.png``
    (:func:`genes_figure`), and where the results hold them ``front-N-...png``
    (:func:`front_figure`) and ``stability-N-...png`` (:func:`stability_figure`). Needs
    matplotlib (the optional ``plot`` extra); returns None without it. ``folder`` is created
    if missing; an existing file is replaced only with ``overwrite`` (all are checked before
    any is written); a write that fails leaves none of them
    (:func:`hpcswarm.store.atomic.all_or_nothing`).
    """
    if not plotting_available():
        return None
    plt = _pyplot()
    folder = Path(folder)
    files = plot_files(report, folder)
    figures = []
    with _free_targets(folder, files, overwrite):
        try:
            figures.append(convergence_figure(report))
            for entry in report.genes:
                figures.append(genes_figure(entry))
                if entry.ranked:
                    figures.append(stability_figure(entry))
            figures += [front_figure(entry) for entry in report.fronts]
            for fig, target in zip(figures, files):
                _save_png(fig, target, overwrite)
        finally:
            for fig in figures:
                plt.close(fig)
    return files


@contextmanager
def _free_targets(folder, files, overwrite):
    """For the block that writes ``files``: ``folder`` created (with its parents) if missing,
    and every file checked (:func:`hpcswarm.store.outputs.check_outputs`: none exists unless
    ``overwrite``) before any is written. The files appear together when the block ends, or
    none of them, and the folders created are removed again
    (:func:`hpcswarm.store.atomic.all_or_nothing`)."""
    with created_folders([("plot", folder)]), all_or_nothing():
        check_outputs([("plot", path) for path in files], overwrite=overwrite)
        yield


def convergence_figure(report: "Report") -> "Figure":
    """Mean best fitness per round of every method (one line each, labelled dataset: method)
    above the mean size of that best subset: a search whose fitness stays at its best (as
    VLPSO's at 1.0 on SRBCT) still shrinks its subset, which only the lower panel shows.
    Rounds are whole numbers, the initial evaluation being round 0."""
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    fig, (ax, sizes) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, layout="constrained",
                                    height_ratios=(3, 2))
    objectives = sorted({str(e.objective) for e in report.convergence})
    for entry in report.convergence:
        label = f"{entry.dataset}: {entry.method}"
        for axes, curve in ((ax, entry.best_fitness), (sizes, entry.best_size)):
            axes.plot(range(len(curve)), curve, marker="." if len(curve) <= 30 else None,
                      label=label)
    sizes.xaxis.set_major_locator(MaxNLocator(integer=True))
    sizes.set_xlabel("round (0: the initial swarm)")
    ax.set_ylabel(f"mean best fitness ({', '.join(objectives)})")
    sizes.set_ylabel("genes of the best subset (mean)")
    ax.set_title("Convergence: best inner-validation fitness per round and its subset's size, "
                 "mean over runs and folds", fontsize=9)
    if report.convergence:
        ax.legend(fontsize=8)
    return fig


def genes_figure(entry: "GeneEntry") -> "Figure":
    """Selection frequency of a method's most often selected genes (a report's genes entry)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    top = entry.top
    ax.barh([g.name for g in top][::-1], [g.frequency for g in top][::-1])
    ax.set_xlabel(f"selection frequency over {entry.tasks} selections (runs x folds)")
    ax.set_xlim(0, 1)
    ax.set_title(f"{entry.dataset}: {entry.method}: the {len(top)} most often "
                 f"selected genes", fontsize=10)
    return fig


def front_figure(entry: "FrontEntry") -> "Figure":
    """Every task's Pareto front against genes: the inner accuracy (training folds) in one
    panel and, unless the results are biased, the same points' test accuracy (held-out
    folds) in a second; in each, the signatures chosen by inner accuracy per size budget
    (their mean) and each task's refined signature. One short legend: what the markers are,
    the same in both panels."""
    plt = _pyplot()
    panels = [("inner", "inner accuracy (training folds)")]
    if not entry.biased:
        panels.append(("test", "test accuracy (held-out fold, never used to choose)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 + 3.5 * len(panels), 4.8),
                             sharey=True, squeeze=False, layout="constrained")
    tasks, budgets = entry.tasks, entry.budgets
    refined = [t.refined for t in tasks if t.refined is not None]
    sizes = [p.size for t in tasks for p in t.points] + [r.size for r in refined]
    wide = max(sizes) > 20 * min(sizes)
    rule = entry.refine or "refined"
    for ax, (key, title) in zip(axes[0], panels):
        ax.scatter([p.size for t in tasks for p in t.points],
                   [100 * getattr(p, key) for t in tasks for p in t.points], s=14, marker="o",
                   alpha=0.5, color="tab:blue", label="front points of the tasks")
        chosen = [b for b in budgets if b.size is not None and getattr(b, key) is not None]
        if chosen:
            ax.plot([b.size for b in chosen], [getattr(b, key) for b in chosen], "-o", color="navy",
                    label="best inner accuracy per size budget (mean)")
        if refined:
            ax.scatter([r.size for r in refined], [100 * getattr(r, key) for r in refined], s=46,
                       marker="D", facecolors="none", edgecolors="green", linewidths=1.3,
                       label=f"{rule} signature of each task")
        if wide:
            ax.set_xscale("log")
        ax.set_xlabel("genes in the subset" + (" (log scale)" if wide else ""))
        ax.set_title(title, fontsize=9)
    axes[0][0].set_ylabel("accuracy (%)")
    axes[0][0].legend(fontsize=7, loc="best")
    fig.suptitle(f"{entry.dataset}: {entry.method}: Pareto fronts of {len(tasks)} "
                 f"searches", fontsize=10)
    return fig


def stability_figure(entry: "GeneEntry") -> "Figure":
    """Which of the most often selected genes each task selected: one column per task,
    labelled with its fold, the runs named above their folds (a report's genes entry)."""
    plt = _pyplot()
    top = entry.ranked[:len(entry.top_tasks)]
    tasks = entry.tasks
    fig, ax = plt.subplots(figsize=(max(8.0, 2.0 + 0.16 * tasks), 1.6 + 0.28 * len(top)),
                           layout="constrained")
    chosen = np.zeros((len(top), tasks))
    for row, selected_in in enumerate(entry.top_tasks):
        chosen[row, selected_in] = 1.0
    ax.imshow(chosen, aspect="auto", cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
    ax.set_yticks(range(len(top)))
    ax.set_yticklabels([f"{g.name} ({100 * g.frequency:.0f}%)" for g in top],
                       fontsize=7)
    runs = np.asarray(entry.task_runs)
    starts = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1]])
    ends = np.r_[starts[1:], runs.size]
    for start in starts[1:]:
        ax.axvline(start - 0.5, color="tab:red", linewidth=0.8)
    ax.set_xticks(range(tasks))
    ax.set_xticklabels([str(fold) for fold in entry.task_folds], fontsize=6)
    ax.set_xlabel("fold (black: gene selected in that fold's search); y labels: gene "
                  "(selection frequency)", fontsize=8)
    above = ax.secondary_xaxis("top")
    above.set_xticks((starts + ends - 1) / 2)
    above.set_xticklabels([f"run {runs[s]}" for s in starts], fontsize=7,
                          rotation=90 if starts.size > 12 else 0)
    above.tick_params(length=0)
    stable = entry.stability
    ax.set_title(f"{entry.dataset}: {entry.method}: selection of the top {len(top)} genes; "
                 f"Kuncheva {_index_label(stable['kuncheva'])}, Jaccard "
                 f"{_index_label(stable['jaccard'])}", fontsize=9)
    return fig


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


# ------------------------------------------------------------ a signature on its data
STRIP_GENES = 16
"""Most genes drawn one panel each by :func:`expression_strips` (the most separating first)."""

LABELLED_ROWS = 80
"""Most genes whose names the heatmap writes beside its rows."""


def _pyplot():
    """matplotlib's pyplot on the Agg backend; ImportError naming the extra without it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'hpcswarm[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def class_groups(y: ArrayLike, class_names: Optional[Sequence[str]] = None) -> tuple:
    """Class of every sample as ``(codes, names)``: codes index names, in sorted label order.

    ``class_names`` names integer codes ``0..C-1`` (a dataset's ``class_names``); without
    it, the distinct labels themselves are the names.
    """
    labels, codes = np.unique(np.asarray(y), return_inverse=True)
    if class_names is not None:
        names = [str(class_names[int(label)]) for label in labels]
    else:
        names = [str(label) for label in labels]
    return codes, names


def separation(values: ArrayLike, codes: np.ndarray) -> np.ndarray:
    """One-way ANOVA F statistic of each column of ``values`` across the classes ``codes``.

    ``values`` : ndarray of shape (n_samples, n_genes); a constant gene scores 0. Orders the
    genes of the expression plots only (most separating first); never selects them.
    """
    values = np.asarray(values, dtype=np.float64)
    n_classes = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    means = np.stack([values[codes == c].mean(axis=0) for c in range(n_classes)])
    grand = values.mean(axis=0)
    between = (counts[:, None] * (means - grand) ** 2).sum(axis=0) / max(n_classes - 1, 1)
    within = ((values - means[codes]) ** 2).sum(axis=0) / max(values.shape[0] - n_classes, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(within > 0, between / within, np.where(between > 0, np.inf, 0.0))
    return f


def _signature_matrix(X, y, gene_names, genes, class_names):
    """Rows of the signature's genes: values, names, class codes and names, row order."""
    genes = np.asarray(genes, dtype=np.int64)
    if genes.size == 0:
        raise ValueError("the signature has no genes to plot")
    values = np.asarray(X)[:, genes].astype(np.float64)
    codes, names = class_groups(y, class_names)
    scale = values.std(axis=0)
    z = np.where(scale > 0, (values - values.mean(axis=0)) / np.where(scale > 0, scale, 1), 0.0)
    f = separation(values, codes)
    means = np.stack([z[codes == c].mean(axis=0) for c in range(len(names))])
    highest = means.argmax(axis=0)
    order = np.lexsort((-f, highest))  # genes grouped by the class where they are highest
    labels = [str(gene_names[g]) if gene_names is not None else f"gene {g}" for g in genes]
    return values, z, codes, names, f, order, labels


def _class_colours(plt, n):
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def expression_heatmap(X: ArrayLike, y: ArrayLike, gene_names: Optional[Sequence[str]],
                       genes: Sequence[int],
                       class_names: Optional[Sequence[str]] = None, title: str = "") -> "Figure":
    """The signature's expression by class: z-scored values, samples grouped by class.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_genes)
        Expression values (the matrix the genes were selected on).
    y : array-like of shape (n_samples,)
        Class of each sample: labels, or integer codes named by ``class_names``.
    gene_names : sequence of str or None
        Names of all ``n_genes`` genes (None: ``gene <index>``).
    genes : sequence of int
        Column indices of the signature.
    class_names : sequence of str, optional
        Names of the integer codes of ``y``.
    title : str
        Prefix of the title (e.g. the dataset).

    Returns
    -------
    matplotlib.figure.Figure
        Rows: genes, grouped by the class in which their mean z-score is highest, the most
        separating (ANOVA F) first within a group; columns: samples, grouped by class, with a
        coloured band and the class name and count above each group. Each gene is z-scored
        over all samples (mean 0, standard deviation 1; colours clipped at +/-3).
    """
    plt = _pyplot()
    _, z, codes, names, _, order, labels = _signature_matrix(X, y, gene_names, genes,
                                                             class_names)
    samples = np.argsort(codes, kind="stable")
    grouped = codes[samples]
    n_genes, n_samples = len(order), samples.size
    labelled = n_genes <= LABELLED_ROWS
    height = 1.6 + (0.17 * n_genes if labelled else 5.0)
    fig, (band, ax) = plt.subplots(2, 1, figsize=(max(7.0, 3.0 + 0.05 * n_samples), height),
                                   sharex=True, layout="constrained", gridspec_kw={
                                       "height_ratios": [0.35, max(n_genes * 0.17, 3.0)]})
    starts = _class_band(band, grouped, names, _class_colours(plt, len(names)))
    image = ax.imshow(z[samples][:, order].T, aspect="auto", cmap="RdBu_r", vmin=-3, vmax=3,
                      interpolation="nearest")
    for start in starts[1:]:
        ax.axvline(start - 0.5, color="black", linewidth=1.2)
    if labelled:
        ax.set_yticks(range(n_genes))
        ax.set_yticklabels([labels[i] for i in order], fontsize=7 if n_genes > 30 else 8)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{n_genes} genes (names in the table)")
    ax.set_xticks([])
    ax.set_xlabel(f"{n_samples} samples, grouped by class")
    colourbar = fig.colorbar(image, ax=[band, ax], fraction=0.03, pad=0.02)
    colourbar.set_label("expression z-score per gene")
    heading = f"{title}: " if title else ""
    fig.suptitle(f"{heading}expression of the {n_genes}-gene signature by class", fontsize=11)
    return fig


def _class_band(band, grouped, names, colours):
    """Draw the coloured band of the samples' classes (``grouped``: their codes, grouped)
    with each group's name and count above it; returns where each group starts."""
    band.imshow(np.array([[colours[c] for c in grouped]]), aspect="auto",
                interpolation="nearest")
    band.set_yticks([])
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    ends = np.r_[starts[1:], grouped.size]
    for start, end in zip(starts, ends):
        band.text((start + end - 1) / 2, -0.6, f"{names[grouped[start]]} (n={end - start})",
                  ha="center", va="bottom", fontsize=9, fontweight="bold")
    for spine in band.spines.values():
        spine.set_visible(False)
    return starts


def expression_strips(X: ArrayLike, y: ArrayLike, gene_names: Optional[Sequence[str]],
                      genes: Sequence[int],
                      class_names: Optional[Sequence[str]] = None, title: str = "") -> "Figure":
    """One panel per gene: its values in each class, as points over a box plot.

    Parameters are those of :func:`expression_heatmap`. The genes are the most separating
    first (one-way ANOVA F across the classes), at most :data:`STRIP_GENES` of them; the
    values are those of ``X`` (not z-scored), so that a gene's level can be read off its
    axis. Points are jittered sideways only.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _pyplot()
    values, _, codes, names, f, _, labels = _signature_matrix(X, y, gene_names, genes,
                                                              class_names)
    shown = np.argsort(-f, kind="stable")[:STRIP_GENES]
    columns = min(4, shown.size)
    rows = -(-shown.size // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.1 * columns, 2.5 * rows + 0.7),
                             squeeze=False, layout="constrained")
    colours = _class_colours(plt, len(names))
    jitter = np.random.default_rng(0).uniform(-0.22, 0.22, size=codes.size)  # layout only
    for panel, gene in zip(axes.flat, shown):
        per_class = [values[codes == c, gene] for c in range(len(names))]
        boxes = panel.boxplot(per_class, positions=range(len(names)), widths=0.55,
                              showfliers=False, patch_artist=True)
        for patch, colour in zip(boxes["boxes"], colours):
            patch.set_facecolor((*colour[:3], 0.18))
            patch.set_edgecolor(colour)
        for median in boxes["medians"]:
            median.set_color("black")
        panel.scatter(codes + jitter, values[:, gene], s=14, zorder=3,
                      color=[colours[c] for c in codes], alpha=0.75, linewidths=0)
        panel.set_xticks(range(len(names)))
        panel.set_xticklabels(names, fontsize=8, rotation=30 if len(names) > 4 else 0)
        panel.set_title(f"{labels[gene]} (F = {f[gene]:.3g})", fontsize=9)
        panel.tick_params(axis="y", labelsize=7)
    for row in axes:
        row[0].set_ylabel("expression", fontsize=8)
    for panel in list(axes.flat)[shown.size:]:
        panel.set_visible(False)
    heading = f"{title}: " if title else ""
    more = (f" ({shown.size} most separating of {len(labels)})" if shown.size < len(labels)
            else "")
    fig.suptitle(f"{heading}signature genes by class{more}: values per sample, box = "
                 f"quartiles, whiskers 1.5 IQR", fontsize=10)
    return fig


def write_expression_plots(X: ArrayLike, y: ArrayLike, gene_names: Optional[Sequence[str]],
                           genes: Sequence[int], folder: Union[str, Path],
                           class_names: Optional[Sequence[str]] = None,
                           title: str = "", prefix: str = "signature",
                           overwrite: bool = False) -> list:
    """Write :func:`expression_heatmap` and :func:`expression_strips` as PNG files.

    Returns the paths: ``FOLDER/PREFIX-heatmap.png`` and ``FOLDER/PREFIX-by-class.png``.
    ``folder`` is created if missing; an existing file is replaced only with ``overwrite``
    (both are checked before either is written); a write that fails leaves neither.
    """
    plt = _pyplot()
    written = expression_plot_files(folder, prefix)
    with _free_targets(folder, written, overwrite):
        for target, draw in zip(written, (expression_heatmap, expression_strips)):
            fig = draw(X, y, gene_names, genes, class_names, title)
            try:
                _save_png(fig, target, overwrite)
            finally:
                plt.close(fig)
    return written


def expression_plot_files(folder: Union[str, Path], prefix: str = "signature") -> list:
    """The PNG files :func:`write_expression_plots` writes in ``folder``, in order."""
    return [Path(folder) / f"{prefix}-heatmap.png", Path(folder) / f"{prefix}-by-class.png"]
