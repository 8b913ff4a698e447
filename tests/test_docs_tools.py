"""The documentation's own tools (``docs/_ext``): the example runner finds and runs every block
and fails on a failing one; the reference tables list every declared key and option."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[docs]') is not installed")

from sphinx.errors import ExtensionError  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "_ext"))

import hpcswarm_reference  # noqa: E402
import run_examples  # noqa: E402

PAGE = """# A page

```bash
echo one > one.txt
```

```toml
key = 1
```

```console
$ echo two \\
>   > two.txt
two
```

  ```shell
  sbatch slurm/run_lsrg.sh
  ```

```python
print(open("one.txt").read().strip(), open("two.txt").read().strip())
```
"""


def test_blocks_are_found_with_their_language_and_line():
    found = run_examples.blocks(PAGE)
    assert [(line, language) for line, language, _ in found] == [
        (3, "bash"), (7, "toml"), (11, "console"), (17, "shell"), (21, "python")]
    assert found[3][2] == "sbatch slurm/run_lsrg.sh\n"  # the list indentation removed


def test_console_blocks_run_their_prompt_lines_only():
    assert run_examples.console_commands("$ a \\\n  b\noutput\n$ c\n") == "a \\\n  b\nc\n"


def _page(tmp_path, text):
    source = tmp_path / "page.md"
    source.write_text(text)
    return source


def test_a_page_runs_in_its_folder_and_is_not_run_again_unchanged(tmp_path):
    env = run_examples.environment(REPO)
    source = _page(tmp_path, PAGE)
    workdir = tmp_path / "out"
    assert run_examples.run_page(source, workdir, REPO, env, "page.md", "inputs") == 3
    assert (workdir / "one.txt").read_text() == "one\n"
    assert (workdir / "jobs").resolve() == REPO / "jobs"
    assert run_examples.run_page(source, workdir, REPO, env, "page.md", "inputs") == 0
    assert run_examples.run_page(source, workdir, REPO, env, "page.md", "changed") == 3


def test_a_failing_example_fails_with_the_page_line_and_output(tmp_path):
    env = run_examples.environment(REPO)
    source = _page(tmp_path, "text\n\n```bash\necho before\nhpcswarm info missing.h5\n```\n")
    with pytest.raises(ExtensionError, match=r"page.md:3: bash example failed with exit "
                       r"status 2(.|\n)*before(.|\n)*missing.h5: no such file"):
        run_examples.run_page(source, tmp_path / "out", REPO, env, "page.md", "inputs")
    assert not (tmp_path / "out" / run_examples.STAMP).exists()


def test_a_shell_block_is_checked_for_syntax(tmp_path):
    env = run_examples.environment(REPO)
    source = _page(tmp_path, "```shell\nif then fi (\n```\n")
    with pytest.raises(ExtensionError, match="shell example failed"):
        run_examples.run_page(source, tmp_path / "out", REPO, env, "page.md", "inputs")


def test_the_reference_tables_list_every_key_and_option():
    from hpcswarm.cli import build_parser
    from hpcswarm.data.formats import CONVERT_PARAMS
    from hpcswarm.run.jobfile import SCHEMA
    from hpcswarm.selection.methods import METHODS
    from hpcswarm.selection.spec import SPEC_PARAMS

    for params in (SCHEMA, SPEC_PARAMS, CONVERT_PARAMS, METHODS["pso-lsrg"].PARAMS):
        text = hpcswarm_reference.params_table(params).astext()
        assert all(param.name in text for param in params)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, subparser in sub.choices.items():
        text = "\n".join(cell[0] for row in hpcswarm_reference._option_rows(subparser)
                         for cell in row)
        flags = [flag for action in subparser._actions for flag in action.option_strings
                 if flag not in ("-h", "--help")]
        assert all(flag in text for flag in flags), name


def test_a_bound_is_written_as_in_a_job_file():
    from hpcswarm.params import Param

    assert hpcswarm_reference._number(2**31 - 1) == "2147483647"
    assert hpcswarm_reference._number(0.5) == "0.5" and hpcswarm_reference._number(1e-6) == "1e-06"
    assert hpcswarm_reference._allowed(Param("n", "int", 1, "n", low=1, high=2**31 - 1)) == \
        "1 to 2147483647"
    assert hpcswarm_reference._allowed(Param("a", "float", 0.5, "a", low=0.0)) == ">= 0"


def test_grouped_docstring_entries_are_found():
    import hpcswarm_docstrings

    lines = ["Summary, with a comma.", "", "Parameters", "----------", "x : int",
             "    Its own text, b, c : here in a description.", "a, b : float", "    Shared.",
             "", "Attributes", "----------", "data, labels", "    Shared too.", "",
             "Returns", "-------", "list of (ndarray, ndarray)", "    Pairs.", "",
             "Raises", "------", "ValueError, TypeError", "    Not an entry of names."]
    assert hpcswarm_docstrings.grouped_entries(lines) == [("a", "b"), ("data", "labels")]


API_PAGE = '''# API

```{eval-rst}
.. autofunction:: docpage_module.grouped

.. autoclass:: docpage_module.Record
```

```{hpcswarm-params} hpcswarm.run.jobfile.SCHEMA
```
'''

API_MODULE = '''from dataclasses import dataclass


def grouped(a: int, b: int) -> int:
    """Add.

    Parameters
    ----------
    a, b : int
        Two numbers.
    """
    return a + b


@dataclass
class Record:
    """A record.

    Attributes
    ----------
    size : int
        How many.
    """

    size: int
'''


def test_the_api_and_reference_pages_render_one_text_per_name_and_options_as_written(tmp_path):
    """A small build with the guide's configuration: a grouped entry is a warning, a
    dataclass's fields are listed once, ``--help`` stays two hyphens."""
    from sphinx.application import Sphinx

    source = tmp_path / "src"
    source.mkdir()
    (source / "docpage_module.py").write_text(API_MODULE)
    (source / "index.md").write_text(API_PAGE)
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(source)!r})\n"
        f"_real = {str(REPO / 'docs' / 'conf.py')!r}\n"
        "_ns = {'__file__': _real, '__name__': 'conf'}\n"
        "exec(compile(open(_real).read(), _real, 'exec'), _ns)\n"
        "globals().update({k: v for k, v in _ns.items() if not k.startswith('__')})\n"
        "extensions = [e for e in extensions if e != 'run_examples']\n")
    warnings = tmp_path / "warnings.txt"
    with open(warnings, "w") as stream:
        Sphinx(str(source), str(source), str(tmp_path / "html"), str(tmp_path / "doctrees"),
               "html", status=None, warning=stream, freshenv=True).build()
    assert "docpage_module.grouped: a, b share one entry" in warnings.read_text()
    html = (tmp_path / "html" / "index.html").read_text()
    record = html[html.index('id="docpage_module.Record"'):]
    assert record.count("<strong>size</strong>") == 1
    assert "hpcswarm run --help" in html and "&#8211;help" not in html and "–help" not in html
    assert "2147483647" in html and "2.14748e+09" not in html


def test_the_api_page_reads_as_text_and_its_lists_are_autodoc():
    import hpcswarm_api

    text = (REPO / "docs" / "api.md").read_text()
    assert "eval-rst" not in text and ".. auto" not in text  # no reStructuredText on GitHub
    assert text.count("```{hpcswarm-api}") >= 5
    assert hpcswarm_api.autodoc_lines("hpcswarm.select") == [
        ".. autofunction:: hpcswarm.select", ""]
    assert hpcswarm_api.autodoc_lines("hpcswarm.api.Selection: to_frame") == [
        ".. autoclass:: hpcswarm.api.Selection", "   :members: to_frame", ""]
    assert hpcswarm_api.autodoc_lines("hpcswarm.data.Dataset")[1] == "   :no-members:"
    assert hpcswarm_api.autodoc_lines("hpcswarm.comm")[0] == ".. automodule:: hpcswarm.comm"
    assert hpcswarm_api.autodoc_lines("hpcswarm.selector.SETTINGS")[0].startswith(
        ".. autodata::")
