"""Initial positions of continuous swarms (Xue, Zhang & Browne 2014, Sec. 4.1).

Strategies, as the CSO and FSIPSO papers use them for PSO(4-2) and Xue1-4-kNN:

``uniform``
    every dimension uniform in [0, 1] (the "random initialisation" of Tran et al. and Gu et al.).
``normal``
    about half the genes selected (Xue1).
``small``
    about 10% selected (Xue2).
``large``
    about 2/3 selected (Xue3; Gu et al. "we used about 2/3").
``mixed``
    the first 2/3 of the particles (by index) small, the rest large (Xue4, the "4" of PSO(4-2)).

For the fraction strategies a particle selects ``round(fraction * n_genes)`` genes (at least
one) drawn without replacement: their dimensions are uniform in (theta, 1], the others uniform
in [0, theta], so that the thresholded subset has exactly that size. Xue 2014 only says
"around" the fraction; an exact count makes the strategies distinguishable in tests.
"""

STRATEGIES = ("uniform", "normal", "small", "large", "mixed")

_FRACTION = {"normal": 0.5, "small": 0.1, "large": 2.0 / 3.0}
MIXED_SMALL_SHARE = 2.0 / 3.0


def strategy_of(strategy, index, n_particles):
    """The strategy particle ``index`` follows (``mixed`` resolved by index)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"init must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if strategy == "mixed":
        return "small" if index < round(MIXED_SMALL_SHARE * n_particles) else "large"
    return strategy


def initial_position(strategy, n_genes, theta, rng):
    """One particle's initial position, ndarray of shape (n_genes,) in [0, 1].

    Parameters
    ----------
    strategy : {"uniform", "normal", "small", "large"}
        Resolve ``mixed`` first with :func:`strategy_of`.
    n_genes : int
    theta : float
        Selection threshold of the continuous representation.
    rng : numpy.random.Generator
    """
    if strategy == "uniform":
        return rng.random(n_genes)
    size = max(1, int(round(_FRACTION[strategy] * n_genes)))
    chosen = rng.choice(n_genes, size, replace=False)
    position = rng.random(n_genes) * theta
    position[chosen] = theta + (1.0 - theta) * (1.0 - rng.random(size))
    return position
