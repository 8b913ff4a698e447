"""The checkpoint file of a job: finished tasks and the latest snapshot of every unfinished one.

World rank 0 alone writes it, whole, through :func:`hpcswarm.store.atomic.atomic_hdf5` (built in
memory, then written under a temporary name in the same folder, ``fsync``, rename): a job
killed, or a disk full, during the write leaves the previous checkpoint intact. Layout (every
object tagged with ``encoding-type`` and ``encoding-version``)::

    /                        "hpcswarm-checkpoint"; attrs identity (JSON), n_tasks
    /finished/task-NNNNNN    a finished task's record as the results file holds it
                             ("hpcswarm-task", hpcswarm.store.records.TaskRecord.write_hdf5) and
                             its row of the results' /tasks table as attributes; attr refine
                             (the refinement's name, with a refinement)
    /inflight/task-NNNNNN    group, the snapshot of hpcswarm.swarm.engine.snapshot.take_snapshot:
                             attrs run, fold, iteration (the last round played), elapsed;
                             datasets position, velocity, pbest_position (float64) and mask,
                             pbest_mask (bool) (n_particles, n_genes); fitness, size,
                             pbest_fitness, pbest_size (n_particles,); rng_states
                             (n_particles, 48) uint8 (pack_rng)
    /inflight/task-NNNNNN/method_state
                             the rest of the search's state (hpcswarm.swarm.engine.statetree): tree
                             (a JSON string) and the numbered bool or numeric arrays it
                             names, arrays/0, arrays/1, ...

Everything is plain data that ``h5py`` and ``h5dump`` show; nothing is pickled, so opening a
checkpoint runs no code from it (PyTorch's ``torch.load`` went to ``weights_only`` for this
reason). A checkpoint of an earlier encoding-version (0.1, which pickled the records and
the search state) is refused without being read: the job must restart.

The identity (the whole resolved job: method, parameters, protocol, runs, seed, refinement,
size cap, preprocessing, device, conversion options..., and the dataset's SHA-256) must be
equal on resume; only the job keys that do not change results may change: output and
checkpoint paths, checkpoint cadence, labels, the number of ranks and the group layout
(those marked ``neutral`` in :data:`hpcswarm.run.jobfile.SCHEMA`). A parameter a method gained later
(:data:`hpcswarm.store.settings.LATER_PARAMS`) reads, where a stored identity lacks it, as the value that keeps the
behaviour from before it.
"""

import json
import time
from dataclasses import replace
from pathlib import Path

import h5py

from hpcswarm.errors import DataError, HpcswarmError, ParameterError
from hpcswarm.results.files import task_table
from hpcswarm.store.atomic import atomic_hdf5
from hpcswarm.store.encoding import (GROUP_ENCODING, check_tag, decode_value, read_tag, tag,
                                     write_array)
from hpcswarm.store.figures import stored_task_problem
from hpcswarm.store.reading import check_declared, checked_read, parse_json
from hpcswarm.store.records import TaskRecord
from hpcswarm.store.settings import with_later_params
from hpcswarm.swarm.engine.snapshot import SWARM_ARRAYS
from hpcswarm.swarm.engine.state import RNG_STATE_BYTES
from hpcswarm.swarm.engine.statetree import ARRAY_KINDS, decode_state

ENCODING = ("hpcswarm-checkpoint", "0.2.0")
_SNAPSHOT = ("hpcswarm-snapshot", "0.2.0")
_STATE = ("hpcswarm-state", "0.1.0")
_JSON = ("json", "0.1.0")
_TEXT = h5py.string_dtype("utf-8")


def checkpoint_identity(job, dataset_sha256):
    """What makes a checkpoint belong to ``job``: a JSON-ready dict, the job's
    :meth:`~hpcswarm.run.jobfile.Job.identity` (every resolved key but those that do not change
    results) and the dataset's SHA-256."""
    return {**job.identity(), "dataset_sha256": dataset_sha256}


def _name(number):
    return f"task-{int(number):06d}"


def _task_numbers(f, group, n_tasks):
    """The task numbers that ``f[group]`` holds (entries :func:`_name` names, each a task
    of the job); ValueError or TypeError naming the first entry that is not one."""
    entries = f[group]
    if not isinstance(entries, h5py.Group):
        raise TypeError(f"'{group}' is not a group")
    numbers = set()
    for name in entries:
        number = name[len("task-"):]
        if not (name.startswith("task-") and number.isdigit() and name == _name(number)
                and int(number) < n_tasks):
            raise ValueError(f"'{group}/{name}' names no task of this job (task-000000 to "
                             f"{_name(n_tasks - 1)})")
        numbers.add(int(number))
    return numbers



def _write_record(finished, number, record, group_index):
    """A finished task's record and its ``/tasks`` row (attributes)."""
    record = replace(record, group=int(group_index))
    group = record.write_hdf5(finished.create_group(_name(number)))
    group.attrs.update({column: values[0] for column, values in task_table([record]).items()})
    if record.refined is not None:
        group.attrs["refine"] = record.refined.method


def _read_record(group, n_genes=None, n_samples=None):
    """The record :func:`_write_record` wrote in ``group``; its index arrays may declare at
    most ``n_genes`` genes and ``n_samples`` samples (when given)."""
    refine = group.attrs.get("refine")
    return TaskRecord.from_hdf5(group, group.attrs,
                                "" if refine is None else decode_value(refine), n_genes,
                                n_samples)


def _snapshot_shape(name, dataset, n_particles, n_genes):
    """The shape a snapshot's array ``name`` may declare (:data:`SWARM_ARRAYS`' dimensions,
    each of particles and genes at most ``n_particles`` and ``n_genes`` when given; any,
    within the memory, for an array the swarm does not list)."""
    spec = SWARM_ARRAYS.get(name)
    if spec is None:
        return (None,) * dataset.ndim
    limits = {"particles": n_particles, "genes": n_genes}
    return tuple(RNG_STATE_BYTES if dim == "rng"
                 else None if limits[dim] is None else range(limits[dim] + 1)
                 for dim in spec.shape)


def _write_snapshot(running, task, snapshot):
    group = running.create_group(_name(task.number))
    tag(group, _SNAPSHOT)
    group.attrs.update(run=task.run, fold=task.fold, iteration=snapshot["iteration"],
                       elapsed=snapshot["elapsed"])
    for key, array in snapshot["arrays"].items():
        write_array(group, key, array)
    state = snapshot["method_state"]
    method = tag(group.create_group("method_state"), _STATE)
    tag(method.create_dataset("tree", data=state["tree"], dtype=_TEXT), _JSON)
    arrays = tag(method.create_group("arrays"), GROUP_ENCODING)
    for key, array in state["arrays"].items():
        write_array(arrays, key, array)


def write_checkpoint(path, identity, n_tasks, finished, inflight):
    """Write the checkpoint atomically, replacing the previous one.

    Parameters
    ----------
    path : Path
    identity : dict
        :func:`checkpoint_identity` of the job.
    n_tasks : int
    finished : dict
        Task number -> ``(task, record, group index)``
        (:class:`~hpcswarm.store.records.TaskRecord`).
    inflight : dict
        Task number -> ``(task, snapshot)``; a snapshot is a dict of
        :func:`~hpcswarm.swarm.engine.snapshot.take_snapshot` or a callable returning one (a
        snapshot still in the previous checkpoint, read only now).
    """
    with atomic_hdf5(path, overwrite=True, in_memory=True) as f:
        tag(f, ENCODING)
        f.attrs["identity"] = json.dumps(identity, sort_keys=True)
        f.attrs["n_tasks"] = int(n_tasks)
        done = tag(f.create_group("finished"), GROUP_ENCODING)
        for number in sorted(finished):
            task, record, group_index = finished[number]
            _write_record(done, number, record, group_index)
        running = tag(f.create_group("inflight"), GROUP_ENCODING)
        for number in sorted(inflight):
            task, snapshot = inflight[number]
            _write_snapshot(running, task, snapshot() if callable(snapshot) else snapshot)


_ABSENT = object()
"""A key one of two identities lacks."""


def _differences(stored, expected, prefix=""):
    """``(key, stored value, expected value)`` of every key whose values differ between two
    identities (:func:`checkpoint_identity`), tables compared key by key (``params.w``)."""
    for key in sorted(set(stored) | set(expected)):
        old, new = stored.get(key, _ABSENT), expected.get(key, _ABSENT)
        if isinstance(old, dict) and isinstance(new, dict):
            yield from _differences(old, new, f"{prefix}{key}.")
        elif old != new:
            yield f"{prefix}{key}", old, new


def _shown(value):
    """A value of an identity as the job file writes it (JSON), or ``absent``."""
    return "absent" if value is _ABSENT else json.dumps(value, sort_keys=True)


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
    read_all : bool, default False
        Read every finished record and every snapshot's method state now (world rank 0,
        which alone needs the records): one that does not read back, or a record holding an
        impossible value (:func:`~hpcswarm.store.figures.stored_task_problem`), is a :class:`DataError` (a damaged
        checkpoint) before any work.
    n_genes, n_samples : int, optional
        The dataset's size, which bounds the gene and sample indices of the records and the
        genes of a snapshot's swarm.
    n_particles : int, optional
        The most particles a snapshot's swarm may hold (the method's swarm size on all the
        dataset's genes). Every array's declared shape is checked against these sizes and
        the memory before it is read (:func:`~hpcswarm.store.reading.checked_read`).
    check_snapshot : callable, optional
        With ``read_all``, ``check_snapshot(snapshot)`` on every snapshot read
        (:meth:`snapshot`): a :class:`DataError` when one holds a value no search of the
        job can hold (:func:`hpcswarm.swarm.engine.snapshot.check_snapshot`), before any work.

    Attributes
    ----------
    path : Path
    finished : set of int
        Finished tasks (their records are read by :meth:`results`, on world rank 0 only).
    inflight : set of int
        Tasks with a snapshot.
    """

    def __init__(self, path, identity, n_tasks, read_all=False, *, n_genes=None,
                 n_samples=None, n_particles=None, check_snapshot=None):
        self.path = Path(path)
        self.n_genes, self.n_samples, self.n_particles = n_genes, n_samples, n_particles
        self.check_snapshot = check_snapshot
        try:
            self._file = h5py.File(self.path, "r")
        except OSError as exc:
            raise DataError(f"{self.path}: not a readable checkpoint ({exc}); start afresh "
                            "with --overwrite") from None
        try:
            try:
                self._check(identity, n_tasks)
                self.finished = _task_numbers(self._file, "finished", n_tasks)
                self.inflight = _task_numbers(self._file, "inflight", n_tasks)
                both = self.finished & self.inflight
                if both:
                    raise ValueError(f"task {_name(min(both))} is both finished and running")
            except HpcswarmError:
                raise
            except (KeyError, OSError, ValueError, TypeError, AttributeError) as exc:
                raise self._damaged("its layout", exc) from None
            self._results = self._read_all() if read_all else None
        except BaseException:
            self._file.close()
            raise

    def _damaged(self, what, exc):
        return DataError(f"{self.path}: damaged checkpoint: {what} does not read back "
                         f"({type(exc).__name__}: {exc}); start afresh with --overwrite (the "
                         "work it holds is lost)")

    def _read_all(self):
        """Every finished record, read now, and every snapshot's method state, decoded and
        checked (``check_snapshot``), so that a damaged one is found before the job starts."""
        results = {}
        for number in sorted(self.finished):
            try:
                group = self._file["finished"][_name(number)]
                record = _read_record(group, self.n_genes, self.n_samples)
                problem = stored_task_problem(record, group.attrs, self.n_genes,
                                              self.n_samples)
            except (KeyError, OSError, ValueError, TypeError, AttributeError) as exc:
                raise self._damaged(f"the record of finished task {_name(number)}",
                                    exc) from None
            if problem is not None:
                raise DataError(f"{self.path}: damaged checkpoint: the record of finished "
                                f"task {_name(number)}: {problem}; start afresh with "
                                "--overwrite (the work it holds is lost)")
            results[number] = (record, record.group)
        for number in sorted(self.inflight):
            try:
                snapshot = self.snapshot(number)
                decode_state(snapshot["method_state"])
                if self.check_snapshot is not None:
                    self.check_snapshot(snapshot)
            except HpcswarmError:
                raise
            except (KeyError, IndexError, OSError, ValueError, TypeError,
                    AttributeError) as exc:
                raise self._damaged(f"the snapshot of running task {_name(number)}",
                                    exc) from None
        return results

    def _check(self, identity, n_tasks):
        f = self._file
        check_tag(f, ENCODING, self.path, "checkpoint")
        version = read_tag(f)[1]
        if version != ENCODING[1]:
            pickled = (" (it holds pickled records and search states, which are never loaded)"
                       if version.startswith("0.1.") else "")
            raise DataError(f"{self.path}: checkpoint encoding-version {version!r} cannot be "
                            f"resumed by this hpcswarm (it reads {ENCODING[1]}){pickled}; "
                            "the job must restart: run it again with --overwrite (the work "
                            "the checkpoint holds is lost)")
        stored = with_later_params(parse_json(decode_value(f.attrs["identity"])))
        stored["number of tasks"] = int(f.attrs["n_tasks"])
        expected = json.loads(json.dumps(identity, sort_keys=True))
        expected["number of tasks"] = n_tasks
        differing = [f"{key} = {_shown(old)} in the checkpoint, {_shown(new)} in this job"
                     for key, old, new in _differences(stored, expected)]
        if differing:
            raise ParameterError(
                f"{self.path}: this checkpoint belongs to another job ({'; '.join(differing)}"
                "); resume with the job that wrote it, or delete the checkpoint to start again")

    def results(self):
        """Task number -> ``(record, group index)`` of every finished task (read when the
        checkpoint was opened with ``read_all``, else now)."""
        if self._results is None:
            self._results = self._read_all()
        return self._results

    def snapshot(self, number):
        """The snapshot of task ``number`` as :func:`take_snapshot` made it, and ``source``:
        this file's path, which a damaged snapshot's error names. Each array's declared shape
        and type are checked first (ValueError naming it)."""
        group = self._file["inflight"][_name(number)]
        arrays = {key: checked_read(group[key], f"'{group[key].name}'",
                                    _snapshot_shape(key, group[key], self.n_particles,
                                                    self.n_genes), "biuf")
                  for key in group if key != "method_state"}
        method = group["method_state"]
        check_declared(method["tree"], f"'{method.name}/tree'", (), "T")
        state = {"tree": method["tree"].asstr()[()],
                 "arrays": {key: checked_read(array, f"'{array.name}'", (None,) * array.ndim,
                                              ARRAY_KINDS)
                            for key, array in method["arrays"].items()}}
        return {"iteration": group.attrs["iteration"],  # checked when it is restored
                "elapsed": float(group.attrs["elapsed"]), "arrays": arrays,
                "method_state": state, "source": str(self.path)}

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
            for number, (record, group_index) in previous.results().items():
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
