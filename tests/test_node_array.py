"""The transformed matrix that the ranks of a rank group on one node hold once
(:mod:`hpcswarm.node_array`, :func:`hpcswarm.selection.prepare.prepare` with ``comm``): the
same bits as a private copy, the same search, an error raised on every rank, the memory freed
at a task's end, and the pre-flight's share of it.

Collective tests (``-m mpi``): ``make test`` runs them serially (a world of one rank, through
the MPI communicator) and under ``mpiexec -n 2``.
"""

import numpy as np
import pytest

from hpcswarm import node_array
from hpcswarm.comm import world
from hpcswarm.errors import ParameterError
from hpcswarm.run.plan import node_copy_share
from hpcswarm.run.protocols import TaskData, make_tasks, run_task
from hpcswarm.selection import preprocess
from hpcswarm.selection.prepare import prepare
from hpcswarm.selection.spec import SearchSpec
from synthetic import small_data

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def comm():
    with world() as duplicate:
        yield duplicate


def bits(values):
    return np.ascontiguousarray(values).view(np.uint64)


CASES = [  # (steps, magnitude of the values: 2**1000 needs the exact scaling)
    ([("minmax", True)], 1.0),
    ([("log2", True), ("minmax", True)], 1.0),
    ([("minmax", True), ("zscore", True), ("top_variance", 20)], 1.0),
    ([("top_anova", 30), ("minmax", True)], 1.0),
    ([], 2.0 ** 1000),
]


@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("steps, magnitude", CASES)
def test_the_node_shared_values_are_the_private_ones_bit_for_bit(comm, steps, magnitude, scaled,
                                                                  monkeypatch):
    monkeypatch.setattr(preprocess, "BLOCK_VALUES", 64)  # a few rows a block, blocks per rank
    X, y = small_data(seed=3, n_samples=41, n_genes=50)
    X = np.abs(X) * magnitude
    X[::4, 5] = -0.0  # signed zeros: a minimum keeps the same one
    samples = np.arange(40, 0, -3)
    private = prepare(X, y, steps, samples=samples, finite=True, scaled=scaled)
    shared = prepare(X, y, steps, samples=samples, finite=True, scaled=scaled, comm=comm)
    with shared:
        assert np.array_equal(bits(shared.genes.xt), bits(private.genes.xt))
        assert np.array_equal(shared.columns, private.columns)
        assert shared.held.node.size == comm.ranks_on_node()
        if steps:
            assert repr(shared.fitted.record()) == repr(private.fitted.record())
    assert isinstance(private.held, node_array.PrivateArray)
    if comm.size > 1:  # each rank wrote its block of samples only: the others' are shared
        assert isinstance(shared.held, node_array.SharedArray)
    assert magnitude == 1.0 or scaled or np.abs(private.genes.xt).max() < 1.0


def test_a_problem_in_one_ranks_block_is_raised_on_every_rank(comm):
    X, y = small_data(seed=4, n_samples=40, n_genes=20)
    X = np.abs(X)
    X[-1, 3] = -5.0  # the last sample: the last rank's block
    with pytest.raises(ParameterError, match=r"preprocess.log2: 1 value\(s\) with x \+ 1 <= 0"):
        prepare(X, y, [("log2", True)], finite=True, comm=comm)
    X[-1, 3] = np.nan
    with pytest.raises(ValueError, match="X holds NaN or infinite values"):
        prepare(X, y, [], comm=comm)
    comm.barrier()  # every rank left prepare, its window freed


def test_the_search_on_the_shared_values_is_the_serial_search(comm):
    X, y = small_data(seed=5, n_samples=36, n_genes=60)
    spec = SearchSpec.build("vlpso", {"n_particles": 7, "n_iterations": 6, "n_divisions": 3,
                                      "change_after": 2})
    assert spec.preprocess == (("minmax", None),)  # VLPSO's default: min-max scaling
    serial = prepare(X, y, spec.preprocess, finite=True, scaled=False).search(spec, seed=2)
    with prepare(X, y, spec.preprocess, finite=True, scaled=False, comm=comm) as view:
        parallel = view.search(spec, seed=2, comm=comm)
    assert np.array_equal(parallel.mask, serial.mask)
    assert parallel.fitness == serial.fitness
    assert ([{k: v for k, v in row.items() if k != "seconds"} for row in parallel.history]
            == [{k: v for k, v in row.items() if k != "seconds"} for row in serial.history])


def test_every_task_frees_its_shared_values(comm, monkeypatch):
    freed = []
    for kind in (node_array.PrivateArray, node_array.SharedArray):
        monkeypatch.setattr(kind, "free", lambda self, free=kind.free: (freed.append(1),
                                                                         free(self)))
    X, y = small_data(seed=6, n_samples=30, n_genes=25)
    tasks = make_tasks(y, "unbiased", [1], 7, folds=2, inner_cv=3)
    spec = SearchSpec.build("vlpso", {"n_particles": 4, "n_iterations": 2, "n_divisions": 4})
    for task in tasks:
        run_task(task, TaskData(X, y), spec, group=comm)
    assert len(freed) == len(tasks)


def test_a_ranks_share_of_the_copy_is_one_over_its_groups_ranks_on_the_node(comm):
    assert node_copy_share(comm, 0) == 1 / comm.ranks_on_node()
    assert node_copy_share(comm, comm.rank) == 1.0  # every rank a group: private copies
