"""Sphinx configuration of the hpcswarm user guide (``make docs``)."""

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
    "run_examples",
]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
napoleon_numpy_docstring = True
napoleon_google_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "furo"
html_title = f"hpcswarm {release}"
html_static_path = []
