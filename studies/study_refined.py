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
size over the tasks, p above and p below with the pairs that differ, and the refined row's
verdict (``above``, ``below`` or ``level``). :func:`choose` applies the fourth saturation rule's
choice ("Where the inner accuracy saturates, a fourth rule: the candidate against today's"):
the candidate goes on where it is below on no set and above on at least one.

Input, per set ``NAME``: ``WORK/PREFIX-NAME.h5`` (``--prefix``, default ``sx``). Run from the
repository root: ``python -m studies.study_refined WORK NAME [NAME ...] [--prefix PREFIX]``;
``--json FILE`` also writes every figure.
"""

import numpy as np

from studies.design_sets import panel_arguments, print_header, print_row, write_figures
from studies.study_peers import one_sided, tasks_of

ALPHA = 0.05


def compare(path, alpha=ALPHA):
    """The search's and the refined rows of one results file, and the test between them.

    Returns
    -------
    dict
        ``changed`` (tasks whose refined genes differ from the search's), ``tasks``,
        ``search`` and ``refined`` (each ``accuracy`` in % and ``size``, means over the
        tasks), the test (``p_above``, ``p_below``, ``n``, ``smallest_p`` of
        :func:`~studies.study_peers.one_sided`) and ``verdict``.
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
            "search": {"accuracy": 100 * second.mean(),
                       "size": float(np.mean([task["genes"].size for task in search]))},
            "refined": {"accuracy": 100 * first.mean(),
                        "size": float(np.mean([task["genes"].size for task in refined]))},
            **test, "verdict": verdict}


def choose(table):
    """The fourth saturation rule's choice: whether the candidate goes on to the panel
    (below on no set, above on at least one)."""
    verdicts = [entry["verdict"] for entry in table.values()]
    return "below" not in verdicts and "above" in verdicts


def main(argv=None):
    parser = panel_arguments(__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="sx")
    args = parser.parse_args(argv)
    table = {name: compare(args.work / f"{args.prefix}-{name}.h5") for name in args.names}
    print_header(["set", "tasks changed", "search: test acc. %, genes",
                  "refined: test acc. %, genes", "p above / below (pairs differing)", "verdict"])
    for name, entry in table.items():
        search, refined = entry["search"], entry["refined"]
        print_row([name, f"{entry['changed']} of {entry['tasks']}",
                   f"{search['accuracy']:.2f}, {search['size']:.1f}",
                   f"{refined['accuracy']:.2f}, {refined['size']:.1f}",
                   f"{entry['p_above']:.3g} / {entry['p_below']:.3g} ({entry['n']})",
                   entry["verdict"]])
    chosen = choose(table)
    print(f"\nthe candidate {'goes on to the panel' if chosen else 'is out'}")
    write_figures(args.json, {"table": table, "goes_on": chosen})


if __name__ == "__main__":
    main()
