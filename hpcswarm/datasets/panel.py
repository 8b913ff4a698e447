"""Generated design sets: data on which a gene-selection rule can visibly fail.

The real design sets (``../shared/data``) show how a rule does on microarrays; these four
show *why* it fails when it does, because their signal is planted and known:

``many-classes``
    60 samples in 10 classes of 2 to 9 samples, 5,000 genes. Each class is shifted on 3
    marker genes of its own; no single gene separates a class from all the others, and a
    class of two samples has one neighbour of its own to be found by. A rule that ranks
    genes by one statistic over all classes, or that a small class cannot outvote, loses the
    small classes.
``parity``
    96 samples, 2,000 genes. The class is the parity of the signs of 2 genes (exclusive or):
    each of them, alone, has class means of exactly 0 in both classes, so every filter of
    class means (t, Welch, ANOVA F) ranks them as noise; the two together give the class
    exactly. Their class variances are equal in expectation only (each class draws its own
    magnitudes): 1.89 against 1.15 and 2.51 against 1.69 (even, odd) in the drawn set.
``modules``
    72 samples in 3 classes of 24, 2,000 genes: 20 modules of 10 strongly correlated genes
    (each gene its module's factor plus a little noise; within-module correlation above
    0.9), the rest independent noise. The factor of module 0 carries the class; any gene of
    that module carries nearly the same information, so a rule that picks different members
    in different folds is not unstable in any useful sense (see
    :func:`hpcswarm.signatures.stability.sechidis`).
``imbalanced``
    100 samples in 3 classes of 62, 33 and 5, 2,000 genes, each class shifted on 5 marker
    genes of its own: a rule that maximises plain accuracy can drop the 5 % class for one
    error in twenty.

Every set is drawn from :class:`numpy.random.SeedSequence` of its fixed seed; its genes and
samples are shuffled (the planted genes lie anywhere, so that a rule that breaks ties by
the lower index gains nothing), and its planted genes are returned beside it. The
functions return plain arrays; :func:`hpcswarm.data.sources.panel_dataset` makes a
:class:`~hpcswarm.data.Dataset` of one (``panel:NAME`` wherever a dataset is named).
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PanelSet:
    """A generated design set.

    Attributes
    ----------
    X : ndarray of float64 of shape (n_samples, n_genes)
    y : ndarray of int64 of shape (n_samples,)
        Class codes ``0 .. n_classes - 1``.
    gene_names, class_names : list of str
    informative : dict of str to ndarray of int64
        The planted genes (column indices of ``X``) by role: a class's markers, the parity
        genes, a module's genes.
    description : str
        One line: what is planted.
    """

    X: np.ndarray
    y: np.ndarray
    gene_names: list
    class_names: list
    informative: dict
    description: str


def _rng(seed):
    return np.random.default_rng(np.random.SeedSequence(seed))


def _shuffled(rng, X, y, informative, class_names, description):
    """The set with its samples and genes in a random order; ``informative`` renumbered."""
    rows = rng.permutation(X.shape[0])
    columns = rng.permutation(X.shape[1])
    where = np.empty_like(columns)
    where[columns] = np.arange(columns.size)  # old column -> new column
    width = len(str(X.shape[1] - 1))
    return PanelSet(X=np.ascontiguousarray(X[rows][:, columns]),
                    y=y[rows].astype(np.int64),
                    gene_names=[f"g{i:0{width}d}" for i in range(X.shape[1])],
                    class_names=list(class_names),
                    informative={k: np.sort(where[np.asarray(v)]).astype(np.int64)
                                 for k, v in informative.items()},
                    description=description)


def _check(name, value, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer of at least {low}, got {value!r}")


def _marker_set(seed, sizes, n_genes, markers, shift, names):
    """Classes of ``sizes`` samples, class ``c`` shifted by ``shift`` on ``markers`` genes of
    its own (unit-variance noise everywhere); the classes named ``names``."""
    sizes = [int(s) for s in sizes]
    _check("markers", markers, 1)
    if len(sizes) < 2 or min(sizes) < 1:
        raise ValueError(f"sizes must give at least 2 classes of at least 1 sample, got {sizes}")
    if markers * len(sizes) > n_genes:
        raise ValueError(f"n_genes ({n_genes}) must hold markers x classes "
                         f"({markers * len(sizes)})")
    rng = _rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(y.size, n_genes))
    informative = {}
    for c, name in enumerate(names):
        genes = np.arange(c * markers, (c + 1) * markers)
        X[np.ix_(y == c, genes)] += shift
        informative[f"class {name}"] = genes
    return _shuffled(rng, X, y, informative, names,
                     f"classes of {', '.join(map(str, sizes))} samples, {markers} marker genes "
                     f"per class shifted by {shift}")


def many_classes(seed, sizes=(2, 3, 4, 5, 6, 7, 8, 9, 8, 8), n_genes=5000, markers=3,
                 shift=3.0):
    """Many small classes: each class shifted by ``shift`` on ``markers`` genes of its own.

    Parameters
    ----------
    seed : int
    sizes : sequence of int, default (2, 3, 4, 5, 6, 7, 8, 9, 8, 8)
        Samples per class (60 in all).
    n_genes : int, default 5000
    markers : int, default 3
        Marker genes per class.
    shift : float, default 3.0
        Shift of a class's markers in its samples (noise: unit variance).

    Returns
    -------
    PanelSet
        ``informative``: ``"class NAME"`` -> its marker genes.
    """
    return _marker_set(seed, sizes, n_genes, markers, shift,
                       [f"C{c + 1:02d}" for c in range(len(sizes))])


def parity(seed, n_samples=96, n_genes=2000, n_parity=2, gap=0.5):
    """Class = parity of the signs of ``n_parity`` genes; no single gene carries it.

    Every sign pattern of the parity genes holds ``n_samples / 2 ** n_parity`` samples. A
    parity gene's value is its sign times a magnitude ``gap + |z|``; within each class the
    samples where it is positive and those where it is negative hold the same magnitudes,
    so that its class means are 0: the evidence of the class means is none, not merely
    weak. The magnitudes of the two classes are drawn apart, so the class variances are
    equal in expectation, not in the sample. The other genes are standard normal noise.

    Parameters
    ----------
    seed : int
    n_samples : int, default 96
        A multiple of ``2 ** n_parity``.
    n_genes : int, default 2000
    n_parity : {2, 3}, default 2
        Genes whose joint sign gives the class (2: exclusive or).
    gap : float, default 0.5
        Least magnitude of a parity gene (the margin around 0 between sign patterns).

    Returns
    -------
    PanelSet
        ``informative``: ``"parity"`` -> the parity genes.
    """
    if n_parity not in (2, 3):
        raise ValueError(f"n_parity must be 2 or 3, got {n_parity!r}")
    _check("n_samples", n_samples, 2 ** n_parity)
    if n_samples % 2 ** n_parity:
        raise ValueError(f"n_samples must be a multiple of {2 ** n_parity}, got {n_samples}")
    if n_genes < n_parity:
        raise ValueError(f"n_genes must be at least n_parity ({n_parity}), got {n_genes}")
    rng = _rng(seed)
    patterns = np.array(np.meshgrid(*[[1.0, -1.0]] * n_parity, indexing="ij")).reshape(
        n_parity, -1).T
    signs = np.repeat(patterns, n_samples // len(patterns), axis=0)
    y = (np.sum(signs < 0, axis=1) % 2).astype(np.int64)
    X = rng.normal(size=(n_samples, n_genes))
    for gene in range(n_parity):
        for c in (0, 1):
            positive = np.flatnonzero((y == c) & (signs[:, gene] > 0))
            negative = np.flatnonzero((y == c) & (signs[:, gene] < 0))
            magnitude = gap + np.abs(rng.normal(size=positive.size))
            X[positive, gene] = magnitude
            X[negative, gene] = -rng.permutation(magnitude)
    return _shuffled(rng, X, y, {"parity": np.arange(n_parity)}, ["even", "odd"],
                     f"class = parity of the signs of {n_parity} genes, no marginal signal")


def modules(seed, n_samples=72, n_classes=3, n_genes=2000, n_modules=20, module_size=10,
            noise=0.3, shift=4.0):
    """Modules of strongly correlated genes; module 0's factor carries the class.

    Gene ``g`` of module ``m`` is ``f_m + noise * e_g`` (``f_m``, ``e_g`` standard normal), so
    two genes of one module correlate at about ``1 / (1 + noise ** 2)``; the factor of
    module 0 is shifted by ``shift * c`` in the samples of class ``c``. Genes outside the
    modules are independent noise.

    Parameters
    ----------
    seed : int
    n_samples : int, default 72
        Dealt evenly over the classes (the first classes take the remainder).
    n_classes : int, default 3
    n_genes : int, default 2000
    n_modules, module_size : int, default 20, 10
    noise : float, default 0.3
    shift : float, default 4.0

    Returns
    -------
    PanelSet
        ``informative``: ``"module M"`` -> its genes, for every module (module 0 carries the
        class).
    """
    _check("n_classes", n_classes, 2)
    _check("n_samples", n_samples, n_classes)
    _check("module_size", module_size, 2)
    _check("n_modules", n_modules, 1)
    if n_modules * module_size > n_genes:
        raise ValueError(f"n_genes ({n_genes}) must hold n_modules x module_size "
                         f"({n_modules * module_size})")
    rng = _rng(seed)
    y = np.arange(n_samples) % n_classes
    factors = rng.normal(size=(n_samples, n_modules))
    factors[:, 0] += shift * y
    X = rng.normal(size=(n_samples, n_genes))
    informative = {}
    for m in range(n_modules):
        genes = np.arange(m * module_size, (m + 1) * module_size)
        X[:, genes] = factors[:, [m]] + noise * X[:, genes]
        informative[f"module {m}"] = genes
    return _shuffled(rng, X, y, informative, [f"M{c + 1}" for c in range(n_classes)],
                     f"{n_modules} modules of {module_size} genes correlated through one "
                     f"factor; module 0's factor carries the class")


def imbalanced(seed, sizes=(62, 33, 5), n_genes=2000, markers=5, shift=2.0):
    """Heavy class imbalance: classes of ``sizes`` samples, each with its own markers.

    Parameters
    ----------
    seed : int
    sizes : sequence of int, default (62, 33, 5)
        The smallest class is 5 % of the samples.
    n_genes : int, default 2000
    markers : int, default 5
    shift : float, default 2.0

    Returns
    -------
    PanelSet
        As :func:`many_classes`.
    """
    return _marker_set(seed, sizes, n_genes, markers, shift,
                       [f"K{c + 1}" for c in range(len(sizes))])


PANEL_SETS = {
    "many-classes": (many_classes, {"seed": 20261}),
    "parity": (parity, {"seed": 20262}),
    "modules": (modules, {"seed": 20263}),
    "imbalanced": (imbalanced, {"seed": 20264}),
}
"""The design panel's generated sets: name -> (generator, its fixed arguments)."""


def panel_set(name):
    """The generated design set ``name`` (one of :data:`PANEL_SETS`), drawn from its seed.

    Raises
    ------
    ValueError
        ``name`` is not a panel set.
    """
    if name not in PANEL_SETS:
        raise ValueError(f"name must be one of {', '.join(PANEL_SETS)}, got {name!r}")
    generator, arguments = PANEL_SETS[name]
    return generator(**arguments)
