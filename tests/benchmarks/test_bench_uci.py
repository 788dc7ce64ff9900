"""Smoke test of ``benchmarks/uci.py --protocol ibug --quick`` and checks of IBUG's folds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "uci"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_uci", BENCH / "uci.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


def test_ibug_folds_partition_the_rows(bench):
    n = 308
    folds = list(bench._ibug.ibug_folds(n))
    assert len(folds) == 10
    tests = np.concatenate([f[2] for f in folds])
    np.testing.assert_array_equal(np.sort(tests), np.arange(n))  # each row tested once
    for _, train, test, tune, valid in folds:
        assert np.intersect1d(train, test).size == 0
        np.testing.assert_array_equal(np.sort(np.concatenate([tune, valid])), np.sort(train))
        assert valid.size == int(np.ceil(0.2 * train.size))  # train_test_split's rounding
    # the validation split is seeded the same way in every fold (random_state=1), so the
    # shuffles differ only through the fold's rows: two folds' tune rows differ
    assert not np.array_equal(folds[0][3], folds[1][3])


@pytest.mark.skipif(not (DATA / "yacht" / "data.txt").is_file(), reason="no UCI data")
def test_quick_ibug_run_writes_the_table(bench, tmp_path):
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\n<!-- uci:start -->\nkept\n<!-- uci:end -->\n")
    df = bench.main(["--protocol", "ibug", "--quick", "--data", str(DATA), "--out", str(out)])
    assert set(df["method"]) == {"distboost", "lightgbm"}
    assert df["split"].nunique() == 2
    assert np.isfinite(df[["nll", "crps", "rmse", "coverage_90", "seconds"]].to_numpy()).all()
    text = out.read_text()
    assert "kept" in text and text.count(bench._ibug.START) == 1
    assert "| yacht | 2 |" in text and "0.300 | 0.240 | 0.967" in text  # published CRPS
    bench.main(["--protocol", "ibug", "--from-csv", str(_csv(df, tmp_path)), "--out",
                str(out)])
    assert out.read_text().count(bench._ibug.START) == 1


def _csv(df, tmp_path):
    path = tmp_path / "rows.csv"
    df.to_csv(path, index=False)
    return path
