"""argparse subcommands, each turned into a plain function call.

Sections below belong to one subcommand each: ``_add_<command>(parser)`` gives the
subcommand's parser its description and options and sets ``run_command=_run_<command>``, which
calls into the package; ``SUBCOMMANDS`` at the bottom names them in help order. Output to the
terminal is written by world rank 0 only, so that ``mpiexec -n N`` prints every line once.
"""

import argparse
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

from hpcswarm.errors import ParameterError
from hpcswarm.run.launch import hold_sigterm, refuse_split_world
from hpcswarm.version import __version__


class _OneLineErrors(argparse.ArgumentParser):
    """An argument parser whose mistakes are one :class:`ParameterError` line naming the option
    (``hpcswarm: error: argument --cv: ...``), printed once by world rank 0 under mpiexec,
    instead of argparse's usage block on every rank."""

    def error(self, message):
        raise ParameterError(f"{message} (see '{self.prog} --help')")


def _path(text):
    """An argparse type: a file or folder named by a non-blank string (an empty ``--output=``
    would otherwise be ignored, and an empty folder read as the current one), holding no name
    longer than its file system allows (which no file can have)."""
    from hpcswarm.store.outputs import name_too_long

    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file or folder name, got {text!r}")
    problem = name_too_long(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _int_at_least(low):
    """An argparse type: an integer >= ``low`` (the option is named by argparse's message)."""
    def integer(text):
        from hpcswarm.params import number_text

        try:
            value = int(number_text(text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {value}")
        return value

    return integer


def _float(text):
    """An argparse type: a number in ASCII (:func:`hpcswarm.params.number_text`)."""
    from hpcswarm.params import number_text

    try:
        return float(number_text(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _param_type(param):
    """An argparse type checking a value as the :class:`~hpcswarm.params.Param` ``param``."""
    def parse(text):
        try:
            return param.parse(text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = param.name  # argparse names the type in its messages
    return parse


def _add_param_options(parser, params, defaults=None):
    """One ``--NAME`` option per :class:`~hpcswarm.params.Param` row (``dest`` its name),
    checked by the row; its default is None unless ``defaults`` gives one."""
    defaults = defaults or {}
    for param in params:
        default = defaults.get(param.name)
        shown = "" if default is None else f" (default {default})"
        parser.add_argument("--" + param.name.replace("_", "-"), dest=param.name,
                            type=_param_type(param), default=default,
                            choices=param.choices or None,
                            metavar="|".join(param.choices) or param.kind.upper(),
                            help=param.doc + shown)


@dataclass(frozen=True)
class Subcommand:
    """A subcommand: its name, its line in ``hpcswarm --help``, and the function that gives
    its parser a description and options (and imports what they need)."""

    name: str
    summary: str
    add_options: Callable[[argparse.ArgumentParser], None]


def build_parser(command=None):
    """The ``hpcswarm`` parser with every subcommand, each with its options, or only
    ``command``'s when it names one: the other subcommands are then listed with their
    summary line alone, so that a command does not import the modules of another's options
    (``run``'s method registry imports every swarm)."""
    parser = _OneLineErrors(
        prog="hpcswarm",
        description="Particle-swarm gene selection on gene-expression matrices, serial or under MPI.",
    )
    parser.add_argument("--version", action="version", version=f"hpcswarm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = command in {subcommand.name for subcommand in SUBCOMMANDS}
    for subcommand in SUBCOMMANDS:
        subparser = sub.add_parser(subcommand.name, help=subcommand.summary)
        if not named or subcommand.name == command:
            subcommand.add_options(subparser)
    return parser


def _command_named(argv):
    """The subcommand ``argv`` names: its first word that is not an option (the top-level
    options, ``--help`` and ``--version``, take no value); None when there is none."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv=None):
    """Parse ``argv`` and run the chosen subcommand; returns the exit status.

    MPI is started first, so that under ``mpiexec`` even a mistake in the options is printed
    by world rank 0 alone.
    """
    from hpcswarm.comm import start_mpi

    hold_sigterm()  # until refuse_split_world has seen the world
    start_mpi()
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser(_command_named(argv)).parse_args(argv)
    refuse_split_world()  # before any subcommand reads or writes a file
    with _one_line_warnings():
        status = args.run_command(args)
    return 0 if status is None else status


@contextmanager
def _one_line_warnings():
    """hpcswarm's own warnings (a :class:`~hpcswarm.fitness.folds.FoldWarning`) as one line
    ``hpcswarm: warning: ...`` on stderr by world rank 0, like the notes; Python shows them
    after the frame they name, which for the command line is the interpreter's own
    (``<frozen runpy>:88``). Other warnings are shown as Python shows them."""
    import warnings

    from hpcswarm.comm import world_rank

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not category.__module__.startswith("hpcswarm."):
            shown(message, category, filename, lineno, file, line)
        elif world_rank() == 0:
            print(f"hpcswarm: warning: {message}", file=sys.stderr, flush=True)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _print0(*lines):
    from hpcswarm.comm import world_rank

    if world_rank() == 0:
        for line in lines:
            print(line, flush=True)


def _notes0(dataset):
    """The dataset's notes (how it was opened) on stderr, by world rank 0."""
    from hpcswarm.comm import world_rank

    if world_rank() == 0:
        for line in dataset.notes:
            print(f"hpcswarm: note: {line}", file=sys.stderr, flush=True)


def _on_rank0(action, comm=None):
    """``action()`` run by world rank 0 alone: under mpiexec one rank reads and writes.

    Returns its result on rank 0 (None elsewhere). Its :class:`HpcswarmError` is raised on
    every rank, so that rank 0 prints it once and every rank exits with status 2; nothing is
    printed before this collective, so that a failing print (a closed pipe) leaves no rank
    waiting in it.
    """
    from hpcswarm.comm import launch_world
    from hpcswarm.errors import HpcswarmError

    if comm is None:
        with launch_world() as comm:
            return _on_rank0(action, comm)
    result = error = None
    if comm.rank == 0:
        try:
            result = action()
        except HpcswarmError as exc:
            error = exc
    if comm.size > 1:
        error = comm.bcast(error, root=0)
    if error is not None:
        raise error
    return result


# --------------------------------------------------------------------------- convert
# (owned by the data layer: hpcswarm/data/)
def _separator(text):
    return {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";"}.get(text, text)


_CONVERT_OPTIONS = {
    "label": {"metavar": "NAME|INDEX"},
    "labels": {"metavar": "FILE", "type": _path},
    "sample_column": {"metavar": "NAME"},
    "min_class_size": {"metavar": "N", "type": int},
    "layer": {"metavar": "NAME"},
    "sep": {"metavar": "SEP", "type": _separator,
            "help": "CSV/TSV field separator ('tab', 'comma' or a character; default from the "
                    "format)"},
    "x_var": {"metavar": "NAME"},
    "y_var": {"metavar": "NAME"},
}
"""How the command line shows some conversion options (the rest comes from their Param)."""


def _add_convert_options(parser):
    """One ``--NAME`` option per :data:`~hpcswarm.data.formats.CONVERT_PARAMS` row."""
    from hpcswarm.data.formats import CONVERT_PARAMS

    for param in CONVERT_PARAMS:
        flag = "--" + param.name.replace("_", "-")
        if param.kind == "bool":
            parser.add_argument(flag, action="store_true", help=param.doc)
            continue
        shown = "" if param.default is None else f" (default {param.default})"
        options = {"default": param.default, "help": param.doc + shown,
                   "choices": param.choices or None, **_CONVERT_OPTIONS.get(param.name, {})}
        parser.add_argument(flag, dest=param.name, **options)


def _add_convert(p):
    p.description = (
        "Convert a gene-expression file to an hpcswarm HDF5 dataset (X contiguous and "
        "uncompressed, so that MPI ranks memory-map it), streamed block by block. Text formats "
        "may be gzip-compressed. Values are stored as read: no normalisation.")
    p.add_argument("input", metavar="INPUT", type=_path,
                   help="ARFF, CSV, TSV, MATLAB .mat (v5 or v7.3), GCT, GEO series matrix or "
                   "AnnData .h5ad file (text formats also .gz)")
    p.add_argument("output", metavar="OUTPUT.h5", type=_path,
                   help="dataset file to write (named .h5 or .hdf5)")
    _add_convert_options(p)
    p.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    p.set_defaults(run_command=_run_convert)


def _run_convert(args):
    from hpcswarm.data import convert_file
    from hpcswarm.data.formats import CONVERT_PARAMS

    options = {param.name: getattr(args, param.name) for param in CONVERT_PARAMS}
    report = _on_rank0(lambda: convert_file(args.input, args.output, overwrite=args.overwrite,
                                            **options))
    if report is not None:
        _print0(*report.lines())


# --------------------------------------------------------------------------- info
# (owned by the data layer: hpcswarm/data/)
def _add_info(p):
    p.description = (
        "Describe an hpcswarm HDF5 dataset, a bundled one (builtin:srbct) or any file 'convert' "
        "reads. Under mpiexec world rank 0 alone reads it and prints.")
    p.add_argument("data", metavar="DATA", type=_path,
                   help="FILE.h5, builtin:NAME, sklearn:NAME, or an input file")
    p.add_argument("--names", type=_int_at_least(0), default=5, metavar="N",
                   help="gene and sample names shown (default 5)")
    p.set_defaults(run_command=_run_info)


def _run_info(args):
    from hpcswarm.data import load_dataset
    from hpcswarm.data.info import describe

    def describe_noted():
        dataset = load_dataset(args.data)
        _notes0(dataset)
        return describe(dataset, args.data, n_names=args.names)

    lines = _on_rank0(describe_noted)
    _print0(*(lines or ()))


# --------------------------------------------------------------------------- evaluate
# (owned by the fitness engine: hpcswarm/fitness/)
def _cv_option(text):
    from hpcswarm.fitness.folds import parse_cv

    try:
        return parse_cv(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _add_evaluate(p):
    p.description = (
        "Evaluate a gene subset with the fitness engine of the searches: k-NN on raw values, "
        "Euclidean distance, leave-one-out, stratified n-fold (folds fixed by --seed) or a "
        "stratified 70/30 holdout. Prints one JSON object: correct, total, accuracy, "
        "balanced_accuracy (the mean recall over the classes), error, class_correct, "
        "class_total (per class, in the order of the class names), genes_used, genes (with "
        "--genes: their names), n_genes, k, cv, seed, and, for a list hpcswarm wrote, a note "
        "that on the samples that selected it the accuracy is in-sample and optimistic.")
    p.add_argument("data", metavar="DATA", type=_path,
                   help="FILE.h5, builtin:NAME, sklearn:NAME, or an input file")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--genes", metavar="FILE", type=_path,
                       help="gene list: what 'run' and 'report --genes' write (a header line "
                       "starting 'gene'), or one gene name per line; a line naming no gene "
                       "is an error, even a number")
    which.add_argument("--all", action="store_true", help="use every gene")
    p.add_argument("--columns", action="store_true",
                   help="the --genes list holds 0-based columns, one per line, not names")
    from hpcswarm.selection.spec import SPEC

    p.add_argument("--k", type=_int_at_least(1), default=1, metavar="K", help="neighbours (default 1)")
    p.add_argument("--cv", type=_cv_option, default="loo", metavar="loo|N|holdout",
                   help="validation: leave-one-out, stratified N-fold, or 70/30 holdout "
                   "(default loo)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, metavar="S",
                   help="seed fixing the folds of N-fold and holdout (default 0)")
    scorer_rows = [SPEC["sample_shards"], SPEC["device"]]
    _add_param_options(p, scorer_rows, {row.name: row.default for row in scorer_rows})
    p.add_argument("--preprocess", metavar="STEPS",
                   help="ordered steps fitted inside every fold on its training rows, e.g. "
                   "'log2,zscore,top_variance=500' (log2[=pseudocount], zscore, minmax, "
                   "top_variance=N, top_anova=N), as the [preprocess] table of a job")
    p.add_argument("--plot", metavar="DIR", type=_path,
                   help="also draw the genes' expression by class into DIR (created if "
                   "missing): signature-heatmap.png (z-scores, samples grouped by class) and "
                   "signature-by-class.png (values per gene and class); needs matplotlib")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the --plot files if they exist")
    p.set_defaults(run_command=_run_evaluate)


def _run_evaluate(args):
    import json

    from hpcswarm.comm import launch_world, split_grid

    with launch_world() as comm:
        if args.plot is not None:
            _on_rank0(lambda: _check_plot_outputs(args), comm)
        if args.sample_shards == 1:  # one rank reads and scores
            text = _on_rank0(lambda: json.dumps(_evaluate(args)), comm)
        else:  # every rank scores its shard of the held-out samples; rank 0 prints
            try:
                grid = split_grid(comm, args.sample_shards)
            except ValueError:
                raise ParameterError(f"--sample-shards {args.sample_shards} must be a positive "
                                     f"divisor of the {comm.size} rank(s)") from None
            with grid:
                text = json.dumps(_evaluate(args, grid.shards, comm))
        if args.plot is not None:
            written = _on_rank0(lambda: _plot_evaluated(args), comm)
    _print0(text)
    if args.plot is not None:
        _print0(f"wrote {', '.join(p.name for p in written)} in {args.plot}")


def _check_plot_outputs(args):
    """``evaluate --plot``: matplotlib present, and the plot files free, before any work."""
    from pathlib import Path

    from hpcswarm.results.report.plots import expression_plot_files, plotting_available
    from hpcswarm.store.outputs import check_not_inputs, check_outputs, missing_folders

    if not plotting_available():
        raise ParameterError("--plot needs matplotlib: pip install 'hpcswarm[plot]'")
    folder = Path(args.plot)
    missing_folders(folder, "--plot")  # DataError: it, or a folder above, is not a folder
    outputs = [("--plot", path) for path in expression_plot_files(folder)]
    inputs = [("the dataset", args.data), ("the gene list", args.genes)]
    if folder.is_dir():
        check_outputs(outputs, inputs, overwrite=args.overwrite)
    else:  # created when the plots are written: nothing in it yet
        check_not_inputs(outputs, inputs)


def _plot_evaluated(args):
    """The expression plots of ``evaluate --plot``: the genes evaluated, by class."""
    from pathlib import Path

    import numpy as np

    from hpcswarm.data import load_dataset
    from hpcswarm.results.report.plots import write_expression_plots

    dataset = load_dataset(args.data)
    mask, _ = _evaluated_genes(args, dataset.gene_names)
    return write_expression_plots(np.asarray(dataset.X), dataset.y, dataset.gene_names,
                                  np.flatnonzero(mask), args.plot, dataset.class_names,
                                  title=Path(str(args.data)).name, overwrite=args.overwrite)


def _evaluated_genes(args, gene_names):
    """The mask of the genes ``evaluate`` uses (every one with ``--all``, else those of the
    ``--genes`` list, by name or, with ``--columns``, by 0-based column), and the list read
    (None with ``--all``); a line naming no gene is one error naming the file and line."""
    import numpy as np

    from hpcswarm.fitness.genes import mask_from_genes
    from hpcswarm.signatures.genelist import read_gene_list

    if args.all:
        return np.ones(len(gene_names), dtype=bool), None
    listed = read_gene_list(args.genes)
    try:
        return mask_from_genes(listed.entries, gene_names, columns=args.columns,
                               lines=listed.lines), listed
    except ParameterError as exc:
        raise ParameterError(f"{args.genes}: {exc}") from None


IN_SAMPLE_NOTE = ("a list hpcswarm wrote holds genes a search selected: on the samples that "
                  "selected them this accuracy is in-sample and optimistically biased "
                  "(Ambroise & McLachlan 2002); the job's outer-fold estimate is the one to "
                  "report")
"""The note of ``evaluate --genes`` on a list hpcswarm wrote (a signature, report --genes)."""


def _evaluated_score(args, dataset, mask, steps, shards):
    """The Score of ``mask`` on ``dataset`` under ``evaluate``'s options: the preprocessing
    ``steps`` fitted inside each fold, else the search's scorer (on this rank's ``shards``)."""
    from hpcswarm.fitness import make_folds, make_scorer
    from hpcswarm.fitness.compiled import worth_compiling
    from hpcswarm.selection.prepare import prepare
    from hpcswarm.selection.preprocess import score_in_folds

    if steps:
        try:
            folds = make_folds(dataset.y, args.cv, args.seed)
            return score_in_folds(dataset.X, dataset.y, mask, steps, folds, args.k)
        except ValueError as exc:
            raise ParameterError(str(exc)) from exc
    device = {} if args.device == "cpu" else {"device": args.device}
    rows = -(-dataset.n_samples // (1 if shards is None else shards.size))
    view = prepare(dataset.X, dataset.y, X_genes=dataset.X_genes, finite=dataset.values_finite)
    scorer = make_scorer(view.genes, view.y, k=args.k, cv=args.cv, seed=args.seed,
                         shards=shards, compiled=worth_compiling(rows * dataset.n_samples),
                         class_counts=True, **device)
    return scorer.score(mask)


def _evaluate(args, shards=None, comm=None):
    """The JSON object ``evaluate`` prints; with ``shards``, this rank's part of a sharded
    evaluation, every rank of ``comm`` calling it (the ranks share the check of the values)."""
    import numpy as np

    from hpcswarm.data import load_dataset
    from hpcswarm.fitness.folds import classes_named
    from hpcswarm.selection.preprocess import parse_steps

    dataset = load_dataset(args.data, comm)
    _notes0(dataset)
    mask, listed = _evaluated_genes(args, dataset.gene_names)
    steps = parse_steps(args.preprocess, "--preprocess")
    with classes_named(dataset.class_names):  # a fold warning names a class as Python does
        score = _evaluated_score(args, dataset, mask, steps, shards)
    result = {"correct": score.correct, "total": score.total, "accuracy": score.accuracy,
              "balanced_accuracy": score.balanced_accuracy, **score.as_dict()}  # side by side
    result["genes_used"] = int(mask.sum())
    if listed is not None:
        result["genes"] = [dataset.gene_names[j] for j in np.flatnonzero(mask)]
    result.update(n_genes=dataset.n_genes, k=args.k, cv=args.cv, seed=args.seed)
    if listed is not None and listed.written:
        result["note"] = IN_SAMPLE_NOTE
    if steps:
        result["preprocess"] = args.preprocess
    return result


# --------------------------------------------------------------------------- run
# (owned by the search: hpcswarm/swarm/)
def _search_options():
    """The search settings of :data:`hpcswarm.selection.spec.SPEC_PARAMS` that ``run`` takes as
    flags (the single search's; a job file sets them as job keys)."""
    from hpcswarm.selection.spec import SPEC_PARAMS

    return [param for param in SPEC_PARAMS if param.name != "algorithm"]


def _add_run(p):
    from hpcswarm.selection.methods import ALGORITHMS, BASELINES

    p.description = (
        "With JOB.toml: run the experiment it describes (protocol, runs, folds; results file and "
        "JSON summary written by world rank 0). Without: run one search on all samples (the "
        "biased protocol of the papers' first experiments). Every algorithm parameter, fitness "
        "settings included (k, cv, objective, alpha, archive_size), defaults to the algorithm's "
        "paper setting and can be overridden with --param key=value. Writes JSON with --output "
        "(atomically, world rank 0 only), else prints a summary. A job first checks, on every "
        "rank and before any computation, its outputs, dataset, folds and memory (exit status 2 "
        "with one message); world rank 0 then reports progress on stderr and in "
        "OUTPUT.progress.jsonl beside the results.")
    # job-file form (owned by hpcswarm/run/job.py and jobfile.py): run JOB.toml [--set ...]
    p.add_argument("job", nargs="?", metavar="JOB.toml", type=_path,
                   help="a job file (data, method, fitness, protocol, runs, output); "
                   "replaces --data/--algorithm/--param/--seed/--output")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                   help="override a job key (repeatable), e.g. --set runs=1 --set "
                   "params.n_iterations=3; a bare key is found in any table when unambiguous")
    p.add_argument("--overwrite", action="store_true",
                   help="replace existing outputs (the job's results files, or --output); an "
                   "input is never replaced")
    p.add_argument("--resume", action="store_true",
                   help="continue from the job's checkpoint (finished tasks are not "
                   "recomputed; the results equal an uninterrupted run's); without a "
                   "checkpoint the job starts from the beginning")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr (OUTPUT.progress.jsonl is still written), "
                   "nor the opening plan line")
    p.add_argument("--dry-run", action="store_true", dest="dry_run",
                   help="print the plan (the grid of particle groups x sample shards, the "
                   "memory and particle states of each rank, for VLPSO the time the cost "
                   "model expects; with JOB.toml after the pre-flight checks that write "
                   "nothing: the tasks, rank groups and each distinct search) and exit "
                   "without searching")
    p.add_argument("--memory-limit", type=_float, metavar="GB", dest="memory_limit",
                   help="memory of a node in GB for the pre-flight check (default: detected "
                   "physical memory or cgroup limit); the run is refused when its estimate "
                   "exceeds 80%% of this divided by the ranks on the node")
    p.add_argument("--data", metavar="DATA", type=_path,
                   help="FILE.h5, builtin:NAME, sklearn:NAME, or an input file")
    p.add_argument("--algorithm", metavar="NAME",
                   help=f"one of: {', '.join(ALGORITHMS)}; baselines: {', '.join(BASELINES)}")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="override a parameter (repeatable), e.g. --param n_iterations=20")
    p.add_argument("--seed", type=_int_at_least(0), default=0, metavar="S",
                   help="run seed: folds, particle and swarm streams (default 0)")
    p.add_argument("--output", metavar="OUT.json", type=_path,
                   help="result file (default: print a summary)")
    p.add_argument("--threads", type=_int_at_least(1), metavar="N",
                   help="BLAS/OpenMP threads per rank (default: the rank's cores, or the node's "
                   "cores shared by its ranks, so that ranks x threads never exceed the cores, and no "
                   "more than OMP_NUM_THREADS, OPENBLAS_NUM_THREADS or MKL_NUM_THREADS when set, "
                   "else no more than the cores the machine's load average leaves free)")
    _add_param_options(p, _search_options())
    p.set_defaults(run_command=_run_run)


def _run_run(args):
    from hpcswarm.comm import launch_world, pinned_threads

    from hpcswarm.system import check_memory_limit

    check_memory_limit(args.memory_limit)
    # MPI starts under mpiexec (only world rank 0 writes and prints); ranks x BLAS threads
    # stay within the cores from before any work until the command returns
    with launch_world() as comm, pinned_threads(args.threads):
        if args.job is not None or args.sets:  # the job-file form
            return _run_job_file(args, comm)
        return _run_one_search(args, comm)


def _run_one_search(args, comm):
    from hpcswarm.data import load_dataset
    from hpcswarm.data.sources import source_path
    from hpcswarm.run.plan import check_search_memory
    from hpcswarm.selection.prepare import mismatch_error, prepare
    from hpcswarm.selection.search import FitnessMismatch, result_document
    from hpcswarm.selection.spec import SearchSpec
    from hpcswarm.store.atomic import write_json
    from hpcswarm.store.outputs import check_outputs
    from hpcswarm.fitness.folds import classes_named
    from hpcswarm.swarm.params import parse_assignments

    if args.data is None or args.algorithm is None:
        raise ParameterError("run needs a job file (run JOB.toml) or both --data and --algorithm")
    if args.resume:
        raise ParameterError("--resume applies to a job file (run JOB.toml --resume); a single "
                             "search has no checkpoint")
    settings = {param.name: getattr(args, param.name) for param in _search_options()}
    spec_overrides = parse_assignments(args.param)
    spec = SearchSpec.build(args.algorithm, spec_overrides, **settings)  # before the data
    if args.output:
        _on_rank0(lambda: check_outputs([("--output", args.output)],
                                        [("the dataset", source_path(args.data))],
                                        overwrite=args.overwrite), comm)
    dataset = load_dataset(args.data, comm)  # every rank memory-maps the same file
    _notes0(dataset)
    check_search_memory(spec, dataset.n_samples, dataset.n_genes, comm, args.memory_limit)
    if args.dry_run or not args.quiet:
        from hpcswarm.run.dry_run import plan_lines, plan_note, search_plan

        plan = search_plan(spec, dataset.n_samples, dataset.n_genes, comm, args.memory_limit)
        if args.dry_run:
            _print0(*plan_lines(plan))
            return
        _print0(plan_note(plan))  # the search's opening line, as a job's (stdout)
    # one task: all ranks of the world run this one swarm, each its block of particles, read
    # from the file's gene-major matrix (no private copy), or from the gene-major copy the
    # method's preprocessing made of it (value steps: the same genes)
    view = prepare(dataset.X, dataset.y, spec.preprocess, X_genes=dataset.X_genes,
                   finite=dataset.values_finite, comm=comm)
    try:
        with view, classes_named(dataset.class_names):  # a fold warning names its class
            result = view.search(spec, args.seed, comm=comm)
    except MemoryError:
        _out_of_memory(spec, dataset, comm, args.memory_limit)
    except FitnessMismatch as exc:
        raise mismatch_error(exc, exc.setting in spec_overrides, "param",
                             args.algorithm) from None
    document = result_document(result, args.seed, dataset.gene_names, args.data)
    if args.output:
        if comm.rank == 0:
            write_json(args.output, document, overwrite=args.overwrite)
        return
    _print0(*_search_lines(args, result, document))


def _out_of_memory(spec, dataset, comm, memory_limit):
    """The search ran out of memory: one line with the pre-flight's estimate and advice
    (:func:`hpcswarm.run.plan.check_search_memory`); DataError in a serial run, else this rank
    prints it and ends every rank with status 2 (the others may wait in a collective)."""
    from hpcswarm.comm import abort_world
    from hpcswarm.errors import DataError
    from hpcswarm.run.plan import search_memory
    from hpcswarm.system import available_memory

    need = search_memory(spec, dataset.n_samples, dataset.n_genes, max(1, spec.sample_shards))
    have, what = available_memory(comm.ranks_on_node(), memory_limit)
    where = f" (on rank {comm.rank})" if comm.size > 1 else ""
    message = (f"out of memory{where}: the search ran out of memory with "
               f"{dataset.n_samples} samples x {dataset.n_genes} genes, "
               f"{spec.params.get('n_particles', 1)} particles and {spec.sample_shards} sample "
               f"shard(s) (estimated need {need / 1e9:.3g} GB of the {have / 1e9:.3g} GB per "
               f"rank, {what}); use more sample shards, fewer ranks per node or a node with "
               "more memory")
    if comm.size == 1:
        raise DataError(message) from None
    print(f"hpcswarm: error: {message}", file=sys.stderr, flush=True)
    abort_world(2)


def _search_lines(args, result, document):
    """What the single-search ``run`` prints without ``--output``."""
    last = result.history[-1]
    score = result.extra["score"]
    names = document["selected_gene_names"]
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    lines = [
        f"{args.algorithm} on {args.data} (seed {args.seed}): fitness {document['fitness']:.6g}, "
        f"accuracy {score['correct']}/{score['total']} = {score['accuracy']:.4f}"
        + (f", balanced accuracy {score['balanced_accuracy']:.4f}"
           if "balanced_accuracy" in score else ""),
        f"{document['n_selected']} of {document['n_genes_total']} genes: {shown}",
        f"{last['iteration'] + 1} rounds, {last['evaluations']} evaluations, "
        f"{last['archive_hits']} archive hits, {last['seconds']:.1f} s",
        "Pareto front (genes: inner correct): " + ", ".join(
            f"{p['size']}: {p['correct']}" for p in document["front"]),
    ]
    if result.refined is not None:
        refined = document["refined"]
        lines.append(f"pruned: {len(refined['genes'])} genes, accuracy {refined['correct']}/"
                     f"{refined['total']}: {', '.join(refined['gene_names'][:10])}"
                     + (", ..." if len(refined["genes"]) > 10 else ""))
    return lines


def _run_job_file(args, comm):
    from hpcswarm.run.job import run_job_file

    if args.job is None:
        raise ParameterError("--set applies to a job file: run JOB.toml --set KEY=VALUE")
    single = ["data", "algorithm", "output"] + [param.name for param in _search_options()]
    given = [f"--{name.replace('_', '-')}" for name in single
             if getattr(args, name) is not None] + (["--param"] if args.param else []) + (
                 ["--seed"] if args.seed != 0 else [])
    if given:
        raise ParameterError(f"run {args.job}: {', '.join(given)} cannot be combined with a job "
                             "file; override job keys with --set KEY=VALUE")
    run_job_file(args.job, args.sets, comm=comm, overwrite=args.overwrite, print0=_print0,
                 quiet=args.quiet, memory_limit=args.memory_limit, resume=args.resume,
                 dry_run=args.dry_run)


# --------------------------------------------------------------------------- report
# (owned by the results: hpcswarm/results/files.py, hpcswarm/results/report/)
def _add_report(p):
    p.description = (
        "Summarise one or several results files written by 'run JOB.toml': per dataset, the "
        "all-genes k-NN and each method's average subset size, best and mean +/- std accuracy "
        "over runs, with a paired one-sided Wilcoxon signed-rank test of the per-fold accuracies "
        "against a reference method (+ significantly higher, - lower, = no significant "
        "difference); the genes most often selected across runs and folds, the stability of the "
        "selection (Kuncheva, Jaccard, Nogueira, Sechidis); the signatures of each size on the "
        "searches' Pareto fronts; the mean gbest convergence curve. Text on the terminal; CSV, "
        "Markdown, JSON and PNG plots on request.")
    p.add_argument("results", nargs="+", metavar="RESULTS.h5", type=_path,
                   help="results files (or the JSON of one search: run --output FILE.json)")
    p.add_argument("--reference", metavar="NAME",
                   help="method the tests compare against: job name, algorithm or file name "
                   "(default: the first file)")
    p.add_argument("--alpha", type=_float, default=0.05, metavar="A",
                   help="significance level (default 0.05)")
    p.add_argument("--top", type=_int_at_least(1), default=10, metavar="N",
                   help="most frequent genes listed per method (default 10)")
    p.add_argument("--csv", metavar="DIR", dest="csv_dir", type=_path,
                   help="write methods.csv, genes.csv, convergence.csv, fronts.csv and "
                   "signatures.csv in DIR (created if missing)")
    p.add_argument("--markdown", metavar="FILE.md", type=_path, help="write the tables as Markdown")
    p.add_argument("--json", metavar="FILE.json", dest="json_path", type=_path,
                   help="write every table as JSON")
    p.add_argument("--plots", metavar="DIR", type=_path,
                   help="write convergence.png, gene-frequency, stability and Pareto-front "
                   "charts in DIR, created if missing (needs matplotlib: pip install "
                   "'hpcswarm[plot]')")
    p.add_argument("--genes", metavar="FILE.tsv", dest="genes_path", type=_path,
                   help="write the selected genes of each method, ranked: name, 1-based "
                   "feature and 0-based column, selection frequency, mean rank over runs "
                   "(a tab-separated gene list, for enrichment tools; 'evaluate --genes' "
                   "reads it); one list per method: FILE.tsv for the first (the "
                   "report's first row), FILE.METHOD.tsv for each other")
    p.add_argument("--sizes", type=_sizes, metavar="N,N,...",
                   help="signature sizes (most genes) of the 'signatures by size' tables, e.g. "
                   "10,20,50 (default: read from the searches' fronts)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace existing CSV, Markdown, JSON, gene-list or plot files (never a "
                   "results file given)")
    p.set_defaults(run_command=_run_report)


def _sizes(text):
    """``--sizes 10,20,50``: positive integers."""
    from hpcswarm.params import number_text

    try:
        sizes = [int(number_text(part)) for part in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected positive whole numbers separated by "
                                         f"commas, got {text!r}")
    return sizes


def _run_report(args):
    from hpcswarm.results.report import ReportOptions, ReportOutputs, report_command

    options = ReportOptions(reference=args.reference, alpha=args.alpha, top=args.top,
                            sizes=args.sizes)
    outputs = ReportOutputs(csv_dir=args.csv_dir, markdown=args.markdown,
                            json_path=args.json_path, plots=args.plots,
                            genes_path=args.genes_path, overwrite=args.overwrite)
    lines = []
    _on_rank0(lambda: report_command(args.results, options, outputs, print0=lines.append))
    _print0(*lines)


SUBCOMMANDS = (
    Subcommand("convert", "convert an ARFF, CSV/TSV, MATLAB, GCT, GEO series matrix or AnnData "
               "file to an hpcswarm HDF5 dataset", _add_convert),
    Subcommand("info", "describe a dataset: shape, classes, names, memory mapping, provenance",
               _add_info),
    Subcommand("evaluate", "k-NN validation accuracy of a gene signature (or of all genes) as "
               "one JSON object", _add_evaluate),
    Subcommand("run", "an experiment from a job file, or one gene-selection search on all "
               "samples", _add_run),
    Subcommand("report", "the papers' tables from results files: accuracy, subset size, tests, "
               "top genes", _add_report),
)
"""The subcommands in help order."""
