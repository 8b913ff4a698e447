"""Help texts that promise files keep their promise: the files an option names are the files
the command writes."""

import argparse
import re

import pytest

from hpcswarm import cli
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job

JOB = """data = "sklearn:wine"
algorithm = "cbpso"
protocol = "unbiased"
folds = 3
runs = 2
seed = 3
[params]
n_particles = 4
n_iterations = 2
"""


def _option_help(command, flag):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if flag in a.option_strings)
    return action.help


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("promises")
    job_file = folder / "job.toml"
    job_file.write_text(JOB)
    job = read_job(job_file, [f"output={folder / 'job.h5'}"])
    run_job(job)
    return job.output


def test_report_csv_writes_the_files_its_help_names(results, tmp_path):
    promised = set(re.findall(r"[\w-]+\.csv", _option_help("report", "--csv")))
    assert len(promised) >= 3
    assert cli.main(["report", str(results), "--csv", str(tmp_path)]) == 0
    written = {path.name for path in tmp_path.iterdir()}
    assert written == promised
