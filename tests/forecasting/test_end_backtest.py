"""distboost.forecasting.end_backtest: the backtest behind strategy="auto", calibrate="auto"
and the direct strategy's copula (issue 47, items 1, 3 and 7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.families.continuous import StudentT
from distboost.forecasting import Forecaster
from distboost.forecasting.calibration import MAX_CONTEXTS, MIN_ORIGINS
from distboost.forecasting.end_backtest import PATH_CONTEXTS, end_origins
from distboost.forecasting.plan import AUTO_MIN_DF

QUICK = dict(family="normal", n_estimators=30, early_stopping=False, n_paths=50)


def test_origins_spread_over_the_series_long_enough():
    k, ok = end_origins(np.array([400]), memory=12, horizon=6)
    assert k == 100 and ok.all()  # a quarter of the series
    k, ok = end_origins(np.full(1000, 500), memory=24, horizon=24)
    assert k == MAX_CONTEXTS // 1000 and ok.all()
    lengths = np.array([60, 300, 300])
    k, ok = end_origins(lengths, memory=12, horizon=12)
    assert list(ok) == [False, True, True] and k * 2 >= MIN_ORIGINS  # the short one sits out
    assert end_origins(np.array([40]), memory=12, horizon=12)[0] == 0  # nothing to backtest


@pytest.fixture(scope="module")
def panel():
    rng = np.random.default_rng(0)
    t = pd.date_range("2020-01-01", periods=260, freq="D")
    out = {}
    for k, level in (("a", 5.0), ("b", 50.0), ("c", 500.0)):
        e = np.zeros(260)
        for i in range(1, 260):
            e[i] = 0.8 * e[i - 1] + rng.normal(0, 0.1)
        out[k] = pd.Series(level * np.exp(e) * (2 + np.sin(2 * np.pi * np.arange(260) / 7)),
                           index=t)
    return out


def test_auto_backtests_both_strategies_and_every_choice_gives_paths(panel, monkeypatch):
    import distboost.forecasting.end_backtest as end

    seen = []
    original = end.forecast_origins

    def spy(fitted, panel_, exog, orig, n_paths):
        seen.append((fitted.strategy_, sum(o.size for o in orig), n_paths,
                     int(fitted.history_.lengths.sum())))
        return original(fitted, panel_, exog, orig, n_paths)

    monkeypatch.setattr(end, "forecast_origins", spy)
    fc = Forecaster(horizon=5, **QUICK).fit(panel)
    scores = fc.strategy_scores_
    assert set(scores) == {"recursive", "direct"}
    assert fc.strategy_ == min(scores, key=scores.get)
    (s1, n1, p1, _), (s2, n2, p2, _), (s3, n3, _, _) = seen
    assert (s1, s2) == ("recursive", "direct")
    assert n1 == min(PATH_CONTEXTS, n2) and p1 == 50  # the recursive scored on a subset
    # then the chosen strategy with the series' id flipped, on the same contexts
    assert s3 == fc.strategy_ and n3 == {"recursive": n1, "direct": n2}[s3]
    assert set(fc.series_id_scores_) == {True, False}
    assert fc.series_id_ == (fc.series_id_scores_[True] < fc.series_id_scores_[False])
    assert fc.calibration_coverage_ is not None
    for strategy in ("recursive", "direct"):
        fitted = Forecaster(horizon=5, strategy=strategy, **QUICK).fit(panel)
        assert fitted.sample_paths(20).shape == (20, 3, 5)


def test_predict_quantiles_is_a_long_frame(panel):
    fc = Forecaster(horizon=4, strategy="direct", calibrate=False, **QUICK).fit(panel)
    q = fc.predict_quantiles([0.1, 0.5, 0.9])
    assert list(q.columns) == ["id", "time", "q0.1", "q0.5", "q0.9"] and len(q) == 12
    assert list(q["id"]) == [k for k in "abc" for _ in range(4)]
    assert (q["time"].iloc[:4] == pd.date_range("2020-09-17", periods=4, freq="D")).all()
    assert (q["q0.1"] <= q["q0.5"]).all() and (q["q0.5"] <= q["q0.9"]).all()
    d = fc.predict_dist()
    np.testing.assert_allclose(q["q0.5"], d.quantile(0.5))
    with pytest.raises(ValueError, match="levels must be quantile levels in"):
        fc.predict_quantiles([0.0, 0.5])



def test_a_further_family_is_kept_only_lower_by_one_standard_error():
    from distboost.forecasting.end_backtest import _clearly_lower

    idx = pd.MultiIndex.from_product([["a", "b"], range(5)])
    base = pd.Series(1.0, index=idx)
    noise = np.tile([0.02, -0.02, 0.01, -0.01, 0.0], 2)
    assert _clearly_lower(base - 0.05 + noise, base)  # mean -0.05, se 0.005
    assert not _clearly_lower(base - 0.001 + noise, base)  # within one standard error
    assert not _clearly_lower(base + 0.05 + noise, base)
    assert not _clearly_lower(base.iloc[:1] - 1.0, base)  # one context: no evidence


@pytest.fixture(scope="module")
def heavy_panel():
    """Three seasonal series with Student-t(1.5) innovations: tails no Normal fits."""
    rng = np.random.default_rng(1)
    t = pd.date_range("2020-01-01", periods=300, freq="D")
    season = np.sin(2 * np.pi * np.arange(300) / 7)
    return {k: pd.Series(level * (3 + season) + level * 0.3 * rng.standard_t(1.5, 300),
                         index=t) for k, level in (("a", 1.0), ("b", 10.0), ("c", 100.0))}


def test_family_auto_backtests_a_floored_student_t_beside_the_normal(heavy_panel):
    opts = dict(horizon=4, strategy="direct", calibrate=False, n_estimators=30,
                early_stopping=False)
    fc = Forecaster(**opts).fit(heavy_panel)
    scores = fc.family_scores_
    assert set(scores) == {"normal", "studentt"} and scores["studentt"] < scores["normal"]
    assert isinstance(fc.family_, StudentT) and fc.family_.min_df == AUTO_MIN_DF
    assert fc.model_.family_.get_state() == fc.family_.get_state()  # the final fit's
    dist = fc.predict_dist()
    assert dist.family.name == "affine_studentt"  # the window's factor times the t
    assert np.isfinite(dist.crps(np.zeros(12))).all()
    fixed = Forecaster(family="normal", **opts).fit(heavy_panel)
    assert fixed.family_scores_ is None and fixed.family_.name == "normal"
    # too short a history for the backtest: the Normal, no scores
    short = {k: v.iloc[:30] for k, v in heavy_panel.items()}
    fc = Forecaster(**opts).fit(short)
    assert fc.family_.name == "normal" and fc.family_scores_ is None
    # ... and strategy="auto" takes the recursive strategy, and says so (it kept "auto" as
    # strategy_ under scaling by the window's mean, while forecasting recursively)
    fc = Forecaster(**{**opts, "strategy": "auto"}).fit(short)
    assert fc.scale_ == "mean" and fc.strategy_ == fc.spec_.strategy == "recursive"
    assert fc.strategy_scores_ is None


def test_the_backtest_fits_learn_faster_only_when_early_stopping_chooses_the_rounds(
        panel, monkeypatch):
    from distboost.estimators import DistributionalRegressor
    from distboost.forecasting.end_backtest import BACKTEST_RATE

    rates = []
    original = DistributionalRegressor.fit

    def spy(self, *args, **kwargs):
        rates.append(self.learning_rate)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(DistributionalRegressor, "fit", spy)
    opts = dict(family="normal", horizon=3, strategy="direct", calibrate=True, n_paths=20,
                series_id=False)
    Forecaster(learning_rate=0.2, n_estimators=20, **opts).fit(panel)
    assert rates == [BACKTEST_RATE * 0.2, 0.2]  # the backtest's fit, then the final one
    rates.clear()
    Forecaster(regressor__learning_rate=0.1, n_estimators=20, **opts).fit(panel)
    assert rates == [BACKTEST_RATE * 0.1, 0.1]
    from distboost.forecasting.end_backtest import BACKTEST_MAX_RATE, coarser

    for rate, coarse in ((0.4, BACKTEST_MAX_RATE), (0.7, 0.7)):  # capped, never below
        fc = Forecaster(learning_rate=rate)
        assert coarser(fc).regressor_options["learning_rate"] == coarse
        assert fc.regressor_options["learning_rate"] == rate  # a copy: the user's untouched
    rates.clear()  # fixed rounds: another rate would be another model than the final one
    Forecaster(learning_rate=0.2, n_estimators=20, early_stopping=False, **opts).fit(panel)
    assert rates == [0.2, 0.2]
