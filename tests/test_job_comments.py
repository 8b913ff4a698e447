"""The example commands in the bundled job files' comments run on a fresh clone."""

import re
from pathlib import Path

JOBS = Path(__file__).resolve().parents[1] / "jobs"


def test_every_data_a_comment_names_is_one_a_clone_has():
    named = []
    for job in sorted(JOBS.glob("*.toml")):
        comments = "\n".join(line for line in job.read_text().splitlines()
                             if line.startswith("#"))
        named += [(job.name, data.rstrip(".,"))
                  for data in re.findall(r"--set data=(\S+)", comments)]
    assert len(named) >= 8
    assert all(re.fullmatch(r"(builtin|sklearn|panel):[a-z_-]+|PATH", data) for _, data in named), \
        named
