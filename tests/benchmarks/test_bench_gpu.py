"""``benchmarks/gpu.py`` runs end to end on the CPU (``--devices cpu``, a dry run of the
script: its GPU rows need a CUDA machine) and its rows hold what the docs table reads."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("xgboost")
BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_gpu_benchmark_runs_its_cpu_rows(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_gpu", BENCH / "gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(["--n", "3000", "--rounds", "3", "--families", "normal",
                       "--devices", "cpu", "--held-out", "2000",
                       "--json", str(tmp_path / "gpu.json")])
    rows = out["rows"]
    assert [(r["backend"], r["device"]) for r in rows] == [("xgboost", "cpu"),
                                                            ("lightgbm", "cpu")]
    assert all(r["rounds"] == 3 and np.isfinite(r["nll"]) for r in rows)
    assert rows[0]["ratio"] == pytest.approx(rows[0]["seconds"] / rows[0]["floor_seconds"])
    assert "| normal | xgboost, cpu |" in capsys.readouterr().out
    assert (tmp_path / "gpu.json").exists()
