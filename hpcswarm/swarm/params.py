"""Declarative algorithm parameters: one :class:`Param` per key, checked once.

Every algorithm lists its parameters with the paper's default; :func:`resolve_params`
turns user overrides (native values, or strings from ``--param key=value``) into a
complete, checked dictionary, raising :class:`~hpcswarm.errors.ParameterError` that names
the key and the allowed keys or values.
"""

from dataclasses import dataclass, replace

from hpcswarm.errors import ParameterError
from hpcswarm.fitness.folds import parse_cv

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One algorithm parameter.

    Parameters
    ----------
    name : str
        The key, as written in ``--param name=value``.
    kind : {"int", "float", "bool", "choice", "cv", "optional_float"}
        How a value is parsed: ``"cv"`` accepts ``"loo"``, ``"holdout"`` or an int >= 2;
        ``"optional_float"`` accepts a float or ``"none"``.
    default : object
        The value used when the user gives none (the paper's setting).
    doc : str
        One line shown in error messages and help.
    low, high : float, optional
        Inclusive bounds for numbers.
    choices : tuple of str, optional
        Allowed values of a ``"choice"`` parameter.
    """

    name: str
    kind: str
    default: object
    doc: str
    low: float = None
    high: float = None
    choices: tuple = ()

    def with_default(self, default):
        """The same parameter with another default (an algorithm's paper setting)."""
        return replace(self, default=default)

    def parse(self, value):
        """Convert ``value`` (native or a string) and check it; raises ParameterError."""
        try:
            parsed = _PARSERS[self.kind](self, value)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ParameterError(
                f"parameter '{self.name}' expects {self._expected()}, got {value!r}"
            ) from None
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            if (self.low is not None and parsed < self.low) or (
                self.high is not None and parsed > self.high
            ):
                raise ParameterError(
                    f"parameter '{self.name}' must be in [{self.low}, {self.high}], got {parsed!r}"
                )
        return parsed

    def _expected(self):
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        return {
            "int": "an integer",
            "float": "a number",
            "bool": "true or false",
            "cv": "'loo', 'holdout' or an integer number of folds >= 2",
            "optional_float": "a number or 'none'",
        }[self.kind]


def _parse_int(param, value):
    if isinstance(value, bool):
        raise TypeError
    if isinstance(value, str):
        return int(value.strip())
    if isinstance(value, float) and not value.is_integer():
        raise ValueError
    return int(value)


def _parse_float(param, value):
    if isinstance(value, bool):
        raise TypeError
    parsed = float(value)
    if parsed != parsed or parsed in (float("inf"), float("-inf")):
        raise ValueError
    return parsed


def _parse_bool(param, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError


def _parse_choice(param, value):
    if isinstance(value, str) and value.strip() in param.choices:
        return value.strip()
    raise ParameterError(
        f"parameter '{param.name}' must be one of {', '.join(param.choices)}, got {value!r}"
    )


def _parse_cv(param, value):
    return parse_cv(value)


def _parse_optional_float(param, value):
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    return _parse_float(param, value)


_PARSERS = {
    "int": _parse_int,
    "float": _parse_float,
    "bool": _parse_bool,
    "choice": _parse_choice,
    "cv": _parse_cv,
    "optional_float": _parse_optional_float,
}

#: The fitness settings every algorithm carries (defaults overridden per paper).
FITNESS_PARAMS = (
    Param("k", "int", 1, "neighbours of the k-NN classifier", low=1),
    Param("cv", "cv", "loo", "cross-validation: 'loo', 'holdout' or a number of folds"),
    Param("objective", "choice", "accuracy", "fitness to maximise",
          choices=("accuracy", "error", "combined")),
    Param("alpha", "float", 0.9, "weight of accuracy in the combined objective", low=0, high=1),
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
                f"unknown parameter '{key}' for algorithm '{algorithm}'; "
                f"allowed: {', '.join(sorted(by_name))}"
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
