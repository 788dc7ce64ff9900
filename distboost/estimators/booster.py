"""``Booster``: the boosting engine as a scikit-learn-style estimator for any torch loss.

"With PyTorch, I can gradient boost anything": the user writes a per-row loss
``loss(raw: Tensor[n, K], data) -> Tensor[n]`` in torch, and :class:`Booster` grows one tree
ensemble per raw output against it, with derivatives from autograd (no hand-derived calculus),
the engine's step rules, early stopping, gradient clipping at quantiles, and a ``callback``
between rounds that lets torch parameters of the user's own (a network) train together with
the trees.  ``data`` is a dict of row-aligned tensors the loss reads (``y``, columns of X, a
network's output, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import torch
from scipy.optimize import minimize
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import check_eval_set, check_sample_weight, check_X, int_seed
from ..boosting import STEP_RULES, fit_boosting
from ..boosting.derivatives import check_clip_gradients
from .options import Option, OptionsMixin
from .tree_options import resolve_tree_options

__all__ = ["Booster"]

#: L-BFGS iterations of the constant start value (``init=None``).
INIT_MAX_ITER = 100


class Booster(OptionsMixin, BaseEstimator):
    """Gradient-boosted trees against any differentiable per-row torch loss.

    ``K = n_outputs`` ensembles are grown, one per column of the raw scores
    ``raw[n, K] = init + sum of the trees``; each round, autograd differentiates
    ``loss(raw, data)`` with respect to ``raw``, a step rule turns the derivatives into tree
    targets, and ``K`` trees are added with shrinkage ``learning_rate``.

    {parameters}

    Attributes
    ----------
    ensemble_ : FittedEnsemble
        The fitted ensembles (``predict_raw``, ``to_dict``, ...).
    init_raw_ : ndarray of shape (K,)
        The raw start values used.
    n_iter_ : int
        Rounds run.
    best_iteration_ : int
        Rounds used by :meth:`predict_raw` (the best validation round under early stopping).
    evals_result_ : dict
        ``{"train": {"loss": [...]}, "valid": {"loss": [...]}}``, the weighted mean loss per
        round (train: before the round's trees; valid: after them and the callback).
    stopped_reason_ : str
        "n_estimators", "early_stopping", "callback" or "non_finite_loss".
    feature_importances_ : ndarray of shape (K, p)
        Total split gain of each feature in each output's ensemble.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame with string column names.

    Examples
    --------
    The Huber loss, boosted with Newton steps:

    >>> import numpy as np, torch
    >>> from distboost.estimators.booster import Booster
    >>> def huber(raw, data, delta=1.0):
    ...     r = (data["y"] - raw[:, 0]).abs()
    ...     return torch.where(r < delta, 0.5 * r**2, delta * (r - 0.5 * delta))
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + rng.standard_t(2, size=500) * 0.1
    >>> model = Booster(huber, n_estimators=50, random_state=0).fit(X, {"y": y})
    >>> model.predict_raw(X[:3]).shape
    (3, 1)
    """

    _options = ("loss", "n_outputs", "init", "step", "fisher", "n_estimators",
                "learning_rate", "num_leaves", "max_depth", "min_child_samples", "subsample",
                "colsample", "reg_lambda", "max_bin", "min_split_gain", "extra_trees",
                "path_smooth", "max_cat_to_onehot", "monotone_constraints",
                "interaction_constraints", "param_options", "n_iter_no_change", "base_learner",
                "backend",
                "clip_gradients", "callback", "random_state", "n_jobs", "verbose")
    _n_positional = 1
    _docs = {"param_options": (
        "Tree options for one output, overriding the shared ones for its trees, keyed by the "
        "output's position: ``{1: {\"num_leaves\": 4, \"learning_rate\": 0.02, "
        "\"features\": [0, 2]}}`` (the keys of the estimators' ``param_options``).  When "
        "the outputs' options differ, one booster per output is grown in lockstep.")}
    _defaults = {"n_estimators": 100, "learning_rate": 0.1, "num_leaves": 31,
                 "min_child_samples": 20}
    _extra_options = {
        "loss": Option(
            None, [callable], "callable",
            "``loss(raw: Tensor[n, K], data: dict) -> Tensor[n]``, one loss value per row, "
            "written with torch operations so that autograd can differentiate it (twice for "
            "``step=\"newton\"``).  ``data`` is the dict given to :meth:`fit` (tensors)."),
        "n_outputs": Option(1, [Interval(Integral, 1, None, closed="left")], "int",
                            "``K``, the number of raw outputs (ensembles)."),
        "init": Option(
            None, ["array-like", Real, None], "array_like of shape (K,)",
            "Raw start values.  None: the constant that minimises the (weighted) mean "
            "training loss, found by L-BFGS (SciPy's) on ``K`` numbers from 0."),
        "step": Option(
            "newton", [StrOptions(set(STEP_RULES))],
            '{"newton", "gradient", "fisher", "natural"}',
            "How derivatives become tree targets: the guarded diagonal Hessian (a column "
            "without curvature, as for the absolute loss, gets the gradient step), the plain "
            "gradient, or, when ``fisher`` is given, the diagonal Fisher information or the "
            "damped natural gradient (see ``docs/engine.md``)."),
        "fisher": Option(
            None, [callable, None], "callable",
            "``fisher(raw, data) -> Tensor[n, K]`` (diagonal) or ``Tensor[n, K, K]``: the "
            "expected Fisher information of each row, for ``step`` \"fisher\" and "
            "\"natural\"."),
        "n_iter_no_change": Option(
            None, [Interval(Integral, 1, None, closed="left"), None], "int",
            "With an ``eval_set``: stop when its loss has not improved for this many rounds "
            "and keep the best round.  None: record the validation loss, keep every round."),
        "clip_gradients": Option(
            None, ["array-like", None], "tuple (lo, hi)",
            "Clip each column of the loss gradient to its ``lo`` and ``hi`` quantiles over "
            "the rows every round, e.g. ``(0.05, 0.95)``: stabilises losses whose gradients "
            "have heavy tails.  Curvatures are not clipped.  The one option that looks at "
            "all rows together (in-process training only)."),
        "callback": Option(
            None, [callable, None], "callable",
            "``callback(round, raw) -> bool | None``, called after each round's trees are "
            "added with the 1-based round number and the training raw scores, ndarray of "
            "shape (n, K).  It may update torch parameters of its own (an optimiser step) and "
            "mutate the tensors of ``data`` and of the ``eval_set``'s data in place; the next "
            "round's derivatives and this round's validation loss see the change.  Returning "
            "True stops training."),
    }

    # ------------------------------------------------------------------ fit
    def fit(self, X, data, *, eval_set=None, sample_weight=None) -> Booster:
        """Grow the ensembles against ``loss`` on the rows of X.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
            Features the trees split on (NaN allowed; DataFrame categoricals used as such).
        data : dict of str to Tensor or array_like, or array_like
            Row-aligned values the loss reads, each with n rows along its first axis
            (0-dimensional values are passed as they are).  Tensors are used as given (so a
            callback can update them in place); arrays become tensors sharing their memory
            where torch can.  Anything but a dict is taken as ``{"y": data}``.
        eval_set : tuple (X_val, data_val), default=None
            Validation rows; ``data_val`` has the same keys as ``data``.
        sample_weight : array_like of shape (n,), default=None
            Non-negative row weights of the loss.

        Returns
        -------
        self
        """
        self._validate_params()
        k = int(self.n_outputs)
        X = check_X(self, X, reset=True)
        n = X.shape[0]
        data = _check_data(data, n, "data")
        sample_weight = check_sample_weight(sample_weight, n)
        eval_set, _ = check_eval_set(eval_set)
        X_val = data_val = None
        if eval_set is not None:
            X_val = check_X(self, eval_set[0], reset=False)
            data_val = _check_data(eval_set[1], X_val.shape[0], "data of eval_set")
            missing = sorted(set(data) - set(data_val))
            if missing:
                raise ValueError(
                    f"The data of eval_set lacks the key(s) {missing} that data has; the loss "
                    "reads the same keys on both."
                )
        clip = check_clip_gradients(self.clip_gradients)
        if self.step in ("fisher", "natural") and self.fisher is None:
            raise ValueError(
                f"step={self.step!r} needs the expected Fisher information of the loss: pass "
                "fisher= (raw, data -> Tensor[n, K] or Tensor[n, K, K]), or use step='newton' "
                "or 'gradient'."
            )

        if self.init is None:
            _check_loss(self.loss, np.zeros(k), data, n, "raw = 0")
            init_raw = _constant_init(self.loss, k, data, n, sample_weight)
        else:
            init_raw = np.asarray(self.init, dtype=np.float64).reshape(-1)
            if init_raw.size != k:
                raise ValueError(
                    f"init has {init_raw.size} values but n_outputs={k}: give one raw start "
                    "value per output."
                )
            bad = int((~np.isfinite(init_raw)).sum())
            if bad:
                raise ValueError(f"init has {bad} of {k} values that are NaN or infinite.")
        _check_loss(self.loss, init_raw, data, n, "the start values init_raw")
        if self.fisher is not None and self.step in ("fisher", "natural"):
            _check_fisher(self.fisher, init_raw, data, n)

        self.ensemble_ = fit_boosting(
            self.loss, init_raw, X, data,
            params=self._engine_params(self.step, n, int_seed(self.random_state),
                                       tree_options=resolve_tree_options(
                                           self, X, np.arange(X.shape[1]), list(range(k)),
                                           list(range(k))),
                                       # no patience without validation rows: every
                                       # round is grown (and n_estimators="auto" is 1000)
                                       n_iter_no_change=None if X_val is None
                                       else self.n_iter_no_change,
                                       clip_gradients=clip),
            sample_weight=sample_weight,
            X_val=X_val,
            data_val=data_val,
            fisher=self.fisher,
            callback=self.callback,
            warn_context="Booster",
        )
        self.init_raw_ = self.ensemble_.init_raw
        self.n_iter_ = self.ensemble_.n_iter_
        self.best_iteration_ = self.ensemble_.best_iteration_
        self.evals_result_ = self.ensemble_.evals_result_
        self.stopped_reason_ = self.ensemble_.stopped_reason
        return self

    # ------------------------------------------------------------------ predict
    def predict_raw(self, X, num_iteration: int | None = None) -> np.ndarray:
        """Raw scores ``init_raw_ + sum of the trees``, ndarray of shape (n, K).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        num_iteration : int, default=None
            Rounds to use (None: ``best_iteration_``).
        """
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        return self.ensemble_.predict_raw(X, num_iteration)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total split gain of each feature in each output's ensemble, shape (K, p)."""
        check_is_fitted(self)
        return self.ensemble_.feature_importances()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


# ---------------------------------------------------------------------- helpers
def _check_data(data, n: int, name: str) -> dict:
    """Row-aligned dict of tensors from ``data`` (a dict, or the target alone)."""
    if data is None:
        raise ValueError(f"{name} is None: pass a dict of tensors or arrays (e.g. {{'y': y}}).")
    if not isinstance(data, Mapping):
        data = {"y": data}
    out = {}
    for key, value in data.items():
        if not isinstance(key, str):
            raise ValueError(f"{name} keys must be strings, got {key!r}.")
        if not isinstance(value, torch.Tensor):
            if hasattr(value, "to_numpy"):  # pandas
                value = value.to_numpy()
            arr = np.asarray(value)
            if arr.dtype.kind not in "biuf":
                raise ValueError(
                    f"{name}[{key!r}] must be numeric (a tensor or a numeric array), "
                    f"got dtype {arr.dtype}."
                )
            if not arr.flags.writeable:  # e.g. a pandas column: torch needs writable memory
                arr = arr.copy()
            value = torch.as_tensor(arr)  # shares memory with a numpy array where possible
        if value.dim() > 0 and value.shape[0] != n:
            raise ValueError(
                f"{name}[{key!r}] has {value.shape[0]} rows but X has {n} rows; every value "
                "of data needs one entry per row of X."
            )
        out[key] = value
    return out


def _check_loss(loss, init_raw: np.ndarray, data: dict, n: int, where: str) -> None:
    """The loss gives a finite, differentiable tensor of shape (n,) at ``init_raw``."""
    k = init_raw.size
    raw = torch.tensor(np.tile(init_raw, (n, 1)), requires_grad=True)
    try:
        out = loss(raw, data)
    except (IndexError, RuntimeError, TypeError, KeyError) as err:
        raise ValueError(
            f"loss failed on raw scores of shape ({n}, {k}) (n_outputs={k}) at {where}: "
            f"{type(err).__name__}: {err}"
        ) from err
    if not isinstance(out, torch.Tensor):
        raise ValueError(
            f"loss must return a torch Tensor of shape ({n},), one value per row; it returned "
            f"{type(out).__name__}."
        )
    if tuple(out.shape) != (n,):
        raise ValueError(
            f"loss returned shape {tuple(out.shape)}; expected ({n},), one value per row "
            f"(raw scores have shape ({n}, {k})). Do not reduce over rows (no .mean() or "
            ".sum()) and return one column."
        )
    if not out.requires_grad:
        raise ValueError(
            "loss output does not depend on raw through torch operations (no autograd graph): "
            "compute it from raw with torch functions, not numpy or .detach()."
        )
    bad = ~torch.isfinite(out.detach())
    if bool(bad.any()):
        rows = torch.nonzero(bad).flatten()[:5].tolist()
        raise ValueError(
            f"loss is NaN or infinite at {where} for {int(bad.sum())} of {n} rows "
            f"(rows {rows}...); check data for NaN or pass other init values."
        )


def _check_fisher(fisher, init_raw: np.ndarray, data: dict, n: int) -> None:
    k = init_raw.size
    with torch.no_grad():
        out = fisher(torch.as_tensor(np.tile(init_raw, (n, 1))), data)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) not in ((n, k), (n, k, k)):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(
            f"fisher returned {shape}; expected a Tensor of shape ({n}, {k}) (diagonal) or "
            f"({n}, {k}, {k})."
        )


def _constant_init(loss, k: int, data: dict, n: int, sample_weight) -> np.ndarray:
    """The constant raw vector minimising the weighted mean loss (L-BFGS from 0).

    SciPy's L-BFGS-B (no bounds) on the value and autograd gradient: torch.optim's L-BFGS,
    used before, imported ``torch._dynamo`` on its first use (2-6 s of a process's first
    Booster fit) for the same optimum (the tests check the mean, the weighted mean, the logit
    of the base rate and the Gaussian MLE to 1e-9 to 1e-6, and the median of the absolute
    loss, which is not smooth, to 0.02).
    """
    w = None if sample_weight is None else torch.as_tensor(sample_weight)

    def mean_loss(theta):
        per_row = loss(theta.expand(n, k), data)
        return per_row.mean() if w is None else (per_row * w).sum() / w.sum()

    def value_and_grad(x):
        theta = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        value = mean_loss(theta)
        if not torch.isfinite(value):
            return np.inf, np.zeros(k)
        (grad,) = torch.autograd.grad(value, theta)
        return float(value.detach()), grad.numpy()

    result = minimize(value_and_grad, np.zeros(k), jac=True, method="L-BFGS-B",
                      options={"maxiter": INIT_MAX_ITER, "gtol": 1e-12, "ftol": 0.0})
    out = np.asarray(result.x, dtype=np.float64).copy()
    with torch.no_grad():
        finite = np.isfinite(float(mean_loss(torch.as_tensor(out))))
    if not np.isfinite(out).all() or not finite:
        raise ValueError(
            "Could not find a finite constant start value by minimising the mean loss from 0; "
            "pass init= (one raw start value per output)."
        )
    return out
