"""The ``convert`` and ``info`` commands as users run them."""

import os
import subprocess
import sys
from pathlib import Path

from hpcswarm.__main__ import main

REPO = Path(__file__).resolve().parents[1]
GOOD = Path(__file__).parent / "data" / "good.csv"


def test_convert_then_info(tmp_path, capsys):
    output = tmp_path / "good.h5"
    assert main(["convert", str(GOOD), str(output), "--dtype", "float32"]) == 0
    out = capsys.readouterr().out
    assert "4 samples x 3 genes, float32" in out and "2 classes: A 2, B 2" in out
    assert main(["info", str(output)]) == 0
    out = capsys.readouterr().out
    assert "shape: 4 samples x 3 genes, float32" in out
    assert "classes (2): A 2, B 2" in out
    assert "genes: g1, g2, g3" in out and "samples: s1, s2, s3, s4" in out
    assert "memory-mapped: yes" in out
    assert f"provenance: source = {GOOD}" in out


def test_info_on_an_input_file_and_bad_file(tmp_path, capsys):
    assert main(["info", str(GOOD)]) == 0
    assert "memory-mapped: no (converted in memory" in capsys.readouterr().out
    assert main(["info", str(tmp_path / "nothing.h5")]) == 2
    assert "nothing.h5: no such file" in capsys.readouterr().err


def test_info_builtin(capsys):
    assert main(["info", "builtin:srbct"]) == 0
    out = capsys.readouterr().out
    assert "shape: 83 samples x 2308 genes, float64" in out
    assert "classes (4): BL 11, EWS 29, NB 18, RMS 25" in out
    assert "provenance: source = SRBCT.arff" in out


def test_convert_error_in_a_subprocess(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    bad = REPO / "tests" / "data" / "malformed" / "ragged.csv"
    done = subprocess.run([sys.executable, "-m", "hpcswarm", "convert", str(bad), str(tmp_path / "o.h5")],
                          capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 2
    expected = f"hpcswarm: error: {bad}: line 3: 4 fields, expected 5 like the header (ragged row)"
    assert done.stderr.strip() == expected
    assert list(tmp_path.iterdir()) == []


def test_info_refuses_a_recorded_count_that_is_no_count(tmp_path, capsys):
    """A count ``convert`` recorded of what it left out is a stored figure, checked on read."""
    import h5py

    from cli_checks import assert_one_error, run_cli

    output = tmp_path / "good.h5"
    assert main(["convert", str(GOOD), str(output)]) == 0
    for value in (-3, 2.5):
        with h5py.File(output, "r+") as f:
            f.attrs["dropped_constant_genes"] = value
        capsys.readouterr()
        status, out, err = run_cli(capsys, "info", output)
        assert_one_error(status, err, f"{output}: a damaged dataset: provenance "
                         f"'dropped_constant_genes' = {value!r} is no count")
        assert out == ""
