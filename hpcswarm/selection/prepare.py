"""What a search reads, prepared once from the data a front door was given: the one path from
checked samples to the gene-major view of the k-NN scorer.

Every front door (:func:`hpcswarm.select`, :class:`~hpcswarm.selector.SwarmFeatureSelector`,
``hpcswarm run --algorithm``, ``hpcswarm evaluate`` and a job's tasks,
:mod:`hpcswarm.run.protocols`) checks its input once at its edge, with the validators of
:mod:`hpcswarm.inputs` (a matrix in memory) or the data layer's own (a dataset file, checked
when it is written and opened), then calls :func:`prepare`. It fits the in-fold
preprocessing (:mod:`hpcswarm.selection.preprocess`) on the samples given, applies it, scales
the values exactly when they come from memory (by a power of two,
:func:`hpcswarm.data.values.scale_exponent`) and writes the result gene by gene: the one copy
of the matrix a search makes. What flows inward is a :class:`TrainingView`, read without
further checks or copies by the scorer: the view draws the folds of a fitness once
(:meth:`TrainingView.validation`) and builds the search and every scorer on them
(:meth:`TrainingView.search`, :meth:`TrainingView.fitness`). A fitness setting that cannot run
on the samples is named as the door's user wrote it (:func:`mismatch_error`).

Memory: without preprocessing a dataset's memory-mapped ``X_genes`` is read as it is (no
copy); otherwise one gene-major float64 copy of the samples' kept genes
(``8 n_samples n_kept`` bytes), written a block of samples at a time, so that no
sample-major copy of the transformed matrix is ever held beside it. Given the communicator
of the ranks that read the same view (a task's rank group), the ranks of one node hold that
copy once, in memory they share (:meth:`hpcswarm.comm.MPIComm.node_array`): each transforms
and writes its own block of samples (the steps are elementwise, so the values are the same
bits whoever writes them), and :meth:`TrainingView.free` releases it.
"""

from dataclasses import dataclass, field, replace

import numpy as np

from hpcswarm.comm import as_comm, block_range
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor
from hpcswarm.selection.preprocess import fit_parameters, row_blocks


@dataclass(frozen=True)
class TrainingView:
    """The samples a search reads, checked and prepared (:func:`prepare`).

    Attributes
    ----------
    genes : GeneMajor
        Gene-major values of the samples: the kept genes, transformed and scaled (a
        dataset's memory map, its training columns, without preprocessing).
    y : ndarray of shape (n_samples,)
        The samples' labels, as checked at the door.
    fitted : Fitted or None
        The preprocessing fitted on these samples (None without).
    columns : ndarray of int64 of shape (genes.n_genes,)
        The original column of each gene of ``genes``.
    drawn : dict
        The fold ids drawn so far (:meth:`validation`), by validation and seed.
    held : PrivateArray or SharedArray or None
        What holds the values of ``genes`` when :func:`prepare` made them
        (:mod:`hpcswarm.node_array`), released by :meth:`free`; None: a dataset's map.
    """

    genes: GeneMajor
    y: np.ndarray
    fitted: object
    columns: np.ndarray
    drawn: dict = field(default_factory=dict, compare=False, repr=False)
    held: object = field(default=None, compare=False, repr=False)

    def free(self):
        """Release the values the view holds (collective over the ranks that prepared it);
        the view, and any array read from its ``genes`` without a copy, must not be read
        afterwards."""
        if self.held is not None:
            self.held.free()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc_info):
        """:meth:`free` at the end of a ``with`` block, unless an exception ends it: one
        rank's exception would leave it waiting in the collective free for ranks that
        never come (the process's end releases the memory)."""
        if exc_type is None:
            self.free()

    def validation(self, params, seed, ids=None):
        """The fold ids of the validation of ``params`` (``cv``, ``k``) on these samples
        from ``seed`` (:func:`~hpcswarm.selection.search.check_validation`), drawn the
        first time they are asked for (or ``ids``, the same folds drawn already: a job's
        task carries its own) and then read: the search, the scorers after it and the
        baselines of one task share one draw.

        Raises
        ------
        FitnessMismatch
            ``cv`` or ``k`` cannot run on these samples.
        """
        from hpcswarm.selection.search import check_validation  # evaluate never loads the swarm
        from hpcswarm.swarm.engine.state import run_seed_sequence

        root = run_seed_sequence(seed)
        key = (params["cv"], params["k"], root.entropy, tuple(root.spawn_key))
        if key not in self.drawn:
            self.drawn[key] = check_validation(self.y, params["k"], params["cv"], root, ids)
        return self.drawn[key]

    def fitness(self, params, seed, device="cpu"):
        """The fitness of ``params`` on these samples and its scorer
        (:func:`~hpcswarm.selection.search.make_fitness`), on the folds of
        :meth:`validation`."""
        from hpcswarm.selection.search import make_fitness

        return make_fitness(self.genes, self.y, params, seed, device=device,
                            folds=self.validation(params, seed))

    def search(self, spec, seed, **options):
        """:func:`~hpcswarm.selection.search.run_search` of ``spec`` (its preprocessing
        already applied here) on these samples, on the folds of :meth:`validation`;
        ``options`` as :class:`~hpcswarm.selection.search.SearchRun`'s fields."""
        from hpcswarm.selection.search import run_search

        return run_search(self.genes, self.y, replace(spec, preprocess=()), seed=seed,
                          folds=self.validation(spec.params, seed), **options)

    def sample_rows(self, X, samples=None):
        """The view's values sample-major, as the baselines and a held-out test read them: the
        rows ``samples`` of ``X`` without preprocessing, else a copy of the transformed rows
        (the same values the search read)."""
        if self.fitted is None:
            return np.asarray(X if samples is None else X[samples])
        return np.ascontiguousarray(self.genes.xt.T)


def mismatch_error(mismatch, chosen, naming, algorithm):
    """The :class:`~hpcswarm.errors.ParameterError` that names a
    :class:`~hpcswarm.selection.search.FitnessMismatch` as the door's user wrote it.

    Parameters
    ----------
    mismatch : FitnessMismatch
    chosen : bool
        The user gave the setting (else it is the method's default, and said so).
    naming : {"keyword", "param"}
        How the door's user names a setting: ``"keyword"``, an argument of
        :func:`hpcswarm.select` and of the selector; ``"param"``, ``--param`` of
        ``hpcswarm run``.
    algorithm : str
        The method whose default it is.

    Returns
    -------
    ParameterError
    """
    setting, value = mismatch.setting, mismatch.value
    if naming == "keyword":
        default = "" if chosen else " (the default)"
        return ParameterError(f"{setting}={value!r}{default} {mismatch.problem}; pass another "
                              f"{setting} (a keyword of select() and of the selector)")
    named = (f"--param {setting}={value}" if chosen
             else f"{setting}={value} (the default of {algorithm})")
    return ParameterError(f"{named} {mismatch.problem}; give another with --param "
                          f"{setting}=...")


@dataclass(frozen=True)
class SampleRows:
    """The rows ``samples`` of ``X``, read a block of rows at a time (a task's training rows
    of a memory-mapped dataset, without a copy of them all).

    Attributes
    ----------
    X : ndarray of shape (n_all, n_genes)
    samples : ndarray of int of shape (n_samples,)
    """

    X: object
    samples: np.ndarray

    @property
    def shape(self):
        """``(n_samples, n_genes)``."""
        return (self.samples.size, self.X.shape[1])

    def __getitem__(self, rows):
        """The rows of the slice ``rows``, as an array."""
        return self.X[self.samples[rows]]


def prepare(X, y, steps=(), *, X_genes=None, samples=None, finite=False, scaled=True,
            comm=None):
    """The :class:`TrainingView` a search reads of the samples ``samples`` of ``X, y``.

    Parameters
    ----------
    X : ndarray of shape (n_all, n_genes)
        Sample-major values, checked at the door (finite real numbers: the validators of
        :mod:`hpcswarm.inputs`, or a dataset's file); read, never written.
    y : ndarray of shape (n_all,)
        Checked labels.
    steps : sequence of (str, value)
        In-fold preprocessing (:func:`hpcswarm.selection.preprocess.parse_steps`), fitted on
        the samples used.
    X_genes : ndarray of shape (n_genes, n_all), optional
        The same values gene-major (a dataset's memory-mapped ``X_genes``): without steps
        the view reads it, without a copy.
    samples : ndarray of int, optional
        The samples used (a task's training rows); None: all of them.
    finite : bool, default False
        The values are known finite (checked at the door, or recorded by a dataset file);
        else the view checks them once, block by block, as it reads them.
    scaled : bool, default True
        The values were already brought to a safe range (a dataset is, at load); False (a
        matrix from memory): the view is scaled by
        :func:`~hpcswarm.data.values.scale_exponent` of its largest magnitude, exactly, in
        place.
    comm : Comm, optional
        The ranks that prepare the same view, all with the same arguments (a task's rank
        group, a search's ranks; collective): those on one node hold one copy of the values
        between them (:meth:`TrainingView.free` releases it). None: serial, a private copy.

    Returns
    -------
    TrainingView

    Raises
    ------
    ValueError
        Values not known finite that are not.
    ParameterError
        A ``log2`` step on a value with ``x + pseudocount <= 0``; steps that make a value
        infinite or NaN. Raised on every rank of ``comm`` alike.
    """
    labels = y if samples is None else y[samples]
    if not steps and X_genes is not None:
        return TrainingView(GeneMajor(X_genes, samples, finite=finite), labels, None,
                            np.arange(X_genes.shape[0], dtype=np.int64))
    rows = X if samples is None else SampleRows(X, np.asarray(samples))
    fitted = fit_parameters(steps, rows, labels) if steps else None
    columns = (np.arange(rows.shape[1], dtype=np.int64) if fitted is None
               else fitted.genes)
    held = as_comm(comm).node_array((columns.size, rows.shape[0]), np.float64)
    try:
        _write(held, rows, fitted, steps, finite, scaled)
    except ValueError:
        held.free()
        raise
    return TrainingView(GeneMajor(held.array, finite=True), labels, fitted, columns,
                        held=held)


def _write(held, rows, fitted, steps, finite, scaled):
    """Fill ``held.array`` (gene-major) with ``rows`` transformed by ``fitted``: each rank of
    ``held.node`` its block of rows (:func:`~hpcswarm.comm.block_range`), checked and
    scaled; then every block published to every rank. A problem in any block is raised on
    every rank (the first block's, in row order)."""
    node, values = held.node, held.array
    start, stop = block_range(rows.shape[0], node.size, node.rank)
    problems = [p for p in node.allgather(_write_rows(values, rows, start, stop, fitted,
                                                      steps, finite)) if p is not None]
    if problems:
        kind, message = problems[0]
        raise (ParameterError if kind == "ParameterError" else ValueError)(message)
    if not scaled:
        from hpcswarm.data.values import scale_exponent

        part = values[:, start:stop]
        largest = max(float(part.max()), -float(part.min())) if part.size else 0.0
        largest = float(node.allreduce_max(np.array([largest]))[0])  # exact, any order
        exponent = scale_exponent(largest, values.dtype, values.shape[0])
        if exponent:
            np.ldexp(part, exponent, out=part)
    held.publish()


def _write_rows(values, rows, start, stop, fitted, steps, finite):
    """Rows ``start`` to ``stop`` of ``rows``, transformed, written to their columns of
    ``values`` a block at a time; ``(error kind, message)`` of a problem, else None."""
    for block in row_blocks(rows, start, stop):
        if fitted is not None:
            try:
                block = fitted.transform(block)
            except ParameterError as exc:
                return "ParameterError", str(exc)
            if not np.isfinite(block).all():
                return "ParameterError", (f"preprocess: the steps "
                                          f"{', '.join(name for name, _ in steps)} make "
                                          f"values that are NaN or infinite (values too "
                                          f"large for them?)")
        elif not finite and not np.isfinite(block).all():
            return "ValueError", "X holds NaN or infinite values"
        values[:, start:start + block.shape[0]] = block.T
        start += block.shape[0]
    return None
