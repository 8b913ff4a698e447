"""The declared minimum versions: every dependency declares one, and ``.ci/test-minimums``
(which installs exactly them in a fresh environment and runs the API, data and CLI tests
there) pins exactly those; they cover what the code imports."""

import re
import subprocess
import tomllib

from cli_checks import REPO


def _declared():
    """Requirements the minimums environment installs: the dependencies and the test, plot
    and anndata extras."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return project["dependencies"] + [r for name in ("test", "plot", "anndata")
                                      for r in extras[name]]


def _pins():
    done = subprocess.run(["bash", str(REPO / ".ci" / "test-minimums"), "--pins"],
                          capture_output=True, text=True, check=True, timeout=60)
    return dict(line.split("==") for line in done.stdout.split())


def _version(text):
    return tuple(int(part) for part in text.split("."))


def test_the_minimums_script_pins_every_declared_minimum_exactly():
    pins = _pins()
    declared = _declared()
    assert len(pins) == len(declared)
    for requirement in declared:
        name = re.match(r"[A-Za-z0-9_.\-]+", requirement).group()
        assert f">={pins[name]}" in requirement.replace(" ", ""), requirement


def test_the_declared_minimums_cover_what_the_code_imports():
    pins = _pins()
    # the selector imports sklearn.utils.validation.validate_data, new in scikit-learn 1.6
    assert re.search(r"from sklearn\.utils\.validation import [^\n]*\bvalidate_data\b",
                     (REPO / "hpcswarm" / "selector.py").read_text())
    assert _version(pins["scikit-learn"]) >= (1, 6)
    # mpi4py.util.sync.Counter (hpcswarm.comm) is new in mpi4py 4.0, whose first release
    # with wheels is 4.1
    assert _version(pins["mpi4py"]) >= (4, 1)
