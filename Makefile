# Two commands do all the set-up: `make demo` and `make test`.
# Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-all test-slow test-oldest checks lint bench docs clean

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

# The oldest versions pyproject.toml allows, in a venv of their own: uv (installed in a venv
# inside .venv-oldest) resolves every direct requirement of the package and of the extras
# `make test` installs to its lowest version with a wheel for this Python (lowest-direct; the
# packages they pull in get their newest compatible versions).  torch stays out of that
# resolution (uv does not see the local CPU build): 2.13.0 is installed first, as above.
# tools/check_floors.py then fails if any requirement was installed above its declared floor.
OLDEST := .venv-oldest
OLDEST_PY := $(OLDEST)/bin/python
OLDEST_STAMP := $(OLDEST)/.installed
OLDEST_EXTRAS := dev docs dask shap
empty :=
comma := ,
space := $(empty) $(empty)

$(OLDEST_STAMP): pyproject.toml tools/check_floors.py
	rm -rf $(OLDEST)
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST_PY) -m pip install --quiet --upgrade pip
	$(PYTHON) -m venv $(OLDEST)/uv
	$(OLDEST)/uv/bin/python -m pip install --quiet uv
	echo 'torch ; sys_platform == "never"' > $(OLDEST)/no-torch.txt
	$(OLDEST)/uv/bin/uv pip compile pyproject.toml $(addprefix --extra ,$(OLDEST_EXTRAS)) \
	    --resolution lowest-direct --only-binary :all: --python $(OLDEST_PY) \
	    --override $(OLDEST)/no-torch.txt --quiet --no-header -o $(OLDEST)/lowest.txt
	$(OLDEST_PY) -m pip install --quiet "torch==2.13.0" || echo "torch 2.13.0 CPU build not served here; the package's torch>=2.1 requirement will be used"
	$(OLDEST_PY) -m pip install --quiet -c $(OLDEST)/lowest.txt \
	    -e ".[$(subst $(space),$(comma),$(OLDEST_EXTRAS))]"
	$(OLDEST_PY) tools/check_floors.py $(OLDEST_EXTRAS)
	touch $(OLDEST_STAMP)

# The fast tier on the oldest versions allowed (a fresh .venv-oldest whenever pyproject.toml
# changes: some 6 minutes of installing, then the fast tier).  Needs the package registry;
# not part of `make test` or CI.
test-oldest: $(OLDEST_STAMP)
	$(OLDEST_PY) -m pytest -q -n 2 --dist loadgroup -m "not slow" --durations=10

# Lint and the documentation build, before any test.
checks: $(STAMP)
	$(PY) -m ruff check distboost tests benchmarks examples docs tools
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

# The fast tier: every test not marked slow, on two pytest-xdist workers of one torch thread
# each (tests/conftest.py), hypothesis' "fast" profile.  The target is two minutes on a quiet
# 2-core machine: pytest's part took 74 s in a fresh clone on one such machine (2026-11-27,
# later), and 145-168 s on a slower one earlier that day (issue 30).  The ten slowest tests
# are printed to keep it in view.
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
	$(PY) -m ruff check distboost tests benchmarks examples tools

# Peers for side-by-side benchmarks (never required by the package).
bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) -m pip install --quiet --no-deps lightgbmlss xgboostlss

clean:
	rm -rf $(VENV) $(OLDEST) build *.egg-info
