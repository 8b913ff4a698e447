# `make demo`: set up a local virtual environment and run the main job on the bundled dataset.
# `make test`: set up the same environment and run the test suite but the tests marked `slow`,
# serially and under mpiexec -n 2; `make test-slow` runs those (every bundled job end to end, ...).
# `make docs`: the same environment with the `docs` extra, then the user guide in docs/_build/html,
# warnings as errors; building runs every example of README.md and docs/ (docs/_ext/run_examples.py).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hpcswarm-installed
DEMO_OUT ?= demo-output
DOCS_STAMP := $(VENV)/.hpcswarm-docs-installed

.PHONY: setup demo test test-serial test-mpi test-slow docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[mpich,test,anndata,plot]'
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

# The slow tests start their own mpiexec where they need ranks (no collective test is slow).
test-slow: setup
	$(BIN)/python -m pytest -q -m slow tests

# The collective tests under 2 ranks, then the rank-count invariance tests under 3 and 4 ranks
# (oversubscribed on small machines: correct, just slower); `timeout` turns a hang into a failure.
test-mpi: setup
	timeout 900 $(BIN)/mpiexec -n 2 $(BIN)/python -m pytest -q -m "mpi and not slow" tests
	timeout 600 $(BIN)/mpiexec -n 3 $(BIN)/python -m pytest -q -m mpi tests/test_mpi_invariance.py tests/test_mpi_comm.py
	timeout 600 $(BIN)/mpiexec -n 4 $(BIN)/python -m pytest -q -m mpi tests/test_mpi_invariance.py tests/test_mpi_comm.py

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[mpich,test,anndata,plot,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m pytest -q tests/test_docs_tools.py
	rm -rf docs/_build/html docs/_build/doctrees
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

clean:
	rm -rf $(VENV) $(DEMO_OUT) docs/_build docs/_generated
