"""Snapshots of a search taken as a checkpoint takes them, shared by the test modules (pytest
puts ``tests/`` on the path)."""

import pickle

import pytest

from hpcswarm.search import run_search
from hpcswarm.swarm.snapshot import take_snapshot


class _Stop(Exception):
    pass


def snapshot_at(X, y, algorithm, params, stop_at, *, seed):
    """The snapshot of an ``algorithm`` search at the end of round ``stop_at``, passed through
    pickle as a checkpoint passes it; the search stops there."""
    taken = []

    def hook(search):
        if search.iteration == stop_at:
            taken.append(pickle.loads(pickle.dumps(take_snapshot(search))))
            raise _Stop

    with pytest.raises(_Stop):
        run_search(X, y, algorithm, params, seed=seed, checkpoint=hook)
    return taken[0]
