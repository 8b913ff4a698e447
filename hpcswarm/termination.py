"""SIGTERM outside a job's rounds: the command unwinds like Ctrl-C, and no output appears.

``convert``, ``report``, a single search and a job's start-up have no rounds to checkpoint:
there SIGTERM (what ``scancel`` and a batch system's time limit send) raises
:class:`Terminated` in the main thread (:func:`terminate_like_interrupt`), which unwinds
the command as KeyboardInterrupt does, and every file being written under a temporary name
is removed on the way out (:mod:`hpcswarm.store.atomic`). A job's rounds install their own
handler (:class:`hpcswarm.run.interrupt.StopRequest`), which checkpoints instead.

Python runs a signal handler between two bytecodes of the main thread, wherever it is. When
that is inside a finaliser or a weak-reference callback (run by the garbage collector at any
allocation, or by h5py closing an object), an exception raised there cannot propagate:
Python only reports it through :func:`sys.unraisablehook` and goes on. So the handler also
records the signal, and the one place where an output becomes visible, the rename of a
complete temporary file, calls :func:`raise_if_terminated` first: a signal whose exception
was swallowed still stops the command before any output appears. Within the block, a
swallowed :class:`Terminated` is not printed (it is raised again there); any other
unraisable exception is reported as before.
"""

import signal
import sys
import threading
from contextlib import contextmanager


class Terminated(BaseException):
    """SIGTERM received outside a job's rounds: unwinds the command like KeyboardInterrupt
    (not an ``Exception``, so that no ``except Exception`` swallows it)."""


_received = None
"""The name of the stop signal received within :func:`terminate_like_interrupt`, or None."""


def _raise_terminated(number, frame):
    global _received
    _received = signal.Signals(number).name
    raise Terminated(_received)


def raise_if_terminated():
    """Raise :class:`Terminated` if SIGTERM came within :func:`terminate_like_interrupt`,
    even where Python swallowed the exception its handler raised; otherwise nothing."""
    if _received is not None:
        raise Terminated(_received)


def _quiet_when_terminated(previous):
    """An unraisable-exception hook that drops :class:`Terminated` (the signal is recorded
    and raised again by :func:`raise_if_terminated`) and passes anything else to
    ``previous``."""
    def hook(unraisable):
        if not isinstance(unraisable.exc_value, Terminated):
            previous(unraisable)
    return hook


@contextmanager
def terminate_like_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread and is
    recorded for :func:`raise_if_terminated`; at its end the previous handler and hook are
    put back and the record cleared. Elsewhere than in the main thread, nothing changes."""
    global _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_when_terminated(previous_hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        sys.unraisablehook = previous_hook
        _received = None
