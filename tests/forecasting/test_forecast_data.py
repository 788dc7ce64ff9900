"""distboost.forecasting.data: the input forms give one panel, the frequency is found or
refused, NaN values are filled as pandas fills them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.forecasting.data import future_times, to_panel

T = pd.date_range("2024-03-01", periods=6, freq="D")


def test_series_dict_and_long_frame_give_the_same_panel():
    a, b = pd.Series(np.arange(6.0), index=T), pd.Series(10 + np.arange(4.0), index=T[2:])
    from_dict = to_panel({"a": a, "b": b})
    long = pd.DataFrame({"id": ["b"] * 4 + ["a"] * 6, "time": np.r_[T[2:], T],
                         "y": np.r_[b, a]}).sample(frac=1.0, random_state=0)  # shuffled
    from_long = to_panel(long)
    for p in (from_dict, from_long):
        assert sorted(p.ids) == ["a", "b"] and not p.single
        assert p.freq == pd.tseries.frequencies.to_offset("D")
        s = p.ids.index("b")
        np.testing.assert_array_equal(p.values[p.series(s)], b.to_numpy())
        assert list(p.times[p.series(s)]) == list(T[2:])
    single = to_panel(a)
    assert single.single and single.n_series == 1
    np.testing.assert_array_equal(single.values, a.to_numpy())


def test_integer_time_and_censored_bounds():
    p = to_panel(pd.Series([1.0, 2.0, 4.0], index=[10, 12, 14]))
    assert p.freq == 2 and not p.datetime
    np.testing.assert_array_equal(future_times(p.times[[-1]], p.freq, 3), [[16, 18, 20]])
    long = pd.DataFrame({"time": T[:3], "lo": [1.0, 2.0, -np.inf], "hi": [1.0, np.inf, 0.5]})
    c = to_panel(long, target_col=("lo", "hi"))
    np.testing.assert_array_equal(c.bounds, long[["lo", "hi"]].to_numpy())
    np.testing.assert_array_equal(c.values, [1.0, 2.0, 0.5])  # exact, lower end, upper end


def test_frequency_inference_and_future_times():
    month_starts = pd.date_range("2020-01-01", periods=5, freq="MS")
    p = to_panel(pd.Series(np.ones(5), index=month_starts))
    assert list(future_times(p.times[[-1]], p.freq, 2)[0]) == \
        [pd.Timestamp("2020-06-01"), pd.Timestamp("2020-07-01")]
    with pytest.raises(ValueError, match="cannot be inferred: its steps vary"):
        to_panel(pd.Series(np.ones(4), index=pd.to_datetime(
            ["2020-01-15", "2020-02-15", "2020-03-15", "2020-04-15"])))
    mid_month = pd.Series(np.ones(4), index=pd.to_datetime(
        ["2020-01-15", "2020-02-15", "2020-03-15", "2020-04-15"]))
    given = to_panel(mid_month, freq=pd.DateOffset(months=1))
    assert future_times(given.times[[-1]], given.freq, 1)[0, 0] == pd.Timestamp("2020-05-15")


@pytest.mark.parametrize("fill", ["ffill", "interpolate", "zero"])
def test_fill_matches_pandas(fill):
    y = pd.Series([np.nan, 1.0, np.nan, np.nan, 4.0, np.nan], index=T)
    p = to_panel(y, fill=fill)
    expected = {"ffill": y.ffill().dropna(),
                "interpolate": y.interpolate(limit_area="inside").ffill().dropna(),
                "zero": y.fillna(0.0)}[fill]
    np.testing.assert_allclose(p.values, expected.to_numpy())
    assert list(p.times) == list(expected.index)
