"""Closed-form CRPS against independent references: scipy quadrature of the CRPS integral
with scipy.stats cdfs, the CRPS of a 20,000-member quantile ensemble, and the scipy forms the
torch ones replaced (``scipy_crps_reference.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from family_cases import case
from scipy.integrate import quad

import distboost as db
from distboost.metrics import CLOSED_FORMS


class _ZeroAdjusted:
    """``gate delta_0 + (1 - gate) law`` with the scipy methods the references use."""

    def __init__(self, gate, law):
        self.gate, self.law = gate, law

    def cdf(self, x):
        return np.where(np.asarray(x) < 0, 0.0, self.gate + (1 - self.gate) * self.law.cdf(x))

    def sf(self, x):
        return 1.0 - self.cdf(x)

    def ppf(self, q):
        q = np.asarray(q, dtype=np.float64)
        inner = np.clip((q - self.gate) / (1 - self.gate), 0.0, 1.0)
        return np.where(q <= self.gate, 0.0, self.law.ppf(inner))

    def support(self):
        return 0.0, np.inf

    def mean(self):
        return (1 - self.gate) * self.law.mean()

    def std(self):
        m = self.law.mean()
        return np.sqrt((1 - self.gate) * (self.law.var() + self.gate * m * m))


class _PpfFromZero:
    """A statsmodels zero-inflated law whose ``ppf`` (-1 at levels up to the gate, a
    statsmodels quirk) is floored at 0, the smallest count."""

    def __init__(self, law):
        self.law = law

    def __getattr__(self, name):
        return getattr(self.law, name)

    def ppf(self, q):
        return np.maximum(self.law.ppf(q), 0.0)


def _zip(rate, gate):
    from statsmodels.distributions.discrete import zipoisson

    return _PpfFromZero(zipoisson(rate, gate))


def _zinb(r, probs, gate):
    from statsmodels.distributions.discrete import zinegbin

    return _PpfFromZero(zinegbin(r * probs / (1 - probs), 1.0 / r, 2, gate))


# (family, params, scipy law) including extreme values.
GRID = [
    ("normal", {"loc": 0.0, "scale": 1.0}, st.norm(0, 1)),
    ("normal", {"loc": 1e4, "scale": 1e-3}, st.norm(1e4, 1e-3)),
    ("normal", {"loc": -5.0, "scale": 1e3}, st.norm(-5, 1e3)),
    ("lognormal", {"loc": 0.2, "scale": 0.4}, st.lognorm(s=0.4, scale=np.exp(0.2))),
    ("lognormal", {"loc": 3.0, "scale": 1.8}, st.lognorm(s=1.8, scale=np.exp(3.0))),
    ("gamma", {"concentration": 2.5, "rate": 1.5}, st.gamma(2.5, scale=1 / 1.5)),
    ("gamma", {"concentration": 0.3, "rate": 0.01}, st.gamma(0.3, scale=100.0)),
    ("gamma", {"concentration": 400.0, "rate": 20.0}, st.gamma(400.0, scale=0.05)),
    ("laplace", {"loc": 1.0, "scale": 2.0}, st.laplace(1, 2)),
    ("laplace", {"loc": -1e3, "scale": 1e-2}, st.laplace(-1e3, 1e-2)),
    ("logistic", {"loc": 1.0, "scale": 2.0}, st.logistic(1, 2)),
    ("logistic", {"loc": 50.0, "scale": 1e-3}, st.logistic(50, 1e-3)),
    ("studentt", {"df": 5.0, "loc": 0.5, "scale": 2.0}, st.t(5, 0.5, 2)),
    ("studentt", {"df": 1.5, "loc": 0.0, "scale": 1.0}, st.t(1.5, 0, 1)),
    ("studentt", {"df": 300.0, "loc": 0.0, "scale": 0.1}, st.t(300, 0, 0.1)),
    ("exponential", {"rate": 0.5}, st.expon(scale=2.0)),
    ("exponential", {"rate": 1e3}, st.expon(scale=1e-3)),
    ("gumbel", {"loc": 0.5, "scale": 1.3}, st.gumbel_r(0.5, 1.3)),
    ("gumbel", {"loc": -20.0, "scale": 0.05}, st.gumbel_r(-20, 0.05)),
    ("beta", {"concentration1": 2.0, "concentration0": 3.0}, st.beta(2, 3)),
    ("beta", {"concentration1": 0.3, "concentration0": 0.4}, st.beta(0.3, 0.4)),
    ("beta", {"concentration1": 200.0, "concentration0": 50.0}, st.beta(200, 50)),
    ("poisson", {"rate": 3.3}, st.poisson(3.3)),
    ("poisson", {"rate": 0.05}, st.poisson(0.05)),
    ("poisson", {"rate": 400.0}, st.poisson(400.0)),
    ("negative_binomial", {"total_count": 3.5, "probs": 0.7}, st.nbinom(3.5, 0.3)),
    ("negative_binomial", {"total_count": 0.4, "probs": 0.95}, st.nbinom(0.4, 0.05)),
    ("half_normal", {"scale": 1.5}, st.halfnorm(scale=1.5)),
    ("half_normal", {"scale": 1e-3}, st.halfnorm(scale=1e-3)),
    ("zero_inflated_poisson", {"rate": 3.3, "gate": 0.3}, _zip(3.3, 0.3)),
    ("zero_inflated_poisson", {"rate": 200.0, "gate": 0.9}, _zip(200.0, 0.9)),
    ("zero_inflated_negative_binomial", {"total_count": 3.5, "probs": 0.7, "gate": 0.2},
     _zinb(3.5, 0.7, 0.2)),
    ("zero_adjusted_gamma", {"concentration": 2.5, "rate": 1.5, "gate": 0.3},
     _ZeroAdjusted(0.3, st.gamma(2.5, scale=1 / 1.5))),
    ("zero_adjusted_gamma", {"concentration": 0.4, "rate": 0.02, "gate": 0.05},
     _ZeroAdjusted(0.05, st.gamma(0.4, scale=50.0))),
    ("zero_adjusted_lognormal", {"loc": 0.2, "scale": 0.4, "gate": 0.6},
     _ZeroAdjusted(0.6, st.lognorm(s=0.4, scale=np.exp(0.2)))),
]
# A closed-form family without hand-picked points above is checked at the two parameter
# sets of its row in the shared case table (tests/families/family_cases.py).
GRID += [(f, p, case(f).law(p)) for f in sorted(CLOSED_FORMS) if f not in {g[0] for g in GRID}
         for p in case(f).params]
IDS = [f"{f}-{i}" for i, (f, _, _) in enumerate(GRID)]
#: Grid points of the slow tier only (extreme scales, a point mass: 0.6-1.3 s of quadrature
#: each on one idle core); every family keeps a fast grid point.
SLOW_QUADRATURE = {"normal-1", "zero_adjusted_gamma-32", "zero_adjusted_lognormal-34"}
QUADRATURE_GRID = [pytest.param(*row, id=i, marks=pytest.mark.slow) if i in SLOW_QUADRATURE
                   else pytest.param(*row, id=i) for row, i in zip(GRID, IDS, strict=True)]


def _ys(law, discrete):
    """Observations in the body and far in both tails."""
    qs = law.ppf([1e-6, 0.05, 0.5, 0.9, 1 - 1e-6])
    if discrete:
        return np.unique(np.r_[qs, qs[-1] + 10])
    sd = law.std()
    return np.r_[qs, law.mean() + 40 * sd if np.isfinite(sd) else qs[-1] * 10]


def _crps_quad(law, ys, discrete):
    """CRPS of ``law`` at every observation of ``ys``: the exact sum over the counts of a
    discrete law, else adaptive quadrature of ``F^2`` left of y and ``(1 - F)^2`` right of it.

    The line is cut at the law's body (so that quad sees the mass wherever it lies) and at
    every y, and each piece is integrated once: the CRPS at y adds the ``F^2`` pieces left of
    it and the ``(1 - F)^2`` pieces right of it (integrating afresh for every y took 2-10 x
    longer: quad calls the scipy cdf one point at a time, ~0.1 ms a call)."""
    ys = np.asarray(ys, dtype=np.float64)
    if discrete:
        k = np.arange(0, law.ppf(1 - 1e-14) + max(50, ys.max() + 2))
        return np.array([np.sum((law.cdf(k) - (k >= y)) ** 2) for y in ys])
    lo, hi = law.support()
    cuts = np.clip(np.r_[law.ppf([1e-12, 1e-3, 0.1, 0.5, 0.9, 0.999, 1 - 1e-12]), ys], lo, hi)
    cuts = np.unique(cuts)
    edges = np.r_[lo, cuts[(cuts > lo) & (cuts < hi)], hi]
    a, b = edges[:-1], edges[1:]

    def integral(f, lo, hi):
        return quad(f, lo, hi, limit=500, epsabs=0, epsrel=1e-11)[0]

    left = np.array([integral(lambda x: law.cdf(x) ** 2, *piece) if piece[1] <= ys.max()
                     else 0.0 for piece in zip(a, b, strict=True)])
    right = np.array([integral(lambda x: law.sf(x) ** 2, *piece) if piece[0] >= ys.min()
                      else 0.0 for piece in zip(a, b, strict=True)])
    return np.array([left[b <= y].sum() + right[a >= y].sum() for y in ys])


def _spread(law):
    """The law's standard deviation, or its interquartile range where that is infinite
    (Student's t at df <= 2): the scale of the absolute tolerances (an infinite one would
    pass anything)."""
    sd = law.std()
    return sd if np.isfinite(sd) else law.ppf(0.75) - law.ppf(0.25)


def test_every_closed_form_family_is_in_the_grid():
    assert set(CLOSED_FORMS) == {f for f, _, _ in GRID}
    assert set(CLOSED_FORMS) == {n for n in db.families.available()
                                 if db.families.get(n).closed_form_crps}
    for name, fn in CLOSED_FORMS.items():
        assert fn is getattr(db.metrics, f"crps_{name}")


@pytest.mark.parametrize("name, params, law", QUADRATURE_GRID)
def test_closed_form_matches_quadrature(name, params, law):
    family = db.families.get(name)
    ys = _ys(law, family.discrete)
    if name == "beta":
        ys = np.clip(ys, 1e-9, 1 - 1e-9)
    got = CLOSED_FORMS[name](ys, *(params[p] for p in family.param_names))
    want = _crps_quad(law, ys, family.discrete)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12 * _spread(law))


@pytest.mark.parametrize("name, params, law", GRID, ids=IDS)
def test_closed_form_matches_quantile_ensemble(name, params, law):
    family = db.families.get(name)
    m = 20_000
    members = np.sort(law.ppf((np.arange(m) + 0.5) / m))
    ys = law.ppf([0.1, 0.5, 0.95])
    got = CLOSED_FORMS[name](ys, *(params[p] for p in family.param_names))
    # Ensemble CRPS: mean |X - y| - mean |X - X'| / 2, with the sorted-sample identity.
    i = np.arange(1, m + 1)
    spread = 2.0 * np.sum((2 * i - m - 1) * members) / m**2
    want = np.array([np.mean(np.abs(members - y)) for y in ys]) - 0.5 * spread
    # A heavy tail (df < 2) or a discrete law (masses rounded to multiples of 1/m) makes the
    # ensemble a coarser reference.
    heavy = name == "studentt" and params["df"] < 2
    tol = 2e-3 if heavy or family.discrete else 2e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=1e-9 * _spread(law))


def test_standard_normal_at_zero():
    expected = 2 * st.norm.pdf(0) - 1 / np.sqrt(np.pi)
    assert db.metrics.crps_normal(0.0, 0.0, 1.0) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(0.233695, abs=1e-6)


def test_studentt_without_a_mean_has_infinite_crps():
    assert db.metrics.crps_studentt(0.0, 0.9, 0.0, 1.0) == np.inf


# Random parameter grids, (y, *params) in the family's order, inside the range where the
# scipy forms are accurate (Student's t: df <= 50, where scipy's t.pdf and betaln keep ~1e-14;
# above, the torch form is the more accurate one, see test_studentt_large_df_against_mpmath).
def _grid(name, rng, n=500):
    u = rng.uniform
    return {
        "normal": lambda: (rng.normal(size=n) * 5, rng.normal(size=n), u(0.01, 5, n)),
        "lognormal": lambda: (rng.lognormal(size=n), rng.normal(size=n), u(0.05, 2, n)),
        "gamma": lambda: (rng.gamma(2.0, size=n), u(0.1, 500, n), u(0.01, 30, n)),
        "laplace": lambda: (rng.normal(size=n) * 5, rng.normal(size=n), u(0.01, 5, n)),
        "logistic": lambda: (rng.normal(size=n) * 50, rng.normal(size=n), u(0.01, 5, n)),
        "studentt": lambda: (rng.normal(size=n) * 5, u(1.01, 50, n), rng.normal(size=n),
                             u(0.01, 5, n)),
        "exponential": lambda: (rng.exponential(size=n), u(0.01, 100, n)),
        "gumbel": lambda: (rng.normal(size=n) * 5, rng.normal(size=n), u(0.05, 5, n)),
        "beta": lambda: (u(size=n), u(0.1, 300, n), u(0.1, 300, n)),
        "poisson": lambda: (rng.poisson(5, size=n).astype(float), u(0.01, 500, n)),
        "negative_binomial": lambda: (rng.poisson(5, size=n).astype(float), u(0.05, 50, n),
                                      u(0.01, 0.95, n)),
    }[name]()


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_numpy_wrappers_equal_the_scipy_forms(name):
    import scipy_crps_reference as ref

    if not hasattr(ref, f"crps_{name}"):
        pytest.skip("a family added after the port to torch: no scipy form it replaced")
    args = _grid(name, np.random.default_rng(0))
    want = getattr(ref, f"crps_{name}")(*args)
    got = CLOSED_FORMS[name](*args)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_studentt_large_df_against_mpmath():
    """At df ~ 900 the scipy forms lose ~1e-12 (t.pdf, betaln differences); the torch form,
    with a cancellation-free log-gamma ratio, stays within 1e-14 of 30-digit arithmetic."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    y, df, loc, s = -1.582151888829687, 953.8057534517707, -1.1604463847998203, 4.705592580170143
    d, z = mpmath.mpf(df), (mpmath.mpf(y) - loc) / s
    c = mpmath.gamma((d + 1) / 2) / (mpmath.sqrt(d * mpmath.pi) * mpmath.gamma(d / 2))
    pdf = c * (1 + z * z / d) ** (-(d + 1) / 2)
    cdf = mpmath.quad(lambda t: c * (1 + t * t / d) ** (-(d + 1) / 2), [-mpmath.inf, 0, z])
    b = mpmath.beta
    want = s * (z * (2 * cdf - 1) + 2 * pdf * (d + z * z) / (d - 1)
                - 2 * mpmath.sqrt(d) * b(0.5, d - 0.5) / ((d - 1) * b(0.5, d / 2) ** 2))
    assert db.metrics.crps_studentt(y, df, loc, s) == pytest.approx(float(want), rel=1e-14)


def test_negative_binomial_where_scipy_hyp2f1_fails():
    """Large total_count and probs near 1: scipy's hyp2f1 gives inf / NaN; the torch form
    matches the exact sum ``sum_k (F(k) - 1{k >= y})^2``."""
    law = st.nbinom(165.36344158178204, 1 - 0.8880149574993766)
    y = 1102.0
    got = db.metrics.crps_negative_binomial(y, 165.36344158178204, 0.8880149574993766)
    assert np.isfinite(got)
    assert got == pytest.approx(_crps_quad(law, [y], True)[0], rel=1e-9)
