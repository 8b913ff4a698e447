"""Shared fixtures: where the real datasets of ``../shared/data`` are; and the cases of
parametrized tests that are marked slow one by one."""

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
    "tests/test_checkpoint.py::test_a_job_interrupted_and_resumed_gives_the_uninterrupted_results"
    "[sigterm-9]",
    "tests/test_checkpoint.py::test_a_job_interrupted_and_resumed_gives_the_uninterrupted_results"
    "[crash-in-write-6]",
    "tests/test_checkpoint.py::test_a_job_interrupted_and_resumed_gives_the_uninterrupted_results"
    "[crash-after-write-4]",  # 2 s each; sigterm-1 and crash-in-write-1 stay
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
    "tests/test_checkpoint.py::test_a_job_interrupted_and_resumed_gives_the_uninterrupted_results"
    "[sigterm-1]",
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
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the :data:`SLOW_CASES` slow; a listed case whose test was collected without it
    (a renamed parameter) is an error, so that it cannot return to `make test` unseen."""
    collected = {item.nodeid: item for item in items}
    tests = {nodeid.split("[")[0] for nodeid in collected}
    for case in SLOW_CASES:
        if case in collected:
            collected[case].add_marker(pytest.mark.slow)
        elif case.split("[")[0] in tests:
            raise pytest.UsageError(f"conftest.SLOW_CASES: {case} is not a collected case")


@pytest.fixture(scope="session")
def shared_data():
    """Folder of the real microarray files (read-only); the tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not present")
    return SHARED_DATA
