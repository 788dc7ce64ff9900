# Two commands do all the set-up: `make demo` and `make test`.
# Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Install the CPU build of torch first where a local one is served (fast, no CUDA download),
# then the package with its dev extra.
$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet "torch==2.13.0" || echo "torch 2.13.0 CPU build not served here; the package's torch>=2.1 requirement will be used"
	$(PY) -m pip install --quiet -e ".[dev,docs]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m distboost demo

test: $(STAMP)
	$(PY) -m ruff check distboost tests benchmarks examples docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site
	$(PY) -m pytest -q -n 2

docs: $(STAMP)
	$(PY) docs/make_gallery.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(PY) -m ruff check distboost tests benchmarks examples

# Peers for side-by-side benchmarks (never required by the package).
bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) -m pip install --quiet --no-deps lightgbmlss xgboostlss

clean:
	rm -rf $(VENV) build *.egg-info
