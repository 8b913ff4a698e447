"""One declaration per parameter (:class:`Param`), read by job files, the command line and the
methods.

A method lists its parameters (:mod:`hpcswarm.swarm.params`), a job file its keys
(:data:`hpcswarm.run.jobfile.SCHEMA`), the data layer the options of a conversion
(:data:`hpcswarm.data.formats.CONVERT_PARAMS`, also the options of ``hpcswarm convert``), each
as ``Param`` rows with the name, kind, default, bounds or choices and a one-line description,
checked once, with messages that name the key and the allowed values (as scikit-learn's
``_parameter_constraints``).

Two ways in: :meth:`Param.parse` takes a native value or the text of the command line
(``--param k=5``); :meth:`Param.check` takes a value already typed (TOML) and refuses one of
another type.
"""

from dataclasses import dataclass, replace

from hpcswarm.errors import ParameterError

INT_HIGH = 2**63 - 1
"""The largest integer setting: what an int64 (an HDF5 attribute, a NumPy index) holds."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One algorithm parameter.

    Parameters
    ----------
    name : str
        The key, as written in ``--param name=value``.
    kind : {"int", "float", "bool", "choice", "cv", "optional_float", "str", "str|int"}
        How a value is parsed: ``"cv"`` accepts ``"loo"``, ``"holdout"`` or an int >= 2;
        ``"optional_float"`` accepts a float or ``"none"``; ``"str|int"`` a name or an index.
    default : object
        The value used when the user gives none (the paper's setting).
    doc : str
        One line shown in error messages and help.
    low : float, optional
        Lower bound of a number, inclusive unless ``low_open``.
    high : float, optional
        Upper bound of a number, inclusive unless ``high_open`` (an integer's default:
        :data:`INT_HIGH`).
    low_open : bool, default False
        ``low`` itself is refused: a setting at that bound can only give nothing (a local
        search that flips a share 0 of the genes flips none).
    high_open : bool, default False
        ``high`` itself is refused: a setting at that bound can only give nothing (a
        selection threshold of 1 on positions in [0, 1] selects no gene).
    choices : tuple of str, optional
        Allowed values of a ``"choice"`` parameter.
    aliases : tuple of (str, str), optional
        Other spellings of some choices, as ``(alias, choice)`` pairs: a value given as an
        alias is read as its choice (scikit-learn's ``balanced_accuracy`` for
        ``balanced-accuracy``).
    required : bool, default False
        A job file must give it (``default`` is then None).
    neutral : bool, default False
        The setting provably does not change results (an output path, a checkpoint cadence,
        the rank layout): left out of a checkpoint's identity.

    Notes
    -----
    An integer without ``high`` is bounded by :data:`INT_HIGH`, what an HDF5 attribute holds.
    """

    name: str
    kind: str
    default: object
    doc: str
    low: float = None
    high: float = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    aliases: tuple = ()
    required: bool = False
    neutral: bool = False

    def below_floor(self, value):
        """Whether the number ``value`` lies below the lower bound."""
        if self.low is None:
            return False
        return value <= self.low if self.low_open else value < self.low

    def above_ceiling(self, value):
        """Whether the number ``value`` lies past the upper bound."""
        ceiling = self.ceiling
        if ceiling is None:
            return False
        return value >= ceiling if self.high_open else value > ceiling

    @property
    def interval(self):
        """The allowed interval as written in messages: ``[0, 1]``, ``[0, 1)``."""
        return (f"{'(' if self.low_open else '['}{self.low}, {self.ceiling}"
                f"{')' if self.high_open else ']'}")

    @property
    def ceiling(self):
        """The inclusive upper bound checked (:data:`INT_HIGH` for an unbounded integer)."""
        if self.high is None and self.kind == "int":
            return INT_HIGH
        return self.high

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
            if self.below_floor(parsed) or self.above_ceiling(parsed):
                raise ParameterError(
                    f"parameter '{self.name}' must be in {self.interval}, got {parsed!r}"
                )
        return parsed

    def parse_typed(self, value):
        """:meth:`parse` of a value a typed file gives (a TOML job): text is refused where
        this parameter takes a number or a boolean (``w = "0.5"``), as the file's own types
        say; ``cv`` takes the text 'loo' or 'holdout', an optional number the text 'none'."""
        if isinstance(value, str) and self.kind in _TYPED_KINDS and (
                self.kind != "cv" or value not in ("loo", "holdout")):
            raise ParameterError(f"parameter '{self.name}' expects {self._expected()}, got "
                                 f"{value!r}")
        return self.parse(value)

    def check(self, value, where):
        """``value`` (already typed, e.g. from TOML) if it is of this kind and in bounds.

        Raises
        ------
        ParameterError
            ``"<where> must be <what>, got <value>"``.
        """
        ok = _TYPED[self.kind](value)
        if ok and self.kind == "choice":
            value = dict(self.aliases).get(value, value)
        if ok and self.kind == "choice" and value not in self.choices:
            raise ParameterError(f"{where} must be one of {', '.join(self.choices)}, got {value!r}")
        if not ok:
            raise ParameterError(f"{where} must be {self._expected()}, got {value!r}")
        if isinstance(value, str) or value is None:  # a choice, a path, an unset option
            return value
        if self.below_floor(value):
            raise ParameterError(f"{where} must be {self._expected()} "
                                 f"{'>' if self.low_open else '>='} {self.low}, got {value}")
        if self.above_ceiling(value):
            raise ParameterError(f"{where} must be {self._expected()} "
                                 f"{'<' if self.high_open else '<='} {self.ceiling}, got "
                                 f"{value}")
        return value

    def _expected(self):
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        return {
            "int": "an integer",
            "float": "a number",
            "bool": "true or false",
            "cv": "'loo', 'holdout' or an integer number of folds >= 2",
            "optional_float": "a number or 'none'",
            "str": "a string",
            "str|int": "str or int",
        }[self.kind]


def did_you_mean(word, known):
    """`` (did you mean 'X'?)`` for the name of ``known`` closest to a mistyped ``word``
    (:func:`difflib.get_close_matches`), or ``""`` when none is close."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(name) for name in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


_TYPED_KINDS = ("int", "float", "bool", "cv")
"""Kinds whose values a typed file writes as numbers or booleans, never as text."""


def number_text(text):
    """``text`` stripped, if it may spell a number: ASCII (Python's ``int`` and ``float`` also
    read digits of other scripts and full-width ones); else ValueError."""
    text = text.strip()
    if not text.isascii():
        raise ValueError(text)
    return text


def _parse_int(param, value):
    if isinstance(value, bool):
        raise TypeError
    if isinstance(value, str):
        return int(number_text(value))
    if isinstance(value, float) and not value.is_integer():
        raise ValueError
    return int(value)


def _parse_float(param, value):
    if isinstance(value, bool):
        raise TypeError
    parsed = float(number_text(value) if isinstance(value, str) else value)
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
    if isinstance(value, str):
        value = dict(param.aliases).get(value.strip(), value.strip())
    if isinstance(value, str) and value in param.choices:
        return value
    raise ParameterError(
        f"parameter '{param.name}' must be one of {', '.join(param.choices)}, got {value!r}"
    )


def _parse_cv(param, value):
    from hpcswarm.fitness.folds import parse_cv  # the engine loads only where a cv is read

    return parse_cv(value)


def _parse_str(param, value):
    if not isinstance(value, str):
        raise TypeError
    return value


def _parse_str_or_int(param, value):
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError
    return value


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
    "str": _parse_str,
    "str|int": _parse_str_or_int,
}


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


_TYPED = {
    "int": _is_int,
    "float": lambda value: _is_int(value) or isinstance(value, float),
    "bool": lambda value: isinstance(value, bool),
    "choice": lambda value: isinstance(value, str),
    "cv": lambda value: value in ("loo", "holdout") or (_is_int(value) and value >= 2),
    "optional_float": lambda value: value is None or _is_int(value) or isinstance(value, float),
    "str": lambda value: isinstance(value, str),
    "str|int": lambda value: isinstance(value, str) or _is_int(value),
}
"""Whether an already typed value is of each kind (:meth:`Param.check`)."""
