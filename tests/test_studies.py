"""The method-choice studies of ``studies/`` on tiny data: each still runs against the package
and prints (or returns) its figures. The studies themselves take minutes to hours; these
check that a change of the package has not left one behind."""

import hashlib
import json

import h5py
import numpy as np
import pytest

from hpcswarm.comm import SerialComm
from hpcswarm.data import Dataset, write_dataset
from studies import (srbct_pso_lsrg, study_peers, study_prune, study_refine, study_refined,
                     study_relevance_variants, study_signature, study_vlpso_default, study_wine)
from studies.design_sets import PLANTED, data_path

TINY_SWARM = {"n_particles": 4, "n_iterations": 2}
TINY_JOB = ("runs=2", "folds=3", "params.n_particles=4", "params.n_iterations=2",
            "params.ls_tries=2")
"""Experiment II reduced to 2 runs of 3 folds and a swarm of 4 particles for 2 rounds."""


@pytest.mark.slow
def test_the_pruning_study_prints_every_rule(capsys):
    study_prune.main(2, (1.6,))
    out = capsys.readouterr().out
    assert "s = 1.6: 2 replicates" in out
    for rule in study_prune.RULES:
        assert f"  {rule} " in out


@pytest.mark.slow
def test_the_wine_study_finds_the_exhaustive_optimum(capsys):
    study_wine.main(1, params=TINY_SWARM)
    out = capsys.readouterr().out
    assert "exhaustive: 8191 subsets, best 177/178" in out  # min-max scaled wine, 1-NN LOO
    assert "cbpso: reached 177/178 in " in out and "pso-lsrg: reached 177/178 in " in out


def test_the_srbct_reproduction_prints_its_means(capsys):
    srbct_pso_lsrg.main(1, 3, {**TINY_SWARM, "ls_tries": 2})
    out = capsys.readouterr().out
    assert out.startswith("seed 3: accuracy ") and "mean over 1 seeds: accuracy " in out


@pytest.fixture(scope="module")
def refine_work(tmp_path_factory):
    """The refinement study's cache after its two steps, on a small planted-signal set in
    place of the synthetic design set (3 classes of 10 samples, 40 genes, the first
    ``PLANTED`` informative)."""
    work = tmp_path_factory.mktemp("study")
    rng = np.random.default_rng(7)
    y = np.repeat(np.arange(3), 10)
    X = rng.normal(size=(30, 40))
    X[:, :PLANTED] += rng.normal(0, 1.5, size=(3, PLANTED))[y]
    write_dataset(Dataset(X, y, ["A", "B", "C"], [f"g{i:02d}" for i in range(40)], None, {}),
                  data_path("synthetic", work))
    comm = SerialComm()
    output = study_refine.searches("synthetic", work, comm, overrides=TINY_JOB)
    params = {"n_particles": 4, "n_iterations": 2, "ls_tries": 2}
    study_refine.subsamples("synthetic", work, comm, params)
    return work, output


def test_the_refinement_study_tables_every_rule(refine_work):
    work, _ = refine_work
    lines = study_refine.table("synthetic", work)
    assert lines[0].startswith("synthetic (40 genes")
    assert [line.split()[0] for line in lines[2:]] == list(study_refine.RULES)


def test_the_relevance_variants_read_the_cached_searches(refine_work):
    work, _ = refine_work
    lines = study_relevance_variants.table("synthetic", work)
    rows = [line[2:16].strip() for line in lines[2:]]
    assert rows == ["PSO-LSRG", *study_relevance_variants.VARIANTS]


def _with_experiment_ii(work, output):
    """``work`` with the Experiment II file of the signature study, ``r-synthetic.h5``."""
    if not (work / "r-synthetic.h5").exists():
        (work / "r-synthetic.h5").symlink_to(output)
    return work


def test_the_signature_study_applies_its_rule(refine_work, capsys):
    work = _with_experiment_ii(*refine_work)
    table = study_signature.study(work, ["synthetic"])
    assert list(table["synthetic"]) == ["PSO-LSRG", "+prune-compact",
                                        *study_signature.COMPUTED]
    chosen, reasons = study_signature.choose(table)
    assert set(reasons) == {"+prune-compact", "+relevance-subset", "+relevance-subset-1se"}
    assert chosen is None or chosen in reasons
    study_signature.print_table(table)
    assert "| synthetic | PSO-LSRG |" in capsys.readouterr().out


def test_the_signature_study_reads_both_vlpso_jobs_on_the_same_folds(refine_work):
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job

    work = _with_experiment_ii(*refine_work)
    tiny = ["runs=2", "folds=3", f"data={data_path('synthetic', work)}", "n_particles=4",
            "n_iterations=2", "n_divisions=2"]
    for prefix, extra in (("v", ["refine=relevance-subset"]),
                          ("vls", ["refine=none", "local_search=true", "ls_tries=3"])):
        run_job(read_job("jobs/vlpso-experiment.toml",
                         [*tiny, *extra, f"output={work / f'{prefix}-synthetic.h5'}"]),
                quiet=True)
    rows = study_signature.study(work, ["synthetic"])["synthetic"]
    assert {"+VLPSO", "+VLPSO+relevance-subset", "+VLPSO-LS"} <= set(rows)
    assert "+VLPSO-LS+relevance-subset" not in rows  # that job kept its own subset
    _, reasons = study_signature.choose({"synthetic": rows})
    assert "+VLPSO-LS" in reasons
    assert "+VLPSO" not in study_signature.study(work, ["synthetic"], vlpso=False)["synthetic"]


def test_the_vlpso_default_study_tests_the_authors_code_against_the_paper_text(refine_work,
                                                                                capsys):
    from hpcswarm.results.files import read_results, task_accuracies
    from hpcswarm.results.significance import signed_rank_test
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job

    work, output = refine_work
    if not (work / "lsrg-synthetic.h5").exists():
        (work / "lsrg-synthetic.h5").symlink_to(output)
    tiny = ["runs=2", "folds=3", f"data={data_path('synthetic', work)}", "n_particles=4",
            "n_iterations=2", "n_divisions=2", "refine=none"]
    settings = {"today": ["objective=accuracy", "cv=10", "w_final=0.4", "init=normal"],
                "authors": ["objective=balanced-accuracy", "cv=loo", "w_final=none",
                            "init=uniform"]}
    for prefix, extra in settings.items():
        run_job(read_job("jobs/vlpso-experiment.toml",
                         [*tiny, *extra, f"output={work / f'{prefix}-synthetic.h5'}"]),
                quiet=True)
    study_vlpso_default.main([str(work), "synthetic"])
    out = capsys.readouterr().out
    assert "| synthetic | PSO-LSRG |" in out and "default by the rule: VLPSO" in out
    rows = study_vlpso_default.study(work, ["synthetic"])["synthetic"]
    assert list(rows) == list(study_vlpso_default.FILES)
    authors, today = (task_accuracies(read_results(work / f"{prefix}-synthetic.h5").table)
                      for prefix in ("authors", "today"))
    expected = signed_rank_test(authors, today, "less").p_value
    assert rows[study_vlpso_default.CHALLENGER]["vs_incumbent"]["p"] == expected
    below = {"p": 0.01, "n": 30, "smallest_p": 1e-9}
    table = {"a": rows, "b": {**rows, study_vlpso_default.CHALLENGER: {
        **rows[study_vlpso_default.CHALLENGER], "vs_incumbent": below}}}
    assert study_vlpso_default.choose(table) == (study_vlpso_default.INCUMBENT, ["b"])
    assert study_vlpso_default.choose({"a": rows}) == (
        (study_vlpso_default.INCUMBENT, ["a"]) if expected < study_vlpso_default.ALPHA
        else (study_vlpso_default.CHALLENGER, []))


def tiny_set(folder, seed):
    """``folder/tiny-data.h5``: 30 samples of 3 classes, 40 genes, the first 5 shifted by
    class; returns its ``X, y``."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), 10)
    X = rng.normal(size=(30, 40))
    X[:, :5] += rng.normal(0, 1.5, size=(3, 5))[y]
    write_dataset(Dataset(X, y, ["A", "B", "C"], [f"g{i:02d}" for i in range(40)], None, {}),
                  folder / "tiny-data.h5")
    return X, y


def tiny_vlpso_job(folder, prefix, *settings):
    """``jobs/vlpso-experiment.toml`` on ``folder/tiny-data.h5``, 2 runs of 3 folds and a
    swarm of 4 particles for 2 rounds, into ``folder/PREFIX-tiny.h5``."""
    from hpcswarm.run.job import run_job
    from hpcswarm.run.jobfile import read_job

    run_job(read_job("jobs/vlpso-experiment.toml",
                     ["runs=2", "folds=3", f"data={folder / 'tiny-data.h5'}", "n_particles=4",
                      "n_iterations=2", "n_divisions=2", *settings,
                      f"output={folder / f'{prefix}-tiny.h5'}"]), quiet=True)


@pytest.mark.slow
def test_the_peers_study_tests_each_peer_by_its_genes_on_the_task_rows(tmp_path, capsys):
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import MinMaxScaler

    X, y = tiny_set(tmp_path, 11)
    tiny_vlpso_job(tmp_path, "v")
    study_peers.main([str(tmp_path), "tiny", "--json", str(tmp_path / "peers.json")])
    out = capsys.readouterr().out
    assert "|  | RF-importance |" in out and "|  | RF-importance @ size |" in out
    assert "tiny, VLPSO: size_matched: " in out
    written = json.loads((tmp_path / "peers.json").read_text())["table"]["tiny"]["v"]
    assert written["rows"]["VLPSO"]["size"] > 0
    entry = study_peers.study(tmp_path, ["tiny"])["tiny"]["v"]  # from the cache this time
    rows = entry["rows"]
    assert list(rows) == ["VLPSO", *study_peers.PEERS,
                          *(study_peers.matched(peer) for peer in study_peers.PEERS)]
    assert set(entry["verdicts"]) == {"size_matched", "not_dominated", "ahead"}
    tasks, _ = study_peers.tasks_of(tmp_path / "v-tiny.h5")
    for peer in study_peers.PEERS:
        for index, task in enumerate(tasks):
            cached = f"run-{task['run']:03d}-fold-{task['fold']:02d}.json"
            stored = json.loads((tmp_path / "peers" / "tiny" / cached).read_text())["peers"][peer]
            genes, ranking = stored["genes"], stored["ranking"]
            assert sorted(ranking) == list(range(40))
            assert sorted(ranking[:len(genes)]) == genes  # its own genes lead its ranking
            size = task["genes"].size
            for row, chosen in ((peer, genes), (study_peers.matched(peer), ranking[:size])):
                scaler = MinMaxScaler().fit(X[task["train"]])
                model = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(
                    scaler.transform(X[task["train"]])[:, chosen], y[task["train"]])
                predicted = model.predict(scaler.transform(X[task["test"]])[:, chosen])
                assert rows[row]["fold_accuracy"][index] == np.mean(predicted == y[task["test"]])
        assert 0 <= rows[peer]["p_above"] <= 1 and rows[peer]["n"] <= len(tasks)
        assert rows[study_peers.matched(peer)]["size"] == rows["VLPSO"]["size"]
    # a job's refined subsets, read as a configuration of their own on the same folds
    tiny_vlpso_job(tmp_path, "w", "refine=prune")
    both = study_peers.study(tmp_path, ["tiny"], ["v", "w+refined"], baseline="v")["tiny"]
    refined = both["w+refined"]["rows"]["w+refined"]
    with h5py.File(tmp_path / "w-tiny.h5", "r") as results:
        table = results["tasks"]
        assert refined["fold_accuracy"] == list(table["refined_test_accuracy"][()])
        assert refined["size"] == np.mean(table["refined_size"][()])
        assert refined["size"] < np.mean(table["subset_size"][()])  # pruning removed genes
    for peer in study_peers.PEERS:  # the same peers on the same folds
        assert (both["w+refined"]["rows"][peer]["fold_accuracy"]
                == both["v"]["rows"][peer]["fold_accuracy"])
    assert 0 <= both["w+refined"]["vs_baseline"]["p_below"] <= 1


def test_relieff_ranks_planted_genes_first_however_many_classes():
    # twelve classes: skrebate's own default would take the labels for a regression target
    # and rank noise genes among the planted ones
    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(12), 5)
    X = rng.normal(size=(60, 50))
    X[:, :6] += 3 * rng.normal(size=(12, 6))[y]
    assert sorted(study_peers.relieff_ranking(X, y, 0)[:6]) == list(range(6))
    two = np.repeat([0, 1], 15)
    X2 = rng.normal(size=(30, 20))
    X2[:, 7] += 2.5 * two
    assert study_peers.relieff_ranking(X2, two, 0)[0] == 7


def test_a_peers_cache_gains_a_new_peer_and_keeps_the_others(tmp_path):
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 12)
    X = rng.normal(size=(24, 15))
    X[:, 4] += 3 * y
    task = {"train": np.arange(24)}
    rows = hashlib.sha256(task["train"].astype(np.int64).tobytes()).hexdigest()
    earlier = {name: {"genes": [0], "setting": 5, "seconds": 1.5, "ranking": list(range(15))}
               for name in study_peers.PEERS if name != "ReliefF"}
    cache = tmp_path / "run-000-fold-00.json"
    cache.write_text(json.dumps({"train_sha256": rows, "seed": 9, "peers": earlier}))
    peers = study_peers.cached_selections(cache, task, X, y, 9)
    assert set(peers) == set(study_peers.PEERS)
    assert {name: peers[name] for name in earlier} == earlier  # kept, not refitted
    assert peers["ReliefF"]["ranking"][0] == 4
    assert peers["ReliefF"]["genes"] == sorted(peers["ReliefF"]["ranking"][:peers["ReliefF"]
                                                                         ["setting"]])
    assert json.loads(cache.read_text())["peers"] == peers
    assert study_peers.cached_selections(cache, task, X, y, 9) == peers


def _peer_rows(size, peers):
    """A configuration's figures on one set beside the peers': ``peers`` maps each row
    name to (mean size, p that the configuration is above it, p that it is below)."""
    rows = {"c": {"size": size, "accuracy": 80.0}}
    for name, (peer_size, above, below) in peers.items():
        rows[name] = {"size": peer_size, "accuracy": 100 * (1 - below), "p_above": above,
                      "p_below": below}
    return rows


def test_the_peers_verdicts_are_the_three_conditions_of_the_rule():
    matched = study_peers.matched
    level = {peer: (10, 0.5, 0.5) for peer in study_peers.PEERS}
    even = {**level, **{matched(peer): (10, 0.5, 0.5) for peer in study_peers.PEERS}}
    assert study_peers.verdicts(_peer_rows(10, even), "c") == {
        "size_matched": True, "not_dominated": True, "ahead": False}
    below_matched = {**even, matched("RF-importance"): (10, 0.99, 0.01)}
    assert not study_peers.verdicts(_peer_rows(10, below_matched), "c")["size_matched"]
    larger = {**even, "L1-logistic": (11, 0.99, 0.01)}  # above with more genes: allowed
    assert study_peers.verdicts(_peer_rows(10, larger), "c")["not_dominated"]
    same_size = {**even, "L1-logistic": (10, 0.99, 0.01)}
    assert not study_peers.verdicts(_peer_rows(10, same_size), "c")["not_dominated"]
    above_all = {**even, **{matched(peer): (10, 0.01, 0.99) for peer in study_peers.PEERS}}
    assert study_peers.verdicts(_peer_rows(10, above_all), "c")["ahead"]
    a_third = {**even, "SelectKBest-F": (30, 0.4, 0.3)}  # the most accurate free peer
    assert study_peers.verdicts(_peer_rows(10, a_third), "c")["ahead"]
    assert not study_peers.verdicts(_peer_rows(11, a_third), "c")["ahead"]
    significant = {**even, "SelectKBest-F": (30, 0.99, 0.04)}
    assert not study_peers.verdicts(_peer_rows(10, significant), "c")["ahead"]


def test_the_peers_choice_follows_the_rule():
    def entry(size, seconds, ahead, below=0.5, above=0.5, held=True):
        return {"rows": {"x": {"size": size, "seconds": seconds}},
                "verdicts": {"size_matched": held, "not_dominated": True, "ahead": ahead},
                "vs_baseline": {"p_below": below, "p_above": above}}

    def table(**configs):  # each configuration's entries on two sets
        return {name: {prefix: {**entries[index],
                                "rows": {study_peers.label_of(prefix):
                                         entries[index]["rows"]["x"]}}
                       for prefix, entries in configs.items()}
                for index, name in enumerate(("s1", "s2"))}

    today = [entry(10, 1.0, False), entry(10, 1.0, False)]
    fewer_ahead = [entry(5, 1.0, True), entry(5, 1.0, False)]
    more_ahead = [entry(20, 2.0, True), entry(20, 2.0, True)]
    assert study_peers.choose(table(today=today, a=fewer_ahead, b=more_ahead),
                              "today") == ("b", {})
    costly = [entry(20, 3.5, True), entry(20, 3.5, True)]
    assert study_peers.choose(table(today=today, a=fewer_ahead, b=costly), "today") == (
        "a", {"b": "over the cost cap"})
    losing = [entry(5, 1.0, True, below=0.01), entry(5, 1.0, True)]
    failing = [entry(5, 1.0, True), entry(5, 1.0, True, held=False)]
    assert study_peers.choose(table(today=today, a=losing, b=failing), "today") == (
        None, {"a": "below the baseline", "b": "fails size-matched or not dominated"})


def test_the_refined_study_tests_a_job_s_refinement_against_its_search(tmp_path, capsys):
    tiny_set(tmp_path, 12)
    tiny_vlpso_job(tmp_path, "w", "refine=prune")
    entry = study_refined.compare(tmp_path / "w-tiny.h5")
    with h5py.File(tmp_path / "w-tiny.h5", "r") as results:
        table = results["tasks"]
        search, refined = table["test_accuracy"][()], table["refined_test_accuracy"][()]
        assert entry["search"]["accuracy"] == pytest.approx(100 * search.mean())
        assert entry["refined"]["accuracy"] == pytest.approx(100 * refined.mean())
        assert entry["refined"]["size"] == np.mean(table["refined_size"][()])
        assert entry["search"]["size"] == np.mean(table["subset_size"][()])
        changed = np.count_nonzero(table["refined_size"][()] != table["subset_size"][()])
    assert entry["changed"] >= changed > 0 and entry["tasks"] == 6   # pruning removed genes
    assert entry["n"] == np.count_nonzero(np.round(refined - search, 12))
    assert entry["difference"] == pytest.approx(np.mean(refined - search))
    with h5py.File(tmp_path / "w-tiny.h5", "r") as results:   # each run's folds pooled
        for row, prefix in (("search", "test"), ("refined", "refined_test")):
            recalls = []
            for run in results["runs"].values():
                correct = np.sum([f[f"{prefix}_class_correct"][()] for f in run.values()], 0)
                total = np.sum([f[f"{prefix}_class_total"][()] for f in run.values()], 0)
                recalls.append(np.mean(correct[total > 0] / total[total > 0]))
            assert entry[row]["balanced"] == pytest.approx(100 * np.mean(recalls))
    study_refined.main([str(tmp_path), "tiny", "--prefix", "w"])
    assert f"| tiny | {entry['changed']} of 6 |" in capsys.readouterr().out
    study_refined.main([str(tmp_path), "tiny", "--prefix", "w", "--over-sets"])
    assert "over the sets: " in capsys.readouterr().out


def test_the_refined_study_s_choice_is_the_fourth_rule_s():
    level, above, below = ({"verdict": verdict} for verdict in ("level", "above", "below"))
    assert study_refined.choose({"a": level, "b": above})
    assert not study_refined.choose({"a": level, "b": level})      # above on none
    assert not study_refined.choose({"a": above, "b": below})      # below on one


def test_the_refined_study_over_the_sets_is_the_fifth_rule_s():
    def sets(*differences, verdict="level"):
        return {f"s{i}": {"difference": d, "verdict": verdict} for i, d in enumerate(differences)}
    # six sets up, one level: 2 ** -6 = 0.0156 is the exact p, below 0.05 / 3
    six_up = sets(0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.0)
    assert study_refined.over_sets(six_up) == {"sets": 7, "differing": 6, "up": 6, "down": 0,
                                               "p_above": pytest.approx(2 ** -6)}
    assert study_refined.choose_over_sets(six_up)
    assert not study_refined.choose_over_sets(sets(0.01, 0.02, 0.03, 0.04, 0.05))  # 1/32
    # one down, third in rank: T+ 25 of 28, p 5/128
    assert not study_refined.choose_over_sets(sets(0.02, 0.03, 0.04, 0.05, 0.06, -0.035, 0.07))
    assert not study_refined.choose_over_sets({**six_up, "x": {"difference": 0.0,
                                                               "verdict": "below"}})
    assert study_refined.over_sets(sets(0.0, 0.0))["p_above"] == 1.0
