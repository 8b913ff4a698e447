"""What the machine offers a process: its memory, or the limit its cgroup sets.

Queries of the operating system only (no MPI, no hpcswarm state), shared by the job pre-flight
(:mod:`hpcswarm.run.preflight`) and the converters' in-memory check (:mod:`hpcswarm.data.build`).
"""

import math
import os
from pathlib import Path

from hpcswarm.errors import ParameterError

MEMORY_SHARE = 0.8
"""Share of the available memory a rank may be estimated to use."""


def cgroup_limit(path="/sys/fs/cgroup/memory.max"):
    """The cgroup v2 memory limit in bytes, or None (no file, or "max")."""
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def check_memory_limit(limit_gb):
    """``limit_gb`` (``--memory-limit``, a job's ``memory_limit`` option) if it is None or a
    finite number of GB above zero; else :class:`~hpcswarm.errors.ParameterError`."""
    if limit_gb is not None and not (isinstance(limit_gb, (int, float))
                                     and not isinstance(limit_gb, bool)
                                     and 0 < limit_gb < math.inf):
        raise ParameterError(f"--memory-limit must be a positive number of GB, got {limit_gb}")
    return limit_gb


def resident_memory(path="/proc/self/statm"):
    """Bytes this process holds in memory now (its resident set), or 0 where unknown."""
    try:
        return int(Path(path).read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def available_memory(ranks_on_node, limit_gb=None):
    """``(bytes for one rank, description)``: the node's memory (or cgroup limit, or
    ``limit_gb``, checked by :func:`check_memory_limit`) divided by the ranks on the node."""
    if check_memory_limit(limit_gb) is not None:
        total, what = int(limit_gb * 1e9), "--memory-limit"
    else:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        what = "physical memory"
        limit = cgroup_limit()
        if limit is not None and limit < total:
            total, what = limit, "cgroup memory.max"
    described = f"{what} {total / 1e9:.3g} GB / {ranks_on_node} rank(s) on the node"
    return total // max(1, ranks_on_node), described
