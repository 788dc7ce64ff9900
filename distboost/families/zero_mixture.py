"""A point mass at zero mixed with a base family: the shared core of the zero-inflated and the
zero-adjusted families.

With ``g = gate`` and a base law ``G`` on ``y >= 0`` (parameters ``theta``), the law is
``F = g delta_0 + (1 - g) G``:

* **zero-inflated** (:mod:`.zero_inflated`, a count base): a zero comes from the point mass or
  from ``G``, ``P(0) = g + (1 - g) G(0)`` (Lambert 1992; Pyro's ``ZeroInflatedPoisson``);
* **zero-adjusted** (:mod:`.zero_adjusted`, a continuous base on ``y > 0``, GAMLSS's ZAGA /
  ZALN; a hurdle model): every zero is the point mass, ``P(0) = g``, and ``y > 0`` has the
  density ``(1 - g) g_G(y)``.  The likelihood mixes a probability (zeros) and a density
  (positive rows), so it is on neither scale alone: :func:`distboost.compare_families` ranks
  these families by CRPS against others.

Closed forms shared by both:

* cdf ``g + (1 - g) G(y)`` for ``y >= 0``; quantile ``0`` for ``q <= g``, else
  ``G^{-1}((q - g) / (1 - g))``; mean ``(1 - g) mu``; variance ``(1 - g)(sigma^2 + g mu^2)``.
* CRPS ``g y + (1 - g) CRPS_G(y) - g (1 - g) CRPS_G(0)`` for ``y >= 0``: from
  ``CRPS = E|X - y| - E|X - X'| / 2`` with ``E_G|X| = mu = CRPS_G(0) + E_G|X - X'| / 2``.
  Closed form (and differentiable) whenever the base's is.
* Fisher information: zero-adjusted, block diagonal ``(1 - g) I_G(theta)`` and
  ``1 / (g (1 - g))``; zero-inflated, with ``q0 = G(0)``, ``s0 = d log q0 / d theta``,
  ``p0 = g + (1 - g) q0``:
  ``I_tt = (1 - g)^2 q0^2 s0 s0^T / p0 + (1 - g)(I_G - q0 s0 s0^T)``,
  ``I_tg = q0 s0 [(1 - g)(1 - q0) / p0 + 1]``, ``I_gg = (1 - q0)^2 / p0 + (1 - q0) / (1 - g)``
  (the Poisson case is Lambert 1992, sec. 2; derived from ``E[s s^T]`` split at ``y = 0``).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributions import Distribution, constraints

from ..links import RAW_BOUND
from .base import Family, _normalise_weights, as_float64_tensor, refuse_all_zero

__all__ = ["ZeroMixture", "ZeroMixtureDistribution", "zero_mixture_crps", "GATE_FLOOR",
           "INFLATED_GATE_FLOOR"]

#: The start value of ``gate`` is kept inside ``[GATE_FLOOR, 1 - GATE_FLOOR]`` (no zeros, or
#: only zeros, would put its logit at infinity).
GATE_FLOOR = 1e-6
#: Lower bound of ``gate`` while boosting a zero-inflated family (:meth:`ZeroMixture.param_floors`).
INFLATED_GATE_FLOOR = 1e-2


class ZeroMixtureDistribution(Distribution):
    """``gate * delta_0 + (1 - gate) * base``, a torch distribution (batch shape of ``gate``).

    ``log_prob``, ``sample``, ``mean`` and ``variance``; ``inflated`` says whether the base
    itself puts mass at zero (zero-inflated) or not (zero-adjusted)."""

    arg_constraints = {"gate": constraints.unit_interval}
    has_rsample = False

    def __init__(self, base: Distribution, gate: torch.Tensor, inflated: bool,
                 validate_args=None):
        self.base, self.gate, self.inflated = base, gate, inflated
        super().__init__(gate.shape, validate_args=False)

    @property
    def support(self):
        return constraints.nonnegative_integer if self.inflated else constraints.nonnegative

    def __getattr__(self, name):
        # The base law's parameters (``rate``, ``total_count``, ``loc``, ...) read through.
        if name in ("base", "gate", "inflated") or name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.gate.dtype)
        log_g, log_1mg = torch.log(self.gate), torch.log1p(-self.gate)
        zero = value == 0
        safe = torch.where(zero, torch.ones_like(value), value)
        pos = log_1mg + self.base.log_prob(safe)
        if self.inflated:
            at_zero = torch.logaddexp(log_g, log_1mg + self.base.log_prob(torch.zeros_like(value)))
        else:
            at_zero = log_g.expand_as(pos)
        return torch.where(zero, at_zero, pos)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            x = self.base.sample(sample_shape)
            u = torch.rand(x.shape, dtype=self.gate.dtype)
            return torch.where(u < self.gate, torch.zeros_like(x), x)

    @property
    def mean(self):
        return (1.0 - self.gate) * self.base.mean

    @property
    def variance(self):
        g, mu = self.gate, self.base.mean
        return (1.0 - g) * (self.base.variance + g * mu * mu)


def zero_mixture_crps(base_formula):
    """The closed-form CRPS ``f(y, *theta, gate)`` of ``g delta_0 + (1 - g) G`` from the
    base's ``base_formula(y, *theta)``: ``g |y| + (1 - g) CRPS_G(y) - g (1 - g) CRPS_G(0)``
    (derivation in the module docstring; valid for ``y >= 0`` and, as an integral of
    ``(F - 1{x >= y})^2``, for ``y < 0`` too: both terms then add ``|y|``)."""

    def crps(y, *params):
        *theta, gate = params
        y = torch.as_tensor(y, dtype=torch.float64)
        at_y = base_formula(y, *theta)
        at_zero = base_formula(torch.zeros_like(y), *theta)
        return gate * y.abs() + (1.0 - gate) * at_y - gate * (1.0 - gate) * at_zero

    crps.__doc__ = (f"CRPS of ``gate * delta_0 + (1 - gate) * G`` with G's closed form "
                    f"{getattr(base_formula, '__name__', 'base')} (see "
                    ":func:`distboost.families.zero_mixture.zero_mixture_crps`).")
    return crps


class ZeroMixture(Family):
    """Base class of the zero-inflated and zero-adjusted families (not registered).

    A subclass sets ``base_family`` (a :class:`Family` subclass for ``y >= 0``), ``name``,
    ``param_names = base.param_names + ("gate",)``, ``default_links`` (the base's plus
    ``gate: sigmoid``), ``support``, ``discrete``, ``inflated`` and, when the base has a
    closed-form CRPS, ``crps_formula = staticmethod(zero_mixture_crps(base formula))``.
    """

    base_family: type[Family] = Family
    #: True: the base puts mass at zero too (zero-inflated); False: zero-adjusted (hurdle).
    inflated: bool = True

    def __init__(self, links=None):
        super().__init__(links)
        self.base = self.base_family({p: self.links[p] for p in self.base_family.param_names})

    def with_links(self, links):
        """A copy with some links replaced, its base law's too (the closed-form derivatives
        go through the base's links)."""
        new = super().with_links(links)
        new.base = new.base_family({p: new.links[p] for p in new.base_family.param_names})
        return new

    @property
    def base_names(self) -> tuple[str, ...]:
        return self.param_names[:-1]

    def _split(self, params):
        return {p: params[p] for p in self.base_names}, params["gate"]

    def distribution(self, params):
        theta, gate = self._split(params)
        return ZeroMixtureDistribution(self.base.distribution(theta), gate, self.inflated)

    # ------------------------------------------------------------------ likelihood
    def _log_prob(self, theta, log_g, log_1mg, y):
        y = as_float64_tensor(y)
        zero = y == 0
        safe = torch.where(zero, torch.ones_like(y), y)
        pos = log_1mg + self.base.log_prob(theta, safe)
        if self.inflated:
            at_zero = torch.logaddexp(log_g + torch.zeros_like(pos),
                                      log_1mg + self.base.log_prob(theta, torch.zeros_like(y)))
        else:
            at_zero = log_g + torch.zeros_like(pos)
        return torch.where(zero, at_zero, pos)

    def log_prob(self, params, y):
        theta, g = self._split(params)
        return self._log_prob(theta, torch.log(g), torch.log1p(-g), y)

    def nll(self, raw, y):
        """With the default sigmoid link of ``gate``, ``log g`` and ``log(1 - g)`` come from
        the raw score by ``logsigmoid`` (no ``1 - g`` rounded to 0 as ``g -> 1``)."""
        if self.links["gate"].name != "sigmoid":
            return super().nll(raw, y)
        k = self.n_params - 1
        theta = {p: self.links[p].forward(raw[:, j]) for j, p in enumerate(self.base_names)}
        b = raw[:, k].clamp(-RAW_BOUND, RAW_BOUND)
        return -self._log_prob(theta, F.logsigmoid(b), F.logsigmoid(-b), y)

    def raw_derivatives(self, raw, y, floor=None):
        """Closed form from the base's (:attr:`Family.score_formula`) with the sigmoid link
        of ``gate`` (:func:`distboost.families.numerics.likelihood.zero_mixture_raw`); None
        when the base has no formula, a link has no closed form, or the Fisher information
        none."""
        from .numerics import likelihood as scores

        formula = self.base.score_formula
        if formula is None or self.links["gate"].name != "sigmoid":
            return None
        r = scores.floored(raw, floor)
        theta_raw = r[:, :-1]
        if any(self.base.links[p].name not in scores.CLOSED_FORM_LINKS
               for p in self.base_names):
            return None
        fisher = self.fisher_information(r)
        if fisher is None:
            return None
        nll, grad = scores.zero_mixture_raw(
            lambda v: scores.raw_nll_grad(self.base, formula, theta_raw, v), r[:, -1], y,
            self.inflated)
        return nll, scores.below_floor(grad, raw, floor), fisher

    # ------------------------------------------------------------------ distribution functions
    def cdf(self, params, y):
        theta, g = self._split(params)
        y = as_float64_tensor(y)
        out = g + (1.0 - g) * self.base.cdf(theta, y.clamp_min(0.0))
        return torch.where(y < 0, torch.zeros_like(out), out)

    def log_cdf(self, params, y):
        return torch.log(self.cdf(params, y))

    def log_sf(self, params, y):
        theta, g = self._split(params)
        y = as_float64_tensor(y)
        out = torch.log1p(-g) + self.base.log_sf(theta, y.clamp_min(0.0))
        return torch.where(y < 0, torch.zeros_like(out), out)

    def icdf(self, params, q):
        """``0`` for ``q <= gate``, else the base's quantile of ``(q - gate) / (1 - gate)``:
        the smallest ``y`` with ``F(y) >= q``."""
        theta, g = self._split(params)
        q = as_float64_tensor(q)
        inner = ((q - g) / (1.0 - g)).clamp(0.0, 1.0)
        x = self.base.icdf(theta, inner)
        x = torch.where(q <= g, torch.zeros_like(x), x)
        return torch.where(q >= 1.0, torch.full_like(x, self.support.high), x)

    def mean(self, params):
        theta, g = self._split(params)
        return (1.0 - g) * self.base.mean(theta)

    def variance(self, params):
        theta, g = self._split(params)
        mu = self.base.mean(theta)
        return (1.0 - g) * (self.base.variance(theta) + g * mu * mu)

    def sample(self, params, m, seed):
        theta, g = self._split(params)
        x = self.base.sample(theta, m, seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed((int(seed) * 7919 + 1) % (2**63 - 1))
            u = torch.rand(x.shape, dtype=torch.float64)
        return torch.where(u < g, torch.zeros_like(x), x)

    # ------------------------------------------------------------------ Fisher information
    def fisher_natural(self, params):
        """Closed form (module docstring), shape (n, K, K); None when the base has none.

        Returned as the (n, K, K) view of a contiguous (K, K, n) tensor (the layout of
        :func:`~distboost.families.numerics.information.info_matrix`), each entry computed as one
        vector.  The zero-inflated block ``I_tt`` is written ``(1 - g) I_G - c s0 s0^T``
        with ``c = g (1 - g) q0 / p0`` (the module docstring's two ``s0 s0^T`` terms
        gathered: no cancellation)."""
        theta, g = self._split(params)
        info = self.base.fisher_natural(theta)
        if info is None:
            return None
        k = info.shape[1]
        n = info.shape[0]
        out = torch.zeros((k + 1, k + 1, n), dtype=torch.float64, device=info.device)
        one_g = 1.0 - g
        if info.dim() == 2:
            for i in range(k):
                torch.mul(one_g, info[:, i], out=out[i, i])
        else:
            for i in range(k):
                for j in range(k):
                    torch.mul(one_g, info[:, i, j], out=out[i, j])
        if not self.inflated:
            out[k, k] = 1.0 / (g * one_g)
            return out.permute(2, 0, 1)
        formula = self.base.score_formula
        if formula is not None:  # the base's closed-form score at 0 (same values as autograd)
            nll0, scores0 = formula(torch.zeros_like(g), *(theta[p] for p in self.base_names))
            log_q0, s0 = -nll0, [-s for s in scores0]
        else:
            with torch.enable_grad():
                leaves = {p: v.detach().clone().requires_grad_(True) for p, v in theta.items()}
                log_q0 = self.base.log_prob(leaves, torch.zeros_like(g))
                s0 = list(torch.autograd.grad(log_q0.sum(), [leaves[p] for p in
                                                             self.base_names]))
        q0 = torch.exp(log_q0.detach())
        p0 = g + one_g * q0
        c = g * one_g * q0 / p0
        for i in range(k):
            cs = c * s0[i]
            for j in range(k):
                out[i, j].addcmul_(cs, s0[j], value=-1.0)
        w = q0 * (one_g * (1.0 - q0) / p0 + 1.0)
        for i in range(k):
            torch.mul(w, s0[i], out=out[i, k])
            out[k, i] = out[i, k]
        out[k, k] = (1.0 - q0) ** 2 / p0 + (1.0 - q0) / one_g
        return out.permute(2, 0, 1)

    # ------------------------------------------------------------------ start values
    def param_floors(self, y):
        """The base's floors (from the positive rows) and, for a zero-inflated family, ``gate
        >= INFLATED_GATE_FLOOR``: as ``gate -> 0`` its information on the logit scale
        vanishes like ``gate^2`` while its gradient vanishes like ``gate``, so a Fisher or
        Newton step on its logit grows like ``1 / gate`` (a leaf's step overshot to gate
        near 1 on data without inflation: the held-out NLL rose from the first round on).
        The floor costs at most ``-log(0.99) = 0.01`` nats per row when there is no
        inflation."""
        y = np.asarray(y, dtype=np.float64)
        pos = y[np.isfinite(y) & (y > 0)]
        floors = dict(self.base.param_floors(pos if pos.size else y))
        if self.inflated:
            floors["gate"] = INFLATED_GATE_FLOOR
        return floors

    def validate_y(self, y) -> np.ndarray:
        """The base's support check, and a target with at least one positive row."""
        return refuse_all_zero(self, super().validate_y(y),
                               "the law of the positive values is not identified")

    def _positive_rows(self, y, w):
        return refuse_all_zero(self, y, "the law of the positive values is not identified") > 0

    def init(self, y, sample_weight=None) -> dict[str, float]:
        """Weighted MLE.  Zero-adjusted: closed form in the gate (the weighted share of zeros)
        and the base's weighted MLE on the positive rows (the likelihood factorises).
        Zero-inflated: EM (Lambert 1992, sec. 2) from the base's fit, then the numerical MLE
        of the full likelihood from there."""
        from .numerics.mle import numerical_mle

        y = self.validate_y(y)
        w = _normalise_weights(sample_weight, y.size)
        pos = self._positive_rows(y, w)
        if not self.inflated:
            gate = float(np.clip(np.sum(w[~pos]), GATE_FLOOR, 1.0 - GATE_FLOOR))
            return {**self.base.init(y[pos], w[pos]), "gate": gate}
        return numerical_mle(self, y, w, self.start_values)

    def start_values(self, y, w):
        """Zero-inflated: up to 20 EM iterations (3 for a base fitted numerically), the base
        refitted by its own weighted MLE with weights ``1 - z`` on zeros (``z`` the posterior
        probability of a structural zero)."""
        zero = y == 0
        theta = self.base.init(y, w)
        gate = float(np.clip(0.5 * np.sum(w[zero]), GATE_FLOOR, 1.0 - GATE_FLOOR))
        if not self.inflated:
            pos = self._positive_rows(y, w)
            return {**self.base.init(y[pos], w[pos]),
                    "gate": float(np.clip(np.sum(w[~pos]), GATE_FLOOR, 1.0 - GATE_FLOOR))}
        if not zero.any():
            return {**theta, "gate": GATE_FLOOR}
        # A base without a closed-form MLE (negative binomial) refits numerically each step:
        # a few steps, then the numerical MLE of the full likelihood finishes.
        for _ in range(20 if self.base.closed_form_mle else 3):
            t = {p: torch.tensor([v], dtype=torch.float64) for p, v in theta.items()}
            q0 = float(torch.exp(self.base.log_prob(t, torch.zeros(1, dtype=torch.float64))))
            z = gate / (gate + (1.0 - gate) * q0)
            new_gate = float(np.clip(z * np.sum(w[zero]), GATE_FLOOR, 1.0 - GATE_FLOOR))
            wt = np.where(zero, w * (1.0 - z), w)
            if not wt.sum() > 0:
                break
            theta = self.base.init(y, wt)
            done = abs(new_gate - gate) < 1e-8
            gate = new_gate
            if done:
                break
        return {**theta, "gate": gate}

