"""Docstring checks of the Python API pages: one text per parameter.

numpydoc lets several names share one entry (``a, b : int``). Napoleon then gives every name
the same sentence (a ``Parameters`` entry) or runs the names together (an ``Attributes``
entry), so that a reader of one parameter finds the text written for another. At
``autodoc-process-docstring``, before napoleon reads the docstring, every such entry of a
``Parameters``, ``Other Parameters``, ``Attributes``, ``Returns`` or ``Yields`` section is a
warning naming the object and the names; ``make docs`` builds with warnings as errors.
"""

import re

from sphinx.util import logging

logger = logging.getLogger(__name__)

SECTIONS = ("Parameters", "Other Parameters", "Attributes", "Returns", "Yields")
"""The numpydoc sections whose entries name one thing each."""

_NAME = r"\*{0,2}[A-Za-z_][A-Za-z0-9_]*"
_GROUP = re.compile(rf"^(?P<names>{_NAME}(\s*,\s*{_NAME})+)\s*(:.*)?$")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")


def grouped_entries(lines):
    """The entries of ``lines`` (a docstring's lines, before napoleon) that name several
    parameters, attributes or returned values: a list of tuples of names, in order."""
    found = []
    section, indent = None, None
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if _UNDERLINE.match(following) and line.strip():
            section, indent = line.strip(), len(line) - len(line.lstrip())
            continue
        if section not in SECTIONS or not line.strip() or _UNDERLINE.match(line):
            continue
        if len(line) - len(line.lstrip()) != indent:
            continue  # an entry's description, or a nested block
        match = _GROUP.match(line.strip())
        if match:
            found.append(tuple(name.strip() for name in match["names"].split(",")))
    return found


def check_groups(app, what, name, obj, options, lines):
    """Warn about every grouped entry of an object's docstring (:func:`grouped_entries`)."""
    for names in grouped_entries(lines):
        logger.warning(f"{name}: {', '.join(names)} share one entry of the docstring; give "
                       f"each its own text", type="hpcswarm", subtype="grouped-entry")


def setup(app):
    app.connect("autodoc-process-docstring", check_groups, priority=400)  # napoleon: 500
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
