# Two commands do all the set-up: `make demo` and `make test`.
# Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-all test-slow checks lint bench docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Install the CPU build of torch first where a local one is served (fast, no CUDA download),
# then the package with its dev extra.
$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet "torch==2.13.0" || echo "torch 2.13.0 CPU build not served here; the package's torch>=2.1 requirement will be used"
	$(PY) -m pip install --quiet -e ".[dev,docs,dask,shap]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m distboost demo

# Lint and the documentation build, before any test.
checks: $(STAMP)
	$(PY) -m ruff check distboost tests benchmarks examples docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

# The fast tier: every test not marked slow, on two pytest-xdist workers of one torch thread
# each (tests/conftest.py), hypothesis' "fast" profile; the whole target takes under two
# minutes on a quiet 2-core machine.  The ten slowest tests are printed to keep it so.
test: checks
	$(PY) -m pytest -q -n 2 --dist loadgroup -m "not slow" --durations=10

# Everything: the slow tier too (scikit-learn's estimator checks, the CLI demo, the example
# comparing every family) and the full hypothesis example counts.
test-all: checks
	$(PY) -m pytest -q -n 2 --dist loadgroup --hypothesis-profile=full --durations=10

# The slow tier alone.
test-slow: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadgroup -m slow --hypothesis-profile=full

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
