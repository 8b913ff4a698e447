"""What a user installing hpcswarm relies on: the licence, how to cite it and the papers, the
type-hint marker, ``--version``."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import hpcswarm

ROOT = Path(__file__).resolve().parents[1]


def test_license_file_is_the_bsd_3_clause_of_pyproject():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License") and "the hpcswarm developers" in text
    assert "Neither the name of the copyright holder" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"


def test_citation_names_the_tool_and_the_five_papers(shared_data):
    yaml = pytest.importorskip("yaml")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["version"] == hpcswarm.__version__
    assert citation["license"] == "BSD-3-Clause" and "hpcswarm" in citation["title"]
    papers = sorted((shared_data.parent / "papers").glob("*.txt"))
    if not papers:
        pytest.skip("the papers are not present")
    openings = [" ".join(p.read_text().split()[:120]).lower() for p in papers]
    references = citation["references"]
    assert len(references) == len(papers) == 5
    for reference in references:
        title = " ".join(reference["title"].split()).lower()
        assert sum(title in opening for opening in openings) == 1, title
        surnames = [a["family-names"] for a in reference["authors"]]
        (opening,) = [o for o in openings if title in o]
        assert all(name.lower() in opening for name in surnames), surnames
        assert isinstance(reference["year"], int)


def test_package_is_marked_typed_and_ships_the_marker():
    assert (Path(hpcswarm.__file__).parent / "py.typed").is_file()
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in setuptools["package-data"]["hpcswarm"]


def test_version_and_help_answer():
    version = subprocess.run([sys.executable, "-m", "hpcswarm", "--version"],
                             capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"hpcswarm {hpcswarm.__version__}"
    usage = subprocess.run([sys.executable, "-m", "hpcswarm", "--help"], capture_output=True,
                           text=True, check=True)
    assert "evaluate" in usage.stdout and "report" in usage.stdout


def test_public_api_has_type_hints():
    import inspect

    from hpcswarm.api import Selection, select
    from hpcswarm.selector import SwarmFeatureSelector, run_seed

    for function in (select, SwarmFeatureSelector.__init__, SwarmFeatureSelector.fit, run_seed,
                     Selection.to_frame, Selection.front_frame, Selection.plot_expression):
        signature = inspect.signature(function)
        assert signature.return_annotation is not inspect.Signature.empty, function
        for name, parameter in signature.parameters.items():
            if name != "self" and parameter.kind is not parameter.VAR_KEYWORD:
                assert parameter.annotation is not inspect.Parameter.empty, (function, name)
