"""``Forecaster``: probabilistic forecasts of one or many series with one global regressor.

The history becomes feature rows (:mod:`distboost.forecasting.features`: lags, rolling
statistics, calendar, series id, exogenous and static columns), a
:class:`~distboost.DistributionalRegressor` of any family learns the law of the value to
forecast from them, and a strategy (:mod:`distboost.forecasting.strategies`) turns that into
forecasts of ``horizon`` steps: ``recursive`` (one-step model, joint sample paths, marginals
from the paths) or ``direct`` (the step is a feature, exact marginals, no joint paths);
``"auto"`` picks the one with the lower CRPS in a short backtest of the training history.
"""

from __future__ import annotations

import copy
import difflib
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

from ..estimators import DistributionalRegressor
from ..estimators.rounds import CV_MAX_ROWS
from ..families import Censored, get
from ..predictive import Predictive
from .backtest import run_backtest
from .calibration import (
    backtest_coverage,
    calibrate_direct,
    calibrate_paths,
    calibration_origins,
    check_family,
    needs_calibration,
    step_tables,
)
from .data import FILLS, Panel, align_features, flat_times, future_times, long_features, to_panel
from .features import CALENDAR, FeatureSpec, auto_calendar, training_rows
from .strategies import Contexts, direct_dist, empirical, simulate

__all__ = ["Forecaster"]

STRATEGIES = ("auto", "recursive", "direct")
_OWN = ("family", "horizon", "lags", "rolling", "date_features", "strategy", "difference",
        "calibrate", "freq", "fill", "id_col", "time_col", "target_col", "n_paths",
        "random_state")


def _ints(value, name: str, low: int) -> tuple[int, ...]:
    values = [value] if isinstance(value, Integral) else list(value or ())
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, Integral) or v < low]
    if bad:
        raise ValueError(f"{name} takes integers >= {low}; got {value!r}.")
    return tuple(sorted({int(v) for v in values}))


class Forecaster:
    """Probabilistic forecasts from one global distributional regressor (module docstring).

    Parameters
    ----------
    family : str or Family, default="normal"
        The law of each value (any family of :func:`distboost.families.available`, e.g.
        ``"negative_binomial"`` for counts, ``"zero_adjusted_gamma"`` for precipitation,
        ``"censored_normal"`` for a censored history).
    horizon : int, default=1
        Steps to forecast (>= 1).
    lags : int or sequence of int, default=(1,)
        Lags ``j``: the value ``j`` steps before the target is a feature.
    rolling : sequence of int, default=()
        Windows ``w``: mean and standard deviation of the last ``w`` values at the origin.
    date_features : "auto", sequence of str or None, default="auto"
        Calendar columns of the target time (names: ``minute``, ``hour``, ``dayofweek``,
        ``day``, ``dayofyear``, ``weekofyear``, ``month``, ``quarter``, ``year``); "auto"
        picks them from the frequency (:func:`~distboost.forecasting.features.auto_calendar`).
    strategy : {"auto", "recursive", "direct"}, default="auto"
        See the module docstring; "auto" backtests both on the last ``3 * horizon`` values
        of the training history (fewer when the history is short) and keeps the lower CRPS.
    difference : bool, default=False
        Model ``y[t] - y[T]`` (``T`` the origin): lags and rolling means become relative to
        the last value, so that trees follow a trend.  Needs a location family on the real
        line (``normal``, ``studentt``, ``laplace``, ...), whose ``loc`` is shifted back.
    calibrate : bool or "auto", default=False
        Recalibrate each step's forecast by the PIT values of a backtest on the end of the
        history (:mod:`distboost.forecasting.calibration`: one more fit on the history before
        its last ``n + horizon - 1`` values, ``n`` origins per series: a quarter of the
        shortest series, at most 2,000 and at least 20 over all series); joint paths keep
        their ranks.  "auto": run that backtest and recalibrate only when its 90 % coverage
        is outside [0.85, 0.95]; nothing where it cannot run (too short a history, a
        censored family, a point mass beside a density).
    freq : str, pandas DateOffset, int or None, default=None
        The step between timestamps; inferred when None.
    fill : {"raise", "ffill", "interpolate", "zero"}, default="raise"
        What to do with NaN values in a history.
    id_col, time_col, target_col : str, default="id", "time", "y"
        Columns of a long DataFrame (``target_col`` may be a pair ``(lower, upper)``: a
        censored history).
    n_paths : int, default=1000
        Sample paths behind the marginals of a recursive ``predict_dist``.
    random_state : int, default=0
        Seed of the regressor and of the sample paths.
    **regressor_options
        Any option of :class:`~distboost.DistributionalRegressor` (``n_estimators``,
        ``learning_rate``, ``step``, ``param_options``, ``backend``, ...).

    Attributes
    ----------
    model_ : DistributionalRegressor
    strategy_ : {"recursive", "direct"}
    strategy_scores_ : dict or None
        Backtest CRPS of each strategy when ``strategy="auto"`` chose.
    calibration_ : list of ndarray or None
        When the forecasts are recalibrated, the sorted PIT values behind each step's
        calibration map (neighbouring steps pooled to at least 50 values); else None.
    calibration_coverage_ : float or None
        The calibration backtest's 90 % coverage (before any map), None when it did not
        run.
    spec_ : FeatureSpec
    feature_names_ : list of str
    freq_ : the frequency
    ids_ : list
        The series fitted (``[None]`` for one Series).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from distboost.forecasting import Forecaster
    >>> t = pd.date_range("2024-01-01", periods=300, freq="h")
    >>> rng = np.random.default_rng(0)
    >>> y = pd.Series(np.sin(2 * np.pi * t.hour / 24) + rng.normal(0, 0.2, 300), index=t)
    >>> fc = Forecaster(horizon=6, lags=[1, 24], strategy="recursive", n_paths=200,
    ...                 n_estimators=50, early_stopping=False).fit(y)
    >>> fc.predict_dist().interval(0.9).shape, fc.sample_paths(10).shape
    ((6, 2), (10, 6))
    """

    def __init__(self, family="normal", horizon: int = 1, lags=(1,), *, rolling=(),
                 date_features="auto", strategy: str = "auto", difference: bool = False,
                 calibrate: bool = False, freq=None, fill: str = "raise", id_col: str = "id",
                 time_col: str = "time", target_col="y", n_paths: int = 1000, random_state=0,
                 **regressor_options):
        self.family = family
        self.horizon = horizon
        self.lags = lags
        self.rolling = rolling
        self.date_features = date_features
        self.strategy = strategy
        self.difference = difference
        self.calibrate = calibrate
        self.freq = freq
        self.fill = fill
        self.id_col = id_col
        self.time_col = time_col
        self.target_col = target_col
        self.n_paths = n_paths
        self.random_state = random_state
        self.regressor_options = dict(regressor_options)

    # ------------------------------------------------------------------ parameters
    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments, the regressor options included."""
        return {**{k: getattr(self, k) for k in _OWN}, **self.regressor_options}

    def set_params(self, **params) -> Forecaster:
        for k, v in params.items():
            if k in _OWN:
                setattr(self, k, v)
            else:
                self.regressor_options[k] = v
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"Forecaster({args})"

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError("This Forecaster is not fitted yet; call fit(y) first.")

    def _regressor(self) -> DistributionalRegressor:
        known = set(DistributionalRegressor().get_params())
        unknown = sorted(set(self.regressor_options) - known)
        if unknown:
            close = {u: difflib.get_close_matches(u, list(_OWN) + sorted(known), n=1)
                     for u in unknown}
            hints = "; ".join(f"{u!r}: did you mean {c[0]!r}?" for u, c in close.items() if c)
            raise ValueError(
                f"Forecaster got unknown option(s) {unknown}{' (' + hints + ')' if hints else ''}"
                "; it takes its own options (family, horizon, lags, rolling, date_features, "
                "strategy, difference, calibrate, freq, fill, id_col, time_col, target_col, "
                "n_paths, random_state) and every option of DistributionalRegressor.")
        return DistributionalRegressor(family=self.family, random_state=self.random_state,
                                       **self.regressor_options)

    def _settings(self):
        """The checked options: (horizon, lags, windows, calendar names or "auto")."""
        h = self.horizon
        if isinstance(h, bool) or not isinstance(h, Integral) or h < 1:
            raise ValueError(f"horizon must be an integer >= 1 (the number of steps to "
                             f"forecast); got {h!r}.")
        lags = _ints(self.lags, "lags", 1)
        if not lags:
            raise ValueError("lags needs at least one lag (e.g. lags=[1]).")
        windows = _ints(self.rolling, "rolling", 2)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {list(STRATEGIES)}; got "
                             f"{self.strategy!r}.")
        if not (isinstance(self.calibrate, bool | np.bool_)
                or (isinstance(self.calibrate, str) and self.calibrate == "auto")):
            raise ValueError(f"calibrate must be True, False or 'auto'; got "
                             f"{self.calibrate!r}.")
        if self.fill not in FILLS:
            raise ValueError(f"fill must be one of {list(FILLS)}; got {self.fill!r}.")
        n = self.n_paths
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 2:
            raise ValueError(f"n_paths must be an integer >= 2; got {n!r}.")
        cal = self.date_features
        if cal not in ("auto", None, False):
            cal = tuple(cal)
            unknown = [c for c in cal if c not in CALENDAR]
            if unknown:
                raise ValueError(f"Unknown date_features {unknown}; use 'auto' or names from "
                                 f"{list(CALENDAR)}.")
        return int(h), lags, windows, cal

    def _panel(self, y, what: str, freq=None) -> Panel:
        return to_panel(y, id_col=self.id_col, time_col=self.time_col,
                        target_col=self.target_col, freq=freq if freq is not None else self.freq,
                        fill=self.fill, what=what)

    # ------------------------------------------------------------------ fit
    def fit(self, y, X=None, static: pd.DataFrame | None = None) -> Forecaster:
        """Fit the global model on every series of ``y``.

        Parameters
        ----------
        y : Series, dict of Series or long DataFrame
            A Series with a DatetimeIndex or an integer index, a dict ``{id: Series}``, or a
            long DataFrame with ``id_col`` (optional), ``time_col`` and ``target_col``.
        X : DataFrame or dict of DataFrames, optional
            Exogenous features known in advance, one row per value of ``y`` (indexed by time
            like ``y``, a dict like ``y``, or a long frame with ``time_col`` and ``id_col``);
            ``predict_dist`` then needs them for the future (``X_future``).
        static : DataFrame, optional
            Features of each series, indexed by the series ids.

        Returns
        -------
        self
        """
        for attr in ("model_", "strategy_", "strategy_scores_", "spec_", "calibration_",
                     "calibration_coverage_"):
            self.__dict__.pop(attr, None)
        self._settings()
        self._regressor()  # unknown options fail before any work
        panel = self._panel(y, "y")
        family = get(self.family)
        censored = isinstance(family, Censored)
        if panel.bounds is not None and not censored:
            n_cens = int((panel.bounds[:, 0] < panel.bounds[:, 1]).sum())
            if n_cens:
                raise ValueError(
                    f"y has {n_cens} censored value(s) (lower < upper) of {len(panel.values)}; "
                    f"family {family.name!r} takes exact values: use a censored family, e.g. "
                    f"family='censored_{family.name}'.")
        if self.difference:
            inner = family.inner if censored else family
            real_line = np.isinf(inner.support.low) and np.isinf(inner.support.high)
            if "loc" not in inner.param_names or not real_line:
                raise ValueError(
                    f"difference=True needs a location family on the real line (a 'loc' "
                    f"parameter: normal, studentt, laplace, logistic, ...); family "
                    f"{family.name!r} is not one.")
        exog = self._exog(panel, X, "X")
        fitted = self._fit_panel(panel, exog, static, strategy=self.strategy)
        self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k.endswith("_")})
        return self

    def _exog(self, panel: Panel, X, what: str) -> pd.DataFrame | None:
        if X is None:
            return None
        X_long = long_features(X, panel.single, id_col=self.id_col, time_col=self.time_col,
                               what=what)
        ids = np.repeat(np.asarray(panel.ids, dtype=object), panel.lengths)
        return align_features(X_long, ids, panel.times, list(X_long.columns), what,
                              panel.single, need="of y")

    def _fit_panel(self, panel: Panel, exog, static, strategy: str,
                   calibrate: bool | None = None) -> Forecaster:
        """A fitted copy of this forecaster on ``panel`` with ``strategy`` ("auto": the
        strategy with the lower backtest CRPS on the end of ``panel``), calibrated when
        ``calibrate`` (default ``self.calibrate``)."""
        horizon, lags, windows, cal = self._settings()
        scores = None
        if strategy == "auto":
            strategy, scores = self._choose(panel, exog, static, horizon)
        if cal == "auto":
            cal = auto_calendar(panel.freq)
        elif cal in (None, False):
            cal = ()
        if cal and not panel.datetime:
            raise ValueError(f"date_features {list(cal)} need dates; y has integer times.")
        static_rows = None
        if static is not None:
            missing = [i for i in panel.ids if i not in static.index]
            if missing:
                raise ValueError(f"static lacks a row for {len(missing)} series (first "
                                 f"{missing[0]!r}); index it by the series ids.")
            static_rows = static.loc[panel.ids].reset_index(drop=True)
        spec = FeatureSpec(lags=lags, windows=windows, calendar=tuple(cal), strategy=strategy,
                           horizon=horizon, difference=bool(self.difference),
                           ids=list(panel.ids) if panel.n_series > 1 else None,
                           exog=() if exog is None else tuple(exog.columns),
                           static=static_rows,
                           level=0.0 if self.difference else float(np.median(panel.values)))
        need = spec.memory + 1
        short = np.flatnonzero(panel.lengths < need)
        if short.size:
            s = int(short[0])
            raise ValueError(
                f"y: {short.size} of {panel.n_series} series have fewer than {need} values "
                f"({panel.label(s)} has {int(panel.lengths[s])}); the largest lag or rolling "
                f"window is {spec.memory}, so a series needs at least {need} values to give "
                "one training row.")
        calibrate = self.calibrate if calibrate is None else calibrate
        auto = isinstance(calibrate, str)
        if calibrate:  # checked before any fit
            try:
                check_family(get(self.family))
                n_cal = calibration_origins(panel.lengths, spec.memory, horizon)
            except ValueError:
                if not auto:
                    raise
                calibrate = False  # "auto": where the backtest can run
        X, target, rows = training_rows(spec, panel, exog)
        if isinstance(get(self.family), Censored) and target.ndim == 1:
            target = np.c_[target, target]
        model = self._regressor()
        val = self._validation_rows(panel, rows, strategy)
        if val is None:
            model.fit(X, target)
        else:
            model.fit(X[~val], target[~val], eval_set=(X[val], target[val]))
        tables = coverage = None
        if calibrate:
            table = run_backtest(self, panel, exog, static,
                                 start=panel.lengths - horizon - n_cal + 1, step=1,
                                 refit=False, n_paths=min(self.n_paths, 200),
                                 strategy=strategy, calibrate=False)
            coverage = backtest_coverage(table)
            if not auto or needs_calibration(coverage):
                tables = step_tables(table, horizon)
        out = copy.copy(self)
        out.regressor_options = dict(self.regressor_options)
        out.__dict__.update(model_=model, strategy_=strategy, spec_=spec, calibration_=tables,
                            calibration_coverage_=coverage,
                            feature_names_=list(X.columns), freq_=panel.freq,
                            ids_=list(panel.ids), single_=panel.single,
                            history_=panel.tail(spec.memory), strategy_scores_=scores,
                            datetime_=panel.datetime)
        return out

    def _validation_rows(self, panel: Panel, rows: np.ndarray,
                         strategy: str) -> np.ndarray | None:
        """The rows early stopping judges under the default early stopping (None: the
        regressor's own choice, or the options choose otherwise): the rows whose target lies
        in the last ``validation_fraction`` of its series, except for the recursive strategy
        on a short history.

        * A tail, not random rows, for the direct strategy: a random split would put rows of
          the same target time on both sides (one per step) and let the trees memorise them.
        * Recursive below ``CV_MAX_ROWS`` rows: None, the regressor's own K-fold
          cross-validation on every row.  Each row forecasts one step from lagged values,
          and for such autoregressive rows validation on random rows is sound (Bergmeir,
          Hyndman & Koo 2018, Comput. Stat. Data Anal. 120, 70-83); the last 10 % of a
          100-value series would be 9 rows, on which the number of rounds and the
          dispersion calibration swing with a few values (measurements:
          ``docs/benchmarks.md``, "Forecasting").  Longer histories keep the tail (many rows,
          and the latest regime).
        """
        opts = self.regressor_options
        if opts.get("early_stopping", "auto") not in ("auto", True):
            return None
        if strategy == "recursive" and rows.size < CV_MAX_ROWS:
            return None
        share = opts.get("validation_fraction", 0.1)
        cut = np.floor((1.0 - share) * panel.lengths)[panel.series_of[rows]]
        val = panel.position[rows] >= cut
        return val if 0 < val.sum() < val.size else None

    def _choose(self, panel: Panel, exog, static, horizon: int):
        """Backtest both strategies on the last windows of the history (class docstring)."""
        memory = max(max(_ints(self.lags, "lags", 1)), max(_ints(self.rolling, "rolling", 2),
                                                         default=0))
        n_win = 3
        while n_win and panel.lengths.min() - n_win * horizon < memory + 2 * horizon:
            n_win -= 1
        if not n_win:
            return "recursive", None
        scores = {}
        for strategy in ("recursive", "direct"):
            table = run_backtest(self, panel, exog, static,
                                 start=int(panel.lengths.min() - n_win * horizon),
                                 step=horizon, refit=False, n_paths=min(self.n_paths, 200),
                                 strategy=strategy, calibrate=False)
            scores[strategy] = float(table["crps"].mean())
        return min(scores, key=scores.get), scores

    # ------------------------------------------------------------------ forecasts
    def _series_codes(self, panel: Panel) -> np.ndarray:
        """The fitted series number of each series of ``panel`` (ValueError for unknown
        ids when the model uses the id or static features)."""
        uses_ids = self.spec_.ids is not None or self.spec_.static is not None
        if not uses_ids:
            return np.zeros(panel.n_series, dtype=np.int64)
        known = {k: i for i, k in enumerate(self.ids_)}
        fitted_on = f"{self.ids_[:10]}{' ...' if len(self.ids_) > 10 else ''}"
        if panel.single:
            raise ValueError(
                f"y_hist is one Series, but the model was fitted on {len(self.ids_)} series "
                f"{fitted_on}: give y_hist as a dict {{id: Series}} or a long frame with the "
                f"{self.id_col!r} column.")
        unknown = [k for k in panel.ids if k not in known]
        if unknown:
            raise ValueError(
                f"y_hist has {len(unknown)} series unknown to the model ({unknown[:5]}); it "
                f"was fitted on the series {fitted_on} and forecasts only those.")
        return np.array([known[k] for k in panel.ids], dtype=np.int64)

    def _contexts(self, y_hist, X_future):
        self._check_fitted()
        if y_hist is None:
            panel = self.history_
        else:
            panel = self._panel(y_hist, "y_hist", freq=self.freq_)
            if panel.datetime != self.datetime_:
                raise ValueError("y_hist has " + ("dates" if panel.datetime else "integer times")
                                 + " but the model was fitted on "
                                 + ("dates." if self.datetime_ else "integer times."))
        codes = self._series_codes(panel)
        M, H = self.spec_.memory, self.spec_.horizon
        short = np.flatnonzero(panel.lengths < M)
        if short.size:
            s = int(short[0])
            raise ValueError(
                f"y_hist: {short.size} of {panel.n_series} series have fewer than {M} values "
                f"({panel.label(s)} has {int(panel.lengths[s])}); the model's largest lag or "
                f"rolling window is {M}.")
        ends = panel.offsets[1:]
        hist = panel.values[ends[:, None] - M + np.arange(M)[None, :]]
        times = future_times(panel.times[ends - 1], self.freq_, H)
        flat = flat_times(times, panel.datetime)
        ids = np.repeat(np.asarray(panel.ids, dtype=object), H)
        exog = None
        if self.spec_.exog:
            if X_future is None:
                raise ValueError(f"The model was fitted with exogenous features "
                                 f"{list(self.spec_.exog)}: give X_future with their values at "
                                 f"the {H} future steps of every series.")
            X_long = long_features(X_future, panel.single, id_col=self.id_col,
                                   time_col=self.time_col, what="X_future")
            exog = align_features(X_long, ids, flat, self.spec_.exog, "X_future",
                                  panel.single)
        elif X_future is not None:
            raise ValueError("X_future was given but the model was fitted without X.")
        if panel.single:
            index = flat.rename(self.time_col)
        else:
            index = pd.MultiIndex.from_arrays([ids, flat], names=[self.id_col, self.time_col])
        return Contexts(series=codes, hist=hist, times=times, exog=exog), panel, index

    def predict_dist(self, y_hist=None, X_future=None) -> Predictive:
        """The predictive law of each of the ``horizon`` steps after the history's end.

        Parameters
        ----------
        y_hist : same forms as ``y`` of :meth:`fit`, optional
            The history to forecast from (default: the end of the training history); at
            least the largest lag (or window) of values per series.
        X_future : same forms as ``X`` of :meth:`fit`
            The exogenous features at the future steps (when fitted with ``X``).

        Returns
        -------
        Predictive of length ``n_series * horizon``
            Rows series after series, step after step; its ``index`` holds the future times
            (and the series ids for several series).  Direct strategy: the family's exact
            marginals.  Recursive: the empirical marginals of ``n_paths`` sample paths
            (:class:`~distboost.families.Empirical`: quantiles, CRPS and intervals of the
            draws, no density).
        """
        ctx, panel, index = self._contexts(y_hist, X_future)
        if self.strategy_ == "direct":
            dist = direct_dist(self.model_, self.spec_, ctx, panel.datetime)
            if self.calibration_ is not None:
                return calibrate_direct(dist, self.calibration_, len(ctx), index=index)
            return Predictive(dist.family, dist.params, index=index)
        return empirical(self._paths(ctx, panel, self.n_paths, self.random_state),
                         self.model_.family_, index=index)

    def _paths(self, ctx, panel, n_paths: int, seed) -> np.ndarray:
        """Sample paths (C, P, H), calibrated when fitted with ``calibrate=True``."""
        rng = np.random.default_rng(seed)
        paths, _, _ = simulate(self.model_, self.spec_, ctx, int(n_paths), rng, panel.datetime)
        if self.calibration_ is not None:
            paths = calibrate_paths(paths, self.model_.family_, self.calibration_)
        return paths

    def sample_paths(self, n_paths: int, y_hist=None, X_future=None,
                     random_state=0) -> np.ndarray:
        """Joint sample paths of the ``horizon`` steps (recursive strategy).

        Returns
        -------
        ndarray of shape (n_paths, horizon) for one Series, (n_paths, n_series, horizon)
        otherwise; the same ``random_state`` gives the same paths.
        """
        if isinstance(n_paths, bool) or not isinstance(n_paths, Integral) or n_paths < 1:
            raise ValueError(f"n_paths must be an integer >= 1; got {n_paths!r}.")
        self._check_fitted()
        if self.strategy_ == "direct":
            why = (" (strategy='auto' chose 'direct' by backtest CRPS: "
                   f"{self.strategy_scores_})" if self.strategy_scores_ else "")
            raise ValueError(
                "The direct strategy models each step's marginal law, not their dependence, "
                f"so it has no joint sample paths{why}: fit strategy='recursive' for paths.")
        ctx, panel, _ = self._contexts(y_hist, X_future)
        out = self._paths(ctx, panel, n_paths, random_state).transpose(1, 0, 2)  # (P, C, H)
        return out[:, 0, :] if panel.single else out

    def backtest(self, y, start=0.8, step: int | None = None, refit: bool = False, X=None,
                 static=None) -> pd.DataFrame:
        """Rolling-origin backtest of these settings on ``y``
        (:mod:`distboost.forecasting.backtest`).

        A copy of the forecaster is fitted on the values before the first origin
        (``refit=False``) or before every origin (``refit=True``); the fitted model of
        ``self``, if any, is not used (it has seen the values to score).

        Parameters
        ----------
        y, X, static : as in :meth:`fit`
        start : int, float in (0, 1) or timestamp, default=0.8
            The first origin: values in the first window, a share of each series, or the
            last time of the first window.
        step : int, optional
            Values between origins (default: the horizon).
        refit : bool, default=False

        Returns
        -------
        DataFrame
            One row per (series, origin, step): ``series`` (several series), ``origin``,
            ``step``, ``time``, ``y``, ``mean``, ``median``, ``q0.05``, ``q0.95``, ``crps``,
            ``nll``, ``pit``, ``hit_90``; :func:`~distboost.forecasting.backtest_summary`
            averages it by step.
        """
        horizon, *_ = self._settings()
        self._regressor()
        panel = self._panel(y, "y")
        exog = self._exog(panel, X, "X")
        return run_backtest(self, panel, exog, static, start=start,
                            step=horizon if step is None else step, refit=bool(refit),
                            n_paths=self.n_paths, strategy=self.strategy)
