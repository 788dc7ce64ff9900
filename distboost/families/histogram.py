"""``histogram``: a nonparametric family, a density (or mass) on fixed bins of ``y``.

The law is a mixture over ``C`` ordered categories of the ``y`` axis (lower tail, ``B``
inner bins, upper tail; :mod:`distboost.families._histogram_bins`), uniform inside an inner
bin (over its integers for an integer target), exponential (geometric) in a tail, truncated
at the support's bound.  The bins are fixed when the family first reads a training target
(:meth:`Histogram.encode_target`: edges at quantiles of ``y``, the tails' scales from the rows
beyond the outer edges) and saved with it.  The category probabilities are a softmax,

    logit_c(x) = log size_c - (t_c - loc(x))^2 / (2 scale(x)^2) + sum_j coef_j(x) Phi[c, j],

``t_c`` the category's position on the ``y`` axis, ``size_c`` its width (count of integers,
tail normaliser), ``Phi`` (C, J) shape functions: cubic B-splines of the position less their
constant, linear and quadratic parts (a binned log-spline density, Kooperberg & Stone 1991,
around a binned normal).  The model boosts ``J + 2`` ensembles (``loc``, ``scale``,
``coef_0 .. coef_{J-1}``) whatever the number of bins; with the coefficients at 0 the law is
a normal law binned on the categories, so the Normal family's location and spread are
learned the same way and the coefficients add skew, several modes, or the uneven masses of
integer levels.  A law narrower than a bin puts its mass on that bin: the bins bound the
resolution (and the likelihood: no collapse onto a point).

Closed forms (every row at once, ``O(n C K)``): the cdf is piecewise linear (a staircase for
integers, exponential / geometric in the tails) and quantiles invert it exactly; mean and
variance from the categories' moments; the CRPS ``E|X - y| - E|X - X'| / 2`` (Gneiting &
Raftery 2007, eq. 21) from the categories' means, within-category mean absolute deviations
and the ordered pairs ``E|X_c - X_c'| = mu_c' - mu_c`` (disjoint supports), summed with
cumulative sums.  With ``psi_c = d logit_c / d raw``, the gradient of the NLL is
``E_p[psi] - psi_{c(y)}`` and the Fisher information ``Cov_p(psi)`` (``raw_derivatives``);
the default step is the diagonal Fisher one.  The start values are the weighted MLE of the
category frequencies (Fisher scoring).
"""

from __future__ import annotations

import copy
import math
import weakref
from collections.abc import Mapping

import numpy as np
import torch

from ._histogram_bins import Layout, build_layout
from ._histogram_law import HistogramLaw, category_moments
from .base import Family, as_float64_tensor
from .numerics.blocks import by_row_blocks
from .registry import register
from .support import REAL, Support

__all__ = ["Histogram"]

#: ``n_basis="auto"``: shape functions for a continuous and for an integer target.  Test CRPS
#: on UCI splits 0 and 1 (``benchmarks/any_shape.py``'s protocol): concrete 2.99 / 2.40 with 4,
#: 3.34 / 2.52 with 8; wine quality (integers, at most 5 there) 0.281 / 0.296 with 4, 0.270 /
#: 0.286 with 5.
AUTO_BASIS = {False: 4, True: 8}
#: The start's normal factor must stay within this many standard deviations of ``y`` (see
#: :meth:`Histogram.start_values`).
SANE_SCALE = 3.0
_BLOCK = 2048  #: rows per block of the derivatives (:mod:`._blocks`)
#: Each family's layout tensors copied to a GPU (kept out of the family: nothing on a
#: device is pickled with a model).
_DEVICE_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@register
class Histogram(Family):
    """Nonparametric family on fixed bins of ``y`` (module docstring).

    Parameters
    ----------
    n_bins : int, default=64
        Inner bins at most (ties and a short integer range give fewer).
    n_basis : int or "auto", default="auto"
        ``J``, the shape functions and their boosted coefficients ``coef_0 .. coef_{J-1}``
        (beside ``loc`` and ``scale``; at most the categories - 3); "auto": 4 for a continuous
        target, 8 for an integer one (:data:`AUTO_BASIS`).
    low : "auto", float or None, default="auto"
        Lower end of the support: "auto" is 0 when every training ``y`` is non-negative (the
        predictive law then stays non-negative), else unbounded; None is unbounded.
    high : float or None, default=None
        Upper end of the support (None: unbounded).
    discrete : "auto" or bool, default="auto"
        A law on the integers ("auto": when every training ``y`` is an integer).
    edges, tail_scales, knots, degree
        The fitted layout (set by :meth:`encode_target`, saved with the family); None for
        the placeholder that ``get("histogram")`` returns.
    links : dict, optional
        Only the fixed links (``loc`` and ``coef_j`` identity, ``scale`` exp) are accepted.
    """

    name = "histogram"
    reference = "hand-written mixtures of scipy `uniform` / `truncexpon` laws (tests)"
    doc_notes = {
        "parameters": "loc (identity), scale (exp), coef_0 ... coef_{J-1} (identity)",
        "support": ("real; `y >= 0` when every training `y` is; integers when every training "
                    "`y` is one"),
        "crps": "closed form (exact sum of the bins' terms)",
        "fisher": "closed form (`Cov_p` of the logits' derivatives)",
    }
    torch_class = HistogramLaw
    closed_form_mle = True
    dispersion_param = "scale"
    #: ``step="auto"``: the diagonal Fisher step.  On concrete (UCI splits 0 and 1) the
    #: natural step's per-row solves overshot (test CRPS 3.97 and 4.01 against 3.27 and 2.94).
    default_step = "fisher"

    def __init__(self, n_bins: int = 64, n_basis="auto", low="auto", high=None,
                 discrete="auto", edges=None, tail_scales=None, knots=None, degree=None,
                 weights=None, links: Mapping[str, str] | None = None):
        for what, v, least in (("n_bins", n_bins, 1), ("n_basis", n_basis, 0)):
            if what == "n_basis" and v == "auto":
                continue
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < least:
                raise ValueError(f"Family 'histogram' needs {what} >= {least} (an integer); "
                                 f"got {v!r}.")
        if discrete not in ("auto", True, False):
            raise ValueError(f"Family 'histogram': discrete must be 'auto', True or False; "
                             f"got {discrete!r}.")
        for what, v in (("low", low), ("high", high)):
            if v is not None and not (v == "auto" and what == "low") and not (
                    isinstance(v, int | float | np.number) and math.isfinite(v)):
                raise ValueError(f"Family 'histogram': {what} must be a finite number or None"
                                 f"{' or auto' if what == 'low' else ''}; got {v!r}.")
        bad = sorted(p for p, lk in (links or {}).items() if str(getattr(lk, "name", lk))
                     != ("exp" if p == "scale" else "identity"))
        if bad:
            raise ValueError(f"Family 'histogram' has fixed links (loc and the coefficients "
                             f"identity, scale exp); got other links for {bad}.")
        self.n_bins = int(n_bins)
        self.n_basis = n_basis if n_basis == "auto" else int(n_basis)
        self.low = None if low is None else (low if low == "auto" else float(low))
        self.high = None if high is None else float(high)
        self.discrete = discrete
        self.layout = None
        self.links = {}
        if edges is not None:
            self._set_layout(Layout(edges, self.low, self.high, bool(discrete), tail_scales,
                                    knots, degree, weights))

    def _set_layout(self, layout: Layout) -> None:
        from ..links import get_link

        self.layout = lay = layout
        self.discrete = lay.discrete
        self.low, self.high = lay.low, lay.high
        self._param_names = ("loc", "scale") + tuple(f"coef_{j}" for j in range(lay.n_basis))
        self.links = {p: get_link("identity") for p in self._param_names}
        self.links["scale"] = get_link("exp")
        t = {k: torch.as_tensor(getattr(lay, k), dtype=torch.float64)
             for k in ("lo", "hi", "anchor", "scale", "length", "log_size", "phi", "position")}
        t["kind"] = torch.as_tensor(lay.kind)
        t["present"] = torch.as_tensor(lay.present)
        t["cuts"] = torch.as_tensor(lay.edges, dtype=torch.float64)
        phi = t["phi"]
        t["phi_outer"] = (phi[:, :, None] * phi[:, None, :]).reshape(phi.shape[0], -1)
        self._t = t
        self._t.update(category_moments(self._t, self.discrete))

    # ------------------------------------------------------------------ identity
    @property
    def closed_form_crps(self) -> bool:
        return self.layout is not None

    @property
    def cdf_kinks(self) -> torch.Tensor | None:
        """The bin edges, where the cdf of a continuous law has kinks (the numerical CRPS
        splits its panels there); None when discrete or without bins."""
        return None if self.layout is None or self.discrete else self._t["cuts"]

    def _require_layout(self) -> Layout:
        if self.layout is None:
            raise ValueError(
                "Family 'histogram' has no bins yet: fit an estimator (which reads them from "
                "y), or build it with Histogram(...).encode_target(y_train).")
        return self.layout

    @property
    def param_names(self) -> tuple[str, ...]:
        self._require_layout()
        return self._param_names

    @property
    def support(self) -> Support:
        if self.layout is None:
            return REAL
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        return Support(low=low, high=high, low_closed=self.low is not None,
                       high_closed=self.high is not None, integer=self.discrete)

    def __repr__(self) -> str:
        if self.layout is None:
            return f"Histogram(n_bins={self.n_bins}, n_basis={self.n_basis})"
        return (f"Histogram(bins={self.layout.n_bins}, coefs={self.layout.n_basis}, "
                f"discrete={self.discrete}, low={self.low}, high={self.high})")

    def get_params(self) -> dict:
        return {k: v for k, v in self.get_state().items() if k != "name"}

    def get_state(self) -> dict:
        state = {"name": self.name, "n_bins": self.n_bins, "n_basis": self.n_basis,
                 "low": self.low, "high": self.high, "discrete": self.discrete}
        if self.layout is not None:
            lay = self.layout
            state.update(edges=lay.edges.tolist(), tail_scales=list(lay.tail_scales),
                         knots=lay.knots.tolist(), degree=lay.degree,
                         weights=lay.weights.tolist())
        return state

    def with_links(self, links):
        Histogram(links=links)  # refuses anything but identity
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ target
    def encode_target(self, y):
        """Read the bins from the first training target (the placeholder only); later
        targets are returned unchanged (validated against the support afterwards)."""
        if self.layout is not None:
            return y
        values = Family.validate_y(self, np.asarray(y, dtype=np.float64)
                                   if not hasattr(y, "to_numpy") else y.to_numpy(float))
        discrete = (bool(np.all(values == np.floor(values))) if self.discrete == "auto"
                    else bool(self.discrete))
        low = (0.0 if values.min() >= 0 else None) if self.low == "auto" else self.low
        if discrete and any(v is not None and v != math.floor(v) for v in (low, self.high)):
            raise ValueError(f"Family 'histogram' on integers needs integer bounds; got low="
                             f"{low}, high={self.high}.")
        for bound, bad, word in ((low, values < (low if low is not None else -math.inf),
                                  "below low"),
                                 (self.high, values > (self.high if self.high is not None
                                                       else math.inf), "above high")):
            if bad.any():
                raise ValueError(f"Target y has {int(bad.sum())} of {values.size} rows {word}="
                                 f"{bound:g} of family 'histogram'.")
        n_basis = (AUTO_BASIS[discrete] if self.n_basis == "auto" else self.n_basis)
        self._set_layout(build_layout(values, self.n_bins, n_basis, low, self.high, discrete))
        return y

    def validate_y(self, y) -> np.ndarray:
        self._require_layout()
        return super().validate_y(y)

    # ------------------------------------------------------------------ categories
    def _index(self, y: torch.Tensor) -> torch.Tensor:
        """Category of each value (values outside the support get the nearest one)."""
        t = self._tab(y)
        idx = torch.searchsorted(t["cuts"], y.contiguous(), right=True)
        present = t["present"]
        lowest = 0 if bool(present[0]) else 1
        highest = idx.new_tensor(present.numel() - 1 if bool(present[-1]) else
                                 present.numel() - 2)
        return idx.clamp(min=lowest).minimum(highest)

    def _tab(self, like: torch.Tensor) -> dict:
        """The layout's tensors on ``like``'s device (copied once per device: a fit on a
        GPU reads them there)."""
        if like.device.type == "cpu":
            return self._t
        cache = _DEVICE_TABLES.setdefault(self, {})
        if like.device not in cache:
            cache[like.device] = {k: v.to(like.device) for k, v in self._t.items()}
        return cache[like.device]

    def _gather(self, name: str, idx: torch.Tensor) -> torch.Tensor:
        return self._tab(idx)[name][idx]

    def _tail_t(self, y, idx):
        """Distance ``t`` into the row's tail (``kind * (y - anchor)``)."""
        return self._gather("kind", idx).to(torch.float64) * (y - self._gather("anchor", idx))

    # ------------------------------------------------------------------ probabilities
    def _logits(self, params, a=None) -> torch.Tensor:
        """Category logits ``log size_c - a_c^2 / 2 + coef . Phi[c]``, ``a_c = (t_c - loc) /
        scale`` (given or computed), shape (n, C)."""
        lay = self._require_layout()
        t = self._tab(params["loc"])
        if a is None:
            a = (t["position"] - params["loc"][..., None]) / params["scale"][..., None]
        out = t["log_size"] - 0.5 * a * a
        if lay.n_basis:
            coef = torch.stack([params[f"coef_{j}"] for j in range(lay.n_basis)], dim=-1)
            out = out + coef @ t["phi"].T
        return out

    def probs(self, params) -> torch.Tensor:
        """Category probabilities, shape (n, C) (zero for a missing tail)."""
        return torch.softmax(self._logits(params), dim=-1)

    def _rows(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """``table[i, idx[..., i]]`` for a (n, C) table and indices of shape (..., n)."""
        tb, ix = torch.broadcast_tensors(table, idx.unsqueeze(-1))
        return tb.gather(-1, ix[..., :1]).squeeze(-1)

    def _within_log_density(self, y, idx):
        kind = self._gather("kind", idx)
        s, length = self._gather("scale", idx), self._gather("length", idx)
        tt = self._tail_t(y, idx)
        if self.discrete:
            inner = -torch.log(self._gather("hi", idx) - self._gather("lo", idx) + 1.0)
            rho = s / (1 + s)
            q = torch.where(torch.isinf(length), torch.ones_like(s), 1 - rho ** (length + 1))
            tail = torch.log1p(-rho) + tt * torch.log(rho) - torch.log(q)
        else:
            inner = -torch.log(self._gather("hi", idx) - self._gather("lo", idx))
            tail = -torch.log(s) - tt / s - torch.log(-torch.expm1(-length / s))
        return torch.where(kind == 0, inner, tail)

    def log_prob(self, params, y):
        y = as_float64_tensor(y)
        idx = self._index(y)
        logp = torch.log_softmax(self._logits(params), dim=-1)
        return self._rows(logp, idx) + self._within_log_density(y, idx)

    def nll(self, raw, y):
        return -self.log_prob(self.params_from_raw(raw), y)

    def _within_cdf(self, y, idx):
        """``P(X_c <= y)`` for the row's category ``c``."""
        kind = self._gather("kind", idx)
        s, length = self._gather("scale", idx), self._gather("length", idx)
        lo, hi = self._gather("lo", idx), self._gather("hi", idx)
        tt = self._tail_t(y, idx)
        if self.discrete:
            inner = ((torch.floor(y) - lo + 1.0) / (hi - lo + 1.0)).clamp(0.0, 1.0)
            rho = s / (1 + s)
            q = torch.where(torch.isinf(length), torch.ones_like(s), 1 - rho ** (length + 1))
            up = torch.floor(tt)  # upper tail: T <= floor(t)
            dn = torch.ceil(tt) - 1.0  # lower tail: P(X <= y) = 1 - P(T <= ceil(t) - 1)
            g_up = torch.where(up < 0, torch.zeros_like(tt), (1 - rho ** (up + 1)) / q)
            g_dn = torch.where(dn < 0, torch.zeros_like(tt), (1 - rho ** (dn + 1)) / q)
            tail = torch.where(kind > 0, g_up, 1.0 - g_dn.clamp(max=1.0))
        else:
            inner = ((y - lo) / (hi - lo)).clamp(0.0, 1.0)
            g = (-torch.expm1(-tt.clamp(min=0.0) / s) / -torch.expm1(-length / s))
            tail = torch.where(kind > 0, g, 1.0 - g)
        return torch.where(kind == 0, inner, tail).clamp(0.0, 1.0)

    def cdf(self, params, y):
        y = as_float64_tensor(y)
        idx = self._index(y)
        p = self.probs(params)
        below = torch.cumsum(p, dim=-1) - p
        return (self._rows(below, idx) + self._rows(p, idx) * self._within_cdf(y, idx)).clamp(
            0.0, 1.0)

    def icdf(self, params, q):
        """Exact inverse of the cdf (for integers: the smallest ``k`` with ``cdf(k) >= q``)."""
        q = as_float64_tensor(q)
        p = self.probs(params)
        cum = torch.cumsum(p, dim=-1)
        cum_t, q_b = torch.broadcast_tensors(cum, q.unsqueeze(-1))
        qq = q_b[..., 0]
        flat = cum_t.reshape(-1, cum.shape[-1])
        idx = torch.searchsorted(flat.contiguous(), qq.reshape(-1, 1).contiguous()).reshape(
            qq.shape)
        idx = idx.clamp(max=cum.shape[-1] - 1)
        present = self._t["present"]
        idx = torch.where(present[idx], idx, torch.where(idx == 0, idx + 1, idx - 1))
        pc = self._rows(p, idx)
        v = ((qq - (self._rows(cum, idx) - pc)) / pc.clamp_min(1e-300)).clamp(0.0, 1.0)
        x = self._within_icdf(v, idx)
        if self.discrete:  # one guarded step either way against rounding at the category ends
            x = torch.where(self.cdf(params, x - 1.0) >= qq, x - 1.0, x)
            x = torch.where(self.cdf(params, x) < qq, x + 1.0, x)
        return x

    def _within_icdf(self, v, idx):
        kind = self._gather("kind", idx)
        s, length, a = (self._gather("scale", idx), self._gather("length", idx),
                        self._gather("anchor", idx))
        lo, hi = self._gather("lo", idx), self._gather("hi", idx)
        if self.discrete:
            inner = (lo + torch.ceil(v * (hi - lo + 1.0)) - 1.0).clamp(lo, hi)
            rho = s / (1 + s)
            q = torch.where(torch.isinf(length), torch.ones_like(s), 1 - rho ** (length + 1))
            w = torch.where(kind > 0, v, 1.0 - v)  # level of T
            k = torch.ceil(torch.log1p(-w * q) / torch.log(rho) - 1.0 - 1e-9).clamp(min=0.0)
            k = torch.minimum(k, length)
            tail = a + kind.to(torch.float64) * k
        else:
            inner = lo + v * (hi - lo)
            kk = -torch.expm1(-length / s)
            w = torch.where(kind > 0, v, 1.0 - v)
            tt = torch.minimum(-s * torch.log1p(-w * kk), length)
            tail = a + kind.to(torch.float64) * tt
        return torch.where(kind == 0, inner, tail)

    def mean(self, params):
        p = self.probs(params)
        return p @ self._tab(p)["mu"]

    def variance(self, params):
        """``sum_c p_c (var_c + (mu_c - mean)^2)``: centred, so an offset of ``y`` costs no
        digits."""
        p = self.probs(params)
        t = self._tab(p)
        m = p @ t["mu"]
        return (p * (t["var"] + (t["mu"] - m[..., None]) ** 2)).sum(-1)

    def sample(self, params, m, seed):
        gen = torch.Generator().manual_seed(int(seed))
        n = next(iter(params.values())).shape[0]
        u = torch.rand((m, n), generator=gen, dtype=torch.float64).clamp(1e-300, 1.0)
        return self.icdf(params, u)

    def distribution(self, params):
        return HistogramLaw(self, params)

    # ------------------------------------------------------------------ CRPS
    def _within_abs(self, y, idx):
        """``E|X_c - y|`` for the row's category ``c``."""
        kind = self._gather("kind", idx)
        s, length = self._gather("scale", idx), self._gather("length", idx)
        lo, hi = self._gather("lo", idx), self._gather("hi", idx)
        et = self._gather("kind", idx).to(torch.float64) * (
            self._gather("mu", idx) - self._gather("anchor", idx))  # E T
        tt = self._tail_t(y, idx)
        if self.discrete:
            m = hi - lo + 1.0
            fl = torch.floor(y).clamp(lo - 1.0, hi)
            a, b = fl - lo + 1.0, hi - fl
            inner = (a * y - a * (lo + fl) / 2 + b * (fl + 1 + hi) / 2 - b * y) / m
            rho = s / (1 + s)
            q = torch.where(torch.isinf(length), torch.ones_like(s), 1 - rho ** (length + 1))
            lf = torch.where(torch.isinf(length), torch.full_like(s, math.inf), length + 1.0)
            tc = torch.minimum(tt.clamp(min=0.0), lf)
            f = torch.floor(tc)
            cum_g = (f - rho * (1 - rho ** f) / (1 - rho)) / q
            g_f = ((1 - rho ** (f + 1)) / q).clamp(max=1.0)
            h = cum_g + (tc - f) * g_f + (tt - lf).clamp(min=0.0)
        else:
            w = hi - lo
            yc = torch.minimum(torch.maximum(y, lo), hi)
            inner = ((yc - lo) ** 2 + (hi - yc) ** 2) / (2 * w) + (y - yc).abs()
            kk = -torch.expm1(-length / s)
            tc = torch.minimum(tt.clamp(min=0.0), length)
            h = (tc + s * torch.expm1(-tc / s)) / kk + (tt - length).clamp(min=0.0)
        tail = et - tt + 2 * h
        return torch.where(kind == 0, inner, tail)

    def crps(self, params, y):
        """Closed-form CRPS ``sum_c p_c E|X_c - y| - (1/2) E|X - X'|`` (module docstring);
        differentiable in the coefficients."""
        self._require_layout()
        y = as_float64_tensor(y)
        idx = self._index(y)
        p = self.probs(params)
        mu, dd = self._tab(p)["mu"], self._tab(p)["dd"]
        far = (p * (mu - y.unsqueeze(-1)).abs()).sum(-1)
        own = self._rows(p, idx) * (self._within_abs(y, idx) - (self._gather("mu", idx) - y).abs())
        below_p = torch.cumsum(p, dim=-1) - p
        below_m = torch.cumsum(p * mu, dim=-1) - p * mu
        pairs = (p * (mu * below_p - below_m)).sum(-1)
        return far + own - 0.5 * ((p * p * dd).sum(-1) + 2.0 * pairs)

    # ------------------------------------------------------------------ derivatives
    def _score_moments(self, raw):
        """Log-probabilities (n, C), ``(a, c0, c1)``, and the mean (n, K) and covariance (n, K,
        K) under them of the logits' derivatives ``psi_c = d logit_c / d raw``: ``a_c c0``,
        ``a_c^2 c1``, ``Phi[c]`` (``a_c = (t_c - loc) / scale``, ``c0 = loc' / scale``, ``c1 =
        scale' / scale``): their moments are four weighted powers of ``a`` per row."""
        params = self.params_from_raw(raw)
        scale = params["scale"][:, None]
        t = self._tab(raw)
        a = (t["position"] - params["loc"][:, None]) / scale
        logp = torch.log_softmax(self._logits(params, a), dim=-1)
        p = logp.exp()
        c0 = self.links["loc"].derivative(raw[:, 0]) / scale[:, 0]
        c1 = self.links["scale"].derivative(raw[:, 1]) / scale[:, 0]
        pa3 = (pa2 := (pa := p * a) * a) * a
        m1, m2, m3, m4 = pa.sum(-1), pa2.sum(-1), pa3.sum(-1), (pa3 * a).sum(-1)
        k = (j := (phi := t["phi"]).shape[1]) + 2
        both = p @ torch.cat([phi, t["phi_outer"]], dim=1)  # (n, j + j^2)
        mean = torch.cat([(c0 * m1)[:, None], (c1 * m2)[:, None], both[:, :j]], dim=-1)
        second = torch.empty((p.shape[0], k, k), dtype=torch.float64, device=p.device)
        second[:, 0, 0] = c0 * c0 * m2
        second[:, 0, 1] = second[:, 1, 0] = c0 * c1 * m3
        second[:, 1, 1] = c1 * c1 * m4
        if j:
            second[:, 0, 2:] = second[:, 2:, 0] = c0[:, None] * (pa @ phi)
            second[:, 1, 2:] = second[:, 2:, 1] = c1[:, None] * (pa2 @ phi)
            second[:, 2:, 2:] = both[:, j:].reshape(-1, j, j)
        # A ridge of 1e-12 (a law on one category has no spread of psi; natural step solves).
        ridge = 1e-12 * torch.eye(k, dtype=torch.float64, device=p.device)
        return logp, (a, c0, c1), mean, second - mean[:, :, None] * mean[:, None, :] + ridge

    def fisher_information(self, raw):
        """``Cov_p(psi)``, shape (n, K, K), the logits' derivatives ``psi`` (see
        :meth:`_score_moments`): the score of a category is ``psi_c - E_p[psi]``."""
        return self._score_moments(raw)[3]

    def raw_derivatives(self, raw, y, floor=None):
        if raw.shape[0] > _BLOCK:
            return by_row_blocks(self.raw_derivatives, _BLOCK, raw, as_float64_tensor(y), floor)
        below = None
        if floor is not None and bool(torch.isfinite(floor).any()):
            floor = floor.to(raw.device)
            below = raw < floor  # at the floor: the one-sided gradient from above
            raw = torch.maximum(raw, floor)
        logp, (a, c0, c1), mean, cov = self._score_moments(raw)
        y = as_float64_tensor(y)
        idx = self._index(y)
        nll = -(self._rows(logp, idx) + self._within_log_density(y, idx))
        a_own = self._rows(a, idx)
        own = torch.cat([(c0 * a_own)[:, None], (c1 * a_own * a_own)[:, None],
                         self._tab(idx)["phi"][idx]], dim=-1)
        grad = mean - own
        if below is not None:
            grad = torch.where(below, torch.zeros_like(grad), grad)
        return nll, grad, cov

    # ------------------------------------------------------------------ start values
    def start_values(self, y, w):
        """Weighted MLE of the category frequencies (the likelihood depends on ``y`` through
        them only): Fisher scoring with a backtracking line search from the weighted mean and
        standard deviation of the positions and a flat shape (a ridge of ``1e-9`` on the
        shape coefficients keeps them finite when a category is empty).

        When the MLE's normal factor is no longer a bump on the data (``scale`` above
        ``SANE_SCALE`` standard deviations of ``y``, or ``loc`` that far from its mean: a
        bimodal or flat target, whose log-density the normal factor can only tilt), the start
        keeps ``loc`` and ``scale`` at the mean and standard deviation and takes the shape's
        MLE given them: boosting from a core of scale 700 (a linear tilt in disguise) stopped
        after 13 rounds on two modes.
        """
        lay = self._require_layout()
        idx = self._index(torch.from_numpy(np.array(y, dtype=np.float64))).numpy()
        freq = torch.as_tensor(np.bincount(idx, weights=w, minlength=lay.kind.size))
        freq = freq / freq.sum()
        pos = self._t["position"]
        mean = float(freq @ pos)
        sd = max(float(freq @ (pos - mean) ** 2) ** 0.5, 1e-3 * float(pos[-1] - pos[0]))
        raw = torch.zeros((1, self.n_params), dtype=torch.float64)
        raw[0, 0], raw[0, 1] = mean, math.log(sd)
        def sane(r):
            return bool(r[0, 1] <= math.log(SANE_SCALE * sd)
                        and abs(float(r[0, 0]) - mean) <= SANE_SCALE * sd)

        # The joint scoring gives up once the normal factor has left the data for 10 steps
        # (its result is discarded: it ran 200 steps, 3 s of a 5 s fit, on a skewed target).
        fit = self._scoring(raw, freq, free=slice(0, None), stop=lambda r: not sane(r))
        if not sane(fit):
            fit = self._scoring(raw, freq, free=slice(2, None))
        return {p: float(v[0]) for p, v in self.params_from_raw(fit).items()}

    def _scoring(self, raw, freq, free: slice, stop=None):
        """Fisher scoring of the outputs ``free`` (the others fixed) on the frequencies
        (``stop(raw)``: give up once it has held for 10 iterations in a row)."""
        ridge = torch.full((self.n_params,), 2e-9, dtype=torch.float64)
        ridge[:2] = 0.0

        def objective(r):
            logp = torch.log_softmax(self._logits(self.params_from_raw(r)), dim=-1)[0]
            return float(-(freq * torch.where(freq > 0, logp, 0.0)).sum()
                         + 0.5 * (ridge * r[0] * r[0]).sum())

        raw, off = raw.clone(), 0
        for _ in range(200):
            _, (a, c0, c1), m, cov = self._score_moments(raw)
            own = torch.cat([(c0 * (freq * a[0]).sum()).reshape(1),
                             (c1 * (freq * a[0] * a[0]).sum()).reshape(1), freq @ self._t["phi"]])
            grad = (m[0] - own + ridge * raw[0])[free]
            if grad.numel() == 0:
                break
            info = (cov[0] + torch.diag(ridge))[free, free]
            step = torch.zeros(self.n_params, dtype=torch.float64)
            step[free] = torch.linalg.solve(
                info + 1e-12 * torch.eye(grad.numel(), dtype=torch.float64), grad)
            f0, t_ = objective(raw), 1.0
            while t_ > 1e-12 and not objective(raw - t_ * step) <= f0 - 1e-4 * t_ * float(
                    grad @ step[free]):
                t_ *= 0.5
            raw = raw - t_ * step
            off = off + 1 if stop is not None and stop(raw) else 0
            if float(grad.abs().max()) < 1e-12 or t_ <= 1e-12 or off >= 10:
                break
        return raw
