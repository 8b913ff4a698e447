"""Sphinx configuration of the hpcswarm user guide (``make docs``)."""

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the repository's hpcswarm, not an installed one
sys.path.insert(0, str(DOCS / "_ext"))

from hpcswarm import __version__  # noqa: E402

project = "hpcswarm"
author = "the hpcswarm developers"
copyright = "the hpcswarm developers"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "hpcswarm_reference",
    "hpcswarm_api",
    "hpcswarm_docstrings",
    "run_examples",
]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Types from the annotations only for what the docstring documents: a dataclass whose fields
# are its documented Attributes would otherwise list them again as Parameters.
autodoc_typehints_description_target = "documented"

html_theme = "furo"
html_title = f"hpcswarm {release}"
html_static_path = []
strip_signature_backslash = True


_TRAILING_UNDERSCORE = re.compile(r"(\w)_(?=[\s,)]|$)")


def _escape_types(app, what, name, obj, options, lines):
    """Napoleon leaves a type such as ``ndarray of shape (n_features_in_,)`` as written, and
    reStructuredText reads ``n_features_in_`` as a link target: escape it in type fields."""
    for i, line in enumerate(lines):
        if line.startswith((":vartype ", ":type ", ":rtype:")):
            field, sep, text = line.partition(": ")
            lines[i] = field + sep + _TRAILING_UNDERSCORE.sub(r"\1\\_", text)


def setup(app):
    """Napoleon escapes a trailing underscore of a numpydoc name (``support_``) only when
    ``strip_signature_backslash`` is true, a setting Sphinx 9 no longer declares: declared
    here. Types are escaped after napoleon has run (priority 600 > its 500)."""
    if "strip_signature_backslash" not in app.config:
        app.add_config_value("strip_signature_backslash", False, "env")
    app.connect("autodoc-process-docstring", _escape_types, priority=600)
