"""The ``histogram`` family beyond the shared table (``family_cases.py`` tests its continuous
law against scipy): its law on the integers against ``scipy.stats.rv_discrete``, the closed-form
CRPS against quadrature with the bin edges as breakpoints, the bins it reads from a target
(bounds, ties, tails, offsets), its errors, and a fit that saves and loads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.integrate as si
import scipy.stats as st
import torch

import distboost as db
from distboost.families.histogram import Histogram


def _built(y, **kwargs):
    fam = Histogram(**kwargs)
    fam.encode_target(np.asarray(y, dtype=float))
    return fam


def _params(fam, y, rng, n=1):
    """The marginal MLE on ``y``, perturbed per row."""
    raw = torch.as_tensor(fam.init_raw(y))[None].repeat(n, 1)
    return fam.params_from_raw(raw + torch.as_tensor(rng.normal(0, 0.4, size=raw.shape)))


COUNTS = np.random.default_rng(0).negative_binomial(3, 0.1, size=400).astype(float)


@pytest.mark.parametrize("low", ["auto", None])
def test_law_on_the_integers_matches_scipy(low):
    fam = _built(COUNTS, n_bins=12, low=low)
    assert fam.discrete and fam.support.integer
    assert (fam.support.low == 0.0) == (low == "auto")
    p = _params(fam, COUNTS, np.random.default_rng(1))
    k = np.arange(-40.0 if low is None else 0.0, 400.0)
    pk = {n: v.expand(k.size) for n, v in p.items()}
    pmf = fam.log_prob(pk, torch.as_tensor(k)).exp().numpy()
    assert pmf.sum() == pytest.approx(1.0, abs=1e-6)  # the geometric tails beyond 400
    law = st.rv_discrete(values=(k, pmf / pmf.sum()))
    np.testing.assert_allclose(fam.cdf(pk, torch.as_tensor(k)).numpy(), law.cdf(k),
                               atol=2e-6)
    levels = np.array([1e-3, 0.1, 0.37, 0.5, 0.9, 0.99])
    q = fam.icdf({n: v.expand(levels.size) for n, v in p.items()}, torch.as_tensor(levels))
    assert torch.equal(q, torch.floor(q))
    cdf_at = fam.cdf({n: v.expand(levels.size) for n, v in p.items()}, q).numpy()
    below = fam.cdf({n: v.expand(levels.size) for n, v in p.items()}, q - 1).numpy()
    assert (cdf_at >= levels - 1e-12).all() and (below < levels).all()
    assert fam.mean(p).item() == pytest.approx(law.mean(), rel=1e-6)
    assert fam.variance(p).item() == pytest.approx(law.var(), rel=1e-5)
    y = np.array([0.0, 7.0, 25.0, 60.0, 300.0])
    exact = [np.sum((law.cdf(k) - (k >= v)) ** 2) for v in y]
    closed = fam.crps({n: v.expand(y.size) for n, v in p.items()}, torch.as_tensor(y))
    np.testing.assert_allclose(closed.numpy(), exact, rtol=1e-6)


# The shared table's test_crps checks the positive, unbounded-above case against the
# library's quadrature (panels split at the bin edges); scipy's here, with both ends bounded.
def test_closed_form_crps_equals_its_integral():
    kwargs = {"high": 30.0}
    y0 = np.random.default_rng(3).gamma(2.0, 3.0, size=300)
    fam = _built(y0, n_bins=16, **kwargs)
    p = _params(fam, y0, np.random.default_rng(4))
    lo = fam.support.low if np.isfinite(fam.support.low) else -np.inf
    hi = fam.support.high if np.isfinite(fam.support.high) else np.inf
    edges = list(fam.layout.edges)

    def cdf(x):
        return fam.cdf(p, torch.tensor([x], dtype=torch.float64)).item()

    for y in (0.5, 11.0):
        left = si.quad(lambda x: cdf(x) ** 2, max(lo, edges[0] - 400), y,
                       points=[e for e in edges if e < y], limit=200, epsabs=1e-12)[0]
        far = max(edges[-1], y) + 400 * max(fam.layout.tail_scales)
        right = si.quad(lambda x: (1 - cdf(x)) ** 2, y, min(hi, far),
                        points=[e for e in edges if e > y], limit=200, epsabs=1e-12)[0]
        closed = fam.crps(p, torch.tensor([y], dtype=torch.float64)).item()
        assert closed == pytest.approx(left + right, rel=1e-8, abs=1e-12)


def test_bins_respect_bounds_ties_and_offsets():
    rng = np.random.default_rng(5)
    # Many exact zeros in a continuous target: the support starts at 0, no mass below it.
    y = np.where(rng.uniform(size=500) < 0.4, 0.0, rng.gamma(2.0, size=500))
    fam = _built(y)
    assert fam.support.low == 0.0 and not fam.discrete and not fam.layout.present[0]
    p = _params(fam, y, rng, n=3)
    draws = fam.sample(p, 2000, seed=0).numpy()
    assert draws.min() >= 0.0
    assert fam.icdf(p, torch.full((3,), 1e-9)).min().item() >= 0.0
    # Far beyond the training range: a finite density that decays, a cdf that reaches 1.
    far = torch.tensor([y.max() * 3, y.max() * 6], dtype=torch.float64)
    lp = fam.log_prob({n: v[:2] for n, v in p.items()}, far)
    assert torch.isfinite(lp).all() and lp[1] < lp[0]
    assert fam.cdf({n: v[:2] for n, v in p.items()}, far)[1].item() > 1 - 1e-9
    # An offset of 1e9 moves the bins, not the law's shape.
    base, shifted = _built(y + 5.0), _built(y + 1e9)
    np.testing.assert_allclose(shifted.layout.edges - 1e9, base.layout.edges - 5.0, atol=1e-5)
    assert shifted.support.low is None or shifted.support.low == 0.0


def test_integer_target_gets_integer_bins_and_a_bin_per_heavy_value():
    rng = np.random.default_rng(6)
    y = np.r_[np.zeros(300), np.full(200, 10.0), rng.integers(11, 500, size=100)]
    fam = _built(y, n_bins=8)
    lay = fam.layout
    assert fam.discrete
    inner = lay.kind == 0
    assert set(zip(lay.lo[inner], lay.hi[inner], strict=True)) >= {(0.0, 0.0), (10.0, 10.0)}
    assert np.all(lay.lo[inner] == np.floor(lay.lo[inner]))


@pytest.mark.parametrize("make, match", [
    (lambda: _built(np.full(5, 3.0)), "at least 2 distinct values of y to place its bins; "
                                      "all 5 rows equal 3"),
    (lambda: Histogram(links={"loc": "softplus"}), "fixed links"),
    (lambda: Histogram(n_bins=0), "n_bins >= 1"),
    (lambda: _built([1.0, -2.0, 3.0], low=0.0), "1 of 3 rows below low=0"),
    (lambda: _built([1.0, 2.0, 3.0], low=0.5, discrete=True), "integer bounds"),
    (lambda: Histogram().param_names, "has no bins yet"),
    (lambda: _built([1.0, np.nan, 3.0]), "1 of 3 rows that are NaN"),
], ids=["constant", "links", "bins", "below-low", "bounds", "placeholder", "nan"])
def test_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.slow  # the fast tier fits, saves and loads it in test_end_to_end.py (case table)
def test_fit_predict_save_load_and_clone(tmp_path):
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.uniform(-1, 1, 120), "c": pd.Categorical(rng.choice(list("xy"),
                                                                                   120))})
    y = np.round(np.exp(1.5 + X["a"] + rng.normal(0, 0.3, 120)))  # counts
    model = db.DistributionalRegressor(family="histogram", n_estimators=5,
                                       early_stopping=False, random_state=0).fit(X, y)
    assert model.family_.discrete and isinstance(db.families.get("histogram"), Histogram)
    X_new = X.iloc[:5].copy()
    X_new.loc[X_new.index[0], "c"] = np.nan  # a missing category at predict time
    dist = model.predict_dist(X_new)
    q = dist.quantile([0.05, 0.5, 0.95])
    assert np.all(q == np.floor(q)) and np.all(np.diff(q, axis=1) >= 0)
    assert np.all(np.isfinite(dist.crps(y[:5])))
    path = tmp_path / "model.json"
    model.save(path)
    back = db.load(path)
    pd.testing.assert_frame_equal(back.predict_params(X), model.predict_params(X),
                                  check_exact=True)
    assert back.family_.get_state() == model.family_.get_state()
    from sklearn.base import clone

    assert clone(model).family == "histogram"
