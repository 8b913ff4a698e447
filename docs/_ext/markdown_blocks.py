"""The fenced code blocks of a Markdown page (no Sphinx needed): what the example runner runs
at build time (:mod:`run_examples`) and what the test suite type-checks
(``tests/test_typing.py``)."""

import re

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<info>[^\n`]*)$")


def blocks(text):
    """``(line, language, code)`` of every fenced block of Markdown ``text`` (1-based line)."""
    found = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, info, indent = match["fence"], match["info"].strip(), len(match["indent"])
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        language = info.split()[0] if info else ""
        if language.startswith("{") and language.endswith("}"):  # MyST directive: {code-block} bash
            parts = info.split()
            language = parts[1] if parts[0] == "{code-block}" and len(parts) > 1 else ""
            body = [line for line in body if not line.startswith(":")]
        found.append((start + 1, language, "\n".join(body) + "\n"))
        i += 1
    return found
