"""Where a job's wall time went: the closing line of ``hpcswarm run``.

The parts are measured one after the other on world rank 0 (start-up, pre-flight, the
tasks, writing the results), so that they add up to the command's wall time; the tasks'
own seconds (every group's) are split into the search and what follows it (a refinement,
the baselines and the test), from each task's record.
"""

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Optional


def process_seconds():
    """Seconds since this process started (Linux ``/proc``), or None where not known."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as uptime:
            since_boot = float(uptime.read().split()[0])
        return max(0.0, since_boot - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def command_startup():
    """Seconds from this process's start to now when the process is the ``hpcswarm``
    command (its script, or ``python -m hpcswarm``), else None (a call from Python, whose
    process started before and for other work)."""
    main = getattr(sys.modules.get("__main__"), "__spec__", None)
    if os.path.basename(sys.argv[0]) != "hpcswarm" and getattr(main, "name", None) != (
            "hpcswarm.__main__"):
        return None
    return process_seconds()


@dataclass
class JobTimes:
    """The parts of a job's wall time, filled in as it runs (world rank 0).

    Attributes
    ----------
    startup : float or None
        Seconds from the process's start to the command's (imports, reading the job).
    clock : callable
        Monotonic seconds.
    preflight, tasks, writing : float
        Seconds of the pre-flight, of the task farm, of writing the results.
    n_groups : int
    task_seconds, search_seconds : list of float
        Each task's seconds and its search's (every group's tasks).
    """

    startup: Optional[float] = None
    clock: object = time.perf_counter
    started: float = field(default=None)
    preflight: float = 0.0
    tasks: float = 0.0
    writing: float = 0.0
    n_groups: int = 1
    task_seconds: list = field(default_factory=list)
    search_seconds: list = field(default_factory=list)

    def __post_init__(self):
        if self.started is None:
            self.started = self.clock()

    def add_tasks(self, results):
        """The :class:`~hpcswarm.store.records.TaskRecord` of every task of the job."""
        for result in results:
            self.task_seconds.append(float(result.seconds))
            self.search_seconds.append(float(result.history.last["seconds"]))

    def line(self):
        """``time: ...``: the parts, their sum and the wall time so far, then the tasks'
        seconds split into searching and what follows the search."""
        wall = self.clock() - self.started + (self.startup or 0.0)
        parts = ([] if self.startup is None else [("start-up", self.startup)]) + [
            ("pre-flight", self.preflight), ("tasks", self.tasks),
            ("writing the results", self.writing)]
        text = ", ".join(f"{seconds:.1f} s {name}" for name, seconds in parts)
        searching, total = sum(self.search_seconds), sum(self.task_seconds)
        groups = f" on {self.n_groups} groups" if self.n_groups > 1 else ""
        return (f"time: {text}; {sum(s for _, s in parts):.1f} s of {wall:.1f} s wall. The "
                f"{len(self.task_seconds)} tasks{groups}: {searching:.1f} s searching, "
                f"{max(0.0, total - searching):.1f} s after the search (refinement, "
                f"baselines, test)")
