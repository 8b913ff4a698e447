"""Every method and protocol gives, bit for bit, the stored results of the reference code.

The references (``tests/reference/*.json``) were written by ``make_references.py`` before the
structural and throughput work (the balanced-objective searches of every swarm method and the
longer SRBCT searches, before particles were evaluated from their previous subsets); a refactor or an optimisation that changes any selected gene,
fitness, evaluation count or history value fails here.
"""

import json
import os

import pytest

from reference_cases import (JOB_CASES, REPRESENTATIVE_CASES, SEARCH_CASES, job_document,
                             search_document)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")


def _stored(name):
    with open(os.path.join(HERE, f"{name}.json")) as stored:
        return json.load(stored)


def _comparable(document):
    return json.loads(json.dumps(document, sort_keys=True))


def _marked(name):
    """A case's test, slow if it is one of the balanced-objective or longer searches beyond
    the representative few."""
    extra = "-balanced-" in name or "-long-" in name
    slow = extra and name not in REPRESENTATIVE_CASES
    return pytest.param(name, marks=pytest.mark.slow) if slow else name


@pytest.mark.parametrize("name", [_marked(name) for name in sorted(SEARCH_CASES)])
def test_search_matches_reference(name):
    assert _comparable(search_document(SEARCH_CASES[name])) == _stored(f"search-{name}")


@pytest.mark.parametrize("name", sorted(JOB_CASES))
def test_job_matches_reference(name, tmp_path):
    assert _comparable(job_document(JOB_CASES[name], str(tmp_path))) == _stored(f"job-{name}")
