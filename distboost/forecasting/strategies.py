"""The two ways a fitted regressor forecasts ``horizon`` steps from a batch of contexts.

A *context* is one forecast to make: a series, its last ``memory`` values before the origin,
the times of the ``horizon`` steps after it, and the exogenous rows of those steps (a
forecast from the end of each series, or from every origin of a backtest, all in one batch).

* **recursive** (one model of the next step): ``n_paths`` sample paths per context are grown
  step by step; at each step one ``predict_dist`` call gives the one-step law of every path
  (all contexts and paths at once, rows ``context * n_paths + path``) and one draw per row
  extends it.  The loop is over the steps only.  Each path is a draw from the model's law of
  the whole horizon.  The draws are stratified (a Latin hypercube over the paths, McKay,
  Beckman & Conover 1979): at each step a context's ``P`` paths take the quantiles of their
  one-step laws at levels one in each stratum ``[i / P, (i + 1) / P)``, the strata shuffled
  across the paths, so that every path's levels are still independent uniforms while the
  paths together cover the levels evenly.  The marginal of a step is the *mixture* of the
  paths' one-step laws, ``p(y_t) ~ (1 / P) sum_p f(y_t | path p)``
  (:class:`~distboost.families.EqualMixture`, :func:`mixture`): exact for the first step,
  a Rao-Blackwellised Monte Carlo mixture later, with a density (the NLL and PIT of
  backtests).  Backtests score the CRPS of the paths' draws
  (:class:`~distboost.families.Empirical`, :func:`empirical`).
* **direct** (one model of every step, the step a feature): one ``predict_dist`` call for all
  contexts and steps; the marginals are the family's own (exact quantiles, CRPS, NLL).  It
  models no dependence between steps, so it gives no joint paths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..families import Affine, Empirical, EqualMixture
from ..predictive import Predictive
from .features import FeatureSpec, buffer_scales, window_features
from .keyed import context_keys, seed_of, stratified
from .scaling import SHIFTED

__all__ = ["Contexts", "simulate", "direct_dist", "shift", "empirical", "mixture"]


@dataclass
class Contexts:
    """A batch of ``C`` forecasts (module docstring).

    Attributes
    ----------
    series : ndarray (C,) of int
        Series numbers (positions in the fitted ids; 0 for one series).
    hist : ndarray (C, M)
        The last ``M`` values up to the origin (the origin's value last).
    times : ndarray (C, H)
        The target times of the steps.
    exog : DataFrame of C * H rows, or None
        Exogenous rows, context after context (row ``c * H + h - 1``).
    ids : ndarray (C,), optional
        The series ids, which key the contexts' random draws with their first target times
        (:mod:`~distboost.forecasting.keyed`); default: the series numbers.
    """

    series: np.ndarray
    hist: np.ndarray
    times: np.ndarray
    exog: pd.DataFrame | None
    ids: np.ndarray | None = None

    def keys(self) -> np.ndarray:
        """Each context's key of its random draws (:func:`~distboost.forecasting.keyed.
        context_keys`)."""
        return context_keys(self.series if self.ids is None else self.ids, self.times[:, 0])

    def __len__(self) -> int:
        return self.hist.shape[0]


def _times(ctx: Contexts, col, datetime: bool) -> pd.Index:
    t = ctx.times[:, col] if isinstance(col, int | np.integer) else ctx.times.reshape(-1)
    return pd.DatetimeIndex(list(t)) if datetime else pd.Index(np.asarray(t, dtype=np.int64))


def shift(dist: Predictive, base: np.ndarray) -> Predictive:
    """The law of ``base + Y`` for ``Y ~ dist`` (a location family: its ``loc`` moves)."""
    params = dict(dist.params)
    params["loc"] = params["loc"] + base
    return Predictive(dist.family, params)


def direct_dist(model, spec: FeatureSpec, ctx: Contexts, datetime: bool):
    """The exact marginals of every context and step, rows ``c * H + h - 1``, in the model's
    units, and each row's scale shift and factor: the value is ``shift + factor * Z`` under
    ``spec.scale`` "mean" or "standard" (those of the context's window,
    :mod:`~distboost.forecasting.scaling`), ``Z`` otherwise.  Returns ``(Predictive, shift
    (C * H,), factor (C * H,))``."""
    H, C = spec.horizon, len(ctx)
    rows = np.repeat(np.arange(C), H)
    shift_, factor = (a[rows] for a in buffer_scales(spec, ctx.hist))
    X = window_features(spec, ctx.hist[rows], step=np.tile(np.arange(1, H + 1), C),
                        times=_times(ctx, None, datetime), series=ctx.series[rows],
                        exog=ctx.exog, factor=factor, shift=shift_)
    dist = model.predict_dist(X)
    if spec.difference:  # Z is the change from the origin's value, in the window's units
        dist = shift(dist, ctx.hist[rows, -1] / (factor if spec.scale == "mean" else 1.0))
    return dist, shift_, factor


def _step_rows(ctx: Contexts, h: int, per: int) -> pd.DataFrame | None:
    if ctx.exog is None:
        return None
    H = ctx.times.shape[1]
    return ctx.exog.iloc[np.repeat(np.arange(len(ctx)) * H + h, per)]


def _logmeanexp(a: np.ndarray) -> np.ndarray:
    top = np.max(a, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return (top + np.log(np.mean(np.exp(a - top), axis=1, keepdims=True)))[:, 0]


def simulate(model, spec: FeatureSpec, ctx: Contexts, n_paths: int, rng, datetime: bool,
             truth: np.ndarray | None = None, laws: list | None = None):
    """Sample paths, shape (C, n_paths, H), in the series' units; with ``truth`` (C, H) also
    the NLL and PIT of the paths' mixture at every step, each of shape (C, H).  Given a list
    ``laws``, each step appends its paths' one-step laws in the series' units (the parameters
    of :func:`path_law`'s family, arrays of ``C * n_paths`` rows ``c * n_paths + p``), the
    components of :func:`mixture`.

    Every step is one ``predict_dist`` call on all ``C * n_paths`` rows (``C`` rows at the
    first step, where all paths of a context share their history) and one draw per row.  A
    path keeps the scale factor of its context's window at the origin
    (:mod:`~distboost.forecasting.scaling`) for all its steps: a factor recomputed from the
    path's own draws would feed a path's excursion back into its next steps' scale.
    """
    C, H, P = len(ctx), spec.horizon, int(n_paths)
    paths = np.empty((C, P, H))
    nll = pit = None
    if truth is not None:
        nll, pit = np.empty((C, H)), np.empty((C, H))
    buf = ctx.hist
    scaled = spec.scale in SHIFTED
    origin_shift, origin_factor = buffer_scales(spec, ctx.hist)
    pit_rng = np.random.default_rng(0)  # the randomised PIT of counts; leaves rng's draws
    seed, keys = seed_of(rng), ctx.keys()
    for h in range(H):
        per = 1 if h == 0 else P
        rows = np.repeat(np.arange(C), per)
        factor = origin_factor[rows]
        X = window_features(spec, buf, step=1, times=_times(ctx, h, datetime).repeat(per),
                            series=ctx.series[rows], exog=_step_rows(ctx, h, per),
                            factor=factor, shift=origin_shift[rows])
        dist = model.predict_dist(X)
        base = buf[:, -1] if spec.difference else origin_shift[rows]  # (C * per,)
        unit = factor if scaled else np.ones(buf.shape[0])
        u = stratified(seed, keys, P, h)  # (C, P): each path's level of its one-step law
        z = dist.quantile(u).T if h == 0 else dist.quantile(u.reshape(-1, 1)).T
        if scaled and spec.target_range is not None:
            z = np.clip(z, *spec.target_range)
        if h == 0:  # one law per context: P draws of it
            draw = z.T * unit[:, None] + base[:, None]
        else:  # one law per path: one draw each
            draw = (z[0] * unit + base).reshape(C, P)
        paths[:, :, h] = draw
        if laws is not None:
            step_law = {**dist.params, "shift": base, "factor": unit}
            laws.append({k: np.repeat(v, P) if h == 0 else v for k, v in step_law.items()})
        if truth is not None:
            y_rel = (truth[rows, h] - base) / unit
            lp = dist.log_prob(y_rel).reshape(C, per) - np.log(unit).reshape(C, per)
            nll[:, h] = -_logmeanexp(lp)
            pit[:, h] = _mixture_pit(dist, y_rel, C, per, pit_rng)
        if h + 1 < H:
            if h == 0:
                buf = np.repeat(buf, P, axis=0)
            buf = np.concatenate([buf[:, 1:], draw.reshape(-1, 1)], axis=1)
    return paths, nll, pit


def _mixture_pit(dist: Predictive, y: np.ndarray, C: int, per: int, rng) -> np.ndarray:
    """PIT of the mixture of ``per`` laws per context; randomised for a count family."""
    upper = dist.cdf(y).reshape(C, per).mean(axis=1)
    if not dist.family.discrete:
        return upper
    lower = dist.cdf(np.ceil(y) - 1.0).reshape(C, per).mean(axis=1)
    return lower + rng.uniform(size=C) * (upper - lower)


def empirical(paths: np.ndarray, family, index=None) -> Predictive:
    """The marginals of paths (C, P, H) as a Predictive of ``C * H`` rows (context after
    context) of the :class:`~distboost.families.Empirical` family."""
    C, P, H = paths.shape
    draws = paths.transpose(1, 0, 2).reshape(P, C * H)
    fam = Empirical(P, support=family.support, discrete=family.discrete)
    return Predictive(fam, Empirical.params_of(draws), index=index)


def path_law(family, spec: FeatureSpec):
    """The family of one path's one-step law in the series' units: ``family`` itself when
    the model's units are the series' (no scaling by the window, no differencing: count
    families always), else the law of ``shift + factor * Z``
    (:class:`~distboost.families.Affine`)."""
    if spec.scale not in SHIFTED and not spec.difference:
        return family
    return Affine(family)


def mixture(laws: list, family, spec: FeatureSpec, C: int, P: int, index=None):
    """The marginal of every context and step (rows ``c * H + h``) as the equally weighted
    mixture of its ``P`` paths' one-step laws (:class:`~distboost.families.EqualMixture`, a
    Rao-Blackwellised marginal: exact at the first step, and with the Monte Carlo error of
    the paths' histories only later), from the per-step ``laws`` :func:`simulate` collected.
    The laws are not clipped to ``spec.target_range`` as the draws are.  Memory: ``C * P * H``
    values per parameter of the component family (the law's two and the map's two).
    """
    comp = path_law(family, spec)
    H = len(laws)
    params = {}
    for name in comp.param_names:  # (H, C * P) -> (P, C * H): component i's rows c * H + h
        stack = np.stack([np.asarray(step[name], dtype=np.float64) for step in laws])
        cols = np.ascontiguousarray(stack.reshape(H, C, P).transpose(2, 1, 0)).reshape(P, C * H)
        params.update({f"{name}_{i}": cols[i] for i in range(P)})
    return Predictive(EqualMixture(comp, P), params, index=index)
