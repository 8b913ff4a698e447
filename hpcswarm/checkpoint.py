"""The checkpoint file of a job: finished tasks and the latest snapshot of every unfinished one.

World rank 0 alone writes it, whole, through :func:`hpcswarm.atomic.atomic_hdf5` (built in
memory, then written under a temporary name in the same folder, ``fsync``, rename): a job
killed, or a disk full, during the write leaves the previous checkpoint intact. Layout (every object tagged with ``encoding-type`` and
``encoding-version``)::

    /                      "hpcswarm-checkpoint"; attrs identity (JSON), n_tasks
    /finished/task-NNNNNN  uint8: the task's result (the hpcswarm.records.TaskRecord of
                           protocols.run_task; a plain dict before records), pickled;
                           attrs run, fold, group
    /inflight/task-NNNNNN  group, the snapshot of hpcswarm.swarm.snapshot.take_snapshot:
                           attrs run, fold, iteration (the last round played), elapsed;
                           datasets position, velocity, pbest_position (float64) and mask,
                           pbest_mask (bool) (n_particles, n_genes); fitness, size,
                           pbest_fitness, pbest_size (n_particles,); rng_states
                           (n_particles, 48) uint8 (pack_rng); method_state (uint8, pickled)

The swarm arrays are plain datasets (``h5py``, ``h5dump`` show them); the rest of a search's
state and the finished results are pickled, so a checkpoint must only be resumed by whoever
wrote it (unpickling runs code, as loading any pickle does).

The identity (the whole resolved job: method, parameters, protocol, runs, seed, refinement,
size cap, preprocessing, device, conversion options..., and the dataset's SHA-256) must be
equal on resume; only the job keys that do not change results may change: output and
checkpoint paths, checkpoint cadence, labels, the number of ranks and the group layout
(those marked ``neutral`` in :data:`hpcswarm.jobfile.SCHEMA`).
"""

import json
import pickle
import time
from pathlib import Path

import h5py
import numpy as np

from hpcswarm.atomic import atomic_hdf5
from hpcswarm.encoding import check_tag, decode_value, tag
from hpcswarm.errors import DataError, HpcswarmError, ParameterError
from hpcswarm.records import TaskRecord

ENCODING = ("hpcswarm-checkpoint", "0.1.0")
_PICKLED = ("pickle", "0.1.0")
_SNAPSHOT = ("hpcswarm-snapshot", "0.1.0")
_GROUP = ("dict", "0.1.0")


def checkpoint_identity(job, dataset_sha256):
    """What makes a checkpoint belong to ``job``: a JSON-ready dict, the job's
    :meth:`~hpcswarm.jobfile.Job.identity` (every resolved key but those that do not change
    results) and the dataset's SHA-256."""
    return {**job.identity(), "dataset_sha256": dataset_sha256}


def task_record_of(result, task):
    """A finished task's result as a :class:`~hpcswarm.records.TaskRecord`: a checkpoint
    written before records holds the plain dict of the same values, without the task's rows
    (taken from ``task``)."""
    if isinstance(result, TaskRecord):
        return result
    return TaskRecord.from_json(dict(result, train_index=task.train, test_index=task.test))


def _pickled(group, name, value, encoding=_PICKLED):
    data = np.frombuffer(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    dataset = group.create_dataset(name, data=data)
    tag(dataset, encoding)
    return dataset


def _name(number):
    return f"task-{int(number):06d}"


def write_checkpoint(path, identity, n_tasks, finished, inflight):
    """Write the checkpoint atomically, replacing the previous one.

    Parameters
    ----------
    path : Path
    identity : dict
        :func:`checkpoint_identity` of the job.
    n_tasks : int
    finished : dict
        Task number -> ``(task, result, group index)``.
    inflight : dict
        Task number -> ``(task, snapshot)``; a snapshot is a dict of
        :func:`~hpcswarm.swarm.snapshot.take_snapshot` or a callable returning one (a
        snapshot still in the previous checkpoint, read only now).
    """
    with atomic_hdf5(path, overwrite=True, in_memory=True) as f:
        tag(f, ENCODING)
        f.attrs["identity"] = json.dumps(identity, sort_keys=True)
        f.attrs["n_tasks"] = int(n_tasks)
        done = f.create_group("finished")
        tag(done, _GROUP)
        for number in sorted(finished):
            task, result, group_index = finished[number]
            dataset = _pickled(done, _name(number), result)
            dataset.attrs.update(run=task.run, fold=task.fold, group=int(group_index))
        running = f.create_group("inflight")
        tag(running, _GROUP)
        for number in sorted(inflight):
            task, snapshot = inflight[number]
            snapshot = snapshot() if callable(snapshot) else snapshot
            group = running.create_group(_name(number))
            tag(group, _SNAPSHOT)
            group.attrs.update(run=task.run, fold=task.fold, iteration=snapshot["iteration"],
                               elapsed=snapshot["elapsed"])
            for key, array in snapshot["arrays"].items():
                group.create_dataset(key, data=array)
            group.create_dataset("method_state",
                                 data=np.frombuffer(snapshot["method_state"], dtype=np.uint8))


class Checkpoint:
    """A checkpoint opened for resuming (read-only, on every rank).

    The file stays open until :meth:`close`: a snapshot is read only when its task starts
    again, from this handle, even after world rank 0 has replaced the file by a newer one
    (the rename leaves this handle on the old file).

    Parameters
    ----------
    path : Path
    identity : dict
        :func:`checkpoint_identity` of the job resuming it.
    n_tasks : int
    unpickle : bool, default False
        Read every finished result now (world rank 0, which alone needs them): a record that
        does not read back is a :class:`DataError` (a damaged checkpoint) before any work.

    Attributes
    ----------
    path : Path
    finished : set of int
        Finished tasks (their results are read by :meth:`results`, on world rank 0 only).
    inflight : set of int
        Tasks with a snapshot.
    """

    def __init__(self, path, identity, n_tasks, unpickle=False):
        self.path = Path(path)
        try:
            self._file = h5py.File(self.path, "r")
        except OSError as exc:
            raise DataError(f"{self.path}: not a readable checkpoint ({exc}); start afresh "
                            "with --overwrite") from None
        try:
            try:
                self._check(identity, n_tasks)
                self.finished = {int(name[5:]) for name in self._file["finished"]}
                self.inflight = {int(name[5:]) for name in self._file["inflight"]}
            except HpcswarmError:
                raise
            except (KeyError, OSError, ValueError, TypeError) as exc:
                raise self._damaged("its layout", exc) from None
            self._results = self._unpickle_all() if unpickle else None
        except BaseException:
            self._file.close()
            raise

    def _damaged(self, what, exc):
        return DataError(f"{self.path}: damaged checkpoint: {what} does not read back "
                         f"({type(exc).__name__}: {exc}); start afresh with --overwrite (the "
                         "work it holds is lost)")

    def _unpickle_all(self):
        """Every finished result (and each snapshot's method state), unpickled now, so that
        a damaged record is found before the job starts."""
        results = {}
        for name, dataset in self._file["finished"].items():
            try:
                results[int(name[5:])] = (pickle.loads(dataset[()].tobytes()),
                                          int(dataset.attrs["group"]))
            except Exception as exc:  # noqa: BLE001 - unpickling damaged bytes raises anything
                raise self._damaged(f"the record of finished task {name}", exc) from None
        for name, group in self._file["inflight"].items():
            try:
                pickle.loads(group["method_state"][()].tobytes())
            except Exception as exc:  # noqa: BLE001
                raise self._damaged(f"the snapshot of running task {name}", exc) from None
        return results

    def _check(self, identity, n_tasks):
        f = self._file
        check_tag(f, ENCODING, self.path, "checkpoint")
        stored = json.loads(decode_value(f.attrs["identity"]))
        expected = json.loads(json.dumps(identity, sort_keys=True))
        differing = [key for key in sorted(set(stored) | set(expected))
                     if stored.get(key) != expected.get(key)]
        if differing or int(f.attrs["n_tasks"]) != n_tasks:
            raise ParameterError(
                f"{self.path}: this checkpoint belongs to another job (different "
                f"{', '.join(differing) or 'number of tasks'}); resume with the job that "
                f"wrote it, or delete the checkpoint to start again")

    def results(self):
        """Task number -> ``(result, group index)`` of every finished task (unpickled when the
        checkpoint was opened with ``unpickle``, else now)."""
        if self._results is None:
            self._results = self._unpickle_all()
        return self._results

    def snapshot(self, number):
        """The snapshot of task ``number`` as :func:`take_snapshot` made it, and ``source``:
        this file's path, which a damaged snapshot's error names."""
        group = self._file["inflight"][_name(number)]
        arrays = {key: group[key][()] for key in group if key != "method_state"}
        return {"iteration": int(group.attrs["iteration"]),
                "elapsed": float(group.attrs["elapsed"]), "arrays": arrays,
                "method_state": group["method_state"][()].tobytes(), "source": str(self.path)}

    def close(self):
        """Close the file."""
        self._file.close()


class CheckpointKeeper:
    """World rank 0's view of the job's progress, written out as the checkpoint when it grows.

    Every write replaces the whole file (finished results plus the latest snapshot of every
    running search, ``26 n_particles n_genes`` bytes each), so writes are spaced by at least
    ``min_seconds``: whatever arrives meanwhile is written by the first :meth:`maybe_write`
    after that. Rank 0 holds the latest snapshot of every running task in memory.

    Parameters
    ----------
    path : Path
    identity : dict
    tasks : list of Task
        Every task of the job.
    previous : Checkpoint, optional
        The checkpoint being resumed: its finished tasks and snapshots are carried over.
    min_seconds : float, default 0
        Least time between two writes.
    clock : callable, default time.monotonic
    """

    def __init__(self, path, identity, tasks, previous=None, min_seconds=0.0,
                 clock=time.monotonic):
        self.path = Path(path)
        self.identity = identity
        self.tasks = tasks
        self.min_seconds = float(min_seconds)
        self.clock = clock
        self.last_write = None
        self.dirty = False
        self.finished = {}
        self.inflight = {}
        if previous is not None:
            for number, (result, group_index) in previous.results().items():
                record = task_record_of(result, tasks[number])
                self.finished[number] = (tasks[number], record, group_index)
            for number in previous.inflight:
                self.inflight[number] = (tasks[number],
                                         lambda number=number: previous.snapshot(number))

    def snapshot(self, number, snapshot):
        """Record the latest snapshot of unfinished task ``number``; write if it is time."""
        self.inflight[number] = (self.tasks[number], snapshot)
        self.dirty = True
        self.maybe_write()

    def done(self, number, result, group_index):
        """Record finished task ``number`` (its snapshot is dropped); write if it is time."""
        self.inflight.pop(number, None)
        self.finished[number] = (self.tasks[number], result, group_index)
        self.dirty = True
        self.maybe_write()

    def maybe_write(self):
        """Write if something changed and ``min_seconds`` have passed since the last write."""
        if self.dirty and (self.last_write is None
                           or self.clock() - self.last_write >= self.min_seconds):
            self.write()

    def write(self):
        """Replace the checkpoint file by the current state (atomically)."""
        write_checkpoint(self.path, self.identity, len(self.tasks), self.finished,
                         self.inflight)
        self.last_write = self.clock()
        self.dirty = False

    def remove(self):
        """Delete the checkpoint (the job's results are complete and written)."""
        self.path.unlink(missing_ok=True)
