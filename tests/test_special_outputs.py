"""Outputs that are not regular files: a FIFO, a socket, a folder, or a symbolic link to a device
(``/dev/null``) is never replaced by any command that writes, even with ``--overwrite``; the
command says so in one line, before any work, and leaves it as it was."""

import os
import socket
import stat

import pytest

from cli_checks import REPO, assert_one_error, run_cli
from hpcswarm.errors import DataError
from hpcswarm.store.atomic import write_text

JOB = REPO / "jobs" / "cbpso-wine-biased.toml"
TINY = ["runs=1", "params.n_iterations=2", "params.n_particles=4"]
CSV = "sample,class,g0,g1,g2\n" + "".join(f"s{i},{'AB'[i % 2]},{i},{i % 3},{i * i % 5}\n"
                                          for i in range(8))


def _special(folder, kind, name=None):
    """A non-regular file of ``kind`` in ``folder``, and a test that it is still that kind."""
    path = folder / (name or f"out-{kind}")
    if kind == "fifo":
        os.mkfifo(path)
        return path, stat.S_ISFIFO
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        return path, stat.S_ISSOCK
    if kind == "devnull-link":
        os.symlink(os.devnull, path)
        return path, lambda mode: stat.S_ISCHR(mode) and os.path.islink(path)
    path.mkdir()
    return path, stat.S_ISDIR


KINDS = ["fifo", "socket", "devnull-link", "folder"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    from hpcswarm.__main__ import main

    argv = ["run", str(JOB), "--quiet", "--set", f"output={folder / 'r.h5'}"]
    for item in TINY:
        argv += ["--set", item]
    assert main(argv) == 0
    return folder / "r.h5"


@pytest.mark.parametrize("kind", KINDS)
def test_convert_never_replaces_a_special_file(tmp_path, capsys, kind):
    (tmp_path / "in.csv").write_text(CSV)
    target, still = _special(tmp_path, kind)
    status, out, err = run_cli(capsys, "convert", tmp_path / "in.csv", target, "--overwrite")
    assert_one_error(status, err, str(target), "not a regular file")
    assert still(os.stat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", target.name]


@pytest.mark.parametrize("option", ["--json", "--markdown", "--genes"])
@pytest.mark.parametrize("kind", KINDS)
def test_report_never_replaces_a_special_file(results, tmp_path, capsys, kind, option):
    target, still = _special(tmp_path, kind)
    status, out, err = run_cli(capsys, "report", results, option, target, "--overwrite")
    assert_one_error(status, err, str(target), "not a regular file")
    assert still(os.stat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("name", ["out.h5", "out.progress.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "devnull-link"])
def test_a_job_refuses_a_special_output_before_computing(tmp_path, capsys, kind, name):
    """The results file, or the progress file (a FIFO there made the job wait forever)."""
    target, still = _special(tmp_path, kind, name)
    argv = ["run", JOB, "--quiet", "--overwrite", "--set", f"output={tmp_path / 'out.h5'}"]
    for item in TINY:
        argv += ["--set", item]
    status, out, err = run_cli(capsys, *argv)
    assert_one_error(status, err, str(target), "not a regular file")
    assert still(os.stat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_single_search_refuses_a_special_output(tmp_path, capsys):
    target, still = _special(tmp_path, "fifo")
    status, out, err = run_cli(capsys, "run", "--data", "sklearn:wine", "--algorithm", "bpso",
                               "--output", target, "--overwrite")
    assert_one_error(status, err, str(target), "not a regular file")
    assert still(os.stat(target).st_mode)


def test_the_atomic_writer_refuses_a_fifo_that_appears_meanwhile(tmp_path):
    """The last check before the rename: a FIFO made while the content was written stays."""
    target = tmp_path / "late"
    with pytest.raises(DataError, match="is a FIFO"):
        from hpcswarm.store.atomic import atomic_path

        with atomic_path(target) as temporary:
            temporary.write_text("x")
            os.mkfifo(target)
    assert stat.S_ISFIFO(os.stat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["late"]
    with pytest.raises(DataError, match="late: is a FIFO"):
        write_text(target, "y")


def test_report_never_replaces_a_special_file_in_its_csv_folder(results, tmp_path, capsys):
    from hpcswarm.results.report import CSV_FILES

    target, still = _special(tmp_path, "fifo", CSV_FILES[-1])
    status, out, err = run_cli(capsys, "report", results, "--csv", tmp_path, "--overwrite")
    assert_one_error(status, err, str(target), "not a regular file")
    assert still(os.stat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("kind", ["fifo", "devnull-link", "folder"])
@pytest.mark.parametrize("command, fragment", [(["run"], "the job file is {}, not a regular"),
                                               (["report"], "is {}, not a results file")])
def test_an_input_that_is_not_a_regular_file_is_refused_unread(tmp_path, capsys, kind,
                                                                command, fragment):
    """A job file or results file that is a FIFO (whose read would block until a writer
    comes), a device or a folder: one line naming it, never a read. The FIFO is given to a
    process of its own, with a time limit, so that a read fails the test instead of hanging
    it."""
    from cli_checks import run_subprocess

    path, _ = _special(tmp_path, kind)
    if kind == "fifo":
        done = run_subprocess(*command, path, timeout=60)
        status, err = done.returncode, done.stderr
    else:
        status, _, err = run_cli(capsys, *command, path)
    described = {"fifo": "a FIFO (named pipe)", "devnull-link": "a character device",
                 "folder": "a directory"}[kind]
    assert_one_error(status, err, path, fragment.format(described))
