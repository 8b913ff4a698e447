"""The one atomic writer (hpcswarm.store.atomic) and the encoding tags (hpcswarm.store.encoding)."""

import json
import os

import h5py
import pytest

import hpcswarm.store.atomic as atomic
from hpcswarm.errors import DataError
from hpcswarm.store.atomic import (all_or_nothing, atomic_path, open_replacing, temporaries_of,
                                   temporary_path, write_json, write_text)
from hpcswarm.store.encoding import check_tag, finite, read_tag, tag, tags


def test_a_written_file_takes_its_mode_from_the_umask(tmp_path):
    previous = os.umask(0o027)
    try:
        write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(previous)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o640
    write_text(tmp_path / "a.txt", "y")
    assert (tmp_path / "a.txt").read_text() == "y"


def test_a_failed_write_leaves_the_target_and_nothing_else(tmp_path):
    target = tmp_path / "out.h5"
    target.write_text("keep me")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as temporary:
            assert temporary.parent == tmp_path and temporaries_of(target) == [temporary]
            with h5py.File(temporary, "w") as f:
                f["x"] = 1
            raise RuntimeError("interrupted")
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5"]


def test_without_overwrite_an_existing_target_is_an_error(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("{}")
    with pytest.raises(DataError, match="out.json: already exists"):
        write_json(target, {"a": 1}, overwrite=False)
    assert target.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_without_overwrite_a_dangling_link_is_an_existing_target(tmp_path):
    os.symlink("elsewhere.json", tmp_path / "out.json")
    with pytest.raises(DataError, match="out.json: already exists"):
        write_json(tmp_path / "out.json", {"a": 1}, overwrite=False)
    assert os.readlink(tmp_path / "out.json") == "elsewhere.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_the_files_of_a_batch_appear_together_at_its_end(tmp_path):
    with all_or_nothing():
        write_text(tmp_path / "a.txt", "a")
        with all_or_nothing():  # joins the outer batch
            write_json(tmp_path / "b.json", {"b": 1})
        assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.json").exists()
    assert (tmp_path / "a.txt").read_text() == "a" and json.loads(
        (tmp_path / "b.json").read_text()) == {"b": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.json"]


def test_a_batch_failing_half_way_leaves_none_of_its_files(tmp_path):
    (tmp_path / "a.txt").write_text("keep me")
    with pytest.raises(RuntimeError):
        with all_or_nothing():
            write_text(tmp_path / "a.txt", "new")
            write_text(tmp_path / "b.txt", "new")
            raise RuntimeError("the third write fails")
    assert (tmp_path / "a.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_batch_whose_target_appeared_meanwhile_keeps_it_and_leaves_no_temporary(tmp_path):
    with pytest.raises(DataError, match="b.txt: already exists"):
        with all_or_nothing():
            write_text(tmp_path / "a.txt", "a", overwrite=False)
            write_text(tmp_path / "b.txt", "b", overwrite=False)
            write_text(tmp_path / "c.txt", "c", overwrite=False)
            (tmp_path / "b.txt").write_text("theirs")
    assert (tmp_path / "b.txt").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


class _StopSignal(BaseException):
    """What a stop signal's handler raises in the main thread (a KeyboardInterrupt or a
    job's stop): any bytecode may be the one it interrupts."""


def _stopped_right_after(function):
    def stopped(*args):
        function(*args)
        raise _StopSignal

    return stopped


@pytest.mark.parametrize("batch", [False, True])
def test_a_stop_just_after_the_temporary_is_created_leaves_nothing(tmp_path, monkeypatch,
                                                                   batch):
    # the moment the file appears in the folder is when a stop signal is likeliest to be
    # sent (a test or a user watching the folder): the temporary must already be covered
    monkeypatch.setattr(atomic, "_create_empty", _stopped_right_after(atomic._create_empty))
    target = tmp_path / "out.json"
    with pytest.raises(_StopSignal):
        if batch:
            with all_or_nothing(), atomic_path(target):
                pass
        else:
            with atomic_path(target):
                pass
    with pytest.raises(_StopSignal):
        open_replacing(tmp_path / "progress.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_a_stop_just_after_the_content_is_flushed_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_fsync_path", _stopped_right_after(atomic._fsync_path))
    with pytest.raises(_StopSignal):
        write_text(tmp_path / "out.txt", "text")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["symbolic", "hard", "dangling"])
def test_a_file_opened_replacing_a_link_never_writes_through_it(tmp_path, kind):
    other = tmp_path / "other.txt"
    other.write_text("mine")
    target = tmp_path / "log.jsonl"
    if kind == "symbolic":
        os.symlink(other.name, target)
    elif kind == "hard":
        os.link(other, target)
    else:
        os.symlink("missing.txt", target)
    with open_replacing(target) as handle:
        handle.write("new\n")
    assert other.read_text() == "mine" and not (tmp_path / "missing.txt").exists()
    assert not target.is_symlink() and target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl", "other.txt"]


def test_a_file_opened_replacing_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "log.jsonl")
    with pytest.raises(DataError, match="log.jsonl: is a FIFO"):
        open_replacing(tmp_path / "log.jsonl")
    assert [p.name for p in tmp_path.iterdir()] == ["log.jsonl"]


def test_a_later_run_recognises_the_temporaries_of_a_target(tmp_path):
    target = tmp_path / "results.h5"
    left = temporary_path(target)
    left.write_bytes(b"half")
    other = temporary_path(tmp_path / "results.h5.json")
    other.write_bytes(b"")
    (tmp_path / ".results.h5.mine.tmp").write_bytes(b"")  # not hpcswarm's
    assert temporaries_of(target) == [left]
    assert f"-{os.getpid()}-" in left.name and left.name.endswith(".tmp")


def test_json_has_no_nan_and_a_final_newline(tmp_path):
    write_json(tmp_path / "a.json", finite({"x": float("nan"), "y": -0.0, "z": (1, 2)}))
    text = (tmp_path / "a.json").read_text()
    assert text.endswith("\n") and json.loads(text) == {"x": None, "y": 0.0, "z": [1, 2]}
    with pytest.raises(ValueError):
        write_json(tmp_path / "b.json", {"x": float("inf")})
    assert not (tmp_path / "b.json").exists() and temporaries_of(tmp_path / "b.json") == []


def test_encoding_tags_are_written_read_and_checked(tmp_path):
    with h5py.File(tmp_path / "t.h5", "w") as f:
        tag(f, ("hpcswarm-thing", "1.2.0"))
        assert read_tag(f) == ("hpcswarm-thing", "1.2.0")
        check_tag(f, ("hpcswarm-thing", "1.0.0"), "t.h5", "thing")
        with pytest.raises(DataError, match="t.h5: not an hpcswarm other .*'hpcswarm-thing'"):
            check_tag(f, ("hpcswarm-other", "1.0.0"), "t.h5", "other")
        with pytest.raises(DataError, match="thing encoding-version '1.2.0' is not supported"):
            check_tag(f, ("hpcswarm-thing", "2.0.0"), "t.h5", "thing")
    assert tags(("a", "0.1.0")) == {"encoding-type": "a", "encoding-version": "0.1.0"}


@pytest.mark.parametrize("pid", ["99999999999999999999", "0"])
def test_a_temporary_naming_a_process_id_no_process_can_have_is_stale(tmp_path, capsys, pid):
    """A process id past the system's range (``os.kill`` raises OverflowError) or 0 (which
    ``os.kill`` reads as this process group) cannot be a live writer: its temporary is
    removed by the next write, with a note, never a traceback."""
    target = tmp_path / "out.h5"
    left = tmp_path / f".out.h5.hpcswarm-{pid}-0123456789ab.tmp"
    left.write_bytes(b"half")
    write_text(target, "whole")
    assert target.read_text() == "whole" and not left.exists()
    assert f"(process {pid} is gone)" in capsys.readouterr().err


@pytest.mark.parametrize("door", ["convert", "run"])
def test_convert_and_run_remove_a_temporary_with_a_huge_process_id(tmp_path, capsys, door):
    from pathlib import Path

    from cli_checks import run_cli

    data = Path(__file__).parent / "data" / "good.csv"
    output = tmp_path / ("out.h5" if door == "convert" else "out.json")
    left = tmp_path / f".{output.name}.hpcswarm-99999999999999999999-0123456789ab.tmp"
    left.write_bytes(b"half")
    argv = (["convert", data, output] if door == "convert" else
            ["run", "--algorithm", "bpso", "--data", "builtin:srbct", "--param",
             "n_iterations=1", "--param", "n_particles=4", "--output", output])
    status, _, err = run_cli(capsys, *argv)
    assert status == 0, err
    assert "Traceback" not in err and output.exists() and not left.exists()
