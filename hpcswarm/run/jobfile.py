"""Job files: one TOML file names a whole experiment (data, method, fitness, protocol, runs).

A job is read once, checked declaratively (every key has a type, a default and a one-line
description in :data:`SCHEMA`), and becomes a frozen :class:`Job`. ``--set key=value``
overrides are applied to the parsed TOML before checking, so that an override is checked
exactly like a key of the file. Errors are :class:`~hpcswarm.errors.ParameterError` naming
the key and the file (and ``--set`` when the value came from the command line).

Paths: a relative ``data`` (or ``convert.labels``, ``cache``) written in the file is relative
to the job file's folder, so that a job under ``jobs/`` can name ``../../shared/data/X``; the
same keys given with ``--set`` are relative to the current folder, as command-line paths are.
A relative ``output`` is always relative to the current folder (results go where you run).

>>> job = read_job("jobs/pso-lsrg-srbct-unbiased.toml", ["runs=1"])  # doctest: +SKIP
>>> job.spec.algorithm, job.protocol, job.runs                       # doctest: +SKIP
('pso-lsrg', 'unbiased', 1)
"""

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from hpcswarm.data.formats import CONVERT_PARAMS, HDF5_EXTENSIONS
from hpcswarm.data.sources import default_cache, is_named
from hpcswarm.errors import ParameterError
from hpcswarm.params import Param, did_you_mean
from hpcswarm.run.protocols import PROTOCOLS as PROTOCOL_REGISTRY
from hpcswarm.selection.preprocess import parse_steps
from hpcswarm.selection.spec import SPEC, SearchSpec, SettingError, preprocess_steps
from hpcswarm.signatures.refinements import SUBSAMPLING, final_refine_doc
from hpcswarm.store.atomic import special_kind
from hpcswarm.swarm.params import FITNESS_PARAMS

PROTOCOLS = tuple(PROTOCOL_REGISTRY)
"""Evaluation protocols (the registry :data:`hpcswarm.run.protocols.PROTOCOLS`); the first,
``unbiased``, is the default."""

FITNESS_KEYS = tuple(param.name for param in FITNESS_PARAMS)
"""Algorithm parameters that belong in the ``[fitness]`` table of a job."""

MAX_RUN = 2**31 - 1
"""The largest run number (``first_run + runs - 1``)."""

_SPEC_KEYS = {"sample_shards": "layout.sample_shards"}
"""Search settings (:data:`hpcswarm.selection.spec.SPEC_PARAMS`) stored under another job key."""


def _spec_rows(*names):
    """The job keys of the search settings ``names`` (their :data:`~hpcswarm.selection.spec.SPEC`
    rows under their job key)."""
    return tuple(replace(SPEC[name], name=_SPEC_KEYS.get(name, name)) for name in names)


SCHEMA = (
    Param("name", "str", None, "label of the method in reports (default: the algorithm name)",
          neutral=True),
    Param("description", "str", "", "free text kept with the results", neutral=True),
    Param("data", "str", None, "dataset: FILE.h5, builtin:NAME, sklearn:wine|breast_cancer, "
          "or any file 'convert' reads (converted once into the cache); the checkpoint "
          "identifies it by its SHA-256", required=True, neutral=True),
    *_spec_rows("algorithm"),
    Param("protocol", "choice", PROTOCOLS[0], "evaluation protocol: 'unbiased' (outer "
          "cross-validation: the selection never sees its test fold), 'biased' (selection and "
          "inner accuracy on all samples, optimistic), 'holdout' (70/30), 'final-signature' "
          "('unbiased', then one more search on all samples: the folds estimate how well the "
          "method generalises, the extra search gives the one signature to publish; the two "
          "come from different searches because a signature selected on every sample has no "
          "sample left to test it on; unless the job names one, its refine is "
          + final_refine_doc() + ")",
          choices=PROTOCOLS),
    Param("folds", "int", 10, "outer stratified folds of the unbiased and final-signature "
          "protocols", low=2,
          high=MAX_RUN),
    Param("runs", "int", 1, "independent runs", low=1, high=MAX_RUN),
    Param("first_run", "int", 0, "number of the first run: runs first_run .. first_run+runs-1 "
          "are computed, so an experiment split over several allocations gets exactly the "
          "runs of a single allocation ('report' pools the files)", low=0, high=MAX_RUN - 1),
    Param("seed", "int", 0, "job seed; every run and fold seed is spawned from it", low=0),
    *_spec_rows("refine", "subsamples", "max_genes", "device"),
    Param("output", "str", None, "results file (HDF5; a JSON summary is written beside it); "
          "default: <job file stem>.h5 in the current folder", neutral=True),
    Param("checkpoint", "str", None, "checkpoint file (HDF5, written atomically by rank 0); "
          "default: <output stem>.checkpoint.h5 beside the output", neutral=True),
    Param("checkpoint_every", "int", 10, "rounds between snapshots of a running search (0: only "
          "when SIGTERM or SIGUSR1 arrives); finished tasks are always checkpointed", low=0,
          neutral=True),
    Param("checkpoint_seconds", "int", 60, "least seconds between two checkpoint writes (each "
          "rewrites the whole file); a stop signal always writes at once", low=0, neutral=True),
    Param("cache", "str", None, "folder of datasets converted on the fly (default: "
          "$HPCSWARM_CACHE, else $XDG_CACHE_HOME/hpcswarm, else ~/.cache/hpcswarm)",
          neutral=True),
    Param("layout.group_size", "int", 0, "ranks per rank group (0: automatic, "
          "taskfarm.default_group_size)", low=0, high=2**20, neutral=True),
    *(replace(row, neutral=True) for row in _spec_rows("sample_shards", "cache_memory")),
)
"""Every fixed key of a job file; ``[fitness]``, ``[params]`` and ``[convert]`` are checked
against the algorithm's parameters and :data:`~hpcswarm.data.formats.CONVERT_PARAMS`. A key
marked ``neutral`` does not change results (results are bit-identical for any rank layout)."""

_BY_NAME = {key.name: key for key in SCHEMA}
_CONVERT = {param.name: param for param in CONVERT_PARAMS}
_TABLES = ("fitness", "params", "convert", "layout", "preprocess")


@dataclass(frozen=True)
class Job:
    """A checked job: the search every task runs (:class:`~hpcswarm.selection.spec.SearchSpec`) and
    how the job runs it.

    Attributes
    ----------
    source : str
        The job file as given (for messages).
    text : str
        The job file's text, stored verbatim with the results.
    overrides : tuple of str
        The ``--set`` assignments applied, in order.
    name, description, protocol : str
    data : str
        The dataset spec, a relative path made absolute as described in the module docstring.
    spec : SearchSpec
        The search of every task: method and complete parameters (fitness included),
        refinement (the job's ``refine``, else its protocol's default), size cap, in-fold
        preprocessing (the ``[preprocess]`` table, in its order), sample shards
        (``layout.sample_shards``; 0: chosen by the pre-flight memory check), subsamples
        and device.
    folds, runs, first_run, seed, group_size : int
    output : Path
    checkpoint : Path
        The checkpoint file.
    checkpoint_every : int
        Rounds between snapshots of a running search (0: on signals only).
    checkpoint_seconds : int
        Least seconds between two checkpoint writes.
    cache : Path
    convert : dict
        Options for converting ``data`` (empty for HDF5 files and bundled datasets).
    """

    source: str
    text: str
    overrides: tuple
    name: str
    description: str
    data: str
    spec: SearchSpec
    protocol: str
    folds: int
    runs: int
    seed: int
    output: Path
    cache: Path
    group_size: int
    convert: dict = field(default_factory=dict)
    first_run: int = 0
    checkpoint: Path = None
    checkpoint_every: int = 10
    checkpoint_seconds: int = 60

    @property
    def biased(self) -> bool:
        """Whether the job's protocol reports a biased accuracy (:class:`Protocol.biased`)."""
        return PROTOCOL_REGISTRY[self.protocol].biased

    @property
    def protocol_note(self) -> str:
        """The warning the job's results carry ("" for none), from its protocol."""
        return PROTOCOL_REGISTRY[self.protocol].note(self.spec.preprocess)

    @property
    def n_tasks(self) -> int:
        """The job's task count, computed without drawing a task."""
        protocol = PROTOCOL_REGISTRY[self.protocol]
        return self.runs * protocol.n_splits(self.folds) + protocol.n_extra

    @property
    def summary_path(self):
        """The JSON summary written beside the results file."""
        return self.output.with_suffix(".json")

    @property
    def signature_path(self):
        """The final signature's gene list written beside the results file, or None when the
        protocol gives no final signature."""
        if not PROTOCOL_REGISTRY[self.protocol].n_extra:
            return None
        return self.output.with_suffix(".signature.tsv")

    def as_dict(self):
        """The resolved job as plain JSON types (recorded in the results)."""
        spec = self.spec
        return {
            "source": self.source, "overrides": list(self.overrides), "name": self.name,
            "description": self.description, "data": self.data, "algorithm": spec.algorithm,
            "params": dict(spec.params), "protocol": self.protocol, "folds": self.folds,
            "runs": self.runs, "first_run": self.first_run, "seed": self.seed,
            "refine": spec.refine, "max_genes": spec.max_genes or 0,
            "output": str(self.output), "cache": str(self.cache),
            "group_size": self.group_size, "sample_shards": spec.sample_shards,
            "checkpoint": str(self.checkpoint), "checkpoint_every": self.checkpoint_every,
            "checkpoint_seconds": self.checkpoint_seconds,
            "convert": dict(self.convert),
        } | ({"preprocess": [list(step) for step in spec.preprocess]} if spec.preprocess else {}
             ) | ({"device": spec.device} if spec.device != SPEC["device"].default else {}
             ) | ({"subsamples": spec.subsamples} if spec.refine in SUBSAMPLING else {}
             ) | ({"cache_memory": spec.cache_memory} if spec.cache_memory is not None else {})

    def identity(self) -> dict:
        """What decides the job's results: :meth:`as_dict` without the keys of :data:`SCHEMA`
        marked ``neutral`` (paths, checkpoint cadence, rank layout, labels) and without the
        ``--set`` record; every other key, the search spec's preprocessing and device
        included, with its resolved value (a checkpoint's identity)."""
        neutral = {key.name.rpartition(".")[2] for key in SCHEMA if key.neutral}
        described = self.as_dict()
        described.setdefault("preprocess", [])
        described.setdefault("device", self.spec.device)
        return {key: value for key, value in described.items()
                if key not in neutral | {"source", "overrides"}}


def _parse_value(text):
    """A ``--set`` value: a TOML value if it parses as one (1, 0.5, true, "x"), else the text."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def _algorithm_keys(algorithm):
    from hpcswarm.selection.methods import algorithm_class

    try:
        return tuple(p.name for p in algorithm_class(algorithm).PARAMS)
    except ParameterError:
        return ()


def _where(key, source, from_set):
    return f"{source}: key '{key}'" + (" (from --set)" if from_set else "")


def _locate(bare, algorithm, source):
    """The dotted key a bare ``--set`` key names (``n_iterations`` -> ``params.n_iterations``)."""
    if bare in _BY_NAME:
        return bare
    found = [name for name in _BY_NAME if name.split(".")[-1] == bare]
    if bare in FITNESS_KEYS:
        found.append(f"fitness.{bare}")
    elif bare in _algorithm_keys(algorithm):
        found.append(f"params.{bare}")
    if bare in _CONVERT:
        found.append(f"convert.{bare}")
    if len(found) == 1:
        return found[0]
    if not found:
        known = _known_keys(algorithm)
        raise ParameterError(f"{source}: unknown key '{bare}' (from --set)"
                             f"{did_you_mean(bare, known + [k.rpartition('.')[2] for k in known])}"
                             f"; known keys: {', '.join(known)}")
    raise ParameterError(f"{source}: key '{bare}' (from --set) is ambiguous; "
                         f"write one of {', '.join(found)}")


def _known_keys(algorithm):
    keys = [key.name for key in SCHEMA]
    keys += [f"fitness.{k}" for k in FITNESS_KEYS]
    keys += [f"params.{k}" for k in _algorithm_keys(algorithm) if k not in FITNESS_KEYS]
    keys += [f"convert.{k}" for k in _CONVERT]
    return keys


def apply_overrides(document, assignments, source):
    """``document`` (parsed TOML) with ``--set key=value`` assignments applied.

    Returns the new document and the set of dotted keys that came from ``--set``.
    """
    document = {k: (dict(v) if isinstance(v, dict) else v) for k, v in document.items()}
    from_set = set()
    for item in assignments or ():
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParameterError(f"--set expects key=value, got {item!r}")
        if "." not in key:
            algorithm = document.get("algorithm") if isinstance(document.get("algorithm"), str) else None
            key = _locate(key, algorithm, source)
        table, _, leaf = key.rpartition(".")
        value = _parse_value(text)
        if table:
            if table not in _TABLES or not leaf:
                raise ParameterError(f"{source}: unknown key '{key}' (from --set)"
                                     f"{did_you_mean(key, _known_keys(None))}; tables are "
                                     f"{', '.join(_TABLES)}")
            section = document.setdefault(table, {})
            if not isinstance(section, dict):
                raise ParameterError(f"{_where(table, source, False)} must be a table")
            section[leaf] = value
        else:
            document[key] = value
        from_set.add(key)
    return document, from_set


def _check_convert(table, where_of):
    options = {}
    for leaf, value in table.items():
        if leaf not in _CONVERT:
            raise ParameterError(f"{where_of('convert.' + leaf)} is unknown"
                                 f"{did_you_mean(leaf, _CONVERT)}; [convert] keys: "
                                 f"{', '.join(_CONVERT)}")
        options[leaf] = _CONVERT[leaf].check(value, where_of(f"convert.{leaf}"))
    return options


def _resolve_path(text, base):
    if is_named(text):
        return text
    path = Path(text).expanduser()
    return os.path.normpath(path if path.is_absolute() else (base / path))


def build_job(document, *, source="<job>", text="", base=None, overrides=()):
    """Check a parsed job document (overrides already applied) and return a :class:`Job`.

    Parameters
    ----------
    document : dict
        Parsed TOML.
    source : str
        The job file as given, named in every error.
    text : str
        The file's text.
    base : Path, optional
        Folder relative paths written in the file are relative to (the job file's folder).
    overrides : sequence of str
        ``--set`` assignments (already applied to ``document``); keys they set are relative
        to the current folder.

    Raises
    ------
    ParameterError
        Unknown key, ill-typed or out-of-range value, missing required key, unknown algorithm
        or algorithm parameter; the message names the key and ``source``.
    """
    base = Path(base) if base is not None else Path.cwd()
    from_set = {_set_key(item, document) for item in overrides}

    def where_of(key):
        return _where(key, source, key in from_set)

    def path_of(key, value):
        if not value.strip():  # '' would silently mean the job's folder
            raise ParameterError(f"{where_of(key)} must name a file or folder, got {value!r}")
        return _resolve_path(value, Path.cwd() if key in from_set else base)

    _check_tables(document, where_of)
    values = _fixed_values(document, source, where_of)
    _check_run_range(values, where_of)
    spec = _search_spec(document, values, source, where_of)
    convert = _check_convert(document.get("convert", {}), where_of)
    if "labels" in convert:
        convert["labels"] = path_of("convert.labels", convert["labels"])
    output, checkpoint = _output_paths(values, source, where_of)
    cache = default_cache() if values["cache"] is None else Path(path_of("cache", values["cache"]))
    return Job(
        source=source, text=text, overrides=tuple(overrides),
        name=values["name"] or spec.algorithm, description=values["description"],
        data=path_of("data", values["data"]), spec=spec, protocol=values["protocol"],
        folds=values["folds"], runs=values["runs"], seed=values["seed"], output=output,
        cache=cache, group_size=values["layout.group_size"], convert=convert,
        first_run=values["first_run"], checkpoint=checkpoint,
        checkpoint_every=values["checkpoint_every"],
        checkpoint_seconds=values["checkpoint_seconds"],
    )


def _check_run_range(values, where_of):
    """Refuse runs ``first_run .. first_run+runs-1`` that end past :data:`MAX_RUN`."""
    if values["first_run"] + values["runs"] - 1 > MAX_RUN:
        raise ParameterError(f"{where_of('first_run')}: runs first_run .. first_run+runs-1 "
                             f"must end at run {MAX_RUN} at most, got "
                             f"{values['first_run']} + {values['runs']} - 1")


def _search_spec(document, values, source, where_of):
    """The job's :class:`~hpcswarm.selection.spec.SearchSpec`: its method's parameters, its search
    settings (their job keys, :data:`SCHEMA`, already checked one by one) and its
    ``[preprocess]`` steps (without the table, the method's own:
    :func:`~hpcswarm.selection.spec.preprocess_steps`; an empty table: none); a refusal of
    the spec's checks across settings names the key."""
    algorithm = values["algorithm"]
    params = _method_params(document, algorithm, source, where_of)
    try:
        table = document.get("preprocess")
        preprocess = preprocess_steps(algorithm, None if table is None else parse_steps(table))
    except ParameterError as exc:
        raise ParameterError(f"{source}: {exc}") from None
    refine = (values["refine"] if "refine" in document
              else PROTOCOL_REGISTRY[values["protocol"]].default_refine(algorithm))
    try:
        return SearchSpec(algorithm, params, refine=refine, max_genes=values["max_genes"] or None,
                          preprocess=preprocess, sample_shards=values["layout.sample_shards"],
                          device=values["device"], subsamples=values["subsamples"],
                          cache_memory=values["cache_memory"])
    except SettingError as exc:
        key = _SPEC_KEYS.get(exc.setting, exc.setting)
        raise ParameterError(f"{where_of(key)} {exc.problem}") from None


def _output_paths(values, source, where_of):
    """The results file and the checkpoint (:func:`_hdf5_path`), which must differ."""
    stem = Path(source).stem if source != "<job>" else "job"
    output = _hdf5_path(values, "output", Path.cwd() / f"{stem}.h5", where_of)
    checkpoint = _hdf5_path(values, "checkpoint",
                            output.with_name(f"{output.stem}.checkpoint.h5"), where_of)
    if checkpoint == output:
        raise ParameterError(f"{where_of('checkpoint')} must differ from the output")
    return output, checkpoint


def _check_tables(document, where_of):
    """Refuse unknown top-level keys and tables, and tables given as plain values."""
    for key, value in document.items():
        if isinstance(value, dict):
            if key not in _TABLES:
                raise ParameterError(f"{where_of(key)}: unknown table [{key}]"
                                     f"{did_you_mean(key, _TABLES)}; tables are "
                                     f"{', '.join(_TABLES)}")
        elif key not in _BY_NAME:
            top = [name for name in _BY_NAME if "." not in name]
            raise ParameterError(f"{where_of(key)} is unknown{did_you_mean(key, top)}; known "
                                 f"keys: {', '.join(_known_keys(document.get('algorithm')))}")
    for name in _TABLES:
        if name in document and not isinstance(document[name], dict):
            raise ParameterError(f"{where_of(name)} must be a table [{name}]")
    for leaf in document.get("layout", {}):
        if f"layout.{leaf}" not in _BY_NAME:
            raise ParameterError(f"{where_of('layout.' + leaf)} is unknown"
                                 f"{did_you_mean(leaf, ('group_size', 'sample_shards'))}; "
                                 "[layout] keys: group_size, sample_shards")


def _fixed_values(document, source, where_of):
    """Every :data:`SCHEMA` key's checked value (its default when absent)."""
    values = {}
    for key in SCHEMA:
        table, _, leaf = key.name.rpartition(".")
        holder = document.get(table, {}) if table else document
        if leaf in holder:
            values[key.name] = key.check(holder[leaf], where_of(key.name))
        elif key.required:
            raise ParameterError(f"{source}: the required key '{key.name}' is missing")
        else:
            values[key.name] = key.default
    return values


def _method_params(document, algorithm, source, where_of):
    """The algorithm's complete, checked parameters from ``[fitness]`` and ``[params]``."""
    from hpcswarm.selection.methods import algorithm_class, algorithm_params

    try:
        algorithm_class(algorithm)
    except ParameterError as exc:
        raise ParameterError(f"{where_of('algorithm')}: {exc}") from None
    params = {}
    for leaf, value in document.get("fitness", {}).items():
        if leaf not in FITNESS_KEYS:
            raise ParameterError(f"{where_of('fitness.' + leaf)} is unknown"
                                 f"{did_you_mean(leaf, FITNESS_KEYS)}; [fitness] keys: "
                                 f"{', '.join(FITNESS_KEYS)}")
        params[leaf] = value
    allowed = [k for k in _algorithm_keys(algorithm) if k not in FITNESS_KEYS]
    for leaf, value in document.get("params", {}).items():
        if leaf in FITNESS_KEYS:
            raise ParameterError(f"{where_of('params.' + leaf)}: put fitness settings in "
                                 f"[fitness] (fitness.{leaf})")
        if leaf not in allowed:
            raise ParameterError(f"{where_of('params.' + leaf)} is not a parameter of "
                                 f"{algorithm}{did_you_mean(leaf, allowed)}; allowed: "
                                 f"{', '.join(sorted(allowed))}")
        params[leaf] = value
    declared = {param.name: param for param in algorithm_class(algorithm).PARAMS}
    for leaf, value in params.items():  # TOML types its values: '0.5' is text, not a number
        try:
            declared[leaf].parse_typed(value)
        except ParameterError as exc:
            table = "fitness" if leaf in FITNESS_KEYS else "params"
            raise ParameterError(f"{where_of(f'{table}.{leaf}')}: {exc}") from None
    try:
        return algorithm_params(algorithm, params)
    except ParameterError as exc:
        culprit = next((k for k in params if f"'{k}'" in str(exc)), None)
        table = "fitness" if culprit in FITNESS_KEYS else "params"
        prefix = where_of(f"{table}.{culprit}") if culprit else f"{source}"
        raise ParameterError(f"{prefix}: {exc}") from None


def _hdf5_path(values, key, default, where_of):
    """An output file of the job: relative to the current folder, ending in .h5/.hdf5."""
    if values[key] is None:
        return default
    path = Path(values[key]).expanduser()
    path = path if path.is_absolute() else Path.cwd() / path
    if path.suffix.lower() not in HDF5_EXTENSIONS:
        raise ParameterError(f"{where_of(key)} must end in .h5 or .hdf5, got "
                             f"{str(values[key])!r}")
    return path


def _set_key(item, document):
    """The dotted key a ``--set`` assignment ended up setting."""
    key = item.partition("=")[0].strip()
    if "." in key:
        return key
    algorithm = document.get("algorithm") if isinstance(document.get("algorithm"), str) else None
    try:
        return _locate(key, algorithm, "")
    except ParameterError:
        return key


def read_job(path, overrides=()):
    """Read, override and check the job file ``path``.

    Parameters
    ----------
    path : str or Path
    overrides : sequence of str
        ``--set key=value`` assignments; a bare key (``n_iterations``) is looked up among
        every table when it is unambiguous.

    Returns
    -------
    Job

    Raises
    ------
    ParameterError
        The file is missing or not TOML, or a key is unknown, ill-typed or missing; the
        message names the key and the file.
    """
    source = str(path)
    path = Path(path)
    kind = special_kind(path)
    if kind is not None:  # a FIFO would block the read, a device never end it
        raise ParameterError(f"{source}: the job file is {kind}, not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParameterError(f"{source}: no such job file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"{source}: cannot read the job file ({exc})") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{source}: not a valid TOML job file ({exc})") from None
    document, _ = apply_overrides(document, overrides, source)
    return build_job(document, source=source, text=text, base=path.resolve().parent,
                     overrides=tuple(overrides))
