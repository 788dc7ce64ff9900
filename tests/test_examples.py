"""Smoke tests: every example runs offline and writes its figure.

The quickstart's example runs in the fast tier; the others are end-to-end repeats of paths the
fast unit tests cover (named beside each), so they run in the slow tier (``make test-all``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_heteroscedastic_sine(tmp_path):
    res = _load("heteroscedastic_sine").main(["--out", str(tmp_path)])
    assert (tmp_path / "heteroscedastic_sine.png").stat().st_size > 10_000
    assert 0.8 < res["coverage_90"] < 0.97 and res["sd_correlation"] > 0.8


@pytest.mark.slow  # fast: tests/families/test_censored.py, tests/metrics (survival scores)
def test_survival(tmp_path):  # the bundled GBSG2 data: runs after pip install
    res = _load("survival").main(["--out", str(tmp_path)])
    assert (tmp_path / "survival_curves.png").stat().st_size > 10_000
    for scores in res.values():
        assert 0.6 < scores["c_index"] < 0.8  # better than chance on real data
        assert scores["censored_nll"] < 4.5
        assert 0.1 < scores["ibs"] < 0.25 and 0.6 < scores["mean_auc"] < 0.85


@pytest.mark.slow  # cross-validates every candidate family; compare_families: test_selection.py
def test_compare_families(tmp_path):
    table = _load("compare_families").main(["--out", str(tmp_path)])
    assert (tmp_path / "compare_families.png").stat().st_size > 5_000
    assert table["nll_mean"].notna().sum() >= 4


@pytest.mark.slow  # fast: tests/estimators/test_calibration.py, tests/metrics/test_scores.py
def test_calibration(tmp_path):
    res = _load("calibration").main(["--out", str(tmp_path)])
    assert (tmp_path / "calibration_diagnostics.png").stat().st_size > 10_000
    good, bad = res["boosted scale"], res["scale / 3 (overconfident)"]
    assert abs(good["coverage_90"] - 0.9) < 0.04 and bad["coverage_90"] < 0.6
    assert good["calibration_error"] < bad["calibration_error"]
    assert good["crps"] < bad["crps"]


@pytest.mark.slow  # fast: tests/estimators/test_booster.py (losses, clipping, callback)
def test_custom_loss(tmp_path):
    res = _load("custom_loss").main(["--out", str(tmp_path)])
    assert (tmp_path / "custom_loss.png").stat().st_size > 10_000
    plain = res["squared"]  # mean |f(x) - sin(x)|: the squared loss chases the outliers
    for robust in ("squared, gradients clipped at 5%/95%", "absolute (gradient step)",
                   "Huber (newton step)"):
        assert res[robust] < 0.5 * plain and res[robust] < 0.1
    assert res["logistic_logloss"] < res["base_rate_logloss"] - 0.15


@pytest.mark.slow  # fast: test_booster.py's torch parameters trained with the trees
def test_digits_hybrid(tmp_path):
    res = _load("digits_hybrid").main(["--out", str(tmp_path)])
    assert (tmp_path / "digits_hybrid_importance.png").stat().st_size > 10_000
    assert res["n_test"] == 108 and res["accuracy"] >= 0.98
    assert res["log_loss"] < 0.05
    # Training the network with the trees beats trees on the frozen random network.
    assert res["log_loss"] < res["frozen_network_log_loss"]


@pytest.mark.slow  # fast: tests/estimators/test_varying.py
def test_varying_coefficients(tmp_path):
    res = _load("varying_coefficients").main(["--out", str(tmp_path)])
    assert (tmp_path / "varying_coefficients.png").stat().st_size > 10_000
    assert abs(res["sine_rmse"] - res["noise"]) < 0.06 * res["noise"]  # RMSE near the noise
    if SHARED.is_dir():
        assert res["concrete_rmse"] < 7.0  # concrete's sd is 16.7 MPa; GBR gets about 4.4


@pytest.mark.slow  # starts its own two-worker cluster
def test_dask_cluster(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("xgboost")
    res = _load("dask_cluster").main(["--rows", "200000", "--n-estimators", "60"])
    assert res["best_iteration"] > 10
    assert abs(res["coverage_90"] - 0.9) < 0.03
    assert res["nll"] < 1.6  # the start values' NLL is about 1.9


@pytest.mark.slow  # starts its own two-worker cluster; fast: tests/dask/test_dask_forecaster.py
def test_dask_forecasting():
    pytest.importorskip("distributed")
    pytest.importorskip("xgboost")
    res = _load("dask_forecasting").main(["--series", "30", "--length", "200"])
    # Scaled pinball loss: the true law's is 0.025; the cluster's model as good as the
    # in-process one (0.0261 both with the defaults of the example).
    assert res["pinball_dask"] < 1.1 * res["pinball_in_process"]
    assert res["pinball_dask"] < 0.04


@pytest.mark.slow  # about 5 s: three fits on 8,611 rows
@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data (power-plant)")
def test_multivariate_power_plant(tmp_path):
    res = _load("multivariate_power_plant").main(["--out", str(tmp_path)])
    for name in ("multivariate_ellipses.png", "multivariate_correlation.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    # NGBoost's Normal on PE alone scores 2.79 on these splits; the pair is about twice that.
    assert 5.0 < res["nll_joint"] < 6.5 and 5.0 < res["nll_independent"] < 6.5
    assert -1.0 < res["rho_min"] < res["rho_max"] < 1.0
    # PE and V move against each other (hot air: lower output, higher vacuum): negative
    # correlation in the middle temperature bins, predicted and in the held-out residuals.
    predicted, residual = res["rho_by_temperature"][2]
    assert predicted < -0.2 and residual < -0.2


@pytest.mark.slow  # a backtest of 37 origins; the Forecaster's own tests: tests/forecasting
def test_forecasting(tmp_path):  # statsmodels' bundled El Nino data (the dev extra)
    pytest.importorskip("statsmodels")
    res = _load("forecasting").main(["--out", str(tmp_path)])
    assert (tmp_path / "forecast_fan.png").stat().st_size > 10_000
    assert res["crps_ratio"] < 0.9  # beats last year's value of the month
    assert 0.8 < res["coverage_90"] < 0.98


@pytest.mark.slow  # 12 models; ConformalRegressor's fast tests: tests/conformal/
def test_conformal(tmp_path):
    res = _load("conformal").main(["--out", str(tmp_path), "--reps", "1"])
    assert (tmp_path / "conformal_coverage.png").stat().st_size > 10_000
    gaps = [abs(c - level) for c, level in zip(res["conformal"], res["levels"], strict=True)]
    assert max(gaps) < 0.06
