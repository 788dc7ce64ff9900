"""The global :class:`~distboost.forecasting.Forecaster` on a Dask cluster (issue 49).

A panel too large for one process (a retailer's item-level sales, a utility's meters) is a
long-format Dask DataFrame (one row per series and time).  :class:`DaskForecaster` splits the
work of an in-process fit:

* **the plan** - lags, rolling windows, calendar, scaling, the strategy, the family, the
  direct strategy's copula and the calibration maps: the choices of an in-process
  ``Forecaster`` fitted on a seeded sample of at most ``plan_series`` whole series brought
  to the client (as :class:`~distboost.dask.DaskDistributionalRegressor` with
  ``family="auto"`` compares its candidates on a sample);
* **the training rows** - built partition by partition on the workers by the in-process
  code (``Forecaster._rows``, the validation tail of :func:`~distboost.forecasting.plan.
  tail_rows`): one implementation of the features;
* **the global model** - :class:`~distboost.dask.DaskDistributionalRegressor` on those rows
  (XGBoost's distributed trees), the rows whose target lies in the last
  ``validation_fraction`` of each series as its ``eval_set``;
* **the forecasts** - partition by partition, by the in-process ``Forecaster`` of the plan
  with the cluster's model (``to_local()``), scattered to every worker once (not sent
  inside each graph).

Each series must lie in one partition: a collection whose series cross partitions is
shuffled by id (``shuffle=True``, the default) or refused naming a series.  Nothing but the
plan's sample and the ids of each partition comes to the client.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pandas as pd

from .._validation import int_seed
from ..forecasting import Forecaster
from ..forecasting.plan import check_history, regressor_kwargs, static_rows, tail_rows
from ..forecasting.scaling import SHIFTED
from .estimator import DaskDistributionalRegressor

__all__ = ["DaskForecaster", "PLAN_SERIES"]

#: Most series the plan is chosen on (a seeded sample of whole series, in-process).
PLAN_SERIES = 200
_TARGET, _VALID = "__distboost_target", "__distboost_valid"
#: A column of X (and of y joined with it) that is missing where y has no row of X; a
#: column marking the future rows (covariates, no target) of a forecast's partitions.
_HAS_X, _FUTURE = "__distboost_has_x", "__distboost_future"


def _check_covariates(part: pd.DataFrame, fc: Forecaster) -> None:
    """ValueError naming the first (series, time) of y without a row of X."""
    if _HAS_X not in part.columns:
        return
    lost = part[_HAS_X].isna().to_numpy()
    if lost.any():
        first = part.loc[lost].iloc[0]
        raise ValueError(
            f"X lacks {int(lost.sum())} of the {len(part)} rows of y in a partition (first: "
            f"series {first[fc.id_col]!r}, time {first[fc.time_col]}); give one row of X per "
            "series and time of y.")


def _design_part(part: pd.DataFrame, fc: Forecaster, share: float, static,
                 meta: pd.DataFrame):
    """The training rows of one partition's series (features, target, validation flag);
    ``static``: the static features of every series (indexed by id), or None."""
    if not len(part):
        return meta
    _check_covariates(part, fc)
    panel = fc._panel(part, "y", freq=fc.freq_)
    check_history(panel, fc.plan_)
    exog = None
    if fc.spec_.exog:
        exog = fc._exog(panel, part[[fc.id_col, fc.time_col, *fc.spec_.exog]], "X")
    spec = fc.spec_
    if static is not None:  # the rows of this partition's series, by their local number
        spec = dataclasses.replace(spec, static=static_rows(static, panel.ids))
    X, target, rows = fc._rows(spec, panel, exog)
    # Series after series (then time, then step): the rows of the whole collection are in
    # the same order however its series are cut into partitions, and so is the model.
    order = np.argsort(rows, kind="stable")
    out = X.iloc[order].reset_index(drop=True)
    wide = out.select_dtypes(include="float64").columns
    out[wide] = out[wide].astype(np.float32)  # what XGBoost's trees read: half the memory
    out[_TARGET] = np.asarray(target, dtype=np.float64)[order]
    out[_VALID] = tail_rows(panel, rows, share)[order]
    return out


def _split(part: pd.DataFrame, fc: Forecaster, dtypes):
    """A partition of histories and future covariates (``_FUTURE`` marks the latter) as
    ``(y_hist, X_future)``; X_future None without covariates."""
    if dtypes is None:
        return part, None
    future = part[_FUTURE].to_numpy(dtype=bool)
    cols = [fc.id_col, fc.time_col]
    x = part.loc[future, [*cols, *dtypes]].astype(dtypes)
    return part.loc[~future, [*cols, fc.target_col]], x


def _quantiles_part(part: pd.DataFrame, fc: Forecaster, levels, dtypes, meta: pd.DataFrame):
    if not len(part):
        return meta
    y_hist, X_future = _split(part, fc, dtypes)
    return fc.predict_quantiles(levels, y_hist=y_hist, X_future=X_future)


def _paths_part(part: pd.DataFrame, fc: Forecaster, n_paths: int, seed: int, dtypes,
                meta: pd.DataFrame):
    """One partition's paths as a long frame (id, time, path, value).  A series' draws
    depend on ``seed`` and its own id (:mod:`~distboost.forecasting.keyed`), not on the
    partition's other series."""
    if not len(part):
        return meta
    y_hist, X_future = _split(part, fc, dtypes)
    _, _, index = fc._contexts(y_hist, X_future)
    draws = fc.sample_paths(n_paths, y_hist=y_hist, X_future=X_future,
                            random_state=seed)  # (P, S, H)
    keys = index.to_frame(index=False)
    out = pd.concat([keys] * n_paths, ignore_index=True)
    out["path"] = np.repeat(np.arange(n_paths), len(keys))
    out["value"] = draws.reshape(n_paths, -1).ravel()
    return out


def _first_series_rows(part: pd.DataFrame, id_col: str) -> pd.DataFrame:
    """The rows of ``part``'s first series (none of an empty partition)."""
    return part[part[id_col] == part[id_col].iloc[0]] if len(part) else part


def _scattered(client, value):
    """``value`` held on every worker (a future), or None: large objects (the fitted
    forecaster with its trees, the static rows) then travel once, not in every graph."""
    return None if value is None else client.scatter(value, broadcast=True, hash=False)


class DaskForecaster:
    """Probabilistic forecasts of a panel held in a Dask DataFrame, with one global model
    trained on the cluster (see the module docstring for what runs where).

    Parameters
    ----------
    horizon : int, default=1
        Steps to forecast.
    client : distributed.Client, optional
        The Dask client (None: ``distributed.default_client()``).
    plan_series : int, default=PLAN_SERIES
        Most series of the in-process fit that chooses the plan.
    shuffle : bool, default=True
        Shuffle the rows by series id when a series crosses partitions (False: a clear
        error naming it).
    **options
        Every option of :class:`~distboost.forecasting.Forecaster` (``lags``,
        ``strategy``, ``family``, ``id_col``, ...) and the regressor options that
        :class:`~distboost.dask.DaskDistributionalRegressor` takes.  ``series_id`` cannot
        be True: the model is global without the id, so it forecasts series it was not
        planned on.

    Attributes
    ----------
    local_ : Forecaster
        The in-process forecaster of the plan with the cluster's model: what each
        partition forecasts with, and what :meth:`to_local` returns (its default history
        is the plan's sample: give ``y_hist`` for the other series).
    model_ : DaskDistributionalRegressor
        The global model.
    plan_ids_ : list
        The series the plan was chosen on.
    strategy_, family_, lags_, rolling_, scale_, season_length_
        As :class:`~distboost.forecasting.Forecaster`'s.

    Examples
    --------
    >>> from distributed import Client, LocalCluster                    # doctest: +SKIP
    >>> import dask.dataframe as dd                                      # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=2))                       # doctest: +SKIP
    >>> panel = dd.read_parquet("sales/")   # id, time, y               # doctest: +SKIP
    >>> fc = DaskForecaster(horizon=28).fit(panel)                       # doctest: +SKIP
    >>> fc.predict_quantiles([0.1, 0.5, 0.9]).compute()                 # doctest: +SKIP
    """

    def __init__(self, horizon: int = 1, *, client=None, plan_series: int = PLAN_SERIES,
                 shuffle: bool = True, **options):
        self.horizon = horizon
        self.client = client
        self.plan_series = plan_series
        self.shuffle = shuffle
        self.options = dict(options)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments, the Forecaster's options included."""
        return {"horizon": self.horizon, "client": self.client,
                "plan_series": self.plan_series, "shuffle": self.shuffle, **self.options}

    def set_params(self, **params) -> DaskForecaster:
        for key, value in params.items():
            if key in ("horizon", "client", "plan_series", "shuffle"):
                setattr(self, key, value)
            else:
                self.options[key] = value
        return self

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.get_params().items() if k != "client"}
        return f"DaskForecaster({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    def _get_client(self):
        if self.client is not None:
            return self.client
        from distributed import default_client

        try:
            return default_client()
        except ValueError:
            raise ValueError("DaskForecaster needs a Dask client: start one "
                             "(distributed.Client(...)) or pass client=.") from None

    def _regressor_options(self, fc: Forecaster) -> dict:
        opts = regressor_kwargs(fc.regressor_options)
        if opts.get("backend", "xgboost") != "xgboost":
            raise ValueError(f"DaskForecaster trains with XGBoost's distributed engine; "
                             f"backend={opts['backend']!r} is in-process only.")
        opts.pop("backend", None)
        known = set(DaskDistributionalRegressor().get_params())
        unknown = sorted(set(opts) - known)
        if unknown:
            raise ValueError(f"DaskForecaster got option(s) {unknown} that neither the "
                             "Forecaster nor DaskDistributionalRegressor takes.")
        return opts

    def _whole_series(self, y, id_col: str, what: str):
        """``y`` with every series in one partition (shuffled by id when needed and
        ``shuffle``); the ids of each partition are computed, nothing else."""
        ids = y[id_col].map_partitions(lambda s: pd.Series(pd.unique(s)),
                                       meta=(id_col, y[id_col].dtype)).compute()
        part_of = ids.groupby(ids, sort=False).size()
        split = part_of[part_of > 1]
        if len(split):
            if not self.shuffle:
                raise ValueError(
                    f"{what}: {len(split)} series cross partitions (first {split.index[0]!r}, "
                    f"in {int(split.iloc[0])} partitions) and shuffle=False: put each series "
                    f"in one partition (e.g. set_index or shuffle on {id_col!r}), or let "
                    "DaskForecaster shuffle (shuffle=True).")
            y = y.shuffle(on=id_col)
        return y, np.sort(pd.unique(ids.to_numpy()))

    # ------------------------------------------------------------------ fit
    def fit(self, y, X=None, static: pd.DataFrame | None = None) -> DaskForecaster:
        """Plan on a sample of series, build the training rows on the workers, train the
        global model on the cluster.

        Parameters
        ----------
        y : dask DataFrame
            Long format: ``id_col``, ``time_col`` and ``target_col`` (the Forecaster's
            names, default "id", "time", "y").
        X : dask DataFrame, optional
            Known-future covariates in long format: ``id_col``, ``time_col`` and the
            features, one row per row of ``y`` (joined on the two columns on the cluster);
            the forecasts then need ``X_future``.
        static : DataFrame, optional
            Features of each series (in memory: one row per series), indexed by the series
            ids; sent to the workers with the plan.

        Returns
        -------
        self
        """
        import dask.dataframe as dd

        if self.options.get("series_id") is True:
            raise ValueError("DaskForecaster fits a global model without the series id "
                             "(it forecasts series the plan did not see): series_id=True is "
                             "in-process only.")
        if not isinstance(y, dd.DataFrame):
            raise TypeError(f"DaskForecaster.fit takes a dask DataFrame in long format; got "
                            f"{type(y).__name__} (in-process data: use Forecaster).")
        client = self._get_client()
        base = Forecaster(horizon=self.horizon, **{**self.options, "series_id": False})
        reg_opts = self._regressor_options(base)
        cols = [base.id_col, base.time_col, base.target_col]
        missing = [c for c in cols if c not in y.columns]
        if missing:
            raise ValueError(f"y lacks the column(s) {missing} (its columns: "
                             f"{list(y.columns)}); name them with id_col, time_col and "
                             "target_col.")
        covariates = self._covariates(X, base, y)
        with client.as_current():
            y = y[cols]
            if covariates:
                y = y.merge(X[[*cols[:2], *covariates]].assign(**{_HAS_X: True}),
                            on=cols[:2], how="left")
            y, ids = self._whole_series(y, base.id_col, "y")
            rng = np.random.default_rng(int_seed(base.random_state))
            chosen = (ids if len(ids) <= self.plan_series
                      else np.sort(rng.choice(ids, self.plan_series, replace=False)))
            sample = y[y[base.id_col].isin(list(chosen))].compute()
            _check_covariates(sample, base)
            if static is not None:
                static_rows(static, ids)  # every series has its row, before any fit
            planned = base.fit(sample[cols], X=sample[[*cols[:2], *covariates]]
                               if covariates else None, static=static)
            share = reg_opts.get("validation_fraction", 0.1)
            meta = _design_part(sample, planned, share, static, None).iloc[:0]
            # Computed once and held on the workers: the target's range, the training and
            # the validation rows, and the regressor's passes over them all read it.
            # The plan and the static rows go to the workers once, as data (in the graph
            # they were sent with every computation: dask's "Sending large graph").
            design = y.map_partitions(_design_part, _scattered(client, planned), share,
                                      _scattered(client, static), meta, meta=meta).persist()
            spec = planned.spec_
            if static is not None:  # every series' row, numbered as ids_
                spec = dataclasses.replace(spec, static=static_rows(static, ids))
            if spec.scale in SHIFTED:  # the clip of the draws: every series' range
                lo, hi = client.compute([design[_TARGET].min(), design[_TARGET].max()],
                                        sync=True)
                spec = dataclasses.replace(spec, target_range=(float(lo), float(hi)))
            features = list(planned.feature_names_)
            train, valid = design[~design[_VALID]], design[design[_VALID]]
            model = DaskDistributionalRegressor(
                family=planned.family_, random_state=base.random_state, client=client,
                **reg_opts)
            model.fit(train[features], train[_TARGET],
                      eval_set=[(valid[features], valid[_TARGET])])
        local = copy.copy(planned)
        local.__dict__.update(model_=model.to_local(), spec_=spec, ids_=list(ids))
        self.local_, self.model_, self.plan_ids_ = local, model, list(chosen)
        for name in ("strategy_", "family_", "lags_", "rolling_", "scale_",
                     "season_length_"):
            setattr(self, name, getattr(local, name))
        self._data = y[cols]
        self._x_dtypes = None if not covariates else {
            c: X[c].dtype for c in covariates}
        return self

    def _covariates(self, X, base: Forecaster, y) -> list:
        """The feature columns of ``X`` (a dask DataFrame with the id and time columns)."""
        import dask.dataframe as dd

        if X is None:
            return []
        if not isinstance(X, dd.DataFrame):
            raise TypeError(f"X must be a dask DataFrame in long format like y; got "
                            f"{type(X).__name__}.")
        keys = [base.id_col, base.time_col]
        missing = [c for c in keys if c not in X.columns]
        if missing:
            raise ValueError(f"X lacks the column(s) {missing} that join it to y (its "
                             f"columns: {list(X.columns)}).")
        covariates = [c for c in X.columns if c not in keys]
        clash = [c for c in covariates if c == base.target_col]
        if clash or not covariates:
            raise ValueError(f"X must hold features beside {keys}, not the target "
                             f"{base.target_col!r}; it has {list(X.columns)}.")
        return covariates

    # ------------------------------------------------------------------ forecasts
    def _check_fitted(self):
        if not hasattr(self, "local_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This DaskForecaster is not fitted yet: call fit first.")

    def _history(self, y_hist, X_future):
        """The histories to forecast from, with the future covariates in the same
        partitions (rows marked ``_FUTURE``) when the model has covariates."""
        fc = self.local_
        cols = [fc.id_col, fc.time_col, fc.target_col]
        y = self._data if y_hist is None else y_hist[cols]
        if self._x_dtypes is None:
            if X_future is not None:
                raise ValueError("X_future was given but the model was fitted without X.")
            return self._whole_series(y, fc.id_col, "y_hist")[0] if y_hist is not None else y
        if X_future is None:
            raise ValueError(f"The model was fitted with the covariates "
                             f"{list(self._x_dtypes)}: give X_future (a dask DataFrame) with "
                             f"their values at the {fc.spec_.horizon} future steps of every "
                             "series.")
        missing = [c for c in [*cols[:2], *self._x_dtypes] if c not in X_future.columns]
        if missing:
            raise ValueError(f"X_future lacks the column(s) {missing} (its columns: "
                             f"{list(X_future.columns)}).")
        future = X_future[[*cols[:2], *self._x_dtypes]].assign(**{_FUTURE: True})
        import dask.dataframe as dd

        both = dd.concat([y.assign(**{_FUTURE: False}), future])
        return self._whole_series(both, fc.id_col, "y_hist and X_future")[0]

    def _first_series(self, y) -> pd.DataFrame:
        """One whole series of ``y`` (the output's columns and dtypes): the first series of
        the first partition that has rows, computed alone (one round trip, no pass over the
        other partitions; every series lies whole in one partition)."""
        for i in range(y.npartitions):
            rows = y.get_partition(i).map_partitions(
                _first_series_rows, self.local_.id_col, meta=y._meta).compute()
            if len(rows):
                return rows
        raise ValueError("The histories to forecast from have no rows.")

    def _map(self, y, function, *args):
        """``function(part, local_, *args, x_dtypes, meta)`` over the partitions of ``y``,
        its meta from one series computed on the client."""
        meta = function(self._first_series(y), self.local_, *args, self._x_dtypes,
                        None).iloc[:0]
        fc = _scattered(self._get_client(), self.local_)
        return y.map_partitions(function, fc, *args, self._x_dtypes, meta, meta=meta)

    def predict_quantiles(self, levels, y_hist=None, X_future=None):
        """Quantiles of every series and step, partition by partition.

        Parameters
        ----------
        levels : sequence of float in (0, 1)
        y_hist : dask DataFrame, optional
            Histories to forecast from, in ``fit``'s long format (default: the training
            panel).
        X_future : dask DataFrame, optional
            The covariates at the ``horizon`` future steps of every series, long like ``X``
            of ``fit`` (needed when fitted with ``X``).

        Returns
        -------
        dask DataFrame
            The long frame of :meth:`Forecaster.predict_quantiles`: ``id_col``,
            ``time_col``, ``"q<level>"`` per level.
        """
        self._check_fitted()
        with self._get_client().as_current():
            return self._map(self._history(y_hist, X_future), _quantiles_part, levels)

    def sample_paths(self, n_paths: int, y_hist=None, X_future=None, random_state=0):
        """Joint sample paths of the ``horizon`` steps, partition by partition.

        Returns
        -------
        dask DataFrame
            Long: ``id_col``, ``time_col``, ``path`` (0 .. n_paths - 1) and ``value``.  A
            series' paths depend on ``random_state`` and the series' id only: the same
            paths however the series are cut into partitions, and those of
            ``to_local().sample_paths`` with the same ``random_state``.
        """
        self._check_fitted()
        with self._get_client().as_current():
            return self._map(self._history(y_hist, X_future), _paths_part, n_paths,
                             int_seed(random_state))

    def to_local(self) -> Forecaster:
        """The in-process :class:`~distboost.forecasting.Forecaster` with the cluster's
        model: forecasts from any history given as ``y_hist``."""
        self._check_fitted()
        return copy.copy(self.local_)
