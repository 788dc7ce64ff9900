"""Scaled forecast scores of the competitions (M4: MASE, MSIS; M5: scaled and weighted scaled
pinball losses), the CRPS skill score and the seasonal naive forecast: hand-computed values,
the M5 leading-zeros rule, the many-series forms against loops over single series, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.metrics import crps_skill, mase, msis, scaled_pinball, seasonal_naive, wspl

# A 6-value training series and its one-step naive scale, by hand:
# |3-1| + |2-3| + |5-2| + |4-5| + |6-4| = 2 + 1 + 3 + 1 + 2 = 9, over 5 differences.
TRAIN = [1.0, 3.0, 2.0, 5.0, 4.0, 6.0]
SCALE_1 = 9.0 / 5.0
# A quarterly series (m = 4) of 8 values; lag-4 differences |12-10|, |18-20|, |33-30|, |40-40|
# = 2, 2, 3, 0, over 4 differences.
QUARTERLY = [10.0, 20.0, 30.0, 40.0, 12.0, 18.0, 33.0, 40.0]
SCALE_4 = 7.0 / 4.0


def test_mase_season_length_1_by_hand():
    y, y_hat = [7.0, 5.0, 8.0], [6.0, 6.0, 6.0]
    # |7-6|, |5-6|, |8-6| = 1, 1, 2: mean 4/3
    assert mase(y, y_hat, TRAIN) == pytest.approx((4.0 / 3.0) / SCALE_1)
    assert mase(y, y_hat, TRAIN) == pytest.approx(20.0 / 27.0)
    assert isinstance(mase(y, y_hat, TRAIN), float)


def test_mase_season_length_4_by_hand():
    y, y_hat = [14.0, 21.0], [12.0, 18.0]
    # errors 2 and 3: mean 2.5; scale 7/4
    assert mase(y, y_hat, QUARTERLY, season_length=4) == pytest.approx(2.5 / SCALE_4)
    assert mase(y, y_hat, QUARTERLY, season_length=4) == pytest.approx(10.0 / 7.0)
    # the lag-1 scale of the same series differs: |20-10| + |30-20| + |40-30| + |12-40|
    # + |18-12| + |33-18| + |40-33| = 10 + 10 + 10 + 28 + 6 + 15 + 7 = 86, over 7
    assert mase(y, y_hat, QUARTERLY, season_length=1) == pytest.approx(2.5 / (86.0 / 7.0))


def test_mase_of_the_seasonal_naive_in_sample_is_one():
    """On the training series itself, the seasonal naive forecast's MAE is the scale."""
    train = np.asarray(QUARTERLY)
    assert mase(train[4:], train[:-4], train, season_length=4) == pytest.approx(1.0)


def test_msis_by_hand():
    y = [7.0, 5.0, 8.0]
    lower, upper = [5.0, 6.0, 4.0], [9.0, 8.0, 7.0]
    # alpha = 0.2, 2 / alpha = 10:
    # t1 inside: width 4;  t2 below (5 < 6): 2 + 10 * 1 = 12;  t3 above (8 > 7): 3 + 10 * 1 = 13
    want = (4.0 + 12.0 + 13.0) / 3.0 / SCALE_1
    assert msis(y, lower, upper, TRAIN, alpha=0.2) == pytest.approx(want)
    assert msis(y, lower, upper, TRAIN, alpha=0.2) == pytest.approx(29.0 / 5.4)


def test_msis_is_the_interval_score_over_the_scale():
    """MSIS = mean interval score of distboost's interval_score / the seasonal naive scale."""
    rng = np.random.default_rng(0)
    h = 12
    dist = db.Predictive.from_params("normal", loc=rng.normal(size=h),
                                     scale=rng.uniform(0.5, 2.0, size=h))
    y = rng.normal(scale=2.0, size=h)
    bounds = dist.interval(0.9)
    train = rng.normal(size=40).cumsum()
    scale = np.mean(np.abs(train[12:] - train[:-12]))
    want = np.mean(db.metrics.interval_score(dist, y, 0.9)) / scale
    got = msis(y, bounds[:, 0], bounds[:, 1], train, season_length=12, alpha=0.1)
    assert got == pytest.approx(want, rel=1e-12)


def test_scaled_pinball_by_hand():
    y = [3.0, 1.0]
    levels = [0.25, 0.75]
    quantiles = [[2.0, 4.0], [2.0, 3.0]]  # (h, L)
    train = [2.0, 4.0, 3.0]  # scale (|4-2| + |3-4|) / 2 = 1.5
    # tau 0.25: t1 y=3 >= q=2: 0.25 * 1 = 0.25;  t2 y=1 < q=2: 0.75 * 1 = 0.75;  mean 0.5
    # tau 0.75: t1 y=3 <  q=4: 0.25 * 1 = 0.25;  t2 y=1 < q=3: 0.25 * 2 = 0.5;   mean 0.375
    want = (0.5 / 1.5 + 0.375 / 1.5) / 2.0
    assert scaled_pinball(y, quantiles, levels, train) == pytest.approx(want)
    assert scaled_pinball(y, quantiles, levels, train) == pytest.approx(7.0 / 24.0)
    # one level given as a scalar, quantiles of the shape of y
    assert scaled_pinball(y, [2.0, 2.0], 0.25, train) == pytest.approx(0.5 / 1.5)


def test_scaled_pinball_drops_the_leading_zeros_only():
    y, levels, quantiles = [3.0, 1.0], [0.25, 0.75], [[2.0, 4.0], [2.0, 3.0]]
    plain = scaled_pinball(y, quantiles, levels, [2.0, 4.0, 3.0])
    assert scaled_pinball(y, quantiles, levels, [0.0, 0.0, 2.0, 4.0, 3.0]) == pytest.approx(plain)
    # (with the zeros counted the scale would be (0 + 2 + 2 + 1) / 4 = 1.25, not 1.5)
    # zeros after the first sale stay: [3, 0, 1] has scale (3 + 1) / 2 = 2 (with the leading
    # zeros counted: (0 + 3 + 3 + 1) / 4 = 1.75)
    loss = (0.5 + 0.375) / 2.0  # the unscaled level-averaged pinball loss above
    got = scaled_pinball(y, quantiles, levels, [0.0, 0.0, 3.0, 0.0, 1.0])
    assert got == pytest.approx(loss / 2.0)


def test_wspl_by_hand_and_as_weighted_mean_of_scaled_pinball():
    levels = [0.25, 0.75]
    y = [[3.0, 1.0], [0.0, 2.0]]
    quantiles = [[[2.0, 4.0], [2.0, 3.0]], [[0.0, 1.0], [1.0, 1.0]]]
    trains = [[2.0, 4.0, 3.0], [0.0, 1.0, 3.0, 2.0]]
    # series 0: 7/24 (test above).  series 1: scale from [1, 3, 2]: (2 + 1) / 2 = 1.5
    # tau 0.25: t1 y=0 >= q=0: 0;  t2 y=2 >= q=1: 0.25 * 1 = 0.25;  mean 0.125
    # tau 0.75: t1 y=0 <  q=1: 0.25 * 1 = 0.25;  t2 y=2 >= q=1: 0.75 * 1 = 0.75;  mean 0.5
    spl1 = (0.125 / 1.5 + 0.5 / 1.5) / 2.0
    assert scaled_pinball(y[1], quantiles[1], levels, trains[1]) == pytest.approx(spl1)
    weights = [3.0, 1.0]
    want = (3.0 * 7.0 / 24.0 + 1.0 * spl1) / 4.0
    assert wspl(y, quantiles, levels, trains, weights) == pytest.approx(want)

    rng = np.random.default_rng(1)
    S, h, L = 5, 4, 3
    y = rng.poisson(3.0, size=(S, h)).astype(float)
    q = np.sort(rng.uniform(0, 6, size=(S, h, L)), axis=-1)
    lv = np.array([0.1, 0.5, 0.9])
    trains = [np.r_[np.zeros(i), rng.poisson(3.0, size=10 + i)] for i in range(S)]
    w = rng.uniform(0, 1, size=S)
    per = [scaled_pinball(y[i], q[i], lv, trains[i]) for i in range(S)]
    assert wspl(y, q, lv, trains, w) == pytest.approx(np.sum(w * per) / np.sum(w))


def test_wspl_skips_series_of_zero_weight_even_with_a_zero_scale():
    y = [[3.0, 1.0], [5.0, 5.0]]
    quantiles = [[[2.0, 4.0], [2.0, 3.0]], [[5.0, 5.0], [5.0, 5.0]]]
    trains = [[2.0, 4.0, 3.0], [5.0, 5.0, 5.0]]  # series 1 is constant: zero scale
    assert wspl(y, quantiles, [0.25, 0.75], trains, [2.0, 0.0]) == pytest.approx(7.0 / 24.0)
    with pytest.raises(ValueError, match=r"y_train\[1\] \(series 1\).*zero"):
        wspl(y, quantiles, [0.25, 0.75], trains, [2.0, 1.0])


def test_crps_skill_by_hand():
    # 1 - mean(1, 2, 3) / mean(2, 4, 6) = 1 - 2 / 4
    assert crps_skill([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(0.5)
    assert crps_skill([[4.0]], [[2.0]]) == pytest.approx(-1.0)
    # against the naive point forecast: its CRPS is the absolute error
    train = np.array(TRAIN)
    y = np.array([7.0, 5.0, 8.0])
    ref = np.abs(y - seasonal_naive(train, 3))  # naive 6, 6, 6: 1, 1, 2
    assert crps_skill([0.5, 0.5, 1.0], ref) == pytest.approx(1.0 - (2.0 / 3.0) / (4.0 / 3.0))


def test_seasonal_naive_by_hand():
    np.testing.assert_array_equal(seasonal_naive(TRAIN, 3), [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(seasonal_naive(QUARTERLY, 6, season_length=4),
                                  [12.0, 18.0, 33.0, 40.0, 12.0, 18.0])
    # m = 3 on 1..5: the last season is 3, 4, 5; y_hat[5 + k] = y[5 + k - 3 ceil(k / 3)]
    np.testing.assert_array_equal(seasonal_naive([1, 2, 3, 4, 5], 4, 3), [3.0, 4.0, 5.0, 3.0])
    np.testing.assert_array_equal(seasonal_naive([1, 2], 2, 2), [1.0, 2.0])
    assert seasonal_naive(TRAIN, 3).shape == (3,)


def _ragged(rng, S, m):
    return [rng.normal(size=m + 3 + 2 * i).cumsum() for i in range(S)]


def test_many_series_forms_equal_the_loop_over_single_series():
    rng = np.random.default_rng(2)
    S, h, m, L = 4, 5, 3, 2
    trains = _ragged(rng, S, m)
    y, y_hat = rng.normal(size=(S, h)), rng.normal(size=(S, h))
    lo, hi = y_hat - 1.0, y_hat + rng.uniform(0.5, 2.0, size=(S, h))
    q = np.sort(rng.normal(size=(S, h, L)), axis=-1)
    lv = [0.2, 0.8]

    got = mase(y, y_hat, trains, season_length=m)
    assert isinstance(got, np.ndarray) and got.shape == (S,)
    np.testing.assert_allclose(got, [mase(y[i], y_hat[i], trains[i], m) for i in range(S)])
    got = msis(y, lo, hi, trains, season_length=m, alpha=0.1)
    assert got.shape == (S,)
    np.testing.assert_allclose(
        got, [msis(y[i], lo[i], hi[i], trains[i], m, alpha=0.1) for i in range(S)])
    got = scaled_pinball(y, q, lv, trains)
    assert got.shape == (S,)
    np.testing.assert_allclose(got, [scaled_pinball(y[i], q[i], lv, trains[i]) for i in range(S)])


def test_pandas_and_list_inputs():
    rng = np.random.default_rng(3)
    S, h = 3, 4
    trains = [rng.normal(size=9).cumsum() for _ in range(S)]
    y, y_hat = rng.normal(size=(S, h)), rng.normal(size=(S, h))
    want = mase(y, y_hat, trains)
    np.testing.assert_allclose(mase(pd.DataFrame(y), pd.DataFrame(y_hat),
                                    [pd.Series(t) for t in trains]), want)
    np.testing.assert_allclose(mase(y.tolist(), y_hat.tolist(), pd.DataFrame(np.array(trains))),
                               want)
    np.testing.assert_allclose(mase(y, y_hat, np.array(trains)), want)
    np.testing.assert_allclose(mase(y, y_hat, pd.Series(trains)), want)
    assert mase(pd.Series(y[0]), y_hat[0].tolist(), pd.Series(trains[0])) == pytest.approx(want[0])


def test_shape_errors_name_the_arguments_and_shapes():
    with pytest.raises(ValueError, match=r"y_hat has shape \(2,\) but y has shape \(3,\)"):
        mase([1.0, 2.0, 3.0], [1.0, 2.0], TRAIN)
    with pytest.raises(ValueError, match=r"upper has shape \(3, 1\)"):
        msis([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [[4.0], [4.0], [4.0]], TRAIN)
    with pytest.raises(ValueError, match="y has 2 series .* y_train holds 3"):
        mase(np.ones((2, 3)), np.ones((2, 3)), [TRAIN, TRAIN, TRAIN])
    with pytest.raises(ValueError, match="sequence of 2 1-D training series"):
        mase(np.ones((2, 3)), np.ones((2, 3)), np.array(TRAIN))
    with pytest.raises(ValueError, match="one 1-D training series"):
        mase([1.0, 2.0], [1.0, 2.0], [TRAIN, TRAIN[:4]])
    with pytest.raises(ValueError, match=r"y has shape \(2, 2, 2\)"):
        mase(np.ones((2, 2, 2)), np.ones((2, 2, 2)), [TRAIN, TRAIN])
    with pytest.raises(ValueError, match=r"quantiles has shape \(2, 3\); expected \(2, 2\)"):
        scaled_pinball([1.0, 2.0], np.ones((2, 3)), [0.1, 0.9], TRAIN)
    with pytest.raises(ValueError, match=r"weights has shape \(3,\); expected \(2,\)"):
        wspl(np.ones((2, 2)), np.ones((2, 2, 1)), [0.5], [TRAIN, TRAIN], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"wspl: y has shape \(2,\)"):
        wspl([1.0, 2.0], np.ones((2, 1)), [0.5], TRAIN, [1.0])
    with pytest.raises(ValueError, match=r"crps has shape \(2,\) but crps_reference has shape"):
        crps_skill([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        mase([1.0, np.nan], [1.0, 2.0], TRAIN)


def test_zero_scale_errors_name_the_series_and_say_why():
    const = [4.0, 4.0, 4.0, 4.0]
    with pytest.raises(ValueError, match="scale of y_train is zero.*seasonal naive error"):
        mase([1.0], [2.0], const)
    with pytest.raises(ValueError, match=r"scale of y_train\[1\] \(series 1\) is zero"):
        mase(np.ones((2, 1)), np.ones((2, 1)), [TRAIN, const])
    # seasonal with period 2: zero scale at m = 2, not at m = 1
    periodic = [1.0, 5.0, 1.0, 5.0, 1.0, 5.0]
    assert mase([2.0], [1.0], periodic, season_length=1) == pytest.approx(1.0 / 4.0)
    with pytest.raises(ValueError, match="season_length=2"):
        msis([2.0], [1.0], [3.0], periodic, season_length=2)
    with pytest.raises(ValueError, match="has 4 values.*more than 4"):
        mase([1.0], [1.0], QUARTERLY[:4], season_length=4)
    with pytest.raises(ValueError, match=r"y_train\[0\] \(series 0\).*all zeros"):
        scaled_pinball([[1.0]], [[[1.0]]], [0.5], [[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="only one value is left"):
        scaled_pinball([1.0], [[1.0]], [0.5], [0.0, 0.0, 3.0])
    with pytest.raises(ValueError, match="constant"):
        scaled_pinball([1.0], [[1.0]], [0.5], [0.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="mean CRPS is 0.0"):
        crps_skill([1.0], [0.0])


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1])
def test_msis_rejects_alpha_outside_the_unit_interval(alpha):
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\)"):
        msis([1.0], [0.0], [2.0], TRAIN, alpha=alpha)


@pytest.mark.parametrize("levels", [[0.0, 0.5], [0.5, 1.0], [1.2, 0.5]])
def test_pinball_scores_reject_levels_outside_the_unit_interval(levels):
    with pytest.raises(ValueError, match=r"levels must lie in \(0, 1\)"):
        scaled_pinball([1.0], [[1.0, 1.0]], levels, TRAIN)
    with pytest.raises(ValueError, match=r"levels must lie in \(0, 1\)"):
        wspl([[1.0]], [[[1.0, 1.0]]], levels, [TRAIN], [1.0])


def test_wspl_rejects_negative_or_all_zero_weights():
    y, q, trains = np.ones((2, 1)), np.ones((2, 1, 1)), [TRAIN, TRAIN]
    with pytest.raises(ValueError, match=r"non-negative; series \[1\]"):
        wspl(y, q, [0.5], trains, [1.0, -1.0])
    with pytest.raises(ValueError, match="all zero"):
        wspl(y, q, [0.5], trains, [0.0, 0.0])


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_integer_arguments_are_checked(bad):
    with pytest.raises(ValueError, match="season_length must be a positive integer"):
        mase([1.0], [1.0], TRAIN, season_length=bad)
    with pytest.raises(ValueError, match="horizon must be a positive integer"):
        seasonal_naive(TRAIN, bad)


def test_seasonal_naive_needs_one_season():
    with pytest.raises(ValueError, match=r"shape \(3,\); expected \(T,\) with T >= season_len"):
        seasonal_naive([1.0, 2.0, 3.0], 2, season_length=4)


def test_against_utilsforecast():
    """Cross-check with utilsforecast.losses (optional; leading zeros are not dropped there,
    so the series start non-zero)."""
    losses = pytest.importorskip("utilsforecast.losses")
    rng = np.random.default_rng(4)
    S, h, m = 3, 6, 4
    trains = [rng.uniform(1.0, 10.0, size=20 + 3 * i) for i in range(S)]
    y, y_hat = rng.uniform(1.0, 10.0, size=(S, h)), rng.uniform(1.0, 10.0, size=(S, h))
    q = rng.uniform(1.0, 10.0, size=(S, h))
    ids = np.repeat(np.arange(S), h)
    df = pd.DataFrame({"unique_id": ids, "ds": np.tile(np.arange(h), S) + 100,
                       "y": y.ravel(), "model": y_hat.ravel(), "q": q.ravel()})
    train_df = pd.DataFrame({"unique_id": np.repeat(np.arange(S), [len(t) for t in trains]),
                             "ds": np.concatenate([np.arange(len(t)) for t in trains]),
                             "y": np.concatenate(trains)})
    theirs = losses.mase(df, ["model"], m, train_df).sort_values("unique_id")["model"]
    np.testing.assert_allclose(mase(y, y_hat, trains, season_length=m), theirs.to_numpy())
    theirs = losses.scaled_quantile_loss(df, {"model": "q"}, 1, train_df, q=0.3)
    theirs = theirs.sort_values("unique_id")["model"].to_numpy()
    np.testing.assert_allclose(scaled_pinball(y, q, 0.3, trains), theirs)
