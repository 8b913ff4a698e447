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

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from hpcswarm.methods import algorithm_params
from hpcswarm.search import run_search

_SEED_BOUND = np.iinfo(np.int32).max
"""Run seeds drawn from a random state lie in ``[0, 2**31 - 1)`` (as scikit-learn's own)."""


def run_seed(random_state):
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
        A negative int, or any other type.
    """
    problem = (f"random_state must be None, an int >= 0, a RandomState or a Generator, "
               f"got {random_state!r}")
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(problem)
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_SEED_BOUND))
    try:
        state = check_random_state(random_state)  # None: NumPy's global RandomState
    except ValueError:
        raise ValueError(problem) from None
    return int(state.randint(_SEED_BOUND))


class SwarmFeatureSelector(SelectorMixin, BaseEstimator):
    """Select genes (columns) with a search of hpcswarm and its k-NN wrapper fitness.

    Any method of ``hpcswarm run``: the swarms (Tran et al. 2016, Gu et al. 2018, Li et al.,
    Chuang et al. 2008, Xue et al. 2012) and the greedy baselines (``sfs``, ``sbs``, ``lfs``,
    ``gsbs``, ``all-genes``), with the paper defaults of that method.

    Parameters
    ----------
    algorithm : str, default "pso-lsrg"
        A name of :data:`hpcswarm.methods.METHODS`.
    params : dict, default None
        Overrides of the method's parameters, fitness included (``k``, ``cv``,
        ``objective``, ...), as ``--param`` on the command line; checked at ``fit``.
    random_state : None, int, RandomState or Generator, default None
        Seed of each fit (folds and random streams), see :func:`run_seed`; an int gives
        reproducible fits.
    comm : communicator, default None
        ``None`` runs the search serially; a communicator of :mod:`hpcswarm.comm` runs it over
        its ranks (every rank calls ``fit`` with the same data, collectively). Clones share
        it: a communicator is not copied. Under ``cross_val_score`` or ``GridSearchCV`` keep
        ``n_jobs=None`` so that every rank makes the same fits in the same order.

    Attributes
    ----------
    support_ : ndarray of shape (n_features_in_,), bool
        The selected genes.
    fitness_ : float
        Their fitness on the training data (maximised).
    seed_ : int
        The run seed of the fit.
    result_ : SearchResult
        The whole search result (history, parameters, method records).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` has column names.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> selector = SwarmFeatureSelector("sfs", random_state=0).fit(X, y)
    >>> selector.transform(X).shape[1] == int(selector.support_.sum())
    True
    """

    def __init__(self, algorithm="pso-lsrg", params=None, random_state=None, comm=None):
        self.algorithm = algorithm
        self.params = params
        self.random_state = random_state
        self.comm = comm

    def fit(self, X, y):
        """Run the search on ``X, y``.

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
            Invalid data, unknown algorithm or parameter (``ParameterError``), bad
            ``random_state``.
        TypeError
            Sparse ``X``; a ``comm`` given to a search that cannot use one.
        """
        if self.params is not None and not isinstance(self.params, dict):
            raise ValueError(f"params must be a dict or None, got {self.params!r}")
        algorithm_params(self.algorithm, self.params)  # fail before touching the data
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        seed = run_seed(self.random_state)
        options = {}
        if self.comm is not None:
            if "comm" not in inspect.signature(run_search).parameters:
                raise TypeError("this version of hpcswarm.search.run_search takes no "
                                "communicator; use comm=None")
            options["comm"] = self.comm
        result = run_search(X, y, self.algorithm, self.params, seed=seed, **options)
        self.support_ = np.array(result.mask, dtype=bool)
        self.fitness_ = float(result.fitness)
        self.seed_ = seed
        self.result_ = result
        return self

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
