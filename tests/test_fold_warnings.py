"""A fold warning names the user's line, not hpcswarm's, and is shown once per process."""

import warnings

import numpy as np

from hpcswarm.fitness import FoldWarning, KnnEvaluator, make_folds

SMALL_CLASS = np.repeat([0, 1], [4, 16])  # class 0 has fewer samples than 5 folds


def _caught(call, monkeypatch):
    monkeypatch.setattr("hpcswarm.fitness.folds._WARNED", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, FoldWarning)]


def test_the_warning_points_at_the_callers_line(monkeypatch):
    (direct,) = _caught(lambda: make_folds(SMALL_CLASS, 5, seed=0), monkeypatch)
    assert direct.filename == __file__
    X = np.random.default_rng(0).normal(size=(SMALL_CLASS.size, 3))
    (nested,) = _caught(lambda: KnnEvaluator(X, SMALL_CLASS, k=1, cv=5, seed=0), monkeypatch)
    assert nested.filename == __file__  # through the evaluator: still this line


def test_the_outer_folds_training_parts_warn_once(monkeypatch):
    def inner_folds_of_each_outer_fold():
        y = np.repeat([0, 1], [7, 40])
        for train, _ in make_folds(y, 2, seed=1):
            make_folds(y[train], 5, seed=2)  # class 0: 3 samples in one part, 4 in the other

    caught = _caught(inner_folds_of_each_outer_fold, monkeypatch)
    assert len(caught) == 1 and "class(es) 0 (" in str(caught[0].message)


def test_the_command_line_shows_it_as_one_line(tmp_path):
    """Not after the interpreter's frame (``<frozen runpy>:88: FoldWarning: ...``)."""
    from cli_checks import run_subprocess

    rows = "".join(f"s{i},{'AB'[i == 5]},{i},{i % 3}\n" for i in range(6))
    (tmp_path / "d.csv").write_text("sample,class,g1,g2\n" + rows)
    done = run_subprocess("evaluate", tmp_path / "d.csv", "--all", "--cv", "3")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "hpcswarm: warning: stratified 3-fold: class(es) 'B' (1) have fewer samples than "
        "folds, "
        "so some test folds hold none of them (scikit-learn's StratifiedKFold, kept as it "
        "accepts these labels); cv='loo' (leave-one-out) tests every sample alone"]


def test_a_single_search_names_a_small_class_by_its_name(tmp_path):
    """``run --algorithm`` draws its folds on class codes, as ``evaluate`` does: the warning
    calls the class ``'B'``, as ``select`` on the same labels does, not ``1``."""
    from cli_checks import run_subprocess

    rows = "".join(f"s{i},{'AB'[i == 5]},{i},{i % 3}\n" for i in range(6))
    (tmp_path / "d.csv").write_text("sample,class,g1,g2\n" + rows)
    done = run_subprocess("run", "--data", tmp_path / "d.csv", "--algorithm", "sfs",
                          "--param", "cv=3", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "class(es) 'B' (1) have fewer samples than folds" in done.stderr


def test_inside_cross_val_score_each_note_is_shown_once_with_its_fix():
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    from hpcswarm.errors import SettingNote
    from hpcswarm.selector import SwarmFeatureSelector

    y = np.repeat([0, 1, 2], [6, 20, 20])
    X = np.random.default_rng(0).normal(size=(y.size, 30)) + y[:, None]
    model = make_pipeline(SwarmFeatureSelector("vlpso", n_particles=4, n_iterations=2,
                                               random_state=0), KNeighborsClassifier(1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_val_score(model, X, y, cv=3)
    notes = [w for w in caught if issubclass(w.category, SettingNote)]
    folds = [w for w in caught if issubclass(w.category, FoldWarning)]
    assert len(notes) == 1 and "pass n_divisions=4" in str(notes[0].message)
    assert len(folds) == 1 and "cv=4 puts each class in every test fold, cv='loo'" in str(
        folds[0].message)
