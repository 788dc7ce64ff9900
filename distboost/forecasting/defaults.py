"""What ``lags="auto"``, ``rolling="auto"`` and ``season_length=None`` choose.

The season comes from the frequency of dated series (hourly 24, daily 7, weekly 52, monthly
12, quarterly 4; the periods statsforecast and the M4 guidelines use), from
``season_length=`` for integer times, or else from the data: the lag in ``2 ..
MAX_DETECTED`` whose autocorrelation of the first differences, averaged over the series, is
a local peak above :data:`MIN_ACF` (1, no season, when none is).

The lags are the season's steps and a few multiples, as statsforecast's ``season_length``
and the M5 winners' lag sets suggest: hourly ``1..24, 48, 168``; daily ``1..7, 14, 21,
28`` (a lag of 364 days cost the M5 store x department panel 3 % of WSPL, 0.1742 against
0.1684 without it: it drops a year of training rows per series and adds a noisy feature;
docs/forecasting.md); weekly ``1..4, 8, 13, 26, 52``; monthly ``1..12, 24``; quarterly
``1..4, 8``; yearly ``1..3``; an integer index with season ``m``: ``1..m`` and ``2 m``
(``1..3`` without a season).  The rolling windows: the season and four seasons (hourly 24
and 168; daily 7 and 28; monthly 3 and 12; ...).  No lag or window may reach further back
than the shortest series allows (:func:`longest_lag`: a series keeps at least half its
values as training rows).  The scale window (:func:`scale_window`): a year of the frequency
or the lags' reach if longer (M5: a year, 0.1689, against 0.1735 for the lags' 28 days).
The series' id is a categorical feature (:func:`uses_series_id`) of an unscaled panel, where
it carries each series' level; on a scaled panel the end-of-history backtest decides
(:mod:`.end_backtest`), and without one the id stays out (a model that forecasts any series
from its own history).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["season_of_freq", "detect_season", "auto_lags", "auto_windows", "longest_lag",
           "scale_window", "uses_series_id", "MIN_ACF", "MAX_DETECTED"]

#: A detected season's autocorrelation (of first differences, averaged over the series)
#: must exceed this.
MIN_ACF = 0.2
#: The longest season looked for in an integer-indexed history.
MAX_DETECTED = 400


def _hours(freq) -> float | None:
    """Hours in one step of a pandas frequency (None for an integer step)."""
    if isinstance(freq, int | np.integer):
        return None
    first = pd.Timestamp("2001-01-01") + freq
    return ((first + freq) - first) / pd.Timedelta(hours=1)


def season_of_freq(freq) -> int | None:
    """The season of a dated frequency (None for an integer step, where it is unknown)."""
    hours = _hours(freq)
    if hours is None:
        return None
    if hours < 1:
        return int(round(24 / hours))  # a day of sub-hourly steps
    if hours < 24:
        return int(round(24 / hours))
    if hours < 24 * 7:
        return 7
    if hours < 24 * 25:
        return 52
    if hours < 24 * 80:
        return 12
    if hours < 24 * 300:
        return 4
    return 1


def detect_season(values: np.ndarray, offsets: np.ndarray) -> int:
    """The season of integer-indexed series: the lag ``m`` in ``2 .. MAX_DETECTED`` (and
    at most a third of the shortest series) whose autocorrelation of the first differences,
    averaged over the series, is the highest local peak above :data:`MIN_ACF`; 1 if none."""
    lengths = np.diff(offsets)
    top = min(MAX_DETECTED, int(lengths.min()) // 3)
    if top < 2:
        return 1
    acf = np.zeros(top + 2)
    for s in range(len(lengths)):  # a loop over series (each an FFT of its values)
        d = np.diff(values[offsets[s]:offsets[s + 1]])
        d = d - d.mean()
        denom = float(d @ d)
        if denom <= 0.0:
            continue
        size = 1 << int(np.ceil(np.log2(2 * d.size)))
        f = np.fft.rfft(d, size)
        acf += np.fft.irfft(f * np.conj(f), size)[:top + 2] / denom
    acf /= len(lengths)
    m = np.arange(2, top + 1)
    peak = (acf[m] > acf[m - 1]) & (acf[m] >= acf[m + 1]) & (acf[m] > MIN_ACF)
    return int(m[peak][np.argmax(acf[m][peak])]) if peak.any() else 1


def longest_lag(lengths: np.ndarray, horizon: int) -> int:
    """The furthest a lag or window may reach: half the shortest series (at least 1), so
    that every series keeps half its values as training rows."""
    return max(1, int(np.min(lengths)) // 2)


def auto_lags(freq, season: int, limit: int) -> tuple[int, ...]:
    """``lags="auto"``: the frequency's lag set (module docstring), those up to ``limit``."""
    hours = _hours(freq)
    if hours is not None and hours < 24 and season >= 2:
        lags = [*range(1, season + 1), 2 * season, 7 * season]
    elif hours is not None and 24 <= hours < 24 * 7:
        lags = [*range(1, 8), 14, 21, 28]
    elif hours is not None and 24 * 7 <= hours < 24 * 25:
        lags = [1, 2, 3, 4, 8, 13, 26, 52]
    elif season >= 2:
        lags = [*range(1, season + 1), 2 * season]
    else:
        lags = [1, 2, 3]
    kept = sorted({lag for lag in lags if lag <= limit})
    return tuple(kept) or (1,)


def auto_windows(freq, season: int, limit: int) -> tuple[int, ...]:
    """``rolling="auto"``: the season and four seasons (monthly: a quarter and a year;
    weekly: a quarter and a year; without a season: 3 and 12 steps), those up to ``limit``
    and of at least 2 values."""
    hours = _hours(freq)
    if hours is not None and 24 * 7 <= hours < 24 * 25:
        windows = [13, 52]
    elif hours is not None and 24 * 25 <= hours < 24 * 80:
        windows = [3, 12]
    elif season >= 2:
        windows = [season, 4 * season]
    else:
        windows = [3, 12]
    return tuple(sorted({w for w in windows if 2 <= w <= limit}))


def scale_window(freq, memory: int, limit: int) -> int:
    """The values behind a row's scale factor (:mod:`~distboost.forecasting.scaling`): a year
    of the frequency (364 days, 52 weeks, 12 months, 4 quarters, 8,760 hours) or the
    lags' reach if longer, a year no longer than ``limit`` (half the shortest series); the
    lags' reach for integer times."""
    hours = _hours(freq)
    if hours is None:
        return memory
    year = int(round(364 * 24 / hours)) if hours < 24 * 25 else int(round(365.25 * 24 / hours))
    return max(memory, min(year, limit))


def uses_series_id(n_series: int, scaled: bool) -> bool:
    """Whether the series' id enters as a categorical feature before any backtest (module
    docstring): two or more series without scaling."""
    return n_series > 1 and not scaled
