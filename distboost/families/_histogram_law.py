"""The torch ``Distribution`` of a batch of histogram laws (``families/histogram.py``), and
the moments of the law's categories."""

from __future__ import annotations

import torch
from torch.distributions import Distribution, constraints

from .base import Family


class HistogramLaw(Distribution):
    """The torch object of a batch of histogram laws (``Predictive.to_torch``): log_prob,
    cdf, icdf, sample, mean and variance delegate to the family."""

    arg_constraints: dict = {}
    support = constraints.real

    def __init__(self, family: Family, params, validate_args=None):
        self.family, self.params = family, dict(params)
        for k, v in self.params.items():  # loc, scale, coef_j as attributes, as in torch
            setattr(self, k, v)
        n = next(iter(self.params.values())).shape
        super().__init__(batch_shape=n, validate_args=False)

    def log_prob(self, value):
        return self.family.log_prob(self.params, value)

    def cdf(self, value):
        return self.family.cdf(self.params, value)

    def icdf(self, value):
        return self.family.icdf(self.params, value)

    @property
    def mean(self):
        return self.family.mean(self.params)

    @property
    def variance(self):
        return self.family.variance(self.params)

    def sample(self, sample_shape=()):
        u = torch.rand(torch.Size(sample_shape) + self.batch_shape, dtype=torch.float64)
        return self.family.icdf(self.params, u.clamp(1e-300, 1.0))


def category_moments(t: dict, discrete: bool) -> dict:
    """Mean, variance and ``E|X - X'|`` of every category, shape (C,) each, from the layout's
    tensors ``t`` (``Histogram._t``): uniform inside an inner bin (over its integers when
    ``discrete``), a truncated exponential (geometric) in a tail."""
    lo, hi, a, s, length, kind = (t["lo"], t["hi"], t["anchor"], t["scale"], t["length"],
                                  t["kind"])
    inf = torch.isinf(length)
    if discrete:
        m = hi - lo + 1.0
        mu_in, var_in, d_in = 0.5 * (lo + hi), (m * m - 1.0) / 12.0, (m * m - 1.0) / (3 * m)
        rho = s / (1.0 + s)
        rl = torch.where(inf, torch.zeros_like(rho), rho ** (length + 1.0))
        q = 1.0 - rl
        lrl = torch.where(inf, torch.zeros_like(rho), (length + 1.0) * rl)
        et = rho / (1 - rho) - lrl / q
        lf = torch.where(inf, torch.zeros_like(s), length)
        s2 = rho * (1 + rho - (lf + 1) ** 2 * rho ** lf * torch.where(inf, 0.0, 1.0)
                    + torch.where(inf, 0.0, (2 * lf * lf + 2 * lf - 1)) * rl
                    - torch.where(inf, 0.0, lf * lf * rho) * rl) / (1 - rho) ** 3
        et2 = (1 - rho) * s2 / q
        r1 = rho * q / (1 - rho)
        r2 = rho * rho * (1 - rl * rl) / (1 - rho * rho)
        d_t = 2 * (-lrl + r1 * (1 + rl) - r2) / (q * q)
    else:
        w = hi - lo
        mu_in, var_in, d_in = 0.5 * (lo + hi), w * w / 12.0, w / 3.0
        e = torch.exp(-length / s)
        k = -torch.expm1(-length / s)
        le = torch.where(inf, torch.zeros_like(s), length * e)
        et = s - le / k
        l2e = torch.where(inf, torch.zeros_like(s), length * length * e)
        et2 = (2 * s * s - l2e - 2 * s * le - 2 * s * s * e) / k
        d_t = (2 * s * k - s * k * k - 2 * le) / (k * k)
    tail = kind != 0
    sign = kind.to(torch.float64)
    mu = torch.where(tail, a + sign * et, mu_in)
    var = torch.where(tail, et2 - et * et, var_in)  # about the category's own mean
    dd = torch.where(tail, d_t, d_in)
    keep = t["present"]
    zero = torch.zeros_like(mu)
    return {"mu": torch.where(keep, mu, zero), "var": torch.where(keep, var, zero),
            "dd": torch.where(keep, dd, zero)}
