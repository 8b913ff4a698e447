"""The collectives the swarm adds to hpcswarm.comm, and block ownership (serial and mpiexec)."""

import numpy as np
import pytest

from hpcswarm.comm import SerialComm, block_owner, block_range, world
from hpcswarm.swarm.operators.mean import fixed_point_bits, swarm_mean


@pytest.mark.parametrize("n_items", [1, 5, 100, 101])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 200])
def test_block_owner_inverts_block_range(n_items, size):
    for rank in range(size):
        start, stop = block_range(n_items, size, rank)
        assert [block_owner(n_items, size, i) for i in range(start, stop)] == [rank] * (stop - start)
    with pytest.raises(ValueError, match="outside"):
        block_owner(n_items, size, n_items)


def test_serial_comm_buffer_collectives():
    comm = SerialComm()
    rows = np.arange(6.0).reshape(3, 2)
    assert np.array_equal(comm.allgather_array(rows), rows[None])
    assert np.array_equal(comm.broadcast(rows), rows)
    assert np.array_equal(comm.allreduce_min(rows), rows)
    assert np.array_equal(comm.alltoallv(rows, [3], [3]), rows)
    assert np.array_equal(comm.allgatherv(rows, counts=[3]), rows)
    assert comm.bytes_sent == 0


def test_fixed_point_mean_is_exact_on_dyadic_values_and_never_overflows():
    assert fixed_point_bits(100) == 52 and fixed_point_bits(2**20) == 41
    assert np.array_equal(swarm_mean(np.array([[0.0, 1.0], [1.0, 1.0]])), [0.5, 1.0])
    ones = np.ones((4096, 3))
    assert np.array_equal(swarm_mean(ones), [1.0, 1.0, 1.0])
    rng = np.random.default_rng(0)
    x = rng.random((50, 7))
    assert np.abs(swarm_mean(x) - x.mean(axis=0)).max() < 1e-15
    # any split of the rows into blocks gives the same bits (the sum is exact)
    parts = [x[:13], x[13:14], x[14:]]
    scale = 2.0 ** fixed_point_bits(50)
    total = sum((p * scale).astype(np.int64).sum(axis=0) for p in parts)
    assert np.array_equal(total / scale / 50, swarm_mean(x))


@pytest.mark.mpi
def test_buffer_collectives_across_ranks():
    with world() as comm:
        rank, size = comm.rank, comm.size
        table = comm.allgather_array(np.array([rank, 10 * rank], dtype=np.int64))
        assert comm.allreduce_min(np.array([rank + 3, -rank])).tolist() == [3, -(size - 1)]
        assert comm.allreduce_max(np.array([rank + 3, -rank])).tolist() == [size + 2, 0]
        assert table.tolist() == [[r, 10 * r] for r in range(size)]
        counts = np.arange(size) % 3
        local = np.full((counts[rank], 2), float(rank))
        gathered = comm.allgatherv(local, counts=counts)
        assert gathered[:, 0].tolist() == [float(r) for r in range(size) for _ in range(counts[r])]
        root = size - 1
        assert comm.broadcast(np.full(4, rank, dtype=np.uint8), root=root).tolist() == [root] * 4
        # every rank sends (rank + dest) rows to each other rank, each row tagged (source, dest)
        send_counts = np.array([0 if d == rank else rank + d for d in range(size)])
        recv_counts = np.array([0 if s == rank else s + rank for s in range(size)])
        send = np.array([[rank, d] for d in range(size) for _ in range(send_counts[d])],
                        dtype=np.float64).reshape(-1, 2)
        before = comm.bytes_sent
        received = comm.alltoallv(send, send_counts, recv_counts)
        expected = [[s, rank] for s in range(size) for _ in range(recv_counts[s])]
        assert received.tolist() == expected
        assert comm.bytes_sent - before == 16 * int(send_counts.sum())



@pytest.mark.mpi
def test_a_stop_heard_through_a_collective_still_names_the_signal_and_its_rank():
    """The last rank is signalled; rank 0 learns of the stop from the group's collective
    before it polls the message, and :meth:`StopRequest.finish` still names the signal."""
    from hpcswarm.run.interrupt import StopRequest

    with world() as comm:
        stopper = StopRequest(comm)
        last = comm.size - 1
        signalled = comm.size > 1 and comm.rank == last
        if signalled:
            stopper.signal_name = "SIGTERM"  # what the handler records
            assert stopper.check()  # tells rank 0, without waiting
        stop = comm.allreduce_max(np.array([int(signalled)]))[0]  # the group's agreement
        assert stop == (comm.size > 1)
        assert stopper.finish() == (comm.size > 1)
        if comm.rank == 0 and comm.size > 1:
            assert stopper.signal_name == f"SIGTERM on rank {last}"

@pytest.mark.mpi
def test_a_round_best_tied_across_ranks_goes_to_the_lowest_particle_not_rank():
    """Equal fitness and size on every rank, the particles dealt against rank order (the
    last rank holds the lowest particle): the round's best is that particle's subset, and a
    deal's allgather puts every rank's rows back in particle order."""
    from hpcswarm.swarm.engine.deal import Deal
    from hpcswarm.swarm.engine.exchange import settle_round
    from hpcswarm.swarm.engine.ledger import RoundLedger

    with world() as comm:
        size, rank = comm.size, comm.rank
        ledger = RoundLedger()
        mask = np.zeros(size, dtype=bool)
        mask[rank] = True
        ledger.add_many(mask[None, :], [0.5], [True], 0, [size - 1 - rank])
        settled = settle_round(comm, ledger, size, lambda value, genes: True)
        assert settled.computed == size
        assert np.flatnonzero(settled.best[2]).tolist() == [size - 1]
        deal = Deal(np.arange(2 * size)[::-1] % size, size, rank, np.arange(2 * size))
        mine = deal.local()
        rows = deal.allgather(comm, mine.astype(float), np.arange(2 * size))
        assert rows.tolist() == list(range(2 * size))


@pytest.mark.mpi
def test_ranks_keeping_different_numbers_of_states_deal_the_particles_alike():
    """Each rank's cache budget is its own (the memory it sees); the deal counts the
    fewest, so that every rank computes the same owners."""
    from types import SimpleNamespace

    from hpcswarm.swarm.engine.deal import Deal
    from hpcswarm.swarm.engine.evaluation import EvaluationService

    selected = np.arange(40) % 7 * 100 + 1
    with world() as comm:
        service = EvaluationService(SimpleNamespace(n_genes=8), comm, cache_states=comm.rank)
        deal = service.deal(40, selected)
        assert np.array_equal(deal.owner, Deal.by_cost(selected, comm.size, 0, 0).owner)
        assert len({tuple(owners) for owners in comm.allgather(deal.owner.tolist())}) == 1


def test_balanced_blocks_deal_contiguous_runs_of_equal_cost():
    from hpcswarm.swarm.engine.exchange import balanced_blocks

    assert balanced_blocks([5, 5, 5, 5], 2).tolist() == [0, 0, 1, 1]
    assert balanced_blocks([30, 1, 1, 1, 1, 1, 1], 2).tolist() == [0, 1, 1, 1, 1, 1, 1]
    assert balanced_blocks([1, 1], 4).tolist() == [1, 3]
    assert balanced_blocks([], 3).size == 0
    deal = balanced_blocks(np.random.default_rng(0).integers(1, 100, 50), 3)
    assert np.all(np.diff(deal) >= 0) and set(deal.tolist()) == {0, 1, 2}


def test_a_packed_generator_continues_its_stream_elsewhere():
    from hpcswarm.swarm.engine.state import RNG_STATE_BYTES, pack_rng, unpack_rng

    rng = np.random.default_rng(np.random.SeedSequence(3, spawn_key=(0, 7)))
    rng.random(5)
    rng.integers(0, 10, 3, dtype=np.uint32)  # leaves a buffered 32-bit half
    packed = pack_rng(rng)
    assert packed.dtype == np.uint8 and packed.size == RNG_STATE_BYTES
    copy = unpack_rng(packed.copy())
    assert np.array_equal(copy.random(4), rng.random(4))
    assert np.array_equal(copy.integers(0, 99, 5, dtype=np.uint32),
                          rng.integers(0, 99, 5, dtype=np.uint32))


# ------------------------------------------------------------------ the Comm protocol, grids
def test_both_communicators_satisfy_the_comm_protocol():
    from hpcswarm.comm import Comm, MPIComm

    assert isinstance(SerialComm(), Comm)
    assert all(callable(getattr(MPIComm, name)) for name in ("free", "split", "__enter__"))
    with SerialComm() as comm:
        assert comm.split(0, 0).size == 1


@pytest.mark.parametrize("size, n_shards", [(1, 1), (4, 1), (4, 2), (4, 4), (6, 3)])
def test_grid_position_puts_the_shards_of_a_group_on_consecutive_ranks(size, n_shards):
    from hpcswarm.comm import grid_position

    cells = [grid_position(size, rank, n_shards) for rank in range(size)]
    assert cells == [(g, s) for g in range(size // n_shards) for s in range(n_shards)]


@pytest.mark.parametrize("n_shards", [0, 3, 2.0, True])
def test_a_grid_needs_a_divisor_of_the_ranks(n_shards):
    from hpcswarm.comm import grid_position

    with pytest.raises(ValueError, match="must divide the 4 ranks"):
        grid_position(4, 0, n_shards)


@pytest.mark.mpi
def test_a_split_grid_sums_over_shards_and_over_particle_groups():
    from hpcswarm.comm import split_grid

    with world() as comm:
        n_shards = 2 if comm.size % 2 == 0 else 1
        with split_grid(comm, n_shards) as grid:
            assert (grid.n_groups, grid.n_shards) == (comm.size // n_shards, n_shards)
            assert (grid.particles.size, grid.shards.size) == (grid.n_groups, n_shards)
            group, shard = divmod(comm.rank, n_shards)
            assert (grid.particles.rank, grid.shards.rank) == (group, shard)
            in_group = grid.shards.allreduce_sum(np.array([comm.rank]))[0]
            assert in_group == sum(range(group * n_shards, (group + 1) * n_shards))
            in_shard = grid.particles.allreduce_sum(np.array([comm.rank]))[0]
            assert in_shard == sum(range(shard, comm.size, n_shards))
        from mpi4py import MPI

        assert grid.particles.comm == MPI.COMM_NULL and grid.shards.comm == MPI.COMM_NULL
    assert comm.comm == MPI.COMM_NULL
