"""pytest configuration shared by the test suite.

* The ``slow`` marker (declared in ``pyproject.toml``): the heavy tier (scikit-learn's
  estimator checks, the example comparing every family, the CLI demo).  ``make test`` runs
  ``-m "not slow"`` (its target: two minutes on a quiet 2-core machine), ``make test-all`` runs
  everything.  A slow test must not be the only test of a capability: every family and
  estimator keeps a fast test.
* One torch thread (and one BLAS / OpenMP thread, through threadpoolctl) per pytest-xdist
  worker: ``pytest -n 2`` already keeps both cores busy,
  and a second intra-op thread per worker only makes the OpenMP threads of the two workers
  spin against each other (see "Threads and a busy machine" in ``docs/engine.md``).
  LightGBM is single-threaded below 10,000 rows by the engine's own rule.
* Hypothesis profiles: ``fast`` (loaded here: ``FAST_EXAMPLES`` examples per property) and
  ``full`` (hypothesis' default of 100), chosen with hypothesis' own option
  ``--hypothesis-profile=full`` (``make test-all``).  A property with its own count writes
  ``max_examples=min(n, settings.default.max_examples)``: ``n`` examples in the full
  profile, at most ``FAST_EXAMPLES`` in the fast one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from threadpoolctl import threadpool_limits

FAST_EXAMPLES = 5

settings.register_profile("full", max_examples=100)
settings.register_profile("fast", max_examples=FAST_EXAMPLES)
settings.load_profile("fast")


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        torch.set_num_threads(1)
        # NumPy's / SciPy's BLAS and scikit-learn's OpenMP too: two workers of two spinning
        # BLAS threads each on two cores made SciPy's L-BFGS-B (the linear start) some 35 x
        # slower (100 small calls: 3.6 s against 0.10 s).  threadpoolctl limits the pools
        # already loaded: SciPy's own OpenBLAS (not NumPy's) and scikit-learn's OpenMP load
        # with their modules, which only collection imported, so they kept two threads each
        # outside the fits (a family's MLE, a linear start or a HistGradientBoosting called
        # by a test itself; a fit limits them on small data).
        import scipy.linalg  # noqa: F401
        import sklearn.ensemble  # noqa: F401

        threadpool_limits(limits=1)


# The shared family case table (tests/families/family_cases.py) is imported by name from
# every test folder.
sys.path.insert(0, str(Path(__file__).resolve().parent / "families"))


@pytest.fixture(scope="session")
def sr():
    """``scoringrules``, the independent reference for the ensemble, quantile and Normal
    scores, imported on first use with its NumPy backend: imported with Numba, it compiled
    Numba kernels at import and at each function's first call (5-11 s of CPU in the
    pytest-xdist worker that ran these tests); without Numba (hidden from its import only:
    ``sys.modules["numba"] = None`` makes ``import numba`` fail, and scoringrules then
    registers only its NumPy backend) the import takes about 0.6 s and every function
    computes with scoringrules' own NumPy formulas, the backend the tests already named
    (``backend="numpy"``) where they passed one.  A plain import: it is in the ``dev``
    extra, and a missing reference must fail its tests, not skip them."""
    if "scoringrules" not in sys.modules:
        saved = sys.modules.get("numba")
        sys.modules["numba"] = None  # type: ignore[assignment]
        try:
            import scoringrules
        finally:
            if saved is None:
                del sys.modules["numba"]
            else:
                sys.modules["numba"] = saved
    import scoringrules

    return scoringrules
