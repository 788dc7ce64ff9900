"""The one table of family test cases: a new family needs one row here.

Every registered family has a :class:`Case`: how to build it, two natural-scale parameter sets
(a typical one and an extreme one) and the same law in ``scipy.stats`` (which pins every
parametrisation difference).  The property tests (``test_properties.py``: densities, cdfs,
quantiles, derivatives, MLE, samples, Fisher information), the CRPS tests (``test_crps.py``:
closed forms against quadrature, gradients) and the Fisher and MLE tests read this table, and
``test_every_family_has_a_case`` fails for a registered family without a row.

Wrappers (censored, truncated) are tested in ``test_censored.py``, ``test_truncated.py`` and
``test_wrapper.py``: they wrap the families below, so a new family gets them for free.
``Empirical`` (the per-step marginals of forecast sample paths) has no row: it is not
registered and cannot be fitted (it holds draws, it has no parameters to estimate, no density
and no scipy law); ``test_empirical.py`` checks it against numpy's quantiles, counting and
scoringrules' ensemble CRPS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.stats as st
import torch

import distboost as db
from distboost.families.categorical import Categorical
from distboost.families.ordinal import OrdinalLogit


@dataclass(frozen=True)
class Case:
    """One family's test data.

    Attributes
    ----------
    params : tuple of dict
        Two natural-scale parameter sets: a typical one and an extreme one.
    law : callable
        ``law(params) -> frozen scipy.stats distribution`` of the same law.
    make : callable, optional
        Builds the family (default: ``db.families.get(name)``).
    slow : bool
        The family's likelihood is costly (a series or a quadrature per row): its heavy
        tests (MLE on 20,000 rows, end-to-end fits) run in the slow tier.
    estimator : str
        The estimator that fits it by name: "regressor" (``DistributionalRegressor``) or
        "classifier" (a family that needs its number of classes from the labels).
    rows : dict, optional
        Three rows of natural-scale parameters (a list per parameter) for the batch tests of
        ``db.Predictive`` (tests/predictive/test_batch.py), which call ``law`` on the arrays:
        set it when ``law`` vectorises over rows (a scipy law).
    """

    params: tuple[dict, ...]
    law: Callable[[dict], object]
    make: Callable[[], object] | None = field(default=None)
    slow: bool = False
    estimator: str = "regressor"
    rows: dict | None = None


class ZeroAdjusted:
    """``gate * delta_0 + (1 - gate) * law`` with scipy's frozen-law methods (``logpdf`` is the
    log-probability at 0 and the log-density times ``1 - gate`` above), written from the
    scipy law alone as the reference of the zero-adjusted families."""

    def __init__(self, gate: float, law):
        self.gate, self.law = gate, law

    def logpdf(self, y):
        y = np.asarray(y, dtype=np.float64)
        with np.errstate(divide="ignore"):
            pos = np.log1p(-self.gate) + self.law.logpdf(np.where(y > 0, y, 1.0))
        return np.where(y == 0, np.log(self.gate), pos)

    def cdf(self, y):
        y = np.asarray(y, dtype=np.float64)
        return np.where(y < 0, 0.0, self.gate + (1 - self.gate) * self.law.cdf(y))

    def ppf(self, q):
        q = np.asarray(q, dtype=np.float64)
        inner = np.clip((q - self.gate) / (1 - self.gate), 0.0, 1.0)
        return np.where(q <= self.gate, 0.0, self.law.ppf(inner))

    def mean(self):
        return (1 - self.gate) * self.law.mean()

    def var(self):
        m = self.law.mean()
        return (1 - self.gate) * (self.law.var() + self.gate * m * m)

    def std(self):
        return float(np.sqrt(self.var()))

    def rvs(self, size, random_state):
        rng = np.random.default_rng(random_state)
        x = self.law.rvs(size=size, random_state=rng)
        return np.where(rng.uniform(size=size) < self.gate, 0.0, x)


class TweedieLaw:
    """The compound Poisson-gamma law from statsmodels and scipy: ``logpdf`` is statsmodels'
    ``Tweedie(var_power).loglike_obs`` (scipy's Wright Bessel function), ``cdf`` the Poisson
    mixture of scipy gamma cdfs, ``ppf`` by brentq, ``rvs`` Poisson then gamma draws."""

    def __init__(self, mean, dispersion, power):
        self.mu, self.phi, self.p = mean, dispersion, power
        self.lam = mean ** (2 - power) / (dispersion * (2 - power))
        self.a = (2 - power) / (power - 1)
        self.c = dispersion * (power - 1) * mean ** (power - 1)

    def logpdf(self, y):
        import statsmodels.api as sm

        y = np.atleast_1d(np.asarray(y, dtype=np.float64))
        return sm.families.Tweedie(var_power=self.p, eql=False).loglike_obs(
            y, np.full(y.shape, self.mu), scale=self.phi)

    def cdf(self, y):
        y = np.atleast_1d(np.asarray(y, dtype=np.float64))
        j = np.arange(1, int(self.lam + 12 * np.sqrt(self.lam) + 40))
        w = st.poisson(self.lam).pmf(j)
        body = (w[:, None] * st.gamma(j[:, None] * self.a, scale=self.c).cdf(
            np.clip(y, 0, None)[None, :])).sum(axis=0)
        return np.where(y < 0, 0.0, np.exp(-self.lam) + body)

    def ppf(self, q):
        from scipy.optimize import brentq

        q = np.atleast_1d(np.asarray(q, dtype=np.float64))
        out = np.zeros_like(q)
        hi = self.mu + 60 * np.sqrt(self.var())
        for i, v in enumerate(q):
            if v > np.exp(-self.lam):
                out[i] = brentq(lambda x, v=v: self.cdf(x)[0] - v, 1e-300, hi,
                                xtol=1e-300, rtol=1e-13)
        return out

    def mean(self):
        return self.mu

    def var(self):
        return self.phi * self.mu**self.p

    def std(self):
        return float(np.sqrt(self.var()))

    def rvs(self, size, random_state):
        rng = np.random.default_rng(random_state)
        n = rng.poisson(self.lam, size=size)
        return np.where(n > 0, rng.gamma(np.maximum(n, 1) * self.a, self.c), 0.0)


class HistogramReference:
    """The ``histogram`` family's law written with scipy.stats: a mixture, with the category
    probabilities ``softmax(log size + logits)`` of the family's layout, of ``uniform`` laws on
    the inner bins and ``truncexpon`` / ``expon`` laws leaving the outer edges (mirrored for
    the lower tail); ``ppf`` by brentq on the mixture's cdf, ``rvs`` a category then a draw
    from its law."""

    def __init__(self, family, p):
        lay = family.layout
        a = (lay.position - p["loc"]) / p["scale"]
        coef = np.array([p[f"coef_{j}"] for j in range(lay.n_basis)])
        logits = lay.log_size - 0.5 * a * a + lay.phi @ coef
        w = np.exp(logits - logits.max())
        self.probs = w / w.sum()
        self.lay = lay
        self.parts = []
        for c in range(lay.kind.size):
            if lay.kind[c] == 0:
                law = st.uniform(lay.lo[c], lay.hi[c] - lay.lo[c])
            elif np.isinf(lay.length[c]):
                law = st.expon(scale=lay.scale[c])
            else:
                law = st.truncexpon(lay.length[c] / lay.scale[c], scale=lay.scale[c])
            self.parts.append((int(lay.kind[c]), lay.anchor[c], law))

    def _each(self, y, kind_fn):
        y = np.asarray(y, dtype=np.float64)
        return np.stack([kind_fn(k, a, law, y) for k, a, law in self.parts], axis=-1)

    def pdf(self, y):
        dens = self._each(y, lambda k, a, law, v: law.pdf(v) if k == 0 else law.pdf(k * (v - a)))
        return dens @ self.probs

    def logpdf(self, y):
        with np.errstate(divide="ignore"):
            return np.log(self.pdf(y))

    def cdf(self, y):
        parts = self._each(y, lambda k, a, law, v: law.cdf(v) if k == 0 else (
            law.cdf(v - a) if k > 0 else law.sf(a - v)))
        return parts @ self.probs

    def ppf(self, q):
        from scipy.optimize import brentq

        q = np.atleast_1d(np.asarray(q, dtype=np.float64))
        lo = self.lay.anchor[0] - (self.lay.length[0] if self.lay.present[0] else 0.0)
        lo = lo if np.isfinite(lo) else self.lay.edges[0] - 200 * self.lay.scale[0]
        hi = self.lay.edges[-1] + 200 * self.lay.scale[-1]
        return np.array([brentq(lambda x, v=v: self.cdf(x) - v, lo, hi, xtol=1e-14, rtol=1e-15)
                         for v in q])

    def _moments(self):
        means = np.array([law.mean() if k == 0 else a + k * law.mean()
                          for k, a, law in self.parts])
        var = np.array([law.var() for _, _, law in self.parts])
        return means, var

    def mean(self):
        return float(self._moments()[0] @ self.probs)

    def var(self):
        means, var = self._moments()
        m = self.mean()
        return float(self.probs @ (var + (means - m) ** 2))

    def std(self):
        return float(np.sqrt(self.var()))

    def rvs(self, size, random_state):
        rng = np.random.default_rng(random_state)
        pick = rng.choice(len(self.parts), size=size, p=self.probs)
        out = np.empty(size)
        for c, (k, a, law) in enumerate(self.parts):
            m = pick == c
            if m.any():
                v = law.rvs(size=int(m.sum()), random_state=rng)
                out[m] = v if k == 0 else a + k * v
        return out


def _histogram():
    """A continuous histogram family read from 400 gamma draws: 10 bins, 3 shape
    functions, support [0, inf) (a truncated lower tail, an exponential upper one)."""
    from distboost.families.histogram import Histogram

    fam = Histogram(n_bins=10, n_basis=3)
    fam.encode_target(st.gamma(3.0).rvs(400, random_state=np.random.default_rng(5)))
    return fam


def _zinb(p):
    from statsmodels.distributions.discrete import zinegbin

    r, probs = p["total_count"], p["probs"]
    return zinegbin(r * probs / (1 - probs), 1.0 / r, 2, p["gate"])


def _zip(p):
    from statsmodels.distributions.discrete import zipoisson

    return zipoisson(p["rate"], p["gate"])


def _ordinal_law(p):
    cut = np.array([p[f"cutpoints_{j}"] for j in range(len(p) - 1)]) - p["loc"]
    cum = np.r_[0.0, 1.0 / (1.0 + np.exp(-cut)), 1.0]
    return st.rv_discrete(values=(np.arange(cum.size - 1), np.diff(cum)))


def _softmax(p):
    logits = np.array([p[f"logits_{k}"] for k in range(len(p))])
    return np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()


CASES: dict[str, Case] = {
    "normal": Case(({"loc": 1.5, "scale": 2.0}, {"loc": -30.0, "scale": 0.01}),
                   lambda p: st.norm(p["loc"], p["scale"]),
        rows={"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]}),
    "lognormal": Case(({"loc": 0.3, "scale": 0.5}, {"loc": -2.0, "scale": 1.5}),
                      lambda p: st.lognorm(s=p["scale"], scale=np.exp(p["loc"])),
        rows={"loc": [0.0, 1.0, -1.0], "scale": [0.3, 0.5, 1.2]}),
    "gamma": Case(({"concentration": 2.5, "rate": 1.5}, {"concentration": 0.6, "rate": 20.0}),
                  lambda p: st.gamma(a=p["concentration"], scale=1.0 / p["rate"]),
        rows={"concentration": [0.5, 2.0, 9.0], "rate": [1.0, 0.5, 3.0]}),
    "studentt": Case(({"df": 4.0, "loc": 1.0, "scale": 2.0},
                      {"df": 25.0, "loc": -3.0, "scale": 0.1}),
                     lambda p: st.t(p["df"], p["loc"], p["scale"]),
        rows={"df": [2.5, 5.0, 30.0], "loc": [0.0, 1.0, -1.0], "scale": [1.0, 2.0, 0.5]}),
    "laplace": Case(({"loc": 0.5, "scale": 1.2}, {"loc": 100.0, "scale": 0.05}),
                    lambda p: st.laplace(p["loc"], p["scale"]),
        rows={"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]}),
    "logistic": Case(({"loc": 0.5, "scale": 1.2}, {"loc": -10.0, "scale": 3.0}),
                     lambda p: st.logistic(p["loc"], p["scale"]),
        rows={"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]}),
    "gumbel": Case(({"loc": 0.5, "scale": 1.2}, {"loc": 5.0, "scale": 0.2}),
                   lambda p: st.gumbel_r(p["loc"], p["scale"]),
        rows={"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]}),
    "weibull": Case(({"scale": 2.0, "concentration": 1.5}, {"scale": 0.1, "concentration": 4.0}),
                    lambda p: st.weibull_min(c=p["concentration"], scale=p["scale"]),
        rows={"scale": [1.0, 2.0, 0.5], "concentration": [0.8, 2.0, 5.0]}),
    "exponential": Case(({"rate": 0.7}, {"rate": 30.0}),
                        lambda p: st.expon(scale=1.0 / p["rate"]),
        rows={"rate": [0.5, 1.0, 4.0]}),
    "beta": Case(({"concentration1": 2.0, "concentration0": 5.0},
                  {"concentration1": 0.7, "concentration0": 0.9}),
                 lambda p: st.beta(p["concentration1"], p["concentration0"]),
        rows={"concentration1": [0.5, 2.0, 8.0], "concentration0": [0.7, 3.0, 2.0]}),
    "poisson": Case(({"rate": 3.5}, {"rate": 60.0}), lambda p: st.poisson(p["rate"]),
        rows={"rate": [0.3, 4.0, 50.0]}),
    "negative_binomial": Case(({"total_count": 4.0, "probs": 0.6},
                               {"total_count": 0.8, "probs": 0.2}),
                              lambda p: st.nbinom(n=p["total_count"], p=1.0 - p["probs"]),
        rows={"total_count": [0.5, 3.0, 20.0], "probs": [0.3, 0.6, 0.9]}),
    "cauchy": Case(({"loc": 1.5, "scale": 2.0}, {"loc": -40.0, "scale": 0.02}),
                   lambda p: st.cauchy(p["loc"], p["scale"]),
        rows={"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]}),
    "half_normal": Case(({"scale": 1.7}, {"scale": 1e-3}),
                        lambda p: st.halfnorm(scale=p["scale"]),
        rows={"scale": [0.5, 1.0, 4.0]}),
    # scipy's invgauss mu is the mean over the shape.
    "inverse_gaussian": Case(({"loc": 2.0, "concentration": 3.0},
                              {"loc": 0.05, "concentration": 40.0}),
                             lambda p: st.invgauss(p["loc"] / p["concentration"],
                                                   scale=p["concentration"]),
        rows={"loc": [0.5, 2.0, 10.0], "concentration": [1.0, 3.0, 50.0]}),
    "loglogistic": Case(({"scale": 2.0, "concentration": 9.0},
                         {"scale": 0.01, "concentration": 15.0}),
                        lambda p: st.fisk(p["concentration"], scale=p["scale"]),
        rows={"scale": [0.5, 2.0, 10.0], "concentration": [5.0, 9.0, 12.0]}),
    # statsmodels' ppf gives -1 at a level equal to the gate: gates avoid the levels tested.
    "zero_inflated_poisson": Case(({"rate": 3.5, "gate": 0.3}, {"rate": 40.0, "gate": 0.85}),
                                  _zip),
    "zero_inflated_negative_binomial": Case(
        ({"total_count": 4.0, "probs": 0.6, "gate": 0.25},
         {"total_count": 0.8, "probs": 0.8, "gate": 0.45}), _zinb, slow=True),
    "zero_adjusted_gamma": Case(
        ({"concentration": 2.5, "rate": 1.5, "gate": 0.3},
         {"concentration": 0.6, "rate": 20.0, "gate": 0.8}),
        lambda p: ZeroAdjusted(p["gate"], st.gamma(a=p["concentration"], scale=1 / p["rate"]))),
    "zero_adjusted_lognormal": Case(
        ({"loc": 0.3, "scale": 0.5, "gate": 0.4}, {"loc": -2.0, "scale": 1.5, "gate": 0.05}),
        lambda p: ZeroAdjusted(p["gate"], st.lognorm(s=p["scale"], scale=np.exp(p["loc"])))),
    "tweedie": Case(({"mean": 2.0, "dispersion": 1.5, "power": 1.4},
                     {"mean": 0.3, "dispersion": 0.4, "power": 1.8}),
                    lambda p: TweedieLaw(p["mean"], p["dispersion"], p["power"]), slow=True),
    # loc at 0 in both sets: only cutpoints - loc is identified, and the MLE puts loc at 0.
    "ordinal_logit": Case(
        ({"cutpoints_0": -1.0, "cutpoints_1": 0.3, "cutpoints_2": 1.8, "loc": 0.0},
         {"cutpoints_0": -4.0, "cutpoints_1": 3.0, "cutpoints_2": 3.5, "loc": 0.0}),
        _ordinal_law, make=lambda: OrdinalLogit(n_classes=4)),
    # The layout (bins, tails, basis) is read from fixed gamma draws (see _histogram).
    "histogram": Case(
        ({"loc": 2.8, "scale": 1.6, "coef_0": 0.3, "coef_1": -0.2, "coef_2": 0.15},
         {"loc": 4.5, "scale": 2.5, "coef_0": -0.4, "coef_1": 0.5, "coef_2": -0.3}),
        lambda p: HistogramReference(_histogram(), p), make=_histogram),
    "bernoulli": Case(({"logits": 0.4}, {"logits": -3.0}),
                      lambda p: st.bernoulli(1.0 / (1.0 + np.exp(-p["logits"]))),
        rows={"logits": [-3.0, 0.2, 2.5]}),
    # Normalised logits (log-probabilities): the MLE, log class frequencies, recovers them.
    "categorical": Case(
        ({f"logits_{k}": v for k, v in enumerate(np.log([0.2, 0.5, 0.3]))},
         {f"logits_{k}": v for k, v in enumerate(np.log([0.05, 0.15, 0.8]))}),
        lambda p: st.rv_discrete(values=(np.arange(len(p)), _softmax(p))),
        make=lambda: Categorical(n_classes=3), estimator="classifier"),
}


def case(name: str) -> Case:
    """The row of a registered family (a clear failure when it has none)."""
    if name not in CASES:
        raise AssertionError(
            f"family {name!r} has no row in tests/families/family_cases.py CASES: add one")
    return CASES[name]


def family(name: str):
    """The family of a row (``make`` when given, else the registered one)."""
    c = case(name)
    return c.make() if c.make is not None else db.families.get(name)


def scipy_law(name: str, p: dict):
    """The scipy.stats law of family ``name`` with parameters ``p``."""
    return case(name).law(p)


def draws(name: str, p: dict, n: int, seed: int) -> np.ndarray:
    """``n`` draws of ``y`` (float64) from the scipy law."""
    return np.asarray(scipy_law(name, p).rvs(size=n, random_state=np.random.default_rng(seed)),
                      dtype=np.float64)


def tensors(fam, p: dict, n: int) -> dict[str, torch.Tensor]:
    """Parameter set ``p`` repeated over ``n`` rows, as float64 tensors."""
    return {k: torch.full((n,), float(p[k]), dtype=torch.float64) for k in fam.param_names}


# Vector families (y of shape (n, d)) have no cdf or quantiles: their own tests are in
# tests/families/test_multivariate_normal.py and test_dirichlet.py, which check that they
# cover every registered one.
VECTOR_FAMILIES = [f for f in db.families.available() if db.families.get(f).multivariate]
FAMILIES = [f for f in db.families.available() if f not in VECTOR_FAMILIES]
PAIRS = [(f, i) for f in FAMILIES for i in range(2)]
PAIR_IDS = [f"{f}-{i}" for f, i in PAIRS]
#: The scalar families ``DistributionalRegressor(family=name)`` fits by name.
REGRESSION_FAMILIES = [f for f in FAMILIES if case(f).estimator == "regressor"]


def marked(items, name_of=lambda item: item):
    """``items`` as pytest parameters, those of a ``slow`` family marked slow."""
    import pytest

    return [pytest.param(*(item if isinstance(item, tuple) else (item,)),
                         marks=[pytest.mark.slow] if case(name_of(item)).slow else [])
            for item in items]


def assert_fisher_matches_monte_carlo(fam, raw: torch.Tensor, m: int = 40_000,
                                      seed: int = 0) -> None:
    """``E[g g^T]`` of the score over ``m`` draws from the model at ``raw`` (shape (1, K))
    equals ``fam.fisher_information(raw)``, every entry within five Monte Carlo standard
    errors (the vector families' check; ``test_fisher.py`` has the table's)."""
    params = {p: v.expand(m) for p, v in fam.params_from_raw(raw).items()}
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        y = fam.distribution(params).sample()
    r = raw.expand(m, -1).clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fam.nll(r, y).sum(), r)
    outer = (g[:, :, None] * g[:, None, :]).numpy()
    mc, se = outer.mean(0), outer.std(0) / np.sqrt(m)
    closed = fam.fisher_information(raw)[0].numpy()
    assert np.all(np.abs(mc - closed) <= 5 * se + 1e-12), np.max(np.abs(mc - closed) / se)
