"""A penalised linear model of every raw parameter, as the start of boosting on small data.

On a few dozen or hundred rows, trees recover smooth effects poorly and a linear model of each
distribution parameter (GAMLSS, Rigby & Stasinopoulos 2005; for censored times the parametric
AFT models of survival analysis) is hard to beat.  :func:`choose_linear_start` fits

    ``raw_k(x) = a_k + z(x) b_k``,   minimising  ``mean_w nll + penalty * sum_k I_k |b_k|^2``

(``I_k``: the information of raw output ``k`` at the constant start, so that neither the
penalty nor the fit depends on the units of y; ``z``: standardised numeric columns, NaN at
the centre, and centred one-hot columns of the categoricals seen in ``fit``) for a grid of
ridge penalties, scores each by K-fold cross-validation against the constant model (infinite
penalty), and keeps the largest penalty within one standard error of the best (the
one-standard-error rule on the paired fold differences; the constant when it is within one
standard error).  Boosting then starts from that model: the trees only add what the data
support beyond it.

Beyond the bulk of the training values the linear part is constant, as the trees are: each
numeric column is clipped to its training values' ``[q, 1 - q]`` quantiles
(:data:`CLIP_QUANTILE`, the 1st and 99th percentiles) before it enters ``z(x)``, and its
centre and scale are those of the clipped values.  The rows of a feature's tail share the
edge's value, as they share the edge's leaf in a tree.  On a log link an unclipped slope grows
the mean exponentially along the feature: on statsmodels' ``engel`` data (235 households)
clipping to the training range (issue 25) stopped a lognormal from predicting a mean food
expenditure of 14,284 for a new household that spent 1,827, but the household with the
largest income is a training row: clipped to the range, the gamma's start still predicted it
a median of 11,300 (issue 52).  Cross-validation sees such a row in one fold of five, and
the trees cannot correct a single row (leaves hold several).  Clipped to the percentiles
every row's median is within 1.9 x its observed value for the gamma, log-normal and Normal
(docs/engine.md, "Outside the training range").

References
----------
Rigby & Stasinopoulos (2005), Generalized additive models for location, scale and shape, JRSS
C 54(3); Hastie, Tibshirani & Friedman (2009), The Elements of Statistical Learning, sec. 7.10
(the one-standard-error rule).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from scipy.optimize import minimize

from ..families.numerics.special import carry_terms
from .rounds import one_standard_error_choice

__all__ = ["LinearStart", "fit_linear_start", "choose_linear_start", "PENALTIES",
           "CLIP_QUANTILE"]

#: Each numeric column enters the linear start clipped to its training values' quantiles
#: ``CLIP_QUANTILE`` and ``1 - CLIP_QUANTILE``.
CLIP_QUANTILE = 0.01
#: Ridge penalties tried (on the mean NLL per row, for standardised columns), strongest first.
PENALTIES = (1.0, 0.3, 0.1, 0.03, 0.01)
#: L-BFGS iterations of one penalised fit.
MAX_ITER = 200


class LinearStart:
    """The linear part ``z(x) B`` of the raw scores (the intercepts live in ``init_raw``).

    Parameters
    ----------
    columns : list of dict
        One per column of X used: ``{"index": j, "kind": "numeric", "center": c,
        "scale": s, "min": lo, "max": hi}`` (the column is clipped to ``[lo, hi]``, its
        training values' :data:`CLIP_QUANTILE` quantiles; a model saved before issue 52 has
        the training range there, one saved before issue 25 neither key and is not clipped)
        or ``{"index": j, "kind": "categorical", "levels": [...], "means": [...]}``.
    coef : ndarray of shape (q, K)
        Coefficients of the design columns for each raw output.
    """

    def __init__(self, columns: list[dict], coef: np.ndarray):
        self.columns = columns
        self.coef = np.asarray(coef, dtype=np.float64)

    @classmethod
    def design_of(cls, X) -> LinearStart:
        """The standardisation of X's columns (coefficients zero): shape (q, 0)."""
        columns = []
        for j in range(X.shape[1]):
            col = X.iloc[:, j] if isinstance(X, pd.DataFrame) else pd.Series(X[:, j])
            if isinstance(col.dtype, pd.CategoricalDtype):
                levels = list(col.cat.categories)
                onehot = _onehot(col, levels)
                columns.append({"index": j, "kind": "categorical", "levels": levels,
                                "means": onehot.mean(axis=0).tolist()})
                continue
            x = col.to_numpy(dtype=np.float64)
            finite = x[np.isfinite(x)]
            if finite.size < 2 or not np.std(finite) > 0:
                continue  # constant or empty: nothing linear to learn
            lo, hi = np.quantile(finite, [CLIP_QUANTILE, 1.0 - CLIP_QUANTILE])
            if not hi > lo:  # over 98 % of the rows at one value: the range instead
                lo, hi = finite.min(), finite.max()
            clipped = np.clip(finite, lo, hi)
            columns.append({"index": j, "kind": "numeric", "center": float(clipped.mean()),
                            "scale": float(clipped.std()), "min": float(lo),
                            "max": float(hi)})
        return cls(columns, np.zeros((_width(columns), 0)))

    def design(self, X) -> np.ndarray:
        """``z(x)``, ndarray of shape (n, q): numeric columns clipped to their training
        values' :data:`CLIP_QUANTILE` quantiles and standardised (NaN at the centre),
        categoricals one-hot and centred."""
        parts = [np.zeros((X.shape[0], 0))]
        for c in self.columns:
            col = (X.iloc[:, c["index"]] if isinstance(X, pd.DataFrame)
                   else pd.Series(X[:, c["index"]]))
            if c["kind"] == "numeric":
                x = np.clip(col.to_numpy(dtype=np.float64), c.get("min", -np.inf),
                            c.get("max", np.inf))
                z = (x - c["center"]) / c["scale"]
                parts.append(np.nan_to_num(z, nan=0.0)[:, None])
            else:
                parts.append(_onehot(col, c["levels"]) - np.asarray(c["means"]))
        return np.hstack(parts)

    def offset(self, X) -> np.ndarray:
        """Linear part of the raw scores, ndarray of shape (n, K)."""
        return self.design(X) @ self.coef

    def to_dict(self) -> dict:
        return {"columns": self.columns, "coef": self.coef.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> LinearStart:
        return cls(d["columns"], np.asarray(d["coef"], dtype=np.float64).reshape(
            _width(d["columns"]), -1))


def _onehot(col: pd.Series, levels: list) -> np.ndarray:
    values = col.astype(object).to_numpy()
    return (values[:, None] == np.asarray(levels, dtype=object)[None, :]).astype(np.float64)


def _width(columns: list[dict]) -> int:
    return sum(1 if c["kind"] == "numeric" else len(c["levels"]) for c in columns)


def fit_linear_start(loss, init_raw: np.ndarray, Z: np.ndarray, data: dict, weight,
                     penalty: float, mask=None, derivatives=None, warm=None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Penalised fit of ``raw = init_raw + a + Z B`` by L-BFGS.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``.
    init_raw : ndarray of shape (K,)
    Z : ndarray of shape (n, q)
    data : dict of str to Tensor
    weight : ndarray of shape (n,) or None
    penalty : float
        Ridge penalty on ``B`` (the intercepts ``a`` are not penalised), each column ``k``
        weighted by the information of raw output ``k`` at ``init_raw`` (the weighted mean
        squared per-row gradient): scale-free, so a target in other units gets the same fit.
    mask : ndarray of shape (K,), optional
        1 for the raw outputs that get slopes, 0 for those kept constant (default: all 1).
    derivatives : callable, optional
        ``derivatives(raw, data) -> (loss Tensor[n], grad Tensor[n, K], ...)``: the same
        loss with its closed-form gradient (:meth:`FamilyObjective.derivatives
        <distboost.objective.FamilyObjective.derivatives>`).  The objective's gradient is
        then its chain rule through the linear map, without autograd (the same values; a
        few times faster on the small data the linear start serves).
    warm : (intercept, coef), optional
        A solution of the same data at another penalty, where L-BFGS starts (the ridge path
        is smooth in the penalty: fewer iterations to the same optimum).

    Returns
    -------
    intercept : ndarray of shape (K,)
        ``init_raw + a``.
    coef : ndarray of shape (q, K)
    """
    n, k = Z.shape[0], init_raw.size
    w = torch.full((n,), 1.0 / n, dtype=torch.float64) if weight is None else (
        torch.as_tensor(np.asarray(weight, np.float64) / np.sum(weight)))
    z = torch.as_tensor(Z, dtype=torch.float64)
    base = torch.as_tensor(init_raw, dtype=torch.float64)
    m = torch.ones(k, dtype=torch.float64) if mask is None else torch.as_tensor(
        np.asarray(mask, dtype=np.float64))
    # Penalise each slope in the metric of its raw output's information at the start (the
    # weighted mean squared per-row gradient there): for the Normal's loc that is
    # |b|^2 / sigma^2.  The fit runs in those units (a = a' / sqrt(I), b = b' / sqrt(I)), so
    # both the penalty and the optimiser's tolerances are the same whatever the units of y.
    start = base.repeat(n, 1).requires_grad_(True)
    (g,) = torch.autograd.grad(loss(start, data).sum(), start)
    info = ((g.detach() ** 2) * w[:, None]).sum(0)
    info = torch.where(torch.isfinite(info) & (info > 0), info, torch.ones_like(info))
    unit = 1.0 / info.sqrt()
    q = Z.shape[1]
    a0 = np.zeros(k)
    b0 = np.zeros((q, k))
    if warm is not None:
        a0 += ((torch.as_tensor(warm[0], dtype=torch.float64) - base) / unit).numpy()
        b0 += (torch.as_tensor(warm[1], dtype=torch.float64) / unit * m).numpy()

    def split(theta: np.ndarray):
        t = torch.from_numpy(theta)
        return t[:k], t[k:].reshape(q, k)

    def autograd(theta):
        a_s, b_s = (v.clone().requires_grad_(True) for v in split(theta))
        raw = base + a_s * unit + z @ (b_s * m * unit)
        value = (loss(raw, data) * w).sum() + penalty * (b_s * b_s * m).sum()
        if not torch.isfinite(value):
            raise FloatingPointError("the penalised linear start diverged")
        value.backward()
        return float(value.detach()), np.concatenate([a_s.grad.numpy(), b_s.grad.numpy().ravel()])

    def closed_form(theta):
        a_s, b_s = split(theta)
        with torch.no_grad():
            raw = base + a_s * unit + z @ (b_s * m * unit)
            rows, grad = derivatives(raw, data)[:2]
            value = rows @ w + penalty * (b_s * b_s * m).sum()
            if not torch.isfinite(value):
                raise FloatingPointError("the penalised linear start diverged")
            weighted = grad * w[:, None]  # d value / d raw, shape (n, K)
            g_a = weighted.sum(0) * unit
            g_b = (z.T @ weighted) * (m * unit) + 2.0 * penalty * b_s * m
        return float(value), np.concatenate([g_a.numpy(), g_b.numpy().ravel()])

    # SciPy's L-BFGS-B (Byrd et al. 1995; no bounds here): torch.optim's L-BFGS imported
    # torch._dynamo on its first use, 1.6-2.8 s of the first small fit of a process.
    result = minimize(autograd if derivatives is None else closed_form,
                      np.concatenate([a0, b0.ravel()]), jac=True, method="L-BFGS-B",
                      options={"maxiter": MAX_ITER, "maxcor": 100, "gtol": 1e-9,
                               "ftol": 0.0})
    a_s, b_s = split(np.asarray(result.x, dtype=np.float64))
    a = a_s * unit
    b = b_s * m * unit
    return (base + a).numpy().copy(), b.numpy().copy()


def choose_linear_start(make_loss, X, y, weight, folds, fit_start, mask=None) -> float | None:
    """The ridge penalty of the linear start chosen by cross-validation, or None.

    Parameters
    ----------
    make_loss : callable
        ``make_loss(y_rows) -> (loss, init_raw, derivatives)`` for training rows ``y_rows``
        (the family's floored loss, marginal start values on those rows, and the loss's
        closed-form derivatives or None: see :func:`fit_linear_start`).
    X : ndarray or DataFrame of shape (n, p)
    y : ndarray of shape (n,) or (n, 2)
    weight : ndarray of shape (n,) or None
    folds : list of (train_index, validation_index)
    fit_start : callable
        ``fit_start(X_rows) -> LinearStart`` design of the training rows.
    mask : ndarray of shape (K,), optional
        Raw outputs that get slopes (see :func:`fit_linear_start`).

    Returns
    -------
    float or None
        The penalty, or None when the constant model is within one standard error of the
        best penalised linear model (or no column is usable).
    """
    take = (lambda A, i: A.iloc[i]) if isinstance(X, pd.DataFrame) else (lambda A, i: A[i])
    w = np.ones(len(y)) if weight is None else np.asarray(weight, np.float64)
    scores = np.zeros((len(folds), len(PENALTIES) + 1))  # column 0: the constant model
    for f, (train, valid) in enumerate(folds):
        loss, init_raw, derivatives = make_loss(y[train])
        design = fit_start(take(X, train))
        if design.coef.shape[0] == 0:
            return None
        Z, Z_val = design.design(take(X, train)), design.design(take(X, valid))
        data = {"y": carry_terms(torch.tensor(y[train]))}
        data_val = {"y": carry_terms(torch.tensor(y[valid]))}
        wv = w[valid] / w[valid].sum()
        with torch.no_grad():
            raw0 = torch.as_tensor(np.tile(init_raw, (len(valid), 1)))
            scores[f, 0] = float(loss(raw0, data_val).numpy() @ wv)
        warm = None  # each penalty starts from the stronger one's solution
        for i, penalty in enumerate(PENALTIES):
            try:
                icpt, coef = fit_linear_start(loss, init_raw, Z, data,
                                              None if weight is None else w[train], penalty,
                                              mask, derivatives, warm)
            except FloatingPointError:
                scores[f, i + 1] = np.inf
                warm = None
                continue
            warm = (icpt, coef)
            with torch.no_grad():
                raw = torch.as_tensor(icpt[None, :] + Z_val @ coef)
                scores[f, i + 1] = float(loss(raw, data_val).numpy() @ wv)
    # Candidates from the simplest: the constant, then decreasing penalties.
    fold_w = [float(w[v].sum()) for _, v in folds]
    first = one_standard_error_choice(scores, fold_w, paired=True)
    return None if first == 0 else PENALTIES[first - 1]
