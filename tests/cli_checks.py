"""Helpers of the command-line fault tests: run the CLI, check its one error line, and prove
that a folder was left exactly as it was (every file, hidden ones included)."""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from hpcswarm.__main__ import main

REPO = Path(__file__).resolve().parents[1]
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def run_cli(capsys, *argv):
    """``python -m hpcswarm ARGV`` in this process: (status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_subprocess(*argv, ranks=None, cwd=None, stdin=None, timeout=300):
    """``python -m hpcswarm ARGV`` in a new process, under ``mpiexec -n ranks`` when given."""
    command = [sys.executable, "-m", "hpcswarm", *map(str, argv)]
    if ranks is not None:
        command = [str(MPIEXEC), "-n", str(ranks), *command]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, stdin=stdin,
                          timeout=timeout, env=env)


def folder_state(folder):
    """Every entry under ``folder``: relative path -> (kind, size, mtime_ns, SHA-256)."""
    state = {}
    for path in sorted(Path(folder).rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            state[str(path.relative_to(folder))] = ("link", os.readlink(path))
        elif path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[str(path.relative_to(folder))] = ("file", info.st_size, info.st_mtime_ns,
                                                    digest)
        else:
            state[str(path.relative_to(folder))] = ("dir",)
    return state


def assert_one_error(status, err, *fragments):
    """Exit status 2 and exactly one line on stderr, ``hpcswarm: error: ...`` holding every
    fragment; returns that line."""
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("hpcswarm: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert str(fragment) in lines[0], (fragment, lines[0])
    return lines[0]
