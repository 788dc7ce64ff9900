"""Every second-wave family through the estimator: fit on small data, predict_dist,
quantiles, CRPS, save and load (bit-identical parameters).  Targets are drawn from the
family's own scipy law (``family_cases.py``) with a covariate shifting one parameter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from family_cases import case
from family_cases import family as _family

import distboost as db

SECOND_WAVE = ["cauchy", "half_normal", "inverse_gaussian", "loglogistic", "zero_inflated_poisson",
               "zero_inflated_negative_binomial", "zero_adjusted_gamma",
               "zero_adjusted_lognormal", "tweedie", "ordinal_logit"]


def _data(name: str, n: int = 200, seed: int = 0, strength: float = 0.3):
    fam = _family(name)
    p = case(name).params[0]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=n)
    raw = np.tile(fam.raw_from_params(p), (n, 1))
    raw[:, 0] += strength * x  # the first parameter moves with x
    params = fam.params_from_raw(torch.as_tensor(raw))
    y = fam.sample(params, 1, seed=seed)[0].numpy()
    return pd.DataFrame({"x": x}), y


@pytest.mark.parametrize("name", SECOND_WAVE)
def test_fit_predict_quantile_crps_save_load(name, tmp_path):
    X, y = _data(name)
    model = db.DistributionalRegressor(family=name, n_estimators=15, learning_rate=0.2,
                                       random_state=0).fit(X, y)
    dist = model.predict_dist(X)
    q = dist.quantile([0.1, 0.5, 0.9])
    assert q.shape == (len(y), 3) and np.all(np.diff(q, axis=1) >= 0)
    fam = model.family_
    if fam.discrete or fam.point_mass is not None:  # the smallest y with F(y) >= 1/2
        assert np.all(dist.cdf(q[:, 1]) >= 0.5 - 1e-12)
    else:
        np.testing.assert_allclose(dist.cdf(q[:, 1]), 0.5, atol=1e-6)
    crps = dist.crps(y)
    assert crps.shape == (len(y),) and np.all(np.isfinite(crps)) and np.all(crps >= 0)
    assert np.all(np.isfinite(dist.log_prob(y)))
    path = tmp_path / "model.json"
    model.save(path)
    back = db.load(path)
    pd.testing.assert_frame_equal(back.predict_params(X), model.predict_params(X),
                                  check_exact=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", SECOND_WAVE)
def test_boosted_fit_beats_the_marginal_fit(name):
    """As tests/test_estimators.py does for the first families: 3000 rows whose first
    parameter moves with x; held-out NLL below the marginal (start-value) model's."""
    X, y = _data(name, n=3000, seed=1, strength=1.5)
    X_te, y_te = _data(name, n=3000, seed=2, strength=1.5)
    model = db.DistributionalRegressor(family=name, n_estimators=150, learning_rate=0.1,
                                       num_leaves=7, random_state=0).fit(X, y)
    boosted = -model.score(X_te, y_te)
    marginal = db.Predictive.from_params(model.family_, **{
        k: np.full(len(y_te), v) for k, v in model.init_params_.items()})
    assert boosted < float(np.mean(marginal.nll(y_te))) - 0.01
