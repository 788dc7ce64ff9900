"""The equally weighted mixture of m laws per row (a recursive forecast's marginals) against
independent references: scipy's laws averaged by hand, the CRPS integral by quadrature,
brute-force count quantiles, and the moments of many draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import distboost as db
from distboost.families import Affine, EqualMixture, get

RNG = np.random.default_rng(0)
M, N = 5, 6
LOC = RNG.normal(0.0, 2.0, size=(M, N))
SCALE = RNG.uniform(0.3, 2.0, size=(M, N))
Y = RNG.normal(0.0, 2.0, size=N)


def _normal_mixture():
    params = {f"loc_{i}": LOC[i] for i in range(M)}
    params.update({f"scale_{i}": SCALE[i] for i in range(M)})
    return db.Predictive(EqualMixture(get("normal"), M), params)


def _gamma_mixture():
    conc, rate = RNG.uniform(1.0, 4.0, size=(M, N)), RNG.uniform(0.5, 2.0, size=(M, N))
    params = {f"concentration_{i}": conc[i] for i in range(M)}
    params.update({f"rate_{i}": rate[i] for i in range(M)})
    laws = [stats.gamma(conc[i], scale=1.0 / rate[i]) for i in range(M)]
    return db.Predictive(EqualMixture(get("gamma"), M), params), laws


def _random_mixture(name: str, m: int, n: int, rng) -> db.Predictive:
    """``n`` rows of ``m`` random components of family ``name``."""
    draws = {
        "normal": lambda: {"loc": rng.normal(0, 2, n), "scale": rng.uniform(0.3, 2.0, n)},
        "studentt": lambda: {"df": rng.uniform(1.5, 30.0, n), "loc": rng.normal(0, 2, n),
                             "scale": rng.uniform(0.3, 2.0, n)},
        "gamma": lambda: {"concentration": rng.uniform(0.5, 5.0, n),
                          "rate": rng.uniform(0.5, 2.0, n)},
        "laplace": lambda: {"loc": rng.normal(0, 2, n), "scale": rng.uniform(0.3, 2.0, n)},
        "poisson": lambda: {"rate": rng.uniform(0.5, 20.0, n)},
    }[name]
    params = {}
    for i in range(m):
        params.update({f"{k}_{i}": v for k, v in draws().items()})
    return db.Predictive(EqualMixture(get(name), m), params)


def test_cdf_density_and_quantiles_average_scipys_laws():
    d = _normal_mixture()
    laws = [stats.norm(LOC[i], SCALE[i]) for i in range(M)]
    np.testing.assert_allclose(d.cdf(Y), np.mean([law.cdf(Y) for law in laws], axis=0),
                               rtol=1e-12)
    np.testing.assert_allclose(d.nll(Y), -np.log(np.mean([law.pdf(Y) for law in laws],
                                                         axis=0)), rtol=1e-10)
    levels = np.array([0.001, 0.05, 0.5, 0.95, 0.999])
    q = d.quantile(levels)  # (N, 5)
    for j, a in enumerate(levels):  # the mixture cdf at its quantile is the level
        at = np.mean([law.cdf(q[:, j]) for law in laws], axis=0)
        np.testing.assert_allclose(at, a, rtol=1e-8)
    g, glaws = _gamma_mixture()
    qg = g.quantile(levels)
    assert np.all(qg > 0)
    for j, a in enumerate(levels):
        np.testing.assert_allclose(np.mean([law.cdf(qg[:, j]) for law in glaws], axis=0), a,
                                   rtol=1e-8)


def test_moments_follow_the_laws_of_total_expectation_and_variance():
    d = _normal_mixture()
    mean = LOC.mean(axis=0)
    np.testing.assert_allclose(d.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(d.variance, (SCALE ** 2 + LOC ** 2).mean(axis=0) - mean ** 2,
                               rtol=1e-10)
    draws = d.sample(40_000, random_state=1)  # (40000, N)
    se = np.sqrt(d.variance / 40_000)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se)
    np.testing.assert_allclose(draws.var(axis=0), d.variance, rtol=0.04)
    # each draw comes from one component: the draws' cdf matches the mixture's
    ks = [stats.kstest(draws[:, r], lambda v, r=r: np.mean(
        [stats.norm.cdf(v, LOC[i, r], SCALE[i, r]) for i in range(M)], axis=0)).pvalue
        for r in range(N)]
    assert min(ks) > 1e-3, ks


def test_normal_crps_closed_form_matches_the_integral():
    d = _normal_mixture()
    assert d.family.closed_form_crps
    closed = d.crps(Y)
    np.testing.assert_allclose(closed, d.crps(Y, method="numerical"), rtol=1e-7)
    for r in range(2):  # by scipy's quadrature of (F(x) - 1{x >= y})^2

        def cdf(x, r=r):
            return np.mean([stats.norm.cdf(x, LOC[i, r], SCALE[i, r]) for i in range(M)])

        left = integrate.quad(lambda x: cdf(x) ** 2, -np.inf, Y[r])[0]
        right = integrate.quad(lambda x: (1 - cdf(x)) ** 2, Y[r], np.inf)[0]
        assert closed[r] == pytest.approx(left + right, rel=1e-7)


def test_affine_components_are_the_laws_in_the_series_units():
    """Components ``shift + factor * Z``: the same answers as the normal laws they are."""
    shift, factor = RNG.normal(size=(M, N)) * 100, RNG.uniform(1.0, 50.0, size=(M, N))
    plain = {f"loc_{i}": shift[i] + factor[i] * LOC[i] for i in range(M)}
    plain.update({f"scale_{i}": factor[i] * SCALE[i] for i in range(M)})
    wrapped = {}
    for i in range(M):
        wrapped.update({f"loc_{i}": LOC[i], f"scale_{i}": SCALE[i], f"shift_{i}": shift[i],
                        f"factor_{i}": factor[i]})
    a = db.Predictive(EqualMixture(get("normal"), M), plain)
    b = db.Predictive(EqualMixture(Affine("normal"), M), wrapped)
    y = shift.mean(axis=0)
    assert b.family.closed_form_crps
    np.testing.assert_allclose(b.crps(y), a.crps(y), rtol=1e-10)
    np.testing.assert_allclose(b.quantile([0.1, 0.9]), a.quantile([0.1, 0.9]), rtol=1e-8)
    np.testing.assert_allclose(b.nll(y), a.nll(y), rtol=1e-10)


def test_count_components_give_integer_quantiles():
    rates = np.array([[1.0, 5.0, 0.2], [3.0, 50.0, 0.2], [8.0, 2.0, 30.0]])
    params = {f"rate_{i}": rates[i] for i in range(3)}
    d = db.Predictive(EqualMixture(get("poisson"), 3), params)
    levels = [0.05, 0.5, 0.95]
    k = np.arange(0, 200)
    cdf = np.mean([stats.poisson.cdf(k[:, None], rates[i]) for i in range(3)], axis=0)
    expected = np.array([[k[np.argmax(cdf[:, r] >= a)] for a in levels] for r in range(3)])
    np.testing.assert_array_equal(d.quantile(levels), expected)
    np.testing.assert_allclose(d.cdf(np.array([2.0, 10.0, 1.0])),
                               cdf[[2, 10, 1], [0, 1, 2]], rtol=1e-12)


def test_identical_components_are_the_component_itself():
    params = {f"{p}_{i}": v for i in range(4)
              for p, v in (("loc", LOC[0]), ("scale", SCALE[0]))}
    d = db.Predictive(EqualMixture(get("normal"), 4), params)
    one = db.Predictive.from_params("normal", loc=LOC[0], scale=SCALE[0])
    levels = [0.01, 0.3, 0.99]
    np.testing.assert_allclose(d.quantile(levels), one.quantile(levels), rtol=1e-12)
    np.testing.assert_allclose(d.crps(Y), one.crps(Y), rtol=1e-10)


def test_a_mixture_is_for_prediction_only():
    fam = EqualMixture(get("normal"), 3)
    assert not fam.params_in_frame and fam.get_state()["n_components"] == 3
    with pytest.raises(ValueError, match="it is not a model of y and cannot be fitted"):
        fam.init(np.zeros(5))
    with pytest.raises(ValueError, match="n_components >= 1"):
        EqualMixture(get("normal"), 0)


@pytest.mark.parametrize("name", ["studentt", "gamma", "laplace"])
def test_quantiles_of_components_with_a_density_are_newton_exact(name):
    """Any component with a density takes safeguarded Newton steps on the mixture's cdf and
    density (it took ~35 bisection halvings, to 1e-10 of the bracket, for anything but the
    normal): the level is met to rounding, at a fraction of the cdf evaluations."""
    d = _random_mixture(name, 7, 40, np.random.default_rng(3))
    levels = np.array([0.005, 0.1, 0.5, 0.9, 0.995])
    q = d.quantile(levels)
    for j, a in enumerate(levels):
        np.testing.assert_allclose(d.cdf(q[:, j]), a, rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", ["normal", "gamma", "poisson"])
def test_quantiles_in_chunks_of_rows_equal_one_pass(name, monkeypatch):
    """Quantiles are computed in chunks of rows (bounding the (levels, rows, m) tables: a
    recursive forecast of 500 series, 24 steps and 200 paths held 1.3 GB in one pass): the
    chunks give the one pass's quantiles, each row's level met."""
    from distboost.families import equal_mixture

    m, n = 9, 50
    d = _random_mixture(name, m, n, np.random.default_rng(5))
    levels = np.array([0.005, 0.1, 0.5, 0.9, 0.995])
    whole = d.quantile(levels)
    monkeypatch.setattr(equal_mixture, "_QUANTILE_CHUNK", len(levels) * m * 7)  # 7 rows
    chunked = d.quantile(levels)
    assert chunked.shape == whole.shape == (n, len(levels))
    np.testing.assert_allclose(chunked, whole, rtol=1e-9, atol=0)
    if name != "poisson":
        for j, a in enumerate(levels):
            np.testing.assert_allclose(d.cdf(chunked[:, j]), a, rtol=0, atol=1e-12)
