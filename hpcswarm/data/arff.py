"""Weka ARFF reader: numeric attributes are genes, one nominal attribute holds the class.

Handles quoted names (``'a b'`` or ``"a b"``), ``%`` comments, ``{...}`` nominal specs with or
without spaces and quotes, ``?`` missing values (reported later as NaN; a ``?`` class is a missing label), and a class attribute
anywhere in the attribute list. Sparse ARFF (``{index value, ...}`` rows) is refused clearly.
"""

import csv

import numpy as np

from hpcswarm.data.table import RawTable, parse_float_cells
from hpcswarm.data.textio import read_lines
from hpcswarm.errors import DataError

_NUMERIC = {"numeric", "real", "integer"}
_CLASS_NAMES = ("class", "label", "labels", "target")


def _split_values(text):
    """Fields of one comma-separated line with ' or " quoting, quotes removed."""
    if "'" not in text and '"' not in text:
        return [v.strip() for v in text.split(",")]
    quote = "'" if "'" in text else '"'
    fields = next(csv.reader([text], quotechar=quote, skipinitialspace=True, escapechar="\\"))
    return [_unquote(v.strip()) for v in fields]


def _unquote(text):
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _parse_attribute(rest, path, lineno):
    """Name and type of the text following ``@attribute``."""
    rest = rest.strip()
    if rest and rest[0] in "'\"":
        end = rest.find(rest[0], 1)
        if end < 0:
            raise DataError(f"{path}: line {lineno}: unterminated quoted attribute name")
        name, kind = rest[1:end], rest[end + 1:].strip()
    else:
        name, kind = (rest.split(None, 1) + ["", ""])[:2]
    if not kind:
        raise DataError(f"{path}: line {lineno}: @attribute without a name and a type")
    if kind.startswith("{"):
        if not kind.endswith("}"):
            raise DataError(f"{path}: line {lineno}: unterminated nominal spec {kind!r}")
        inner = kind[1:-1].strip()
        values = [v for v in _split_values(inner) if v != ""] if inner else []
        repeated = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if repeated is not None:
            raise DataError(f"{path}: line {lineno}: the nominal values of {name!r} declare "
                            f"{repeated!r} twice")
        return name, values
    return name, kind.split()[0].lower()


def _find_label(attributes, label, path):
    names = [name for name, _ in attributes]
    if label is not None:
        if label in names:
            index = names.index(label)
        else:
            try:
                index = int(label)
            except (TypeError, ValueError):
                raise DataError(f"{path}: no attribute named {label!r} for the label") from None
            if not -len(names) <= index < len(names):
                raise DataError(f"{path}: label index {index} is outside the {len(names)} attributes")
            index %= len(names)
        if not isinstance(attributes[index][1], list):
            raise DataError(f"{path}: the label attribute {names[index]!r} is not nominal")
        return index
    nominal = [i for i, (_, kind) in enumerate(attributes) if isinstance(kind, list)]
    if len(nominal) == 1:
        return nominal[0]
    if not nominal:
        raise DataError(f"{path}: no nominal class attribute; name the label with --label")
    for i in nominal:
        if names[i].lower() in _CLASS_NAMES:
            return i
    shown = ", ".join(repr(names[i]) for i in nominal[:3]) + (", ..." if len(nominal) > 3 else "")
    raise DataError(f"{path}: {len(nominal)} nominal attributes ({shown}); name the class with --label")


def read_arff(path, *, label=None):
    """Read an ARFF file.

    Parameters
    ----------
    path : Path
    label : str or int or None
        Name or 0-based index of the class attribute; by default the only nominal attribute
        (or the nominal one named ``class``).

    Returns
    -------
    RawTable
        Genes in attribute order (class removed), class order as declared.
    """
    lines = read_lines(path)
    attributes = []
    data_start = None
    for lineno, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text or text.startswith("%"):
            continue
        keyword = text.split(None, 1)[0].lower()
        if keyword == "@relation":
            continue
        if keyword == "@attribute":
            attributes.append(_parse_attribute(text[len("@attribute"):], path, lineno))
        elif keyword == "@data":
            data_start = lineno
            break
        else:
            raise DataError(f"{path}: line {lineno}: unexpected header line {text[:40]!r} "
                            "(is this an ARFF file?)")
    if data_start is None:
        raise DataError(f"{path}: no @data section (is this an ARFF file?)")
    if not attributes:
        raise DataError(f"{path}: no @attribute declarations")
    index = _find_label(attributes, label, path)
    class_order = attributes[index][1]
    for i, (name, kind) in enumerate(attributes):
        if i != index and (isinstance(kind, list) or kind not in _NUMERIC):
            shown = "nominal" if isinstance(kind, list) else kind
            raise DataError(f"{path}: attribute {name!r} is {shown}; "
                            "every attribute but the class must be numeric")
    rows, labels, linenos = [], [], []
    for lineno, raw in enumerate(lines[data_start:], data_start + 1):
        text = raw.strip()
        if not text or text.startswith("%"):
            continue
        if text.startswith("{"):
            raise DataError(f"{path}: line {lineno}: sparse ARFF rows are not supported; "
                            "write the data densely")
        fields = _split_values(text)
        if len(fields) != len(attributes):
            raise DataError(f"{path}: line {lineno}: {len(fields)} values, "
                            f"expected {len(attributes)} (ragged row)")
        labels.append(fields.pop(index))
        rows.append(fields)
        linenos.append(lineno)
    unknown = [(n, v) for n, v in zip(linenos, labels) if v not in class_order and v != "?"]
    if unknown:
        lineno, value = unknown[0]
        raise DataError(f"{path}: line {lineno}: class {value!r} is not one of the declared "
                        f"{class_order}")
    gene_names = [name for i, (name, _) in enumerate(attributes) if i != index]

    def locate(i, j):
        return f"line {linenos[i]}, attribute {gene_names[j]!r}"

    X = parse_float_cells(rows, path, locate) if rows else np.empty((0, len(gene_names)))
    return RawTable(X=X, labels=np.array(labels, dtype=object), gene_names=gene_names,
                    class_order=class_order, sources=[("source", path)],
                    label_places=[f"line {n}" for n in linenos])
