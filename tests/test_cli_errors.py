"""The command line itself: a mistaken option, an odd text encoding or a closed pipe each end
with one ``hpcswarm: error:`` line naming the option or file, exit status 2, and nothing
written in the folder."""

import json
import os
import subprocess
import sys

import pytest

from cli_checks import REPO, assert_one_error, folder_state, run_cli

from hpcswarm import cli

JOB = REPO / "jobs" / "cbpso-wine-biased.toml"


def _subparsers(parser):
    return parser._subparsers._group_actions[0].choices


def test_a_command_builds_its_own_parser_as_the_full_parser_does():
    full = cli.build_parser()
    for name, subparser in _subparsers(full).items():
        alone = cli.build_parser(name)
        assert alone.format_help() == full.format_help()
        built = _subparsers(alone)[name]
        assert built.format_help() == subparser.format_help()
        assert built.get_default("run_command") is subparser.get_default("run_command")
        assert cli._command_named(["--help", name, "--all"]) == name
    # the first word that is no option names the command: no top-level option takes a value
    assert all(action.nargs == 0 for action in full._actions if action.option_strings)


@pytest.mark.parametrize("argv, fragments", [
    (["evaluate", "builtin:srbct", "--all", "--cv", "1"], ["argument --cv", "got 1"]),
    (["evaluate", "builtin:srbct", "--all", "--cv", "often"], ["argument --cv", "'often'"]),
    (["evaluate", "builtin:srbct", "--all", "--seed", "-1"], ["argument --seed", "got -1"]),
    (["evaluate", "builtin:srbct", "--all", "--k", "0"], ["argument --k", ">= 1"]),
    (["evaluate", "builtin:srbct"], ["--genes", "--all", "required"]),
    (["run", "--data", "builtin:srbct", "--algorithm", "pso", "--seed", "-1"],
     ["argument --seed", "got -1"]),
    (["run", "--data", "builtin:srbct", "--algorithm", "pso", "--threads", "0"],
     ["argument --threads", "got 0"]),
    (["info", "builtin:srbct", "--names", "many"], ["argument --names", "'many'"]),
    (["report", "x.h5", "--top", "0"], ["argument --top"]),
    (["convert", "in.csv", "out.h5", "--dtype", "int8"], ["argument --dtype", "'int8'"]),
    (["convert", "in.csv"], ["OUTPUT.h5", "required"]),
    (["evaluate", "builtin:srbct", "--all", "--fast"], ["unrecognized arguments: --fast"]),
    (["frobnicate"], ["argument COMMAND", "'frobnicate'"]),
    # an empty path: never ignored (--output=) nor read as the current folder (--csv=)
    (["run", "--data", "builtin:srbct", "--algorithm", "sfs", "--output="],
     ["argument --output", "expected a file or folder name, got ''"]),
    (["run", ""], ["argument JOB.toml", "got ''"]),
    (["convert", "in.csv", ""], ["argument OUTPUT.h5", "got ''"]),
    (["report", "x.h5", "--csv="], ["argument --csv", "got ''"]),
    (["report", "x.h5", "--plots="], ["argument --plots", "got ''"]),
    (["report", "x.h5", "--markdown="], ["argument --markdown", "got ''"]),
    (["evaluate", "builtin:srbct", "--all", "--plot="], ["argument --plot", "got ''"]),
    (["info", ""], ["argument DATA", "got ''"]),
    # a name no file system holds: one line, never an OSError from deep inside pathlib
    (["report", "x.h5", "--csv", "d" * 300], ["argument --csv", "a name in the path is 300 "
                                              "bytes, over the limit of"]),
    (["evaluate", "builtin:srbct", "--all", "--plot", "ok/" + "d" * 300],
     ["argument --plot", "300 bytes"]),
    (["evaluate", "builtin:srbct", "--genes", "g" * 300], ["argument --genes", "300 bytes"]),
    (["report", "r" * 300 + ".h5"], ["argument RESULTS.h5", "303 bytes"]),
    (["report", "x.h5", "--csv", ""], ["argument --csv: expected a file or folder name, got ''"]),
    (["evaluate", "builtin:srbct", "--all", "--plot", " "], ["argument --plot", "got ' '"]),
    (["run", "--data", "", "--algorithm", "pso"], ["argument --data: expected a file"]),
    (["evaluate", "builtin:srbct", "--all", "--k", "５"], ["argument --k", "got '５'"]),
    (["evaluate", "builtin:srbct", "--all", "--cv", "٣"], ["argument --cv", "got '٣'"]),
    (["run", "--data", "builtin:srbct", "--algorithm", "pso", "--max-genes", "١٠"],
     ["argument --max-genes", "expects an integer, got '١٠'"]),
    (["report", "x.h5", "--alpha", "０.1"], ["argument --alpha: expected a number, got '０.1'"]),
    (["report", "x.h5", "--sizes", "5,１０"], ["argument --sizes", "got '5,１０'"]),
    (["run", "--data", "builtin:srbct", "--algorithm", "pso", "--memory-limit", "８"],
     ["argument --memory-limit: expected a number"]),
])
def test_an_option_mistake_is_one_line(tmp_path, capsys, monkeypatch, argv, fragments):
    monkeypatch.chdir(tmp_path)
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, *argv)
    line = assert_one_error(status, err, *fragments)
    assert "usage:" not in err and out == ""
    assert "--help" in line
    assert folder_state(tmp_path) == before


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_a_genes_file_in_any_unicode_encoding(tmp_path, capsys, encoding):
    text = "# SRBCT genes\na1_21652\na5_22293\n"
    (tmp_path / "plain.txt").write_text(text, encoding="utf-8")
    (tmp_path / "wide.txt").write_text(text, encoding=encoding)
    status, expected, err = run_cli(capsys, "evaluate", "builtin:srbct", "--genes",
                                    tmp_path / "plain.txt")
    assert status == 0, err
    status, out, err = run_cli(capsys, "evaluate", "builtin:srbct", "--genes",
                               tmp_path / "wide.txt")
    assert status == 0, err
    assert json.loads(out) == json.loads(expected)
    assert json.loads(out)["genes_used"] == 2


@pytest.mark.parametrize("content, fragments", [
    (b"\x89PNG\x00\x00\x00\rIHDR\x00\x10", ["genes.txt", "binary content"]),
    (b"\xff\xfeG\x00\x00\xd8", ["genes.txt", "not valid UTF-16"]),
    ("a1_21652\nnot_a_gene\n".encode("utf-16"), ["genes.txt", "line 2: 'not_a_gene' names no gene"]),
])
def test_a_bad_genes_file_is_one_line_naming_it(tmp_path, capsys, content, fragments):
    (tmp_path / "genes.txt").write_bytes(content)
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, "evaluate", "builtin:srbct", "--genes",
                               tmp_path / "genes.txt")
    assert_one_error(status, err, *fragments)
    assert out == ""
    assert folder_state(tmp_path) == before


@pytest.mark.parametrize("argv", [["info", "builtin:srbct", "--names", "50"],
                                  ["evaluate", "builtin:srbct", "--all"]])
def test_a_closed_pipe_is_one_line(tmp_path, argv):
    """``hpcswarm info d.h5 | head -1``: the reader is gone before the output ends."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line is written
    try:
        done = subprocess.run([sys.executable, "-m", "hpcswarm", *argv], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        os.close(write_end)
    assert_one_error(done.returncode, done.stderr, "standard output", "broken pipe")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("param", ["n_iterations=１０", "w=٠.5"])
def test_a_number_in_other_digits_is_refused(tmp_path, capsys, param):
    """Python's int and float read full-width digits and other scripts'; the options don't."""
    _refused(tmp_path, capsys, ["run", "--data", "builtin:srbct", "--algorithm", "pso",
                                "--param", param, "--output", tmp_path / "r.json"],
             f"expects {'an integer' if param[0] == 'n' else 'a number'}, got "
             f"{param.partition('=')[2]!r}")


def test_a_job_key_mistake_names_the_key(tmp_path, capsys):
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "run", JOB, "--set", "seed=-1",
                             "--set", f"output={tmp_path / 'out.h5'}")
    assert_one_error(status, err, "seed")
    assert folder_state(tmp_path) == before


# ------------------------------------------------------------------ refused before any file
TINY = ["runs=1", "params.n_iterations=2", "params.n_particles=4"]


def _job(tmp_path, *sets, output="out.h5"):
    argv = ["run", JOB, "--set", f"output={tmp_path / output}"]
    for item in TINY + list(sets):
        argv += ["--set", item]
    return argv


def _refused(tmp_path, capsys, argv, *fragments):
    before = folder_state(tmp_path)
    status, out, err = run_cli(capsys, *argv)
    line = assert_one_error(status, err, *fragments)
    assert folder_state(tmp_path) == before
    return line


@pytest.mark.parametrize("length, what", [(252, "job key 'output'"),
                                          (215, "job key 'checkpoint'")])
def test_an_output_whose_names_are_too_long_is_one_line(tmp_path, capsys, length, what):
    """The results file's name fits, but the checkpoint's derived from it (or the temporary
    name any of them is written under) exceeds the file system's 255 bytes per name."""
    name = "a" * (length - len(".h5")) + ".h5"
    line = _refused(tmp_path, capsys, _job(tmp_path, output=name), what, "bytes",
                    "over the limit of", "give the output a shorter name")
    assert ".checkpoint.h5" in line or what == "job key 'output'"


def test_a_convert_output_whose_name_is_too_long_is_one_line(tmp_path, capsys):
    (tmp_path / "in.csv").write_text("sample,g1,g2,label\ns1,1,2,a\ns2,3,4,b\ns3,5,7,a\n"
                                     "s4,7,8,b\n")
    _refused(tmp_path, capsys, ["convert", tmp_path / "in.csv", tmp_path / ("b" * 240 + ".h5"),
                                "--label", "label"], "OUTPUT", "over the limit of")


def test_a_gpu_job_without_cupy_is_refused_before_any_file(tmp_path, capsys, monkeypatch):
    from hpcswarm.fitness.gpu import ARRAY_MODULE_VARIABLE

    monkeypatch.delenv(ARRAY_MODULE_VARIABLE, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", None)  # "import cupy" fails as if not installed
    _refused(tmp_path, capsys, _job(tmp_path, "device=gpu"), "device 'gpu' needs CuPy")


def test_subsample_halves_too_small_for_the_folds_say_so(tmp_path, capsys):
    """Wine's 178 samples allow 100-fold validation; its subsample halves (89) do not."""
    _refused(tmp_path, capsys,
             _job(tmp_path, "fitness.cv=100", "refine=stability", "subsamples=2"),
             "job key 'refine' = 'stability': run 0 fold 0: subsample half 1 of 2 has",
             "of the 178 training samples", "too few for the searches' 100-fold",
             "half the training samples")


def test_a_search_out_of_memory_is_one_line_with_the_memory_advice(tmp_path, capsys,
                                                                     monkeypatch):
    from hpcswarm.selection import search

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(search, "run_search", exhausted)  # the search of the door's view
    _refused(tmp_path, capsys, ["run", "--data", "sklearn:wine", "--algorithm", "sfs",
                                "--output", tmp_path / "r.json"],
             "out of memory: the search ran out of memory with 178 samples x 13 genes",
             "GB per rank", "use more sample shards, fewer ranks per node")
