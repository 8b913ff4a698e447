"""The searches as a scikit-learn feature selector, for ``Pipeline``, ``cross_val_score``, ``GridSearchCV``.

>>> from sklearn.datasets import load_wine
>>> from sklearn.model_selection import cross_val_score
>>> from sklearn.neighbors import KNeighborsClassifier
>>> from sklearn.pipeline import make_pipeline
>>> X, y = load_wine(return_X_y=True)
>>> model = make_pipeline(SwarmFeatureSelector("sfs", random_state=0), KNeighborsClassifier(1))
>>> scores = cross_val_score(model, X, y, cv=3)  # selection inside each training part only

Cross-validating a pipeline whose first step selects the genes is the unbiased protocol of
Tran et al. (2016, Experiment II): every selection sees the training folds only.
"""

import copy
import inspect
import numbers
import warnings
from dataclasses import replace
from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from hpcswarm.comm import Comm, pinned_threads
from hpcswarm.errors import ParameterError
from hpcswarm.fitness.folds import user_stacklevel
from hpcswarm.inputs import check_columns, check_finite, check_labels, check_matrix
from hpcswarm.run.progress import format_seconds, task_seconds
from hpcswarm.selection.methods import METHODS, algorithm_class
from hpcswarm.selection.prepare import mismatch_error, prepare
from hpcswarm.selection.preprocess import parse_steps
from hpcswarm.selection.search import FitnessMismatch
from hpcswarm.selection.spec import SETTINGS as SPEC_SETTINGS
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.signatures.refine import eliminate_to
from hpcswarm.signatures.refinements import SIGNATURE_METHOD, final_refine
from hpcswarm.store.objectives import ALPHA_RANGE, OBJECTIVE_ALIASES, OBJECTIVE_TABLE
from hpcswarm.swarm.engine.loop import SearchHooks

_SEED_BOUND = np.iinfo(np.int32).max
"""Run seeds drawn from a random state lie in ``[0, 2**31 - 1)`` (as scikit-learn's own)."""

def run_seed(random_state: object) -> int:
    """The int run seed of one fit, scikit-learn ``random_state`` conventions.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        An int >= 0 is the run seed itself (``random_state=s`` selects what
        ``hpcswarm run --seed s`` selects: same folds, same streams). ``None`` draws a seed
        from NumPy's global ``RandomState``; a ``RandomState`` or ``Generator`` draws one from
        it, so that successive fits with the same instance differ, as in scikit-learn.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        A negative int, or any other type (a bool, a float, a ``SeedSequence``).
    """
    shown = (repr(random_state) if isinstance(random_state, (numbers.Number, str, bytes))
             else f"a {type(random_state).__name__}")
    problem = (f"random_state must be None, an int >= 0, a RandomState or a Generator, "
               f"got {shown}")
    if isinstance(random_state, (bool, np.bool_)):
        raise ValueError(problem)
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(problem)
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_SEED_BOUND))
    if random_state is not None and not isinstance(random_state, np.random.RandomState):
        raise ValueError(problem)
    state = check_random_state(random_state)  # None: NumPy's global RandomState
    return int(state.randint(_SEED_BOUND))


class SwarmFeatureSelector(SelectorMixin, BaseEstimator):
    """Select genes (columns) with a search of hpcswarm and its k-NN wrapper fitness.

    Any method of ``hpcswarm run``: the swarms (Tran et al. 2016, Gu et al. 2018, Li et al.,
    Chuang et al. 2008, Xue et al. 2012) and the greedy baselines (``sfs``, ``sbs``, ``lfs``,
    ``gsbs``, ``all-genes``), with the paper defaults of that method.

    Parameters
    ----------
    algorithm : str, default "vlpso"
        A name of :data:`hpcswarm.selection.methods.METHODS`. The default is the search of
        the default signature (:data:`hpcswarm.signatures.refinements.SIGNATURE_METHOD`;
        ``docs/signatures.md``).
    params : dict, default None
        Overrides of the method's parameters, fitness included (``k``, ``cv``,
        ``objective``, ...), as ``--param`` on the command line; checked at ``fit``.
    random_state : None, int, RandomState or Generator, default None
        Seed of each fit (folds and random streams), see :func:`run_seed`; an int gives
        reproducible fits. Under ``comm`` a seed drawn from a random state (``None``, a
        ``RandomState`` or a ``Generator``) is rank 0's, so that every rank runs the same
        search.
    comm : communicator, default None
        ``None`` runs the search serially; a communicator of :mod:`hpcswarm.comm` runs it over
        its ranks (every rank calls ``fit`` with the same data, collectively). Clones share
        it: a communicator is not copied. Under ``cross_val_score`` or ``GridSearchCV`` keep
        ``n_jobs=None`` so that every rank makes the same fits in the same order.
    n_features_to_select : None, int or float, default None
        The size of the signature: at most this many genes (an int >= 1), or at most this
        fraction of the genes (a float in (0, 1], rounded down, at least 1 gene). ``None``:
        the subset the search returned (its refinement when ``refine`` is set). The rule
        is given under Notes. Counted among the columns of ``X``; a ``preprocess`` filter
        step that keeps fewer genes lowers it to their number.
    refine : {"none", "prune", "prune-margin", "prune-compact", "relevance-subset", \
"relevance-subset-1se", "saturation-margin", "saturation-exchange", "neighbour-purity", \
"neighbour-purity-1se", "neighbour-purity-anova", "neighbour-purity-1se-anova", "relevance", \
"stability", "consensus"} or None, default None
        None: that of :func:`hpcswarm.select` and of a ``final-signature`` job of the same
        method (:func:`~hpcswarm.signatures.refinements.final_refine`:
        ``"neighbour-purity-1se-anova"`` for VLPSO, the default signature;
        ``"relevance-subset-1se"`` for the other methods); ``"none"``: the search's subset as
        it is. A refinement of the search's subset on the same samples (``prune*``:
        :mod:`hpcswarm.signatures.refine`; ``relevance-subset*``: its genes ranked by
        class-balanced relevance, :mod:`hpcswarm.signatures.relevance`; ``saturation-*``:
        the subset, or where it classifies every inner prediction the 1-NN margin's choice,
        anew or at the same size, :mod:`hpcswarm.signatures.saturation`; ``neighbour-purity*``:
        the subset or a particle's personal best, chosen on a fresh split by the purity of the
        held-out samples' neighbourhoods, the smallest within one standard error for
        ``-1se``, with the ANOVA filter's top genes at the same sizes as candidates for
        ``-anova``, and the ``-1se`` choice replaced by the filter's genes at its size where they
        are purer for ``-1se-anova``, :mod:`hpcswarm.signatures.purity`), the Welch filter in
        its place (``relevance``, every gene ranked, the search not read), or from
        ``subsamples`` more searches on halves of the samples (``stability``, ``consensus``:
        :mod:`hpcswarm.signatures.subsample`). Every rule:
        :data:`hpcswarm.signatures.refinements.REFINEMENTS`.
    SEARCH_SETTINGS_DOC
    preprocess : None, dict or str, default None
        Preprocessing steps the search reads the data through: a dict of steps in order,
        as the ``[preprocess]`` table of a job (``{"log2": True, "top_variance": 500}``),
        or a text, as ``hpcswarm evaluate --preprocess`` (``"log2,top_variance=500"``),
        read by :func:`hpcswarm.selection.preprocess.parse_steps`. ``None``: the method's
        own (:func:`hpcswarm.selection.spec.preprocess_steps`; VLPSO scales every gene to
        [0, 1], as its authors do); ``{}`` or ``""``: none, the values as given. ``fit``
        fits them on all the samples of its ``X`` (a single search has no outer folds) and
        searches the transformed matrix; every gene-indexed attribute names original columns, and
        ``transform`` selects those columns of the untransformed ``X`` (see Notes). For a
        cross-validated estimate, cross-validate a pipeline holding the selector (each fit
        then sees its training part only) or run a job, whose protocols fit the steps inside
        every outer fold (:mod:`hpcswarm.run.protocols`).
    METHOD_SETTINGS_DOC
    verbose : int, default 0
        ``0`` silent; ``1`` one line when the fit ends; ``2`` also one line per round of
        the search. Printed by rank 0 of ``comm`` only.
    n_threads : None or int, default None
        BLAS/OpenMP threads of the search, restored when ``fit`` returns. ``None``: as
        ``hpcswarm run`` without ``--threads`` (:func:`hpcswarm.comm.threads_to_pin`): no more
        than ``OMP_NUM_THREADS`` (or ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``) when set,
        else the cores that the machine's load leaves free, shared by the ranks of ``comm``;
        so that a notebook on a shared machine does not oversubscribe it.

    Attributes
    ----------
    support_ : ndarray of shape (n_features_in_,), bool
        The selected genes: the signature, among the columns of ``X`` (those the
        preprocessing kept).
    inner_accuracy_ : float
        The signature's inner validation accuracy on the training data (the fitness
        engine's cross-validation, ``k`` and ``cv``).
    chosen_from_ : {"search", "refine", "front", "eliminate"}
        Where the signature came from (see Notes).
    front_ : dict
        The search's Pareto front of (inner accuracy, genes), in increasing size:
        ``"size"`` (ndarray of int), ``"inner_accuracy"`` (ndarray of float) and
        ``"genes"`` (list of ndarray of int, the column indices of each point);
        ``pandas.DataFrame(front_)`` tabulates it.
    scores_ : ndarray of shape (n_features_in_,), float
        Per gene, its selection frequency on the search's Pareto front: the share of the
        front's subsets (the best one of each size) that hold it, in [0, 1].
    ranking_ : ndarray of shape (n_features_in_,), int
        Per gene, its rank from 1 (best): the signature's genes first, then the others, each
        group by decreasing ``scores_`` (ties by column), so that
        ``ranking_ <= support_.sum()`` is the signature.
    fitness_ : float
        The fitness of the search's own subset (maximised).
    seed_ : int
        The run seed of the fit.
    result_ : SearchResult
        The whole search result (history, parameters, method records); with
        ``preprocess``, its gene indices are columns of the transformed matrix
        (``preprocessing_.genes`` maps them to columns of ``X``).
    preprocessing_ : Fitted or None
        The fitted steps (:class:`hpcswarm.selection.preprocess.Fitted`), None without
        ``preprocess``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` has column names.

    Notes
    -----
    With ``n_features_to_select`` giving a size ``b``, the signature is chosen among the
    subsets the search scored: every point of its front, its returned subset and its
    refinement. Of those with at most ``b`` genes it is the one with the most inner correct
    predictions, then the fewest genes. The swarm methods with a cap search under
    ``min(b, max_genes)`` genes, so that every subset they score fits. When no scored
    subset has ``b`` genes or fewer (a search without a cap that only met larger subsets),
    the smallest of them is cut down to ``b`` genes by sequential backward elimination on
    the same inner validation (:func:`hpcswarm.signatures.refine.eliminate_to`). Only the training
    data are read: the choice never sees a test sample.

    A wrapper search scores subsets, not single genes: ``front_`` holds those scores, one
    per subset size, and ``scores_`` counts each gene's presence on that front (a gene that
    the best small subsets and the best large ones all keep scores 1).

    With ``preprocess`` the selector still selects original genes: ``transform`` returns
    the chosen columns of the ``X`` it is given, untransformed, as any scikit-learn
    selector does; the steps only shape how the search saw the genes. A gene that a
    filter step dropped is never selected and scores 0. The steps are fitted on the same
    samples the search then reads, so ``inner_accuracy_`` is optimistic twice over
    (Ambroise & McLachlan 2002).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> selector = SwarmFeatureSelector("sfs", random_state=0).fit(X, y)
    >>> selector.transform(X).shape[1] == int(selector.support_.sum())
    True
    >>> compact = SwarmFeatureSelector("sfs", n_features_to_select=2, random_state=0).fit(X, y)
    >>> int(compact.support_.sum()) <= 2, compact.front_["size"].tolist()[:3]
    (True, [1, 2, 3])
    """

    def __init__(self, algorithm: str = SIGNATURE_METHOD, params: Optional[dict] = None,
                 random_state: object = None, comm: object = None, *,
                 n_features_to_select: Union[None, int, float] = None,
                 refine: Optional[str] = None,
                 max_genes: Optional[int] = None, sample_shards: Optional[int] = None,
                 device: Optional[str] = None, cache_memory: Optional[float] = None,
                 subsamples: Optional[int] = None, preprocess: Union[None, dict, str] = None, n_particles: Optional[int] = None,
                 n_iterations: Optional[int] = None, k: Optional[int] = None,
                 cv: Union[None, str, int] = None, objective: Optional[str] = None,
                 alpha: Optional[float] = None, archive_size: Optional[int] = None,
                 verbose: int = 0, n_threads: Optional[int] = None) -> None:
        self.algorithm = algorithm
        self.params = params
        self.random_state = random_state
        self.comm = comm
        self.n_features_to_select = n_features_to_select
        self.refine = refine
        self.max_genes = max_genes
        self.sample_shards = sample_shards
        self.device = device
        self.cache_memory = cache_memory
        self.subsamples = subsamples
        self.preprocess = preprocess
        self.n_particles = n_particles
        self.n_iterations = n_iterations
        self.k = k
        self.cv = cv
        self.objective = objective
        self.alpha = alpha
        self.archive_size = archive_size
        self.verbose = verbose
        self.n_threads = n_threads

    def method_params(self) -> dict:
        """The overrides passed to the method: ``params`` and the settings it has (not None).

        Raises
        ------
        ValueError
            ``params`` not a dict, or a setting given both here and in ``params``.
        """
        if self.params is not None and not isinstance(self.params, dict):
            raise ValueError(f"params must be a dict or None, got {self.params!r}")
        overrides = dict(self.params or {})
        declared = {param.name for param in algorithm_class(self.algorithm).PARAMS}
        for name in SETTINGS:
            value = getattr(self, name)
            if value is None or name not in declared:
                continue
            if name in overrides:
                raise ValueError(f"{name} is given both as a keyword ({value!r}) and in params "
                                 f"({overrides[name]!r}); give it once")
            overrides[name] = value
        return overrides

    def fit(self, X: ArrayLike, y: ArrayLike) -> "SwarmFeatureSelector":
        """Run the search on ``X, y`` and choose the signature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_genes)
            Dense, finite; at least 2 samples.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Invalid data (not 2-D; complex numbers, text or dates; missing or infinite
            values: :func:`hpcswarm.inputs.check_matrix`, :func:`~hpcswarm.inputs.
            check_finite`), unknown algorithm or parameter (``ParameterError``), bad
            ``random_state``, ``n_features_to_select``, ``refine``, ``preprocess`` (a ``log2``
            step on a value with ``x + pseudocount <= 0`` included) or ``verbose``. Labels
            that do not name at least two classes (missing, mixed types, one class, float
            values that look continuous: :func:`hpcswarm.inputs.check_labels`); a
            ``DataFrame`` with columns that are not numbers or a name given twice.
        TypeError
            Sparse ``X``; ``comm`` that is not a communicator.

        Warns
        -----
        UserWarning
            ``y`` a ``Series`` holding the samples of ``X``'s index in another order (labels
            are read by position); an empty signature.
        """
        self.checked_spec()  # every setting checked before the data
        if hasattr(X, "columns") and hasattr(X, "dtypes"):  # a pandas DataFrame
            check_columns(X, "X")
            _warn_if_reordered(X, y)
        else:
            check_matrix(X, "X")
        if y is not None:  # None: scikit-learn's own message
            y = check_labels(y, "y")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2,
                             ensure_all_finite=False)
        check_finite(X, "X", getattr(self, "feature_names_in_", None))
        return self.fit_checked(X, y)

    def fit_checked(self, X: np.ndarray, y: np.ndarray) -> "SwarmFeatureSelector":
        """:meth:`fit` on data its door has checked (:func:`hpcswarm.select` checks its own,
        by the same validators of :mod:`hpcswarm.inputs`), without checking them again.

        Parameters
        ----------
        X : ndarray of float64 of shape (n_samples, n_genes)
            Finite values, at least 2 samples; read, never written.
        y : ndarray of shape (n_samples,)
            Labels of at least two classes (:func:`hpcswarm.inputs.check_labels`).

        Returns
        -------
        self
        """
        spec = self.checked_spec()
        self.n_features_in_ = X.shape[1]
        check_classification_targets(y)
        view = prepare(X, y, spec.preprocess, finite=True, scaled=False, comm=self.comm)
        genes = view.columns  # the columns of X the searched matrix holds
        budget = signature_size(self.n_features_to_select, self.n_features_in_)
        if budget is not None:
            budget = min(budget, genes.size)  # at most the genes a filter step kept
            if algorithm_class(spec.algorithm).supports_max_genes:
                spec = replace(spec, max_genes=min(spec.max_genes or budget, budget))
        seed = run_seed(self.random_state)
        if self.comm is not None:  # a seed drawn from a random state: rank 0's, on every rank
            seed = self.comm.bcast(seed, root=0)
        with pinned_threads(self.n_threads, 1 if self.comm is None else self.comm.size), view:
            try:
                result = view.search(spec, seed, comm=self.comm, hooks=SearchHooks(
                    progress=self._round_printer(spec.params)))
            except FitnessMismatch as exc:
                raise mismatch_error(exc, exc.setting in self.method_params(), "keyword",
                                     spec.algorithm) from None
            mask, source, correct = choose_signature(result, budget)
            if mask is None:
                _, scorer = view.fitness(result.params, seed, spec.device)
                cut = eliminate_to(scorer, smallest_subset(result), budget)
                mask, source, correct = cut.mask, "eliminate", cut.correct
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[genes[mask]] = True
        self.chosen_from_ = source
        self.inner_accuracy_ = correct / result.extra["score"]["total"]
        self.front_ = front_table(result.front, genes)
        self.scores_ = front_frequency(self.front_, self.n_features_in_)
        self.ranking_ = ranking(self.scores_, self.support_)
        self.fitness_ = float(result.fitness)
        self.seed_ = seed
        self.result_ = result
        self.preprocessing_ = view.fitted
        if not self.support_.any():
            why = (f"the {source} holds no gene" if len(self.front_["size"])
                   else "the search scored no subset of genes (more particles or rounds?)")
            warnings.warn(f"{self.algorithm}: the signature is empty: {why}; transform "
                          f"returns no columns", UserWarning, stacklevel=user_stacklevel())
        self._say(f"{self.algorithm}: {int(mask.sum())} of {self.n_features_in_} genes selected "
                  f"(from the {source}), inner accuracy {100 * self.inner_accuracy_:.2f}%", 1)
        return self

    def checked_spec(self) -> SearchSpec:
        """:meth:`search_spec`, with ``verbose``, ``n_threads`` and ``comm`` checked too:
        every setting of a fit, before any data is read.

        Raises
        ------
        ValueError
            As :meth:`search_spec`; ``verbose`` not an int >= 0; ``n_threads`` not None or an
            int >= 1.
        TypeError
            ``comm`` that is not a communicator.
        """
        spec = self.search_spec()
        if not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ValueError(f"verbose must be an int >= 0, got {self.verbose!r}")
        if self.n_threads is not None and (isinstance(self.n_threads, (bool, np.bool_)) or not
                                           isinstance(self.n_threads, numbers.Integral)
                                           or self.n_threads < 1):
            raise ValueError(f"n_threads must be None or an int >= 1, got {self.n_threads!r}")
        if self.comm is not None and not isinstance(self.comm, Comm):
            raise TypeError(f"comm must be None or a communicator of hpcswarm.comm (world(), "
                            f"SerialComm, MPIComm), got {type(self.comm).__name__}")
        return spec

    def search_spec(self) -> SearchSpec:
        """The search a fit runs: the method with :meth:`method_params`, and the settings of
        :data:`SEARCH_SETTINGS` (None: the specification's default; for ``refine``,
        :func:`~hpcswarm.signatures.refinements.final_refine` of the method), checked by
        :meth:`hpcswarm.selection.spec.SearchSpec.build`.

        Raises
        ------
        ValueError
            As :meth:`method_params`; a ``ParameterError`` for an unknown method, parameter
            or setting value, or a bad ``preprocess`` step.
        """
        settings = {name: getattr(self, name) for name in SEARCH_SETTINGS}
        if settings["refine"] is None:
            settings["refine"] = final_refine(self.algorithm)
        settings["preprocess"] = None if self.preprocess is None else parse_steps(self.preprocess)
        return SearchSpec.build(self.algorithm, self.method_params(), **settings)

    def _say(self, line, level):
        rank = getattr(self.comm, "rank", 0) if self.comm is not None else 0
        if self.verbose >= level and rank == 0:
            print(line, flush=True)

    def _round_printer(self, params):
        """``verbose >= 2``: one line per round, with the search's estimated time left from
        its rounds so far (:func:`hpcswarm.run.progress.task_seconds`)."""
        if self.verbose < 2:
            return None
        n_rounds = params.get("n_iterations")

        def show(row):
            total = task_seconds(row["seconds"], row["iteration"], n_rounds)
            left = None if total is None else max(0.0, total - row["seconds"])
            self._say(f"round {row['iteration']}: best fitness {row['best_fitness']:.4f}, "
                      f"{row['best_size']} genes, {row['evaluations']} evaluations, "
                      f"ETA {format_seconds(left)}", 2)
        return show

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def __sklearn_clone__(self):
        """A clone that shares the communicator (MPI communicators cannot be deep-copied)."""
        if self.comm is None:
            return super().__sklearn_clone__()
        bare = copy.copy(self)
        bare.comm = None
        twin = bare.__sklearn_clone__()
        twin.comm = self.comm
        return twin


def _warn_if_reordered(X, y):
    """Warn when a labels ``Series`` holds the samples of ``X``'s index in another order: fit
    reads labels by position, as scikit-learn does, so they would be misassigned
    (:func:`hpcswarm.select` matches them on the index instead)."""
    index = getattr(y, "index", None)
    if index is None or index.equals(X.index) or not (index.is_unique and X.index.is_unique):
        return
    if len(index) == len(X.index) and set(index) == set(X.index):
        warnings.warn("y holds the samples of X's index in another order; fit reads labels by "
                      "position (scikit-learn's convention), so align them first "
                      "(y.loc[X.index])", UserWarning, stacklevel=user_stacklevel())


def signature_size(n_features_to_select: Union[None, int, float], n_genes: int) -> Optional[int]:
    """The most genes of a signature: ``n_features_to_select`` as a count, or None.

    An int in ``[1, n_genes]`` is itself; a float in ``(0, 1]`` is that fraction of
    ``n_genes`` rounded down, at least 1; None stays None. ValueError otherwise.
    """
    value = n_features_to_select
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if 1 <= value <= n_genes:
            return int(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value <= 1:
        return max(1, int(value * n_genes))
    raise ValueError(f"n_features_to_select must be None, an int in [1, {n_genes}] or a "
                     f"float in (0, 1], got {value!r}")


def _candidates(result):
    """``(correct, size, mask, source)`` of every subset the search scored and reported."""
    n_genes = result.mask.size
    out = []
    for point in result.front:
        mask = np.zeros(n_genes, dtype=bool)
        mask[np.asarray(point["genes"], dtype=np.int64)] = True
        out.append((int(point["correct"]), int(mask.sum()), mask, "front"))
    out.append((int(result.extra["score"]["correct"]), int(result.mask.sum()),
                np.array(result.mask, dtype=bool), "search"))
    if result.refined is not None:
        out.append((int(result.refined.correct), int(result.refined.mask.sum()),
                    np.array(result.refined.mask, dtype=bool), "refine"))
    return out


def choose_signature(result, budget: Optional[int]):
    """The signature of a search result: ``(mask, source, inner correct count)``.

    ``budget`` None: the refined subset if there is one, else the search's subset. An int:
    of the scored subsets with at most ``budget`` genes (front points, the search's subset,
    its refinement), the one with the most inner correct predictions, then the fewest genes
    (the later source on a full tie, so that the search's own subset and its refinement
    are named when they are front points); ``(None, None, None)`` when none fits.
    """
    candidates = _candidates(result)
    if budget is None:
        correct, _, mask, source = candidates[-1]  # the refinement, else the search's subset
        return mask, source, correct
    inside = [c for c in candidates if c[1] <= budget]
    if not inside:
        return None, None, None
    correct, _, mask, source = max(reversed(inside), key=lambda c: (c[0], -c[1]))
    return mask, source, correct


def smallest_subset(result) -> np.ndarray:
    """The scored subset with the fewest genes (then the most correct): where a cut starts."""
    return min(_candidates(result), key=lambda c: (c[1], -c[0]))[2]


def front_frequency(front: dict, n_genes: int) -> np.ndarray:
    """Per gene, the share of the points of ``front`` (:func:`front_table`) that hold it."""
    counts = np.zeros(n_genes, dtype=np.float64)
    for genes in front["genes"]:
        counts[genes] += 1.0
    return counts / max(len(front["genes"]), 1)


def ranking(scores: np.ndarray, support: np.ndarray) -> np.ndarray:
    """Rank of every gene from 1: those of ``support`` first, then by decreasing ``scores``,
    then by column."""
    order = np.lexsort((np.arange(scores.size), -scores, ~support))
    ranks = np.empty(scores.size, dtype=np.int64)
    ranks[order] = np.arange(1, scores.size + 1)
    return ranks


def front_table(front, genes: np.ndarray) -> dict:
    """A search's front as columns: ``size``, ``inner_accuracy``, ``genes`` (each point's
    indices into ``genes``, the columns of the data that the searched matrix holds)."""
    return {"size": np.array([int(p["size"]) for p in front], dtype=np.int64),
            "inner_accuracy": np.array([p["correct"] / p["total"] for p in front]),
            "genes": [genes[np.asarray(p["genes"], dtype=np.int64)] for p in front]}


_KEYWORDS = tuple(inspect.signature(SwarmFeatureSelector.__init__).parameters)

SETTINGS = tuple(name for name in _KEYWORDS
                 if any(name in {p.name for p in cls.PARAMS} for cls in METHODS.values()))
"""The method parameters the selector also takes as its own keyword arguments (``None``: the
method's paper default), so that ``GridSearchCV`` can search them; every other parameter of
a method goes through ``params``. Read from the selector's signature."""

SEARCH_SETTINGS = tuple(name for name in _KEYWORDS if name in SPEC_SETTINGS)
"""The settings of :data:`hpcswarm.selection.spec.SETTINGS` (the rows of
:data:`~hpcswarm.selection.spec.SPEC_PARAMS` and ``preprocess``) the selector takes as keyword
arguments and passes to the search (``None``: the specification's default; for ``refine``
the final signature's, :func:`~hpcswarm.signatures.refinements.final_refine`)."""

def _described(text):
    """``text`` as the description of a numpydoc parameter: indented 8, lines of at most 92."""
    import textwrap

    return textwrap.fill(text, width=92, initial_indent=" " * 8, subsequent_indent=" " * 8)


SEARCH_SETTINGS_DOC = f"""\
    max_genes : None or int, default None
{_described(
    "Cap on the genes of every subset the search evaluates, for the swarm methods that have "
    "one (" + ", ".join(f"``{name}``" for name, method in METHODS.items()
                        if getattr(method, "supports_max_genes", False))
    + "; ``vlpso``'s longest particle); a ``ParameterError`` for the other methods.")}
    sample_shards : None or int, default None
        Ranks of ``comm`` that split every evaluation's held-out samples (and its cached
        distances) between them (:data:`hpcswarm.selection.spec.SPEC_PARAMS`); ``None``
        keeps the specification's default, 1.
    device : None, "cpu" or "gpu", default None
        Where the k-NN scorer runs; ``None`` keeps the specification's default, ``"cpu"``.
    cache_memory : None or float, default None
        GB of distance states each rank keeps of its particles between rounds (0: none);
        ``None``: a quarter of the memory each rank sees. Results do not depend on it.
    subsamples : None or int, default None
        The number of searches on halves of the training samples (complementary pairs: an
        even number) for ``refine="stability"`` or ``"consensus"``; ``None`` keeps the
        specification's default.
"""
"""The parameter documentation of the settings of :data:`SEARCH_SETTINGS` but
``preprocess``, shared by the selector's docstring and :func:`hpcswarm.select`'s
(:func:`with_setting_docs`)."""

METHOD_SETTINGS_DOC = f"""\
    n_particles : None or int, default None
        Swarm size of a swarm method. This and the settings below are the method's
        parameters of these names (:data:`hpcswarm.selector.SETTINGS`), as keyword arguments
        for ``GridSearchCV``; ``None`` keeps the method's paper default. A setting that the
        method does not have (``n_particles`` of the greedy ``sfs``) is ignored, so that
        one grid can span swarms and greedy methods. Giving a setting both here and in
        ``params`` is a ``ValueError``.
    n_iterations : None or int, default None
        Rounds of a swarm method's search, the initial evaluation included.
    k : None or int, default None
        Neighbours of the k-NN classifier of the fitness.
    cv : None, str or int, default None
        Cross-validation of the fitness: ``"loo"``, ``"holdout"`` or a number of folds.
    objective : None or str, default None
{_described(
    "The fitness to maximise, one of "
    + ", ".join(f'``"{name}"``' for name in OBJECTIVE_TABLE)
    + " (:data:`hpcswarm.store.objectives.OBJECTIVE_TABLE`; "
    + ", ".join(f'``"{alias}"`` stands for ``"{name}"``'
                for alias, name in OBJECTIVE_ALIASES.items()) + ").")}
    alpha : None or float, default None
        Weight of accuracy in the ``"combined"`` objective, in the open interval
        ({ALPHA_RANGE[0]}, {ALPHA_RANGE[1]}).
    archive_size : None or int, default None
        Subsets remembered by the fitness archive (0: off).
"""
"""The parameter documentation of the method settings (:data:`SETTINGS`), shared by the
selector's docstring and :func:`hpcswarm.select`'s (:func:`with_setting_docs`)."""


def with_setting_docs(doc):
    """``doc`` with its placeholder lines ``SEARCH_SETTINGS_DOC`` and ``METHOD_SETTINGS_DOC``
    replaced by those texts: one copy of the documentation of the settings the selector and
    :func:`hpcswarm.select` share."""
    for name, text in (("SEARCH_SETTINGS_DOC", SEARCH_SETTINGS_DOC),
                       ("METHOD_SETTINGS_DOC", METHOD_SETTINGS_DOC)):
        doc = doc.replace(f"    {name}\n", text)
    return doc


SwarmFeatureSelector.__doc__ = with_setting_docs(SwarmFeatureSelector.__doc__)

PYTHON_NAMES = {"seed": "random_state"}
"""The keyword of the selector and of :func:`hpcswarm.select` for a job key or ``run`` flag
spelled otherwise: scikit-learn's ``random_state`` for the run seed (:func:`run_seed`). The
settings of :data:`hpcswarm.selection.spec.SPEC_PARAMS` keep their names
(:data:`SEARCH_SETTINGS`)."""
