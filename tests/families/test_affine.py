"""``Affine``: the law of ``shift + factor * Z`` against scipy.stats's ``loc`` / ``scale`` of the
same law, quadrature of the CRPS integral, simulation and the closed forms of the metrics."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as st
import torch
from scipy.integrate import quad

import distboost as db
from distboost.families import Affine, Calibrated
from distboost.families.continuous import Normal
from distboost.families.support import REAL

RNG = np.random.default_rng(20240611)
TABLE = np.sort(RNG.beta(2.0, 3.0, size=30))  # PIT values of a miscalibrated model
N = 5


class CalibratedNormalRef:
    """scipy's Normal of ``shift + factor * N(loc, scale)`` composed with the piecewise-linear
    map through ``(0, 0)``, ``(a_(j), j / (c + 1))``, ``(1, 1)`` (numpy's interp)."""

    def __init__(self, loc, scale, table):
        self.law = st.norm(loc, scale)
        self.loc, self.scale = np.asarray(loc, float), np.asarray(scale, float)
        self.knots = np.r_[0.0, table, 1.0]
        self.levels = np.arange(table.size + 2) / (table.size + 1)

    def cdf(self, y):
        return np.interp(self.law.cdf(y), self.knots, self.levels)

    def logpdf(self, y):
        u = self.law.cdf(y)
        j = np.clip(np.searchsorted(self.knots, u, side="right") - 1, 0, self.knots.size - 2)
        slope = np.diff(self.levels)[j] / np.diff(self.knots)[j]
        return np.log(slope) + self.law.logpdf(y)

    def ppf(self, q):
        return self.law.ppf(np.interp(q, self.levels, self.knots))

    def _moment(self, k):
        out = []
        for i in range(self.loc.size):
            law = st.norm(self.loc[i], self.scale[i])
            edges = law.ppf(self.knots)
            total = 0.0
            for j in range(self.knots.size - 1):
                slope = (self.levels[j + 1] - self.levels[j]) / (self.knots[j + 1] - self.knots[j])
                total += slope * quad(lambda v, law=law: v**k * law.pdf(v),
                                      edges[j], edges[j + 1], epsabs=1e-13, epsrel=1e-12)[0]
            out.append(total)
        return np.array(out)

    def kinks(self, i):
        """Where row ``i``'s cdf changes slope (the knots mapped back)."""
        return st.norm(self.loc[i], self.scale[i]).ppf(self.knots[1:-1])

    def mean(self):
        return self._moment(1)

    def var(self):
        return self._moment(2) - self.mean() ** 2


def _case(name):
    """``(family, inner params, shift, factor, reference law of Y)`` at random parameters."""
    pos = lambda lo, hi: RNG.uniform(lo, hi, N)  # noqa: E731
    factor = pos(0.3, 4.0)
    shift = RNG.normal(0.0, 10.0, N)
    if name == "normal":
        p = {"loc": RNG.normal(size=N), "scale": pos(0.5, 2.0)}
        ref = st.norm(shift + factor * p["loc"], factor * p["scale"])
        return Affine("normal"), p, shift, factor, ref
    if name == "studentt":
        p = {"df": pos(2.5, 9.0), "loc": RNG.normal(size=N), "scale": pos(0.5, 2.0)}
        ref = st.t(p["df"], loc=shift + factor * p["loc"], scale=factor * p["scale"])
        return Affine("studentt"), p, shift, factor, ref
    if name == "gamma":  # a positive support: shift = 0
        p = {"concentration": pos(0.8, 5.0), "rate": pos(0.5, 3.0)}
        return Affine("gamma"), p, 0.0 * shift, factor, st.gamma(p["concentration"], loc=0.0,
                                                               scale=factor / p["rate"])
    if name == "lognormal":
        p = {"loc": RNG.normal(0.0, 0.5, N), "scale": pos(0.2, 0.8)}
        return Affine("lognormal"), p, 0.0 * shift, factor, st.lognorm(
            p["scale"], loc=0.0, scale=factor * np.exp(p["loc"]))
    if name == "beta":  # finite ends not at 0: the real line, any shift
        p = {"concentration1": pos(1.5, 4.0), "concentration0": pos(1.5, 4.0)}
        return Affine("beta"), p, shift, factor, st.beta(p["concentration1"],
                                                         p["concentration0"], loc=shift,
                                                         scale=factor)
    p = {"loc": RNG.normal(size=N), "scale": pos(0.5, 2.0)}
    ref = CalibratedNormalRef(shift + factor * p["loc"], factor * p["scale"], TABLE)
    return Affine(Calibrated("normal", [[TABLE]])), p, shift, factor, ref


NAMES = ["normal", "studentt", "gamma", "lognormal", "beta", "calibrated_normal"]


def _dist(fam, p, shift, factor):
    return db.Predictive.from_params(fam, **p, shift=shift, factor=factor)


@pytest.mark.parametrize("name", NAMES)
def test_distribution_functions_match_scipy_loc_and_scale(name):
    fam, p, shift, factor, ref = _case(name)
    d = _dist(fam, p, shift, factor)
    levels = np.array([0.01, 0.1, 0.37, 0.5, 0.8, 0.99])
    y = np.stack([ref.ppf(q) for q in levels], axis=1)  # (n, 6) inside every row's support
    np.testing.assert_allclose(d.quantile(levels), y, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.cdf(y), levels[None, :].repeat(N, 0), rtol=1e-8)
    np.testing.assert_allclose(d.log_prob(y), ref.logpdf(y.T).T, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.nll(y[:, 2]), -ref.logpdf(y[:, 2]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.pit(y[:, 4]), ref.cdf(y[:, 4]), rtol=1e-8)
    np.testing.assert_allclose(d.interval(0.9), np.stack([ref.ppf(0.05), ref.ppf(0.95)], 1),
                               rtol=1e-8)
    tol = 1e-4 if name == "calibrated_normal" else 1e-10  # the inner Calibrated's quadrature
    np.testing.assert_allclose(d.mean, ref.mean(), rtol=tol, atol=tol)
    np.testing.assert_allclose(d.variance, ref.var(), rtol=10 * tol)
    frame = d.to_frame([0.1, 0.5])
    assert list(frame.columns) == ["mean", "sd", *p, "shift", "factor", "q0.1", "q0.5"]
    np.testing.assert_allclose(frame["q0.5"], ref.ppf(0.5), rtol=1e-8)
    np.testing.assert_allclose(frame["factor"], factor)


def test_values_outside_a_rows_own_support_are_answered_by_the_wrapper():
    fam, p, shift, factor, ref = _case("beta")
    assert fam.support == REAL  # (0, 1) moves with every row: the real line holds them all
    d = _dist(fam, p, shift, factor)
    y = np.stack([shift - 0.5 * factor, shift, shift + (1 + 1e-9) * factor, shift + 1.5 * factor],
                 axis=1)
    np.testing.assert_array_equal(d.cdf(y), np.array([[0.0, 0.0, 1.0, 1.0]] * N))
    np.testing.assert_array_equal(d.log_prob(y), np.full((N, 4), -np.inf))
    np.testing.assert_allclose(d.sf(y[:, 0]), 1.0)
    np.testing.assert_allclose(d.cdf(y), ref.cdf(y.T).T, atol=1e-15)


def _crps_quad(ref, y, i):
    """``int (F(x) - 1{x >= y})^2 dx`` for row ``i`` of a reference law, by scipy's quad on
    panels split at ``y`` and at the cdf's kinks (if any), from the 1e-13 to the 1 - 1e-13
    quantile."""
    f = lambda x: float(np.atleast_1d(ref.cdf(np.full(N, x)))[i])  # noqa: E731
    kinks = ref.kinks(i) if hasattr(ref, "kinks") else []
    points = np.unique(np.r_[ref.ppf(1e-13)[i], ref.ppf(1.0 - 1e-13)[i], y, kinks])
    total = 0.0
    for a, b in zip(points[:-1], points[1:], strict=True):
        g = (lambda x: f(x) ** 2) if b <= y else (lambda x: (1.0 - f(x)) ** 2)
        total += quad(g, a, b, limit=200, epsabs=1e-14, epsrel=1e-12)[0]
    return total


@pytest.mark.parametrize("name", NAMES)
def test_crps_closed_form_numerical_and_quadrature_agree(name):
    fam, p, shift, factor, ref = _case(name)
    d = _dist(fam, p, shift, factor)
    y = ref.ppf(RNG.uniform(0.02, 0.98, N))
    assert fam.closed_form_crps == fam.inner.closed_form_crps
    numerical = d.crps(y, method="numerical")
    np.testing.assert_allclose(d.crps(y), numerical, rtol=1e-6)
    expected = [_crps_quad(ref, y[i], i) for i in range(N)]
    # The numerical CRPS of a Calibrated law does not split its panels at the 30 kinks of its
    # cdf (Calibrated has no cdf_kinks): about 1e-3 from the exact value, with or without the
    # affine map; the map itself is exact (below).
    np.testing.assert_allclose(numerical, expected,
                               rtol=5e-3 if name == "calibrated_normal" else 2e-5)
    inner = db.Predictive.from_params(fam.inner, **p)
    np.testing.assert_allclose(numerical, factor * inner.crps((y - shift) / factor,
                                                              method="numerical"), rtol=1e-9)
    if fam.closed_form_crps:  # factor * CRPS_Z((y - shift) / factor), the inner closed form
        np.testing.assert_allclose(d.crps(y, method="closed"),
                                   factor * inner.crps((y - shift) / factor), rtol=1e-12)
    else:
        with pytest.raises(ValueError, match="no closed-form CRPS"):
            d.crps(y, method="closed")


def test_normal_crps_is_the_closed_form_of_the_metrics():
    fam, p, shift, factor, _ = _case("normal")
    y = RNG.normal(0.0, 10.0, N)
    np.testing.assert_allclose(
        _dist(fam, p, shift, factor).crps(y),
        db.metrics.crps_normal(y, shift + factor * p["loc"], factor * p["scale"]), rtol=1e-12)


@pytest.mark.parametrize("name", ["normal", "gamma", "calibrated_normal"])
def test_samples_match_the_law_and_are_the_inner_draws_rescaled(name):
    fam, p, shift, factor, ref = _case(name)
    d = _dist(fam, p, shift, factor)
    m = 20_000
    s = d.sample(m, random_state=7)
    assert s.shape == (m, N)
    np.testing.assert_array_equal(s, d.sample(m, random_state=7))
    assert not np.array_equal(s, d.sample(m, random_state=8))
    inner = db.Predictive.from_params(fam.inner, **p).sample(m, random_state=7)
    np.testing.assert_allclose(s, shift + factor * inner, rtol=1e-14, atol=1e-12)
    assert np.all(np.abs(s.mean(axis=0) - ref.mean()) < 5 * np.sqrt(ref.var() / m))
    for q in (0.1, 0.5, 0.9):  # the share of draws below each true quantile
        share = (s <= ref.ppf(q)[None, :]).mean(axis=0)
        assert np.all(np.abs(share - q) < 5 * np.sqrt(q * (1 - q) / m))


def test_zero_adjusted_family_keeps_its_atom_at_zero():
    fam = Affine("zero_adjusted_gamma")
    assert fam.point_mass == 0.0 and fam.support == fam.inner.support
    a, b, g = np.array([2.0, 0.7, 4.0]), np.array([1.0, 2.0, 0.5]), np.array([0.3, 0.1, 0.6])
    factor = np.array([2.0, 5.0, 0.4])
    d = db.Predictive.from_params(fam, concentration=a, rate=b, gate=g, shift=0.0,
                                  factor=factor)
    law = st.gamma(a, scale=factor / b)
    y = np.array([0.0, 1.3, 2.0])
    np.testing.assert_allclose(d.cdf(y), np.where(y == 0, g, g + (1 - g) * law.cdf(y)),
                               rtol=1e-12)
    # a probability at the atom (no Jacobian), a density beside it
    np.testing.assert_allclose(d.log_prob(y), np.where(y == 0, np.log(g),
                                                       np.log1p(-g) + law.logpdf(y)), rtol=1e-12)
    np.testing.assert_allclose(d.quantile(0.2), [0.0, law.ppf((0.2 - 0.1) / 0.9)[1], 0.0],
                               rtol=1e-10)
    np.testing.assert_allclose(d.mean, (1 - g) * law.mean(), rtol=1e-12)
    np.testing.assert_allclose(d.crps(y), d.crps(y, method="numerical"), rtol=1e-6)
    for i in range(3):  # F = 0 below 0, a jump of g at 0
        def f(x, i=i):
            return g[i] + (1 - g[i]) * law.cdf(np.full(3, x))[i]

        want = (quad(lambda x, f=f: f(x) ** 2, 0.0, y[i])[0]
                + quad(lambda x, f=f: (1 - f(x)) ** 2, y[i], np.inf, limit=200)[0])
        np.testing.assert_allclose(d.crps(y)[i], want, rtol=1e-7)
    with pytest.raises(ValueError, match="only with shift = 0.*1 of 3 rows"):
        db.Predictive.from_params(fam, concentration=a, rate=b, gate=g, shift=[0, 1.0, 0],
                                  factor=factor).cdf(1.0)


def test_state_round_trips_through_json_and_links_split_between_wrapper_and_inner():
    fams = [Affine("normal"), Affine("gamma", links={"factor": "softplus", "rate": "softplus"}),
            Affine(Calibrated("normal", [[TABLE]])), Affine("zero_adjusted_lognormal")]
    p = {"loc": np.array([0.2, -0.4]), "scale": np.array([0.7, 1.3]),
         "concentration": np.array([2.0, 3.0]), "rate": np.array([1.0, 0.5]),
         "gate": np.array([0.2, 0.4]), "shift": np.zeros(2), "factor": np.array([2.0, 0.5])}
    y = np.array([0.3, 1.7])
    for fam in fams:
        state = json.loads(json.dumps(fam.get_state(), allow_nan=False))
        back = db.families.from_state(state)
        assert type(back) is Affine and back.get_state() == fam.get_state()
        assert back.name == fam.name and back.param_names == fam.param_names
        args = {k: p[k] for k in fam.param_names}
        np.testing.assert_array_equal(db.Predictive(back, args).log_prob(y),
                                      db.Predictive(fam, args).log_prob(y))
    gamma = fams[1]
    assert gamma.name == "affine_gamma"
    assert gamma.param_names == ("concentration", "rate", "shift", "factor")
    assert {p: lk.name for p, lk in gamma.links.items()} == {
        "concentration": "exp", "rate": "softplus", "shift": "identity", "factor": "softplus"}
    assert gamma.get_state()["links"] == {"shift": "identity", "factor": "softplus"}
    again = db.families.get(gamma, links={"factor": "exp", "concentration": "softplus"})
    assert again.links["factor"].name == "exp" and again.links["concentration"].name == "softplus"
    assert gamma.links["factor"].name == "softplus"  # the original is unchanged


def test_to_torch_is_the_transformed_distribution():
    fam, p, shift, factor, ref = _case("normal")
    law = _dist(fam, p, shift, factor).to_torch()
    assert isinstance(law, torch.distributions.TransformedDistribution)
    y = ref.ppf(0.3)
    np.testing.assert_allclose(law.cdf(torch.as_tensor(y)).numpy(), 0.3, rtol=1e-10)


class _AtomAtOne(Normal):
    name = "normal_with_an_atom"
    point_mass = 1.0


@pytest.mark.parametrize("family, match", [
    ("poisson", "'poisson' is discrete: counts are not rescaled"),
    ("zero_inflated_poisson", "discrete"),
    ("multivariate_normal", "'multivariate_normal' is multivariate"),
    (_AtomAtOne(), "point mass at 1"),
])
def test_refuses_families_it_cannot_map(family, match):
    with pytest.raises(ValueError, match=match):
        Affine(family)


def test_clear_errors_for_links_fitting_and_nested_wrappers():
    with pytest.raises(ValueError, match="link of 'factor' must map onto positive values"):
        Affine("normal", links={"factor": "identity"})
    with pytest.raises(ValueError, match="already has parameters \\['factor', 'shift'\\]"):
        Affine(Affine("normal"))
    with pytest.raises(ValueError, match="prediction only"):
        Affine("normal").init(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="missing \\['factor'\\]"):
        db.Predictive.from_params(Affine("normal"), loc=0.0, scale=1.0, shift=0.0)
    with pytest.raises(ValueError, match="'factor'.*outside its domain"):
        db.Predictive.from_params(Affine("normal"), loc=0.0, scale=1.0, shift=0.0, factor=0.0)
