"""``Forecaster``: probabilistic forecasts of one or many series with one global regressor.

The history becomes feature rows (:mod:`distboost.forecasting.features`: lags, rolling
statistics, calendar, series id, exogenous and static columns), each series in units of its
own (:mod:`distboost.forecasting.scaling`), a :class:`~distboost.DistributionalRegressor` of
any family learns the law of the value to forecast from them, and a strategy
(:mod:`distboost.forecasting.strategies`) turns that into forecasts of ``horizon`` steps:
``recursive`` (one-step model, joint sample paths, marginals from the paths) or ``direct``
(the step is a feature, exact marginals, joint paths from a copula over the steps).  The
defaults choose what a user would otherwise tune (:mod:`distboost.forecasting.defaults`, the
end-of-history backtest of :mod:`distboost.forecasting.end_backtest`).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

from ..estimators import DistributionalRegressor
from ..estimators.policy import validation_mode
from ..families import Censored
from ..predictive import Predictive
from .backtest import run_backtest
from .data import Panel, align_features, flat_times, future_times, long_features, to_panel
from .end_backtest import calibratable, run_end_backtest
from .features import FeatureSpec, last_values, training_rows
from .forecasts import marginals, paths, warn_extreme
from .plan import (
    NESTED,
    ForecastPlan,
    check_history,
    check_lengths,
    check_panel_family,
    check_settings,
    family_candidates,
    make_plan,
    regressor_kwargs,
    static_rows,
    tail_rows,
    warn_flat,
)
from .scaling import SHIFTED
from .strategies import Contexts

__all__ = ["Forecaster"]

_OWN = ("family", "horizon", "lags", "rolling", "season_length", "date_features", "strategy",
        "scale", "series_id", "difference", "calibrate", "freq", "fill", "id_col", "time_col",
        "target_col", "n_paths", "random_state")
#: The direct strategy trains on a seeded share of its (origin, step) rows: about this many
#: times the rows of the recursive strategy (every origin once), not ``horizon`` times, and
#: all of them up to ``DIRECT_MIN_ROWS`` (docs/forecasting.md, "Strategies").
DIRECT_ROWS, DIRECT_MIN_ROWS = 1, 100_000


class Forecaster:
    """Probabilistic forecasts from one global distributional regressor (module docstring).

    Parameters
    ----------
    family : "auto", str or Family, default="auto"
        The law of each value (any family of :func:`distboost.families.available`, e.g.
        ``"negative_binomial"`` for counts, ``"zero_adjusted_gamma"`` for precipitation,
        ``"censored_normal"`` for a censored history).  "auto": the Normal or a Student-t
        with ``df >= 2`` (:class:`~distboost.families.StudentT`), the lower scaled
        CRPS in the end-of-history backtest (``family_``, ``family_scores_``); the Normal
        where the histories are too short for it.
    horizon : int, default=1
        Steps to forecast (>= 1).
    lags : "auto", int or sequence of int, default="auto"
        Lags ``j``: the value ``j`` steps before the target is a feature.  "auto": the
        frequency's set (:mod:`~distboost.forecasting.defaults`: daily ``1..7, 14, 21, 28,
        364``, hourly ``1..24, 48, 168``, monthly ``1..12, 24``, ...; for integer times the
        season's steps), those the shortest history allows (``lags_``).
    rolling : "auto" or sequence of int, default="auto"
        Windows ``w``: mean and standard deviation of the last ``w`` values at the origin.
        "auto": the season and four seasons (daily 7 and 28, monthly 3 and 12, ...).
    season_length : int or None, default=None
        Steps in a season (1: none); None takes it from the frequency of dated series, or
        detects it in integer-indexed ones (``season_length_``).
    date_features : "auto", sequence of str or None, default="auto"
        Calendar columns of the target time (names: ``minute``, ``hour``, ``dayofweek``,
        ``day``, ``dayofyear``, ``weekofyear``, ``month``, ``quarter``, ``year``); "auto"
        picks them from the frequency (:func:`~distboost.forecasting.features.auto_calendar`).
    strategy : {"auto", "recursive", "direct"}, default="auto"
        See the module docstring; "auto" keeps the one with the lower scaled CRPS in a
        backtest on the end of the history (``strategy_scores_``).
    scale : "auto", "standard" or bool, default="auto"
        Scaling by the window (:mod:`~distboost.forecasting.scaling`): every row's lags and
        target divided by the mean absolute value of the values its lags read (counts: the
        lags only, and a ``log_scale`` feature).  "auto": on for two or more series.
        "standard": less the window's mean, over its standard deviation (real-line families;
        series far from 0, such as an offset of ``1e9``); "auto" takes it for a family on
        the real line when a series varies by less than 0.1 % of its level.
    series_id : "auto" or bool, default="auto"
        The series' id as a categorical feature (several series).  "auto": on without
        scaling; with it, the end-of-history backtest's choice (``series_id_``,
        ``series_id_scores_``), else off.
    difference : bool, default=False
        Model ``y[t] - y[T]`` (``T`` the origin): lags and rolling means become relative to
        the last value, so that trees follow a trend.  Needs a location family on the real
        line (``normal``, ``studentt``, ``laplace``, ...), whose ``loc`` is shifted back.
    calibrate : bool or "auto", default="auto"
        Recalibrate each step's forecast by the PIT values of the end-of-history backtest
        (:mod:`distboost.forecasting.calibration`); joint paths keep their ranks.  "auto":
        only when the backtest's 90 % coverage is outside [0.85, 0.95]; nothing where it
        cannot run (too short a history, a censored family, a point mass beside a density).
    freq : str, pandas DateOffset, int or None, default=None
        The step between timestamps; inferred when None.
    fill : {"raise", "ffill", "interpolate", "zero"}, default="raise"
        What to do with NaN values in a history.
    id_col, time_col, target_col : str, default="id", "time", "y"
        Columns of a long DataFrame (``target_col`` may be a pair ``(lower, upper)``: a
        censored history).
    n_paths : int, default=200
        Sample paths behind the marginals of a recursive ``predict_dist`` (the mixture of
        their one-step laws).
    random_state : int, default=0
        Seed of the regressor and of the sample paths.
    **regressor_options
        Any option of :class:`~distboost.DistributionalRegressor` (``n_estimators``,
        ``learning_rate``, ``step``, ``param_options``, ``backend``, ...); one the
        forecaster has too (``calibrate``) by its name after ``regressor__``
        (scikit-learn's nested form): ``regressor__calibrate=False``.

    Attributes
    ----------
    model_ : DistributionalRegressor
    strategy_ : {"recursive", "direct"}
    strategy_scores_ : dict or None
        Backtest CRPS of each strategy (each series' divided by its mean absolute step)
        when ``strategy="auto"`` chose.
    lags_, rolling_ : tuple of int
    season_length_ : int
    scale_ : {"mean", "standard", "features", "none"}
    series_id_ : bool
    series_id_scores_ : dict or None
        Backtest scaled CRPS with (True) and without (False) the id, when "auto" chose.
    family_ : Family
    family_scores_ : dict or None
        Backtest scaled CRPS of each candidate family by name, when ``family="auto"`` chose.
    calibration_ : list of ndarray or None
        When the forecasts are recalibrated, the sorted PIT values behind each step's
        calibration map (neighbouring steps pooled to at least 50 values); else None.
    calibration_coverage_ : float or None
        The end-of-history backtest's 90 % coverage (before any map), None when it did not
        run.
    copula_ : ndarray of shape (horizon, horizon) or None
        The direct strategy's correlation of the steps' normal scores (None: independent
        steps, or the recursive strategy).
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
    ...                 calibrate=False, n_estimators=50, early_stopping=False).fit(y)
    >>> fc.predict_dist().interval(0.9).shape, fc.sample_paths(10).shape
    ((6, 2), (10, 6))
    """

    def __init__(self, family="auto", horizon: int = 1, lags="auto", *, rolling="auto",
                 season_length: int | None = None, date_features="auto", strategy: str = "auto",
                 scale="auto", series_id="auto", difference: bool = False, calibrate="auto",
                 freq=None, fill: str = "raise", id_col: str = "id", time_col: str = "time",
                 target_col="y", n_paths: int = 200, random_state=0, **regressor_options):
        self.family = family
        self.horizon = horizon
        self.lags = lags
        self.rolling = rolling
        self.season_length = season_length
        self.date_features = date_features
        self.strategy = strategy
        self.scale = scale
        self.series_id = series_id
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

    def __getstate__(self) -> dict:
        """The state to pickle, without the paths kept for ``sample_paths``."""
        return {k: v for k, v in self.__dict__.items() if k != "_paths_memo_"}

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError("This Forecaster is not fitted yet; call fit(y) first.")

    def _regressor(self, family=None) -> DistributionalRegressor:
        known = set(DistributionalRegressor().get_params())
        kwargs = regressor_kwargs(self.regressor_options)
        unknown = sorted(k for k in self.regressor_options if k.removeprefix(NESTED) not in known)
        if unknown:
            close = {u: [NESTED + c for c in difflib.get_close_matches(
                         u.removeprefix(NESTED), sorted(known), n=1)] if u.startswith(NESTED)
                     else difflib.get_close_matches(u, list(_OWN) + sorted(known), n=1)
                     for u in unknown}
            hints = "; ".join(f"{u!r}: did you mean {c[0]!r}?" for u, c in close.items() if c)
            raise ValueError(
                f"Forecaster got unknown option(s) {unknown}{' (' + hints + ')' if hints else ''}"
                f"; it takes its own options ({', '.join(_OWN)}) and every option of "
                "DistributionalRegressor.")
        if kwargs.get("epistemic_members"):
            raise ValueError(
                f"Forecaster got epistemic_members={kwargs['epistemic_members']}: those "
                "members serve DistributionalRegressor.predict_uncertainty, which a "
                "Forecaster does not call (its forecasts carry their uncertainty in each "
                "step's law); every fit would train them for nothing. Leave it at 0.")
        return DistributionalRegressor(**{"family": self.family if family is None else family,
                                          "random_state": self.random_state, **kwargs})

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
            Features known in advance (prices, events, promotions), one row per value of
            ``y`` (indexed by time like ``y``, a dict like ``y``, or a long frame with
            ``time_col`` and ``id_col``); categorical columns stay categorical.
            ``predict_dist`` then needs them for the future (``X_future``).
        static : DataFrame, optional
            Features of each series, indexed by the series ids.

        Returns
        -------
        self
        """
        for attr in [k for k in vars(self) if k.endswith("_")]:
            delattr(self, attr)
        check_settings(self)
        self._regressor()  # unknown options fail before any work
        panel = self._panel(y, "y")
        check_panel_family(self, panel)
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
                   calibrate: bool | str | None = None, plan: ForecastPlan | None = None,
                   end: bool = True) -> Forecaster:
        """A fitted copy of this forecaster on ``panel``.

        ``strategy`` "auto" chooses by the end-of-history backtest
        (:mod:`~distboost.forecasting.end_backtest`), which also fits the calibration maps
        (``calibrate``, default ``self.calibrate``) and the direct strategy's copula;
        ``end=False`` skips it (the fits of that backtest itself).  ``plan``: the lags and
        scaling to use (default: :func:`~distboost.forecasting.plan.make_plan` on
        ``panel``)."""
        plan = make_plan(self, panel) if plan is None else plan
        horizon = plan.horizon
        static_frame = static_rows(static, panel.ids)
        check_history(panel, plan)
        calibrate = self.calibrate if calibrate is None else calibrate
        result = None
        if end:
            calibrate = calibratable(plan.family, calibrate, panel, plan)
            # a censored history: the backtest scores exact values, so no choice, maps or copula
            end = not isinstance(plan.family, Censored)
        if end:
            candidates = ("recursive", "direct") if strategy == "auto" else (strategy,)
            if (strategy in ("auto", "direct") or calibrate
                    or len(family_candidates(self.family)) > 1):
                result = run_end_backtest(self, panel, exog, static, plan, candidates,
                                          calibrate)
            if result is not None:
                strategy = result.strategy
                plan = dataclasses.replace(plan, series_id=result.series_id,
                                           family=result.family)
            if plan.scale == "mean":
                warn_flat(panel)
            if strategy == "auto":
                strategy = "recursive"  # too short a history to compare
        unscaled = plan.scale == "none" and not self.difference
        spec = FeatureSpec(lags=plan.lags, windows=plan.windows, calendar=plan.calendar,
                           strategy=strategy, horizon=horizon, difference=bool(self.difference),
                           ids=list(panel.ids) if plan.series_id else None,
                           exog=() if exog is None else tuple(exog.columns),
                           static=static_frame, scale=plan.scale,
                           scale_window=plan.scale_window,
                           level=float(np.median(panel.values)) if unscaled else 0.0)
        X, target, rows = self._rows(spec, panel, exog)
        if spec.scale in SHIFTED:
            spec = dataclasses.replace(spec, target_range=(float(np.min(target)),
                                                           float(np.max(target))))
        if isinstance(plan.family, Censored) and target.ndim == 1:
            target = np.c_[target, target]
        model = self._regressor(plan.family)
        val = self._validation_rows(panel, rows, strategy)
        if val is None:
            model.fit(X, target)
        else:
            model.fit(X[~val], target[~val], eval_set=(X[val], target[val]))
        out = copy.copy(self)
        out.regressor_options = dict(self.regressor_options)
        out.__dict__.update(
            model_=model, strategy_=strategy, spec_=spec, plan_=plan,
            lags_=plan.lags, rolling_=plan.windows, season_length_=plan.season_length,
            scale_=plan.scale, series_id_=plan.series_id, family_=plan.family,
            **{name: None if result is None else getattr(result, key) for name, key in (
                ("calibration_", "tables"), ("calibration_coverage_", "coverage"),
                ("copula_", "copula"), ("strategy_scores_", "scores"),
                ("series_id_scores_", "id_scores"), ("family_scores_", "family_scores"))},
            feature_names_=list(X.columns), freq_=panel.freq, ids_=list(panel.ids),
            single_=panel.single, history_=panel.tail(spec.context),
            datetime_=panel.datetime)
        return out

    def _rows(self, spec: FeatureSpec, panel: Panel, exog):
        """``training_rows`` of ``panel`` (the direct strategy's: a seeded share,
        ``DIRECT_ROWS`` per origin and at least ``DIRECT_MIN_ROWS``)."""
        cap = None
        if spec.strategy == "direct":
            origins = int(np.maximum(panel.lengths - spec.memory, 0).sum())
            cap = max(DIRECT_ROWS * origins, DIRECT_MIN_ROWS)
        return training_rows(spec, panel, exog, max_rows=cap, seed=_seed(self.random_state))

    def _validation_rows(self, panel: Panel, rows: np.ndarray, strategy: str):
        """The rows early stopping judges under the default early stopping (None: the
        regressor's own choice, or the options choose otherwise): the rows whose target lies
        in the last ``validation_fraction`` of its series, except for the recursive strategy
        on a short history.

        * A tail, not random rows, for the direct strategy: a random split would put rows of
          the same target time on both sides (one per step) and let the trees memorise them.
        * Recursive where the regressor's plan cross-validates (below ``CV_MAX_ROWS`` rows,
          :func:`~distboost.estimators.policy.validation_mode`): None, the regressor's own
          K-fold cross-validation on every row.  Each row forecasts one step from lagged values,
          and for such autoregressive rows validation on random rows is sound (Bergmeir,
          Hyndman & Koo 2018, Comput. Stat. Data Anal. 120, 70-83); the last 10 % of a
          100-value series would be 9 rows, on which the number of rounds and the
          dispersion calibration swing with a few values (measurements:
          ``docs/benchmarks.md``, "Forecasting").  Longer histories keep the tail (many rows,
          and the latest regime).
        """
        opts = regressor_kwargs(self.regressor_options)
        stopping = opts.get("early_stopping", "auto")
        if stopping not in ("auto", True):
            return None
        if strategy == "recursive" and validation_mode(stopping, rows.size, False) == "cv":
            return None
        val = tail_rows(panel, rows, opts.get("validation_fraction", 0.1))
        return val if 0 < val.sum() < val.size else None

    # ------------------------------------------------------------------ forecasts
    def _series_codes(self, panel: Panel) -> np.ndarray:
        """The fitted series number of each series of ``panel`` (ValueError for unknown
        ids when the model uses the id or static features)."""
        if self.spec_.ids is None and self.spec_.static is None:  # no id is read
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
        check_lengths(panel, M, "y_hist", f"the model's largest lag or rolling window is {M}.")
        ends = panel.offsets[1:]
        hist = last_values(panel.values, panel.offsets[:-1], ends, self.spec_.context)
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
            extra = [c for c in X_long.columns if c not in self.spec_.exog]
            if extra:
                raise ValueError(f"X_future has the column(s) {extra} that the model was not "
                                 f"fitted with (its features: {list(self.spec_.exog)}); drop "
                                 "them, or refit with them in X.")
        elif X_future is not None:
            raise ValueError("X_future was given but the model was fitted without X.")
        if panel.single:
            index = flat.rename(self.time_col)
        else:
            index = pd.MultiIndex.from_arrays([ids, flat], names=[self.id_col, self.time_col])
        ctx = Contexts(series=codes, hist=hist, times=times, exog=exog,
                       ids=np.asarray(panel.ids, dtype=object))
        return ctx, panel, index

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
            marginals (of ``factor * Z`` under scaling by the window,
            :class:`~distboost.families.Affine`).  Recursive: each step's mixture of the
            one-step laws of ``n_paths`` stratified sample paths
            (:class:`~distboost.families.EqualMixture`: exact at the first step; quantiles,
            CRPS, intervals and a density).
        """
        ctx, panel, index = self._contexts(y_hist, X_future)
        return marginals(self, ctx, panel.datetime, index)

    def predict_quantiles(self, levels, y_hist=None, X_future=None) -> pd.DataFrame:
        """Quantiles of every series and step as a long frame.

        Parameters
        ----------
        levels : sequence of float in (0, 1)
        y_hist, X_future : as in :meth:`predict_dist`

        Returns
        -------
        DataFrame
            One row per (series, step): ``id_col`` (several series), ``time_col``, then
            ``"q<level>"`` for each level (``q0.05``, ...), as ``Predictive.to_frame`` names
            them.
        """
        levels = np.atleast_1d(np.asarray(levels, dtype=np.float64))
        if levels.ndim != 1 or not np.all((levels > 0) & (levels < 1)):
            raise ValueError(f"levels must be quantile levels in (0, 1); got {levels!r}.")
        ctx, panel, index = self._contexts(y_hist, X_future)
        dist = marginals(self, ctx, panel.datetime, index)
        q = dist.quantile(levels)
        warn_extreme(q, ctx, "predict_quantiles", dist)
        frame = dist.index.to_frame(index=False)
        for j, level in enumerate(levels):
            frame[f"q{level:g}"] = q[:, j]
        return frame

    def sample_paths(self, n_paths: int, y_hist=None, X_future=None,
                     random_state=0) -> np.ndarray:
        """Joint sample paths of the ``horizon`` steps: recursive simulation, or the direct
        strategy's exact marginals joined by its copula over the steps (``copula_``).

        Returns
        -------
        ndarray of shape (n_paths, horizon) for one Series, (n_paths, n_series, horizon)
        otherwise; the same ``random_state`` gives the same paths.

        Notes
        -----
        A recursive ``predict_dist`` (``predict_quantiles``) keeps its paths: called next
        with the same histories, ``n_paths`` and seed, this returns a copy of them instead
        of drawing them again (the same paths either way).
        """
        if isinstance(n_paths, bool) or not isinstance(n_paths, Integral) or n_paths < 1:
            raise ValueError(f"n_paths must be an integer >= 1; got {n_paths!r}.")
        ctx, panel, _ = self._contexts(y_hist, X_future)
        sims = paths(self, ctx, panel.datetime, n_paths, random_state)
        warn_extreme(sims, ctx, "sample_paths")
        out = sims.transpose(1, 0, 2)
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
        horizon = check_settings(self)["horizon"]
        self._regressor()
        panel = self._panel(y, "y")
        exog = self._exog(panel, X, "X")
        return run_backtest(self, panel, exog, static, start=start,
                            step=horizon if step is None else step, refit=bool(refit),
                            n_paths=self.n_paths, strategy=self.strategy)


def _seed(random_state) -> int:
    return int(random_state) if isinstance(random_state, Integral) else 0

