"""No command writes over an existing file unless that file is named as an output and
``--overwrite`` is given; no output or checkpoint may be an input of the same command (the
dataset, the job file, a labels file, the results given to ``report``), through symbolic links,
relative paths or hard links, even with ``--overwrite``. Each refusal is one error line, exit
status 2, before any computation, and leaves every file of the folder as it was."""

import json
import os
import shutil

import pytest

from cli_checks import REPO, assert_one_error, folder_state, run_cli

GOOD = REPO / "tests" / "data" / "good.csv"
JOB = REPO / "jobs" / "cbpso-wine-biased.toml"
TINY = ["runs=2", "params.n_iterations=2", "params.n_particles=4"]
SEARCH = ["--algorithm", "sfs", "--param", "cv=2"]


@pytest.fixture
def folder(tmp_path, capsys, monkeypatch):
    """The current folder, holding good.csv, a labels file, their conversion data.h5 and a
    job file."""
    shutil.copy(GOOD, tmp_path / "good.csv")
    (tmp_path / "labels.txt").write_text("sample,label\ns1,A\ns2,B\ns3,A\ns4,B\n")
    status, _, err = run_cli(capsys, "convert", tmp_path / "good.csv", tmp_path / "data.h5")
    assert status == 0, err
    shutil.copy(JOB, tmp_path / "job.toml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def results(folder, capsys):
    """``folder`` with res.h5, the results of a small job (and its JSON summary)."""
    argv = ["run", folder / "job.toml", "--set", f"output={folder / 'res.h5'}"]
    for item in TINY:
        argv += ["--set", item]
    status, _, err = run_cli(capsys, *argv)
    assert status == 0, err
    return folder


def refused(capsys, folder, argv, *fragments):
    before = folder_state(folder)
    status, _, err = run_cli(capsys, *argv)
    line = assert_one_error(status, err, *fragments)
    assert folder_state(folder) == before
    return line


def _link(folder, name, target):
    os.symlink(target, folder / name)
    return folder / name


# ------------------------------------------------------------------ convert
@pytest.mark.parametrize("output", ["good.csv", "./sub/../good.csv", "link", "hard"])
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_convert_never_writes_over_its_input(folder, capsys, output, overwrite):
    (folder / "sub").mkdir()
    _link(folder, "link", folder / "good.csv")
    os.link(folder / "good.csv", folder / "hard")
    line = refused(capsys, folder, ["convert", "good.csv", output, *overwrite],
                   "is the input", "even with --overwrite")
    assert "use --overwrite" not in line


def test_convert_never_writes_over_its_labels_file(folder, capsys):
    refused(capsys, folder, ["convert", "good.csv", "labels.txt", "--labels", "labels.txt",
                             "--overwrite"], "is the labels file")


def test_convert_keeps_an_existing_output_without_overwrite(folder, capsys):
    refused(capsys, folder, ["convert", "good.csv", "data.h5"], "data.h5: already exists",
            "--overwrite")


# ------------------------------------------------------------------ run --data --output
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("output", ["data.h5", "./data.h5", "link"])
def test_a_search_never_writes_over_its_dataset(folder, capsys, overwrite, output):
    _link(folder, "link", "data.h5")
    refused(capsys, folder, ["run", "--data", "data.h5", *SEARCH, "--output", output,
                             *overwrite], "is the dataset", "even with --overwrite")


def test_a_search_keeps_an_existing_output_without_overwrite(folder, capsys):
    (folder / "result.json").write_text("{}\n")
    refused(capsys, folder, ["run", "--data", "data.h5", *SEARCH, "--output", "result.json"],
            "result.json: already exists", "--overwrite")
    status, _, err = run_cli(capsys, "run", "--data", "data.h5", *SEARCH, "--output",
                             "result.json", "--overwrite")
    assert status == 0, err
    assert json.loads((folder / "result.json").read_text())["algorithm"] == "sfs"


# ------------------------------------------------------------------ job files
def _job_argv(folder, *sets):
    argv = ["run", folder / "job.toml", "--set", "data=data.h5"]
    for item in TINY + list(sets):
        argv += ["--set", item]
    return argv


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("sets, fragments", [
    (["output=data.h5"], ["is the dataset"]),
    (["output=res2.h5", "checkpoint=data.h5"], ["is the dataset"]),
    (["output=res2.h5", "checkpoint=link.h5"], ["is the dataset"]),
    (["output=res2.h5", "checkpoint=job-link.h5"], ["is the job file"]),
])
def test_a_job_never_writes_over_its_inputs(folder, capsys, overwrite, sets, fragments):
    _link(folder, "link.h5", "data.h5")
    _link(folder, "job-link.h5", "job.toml")
    refused(capsys, folder, _job_argv(folder, *sets) + overwrite, *fragments,
            "even with --overwrite")


def test_a_job_never_writes_over_the_labels_file_it_converts_with(folder, capsys):
    (folder / "values.csv").write_text("sample,g1,g2\ns1,0.1,0.2\ns2,0.3,0.1\ns3,0.5,0.6\n"
                                       "s4,0.2,0.9\n")
    argv = ["run", folder / "job.toml", "--set", "data=values.csv", "--set",
            "convert.labels=labels.txt", "--set", "checkpoint=labels.h5", "--set",
            f"cache={folder / 'cache'}"]
    for item in TINY:
        argv += ["--set", item]
    os.symlink("labels.txt", folder / "labels.h5")
    refused(capsys, folder, argv + ["--overwrite"], "is the labels file")


# ------------------------------------------------------------------ report
@pytest.mark.parametrize("option", ["--json", "--markdown"])
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_report_never_writes_over_its_results(results, capsys, option, overwrite):
    refused(capsys, results, ["report", "res.h5", option, "res.h5", *overwrite],
            "is the results file", "even with --overwrite")


@pytest.mark.parametrize("option, target", [("--json", "r.json"), ("--markdown", "r.md"),
                                            ("--csv", "tables"), ("--plots", "plots")])
def test_report_keeps_existing_files_without_overwrite(results, capsys, option, target):
    folder = results
    if option in ("--csv", "--plots"):
        (folder / target).mkdir()
        name = "methods.csv" if option == "--csv" else "convergence.png"
        (folder / target / name).write_text("mine\n")
    else:
        (folder / target).write_text("mine\n")
    if option == "--plots":
        pytest.importorskip("matplotlib")
    refused(capsys, folder, ["report", "res.h5", option, target], "already exists",
            "--overwrite")
    status, _, err = run_cli(capsys, "report", "res.h5", option, target, "--overwrite")
    assert status == 0, err


# ------------------------------------------------------------------ the job's lock file
@pytest.mark.parametrize("target", ["good.csv", "data.h5", "missing.txt"])
def test_a_lock_file_that_is_a_link_is_refused_and_never_written_through(folder, capsys,
                                                                         target):
    """A symbolic link in the lock file's place is refused, naming it; what it points to
    (here the job's own input) keeps every byte."""
    _link(folder, "res.h5.lock", target)
    line = refused(capsys, folder, _job_argv(folder, "output=res.h5"), "res.h5.lock",
                   "is a symbolic link", repr(target))
    assert "remove the link" in line


def test_a_lock_file_that_is_a_fifo_is_refused(folder, capsys):
    os.mkfifo(folder / "res.h5.lock")
    refused(capsys, folder, _job_argv(folder, "output=res.h5"), "res.h5.lock",
            "is a FIFO (named pipe), not a regular file")


def test_a_garbled_lock_file_is_a_stale_lock(folder, capsys):
    """Bytes that are not UTF-8 (nor a host and PID) are a lock a dead run left: put back as
    they were when the run is refused, replaced and removed when it runs."""
    (folder / "res.h5.lock").write_bytes(b"\x89\xff\xfe garbage\x00")
    refused(capsys, folder, _job_argv(folder, "output=res.h5", "data=builtin:nope"),
            "builtin:nope")
    status, _, err = run_cli(capsys, *_job_argv(folder, "output=res.h5"))
    assert status == 0, err
    assert (folder / "res.h5").exists() and not (folder / "res.h5.lock").exists()


@pytest.mark.parametrize("option", ["--plots", "--csv"])
def test_report_into_a_folder_it_cannot_create_is_one_line(results, capsys, monkeypatch,
                                                           option):
    """A missing output folder under a read-only one (simulated: root writes anywhere)."""
    import errno
    import pathlib

    real = pathlib.Path.mkdir
    (results / "locked").mkdir()

    def read_only(path, *args, **kwargs):
        if path.parent.name == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", read_only)
    refused(capsys, results, ["report", "res.h5", option, "locked/new/out"],
            f"{option} locked/new/out: cannot create the folder locked/new (Permission denied)")


@pytest.mark.parametrize("name, fragments", [
    ("good.csv", ["has 2 names (hard links)", "remove this name"]),
    ("job.toml", ["is the job file", "which the lock would empty",
                  "give the job another output or checkpoint"])])
def test_a_lock_file_that_is_a_hard_link_is_refused_and_never_written(folder, capsys, name,
                                                                      fragments):
    """A lock file with another name (a file the job does not read, or its job file) is
    refused before anything is written to it: that other file keeps every byte."""
    os.link(folder / name, folder / "res.h5.lock")
    refused(capsys, folder, _job_argv(folder, "output=res.h5"), "res.h5.lock", *fragments)


# ------------------------------------------------------------------ the job's progress file
@pytest.mark.parametrize("kind", ["link", "hard link", "dangling link"])
def test_a_progress_file_that_is_a_link_is_replaced_never_written_through(folder, capsys,
                                                                          kind):
    """The progress file is a new file: a link in its place, to a file the job does not
    read, is replaced by it, and what it pointed to keeps every byte (or stays missing)."""
    (folder / "notes.txt").write_text("mine\n")
    progress = folder / "res.progress.jsonl"
    if kind == "link":
        os.symlink("notes.txt", progress)
    elif kind == "hard link":
        os.link(folder / "notes.txt", progress)
    else:
        os.symlink("elsewhere.txt", progress)
    status, _, err = run_cli(capsys, *_job_argv(folder, "output=res.h5"), "--quiet")
    assert status == 0, err
    assert (folder / "notes.txt").read_text() == "mine\n"
    assert not (folder / "elsewhere.txt").exists()
    assert not progress.is_symlink() and progress.stat().st_nlink == 1
    assert json.loads(progress.read_text().splitlines()[-1])["event"] == "end"


# ------------------------------------------------------------------ folders that refuse files
def _refusing(monkeypatch, folder_name):
    """New files in folders named ``folder_name`` are refused, as in a read-only folder
    (simulated: root writes anywhere)."""
    import errno

    real = os.open

    def refuse(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and os.path.basename(os.path.dirname(path)) == folder_name:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)


def _disk_full_at(monkeypatch, marker):
    """Make the write of the temporary file whose name holds ``marker`` fail as on a full
    disk (ENOSPC when it is synced)."""
    import errno

    from hpcswarm.store import atomic

    real = atomic._fsync_path

    def full(path, *args):
        if marker in str(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, *args)

    monkeypatch.setattr(atomic, "_fsync_path", full)


def test_report_with_one_output_in_a_folder_that_refuses_files_writes_none(results, capsys,
                                                                           monkeypatch):
    """Every output's folder is tried before any file is written: the other outputs are not
    left behind."""
    (results / "locked").mkdir()
    _refusing(monkeypatch, "locked")
    refused(capsys, results, ["report", "res.h5", "--markdown", "r.md", "--json",
                              "locked/r.json"],
            "--json locked/r.json: cannot write in 'locked' (Permission denied)")


def test_a_search_into_a_folder_that_refuses_files_is_refused_before_it_runs(
        folder, capsys, monkeypatch):
    import hpcswarm.selection.search as search

    def no_search(*args, **kwargs):
        raise AssertionError("the search ran")

    (folder / "locked").mkdir()
    _refusing(monkeypatch, "locked")
    monkeypatch.setattr(search, "run_search", no_search)  # the search of the door's view
    refused(capsys, folder, ["run", "--data", "data.h5", *SEARCH, "--output",
                             "locked/result.json"],
            "--output locked/result.json: cannot write in 'locked' (Permission denied)")


def test_a_write_failing_half_way_leaves_none_of_the_reports_files(results, capsys,
                                                                   monkeypatch):
    """The report's files appear together or not at all: a write failing after others are
    complete (here the JSON's, as on a full disk) leaves none, no temporary, and an existing
    file as it was."""
    (results / "r.md").write_text("mine\n")
    _disk_full_at(monkeypatch, ".r.json.")
    refused(capsys, results, ["report", "res.h5", "--markdown", "r.md", "--csv", "tables",
                              "--json", "r.json", "--genes", "g.tsv", "--overwrite"],
            "r.json: cannot write (No space left on device)")


def test_a_job_whose_summary_write_fails_leaves_no_results_file(folder, capsys, monkeypatch):
    """The results file, its summary and the signature appear together: a failing summary
    write leaves no results file, and the checkpoint keeps the finished tasks."""
    _disk_full_at(monkeypatch, ".res.json.")
    status, _, err = run_cli(capsys, *_job_argv(folder, "output=res.h5"), "--quiet")
    assert_one_error(status, err, "res.json: cannot write (No space left on device)")
    names = {path.name for path in folder.iterdir()}
    assert "res.h5" not in names and "res.json" not in names
    assert "res.checkpoint.h5" in names
    assert not [name for name in names if name.endswith(".tmp")]


def test_evaluate_plots_failing_half_way_leave_no_plot_nor_folder(folder, capsys,
                                                                  monkeypatch):
    """The two plots of ``evaluate --plot`` appear together: the second failing (as on a
    full disk) leaves neither, nor the folder created for them."""
    pytest.importorskip("matplotlib")
    _disk_full_at(monkeypatch, "signature-by-class.png")
    refused(capsys, folder, ["evaluate", "data.h5", "--all", "--plot", "new/plots"],
            "signature-by-class.png: cannot write (No space left on device)")


@pytest.mark.parametrize("plot", ["notes.txt", "notes.txt/sub", "dangling"])
def test_evaluate_plot_into_something_that_is_no_folder_is_refused_first(folder, capsys, plot):
    pytest.importorskip("matplotlib")
    (folder / "notes.txt").write_text("mine\n")
    os.symlink("elsewhere", folder / "dangling")
    name = plot.split("/")[0]
    refused(capsys, folder, ["evaluate", "data.h5", "--all", "--plot", plot],
            f"--plot {plot}: {name} exists and is not a folder")


def test_a_job_file_in_the_lock_files_place_is_refused_and_kept(folder, capsys):
    """A job file named ``OUTPUT.lock`` is an input: the lock is never taken on it (taking
    it emptied the job file, and releasing it removed the file)."""
    shutil.copy(folder / "job.toml", folder / "res.h5.lock")
    argv = ["run", "res.h5.lock", "--set", "data=data.h5", "--set", "output=res.h5"]
    for item in TINY:
        argv += ["--set", item]
    line = refused(capsys, folder, argv, "the job's lock file", "res.h5.lock: is the job file",
                   "give the job another output or checkpoint")
    assert "res.h5.lock" in line


def test_evaluate_plot_into_a_folder_it_cannot_create_is_refused_before_evaluating(
        folder, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    import hpcswarm.cli as cli

    def no_evaluation(*args, **kwargs):
        raise AssertionError("evaluated")

    (folder / "locked").mkdir()
    _refusing(monkeypatch, "locked")
    monkeypatch.setattr(cli, "_evaluate", no_evaluation)
    refused(capsys, folder, ["evaluate", "data.h5", "--all", "--plot", "locked/new/plots"],
            "--plot locked/new/plots: cannot create the folder locked/new (Permission denied)")


def test_a_checkpoint_that_is_the_output_spelled_otherwise_is_refused_as_such(folder, capsys):
    """One file for two keys is named as such, not as a lock held by this very run."""
    (folder / "sub").mkdir()
    refused(capsys, folder, _job_argv(folder, "output=res.h5", "checkpoint=sub/../res.h5"),
            "job key 'checkpoint'", "is also job key 'output'")
