"""distboost.predictive.numerical_crps: inputs as users hold them."""

from __future__ import annotations

import warnings

import numpy as np
import torch

import distboost as db


def test_a_read_only_target_is_scored_without_a_warning():
    """pandas 3 hands out read-only arrays (``Series.to_numpy()``); torch warns on them."""
    y = np.array([0.5, 1.0])
    y.setflags(write=False)
    d = db.Predictive.from_params("gamma", concentration=[2.0, 3.0], rate=[1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = d.crps(y, method="numerical")
    np.testing.assert_allclose(got, d.crps(y.copy(), method="closed"), rtol=1e-7)


def _shrunk(tables, loc, scale):
    """A Predictive of Calibrated(normal, aggregation="shrunk") with K folds of the given
    (K, n) locations and scales."""
    fam = db.families.Calibrated("normal", tables, aggregation="shrunk")
    params = {}
    for k in range(len(loc)):
        params[f"loc_{k}"], params[f"scale_{k}"] = np.asarray(loc[k]), np.asarray(scale[k])
    return db.Predictive(fam, params)


def test_a_law_of_cheap_quantiles_is_integrated_over_levels_as_exactly_as_over_values():
    """Identical folds and uniform PIT tables make the shrunk law the Normal itself (c = 1,
    no kink in its quantile function): the CRPS over levels is the Normal's closed form; with
    kinked maps it is the integral over values, within their quadratures' errors (1e-3)."""
    from distboost.predictive.numerical_crps import _crps_continuous

    y = np.array([-3.0, 0.2, 1.0, 2.5, -50.0, 1e3])
    uniform = [[np.arange(1, 40) / 40] * 3]
    d = _shrunk(uniform, [[0.1] * 6] * 3, [[1.3] * 6] * 3)
    assert d.family.cheap_quantiles
    normal = db.Predictive.from_params("normal", loc=[0.1] * 6, scale=[1.3] * 6)
    np.testing.assert_allclose(d.crps(y), normal.crps(y, method="closed"), rtol=2e-6)
    rng = np.random.default_rng(2)
    kinked = [[np.sort(rng.beta(1.5, 1.2, size=25 + k)) for k in range(3)]]
    d = _shrunk(kinked, rng.normal(0, 0.3, size=(3, 6)), np.exp(rng.normal(0, 0.2, (3, 6))))
    p = {k: torch.as_tensor(np.array(v)) for k, v in d.params.items()}
    with torch.no_grad():
        over_values = _crps_continuous(d.family, p, torch.as_tensor(y), torch.as_tensor(y))
    np.testing.assert_allclose(d.crps(y), over_values.numpy(), rtol=1e-3)
    assert np.all(np.isfinite(d.crps(y)))
