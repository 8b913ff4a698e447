"""The methods a report compares: results files read once, the parts of one experiment
pooled, refined subsets shown as methods of their own, and the paired test of two rows."""

import os
from dataclasses import replace

import numpy as np

from hpcswarm.results.files import MethodResults, TaskTable, task_accuracies
from hpcswarm.results.report.model import FrontPointRow
from hpcswarm.results.significance import compare
from hpcswarm.signatures.refinements import REFINEMENTS, row_label


def matched_accuracies(method, prefix, other, other_prefix):
    """Per-fold accuracies of two rows over the (run, fold) tasks they share that held out
    the same samples.

    Parameters
    ----------
    method, other : MethodResults
    prefix, other_prefix : str
        Which accuracy of each (:func:`hpcswarm.results.files.task_accuracies`): ``"test"``, or
        ``"baseline"`` / ``"pca"`` for the ``All`` and ``PCA-kNN`` rows.

    Returns
    -------
    tuple of ndarray
        ``(x, y)``, one entry per matched task, in ``method``'s task order: the tasks of
        the same (run, fold) that held out and trained on the same samples
        (:func:`same_split`).
    """
    where = {(int(r), int(f)): i for i, (r, f) in enumerate(zip(other.table.run,
                                                                other.table.fold))}
    own, theirs = task_accuracies(method.table, prefix), task_accuracies(other.table, other_prefix)
    x, y = [], []
    for i, (run, fold) in enumerate(zip(method.table.run, method.table.fold)):
        j = where.get((int(run), int(fold)))
        if j is not None and same_split(method, i, other, j):
            x.append(own[i])
            y.append(theirs[j])
    return np.array(x, dtype=float), np.array(y, dtype=float)


def same_split(method, i, other, j):
    """Whether task ``i`` of ``method`` and task ``j`` of ``other`` held out the same samples
    and trained on the same samples (the same outer fold), as far as their files record the
    rows; tasks of files that do not record their held-out rows only within one file."""
    if method.test_indices is None or other.test_indices is None:
        return method.path == other.path
    if not np.array_equal(method.test_indices[i], other.test_indices[j]):
        return False
    if method.train_indices is None or other.train_indices is None:
        return True
    return np.array_equal(method.train_indices[i], other.train_indices[j])


def significance(method, prefix, other, other_prefix, alpha=0.05):
    """The paired test of a row against its reference row
    (:func:`hpcswarm.results.significance.compare` over :func:`matched_accuracies`).

    Returns
    -------
    tuple
        ``(symbol, test)``: ``+``/``-``/``=`` and the
        :class:`~hpcswarm.results.significance.PairedTest`; ``("", None)`` when no task is matched.
    """
    x, y = matched_accuracies(method, prefix, other, other_prefix)
    if x.size == 0:
        return "", None
    return compare(x, y, alpha)


def _same_experiment(a, b):
    """Whether two results files hold parts of one experiment (all but the runs agree)."""
    keys = ("dataset_sha256", "name", "algorithm", "protocol", "params", "seed", "refine")
    job_a, job_b = a.attrs.get("job") or {}, b.attrs.get("job") or {}
    return (all(a.attrs.get(k) == b.attrs.get(k) for k in keys)
            and job_a.get("folds") == job_b.get("folds")
            and not set(a.table.run.tolist()) & set(b.table.run.tolist()))


def pool_parts(methods):
    """Join the files of one experiment split by ``first_run`` into one method, in run order.

    Files with the same dataset, method name, algorithm, parameters, protocol, folds and seed
    whose runs do not overlap are parts of one experiment (the runs of ``first_run``
    .. ``first_run + runs - 1`` are those of a single job with more runs); their tasks are
    concatenated. Files whose runs overlap stay separate methods.
    """
    pooled = []
    for method in methods:
        part_of = next((group for group in pooled if all(_same_experiment(method, other)
                                                         for other in group)), None)
        if part_of is None:
            pooled.append([method])
        else:
            part_of.append(method)
    joined = []
    for group in pooled:
        if len(group) == 1:
            joined.append(group[0])
            continue
        group.sort(key=lambda m: int(m.table.run.min()))
        first = group[0]
        joined.append(MethodResults(
            path=first.path, attrs=dict(first.attrs, pooled_files=[str(m.path) for m in group]),
            gene_names=first.gene_names, class_names=first.class_names,
            table=TaskTable.concatenate([m.table for m in group]),
            genes=[g for m in group for g in m.genes],
            histories=[h for m in group for h in m.histories],
            history_columns=first.history_columns,
            fronts=[f for m in group for f in (m.fronts or [[]] * len(m.genes))],
            refined_genes=(None if any(m.refined_genes is None for m in group)
                           else [g for m in group for g in m.refined_genes]),
            final=first.final,  # the same search in every part: its seed ignores the runs
            test_indices=(None if any(m.test_indices is None for m in group)
                          else [t for m in group for t in m.test_indices]),
            train_indices=(None if any(m.train_indices is None for m in group)
                           else [t for m in group for t in m.train_indices]),
            similarity=_common_similarity(group), single_search=first.single_search))
    return joined


def _common_similarity(group):
    """The gene similarity of the parts of one experiment when every part computed it over the
    same genes (every gene of the dataset, unless it is large), else None."""
    first = group[0].similarity
    if first is None or any(m.similarity is None
                            or not np.array_equal(m.similarity.genes, first.genes)
                            or m.similarity.threshold != first.threshold for m in group):
        return None
    return first


def refined_view(method):
    """The refined subsets of ``method`` as a method of their own (``NAME+prune``), or None.

    Same runs and folds; its accuracy, size and genes are those of the refined subsets.
    """
    table = method.table
    if method.refined_genes is None or table.refined_test_correct is None:
        return None
    refine = method.attrs.get("refine") or "refined"
    table = replace(table, test_correct=table.refined_test_correct,
                    test_total=table.refined_test_total,
                    test_accuracy=table.refined_test_accuracy,
                    test_balanced_accuracy=table.refined_test_balanced_accuracy,
                    train_correct=table.refined_train_correct,
                    train_total=table.refined_train_total, subset_size=table.refined_size)
    return MethodResults(
        path=method.path, attrs=dict(method.attrs, name=row_label(refine, method.label),
                                     refined_from=method.label),
        gene_names=method.gene_names, class_names=method.class_names, table=table,
        genes=list(method.refined_genes), histories=[], history_columns=[], fronts=None,
        test_indices=method.test_indices, train_indices=method.train_indices,
        similarity=method.similarity,
        single_search=method.single_search)


def refined_points(method):
    """Per task, its refined subset as a point of the front plot
    (:class:`~hpcswarm.results.report.model.FrontPointRow`), or None without a refinement."""
    table = method.table
    if table.refined_size is None:
        return [None] * len(method.genes)
    return [FrontPointRow(int(size), int(correct) / int(total),
                          int(test_correct) / int(test_total) if test_total > 0 else None)
            for size, correct, total, test_correct, test_total in zip(
                table.refined_size, table.refined_train_correct, table.refined_train_total,
                table.refined_test_correct, table.refined_test_total)]


def with_refined(methods):
    """``methods`` with each refined view beside its method: a filter's baseline row
    (kind ``rank`` of :data:`hpcswarm.signatures.refinements.REFINEMENTS`) right before it, so that
    it follows ``All`` and ``PCA-kNN``; the others right after it."""
    out = []
    for method in methods:
        view = refined_view(method)
        rule = REFINEMENTS.get(method.attrs.get("refine"))
        if view is not None and rule is not None and rule.kind == "rank":
            out += [view, method]
        else:
            out += [method] if view is None else [method, view]
    return out


def distinct_files(paths):
    """``paths`` without a file given twice (the same file under two names or paths: same
    device and inode), in order; and a note per file left out."""
    seen, kept, notes = {}, [], []
    for path in paths:
        try:
            status = os.stat(path)
            key = (status.st_dev, status.st_ino)
        except OSError:  # missing: read_results names it
            key = os.path.realpath(path)
        if key in seen:
            notes.append(f"{path}: the same file as {seen[key]}, counted once")
            continue
        seen[key] = path
        kept.append(path)
    return kept, notes


