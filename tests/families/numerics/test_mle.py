"""Marginal maximum likelihood: every family's ``init`` against scipy.stats fits (rows of
``family_cases.py``), weights against replication, and the numerical optimiser
(``distboost.families.numerics.mle.numerical_mle``) against closed forms and scipy.optimize."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import scipy.stats as st
import torch
from family_cases import FAMILIES, PAIR_IDS, PAIRS, case, marked, scipy_law
from family_cases import draws as _draws
from family_cases import family as _family
from family_cases import tensors as _tensors

import distboost as db
from distboost.families.numerics.mle import numerical_mle


def _cases(name):
    return case(name).params


# The 20,000-row fits of the families whose likelihood is costly (``slow`` in the case
# table: a series or a quadrature per row) run in the slow tier.
@pytest.mark.parametrize("name, i", marked(PAIRS, lambda pair: pair[0]), ids=PAIR_IDS)
def test_mle_init_recovers_parameters_like_scipy(name, i):
    family, p = _family(name), _cases(name)[i]
    y = np.asarray(_draws(name, p, 20_000, seed=10 + i), dtype=np.float64)
    fit = family.init(y)
    params = _tensors(family, fit, y.size)
    ours = family.log_prob(params, torch.as_tensor(y)).mean().item()
    # Reference: the log-likelihood at scipy's own MLE (loc fixed where scipy has a shift).
    law = scipy_law(name, p)
    if family.discrete:
        # scipy has no generic discrete fit: the truth bounds the MLE's log-likelihood.
        ref = law.logpmf(y).mean()
    elif family.point_mass is not None or not hasattr(law, "dist"):
        # A zero-adjusted or hand-written reference (histogram): the truth bounds it too.
        ref = law.logpdf(y).mean()
    else:
        dist = law.dist
        kw = ({} if name in ("normal", "laplace", "logistic", "gumbel", "studentt", "cauchy")
              else {"floc": 0})
        if name == "beta":
            kw = {"floc": 0, "fscale": 1}
        ref_params = dist.fit(y, **kw)
        ref = dist.logpdf(y, *ref_params).mean()
    assert ours >= ref - 1e-6, (fit, ours, ref)
    for k, v in p.items():
        rel = 0.25 if k == "df" else 0.1  # tail weight is weakly identified at large df
        assert fit[k] == pytest.approx(v, rel=rel, abs=0.05), (k, fit, p)


@pytest.mark.parametrize("name", FAMILIES)
def test_weighted_init_equals_replication(name):
    family, p = _family(name), _cases(name)[0]
    y = np.asarray(_draws(name, p, 300, seed=42), dtype=np.float64)
    w = np.random.default_rng(0).integers(1, 4, size=y.size)
    a = family.init(y, sample_weight=w)
    b = family.init(np.repeat(y, w))
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-5), (k, a, b)


@pytest.mark.parametrize("name", ["normal", "lognormal", "exponential", "poisson", "bernoulli"])
def test_numerical_mle_equals_the_closed_form(name):
    """The optimiser, started off the optimum, lands on the closed-form weighted MLE (not
    laplace: its likelihood is flat in loc between the two middle observations)."""
    fam = _family(name)
    assert fam.closed_form_mle
    p = _cases(name)[0]
    y = _draws(name, p, 2_000, seed=5)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
    w /= w.sum()
    exact = fam.start_values(y, w)
    start = {k: v * 1.3 + 0.1 for k, v in exact.items()}
    fit = numerical_mle(fam, y, w, start)
    for k in exact:
        assert fit[k] == pytest.approx(exact[k], rel=1e-5, abs=1e-7), (k, fit, exact)


def test_numerical_mle_of_censored_normal_matches_scipy_optimize():
    """Right-censored normal: the same optimum as Nelder-Mead on scipy's log-likelihood."""
    rng = np.random.default_rng(0)
    t = rng.normal(2.0, 1.5, size=400)
    c = rng.normal(2.5, 1.0, size=400)
    y = db.censored.right(np.minimum(t, c), t <= c)
    fam = db.families.get("censored_normal")
    fit = fam.init(y)

    def nll(theta):
        loc, scale = theta[0], np.exp(theta[1])
        exact = np.isfinite(y[:, 1]) & (y[:, 0] == y[:, 1])
        ll = np.where(exact, st.norm.logpdf(y[:, 0], loc, scale),
                      st.norm.logsf(y[:, 0], loc, scale))
        return -ll.mean()

    ref = scipy.optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead",
                                  options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 5000}).x
    assert fit["loc"] == pytest.approx(ref[0], abs=1e-5)
    assert fit["scale"] == pytest.approx(np.exp(ref[1]), rel=1e-5)


def test_numerical_mle_gradient_vanishes_at_the_optimum():
    fam = db.families.get("gamma")
    y = _draws("gamma", _cases("gamma")[0], 1_000, seed=2)
    w = np.full(y.size, 1.0 / y.size)
    fit = numerical_mle(fam, y, w, {"concentration": 1.0, "rate": 1.0})
    raw = torch.as_tensor(fam.raw_from_params(fit)).requires_grad_(True)
    loss = (fam.nll(raw.expand(y.size, -1), torch.as_tensor(y)) * torch.as_tensor(w)).sum()
    (grad,) = torch.autograd.grad(loss, raw)
    assert grad.abs().max().item() < 1e-6


@pytest.mark.parametrize("name", ["gamma", "studentt", "weibull", "censored_lognormal",
                                  "negative_binomial"])
def test_subsampled_start_reaches_the_full_data_optimum(name, monkeypatch):
    """Above ``2 * SUBSAMPLE_ROWS`` rows the search starts from a subsample's MLE polished by
    Newton steps: the same optimum as the search over every row from the start values."""
    from distboost.families.numerics import mle as _mle

    if name == "censored_lognormal":  # right-censored: (n, 2) bounds
        family = db.families.get(name)
        rng = np.random.default_rng(3)
        t, c = rng.lognormal(1.0, 0.8, size=6_000), rng.lognormal(1.3, 0.5, size=6_000)
        y = db.censored.right(np.minimum(t, c), t <= c)
    else:
        family = _family(name)
        y = np.asarray(_draws(name, _cases(name)[0], 6_000, seed=3), dtype=np.float64)
    w = np.random.default_rng(1).uniform(0.5, 1.5, size=len(y))
    w = w / w.sum()
    start = family.start_values(y, w)
    monkeypatch.setattr(_mle, "SUBSAMPLE_ROWS", 500)
    sub = numerical_mle(family, y, w, start)
    monkeypatch.setattr(_mle, "SUBSAMPLE_ROWS", 10**9)
    full = numerical_mle(family, y, w, start)
    for k in full:
        assert sub[k] == pytest.approx(full[k], rel=1e-6, abs=1e-9), (k, sub, full)
    fun = _mle._objective(family, y, w)
    assert np.max(np.abs(fun(np.asarray(family.raw_from_params(sub), dtype=float)
                            .reshape(-1))[1])) < 1e-7


@pytest.mark.parametrize("name", FAMILIES)
def test_mle_objective_at_one_row_of_parameters_equals_the_per_row_chain_rule(name):
    """The search evaluates a family's closed form at one row of parameters broadcast over
    the targets: the same weighted NLL and gradient as the per-row chain rule the engine
    uses (``raw_nll_grad`` on the expanded scores), or autograd without a closed form."""
    from distboost.families.numerics import mle as _mle
    from distboost.families.numerics.likelihood import raw_nll_grad

    family = _family(name)
    y = np.asarray(_draws(name, _cases(name)[0], 400, seed=5), dtype=np.float64)
    w = np.random.default_rng(2).uniform(0.5, 1.5, size=len(y))
    w = w / w.sum()
    theta = np.asarray(family.raw_from_params(family.init(y, w)),
                       dtype=np.float64).reshape(-1) + 0.1
    loss, grad = _mle._objective(family, y, w)(theta)
    raw = torch.as_tensor(theta).reshape(1, -1).expand(len(y), -1)
    yt = torch.as_tensor(y)
    out = (raw_nll_grad(family, family.score_formula, raw, yt)
           if family.score_formula is not None else None)
    if out is None:  # autograd of the family's nll
        raw = raw.clone().requires_grad_(True)
        per_row = family.nll(raw, yt)
        (g,) = torch.autograd.grad(per_row.sum(), raw)
        out = (per_row.detach(), g)
    w_t = torch.as_tensor(w)
    np.testing.assert_allclose(loss, float(out[0] @ w_t), rtol=1e-12)
    np.testing.assert_allclose(grad, (w_t @ out[1]).numpy(), rtol=1e-10, atol=1e-13)


def test_numerical_mle_keeps_a_start_better_than_a_failed_optimum():
    """A start value whose loss is finite is never replaced by a worse or non-finite point."""
    fam = db.families.get("weibull")
    y = _draws("weibull", _cases("weibull")[0], 500, seed=4)
    w = np.full(y.size, 1.0 / y.size)
    start = fam.start_values(y, w)
    fit = numerical_mle(fam, y, w, start)
    params = _tensors(fam, fit, y.size)
    ours = fam.log_prob(params, torch.as_tensor(y)).mean().item()
    at_start = fam.log_prob(_tensors(fam, start, y.size), torch.as_tensor(y)).mean().item()
    assert ours >= at_start
    assert ours >= scipy_law("weibull", _cases("weibull")[0]).logpdf(y).mean() - 1e-9


def test_every_family_is_covered():
    assert {f for f, _ in PAIRS} == set(FAMILIES)


@pytest.mark.slow  # 4 s: a fresh interpreter
def test_read_only_targets_raise_no_torch_warning():
    # torch warns once per process that it "does not support non-writable tensors" when
    # given a read-only array (a pandas copy-on-write view): a fresh interpreter with
    # warnings as errors sees the first such warning, wherever the init comes from.
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import numpy as np, distboost as db\n"
        "y = np.random.default_rng(0).gamma(3.0, 50.0, 300); y.setflags(write=False)\n"
        "w = np.full(300, 1 / 300); w.setflags(write=False)\n"
        "for name in ['gamma', 'weibull', 'studentt', 'negative_binomial', 'lognormal']:\n"
        "    f = db.families.get(name)\n"
        "    f.init(np.round(y) if name == 'negative_binomial' else y)\n"
        "from distboost.families.numerics.mle import numerical_mle\n"
        "f = db.families.get('gamma')\n"
        "numerical_mle(f, y, w, {'concentration': 1.0, 'rate': 0.01})\n"
    )
    root = Path(__file__).resolve().parents[3]
    res = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code],
                         capture_output=True, text=True, cwd=root,
                         env={"PYTHONPATH": str(root), "OMP_NUM_THREADS": "1", "PATH": ""})
    assert res.returncode == 0, res.stderr[-2000:]
