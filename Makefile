# `make demo`: set up a local virtual environment and run the main job on the bundled dataset.
# `make test`: the README's test command, within 5 minutes on an idle 2-core machine: set up the
# same environment, run the tests not marked `slow` serially, then the collective ones among them
# (a representative subset) under mpiexec -n 2.
# `make check`: everything CI runs (.ci/run): `make test`, then `make test-full`: the tests marked
# `slow` (serially, and the collective ones under mpiexec -n 2), the rank-invariance tests under
# 3 and 4 ranks, and `make docs`.
# `make docs`: the same environment with the `docs` extra, then the user guide in docs/_build/html,
# warnings as errors; building runs every example of README.md and docs/ (docs/_ext/run_examples.py).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hpcswarm-installed
DEMO_OUT ?= demo-output
DOCS_STAMP := $(VENV)/.hpcswarm-docs-installed

.PHONY: setup demo test test-serial test-mpi check test-full test-slow test-mpi-slow test-ranks \
	docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[mpich,test,anndata,plot,studies]'
	touch $(STAMP)

demo: setup
	mkdir -p $(DEMO_OUT)
	$(BIN)/mpiexec -n 2 $(BIN)/python -m hpcswarm info builtin:srbct
	$(BIN)/mpiexec -n 2 $(BIN)/python -m hpcswarm evaluate builtin:srbct --all --k 1 --cv loo
	$(BIN)/mpiexec -n 2 $(BIN)/python -m hpcswarm run jobs/pso-lsrg-srbct-unbiased.toml \
		--set data=builtin:srbct --set runs=1 --set n_particles=30 --set n_iterations=20 \
		--set ls_tries=20 --set output=$(DEMO_OUT)/pso-lsrg-srbct.h5 --overwrite
	$(BIN)/python -m hpcswarm report $(DEMO_OUT)/pso-lsrg-srbct.h5

test: test-serial test-mpi

test-serial: setup
	$(BIN)/python -m pytest -q -m "not slow" tests

# `timeout` turns a hang into a failure.
test-mpi: setup
	timeout 600 $(BIN)/mpiexec -n 2 $(BIN)/python -m pytest -q -m "mpi and not slow" tests

check: test test-full

test-full: test-slow test-mpi-slow test-ranks docs

# Serially: the slow tests that start their own mpiexec, and the slow collective ones on one rank.
test-slow: setup
	$(BIN)/python -m pytest -q -m slow tests

# The slow collective tests under 2 ranks (there may be none: pytest's status 5, no test
# collected, passes).
test-mpi-slow: setup
	timeout 900 $(BIN)/mpiexec -n 2 $(BIN)/python -m pytest -q -m "mpi and slow" tests || [ $$? -eq 5 ]

# The rank-count invariance tests under 3 and 4 ranks (oversubscribed on small machines:
# correct, just slower).
test-ranks: setup
	timeout 600 $(BIN)/mpiexec -n 3 $(BIN)/python -m pytest -q -m mpi tests/test_mpi_invariance.py tests/test_mpi_comm.py
	timeout 600 $(BIN)/mpiexec -n 4 $(BIN)/python -m pytest -q -m mpi tests/test_mpi_invariance.py tests/test_mpi_comm.py

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[mpich,test,anndata,plot,studies,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m pytest -q tests/test_docs_tools.py
	rm -rf docs/_build/html docs/_build/doctrees
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

clean:
	rm -rf $(VENV) $(DEMO_OUT) docs/_build docs/_generated
