"""Progress of a job, reported by world rank 0 alone: stderr lines and a JSON-lines file.

World rank 0 sees the rounds of its own group's search (one history row per round) and the
completion of every task, its own at once and the other groups' as the task farm delivers
their records (:func:`hpcswarm.run.taskfarm.farm`). Each update is one JSON object on one line
of ``<output stem>.progress.jsonl`` and, unless ``quiet``, one line on stderr: a line that
rewrites itself (with a bar) when stderr is a terminal, plain lines in a batch log. Round
updates are throttled to one per ``interval`` seconds; task completions are always reported.

Keys of a progress record: ``event`` ("start", "round", "phase", "task" or "end"), ``time`` (UTC,
ISO 8601), ``elapsed`` (s since the start), ``tasks_total``, ``tasks_done``,
``tasks_remaining``, ``run`` and ``fold`` (the task the event is about: rank 0's current
task for "round", the finished one for "task"), ``group`` (the rank group of a finished
task), ``iteration``, ``best_fitness``, ``best_size`` (of that search, its last round for
"task"), ``evaluations_per_second`` (fitness evaluations computed by that search per second
of its run), ``archive_hit_rate`` (archive hits / (hits + computed evaluations) of that
search), ``eta_seconds`` (time left: mean duration of the finished tasks x ceil(tasks
remaining / groups); before the first task ends, the duration of a task is estimated from
rank 0's search, its seconds per round so far x its rounds (:func:`task_seconds`), and null
only until its first round when the rounds of a search are not known beforehand, as for the
greedy methods), ``phase`` and ``genes_left`` (a "phase" event: a step after rank 0's
search, ``"refine NAME"`` with the genes its elimination has left (null for an exchange
step, which leaves the size as it is), or ``"baselines and test"``; its ETA counts the
refinement's time left, estimated from its steps so far as each step costs in proportion to
the genes left (none for an exchange step, whose steps left are not known): before the first
task ends, that plus as many more tasks as remain; after, the ETA of the finished tasks less
the time since the last one ended, and never less than the refinement's time left). Keys that
do not apply are null.
"""

import datetime
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Optional

from hpcswarm.errors import DataError
from hpcswarm.store.atomic import open_replacing

FIELDS = ("event", "time", "elapsed", "tasks_total", "tasks_done", "tasks_remaining", "run",
          "fold", "group", "iteration", "best_fitness", "best_size",
          "evaluations_per_second", "archive_hit_rate", "eta_seconds", "phase", "genes_left")
"""Keys of every progress record, in file order."""


def progress_path(output):
    """``<output stem>.progress.jsonl`` beside the results file ``output`` (a Path)."""
    return output.with_name(output.stem + ".progress.jsonl")


def rates(row):
    """``(evaluations per second, archive hit rate)`` of a history row (None when undefined)."""
    evaluations, hits, seconds = row["evaluations"], row["archive_hits"], row["seconds"]
    per_second = evaluations / seconds if seconds > 0 else None
    hit_rate = hits / (hits + evaluations) if hits + evaluations else None
    return per_second, hit_rate


def eta_seconds(durations, remaining, n_groups):
    """Time left: mean finished duration x rounds of tasks left over the groups. Pure."""
    if not durations:
        return None
    if remaining <= 0:
        return 0.0
    return sum(durations) / len(durations) * math.ceil(remaining / max(1, n_groups))


def task_seconds(seconds, iteration, n_rounds):
    """Estimated duration of a whole search from its first rounds: ``seconds`` spent on
    rounds ``0..iteration`` (a history row), over ``n_rounds`` rounds. None when the rounds
    are not known (``n_rounds`` None). Pure."""
    if n_rounds is None:
        return None
    return seconds / (iteration + 1) * max(n_rounds, iteration + 1)


def format_seconds(seconds):
    """``H:MM:SS`` (or ``?`` when unknown)."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def format_line(record, bar_width=0):
    """The one-line human form of a progress record (with a bar when ``bar_width`` > 0)."""
    done, total = record["tasks_done"], record["tasks_total"]
    parts = [f"{done}/{total} tasks"]
    if bar_width:
        filled = int(bar_width * done / total) if total else bar_width
        parts[0] = f"[{'#' * filled}{'.' * (bar_width - filled)}] " + parts[0]
    if record["run"] is not None:
        what = ("done" if record["event"] in ("task", "phase")
                else f"round {record['iteration']}")
        where = ("final signature" if record["run"] < 0  # a task outside the runs
                 else f"run {record['run']} fold {record['fold']}")
        parts.append(f"{where} {what}")
    if record["phase"] is not None:
        parts[-1] = parts[-1].replace("done", record["phase"]) + (
            "" if record["genes_left"] is None else f": {record['genes_left']} genes left")
    if record["best_fitness"] is not None:
        parts.append(f"best {record['best_fitness']:.6g} ({record['best_size']} genes)")
    if record["evaluations_per_second"] is not None:
        parts.append(f"{record['evaluations_per_second']:.0f} eval/s")
    if record["archive_hit_rate"] is not None:
        parts.append(f"archive hits {100 * record['archive_hit_rate']:.0f}%")
    parts.append(f"ETA {format_seconds(record['eta_seconds'])}")
    return "progress: " + " | ".join(parts)


@dataclass(frozen=True)
class Workload:
    """What a job's progress counts down, for its ETA.

    Attributes
    ----------
    n_tasks, n_groups : int
    n_rounds : int, optional
        Rounds of one search (a swarm's ``n_iterations``), for an ETA before the first task
        ends (:func:`task_seconds`); None when a search stops by its own rule.
    """

    n_tasks: int
    n_groups: int
    n_rounds: Optional[int] = None

    def eta(self, durations, row=None):
        """Seconds left with the tasks of ``durations`` done: from their mean (:func:`eta_seconds`)
        or, before any is done, from ``row``, the history row of rank 0's search in a round."""
        remaining = self.n_tasks - len(durations)
        eta = eta_seconds(durations, remaining, self.n_groups)
        if eta is None and row is not None:
            estimate = task_seconds(row["seconds"], row["iteration"], self.n_rounds)
            if estimate is not None:
                eta = max(0.0, eta_seconds([estimate], remaining, self.n_groups)
                          - row["seconds"])
        return eta


class ProgressLines:
    """The human side of a job's progress: one line per record on ``stream``.

    Parameters
    ----------
    stream : file, optional
        Default ``sys.stderr``.
    quiet : bool
        Nothing on ``stream``.
    tty : bool, optional
        Rewrite one line in place (with a bar); default: whether ``stream`` is a terminal.
    """

    def __init__(self, stream=None, quiet=False, tty=None):
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        self.tty = (self.stream.isatty() if hasattr(self.stream, "isatty") else False) \
            if tty is None else tty

    def show(self, record):
        """The line of a progress record (:func:`format_line`)."""
        if self.quiet:
            return
        if self.tty:
            self.stream.write("\r\x1b[2K" + format_line(record, bar_width=20))
        else:
            self.stream.write(format_line(record) + "\n")
        self.stream.flush()

    def end(self):
        """After the last record: leave a rewritten line on screen."""
        if self.tty and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()


class ProgressReporter:
    """World rank 0's progress: one JSON line per update in ``path``, one line on ``lines``.

    Parameters
    ----------
    path : path-like
        The progress file: replaced by a new file (a symbolic or hard link in its place is
        replaced, never written through: :func:`hpcswarm.store.atomic.open_replacing`).
    workload : Workload
        Tasks, groups and rounds of a search, for the ETA.
    lines : ProgressLines, optional
        Where the human lines go (default: stderr).
    interval : float
        Minimum seconds between two round updates.
    clock : callable
        Monotonic seconds (for tests).
    """

    def __init__(self, path, workload, lines=None, *, interval=2.0, clock=time.monotonic):
        self.workload = workload
        self.lines = ProgressLines() if lines is None else lines
        self.interval = interval
        self.clock = clock
        self.durations = []
        self.started = clock()
        self.last_round = None
        self.steps = None  # rank 0's current phase: (task number, name, started, steps)
        self.last_done = self.started  # when the last task ended
        self.path = path
        self.file = open_replacing(path)  # a link in its place is replaced, never followed
        self._emit(self._record("start"))

    def _record(self, event, row=None, **values):
        """A progress record; ``row``: the history row of rank 0's search in a round."""
        done, n_tasks = len(self.durations), self.workload.n_tasks
        record = dict.fromkeys(FIELDS)
        record.update(
            event=event, elapsed=round(self.clock() - self.started, 3),
            time=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            tasks_total=n_tasks, tasks_done=done, tasks_remaining=n_tasks - done,
            eta_seconds=self.workload.eta(self.durations, row))
        record.update(values)
        return record

    def _emit(self, record):
        try:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()
        except OSError as exc:
            self._abandon()
            raise DataError(f"{self.path}: cannot write the progress file "
                            f"({os.strerror(exc.errno) if exc.errno else exc})") from None
        self.lines.show(record)

    def round(self, task, row):
        """A round of rank 0's own search on ``task`` (``row``: its history row); throttled."""
        now = self.clock()
        if self.last_round is not None and now - self.last_round < self.interval:
            return
        self.last_round = now
        per_second, hit_rate = rates(row)
        self._emit(self._record("round", row, run=task.run, fold=task.fold,
                                iteration=row["iteration"], best_fitness=row["best_fitness"],
                                best_size=row["best_size"], evaluations_per_second=per_second,
                                archive_hit_rate=hit_rate))

    def phase(self, task, name, genes_left):
        """A step after rank 0's search of ``task``: reported when the phase begins, then
        throttled as rounds are (:meth:`round`)."""
        now = self.clock()
        if self.steps is None or self.steps[:2] != (task.number, name):
            self.steps = (task.number, name, now, 0)
            self.last_round = None
        else:
            self.steps = self.steps[:3] + (self.steps[3] + 1,)
        if self.last_round is not None and now - self.last_round < self.interval:
            return
        self.last_round = now
        _, _, started, steps = self.steps
        left = (now - started) / steps * genes_left / 2 if genes_left and steps else 0.0
        if self.durations:  # the tasks' mean, less this task's time so far
            eta = max(self.workload.eta(self.durations) - (now - self.last_done), left)
        else:
            eta = left + eta_seconds([now - self.started + left], self.workload.n_tasks - 1,
                                     self.workload.n_groups)
        self._emit(self._record("phase", run=task.run, fold=task.fold, phase=name,
                                genes_left=genes_left, eta_seconds=eta))

    def task_done(self, record):
        """A finished task from any group: a record of :func:`task_record`; always reported."""
        self.durations.append(record["seconds"])
        self.last_done = self.clock()
        per_second, hit_rate = rates(record)
        self._emit(self._record("task", run=record["run"], fold=record["fold"],
                                group=record["group"], iteration=record["iteration"],
                                best_fitness=record["best_fitness"],
                                best_size=record["best_size"],
                                evaluations_per_second=per_second, archive_hit_rate=hit_rate))

    def _abandon(self):
        """Close the file after a failed write, dropping what could not be written."""
        try:
            self.file.close()
        except OSError:
            pass

    def close(self):
        """Write the "end" record and close the file."""
        if self.file.closed:
            return
        self._emit(self._record("end"))
        self.lines.end()
        self.file.close()


def task_record(task, result, group_index):
    """The small record a group leader sends to world rank 0 when ``task`` is done
    (``result``: its :class:`~hpcswarm.store.records.TaskRecord`)."""
    last = result.history.last
    return {"run": task.run, "fold": task.fold, "group": group_index,
            "seconds": float(result.seconds), "iteration": int(last["iteration"]),
            "best_fitness": float(last["best_fitness"]), "best_size": int(last["best_size"]),
            "evaluations": int(last["evaluations"]), "archive_hits": int(last["archive_hits"])}
