"""One call from data in memory to a gene signature: ``hpcswarm.select``.

>>> import numpy as np
>>> import hpcswarm
>>> rng = np.random.default_rng(0)
>>> y = np.arange(30) % 2
>>> X = rng.normal(size=(30, 8)) + 3.0 * y[:, None] * (np.arange(8) == 2)
>>> hpcswarm.select(X, y, algorithm="sfs").gene_names
['gene2']

The data may be a NumPy array (genes named ``gene0``, ``gene1``...), a pandas ``DataFrame``
(samples as rows, genes named by its columns), an ``AnnData`` (label from an ``obs`` column,
values from ``X`` or a ``layer``) or a :class:`~hpcswarm.data.Dataset` (its labels, class
names and gene names); the search is that of :class:`~hpcswarm.selector.
SwarmFeatureSelector` on all the samples given, refined as a ``final-signature`` job refines
its last search. With an ``AnnData`` the result is written back as scanpy's
``highly_variable_genes`` does: ``var['hpcswarm_selected']``, ``var['hpcswarm_score']``,
``var['hpcswarm_rank']`` and ``uns['hpcswarm']['params']``. pandas and anndata are imported
only when such an object is given.
"""

import numbers
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

from hpcswarm.data.dataset import Dataset
from hpcswarm.inputs import check_columns, check_gene_names, check_labels, checked_matrix
from hpcswarm.selector import (PYTHON_NAMES, SEARCH_SETTINGS, SETTINGS, SwarmFeatureSelector,
                               with_setting_docs)
from hpcswarm.signatures.compact import compact_note
from hpcswarm.signatures.refinements import SIGNATURE_METHOD, final_refine
from hpcswarm.store.encoding import finite

REPR_GENES = 5
"""Gene names a :class:`Selection`'s ``repr`` shows (``gene_names`` holds them all)."""

UNS_KEY = "hpcswarm"
"""Default key of ``adata.uns`` and prefix of the ``adata.var`` column written back."""


@dataclass
class Selection:
    """The signature ``select`` found, with what produced it.

    Attributes
    ----------
    genes : ndarray of int
        Column indices of the signature's genes.
    gene_names : list of str
    inner_accuracy : float
        The signature's inner validation accuracy on the samples given (k-NN
        cross-validation of the search's fitness; an optimistic estimate, since these
        samples also chose it: cross-validate a pipeline for an unbiased one).
    chosen_from : str
        ``"search"``, ``"refine"``, ``"front"`` or ``"eliminate"``
        (:class:`~hpcswarm.selector.SwarmFeatureSelector`, Notes).
    front : dict
        The search's Pareto front: ``size``, ``inner_accuracy``, ``genes`` (indices) and
        ``gene_names`` of each point, in increasing size.
    history : list of dict
        One row per round of the search (best fitness, sizes, evaluations, seconds).
    algorithm : str
    params : dict
        Every parameter of the search, defaults included.
    settings : dict
        The arguments of ``select`` that shaped the signature (``random_state`` as the run
        seed it gave, size, refinement...).
    selector : SwarmFeatureSelector
        The fitted selector (``transform`` new samples with it).
    data : ndarray
        The matrix the signature was chosen from, samples x genes (for the plots and
        :meth:`to_frame`).
    labels : ndarray
        The class of each sample of ``data``, by name where the data named the classes.
    all_gene_names : list of str
        The name of every gene (column) of ``data``.
    """

    genes: np.ndarray = field(repr=False)
    gene_names: list
    inner_accuracy: float
    chosen_from: str
    front: dict = field(repr=False)
    history: list = field(repr=False)
    algorithm: str
    params: dict = field(repr=False)
    settings: dict
    selector: SwarmFeatureSelector = field(repr=False)
    data: Any = field(default=None, repr=False)
    labels: Any = field(default=None, repr=False)
    all_gene_names: list = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        """One short line: the method, the size, the first genes, the inner accuracy."""
        shown = ", ".join(repr(name) for name in self.gene_names[:REPR_GENES])
        more = (f", ... {len(self.gene_names) - REPR_GENES} more"
                if len(self.gene_names) > REPR_GENES else "")
        return (f"Selection({self.algorithm}: {len(self.gene_names)} genes [{shown}{more}], "
                f"inner_accuracy={self.inner_accuracy:.4g}, chosen_from={self.chosen_from!r})")

    def to_frame(self) -> "pandas.DataFrame":
        """The signature as a ``pandas.DataFrame``: one row per gene, indexed by its name, with
        its ``column`` (0-based index in the data), its ``score`` (selection frequency on
        the front, :attr:`~hpcswarm.selector.SwarmFeatureSelector.scores_`), its mean value
        in each class (``mean_CLASS``) and the one-way ANOVA F statistic of its values across
        the classes (``anova_f``, :func:`hpcswarm.results.report.plots.separation`), computed on the
        samples given."""
        from hpcswarm.results.report.plots import class_groups, separation

        pandas = _pandas()
        values = np.asarray(self.data)[:, self.genes].astype(np.float64)
        codes, names = class_groups(self.labels)
        columns = {"column": self.genes.astype(np.int64),
                   "score": np.asarray(self.selector.scores_)[self.genes]}
        for code, name in enumerate(names):
            columns[f"mean_{name}"] = values[codes == code].mean(axis=0)
        columns["anova_f"] = separation(values, codes)
        return pandas.DataFrame(columns, index=pandas.Index(self.gene_names, name="gene"))

    def to_dict(self) -> dict:
        """The signature as plain Python values, ready for ``json.dumps``: ``gene_names``,
        ``genes`` (column indices), ``inner_accuracy``, ``chosen_from``, ``algorithm``,
        ``params``, ``settings``, ``front`` (``size``, ``inner_accuracy``, ``genes`` and
        ``gene_names`` of each point, as lists) and ``history`` (one dict per round)."""
        front = {"size": np.asarray(self.front["size"]).tolist(),
                 "inner_accuracy": np.asarray(self.front["inner_accuracy"]).tolist(),
                 "genes": [np.asarray(point).tolist() for point in self.front["genes"]],
                 "gene_names": [list(point) for point in self.front["gene_names"]]}
        return finite({"gene_names": list(self.gene_names), "genes": self.genes.tolist(),
                       "inner_accuracy": self.inner_accuracy, "chosen_from": self.chosen_from,
                       "algorithm": self.algorithm, "params": dict(self.params),
                       "settings": dict(self.settings), "front": front,
                       "history": [dict(row) for row in self.history]})

    def front_frame(self) -> "pandas.DataFrame":
        """The front as a ``pandas.DataFrame``: ``size``, ``inner_accuracy``, ``gene_names``."""
        return _pandas().DataFrame({key: self.front[key]
                                    for key in ("size", "inner_accuracy", "gene_names")})

    def history_frame(self) -> "pandas.DataFrame":
        """The search's history as a ``pandas.DataFrame``, one row per round."""
        return _pandas().DataFrame(self.history)

    def plot_expression(self, folder: Union[None, str, "os.PathLike[str]"] = None,
                        prefix: str = "signature", title: str = "",
                        overwrite: bool = False) -> Union[list, tuple]:
        """The signature's expression by class (:mod:`hpcswarm.results.report.plots`).

        Without ``folder``: the two matplotlib figures ``(heatmap, strips)`` to show; with
        it: the two PNG files written there, ``PREFIX-heatmap.png`` and
        ``PREFIX-by-class.png`` (the folder is created if missing; an existing file is
        replaced only with ``overwrite``). Needs matplotlib (the ``plot`` extra).

        Raises
        ------
        ValueError
            A file to write exists and ``overwrite`` is False; ``folder`` names a file;
            ``prefix`` is empty or names a folder; a file to write is not a regular file (a
            FIFO, a device: never replaced), or the files cannot be written.
        """
        from hpcswarm.errors import DataError
        from hpcswarm.results.report.plots import (expression_heatmap, expression_plot_files,
                                                   expression_strips, write_expression_plots)
        from hpcswarm.store.atomic import special_kind

        arguments = (self.data, self.labels, self.all_gene_names, self.genes)
        if not isinstance(prefix, str) or not prefix or os.sep in prefix or (
                os.altsep and os.altsep in prefix):
            raise ValueError(f"prefix must be the start of a file name, without a folder, got "
                             f"{prefix!r}; give the folder as folder")
        if folder is not None:
            if os.path.lexists(folder) and not os.path.isdir(folder):
                raise ValueError(f"folder: {folder} exists and is not a folder")
            files = expression_plot_files(folder, prefix)
            for path in files:
                kind = special_kind(path)
                if kind is not None:
                    raise ValueError(f"folder: {path} is {kind}, not a regular file; it is "
                                     "never replaced, even with overwrite=True")
            existing = [path for path in files if os.path.lexists(path)]
            if existing and not overwrite:
                raise ValueError(f"folder: {existing[0]} already exists; pass overwrite=True "
                                 f"to replace it, or another folder or prefix")
            try:
                return write_expression_plots(*arguments, folder, title=title, prefix=prefix,
                                              overwrite=overwrite)
            except DataError as exc:  # the writer's one-line reason, as the API's error type
                raise ValueError(f"folder: {exc}") from None
        return (expression_heatmap(*arguments, title=title),
                expression_strips(*arguments, title=title))


def select(data: Any, labels: Union[None, str, ArrayLike] = None, *,
           algorithm: str = SIGNATURE_METHOD,
           n_features_to_select: Union[None, int, float] = None,
           refine: Optional[str] = None, max_genes: Optional[int] = None,
           sample_shards: Optional[int] = None, device: Optional[str] = None,
           cache_memory: Optional[float] = None,
           subsamples: Optional[int] = None, preprocess: Union[None, dict, str] = None,
           n_particles: Optional[int] = None,
           n_iterations: Optional[int] = None, k: Optional[int] = None,
           cv: Union[None, str, int] = None, objective: Optional[str] = None,
           alpha: Optional[float] = None, archive_size: Optional[int] = None,
           params: Optional[dict] = None,
           random_state: Union[None, int, np.random.RandomState, np.random.Generator] = 0,
           comm: Any = None, layer: Optional[str] = None,
           gene_names: Optional[Sequence[str]] = None, inplace: bool = True,
           key_added: str = UNS_KEY, verbose: int = 0, n_threads: Optional[int] = None,
           seed: Optional[int] = None) -> Selection:
    """Select a gene signature from an expression matrix in memory.

    Parameters
    ----------
    data : ndarray, scipy.sparse matrix, pandas.DataFrame, anndata.AnnData or Dataset
        Samples as rows, genes as columns (``AnnData``: ``X`` or ``layers[layer]``). A sparse
        matrix (CSR, CSC or COO, bare or an ``AnnData``'s) is made dense once its arrays are
        checked by the rules ``convert`` reads an ``.h5ad`` file by
        (:func:`hpcswarm.inputs.check_sparse`); a :class:`~hpcswarm.data.Dataset` of
        :func:`~hpcswarm.data.load_dataset` brings its labels, class names and gene names.
    labels : str or array-like of shape (n_samples,)
        The class of each sample, or the name of an ``obs`` column (``AnnData``) or of a
        column of the ``DataFrame`` (a str, or a number for a frame with numbered columns;
        that column is then not a gene). A pandas ``Series`` with a ``DataFrame`` is matched
        on its index (labels of samples that are not rows are left out). At least two
        classes, every sample labelled, labels of one type; float labels with more than
        half of them distinct, or not whole numbers, are refused as measurements unless
        categorical. None with a ``Dataset`` (it has its own).
    algorithm : str, default "vlpso"
        The search method, a name of :data:`hpcswarm.selection.methods.METHODS`. The default,
        VLPSO (Tran, Xue & Zhang 2019), is the search of the default signature
        (:data:`hpcswarm.signatures.refinements.SIGNATURE_METHOD`), refined as ``refine``
        says.
    n_features_to_select : None, int or float, default None
        Cap on the signature's genes: at most this many (an int >= 1) or at most this
        fraction of the genes (a float in (0, 1]), chosen as
        :class:`~hpcswarm.selector.SwarmFeatureSelector` chooses (its Notes).
    SEARCH_SETTINGS_DOC
    preprocess : dict or str, optional
        Steps the search reads the data through: a dict as the ``[preprocess]`` table of a
        job (``{"log2": True, "top_variance": 500}``) or a text as ``hpcswarm evaluate
        --preprocess`` (``"log2,top_variance=500"``); None: the method's own (VLPSO's
        min-max scaling, :func:`hpcswarm.selection.spec.preprocess_steps`), ``{}``: none;
        fitted on all the samples given (one
        search, no outer folds, as the last search of a ``final-signature`` job; a
        cross-validated estimate needs a job's protocols, which fit them in every fold). The
        signature names original genes (:class:`~hpcswarm.selector.SwarmFeatureSelector`).
    params : dict, optional
        Overrides of the method's other parameters, as ``--param`` on the command line.
    verbose : int, default 0
        ``0`` silent; ``1`` one line when the search ends; ``2`` also one line per round.
    refine : str, optional
        The refinement of the search's subset
        (:data:`hpcswarm.signatures.refinements.REFINEMENTS`). None: that of a
        ``final-signature`` job of the same method
        (:func:`~hpcswarm.signatures.refinements.final_refine`:
        ``"neighbour-purity-1se-anova"`` for VLPSO, the default signature,
        ``"relevance-subset-1se"`` for the other methods; ``"none"``: the search's subset as
        it is), since ``select`` on all samples is that job's last search.
    METHOD_SETTINGS_DOC
    random_state : None, int, RandomState or Generator, default 0
        Run seed, scikit-learn conventions (:func:`~hpcswarm.selector.run_seed`):
        ``select(..., random_state=s)`` selects what ``hpcswarm run --seed s`` selects on
        the same matrix and settings.
    comm : communicator, optional
        None runs serially; a communicator of :mod:`hpcswarm.comm` runs the search over its
        ranks (every rank calls ``select`` with the same data).
    layer : str, optional
        ``AnnData`` only: the layer holding the values.
    gene_names : sequence of str, optional
        Names of the columns of a NumPy array (default ``gene0``, ``gene1``...).
    inplace : bool, default True
        ``AnnData`` only: write the signature, each gene's score and rank into ``var`` and
        the parameters and scores into ``uns[key_added]`` (:func:`write_back`).
    key_added : str, default "hpcswarm"
    n_threads : int, optional
        BLAS/OpenMP threads of the search; None: no more than ``OMP_NUM_THREADS`` when
        set, else the cores the machine's load leaves free
        (:class:`~hpcswarm.selector.SwarmFeatureSelector`'s ``n_threads``).
    seed : int, optional
        Deprecated alias of ``random_state`` (a ``DeprecationWarning``).

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        Missing, unknown or unusable labels (one class, missing ones, mixed types, a
        measurement: :func:`hpcswarm.inputs.check_labels`), layer or column; a gene named
        twice or not named; columns that are not numbers; data that is not samples x genes
        of finite real numbers, or a damaged sparse matrix
        (:func:`~hpcswarm.inputs.checked_matrix`); ``gene_names`` with an ``AnnData``; invalid
        settings (``ParameterError`` for the method's parameters).
    TypeError
        Data of another type; ``seed`` and ``random_state`` both given; ``gene_names`` that
        is not a sequence of names, ``inplace`` not a bool, ``key_added`` not a str; ``comm``
        that is not a communicator.
    ImportError
        A ``DataFrame`` view asked for without pandas.

    Warns
    -----
    UserWarning
        A signature of more than :data:`~hpcswarm.signatures.compact.COMPACT_GENES` genes
        (50): far from compact, as a small swarm or few rounds leave it; a refinement
        (``refine="prune-compact"``) or more rounds give a compact one.
    """
    given = dict(locals())  # the keywords, before any is reassigned
    if seed is not None:
        warnings.warn("select(seed=...) is deprecated; use random_state=...",
                      DeprecationWarning, stacklevel=2)
        if not (isinstance(random_state, int) and random_state == 0):
            raise TypeError("select() got both seed and random_state; give random_state only")
        random_state = seed
    if not isinstance(inplace, (bool, np.bool_)):
        raise TypeError(f"inplace must be True or False, got {inplace!r}")
    if not isinstance(key_added, str):
        raise TypeError(f"key_added must be a str, got {key_added!r}")
    if not key_added:
        raise ValueError("key_added must name the key to write, got ''")
    if refine is None:
        given["refine"] = refine = final_refine(algorithm)
    search = {name: given[name] for name in SEARCH_SETTINGS}
    method = {name: given[name] for name in SETTINGS}
    selector = SwarmFeatureSelector(
        algorithm, params, random_state=random_state, comm=comm,
        n_features_to_select=n_features_to_select, verbose=verbose, n_threads=n_threads,
        **search, **method)
    selector.checked_spec()  # every setting, before the data
    X, y, shown, names, adata = _matrix(data, labels, layer, gene_names)
    selector.fit_checked(X, y)
    genes = np.flatnonzero(selector.support_)
    front = dict(selector.front_, gene_names=[[names[g] for g in point]
                                              for point in selector.front_["genes"]])
    recorded = finite({"algorithm": algorithm, "n_features_to_select": n_features_to_select,
                       **search, PYTHON_NAMES["seed"]: selector.seed_, "layer": layer,
                       "labels": labels if _names_a_column(labels) else None})
    result = Selection(genes=genes, gene_names=[names[g] for g in genes],
                       inner_accuracy=float(selector.inner_accuracy_),
                       chosen_from=selector.chosen_from_, front=front,
                       history=list(selector.result_.history), algorithm=algorithm,
                       params=dict(selector.result_.params), settings=recorded,
                       selector=selector, data=X, labels=shown, all_gene_names=names)
    if adata is not None and inplace:
        write_back(adata, result, key_added)
    note = compact_note(len(genes), result.inner_accuracy,
                        "refine='prune-compact' or more n_iterations gives a compact one")
    if note is not None:
        warnings.warn(f"select: {note}", UserWarning, stacklevel=2)
    return result


select.__doc__ = with_setting_docs(select.__doc__)


def _matrix(data, labels, layer, gene_names):
    """``(X, y, shown labels, gene names, AnnData or None)`` of the data ``select`` was given:
    ``y`` is what the search reads, ``shown`` the class of each sample by name."""
    if _is_anndata(data):
        if gene_names is not None:
            raise ValueError("gene_names: an AnnData's genes are named by its var_names")
        X, y, names = _from_anndata(data, labels, layer)
        return X, y, y, names, data
    if layer is not None:
        raise ValueError(f"layer={layer!r} applies to an AnnData only")
    if isinstance(data, Dataset):
        for given, name in ((labels, "labels"), (gene_names, "gene_names")):
            if given is not None:
                raise ValueError(f"{name}: a Dataset brings its own; give it alone")
        shown = np.asarray(data.class_names, dtype=object)[data.y]
        names = check_gene_names(data.gene_names, "data.gene_names")
        return (checked_matrix(np.asarray(data.X), "data.X", names),
                check_labels(data.y, "data.y"), shown, names, None)
    if _is_dataframe(data):
        if gene_names is not None:
            raise ValueError("gene_names: a DataFrame's genes are named by its columns")
        if _names_a_column(labels):
            if labels not in data.columns:
                raise ValueError(f"labels: no column {labels!r} in the DataFrame")
            y = check_labels(data[labels], f"labels (column {labels!r})")
            data = data.drop(columns=[labels])
        elif labels is not None and hasattr(labels, "index") and hasattr(labels, "reindex"):
            y = check_labels(_aligned(labels, data.index), "labels")
        else:
            y = None
        names = check_columns(data, "data")
        X = checked_matrix(data.to_numpy(dtype=np.float64, na_value=np.nan), "data", names)
    elif isinstance(data, np.ndarray) or _is_sparse(data):
        if isinstance(labels, str):
            raise ValueError("labels: a column name needs a DataFrame or an AnnData; give "
                             "the labels of a NumPy array as an array")
        n_genes = data.shape[1] if len(data.shape) == 2 else 0
        names = [f"gene{i}" for i in range(n_genes)]
        if gene_names is not None:
            names = check_gene_names(gene_names, "gene_names")
            if len(data.shape) == 2 and len(names) != n_genes:
                raise ValueError(f"gene_names: {len(names)} names for {n_genes} genes")
        X = checked_matrix(data, "data", names)
        y = None
    else:
        raise TypeError(f"data must be a NumPy array, a pandas DataFrame, an AnnData, a "
                        f"hpcswarm Dataset or a scipy.sparse matrix, got {type(data).__name__}")
    if y is None:  # labels given by position
        if labels is None:
            raise ValueError("labels: give the class of every sample (an array, or a column "
                             "name)")
        y = check_labels(labels, "labels")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"labels: {y.shape[0]} labels for {X.shape[0]} samples")
    return X, y, y, names, None


def _names_a_column(labels) -> bool:
    """Whether ``labels`` is one name (a str, or a number such as the int column names of a
    DataFrame made from an array) rather than one label per sample."""
    return (isinstance(labels, (str, numbers.Number, np.generic))
            and not isinstance(labels, (bool, np.bool_)))


def _aligned(series, index):
    """A labels ``Series`` in the order of the DataFrame's ``index`` (labels of samples that
    are not rows are left out, as a phenotype table of more samples has them); ValueError
    when a row has no label or either index names a sample twice."""
    if series.index.equals(index):
        return series
    for holder, names in (("DataFrame", index), ("labels Series", series.index)):
        if not names.is_unique:
            twice = names[names.duplicated()][0]
            raise ValueError(f"labels: the {holder}'s index names sample {twice!r} more than "
                             f"once, so the labels cannot be matched to the rows by name; "
                             f"give them as an array in the rows' order")
    labelled = set(series.index)
    missing = [name for name in index if name not in labelled]
    if missing:
        raise ValueError(f"labels: the Series's index does not match the DataFrame's index "
                         f"({len(missing)} sample(s) without a label: {_listed(missing)}); "
                         f"index the labels by the DataFrame's rows, or give an array in "
                         f"their order")
    return series.reindex(index)


def _listed(names, limit=3):
    return ", ".join(repr(name) for name in names[:limit]) + (", ..." if len(names) > limit
                                                              else "")


def _from_anndata(adata, labels, layer):
    columns = ", ".join(map(str, adata.obs.columns)) or "none"
    if not isinstance(labels, str):
        raise ValueError(f"labels: give the name of an obs column of the AnnData (one of "
                         f"{columns})")
    if labels not in adata.obs.columns:
        raise ValueError(f"labels: no obs column {labels!r} in the AnnData (columns: {columns})")
    if layer is None:
        values, where = adata.X, "data.X"
    elif layer in adata.layers:
        values, where = adata.layers[layer], f"data.layers[{layer!r}]"
    else:
        raise ValueError(f"layer: no layer {layer!r} in the AnnData (layers: "
                         f"{', '.join(adata.layers.keys()) or 'none'})")
    if values is None:
        raise ValueError("the AnnData has no X; name a layer")
    names = check_gene_names(adata.var_names, "data.var_names")
    y = check_labels(adata.obs[labels], f"labels (obs column {labels!r})").astype(str)
    return checked_matrix(values, where, names), y, names


def write_back(adata: Any, result: Selection, key: str = UNS_KEY) -> None:
    """Write a signature into an AnnData, as scanpy's tools write theirs.

    ``var[f"{key}_selected"]`` (bool: the signature), ``var[f"{key}_score"]`` (each gene's
    selection frequency on the front, :attr:`~hpcswarm.selector.SwarmFeatureSelector.scores_`)
    and ``var[f"{key}_rank"]`` (from 1, the signature first:
    :attr:`~hpcswarm.selector.SwarmFeatureSelector.ranking_`). ``uns[key]["params"]`` holds
    the arguments of ``select`` and every parameter of the method (None written ``"none"``);
    ``uns[key]`` also holds the scores: ``inner_accuracy``, ``chosen_from``,
    ``selected_genes``, ``front_size``, ``front_inner_accuracy`` and ``best_fitness`` (per
    round), all of types an ``.h5ad`` file stores.
    """
    selected = np.zeros(adata.n_vars, dtype=bool)
    selected[result.genes] = True
    adata.var[f"{key}_selected"] = selected
    adata.var[f"{key}_score"] = np.asarray(result.selector.scores_, dtype=np.float64)
    adata.var[f"{key}_rank"] = np.asarray(result.selector.ranking_, dtype=np.int64)
    params = {**result.settings, **result.params}
    adata.uns[key] = {
        "params": {name: ("none" if value is None else value) for name, value in params.items()},
        "inner_accuracy": float(result.inner_accuracy),
        "chosen_from": result.chosen_from,
        "selected_genes": np.array(result.gene_names, dtype=object),
        "front_size": np.asarray(result.front["size"], dtype=np.int64),
        "front_inner_accuracy": np.asarray(result.front["inner_accuracy"], dtype=np.float64),
        "best_fitness": np.array([row["best_fitness"] for row in result.history],
                                 dtype=np.float64),
    }


def _is_anndata(data):
    return type(data).__module__.split(".")[0] == "anndata" and hasattr(data, "obs")


def _is_sparse(data):
    return type(data).__module__.split(".")[0] == "scipy" and hasattr(data, "tocoo")


def _is_dataframe(data):
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns")


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("a DataFrame view needs pandas: pip install pandas") from None
    return pandas
