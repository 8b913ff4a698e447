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


class Kernel:
    """A function compiled by ``numba.njit`` at its first call.

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
            self._compiled = numba.njit(**self.options)(function)
        return self._compiled

    def __call__(self, *args):
        return self.compiled()(*args)
