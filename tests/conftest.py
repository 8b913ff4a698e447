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
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[5-5]",
    "tests/test_fitness_gpu.py::test_device_path_equals_the_cpu_path_on_tie_prone_data[loo-1]",
    "tests/test_fitness_knn.py::test_agrees_with_sklearn_on_random_data[loo-3]",
    "tests/test_fitness_knn.py::test_agrees_with_sklearn_on_random_data[loo-5]",
    "tests/test_mpi_commands.py::test_an_error_prints_once[argv3-fragments3]",
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
