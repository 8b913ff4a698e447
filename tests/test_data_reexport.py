"""A shared dataset re-exported to each newer input format (gzipped tables with a phenotype
table, GEO series matrix, GCT+CLS, gzipped ARFF, AnnData dense/CSR/CSC) converts to exactly
the same ``/X``, ``/y`` and names as the original file."""

import gzip

import h5py
import numpy as np
import pytest

from hpcswarm.data import convert_file, read_dataset


def contents(path):
    with h5py.File(path, "r") as f:
        return {key: f[key][()] for key in ("X", "X_genes", "y", "class_names", "gene_names")}


def packed(path, text):
    path.write_bytes(gzip.compress(text.encode()))
    return path


def cell(value):
    return repr(float(value))


def sample_ids(n):
    return [f"S{i + 1:03d}" for i in range(n)]


def genes_as_rows_tsv(folder, dataset):
    samples = sample_ids(dataset.n_samples)
    rows = ["gene\t" + "\t".join(samples)]
    rows += [g + "\t" + "\t".join(map(cell, column))
             for g, column in zip(dataset.gene_names, dataset.X.T)]
    source = packed(folder / "expr.tsv.gz", "\n".join(rows) + "\n")
    return source, {"genes_as_rows": True, "labels": phenotype(folder, dataset), "label": "type"}


def samples_as_rows_csv(folder, dataset):
    samples = sample_ids(dataset.n_samples)
    rows = ["sample," + ",".join(dataset.gene_names)]
    rows += [s + "," + ",".join(map(cell, row)) for s, row in zip(samples, dataset.X)]
    source = packed(folder / "expr.csv.gz", "\n".join(rows) + "\n")
    return source, {"labels": phenotype(folder, dataset), "label": "type"}


def phenotype(folder, dataset):
    names = [dataset.class_names[c] for c in dataset.y]
    rows = [f"{s}\t{n}\tbatch1" for s, n in zip(sample_ids(dataset.n_samples), names)]
    path = folder / "pheno.tsv"
    path.write_text("sample_id\ttype\tbatch\n" + "\n".join(reversed(rows)) + "\n")
    return path


def series_matrix(folder, dataset):
    samples = [f"GSM{100 + i}" for i in range(dataset.n_samples)]
    names = [dataset.class_names[c] for c in dataset.y]

    def line(name, items):
        return "\t".join([name] + [f'"{v}"' for v in items])

    rows = [line("!Series_geo_accession", ["GSE1"]), line("!Series_platform_id", ["GPL1"]),
            line("!Sample_geo_accession", samples),
            line("!Sample_characteristics_ch1", [f"tumour type: {n}" for n in names]),
            "!series_matrix_table_begin", '"ID_REF"\t' + "\t".join(f'"{s}"' for s in samples)]
    rows += [f'"{g}"\t' + "\t".join(map(cell, column))
             for g, column in zip(dataset.gene_names, dataset.X.T)]
    rows.append("!series_matrix_table_end")
    source = packed(folder / "GSE1_series_matrix.txt.gz", "\n".join(rows) + "\n")
    return source, {"label": "tumour type"}


def gct_and_cls(folder, dataset):
    samples = sample_ids(dataset.n_samples)
    rows = ["#1.2", f"{dataset.n_genes}\t{dataset.n_samples}",
            "Name\tDescription\t" + "\t".join(samples)]
    rows += [f"{g}\tna\t" + "\t".join(map(cell, column))
             for g, column in zip(dataset.gene_names, dataset.X.T)]
    source = packed(folder / "expr.gct.gz", "\n".join(rows) + "\n")
    cls = [f"{dataset.n_samples} {dataset.n_classes} 1", "# " + " ".join(dataset.class_names),
           " ".join(str(c) for c in dataset.y)]
    packed(folder / "expr.cls.gz", "\n".join(cls) + "\n")
    return source, {}


def arff_gz(folder, original):
    source = folder / (original.name + ".gz")
    source.write_bytes(gzip.compress(original.read_bytes()))
    return source, {}


def h5ad_file(layout):
    def export(folder, dataset):
        anndata = pytest.importorskip("anndata", reason="anndata is not installed "
                                      "(pip install 'hpcswarm[anndata]')")
        import pandas as pd
        import scipy.sparse

        X = np.asarray(dataset.X)
        matrix = {"dense": X, "csr": scipy.sparse.csr_matrix(X),
                  "csc": scipy.sparse.csc_matrix(X)}[layout]
        names = [dataset.class_names[c] for c in dataset.y]
        obs = pd.DataFrame({"type": pd.Categorical(names)},
                           index=sample_ids(dataset.n_samples))
        adata = anndata.AnnData(X=matrix, obs=obs, var=pd.DataFrame(index=dataset.gene_names))
        adata.write_h5ad(folder / f"expr-{layout}.h5ad")
        return folder / f"expr-{layout}.h5ad", {"label": "type"}

    return export


EXPORTS = {
    "tsv.gz genes as rows + phenotype": genes_as_rows_tsv,
    "csv.gz samples as rows + phenotype": samples_as_rows_csv,
    "series matrix .gz": series_matrix,
    "gct.gz + cls.gz": gct_and_cls,
    "h5ad dense": h5ad_file("dense"),
    "h5ad csr": h5ad_file("csr"),
    "h5ad csc": h5ad_file("csc"),
}


CASES = [(name, export) for name in ("SRBCT.arff", "colon.mat") for export in sorted(EXPORTS)]
CASES.append(("SRBCT.arff", "gzip of the original"))  # every text format may be gzip; MATLAB is not text


@pytest.fixture(scope="module")
def originals(shared_data, tmp_path_factory):
    """``original(name)``: the shared file ``name`` as read, and the contents of its
    conversion; each file read and converted once for all its cases."""
    found = {}

    def original(name):
        if name not in found:
            converted = tmp_path_factory.mktemp("original") / "original.h5"
            convert_file(shared_data / name, converted)
            found[name] = read_dataset(shared_data / name)[0], contents(converted)
        return found[name]

    return original


@pytest.mark.parametrize("name, export", CASES)
def test_reexported_dataset_converts_to_the_same_file(shared_data, originals, tmp_path, name,
                                                      export):
    dataset, expected = originals(name)
    if export == "gzip of the original":
        source, options = arff_gz(tmp_path, shared_data / name)
    else:
        source, options = EXPORTS[export](tmp_path, dataset)
    convert_file(source, tmp_path / "reexported.h5", **options)
    got = contents(tmp_path / "reexported.h5")
    for key in expected:
        assert got[key].dtype == expected[key].dtype, key
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)
