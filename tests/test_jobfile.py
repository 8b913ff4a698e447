"""Job files: schema, --set overrides, errors that name the key and the file, paths."""

import re
from pathlib import Path

import pytest

from hpcswarm.errors import ParameterError
from hpcswarm.run.jobfile import SCHEMA, read_job
from hpcswarm.selection.spec import SearchSpec

JOBS = Path(__file__).resolve().parents[1] / "jobs"
BUNDLED = sorted(JOBS.glob("*.toml"))


def read_bundled(path):
    """A bundled job; one that leaves the dataset to the user gets SRBCT from --set."""
    leaves_data = "\ndata = " not in path.read_text()
    return read_job(path, ["data=builtin:srbct"] if leaves_data else [])


def write(tmp_path, text, name="job.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


MINIMAL = 'data = "builtin:srbct"\nalgorithm = "cbpso"\n'


def test_there_are_bundled_jobs_for_every_paper():
    algorithms = {read_bundled(path).spec.algorithm for path in BUNDLED}
    assert {"pso-lsrg", "cso", "pso", "fsipso", "cbpso", "sfr", "fsr"} <= algorithms


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_job_is_valid_and_names_its_paper_table(path):
    job = read_bundled(path)
    assert job.text.startswith("#") and any(w in job.text.split("\n")[0] for w in
                                            ("Table", "Fig."))
    assert job.runs > 1 or job.spec.algorithm == "sfr"
    assert job.output.name == path.stem + ".h5"
    if not job.data.startswith(("sklearn:", "builtin:")):
        assert Path(job.data).parent.resolve() == (JOBS / "../../shared/data").resolve()


def test_experiment_ii_job_leaves_the_dataset_to_the_user():
    path = JOBS / "pso-lsrg-experiment-ii.toml"
    with pytest.raises(ParameterError, match="the required key 'data' is missing"):
        read_job(path)
    job = read_bundled(path)
    assert (job.spec.algorithm, job.protocol, job.folds, job.runs, job.spec.refine) == \
        ("pso-lsrg", "unbiased", 10, 40, "prune-compact")
    assert "Experiment II" in (JOBS / "README.md").read_text()


def test_defaults_of_a_minimal_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = read_job(write(tmp_path, MINIMAL))
    assert (job.protocol, job.folds, job.runs, job.seed, job.group_size) == ("unbiased", 10, 1,
                                                                            0, 0)
    assert job.name == "cbpso" and job.output == tmp_path / "job.h5"
    params = job.spec.params
    assert params["k"] == 1 and params["n_particles"] == 20  # the paper's defaults
    assert job.summary_path == tmp_path / "job.json"
    assert {key.name for key in SCHEMA} >= {"data", "algorithm", "protocol", "runs", "seed"}


def test_set_overrides_bare_and_dotted_keys(tmp_path):
    job = read_job(write(tmp_path, MINIMAL), ["runs=3", "n_iterations=4", "params.n_particles=6",
                                              "k=3", "protocol=holdout", "group_size=2",
                                              "fitness.cv=5", "name=My CBPSO"])
    assert (job.runs, job.protocol, job.group_size, job.name) == (3, "holdout", 2, "My CBPSO")
    assert job.spec.params["n_iterations"] == 4 and job.spec.params["n_particles"] == 6
    assert job.spec.params["k"] == 3 and job.spec.params["cv"] == 5
    assert job.overrides[0] == "runs=3"


@pytest.mark.parametrize("text, overrides, message", [
    (MINIMAL + "speed = 3\n", [], r"job.toml: key 'speed' is unknown"),
    (MINIMAL + "runs = 'ten'\n", [], r"job.toml: key 'runs' must be an integer"),
    (MINIMAL + "runs = 0\n", [], r"job.toml: key 'runs' must be an integer >= 1"),
    (MINIMAL + "seed = true\n", [], r"key 'seed' must be an integer"),
    (MINIMAL + "protocol = 'crossed'\n", [], r"key 'protocol' must be one of unbiased"),
    (MINIMAL + "[params]\nspeed = 1\n", [], r"key 'params.speed' is not a parameter of cbpso"),
    (MINIMAL + "[params]\nk = 3\n", [], r"key 'params.k': put fitness settings in \[fitness\]"),
    (MINIMAL + "[fitness]\nk = 'many'\n", [], r"job.toml: key 'fitness.k'.*'k' expects an int"),
    (MINIMAL + "[fitness]\nmetric = 'x'\n", [], r"key 'fitness.metric' is unknown"),
    (MINIMAL + "[convert]\nlabel = true\n", [], r"key 'convert.label' must be str or int"),
    (MINIMAL + "[layout]\nthreads = 2\n", [], r"key 'layout.threads' is unknown"),
    (MINIMAL + "[extras]\na = 1\n", [], r"unknown table \[extras\]"),
    (MINIMAL + "output = 'out.json'\n", [], r"key 'output' must end in .h5"),
    ('algorithm = "cbpso"\n', [], r"job.toml: the required key 'data' is missing"),
    ('data = "builtin:srbct"\nalgorithm = "nope"\n', [], r"key 'algorithm'.*unknown algorithm"),
    (MINIMAL, ["runs=two"], r"job.toml: key 'runs' \(from --set\) must be an integer"),
    (MINIMAL, ["speed=3"], r"job.toml: unknown key 'speed' \(from --set\)"),
    (MINIMAL, ["n_particles=x"], r"key 'params.n_particles' \(from --set\).*expects an int"),
    (MINIMAL, ["runs"], r"--set expects key=value"),
    ("data = [1\n", [], r"job.toml: not a valid TOML job file"),
])
def test_errors_name_the_key_and_the_file(tmp_path, text, overrides, message):
    with pytest.raises(ParameterError, match=message):
        read_job(write(tmp_path, text), overrides)


@pytest.mark.parametrize("text, overrides, message", [
    (MINIMAL + "seeed = 3\n", [], "key 'seeed' is unknown (did you mean 'seed'?); known keys: "),
    (MINIMAL + "[params]\nn_particle = 4\n", [],
     "key 'params.n_particle' is not a parameter of cbpso (did you mean 'n_particles'?)"),
    (MINIMAL + "[fitness]\nobjectve = 'error'\n", [], "(did you mean 'objective'?)"),
    (MINIMAL + "[fitnes]\nk = 1\n", [], "unknown table [fitnes] (did you mean 'fitness'?)"),
    (MINIMAL + "[convert]\nlable = 'x'\n", [], "(did you mean 'label'?)"),
    (MINIMAL + "[layout]\ngroupsize = 1\n", [], "(did you mean 'group_size'?)"),
    (MINIMAL, ["rnus=2"], "unknown key 'rnus' (from --set) (did you mean 'runs'?)"),
    (MINIMAL, ["n_iteration=2"], "(did you mean 'n_iterations'?)"),
    (MINIMAL, ["algorithm=cbps"], "unknown algorithm 'cbps' (did you mean 'cbpso'?)"),
])
def test_a_mistyped_key_gets_a_suggestion(tmp_path, text, overrides, message):
    with pytest.raises(ParameterError, match=re.escape(message)):
        read_job(write(tmp_path, text), overrides)


def test_missing_job_file(tmp_path):
    with pytest.raises(ParameterError, match="no such job file"):
        read_job(tmp_path / "absent.toml")


def test_paths_in_the_file_are_relative_to_the_file_and_set_paths_to_the_cwd(tmp_path,
                                                                           monkeypatch):
    folder = tmp_path / "jobs"
    folder.mkdir()
    path = write(folder, 'data = "../data/x.arff"\nalgorithm = "cbpso"\noutput = "r.h5"\n'
                         '[convert]\nlabels = "l.txt"\n')
    monkeypatch.chdir(tmp_path)
    job = read_job(path)
    assert Path(job.data) == tmp_path / "data" / "x.arff"
    assert Path(job.convert["labels"]) == folder / "l.txt"
    assert job.output == tmp_path / "r.h5"  # outputs go where you run
    job = read_job(path, ["data=other.csv"])
    assert Path(job.data) == tmp_path / "other.csv"
    assert read_job(path, ["data=sklearn:wine"]).data == "sklearn:wine"


@pytest.mark.parametrize("override, message", [
    (f"first_run={2**63 - 1}", "first_run'.* must be an integer <= 2147483646"),
    ("runs=2147483648", "runs'.* must be an integer <= 2147483647"),
    ("first_run=2147483000", "runs first_run .. first_run\\+runs-1 must end at run 2147483647"),
    ("seed=9223372036854775808", "seed'.* must be an integer <= 9223372036854775807"),
    ("folds=9223372036854775808", "folds'.* must be an integer <="),
    ("n_particles=9223372036854775808", "n_particles' must be in \\[2, 9223372036854775807\\]"),
    ("layout.group_size=2000000", "group_size'.* must be an integer <= 1048576"),
])
def test_integer_settings_are_range_checked(tmp_path, override, message):
    sets = [override, "runs=1000"] if override.startswith("first_run=2147") else [override]
    with pytest.raises(ParameterError, match=message):
        read_job(write(tmp_path, MINIMAL), sets)


def test_protocol_choices_and_search_keys_come_from_their_registries():
    from hpcswarm.run.protocols import PROTOCOLS
    from hpcswarm.selection.spec import SPEC_PARAMS

    rows = {key.name: key for key in SCHEMA}
    assert rows["protocol"].choices == tuple(PROTOCOLS)
    for param in SPEC_PARAMS:
        key = "layout.sample_shards" if param.name == "sample_shards" else param.name
        assert (rows[key].kind, rows[key].default, rows[key].choices) == (
            param.kind, param.default, param.choices)


def test_a_job_gives_its_search_spec(tmp_path):
    job = read_job(write(tmp_path, MINIMAL + 'refine = "prune"\nmax_genes = 7\n'
                         '[preprocess]\nzscore = true\n'))
    spec = job.spec
    assert (spec.algorithm, spec.refine, spec.max_genes, spec.preprocess, spec.device) == (
        "cbpso", "prune", 7, (("zscore", None),), "cpu")
    assert spec == SearchSpec.build("cbpso", refine="prune", max_genes=7,
                                    preprocess=(("zscore", None),))
    assert job.as_dict()["params"] == spec.params and job.as_dict()["max_genes"] == 7


@pytest.mark.parametrize("override, message", [
    ("subsamples=3", "job.toml: key 'subsamples' \\(from --set\\) must be even \\(complementary "
                     "pairs of halves\\), got 3$"),
    ("algorithm=pso-lsrg", "job.toml: key 'max_genes' applies to the swarm methods .*vlpso, "
                           "not to pso-lsrg$"),
])
def test_the_specs_checks_across_settings_name_the_job_key(tmp_path, override, message):
    with pytest.raises(ParameterError, match=message):
        read_job(write(tmp_path, MINIMAL + "max_genes = 4\n"), [override])


@pytest.mark.parametrize("text, override, key", [
    ('cache = ""\n', None, "'cache'"),
    ("", 'cache=" "', "'cache' (from --set)"),
    ("", 'data=""', "'data' (from --set)"),
    ('[convert]\nlabels = ""\n', None, "'convert.labels'"),
])
def test_an_empty_path_is_refused_not_read_as_the_jobs_folder(tmp_path, text, override, key):
    """'' resolved to the job's folder: cache = "" wrote the converted dataset beside the job."""
    with pytest.raises(ParameterError, match=f"job.toml: key {re.escape(key)} must name a file "
                                             "or folder, got"):
        read_job(write(tmp_path, MINIMAL + text), [override] if override else [])


@pytest.mark.parametrize("table, fragment", [
    ('[params]\nn_particles = "8"\n',
     "key 'params.n_particles': parameter 'n_particles' expects an integer, got '8'"),
    ('[params]\nw = "0.5"\n', "key 'params.w': parameter 'w' expects a number, got '0.5'"),
    ('[fitness]\ncv = "3"\n', "key 'fitness.cv': parameter 'cv' expects 'loo', 'holdout' or an"),
])
def test_a_number_written_as_text_is_refused_in_every_table(tmp_path, table, fragment):
    """As runs = "1" is: a job file's numbers are TOML numbers."""
    with pytest.raises(ParameterError, match=re.escape(fragment)):
        read_job(write(tmp_path, MINIMAL + table))
    job = read_job(write(tmp_path, MINIMAL + '[fitness]\ncv = "loo"\n'))
    assert job.spec.params["cv"] == "loo"
