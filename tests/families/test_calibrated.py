"""The calibrated family (conformal predictive systems): G composed with the model's cdf."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch
from scipy.integrate import quad

import distboost as db
from distboost.families import Calibrated


def _t(x):
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


def test_uniform_scores_give_back_the_model_and_quantiles_invert_the_cdf():
    # PIT values j / (c + 1) are those of a calibrated model: G is the identity.
    fam = Calibrated("normal", [[np.arange(1, 20) / 20]])
    params = {"loc": _t([0.0, 2.0]), "scale": _t([1.0, 0.5])}
    y = _t([[-1.0, 2.3], [0.4, 1.0]])
    np.testing.assert_allclose(fam.cdf(params, y).numpy(),
                               st.norm([0, 2], [1, 0.5]).cdf(y.numpy()), rtol=1e-12)
    q = _t([[0.05, 0.5], [0.9, 0.99]])
    np.testing.assert_allclose(fam.cdf(params, fam.icdf(params, q)).numpy(), q.numpy(),
                               rtol=1e-10)


def test_the_density_integrates_to_one_and_is_the_derivative_of_the_cdf():
    rng = np.random.default_rng(0)
    table = rng.beta(2, 5, size=40)
    fam = Calibrated("gamma", [[table]])
    p = {"concentration": _t([2.5]), "rate": _t([1.5])}
    kinks = np.sort(st.gamma(2.5, scale=1 / 1.5).ppf(table))  # where G changes slope
    edges = np.r_[0.0, kinks, kinks[-1] + 50.0]
    total = sum(quad(lambda v: float(torch.exp(fam.log_prob(p, _t([v])))), lo, hi)[0]
                for lo, hi in zip(edges[:-1], edges[1:], strict=True))
    assert abs(total - 1.0) < 1e-8
    y, h = 1.3, 1e-6
    slope = (fam.cdf(p, _t([y + h])) - fam.cdf(p, _t([y - h]))) / (2 * h)
    np.testing.assert_allclose(float(torch.exp(fam.log_prob(p, _t([y])))), float(slope),
                               rtol=1e-5)


def test_folds_are_weighted_by_their_calibration_rows_and_groups_pick_their_tables():
    a, b = np.array([0.2, 0.4, 0.6]), np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.95])
    fam = Calibrated("normal", [[a, b]])
    p = {"loc_0": _t([0.0]), "scale_0": _t([1.0]), "loc_1": _t([1.0]), "scale_1": _t([2.0])}
    y = _t([0.7])
    g = [Calibrated("normal", [[t]]) for t in (a, b)]
    want = (3 * g[0].cdf({"loc": _t([0.0]), "scale": _t([1.0])}, y)
            + 6 * g[1].cdf({"loc": _t([1.0]), "scale": _t([2.0])}, y)) / 9
    np.testing.assert_allclose(fam.cdf(p, y).numpy(), want.numpy(), rtol=1e-12)
    grouped = Calibrated("normal", [[a], [b]])
    pg = {"loc": _t([0.0, 0.0]), "scale": _t([1.0, 1.0]), "group": _t([0.0, 1.0])}
    both = grouped.cdf(pg, _t([0.3, 0.3])).numpy()
    np.testing.assert_allclose(both, [g[0].cdf({"loc": _t([0.0]), "scale": _t([1.0])},
                                                _t([0.3])).item(),
                                      g[1].cdf({"loc": _t([0.0]), "scale": _t([1.0])},
                                               _t([0.3])).item()], rtol=1e-12)


def test_a_discrete_family_stays_on_the_integers_and_its_masses_sum_to_one():
    fam = Calibrated("poisson", [[np.linspace(0.05, 0.9, 25)]])
    p = {"rate": _t([3.0])}
    k = _t(np.arange(0, 60)[:, None])
    mass = torch.exp(fam.log_prob({"rate": _t([3.0])}, k)).numpy()
    assert abs(mass.sum() - 1.0) < 1e-9
    q = fam.icdf(p, _t([[0.1], [0.5], [0.95]])).numpy()
    assert np.all(q == np.round(q))
    dist = db.Predictive(fam, {"rate": [3.0]})
    np.testing.assert_allclose(dist.mean, (np.arange(60) * mass[:, 0]).sum(), rtol=1e-9)


def test_state_round_trip_and_clear_errors():
    fam = Calibrated("lognormal", [[np.array([0.1, 0.5, 0.8])]])
    back = db.families.from_state(fam.get_state())
    p = {"loc": _t([0.3]), "scale": _t([0.7])}
    assert torch.equal(back.cdf(p, _t([1.2])), fam.cdf(p, _t([1.2])))
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        Calibrated("normal", [[np.array([0.5, 1.5])]])
    with pytest.raises(ValueError, match="multivariate"):
        Calibrated("multivariate_normal", [[np.array([0.5])]])


def test_pit_values_of_exactly_0_and_1_put_no_mass_at_an_infinite_end():
    # Heavy-tailed rows under a Normal give PIT values that round to 0 or 1: the calibrated
    # law must stay a proper law with finite moments (it had a mean of -inf before).
    from distboost.families.calibrated import TAIL

    for folds in (1, 2):
        fam = Calibrated("normal", [[np.r_[0.0, np.linspace(0.1, 0.9, 17), 1.0]] * folds])
        params = {"loc": _t([0.0]), "scale": _t([1.0])}
        params = params if folds == 1 else {f"{k}_{j}": v for k, v in params.items()
                                            for j in range(folds)}
        mean, var = fam.mean(params), fam.variance(params)
        assert np.isfinite(mean.numpy()).all() and np.isfinite(var.numpy()).all()
        # The end rows' mass (1/20 each side, bins of width TAIL) lies beyond the TAIL quantile.
        np.testing.assert_allclose(float(fam.cdf(params, _t([st.norm.ppf(TAIL)]))), 1 / 20,
                                   rtol=1e-6)
        assert abs(float(mean)) < 1e-6  # symmetric table, symmetric law


def _folds(rng, n, K):
    """K calibrated Normal fold laws at n rows: tables and parameters."""
    tables = [[np.sort(rng.beta(1.4, 1.2, size=30 + 3 * k)) for k in range(K)]]
    params = {}
    for k in range(K):
        params[f"loc_{k}"] = _t(rng.normal(0.0, 0.3, size=n))
        params[f"scale_{k}"] = _t(np.exp(rng.normal(0.0, 0.2, size=n)))
    return tables, params


def _fold_quantile_by_hand(table, loc, scale, p):
    """``F^{-1}(G^{-1}(p))`` with scipy: G's knots 0, the table, 1 at j / (c + 1)."""
    knots = np.r_[0.0, np.clip(table, 1e-9, 1 - 1e-9), 1.0]
    u = np.interp(p, np.arange(knots.size) / (knots.size - 1), knots)
    return st.norm(loc, scale).ppf(u)


def test_shrunk_quantiles_are_the_narrowed_average_of_the_folds_quantiles():
    from distboost.families.calibrated import _SPREAD_LEVELS

    rng = np.random.default_rng(3)
    tables, params = _folds(rng, 4, 5)
    fam = Calibrated("normal", tables, aggregation="shrunk")
    p = np.array([0.02, 0.3, 0.5, 0.77, 0.99])
    hand = np.stack([[_fold_quantile_by_hand(tables[0][k], params[f"loc_{k}"].numpy(),
                                             params[f"scale_{k}"].numpy(), a)
                      for a in (*p, *_SPREAD_LEVELS)] for k in range(5)])  # (K, levels, n)
    half = np.stack([_fold_quantile_by_hand(tables[0][k], params[f"loc_{k}"].numpy(),
                                            params[f"scale_{k}"].numpy(), 0.5)
                     for k in range(5)])
    spread = (hand[:, -1] - hand[:, -2]) / 2
    c2 = ((spread ** 2).mean(0) - half.var(0)) / spread.mean(0) ** 2
    m = half.mean(0)
    want = m + np.sqrt(np.clip(c2, 0.25, 4.0)) * (hand[:, :len(p)].mean(0) - m)
    got = fam.icdf(params, _t(np.repeat(p[:, None], 4, axis=1))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert np.all(np.sqrt(np.clip(c2, 0.25, 4.0)) < 1.0)  # the folds disagree: narrower
    # The median is the folds' mean median, whatever c.
    np.testing.assert_allclose(got[2], m, rtol=1e-12)


def test_shrunk_law_cdf_inverts_its_quantiles_and_its_density_integrates_to_one():
    rng = np.random.default_rng(4)
    tables, params = _folds(rng, 1, 4)
    fam = Calibrated("normal", tables, aggregation="shrunk")
    q = _t([[0.01], [0.4], [0.5], [0.93]])
    np.testing.assert_allclose(fam.cdf(params, fam.icdf(params, q)).numpy(), q.numpy(),
                               atol=1e-12)
    # Between two quantiles the density's integral is their levels' difference (the
    # density is smooth between the kinks of the piecewise-linear maps: many small pieces).
    lo, hi = (float(fam.icdf(params, _t([a]))) for a in (0.05, 0.95))
    grid = np.linspace(lo, hi, 40001)
    dens = torch.exp(fam.log_prob(params, _t(grid[:, None]))).numpy()[:, 0]
    assert abs(np.trapezoid(dens, grid) - 0.9) < 1e-4
    y, h = 0.37, 1e-6
    slope = (fam.cdf(params, _t([y + h])) - fam.cdf(params, _t([y - h]))) / (2 * h)
    np.testing.assert_allclose(float(torch.exp(fam.log_prob(params, _t([y])))), float(slope),
                               rtol=1e-4)
    assert np.isfinite(fam.mean(params).numpy()).all()


def test_shrunk_state_round_trip_and_clear_errors():
    rng = np.random.default_rng(5)
    tables, params = _folds(rng, 3, 2)
    fam = Calibrated("normal", tables, aggregation="shrunk")
    back = db.families.from_state(fam.get_state())
    assert back.aggregation == "shrunk"
    assert torch.equal(back.icdf(params, _t([0.2])), fam.icdf(params, _t([0.2])))
    with pytest.raises(ValueError, match="leaves the integers of family 'poisson'"):
        Calibrated("poisson", tables, aggregation="shrunk")
    with pytest.raises(ValueError, match=r"aggregation must be one of \['pool', 'shrunk'\]"):
        Calibrated("normal", tables, aggregation="mean")


def test_the_pools_mean_and_variance_are_its_cdfs_by_quadrature_in_every_group():
    """The pool's moments come from its folds' quantile functions (no bisection of the
    pool's); checked against integrals of its cdf, with the group's fold weights."""
    a, b = np.array([0.1, 0.35, 0.6, 0.7]), np.array([0.2, 0.3, 0.5, 0.8, 0.9, 0.95])
    fam = Calibrated("normal", [[a, b], [b, a]])
    p = {"loc_0": _t([0.0, 0.0]), "scale_0": _t([1.0, 1.0]), "loc_1": _t([1.5, 1.5]),
         "scale_1": _t([2.0, 2.0]), "group": _t([0.0, 1.0])}
    mean, var = fam.mean(p).numpy(), fam.variance(p).numpy()
    assert abs(mean[0] - mean[1]) > 0.1  # the groups weight the folds 4:6 and 6:4
    for i in range(2):
        row = {k: v[i:i + 1] for k, v in p.items()}

        def cdf(v, row=row):
            return float(fam.cdf(row, _t([v])))

        m = (quad(lambda v: 1 - cdf(v), 0, 40, limit=800)[0]
             - quad(cdf, -40, 0, limit=800)[0])  # the tails beyond 40 hold < 1e-60
        second = (quad(lambda v: 2 * v * (1 - cdf(v)), 0, 40, limit=800)[0]
                  - quad(lambda v: 2 * v * cdf(v), -40, 0, limit=800)[0])
        np.testing.assert_allclose(mean[i], m, rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(var[i], second - m * m, rtol=2e-3)


def test_pool_draws_pick_each_fold_by_its_groups_weight_and_follow_the_pool():
    a, b = np.linspace(0.1, 0.9, 3), np.linspace(0.1, 0.9, 6)
    fam = Calibrated("normal", [[a, b], [b, a]])  # fold 1 weighs 6/9 in group 0, 3/9 in 1
    p = {"loc_0": _t([0.0, 0.0]), "scale_0": _t([1.0, 1.0]), "loc_1": _t([10.0, 10.0]),
         "scale_1": _t([1.0, 1.0]), "group": _t([0.0, 1.0])}
    draws = fam.sample(p, 9000, seed=4).numpy()
    share = (draws > 5.0).mean(axis=0)
    np.testing.assert_allclose(share, [6 / 9, 3 / 9], atol=0.015)  # 3 standard errors
    for j in range(2):  # the draws' PIT under the pool is uniform
        pit = fam.cdf({k: v[j:j + 1] for k, v in p.items()}, _t(draws[:, j:j + 1])).numpy()
        assert st.kstest(pit[:, 0], "uniform").pvalue > 0.01
    np.testing.assert_array_equal(draws, fam.sample(p, 9000, seed=4).numpy())
