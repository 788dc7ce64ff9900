"""Distributional regression on a Dask cluster, trained by XGBoost's distributed engine.

:class:`DaskDistributionalRegressor` takes Dask collections (DataFrame / Series / Array,
e.g. from ``dask.dataframe.read_parquet``) and trains the same model as
:class:`~distboost.DistributionalRegressor` with ``backend="xgboost"``, on the workers that
hold the rows: ``xgboost.dask.train`` runs the family's per-row objective
(:class:`~distboost.dask._worker.WorkerObjective`) on each worker's partitions and
all-reduces the histograms; early stopping and the dispersion calibration judge a
distributed validation set through an all-reduced metric.  The global numbers a fit needs
(start values, mean weight, curvature scale) are reductions over the partitions
(:mod:`distboost.dask._reduce`).  ``to_local()`` gives the in-process regressor, which
predicts the same numbers and saves in distboost's safe format.

What differs from in-process training (``docs/dask.md``): XGBoost cannot halve a round's
step, so a round that raises the training loss ends training (the rounds before it are
kept, with a warning); there is no cross-validation mode, no linear start and no scikit-learn
base learner; the held-out split (when no ``eval_set`` is given) is seeded per partition, so
it is the same for the same data and partitioning.

The conventions are those of ``lightgbm.dask`` and ``xgboost.dask``: a ``client`` option,
else the default client (``distributed.default_client()``).
"""

from __future__ import annotations

import functools
import uuid
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import families as _families
from .._validation import check_eval_set, check_target, int_seed
from ..boosting.engine import MAX_HALVINGS
from ..boosting.ensemble import FittedEnsemble
from ..boosting.xgboost_backend import XGBoostModel, xgb_params
from ..estimators import (
    DistributionalRegressor,
    Option,
    OptionsMixin,
    continued_outputs,
    is_auto,
)
from ..objective import FamilyObjective
from ._data import TrainingFrame, as_frame, place
from ._reduce import global_curvature, holdout_split, refine_start, target_pass
from ._rounds import boost_with_halving, continue_alone
from ._worker import (
    WorkerMetric,
    WorkerObjective,
    make_guard,
    make_rate,
    pack_target,
    pop_state,
    slots,
)
from .auto import choose_on_sample

__all__ = ["DaskDistributionalRegressor"]

#: Seconds a collective operation (an all-reduce of histograms or losses) may wait for the
#: other workers before XGBoost gives up: a worker lost mid-training then ends the fit with an
#: error instead of a hang.  Generous: a round's slowest worker rarely lags by a minute.
COLLECTIVE_TIMEOUT = 300

#: Options shared with :class:`~distboost.DistributionalRegressor` (``to_local`` passes them).
_SHARED = ("family", "scoring_rule", "n_estimators", "learning_rate", "step", "num_leaves",
           "max_depth", "min_child_samples", "subsample", "colsample", "reg_lambda",
           "max_bin", "calibrate", "early_stopping", "validation_fraction",
           "n_iter_no_change", "per_parameter_stopping", "links", "random_state", "n_jobs",
           "verbose")


class DaskDistributionalRegressor(OptionsMixin, RegressorMixin, BaseEstimator):
    """Distributional regression on Dask collections, trained by ``xgboost.dask``.

    {parameters}

    Attributes
    ----------
    family_, ensemble_, step_, dispersion_shift_, raw_floor_, init_params_, n_iter_,
    best_iteration_, evals_result_, early_stopping_, n_features_in_, feature_names_in_
        As :class:`~distboost.DistributionalRegressor`'s.
    stopped_reason_ : str
        "n_estimators", "early_stopping", "no_descent" or "non_finite_loss".
    family_table_ : DataFrame
        Only with ``family="auto"``: the comparison the family was chosen from (as
        :class:`~distboost.DistributionalRegressor`'s; ``attrs["sampled_from"]`` the rows of
        the data, ``attrs["not_compared"]`` the candidates left out).

    Examples
    --------
    >>> from distributed import LocalCluster, Client           # doctest: +SKIP
    >>> import dask.dataframe as dd                              # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=2))               # doctest: +SKIP
    >>> df = dd.read_parquet("data/")                            # doctest: +SKIP
    >>> X, y = df.drop(columns="y"), df["y"]                     # doctest: +SKIP
    >>> model = DaskDistributionalRegressor(family="normal").fit(X, y)  # doctest: +SKIP
    >>> model.predict_params(X).head()                           # doctest: +SKIP
    >>> local = model.to_local()   # an in-process DistributionalRegressor  # doctest: +SKIP
    """

    _options = (*_SHARED, "client")
    _n_positional = 1
    _extra_options = {
        "early_stopping": Option(
            "auto", [StrOptions({"auto", "holdout"}), "boolean"], '{"auto", "holdout"} or bool',
            "How the number of rounds is chosen: stop when the validation loss has not "
            "improved for ``n_iter_no_change`` rounds.  An ``eval_set`` given to ``fit`` is "
            "the validation set; otherwise \"auto\", True and \"holdout\" hold out a seeded "
            "``validation_fraction`` of every partition's rows; False keeps every round."),
        "client": Option(
            None, [None, object], "distributed.Client",
            "The Dask client (None: ``distributed.default_client()``)."),
    }
    _docs = {"n_jobs": "Threads of XGBoost on each worker (None: XGBoost's default).",
             "family": (
                 "The conditional distribution of ``y`` (``distboost.families.available()``), "
                 "or \"auto\": the family :class:`~distboost.DistributionalRegressor` would "
                 "choose (cross-validated CRPS, one-standard-error rule, never a degenerate "
                 "fit), compared in-process on a seeded sample of about "
                 "``distboost.dask.auto.SAMPLE_ROWS`` rows, then trained on the cluster; "
                 "families the cluster does not fit (``histogram``, ``ordinal_logit``) are "
                 "not compared.  The choice is ``family_``, the comparison ``family_table_``.")}
    base_learner = None
    backend = "xgboost"

    # ------------------------------------------------------------------ fit
    def _get_client(self):
        if self.client is not None:
            return self.client
        from distributed import default_client

        try:
            return default_client()
        except ValueError as err:
            raise ValueError(
                "DaskDistributionalRegressor needs a Dask client: pass client=... or start "
                "one (distributed.Client(...)) before fit."
            ) from err

    def fit(self, X, y, sample_weight=None, eval_set=None, eval_sample_weight=None):
        """Fit one boosted ensemble per distribution parameter on the cluster.

        Parameters
        ----------
        X : dask DataFrame or dask Array of shape (n, p)
            Features; categorical (or string) columns are categoricals, NaN is missing.
        y : dask Series or 1-D Array of shape (n,), or (n, 2) bounds (a two-column dask
            DataFrame or Array) for a censored family
            Partitioned like X (the same rows per partition).
        sample_weight : dask Series or 1-D Array of shape (n,), optional
        eval_set : tuple (X_val, y_val) of dask collections, or a list of one, optional
            Validation rows for early stopping and calibration.
        eval_sample_weight : dask Series or Array, or a list of one, optional

        Returns
        -------
        self
        """
        self._validate_params()
        client = self._get_client()
        with client.as_current():  # every computation inside goes to this client
            return self._fit(client, X, y, sample_weight, eval_set, eval_sample_weight)

    def _fit(self, client, X, y, sample_weight, eval_set, eval_sample_weight):
        import xgboost
        import xgboost.dask as xgb_dask

        data, table = None, None
        spec = self.family
        if is_auto(spec):
            data = place(client, as_frame(client, X, y, sample_weight))
            spec, table = choose_on_sample(self, data, {n: getattr(self, n) for n in _SHARED},
                                           int_seed(self.random_state))
        family = _families.get(spec, links=self.links)
        if family.multivariate:
            raise ValueError(
                f"Family {family.name!r} models a vector target (y of shape (n, d)); "
                "DaskDistributionalRegressor fits one target value per row (XGBoost's "
                "distributed label). Fit it in-process with DistributionalRegressor.")
        if getattr(family, "encode_target", None) is not None:
            raise ValueError(
                f"Family {family.name!r} encodes its target from the labels it sees (e.g. the "
                "number of ordered classes), which partitions cannot share: "
                "DaskDistributionalRegressor does not take it yet. Fit it in-process "
                "(DistributionalRegressor) on the collected data, or use a count family.")
        if family.classification:
            raise ValueError(f"Family {family.name!r} is a classification family; "
                             "DaskDistributionalRegressor fits regression families.")
        seed = int_seed(self.random_state)
        eval_set, eval_weight = check_eval_set(eval_set, eval_sample_weight)
        if data is None:
            data = place(client, as_frame(client, X, y, sample_weight))
        if eval_set is not None:
            valid = as_frame(client, eval_set[0], eval_set[1], eval_weight, name="eval_set: ",
                             categories=data.categories, feature_names=data.feature_names)
            if valid.feature_names != data.feature_names:
                raise ValueError(f"eval_set: X has columns {valid.feature_names}, X of fit "
                                 f"{data.feature_names}.")
            train, valid, mode = data, place(client, valid), "eval_set"
        elif self.early_stopping in ("auto", "holdout", True):
            train_f, valid_f = holdout_split(data, self.validation_fraction, seed)
            train, valid = _sub(data, train_f), _sub(data, valid_f)
            train.frame, valid.frame = client.persist([train.frame, valid.frame])
            mode = "holdout"
        else:
            train, valid, mode = data, None, "none"
        if valid is not None:
            total_val = target_pass(client, valid, family, check_target, seed, 0,
                                    name="y of eval_set" if mode == "eval_set"
                                    else "y of the held-out rows")[0]
            if not total_val > 0:
                raise ValueError(
                    f"The validation rows ({'eval_set' if mode == 'eval_set' else 'held out'})"
                    " hold no row of positive weight: give more rows, a larger "
                    "validation_fraction, or early_stopping=False.")

        total, n_train, y_sample, w_sample = target_pass(client, train, family, check_target,
                                                         seed)
        weight_mean = total / n_train if train.weighted else 1.0
        start = family.init(y_sample, w_sample)
        raw = refine_start(client, train, family, family.raw_from_params(start),
                           total if train.weighted else float(n_train))
        import torch

        with torch.no_grad():
            mle = {p: float(v) for p, v in
                   family.params_from_raw(torch.as_tensor(raw[None, :])).items()}
        objective = FamilyObjective(family, y_sample, w_sample, scoring_rule=self.scoring_rule,
                                    init_params=mle)
        step = self._step(family)
        objective.check_step(step)
        scale = global_curvature(client, train, objective, step, weight_mean)
        params = self._engine_params(step, n_train, seed,
                                     n_iter_no_change=None if valid is None
                                     else self.n_iter_no_change)
        k = objective.n_outputs
        bounds = train.bounds
        dtrain = _dmatrix(xgb_dask, client, train, k, params.max_bin)
        dvalid = None if valid is None else _dmatrix(xgb_dask, client, valid, k,
                                                     params.max_bin, ref=dtrain)
        column = objective.dispersion_column() if self.calibrate else None
        run = functools.partial(self._train_once, client, xgb_dask, xgboost, family,
                                xgb_params(params, k), dtrain, dvalid, objective, step, scale,
                                weight_mean, bounds, column)
        patience = None if valid is None else self.n_iter_no_change
        booster, history = boost_with_halving(run, params.n_estimators, params.learning_rate,
                                               patience)
        frozen = self._frozen_outputs(objective)
        if frozen is not None and history["stopped"] == "early_stopping":
            booster, history = continue_alone(run, booster, history, params.n_estimators,
                                               params.learning_rate, patience, frozen)
        self._set_fitted(family, objective, step, mode, booster, history, data, params)
        if table is None:
            self.__dict__.pop("family_table_", None)
        else:
            self.family_table_ = table
        return self

    def _train_once(self, client, xgb_dask, xgboost, family, xparams, dtrain, dvalid,
                    objective, step, scale, weight_mean, bounds, column, rounds, booster,
                    first_rate, frozen=None, patience=None):
        """One ``xgboost.dask.train`` run of up to ``rounds`` rounds continuing ``booster``
        (None: from the start values), its first round at ``first_rate``, the ``frozen``
        outputs' trees zero, stopped after ``patience`` rounds without a better validation
        loss (None: ``n_iter_no_change``); returns the booster and the exact losses the
        workers recorded."""
        metric = self.scoring_rule
        key = uuid.uuid4().hex
        if booster is not None:  # the continued model keeps its own (zero) base score
            xparams = {k: v for k, v in xparams.items() if k != "base_score"}
        # xgboost.train numbers the rounds of every run from 0, continued or not.
        callbacks = [make_guard(key), make_rate(0, first_rate, xparams["eta"])]
        evals, custom_metric = [], None
        if dvalid is not None:
            evals = [(dvalid, "valid")]
            custom_metric = WorkerMetric(objective, metric, key, column, bounds)
            callbacks.append(xgboost.callback.EarlyStopping(
                rounds=patience or self.n_iter_no_change, metric_name=metric,
                data_name="valid",
                save_best=False))
        try:
            out = xgb_dask.train(
                client, xparams, dtrain, num_boost_round=rounds, evals=evals,
                obj=WorkerObjective(objective, step, scale, weight_mean, key, bounds, frozen),
                custom_metric=custom_metric, callbacks=callbacks, xgb_model=booster,
                verbose_eval=self.verbose if self.verbose else False,
                coll_cfg=xgboost.collective.Config(timeout=COLLECTIVE_TIMEOUT))
        except Exception as err:
            client.run(pop_state, key)
            raise RuntimeError(
                f"{self._describe(family)}: distributed training failed ({type(err).__name__}: "
                f"{err}); no model was kept. A worker lost mid-training (killed, e.g. over "
                "its memory limit) ends the run: check the workers' logs and memory, then "
                "fit again.") from err
        states = [v for v in client.run(pop_state, key).values() if v]
        return out["booster"], (states[0] if states else {})

    def _frozen_outputs(self, objective) -> np.ndarray | None:
        """The outputs phase 2 of per-parameter stopping holds at the joint best round (the
        dispersion), as a mask; None when it does not run (the in-process rule,
        :func:`~distboost.estimators.runs.continued_outputs`)."""
        kept = continued_outputs(objective) if self.per_parameter_stopping else None
        if kept is None:
            return None
        frozen = np.ones(objective.n_outputs, dtype=bool)
        frozen[list(kept)] = False
        return frozen

    def _step(self, family) -> str:
        if self.step != "auto":
            return self.step
        return "newton" if self.scoring_rule == "crps" else family.default_step

    def _describe(self, family) -> str:
        return f"{type(self).__name__}(family={family.name!r})"

    def _set_fitted(self, family, objective, step, mode, booster, history, data,
                    params) -> None:
        metric = self.scoring_rule
        train, curve = history["train"], history["valid"]
        n_iter, stopped = len(history["scales"]), history["stopped"]
        if stopped in ("no_descent", "non_finite_loss"):
            warnings.warn(
                f"{self._describe(family)}: boosting stopped at round {n_iter + 1}: the "
                f"training loss {'is not finite' if stopped == 'non_finite_loss' else 'rose'} "
                f"at every step length down to learning_rate / {2 ** MAX_HALVINGS}; keeping "
                f"the {n_iter} rounds before it.", RuntimeWarning, stacklevel=3)
        best, shift = n_iter, 0.0
        if curve and n_iter > 0:
            best = int(np.argmin(curve)) + 1
            shift = float(history["shift"][best - 1]) if history["shift"] else 0.0
        evals = {"train": {metric: train}}
        if curve:
            evals["valid"] = {metric: curve}
        per_output = None
        if "joint_best" in history:  # phase 2 ran: the frozen outputs keep the joint round
            per_output = np.where(history["frozen"], min(best, history["joint_best"]), best)
        ensemble = FittedEnsemble(XGBoostModel(booster, objective.n_outputs),
                                  objective.init_raw, best, n_iter, evals, stopped,
                                  history["scales"], best_iterations=per_output)
        attrs = {
            "family_": family, "ensemble_": ensemble, "raw_floor_": objective.raw_floor,
            "dispersion_shift_": shift, "linear_start_": None, "early_stopping_": mode,
            "step_": step, "n_iter_": n_iter, "best_iteration_": best,
            "evals_result_": evals, "num_leaves_": params.num_leaves,
            "min_child_samples_": params.min_child_samples,
            "init_params_": objective.init_params, "stopped_reason_": stopped,
            "n_features_in_": len(data.feature_names), "_categories_": data.categories,
        }
        if data.from_dataframe:
            attrs["feature_names_in_"] = np.asarray(data.feature_names, dtype=object)
        for name, value in attrs.items():
            setattr(self, name, value)
        self._feature_names = data.feature_names

    # ------------------------------------------------------------------ in-process model
    def to_local(self) -> DistributionalRegressor:
        """The fitted model as an in-process :class:`~distboost.DistributionalRegressor`
        (``backend="xgboost"``): it predicts the same numbers, pickles, and saves with
        ``save`` in distboost's safe format."""
        check_is_fitted(self)
        local = DistributionalRegressor(**{n: getattr(self, n) for n in _SHARED},
                                        backend="xgboost")
        for name in ("family_", "ensemble_", "raw_floor_", "dispersion_shift_",
                     "linear_start_", "early_stopping_", "step_", "n_iter_",
                     "best_iteration_", "evals_result_", "num_leaves_", "min_child_samples_",
                     "init_params_", "n_features_in_", "_categories_"):
            setattr(local, name, getattr(self, name))
        for name in ("feature_names_in_", "family_table_"):
            if hasattr(self, name):
                setattr(local, name, getattr(self, name))
        return local

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "ensemble_")

    def __sklearn_clone__(self):
        """A clone sharing the client (a live connection, not a parameter value to copy)."""
        from sklearn.base import clone

        params = self.get_params(deep=False)
        client = params.pop("client")
        return type(self)(**{k: clone(v, safe=False) for k, v in params.items()},
                          client=client)

    def __getstate__(self):
        """Pickled without the client (as ``lightgbm.dask``): an unpickled model uses the
        default client, or the one set on it."""
        state = super().__getstate__() if hasattr(super(), "__getstate__") else dict(
            self.__dict__)
        state = dict(state)
        state["client"] = None
        return state

    # ------------------------------------------------------------------ predict
    def _map(self, X, method: str, columns, **kwargs):
        """``local.<method>`` on every partition (block) of ``X``: a Dask DataFrame for a
        DataFrame X (its index kept), a Dask Array for an Array X."""
        import dask.array as da
        import dask.dataframe as dd

        check_is_fitted(self)
        local = self.to_local()
        if isinstance(X, dd.DataFrame):
            meta = (pd.DataFrame({c: np.zeros(0) for c in columns}) if columns is not None
                    else pd.Series(np.zeros(0), name=method))
            return X.map_partitions(_apply, local, method, columns, kwargs, meta=meta)
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D; got a Dask Array of shape {X.shape}.")
            X = X.rechunk({1: -1})
            if columns is None:
                return X.map_blocks(_apply_array, local, method, kwargs, drop_axis=1,
                                    dtype=np.float64)
            return X.map_blocks(_apply_array, local, method, kwargs, dtype=np.float64,
                                chunks=(X.chunks[0], (len(columns),)))
        raise TypeError(f"X must be a Dask DataFrame or Dask Array, got {type(X).__name__}; "
                        "for data in memory use to_local().")

    def predict_params(self, X):
        """Predicted parameters on the natural scale: a Dask DataFrame (one column per
        parameter) for a DataFrame X, a Dask Array (n, K) for an Array X."""
        return self._map(X, "predict_params", list(self.family_.param_names))

    def predict(self, X):
        """Conditional mean: a Dask Series (DataFrame X) or Dask Array (n,)."""
        return self._map(X, "predict", None)

    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)):
        """Conditional quantiles, shape (n, len(quantiles)): columns ``q0.05``, ...."""
        qs = [float(q) for q in np.atleast_1d(quantiles)]
        return self._map(X, "predict_quantiles", [f"q{q:g}" for q in qs], quantiles=qs)

    def predict_interval(self, X, level: float = 0.9):
        """Central prediction interval, shape (n, 2): columns ``lower``, ``upper``."""
        return self._map(X, "predict_interval", ["lower", "upper"], level=float(level))

    def score(self, X, y, sample_weight=None) -> float:
        """Mean log-likelihood of ``y`` under the predicted distributions (a distributed
        weighted mean; higher is better)."""
        import dask

        check_is_fitted(self)
        client = self._get_client()
        with client.as_current():
            data = as_frame(client, X, y, sample_weight, categories=self._categories_,
                            feature_names=self._feature_names)
            local = self.to_local()
            tasks = [dask.delayed(_loglik_part)(p, local, data.feature_names,
                                                data.y_columns, data.weighted)
                     for p in data.frame.to_delayed()]
            s = np.sum(client.compute(tasks, sync=True), axis=0)
        return float(s[0] / s[1])


def _sub(data: TrainingFrame, frame) -> TrainingFrame:
    return TrainingFrame(frame, data.feature_names, data.categories, data.n_rows, None, data.bounds,
                         data.weighted, data.from_dataframe)


def _dmatrix(xgb_dask, client, data: TrainingFrame, k: int, max_bin: int, ref=None):
    """The ``DaskQuantileDMatrix`` of a checked frame: features, the packed target, the
    weight.  It holds the features' bin indices only, not a float copy of them beside the
    partitions (the ``hist`` trees read nothing else); the validation rows take the training
    matrix's bins (``ref``)."""
    names = [f"__distboost_t{j}" for j in range(slots(k))]

    def pack(part):
        y = part[data.y_columns].to_numpy(dtype=np.float64)
        fields = pack_target(y[:, 0] if y.shape[1] == 1 else y, k)
        label = fields["label"].reshape(len(part), len(names) - 2)  # 0 rows: no -1
        cols = [*label.T, fields["label_lower_bound"], fields["label_upper_bound"]]
        return pd.DataFrame(dict(zip(names, cols, strict=True)), index=part.index)

    meta = pd.DataFrame({c: np.zeros(0, dtype=np.float32) for c in names})
    packed = data.frame.map_partitions(pack, meta=meta)
    n_label = len(names) - 2
    label = packed[names[0]] if n_label == 1 else packed[names[:n_label]]
    from ._data import W_COL

    return xgb_dask.DaskQuantileDMatrix(
        client, data.features(), label=label, max_bin=int(max_bin), ref=ref,
        weight=data.frame[W_COL] if data.weighted else None,
        label_lower_bound=packed[names[-2]], label_upper_bound=packed[names[-1]],
        enable_categorical=True)


def _local_X(local, part):
    """A partition as the in-process model takes it (an array when fitted on an array)."""
    return part if hasattr(local, "feature_names_in_") else part.to_numpy(dtype=np.float64)


def _apply(part, local, method, columns, kwargs):
    if len(part) == 0:
        width = 0 if columns is None else len(columns)
        out = np.zeros((0, width)) if columns is not None else np.zeros(0)
    else:
        out = getattr(local, method)(_local_X(local, part), **kwargs)
    if isinstance(out, pd.DataFrame):
        out.index = part.index
        return out
    if columns is None:
        return pd.Series(np.asarray(out, dtype=np.float64), index=part.index, name=method)
    return pd.DataFrame(np.asarray(out, dtype=np.float64), index=part.index, columns=columns)


def _apply_array(block, local, method, kwargs):
    if block.shape[0] == 0:
        return np.zeros((0,) + (() if method == "predict" else (0,)))
    out = getattr(local, method)(block, **kwargs)
    return np.asarray(out.to_numpy() if isinstance(out, pd.DataFrame) else out,
                      dtype=np.float64)


def _loglik_part(part, local, features, y_cols, weighted):
    import torch

    from ._data import W_COL

    if len(part) == 0:
        return np.zeros(2)
    X = part[features]
    y = part[y_cols].to_numpy(dtype=np.float64)
    y = check_target(local.family_, y[:, 0] if y.shape[1] == 1 else y)
    raw = torch.as_tensor(local._raw(_local_X(local, X)))
    with torch.no_grad():
        logp = -local.family_.nll(raw, torch.as_tensor(np.require(y, requirements="W"))).numpy()
    w = part[W_COL].to_numpy(dtype=np.float64) if weighted else np.ones(len(y))
    return np.array([np.sum(w * logp), np.sum(w)])
