"""XGBoost tree backend: one multi-output booster fed the engine's gradients each round.

The same trees serve three uses: in-process training
(``DistributionalRegressor(backend="xgboost")``), the models that
:class:`distboost.dask.DaskDistributionalRegressor` trains on a cluster (``to_local()`` and
saved models predict through :class:`XGBoostModel`), and training on a GPU
(``device="cuda"``).

On a GPU the training scores are a float64 torch tensor on the device: the engine's
derivatives run there (the family's torch code on CUDA tensors) and reach
``Booster.boost`` as CUDA arrays (``__cuda_array_interface__``), and each round's
trees are added to the scores by XGBoost's in-place prediction on the features kept on
the device, so no array of the training rows crosses to the host between rounds (the
training loss, a scalar, does; the validation rows' scores are kept on the host, where the
early-stopping score is computed).  The in-place prediction on device data needs CuPy
(XGBoost returns its predictions as CuPy arrays); features with pandas categoricals, or no
CuPy, predict the round through the training ``DMatrix`` and copy it to the device.  The
fitted model predicts on the CPU.  The booster has
``num_target=K`` outputs and grows one tree per output a round
(``multi_strategy="one_output_per_tree"``, XGBoost's default), from the ``(grad, hess)`` of
the step rule (its public ``Booster.boost``); ``base_score`` is 0, so the booster's margin is
the sum of its trees and the start values stay with the engine, as for LightGBM.

The engine's options map to XGBoost's (:func:`xgb_params`): ``num_leaves`` to
``max_leaves`` with leaf-wise growth (``grow_policy="lossguide"``, LightGBM's order),
``min_child_samples`` to ``min_child_weight`` (the engine rescales the curvature to a mean of
one per row at the start values, so a hessian sum counts rows approximately: XGBoost has no
row-count limit), ``reg_lambda`` to ``lambda``, ``colsample`` to ``colsample_bytree``.

The training (and validation) scores are read from XGBoost's prediction cache, which the
booster keeps up to date as the rounds are added (a copy of ``(n, K)`` margins a round, no
pass over the trees). XGBoost cannot take a round back in place; a rejected round (the
engine's line search) is removed by slicing the booster (``booster[:r]``, a copy of the
model), and from then on each round's trees are predicted on their own and added (a sliced
booster's cache would recompute every kept round after each rollback).  Text models
(``save_raw("json")``) make saving safe: no pickle.
"""

from __future__ import annotations

import numpy as np

from .backend import check_importance_type
from .threads import num_threads

__all__ = ["XGBoostBackend", "XGBoostModel", "check_device", "xgb_params"]

def _xgboost():
    try:
        import xgboost
    except ImportError as err:  # pragma: no cover - the dask extra installs it
        raise ImportError(
            "The 'xgboost' tree backend needs the xgboost package: pip install "
            "'distboost[dask]' (or xgboost-cpu, or xgboost)."
        ) from err
    return xgboost


def xgb_params(params, k: int, n: int | None = None) -> dict:
    """XGBoost's parameters for the engine's :class:`~distboost.boosting.EngineParams`.

    Parameters
    ----------
    params : EngineParams
    k : int
        Outputs (``num_target``).
    n : int, optional
        Training rows on this process: the threads of
        :func:`~distboost.boosting.threads.num_threads` (one below
        :data:`~distboost.boosting.threads.SINGLE_THREAD_ROWS` rows unless ``params.n_jobs``
        is set, the cores free inside a fit above); None: ``n_jobs`` or XGBoost's default.

    Returns
    -------
    dict
    """
    out = {
        "tree_method": "hist",
        "grow_policy": "lossguide",
        "max_leaves": int(params.num_leaves),
        "max_depth": 0 if params.max_depth is None or params.max_depth < 0
        else int(params.max_depth),
        "min_child_weight": float(params.min_child_samples),
        "lambda": float(params.reg_lambda),
        "alpha": 0.0,
        "subsample": float(params.subsample),
        "colsample_bytree": float(params.colsample),
        "max_bin": int(params.max_bin),
        "eta": float(params.learning_rate),
        "num_target": int(k),
        "base_score": 0.0,
        "disable_default_eval_metric": 1,
        "seed": 0 if params.random_state is None else int(params.random_state),
        "verbosity": 0,
    }
    # The tree options distboost passes through (LightGBM's names on the left).
    if getattr(params, "monotone_constraints", None) is not None:
        out["monotone_constraints"] = "(" + ",".join(
            str(int(v)) for v in params.monotone_constraints) + ")"
    if getattr(params, "interaction_constraints", None) is not None:
        out["interaction_constraints"] = str(
            [[int(j) for j in group] for group in params.interaction_constraints])
    out["gamma"] = float(getattr(params, "min_split_gain", 0.0))
    out["max_cat_to_onehot"] = int(getattr(params, "max_cat_to_onehot", 4))
    for name, off in (("extra_trees", False), ("path_smooth", 0.0)):
        if getattr(params, name, off) != off:
            raise ValueError(f"{name} is a LightGBM option that XGBoost's trees do not have; "
                             f"leave it at {off!r} with backend='xgboost' (or use the "
                             "LightGBM backend).")
    device = str(getattr(params, "device", "cpu") or "cpu")
    if device != "cpu":
        out["device"] = device
    threads = params.n_jobs if n is None else num_threads(params.n_jobs, n)
    if threads is not None:
        out["nthread"] = int(threads)
    return out


def check_device(device, backend, base_learner=None) -> None:
    """Raise a clear error where ``device`` cannot serve the fit.

    Parameters
    ----------
    device : str
        "cpu", "cuda" or "cuda:N".
    backend : str or None
        The estimator's ``backend`` option.
    base_learner : object or None

    Raises
    ------
    ValueError
        An unknown device, a GPU asked of a backend other than XGBoost, no CUDA device
        seen by torch, or an XGBoost built without CUDA.
    """
    if device == "cpu":
        return
    if not isinstance(device, str) or not (
            device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit())):
        raise ValueError(f"device must be 'cpu' or a CUDA device such as 'cuda' or "
                         f"'cuda:0'; got {device!r}.")
    if backend != "xgboost" or base_learner is not None:
        raise ValueError(f"device={device!r} grows the trees on a GPU with XGBoost: pass "
                         f"backend='xgboost' (got backend={backend!r}"
                         + (" with a base_learner" if base_learner is not None else "")
                         + "; LightGBM's wheels and scikit-learn's trees have no CUDA "
                         "trees).")
    import torch

    if not torch.cuda.is_available():
        raise ValueError(f"device={device!r}, but torch finds no CUDA device "
                         "(torch.cuda.is_available() is False: a CPU build of torch, or no "
                         "GPU here); use device='cpu'.")
    if not _xgboost().build_info().get("USE_CUDA", False):
        raise ValueError(f"device={device!r}, but the installed XGBoost has no CUDA "
                         "support (the xgboost-cpu wheel?): pip install xgboost.")


def _matrix(xgb, X):
    """A DMatrix of the features (pandas categoricals as XGBoost categoricals, NaN missing)."""
    return xgb.DMatrix(X, enable_categorical=True, missing=np.nan)


class XGBoostBackend:
    """Grows the trees of each round with XGBoost (in-process)."""

    name = "xgboost"
    #: dtype and memory order of the ``(grad, hess)`` arrays XGBoost takes as they are.
    layout = (np.float32, "C")

    def __init__(self, params, init_raw: np.ndarray, X, sample_weight, X_val):
        xgb = _xgboost()
        self.k = init_raw.size
        n = X.shape[0]
        self._base_rate = self._rate = float(params.learning_rate)
        self.train = _matrix(xgb, X)
        self._params = xgb_params(params, self.k, n)
        self.device = self._params.get("device")  # None on the CPU
        self.valid = None if X_val is None else _matrix(xgb, X_val)
        # XGBoost keeps the margins of the DMatrix objects in its cache up to date as the
        # rounds are added: reading them costs a copy, not a pass over every tree.
        self._cache = [self.train] + ([] if self.valid is None else [self.valid])
        self.booster = xgb.Booster(self._params, self._cache)
        self._init = np.asarray(init_raw, dtype=np.float64).reshape(1, -1)
        self._scores = np.tile(self._init, (n, 1))
        self._features = None  # the training features on the device (in-place prediction)
        if self.device is not None:
            import torch

            self._scores = torch.as_tensor(self._scores, device=self.device)
            self._features = _device_features(X, self.device)
        self._valid_scores = None if X_val is None else np.tile(self._init,
                                                                (X_val.shape[0], 1))
        self._rounds = 0
        self._last = None  # (grad, hess, train scores, valid scores) before the last round
        # After a rollback the rebuilt booster's cache is empty: each later round is added
        # by predicting its own trees (reading the cache would recompute every round after
        # each rollback, quadratic in the rounds when rounds are often taken back).
        self._incremental = False

    def _cached_scores(self, data) -> np.ndarray:
        """Start values plus every round's trees on ``data`` (a DMatrix of the cache: read
        from XGBoost's prediction cache), float64 of shape (rows, K)."""
        out = self.booster.predict(data, output_margin=True)
        return np.add(np.reshape(out, (-1, self.k)), self._init)  # float64, one array

    def _round_margin(self, data, r: int) -> np.ndarray:
        """Round ``r``'s trees on ``data``, float64 of shape (rows, K)."""
        out = self.booster.predict(data, output_margin=True, iteration_range=(r, r + 1))
        return np.reshape(out, (-1, self.k)).astype(np.float64)

    def _device_scores(self, r: int):
        """The training scores after round ``r`` as a float64 tensor on the device: the
        round's trees predicted in place on the device's features (copied out of
        XGBoost's prediction buffer, which the next call reuses) added to the scores."""
        import torch

        if self._features is not None:
            out = self.booster.inplace_predict(self._features, iteration_range=(r, r + 1),
                                               predict_type="margin", missing=np.nan)
            out = torch.as_tensor(out, device=self.device)
            return self._scores + out.reshape(-1, self.k).to(torch.float64)
        if self._incremental:
            return self._scores + torch.as_tensor(self._round_margin(self.train, r),
                                                  device=self.device)
        return torch.as_tensor(self._cached_scores(self.train), device=self.device)

    def train_scores(self) -> np.ndarray:
        """Raw scores of the training rows (start values included), shape (n, K)."""
        return self._scores

    def valid_raw(self) -> np.ndarray | None:
        """Raw scores of the validation rows, shape (n_val, K), or None."""
        return self._valid_scores

    def grow(self, grad: np.ndarray, hess: np.ndarray, learning_rate: float) -> None:
        """One round of ``K`` trees from ``(grad, hess)`` (shape (n, K)) shrunk by
        ``learning_rate``."""
        if learning_rate != self._rate:
            self.booster.set_param({"eta": float(learning_rate)})
            self._rate = learning_rate
        if self.device is None:
            g = np.asarray(grad, dtype=np.float32).reshape(-1, self.k)
            h = np.asarray(hess, dtype=np.float32).reshape(-1, self.k)
        else:  # CUDA arrays for XGBoost (a host array would be copied over)
            g, h = (_device_array(a, self.k, self.device) for a in (grad, hess))
        self.booster.boost(self.train, self._rounds, grad=g, hess=h)
        r = self._rounds
        self._rounds += 1
        self._last = (grad, hess, self._scores, self._valid_scores)
        if self.device is not None:
            self._scores = self._device_scores(r)
        elif self._incremental:
            self._scores = self._scores + self._round_margin(self.train, r)
        else:
            self._scores = self._cached_scores(self.train)
        if self.valid is not None:
            self._valid_scores = (self._valid_scores + self._round_margin(self.valid, r)
                                  if self._incremental else self._cached_scores(self.valid))

    def rollback(self) -> None:
        """Remove the last round: its trees, and the scores back to those before it."""
        _, _, self._scores, self._valid_scores = self._last
        self._rounds -= 1
        self._incremental = True  # the slice's cache is not read: rounds are added alone
        if self._rounds:
            self.booster = self.booster[: self._rounds]
            self.booster.set_param({"eta": float(self._rate)})
        else:
            self.booster = _xgboost().Booster({**self._params, "eta": float(self._rate)},
                                              [self.train])

    def retry(self, learning_rate: float) -> None:
        """Take the last round back and grow it again from its ``(grad, hess)`` with
        ``learning_rate``."""
        grad, hess = self._last[:2]
        self.rollback()
        self.grow(grad, hess, learning_rate)

    def finish(self) -> XGBoostModel:
        if self._rate != self._base_rate:
            self.booster.set_param({"eta": self._base_rate})
        if self.device is not None:  # the fitted model predicts host data on the CPU
            self.booster.set_param({"device": "cpu"})
        self._last = self.train = self.valid = self._features = None
        return XGBoostModel(self.booster, self.k)


def _device_features(X, device):
    """The features as a float32 tensor on ``device`` for XGBoost's in-place prediction,
    or None where that cannot serve: pandas categoricals, or no CuPy (XGBoost returns
    device predictions as CuPy arrays)."""
    import torch

    if torch.device(device).type != "cuda":
        return None
    try:
        import cupy  # noqa: F401
    except ImportError:
        return None
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and any(str(d) == "category" for d in dtypes):
        return None
    return torch.as_tensor(np.asarray(X, dtype=np.float32), device=device)


def _device_array(a, k: int, device):
    """``a`` (shape (n, K)) as a C-ordered float32 tensor on ``device`` (on the CPU its
    ndarray view: XGBoost takes host arrays as NumPy's)."""
    import torch

    t = torch.as_tensor(a, device=device).reshape(-1, k).to(torch.float32).contiguous()
    return t.numpy() if t.device.type == "cpu" else t


class XGBoostModel:
    """Prediction side of the XGBoost backend (also what a Dask-trained model holds).

    Parameters
    ----------
    booster : xgboost.Booster or None
        ``K`` outputs, ``base_score`` 0 (its margin is the sum of its trees); None for a
        model of no rounds.
    k : int
    """

    name = "xgboost"

    def __init__(self, booster, k: int):
        self.booster = booster
        self.k = int(k)

    def _rounds(self) -> int:
        return 0 if self.booster is None else self.booster.num_boosted_rounds()

    def predict_raw(self, X, num_iteration: int) -> np.ndarray:
        """Sum of the first ``num_iteration`` rounds' trees, shape (n, K)."""
        num_iteration = min(int(num_iteration), self._rounds())
        if num_iteration <= 0:
            return np.zeros((X.shape[0], self.k))
        out = self.booster.inplace_predict(X, iteration_range=(0, num_iteration),
                                           predict_type="margin", missing=np.nan)
        return np.reshape(np.asarray(out, dtype=np.float64), (X.shape[0], self.k))

    def to_text(self, num_iteration: int) -> str:
        """The first ``num_iteration`` rounds as XGBoost's JSON model ("" for none)."""
        num_iteration = min(int(num_iteration), self._rounds())
        if num_iteration <= 0:
            return ""
        booster = self.booster
        if num_iteration < booster.num_boosted_rounds():
            booster = booster[:num_iteration]
        return bytes(booster.save_raw("json")).decode("utf-8")

    @classmethod
    def from_text(cls, text: str, k: int) -> XGBoostModel:
        """Rebuild from :meth:`to_text` output (JSON: loading executes nothing)."""
        if not text:
            return cls(None, k)
        xgb = _xgboost()
        booster = xgb.Booster()
        booster.load_model(bytearray(text.encode("utf-8")))
        return cls(booster, k)

    def predict_contrib(self, X, num_iteration: int) -> np.ndarray:
        """XGBoost's exact TreeSHAP (``pred_contribs``), shape (n, K, p + 1), the last column
        the trees' expected value (start values excluded)."""
        n = X.shape[0]
        p = X.shape[1]
        num_iteration = min(int(num_iteration), self._rounds())
        if num_iteration <= 0:
            return np.zeros((n, self.k, p + 1))
        out = self.booster.predict(_matrix(_xgboost(), X), pred_contribs=True,
                                   iteration_range=(0, num_iteration))
        return np.reshape(np.asarray(out, dtype=np.float64), (n, self.k, p + 1))

    def feature_importances(self, num_iteration: int,
                            importance_type: str = "gain") -> np.ndarray:
        """Total gain (or the number of splits) of each feature per output, shape (K, p)."""
        check_importance_type(importance_type)
        p = 0 if self.booster is None else self.booster.num_features()
        out = np.zeros((self.k, p))
        num_iteration = min(int(num_iteration), self._rounds())
        if num_iteration <= 0:
            return out
        frame = self.booster[:num_iteration].trees_to_dataframe()
        splits = frame[frame["Feature"] != "Leaf"]
        names = self.booster.feature_names or [f"f{j}" for j in range(p)]
        column = {name: j for j, name in enumerate(names)}
        rows = splits["Tree"].to_numpy() % self.k
        cols = splits["Feature"].map(column).to_numpy()
        values = (splits["Gain"].to_numpy() if importance_type == "gain"
                  else np.ones(len(splits)))
        np.add.at(out, (rows, cols.astype(int)), values)
        return out
