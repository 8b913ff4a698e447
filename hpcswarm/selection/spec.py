"""One declaration of a search: method, its parameters (fitness included), refinement, size
cap, in-fold preprocessing, sample shards and scorer device.

:data:`SPEC_PARAMS` declares the settings a search has besides its method's own parameters,
as :class:`~hpcswarm.params.Param` rows (as scikit-learn's ``_parameter_constraints``). The
job schema (:data:`hpcswarm.run.jobfile.SCHEMA`), the ``run`` and ``evaluate`` flags
(:mod:`hpcswarm.cli`) and the selector's arguments (:func:`search_arguments`) are derived
from these rows; a new setting is one row here and one field of :class:`SearchSpec`.

The method registry (:data:`hpcswarm.selection.methods.METHODS`) is read when a spec is built.
"""

from dataclasses import dataclass, field, fields

from hpcswarm.errors import ParameterError
from hpcswarm.fitness.scorer import DEVICES
from hpcswarm.params import Param
from hpcswarm.signatures.refinements import CHOICES as REFINEMENTS
from hpcswarm.signatures.refinements import doc as refine_doc

SPEC_PARAMS = (
    Param("algorithm", "str", None, "search method (see 'hpcswarm run --help')", required=True),
    Param("refine", "choice", "none", refine_doc(), choices=REFINEMENTS),
    Param("max_genes", "int", 0, "cap on the genes of every subset a swarm method evaluates, "
          "applied as a repair of the positions over it (0: no cap)", low=0, high=2**31 - 1),
    Param("sample_shards", "int", 1, "ranks that split every evaluation's held-out samples "
          "(and its cached distances) between them; a group is particle groups x sample "
          "shards (0 in a job: automatic, the fewest that fit the pre-flight memory estimate)",
          low=0, high=2**20),
    Param("device", "choice", "cpu", "where the k-NN scorer runs", choices=DEVICES),
    Param("cache_memory", "optional_float", None, "GB of distance states each rank keeps of "
          "its particles, so that a particle is scored from its previous subset ('none': "
          "a quarter of the memory each rank sees; 0: every subset in full); results are "
          "the same whatever it is", low=0),
    Param("subsamples", "int", 10, "searches on halves of the training "
          "samples (complementary pairs: an even number) for refine = 'stability' or "
          "'consensus'", low=2, high=10_000),
)
"""The settings of a search besides its method's parameters (each one :class:`SearchSpec`
field; ``preprocess`` is a table of steps, :func:`hpcswarm.selection.preprocess.parse_steps`)."""

SPEC = {param.name: param for param in SPEC_PARAMS}
"""The rows of :data:`SPEC_PARAMS` by name."""


@dataclass(frozen=True)
class SearchSpec:
    """A checked search: everything that decides its result, given the data and the seed.

    :meth:`build` checks each setting against its :data:`SPEC_PARAMS` row; the checks across
    settings run whenever a spec is made (:meth:`__post_init__`), by :meth:`build`, by a job
    file (:func:`hpcswarm.run.jobfile.build_job`) or by ``dataclasses.replace``.

    Attributes
    ----------
    algorithm : str
        A name of :data:`hpcswarm.selection.methods.METHODS`.
    params : dict
        Complete, checked parameters of the method, fitness (k, cv, objective, alpha,
        archive_size) included.
    refine : str
        Refinement of the selected subset (:data:`hpcswarm.signatures.refinements.REFINEMENTS`).
    max_genes : int or None
        Size cap of a swarm method (None: none).
    preprocess : tuple of (str, value)
        In-fold preprocessing steps (:mod:`hpcswarm.selection.preprocess`); :meth:`build`
        and a job file default them to the method's own (:func:`preprocess_steps`).
    sample_shards : int
        Sample shards of every evaluation (0: chosen by the job's pre-flight).
    device : {"cpu", "gpu"}
        Where the scorer runs.
    cache_memory : float or None
        GB of particle states per rank (None: from the memory each rank sees,
        :func:`hpcswarm.selection.search.cache_states`).
    subsamples : int
        Subsample searches of the refinements ``stability`` and ``consensus``
        (:mod:`hpcswarm.signatures.subsample`); even.
    """

    algorithm: str
    params: dict = field(default_factory=dict)
    refine: str = SPEC["refine"].default
    max_genes: int = None  # no cap (the row's 0)
    preprocess: tuple = ()
    sample_shards: int = SPEC["sample_shards"].default
    device: str = SPEC["device"].default
    cache_memory: float = SPEC["cache_memory"].default
    subsamples: int = SPEC["subsamples"].default

    @classmethod
    def build(cls, algorithm: str, params: dict = None, **settings) -> "SearchSpec":
        """A checked spec: ``params`` (overrides of the method's paper defaults, native values
        or strings) completed, and every setting of :data:`SPEC_PARAMS` checked.

        Raises
        ------
        ParameterError
            Unknown method or setting, ill-typed or out-of-range value; a
            :class:`SettingError` for a check across settings (:meth:`__post_init__`).
        """
        from hpcswarm.selection.methods import algorithm_params

        unknown = sorted(set(settings) - set(SETTINGS))
        if unknown:
            raise ParameterError(f"unknown search setting(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(SETTINGS)}")
        checked = {name: SPEC[name].parse(value) for name, value in settings.items()
                   if name in SPEC and value is not None}
        max_genes = checked.pop("max_genes", 0) or None
        return cls(algorithm, algorithm_params(algorithm, params), max_genes=max_genes,
                   preprocess=preprocess_steps(algorithm, settings.get("preprocess")),
                   **checked)

    def __post_init__(self):
        """The checks across settings, made by every spec however it is built.

        Raises
        ------
        SettingError
            An odd ``subsamples``, a size cap on a method without one.
        """
        from hpcswarm.selection.methods import METHODS, algorithm_class

        if self.subsamples % 2:
            raise SettingError("subsamples", f"must be even (complementary pairs of halves), "
                                             f"got {self.subsamples}")
        if self.max_genes is not None and not algorithm_class(self.algorithm).supports_max_genes:
            capped = ", ".join(name for name, cls in METHODS.items() if cls.supports_max_genes)
            raise SettingError("max_genes", f"applies to the swarm methods {capped}, not to "
                                            f"{self.algorithm}")


def preprocess_steps(algorithm: str, steps=None) -> tuple:
    """The preprocessing of a search of ``algorithm``: ``steps`` as given (an empty list
    included: none), or for None the method's own (its ``PREPROCESS``, e.g. VLPSO's min-max
    scaling on the training samples, as its authors' Weka ``Normalize``).

    Every front door (:func:`hpcswarm.select`, the selector, ``hpcswarm run --algorithm``, a
    job without a ``[preprocess]`` table) reads the data through this one default, so a
    method's default is declared once, beside its parameters.

    Parameters
    ----------
    algorithm : str
        A name of :data:`hpcswarm.selection.methods.METHODS`.
    steps : sequence of (str, value), optional
        From :func:`hpcswarm.selection.preprocess.parse_steps`.

    Returns
    -------
    tuple of (str, value)
    """
    from hpcswarm.selection.methods import algorithm_class

    if steps is None:
        return tuple(algorithm_class(algorithm).PREPROCESS)
    return tuple(steps)


SETTINGS = tuple(f.name for f in fields(SearchSpec) if f.name not in ("algorithm", "params"))
"""The settings of a search besides its method and the method's parameters: the fields of
:class:`SearchSpec`, each a row of :data:`SPEC_PARAMS` but ``preprocess`` (a table of steps,
:func:`hpcswarm.selection.preprocess.parse_steps`, the ``[preprocess]`` table of a job)."""


class SettingError(ParameterError):
    """A search setting refused by a check of :class:`SearchSpec` across settings.

    Parameters
    ----------
    setting : str
        The setting's name (a row of :data:`SPEC_PARAMS`).
    problem : str
        What is wrong with it, written to follow its name ("must be even, got 3").

    Notes
    -----
    The message is ``"<setting> <problem>"``; a job file names its key instead
    (:func:`hpcswarm.run.jobfile.build_job`).
    """

    def __init__(self, setting, problem):
        super().__init__(f"{setting} {problem}")
        self.setting = setting
        self.problem = problem


def search_arguments(algorithm: str = None) -> dict:
    """The user-settable fields of a search with their defaults: :data:`SPEC_PARAMS`, then the
    parameters of ``algorithm`` (its paper defaults, fitness included) when one is named.

    Returns
    -------
    dict of str to Param
    """
    rows = {param.name: param for param in SPEC_PARAMS}
    if algorithm is not None:
        from hpcswarm.selection.methods import algorithm_class

        rows.update({param.name: param for param in algorithm_class(algorithm).PARAMS})
    return rows
