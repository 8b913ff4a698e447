"""Shared fixtures: where the real datasets of ``../shared/data`` are; files not forced to
disk; and the cases of parametrized tests that are marked slow one by one."""

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

SLOW_CASES = (
    # Cases of a parametrized test that `make check` runs and `make test` leaves out (marked
    # `slow` at collection); the test's other cases stay in `make test`. CPU seconds measured
    # one file at a time, the imports of a pytest start left out.
    "tests/test_reference_results.py::test_job_matches_reference[cbpso-biased]",  # 43 s
    "tests/test_signals_and_limits.py::test_report_past_a_file_size_limit_is_one_line[--json]",
    "tests/test_signals_and_limits.py::test_report_past_a_file_size_limit_is_one_line"
    "[--markdown]",  # 5 s each; --genes stays
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[5-5-False]",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[5-5-True]",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[loo-1-False]",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[loo-1-True]",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[5-1-True]",
    "tests/test_fitness_balanced.py::test_every_path_counts_per_class_as_sklearn_predicts"
    "[1-loo-True]",
    "tests/test_fitness_balanced.py::test_every_path_counts_per_class_as_sklearn_predicts"
    "[1-loo-False]",  # 6 s each (one scikit-learn fit per sample and subset)
    "tests/test_fitness_knn.py::test_agrees_with_sklearn_on_random_data[loo-3]",
    "tests/test_fitness_knn.py::test_agrees_with_sklearn_on_random_data[loo-5]",
    "tests/test_mpi_commands.py::test_an_error_prints_once[argv3-fragments3]",
    # The slowest cases of the rest (pytest --durations, 2026-11-27): `make test` ran 327 s of
    # serial tests in CI's clone; these 19 took 76 s of it, and another case of each kind
    # (or the same check on other data) stays in `make test`.
    "tests/test_signals_and_limits.py::test_report_past_a_file_size_limit_is_one_line"
    "[--genes]",  # 11.5 s; the convert and run limits stay
    "tests/test_typing.py::test_documented_examples_pass_mypy_and_a_misspelt_setting_does_not",
    "tests/test_signals_and_limits.py::test_sigterm_during_a_single_search_leaves_no_output",
    "tests/test_reference_results.py::test_job_matches_reference[pso-lsrg-unbiased]",
    "tests/test_reference_results.py::test_job_matches_reference[cso-holdout]",
    "tests/test_write_faults.py::test_checkpoint_write_on_a_full_disk_keeps_the_previous_one",
    "tests/test_write_faults.py::test_a_killed_write_leaves_a_temporary_the_next_run_removes",
    "tests/test_write_faults.py::test_a_damaged_checkpoint_points_to_overwrite",
    "tests/test_checkpoint.py::test_the_checkpoint_holds_finished_tasks_and_the_swarms_of_running"
    "_ones",
    "tests/test_checkpoint.py::test_resume_without_a_checkpoint_starts_from_the_beginning",
    "tests/test_slurm.py::test_shellcheck[run_lsrg.sh]",
    "tests/test_fitness_gpu.py::test_the_gpu_benchmark_streams_its_figures_small_on_the_host",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[loo-5-False]",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[loo-5-True]",
    "tests/test_protocols.py::test_the_search_reads_the_memory_mapped_gene_major_file[biased]",
    "tests/test_report.py::test_text_csv_markdown_json_and_plots",
    "tests/test_report.py::test_plots_of_every_method",
    "tests/test_fitness_knn.py::test_integer_data_with_forced_ties_follow_the_documented_rules"
    "[loo-1]",
    # Then (2026-11-29; CPU seconds with one BLAS thread, of the 149 s the serial pass of
    # `make test` took, 93 s after these and the shared fixtures of that day): another case
    # of each kind stays in `make test`.
    "tests/test_records.py::test_reading_results_loads_no_engine"
    "[hpcswarm.results.files]",  # 1.3 s; hpcswarm.results.report, which imports it, stays
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data"
    "[5-1-False]",  # 1.2 s; holdout-1 and holdout-5 stay
    "tests/test_mpi_commands.py::test_an_error_prints_once[argv1-fragments1]",
    "tests/test_mpi_commands.py::test_an_error_prints_once[argv2-fragments2]",  # 0.8, 0.6 s
    "tests/test_fitness_balanced.py::test_the_gpu_code_path_and_sample_shards_count_per_class"
    "_as_sklearn[1-loo]",  # 1.2 s; 3-5 and 1-holdout stay
    # 0.3 s each: searches on six subsamples per case; seeds 0 and 2 (where the search itself
    # misses a planted gene) stay for each rule, seed 0 for the frequencies
    "tests/test_subsample.py::test_planted_genes_are_kept_and_noise_dropped[stability-1]",
    "tests/test_subsample.py::test_planted_genes_are_kept_and_noise_dropped[stability-3]",
    "tests/test_subsample.py::test_planted_genes_are_kept_and_noise_dropped[stability-5]",
    "tests/test_subsample.py::test_planted_genes_are_kept_and_noise_dropped[consensus-1]",
    "tests/test_subsample.py::test_planted_genes_are_kept_and_noise_dropped[consensus-3]",
    "tests/test_subsample.py::test_planted_genes_are_kept_and_noise_dropped[consensus-5]",
    "tests/test_subsample.py::test_the_subsamples_keep_the_planted_genes_far_more_often_than"
    "_noise[1]",
    "tests/test_subsample.py::test_the_subsamples_keep_the_planted_genes_far_more_often_than"
    "_noise[2]",
    "tests/test_subsample.py::test_the_subsamples_keep_the_planted_genes_far_more_often_than"
    "_noise[3]",
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the :data:`SLOW_CASES` slow; a listed case whose test was collected without it
    (a renamed parameter) is an error, so that it cannot return to `make test` unseen,
    unless the command line named single cases (``pytest 'tests/test_x.py::test_y[case]'``)."""
    collected = {item.nodeid: item for item in items}
    tests = {nodeid.split("[")[0] for nodeid in collected}
    named_cases = config is not None and any("[" in arg for arg in config.args)
    for case in SLOW_CASES:
        if case in collected:
            collected[case].add_marker(pytest.mark.slow)
        elif case.split("[")[0] in tests and not named_cases:
            raise pytest.UsageError(f"conftest.SLOW_CASES: {case} is not a collected case")


@pytest.fixture(scope="session")
def shared_data():
    """Folder of the real microarray files (read-only); the tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not present")
    return SHARED_DATA


@pytest.fixture(scope="session", autouse=True)
def files_are_not_forced_to_disk():
    """``os.fsync`` returns at once in the test process. What the tests check of a write (a
    temporary renamed whole, nothing left behind) does not depend on it, and on a busy disk
    each call costs milliseconds of waiting; the tests of a failing flush replace it with
    their own failing one (``tests/test_write_faults.py``), as before."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", lambda handle: None)
        yield


@pytest.fixture(autouse=True)
def _warnings_shown_once_per_test(monkeypatch):
    """hpcswarm shows each of its notes once per process; each test is a process of its own
    in that respect, so that a test that expects a note sees it whatever ran before."""
    monkeypatch.setattr("hpcswarm.fitness.folds._WARNED", set())
