"""Shared problems of the engine and backend tests: a Gaussian loss on raw (mean, log sd),
its Fisher information, and the heteroscedastic sine."""

from __future__ import annotations

import numpy as np
import torch

from distboost.boosting import EngineParams, fit_boosting


def gaussian_loss(raw, data):
    mu, log_sigma = raw[:, 0], raw[:, 1]
    return 0.5 * ((data["y"] - mu) * torch.exp(-log_sigma)) ** 2 + log_sigma


def gaussian_fisher(raw, data):
    return torch.stack([torch.exp(-2 * raw[:, 1]), torch.full_like(raw[:, 1], 2.0)], dim=1)


def gaussian_fisher_full(raw, data):
    return torch.diag_embed(gaussian_fisher(raw, data))


def gaussian_derivatives(raw, data):
    """Closed-form ``(loss, grad, diagonal fisher)`` of :func:`gaussian_loss`."""
    inv_var = torch.exp(-2 * raw[:, 1])
    r = data["y"] - raw[:, 0]
    z2 = r * r * inv_var
    loss = 0.5 * z2 + raw[:, 1]
    grad = torch.stack([-r * inv_var, 1.0 - z2], dim=1)
    return loss, grad, torch.stack([inv_var, torch.full_like(inv_var, 2.0)], dim=1)


def sine(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, n)
    y = np.sin(x) + rng.normal(size=n) * (0.05 + 0.1 * x**2)
    return x.reshape(-1, 1), y


def heldout_nll(fe, X, y):
    raw = torch.as_tensor(fe.predict_raw(X))
    return float(gaussian_loss(raw, {"y": torch.as_tensor(y)}).mean()) + 0.5 * np.log(2 * np.pi)


def marginal_nll(y_train, y_test):
    return float(0.5 * np.mean((y_test - y_train.mean()) ** 2) / y_train.var()
                 + 0.5 * np.log(y_train.var()) + 0.5 * np.log(2 * np.pi))


#: The engine settings these tests start from (EngineParams has no defaults of its own: the
#: estimators' live in their option table); each test overrides what it is about.
ENGINE = dict(n_estimators=1000, learning_rate=0.05, step="fisher", num_leaves=31, max_depth=-1,
              min_child_samples=20, subsample=1.0, colsample=1.0, reg_lambda=0.0, max_bin=255,
              n_iter_no_change=50, random_state=None, n_jobs=None, verbose=0,
              base_learner=None, backend=None, monotone_constraints=None,
              interaction_constraints=None, min_split_gain=0.0, extra_trees=False,
              path_smooth=0.0, max_cat_to_onehot=4, device="cpu")


def engine(**kw) -> EngineParams:
    """EngineParams of :data:`ENGINE` with the fields ``kw`` overridden."""
    return EngineParams(**{**ENGINE, **kw})


def fit(X, y, fisher=gaussian_fisher, derivatives=None, **kw):
    init = np.array([y.mean(), np.log(y.std())])
    params = engine(**{"n_estimators": 200, "learning_rate": 0.1, "random_state": 0, **kw})
    return fit_boosting(gaussian_loss, init, X, {"y": torch.as_tensor(y)}, params=params,
                        fisher=fisher, derivatives=derivatives)
