"""Errors that reach the user as one clear line and exit status 2."""


class HpcswarmError(Exception):
    """Base of every error caused by the user's input (files, options, job keys)."""


class DataError(HpcswarmError):
    """An input or output data file is missing, malformed or not writable."""


class ParameterError(HpcswarmError, ValueError):
    """A command-line option, algorithm parameter or job key is invalid."""


class LaunchError(HpcswarmError):
    """The launcher and the MPI library disagree on the number of processes of a job."""


class SettingNote(UserWarning):
    """A setting adjusted to fit the data or another setting, said in one line (the command
    line prints it as ``hpcswarm: warning: ...``)."""
