"""One call from data in memory to a gene signature: ``hpcswarm.select``.

>>> import numpy as np
>>> import hpcswarm
>>> rng = np.random.default_rng(0)
>>> y = np.arange(30) % 2
>>> X = rng.normal(size=(30, 8)) + 3.0 * y[:, None] * (np.arange(8) == 2)
>>> hpcswarm.select(X, y, algorithm="sfs").gene_names
['gene2']

The data may be a NumPy array (genes named ``gene0``, ``gene1``...), a pandas ``DataFrame``
(samples as rows, genes named by its columns) or an ``AnnData`` (label from an ``obs`` column,
values from ``X`` or a ``layer``); the search is that of :class:`~hpcswarm.selector.
SwarmFeatureSelector` on all the samples given. With an ``AnnData`` the result is written
back as scanpy's ``highly_variable_genes`` does: ``var['hpcswarm_selected']`` and
``uns['hpcswarm']``. pandas and anndata are imported only when such an object is given.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

import numpy as np

from hpcswarm.selector import SETTINGS, SwarmFeatureSelector

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
        The arguments of ``select`` that shaped the signature (seed, size, refinement...).
    selector : SwarmFeatureSelector
        The fitted selector (``transform`` new samples with it).
    data, labels, all_gene_names
        The matrix, labels and gene names the signature was chosen from (for the plots).
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

    def to_frame(self) -> "pandas.DataFrame":
        """The signature as a ``pandas.DataFrame``: one row per gene, indexed by its name, with
        its ``column`` (0-based index in the data), its mean value in each class
        (``mean_CLASS``) and the one-way ANOVA F statistic of its values across the classes
        (``anova_f``, :func:`hpcswarm.plots.separation`), computed on the samples given."""
        from hpcswarm.plots import class_groups, separation

        pandas = _pandas()
        values = np.asarray(self.data)[:, self.genes].astype(np.float64)
        codes, names = class_groups(self.labels)
        columns = {"column": self.genes.astype(np.int64)}
        for code, name in enumerate(names):
            columns[f"mean_{name}"] = values[codes == code].mean(axis=0)
        columns["anova_f"] = separation(values, codes)
        return pandas.DataFrame(columns, index=pandas.Index(self.gene_names, name="gene"))

    def front_frame(self) -> "pandas.DataFrame":
        """The front as a ``pandas.DataFrame``: ``size``, ``inner_accuracy``, ``gene_names``."""
        return _pandas().DataFrame({key: self.front[key]
                                    for key in ("size", "inner_accuracy", "gene_names")})

    def history_frame(self) -> "pandas.DataFrame":
        """The search's history as a ``pandas.DataFrame``, one row per round."""
        return _pandas().DataFrame(self.history)

    def plot_expression(self, folder: Optional[str] = None, prefix: str = "signature",
                        title: str = "", overwrite: bool = False) -> Union[list, tuple]:
        """The signature's expression by class (:mod:`hpcswarm.plots`).

        Without ``folder``: the two matplotlib figures ``(heatmap, strips)`` to show; with
        it: the two PNG files written there, ``PREFIX-heatmap.png`` and
        ``PREFIX-by-class.png`` (the folder is created if missing; an existing file is
        replaced only with ``overwrite``). Needs matplotlib (the ``plot`` extra).
        """
        from hpcswarm import plots

        arguments = (self.data, self.labels, self.all_gene_names, self.genes)
        if folder is not None:
            return plots.write_expression_plots(*arguments, folder, title=title,
                                                prefix=prefix, overwrite=overwrite)
        return (plots.expression_heatmap(*arguments, title=title),
                plots.expression_strips(*arguments, title=title))


def select(data: Any, labels: Union[None, str, Sequence] = None, *,
           algorithm: str = "pso-lsrg", n_features_to_select: Union[None, int, float] = None,
           refine: str = "none", max_genes: Optional[int] = None,
           params: Optional[dict] = None, seed: int = 0, comm: Any = None,
           layer: Optional[str] = None, gene_names: Optional[Sequence[str]] = None,
           inplace: bool = True, key_added: str = UNS_KEY, verbose: int = 0,
           **settings: Any) -> Selection:
    """Select a gene signature from an expression matrix in memory.

    Parameters
    ----------
    data : ndarray, pandas.DataFrame or anndata.AnnData
        Samples as rows, genes as columns (``AnnData``: ``X`` or ``layers[layer]``, sparse
        allowed: it is made dense).
    labels : str or array-like of shape (n_samples,)
        The class of each sample, or the name of an ``obs`` column (``AnnData``) or of a
        column of the ``DataFrame`` (that column is then not a gene).
    algorithm, n_features_to_select, refine, max_genes, params, verbose
        As :class:`~hpcswarm.selector.SwarmFeatureSelector`: ``n_features_to_select`` caps
        the signature's genes (an int, or a fraction of the genes).
    seed : int, default 0
        Run seed: ``select(..., seed=s)`` selects what ``hpcswarm run --seed s`` selects on
        the same matrix and settings.
    comm : communicator, optional
        None runs serially; a communicator of :mod:`hpcswarm.comm` runs the search over its
        ranks (every rank calls ``select`` with the same data).
    layer : str, optional
        ``AnnData`` only: the layer holding the values.
    gene_names : sequence of str, optional
        Names of the columns of a NumPy array (default ``gene0``, ``gene1``...).
    inplace : bool, default True
        ``AnnData`` only: write ``var[KEY_selected]`` (bool) and ``uns[KEY]`` (settings
        and scores) into it, ``KEY`` being ``key_added``.
    key_added : str, default "hpcswarm"
    **settings
        The method's main parameters by name (:data:`~hpcswarm.selector.SETTINGS`:
        ``n_particles``, ``n_iterations``, ``k``, ``cv``, ``objective``, ``alpha``,
        ``archive_size``).

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        Missing or unknown labels, layer or column; data that is not samples x genes;
        invalid settings (``ParameterError`` for the method's parameters).
    TypeError
        An unknown keyword argument, or data of another type.
    ImportError
        A ``DataFrame`` view asked for without pandas.
    """
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise TypeError(f"select() got unknown keyword argument(s) {', '.join(unknown)}; the "
                        f"method's parameters by name are {', '.join(SETTINGS)}, the others "
                        f"go in params")
    X, y, names, adata = _matrix(data, labels, layer, gene_names)
    selector = SwarmFeatureSelector(
        algorithm, params, random_state=seed, comm=comm,
        n_features_to_select=n_features_to_select, refine=refine, max_genes=max_genes,
        verbose=verbose, **settings).fit(X, y)
    genes = np.flatnonzero(selector.support_)
    front = dict(selector.front_, gene_names=[[names[g] for g in point]
                                              for point in selector.front_["genes"]])
    recorded = {"algorithm": algorithm, "n_features_to_select": n_features_to_select,
                "refine": refine, "max_genes": max_genes, "seed": seed, "layer": layer}
    result = Selection(genes=genes, gene_names=[names[g] for g in genes],
                       inner_accuracy=float(selector.inner_accuracy_),
                       chosen_from=selector.chosen_from_, front=front,
                       history=list(selector.result_.history), algorithm=algorithm,
                       params=dict(selector.result_.params), settings=recorded,
                       selector=selector, data=X, labels=y, all_gene_names=names)
    if adata is not None and inplace:
        write_back(adata, result, key_added)
    return result


def _matrix(data, labels, layer, gene_names):
    """``(X, y, gene names, AnnData or None)`` of the data ``select`` was given."""
    if _is_anndata(data):
        return (*_from_anndata(data, labels, layer), data)
    if layer is not None:
        raise ValueError(f"layer={layer!r} applies to an AnnData only")
    if _is_dataframe(data):
        if gene_names is not None:
            raise ValueError("gene_names: a DataFrame's genes are named by its columns")
        if isinstance(labels, str):
            if labels not in data.columns:
                raise ValueError(f"labels: no column {labels!r} in the DataFrame")
            y = data[labels].to_numpy()
            data = data.drop(columns=[labels])
        else:
            y = labels
        names = [str(c) for c in data.columns]
        X = data.to_numpy(dtype=np.float64)
    elif isinstance(data, np.ndarray):
        if isinstance(labels, str):
            raise ValueError("labels: a column name needs a DataFrame or an AnnData; give "
                             "the labels of a NumPy array as an array")
        X, y = data, labels
        if X.ndim != 2:
            raise ValueError(f"data must be samples x genes (2-D), got shape {X.shape}")
        names = ([str(n) for n in gene_names] if gene_names is not None
                 else [f"gene{i}" for i in range(X.shape[1])])
        if len(names) != X.shape[1]:
            raise ValueError(f"gene_names: {len(names)} names for {X.shape[1]} genes")
    else:
        raise TypeError(f"data must be a NumPy array, a pandas DataFrame or an AnnData, got "
                        f"{type(data).__name__}")
    if y is None:
        raise ValueError("labels: give the class of every sample (an array, or a column name)")
    return X, np.asarray(y), names, None


def _from_anndata(adata, labels, layer):
    columns = ", ".join(map(str, adata.obs.columns)) or "none"
    if not isinstance(labels, str):
        raise ValueError(f"labels: give the name of an obs column of the AnnData (one of "
                         f"{columns})")
    if labels not in adata.obs.columns:
        raise ValueError(f"labels: no obs column {labels!r} in the AnnData (columns: {columns})")
    if layer is None:
        values = adata.X
    elif layer in adata.layers:
        values = adata.layers[layer]
    else:
        raise ValueError(f"layer: no layer {layer!r} in the AnnData (layers: "
                         f"{', '.join(adata.layers.keys()) or 'none'})")
    if values is None:
        raise ValueError("the AnnData has no X; name a layer")
    if hasattr(values, "toarray"):  # scipy.sparse: the engine reads dense columns
        values = values.toarray()
    y = np.asarray(adata.obs[labels].astype(str).to_numpy())
    return np.asarray(values, dtype=np.float64), y, [str(n) for n in adata.var_names]


def write_back(adata: Any, result: Selection, key: str = UNS_KEY) -> None:
    """Write a signature into an AnnData: ``var[f"{key}_selected"]`` and ``uns[key]``.

    ``uns[key]`` holds ``settings`` (the arguments of ``select``; the method's parameters
    as a JSON text, ``params``) and the scores: ``inner_accuracy``, ``chosen_from``,
    ``selected_genes``, ``front_size``, ``front_inner_accuracy`` and ``best_fitness`` (per
    round), all of types an ``.h5ad`` file stores.
    """
    selected = np.zeros(adata.n_vars, dtype=bool)
    selected[result.genes] = True
    adata.var[f"{key}_selected"] = selected
    settings = {name: ("none" if value is None else value)
                for name, value in result.settings.items()}
    adata.uns[key] = {
        "settings": {**settings, "params": json.dumps(result.params, sort_keys=True)},
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


def _is_dataframe(data):
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns")


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("a DataFrame view needs pandas: pip install pandas") from None
    return pandas
