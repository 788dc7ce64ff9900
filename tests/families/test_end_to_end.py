"""Every family of the case table through the estimator: fit on small data, predict_dist,
quantiles, CRPS, save and load (bit-identical parameters), and (slow tier) a boosted fit that
beats the marginal one.  Targets are drawn from the family's own law (``family_cases.py``)
with a covariate shifting one parameter; the families a classifier fits (categorical) are in
tests/estimators/test_classifier.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from family_cases import REGRESSION_FAMILIES, case, marked
from family_cases import family as _family

import distboost as db


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


# The families whose likelihood is costly (``slow`` in the case table) in the slow tier.
@pytest.mark.parametrize("name", marked(REGRESSION_FAMILIES))
def test_fit_predict_quantile_crps_save_load(name, tmp_path):
    X, y = _data(name)
    # A few short rounds: the path through the estimator, not the fit's quality (a long
    # unstopped run can drive studentt's df below 1, where the CRPS is infinite).
    model = db.DistributionalRegressor(family=name, n_estimators=8, learning_rate=0.1,
                                       early_stopping=False, random_state=0).fit(X, y)
    dist = model.predict_dist(X)
    q = dist.quantile([0.1, 0.5, 0.9])
    assert q.shape == (len(y), 3) and np.all(np.diff(q, axis=1) >= 0)
    fam = model.family_
    if fam.discrete or fam.point_mass is not None:  # the smallest y with F(y) >= 1/2
        assert np.all(dist.cdf(q[:, 1]) >= 0.5 - 1e-9)  # a series cdf (tweedie): 1e-11
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
@pytest.mark.parametrize("name", REGRESSION_FAMILIES)
def test_boosted_fit_beats_the_marginal_fit(name):
    """3000 rows whose first parameter moves with x: held-out NLL below the marginal
    (start-value) model's."""
    X, y = _data(name, n=3000, seed=1, strength=1.5)
    X_te, y_te = _data(name, n=3000, seed=2, strength=1.5)
    model = db.DistributionalRegressor(family=name, n_estimators=150, learning_rate=0.1,
                                       num_leaves=7, random_state=0).fit(X, y)
    boosted = -model.score(X_te, y_te)
    marginal = db.Predictive.from_params(model.family_, **{
        k: np.full(len(y_te), v) for k, v in model.init_params_.items()})
    assert boosted < float(np.mean(marginal.nll(y_te))) - 0.01


@pytest.mark.parametrize("name", REGRESSION_FAMILIES)
def test_predictive_edges_torch_object_and_sampling(name):
    """What tests/predictive/test_batch.py checks against scipy for the first families, against the
    family's own definitions: support ends, +-inf, the torch object, reproducible draws."""
    fam = _family(name)
    p = case(name).params[0]
    dist = db.Predictive.from_params(fam, **{k: np.full(3, v) for k, v in p.items()})
    ends = dist.quantile([0.0, 1.0])
    np.testing.assert_array_equal(ends, np.tile([fam.support.low, fam.support.high], (3, 1)))
    both = np.tile([-np.inf, np.inf], (3, 1))
    np.testing.assert_array_equal(dist.cdf(both), np.tile([0.0, 1.0], (3, 1)))
    np.testing.assert_array_equal(dist.log_prob(both), np.full((3, 2), -np.inf))
    if np.isfinite(fam.support.low):
        assert (dist.cdf(np.full(3, fam.support.low - 1.0)) == 0.0).all()
    t = dist.to_torch()
    assert isinstance(t, fam.torch_class) and t.batch_shape == (3,)
    state = torch.get_rng_state()
    a = dist.sample(50, random_state=1)
    np.testing.assert_array_equal(a, dist.sample(50, random_state=1))
    assert torch.equal(state, torch.get_rng_state())
    assert np.isfinite(dist.log_prob(a.T).T).all()  # every draw inside the support
    if name != "ordinal_logit":  # a class index, not the cutpoints, in torch's Categorical
        for k in fam.param_names:
            np.testing.assert_allclose(np.asarray(getattr(t, k)), dist.params[k], rtol=1e-12)
