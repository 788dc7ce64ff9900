"""Forecasting input: the forms a history comes in, its frequency, and the checks on both.

Every form becomes one :class:`Panel` (all series one after the other in flat arrays, the
row offsets of each series): a pandas Series indexed by a DatetimeIndex or an integer index
(one series), a dict ``{id: Series}``, or a long DataFrame with an id column (optional: one
series without it), a time column and a target column (a pair of target columns holds the
``[lower, upper]`` bounds of a censored history).  The checks raise a ``ValueError`` naming the
problem, the series and how many values: duplicated timestamps, irregular timestamps (gaps in
the grid of the frequency), a frequency that cannot be inferred, NaN values (unless ``fill``
chooses a filling), exogenous features that miss rows or columns.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

__all__ = ["Panel", "to_panel", "future_times", "align_features", "FILLS"]

#: How NaN values of a history are filled: ``"raise"`` (an error naming them), the last
#: value carried forward, linear interpolation, or zero (counts, precipitation).  Leading NaN
#: values left by ``"ffill"`` / ``"interpolate"`` are dropped (the series starts later).
FILLS = ("raise", "ffill", "interpolate", "zero")


@dataclass(frozen=True)
class Panel:
    """Several series in flat arrays, series after series, each sorted by time.

    Attributes
    ----------
    ids : list
        The series' keys, in order (``[None]`` for a single Series).
    values : ndarray of shape (N,)
        Point values (a censored value's representative: see :func:`representative`).
    bounds : ndarray of shape (N, 2) or None
        ``[lower, upper]`` of a censored history, else None.
    offsets : ndarray of shape (S + 1,)
        Series ``s`` is ``values[offsets[s]:offsets[s + 1]]``.
    times : pandas Index of length N
        A DatetimeIndex, or an integer Index (positions).
    freq : pandas DateOffset or int
        The step between consecutive times.
    single : bool
        Given as one Series (outputs then have no id level).
    """

    ids: list
    values: np.ndarray
    bounds: np.ndarray | None
    offsets: np.ndarray
    times: pd.Index
    freq: object
    single: bool

    @property
    def n_series(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def series_of(self) -> np.ndarray:
        """The series number of every value, shape (N,)."""
        return np.repeat(np.arange(self.n_series), self.lengths)

    @property
    def position(self) -> np.ndarray:
        """The position of every value inside its series, shape (N,)."""
        return np.arange(len(self.values)) - np.repeat(self.offsets[:-1], self.lengths)

    @property
    def datetime(self) -> bool:
        return isinstance(self.times, pd.DatetimeIndex)

    def label(self, s: int) -> str:
        return "the series" if self.single else f"series {self.ids[s]!r}"

    def series(self, s: int) -> slice:
        return slice(int(self.offsets[s]), int(self.offsets[s + 1]))

    def keys(self) -> pd.MultiIndex:
        """(id, time) of every value."""
        return pd.MultiIndex.from_arrays([np.repeat(np.asarray(self.ids, dtype=object),
                                                    self.lengths), self.times])

    def tail(self, n: int) -> Panel:
        """The last ``n`` values of every series (all of a shorter one)."""
        starts = np.maximum(self.offsets[:-1], self.offsets[1:] - n)
        keep = np.concatenate([np.arange(a, b) for a, b in zip(starts, self.offsets[1:],
                                                                strict=True)])
        lengths = self.offsets[1:] - starts
        return replace(self, values=self.values[keep],
                       bounds=None if self.bounds is None else self.bounds[keep],
                       offsets=np.r_[0, np.cumsum(lengths)], times=self.times[keep])

    def rows(self, series: np.ndarray, keep: np.ndarray) -> Panel:
        """The series at positions ``series`` (in that order) cut to the flat values ``keep``
        (a contiguous stretch of each, series after series)."""
        lengths = np.bincount(np.searchsorted(self.offsets, keep, side="right") - 1,
                              minlength=self.n_series)[series]
        return replace(self, ids=[self.ids[s] for s in series], values=self.values[keep],
                       bounds=None if self.bounds is None else self.bounds[keep],
                       offsets=np.r_[0, np.cumsum(lengths)], times=self.times[keep])

    def truncate(self, ends: np.ndarray) -> Panel:
        """Every series cut after its first ``ends[s]`` values."""
        ends = np.minimum(np.asarray(ends, dtype=np.int64), self.lengths)
        keep = np.concatenate([np.arange(a, a + e) for a, e in zip(self.offsets[:-1], ends,
                                                                    strict=True)])
        return replace(self, values=self.values[keep],
                       bounds=None if self.bounds is None else self.bounds[keep],
                       offsets=np.r_[0, np.cumsum(ends)], times=self.times[keep])


def representative(bounds: np.ndarray) -> np.ndarray:
    """One value per censored bound pair (the lag features' value): the value of an exact
    row, the finite end of a one-sided interval, the midpoint of a two-sided one."""
    lo, hi = bounds[:, 0], bounds[:, 1]
    with np.errstate(invalid="ignore"):
        mid = 0.5 * (lo + hi)
    return np.where(np.isfinite(hi), np.where(np.isfinite(lo), mid, hi), lo)


# ---------------------------------------------------------------------- input forms
def _frame_of(y, *, id_col, time_col, target_col, what: str) -> tuple[pd.DataFrame, bool]:
    """Any form as a long frame with columns ``id``, ``time``, ``value`` (or ``lower`` and
    ``upper``), and whether it was one Series."""
    if isinstance(y, pd.Series):
        return _series_frame(y, None, what), True
    if isinstance(y, dict):
        if not y:
            raise ValueError(f"{what} is an empty dict; give at least one series.")
        parts = [_series_frame(s, k, f"{what}[{k!r}]") for k, s in y.items()]
        return pd.concat(parts, ignore_index=True), False
    if isinstance(y, pd.DataFrame):
        if time_col not in y.columns and _is_time_index(y.index) and y.shape[1] == 2:
            frame = pd.DataFrame({"id": None, "time": y.index, "lower": y.iloc[:, 0].to_numpy(),
                                  "upper": y.iloc[:, 1].to_numpy()})
            return frame, True
        targets = [target_col] if isinstance(target_col, str) else list(target_col)
        needed = [time_col, *targets]
        missing = [c for c in needed if c not in y.columns]
        if missing:
            raise ValueError(
                f"{what} is a long DataFrame without the column(s) {missing} (time_col="
                f"{time_col!r}, target_col={target_col!r}); its columns are {list(y.columns)}.")
        frame = pd.DataFrame({"id": y[id_col].to_numpy() if id_col in y.columns else None,
                              "time": y[time_col].to_numpy()})
        if len(targets) == 1:
            frame["value"] = _numeric(y[targets[0]], what)
        elif len(targets) == 2:
            frame["lower"] = _numeric(y[targets[0]], what)
            frame["upper"] = _numeric(y[targets[1]], what)
        else:
            raise ValueError(f"target_col is one column, or two ([lower, upper] bounds of a "
                             f"censored target); got {target_col!r}.")
        return frame, id_col not in y.columns
    raise TypeError(f"{what} must be a pandas Series (DatetimeIndex or integer index), a dict "
                    f"of Series, or a long DataFrame; got {type(y).__name__}.")


def _is_time_index(index) -> bool:
    return isinstance(index, pd.DatetimeIndex) or pd.api.types.is_integer_dtype(index)


def _numeric(values, what: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must hold numbers; got dtype {values.dtype}.") from err


def _series_frame(s, key, what: str) -> pd.DataFrame:
    if not isinstance(s, pd.Series):
        raise TypeError(f"{what} must be a pandas Series; got {type(s).__name__}.")
    if not _is_time_index(s.index):
        raise ValueError(
            f"{what} must be indexed by time: a DatetimeIndex or an integer index (RangeIndex); "
            f"got a {type(s.index).__name__} of dtype {s.index.dtype}.")
    return pd.DataFrame({"id": key, "time": s.index, "value": _numeric(s, what)})


# ---------------------------------------------------------------------- the checks
def _as_times(times, what: str) -> pd.Index:
    if pd.api.types.is_integer_dtype(times):
        return pd.Index(np.asarray(times, dtype=np.int64))
    try:
        return pd.DatetimeIndex(times)
    except (TypeError, ValueError) as err:
        raise ValueError(f"The timestamps of {what} are neither dates nor integers "
                         f"({err}).") from err


def _name(ids, s, single) -> str:
    return "the series" if single else f"series {ids[s]!r}"


def _infer_offset(times: pd.Index, label: str):
    """The frequency of one sorted, duplicate-free series (ValueError when it has gaps or
    none can be inferred)."""
    if not isinstance(times, pd.DatetimeIndex):
        diffs = np.diff(np.asarray(times))
        if diffs.size == 0:
            raise ValueError(f"The frequency of {label} cannot be inferred from 1 timestamp; "
                             "give freq= (the step between integer times).")
        step = int(diffs.min())
        gaps = diffs != step
        if gaps.any():
            raise ValueError(
                f"Irregular timestamps in {label}: {int(gaps.sum())} of {diffs.size} steps "
                f"differ from the smallest step {step} (first after {times[np.argmax(gaps)]}); "
                "give the missing times NaN values (y.reindex(range(...))) and choose a fill=.")
        return step
    if len(times) < 3:
        raise ValueError(f"The frequency of {label} cannot be inferred from {len(times)} "
                         "timestamp(s) (pandas needs 3); give freq= (e.g. freq='h').")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inferred = pd.infer_freq(times)
    if inferred is not None:
        return pd.tseries.frequencies.to_offset(inferred)
    ns = np.diff(np.asarray(times, dtype="datetime64[ns]").astype(np.int64))
    step = np.min(ns)
    if np.all(ns % step == 0):
        gaps = ns != step
        first = times[int(np.argmax(gaps))]
        raise ValueError(
            f"Irregular timestamps in {label}: {int(gaps.sum())} of {ns.size} steps are "
            f"longer than the smallest step {pd.Timedelta(int(step), 'ns')} (first gap after "
            f"{first}); give the missing timestamps NaN values (y.asfreq(freq)) and choose a "
            "fill=, or pass freq= if the grid is another.")
    raise ValueError(
        f"The frequency of {label} cannot be inferred: its steps vary between "
        f"{pd.Timedelta(int(ns.min()), 'ns')} and {pd.Timedelta(int(ns.max()), 'ns')} and match "
        "no pandas frequency; give freq= (e.g. freq=pd.DateOffset(months=1)).")


def _check_grid(times: pd.Index, freq, label: str) -> None:
    """``times`` must be the grid ``times[0], times[0] + freq, ...`` without gaps."""
    if not isinstance(times, pd.DatetimeIndex):
        expected = times[0] + freq * np.arange(len(times))
        bad = np.asarray(times) != expected
    else:
        expected = pd.date_range(times[0], periods=len(times), freq=freq)
        bad = np.asarray(times, dtype="datetime64[ns]") != np.asarray(expected,
                                                                       dtype="datetime64[ns]")
    if bad.any():
        first = int(np.argmax(bad))
        freqstr = getattr(freq, "freqstr", freq)
        raise ValueError(
            f"Irregular timestamps in {label} for the frequency {freqstr!r}: {int(bad.sum())} "
            f"of {len(times)} are off its grid (first {times[first]}, expected "
            f"{expected[first]}); give missing timestamps NaN values (y.asfreq(freq)) and "
            "choose a fill=.")


def _fill(values: np.ndarray, offsets: np.ndarray, fill: str) -> tuple[np.ndarray, np.ndarray]:
    """Fill NaN values series by series; the mask of the values kept (leading NaN values
    that no filling reaches are dropped)."""
    keep = np.ones(values.size, dtype=bool)
    out = values.copy()
    series = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    if fill == "zero":
        out[np.isnan(out)] = 0.0
        return out, keep
    frame = pd.Series(out).groupby(series)
    if fill == "ffill":
        out = frame.ffill().to_numpy()
    else:
        out = frame.transform(lambda s: s.interpolate(limit_area="inside").ffill()).to_numpy()
    keep = ~np.isnan(out)
    return out, keep


def to_panel(y, *, id_col="id", time_col="time", target_col="y", freq=None, fill="raise",
             what="y") -> Panel:
    """Any accepted form of a history as a checked :class:`Panel` (module docstring).

    Parameters
    ----------
    y : Series, dict of Series or long DataFrame
    id_col, time_col, target_col : str
        The columns of a long DataFrame (``target_col`` may be a pair: censored bounds).
    freq : str, pandas DateOffset, int or None
        The step between timestamps; inferred from the data when None.
    fill : {"raise", "ffill", "interpolate", "zero"}
        What to do with NaN values.
    what : str
        The argument's name in the errors.

    Raises
    ------
    ValueError
        For duplicated or irregular timestamps, a frequency that cannot be inferred, NaN
        values with ``fill="raise"`` (how many, in which series, the first timestamp), or
        several series with different frequencies.
    """
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {list(FILLS)}; got {fill!r}.")
    frame, single = _frame_of(y, id_col=id_col, time_col=time_col, target_col=target_col,
                              what=what)
    if len(frame) == 0:
        raise ValueError(f"{what} has no values.")
    times = _as_times(frame["time"], what)
    frame["time"] = times
    ids = pd.unique(frame["id"]) if not single else np.array([None], dtype=object)
    codes = np.zeros(len(frame), dtype=np.int64) if single else \
        pd.Categorical(frame["id"], categories=ids).codes.astype(np.int64)
    order = np.lexsort((np.asarray(times.asi8 if isinstance(times, pd.DatetimeIndex)
                                   else times), codes))
    frame = frame.iloc[order].reset_index(drop=True)
    codes = codes[order]
    times = _as_times(frame["time"], what)
    counts = np.bincount(codes, minlength=len(ids))
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    ids = list(ids)
    same_time = np.asarray(times[1:] == times[:-1])
    dup = np.r_[False, (codes[1:] == codes[:-1]) & same_time]  # sorted: duplicates adjoin
    if dup.any():
        s = int(codes[np.argmax(dup)])
        n_series = len(np.unique(codes[dup]))
        raise ValueError(
            f"{what} has {int(dup.sum())} duplicated timestamp(s) in {n_series} series (first "
            f"in {_name(ids, s, single)} at {times[np.argmax(dup)]}); a series has one value "
            "per timestamp: aggregate the duplicates (e.g. y.groupby(level=0).mean()) or give "
            "each series its own id.")
    if freq is not None:
        offset = freq if isinstance(freq, int | np.integer) else \
            pd.tseries.frequencies.to_offset(freq)
        if isinstance(times, pd.DatetimeIndex) and isinstance(offset, int | np.integer):
            raise ValueError(f"freq={freq!r} is an integer step but {what} has dates; give a "
                             "pandas frequency such as 'h' or 'D'.")
    else:
        longest = int(np.argmax(counts))
        offset = _infer_offset(times[offsets[longest]:offsets[longest + 1]],
                               _name(ids, longest, single) + f" of {what}")
    for s in range(len(ids)):
        part = times[offsets[s]:offsets[s + 1]]
        if len(part) > 1:
            _check_grid(part, offset, _name(ids, s, single) + f" of {what}")
    if "lower" in frame:
        bounds = frame[["lower", "upper"]].to_numpy(dtype=np.float64)
        nan = np.isnan(bounds).any(axis=1)
        if nan.any():
            raise ValueError(f"{what} has {int(nan.sum())} censored row(s) with NaN bounds; "
                             "give both bounds (-inf / inf for an open end).")
        values = representative(bounds)
    else:
        bounds = None
        values = frame["value"].to_numpy(dtype=np.float64)
    nan = np.isnan(values)
    if nan.any():
        if fill == "raise":
            per = np.bincount(codes[nan], minlength=len(ids))
            worst = [s for s in np.argsort(-per, kind="stable") if per[s]][:3]
            where = "; ".join(f"{_name(ids, s, single)}: {per[s]}, first at "
                              f"{times[offsets[s] + np.argmax(nan[offsets[s]:offsets[s + 1]])]}"
                              for s in worst)
            raise ValueError(
                f"{what} has {int(nan.sum())} NaN value(s) in {int((per > 0).sum())} series "
                f"({where}); pass fill='ffill', 'interpolate' or 'zero' to fill them.")
        values, keep = _fill(values, offsets, fill)
        if not keep.all():
            codes, times, values = codes[keep], times[keep], values[keep]
            counts = np.bincount(codes, minlength=len(ids))
            offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
            empty = [ids[s] for s in np.flatnonzero(counts == 0)]
            if empty:
                raise ValueError(f"{what}: series {empty} hold only NaN values.")
    if not np.isfinite(values).all():
        n_inf = int((~np.isfinite(values)).sum())
        raise ValueError(f"{what} has {n_inf} infinite value(s); give finite values (a "
                         "censored target takes [lower, upper] bounds: target_col=(lo, hi)).")
    return Panel(ids=ids, values=values, bounds=bounds, offsets=offsets, times=times,
                 freq=offset, single=single)


# ---------------------------------------------------------------------- future times
def future_times(last, freq, horizon: int) -> np.ndarray:
    """The ``horizon`` times after each of ``last`` (S,): an object array (S, horizon) of
    Timestamps, or int64 positions for integer time."""
    if not isinstance(last, pd.DatetimeIndex):
        last = np.asarray(last, dtype=np.int64)
        return last[:, None] + freq * np.arange(1, horizon + 1)[None, :]
    out = np.empty((len(last), horizon), dtype=object)
    for t in pd.unique(last):  # one grid per distinct end (usually one)
        grid = pd.date_range(t, periods=horizon + 1, freq=freq)[1:]
        out[np.asarray(last == t)] = np.asarray(grid, dtype=object)
    return out


def flat_times(times: np.ndarray, datetime: bool) -> pd.Index:
    """A (S, H) array of future times as one Index (a DatetimeIndex keeps the time zone)."""
    flat = times.reshape(-1)
    if datetime:
        return pd.DatetimeIndex(list(flat))
    return pd.Index(flat.astype(np.int64))


# ---------------------------------------------------------------------- exogenous features
def long_features(X, panel_single: bool, *, id_col, time_col, what: str) -> pd.DataFrame:
    """Exogenous features in any form as one frame indexed by (id, time)."""
    if isinstance(X, dict):
        parts = []
        for key, frame in X.items():
            if not isinstance(frame, pd.DataFrame):
                raise TypeError(f"{what}[{key!r}] must be a DataFrame indexed by time; got "
                                f"{type(frame).__name__}.")
            parts.append(frame.set_axis(pd.MultiIndex.from_arrays(
                [np.full(len(frame), key, dtype=object), _as_times(frame.index, what)]),
                axis=0))
        return pd.concat(parts)
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"{what} must be a DataFrame (or a dict of DataFrames for a dict y); "
                        f"got {type(X).__name__}.")
    if time_col in X.columns:
        ids = X[id_col].to_numpy(dtype=object) if id_col in X.columns else \
            np.full(len(X), None, dtype=object)
        index = pd.MultiIndex.from_arrays([ids, _as_times(X[time_col], what)])
        return X.drop(columns=[c for c in (id_col, time_col) if c in X.columns]).set_axis(
            index, axis=0)
    if not _is_time_index(X.index):
        raise ValueError(f"{what} must be indexed by time like y, or hold a {time_col!r} "
                         f"column; got an index of dtype {X.index.dtype}.")
    return X.set_axis(pd.MultiIndex.from_arrays(
        [np.full(len(X), None, dtype=object), _as_times(X.index, what)]), axis=0)


def align_features(X_long: pd.DataFrame, ids: np.ndarray, times: pd.Index, columns,
                   what: str, single: bool, need: str = "the forecast needs") -> pd.DataFrame:
    """The rows of ``X_long`` at the keys (ids[i], times[i]), with ``columns``; a ValueError
    naming the missing columns, or how many keys have no row (and the first)."""
    missing = [c for c in columns if c not in X_long.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {missing} that the model was fitted "
                         f"with; it has {list(X_long.columns)}.")
    if X_long.index.duplicated().any():
        raise ValueError(f"{what} has {int(X_long.index.duplicated().sum())} duplicated "
                         "(series, time) rows.")
    if single:
        X_long = X_long.set_axis(pd.MultiIndex.from_arrays(
            [np.full(len(X_long), None, dtype=object), X_long.index.get_level_values(1)]),
            axis=0)
    keys = pd.MultiIndex.from_arrays([np.asarray(ids, dtype=object), times])
    pos = X_long.index.get_indexer(keys)
    if (pos < 0).any():
        bad = np.flatnonzero(pos < 0)
        who = "" if single else f" series {ids[bad[0]]!r},"
        raise ValueError(f"{what} lacks {bad.size} of {len(keys)} rows {need} "
                         f"(first:{who} time {times[bad[0]]}); give one row per series and "
                         f"{'future time step' if 'forecast' in need else 'time of y'}.")
    return X_long.iloc[pos][list(columns)].reset_index(drop=True)
