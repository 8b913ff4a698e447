"""Inputs that used to be read without an error but wrongly (a row-name column read as a gene,
labels that became classes they are not): each is now read correctly, or refused with one line
naming the file and the first offending row or sample, through the real ``convert`` command."""

import h5py
import numpy as np
import pytest

from hpcswarm.data import open_dataset

from cli_checks import assert_one_error, folder_state, run_cli

VALUES = [[0.3, 2.0, 1.1], [4.2, 5.0, 0.7], [7.7, 8.1, 2.4], [1.5, 2.5, 3.5]]
CLASSES = ["A", "B", "A", "B"]


def _table(first_header, first_values):
    lines = [f"{first_header},class,g1,g2,g3"]
    lines += [f"{name},{label}," + ",".join(map(str, row))
              for name, label, row in zip(first_values, CLASSES, VALUES)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("header", ["id", "sample", "sample_id", "ID_REF", "Unnamed: 0",
                                    "Sample ID", "", "patient.id"])
def test_a_row_name_column_of_numbers_names_the_samples(tmp_path, capsys, header):
    source = tmp_path / "table.csv"
    source.write_text(_table(header, [101, 102, 103, 104]))
    status, out, err = run_cli(capsys, "convert", source, tmp_path / "out.h5")
    assert status == 0, err
    dataset = open_dataset(tmp_path / "out.h5")
    assert dataset.gene_names == ["g1", "g2", "g3"]
    assert dataset.sample_names == ["101", "102", "103", "104"]
    np.testing.assert_array_equal(dataset.X, VALUES)
    assert "sample names from column 1" in out


def test_a_first_column_holding_the_row_numbers_is_not_a_gene(tmp_path, capsys):
    source = tmp_path / "table.csv"
    source.write_text(_table("n", [1, 2, 3, 4]))
    status, out, _ = run_cli(capsys, "convert", source, tmp_path / "out.h5")
    assert status == 0
    assert open_dataset(tmp_path / "out.h5").gene_names == ["g1", "g2", "g3"]
    assert "sample names from column 1 ('n'), which holds the row numbers 1..n" in out


def test_a_numeric_first_gene_stays_a_gene(tmp_path, capsys):
    source = tmp_path / "table.csv"
    source.write_text(_table("g0", [0.5, 0.1, 0.9, 0.4]))
    status, out, _ = run_cli(capsys, "convert", source, tmp_path / "out.h5")
    assert status == 0
    assert open_dataset(tmp_path / "out.h5").gene_names == ["g0", "g1", "g2", "g3"]
    assert "names from" not in out


def test_genes_as_rows_with_numeric_probe_ids(tmp_path, capsys):
    source = tmp_path / "series.tsv"
    source.write_text("ID_REF\tS1\tS2\tS3\tS4\nclass\tA\tB\tA\tB\n"
                      "1007\t1.0\t2.0\t3.0\t4.5\n1053\t0.5\t0.2\t0.9\t0.1\n")
    status, out, _ = run_cli(capsys, "convert", source, tmp_path / "out.h5", "--genes-as-rows")
    assert status == 0
    dataset = open_dataset(tmp_path / "out.h5")
    assert dataset.gene_names == ["1007", "1053"]
    assert dataset.sample_names == ["S1", "S2", "S3", "S4"]
    assert "gene names from column 1 ('ID_REF')" in out


def test_whole_and_decimal_numbers_are_one_class(tmp_path, capsys):
    source = tmp_path / "table.csv"
    source.write_text("sample,class,g1,g2\ns1,1,0.1,0.2\ns2,2.0,0.3,0.1\ns3,1.0,0.5,0.6\n"
                      "s4,2,0.2,0.9\n")
    status, out, _ = run_cli(capsys, "convert", source, tmp_path / "out.h5")
    assert status == 0
    dataset = open_dataset(tmp_path / "out.h5")
    assert dataset.class_names == ["1", "2"]
    assert dataset.y.tolist() == [0, 1, 0, 1]


def test_drop_unlabelled_reports_the_count(tmp_path, capsys):
    source = tmp_path / "table.csv"
    source.write_text("sample,class,g1,g2\ns1,A,0.1,0.2\ns2,NA,0.3,0.1\ns3,B,0.5,0.6\n"
                      "s4,,0.2,0.9\ns5,A,0.7,0.7\ns6,B,0.1,0.3\n")
    status, out, _ = run_cli(capsys, "convert", source, tmp_path / "out.h5",
                             "--drop-unlabelled")
    assert status == 0
    dataset = open_dataset(tmp_path / "out.h5")
    assert dataset.sample_names == ["s1", "s3", "s5", "s6"]
    assert dataset.class_names == ["A", "B"]
    assert "dropped 2 samples without a label: s2, s4" in out
    assert dataset.attrs["dropped_unlabelled_samples"] == 2


def test_trailing_separators_on_every_line_are_ignored(tmp_path, capsys):
    plain = "sample,class,g1,g2\ns1,A,1.0,2.0\ns2,B,4.0,5.0\ns3,A,7.0,8.0\n"
    for name, text in (("plain.csv", plain),
                       ("rows.csv", plain.replace("\ns", ",\ns").rstrip("\n") + ",\n"),
                       ("all.csv", plain.replace("\n", ",\n"))):
        (tmp_path / name).write_text(text)
        status, _, err = run_cli(capsys, "convert", tmp_path / name, tmp_path / f"{name}.h5")
        assert status == 0, err
    expected = open_dataset(tmp_path / "plain.csv.h5")
    for name in ("rows.csv", "all.csv"):
        dataset = open_dataset(tmp_path / f"{name}.h5")
        assert dataset.gene_names == expected.gene_names == ["g1", "g2"]
        assert dataset.sample_names == expected.sample_names
        np.testing.assert_array_equal(dataset.X, expected.X)


def _matlab_v73(path, labels_writer):
    """A file laid out as MATLAB's ``save -v7.3`` writes it (512-byte header, column-major
    matrices, ``MATLAB_class`` attributes)."""
    with h5py.File(path, "w", userblock_size=512) as f:
        X = f.create_dataset("X", data=np.array(VALUES).T)
        X.attrs["MATLAB_class"] = np.bytes_("double")
        labels_writer(f)
    with open(path, "r+b") as handle:
        handle.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Thu Nov 26 2026".ljust(116))


def _char_matrix(group, name, rows):
    width = max(len(r) for r in rows)
    codes = np.array([[ord(c) for c in r.ljust(width)] for r in rows], dtype=np.uint16)
    dset = group.create_dataset(name, data=codes.T)
    dset.attrs["MATLAB_class"] = np.bytes_("char")
    return dset


def _cell_of_strings(f, name, rows):
    refs = f.create_group("#refs#")
    handles = [_char_matrix(refs, f"s{i}", [row]).ref for i, row in enumerate(rows)]
    dset = f.create_dataset(name, data=np.array([handles], dtype=h5py.ref_dtype))
    dset.attrs["MATLAB_class"] = np.bytes_("cell")


@pytest.mark.parametrize("layout", ["char", "cell"])
def test_matlab_v73_text_labels(tmp_path, capsys, layout):
    path = tmp_path / "data.mat"
    rows = ["tumour", "normal", "tumour", "normal"]
    if layout == "char":
        _matlab_v73(path, lambda f: _char_matrix(f, "Y", rows))
    else:
        _matlab_v73(path, lambda f: _cell_of_strings(f, "Y", rows))
    status, _, err = run_cli(capsys, "convert", path, tmp_path / "out.h5")
    assert status == 0, err
    dataset = open_dataset(tmp_path / "out.h5")
    assert dataset.class_names == ["normal", "tumour"]
    assert dataset.y.tolist() == [1, 0, 1, 0]
    np.testing.assert_array_equal(dataset.X, VALUES)


@pytest.mark.parametrize("text, fragments", [
    ("sample,label\ns1,A\ns2,\ns3,A\ns4,B\n", ["labels.txt: line 3, sample 's2'",
                                               "without a label"]),
    ("s1,A\ns2,B\ns1,B\ns3,A\ns4,B\n", ["labels.txt: line 3", "sample 's1' labelled 'B', but "
                                       "'A' on line 1"]),
])
def test_labels_file_problems_name_the_labels_file(tmp_path, capsys, text, fragments):
    source = tmp_path / "table.csv"
    source.write_text("sample,g1,g2\ns1,0.1,0.2\ns2,0.3,0.1\ns3,0.5,0.6\ns4,0.2,0.9\n")
    (tmp_path / "labels.txt").write_text(text)
    before = folder_state(tmp_path)
    status, _, err = run_cli(capsys, "convert", source, tmp_path / "out.h5",
                             "--labels", tmp_path / "labels.txt")
    assert_one_error(status, err, *fragments)
    assert folder_state(tmp_path) == before


def test_a_gct_file_with_trailing_tabs(tmp_path, capsys):
    (tmp_path / "a.gct").write_text("#1.2\n2\t2\nName\tDescription\tS1\tS2\t\n"
                                    "g1\tna\t1.0\t2.0\t\ng2\tna\t3.0\t4.5\t\n")
    (tmp_path / "a.cls").write_text("2 2 1\n# A B\nA B\n")
    status, _, err = run_cli(capsys, "convert", tmp_path / "a.gct", tmp_path / "out.h5")
    assert status == 0, err
    dataset = open_dataset(tmp_path / "out.h5")
    assert dataset.sample_names == ["S1", "S2"] and dataset.gene_names == ["g1", "g2"]
    np.testing.assert_array_equal(dataset.X, [[1.0, 3.0], [2.0, 4.5]])
