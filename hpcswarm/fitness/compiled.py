"""Kernels compiled by numba at their first call, so that importing the engine skips numba.

Importing numba (and the scipy it checks for) takes seconds per process, paid by every rank
of a job and by commands that never evaluate a subset (``--help``, reading results). A
:class:`Kernel` holds the Python source of a kernel and compiles it with ``numba.njit``
(``cache=True, nogil=True``, as before) when it is first called; the compiled code is the
same, so are the results.
"""

import importlib.util
import types

AVAILABLE = importlib.util.find_spec("numba") is not None
"""Whether numba is installed (found without importing it)."""

BREAKEVEN_CELLS = 3e8
"""Row-by-sample distances one scoring must decide on a rank before the compiled scan gains
more than numba costs a fresh process. Measured with ``benchmarks/bench_startup.py
--evaluate 500`` (10,000 x 20,000, 500 genes, one evaluation; the 2-core VM, idle): the
compiled path took 0.48 s longer than the numpy path on one rank (10^8 distances) and 0.62 s
longer on each of two shards (5 x 10^7), its gain about 2.8 ns per distance against a
one-off 0.76 s (importing numba, its target's set-up and loading the cached kernels), even
at about 2.7 x 10^8 distances (16,000 samples on one rank)."""


def worth_compiling(cells):
    """Whether a process that scores once should decide its ``cells`` row-by-sample
    distances by the compiled scan (:data:`BREAKEVEN_CELLS`); a search, which scores
    thousands of subsets, always does. Either path gives the same Scores."""
    return AVAILABLE and cells >= BREAKEVEN_CELLS


class Kernel:
    """A function compiled by ``numba.njit`` at its first call.

    The compiled code is cached on disk where numba finds a folder it may write (beside the
    package, else in the user's cache folder); where it finds none (a read-only install and
    home), the kernel is compiled without a cache, the same code, at every first call.

    Parameters
    ----------
    function : callable
        The Python source of the kernel.
    calls : dict of str to Kernel, optional
        Other kernels ``function`` calls, by the global name it calls them by; they are
        compiled first and ``function`` sees them compiled.
    **options
        More ``numba.njit`` options (e.g. ``inline="always"``).
    """

    def __init__(self, function, calls=None, **options):
        self.function = function
        self.calls = dict(calls or {})
        self.options = {"cache": True, "nogil": True, **options}
        self._compiled = None
        self.__doc__ = function.__doc__

    def compiled(self):
        """The numba dispatcher (numba is imported here, once)."""
        if self._compiled is None:
            import numba

            function = self.function
            if self.calls:
                namespace = dict(function.__globals__)
                namespace.update({name: kernel.compiled() for name, kernel in self.calls.items()})
                function = types.FunctionType(function.__code__, namespace, function.__name__,
                                              function.__defaults__, function.__closure__)
                function.__qualname__ = self.function.__qualname__
            try:
                self._compiled = numba.njit(**self.options)(function)
            except RuntimeError as exc:  # no folder numba may keep its cache in
                if "cannot cache" not in str(exc):
                    raise
                self._compiled = numba.njit(**{**self.options, "cache": False})(function)
        return self._compiled

    def __call__(self, *args):
        return self.compiled()(*args)
