"""Gene lists: the one format hpcswarm writes (``signature.tsv``, ``report --genes``) reads back
every name a dataset can hold, through ``evaluate --genes``; plain lists typed by hand keep
their rules; ``convert`` and loading a file share one name rule."""

import csv
import json

import numpy as np
import pytest

from cli_checks import assert_one_error, run_cli
from hpcswarm.cli import IN_SAMPLE_NOTE
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.errors import ParameterError
from hpcswarm.fitness.genes import mask_from_genes
from hpcswarm.signatures.final import FinalSignature
from hpcswarm.signatures.genelist import gene_table, read_gene_list

AWKWARD = ["#hash", "a\ttab", " lead", "trail ", 'say "hi"', '"', "ünïcødé-β", "12", "-3",
           "1e5", "gene", "line\nbreak", "#", "plain"]
"""Names a dataset can hold that a line-per-name list would misread."""


def test_every_awkward_name_round_trips():
    text = gene_table(("frequency",), [(name, j, "0.5000") for j, name in enumerate(AWKWARD)])
    lines = text.splitlines()
    assert lines[0] == "gene\tfeature\tcolumn\tfrequency"
    assert lines[-1] == "plain\t14\t13\t0.5000"  # an ordinary name is written as it is
    assert '"#hash"\t1\t0\t0.5000' in lines and '"say ""hi"""\t5\t4\t0.5000' in lines


def test_a_written_list_reads_back_exactly(tmp_path):
    path = tmp_path / "genes.tsv"
    path.write_text(gene_table(("frequency",), [(n, j, "1") for j, n in enumerate(AWKWARD)]),
                    encoding="utf-8")
    listed = read_gene_list(path)
    assert listed.written and listed.entries == AWKWARD
    names = ["TP53", *AWKWARD, "hash", "a", "lead", "trail", "5"]
    mask = mask_from_genes(listed.entries, names)
    assert np.flatnonzero(mask).tolist() == list(range(1, len(AWKWARD) + 1))


def test_names_of_a_written_list_are_never_indices(tmp_path):
    path = tmp_path / "genes.tsv"
    path.write_text(gene_table((), [("12", 0)]))
    listed = read_gene_list(path)
    with pytest.raises(ParameterError, match="line 2: '12' names no gene of the dataset"):
        mask_from_genes(listed.entries, [f"g{j}" for j in range(20)], lines=listed.lines)


def test_a_plain_list_keeps_its_rules(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("# my favourites\n\n  TP53  \n7\n#skipped\nMYC\n")
    listed = read_gene_list(path)
    assert not listed.written and listed.entries == ["TP53", "7", "MYC"]
    assert listed.lines == [3, 4, 6]
    names = ["MYC", " TP53"] + [f"g{j}" for j in range(5)] + ["7"]
    # a hand-typed name matches a dataset name with surrounding spaces; 7 is a name
    assert np.flatnonzero(mask_from_genes(listed.entries, names)).tolist() == [0, 1, 7]


def test_a_list_written_by_an_earlier_version_still_reads(tmp_path):
    path = tmp_path / "old.signature.tsv"
    path.write_text("# final signature: 2 genes\n# estimate\ngene\tcolumn\tfold_frequency\n"
                    "B\t1\t1.0000\nA\t0\t0.5000\n")
    assert read_gene_list(path) == (["B", "A"], [4, 5], True)


def _signature(genes):
    genes = np.asarray(genes, dtype=np.int64)
    return FinalSignature(genes, genes, "none", (0,), 1, 1, np.linspace(1, 0.5, genes.size),
                          {"row": "M", "mean": 1.0, "n": 1}, {}, None)


def test_the_signature_list_is_a_gene_table():
    text = _signature([2, 0]).gene_list(["a", "b", "#c"])
    assert text == 'gene\tfeature\tcolumn\tfold_frequency\n"#c"\t3\t2\t1.0000\na\t1\t0\t0.5000\n'


@pytest.fixture
def awkward_data(tmp_path):
    """A dataset file (as another tool may write it) whose genes carry the awkward names."""
    rng = np.random.default_rng(1)
    names = [name.strip() for name in AWKWARD] + ["TP53"]
    dataset = Dataset(X=rng.normal(size=(8, len(names))), y=np.array([0, 1] * 4),
                      class_names=["a", "b"], gene_names=names, attrs={})
    write_dataset(dataset, tmp_path / "d.h5")
    return tmp_path / "d.h5", names


def test_evaluate_reads_the_signature_list_the_tool_writes(awkward_data, tmp_path, capsys):
    path, names = awkward_data
    chosen = [0, 1, 2, 11, 7, 13]  # '#hash', 'a\ttab', 'lead', 'line\nbreak', '12', 'plain'
    listed = tmp_path / "s.tsv"
    listed.write_text(_signature(chosen).gene_list(names), encoding="utf-8")
    status, out, err = run_cli(capsys, "evaluate", path, "--genes", listed, "--k", "1",
                               "--cv", "2")
    assert status == 0, err
    assert json.loads(out)["genes_used"] == len(chosen)
    expected = run_cli(capsys, "evaluate", path, "--genes", _indices(tmp_path, chosen),
                       "--columns", "--k", "1", "--cv", "2")[1]
    assert json.loads(out)["accuracy"] == json.loads(expected)["accuracy"]
    assert json.loads(out)["genes"] == [names[j] for j in sorted(chosen)]
    assert json.loads(out)["note"] == IN_SAMPLE_NOTE  # a signature: in-sample on its samples
    assert "in-sample and optimistically biased" in IN_SAMPLE_NOTE


def _indices(folder, columns):
    path = folder / "columns.txt"
    path.write_text("".join(f"{j}\n" for j in columns))
    return path


# ------------------------------------------------------------------ one name rule
def test_loading_and_convert_share_the_name_rule(tmp_path, capsys):
    """A name with surrounding spaces is the same name without them: a file holding both is
    refused by loading as convert refuses it, and a lone such name is loaded as convert
    would write it."""
    rng = np.random.default_rng(2)
    foreign = Dataset(X=rng.normal(size=(4, 3)), y=np.array([0, 1, 0, 1]),
                      class_names=["a", "b"], gene_names=[" TP53", "TP53", "MYC "], attrs={})
    write_dataset(foreign, tmp_path / "foreign.h5")
    status, _, err = run_cli(capsys, "info", tmp_path / "foreign.h5")
    assert_one_error(status, err, "duplicate gene name: 'TP53'", "written ' TP53' and 'TP53'")
    (tmp_path / "t.csv").write_text("sample, TP53,TP53,label\ns1,1,2,a\ns2,3,4,b\ns3,5,6,a\n"
                                    "s4,7,8,b\n")
    status, _, err = run_cli(capsys, "convert", tmp_path / "t.csv", tmp_path / "t.h5",
                             "--label", "label")
    assert_one_error(status, err, "duplicate gene name: 'TP53'")
    lone = Dataset(X=rng.normal(size=(4, 2)), y=np.array([0, 1, 0, 1]), class_names=[" a", "b"],
                   gene_names=[" TP53", "MYC "], sample_names=["s1 ", "s2", "s3", "s4"],
                   attrs={})
    write_dataset(lone, tmp_path / "lone.h5")
    opened = open_dataset(tmp_path / "lone.h5")
    assert opened.gene_names == ["TP53", "MYC"] and opened.class_names == ["a", "b"]
    assert opened.sample_names[0] == "s1"


# ------------------------------------------------------------------ carriage returns, digits
CARRIAGE = ["crlf\r\nin", "cr\rin", "lf\nin", "plain"]
"""Names holding line ends of every kind inside them."""


def test_a_quoted_carriage_return_reads_back(tmp_path):
    """A line ``\\r\\n`` inside a quoted name is part of the name, not a line end."""
    path = tmp_path / "genes.tsv"
    path.write_bytes(gene_table((), [(n, j) for j, n in enumerate(CARRIAGE)]).encode())
    listed = read_gene_list(path)
    assert (listed.entries, listed.written) == (CARRIAGE, True)
    wide = tmp_path / "wide.tsv"  # saved again by a Windows editor as UTF-16
    wide.write_bytes(gene_table((), [(n, j) for j, n in enumerate(CARRIAGE)]).encode("utf-16"))
    assert read_gene_list(wide).entries == CARRIAGE


def test_a_bare_carriage_return_in_an_unquoted_name_is_one_line(tmp_path, capsys):
    (tmp_path / "genes.tsv").write_bytes(b"gene\tfeature\tcolumn\na1_21652\t1\t0\nx\ry\t2\t1\n")
    status, out, err = run_cli(capsys, "evaluate", "builtin:srbct", "--genes",
                               tmp_path / "genes.tsv")
    assert_one_error(status, err, "genes.tsv: line 3: a line end inside an unquoted field")
    assert out == ""


@pytest.mark.parametrize("entry", ["²", "١", "５", "--3", "3-", "-1"])
def test_only_ascii_digits_are_columns(entry):
    """Python's ``int`` reads superscripts and other scripts' digits; ``--columns`` never
    does."""
    with pytest.raises(ParameterError, match=f"'{entry}' is no 0-based column in \\[0, 8\\)"):
        mask_from_genes([entry], [f"g{j}" for j in range(8)], columns=True)


def test_every_list_and_table_the_tool_writes_reads_back_the_dataset_names(tmp_path, capsys):
    """A job's signature, ``report --genes`` and ``report --csv``'s genes.csv: every gene name,
    line ends inside it included, reads back exactly (the lists through ``evaluate --genes``,
    the table through :mod:`csv`)."""
    rng = np.random.default_rng(4)
    names = [name.strip() for name in AWKWARD] + CARRIAGE[:2]
    y = np.array([0, 1] * 4)
    write_dataset(Dataset(X=rng.normal(size=(8, len(names))) + y[:, None], y=y,
                          class_names=["a", "b"], gene_names=names, attrs={}),
                  tmp_path / "d.h5")
    (tmp_path / "job.toml").write_text(
        f'data = "{tmp_path / "d.h5"}"\nalgorithm = "all-genes"\nprotocol = "final-signature"\n'
        f'folds = 2\nrefine = "none"\noutput = "{tmp_path / "r.h5"}"\n[fitness]\ncv = 2\n')
    assert run_cli(capsys, "run", tmp_path / "job.toml", "--quiet")[0] == 0
    status, _, err = run_cli(capsys, "report", tmp_path / "r.h5", "--genes", tmp_path / "rep.tsv",
                             "--csv", tmp_path / "csv", "--top", len(names))
    assert status == 0, err
    for listed in (tmp_path / "r.signature.tsv", tmp_path / "rep.tsv"):
        assert sorted(read_gene_list(listed).entries) == sorted(names)
        status, out, err = run_cli(capsys, "evaluate", tmp_path / "d.h5", "--genes", listed,
                                   "--cv", "2")
        assert status == 0, err
        assert json.loads(out)["genes_used"] == len(names)
    with open(tmp_path / "csv" / "genes.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["gene"] for row in rows) == sorted(names)


# ------------------------------------------------------------------ lists other tools save
SAVED_ELSEWHERE = {
    "cr-line-ends": b"gene\tfeature\tcolumn\rMYC\t2\t1\rEGFR\t3\t2\r",
    "cr-plain-list": b"# mine\rMYC\r\rEGFR",
    "one-gene-column": b"gene\nMYC\nEGFR\n",
    "one-gene-column-cr": b"gene\rMYC\rEGFR\r",
    "r-write-table": b'"gene"\t"feature"\t"column"\n"MYC"\t"2"\t"1"\n"EGFR"\t"3"\t"2"\n',
    "r-write-table-one-column": b'"gene"\r\n"MYC"\r\n"EGFR"\r\n',
}
"""The genes MYC and EGFR as other tools save a list: lines ended by bare carriage returns
(classic Mac OS, Excel's tab-delimited text for Macintosh), a single ``gene`` column with
its header, every field quoted (R's ``write.table``)."""


@pytest.mark.parametrize("case", sorted(SAVED_ELSEWHERE))
def test_a_list_saved_by_another_tool_reads_its_genes(tmp_path, case):
    path = tmp_path / "genes.txt"
    path.write_bytes(SAVED_ELSEWHERE[case])
    assert read_gene_list(path).entries == ["MYC", "EGFR"]


def _tiny_table(folder):
    """A CSV table of 3 genes (TP53, MYC, EGFR) and a label column, 6 samples."""
    path = folder / "t.csv"
    path.write_text("sample,TP53,MYC,EGFR,label\ns1,1,2,0,a\ns2,3,4,1,b\ns3,5,6,0,a\n"
                    "s4,7,8,1,b\ns5,1,3,0,a\ns6,8,8,1,b\n")
    return path


@pytest.mark.parametrize("data", ["csv", "h5"])
@pytest.mark.parametrize("case", sorted(SAVED_ELSEWHERE))
def test_evaluate_reads_a_list_saved_by_another_tool(tmp_path, capsys, case, data):
    """``evaluate --genes`` on a CSV table and on its converted file: each list selects MYC
    and EGFR, as the list of their columns does."""
    table = _tiny_table(tmp_path)
    if data == "h5":
        assert run_cli(capsys, "convert", table, tmp_path / "t.h5", "--label", "label")[0] == 0
        table = tmp_path / "t.h5"
    listed = tmp_path / "genes.txt"
    listed.write_bytes(SAVED_ELSEWHERE[case])
    status, out, err = run_cli(capsys, "evaluate", table, "--genes", listed, "--cv", "2")
    assert status == 0, err
    expected = json.loads(run_cli(capsys, "evaluate", table, "--genes",
                                  _indices(tmp_path, [1, 2]), "--columns", "--cv", "2")[1])
    result = json.loads(out)
    assert result["genes"] == ["MYC", "EGFR"]
    assert result.pop("note", IN_SAMPLE_NOTE) == IN_SAMPLE_NOTE and result == expected


# ------------------------------------------------------------------ names, never positions
def test_a_number_that_names_no_gene_is_an_error_naming_its_line(tmp_path, capsys):
    """Genes named by Entrez ids: ``40`` names no gene, so the list is refused at its line
    (it used to select column 40 in silence); ``--columns`` reads columns when wanted."""
    table = tmp_path / "t.csv"
    table.write_text("sample,7157,672,1956,label\ns1,1,2,0,a\ns2,3,4,1,b\ns3,5,6,0,a\n"
                     "s4,7,8,1,b\ns5,1,3,0,a\ns6,8,8,1,b\n")
    listed = tmp_path / "genes.txt"
    listed.write_text("# TP53 and one more\n7157\n\n2\n")
    status, out, err = run_cli(capsys, "evaluate", table, "--genes", listed, "--cv", "2")
    assert_one_error(status, err, f"{listed}: line 4: '2' names no gene of the dataset",
                     "evaluate --columns")
    assert out == ""
    listed.write_text("7157\n1956\n")
    status, out, err = run_cli(capsys, "evaluate", table, "--genes", listed, "--cv", "2")
    assert status == 0, err
    result = json.loads(out)
    assert result["genes"] == ["7157", "1956"] and "note" not in result  # typed by hand
    listed.write_text("0\n2\n")
    status, out, err = run_cli(capsys, "evaluate", table, "--genes", listed, "--columns",
                               "--cv", "2")
    assert status == 0, err
    assert json.loads(out)["genes"] == ["7157", "1956"]
