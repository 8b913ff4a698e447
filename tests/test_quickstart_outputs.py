"""The README's quick start writes only into ``quickstart/``, a folder git ignores, and its
job shows its progress (with the ETA)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Arguments that name what a quick-start command writes.
OUTPUTS = [re.compile(pattern) for pattern in (
    r"--set output=(\S+)", r"hpcswarm convert \S+ (\S+)", r"--genes (\S+) --plots",
    r"--plots (\S+)", r"--plot (\S+)", r"plot_expression\(\"([^\"]+)\"")]


def quickstart_blocks():
    text = (REPO / "README.md").read_text()
    text = text[text.index("<!-- quickstart-start -->"):text.index("<!-- quickstart-end -->")]
    return [block.replace("\\\n", " ") for block in
            re.findall(r"```(?:bash|python)\n(.*?)```", text, flags=re.S)]


def test_every_output_of_the_quick_start_is_in_the_ignored_folder():
    written = [match for block in quickstart_blocks() for pattern in OUTPUTS
               for match in pattern.findall(block)]
    assert len(written) >= 6
    assert all(path.startswith("quickstart/") or path == "quickstart" for path in written), \
        written
    ignored = (REPO / ".gitignore").read_text().split()
    assert "quickstart/" in ignored


def test_the_quick_start_job_shows_its_progress():
    (run,) = [block for block in quickstart_blocks() if "hpcswarm run " in block]
    assert "--quiet" not in run


def test_every_step_that_writes_replaces_its_outputs_so_the_quick_start_reruns():
    writing = [line for block in quickstart_blocks() for line in block.splitlines()
               if re.search(r"hpcswarm (convert|run|report|evaluate) |plot_expression\(", line)]
    assert len(writing) == 5, writing
    assert all("--overwrite" in line or "overwrite=True" in line for line in writing), writing


def test_the_conversion_step_runs_twice(tmp_path):
    from hpcswarm import cli

    (convert,) = [line for block in quickstart_blocks() for line in block.splitlines()
                  if line.startswith("hpcswarm convert ")]
    args = convert.split()[1:]
    args = [str(REPO / arg) if arg.startswith("tests/") else
            str(tmp_path / arg) if arg.startswith("quickstart/") else arg for arg in args]
    (tmp_path / "quickstart").mkdir()
    assert cli.main(args) == 0 and cli.main(args) == 0
