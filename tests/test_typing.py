"""The documented Python examples pass mypy: every ``python`` block of the README and of the
user guide, as the docs build runs them (``docs/_ext/markdown_blocks.py`` finds them), is
type-checked against the package's own annotations, and a misspelt setting is caught.

mypy is in the ``test`` extra: this test never skips.
"""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "_ext"))

from markdown_blocks import blocks  # noqa: E402

MISSPELT = """import numpy as np
import hpcswarm

X, y = np.zeros((4, 3)), np.array([0, 1, 0, 1])
hpcswarm.select(X, y, n_particle=6)
"""
"""A setting misspelt: an error before anything runs, not at run time."""


def documented_examples():
    """``(name, code)`` of every ``python`` block of the README and of ``docs/*.md``."""
    pages = [REPO / "README.md"] + sorted(
        path for path in (REPO / "docs").rglob("*.md")
        if not any(part.startswith("_") for part in path.relative_to(REPO / "docs").parts))
    found = []
    for page in pages:
        stem = page.relative_to(REPO).with_suffix("").as_posix().replace("/", "_")
        for line, language, code in blocks(page.read_text(encoding="utf-8")):
            if language == "python":
                found.append((f"example_{stem.replace('-', '_')}_{line}", code))
    return found


def test_documented_examples_pass_mypy_and_a_misspelt_setting_does_not(tmp_path):
    examples = documented_examples()
    assert len(examples) >= 3  # the README's, and the Python API page's
    files = []
    for name, code in [*examples, ("misspelt", MISSPELT)]:
        (tmp_path / f"{name}.py").write_text(code, encoding="utf-8")
        files.append(f"{name}.py")
    env = dict(os.environ, MYPYPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
         "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), *files],
        cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "No module named mypy" not in done.stderr, done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line for line in errors if not line.startswith("misspelt.py")] == []
    assert any('"n_particle"' in line and "n_particles" in line for line in errors), done.stdout
