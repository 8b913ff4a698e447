"""Every way a ``data`` value (a command's DATA argument, a job's ``data`` key) becomes a Dataset.

- ``builtin:NAME``: a dataset bundled with hpcswarm, opened memory-mapped;
- ``sklearn:NAME``: a dataset shipped inside the installed scikit-learn (never fetched),
  built in memory;
- ``panel:NAME``: a generated design set of :mod:`hpcswarm.datasets.panel`, drawn from its
  fixed seed in memory;
- an hpcswarm HDF5 file (``.h5``, ``.hdf5``): opened memory-mapped;
- any other file :func:`~hpcswarm.data.convert.read_dataset` reads: converted in memory
  (:func:`open_data` for the commands, :func:`load_dataset` for users), or, for a job,
  converted once into the conversion cache and memory-mapped from there
  (:func:`load_job_dataset`), so that every rank maps one file and a later job with the same
  source and options converts nothing.
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from hpcswarm.comm import as_comm
from hpcswarm.data.convert import convert_file, read_dataset
from hpcswarm.data.dataset import Dataset, file_sha256
from hpcswarm.data.examples import example_path
from hpcswarm.data.formats import HDF5_EXTENSIONS
import hpcswarm.data.hdf5 as hdf5
from hpcswarm.data.hdf5 import open_dataset
from hpcswarm.data.textio import check_readable
from hpcswarm.data.values import checked
from hpcswarm.datasets.panel import PANEL_SETS, panel_set
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.version import __version__

BUILTIN_PREFIX = "builtin:"
SKLEARN_PREFIX = "sklearn:"
SKLEARN_DATASETS = ("wine", "breast_cancer")
"""``sklearn:NAME`` datasets: loaded from the installed scikit-learn package, never fetched."""
PANEL_PREFIX = "panel:"


def panel_dataset(name):
    """The generated design set ``name`` (:data:`hpcswarm.datasets.panel.PANEL_SETS`) as a
    Dataset in memory; its ``planted`` attribute names the planted genes by role."""
    if name not in PANEL_SETS:
        raise DataError(f"{PANEL_PREFIX}{name}: not a generated design set "
                        f"(choose {', '.join(PANEL_PREFIX + n for n in PANEL_SETS)})")
    drawn = panel_set(name)
    digest = hashlib.sha256(drawn.X.tobytes() + drawn.y.tobytes()).hexdigest()
    planted = {role: [drawn.gene_names[g] for g in genes]
               for role, genes in drawn.informative.items()}
    return Dataset(X=drawn.X, y=drawn.y, class_names=drawn.class_names,
                   gene_names=drawn.gene_names,
                   attrs={"source": f"{PANEL_PREFIX}{name}", "format": "panel",
                          "source_sha256": digest, "description": drawn.description,
                          "planted": json.dumps(planted),
                          "sha256_of": "float64 X bytes then int64 y bytes (C order)"})


def is_named(spec):
    """Whether ``spec`` names a dataset (``builtin:NAME``, ``sklearn:NAME``, ``panel:NAME``),
    not a file."""
    return str(spec).startswith((BUILTIN_PREFIX, SKLEARN_PREFIX, PANEL_PREFIX))


def is_hdf5(spec):
    """Whether ``spec`` names an hpcswarm HDF5 file by its extension (.h5, .hdf5)."""
    return Path(spec).suffix.lower() in HDF5_EXTENSIONS


def needs_conversion(spec):
    """Whether ``spec`` is an input file to convert (neither named nor HDF5)."""
    return not (is_named(spec) or is_hdf5(spec))


def source_path(spec):
    """The file behind a DATA argument (a bundled example's file for ``builtin:NAME``), or
    None for a dataset that is not a file (``sklearn:NAME``, ``panel:NAME``, an unknown
    bundled name): what no output of the same command may replace."""
    text = str(spec)
    if text.startswith(BUILTIN_PREFIX):
        try:
            return example_path(text[len(BUILTIN_PREFIX):])
        except DataError:  # no such bundled dataset: opening it will say so
            return None
    if text.startswith((SKLEARN_PREFIX, PANEL_PREFIX)):
        return None
    return Path(text)


def default_cache():
    """The default folder of datasets a job converts: ``$HPCSWARM_CACHE``, else
    ``$XDG_CACHE_HOME/hpcswarm``, else ``~/.cache/hpcswarm``."""
    if os.environ.get("HPCSWARM_CACHE"):
        return Path(os.environ["HPCSWARM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "hpcswarm"


def sklearn_dataset(name):
    """The scikit-learn dataset ``name`` (one of :data:`SKLEARN_DATASETS`), in memory."""
    import sklearn
    from sklearn import datasets

    if name not in SKLEARN_DATASETS:
        raise DataError(f"{SKLEARN_PREFIX}{name}: not a bundled scikit-learn dataset "
                        f"(choose {', '.join(SKLEARN_PREFIX + n for n in SKLEARN_DATASETS)})")
    bunch = getattr(datasets, f"load_{name}")()
    X = np.ascontiguousarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target, dtype=np.int64)
    digest = hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest()
    return Dataset(X=X, y=y, class_names=[str(c) for c in bunch.target_names],
                   gene_names=[str(f) for f in bunch.feature_names],
                   attrs={"source": f"{SKLEARN_PREFIX}{name}", "format": "sklearn",
                          "source_sha256": digest, "sklearn_version": sklearn.__version__,
                          "sha256_of": "float64 X bytes then int64 y bytes (C order)"})


def open_everywhere(path, comm=None):
    """:func:`~hpcswarm.data.hdf5.open_dataset` of ``path`` on every rank of ``comm``, its
    values checked once: each rank checks its block of genes and one ``allreduce_max``
    combines them (:func:`~hpcswarm.data.values.checked`). Collective; a failure on any rank
    is raised on every rank, so that no rank is left waiting."""
    comm = as_comm(comm)
    dataset = problem = None
    try:
        dataset = open_dataset(path, check_values=False)
    except DataError as exc:
        problem = exc
    if comm.size > 1:
        failed = comm.allreduce_max(np.array([problem is not None], dtype=np.int64))[0]
        if failed and problem is None:
            problem = DataError(f"{path}: does not open on every rank")
    if problem is not None:
        raise problem
    return checked(dataset, str(path), comm)


def load_dataset(spec, comm=None, **convert_options):
    """The dataset named by a DATA argument, for a user: ``X`` a plain ndarray.

    As :func:`open_data`, except that ``X`` is an :class:`numpy.ndarray` view of the same
    values (no copy: a memory-mapped file stays mapped), so that it behaves as any array
    (``astype`` gives an ndarray; AnnData writes it); ``X_genes`` stays as opened.

    Parameters
    ----------
    spec : str or Path
        ``builtin:NAME``, ``sklearn:NAME``, ``panel:NAME``, an hpcswarm ``.h5``/``.hdf5``
        file or any input file :func:`~hpcswarm.data.convert.read_dataset` reads, as
        ``spec`` of :func:`open_data`.
    comm : Comm, optional
        Ranks that all load ``spec`` (collective), as ``comm`` of :func:`open_data`; None:
        serial.
    **convert_options
        Options of :func:`~hpcswarm.data.convert.read_dataset` for an input file to convert
        in memory, as those of :func:`open_data`.

    Returns
    -------
    Dataset
    """
    dataset = open_data(spec, comm, **convert_options)
    dataset.X = np.asarray(dataset.X)
    return dataset


def open_data(spec, comm=None, **convert_options):
    """The dataset named by a DATA argument, as the commands and jobs open it.

    Parameters
    ----------
    spec : str or Path
        ``builtin:NAME``, ``sklearn:NAME``, ``panel:NAME``, an hpcswarm ``.h5``/``.hdf5``
        file (opened memory-mapped), or any input file
        :func:`~hpcswarm.data.convert.read_dataset` reads (converted in memory with
        ``convert_options``, nothing written).
    comm : Comm, optional
        Ranks that all load ``spec`` (collective) and share the check of its values (each
        a block of genes); None: serial.
    **convert_options
        Options of :func:`~hpcswarm.data.convert.read_dataset` (None means not given); not
        allowed with HDF5 files and named datasets.

    Returns
    -------
    Dataset
        ``X`` and ``X_genes`` read-only :class:`numpy.memmap` of an HDF5 file where it can
        be mapped.
    """
    text = str(spec)
    convert_options = {k: v for k, v in convert_options.items() if v is not None}
    if not needs_conversion(text) and convert_options:
        raise ParameterError(f"{text}: conversion options ({', '.join(sorted(convert_options))}) "
                             "apply only to input files that are converted, not to HDF5 "
                             "datasets or named ones")
    if text.startswith(BUILTIN_PREFIX):
        return open_everywhere(example_path(text[len(BUILTIN_PREFIX):]), comm)
    if text.startswith(SKLEARN_PREFIX):
        return checked(sklearn_dataset(text[len(SKLEARN_PREFIX):]), text)
    if text.startswith(PANEL_PREFIX):
        return checked(panel_dataset(text[len(PANEL_PREFIX):]), text)
    if is_hdf5(text):
        return open_everywhere(text, comm)
    return checked(read_dataset(text, **convert_options)[0], text)


def cache_name(source_sha256, options):
    """File name in the cache of a source converted with ``options`` (by content, not path).

    The key holds the dataset encoding version, so that a file cached in an older layout
    (e.g. without ``X_genes``) is never reused: the source is converted again.
    """
    key = json.dumps({"sha256": source_sha256, "options": options, "version": __version__,
                      "encoding": hdf5.ENCODING_VERSION}, sort_keys=True)
    return f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.h5"


def convert_into_cache(source, cache, options, convert=True):
    """Convert ``source`` with ``options`` into the folder ``cache`` unless already there;
    without ``convert``, a DataError when it is not (nothing is written).

    Returns
    -------
    Path
        The cached file, ``<source stem>-<cache_name>``.
    """
    source, cache = Path(source), Path(cache)
    check_readable(source)
    target = cache / f"{source.stem}-{cache_name(file_sha256(source), options)}"
    if target.is_file():
        return target
    if not convert:
        raise DataError(f"{source}: not yet converted ({target} is missing), and run "
                        f"--dry-run writes nothing: a run of the job converts it first")
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{cache}: cannot create the dataset cache ({exc.strerror})") from None
    try:
        convert_file(source, target, **options)  # streamed: bounded memory
    except DataError:
        if not target.is_file():  # another job converted the same file meanwhile: fine
            raise
    return target


def load_job_dataset(job, comm=None, convert=True):
    """The dataset of ``job`` on every rank of ``comm``; other files than HDF5 are converted
    once, into the cache (without ``convert``: found there, else a DataError).

    ``builtin:NAME``, ``sklearn:NAME``, ``panel:NAME`` and ``.h5`` files are opened as
    :func:`open_data` opens them; any other file is converted by rank 0 of ``comm`` into
    ``job.cache`` (named by the source's SHA-256, the conversion options and the dataset
    encoding version), after which every rank memory-maps the cached file. An error on
    rank 0 is raised on every rank.

    Parameters
    ----------
    job : hpcswarm.run.jobfile.Job
        Reads ``data``, ``convert`` (options), ``cache`` and ``source`` (the job file, named
        in messages).
    comm : Comm, optional
        The job's ranks (None: serial).
    convert : bool
        Whether a file not yet in the cache is converted (False: ``run --dry-run``, which
        writes nothing).
    """
    comm = as_comm(comm)
    if not needs_conversion(job.data):
        if job.convert:
            raise ParameterError(f"{job.source}: [convert] options apply only to files that "
                                 f"are converted, not to {job.data}")
        return open_data(job.data, comm)
    outcome = None
    if comm.rank == 0:
        try:
            outcome = ("ok", str(convert_into_cache(job.data, job.cache, job.convert,
                                                    convert)))
        except (DataError, ParameterError) as exc:
            outcome = (type(exc).__name__, str(exc))
    outcome = comm.bcast(outcome, root=0)
    if outcome[0] != "ok":
        raise (DataError if outcome[0] == "DataError" else ParameterError)(outcome[1])
    dataset = open_everywhere(outcome[1], comm)
    dataset.attrs.setdefault("job_data", job.data)
    return dataset


def dataset_sha256(dataset):
    """SHA-256 of the dataset file (or of the arrays for a dataset built in memory)."""
    digest = dataset.sha256
    if digest is None:
        digest = hashlib.sha256(np.ascontiguousarray(dataset.X).tobytes()
                                + np.asarray(dataset.y, dtype=np.int64).tobytes()).hexdigest()
    return digest
