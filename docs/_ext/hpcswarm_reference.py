"""Reference tables generated from the code, so that the pages cannot drift from it.

Directives (usable from Markdown as ```{name} argument``` fences):

``hpcswarm-params DOTTED.NAME``
    A table of a tuple of :class:`hpcswarm.params.Param` rows: the job-file keys
    (``hpcswarm.run.jobfile.SCHEMA``), the conversion options
    (``hpcswarm.data.formats.CONVERT_PARAMS``), the fitness settings
    (``hpcswarm.swarm.params.FITNESS_PARAMS``).
``hpcswarm-method METHOD``
    The parameters of one method (``hpcswarm.selection.methods.METHODS[METHOD].PARAMS``) with its
    paper defaults.
``hpcswarm-objectives``
    The objectives, one row of :data:`hpcswarm.store.objectives.OBJECTIVE_TABLE` each.
``hpcswarm-cli``
    Every subcommand of ``hpcswarm`` from the argparse parser of :mod:`hpcswarm.cli`: its
    description and one row per option.
"""

import argparse
import importlib

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def verbatim(text):
    """A paragraph of text from the code (a help string, a parameter's doc) shown as written:
    Sphinx's smart quotes would turn the ``--`` of ``--help`` into an en dash and curl the
    quotes of a command to copy."""
    para = nodes.paragraph(text=text)
    para["support_smartquotes"] = False  # read by sphinx.util.nodes.is_smartquotable
    return para


def _cell(content, literal=False):
    entry = nodes.entry()
    if content in ("", None):
        entry += nodes.paragraph()
    elif literal:
        entry += nodes.paragraph("", "", nodes.literal(text=content))
    else:
        entry += verbatim(content)
    return entry


def _table(headers, rows, widths):
    """A docutils table: ``rows`` of (text, literal) cells."""
    table = nodes.table(classes=["hpcswarm-reference"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    row = nodes.row()
    for header in headers:
        row += _cell(header)
    head += row
    group += head
    body = nodes.tbody()
    for cells in rows:
        row = nodes.row()
        for text, literal in cells:
            row += _cell(text, literal)
        body += row
    group += body
    return table


def _shown(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _number(value):
    """A bound as written in a job file: an integer in full (``2147483647``), a float in
    its shortest form (``0.5``, ``1e-06``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _allowed(param):
    if param.choices:
        also = "".join(f" ({alias} for {choice})" for alias, choice in param.aliases)
        return ", ".join(param.choices) + also
    if param.low is not None and param.high is not None:
        low = f"{_number(param.low)}{' (excluded)' if param.low_open else ''}"
        high = f"{_number(param.high)}{' (excluded)' if param.high_open else ''}"
        return f"{low} to {high}"
    if param.low is not None:
        return f"{'>' if param.low_open else '>='} {_number(param.low)}"
    return ""


def params_table(params, key_header="key"):
    """The table of a tuple of ``Param`` rows."""
    rows = []
    for param in params:
        default = "required" if param.required else _shown(param.default)
        rows.append([(param.name, True), (param.kind, False), (default, bool(default) and
                                                                  not param.required),
                     (_allowed(param), False), (param.doc, False)])
    return _table([key_header, "kind", "default", "allowed", "meaning"], rows, [14, 8, 10, 14, 54])


def _resolve(dotted):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


class ParamsDirective(SphinxDirective):
    """``hpcswarm-params hpcswarm.run.jobfile.SCHEMA``."""

    required_arguments = 1

    def run(self):
        return [params_table(_resolve(self.arguments[0]))]


class MethodDirective(SphinxDirective):
    """``hpcswarm-method pso-lsrg``: that method's parameters with its paper defaults."""

    required_arguments = 1

    def run(self):
        from hpcswarm.selection.methods import METHODS

        name = self.arguments[0]
        if name not in METHODS:
            raise self.error(f"unknown method {name!r}; known: {', '.join(METHODS)}")
        return [params_table(METHODS[name].PARAMS, "parameter")]


class ObjectivesDirective(SphinxDirective):
    """``hpcswarm-objectives``: every objective, from its registry row."""

    def run(self):
        from hpcswarm.store.objectives import OBJECTIVE_TABLE

        rows = [[(row.name, True), (", ".join(row.aliases), bool(row.aliases)),
                 (row.fitness, False), (row.source, False),
                 ("yes" if row.per_class else "", False),
                 ("yes" if row.monotone else "", False)]
                for row in OBJECTIVE_TABLE.values()]
        return [_table(["objective", "also", "fitness", "from", "per class", "front pruned"],
                       rows, [14, 14, 30, 26, 8, 8])]


def _flags(action):
    if not action.option_strings:
        return action.metavar or action.dest
    text = ", ".join(action.option_strings)
    if action.nargs != 0:
        text += " " + (action.metavar or action.dest.upper())
    return text


def _option_rows(parser):
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) else str(default)
        helptext = action.help or ""
        if "%" in helptext:  # argparse's own formatting: %(default)s, %% ...
            helptext = helptext % {**vars(action), "prog": parser.prog}
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            helptext += f" (one of: {', '.join(map(str, action.choices))})"
        rows.append([(_flags(action), True), (shown, bool(shown)), (helptext, False)])
    return rows


class CliDirective(SphinxDirective):
    """``hpcswarm-cli``: every subcommand, from :func:`hpcswarm.cli.build_parser`."""

    def run(self):
        from hpcswarm.cli import build_parser

        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        out = [verbatim(parser.description)]
        out.append(_table(["option", "default", "meaning"], _option_rows(parser), [24, 10, 66]))
        for name, subparser in sub.choices.items():
            rubric = nodes.rubric(text=f"hpcswarm {name}", ids=[f"cli-{name}"])
            out.append(rubric)
            usage = subparser.format_usage().replace("usage: ", "").strip()
            out.append(nodes.literal_block(text=" ".join(usage.split()), language="text"))
            out.append(verbatim(subparser.description or ""))
            out.append(_table(["argument or option", "default", "meaning"],
                              _option_rows(subparser), [24, 10, 66]))
        return out


def setup(app):
    app.add_directive("hpcswarm-params", ParamsDirective)
    app.add_directive("hpcswarm-method", MethodDirective)
    app.add_directive("hpcswarm-objectives", ObjectivesDirective)
    app.add_directive("hpcswarm-cli", CliDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
