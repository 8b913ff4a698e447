"""Run every example of the README and the docs when the docs are built.

At ``builder-inited`` (before any page is read) every fenced block of ``README.md`` and of the
Markdown pages of ``docs/`` whose language is ``bash``, ``console`` or ``python`` is run, in the
order written, in one working folder per page: ``docs/_generated/examples/<page>/`` (emptied
first), which holds links to the repository's ``jobs``, ``tests`` and ``slurm`` folders so that
the commands read as they would from the repository root. ``python`` and ``hpcswarm`` are the
building interpreter's and the repository's own (``PYTHONPATH``). ``bash`` blocks run as one
``bash -eu -o pipefail`` script each; ``console`` blocks run their ``$ `` lines; ``python``
blocks run as one script each. A non-zero exit fails the build with the page, the line of the
block, the command and the end of its output.

Blocks meant to be read but not run here (installing, submitting to SLURM, the two ``make``
commands that build a virtual environment) are written as ``shell``: they are checked for
syntax (``bash -n``) only. Files the examples make (the quick start's plots) stay in the
page's folder, and pages show them from there: the figures come from the commands shown.

A page whose blocks, and the files they can read (the package, ``jobs/``, ``slurm/``,
``tests/data/``, this file), are unchanged since its last successful run is not run again:
its folder holds the fingerprint of that run (``.examples-ok``).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

from markdown_blocks import blocks

logger = logging.getLogger(__name__)

RUN = ("bash", "console", "python")
CHECK = ("shell",)
LINKED = ("jobs", "tests", "slurm")
TIMEOUT = 600
INPUTS = ("hpcswarm/**/*.py", "hpcswarm/datasets/*.h5", "jobs/*", "slurm/*", "tests/data/**/*",
          "docs/_ext/run_examples.py", "docs/_ext/markdown_blocks.py")
STAMP = ".examples-ok"


def console_commands(code):
    """The commands of a ``console`` block: its ``$ `` lines, with their ``\\`` continuations
    (shown with or without a ``> `` prompt); the other lines are output."""
    commands, current = [], None
    for line in code.splitlines():
        if current is not None:
            current.append(line[2:] if line.startswith("> ") else line)  # the PS2 prompt
            if not line.endswith("\\"):
                commands.append("\n".join(current))
                current = None
        elif line.startswith("$ "):
            current = [line[2:]]
            if not line.endswith("\\"):
                commands.append(line[2:])
                current = None
    return "\n".join(commands) + "\n"


def environment(repo):
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(repo) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               MKL_NUM_THREADS="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    return env


def inputs_digest(repo):
    """SHA-256 over the files the examples can read (:data:`INPUTS`), names and contents."""
    digest = hashlib.sha256()
    for pattern in INPUTS:
        for path in sorted(repo.glob(pattern)):
            if path.is_file():
                digest.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_page(source, workdir, repo, env, label, inputs):
    """Run the blocks of ``source`` in ``workdir`` unless its fingerprint is unchanged;
    the number of blocks run. ExtensionError on the first failure."""
    found = blocks(source.read_text(encoding="utf-8"))
    fingerprint = hashlib.sha256(repr((found, inputs)).encode()).hexdigest()
    stamp = workdir / STAMP
    if stamp.is_file() and stamp.read_text() == fingerprint:
        logger.info(f"examples of {label}: unchanged since their last run")
        return 0
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    for name in LINKED:
        (workdir / name).symlink_to(repo / name)
    ran = 0
    for line, language, code in found:
        if language in CHECK:
            command = ["bash", "-n", "-c", code]
        elif language == "python":
            script = workdir / f".example-{line}.py"
            script.write_text(code, encoding="utf-8")
            command = [sys.executable, script.name]
        elif language in ("bash", "console"):
            script = code if language == "bash" else console_commands(code)
            command = ["bash", "-eu", "-o", "pipefail", "-c", script]
        else:
            continue
        started = time.monotonic()
        try:
            done = subprocess.run(command, cwd=workdir, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ExtensionError(f"{label}:{line}: {language} example ran past {TIMEOUT} s") from None
        if done.returncode != 0:
            tail = "\n".join(done.stdout.splitlines()[-15:])
            raise ExtensionError(
                f"{label}:{line}: {language} example failed with exit status "
                f"{done.returncode}:\n{code.rstrip()}\n--- output (end) ---\n{tail}")
        if language not in CHECK:
            ran += 1
            logger.info(f"example {label}:{line} ({language}) ok in "
                        f"{time.monotonic() - started:.1f} s")
    stamp.write_text(fingerprint)
    return ran


def run_all(app):
    docs = Path(app.srcdir)
    repo = docs.parent
    out = docs / "_generated" / "examples"
    env = environment(repo)
    inputs = inputs_digest(repo)
    pages = [(repo / "README.md", "README")] + [
        (path, str(path.relative_to(docs).with_suffix("")))
        for path in sorted(docs.rglob("*.md"))
        if not any(part.startswith("_") for part in path.relative_to(docs).parts)]
    total, started = 0, time.monotonic()
    for source, label in pages:
        total += run_page(source, out / label, repo, env, source.relative_to(repo), inputs)
    logger.info(f"ran {total} examples of {len(pages)} pages in {time.monotonic() - started:.1f} s")


def setup(app):
    app.connect("builder-inited", run_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
