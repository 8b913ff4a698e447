"""Stop requests: SIGTERM or SIGUSR1 on any rank makes every rank of the job stop cleanly.

Outside a job's rounds (``convert``, ``report``, a single search, a job's start-up), SIGTERM
unwinds the command like Ctrl-C (:mod:`hpcswarm.termination`). A job installs
:class:`StopRequest` for its rounds, which checkpoints instead, and gives the signal back when
done.

SLURM sends SIGTERM at the time limit (then SIGKILL after ``KillWait``, 30 s by default) and,
with ``--signal``, SIGUSR1 some minutes before; ``scancel`` sends SIGTERM; srun, ``mpiexec``
and ``mpirun`` forward both to every rank. A rank that receives one only records it (a
signal handler must not communicate). The job's hooks call :meth:`StopRequest.check` once
per round and between tasks; each group agrees on it with one collective per round
(:class:`hpcswarm.run.job.TaskHooks`), snapshots its swarm and leaves.

When the signal reaches some ranks only (``kill`` of one process), the request is passed on:
a rank other than 0 tells world rank 0 once, world rank 0 tells every other rank once
(point-to-point messages, tested for without waiting). :meth:`StopRequest.finish`, called
collectively at the end, receives every message still on its way, so none is left behind.
"""

import signal
import time

import numpy as np

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)
"""Signals that ask a job to checkpoint and stop."""

REQUEST_TAG, STOP_TAG = 73, 74
"""Tags of "stop, please" (to world rank 0) and "stop" (from world rank 0)."""


class StopRequest:
    """The job-wide stop flag of one rank.

    Parameters
    ----------
    world : SerialComm or MPIComm
        The job's communicator; every rank builds one and calls :meth:`finish`.

    Attributes
    ----------
    signal_name : str or None
        The first signal this rank received, e.g. ``"SIGTERM"``, or heard of from another
        rank (``"SIGTERM on rank 3"``).
    """

    def __init__(self, world):
        self.world = world
        self.signal_name = None
        self._stopping = False
        self._requested = False  # this rank (not 0) told rank 0
        self._told_everyone = False  # rank 0 told every other rank
        self._heard = False  # this rank (not 0) heard rank 0's stop
        self._received = 0  # requests rank 0 has received
        self._requests = []
        self._previous = {}

    def install(self):
        """Handle :data:`STOP_SIGNALS` (until :meth:`restore`); returns ``self``."""
        for number in STOP_SIGNALS:
            self._previous[number] = signal.signal(number, self._on_signal)
        return self

    def _on_signal(self, number, frame):
        if self.signal_name is None:
            self.signal_name = signal.Signals(number).name

    def check(self):
        """Whether the job must stop; passes a new request on (never waits)."""
        world = self.world
        if self.signal_name is not None:
            self._stopping = True
        if world.rank == 0:
            received = world.poll(REQUEST_TAG)
            if received:
                self._received += len(received)
                self._stopping = True
                self.signal_name = self.signal_name or received[0]
            if self._stopping and not self._told_everyone and world.size > 1:
                self._told_everyone = True
                self._requests += [world.isend(self.signal_name, rank, STOP_TAG)
                                   for rank in range(1, world.size)]
        else:
            heard = [] if self._heard else world.poll(STOP_TAG)
            if heard:
                self._heard = self._stopping = True
                self.signal_name = self.signal_name or heard[0]
            if self._stopping and not self._requested and not self._heard:
                self._requested = True
                self._requests.append(world.isend(f"{self.signal_name} on rank {world.rank}",
                                                  0, REQUEST_TAG))
        return self._stopping

    def finish(self):
        """Receive every stop message still on its way (collective over the world).

        Returns whether any rank asked to stop (also kept as :attr:`stopped`).
        """
        world = self.world
        if world.size > 1:
            requested = world.gather(self._requested, root=0)
            if world.rank == 0:
                expected = sum(requested[1:])
                while self._received < expected:
                    received = world.poll(REQUEST_TAG)
                    self._received += len(received)
                    if received:  # the group's collective told rank 0 before the message did
                        self.signal_name = self.signal_name or received[0]
                    else:
                        time.sleep(0.001)
                told = self._told_everyone
            told = world.bcast(told if world.rank == 0 else None, root=0)
            if world.rank != 0 and told and not self._heard:
                while not world.poll(STOP_TAG):
                    time.sleep(0.001)
                self._heard = True
            for request in self._requests:
                request.wait()
        self.stopped = bool(world.allreduce_max(np.array([int(self._stopping)]))[0])
        return self.stopped

    def restore(self):
        """Put back the signal handlers :meth:`install` replaced (local; safe to repeat)."""
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous = {}
