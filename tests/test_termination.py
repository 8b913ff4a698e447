"""SIGTERM outside a job's rounds: Terminated, also where a finaliser swallows it."""

import signal
import sys

import pytest

from hpcswarm.store.atomic import all_or_nothing, atomic_path
from hpcswarm.termination import Terminated, raise_if_terminated, terminate_like_interrupt


class _SignalledOnCollection:
    """An object whose finaliser receives SIGTERM: the handler runs inside ``__del__``,
    where Python cannot propagate the exception it raises (it goes to sys.unraisablehook)."""

    def __del__(self):
        signal.raise_signal(signal.SIGTERM)


def test_a_sigterm_swallowed_by_a_finaliser_still_stops_the_write(tmp_path, capfd):
    target = tmp_path / "out.txt"
    with pytest.raises(Terminated, match="SIGTERM"):
        with terminate_like_interrupt():
            with atomic_path(target) as temporary:
                temporary.write_text("complete")
                _SignalledOnCollection()  # dropped at once: the signal comes in __del__
                temporary.write_text("complete, and written on")  # the write went on
    assert list(tmp_path.iterdir()) == []
    assert capfd.readouterr().err == ""  # not printed: raised again at the rename


def test_a_swallowed_sigterm_stops_a_batch_before_any_rename(tmp_path):
    with pytest.raises(Terminated):
        with terminate_like_interrupt():
            with all_or_nothing():
                for name in ("a.txt", "b.txt"):
                    with atomic_path(tmp_path / name) as temporary:
                        temporary.write_text(name)
                _SignalledOnCollection()
    assert list(tmp_path.iterdir()) == []


def test_the_record_is_cleared_at_the_end_of_the_block(tmp_path):
    with pytest.raises(Terminated):
        with terminate_like_interrupt():
            _SignalledOnCollection()
            raise_if_terminated()
    raise_if_terminated()  # outside the block: nothing pending
    with atomic_path(tmp_path / "later.txt") as temporary:
        temporary.write_text("written")
    assert (tmp_path / "later.txt").read_text() == "written"


def test_other_unraisable_exceptions_are_still_reported():
    seen = []
    previous = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        with terminate_like_interrupt():
            class Failing:
                def __del__(self):
                    raise ValueError("a finaliser's own failure")
            Failing()
        assert [type(u.exc_value) for u in seen] == [ValueError]
    finally:
        sys.unraisablehook = previous
    assert sys.unraisablehook is previous
