"""Every malformed input of ``tests/data/malformed`` through the real CLI: exit 2, one message
naming the file and the problem, and no output file left behind."""

from pathlib import Path

import numpy as np
import pytest

from hpcswarm.__main__ import main
from hpcswarm.data import open_dataset

from cli_checks import assert_one_error, folder_state

MALFORMED = Path(__file__).parent / "data" / "malformed"

# (input file, extra options, fragments the message must contain)
CASES = [
    ("ragged.csv", [], ["line 3", "4 fields, expected 5", "ragged"]),
    ("non_numeric.csv", [], ["non-numeric cell 'high'", "line 3", "'g2'"]),
    ("nan_values.csv", [], ["2 NaN or infinite values", "sample 's2'", "gene 'g2'", "--nan"]),
    ("label_count.tsv", ["--labels", str(MALFORMED / "label_count.labels.txt")], ["2 labels for 3 samples"]),
    ("single_class.arff", [], ["a single class", "'A'"]),
    ("duplicate_genes.csv", [], ["duplicate gene name", "'g1'"]),
    ("unknown_format.xyz", [], ["unknown format", "'.xyz'"]),
    ("sparse.arff", [], ["sparse ARFF", "line 6"]),
    ("undeclared_class.arff", [], ["line 7", "class 'C' is not one of the declared"]),
    ("no_class.arff", [], ["no nominal class attribute", "--label"]),
    ("gct_dims.gct", [], ["2 gene rows, line 2 says 3"]),
    ("corrupt.mat", [], ["cannot read as a MATLAB file"]),
    ("missing_y.mat", [], ["no variable 'Y'"]),
    ("ragged.arff", [], ["line 7", "2 values, expected 3", "ragged"]),
    ("missing_value.arff", [], ["1 NaN or infinite value", "sample 2", "gene 'g2'"]),
    ("non_numeric.gct", [], ["non-numeric cell 'x7'", "line 4", "sample 'S2'"]),
    ("empty_label.csv", [], ["without a label", "line 4, sample 's3'", "--drop-unlabelled"]),
    ("missing_class.arff", [], ["without a label", "line 8", "('?')"]),
    ("nan_label.mat", [], ["without a label", "Y(3)", "(nan)", "--drop-unlabelled"]),
    ("duplicate_nominal.arff", [], ["line 4", "declare 'A' twice"]),
    ("duplicate_samples.gct", [], ["duplicate sample name", "'S1'"]),
    ("trailing_separator.csv", [], ["line 3", "5 fields, expected 4", "ends with a separator"]),
    ("conflicting_labels.csv", ["--labels", str(MALFORMED / "conflicting_labels.labels.txt")],
     ["conflicting_labels.labels.txt: line 5", "sample 's2' labelled 'A', but 'B' on line 3"]),
    ("blank_gene_name.csv", [], ["gene 2 of 2 has an empty name", "give every gene a name"]),
    ("blank_sample_name.csv", [], ["sample 2 of 3 has an empty name"]),
    ("digit_grouping.csv", [], ["non-numeric cell '1_000'", "line 3", "'g1'"]),
    ("wide_digits.arff", [], ["non-numeric cell '２'", "line 7", "'g1'"]),
    # scipy's crash, or its error where a later scipy reads the file safely
    ("sparse_class.mat", [], ["cannot read as a MATLAB file"]),
]


def run_convert(capsys, *argv):
    status = main(["convert", *map(str, argv)])
    err = capsys.readouterr().err
    return status, err


@pytest.mark.parametrize("name, options, fragments", CASES, ids=[c[0] for c in CASES])
def test_malformed_input(tmp_path, capsys, name, options, fragments):
    output = tmp_path / "out.h5"
    inputs = folder_state(MALFORMED)
    status, err = run_convert(capsys, MALFORMED / name, output, *options)
    assert_one_error(status, err, name.split(".")[0], *fragments)
    assert list(tmp_path.iterdir()) == []
    assert folder_state(MALFORMED) == inputs


def test_missing_input(tmp_path, capsys):
    status, err = run_convert(capsys, tmp_path / "absent.csv", tmp_path / "out.h5")
    assert status == 2
    assert "absent.csv: no such file" in err
    assert list(tmp_path.iterdir()) == []


def test_folder_as_input(tmp_path, capsys):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    status, err = run_convert(capsys, folder, tmp_path / "out.h5")
    assert status == 2
    assert "folder.csv: not a regular file" in err
    assert not (tmp_path / "out.h5").exists()


def test_existing_output_is_kept(tmp_path, capsys):
    output = tmp_path / "out.h5"
    output.write_bytes(b"precious")
    status, err = run_convert(capsys, MALFORMED.parent / "good.csv", output)
    assert status == 2
    assert "out.h5: already exists" in err and "--overwrite" in err
    assert output.read_bytes() == b"precious"


def test_overwrite_replaces_output(tmp_path, capsys):
    output = tmp_path / "out.h5"
    output.write_bytes(b"old")
    status, _ = run_convert(capsys, MALFORMED.parent / "good.csv", output, "--overwrite")
    assert status == 0
    assert open_dataset(output).n_samples == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5"]


def test_output_in_missing_folder(tmp_path, capsys):
    status, err = run_convert(capsys, MALFORMED.parent / "good.csv", tmp_path / "no" / "out.h5")
    assert status == 2
    assert "out.h5" in err and "does not exist" in err


@pytest.mark.parametrize("policy, shape, dropped", [("drop-genes", (4, 1), "2 genes"),
                                                     ("drop-samples", (2, 3), "2 samples")])
def test_nan_policies(tmp_path, capsys, policy, shape, dropped):
    output = tmp_path / "out.h5"
    status = main(["convert", str(MALFORMED / "nan_values.csv"), str(output), "--nan", policy])
    out = capsys.readouterr().out
    assert status == 0
    assert f"dropped {dropped} with NaN/inf" in out
    ds = open_dataset(output)
    assert ds.X.shape == shape
    assert np.isfinite(ds.X).all()


def test_a_dataset_file_with_a_blank_name_is_refused_as_convert_refuses_it(tmp_path, capsys):
    """Loading an HDF5 file another tool wrote applies convert's name rule: no empty name."""
    from hpcswarm.data import Dataset, write_dataset

    write_dataset(Dataset(X=np.arange(8.0).reshape(4, 2), y=np.array([0, 1, 0, 1]),
                          class_names=["a", "b"], gene_names=["g1", " "], attrs={}),
                  tmp_path / "blank.h5")
    status = main(["info", str(tmp_path / "blank.h5")])
    assert_one_error(status, capsys.readouterr().err,
                     "blank.h5: gene 2 of 2 has an empty name (written ' ')")


@pytest.mark.parametrize("name, fragment", [("out.csv", " ('.csv' names csv input)"),
                                            ("out.tsv.gz", " ('.tsv' names tsv input)"),
                                            ("out.h5ad", " ('.h5ad' names h5ad input)"),
                                            ("out.dat", ""), ("out", "")])
def test_a_dataset_is_named_as_one(tmp_path, capsys, name, fragment):
    """A dataset named otherwise could not be opened by any command (out.csv would be read as
    CSV text, out.dat not at all)."""
    status, err = run_convert(capsys, MALFORMED.parent / "good.csv", tmp_path / name)
    assert_one_error(status, err, f"OUTPUT {tmp_path / name}: an hpcswarm dataset is an HDF5 "
                     "file named .h5 or .hdf5" + fragment)
    assert list(tmp_path.iterdir()) == []


def test_binary_content_past_the_first_line_is_refused_as_binary(tmp_path, capsys):
    """An HDF5 file renamed .csv (its first line holds no NUL byte) or a text file with a NUL
    on a later line: the file's first bytes decide, not its first line."""
    assert run_convert(capsys, MALFORMED.parent / "good.csv", tmp_path / "d.h5")[0] == 0
    (tmp_path / "d.csv").write_bytes((tmp_path / "d.h5").read_bytes())
    status = main(["info", str(tmp_path / "d.csv")])
    assert_one_error(status, capsys.readouterr().err,
                     "d.csv: an HDF5 file where text was expected")
    (tmp_path / "nul.csv").write_bytes(b"sample,class,g1\ns1,A,1\x00\ns2,B,2\n")
    status = main(["info", str(tmp_path / "nul.csv")])
    assert_one_error(status, capsys.readouterr().err,
                     "nul.csv: binary content where text was expected")


def test_a_bare_carriage_return_ends_a_line(tmp_path, capsys):
    """Excel's 'CSV (Macintosh)' ends lines with a bare \\r: read as the same table (UTF-16
    text always was); a stray \\r in a quoted line no longer reaches csv's reader, which
    refused it with a traceback."""
    good = (MALFORMED.parent / "good.csv").read_bytes()
    (tmp_path / "mac.csv").write_bytes(good.replace(b"\n", b"\r"))
    assert run_convert(capsys, tmp_path / "mac.csv", tmp_path / "mac.h5")[0] == 0
    assert run_convert(capsys, MALFORMED.parent / "good.csv", tmp_path / "unix.h5")[0] == 0
    mac, unix = open_dataset(tmp_path / "mac.h5"), open_dataset(tmp_path / "unix.h5")
    assert (mac.gene_names, mac.sample_names) == (unix.gene_names, unix.sample_names)
    assert np.array_equal(mac.X, unix.X) and np.array_equal(mac.y, unix.y)
    (tmp_path / "stray.tsv").write_bytes(b'sample\tcla\rss\tg1\t"g2"\ns1\tA\t1\t2\n')
    status, err = run_convert(capsys, tmp_path / "stray.tsv", tmp_path / "stray.h5")
    assert_one_error(status, err, "stray.tsv: line 2: 3 fields, expected 2 like the header")
