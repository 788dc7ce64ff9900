# Two commands do all the set-up: `make demo` and `make test`.
# Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Install the CPU build of torch first where a local one is served (fast, no CUDA download),
# then the package with its dev extra.
$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet "torch==2.13.0" || echo "torch 2.13.0 CPU build not served here; the package's torch>=2.1 requirement will be used"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m distboost demo

test: $(STAMP)
	$(PY) -m ruff check distboost tests benchmarks examples
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check distboost tests benchmarks examples

# Peers for side-by-side benchmarks (never required by the package).
bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) -m pip install --quiet --no-deps lightgbmlss xgboostlss

clean:
	rm -rf $(VENV) build *.egg-info
