"""``ConformalRegressor``: finite-sample calibration of any distboost regressor.

A distributional model is only as calibrated as its family is right.  Conformal calibration
fixes that without assumptions on the family: calibration rows the model did not see are scored
by the model (:mod:`distboost.conformal.conformity`), and a new row's predictions are corrected by
the empirical law of those scores.  Under exchangeability of the calibration rows and the new
row, the intervals cover with probability at least the nominal level, whatever the family
(marginal coverage, over the draw of both; Vovk et al. 2005).  Nothing is promised row by row
(conditional coverage): ``mondrian=`` gives coverage within each group of a column instead.

``cv=None`` splits off ``calibration_size`` of the rows (split conformal); ``cv=K`` fits ``K``
models on K-fold splits and calibrates every row out of fold (cross-conformal predictive
systems, Vovk et al. 2018; CV+, Barber et al. 2021), so that small data loses no rows to
calibration; CV+ promises coverage of at least ``1 - 2 alpha`` in theory and is close to
``1 - alpha`` in practice.  ``aggregation="shrunk"`` combines the ``K`` calibrated laws by
their quantile functions, narrowed by the folds' disagreement
(:class:`~distboost.families.Calibrated`): no finite-sample guarantee, a measured coverage.

References
----------
Vovk, V., Gammerman, A. & Shafer, G. (2005). Algorithmic Learning in a Random World.
Springer.  Vovk, V., Nouretdinov, I., Manokhin, V. & Gammerman, A. (2018). Cross-conformal
predictive distributions. PMLR 91.  Barber, R. F., Candes, E. J., Ramdas, A. & Tibshirani,
R. J. (2021). Predictive inference with the jackknife+. Ann. Statist. 49(1).  Romano, Y.,
Patterson, E. & Candes, E. (2019). Conformalized quantile regression. NeurIPS 32.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import KFold
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import check_consistent_rows, check_sample_weight, int_seed, take_rows
from ..estimators import DistributionalRegressor, task_bar
from ..families import Calibrated, get
from ..persistence import estimator_from_dict, estimator_to_dict, loadable
from ..predictive import Predictive
from .checks import check_aggregation, check_family, check_level, check_rows, check_y
from .conformity import (
    calibration_scores,
    count_below,
    fold_bisection,
    order_index,
    order_statistic,
)
from .groups import GroupCodes

__all__ = ["ConformalRegressor"]

#: Levels of the bisection brackets of a cross-conformal bound stay in [_BRACKET_TAIL,
#: 1 - _BRACKET_TAIL], where every family's quantile function is finite.
_BRACKET_TAIL = 1e-12

#: Rows of a chunk of the (calibration rows x new rows) matrices of CQR with several folds.
_CHUNK_CELLS = 4_000_000


@loadable
class ConformalRegressor(RegressorMixin, BaseEstimator):
    """Conformal calibration of a distributional regressor, with finite-sample coverage.

    Parameters
    ----------
    estimator : DistributionalRegressor or compatible, default=None
        The model to calibrate (a fresh clone is fitted; default: a default
        ``DistributionalRegressor``).  Any estimator with ``fit`` and ``predict_dist``
        returning a scalar, uncensored :class:`~distboost.Predictive`.
    method : {"cps", "cqr", "split"}, default="cps"
        "cps": a conformal predictive system on the model's PIT values (the whole
        predictive law is recalibrated: :meth:`predict_dist` works, every interval and
        quantile is guaranteed); "split": the same on standardised residuals
        ``(y - mean) / sd`` (uses only the model's mean and spread); "cqr": conformalized
        quantile regression of the model's quantiles (intervals and quantiles only).
    cv : int or None, default=5
        ``K`` >= 2: cross-conformal calibration, every row calibrated out of fold by one of
        ``K`` models (none lost to calibration, ``K`` fits).  None: one fit on ``1 -
        calibration_size`` of the rows, calibrated on the rest.
    aggregation : {"pool", "shrunk"}, default="pool"
        How the ``K`` calibrated fold laws of ``cv=K`` combine ("cps" and "split"): "pool",
        their linear pool, whose intervals and quantiles are exact conformal bounds
        (CV+, at least ``1 - 2 alpha`` in theory); "shrunk", the average of their quantile
        functions narrowed by the folds' disagreement (Krogh & Vedelsby 1995), whose
        intervals and quantiles are its own, with no finite-sample guarantee (continuous
        families).  docs/conformal.md compares their coverage.
    mondrian : str, int or callable, default=None
        Group-conditional (Mondrian) calibration: a column of X (name or position) or a
        callable ``mondrian(X) -> labels`` of shape (n,); each group is calibrated on its own
        rows, so coverage holds within every group.
    calibration_size : float, default=0.25
        Share of the rows kept for calibration when ``cv=None``.
    random_state : int, RandomState instance or None, default=None
        Seeds the split or folds and the randomised PIT of discrete families.
    progress : bool or None, default=False
        A progress bar over the fits; None: a bar in a notebook or on a terminal, none
        elsewhere (as the estimators).

    Attributes
    ----------
    estimators_ : list of fitted estimators
        One per fold (one with ``cv=None``).
    family_ : Family
        The fitted models' family.
    groups_ : list
        The Mondrian groups seen in ``fit`` (``[None]`` without ``mondrian``).
    scores_ : ndarray of shape (n_cal,)
        The calibration scores (PIT values for "cps", ``Phi`` of the standardised residuals for
        "split"; empty for "cqr", whose scores depend on the level).
    n_calibration_ : int
        Calibration rows.

    Examples
    --------
    >>> import numpy as np, distboost as db
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = X[:, 0] + rng.standard_t(2, size=200)
    >>> cf = db.ConformalRegressor(db.DistributionalRegressor(n_estimators=30), cv=3,
    ...                            random_state=0).fit(X, y)
    >>> cf.predict_interval(X[:2], 0.9).shape
    (2, 2)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_dist"]), None],
        "method": [StrOptions({"cps", "cqr", "split"})],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
        "aggregation": [StrOptions({"pool", "shrunk"})],
        "mondrian": [str, Integral, callable, None],
        "calibration_size": [Interval(Real, 0.0, 1.0, closed="neither")],
        "random_state": ["random_state"],
        "progress": ["boolean", None],
    }

    def __init__(self, estimator=None, *, method="cps", cv=5, aggregation="pool",
                 mondrian=None, calibration_size=0.25, random_state=None, progress=False):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.aggregation = aggregation
        self.mondrian = mondrian
        self.calibration_size = calibration_size
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit the model(s) and calibrate them on rows they did not see.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        y : array_like of shape (n,)
        sample_weight : array_like of shape (n,), default=None
            Passed to the models' fits; the calibration counts every row once (weighted
            rows are not exchangeable).

        Returns
        -------
        self
        """
        self._validate_params()
        check_aggregation(self.aggregation, self.method, None)
        base = DistributionalRegressor() if self.estimator is None else self.estimator
        check_family(getattr(base, "family", None))
        if getattr(base, "epistemic_members", 0):
            raise ValueError(
                f"The estimator has epistemic_members={base.epistemic_members}: each of the "
                "ConformalRegressor's fold models would train them, and its "
                "predict_uncertainty uses the fold models themselves. Set "
                "epistemic_members=0 on the estimator.")
        X, y = check_rows(X), check_y(y)
        n = check_consistent_rows(X=X, y=y)
        w = check_sample_weight(sample_weight, n)
        seed = int_seed(self.random_state)
        codes = GroupCodes.fit(self.mondrian, X)
        splits = self._splits(n, seed)
        models, rows, folds = [], [], []
        bar = task_bar(self.progress, len(splits), "ConformalRegressor")
        try:
            for k, (train, cal) in enumerate(splits):
                model = clone(base)
                model.fit(take_rows(X, train), y[train],
                          **({} if w is None else {"sample_weight": w[train]}))
                models.append(model)
                rows.append(cal)
                folds.append(np.full(cal.size, k))
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        family = models[0].family_
        check_family(family)
        check_aggregation(self.aggregation, self.method, family)
        rows, folds = np.concatenate(rows), np.concatenate(folds)
        params = {p: np.empty(rows.size) for p in family.param_names}
        scores = np.empty(rows.size)
        for k, model in enumerate(models):
            mine = folds == k
            dist = model.predict_dist(take_rows(X, rows[mine]))
            for p, v in dist.params.items():
                params[p][mine] = v
            scores[mine] = calibration_scores(self.method, dist, y[rows[mine]], seed + k)
        self.estimators_ = models
        self.family_ = family
        self.groups_ = codes.labels
        self._codes = codes
        self.calibration_params_ = params
        self.calibration_y_ = y[rows]
        self.calibration_fold_ = folds
        self.calibration_group_ = codes.codes(take_rows(X, rows))
        self.scores_ = scores if self.method != "cqr" else np.empty(0)
        self.n_calibration_ = int(rows.size)
        self.n_features_in_ = models[0].n_features_in_
        if hasattr(models[0], "feature_names_in_"):
            self.feature_names_in_ = models[0].feature_names_in_
        self._warn_small_groups()
        return self

    def _splits(self, n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if self.cv is None:
            n_cal = int(round(self.calibration_size * n))
            if n_cal < 1 or n - n_cal < 2:
                raise ValueError(
                    f"calibration_size={self.calibration_size} of {n} rows leaves {n_cal} "
                    f"calibration and {n - n_cal} training rows; give more rows or use cv=K.")
            perm = np.random.default_rng(seed).permutation(n)
            return [(np.sort(perm[n_cal:]), np.sort(perm[:n_cal]))]
        if n < 2 * self.cv:
            raise ValueError(f"cv={self.cv} needs at least {2 * self.cv} rows; got "
                             f"n_samples={n}.")
        return list(KFold(self.cv, shuffle=True, random_state=seed).split(np.arange(n)))

    def _warn_small_groups(self) -> None:
        sizes = np.bincount(self.calibration_group_, minlength=len(self.groups_))
        need = 19  # the smallest n with a finite two-sided 90 % interval: (n + 1) 0.95 <= n
        small = [(self.groups_[g], int(s)) for g, s in enumerate(sizes) if s < need]
        if small:
            warnings.warn(
                f"ConformalRegressor: calibration groups {small} (label, rows) have fewer than "
                f"{need} calibration rows: their 90 % intervals reach the support's ends "
                "(a finite two-sided interval at level L needs (n + 1) (1 + L) / 2 <= n).",
                UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ members
    def _member_params(self, X) -> list[dict]:
        """Each fold model's natural-scale parameters at X (for "split": Normal loc, scale of
        its mean and standard deviation)."""
        out = []
        for model in self.estimators_:
            dist = model.predict_dist(X)
            if self.method == "split":
                out.append({"loc": dist.mean, "scale": np.maximum(dist.stddev, 1e-300)})
            else:
                out.append(dist.params)
        return out

    def _inner(self):
        return get("normal") if self.method == "split" else self.family_

    def _tables(self) -> list[list[np.ndarray]]:
        """Sorted calibration scores by group and fold."""
        K = len(self.estimators_)
        return [[np.sort(self.scores_[(self.calibration_group_ == g)
                                      & (self.calibration_fold_ == k)]) for k in range(K)]
                for g in range(len(self.groups_))]

    # ------------------------------------------------------------------ predict
    def predict_dist(self, X) -> Predictive:
        """The calibrated predictive distributions ("cps" and "split").

        ``C(y) = sum_k w_k G_k(F_k(y))``: each fold model's cdf ``F_k`` composed with the
        piecewise-linear empirical law ``G_k`` of the scores it gave its calibration rows
        (:class:`~distboost.families.Calibrated`); quantiles, CRPS, PIT and plots work as
        for any Predictive.  Its quantiles interpolate between the calibration scores;
        :meth:`predict_interval` and :meth:`predict_quantiles` give the exact conformal
        bounds with the finite-sample guarantee.  ``aggregation="shrunk"``: the folds'
        quantile functions averaged and narrowed instead (``Calibrated``'s notes).

        Returns
        -------
        Predictive of length n
        """
        X = check_rows(X)
        check_is_fitted(self)
        if self.method == "cqr":
            raise ValueError(
                "method='cqr' calibrates quantiles and intervals, not a whole predictive "
                "law: use predict_interval / predict_quantiles, or method='cps' for a "
                "calibrated predictive distribution.")
        members = self._member_params(X)
        family = Calibrated(self._inner(), self._tables(), aggregation=self.aggregation)
        if len(members) == 1:
            params = dict(members[0])
        else:
            params = {f"{p}_{k}": v for k, m in enumerate(members) for p, v in m.items()}
        if len(self.groups_) > 1:
            params["group"] = self._codes.codes(X).astype(np.float64)
        return Predictive(family, params, index=X.index if isinstance(X, pd.DataFrame) else None)

    def predict(self, X) -> np.ndarray:
        """Mean of the calibrated predictive law ("cps", "split"); for "cqr" the mean of the
        models' means.  ndarray of shape (n,)."""
        X = check_rows(X)
        if self.method == "cqr":
            check_is_fitted(self)
            return np.mean([m.predict(X) for m in self.estimators_], axis=0)
        return self.predict_dist(X).mean

    def _z_order(self, X, k_of) -> np.ndarray:
        """Per row, the ``k_of(n_g)``-th smallest ``z_i(x) = F_{k(i)}^{-1}(a_i | x)`` over the
        calibration rows of its group (the exact conformal bound)."""
        check_is_fitted(self)
        members = self._member_params(X)
        inner = self._inner()
        codes = self._codes.codes(X)
        tables = self._tables()
        n = codes.size
        out = np.empty(n)
        t = [{p: torch.as_tensor(np.array(v, np.float64)) for p, v in m.items()}
             for m in members]
        for g in np.unique(codes):
            rows = np.flatnonzero(codes == g)
            sub = [{p: v[rows] for p, v in m.items()} for m in t]
            group_tables = tables[g]
            total = sum(a.size for a in group_tables)
            k = k_of(total)
            if k <= 0:
                out[rows] = inner.support.low
                continue
            if k > total:
                out[rows] = inner.support.high
                continue
            if len(sub) == 1:
                level = torch.full((rows.size,), order_statistic(group_tables[0], k),
                                   dtype=torch.float64)
                with torch.no_grad():
                    out[rows] = inner.icdf(sub[0], level).numpy()
                continue
            sorted_t = [torch.as_tensor(a) for a in group_tables]
            # Brackets strictly inside (0, 1) and finite: a score of exactly 0 or 1 (a far
            # tail) makes the bound the support's end, found below by the counts at the
            # brackets.  (A level of 1e-300 made a Normal's bracket -inf, and the bisection
            # then returned the upper bracket for every bound: a zero-width interval.)  A
            # score below _BRACKET_TAIL counts as the support's end: wider, never narrower.
            lo_level = max(min(float(a[0]) for a in group_tables if a.size) * 0.5,
                           _BRACKET_TAIL)
            hi_level = min(0.5 * (1.0 + max(float(a[-1]) for a in group_tables if a.size)),
                           1.0 - _BRACKET_TAIL)

            def at(level, sub=sub, rows=rows):
                q = torch.full((rows.size,), level, dtype=torch.float64)
                return torch.stack([inner.icdf(s, q) for s in sub])

            def score_at(v, sub=sub):
                return [inner.cdf(s, v) for s in sub]

            with torch.no_grad():
                low = at(lo_level).min(0).values - 1.0
                high = at(hi_level).max(0).values + 1.0
                bound = fold_bisection(score_at, sorted_t, k, low, high,
                                       integer=bool(inner.discrete))
                bound = torch.where(count_below(sorted_t, score_at(high)) < k,
                                    inner.support.high, bound)
                bound = torch.where(count_below(sorted_t, score_at(low)) >= k,
                                    inner.support.low, bound)
            out[rows] = bound.numpy()
        return out

    def predict_interval(self, X, level: float = 0.9):
        """Conformal prediction intervals with coverage at least ``level`` (marginally, over
        exchangeable rows; see the module docstring); with ``aggregation="shrunk"`` the
        calibrated law's central interval (a measured coverage, no guarantee).

        Returns
        -------
        ndarray of shape (n, 2), or a DataFrame (``lower``, ``upper``) with X's index
        """
        X = check_rows(X)
        level = check_level(level)
        if self.method == "cqr":
            lower, upper = self._cqr(X, level)
        elif self._shrunk():
            lower, upper = self._law_quantiles(X, [(1 - level) / 2, (1 + level) / 2]).T
        else:
            lower = self._z_order(X, lambda n: order_index(n, level, upper=False))
            upper = self._z_order(X, lambda n: order_index(n, level, upper=True))
        out = np.column_stack([lower, upper])
        if isinstance(X, pd.DataFrame):
            return pd.DataFrame(out, index=X.index, columns=["lower", "upper"])
        return out

    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)):
        """Conformal quantiles: ``Q(q)`` with ``P(y <= Q(q)) >= q`` for every level ``q``
        (with ``aggregation="shrunk"``: the calibrated law's quantiles, no guarantee).

        Returns
        -------
        ndarray of shape (n, len(quantiles)), or a DataFrame (``q0.05``, ...) with X's index
        """
        X = check_rows(X)
        levels = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
        if not np.all((levels > 0) & (levels < 1)):
            raise ValueError(f"quantiles must lie in (0, 1); got {levels.tolist()}.")
        cols = [] if not self._shrunk() else list(self._law_quantiles(X, levels).T)
        for q in levels[len(cols):]:
            if self.method == "cqr":
                cols.append(self._cqr_quantile(X, float(q)))
            else:
                cols.append(self._z_order(X, lambda n, q=q: int(np.ceil(q * (n + 1) - 1e-9))))
        out = np.column_stack(cols)
        if isinstance(X, pd.DataFrame):
            return pd.DataFrame(out, index=X.index, columns=[f"q{v:g}" for v in levels])
        return out

    def _shrunk(self) -> bool:
        check_is_fitted(self)
        return self.aggregation == "shrunk" and len(self.estimators_) > 1

    def _law_quantiles(self, X, levels) -> np.ndarray:
        """Quantiles of :meth:`predict_dist`'s law, (n, len(levels))."""
        return self.predict_dist(X).quantile(np.asarray(levels, dtype=np.float64))

    # ------------------------------------------------------------------ CQR
    def _cal_quantiles(self, levels) -> np.ndarray:
        """The models' quantiles at ``levels`` on their calibration rows, (n_cal, len)."""
        dist = Predictive(self.family_, self.calibration_params_)
        return dist.quantile(np.asarray(levels, dtype=np.float64))

    def _member_quantiles(self, X, levels) -> list[np.ndarray]:
        return [m.predict_dist(X).quantile(np.asarray(levels, dtype=np.float64))
                for m in self.estimators_]

    def _cqr(self, X, level: float) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self)
        alpha = 1.0 - level
        levels = [alpha / 2.0, 1.0 - alpha / 2.0]
        qc = self._cal_quantiles(levels)
        score = np.maximum(qc[:, 0] - self.calibration_y_, self.calibration_y_ - qc[:, 1])
        qx = self._member_quantiles(X, levels)
        # CQR's score is one-sided in its maximum: the interval widens both ends by the
        # ceil((n + 1)(1 - alpha))-th score (Romano et al. 2019, Theorem 1).
        lower = self._cv_plus(X, [q[:, 0] for q in qx], -score, lambda n: int(
            np.floor(alpha * (n + 1) + 1e-9)))
        upper = self._cv_plus(X, [q[:, 1] for q in qx], score, lambda n: int(
            np.ceil((1.0 - alpha) * (n + 1) - 1e-9)))
        return lower, upper

    def _cqr_quantile(self, X, q: float) -> np.ndarray:
        check_is_fitted(self)
        qc = self._cal_quantiles([q])[:, 0]
        qx = self._member_quantiles(X, [q])
        return self._cv_plus(X, [v[:, 0] for v in qx], self.calibration_y_ - qc,
                             lambda n: int(np.ceil(q * (n + 1) - 1e-9)))

    def _cv_plus(self, X, centre: list[np.ndarray], score: np.ndarray, k_of) -> np.ndarray:
        """Per row, the ``k``-th smallest of ``centre_{k(i)}(x) + score_i`` over the
        calibration rows of its group (CV+; one model: ``centre(x) + score_(k)``)."""
        codes = self._codes.codes(X)
        out = np.empty(codes.size)
        for g in np.unique(codes):
            rows = np.flatnonzero(codes == g)
            mine = self.calibration_group_ == g
            k = k_of(int(mine.sum()))
            if k <= 0 or k > int(mine.sum()):
                out[rows] = -np.inf if k <= 0 else np.inf
                continue
            folds, s = self.calibration_fold_[mine], score[mine]
            if len(centre) == 1:
                out[rows] = centre[0][rows] + np.partition(s, k - 1)[k - 1]
                continue
            step = max(1, _CHUNK_CELLS // max(s.size, 1))
            for start in range(0, rows.size, step):
                part = rows[start:start + step]
                cand = np.stack([centre[f][part] for f in folds]) + s[:, None]
                out[part] = np.partition(cand, k - 1, axis=0)[k - 1]
        return out

    # ------------------------------------------------------------------ scores
    def score(self, X, y, sample_weight=None) -> float:
        """Mean log-likelihood of ``y`` under the calibrated predictive law ("cps",
        "split")."""
        logp = self.predict_dist(X).log_prob(np.asarray(y, dtype=np.float64))
        w = check_sample_weight(sample_weight, logp.size)
        return float(np.average(logp, weights=w))

    def predict_uncertainty(self, X, n_members: int = 10) -> pd.DataFrame:
        """Aleatoric, epistemic and total variance per row (DataFrame of shape (n, 3)).

        With several fold models, they are the members, each calibrated by the scores of its
        own calibration rows ("cps", "split": ``G_k(F_k(y))``; "cqr": the raw model):
        ``aleatoric`` is the mean of the members' variances, ``epistemic`` the variance of
        their means and ``total`` their sum, the variance of the members' mixture (for "cps"
        and "split" the variance of :meth:`predict_dist`, by the law of total variance).
        With one model, its own virtual ensemble
        (:meth:`DistributionalRegressor.predict_uncertainty`), ``aleatoric`` replaced by the
        calibrated law's variance ("cps", "split").

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        n_members : int, default=10
            Members of the virtual ensemble (one model only).

        Returns
        -------
        DataFrame of shape (n, 3)
            Columns ``aleatoric``, ``epistemic``, ``total``; X's index when X is a DataFrame.
        """
        X = check_rows(X)
        check_is_fitted(self)
        index = X.index if isinstance(X, pd.DataFrame) else None
        if len(self.estimators_) == 1:
            frame = self.estimators_[0].predict_uncertainty(X, n_members)
            if self.method != "cqr":
                frame["aleatoric"] = self.predict_dist(X).variance
            frame["total"] = frame["aleatoric"] + frame["epistemic"]
            return frame
        if self.method == "cqr":
            dists = [m.predict_dist(X) for m in self.estimators_]
        else:
            # Each member is its fold model composed with its own fold's calibration map, so
            # that the members' mixture is predict_dist's law.  Before: the raw fold models'
            # mean variance was replaced by the mixture's variance, which already holds the
            # spread of the members' means, and total counted that spread twice.
            tables = self._tables()
            members = self._member_params(X)
            group = self._codes.codes(X).astype(np.float64)
            dists = []
            for k, params in enumerate(members):
                family = Calibrated(self._inner(), [[row[k]] for row in tables])
                if len(self.groups_) > 1:
                    params = {**params, "group": group}
                dists.append(Predictive(family, params))
        means = np.stack([d.mean for d in dists])  # (K, n)
        variances = np.stack([d.variance for d in dists])
        if self.method == "cqr":
            w = np.full(means.shape, 1.0 / means.shape[0])
        else:  # predict_dist's weights: each fold's share of its group's calibration rows
            counts = np.array([[t.size for t in row] for row in self._tables()], np.float64)
            w = (counts / counts.sum(axis=1, keepdims=True))[self._codes.codes(X)].T
        mean = (w * means).sum(axis=0)
        aleatoric = (w * variances).sum(axis=0)
        epistemic = (w * (means - mean) ** 2).sum(axis=0)
        return pd.DataFrame({"aleatoric": aleatoric, "epistemic": epistemic,
                             "total": aleatoric + epistemic}, index=index)

    def save(self, path) -> None:
        """Save in distboost's safe format (``db.load(path)`` reads it back)."""
        from ..persistence import save

        save(self, path)

    # ------------------------------------------------------------------ persistence
    def _get_state(self) -> dict:
        return {
            "estimators_": [estimator_to_dict(m) for m in self.estimators_],
            "groups": self._codes.to_dict(),
            "calibration_params_": {k: v.tolist() for k, v in self.calibration_params_.items()},
            "calibration_y_": self.calibration_y_.tolist(),
            "calibration_fold_": self.calibration_fold_.tolist(),
            "calibration_group_": self.calibration_group_.tolist(),
            "scores_": self.scores_.tolist(),
        }

    def _set_state(self, state: dict) -> None:
        self.estimators_ = [estimator_from_dict(d) for d in state["estimators_"]]
        self.family_ = self.estimators_[0].family_
        self._codes = GroupCodes.from_dict(state["groups"], self.mondrian)
        self.groups_ = self._codes.labels
        self.calibration_params_ = {k: np.asarray(v, dtype=np.float64)
                                    for k, v in state["calibration_params_"].items()}
        self.calibration_y_ = np.asarray(state["calibration_y_"], dtype=np.float64)
        self.calibration_fold_ = np.asarray(state["calibration_fold_"], dtype=np.int64)
        self.calibration_group_ = np.asarray(state["calibration_group_"], dtype=np.int64)
        self.scores_ = np.asarray(state["scores_"], dtype=np.float64)
        self.n_calibration_ = int(self.calibration_y_.size)
        self.n_features_in_ = self.estimators_[0].n_features_in_
        if hasattr(self.estimators_[0], "feature_names_in_"):
            self.feature_names_in_ = self.estimators_[0].feature_names_in_

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "estimators_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.regressor_tags.poor_score = True
        return tags
