"""The report's sections open with a plain heading (its title, then the method and dataset
in brackets); the details follow on their own lines."""

import re

import pytest

from hpcswarm.results.report import build_report, markdown_text, text_lines
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job

JOB = """data = "sklearn:wine"
algorithm = "cbpso"
name = "CBPSO"
protocol = "final-signature"
refine = "prune"
folds = 3
runs = 1
seed = 2
[params]
n_particles = 4
n_iterations = 2
"""

HEADING = re.compile(r"^[A-Z][a-z]+( [a-z]+)*( \([^():]+ on [^()]+\))?$")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("headings")
    (folder / "job.toml").write_text(JOB)
    job = read_job(folder / "job.toml", [f"output={folder / 'cbpso.h5'}"])
    run_job(job)
    return build_report([job.output])


def test_every_section_opens_with_a_plain_heading(report):
    lines = text_lines(report)
    headings = [lines[0]] + [after for before, after in zip(lines, lines[1:]) if not before]
    assert [h.split(" (")[0] for h in headings] == [
        "Accuracy by method", "Signatures by size", "Stability of the selections",
        "Final signature", "Most frequently selected genes", "Most frequently selected genes",
        "Convergence"]
    assert all(HEADING.match(h) for h in headings), headings
    assert "Final signature (CBPSO on sklearn:wine)" in headings
    assert not any(note.startswith("Signatures: ") for note in report["notes"])


def test_markdown_sections_are_headings(report):
    text = markdown_text(report)
    assert "\n## Signatures by size (CBPSO on sklearn:wine)\n" in text
    assert "\n## Final signature (CBPSO on sklearn:wine)\n" in text
    assert text.startswith("## Accuracy by method\n")


def test_the_final_signature_says_which_row_estimates_it_and_why_the_sizes_differ(report):
    row = next(r for r in report["rows"] if r["method"] == "CBPSO+prune")
    size = report["final_signatures"][0]["size"]
    expected = (f"  its size and row CBPSO+prune's differ: the row's {row['ave_size']:.1f} genes "
                "are the mean over its outer folds' own searches, each on a fold's training "
                "samples; this signature is one more search of the same method on all samples, "
                f"so the row's estimate covers the method that chose these {size} genes, not "
                "this gene set itself")
    lines = text_lines(report)
    at = lines.index(expected)
    assert lines[at - 1].startswith("  estimate of the method (outer cross-validation, row "
                                    "CBPSO+prune)")
    assert f"- {expected.strip()}" in markdown_text(report).splitlines()
