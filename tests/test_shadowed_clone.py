"""A script beside a clone folder named ``hpcswarm`` imports that folder: what Python then
says is what the getting-started page quotes, and its remedy works."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _script_beside_a_clone(tmp_path):
    clone = tmp_path / "hpcswarm"
    (clone / "hpcswarm").mkdir(parents=True)  # a repository layout: the package one level down
    (clone / "pyproject.toml").write_text("")
    script = tmp_path / "analysis.py"
    script.write_text("from hpcswarm import select\nprint('imported', select.__module__)\n")
    return script


@pytest.mark.slow  # two interpreters importing hpcswarm
def test_the_message_the_docs_quote_and_the_remedy(tmp_path):
    script = _script_beside_a_clone(tmp_path)
    shadowed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              cwd=tmp_path)
    quoted = "ImportError: cannot import name 'select' from 'hpcswarm' (unknown location)"
    assert quoted in shadowed.stderr
    assert quoted in (REPO / "docs" / "getting-started.md").read_text()
    fixed = subprocess.run([sys.executable, "-P", str(script)], capture_output=True, text=True,
                           cwd=tmp_path)
    assert fixed.returncode == 0 and "imported hpcswarm.api" in fixed.stdout, fixed.stderr
