"""benchmarks/conformal.py runs end to end in its quick mode (slow tier: it fits many models)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "conformal.py"


@pytest.mark.slow
def test_quick_run_gives_finite_coverage_tables(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_conformal", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = module.main(["--quick", "--parts", "abd", "--out", str(tmp_path)])
    assert np.isfinite(res["a"]["coverage_90"]).all()
    assert set(res["b"].columns) == {"raw", "mondrian cps"}
    assert (res["d"]["AUROC sparse vs dense"] > 0.5).all()
