"""A refinement against the search it refines: the choice of a rule that reads no peer.

A job with ``refine`` writes, per task, the search's own subset and the refined one, tested
on the same held-out rows (``selected_genes`` and ``refined_genes`` of the results file). Where
the search is today's default (``jobs/vlpso-experiment.toml``), the search row *is* today's
default, the same bits, and the refined row is a candidate that reads it. This study puts the
two side by side, set by set, with the test a rule of ``docs/signatures.md`` reads: the
report's per-fold paired one-sided Wilcoxon signed-rank test
(:func:`hpcswarm.results.significance.signed_rank_test`) of the refined row's test accuracies
against the search's over the matched (run, fold) tasks, in both directions, alpha
:data:`ALPHA`.

Per set: the tasks whose genes the refinement changed, each row's mean test accuracy and mean
size over the tasks, its balanced accuracy as the peers study gives it (:func:`balanced`: the
folds of a run pooled), p above and p below with the pairs that differ, and the refined row's
verdict (``above``, ``below`` or ``level``). :func:`choose` applies the fourth saturation rule's
choice ("Where the inner accuracy saturates, a fourth rule: the candidate against today's"):
the candidate goes on where it is below on no set and above on at least one.

Over the sets, :func:`over_sets` takes each set's difference of the mean test accuracies (refined
minus search) as one observation, sets drawn from different seeds being independent where the
tasks of one set are not, and tests them with the same signed-rank test (sets with no
difference dropped). :func:`choose_over_sets` applies the fifth rule's choice ("a fifth rule:
the sets as the unit"): below on no set, and the differences above zero over the sets at
:data:`ALPHA_OVER_SETS`.

Input, per set ``NAME``: ``WORK/PREFIX-NAME.h5`` (``--prefix``, default ``sx``). Run from the
repository root: ``python -m studies.study_refined WORK NAME [NAME ...] [--prefix PREFIX]
[--over-sets]`` (``--over-sets``: the fifth rule's choice in place of the fourth's);
``--json FILE`` also writes every figure.
"""

import h5py
import numpy as np

from hpcswarm.results.significance import signed_rank_test
from hpcswarm.store.records import balanced_accuracy
from studies.design_sets import panel_arguments, print_header, print_row, write_figures
from studies.study_peers import one_sided, tasks_of

ALPHA = 0.05

ALPHA_OVER_SETS = 0.05 / 3
"""The fifth rule's alpha over the sets: the third judgement of one candidate, held to
Bonferroni's share of three."""


def balanced(path, refined=False):
    """The mean over the runs of the balanced test accuracy (%) of the search's subsets (or,
    with ``refined``, the refined ones), each run's folds pooled class by class: the figure of
    the peers study's rows (:func:`studies.study_peers.figures`)."""
    prefix = "refined_test" if refined else "test"
    per_run = []
    with h5py.File(path, "r") as results:
        for run in results["runs"].values():
            correct = sum(fold[f"{prefix}_class_correct"][()] for fold in run.values())
            total = sum(fold[f"{prefix}_class_total"][()] for fold in run.values())
            per_run.append(balanced_accuracy(correct, total))
    return 100 * float(np.mean(per_run))


def compare(path, alpha=ALPHA):
    """The search's and the refined rows of one results file, and the test between them.

    Returns
    -------
    dict
        ``changed`` (tasks whose refined genes differ from the search's), ``tasks``,
        ``search`` and ``refined`` (each ``accuracy`` in % and ``size``, means over the
        tasks, and ``balanced`` of :func:`balanced`), ``difference`` (the mean over the tasks
        of refined minus search accuracy, a fraction), the test (``p_above``, ``p_below``,
        ``n``, ``smallest_p`` of :func:`~studies.study_peers.one_sided`) and ``verdict``.
    """
    search, _ = tasks_of(path)
    refined, _ = tasks_of(path, refined=True)
    first = np.array([task["accuracy"] for task in refined])
    second = np.array([task["accuracy"] for task in search])
    test = one_sided(first, second)
    verdict = ("above" if test["p_above"] < alpha else
               "below" if test["p_below"] < alpha else "level")
    return {"changed": sum(not np.array_equal(a["genes"], b["genes"])
                           for a, b in zip(search, refined)),
            "tasks": len(search),
            "search": {"accuracy": 100 * second.mean(), "balanced": balanced(path),
                       "size": float(np.mean([task["genes"].size for task in search]))},
            "refined": {"accuracy": 100 * first.mean(), "balanced": balanced(path, True),
                        "size": float(np.mean([task["genes"].size for task in refined]))},
            "difference": float(np.mean(first - second)), **test, "verdict": verdict}


def choose(table):
    """The fourth saturation rule's choice: whether the candidate goes on to the panel
    (below on no set, above on at least one)."""
    verdicts = [entry["verdict"] for entry in table.values()]
    return "below" not in verdicts and "above" in verdicts


def over_sets(table):
    """The sets' differences (``difference`` of :func:`compare`) tested above zero over the sets.

    Returns
    -------
    dict
        ``sets``, ``differing`` (sets whose difference is not zero), ``up`` and ``down``, and
        ``p_above``: the one-sided signed-rank p-value of the differences against zero
        (exact, mid-ranks where tied; 1.0 when no set differs).
    """
    differences = np.array([entry["difference"] for entry in table.values()])
    test = signed_rank_test(differences, np.zeros_like(differences), "greater")
    return {"sets": differences.size, "differing": test.nonzero,
            "up": int(np.count_nonzero(differences > 0)),
            "down": int(np.count_nonzero(differences < 0)), "p_above": test.p_value}


def choose_over_sets(table, alpha=ALPHA_OVER_SETS):
    """The fifth saturation rule's choice: whether the candidate goes on to the panel (below on
    no set, and above zero over the sets at ``alpha``)."""
    verdicts = [entry["verdict"] for entry in table.values()]
    return "below" not in verdicts and over_sets(table)["p_above"] < alpha


def main(argv=None):
    parser = panel_arguments(__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="sx")
    parser.add_argument("--over-sets", action="store_true",
                        help="the fifth rule's choice (the sets as the unit) in place of the "
                             "fourth's")
    args = parser.parse_args(argv)
    table = {name: compare(args.work / f"{args.prefix}-{name}.h5") for name in args.names}
    print_header(["set", "tasks changed", "search: test acc. %, genes",
                  "refined: test acc. %, genes", "difference (points)",
                  "balanced acc. %: search, refined",
                  "p above / below (pairs differing)", "verdict"])
    for name, entry in table.items():
        search, refined = entry["search"], entry["refined"]
        print_row([name, f"{entry['changed']} of {entry['tasks']}",
                   f"{search['accuracy']:.2f}, {search['size']:.1f}",
                   f"{refined['accuracy']:.2f}, {refined['size']:.1f}",
                   f"{100 * entry['difference']:+.2f}",
                   f"{search['balanced']:.2f}, {refined['balanced']:.2f}",
                   f"{entry['p_above']:.3g} / {entry['p_below']:.3g} ({entry['n']})",
                   entry["verdict"]])
    figures = {"table": table}
    if args.over_sets:
        sets = figures["over_sets"] = over_sets(table)
        print(f"\nover the sets: {sets['differing']} of {sets['sets']} differ, {sets['up']} up, "
              f"{sets['down']} down, p above {sets['p_above']:.4g} (alpha "
              f"{ALPHA_OVER_SETS:.4f})")
    chosen = choose_over_sets(table) if args.over_sets else choose(table)
    print(f"\nthe candidate {'goes on to the panel' if chosen else 'is out'}")
    write_figures(args.json, {**figures, "goes_on": chosen})


if __name__ == "__main__":
    main()
