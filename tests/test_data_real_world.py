"""Readers for what a study's own data come as: GEO series matrices, gzip, phenotype tables
and AnnData files, each on small files written here (no network), and the block-by-block
conversion in both orientations."""

import gzip

import numpy as np
import pytest

from hpcswarm.__main__ import main
from hpcswarm.data import convert_file, open_dataset, read_dataset
from hpcswarm.errors import DataError

GENES = ["1007_s_at", "1053_at", "117_at", "121_at"]
SAMPLES = ["GSM101", "GSM102", "GSM103", "GSM104", "GSM105"]
# genes x samples, as GEO writes them
VALUES = np.array([[7.25, 8.5, 6.125, 9.0, 7.75],
                   [3.5, 2.25, 4.0, 3.0, 2.5],
                   [10.0, 11.5, 9.25, 12.0, 10.5],
                   [5.0, 5.5, 6.0, 4.5, 5.25]])
DISEASE = ["control", "AD", "control", "AD", "AD"]


def series_matrix(values=VALUES, *, cells=None, table=True, rows=True):
    """Text of a small series matrix; characteristics in a different order for GSM103."""
    def line(name, items):
        return "\t".join([name] + [f'"{v}"' for v in items])

    age = [f"age: {70 + i}" for i in range(len(SAMPLES))]
    state = [f"disease state: {d}" for d in DISEASE]
    first = [a if i == 2 else s for i, (s, a) in enumerate(zip(state, age))]
    second = [s if i == 2 else a for i, (s, a) in enumerate(zip(state, age))]
    out = [
        line("!Series_title", ["A small study"]),
        line("!Series_geo_accession", ["GSE9999"]),
        line("!Series_platform_id", ["GPL570"]),
        "",
        line("!Sample_title", [f"{d} {i}" for i, d in enumerate(DISEASE)]),
        line("!Sample_geo_accession", SAMPLES),
        line("!Sample_source_name_ch1", ["brain" if d == "AD" else "blood" for d in DISEASE]),
        line("!Sample_characteristics_ch1", first),
        line("!Sample_characteristics_ch1", second),
    ]
    if table:
        out += ["!series_matrix_table_begin", "\t".join(['"ID_REF"'] + [f'"{s}"' for s in SAMPLES])]
        if rows:
            for gene, row in zip(GENES, values):
                text = cells(gene, row) if cells else [repr(float(v)) for v in row]
                out.append("\t".join([f'"{gene}"'] + text))
        out.append("!series_matrix_table_end")
    return "\n".join(out) + "\n"


def write(path, text, compress=False):
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_series_matrix_characteristic_label(tmp_path, compress):
    name = "GSE9999_series_matrix.txt" + (".gz" if compress else "")
    source = write(tmp_path / name, series_matrix(), compress)
    report = convert_file(source, tmp_path / "out.h5", label="disease state")
    dataset = open_dataset(tmp_path / "out.h5")
    assert report.format == "geo"
    np.testing.assert_array_equal(dataset.X, VALUES.T)
    assert dataset.gene_names == GENES and dataset.sample_names == SAMPLES
    assert [dataset.class_names[c] for c in dataset.y] == DISEASE
    assert dataset.attrs["series"] == "GSE9999" and dataset.attrs["platform"] == "GPL570"


@pytest.mark.parametrize("label, expected", [
    ("source_name_ch1", ["blood", "brain", "blood", "brain", "brain"]),
    ("title", [f"{d} {i}" for i, d in enumerate(DISEASE)]),
])
def test_series_matrix_whole_sample_line_label(tmp_path, label, expected):
    source = write(tmp_path / "s.txt", series_matrix())
    dataset, _ = read_dataset(source, label=label)
    assert [dataset.class_names[c] for c in dataset.y] == expected


def test_series_matrix_missing_values_follow_nan(tmp_path):
    def cells(gene, row):
        text = [repr(float(v)) for v in row]
        if gene == "117_at":
            text[1] = "null"
        if gene == "121_at":
            text[3] = ""
        return text

    source = write(tmp_path / "s.txt", series_matrix(cells=cells))
    with pytest.raises(DataError, match="2 NaN or infinite values.*sample 'GSM102'.*'117_at'"):
        read_dataset(source, label="disease state")
    dataset, cleaning = read_dataset(source, label="disease state", nan="drop-genes")
    assert dataset.gene_names == ["1007_s_at", "1053_at"]
    assert cleaning.nonfinite_genes == ["117_at", "121_at"]
    dataset, cleaning = read_dataset(source, label="NULL".lower() and "disease state",
                                     nan="drop-samples")
    assert dataset.sample_names == ["GSM101", "GSM103", "GSM105"]


def test_series_matrix_numeric_probe_ids_stay_names(tmp_path):
    text = series_matrix().replace('"1007_s_at"', '"10"').replace('"1053_at"', '"11"')
    dataset, _ = read_dataset(write(tmp_path / "s.txt", text), label="disease state")
    assert dataset.gene_names[:2] == ["10", "11"] and dataset.n_genes == 4


@pytest.mark.parametrize("kwargs, fragments", [
    ({"rows": False}, ["series matrix table is empty", "RNA-seq", "supplementary"]),
    ({"table": False}, ["no series matrix table", "!series_matrix_table_begin"]),
])
def test_series_matrix_without_data_is_one_error(tmp_path, capsys, kwargs, fragments):
    source = write(tmp_path / "GSE1_series_matrix.txt.gz", series_matrix(**kwargs), True)
    status = main(["convert", str(source), str(tmp_path / "out.h5"), "--label", "disease state"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("hpcswarm: error: ")
    assert str(source) in err[0] and all(f in err[0] for f in fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


def test_series_matrix_unknown_label_names_the_keys(tmp_path):
    source = write(tmp_path / "s.txt", series_matrix())
    with pytest.raises(DataError, match="no characteristic or !Sample_ line 'tissue'.*'disease state', 'age'"):
        read_dataset(source, label="tissue")
    with pytest.raises(DataError, match="name the class with --label"):
        read_dataset(source)


def test_series_matrix_sample_without_the_characteristic(tmp_path):
    lines = series_matrix().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("!Sample_characteristics"))
    lines[first] = lines[first].rsplit("\t", 1)[0] + '\t"tissue: cortex"'  # GSM105's state
    source = write(tmp_path / "s.txt", "\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"1 sample\(s\) without a label.*'GSM105'.*--drop-unlabelled"):
        read_dataset(source, label="disease state")
    dataset, cleaning = read_dataset(source, label="disease state", drop_unlabelled=True)
    assert cleaning.unlabelled_samples == ["GSM105"] and dataset.n_samples == 4


# ---------------------------------------------------------------- gzip


def test_truncated_gzip_is_one_error(tmp_path, capsys):
    rows = ["id,g1,g2,class"] + [f"s{i},{i}.5,{2 * i},{'AB'[i % 2]}" for i in range(200)]
    data = gzip.compress("\n".join(rows).encode())
    source = tmp_path / "t.csv.gz"
    source.write_bytes(data[: len(data) // 2])
    status = main(["convert", str(source), str(tmp_path / "out.h5")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert err[0].startswith(f"hpcswarm: error: {source}: truncated or damaged gzip file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv.gz"]


def test_gzip_found_by_magic_bytes_not_the_name(tmp_path):
    text = "id,g1,g2,class\ns1,1,2,A\ns2,3,4,B\ns3,5,7,A\n"
    plain, _ = read_dataset(write(tmp_path / "a.csv", text))
    packed, _ = read_dataset(write(tmp_path / "b.csv", text, compress=True))
    np.testing.assert_array_equal(plain.X, packed.X)
    assert packed.gene_names == ["g1", "g2"] and packed.sample_names == ["s1", "s2", "s3"]


# ---------------------------------------------------------------- phenotype tables


def expression_tsv(tmp_path, compress=False):
    rows = ["gene\t" + "\t".join(SAMPLES)]
    rows += [g + "\t" + "\t".join(repr(float(v)) for v in row) for g, row in zip(GENES, VALUES)]
    return write(tmp_path / ("expr.tsv.gz" if compress else "expr.tsv"), "\n".join(rows) + "\n",
                 compress)


def phenotype(tmp_path, rows, header="sample\tdisease\tage", name="pheno.tsv"):
    return write(tmp_path / name, "\n".join([header] + rows) + "\n")


def test_phenotype_table_labels_by_sample_id(tmp_path, capsys):
    table = phenotype(tmp_path, [f"{s}\t{d}\t{70 + i}" for i, (s, d) in
                                 enumerate(zip(reversed(SAMPLES), reversed(DISEASE)))]
                      + ["GSM999\tAD\t60", "GSM998\tcontrol\t61"])
    source = expression_tsv(tmp_path, compress=True)
    assert main(["convert", str(source), str(tmp_path / "out.h5"), "--genes-as-rows",
                 "--labels", str(table), "--label", "disease"]) == 0
    out = capsys.readouterr().out
    assert "ignored 2 phenotype row(s)" in out
    dataset = open_dataset(tmp_path / "out.h5")
    assert [dataset.class_names[c] for c in dataset.y] == DISEASE
    np.testing.assert_array_equal(dataset.X, VALUES.T)


def test_phenotype_unlabelled_samples_listed_or_dropped(tmp_path):
    table = phenotype(tmp_path, ["GSM101\tcontrol\t1", "GSM102\t\t2", "GSM104\tAD\t3",
                                 "GSM105\tAD\t4"])
    source = expression_tsv(tmp_path)
    with pytest.raises(DataError, match=r"2 sample\(s\) without a label in .*pheno.tsv "
                                        r"\(column 'disease'\): 'GSM102', 'GSM103'"):
        read_dataset(source, genes_as_rows=True, labels=table, label="disease")
    dataset, cleaning = read_dataset(source, genes_as_rows=True, labels=table, label="disease",
                                     drop_unlabelled=True)
    assert dataset.sample_names == ["GSM101", "GSM104", "GSM105"]
    assert cleaning.unlabelled_samples == ["GSM102", "GSM103"]
    np.testing.assert_array_equal(dataset.X, VALUES.T[[0, 3, 4]])


def test_phenotype_min_class_size_and_sample_column(tmp_path):
    rows = [f"x\t{s}\t{d}" for s, d in zip(SAMPLES, ["A", "B", "A", "B", "C"])]
    table = phenotype(tmp_path, rows, header="batch\tgeo\tgroup", name="pheno.csv")
    source = expression_tsv(tmp_path)
    with pytest.raises(DataError, match="no sample-id column among the usual names"):
        read_dataset(source, genes_as_rows=True, labels=table, label="group")
    dataset, cleaning = read_dataset(source, genes_as_rows=True, labels=table, label="group",
                                     sample_column="geo", min_class_size=2)
    assert dataset.class_names == ["A", "B"] and cleaning.small_classes == [("C", 1)]
    assert dataset.sample_names == SAMPLES[:4]


def test_phenotype_without_the_column_is_one_error(tmp_path, capsys):
    table = phenotype(tmp_path, [f"{s}\t{d}\t1" for s, d in zip(SAMPLES, DISEASE)])
    source = expression_tsv(tmp_path)
    status = main(["convert", str(source), str(tmp_path / "out.h5"), "--genes-as-rows",
                   "--labels", str(table), "--label", "diagnosis"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert f"{table}: no column 'diagnosis'" in err[0]
    assert not (tmp_path / "out.h5").exists()


def test_phenotype_for_a_series_matrix_and_a_gct(tmp_path):
    table = phenotype(tmp_path, [f"{s}\t{d}\t1" for s, d in zip(SAMPLES, DISEASE)])
    geo, _ = read_dataset(write(tmp_path / "s.txt", series_matrix()), labels=table, label="disease")
    gct_text = "#1.2\n4\t5\nName\tDescription\t" + "\t".join(SAMPLES) + "\n" + "".join(
        f"{g}\tna\t" + "\t".join(repr(float(v)) for v in row) + "\n" for g, row in zip(GENES, VALUES))
    gct, _ = read_dataset(write(tmp_path / "a.gct.gz", gct_text, True), labels=table,
                          label="disease")
    for dataset in (geo, gct):
        assert [dataset.class_names[c] for c in dataset.y] == DISEASE
        np.testing.assert_array_equal(dataset.X, VALUES.T)


# ---------------------------------------------------------------- AnnData


def h5ad(tmp_path, layout, name="a.h5ad"):
    anndata = pytest.importorskip("anndata", reason="anndata is not installed "
                                  "(pip install 'hpcswarm[anndata]')")
    import pandas as pd
    import scipy.sparse

    X = VALUES.T.copy()
    X[X < 4] = 0.0  # a few zeros, so that sparse storage drops them
    matrix = {"dense": X, "csr": scipy.sparse.csr_matrix(X), "csc": scipy.sparse.csc_matrix(X)}[layout]
    obs = pd.DataFrame({"disease": pd.Categorical(DISEASE), "age": np.arange(5)}, index=SAMPLES)
    adata = anndata.AnnData(X=matrix, obs=obs, var=pd.DataFrame(index=GENES))
    adata.layers["log"] = np.log2(X + 1)
    adata.write_h5ad(tmp_path / name)
    return tmp_path / name, X


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
def test_h5ad_dense_and_sparse(tmp_path, monkeypatch, layout):
    import hpcswarm.data.h5ad as reader

    source, X = h5ad(tmp_path, layout)
    monkeypatch.setattr(reader, "BLOCK_CELLS", 7)  # several blocks along either axis
    convert_file(source, tmp_path / "out.h5", label="disease")
    dataset = open_dataset(tmp_path / "out.h5")
    np.testing.assert_array_equal(dataset.X, X)
    np.testing.assert_array_equal(dataset.X_genes, X.T)
    assert dataset.gene_names == GENES and dataset.sample_names == SAMPLES
    assert [dataset.class_names[c] for c in dataset.y] == DISEASE
    layered, _ = read_dataset(source, label="disease", layer="log")
    np.testing.assert_array_equal(layered.X, np.log2(X + 1))


@pytest.mark.parametrize("option, fragment", [
    (["--label", "tissue"], "no obs column 'tissue'"),
    (["--label", "disease", "--layer", "raw"], "no layer 'raw' (layers: 'log')"),
])
def test_h5ad_without_the_key_is_one_error(tmp_path, capsys, option, fragment):
    source, _ = h5ad(tmp_path, "csr")
    status = main(["convert", str(source), str(tmp_path / "out.h5"), *option])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and f"{source}: {fragment}" in err[0]
    assert not (tmp_path / "out.h5").exists()


def test_a_damaged_h5ad_is_one_error(tmp_path, capsys):
    """anndata's own error (an element whose encoding it does not know) is one line."""
    import h5py

    source, _ = h5ad(tmp_path, "csr")
    with h5py.File(source, "r+") as f:
        f["obs"].attrs["encoding-type"] = "garbled"
    status = main(["convert", str(source), str(tmp_path / "out.h5"), "--label", "disease"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert f"{source}: a damaged AnnData file: /obs does not read (IORegistryError: " in err[0]
    assert not (tmp_path / "out.h5").exists()


def test_h5ad_without_anndata_names_the_extra(tmp_path, monkeypatch):
    import builtins

    source = tmp_path / "a.h5ad"
    import h5py

    with h5py.File(source, "w") as f:
        f.create_group("obs")
    real_import = builtins.__import__

    def no_anndata(name, *args, **kwargs):
        if name.startswith("anndata"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_anndata)
    with pytest.raises(DataError, match=r"hpcswarm\[anndata\]"):
        read_dataset(source, label="disease")


def test_h5ad_too_large_for_memory_is_refused(tmp_path, monkeypatch):
    import hpcswarm.system as system

    source, _ = h5ad(tmp_path, "csr")
    monkeypatch.setattr(system, "available_memory", lambda ranks: (100, "a tiny machine"))
    with pytest.raises(DataError, match="5 samples x 4 genes need .* in memory.*a tiny machine"):
        read_dataset(source, label="disease")


# ---------------------------------------------------------------- block-by-block conversion


@pytest.mark.parametrize("genes_as_rows", [False, True])
@pytest.mark.parametrize("nan", ["error", "drop-genes", "drop-samples"])
def test_streamed_conversion_equals_the_matrix_in_memory(tmp_path, monkeypatch, genes_as_rows, nan):
    import hpcswarm.data.delimited as delimited
    import hpcswarm.data.hdf5 as hdf5
    import hpcswarm.data.table as table

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(23, 17)), 3)
    X[:, 4] = 1.5  # a constant gene
    labels = np.array(["A", "B", "C"])[np.arange(23) % 3]
    if nan != "error":
        X[5, 7] = np.nan
        X[11, 2] = np.inf
    genes = [f"g{j}" for j in range(17)]
    samples = [f"s{i}" for i in range(23)]
    if genes_as_rows:
        rows = ["gene," + ",".join(samples), "class," + ",".join(labels)]
        rows += [g + "," + ",".join(repr(float(v)) for v in X[:, j]) for j, g in enumerate(genes)]
    else:
        rows = ["id," + ",".join(genes) + ",class"]
        rows += [s + "," + ",".join(repr(float(v)) for v in X[i]) + "," + labels[i]
                 for i, s in enumerate(samples)]
    source = write(tmp_path / "in.csv.gz", "\n".join(rows) + "\n", True)
    for module in (delimited, hdf5, table):
        monkeypatch.setattr(module, "BLOCK_CELLS", 40)
    import hpcswarm.data.build as build

    monkeypatch.setattr(build, "BLOCK_CELLS", 40)
    options = dict(genes_as_rows=genes_as_rows, nan=nan, drop_constant=True)
    convert_file(source, tmp_path / "out.h5", **options)
    dataset = open_dataset(tmp_path / "out.h5")
    keep_s = np.ones(23, bool)
    keep_g = np.ones(17, bool)
    keep_g[4] = False
    if nan == "drop-genes":
        keep_g[[7, 2]] = False
    if nan == "drop-samples":
        keep_s[[5, 11]] = False
    np.testing.assert_array_equal(dataset.X, X[keep_s][:, keep_g])
    np.testing.assert_array_equal(dataset.X_genes, X[keep_s][:, keep_g].T)
    assert dataset.gene_names == [g for g, k in zip(genes, keep_g) if k]
    assert dataset.sample_names == [s for s, k in zip(samples, keep_s) if k]
    assert [dataset.class_names[c] for c in dataset.y] == labels[keep_s].tolist()
    in_memory, _ = read_dataset(source, **options)
    np.testing.assert_array_equal(in_memory.X, dataset.X)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_xena_style_name_without_extension_is_a_tsv(tmp_path):
    source = expression_tsv(tmp_path, compress=True).rename(tmp_path / "TcgaTargetGtex_tpm.gz")
    table = phenotype(tmp_path, [f"{s}\t{d}\t1" for s, d in zip(SAMPLES, DISEASE)])
    dataset, _ = read_dataset(source, genes_as_rows=True, labels=table, label="disease")
    assert dataset.attrs["format"] == "tsv"
    np.testing.assert_array_equal(dataset.X, VALUES.T)


def test_a_phenotype_table_needs_its_column(tmp_path):
    from hpcswarm.errors import ParameterError

    table = phenotype(tmp_path, [f"{s}\t{d}\t1" for s, d in zip(SAMPLES, DISEASE)])
    with pytest.raises(ParameterError, match="name its class column with --label"):
        read_dataset(write(tmp_path / "s.txt", series_matrix()), labels=table)


def test_a_genes_as_rows_file_read_the_other_way_says_so(tmp_path, capsys):
    """Without ``--genes-as-rows`` the samples would be the genes, none labelled; the header
    names are the table's samples: the error says the file looks like genes as rows (it
    advised --drop-unlabelled, which leaves no sample), and nothing is written."""
    from cli_checks import assert_one_error, run_cli

    table = phenotype(tmp_path, [f"{s}\t{d}\t1" for s, d in zip(SAMPLES, DISEASE)])
    source = expression_tsv(tmp_path)
    status, _, err = run_cli(capsys, "convert", source, tmp_path / "out.h5", "--labels", table,
                             "--label", "disease")
    assert_one_error(status, err, f"{source}: {len(SAMPLES)} of its {len(SAMPLES)} column "
                     f"names are samples of the phenotype table {table}, but only 0 of its "
                     f"{len(GENES)} row names: the file looks like genes as rows (convert it "
                     "with --genes-as-rows)")
    assert not (tmp_path / "out.h5").exists()
    with pytest.raises(DataError, match="looks like genes as rows"):
        read_dataset(source, labels=table, label="disease", drop_unlabelled=True)
