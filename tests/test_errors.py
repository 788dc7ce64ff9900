"""Every row of the bad-input table in docs/errors.md: the error type and its message.

Each case must raise before any torch or LightGBM code runs into it, with a message that names
the problem, the argument and (where rows are involved) how many rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.compose import TransformedTargetRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError

import distboost as db

X = np.random.default_rng(0).normal(size=(6, 2))
Y = np.arange(1.0, 7.0)
R = db.DistributionalRegressor


#: A model fitted in a blink: a few rounds, no cross-validated rounds (and so no linear start
#: chosen on the folds), for the cases that need a fitted model or whose check the fit
#: reaches only after its start.
QUICK = {"n_estimators": 3, "early_stopping": False}
#: A vector model fitted in a blink.
MVN = {"family": "multivariate_normal", "n_estimators": 2, "early_stopping": False}


def fitted():
    return R(**QUICK).fit(X, Y)


def MV():
    """A bivariate Normal Predictive of 6 rows (the multivariate scores' cases)."""
    return db.Predictive.from_params("multivariate_normal", loc=np.c_[Y, -Y],
                                     scale_tril=np.eye(2)[None].repeat(6, 0))


def CW():
    """A censored Weibull Predictive of 6 rows (the censored scores' cases)."""
    return db.Predictive.from_params("censored_weibull", scale=Y, concentration=1.5)


def fitted_df():
    return R(**QUICK).fit(pd.DataFrame(X, columns=["a", "b"]), Y)


CASES = {
    "NaN in y": (lambda: R().fit(X, np.r_[Y[:5], np.nan]), ValueError,
                 r"y has 1 of 6 rows that are NaN or infinite"),
    "inf in y": (lambda: R().fit(X, np.r_[Y[:4], np.inf, np.inf]), ValueError,
                 r"y has 2 of 6 rows that are NaN or infinite"),
    "y outside the support": (lambda: R(family="gamma").fit(X, Y - 3), ValueError,
                              r"3 of 6 rows outside the support \(0, inf\) of family 'gamma'"),
    "non-integer counts": (lambda: R(family="poisson").fit(X, Y + 0.5), ValueError,
                           r"6 of 6 rows outside the support integers"),
    "2-D y for a 1-D family": (lambda: R().fit(X, np.c_[Y, Y]), ValueError,
                               r"expects a 1-D target y, got an array of shape \(6, 2\)"),
    "1-D y for a vector family": (
        lambda: R(family="multivariate_normal").fit(X, Y), ValueError,
        r"y must have shape \(n, d\) with d >= 2 columns; got shape \(6,\)"),
    "y with other parts than the fit": (
        lambda: R(**MVN).fit(X, np.c_[Y, Y ** 2]).score(
            X, np.c_[Y, Y, Y]), ValueError,
        r"built for d=2 parts: y must have shape \(n, 2\); got \(6, 3\)"),
    "parts in another order than the fit": (
        lambda: R(**MVN).fit(
            X, pd.DataFrame({"a": Y, "b": Y ** 2})).score(X, pd.DataFrame({"b": Y ** 2,
                                                                          "a": Y})),
        ValueError, r"Target y has columns \['b', 'a'\]; family 'multivariate_normal' was "
                    r"fitted on the parts \['a', 'b'\] in that order"),
    "a constant part of a vector target": (
        lambda: R(family="multivariate_normal").fit(X, np.c_[Y, np.ones(6)]), ValueError,
        r"part\(s\) \['y1'\] of family 'multivariate_normal' are constant over all 6 rows"),
    "collinear parts of a vector target": (
        lambda: R(family="multivariate_normal").fit(X, np.c_[Y, 1 - Y]), ValueError,
        r"2 target parts of family 'multivariate_normal' are collinear over the 6 rows"),
    "composition rows that do not sum to 1": (
        lambda: R(family="dirichlet").fit(X, np.c_[Y, Y] / 10), ValueError,
        r"5 of 6 rows whose parts do not sum to 1"),
    "a composition with a zero part": (
        lambda: R(family="dirichlet").fit(X, np.c_[Y / 6, 1 - Y / 6]), ValueError,
        r"1 of 6 rows with a part <= 0"),
    "quantiles of a vector family": (
        lambda: R(**MVN).fit(
            X, np.c_[Y, Y ** 2]).predict_quantiles(X), ValueError,
        r"vectors of 2 parts, which have no quantiles; use the margins"),
    "a vector family in the varying-coefficient model": (
        lambda: db.VaryingCoefficientRegressor(family="multivariate_normal",
                                               linear_features=[0]).fit(X, np.c_[Y, Y ** 2]),
        ValueError, r"cannot carry varying coefficients: it models a vector target"),
    "scale_tril with entries above the diagonal": (
        lambda: db.Predictive.from_params("multivariate_normal", loc=[0.0, 0.0],
                                          scale_tril=[[1.0, 0.5], [0.0, 1.0]]), ValueError,
        r"1 of 1 matrices with nonzero entries above the diagonal"),
    "censored bounds with lower > upper": (
        lambda: R(family="censored_weibull").fit(X, np.c_[Y, Y - 0.5]), ValueError,
        r"6 of 6 rows with lower > upper"),
    "censored bounds with NaN": (
        lambda: R(family="censored_weibull").fit(X, np.c_[Y, np.r_[np.nan, Y[1:]]]), ValueError,
        r"1 of 6 rows with NaN bounds"),
    "censored bounds outside the support": (
        lambda: R(family="censored_weibull").fit(X, np.c_[Y - 2, Y]), ValueError,
        r"1 of 6 rows with bounds outside the support"),
    "1-D y for a censored family": (
        lambda: R(family="censored_weibull").fit(X, Y), ValueError,
        r"expects an \(n, 2\) array of \[lower, upper\] bounds"),
    "non-numeric y": (lambda: R().fit(X, np.array(list("abcdef"))), ValueError,
                      r"Target y must be numeric"),
    "y is None": (lambda: R().fit(X, None), ValueError, r"requires y to be passed"),
    "wrong number of features at predict": (lambda: fitted().predict(X[:, :1]), ValueError,
                                            r"X has 1 features, but DistributionalRegressor "
                                            r"is expecting 2 features"),
    "different column names at predict": (
        lambda: fitted_df().predict(pd.DataFrame(X, columns=["a", "c"])), ValueError,
        r"feature names should match"),
    "empty X": (lambda: R().fit(X[:0], Y[:0]), ValueError, r"0 sample"),
    "every feature constant": (
        lambda: R(n_estimators=3, early_stopping=False).fit(np.zeros((6, 2)), Y), ValueError,
        r"Every feature is constant on these 6 training rows .*give at least one feature "
        r"that varies"),
    "infinite X": (lambda: R().fit(np.r_[X[:5], [[np.inf, 0]]], Y), ValueError,
                   r"Input X contains infinity"),
    "mismatched X and y": (lambda: R().fit(X, Y[:4]), ValueError,
                           r"X has 6 rows, y has 4 rows"),
    "mismatched sample_weight": (lambda: R().fit(X, Y, sample_weight=np.ones(4)), ValueError,
                                 r"sample_weight has shape \(4,\); expected \(6,\)"),
    "negative sample_weight": (lambda: R().fit(X, Y, sample_weight=np.r_[-1, np.ones(5)]),
                               ValueError, r"sample_weight has 1 of 6 rows that are negative"),
    "NaN sample_weight": (lambda: R().fit(X, Y, sample_weight=np.r_[np.nan, np.ones(5)]),
                          ValueError, r"sample_weight has 1 of 6 rows that are NaN"),
    "all-zero sample_weight": (lambda: R().fit(X, Y, sample_weight=np.zeros(6)), ValueError,
                               r"sample_weight is zero for all 6 rows"),
    "unknown family": (lambda: R(family="gaussian").fit(X, Y), ValueError,
                       r"Unknown family 'gaussian'; known families are"),
    "unknown link": (lambda: R(links={"scale": "cube"}).fit(X, Y), ValueError,
                     r"Unknown link 'cube'; known links are"),
    "link for an unknown parameter": (lambda: R(links={"sd": "exp"}).fit(X, Y), ValueError,
                                      r"has no parameter 'sd'"),
    "invalid hyperparameter": (lambda: R(learning_rate=-1.0).fit(X, Y), InvalidParameterError,
                               r"'learning_rate' parameter of DistributionalRegressor"),
    "unknown step rule": (lambda: R(step="adam").fit(X, Y), InvalidParameterError,
                          r"'step' parameter"),
    "malformed eval_set": (lambda: R().fit(X, Y, eval_set=[(X, Y), (X, Y)]), ValueError,
                           r"eval_set must hold exactly one"),
    "eval_set target outside the support": (
        lambda: R(family="gamma").fit(X, Y, eval_set=(X, -Y)), ValueError,
        r"y of eval_set: .*6 of 6 rows outside the support"),
    "unfitted model": (lambda: R().predict(X), NotFittedError, r"not fitted yet"),
    "quantile level outside [0, 1]": (lambda: fitted().predict_quantiles(X, [0.5, 1.5]),
                                      ValueError, r"must lie in \[0, 1\]"),
    "interval level outside (0, 1)": (lambda: fitted().predict_interval(X, 0.0), ValueError,
                                      r"must lie in \(0, 1\)"),
    "parameters outside their domain": (
        lambda: db.Predictive.from_params("normal", loc=[0.0, 0.0], scale=[1.0, -1.0]),
        ValueError, r"'scale' of family 'normal' has 1 of 2 rows outside its domain"),
    "scores with the wrong number of observations": (
        lambda: db.metrics.crps(db.Predictive.from_params("normal", loc=[0.0], scale=[1.0]),
                                [0.0, 1.0]), ValueError, r"holds 1 distributions"),
    "unknown scorer": (lambda: db.metrics.get_scorer("accuracy"), ValueError,
                       r"Unknown scorer 'accuracy'; known scorers are"),
    "classifier: one class in y": (
        lambda: db.DistributionalClassifier().fit(X, np.zeros(6)), ValueError,
        r"at least 2 classes in y; got 1 class"),
    "classifier: bernoulli with 3 classes": (
        lambda: db.DistributionalClassifier(family="bernoulli").fit(X, [0, 1, 2] * 2),
        ValueError, r"family='bernoulli' needs exactly 2 classes; y has 3"),
    "classifier: unfitted model": (lambda: db.DistributionalClassifier().predict_proba(X),
                                   NotFittedError, r"not fitted yet"),
    "Booster: loss of the wrong shape": (
        lambda: db.Booster(lambda raw, d: (d["y"][:, None] - raw) ** 2, n_estimators=2).fit(
            X, {"y": Y}), ValueError, r"loss returned shape \(6, 1\); expected \(6,\)"),
    "Booster: data with the wrong number of rows": (
        lambda: db.Booster(lambda raw, d: (d["y"] - raw[:, 0]) ** 2, n_estimators=2).fit(
            X, {"y": Y[:4]}), ValueError, r"data\['y'\] has 4 rows but X has 6 rows"),
    "varying coefficients: unknown linear feature": (
        lambda: db.VaryingCoefficientRegressor(linear_features=["z"]).fit(
            pd.DataFrame(X, columns=["a", "b"]), Y), ValueError, r"'z'"),
    "model file from a newer format": (None, ValueError, r"upgrade distboost"),
    "truncated or edited model file": (None, ValueError, r"checksum|not a complete"),
    "file that is not a distboost model": (None, ValueError, r"not a distboost model file"),
    "exact-observation scores on censored bounds": (
        lambda: db.metrics.crps(db.Predictive.from_params("normal", loc=Y, scale=1.0),
                                db.censored.right(Y, [1, 0] * 3)), ValueError,
        r"crps needs exact observations, y of shape \(6,\); got shape \(6, 2\), the \(lower, "
        r"upper\) bounds of a censored target\. Score censored targets with "
        r"db\.metrics\.censored_nll, db\.metrics\.survival_crps"),
    "censored nll of NaN bounds": (
        lambda: CW().nll(np.where([[0, 0]] * 5 + [[0, 1]], np.nan,
                                  db.censored.right(Y, [1, 0] * 3))),
        ValueError, r"Censored target has 1 of 6 rows with NaN bounds"),
    "band plot of censored bounds": (
        lambda: db.plot.intervals(CW(), y=db.censored.right(Y, [1, 0] * 3)), ValueError,
        r"plot\.intervals draws exact observations, y of shape \(6,\); got shape \(6, 2\), the "
        r"\(lower, upper\) bounds of a censored target\. Draw survival data with "
        r"db\.plot\.survival_curves or db\.plot\.d_calibration, or pass the observed times"),
    "scorer: estimator without predict_dist": (
        lambda: db.metrics.get_scorer("crps")(LinearRegression().fit(X, Y), X, Y), ValueError,
        r"LinearRegression has no predict_dist: distribution scorers need a distboost "
        r"estimator, a Pipeline ending in one"),
    "scorer: TransformedTargetRegressor": (
        lambda: db.metrics.get_scorer("crps")(TransformedTargetRegressor(
            R(**QUICK), func=np.log, inverse_func=np.exp).fit(X, Y), X, Y), ValueError,
        r"TransformedTargetRegressor fits its regressor to a transformed target.*cannot in "
        r"general be mapped back to y"),
    "scorer: search fitted with refit=False": (
        lambda: db.metrics.get_scorer("crps")(GridSearchCV(
            R(**QUICK), {"learning_rate": [0.1]}, cv=2, refit=False).fit(X, Y), X, Y),
        ValueError, r"GridSearchCV was fitted with refit=False"),
    "scorer: concordance_index with sample_weight": (
        lambda: db.metrics.get_scorer("concordance_index")(
            R(family="censored_weibull", **QUICK).fit(X, db.censored.right(Y, [1] * 6)),
            X, db.censored.right(Y, [1] * 6), sample_weight=np.ones(6)), ValueError,
        r"concordance_index scorer takes no sample_weight"),
    "numbers for a column categorical in fit": (
        lambda: R(**QUICK).fit(pd.DataFrame({"a": X[:, 0], "g": list("xyxyxy")}), Y)
        .predict(pd.DataFrame({"a": X[:2, 0], "g": [1.0, np.nan]})), ValueError,
        r"Column 'g' of X was categorical in fit \(categories 'x', 'y'\) but is numeric at "
        r"predict time with 1 of 2 rows not missing"),
    "compare_families: unknown metric": (
        lambda: db.compare_families(X, Y, families=["normal"], cv=2, metrics=("nlll",)),
        ValueError, r"Unknown metric\(s\) \['nlll'\] for compare_families; use nll, crps"),
    "eval_sample_weight without an eval_set": (
        lambda: R(n_estimators=2).fit(X, Y, eval_sample_weight=np.ones(6)), ValueError,
        r"eval_sample_weight was given without an eval_set"),
    "eval_sample_weight of the wrong length": (
        lambda: R(n_estimators=2).fit(X, Y, eval_set=(X, Y), eval_sample_weight=np.ones(4)),
        ValueError, r"eval_sample_weight has shape \(4,\); expected \(6,\)"),
    "scoring_rule='crps' without a closed form": (
        lambda: R(family="censored_weibull", scoring_rule="crps").fit(
            X, db.censored.right(Y, [1] * 6)), ValueError,
        r"scoring_rule='crps' needs a closed-form CRPS, which family 'censored_weibull' "
        r"does not have"),
    "scoring_rule='crps' with a Fisher step": (
        # The default options: refused before the linear start's choice fits on the folds.
        lambda: R(scoring_rule="crps", step="fisher").fit(X, Y), ValueError,
        r"step='fisher' needs the Riemannian metric of the scoring rule"),
    "model file from an older format": (None, ValueError, r"refit and save the model again"),
    "energy score of a univariate Predictive": (
        lambda: db.metrics.energy_score(db.Predictive.from_params("normal", loc=Y, scale=1.0),
                                        Y), ValueError,
        r"energy_score scores multivariate predictive distributions; family 'normal' is "
        r"univariate: score it with db\.metrics\.crps"),
    "multivariate scores with y of the wrong shape": (
        lambda: db.metrics.energy_score(MV(), Y), ValueError,
        r"energy_score: y has shape \(6,\); expected \(6, 2\), one observed 2-vector per row"),
    "multivariate scores with NaN rows in y": (
        lambda: db.metrics.variogram_score(MV(), np.c_[Y, np.r_[np.nan, Y[1:]]]), ValueError,
        r"variogram_score: y has 1 of 6 rows with NaN or infinite values"),
    "multivariate y with its columns in another order": (
        lambda: db.metrics.energy_score(
            R(**MVN).fit(
                X, pd.DataFrame({"a": Y, "b": X[:, 0]})).predict_dist(X),
            pd.DataFrame({"b": X[:, 0], "a": Y})), ValueError,
        r"energy_score: y has the columns \['b', 'a'\], but the Predictive's parts are "
        r"\['a', 'b'\] \(the target's columns in fit\); pass y\[\['a', 'b'\]\]"),
    "nll of a multivariate target with the wrong shape": (
        lambda: db.metrics.nll(MV(), Y), ValueError,
        r"nll: y has shape \(6,\); expected \(6, 2\)"),
    "energy score with n_samples < 2": (
        lambda: db.metrics.energy_score(MV(), np.c_[Y, Y], n_samples=1), ValueError,
        r"n_samples must be an integer >= 2 \(energy_score compares independent draws"),
    "multivariate ensemble not of shape (m, n, d)": (
        lambda: db.metrics.energy_score(np.zeros((10, 6)), np.c_[Y, Y]), ValueError,
        r"energy_score takes an ensemble as an array of draws of shape \(m, n, d\).*got an "
        r"array of shape \(10, 6\)"),
    "multivariate ensemble of one draw": (
        lambda: db.metrics.energy_score(np.zeros((1, 6, 2)), np.c_[Y, Y]), ValueError,
        r"needs an ensemble of at least 2 draws per row; got 1"),
    "multivariate ensemble with NaN draws": (
        lambda: db.metrics.variogram_score(np.r_[np.zeros((2, 6, 2)), np.full((1, 6, 2), np.nan)],
                                           np.c_[Y, Y]), ValueError,
        r"The ensemble has 6 of 6 rows with NaN or infinite draws"),
    "variogram score with p <= 0": (
        lambda: db.metrics.variogram_score(MV(), np.c_[Y, Y], p=0), ValueError,
        r"The variogram score's order p must be positive and finite; got 0\.0"),
    "variogram weights of the wrong shape": (
        lambda: db.metrics.variogram_score(MV(), np.c_[Y, Y], weights=np.ones((3, 3))),
        ValueError, r"weights has shape \(3, 3\); expected \(2, 2\) or \(6, 2, 2\)"),
    "negative variogram weights": (
        lambda: db.metrics.variogram_score(MV(), np.c_[Y, Y], weights=[[0, -1], [-1, 0]]),
        ValueError, r"weights has 2 of 4 entries that are negative, NaN or infinite"),
    "unknown energy score estimator": (
        lambda: db.metrics.energy_score(MV(), np.c_[Y, Y], estimator="crps"), ValueError,
        r"Unknown energy score estimator 'crps'; use one of \['akr', 'akr_circperm', 'fair', "
        r"'nrg'\]"),
    "location_start for a family without a location": (
        lambda: R(family="poisson", location_start="gbm").fit(X, Y), ValueError,
        r"location_start='gbm' cannot be used: family 'poisson' has no location parameter"),
    "location_start without validation rows": (
        lambda: R(location_start="gbm", early_stopping=False).fit(X, Y), ValueError,
        r"no validation rows to choose the point model's rounds \(early_stopping=False\): "
        r"give them as location_start=\{'n_estimators': R\}"),
    "unknown location_start option": (
        lambda: R(location_start={"leaves": 3}).fit(X, Y), ValueError,
        r"location_start has unknown keys \['leaves'\]; the point model's options are"),
    "unknown device": (
        lambda: R(backend="xgboost", device="gpu").fit(X, Y), ValueError,
        r"device must be 'cpu' or a CUDA device such as 'cuda' or 'cuda:0'; got 'gpu'"),
    "a GPU without backend='xgboost'": (
        lambda: R(device="cuda").fit(X, Y), ValueError,
        r"device='cuda' grows the trees on a GPU with XGBoost: pass backend='xgboost' "
        r"\(got backend=None"),
    "a GPU where torch sees none": (
        None if torch.cuda.is_available() else
        lambda: R(backend="xgboost", device="cuda").fit(X, Y), ValueError,
        r"device='cuda', but torch finds no CUDA device"),
    "PIT levels outside [0, 1]": (
        lambda: db.metrics.pit_cdf(db.Predictive.from_params("normal", loc=Y, scale=1.0), Y,
                                   [0.5, 1.5]), ValueError,
        r"PIT levels u must be a 1-D sequence in \[0, 1\]; got \[0.5, 1.5\]"),
}


@pytest.mark.parametrize("case", [c for c, v in CASES.items() if v[0] is not None])
def test_bad_input_raises_the_documented_error(case):
    fn, exc, pattern = CASES[case]
    with pytest.raises(exc, match=pattern):
        fn()


def test_the_docs_table_lists_every_case():
    table = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| ([^|]+?) \|", table, flags=re.M)
    assert set(CASES) <= {r.strip() for r in rows}, set(CASES) - {r.strip() for r in rows}
