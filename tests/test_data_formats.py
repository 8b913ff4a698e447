"""Each input format on small synthetic files: values, labels and names survive the round trip
through ``convert`` and the memory-mapped ``open_dataset``."""

import h5py
import numpy as np
import pytest
import scipy.io

from hpcswarm.data import convert_file, load_dataset, open_dataset, read_dataset
from hpcswarm.errors import DataError, ParameterError

X = np.array([[1.5, -2.0, 3.25, 0.0],
              [4.0, 5.5, -6.0, 1.0],
              [7.0, 8.0, 9.0, 2.0],
              [0.5, 0.25, 0.125, 3.0],
              [10.0, 11.0, 12.0, 4.0]])
LABELS = ["tumour", "normal", "tumour", "normal", "other"]
GENES = ["g_a", "g b", "g-c", "g.d"]
SAMPLES = [f"s{i}" for i in range(1, 6)]


def round_trip(tmp_path, source, **options):
    output = tmp_path / "out.h5"
    report = convert_file(source, output, **options)
    dataset = open_dataset(output)
    assert dataset.memory_mapped
    assert report.n_samples == dataset.n_samples and report.n_genes == dataset.n_genes
    return dataset


def assert_matches(dataset, *, genes=GENES, samples=SAMPLES):
    np.testing.assert_array_equal(dataset.X, X)
    assert dataset.class_names == ["normal", "other", "tumour"]
    assert [dataset.class_names[c] for c in dataset.y] == LABELS
    assert dataset.gene_names == genes
    assert dataset.sample_names == samples


def write_table(path, rows, sep=","):
    path.write_text("\n".join(sep.join(str(c) for c in row) for row in rows) + "\n")
    return path


def test_csv_samples_as_rows_with_label_column(tmp_path):
    rows = [["id", *GENES, "class"]] + [[s, *x, lab] for s, x, lab in zip(SAMPLES, X.tolist(), LABELS)]
    assert_matches(round_trip(tmp_path, write_table(tmp_path / "in.csv", rows)))


@pytest.mark.parametrize("label", ["diagnosis", "1", "-5"])
def test_csv_label_by_name_or_index(tmp_path, label):
    rows = [["id", "diagnosis", *GENES]] + [[s, lab, *x] for s, x, lab in zip(SAMPLES, X.tolist(), LABELS)]
    assert_matches(round_trip(tmp_path, write_table(tmp_path / "in.csv", rows), label=label))


def test_csv_without_row_names_and_r_style_header(tmp_path):
    rows = [[*GENES, "label"]] + [[*x, lab] for x, lab in zip(X.tolist(), LABELS)]
    assert_matches(round_trip(tmp_path, write_table(tmp_path / "in.csv", rows)), samples=None)
    # R's write.table: no corner cell, so the header is one field short of the rows.
    rows = [[*GENES, "label"]] + [[s, *x, lab] for s, x, lab in zip(SAMPLES, X.tolist(), LABELS)]
    (tmp_path / "out.h5").unlink()
    assert_matches(round_trip(tmp_path, write_table(tmp_path / "r.csv", rows)))


@pytest.mark.parametrize("genes_as_rows, what", [(False, "column"), (True, "row")])
def test_unnamed_labels_are_an_error_in_either_orientation(tmp_path, genes_as_rows, what):
    rows = [["id", *GENES]] + [[s, *x] for s, x in zip(SAMPLES, X.tolist())]
    if genes_as_rows:
        rows = [["gene", *SAMPLES]] + [[g, *col] for g, col in zip(GENES, X.T.tolist())]
    source = write_table(tmp_path / "in.csv", rows)
    with pytest.raises(DataError, match=f"in.csv: no label {what} found; name it with --label"):
        read_dataset(source, genes_as_rows=genes_as_rows)


def test_tsv_genes_as_rows_with_labels_file(tmp_path):
    rows = [["gene", *SAMPLES]] + [[g, *col] for g, col in zip(GENES, X.T.tolist())]
    source = write_table(tmp_path / "in.tsv", rows, sep="\t")
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(LABELS) + "\n")
    dataset = round_trip(tmp_path, source, genes_as_rows=True, labels=labels)
    assert_matches(dataset)
    assert dataset.attrs["labels"] == str(labels)
    assert len(dataset.attrs["labels_sha256"]) == 64


def test_genes_as_rows_label_row_and_named_labels_file(tmp_path):
    rows = [["gene", *SAMPLES], ["class", *LABELS]] + [[g, *col] for g, col in zip(GENES, X.T.tolist())]
    assert_matches(round_trip(tmp_path, write_table(tmp_path / "in.csv", rows), genes_as_rows=True))
    # sample,label lines in another order are matched by sample name
    rows = [["id", *GENES]] + [[s, *x] for s, x in zip(SAMPLES, X.tolist())]
    labels = tmp_path / "labels.csv"
    pairs = reversed(list(zip(SAMPLES, LABELS)))
    labels.write_text("sample,label\n" + "\n".join(f"{s},{lab}" for s, lab in pairs))
    (tmp_path / "out.h5").unlink()
    assert_matches(round_trip(tmp_path, write_table(tmp_path / "b.csv", rows), labels=labels))


def test_transpose_escape_hatch(tmp_path):
    rows = [["id", *SAMPLES]] + [[g, *col] for g, col in zip(GENES, X.T.tolist())]
    source = write_table(tmp_path / "in.csv", rows)
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(LABELS))
    assert_matches(round_trip(tmp_path, source, labels=labels, transpose=True))


def test_arff_quirks(tmp_path):
    source = tmp_path / "in.arff"
    source.write_text(
        "% a comment\n@RELATION 'quoted relation'\n\n"
        "@ATTRIBUTE Class { 'tumour', normal ,other}\n"
        + "".join(f"@attribute '{g}' REAL\n" if " " in g else f"@attribute {g} numeric\n" for g in GENES)
        + "@DATA\n% comment in the data\n"
        + "".join(f"'{lab}', {', '.join(map(str, x))}\n" for x, lab in zip(X.tolist(), LABELS))
    )
    dataset = round_trip(tmp_path, source)
    np.testing.assert_array_equal(dataset.X, X)
    # declared class order is kept
    assert dataset.class_names == ["tumour", "normal", "other"]
    assert [dataset.class_names[c] for c in dataset.y] == LABELS
    assert dataset.gene_names == GENES and dataset.sample_names is None


def test_arff_label_named_among_several_nominal(tmp_path):
    source = tmp_path / "in.arff"
    source.write_text("@relation r\n@attribute batch {b1,b2}\n@attribute g numeric\n@attribute kind {x,y}\n@data\n"
                      "b1,1,x\nb2,2,y\nb1,3,y\n")
    with pytest.raises(DataError, match="2 nominal attributes"):
        read_dataset(source)
    with pytest.raises(DataError, match="'batch' is nominal"):
        read_dataset(source, label="kind")


def test_gct_with_cls(tmp_path):
    source = tmp_path / "in.gct"
    source.write_text("#1.2\n4\t5\nName\tDescription\t" + "\t".join(SAMPLES) + "\n"
                      + "".join(f"{g}\tdesc {g}\t" + "\t".join(map(str, col)) + "\n"
                                for g, col in zip(GENES, X.T.tolist())))
    classes = ["tumour", "normal", "other"]
    (tmp_path / "in.cls").write_text("5 3 1\n# " + " ".join(classes) + "\n"
                                     + " ".join(str(classes.index(lab)) for lab in LABELS) + "\n")
    dataset = round_trip(tmp_path, source)
    np.testing.assert_array_equal(dataset.X, X)
    assert [dataset.class_names[c] for c in dataset.y] == LABELS
    assert dataset.class_names == classes
    assert dataset.gene_names == GENES and dataset.sample_names == SAMPLES


def test_mat_v5_numeric_labels(tmp_path):
    source = tmp_path / "in.mat"
    y = np.array([[2], [10], [2], [10], [1]], dtype=np.uint8)
    scipy.io.savemat(source, {"data": X, "Y": y})
    dataset = round_trip(tmp_path, source, x_var="data")
    np.testing.assert_array_equal(dataset.X, X)
    assert dataset.class_names == ["1", "2", "10"]
    np.testing.assert_array_equal(dataset.y, [1, 2, 1, 2, 0])
    assert dataset.gene_names == ["g1", "g2", "g3", "g4"]


def test_mat_v5_int16_and_cellstr_labels(tmp_path):
    source = tmp_path / "in.mat"
    cells = np.empty((5, 1), dtype=object)
    cells[:, 0] = LABELS
    scipy.io.savemat(source, {"X": (X * 4).astype(np.int16), "Y": cells})
    dataset = round_trip(tmp_path, source)
    assert dataset.X.dtype == np.float64
    np.testing.assert_array_equal(dataset.X, (X * 4).astype(np.int16))
    assert [dataset.class_names[c] for c in dataset.y] == LABELS


def test_mat_v73_transposed_layout(tmp_path):
    source = tmp_path / "in.mat"
    with h5py.File(source, "w", userblock_size=512) as f:
        # MATLAB writes column-major: a 5x4 matrix appears to HDF5 as 4x5.
        f["X"] = X.T
        f["Y"] = np.array([[1.0, 2.0, 1.0, 2.0, 3.0]])
    with open(source, "r+b") as handle:
        handle.write(b"MATLAB 7.3 MAT-file, created by a test")
    dataset = round_trip(tmp_path, source)
    np.testing.assert_array_equal(dataset.X, X)
    assert dataset.class_names == ["1", "2", "3"]
    np.testing.assert_array_equal(dataset.y, [0, 1, 0, 1, 2])


def test_float32_and_drop_constant(tmp_path):
    rows = [["id", *GENES, "flat", "class"]]
    rows += [[s, *x, 7, lab] for s, x, lab in zip(SAMPLES, X.tolist(), LABELS)]
    output = tmp_path / "out.h5"
    report = convert_file(write_table(tmp_path / "in.csv", rows), output, dtype="float32",
                          drop_constant=True)
    assert report.cleaning.constant_genes == ["flat"]
    assert any("dropped 1 constant genes: flat" in line for line in report.lines())
    dataset = open_dataset(output)
    assert dataset.X.dtype == np.float32 and dataset.memory_mapped
    np.testing.assert_array_equal(dataset.X, X.astype(np.float32))
    assert dataset.attrs["dropped_constant_genes"] == 1
    assert dataset.attrs["options"]["dtype"] == "float32"


def test_load_dataset_converts_in_memory(tmp_path):
    rows = [["id", *GENES, "class"]] + [[s, *x, lab] for s, x, lab in zip(SAMPLES, X.tolist(), LABELS)]
    source = write_table(tmp_path / "in.csv", rows)
    dataset = load_dataset(source, dtype="float32")
    assert not dataset.memory_mapped and dataset.path is None
    assert dataset.X.dtype == np.float32
    assert dataset.sha256 == dataset.attrs["source_sha256"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_arff_label_by_name_or_index(tmp_path):
    source = tmp_path / "in.arff"
    source.write_text("@relation r\n@attribute kind {x,y}\n@attribute g1 numeric\n@attribute g2 numeric\n@data\n"
                      "x,1,2\ny,3,4\n")
    for label in ("kind", "0", 0, "-3"):
        dataset, _ = read_dataset(source, label=label)
        assert dataset.class_names == ["x", "y"] and dataset.gene_names == ["g1", "g2"]
    with pytest.raises(DataError, match="'g1' is not nominal"):
        read_dataset(source, label="g1")
    with pytest.raises(DataError, match="no attribute named 'nope'"):
        read_dataset(source, label="nope")


def test_format_option_overrides_the_extension(tmp_path):
    source = tmp_path / "expression.dat"
    source.write_text("id;class;g1;g2\ns1;A;1;2\ns2;B;3;4\n")
    with pytest.raises(DataError, match="unknown format"):
        read_dataset(source)
    dataset, _ = read_dataset(source, format="csv", sep=";")
    np.testing.assert_array_equal(dataset.X, [[1, 2], [3, 4]])
    assert dataset.attrs["format"] == "csv" and dataset.attrs["options"]["sep"] == ";"


def test_options_that_do_not_apply_are_refused(tmp_path):
    source = tmp_path / "in.mat"
    scipy.io.savemat(source, {"X": X, "Y": np.arange(5) % 2})
    with pytest.raises(ParameterError, match="--genes-as-rows does not apply to mat input"):
        read_dataset(source, genes_as_rows=True)
    with pytest.raises(ParameterError, match="dtype must be one of"):
        read_dataset(source, dtype="int8")
    csv = tmp_path / "in.csv"
    csv.write_text("id,class,g\ns1,A,1\ns2,B,2\n")
    with pytest.raises(ParameterError, match="--sample-column names the sample-id column"):
        read_dataset(csv, sample_column="id")


@pytest.mark.parametrize("text, expected", [
    ("class\nA\nB\nA\n", ["A", "B", "A"]),
    ("sample,label\ns3,A\ns1,A\ns2,B\n", ["A", "B", "A"]),
    ("s1\tA\ns2\tB\ns3\tA\n", ["A", "B", "A"]),
])
def test_labels_file_layouts(tmp_path, text, expected):
    from hpcswarm.data.delimited import read_labels_file

    path = tmp_path / "labels.txt"
    path.write_text(text)
    assert read_labels_file(path, ["s1", "s2", "s3"]).tolist() == expected


def test_labels_file_missing_sample(tmp_path):
    from hpcswarm.data.delimited import read_labels_file

    path = tmp_path / "labels.txt"
    path.write_text("s1,A\ns2,B\n")
    with pytest.raises(DataError, match="labels.txt: no label for sample 's3'"):
        read_labels_file(path, ["s1", "s2", "s3"])


def test_gct_cls_by_name_and_missing_cls(tmp_path):
    source = tmp_path / "in.gct"
    source.write_text("#1.2\n1\t3\nName\tDescription\ta\tb\tc\ng1\t-\t1\t2\t3\n")
    with pytest.raises(DataError, match=r"in.cls does not exist \(give --labels FILE.cls\)"):
        read_dataset(source)
    cls = tmp_path / "other.cls"
    cls.write_text("3 2 1\n# lo hi\nhi lo hi\n")
    dataset, _ = read_dataset(source, labels=cls)
    assert dataset.class_names == ["lo", "hi"]
    np.testing.assert_array_equal(dataset.y, [1, 0, 1])
    assert dataset.attrs["labels"] == str(cls)
