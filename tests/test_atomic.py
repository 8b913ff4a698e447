"""The one atomic writer (hpcswarm.store.atomic) and the encoding tags (hpcswarm.store.encoding)."""

import json
import os

import h5py
import pytest

from hpcswarm.errors import DataError
from hpcswarm.store.atomic import (atomic_path, temporaries_of, temporary_path, write_json,
                                   write_text)
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
