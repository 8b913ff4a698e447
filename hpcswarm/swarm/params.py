"""The methods' parameters: each algorithm lists its :class:`~hpcswarm.params.Param` rows.

Every algorithm declares its parameters with the paper's default; :func:`resolve_params`
turns user overrides (native values, or strings from ``--param key=value``) into a
complete, checked dictionary, raising :class:`~hpcswarm.errors.ParameterError` that names
the key and the allowed keys or values.
"""

from hpcswarm.errors import ParameterError
from hpcswarm.fitness.objectives import OBJECTIVES
from hpcswarm.params import Param, did_you_mean

#: The fitness settings every algorithm carries (defaults overridden per paper).
FITNESS_PARAMS = (
    Param("k", "int", 1, "neighbours of the k-NN classifier", low=1),
    Param("cv", "cv", "loo", "cross-validation: 'loo', 'holdout' or a number of folds"),
    Param("objective", "choice", "accuracy", "fitness to maximise",
          choices=OBJECTIVES),
    Param("alpha", "float", 0.9, "weight of accuracy in the combined objective", low=0, high=1,
          low_open=True, high_open=True),
    Param("archive_size", "int", 0, "subsets remembered by the fitness archive (0: off)", low=0),
)


def override(spec, **defaults):
    """``spec`` with some defaults replaced (an algorithm's paper settings)."""
    unknown = set(defaults) - {param.name for param in spec}
    if unknown:
        raise ValueError(f"no such parameters: {', '.join(sorted(unknown))}")
    return tuple(p.with_default(defaults[p.name]) if p.name in defaults else p for p in spec)


def resolve_params(algorithm, spec, overrides=None):
    """Complete, checked parameters of ``algorithm`` from user ``overrides``.

    Parameters
    ----------
    algorithm : str
        Name used in error messages.
    spec : tuple of Param
        The algorithm's declared parameters.
    overrides : mapping of str to object, optional
        User values, native or strings.

    Returns
    -------
    dict
        Every declared key with its parsed value.

    Raises
    ------
    ParameterError
        An unknown key (the message lists the allowed ones) or an ill-typed value.
    """
    by_name = {param.name: param for param in spec}
    resolved = {param.name: param.default for param in spec}
    for key, value in (overrides or {}).items():
        if key not in by_name:
            raise ParameterError(
                f"unknown parameter '{key}' for algorithm '{algorithm}'"
                f"{did_you_mean(key, by_name)}; allowed: {', '.join(sorted(by_name))}"
            )
        resolved[key] = by_name[key].parse(value)
    return resolved


def parse_assignments(items):
    """``["key=value", ...]`` (from ``--param``) as a dict of strings; ParameterError if malformed."""
    overrides = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--param expects key=value, got {item!r}")
        overrides[key.strip()] = value.strip()
    return overrides
