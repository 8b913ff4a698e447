"""The API lists of ``docs/api.md``, generated from the docstrings, written as plain names.

Directive (from Markdown as a ```{hpcswarm-api}``` fence)::

    ```{hpcswarm-api}
    hpcswarm.select
    hpcswarm.api.Selection: to_frame, to_dict
    hpcswarm.comm
    ```

One dotted name a line, a class's members after a colon: Sphinx renders each with autodoc
(``autofunction``, ``autoclass`` with those members or none, ``automodule`` without its
members, ``autodata`` for anything else), and the Markdown read as text (on GitHub) shows
the same list of names rather than reStructuredText directives.
"""

import importlib
import inspect

from docutils.parsers.rst import Parser as RstParser
from docutils.utils import new_document
from sphinx.util.docutils import SphinxDirective


def _resolve(dotted):
    """The object a dotted name names (a module, or an attribute of one)."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            found = getattr(found, name)
        return found
    raise ValueError(f"hpcswarm-api: no module in {dotted!r}")


def autodoc_lines(line):
    """The autodoc directive of one line of the list: ``NAME`` or ``NAME: member, member``."""
    dotted, _, members = (part.strip() for part in line.partition(":"))
    found = _resolve(dotted)
    if inspect.ismodule(found):
        return [f".. automodule:: {dotted}", "   :no-members:", ""]
    if inspect.isclass(found):
        option = f"   :members: {members}" if members else "   :no-members:"
        return [f".. autoclass:: {dotted}", option, ""]
    if callable(found):
        return [f".. autofunction:: {dotted}", ""]
    return [f".. autodata:: {dotted}", ""]


class ApiList(SphinxDirective):
    """``hpcswarm-api``: autodoc of every name listed in its body, parsed as
    reStructuredText (as MyST's ``eval-rst`` does: autodoc writes the docstrings as such)."""

    has_content = True

    def run(self):
        lines = []
        for line in self.content:
            if line.strip():
                lines += autodoc_lines(line)
        document = new_document(self.get_source_info()[0], self.state.document.settings)
        document.reporter = self.state.document.reporter
        RstParser().parse("\n" * self.lineno + "\n".join(lines), document)
        return list(document.children)


def setup(app):
    app.add_directive("hpcswarm-api", ApiList)
    return {"version": "1", "parallel_read_safe": True}
