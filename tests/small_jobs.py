"""A small job run from its text, for the tests that read what a finished job wrote."""

from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job


def run_small_job(folder, text, output, quiet=False):
    """Write the job file ``text`` into ``folder`` and run it, its results written to
    ``folder / output``; returns the job and its summary."""
    (folder / "job.toml").write_text(text)
    job = read_job(folder / "job.toml", [f"output={folder / output}"])
    return job, run_job(job, quiet=quiet)
