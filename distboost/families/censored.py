"""Censored variants of the continuous families: ``censored_<name>``.

A censored target is an ``(n, 2)`` array of bounds ``[lower, upper]``: equal bounds are an exact
observation, ``upper = inf`` (or the top of the support) a right-censored one, ``lower = -inf``
(or the bottom of the support) a left-censored one, anything else interval-censored.  The
likelihood of a row is ``f(y)`` when exact and ``F(upper) - F(lower)`` otherwise, computed in
log space from each family's ``log_cdf`` / ``log_sf`` (``log(F(u) - F(l)) = log S(l) +
log(1 - exp(log S(u) - log S(l)))`` in the upper half, the mirror form in the lower half), so that
an observation censored 40 standard deviations into a tail keeps a finite loss and gradient.

Each row type is evaluated only on its own rows (boolean-mask indexing, vectorised), so an
unused branch can never leak a NaN into the gradient.  Predictions describe the latent,
uncensored variable: distribution functions delegate to the wrapped family.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .base import Family, _normalise_weights
from .numerics import likelihood as _scores
from .numerics.special import remembered
from .registry import available, get, register_prefix, register_wrapper
from .wrapper import Wrapped

__all__ = ["Censored", "censorable_names"]  # and CENSORABLE, derived on access


def censorable_names() -> tuple[str, ...]:
    """Registered families with a censored twin (``Family.censorable``), sorted."""
    return tuple(n for n in available() if get(n).censorable)


def __getattr__(name: str):
    # ``CENSORABLE`` is derived from the families' own ``censorable`` flag, when asked for
    # (at import time of this module not every family is registered yet).
    if name == "CENSORABLE":
        return censorable_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _log1mexp(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x < 0``, accurate everywhere (Maechler 2012)."""
    return torch.where(x > -math.log(2.0), torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


class Censored(Wrapped):
    """The censored version of a continuous family (targets are ``(n, 2)`` bounds).

    Parameters
    ----------
    family : str or Family
        The latent family (a ``censorable`` one, or a user family with differentiable
        ``log_cdf`` and ``log_sf``).
    links : dict of str to str, optional
        Link overrides of the latent family.
    """

    kind = "censored"
    prefix = "censored_"

    def __init__(self, family, links=None):
        inner = self._wrap(family, links)
        if inner.discrete:
            raise ValueError(f"Family {inner.name!r} is discrete: it has no censored variant.")

    def __repr__(self) -> str:
        return f"Censored({self.inner!r})"

    # The latent law: every distribution function is the wrapped family's.
    def distribution(self, params):
        return self.inner.distribution(params)

    def log_prob(self, params, y):
        return self.inner.log_prob(params, y)

    def cdf(self, params, y):
        return self.inner.cdf(params, y)

    def icdf(self, params, q):
        return self.inner.icdf(params, q)

    def log_cdf(self, params, y):
        return self.inner.log_cdf(params, y)

    def log_sf(self, params, y):
        return self.inner.log_sf(params, y)

    def mean(self, params):
        return self.inner.mean(params)

    def variance(self, params):
        return self.inner.variance(params)

    def sample(self, params, m, seed):
        return self.inner.sample(params, m, seed)

    def fisher_natural(self, params):
        # The uncensored information: a positive curvature for the Fisher step (censoring
        # only lowers the information; the exact censored information has no closed form).
        return self.inner.fisher_natural(params)

    def fisher_information(self, raw):
        return self.inner.fisher_information(raw)

    def param_floors(self, y):
        y = np.asarray(y, dtype=np.float64)
        return self.inner.param_floors(_midpoints(y) if y.ndim == 2 else y)

    # ------------------------------------------------------------------ targets
    def row_types(self, y: np.ndarray) -> dict[str, np.ndarray]:
        """Boolean masks ``exact``, ``right``, ``left``, ``interval`` of an (n, 2) target."""
        lo, hi = y[:, 0], y[:, 1]
        s = self.support
        left_open = lo <= s.low if np.isfinite(s.low) else np.isneginf(lo)
        right_open = hi >= s.high if np.isfinite(s.high) else np.isposinf(hi)
        exact = lo == hi
        return {
            "exact": exact,
            "right": ~exact & right_open & ~left_open,
            "left": ~exact & left_open & ~right_open,
            "interval": ~exact & ~left_open & ~right_open,
            "uninformative": ~exact & left_open & right_open,
        }

    def validate_y(self, y) -> np.ndarray:
        """Check ``(n, 2)`` bounds: no NaN, ``lower <= upper``, bounds inside the support.

        Raises
        ------
        ValueError
            Naming the family, the problem and how many rows have it.
        """
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 2 or y.shape[1] != 2:
            raise ValueError(
                f"Family {self.name!r} expects an (n, 2) array of [lower, upper] bounds, got "
                f"shape {y.shape}; build it with db.censored.right(time, event), "
                "db.censored.left(...) or db.censored.interval(lower, upper)."
            )
        n = y.shape[0]
        nan = np.isnan(y).any(axis=1)
        if nan.any():
            raise ValueError(f"Censored target has {int(nan.sum())} of {n} rows with NaN bounds.")
        bad = y[:, 0] > y[:, 1]
        if bad.any():
            raise ValueError(
                f"Censored target has {int(bad.sum())} of {n} rows with lower > upper."
            )
        s = self.support
        lo, hi = y[:, 0], y[:, 1]
        exact = lo == hi
        outside = exact & ~s.contains(lo)
        if np.isfinite(s.low):
            outside |= ~exact & (lo < s.low) & np.isfinite(lo)
            outside |= ~exact & (hi <= s.low)
        if np.isfinite(s.high):
            outside |= ~exact & (hi > s.high) & np.isfinite(hi)
            outside |= ~exact & (lo >= s.high)
        outside |= np.isposinf(lo) | np.isneginf(hi)
        if outside.any():
            raise ValueError(
                f"Censored target has {int(outside.sum())} of {n} rows with bounds outside the "
                f"support {s} of family {self.inner.name!r}."
            )
        return y

    # ------------------------------------------------------------------ likelihood
    def nll(self, raw: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-row censored negative log-likelihood, shape (n,), differentiable in ``raw``."""
        params = self.params_from_raw(raw)
        y = torch.as_tensor(y, dtype=torch.float64)
        types = self.row_types(y.detach().cpu().numpy())
        out = torch.zeros(y.shape[0], dtype=torch.float64, device=y.device)
        for kind, mask in types.items():
            if kind == "uninformative" or not mask.any():
                continue
            idx = torch.from_numpy(np.flatnonzero(mask)).to(y.device)
            p = {k: v[idx] for k, v in params.items()}
            lo, hi = y[idx, 0], y[idx, 1]
            if kind == "exact":
                ll = self.inner.log_prob(p, lo)
            elif kind == "right":
                ll = self.inner.log_sf(p, lo)
            elif kind == "left":
                ll = self.inner.log_cdf(p, hi)
            else:
                ll = self._log_interval(p, lo, hi)
            out = out.index_put((idx,), -ll)
        return out

    def raw_derivatives(self, raw, y, floor=None):
        """The latent family's closed form on the exact rows, its closed-form tails on the
        right- and left-censored rows (``sf_formula`` / ``cdf_formula``,
        :mod:`distboost.families.numerics.tails`), autograd of :meth:`nll` on the other censored
        rows only, and the latent Fisher information (as :meth:`fisher_information`) on all; None
        when the latent family has no closed form.  A target without censored rows costs
        what the latent family's does; each censored row without a closed-form tail costs
        what it costs on the autograd path.

        Parameters
        ----------
        raw : Tensor of shape (n, K)
        y : Tensor of shape (n, 2)
            The bounds.
        floor : Tensor of shape (K,), optional
        """
        y = torch.as_tensor(y, dtype=torch.float64)
        s = self.support
        # What depends on the bounds alone, the same every round of a fit: remembered.
        stand_in, censored, tails, others = remembered(
            y, f"censored rows {s.low} {s.high}", self._row_plan)
        fast = self.inner.raw_derivatives(raw, stand_in, floor)
        if fast is None or not censored:
            return fast
        nll, grad, fisher = fast
        nll, grad = nll.clone(), grad.clone()
        rest = [others]
        for name, idx, bound in tails:
            formula = getattr(self.inner, name, None)
            out = None if formula is None else _scores.raw_nll_grad(
                self.inner, formula, _scores.floored(raw[idx], floor), bound)
            if out is None:  # no closed-form tail, or a link without one: autograd below
                rest.append(idx)
                continue
            nll[idx] = out[0]
            grad[idx] = _scores.below_floor(out[1], raw[idx], floor)
        idx = torch.cat(rest)
        if idx.numel():
            with torch.enable_grad():
                r = raw[idx].detach().clone().requires_grad_(True)
                low = r if floor is None else torch.clamp(r, min=floor.to(r.dtype))
                part = self.nll(low, y[idx])
                (g,) = torch.autograd.grad(part.sum(), r)
            nll[idx] = part.detach()
            grad[idx] = g
        return nll, grad, fisher

    def _row_plan(self, y):
        """``(stand_in, censored, tails, others)`` of (n, 2) bounds: the values where the
        latent closed form is evaluated (the exact value, else :meth:`_stand_in`), whether any
        row is censored, ``(formula attribute, row indices, bound)`` of the right-censored rows
        (``sf_formula`` at the lower bound) and of the left-censored ones (``cdf_formula`` at
        the upper bound), as :meth:`row_types` counts them, and the indices of the others
        (interval-censored, uninformative)."""
        lo, hi = y[:, 0], y[:, 1]
        types = {k: torch.from_numpy(v).to(y.device)
                 for k, v in self.row_types(y.cpu().numpy()).items()}
        exact = types["exact"]
        tails = []
        for name, kind, bound in (("sf_formula", "right", lo), ("cdf_formula", "left", hi)):
            idx = torch.nonzero(types[kind])[:, 0]
            if idx.numel():
                tails.append((name, idx, bound[idx]))
        others = torch.nonzero(types["interval"] | types["uninformative"])[:, 0]
        return (torch.where(exact, lo, self._stand_in(lo, hi)), bool((~exact).any()), tails,
                others)

    def _stand_in(self, lo, hi):
        """A value inside the support per row (a finite bound inside it, else an interior
        point): where the exact-row formula is evaluated, then discarded, on censored rows."""
        s = self.support
        inside_lo = torch.isfinite(lo) & (lo > s.low) & (lo < s.high)
        inside_hi = torch.isfinite(hi) & (hi > s.low) & (hi < s.high)
        if math.isfinite(s.low) and math.isfinite(s.high):
            mid = 0.5 * (s.low + s.high)
        elif math.isfinite(s.low):
            mid = s.low + 1.0
        elif math.isfinite(s.high):
            mid = s.high - 1.0
        else:
            mid = 0.0
        return torch.where(inside_lo, lo, torch.where(inside_hi, hi, torch.full_like(lo, mid)))

    def _log_interval(self, p, lo, hi):
        return log_interval_probability(self.inner, p, lo, hi)

    # ------------------------------------------------------------------ start values
    def start_values(self, y, w):
        return self.inner.start_values(_midpoints(y), w)

    def init(self, y, sample_weight=None) -> dict[str, float]:
        """Weighted MLE of the marginal censored likelihood (numerical, L-BFGS)."""
        from .numerics.mle import numerical_mle

        y = self.validate_y(y)
        w = _normalise_weights(sample_weight, y.shape[0])
        return numerical_mle(self, y, w, self.start_values)


def log_interval_probability(family, p, lo, hi) -> torch.Tensor:
    """``log(F(hi) - F(lo))`` for finite ``lo < hi``, in whichever tail keeps its precision."""
    ls_lo, ls_hi = family.log_sf(p, lo), family.log_sf(p, hi)
    lc_lo, lc_hi = family.log_cdf(p, lo), family.log_cdf(p, hi)
    upper = ls_lo < math.log(0.5)  # F(lo) > 1/2: work with survival probabilities
    up = ls_lo + _log1mexp(torch.minimum(ls_hi - ls_lo, torch.full_like(ls_lo, -1e-300)))
    down = lc_hi + _log1mexp(torch.minimum(lc_lo - lc_hi, torch.full_like(lc_hi, -1e-300)))
    return torch.where(upper, up, down)


def _midpoints(y: np.ndarray) -> np.ndarray:
    """A finite stand-in value per row for start values: the bound(s) that are finite."""
    lo, hi = y[:, 0], y[:, 1]
    both = np.isfinite(lo) & np.isfinite(hi)
    mid = np.where(both, 0.5 * (lo + hi), np.where(np.isfinite(lo), lo, hi))
    return np.where(np.isfinite(mid), mid, 0.0)


def _censored_factory(inner: Family) -> Family:
    if not inner.censorable:
        raise ValueError(
            f"Family {inner.name!r} has no censored variant; censored families exist for "
            f"{list(censorable_names())}."
        )
    return Censored(inner)


register_prefix("censored_", _censored_factory)
register_wrapper("censored", Censored)
