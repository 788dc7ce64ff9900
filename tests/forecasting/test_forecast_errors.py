"""The forecasting rows of the bad-input table in docs/errors.md: each case raises the
documented error, naming the problem, the argument and how many values."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.forecasting import Forecaster

T = pd.date_range("2024-01-01", periods=60, freq="h")
Y = pd.Series(np.sin(np.arange(60) / 4.0), index=T)
TINY = dict(n_estimators=3, early_stopping=False, n_paths=20)


def F(**kw):
    return Forecaster(**{"horizon": 3, "lags": [1, 2], "rolling": (), "strategy": "recursive",
                         **TINY, **kw})


_cache: dict = {}


def fitted(kind="plain"):
    """Small fitted forecasters, built once."""
    if kind not in _cache:
        if kind == "plain":
            _cache[kind] = F().fit(Y)
        elif kind == "direct":
            _cache[kind] = F(strategy="direct").fit(Y)
        elif kind == "exog":
            _cache[kind] = F().fit(Y, X=pd.DataFrame({"x": np.arange(60.0)}, index=T))
        elif kind == "ids":
            _cache[kind] = F(series_id=True).fit({"a": Y, "b": Y + 1})
    return _cache[kind]


def _draws(paths):
    """The empirical law of the draws of paths (P, H): the marginals of a sample."""
    fam = db.families.Empirical(paths.shape[0])
    return db.Predictive(fam, db.families.Empirical.params_of(paths))


def gap():
    return Y.drop(T[[10, 11, 30]])


CASES = {
    "duplicated timestamps": (lambda: F().fit(pd.concat([Y, Y.iloc[:2]])), ValueError,
                              r"y has 2 duplicated timestamp\(s\) in 1 series \(first in the "
                              r"series at 2024-01-01 00:00:00\)"),
    "irregular timestamps": (lambda: F().fit(gap()), ValueError,
                             r"Irregular timestamps in the series of y: 2 of 56 steps are "
                             r"longer than the smallest step 0 days 01:00:00"),
    "timestamps off the grid of freq": (lambda: F(freq="2h").fit(Y), ValueError,
                                        r"Irregular timestamps in the series of y for the "
                                        r"frequency '2h': 59 of 60 are off its grid"),
    "a frequency that cannot be inferred": (
        lambda: F().fit(pd.Series([1.0, 2.0], index=T[:2])), ValueError,
        r"The frequency of the series of y cannot be inferred from 2 timestamp\(s\)"),
    "NaN in the history": (lambda: F().fit(Y.where(Y.index.hour != 5)), ValueError,
                           r"y has 3 NaN value\(s\) in 1 series \(the series: 3, first at "
                           r"2024-01-01 05:00:00\); pass fill='ffill', 'interpolate' or "
                           r"'zero'"),
    "a history shorter than the largest lag": (
        lambda: fitted().predict_dist(y_hist=Y.iloc[:1]), ValueError,
        r"y_hist: 1 of 1 series have fewer than 2 values \(the series has 1\); the model's "
        r"largest lag or rolling window is 2"),
    "a training series shorter than the largest lag": (
        lambda: F(lags=[1, 48]).fit({"a": Y, "b": Y.iloc[:30]}), ValueError,
        r"y: 1 of 2 series have fewer than 49 values \(series 'b' has 30\)"),
    "static without a row for a series": (
        lambda: F().fit({"a": Y, "b": Y}, static=pd.DataFrame({"kind": [1]}, index=["a"])),
        ValueError, r"static lacks a row for 1 series \(first 'b'\); index it by the series "
        r"ids"),
    "X_future missing rows": (
        lambda: fitted("exog").predict_dist(X_future=pd.DataFrame(
            {"x": [1.0, 2.0]}, index=pd.date_range(T[-1], periods=3, freq="h")[1:])),
        ValueError, r"X_future lacks 1 of 3 rows the forecast needs \(first: time "
                    r"2024-01-03 14:00:00\)"),
    "X_future missing columns": (
        lambda: fitted("exog").predict_dist(X_future=pd.DataFrame(
            {"z": [1.0, 2.0, 3.0]}, index=pd.date_range(T[-1], periods=4, freq="h")[1:])),
        ValueError, r"X_future lacks the column\(s\) \['x'\] that the model was fitted with"),
    "no X_future for a model fitted with X": (
        lambda: fitted("exog").predict_dist(), ValueError,
        r"The model was fitted with exogenous features \['x'\]: give X_future"),
    "X missing rows of y": (
        lambda: F().fit(Y, X=pd.DataFrame({"x": np.arange(50.0)}, index=T[:50])), ValueError,
        r"X lacks 10 of 60 rows of y \(first: time 2024-01-03 02:00:00\); give one row per "
        r"series and time of y"),
    "a horizon < 1": (lambda: F(horizon=0).fit(Y), ValueError,
                      r"horizon must be an integer >= 1 \(the number of steps to forecast\); "
                      r"got 0"),
    "lags < 1": (lambda: F(lags=[0, 1]).fit(Y), ValueError,
                 r"lags takes integers >= 1 \(or 'auto'\); got \[0, 1\]"),
    "X_future with columns the model was not fitted with": (
        lambda: fitted("exog").predict_dist(X_future=pd.DataFrame(
            {"x": [1.0, 2.0, 3.0], "promo": [0.0, 1.0, 0.0]},
            index=pd.date_range(T[-1], periods=4, freq="h")[1:])),
        ValueError, r"X_future has the column\(s\) \['promo'\] that the model was not fitted "
                    r"with \(its features: \['x'\]\)"),
    "a season longer than half the shortest history": (
        lambda: F(lags="auto", season_length=40).fit(Y), ValueError,
        r"season_length=40 is longer than half the shortest series \(60 values\)"),
    "a negative value for a count family": (
        lambda: F(family="poisson").fit(pd.Series(np.r_[np.arange(30.0), -1.0,
                                                        np.arange(29.0)], index=T)),
        ValueError, r"y has 1 value\(s\) outside the support integers \{0, 1, \.\.\., inf\} of "
                    r"family 'poisson' in 1 series \(first: the series at 2024-01-02 06:00:00, "
                    r"value -1\)"),
    "scale=True with a censored family": (
        lambda: F(family="censored_normal", scale=True).fit(Y), ValueError,
        r"scale=True cannot rescale the bounds of censored family 'censored_normal'"),
    "unknown series ids at predict time": (
        lambda: fitted("ids").predict_dist(y_hist={"c": Y}), ValueError,
        r"y_hist has 1 series unknown to the model \(\['c'\]\); it was fitted on the series "
        r"\['a', 'b'\]"),
    "one unnamed Series for a model of several series": (
        lambda: fitted("ids").predict_dist(y_hist=Y), ValueError,
        r"y_hist is one Series, but the model was fitted on 2 series \['a', 'b'\]: give "
        r"y_hist as a dict \{id: Series\} or a long frame with the 'id' column"),
    "censored history with an uncensored family": (
        lambda: F(target_col=("lo", "hi")).fit(pd.DataFrame(
            {"time": T, "lo": Y.to_numpy(), "hi": np.where(Y > 0.9, np.inf, Y)})), ValueError,
        r"y has 12 censored value\(s\) \(lower < upper\) of 60; family='auto' \(the Normal "
        r"or a Student-t\) takes exact values: use a censored family, e.g. "
        r"family='censored_normal'"),
    "difference with a family that is not a location family": (
        lambda: F(family="gamma", difference=True).fit(Y + 2), ValueError,
        r"difference=True needs a location family on the real line"),
    "an unknown forecaster or regressor option": (
        lambda: F(n_estimator=5).fit(Y), ValueError,
        r"Forecaster got unknown option\(s\) \['n_estimator'\] \('n_estimator': did you mean "
        r"'n_estimators'\?\)"),
    "epistemic_members for a forecaster": (
        lambda: F(epistemic_members=5).fit(Y), ValueError,
        r"Forecaster got epistemic_members=5: those members serve "
        r"DistributionalRegressor.predict_uncertainty, which a Forecaster does not call"),
    "a regressor option given with and without regressor__": (
        lambda: F(learning_rate=0.1, regressor__learning_rate=0.2).fit(Y), ValueError,
        r"The regressor's option 'learning_rate' is given twice \('learning_rate' and "
        r"'regressor__learning_rate'\); give it once"),
    "the NLL of the empirical law of sample paths' draws": (
        lambda: _draws(fitted().sample_paths(20)).nll(np.zeros(3)), ValueError,
        r"An empirical \(sample-based\) distribution of 20 draws has no density"),
    "a backtest with no origin": (
        lambda: F().backtest(Y, start=59), ValueError,
        r"The backtest has no origin: every series is shorter than its start plus the "
        r"horizon 3"),
    "an unknown fill": (lambda: F(fill="bfill").fit(Y), ValueError,
                        r"fill must be one of \['raise', 'ffill', 'interpolate', 'zero'\]"),
    "calibration on too short a history": (
        lambda: F(calibrate=True, lags=[1, 2, 40]).fit(Y), ValueError,
        r"calibrate=True backtests the end of the history from at least 20 origins in all: "
        r"with horizon 3 and largest lag or window 40, a series needs at least 49 values to "
        r"take part \(46 to fit on, then its origins and a horizon\), and the 1 series of "
        r"60..60 values give fewer"),
    "calibrate not a bool": (lambda: F(calibrate="yes").fit(Y), ValueError,
                             r"calibrate must be True, False or 'auto'; got 'yes'"),
    "scale='standard' with a positive family": (
        lambda: F(family="gamma", scale="standard").fit(Y.abs() + 1), ValueError,
        r"scale='standard' subtracts each window's mean, which only a continuous family on "
        r"the whole real line keeps in its support; family 'gamma' has the support"),
    "scale='standard' with difference=True": (
        lambda: F(scale="standard", difference=True).fit(Y), ValueError,
        r"scale='standard' and difference=True both take each series' level out of its "
        r"values: use one of them"),
    "series_id not a bool": (lambda: F(series_id="yes").fit(Y), ValueError,
                             r"series_id must be True, False or 'auto'; got 'yes'"),
    "calibration of a law with a point mass": (
        lambda: F(family="zero_adjusted_gamma", calibrate=True).fit(Y.abs()), ValueError,
        r"calibrate=True is not built for family 'zero_adjusted_gamma': a law with a point "
        r"mass at 0 beside a density has no uniform PIT on its atom"),
    "calibration of a censored family": (
        lambda: F(family="censored_normal", calibrate=True).fit(Y), ValueError,
        r"calibrate=True scores the PIT values of exact values; family 'censored_normal' is "
        r"censored"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_forecasting_input_raises_the_documented_error(case):
    fn, exc, pattern = CASES[case]
    with pytest.raises(exc, match=pattern):
        fn()


def test_the_docs_table_lists_every_forecasting_case():
    table = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    rows = {r.strip() for r in re.findall(r"^\| ([^|]+?) \|", table, flags=re.M)}
    assert set(CASES) <= rows, set(CASES) - rows
