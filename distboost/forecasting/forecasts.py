"""A fitted forecaster's forecasts of a batch of contexts, in the series' own units.

One path for every caller (``predict_dist``, ``sample_paths``, backtests and the end-of-history
backtest that makes the "auto" choices): the strategy forecasts in the model's units
(:mod:`.strategies`), the step calibration maps apply there (:mod:`.calibration`), and the
scaling by the window is undone last (:mod:`.scaling`): a direct marginal becomes the law of
``factor * Z`` (:class:`~distboost.families.Affine`); recursive paths are drawn in the
series' units step by step, and their marginals are the mixtures of the paths' one-step
laws.  Joint paths of the direct strategy come from its marginals and
the copula over the steps (:mod:`.copula`).
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pandas as pd

from ..families import Affine
from ..predictive import Predictive
from .calibration import calibrate_direct, calibrate_paths, calibrate_scores
from .copula import copula_paths
from .scaling import SHIFTED
from .strategies import Contexts, direct_dist, empirical, mixture, simulate

__all__ = ["marginals", "paths", "scored", "warn_extreme", "MEMO_VALUES", "EXTREME"]

#: The most values (contexts x paths x steps) of the recursive paths behind ``predict_dist``
#: that a forecaster keeps for a ``sample_paths`` call on the same contexts, ``n_paths`` and
#: seed (which would draw the very same paths again): 2**25 float64 values, 256 MiB.
MEMO_VALUES = 2 ** 25


#: A forecast value further than ``EXTREME`` times the largest absolute value of its
#: context's recent history from zero is reported (:func:`warn_extreme`).
EXTREME = 1e3


def warn_extreme(values: np.ndarray, ctx: Contexts, what: str, dist=None) -> None:
    """Warn when forecasts of ``ctx`` are not finite or lie beyond ``EXTREME`` times the
    largest absolute value of their context's history window (``values`` of shape (C, ...),
    context first).  A law whose tails are that heavy (a Student-t with ``df`` below 1 has no
    mean, and its outer quantiles grow as a power ``1 / df`` of the tail level) gives
    numbers no score can use; the warning names the share, the largest value and, given
    the Predictive ``dist``, its smallest ``df``."""
    C = len(ctx)
    v = np.asarray(values, dtype=np.float64).reshape(C, -1)
    # fmax skips NaN and gives NaN for a window of NaN alone, without nanmax's warning
    ref = np.fmax.reduce(np.abs(ctx.hist), axis=1) if ctx.hist.size else np.zeros(C)
    ref = np.where(np.isfinite(ref) & (ref > 0), ref, 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        bad = ~np.isfinite(v) | (np.abs(v) > EXTREME * ref[:, None])
    if not bad.any():
        return
    series = int(bad.any(axis=1).sum())
    finite = np.abs(v[np.isfinite(v)])
    top = f"{finite.max():.3g}" if finite.size else "none finite"
    hint = ""
    if dist is not None:
        dfs = [np.min(a) for k, a in dist.params.items() if k == "df" or k.startswith("df_")]
        if dfs:
            hint = f" Its smallest df is {min(dfs):.3g}: below 1 a Student-t has no mean."
    warnings.warn(
        f"{what}: {int(bad.sum())} of {v.size} values ({series} of {C} series) are not finite "
        f"or more than {EXTREME:g} times the largest absolute value of their recent history "
        f"(largest {top}). The fitted law's tails are extreme; a family with lighter tails "
        f"(family='auto' keeps a Student-t's df >= 2) gives usable forecasts.{hint}",
        UserWarning, stacklevel=3)


def _in_units(fc, dist: Predictive, shift: np.ndarray, factor: np.ndarray,
              index=None) -> Predictive:
    """A Predictive in the model's units in the series' units: the law of ``shift + factor
    * Z`` under scaling by the window (:mod:`.scaling`), as it is otherwise."""
    if fc.spec_.scale not in SHIFTED:
        return Predictive(dist.family, dist.params, index=index)
    params = {**dist.params, "shift": shift, "factor": factor}
    return Predictive(Affine(dist.family), params, index=index)


def marginals(fc, ctx: Contexts, datetime: bool, index=None) -> Predictive:
    """Each context's and step's predictive law (rows ``c * H + h``), calibrated when the
    forecaster is, in the series' units: the direct strategy's exact marginals, or the
    mixture of the one-step laws of ``fc.n_paths`` recursive paths."""
    if fc.strategy_ == "direct":
        dist, shift, factor = direct_dist(fc.model_, fc.spec_, ctx, datetime)
        if fc.calibration_ is not None:
            dist = calibrate_direct(dist, fc.calibration_, len(ctx))
        return _in_units(fc, dist, shift, factor, index)
    laws: list = []
    rng = np.random.default_rng(fc.random_state)
    sims, _, _ = simulate(fc.model_, fc.spec_, ctx, int(fc.n_paths), rng, datetime, laws=laws)
    _remember(fc, ctx, int(fc.n_paths), fc.random_state, sims)
    dist = mixture(laws, fc.model_.family_, fc.spec_, len(ctx), int(fc.n_paths))
    if fc.calibration_ is not None:
        return calibrate_direct(dist, fc.calibration_, len(ctx), index)
    return Predictive(dist.family, dist.params, index=index)


def paths(fc, ctx: Contexts, datetime: bool, n_paths: int, seed) -> np.ndarray:
    """Joint sample paths (C, P, H) in the series' units: recursive simulation, or the
    direct marginals joined by the copula over the steps (independent steps without one)."""
    rng = np.random.default_rng(seed)
    H = fc.spec_.horizon
    if fc.strategy_ == "direct":
        dist = marginals(fc, ctx, datetime)
        return copula_paths(dist, len(ctx), H, n_paths, getattr(fc, "copula_", None), rng,
                            ctx.keys())
    sims = _recalled(fc, ctx, int(n_paths), seed)
    if sims is None:
        sims, _, _ = simulate(fc.model_, fc.spec_, ctx, int(n_paths), rng, datetime)
    if fc.calibration_ is not None:
        sims = calibrate_paths(sims, fc.model_.family_, fc.calibration_)
    return sims


def scored(fc, ctx: Contexts, datetime: bool, truth: np.ndarray, n_paths: int):
    """Forecasts of contexts whose truth (C, H, series' units) is known: the Predictive of
    the marginals, and the NLL and PIT (C * H,) of each value (recursive: of the mixture of
    the paths' one-step laws, :func:`~distboost.forecasting.strategies.simulate`)."""
    if fc.strategy_ == "direct":
        dist = marginals(fc, ctx, datetime)
        y = truth.reshape(-1)
        return dist, dist.nll(y), dist.pit(y)
    rng = np.random.default_rng(fc.random_state)
    sims, nll, pit = simulate(fc.model_, fc.spec_, ctx, int(n_paths), rng, datetime, truth)
    if fc.calibration_ is not None:
        sims = calibrate_paths(sims, fc.model_.family_, fc.calibration_)
        pit, nll = calibrate_scores(pit, nll, fc.model_.family_, fc.calibration_)
    return empirical(sims, fc.model_.family_), nll.reshape(-1), pit.reshape(-1)


def _key(fc, ctx: Contexts, n_paths: int, seed) -> tuple | None:
    """What makes a simulation: the model, the contexts, ``n_paths`` and an integer seed
    (None for any other seed: its draws are not reproducible)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        return None
    digest = hashlib.blake2b(digest_size=16)
    for part in (ctx.hist, ctx.series, np.asarray(ctx.times).astype(str)):
        digest.update(np.ascontiguousarray(part).tobytes())
    if ctx.exog is not None:
        digest.update(pd.util.hash_pandas_object(ctx.exog, index=False).to_numpy().tobytes())
    return id(fc.model_), n_paths, int(seed), digest.hexdigest()


def _remember(fc, ctx: Contexts, n_paths: int, seed, sims: np.ndarray) -> None:
    """Keep the paths of ``predict_dist`` for :func:`_recalled` (up to :data:`MEMO_VALUES`
    values; ``fc._paths_memo_``, dropped when the forecaster is refitted or pickled)."""
    key = _key(fc, ctx, n_paths, seed)
    if key is not None and sims.size <= MEMO_VALUES:
        fc._paths_memo_ = (key, sims)
    else:
        fc.__dict__.pop("_paths_memo_", None)


def _recalled(fc, ctx: Contexts, n_paths: int, seed) -> np.ndarray | None:
    """A copy of the kept paths when they are the ones this call would draw, else None."""
    memo = fc.__dict__.get("_paths_memo_")
    if memo is None or memo[0] != _key(fc, ctx, n_paths, seed):
        return None
    return memo[1].copy()
