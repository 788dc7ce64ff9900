"""Tests of distboost.predictive.Predictive, with scipy.stats as the independent reference.

Every family whose case (tests/families/family_cases.py) has three ``rows`` of parameters is
covered (three rows with different parameters each, and the scipy law of the same rows); a
registered family
without an entry fails ``_case`` with a message asking for one.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate as si
import scipy.stats as st
import torch
from family_cases import FAMILIES as CASE_FAMILIES
from family_cases import case

import distboost as db
from distboost.families.base import Family

# The families whose case (tests/families/family_cases.py) has three rows of parameters for
# the batch tests and a vectorised law; the others (categorical: unordered classes; the
# zero-inflated and zero-adjusted families, tweedie, ordinal_logit: hand-written laws) are
# checked against their references in tests/families/, the vector families in
# test_predictive_multivariate.py.
FAMILIES = [f for f in CASE_FAMILIES if case(f).rows is not None]
LEVELS = np.array([1e-4, 0.05, 0.2, 0.5, 0.77, 0.95, 0.999])


def _case(name):
    params = {k: np.asarray(v, dtype=float) for k, v in case(name).rows.items()}
    return db.Predictive.from_params(name, **params), case(name).law(params)


def _logp(law, dist, y):
    return law.logpmf(y) if dist.family.discrete else law.logpdf(y)


def _grid(law):
    """(3, 4) values per row, at scipy quantiles of that row (integers for counts)."""
    return np.stack([law.ppf(level) for level in (0.1, 0.3, 0.6, 0.9)], axis=1)


# ---------------------------------------------------------------------- against scipy
@pytest.mark.parametrize("name", FAMILIES)
def test_moments_match_scipy(name):
    dist, law = _case(name)
    np.testing.assert_allclose(dist.mean, law.mean(), rtol=1e-8)
    np.testing.assert_allclose(dist.variance, law.var(), rtol=1e-7)
    np.testing.assert_allclose(dist.stddev, law.std(), rtol=1e-7)
    assert dist.mean.shape == dist.variance.shape == dist.stddev.shape == (3,)


@pytest.mark.parametrize("name", FAMILIES)
def test_cdf_sf_log_prob_match_scipy(name):
    dist, law = _case(name)
    grid = _grid(law)
    # y of shape (n,): row i at its own value
    y = grid[:, 1]
    np.testing.assert_allclose(dist.cdf(y), law.cdf(y), rtol=1e-7)
    np.testing.assert_allclose(dist.sf(y), law.sf(y), rtol=1e-7)
    np.testing.assert_allclose(dist.log_prob(y), _logp(law, dist, y), rtol=1e-8)
    np.testing.assert_allclose(dist.pdf(y), np.exp(_logp(law, dist, y)), rtol=1e-8)
    # y of shape (n, m): row i at its m values
    want_cdf = np.stack([law.cdf(grid[:, j]) for j in range(grid.shape[1])], axis=1)
    want_logp = np.stack([_logp(law, dist, grid[:, j]) for j in range(grid.shape[1])], axis=1)
    np.testing.assert_allclose(dist.cdf(grid), want_cdf, rtol=1e-7)
    np.testing.assert_allclose(dist.log_prob(grid), want_logp, rtol=1e-8)
    np.testing.assert_allclose(dist.sf(grid), 1 - want_cdf, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", FAMILIES)
def test_quantile_median_interval_match_scipy(name):
    dist, law = _case(name)
    want = np.stack([law.ppf(level) for level in LEVELS], axis=1)
    got = dist.quantile(LEVELS)
    assert got.shape == (3, LEVELS.size)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(dist.quantile(0.77), law.ppf(0.77), rtol=1e-6)
    np.testing.assert_allclose(dist.ppf([0.2]), got[:, [2]])
    np.testing.assert_allclose(dist.median, law.median(), rtol=1e-6)
    lo, hi = law.interval(0.8)
    np.testing.assert_allclose(dist.interval(0.8), np.stack([lo, hi], axis=1), rtol=1e-6)
    np.testing.assert_allclose(dist.interval(), np.stack(law.interval(0.9), axis=1), rtol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_cdf_of_quantile_recovers_the_level(name):
    dist, law = _case(name)
    x = dist.quantile(LEVELS)
    if dist.family.discrete:
        # The smallest integer k with cdf(k) >= q, judged by scipy's cdf.
        assert np.array_equal(x, np.floor(x))
        assert (law.cdf(x.T).T >= LEVELS - 1e-12).all()
        assert (law.cdf(x.T - 1).T < LEVELS).all()
    else:
        np.testing.assert_allclose(dist.cdf(x), np.broadcast_to(LEVELS, x.shape), rtol=1e-6)
        np.testing.assert_allclose(law.cdf(x.T).T, np.broadcast_to(LEVELS, x.shape), rtol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_quantile_at_zero_and_one_is_the_support(name):
    dist, law = _case(name)
    low, high = law.support()
    np.testing.assert_array_equal(dist.quantile([0.0, 1.0]),
                                  np.stack([low, high], axis=1))


@pytest.mark.parametrize("name", FAMILIES)
def test_sf_is_accurate_in_the_upper_tail(name):
    dist, law = _case(name)
    y = law.isf(1e-3)
    np.testing.assert_allclose(dist.sf(y), law.sf(y), rtol=1e-8)
    if type(dist.family).log_sf is not Family.log_sf:
        # A family with its own log survival function: no cancellation in 1 - cdf.
        y = law.isf(1e-12)
        want = law.sf(y)
        if name == "loglogistic":  # scipy's fisk.sf is 1 - cdf there (8.9e-5 off): exact form
            want = 1.0 / (1.0 + (y / law.kwds["scale"]) ** law.args[0])
        np.testing.assert_allclose(dist.sf(y), want, rtol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_values_outside_the_support(name):
    dist, law = _case(name)
    low, high = law.support()
    # +-inf: definitional values
    inf = np.array([-np.inf, np.inf])
    both = np.tile(inf, (3, 1))
    np.testing.assert_array_equal(dist.cdf(both), np.tile([0.0, 1.0], (3, 1)))
    np.testing.assert_array_equal(dist.sf(both), np.tile([1.0, 0.0], (3, 1)))
    np.testing.assert_array_equal(dist.log_prob(both), np.full((3, 2), -np.inf))
    # finite values beyond a finite end, and non-integers of a count family: scipy
    ys = [v for v in (low[0] - 1.0, high[0] + 1.0) if np.isfinite(v)]
    if dist.family.discrete:
        ys += [1.5, 2.5]
    for v in ys:
        np.testing.assert_allclose(dist.cdf(v), law.cdf(v), atol=1e-15)
        np.testing.assert_allclose(dist.sf(v), law.sf(v), atol=1e-15)
        np.testing.assert_array_equal(dist.log_prob(v), _logp(law, dist, np.full(3, v)))


# ---------------------------------------------------------------------- shapes and input
def test_shapes_of_scalar_vector_and_matrix_inputs():
    dist, _ = _case("gamma")
    assert dist.quantile(0.5).shape == (3,)
    assert dist.quantile([0.1, 0.9]).shape == (3, 2)
    assert dist.quantile(np.array([0.5])).shape == (3, 1)
    for f in (dist.cdf, dist.sf, dist.log_prob, dist.pdf, dist.nll):
        assert f(1.0).shape == (3,)
        assert f([1.0, 2.0, 3.0]).shape == (3,)
        assert f(np.ones((3, 4))).shape == (3, 4)
    # a scalar and a (1, m) row broadcast to every distribution
    np.testing.assert_array_equal(dist.cdf(2.0), dist.cdf(np.full(3, 2.0)))
    row = np.array([[0.5, 2.0]])
    np.testing.assert_array_equal(dist.cdf(row), dist.cdf(np.tile(row, (3, 1))))
    np.testing.assert_array_equal(dist.cdf(np.tile([[0.5, 2.0]], (3, 1)))[:, 1], dist.cdf(2.0))
    assert dist.sample(5, random_state=0).shape == (5, 3)
    assert len(dist) == 3 and "gamma" in repr(dist) and "n=3" in repr(dist)


def test_bad_values_raise_with_counts():
    dist, _ = _case("normal")
    with pytest.raises(ValueError, match=r"y has 2 rows but the Predictive has 3"):
        dist.cdf([0.0, 1.0])
    with pytest.raises(ValueError, match=r"y has 4 rows but the Predictive has 3"):
        dist.log_prob(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"y has 2 of 3 rows with NaN"):
        dist.cdf([np.nan, 0.0, np.nan])
    with pytest.raises(ValueError, match=r"y has 1 of 3 rows with NaN"):
        dist.log_prob([[0.0, np.nan], [0.0, 1.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match=r"y is NaN"):
        dist.sf(np.nan)
    with pytest.raises(ValueError, match=r"scalar, \(n,\) or \(n, m\)"):
        dist.sf(np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match=r"must be numeric"):
        dist.cdf(["a", "b", "c"])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]; got \[1.2\]"):
        dist.quantile(1.2)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]; got \[-0.1, nan\]"):
        dist.quantile([0.5, -0.1, np.nan])
    with pytest.raises(ValueError, match=r"q must be a scalar, a 1-D sequence of levels or "
                                         r"\(n, m\) levels with n = \d+ rows"):
        dist.quantile(np.full((len(dist) + 1, 2), 0.5))
    for level in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"must lie in \(0, 1\)"):
            dist.interval(level)
    for m in (-1, 2.5, True):
        with pytest.raises(ValueError, match="non-negative integer"):
            dist.sample(m)


# ---------------------------------------------------------------------- sampling
@pytest.mark.parametrize("name", FAMILIES)
def test_sample_is_reproducible_and_leaves_torch_rng_alone(name):
    dist, _ = _case(name)
    state = torch.get_rng_state()
    a = dist.sample(50, random_state=1)
    assert a.shape == (50, 3) and a.dtype == np.float64
    np.testing.assert_array_equal(a, dist.sample(50, random_state=1))
    assert not np.array_equal(a, dist.sample(50, random_state=2))
    gen = np.random.default_rng(7)
    first, second = dist.sample(20, gen), dist.sample(20, gen)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, dist.sample(20, np.random.default_rng(7)))
    np.testing.assert_array_equal(dist.sample(4, np.random.RandomState(3)),
                                  dist.sample(4, np.random.RandomState(3)))
    assert dist.sample(0).shape == (0, 3)
    assert torch.equal(state, torch.get_rng_state())
    if dist.family.discrete:
        assert np.array_equal(a, np.floor(a))


@pytest.mark.parametrize("name", FAMILIES)
def test_sample_moments_match_scipy(name):
    dist, law = _case(name)
    m = 40_000
    x = dist.sample(m, random_state=11)
    # Every draw in the support, at both ends and for every kind of family: scipy's log density
    # (log mass: -inf off the integers) is above -inf.
    logp = _logp(law, dist, x)
    assert (logp > -np.inf).all(), x[~(logp > -np.inf)]
    mean, var = law.mean(), law.var()
    if not np.isfinite(mean).all():  # cauchy: no mean; quartiles against the quantiles
        q = law.ppf(np.array([[0.25], [0.5], [0.75]]))
        share = (x[None, :, :] <= q[:, None, :]).mean(axis=1)
        assert (np.abs(share - np.array([[0.25], [0.5], [0.75]])) < 5 * np.sqrt(0.25 / m)).all()
        return
    se_mean = np.sqrt(var / m)
    assert (np.abs(x.mean(axis=0) - mean) < 5 * se_mean).all(), (x.mean(axis=0), mean)
    # Variance where the fourth moment exists: Var(s^2) ~ var^2 (kurtosis + 2) / m.
    kurt = np.asarray(law.stats(moments="k"), dtype=float)
    ok = np.isfinite(kurt)
    se_var = var * np.sqrt((np.where(ok, kurt, 0.0) + 2.0) / m)
    dev = np.abs(x.var(axis=0) - var)
    assert (dev[ok] < 6 * se_var[ok]).all(), (x.var(axis=0), var)


# ---------------------------------------------------------------------- container
def test_indexing_keeps_the_right_rows():
    dist, law = _case("normal")
    one = dist[1]
    assert isinstance(one, db.Predictive) and len(one) == 1
    assert one.params["loc"][0] == 1.0 and dist[-1].params["loc"][0] == -2.0
    assert dist[np.int64(2)].params["scale"][0] == 3.0
    np.testing.assert_array_equal(dist[1:].params["scale"], [0.5, 3.0])
    np.testing.assert_array_equal(dist[::-1].params["loc"], [-2.0, 1.0, 0.0])
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(dist[mask].params["loc"], [0.0, -2.0])
    np.testing.assert_array_equal(dist[[2, 0]].params["loc"], [-2.0, 0.0])
    np.testing.assert_array_equal(dist[np.array([-1])].params["scale"], [3.0])
    assert len(dist[np.zeros(3, dtype=bool)]) == 0 and len(dist[[]]) == 0
    # values of the sub-batch are those of the kept rows
    np.testing.assert_allclose(dist[mask].quantile(0.9), law.ppf(0.9)[mask], rtol=1e-12)
    np.testing.assert_allclose(dist[[2, 0]].cdf([0.5, 0.5]), law.cdf(0.5)[[2, 0]], rtol=1e-12)


def test_bad_indices_raise_index_error():
    dist, _ = _case("normal")
    with pytest.raises(IndexError, match="Index 3 is out of range for a Predictive of length 3"):
        dist[3]
    with pytest.raises(IndexError, match="Index -4 is out of range"):
        dist[-4]
    with pytest.raises(IndexError, match=r"Boolean mask has shape \(2,\); expected \(3,\)"):
        dist[np.array([True, False])]
    with pytest.raises(IndexError, match="1 of 2 indices are out of range"):
        dist[[0, 5]]
    with pytest.raises(IndexError, match="integer array"):
        dist[[0.5]]
    assert [len(d) for d in dist] == [1, 1, 1]  # iteration stops at the IndexError


def test_params_are_read_only_copies():
    loc = np.zeros(2)
    dist = db.Predictive.from_params("normal", loc=loc, scale=1.0)
    assert set(dist.params) == {"loc", "scale"}
    np.testing.assert_array_equal(dist.params["scale"], [1.0, 1.0])  # scalar broadcast
    loc[0] = 5.0
    assert dist.params["loc"][0] == 0.0
    with pytest.raises(ValueError, match="read-only"):
        dist.params["loc"][0] = 1.0
    dist.params["loc"] = np.ones(2)  # the returned dict is a copy too
    assert dist.params["loc"][0] == 0.0
    dist.mean[0] = 9.0  # outputs do not alias the stored parameters
    dist.to_torch().loc.add_(1.0)
    assert dist.params["loc"][0] == 0.0


def test_all_scalar_parameters_give_one_row():
    dist = db.Predictive.from_params("gamma", concentration=2.0, rate=np.float64(3.0))
    assert len(dist) == 1
    np.testing.assert_allclose(dist.mean, [2.0 / 3.0])


@pytest.mark.parametrize("name", FAMILIES)
def test_to_torch(name):
    dist, law = _case(name)
    t = dist.to_torch()
    assert isinstance(t, torch.distributions.Distribution)
    assert isinstance(t, dist.family.torch_class)
    assert t.batch_shape == (3,)
    for p in dist.family.param_names:
        value = getattr(t, p)
        assert value.dtype == torch.float64
        np.testing.assert_allclose(value.numpy(), dist.params[p], rtol=1e-12)


def test_from_params_errors():
    with pytest.raises(ValueError, match=r"takes parameters \['loc', 'scale'\]; "
                                         r"missing \['scale'\], unknown \['sd'\]"):
        db.Predictive.from_params("normal", loc=[0.0], sd=[1.0])
    with pytest.raises(ValueError, match=r"takes parameters \['concentration', 'rate'\]"):
        db.Predictive.from_params("gamma", concentration=[1.0])
    with pytest.raises(ValueError, match="'scale' of family 'normal' has 2 of 3 rows outside"):
        db.Predictive.from_params("normal", loc=[0.0, 0, 0], scale=[1.0, -1.0, np.nan])
    with pytest.raises(ValueError, match="'loc' of family 'normal' has 1 of 2 rows"):
        db.Predictive.from_params("normal", loc=[0.0, np.inf], scale=1.0)
    with pytest.raises(ValueError, match="incompatible shapes"):
        db.Predictive.from_params("normal", loc=[0.0, 1.0], scale=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="must be 1-D"):
        db.Predictive.from_params("normal", loc=np.zeros((2, 2)), scale=1.0)
    with pytest.raises(ValueError, match="'loc' must be numeric"):
        db.Predictive.from_params("normal", loc=["x"], scale=1.0)
    with pytest.raises(ValueError, match="Unknown family 'nope'"):
        db.Predictive.from_params("nope", loc=0.0)
    with pytest.raises(TypeError, match="mapping"):
        db.Predictive("normal", [0.0, 1.0])


def test_categorical_probs_and_ordered_only_errors():
    from distboost.families.categorical import Categorical

    logits = np.array([[0.0, 1.0, -1.0], [2.0, 2.0, 2.0]])
    dist = db.Predictive(Categorical(n_classes=3),
                         {f"logits_{k}": logits[:, k] for k in range(3)})
    want = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(dist.probs, want, rtol=1e-12)
    np.testing.assert_allclose(dist.log_prob([1, 2]), np.log([want[0, 1], want[1, 2]]))
    np.testing.assert_array_equal(dist.log_prob([3, 0.5]), [-np.inf, -np.inf])
    for ordered_only in (lambda: dist.cdf([0, 1]), lambda: dist.sf([0, 1]),
                         lambda: dist.quantile(0.5), lambda: dist.interval(0.9),
                         lambda: dist.mean, lambda: dist.variance):
        with pytest.raises(ValueError, match="unordered classes"):
            ordered_only()
    with pytest.raises(ValueError, match="does not know its number of classes"):
        db.Predictive.from_params("categorical", logits_0=[0.0], logits_1=[1.0])
    bern = db.Predictive.from_params("bernoulli", logits=[0.0, np.log(3.0)])
    np.testing.assert_allclose(bern.probs, [[0.5, 0.5], [0.25, 0.75]])
    with pytest.raises(ValueError, match="probs is defined for the classification families"):
        _ = db.Predictive.from_params("normal", loc=0.0, scale=1.0).probs


def test_family_instance_and_tensors_are_accepted():
    fam = db.families.get("normal")
    dist = db.Predictive(fam, {"loc": torch.tensor([0.0, 1.0], requires_grad=True),
                               "scale": torch.tensor([1.0, 2.0])})
    assert dist.family is fam
    np.testing.assert_allclose(dist.quantile(0.975), st.norm.ppf(0.975, [0.0, 1.0], [1.0, 2.0]))


def test_restricted_mean_of_the_exponential():
    rate = np.array([0.5, 1.0, 4.0])
    dist = db.Predictive.from_params("exponential", rate=rate)
    tau = 1.5
    # E[min(Y, tau)] = (1 - exp(-rate tau)) / rate
    np.testing.assert_allclose(dist.restricted_mean(tau), -np.expm1(-rate * tau) / rate,
                               rtol=1e-10)


# ---------------------------------------------------------------------- numerical quantiles
class _LogisticWithoutInverse(type(db.families.get("logistic"))):
    """The logistic family with its exact quantile function removed (a user family with
    only a cdf), so that quantiles go through the generic numerical inversion."""

    name = "test_logistic_without_icdf"

    def icdf(self, params, q):
        from distboost.families.numerics.inversion import invert_cdf

        return invert_cdf(lambda v: self.cdf(params, v), q, self.support)


def test_numerical_quantile_is_vectorised_on_many_rows():
    n = 100_000
    rng = np.random.default_rng(0)
    params = {"loc": rng.normal(size=n), "scale": rng.uniform(0.1, 10, n)}
    dist = db.Predictive(_LogisticWithoutInverse(), params)
    x = dist.quantile([0.01, 0.5, 0.99])
    assert x.shape == (n, 3)
    want = st.logistic.ppf([0.01, 0.5, 0.99], params["loc"][:, None], params["scale"][:, None])
    np.testing.assert_allclose(x, want, rtol=1e-6, atol=1e-9)


def test_count_quantile_on_many_rows():
    n = 100_000
    rate = np.random.default_rng(1).uniform(0.01, 200.0, n)
    dist = db.Predictive.from_params("poisson", rate=rate)
    x = dist.quantile([0.05, 0.5, 0.95])
    want = st.poisson.ppf([0.05, 0.5, 0.95], rate[:, None])
    np.testing.assert_array_equal(x, want)


# ---------------------------------------------------------------------- scores
@pytest.mark.parametrize("name", FAMILIES)
def test_nll_is_minus_the_scipy_log_likelihood(name):
    dist, law = _case(name)
    y = _grid(law)[:, 2]
    np.testing.assert_allclose(dist.nll(y), -_logp(law, dist, y), rtol=1e-8)


def _crps_reference(law, row, y, discrete):
    """CRPS = int (F(x) - 1{x >= y})^2 dx (Gneiting & Raftery 2007, eq. 20) by quadrature
    of scipy's cdf (a sum over the integers for a count law)."""
    if discrete:
        k = np.arange(0, law.ppf(1 - 1e-15)[row] + 1)
        cdf = law.cdf(np.tile(k[:, None], (1, 3)))[:, row]
        return float(np.sum((cdf - (k >= y)) ** 2))

    def below(x):
        return law.cdf(np.full(3, x))[row] ** 2

    def above(x):
        return law.sf(np.full(3, x))[row] ** 2

    low, high = law.support()
    with np.errstate(over="ignore"):  # scipy's gumbel cdf overflows harmlessly far out
        a = si.quad(below, low[row], y, limit=200, epsabs=1e-13, epsrel=1e-11)[0]
        b = si.quad(above, y, high[row], limit=200, epsabs=1e-13, epsrel=1e-11)[0]
    return a + b


@pytest.mark.parametrize("name", FAMILIES)
def test_crps_and_pit_match_quadrature_and_scipy(name):
    dist, law = _case(name)
    y = _grid(law)[:, 2]
    want = [_crps_reference(law, i, y[i], dist.family.discrete) for i in range(3)]
    np.testing.assert_allclose(dist.crps(y), want, rtol=1e-5)
    pit = dist.pit(y)
    assert pit.shape == (3,)
    np.testing.assert_array_equal(pit, dist.pit(y, random_state=0))
    if dist.family.discrete:
        assert ((law.cdf(y - 1) <= pit) & (pit <= law.cdf(y))).all()
    else:
        np.testing.assert_allclose(pit, law.cdf(y), rtol=1e-7)


# ---------------------------------------------------------------- to_frame and row labels
def test_to_frame_columns_against_scipy_and_labels():
    p, law = case("gamma").rows, case("gamma").law
    d = db.Predictive("gamma", p, index=["a", "b", "c"])
    frame = d.to_frame([0.05, 0.95])
    assert list(frame.columns) == ["mean", "sd", "concentration", "rate", "q0.05", "q0.95"]
    assert list(frame.index) == ["a", "b", "c"]
    ref = law({k: np.asarray(v) for k, v in p.items()})
    np.testing.assert_allclose(frame["mean"], ref.mean(), rtol=1e-10)
    np.testing.assert_allclose(frame["sd"], ref.std(), rtol=1e-10)
    np.testing.assert_allclose(frame["q0.95"], ref.ppf(0.95), rtol=1e-8)
    np.testing.assert_array_equal(frame["rate"], p["rate"])
    # an explicit index wins; slicing keeps the labels; no index -> 0..n-1
    assert list(d.to_frame(index=[7, 8, 9]).index) == [7, 8, 9]
    assert list(d[[2, 0]].to_frame(()).index) == ["c", "a"]
    assert list(d[np.array([False, True, True])].index) == ["b", "c"]
    assert list(db.Predictive("gamma", p).to_frame(None).columns) == [
        "mean", "sd", "concentration", "rate"]
    assert list(db.Predictive("gamma", p).to_frame().index) == [0, 1, 2]


def test_to_frame_of_unordered_classes_gives_probabilities():
    from distboost.families.categorical import Categorical

    d = db.Predictive(Categorical(n_classes=3),
                      {"logits_0": [0.0], "logits_1": [1.0], "logits_2": [-1.0]})
    frame = d.to_frame()
    assert "mean" not in frame and "q0.5" not in frame
    np.testing.assert_allclose(frame[["prob_0", "prob_1", "prob_2"]].sum(axis=1), 1.0)


def test_index_length_must_match():
    with pytest.raises(ValueError, match="index has 2 entries but the Predictive holds 3"):
        db.Predictive("normal", {"loc": [0.0, 1.0, 2.0], "scale": 1.0}, index=["a", "b"])


def test_quantile_takes_a_row_of_levels_per_distribution():
    dist = db.Predictive.from_params("normal", loc=[0.0, 10.0, 20.0], scale=[1.0, 2.0, 3.0])
    levels = np.array([[0.1, 0.5], [0.5, 0.9], [0.975, 0.025]])
    expected = st.norm.ppf(levels, loc=[[0.0], [10.0], [20.0]], scale=[[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(dist.quantile(levels), expected, rtol=1e-12)
