"""``distboost forecast``: quantiles per step, paths in long format, one-line errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.cli import main


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    # 510 hours a store: the recursive strategy's 1,016 training rows early-stop on the last
    # tenth of each series in half a second; below 1,000 rows the regressor cross-validates
    # its rounds and its linear start (12 s a forecast here).
    t = pd.date_range("2024-01-01", periods=510, freq="h")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"date": np.tile(t, 2), "store": np.repeat(["a", "b"], 510),
                       "y": np.r_[np.sin(2 * np.pi * t.hour / 24),
                                  5 + np.cos(2 * np.pi * t.hour / 24)] + rng.normal(0, .2, 1020)})
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_forecast_writes_quantiles_and_paths(csv, tmp_path, capsys):
    out = tmp_path / "f.csv"
    args = [str(csv), "--family", "normal", "--time", "date", "--target", "y", "--id", "store",
            "--horizon", "6", "--lags", "1,2", "--strategy", "recursive", "--n-estimators", "30",
            "--learning-rate", "0.2", "--calibrate", "false"]  # the output's format here
    assert main(["forecast", *args, "--quantiles", "0.1,0.9", "--out", str(out)]) == 0
    f = pd.read_csv(out, parse_dates=["date"])
    assert list(f.columns) == ["store", "date", "step", "mean", "q0.1", "q0.9"]
    assert list(f["store"]) == ["a"] * 6 + ["b"] * 6 and list(f["step"][:6]) == [1, 2, 3, 4,
                                                                                 5, 6]
    assert f["date"].iloc[0] == pd.Timestamp("2024-01-22 06:00")  # the hour after the end
    assert (f["q0.1"] < f["q0.9"]).all() and (f.loc[6:, "mean"] > 3).all()
    assert "wrote 12 rows" in capsys.readouterr().out
    assert main(["forecast", *args, "--paths", "20", "--out", str(out)]) == 0
    p = pd.read_csv(out)
    assert list(p.columns) == ["store", "path", "date", "step", "y"] and len(p) == 20 * 12


@pytest.mark.parametrize("calibrate", ["true", "auto"])
def test_forecast_calibrates_on_request(csv, tmp_path, calibrate):
    out = tmp_path / "f.csv"
    args = [str(csv), "--family", "normal", "--time", "date", "--target", "y", "--id", "store",
            "--horizon", "3", "--lags", "1,2", "--strategy", "direct", "--n-estimators", "20",
            "--learning-rate", "0.2", "--calibrate", calibrate, "--out", str(out)]
    assert main(["forecast", *args]) == 0
    f = pd.read_csv(out)
    assert len(f) == 6 and (f["q0.05"] < f["q0.95"]).all()


def test_forecast_errors_are_one_line(csv, tmp_path, capsys):
    out = str(tmp_path / "f.csv")
    assert main(["forecast", str(csv), "--time", "date", "--target", "y", "--horizon", "3",
                 "--out", out]) == 2  # two stores without --id: duplicated timestamps
    err = capsys.readouterr().err
    assert err.startswith("distboost forecast: error: y has 510 duplicated timestamp(s)")
    assert main(["forecast", str(csv), "--time", "day", "--target", "y", "--horizon", "3",
                 "--out", out]) == 2
    assert "Column(s) ['day'] are not in" in capsys.readouterr().err


def test_n_estimators_takes_auto_or_a_positive_integer(csv, tmp_path, capsys):
    from distboost.forecasting.cli import _rounds

    assert _rounds("auto") == "auto" and _rounds("40") == 40
    out = str(tmp_path / "f.csv")
    for bad in ("0", "many"):
        with pytest.raises(SystemExit) as exit_:
            main(["forecast", str(csv), "--time", "date", "--target", "y", "--id", "store",
                  "--horizon", "3", "--n-estimators", bad, "--out", out])
        assert exit_.value.code == 2
        assert f"expected a positive integer or 'auto', got '{bad}'" in capsys.readouterr().err


def test_scale_and_series_id_reach_the_forecaster(csv, tmp_path, monkeypatch):
    import distboost.forecasting.forecaster as module

    seen = []

    class Recording(module.Forecaster):
        def fit(self, *args, **kwargs):
            out = super().fit(*args, **kwargs)
            seen.append((out.scale_, out.series_id_))
            return out

    monkeypatch.setattr(module, "Forecaster", Recording)  # the CLI imports it when it runs
    out = tmp_path / "f.csv"
    args = [str(csv), "--family", "normal", "--time", "date", "--target", "y", "--id", "store",
            "--horizon", "3", "--lags", "1,2", "--strategy", "recursive", "--n-estimators", "10",
            "--calibrate", "false", "--out", str(out)]
    assert main(["forecast", *args, "--scale", "standard", "--series-id", "true"]) == 0
    assert main(["forecast", *args, "--scale", "false"]) == 0
    assert seen == [("standard", True), ("none", True)]  # unscaled: the id carries the level
    assert (pd.read_csv(out)["q0.05"] < pd.read_csv(out)["q0.95"]).all()


def test_quantiles_use_the_forecasters_paths_and_paths_take_paths(csv, tmp_path, monkeypatch):
    """Without ``--paths`` the forecaster's own ``n_paths`` default; with it, that many."""
    import distboost.forecasting.forecaster as module

    seen = []

    class Recording(module.Forecaster):
        def fit(self, *args, **kwargs):
            seen.append(self.n_paths)
            return super().fit(*args, **kwargs)

    monkeypatch.setattr(module, "Forecaster", Recording)
    out = tmp_path / "f.csv"
    args = [str(csv), "--family", "normal", "--time", "date", "--target", "y", "--id", "store",
            "--horizon", "3", "--lags", "1,2", "--strategy", "recursive", "--n-estimators", "10",
            "--calibrate", "false", "--out", str(out)]
    assert main(["forecast", *args]) == 0
    assert main(["forecast", *args, "--paths", "30"]) == 0
    assert seen == [module.Forecaster().n_paths, 30]
