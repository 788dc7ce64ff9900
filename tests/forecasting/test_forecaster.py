"""distboost.forecasting.Forecaster end to end on small data: options reach the regressor,
zero-heavy and count targets, censored histories, trends, exogenous and static features."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.forecasting import Forecaster

QUICK = dict(n_estimators=40, learning_rate=0.2, early_stopping=False)
DAYS = pd.date_range("2023-01-01", periods=500, freq="D")


def precipitation(n=500, seed=0):
    """Daily precipitation: a wet/dry Markov chain (P(wet | wet) = 0.7, P(wet | dry) = 0.2)
    with Gamma(0.8, scale 6) amounts on wet days."""
    rng = np.random.default_rng(seed)
    index = pd.date_range("2021-01-01", periods=n, freq="D")
    u, wet = rng.uniform(size=n), np.zeros(n, bool)
    for t in range(1, n):  # the chain's recursion
        wet[t] = u[t] < (0.7 if wet[t - 1] else 0.2)
    return pd.Series(np.where(wet, rng.gamma(0.8, 6.0, n), 0.0), index=index)


def test_options_reach_the_regressor_and_unknown_ones_fail():
    y = pd.Series(np.sin(np.arange(200) / 5), index=DAYS[:200])
    fc = Forecaster(horizon=2, lags=[1, 2], strategy="recursive", num_leaves=4,
                    param_options={"scale": {"num_leaves": 2}}, n_paths=20, **QUICK).fit(y)
    assert fc.model_.num_leaves == 4 and fc.model_.param_options == {"scale": {"num_leaves": 2}}
    assert fc.get_params()["num_leaves"] == 4
    fc.set_params(horizon=3, num_leaves=6)
    assert fc.horizon == 3 and fc.regressor_options["num_leaves"] == 6
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['num_leavez'\]"):
        Forecaster(num_leavez=3).fit(y)


def _precipitation_forecaster(n, **options):
    y = precipitation(n)
    fc = Forecaster(family="zero_adjusted_gamma", horizon=2, lags=[1], rolling=(),
                    strategy="recursive", date_features=None, calibrate=False, num_leaves=4,
                    min_child_samples=30, **options).fit(y)
    hist = {f"{v:g}": pd.concat([y, pd.Series([v], index=[y.index[-1] + y.index.freq])])
            for v in (0.0, 1.0, 4.0, 10.0)}
    return fc, hist


def test_zero_adjusted_precipitation_has_dry_days_and_a_wet_memory():
    fc, hist = _precipitation_forecaster(400, n_paths=400, n_estimators=20, learning_rate=0.3,
                                         step="newton", early_stopping=False)
    p_dry = fc.predict_dist(hist).cdf(0.0)[::2]  # P(y = 0) the next day: the gate
    assert p_dry[0] > 0.6 and p_dry[0] > p_dry[1:].max() + 0.2, p_dry  # truth 0.8 vs 0.3
    paths = fc.sample_paths(400, y_hist=hist["0"])
    assert (paths >= 0).all() and 0.5 < (paths == 0).mean() < 0.95 and paths.max() > 1


@pytest.mark.slow  # the same law to 0.1 (1,000 days, 100 rounds); fast test above
def test_zero_adjusted_precipitation():
    # 100 rounds as said: under the default early stopping the cross-validated one-SE rule
    # keeps 9 (the gate then half-way from the marginal 0.6 to 0.3 after a wet day).
    fc, hist = _precipitation_forecaster(1000, n_paths=1000, n_estimators=100,
                                         learning_rate=0.1, early_stopping=False)
    p_dry = fc.predict_dist(hist).cdf(0.0)[::2]  # P(y = 0) the next day: the gate
    assert abs(p_dry[0] - 0.8) < 0.1 and abs(p_dry[1:].mean() - 0.3) < 0.12, p_dry
    paths = fc.sample_paths(400, y_hist=hist["0"])
    assert (paths >= 0).all() and 0.6 < (paths[:, 0] == 0).mean() < 0.95
    # two days after a dry day: P(dry) = 0.8 * 0.8 + 0.2 * 0.3 = 0.7 through the paths
    assert abs((paths[:, 1] == 0).mean() - 0.7) < 0.12


# the negative binomial's likelihood costs about 40 ms a call on 250 rows (its log-gamma
# ratio): its run is in the slow tier, the Poisson one keeps the behaviour in the fast tier
@pytest.mark.parametrize("family", ["poisson",
                                    pytest.param("negative_binomial", marks=pytest.mark.slow)])
def test_counts_and_their_backtest(family):
    rng = np.random.default_rng(1)
    log_mu = 1.5 + 0.8 * np.sin(2 * np.pi * np.arange(300) / 7)
    y = pd.Series(rng.negative_binomial(5, 5 / (5 + np.exp(log_mu))).astype(float),
                  index=DAYS[:300])
    fc = Forecaster(family=family, horizon=7, lags=[1, 7], strategy="recursive",
                    n_paths=200, n_estimators=10, learning_rate=0.3, step="newton",
                    early_stopping=False)
    bt = fc.backtest(y, start=250, step=7)  # one fit, on the first 250 days
    assert len(bt) == 7 * 7 and set(bt["step"]) == set(range(1, 8))
    assert bt["pit"].between(0, 1).all() and np.isfinite(bt["nll"]).all()
    np.testing.assert_array_equal(bt["y"], y.iloc[250:299].to_numpy())
    assert np.array_equal(bt["median"], np.round(bt["median"]))
    # the paths' marginals at step 1 are draws of the one-step law of the last origin
    assert (bt.loc[bt["step"] == 1, "q0.05"] <= bt.loc[bt["step"] == 1, "median"]).all()


def test_censored_history_needs_a_censored_family():
    rng = np.random.default_rng(2)
    latent = 1.0 + np.convolve(rng.normal(size=330), np.ones(4) / 2, "valid")[:300]
    limit = 0.5  # values below the detection limit are only known to be below it
    frame = pd.DataFrame({"time": DAYS[:300], "lo": np.where(latent < limit, -np.inf, latent),
                          "hi": np.where(latent < limit, limit, latent)})
    with pytest.raises(ValueError, match=r"y has \d+ censored value\(s\).*family='censored_"
                                         r"normal'"):
        Forecaster(horizon=2, target_col=("lo", "hi"), **QUICK).fit(frame)
    fc = Forecaster(family="censored_normal", horizon=2, lags=[1, 2], strategy="direct",
                    target_col=("lo", "hi"), **QUICK).fit(frame)
    d = fc.predict_dist()
    assert len(d) == 2 and np.all(np.isfinite(d.quantile(0.05)))  # the latent law
    assert (d.quantile(0.05) < limit).any() or (d.cdf(limit) > 0).all()


def test_difference_follows_a_trend_that_trees_cannot_extrapolate():
    rng = np.random.default_rng(3)
    y = pd.Series(0.5 * np.arange(300) + rng.normal(size=300), index=DAYS[:300])
    kw = dict(horizon=6, lags=[1, 2], rolling=(), strategy="direct", date_features=None,
              calibrate=False, **QUICK)
    plain = Forecaster(**kw).fit(y).predict_dist()
    diff = Forecaster(difference=True, **kw).fit(y).predict_dist()
    truth = 0.5 * np.arange(300, 306)
    assert np.all(np.abs(diff.mean - truth) < 3)
    assert plain.mean.max() <= y.max() + 1 and plain.mean[-1] < truth[-1] - 3  # flat
    with pytest.raises(ValueError, match="difference=True needs a location family"):
        Forecaster(family="gamma", difference=True, **kw).fit(y.abs() + 1)


def test_exogenous_and_static_features():
    rng = np.random.default_rng(4)
    x = pd.DataFrame({"temp": rng.normal(size=330)}, index=DAYS[:330])
    y = {k: pd.Series(2.0 * x["temp"].to_numpy()[:300] + off + rng.normal(0, 0.2, 300),
                      index=DAYS[:300]) for k, off in (("a", 0.0), ("b", 10.0))}
    X = {k: x.iloc[:300] for k in y}
    X_future = {k: x.iloc[300:303] for k in y}
    static = pd.DataFrame({"size": [1.0, 3.0]}, index=["a", "b"])
    fc = Forecaster(horizon=3, lags=[1], rolling=(), strategy="direct", date_features=None,
                    scale=False, n_estimators=150, learning_rate=0.2, early_stopping=False)
    d = fc.fit(y, X=X, static=static).predict_dist(X_future=X_future)
    assert fc.feature_names_ == ["series_id", "lag_1", "step", "size", "temp"]
    expected = 2.0 * np.tile(x["temp"].to_numpy()[300:303], 2) + np.repeat([0.0, 10.0], 3)
    assert np.all(np.abs(d.mean - expected) < 0.8)


def test_auto_chooses_by_backtest_and_records_the_scores():
    y = pd.Series(np.sin(np.arange(300) * 2 * np.pi / 12)
                  + np.random.default_rng(5).normal(0, 0.3, 300), index=DAYS[:300])
    fc = Forecaster(horizon=6, lags=[1, 12], n_paths=100, **QUICK).fit(y)
    assert fc.strategy_ in ("recursive", "direct")
    scores = fc.strategy_scores_
    assert set(scores) == {"recursive", "direct"} and fc.strategy_ == min(scores, key=scores.get)


def test_backtest_refit_fits_at_every_origin_on_the_past_only(monkeypatch):
    t = pd.date_range("2024-01-01", periods=120, freq="h")
    y = pd.Series(np.sin(2 * np.pi * t.hour / 24)
                  + np.random.default_rng(6).normal(0, 0.2, 120), index=t)
    fc = Forecaster(horizon=4, lags=[1, 2], strategy="direct", n_estimators=10,
                    learning_rate=0.3, early_stopping=False)
    seen = []
    fit_panel = Forecaster._fit_panel

    def spy(self, panel, *args, **kwargs):
        if kwargs.get("end", True):  # not the fits of the end-of-history backtest inside
            seen.append((panel.times.max(), int(panel.lengths.sum())))
        return fit_panel(self, panel, *args, **kwargs)

    monkeypatch.setattr(Forecaster, "_fit_panel", spy)
    once = fc.backtest(y, start=100, step=4)
    assert seen == [(t[99], 100)]  # one fit, on the values before the first origin
    seen.clear()
    every = fc.backtest(y, start=100, step=4, refit=True)
    origins = sorted(set(every["origin"]))
    assert origins == list(t[[99, 103, 107, 111, 115]])
    assert seen == [(o, 100 + 4 * k) for k, o in enumerate(origins)]  # the past only
    assert every.shape == once.shape
    first = every["origin"] == origins[0]  # same values, same seed: the same forecasts
    np.testing.assert_array_equal(every.loc[first, "crps"], once.loc[first, "crps"])
    assert not np.array_equal(every.loc[~first, "crps"], once.loc[~first, "crps"])
    assert fc.fit(y).feature_names_[-2:] == ["hour", "dayofweek"]  # date_features="auto"
    assert fc.lags_ == (1, 2) and fc.rolling_ == (24,)  # rolling="auto": a day (a week:
    # 168 > half the 120 values)


def test_a_series_offset_by_1e9_gets_the_same_forecast():
    # the lags are centred on the training median: a far-off level keeps their resolution
    # in the trees' histogram bins (uncentred, LightGBM's bins of 1e9 + x moved the forecast)
    y = pd.Series(np.sin(np.arange(200) / 3) + np.random.default_rng(7).normal(0, .3, 200),
                  index=DAYS[:200])
    kw = dict(horizon=3, lags=[1, 2], strategy="direct", date_features=None, **QUICK)
    near = Forecaster(**kw).fit(y).predict_dist()
    far = Forecaster(**kw).fit(y + 1e9).predict_dist()
    np.testing.assert_allclose(far.mean - 1e9, near.mean, atol=1e-5)
    np.testing.assert_allclose(far.stddev, near.stddev, rtol=1e-5)


def test_a_shadowed_regressor_option_reaches_the_regressor_by_its_nested_name():
    """``calibrate`` is the forecaster's (step maps); the regressor's dispersion shift is
    ``regressor__calibrate``, kept by get_params and set_params."""
    y = pd.Series(np.random.default_rng(2).normal(size=200).cumsum())
    fc = Forecaster(horizon=2, lags=[1], rolling=(), regressor__calibrate=False,
                    n_estimators=10, early_stopping="holdout", calibrate=False)
    assert fc.get_params()["regressor__calibrate"] is False
    assert fc.fit(y).model_.calibrate is False and fc.calibrate is False
    assert fc.set_params(regressor__calibrate=True).fit(y).model_.calibrate is True
