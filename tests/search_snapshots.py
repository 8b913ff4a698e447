"""Snapshots of a search taken as a checkpoint takes them, shared by the test modules (pytest
puts ``tests/`` on the path)."""

import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from hpcswarm.run.checkpoint import Checkpoint, write_checkpoint
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.engine.snapshot import take_snapshot


class _Stop(Exception):
    pass


def through_checkpoint(snapshot):
    """``snapshot`` written to a checkpoint file and read back, as a resumed job reads it
    (its ``source`` is that file, since deleted)."""
    task = SimpleNamespace(number=0, run=0, fold=0)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "snapshot.checkpoint.h5"
        write_checkpoint(path, {}, 1, {}, {0: (task, snapshot)})
        checkpoint = Checkpoint(path, {}, 1, read_all=True)
        try:
            return checkpoint.snapshot(0)
        finally:
            checkpoint.close()


def taken_at(X, y, algorithm, params, stop_at, *, seed):
    """The snapshot :func:`take_snapshot` makes of an ``algorithm`` search at the end of round
    ``stop_at``; the search stops there."""
    taken = []

    def hook(search):
        if search.iteration == stop_at:
            taken.append(take_snapshot(search))
            raise _Stop

    with pytest.raises(_Stop):
        run_search(X, y, algorithm, params, seed=seed, hooks=SearchHooks(checkpoint=hook))
    return taken[0]


def snapshot_at(X, y, algorithm, params, stop_at, *, seed):
    """:func:`taken_at`'s snapshot passed through a checkpoint file
    (:func:`through_checkpoint`)."""
    return through_checkpoint(taken_at(X, y, algorithm, params, stop_at, seed=seed))
