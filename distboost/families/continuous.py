"""Real-valued location-scale families: normal, laplace, logistic, gumbel, studentt, cauchy.

Each names its ``torch.distributions`` class (``Logistic`` comes from :mod:`._torch_extra`)
and, where textbook closed forms exist, its expected Fisher information on the natural scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

import numpy as np
import scipy.special as sc
import torch
import torch.distributions as D

from ..links import RAW_BOUND, Link
from .base import Family, as_float64_tensor, info_matrix
from .numerics import crps as _crps
from .numerics import likelihood as _scores
from .numerics import tails as _tails
from .numerics.information import diagonal_info
from .numerics.special import EULER_GAMMA, stdtr_ad, studentt_log_prob
from .numerics.stats import scipy_elementwise, weighted_mean_var, weighted_quantile
from .numerics.torch_extra import Logistic as _TorchLogistic
from .numerics.torch_extra import logistic_log_prob
from .registry import register
from .support import REAL

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

#: Rows up to which the Normal's closed-form derivatives run in numpy on the CPU (torch's
#: fixed cost per operation dominates there; above, torch's threads pay).
NUMPY_ROWS = 100_000

__all__ = ["Normal", "Laplace", "Logistic", "Gumbel", "StudentT", "Cauchy",
           "normal_raw_derivatives", "normal_scale_low", "normal_scale_profile"]



@register
class Normal(Family):
    """Normal (Gaussian) family, ``N(loc, scale^2)``; links identity and exp by default."""

    name = "normal"
    reference = "`norm(loc, scale)`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.normal)
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.normal)
    sf_formula = staticmethod(_tails.normal_sf)
    cdf_formula = staticmethod(_tails.normal_cdf)
    torch_class = D.Normal
    param_names = ("loc", "scale")
    support = REAL

    #: Closed-form weighted MLE: weighted mean and (biased) weighted standard deviation.
    closed_form_mle = True

    def start_values(self, y, w):
        mean, var = weighted_mean_var(y, w)
        return {"loc": mean, "scale": float(np.sqrt(var))}

    def fisher_natural(self, params):
        """Diagonal ``(1 / scale^2, 2 / scale^2)`` (Lehmann & Casella 1998, ex. 2.6.8)."""
        inv_var = params["scale"].pow(-2)
        return diagonal_info(inv_var, 2.0 * inv_var)

    def fisher_information(self, raw):
        """On the raw scale with the default links (identity, exp): ``diag(exp(-2 raw_scale),
        2)``, the chain rule of :meth:`fisher_natural` done once here (it runs every round);
        other links take the general path."""
        if self.links["loc"].name != "identity" or self.links["scale"].name != "exp":
            return super().fisher_information(raw)
        inv_var = torch.exp(-2.0 * raw[:, 1].clamp(-RAW_BOUND, RAW_BOUND))
        return diagonal_info(inv_var, torch.full_like(inv_var, 2.0))

    def raw_derivatives(self, raw, y, floor=None):
        """Closed form with the default links (identity, exp):
        ``nll = log s + z^2 / 2 + log(2 pi) / 2`` with ``s = exp(raw_scale)``,
        ``z = (y - loc) / s``; gradient ``(-(y - loc) / s^2, 1 - z^2)``; Fisher information
        ``diag(1 / s^2, 2)`` (Lehmann & Casella 1998, ex. 2.6.8, by the chain rule).  The raw
        scale is clamped to ``[max(-RAW_BOUND, floor), RAW_BOUND]`` as the link and the floor
        do (zero gradient beyond, as autograd of the clamp gives).  Other links and a floor
        on ``loc`` take the general chain rule (:meth:`Family.raw_derivatives`).  Arrays come
        back as column-major (n, 2) views of (2, n) tensors: the engine's layout for
        LightGBM."""
        lo = normal_scale_low(self, floor)
        if lo is None:
            return super().raw_derivatives(raw, y, floor)
        return normal_raw_derivatives(raw, y, lo)

    def dispersion_profile(self, raw, y, floor=None):
        """With the default links: ``rho = z^2``, ``p = 2`` (see
        :meth:`Family.dispersion_profile`); the NLL is ``log s + z^2 / 2 + log(2 pi) / 2``."""
        return normal_scale_profile(self, raw, y, floor)

    def log_prob(self, params, y):
        """``-z^2 / 2 - log(scale) - log(2 pi) / 2`` with ``z = (y - loc) / scale``: torch's
        ``Normal.log_prob`` without building a distribution object (the boosting loop calls
        this twice a round; autograd differentiates it as before)."""
        scale = params["scale"]
        z = (y - params["loc"]) / scale
        return -0.5 * z * z - torch.log(scale) - _HALF_LOG_2PI

    def log_cdf(self, params, y):
        return torch.special.log_ndtr((y - params["loc"]) / params["scale"])

    def log_sf(self, params, y):
        return torch.special.log_ndtr((params["loc"] - y) / params["scale"])


def normal_raw_derivatives(raw, y, lo: float):
    """:meth:`Normal.raw_derivatives` with the default links and the raw scale's lowest
    value ``lo`` (:func:`normal_scale_low`); the log-normal's at ``log y``."""
    # Runs every round on every row: few passes, in place, and only three allocations,
    # made by numpy (torch's own large allocations are retained by the C allocator
    # across rounds, numpy's are reused).
    n = raw.shape[0]
    if n <= NUMPY_ROWS and raw.device.type == "cpu":
        return _normal_derivatives_numpy(raw.detach().numpy(), y.detach().numpy(), lo)
    raw_scale = raw[:, 1]
    low, high = torch.aminmax(raw_scale)
    clamped = bool(low < lo) or bool(high > RAW_BOUND)
    nll, grad, fisher = (_scratch(shape, raw) for shape in ((n,), (2, n), (2, n)))
    log_s = torch.clamp(raw_scale, lo, RAW_BOUND, out=nll) if clamped else raw_scale
    inv_var = torch.mul(log_s, -2.0, out=fisher[0]).exp_()  # 1 / s^2
    g_loc = torch.sub(raw[:, 0], y, out=grad[0])  # loc - y
    z2 = torch.mul(g_loc, g_loc, out=grad[1]).mul_(inv_var)  # z^2
    g_loc.mul_(inv_var)  # -(y - loc) / s^2
    torch.add(log_s, z2, alpha=0.5, out=nll).add_(_HALF_LOG_2PI)
    torch.sub(1.0, z2, out=grad[1])  # 1 - z^2
    if clamped:
        grad[1].masked_fill_((raw_scale < lo) | (raw_scale > RAW_BOUND), 0.0)
    fisher[1].fill_(2.0)
    return nll, grad.T, fisher.T


def normal_scale_low(family, floor) -> float | None:
    """The lowest raw scale of the Normal closed forms (the link's bound, or the floor's when
    higher); None for a law other than the Normal's or the log-normal's (recognised by its
    ``score_formula``: a subclass that changes the law resets it), links other than identity
    and exp, or a floor on ``loc``."""
    if family.score_formula not in (_scores.normal, _scores.lognormal):
        return None
    if family.links["loc"].name != "identity" or family.links["scale"].name != "exp":
        return None
    if floor is None:
        return -RAW_BOUND
    if float(floor[0]) > -math.inf:
        return None
    return max(-RAW_BOUND, float(floor[1]))


def _normal_derivatives_numpy(raw: np.ndarray, y: np.ndarray, lo: float):
    """:meth:`Normal.raw_derivatives` in numpy, the same passes in the same order: on a few
    thousand rows torch's fixed cost per operation is most of the round."""
    n = raw.shape[0]
    raw_scale = raw[:, 1]
    clamped = bool(raw_scale.min() < lo) or bool(raw_scale.max() > RAW_BOUND)
    nll, grad, fisher = np.empty(n), np.empty((2, n)), np.empty((2, n))
    log_s = np.clip(raw_scale, lo, RAW_BOUND, out=nll) if clamped else raw_scale
    inv_var = np.exp(np.multiply(log_s, -2.0, out=fisher[0]), out=fisher[0])  # 1 / s^2
    g_loc = np.subtract(raw[:, 0], y, out=grad[0])  # loc - y
    z2 = np.multiply(g_loc, g_loc, out=grad[1])
    z2 *= inv_var  # z^2
    g_loc *= inv_var  # -(y - loc) / s^2
    np.add(log_s, 0.5 * z2, out=nll)
    nll += _HALF_LOG_2PI
    np.subtract(1.0, z2, out=grad[1])  # 1 - z^2
    if clamped:
        grad[1][(raw_scale < lo) | (raw_scale > RAW_BOUND)] = 0.0
    fisher[1].fill(2.0)
    return torch.from_numpy(nll), torch.from_numpy(grad).T, torch.from_numpy(fisher).T


def normal_scale_profile(family, raw, u, floor=None, extra=None):
    """:meth:`Family.dispersion_profile` of a Normal law of ``u`` (``y``, or ``log y`` for the
    log-normal, whose NLL adds ``extra = log y``) with the links identity and exp; None for
    other links, a floor on ``loc``, or a raw scale already at its floor or bound."""
    lo = normal_scale_low(family, floor)
    if lo is None:
        return None
    if raw.device.type == "cpu":  # numpy: a few microseconds a pass on small validation sets
        raw, u = raw.detach().numpy(), u.detach().numpy()
        extra = None if extra is None else extra.detach().numpy()
        log_s = raw[:, 1]
        low, high = float(log_s.min()), float(log_s.max())
        rho = np.square((u - raw[:, 0]) * np.exp(-log_s))
        nll = log_s + 0.5 * rho + _HALF_LOG_2PI
    else:
        log_s = raw[:, 1]
        low, high = (float(v) for v in torch.aminmax(log_s))
        rho = ((u - raw[:, 0]) * torch.exp(-log_s)).square_()
        nll = torch.add(log_s, rho, alpha=0.5).add_(_HALF_LOG_2PI)
    if not (lo < low and high < RAW_BOUND):
        return None
    if extra is not None:
        nll += extra
    return nll, rho, 2.0, (lo - low, RAW_BOUND - high)


def _scratch(shape: tuple, like: torch.Tensor) -> torch.Tensor:
    """An uninitialised float64 tensor on ``like``'s device: numpy's allocation on the CPU
    (reused across rounds), torch's on a GPU."""
    if like.device.type == "cpu":
        return torch.from_numpy(np.empty(shape))
    return torch.empty(shape, dtype=torch.float64, device=like.device)


@register
class Laplace(Family):
    """Laplace family, density ``exp(-|y - loc| / scale) / (2 scale)``."""

    name = "laplace"
    reference = "`laplace(loc, scale)`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.laplace)
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.laplace)
    torch_class = D.Laplace
    param_names = ("loc", "scale")
    support = REAL

    #: Closed-form weighted MLE: weighted median and mean absolute deviation from it.
    closed_form_mle = True

    def start_values(self, y, w):
        loc = weighted_quantile(y, w, 0.5)
        return {"loc": loc, "scale": float(np.sum(w * np.abs(y - loc)))}

    def fisher_natural(self, params):
        """Diagonal ``(1 / scale^2, 1 / scale^2)`` (Kotz, Kozubowski & Podgorski 2001, 2.6)."""
        inv_var = params["scale"].pow(-2)
        return diagonal_info(inv_var, inv_var)

    def log_cdf(self, params, y):
        z = (y - params["loc"]) / params["scale"]
        # F = exp(z)/2 below the location, 1 - exp(-z)/2 above (each branch on safe inputs).
        return torch.where(z < 0, z.clamp(max=0.0) - math.log(2.0),
                           torch.log1p(-0.5 * torch.exp(-z.clamp(min=0.0))))

    def log_sf(self, params, y):
        z = (params["loc"] - y) / params["scale"]
        return torch.where(z < 0, z.clamp(max=0.0) - math.log(2.0),
                           torch.log1p(-0.5 * torch.exp(-z.clamp(min=0.0))))


@register
class Logistic(Family):
    """Logistic family, ``cdf = sigmoid((y - loc) / scale)`` (torch has none: see
    :class:`distboost.families.numerics.torch_extra.Logistic`)."""

    name = "logistic"
    reference = "`logistic(loc, scale)`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.logistic)
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.logistic)
    sf_formula = staticmethod(_tails.logistic_sf)
    cdf_formula = staticmethod(_tails.logistic_cdf)
    torch_class = _TorchLogistic
    param_names = ("loc", "scale")
    support = REAL

    def start_values(self, y, w):
        _, var = weighted_mean_var(y, w)
        return {"loc": weighted_quantile(y, w, 0.5), "scale": math.sqrt(3.0 * var) / math.pi}

    def fisher_natural(self, params):
        """Diagonal ``(1 / (3 s^2), (pi^2 + 3) / (9 s^2))`` (Johnson, Kotz & Balakrishnan
        1995, ch. 23, eq. 23.38)."""
        inv_var = params["scale"].pow(-2)
        return diagonal_info(inv_var / 3.0, inv_var * (math.pi**2 + 3.0) / 9.0)

    def log_prob(self, params, y):
        """The logistic log density without building the torch distribution (a
        ``TransformedDistribution``, whose construction costs a SymPy import in a fresh
        process)."""
        return logistic_log_prob(params["loc"], params["scale"], y)

    def log_cdf(self, params, y):
        return torch.nn.functional.logsigmoid((y - params["loc"]) / params["scale"])

    def log_sf(self, params, y):
        return torch.nn.functional.logsigmoid((params["loc"] - y) / params["scale"])


@register
class Gumbel(Family):
    """Gumbel (type I extreme value, maxima) family; scipy's ``gumbel_r``."""

    name = "gumbel"
    reference = "`gumbel_r(loc, scale)`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.gumbel)
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.gumbel)
    sf_formula = staticmethod(_tails.gumbel_sf)
    cdf_formula = staticmethod(_tails.gumbel_cdf)
    torch_class = D.Gumbel
    param_names = ("loc", "scale")
    support = REAL

    def start_values(self, y, w):
        mean, var = weighted_mean_var(y, w)
        scale = math.sqrt(6.0 * var) / math.pi
        return {"loc": mean - EULER_GAMMA * scale, "scale": scale}

    def fisher_natural(self, params):
        """``[[1, -(1-g)], [-(1-g), (1-g)^2 + pi^2/6]] / scale^2`` with g Euler's constant
        (Johnson, Kotz & Balakrishnan 1995, ch. 22, eq. 22.47)."""
        inv_var = params["scale"].pow(-2)
        c = 1.0 - EULER_GAMMA
        return info_matrix([[inv_var, -c * inv_var],
                            [-c * inv_var, (c * c + math.pi**2 / 6.0) * inv_var]])

    def log_prob(self, params, y):
        """``-z - exp(-z) - log(scale)``, ``z = (y - loc) / scale``: torch's
        ``Gumbel.log_prob`` without building the distribution (a ``TransformedDistribution``,
        whose construction costs a SymPy import in a fresh process)."""
        scale = params["scale"]
        z = (y - params["loc"]) / scale
        return -z - torch.exp(-z) - torch.log(scale)

    def cdf(self, params, y):
        z = (y - params["loc"]) / params["scale"]
        return torch.exp(-torch.exp(-z))

    def log_cdf(self, params, y):
        z = ((y - params["loc"]) / params["scale"]).clamp(min=-700.0)
        return -torch.exp(-z)

    def log_sf(self, params, y):
        z = ((y - params["loc"]) / params["scale"]).clamp(min=-700.0)
        return torch.log(-torch.expm1(-torch.exp(-z)))

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        return params["loc"] - params["scale"] * torch.log(-torch.log(q))


@register
class StudentT(Family):
    """Student's t family with degrees of freedom ``df``, location and scale, all modelled.

    torch has no ``StudentT.cdf``: the cdf and the exact quantile function come from
    ``scipy.special.stdtr`` / ``stdtrit`` (prediction time, no gradient).  The mean is
    ``loc`` for ``df > 1`` (NaN otherwise); the variance ``scale^2 df / (df - 2)`` for
    ``df > 2`` (inf for ``1 < df <= 2``), as in torch.

    Parameters
    ----------
    min_df : float, optional
        A floor on ``df`` (:meth:`param_floors`), applied as the scale's floor is: the raw
        score is held at it while boosting and when predicting.  ``min_df=2`` keeps the mean,
        the CRPS (finite for ``df > 1``) and the forecasts of a recursive strategy finite
        where a free ``df`` may fall below 1 (a Cauchy-like tail); the Forecaster's
        ``family="auto"`` uses it.  None (default): ``df`` is free.
    links : dict of str to str, optional
        Link overrides by parameter name.

    Examples
    --------
    >>> from distboost.families import StudentT
    >>> StudentT(min_df=2).param_floors([0.0, 1.0, 2.0])["df"]
    2.0
    """

    name = "studentt"
    reference = "`t(df, loc, scale)`"
    doc_notes = {
        "crps": "closed form (df > 1)",
    }
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.studentt)
    dispersion_param = "scale"
    #: The natural step divides by the information about ``df``, which vanishes as
    #: ``df -> inf`` (Lange et al. 1989, eq. A.3): the step would grow without bound where
    #: the data look Normal.  The diagonal Fisher step keeps ``df``'s step proportional to
    #: its gradient.
    default_step = "fisher"
    score_formula = staticmethod(_scores.studentt)
    torch_class = D.StudentT
    param_names = ("df", "loc", "scale")
    support = REAL

    def __init__(self, min_df: float | None = None,
                 links: Mapping[str, str | Link] | None = None):
        if min_df is not None:
            if isinstance(min_df, bool) or not isinstance(min_df, Real) \
                    or not 0.0 < float(min_df) < math.inf:
                raise ValueError(f"Family 'studentt' takes min_df > 0 (a finite number) or "
                                 f"None; got {min_df!r}.")
            min_df = float(min_df)
        self.min_df = min_df
        super().__init__(links)

    def __repr__(self) -> str:
        base = super().__repr__()
        if self.min_df is None:
            return base
        return base.replace("(", f"(min_df={self.min_df!r}" + (", " if "links" in base else ""),
                            1)

    def get_params(self) -> dict:
        return {"min_df": self.min_df, **super().get_params()}

    def get_state(self) -> dict:
        """``{"name": "studentt", "links": {...}}``, with ``"min_df"`` when it is set."""
        state = super().get_state()
        return state if self.min_df is None else {**state, "min_df": self.min_df}

    def param_floors(self, y):
        """The scale's floor (:meth:`Family.param_floors`) and ``min_df`` when it is set."""
        floors = super().param_floors(y)
        return floors if self.min_df is None else {**floors, "df": self.min_df}

    @property
    def chosen_floors(self) -> tuple[str, ...]:
        """The parameters whose floor is a constructor option (``("df",)`` with ``min_df``):
        a start raised to such a floor is what the user asked for, not a warning."""
        return () if self.min_df is None else ("df",)

    def log_prob(self, params, y):
        # torch's StudentT.log_prob loses lgamma((df+1)/2) - lgamma(df/2) to cancellation
        # for large df and rewards df -> inf; this form is exact there.
        return studentt_log_prob(params["df"], params["loc"], params["scale"], y)

    def start_values(self, y, w):
        loc = weighted_quantile(y, w, 0.5)
        mad = weighted_quantile(np.abs(y - loc), w, 0.5)
        _, var = weighted_mean_var(y, w)
        scale = 1.4826 * mad if mad > 0 else math.sqrt(var) or 1.0
        return {"df": 5.0, "loc": loc, "scale": scale}

    def fisher_natural(self, params):
        """Lange, Little & Taylor (1989), eq. (A.1)-(A.3): with ``v = df``, ``s = scale``,
        ``I_ll = (v+1)/((v+3) s^2)``, ``I_ss = 2v/((v+3) s^2)``,
        ``I_vs = -2/((v+1)(v+3) s)``, ``I_vv = [psi'(v/2) - psi'((v+1)/2)]/4
        - (v+5)/(2 v (v+1)(v+3))``."""
        v, s = params["df"], params["scale"]
        i_ll = (v + 1.0) / ((v + 3.0) * s * s)
        i_ss = 2.0 * v / ((v + 3.0) * s * s)
        i_vs = -2.0 / ((v + 1.0) * (v + 3.0) * s)
        trigamma = torch.special.polygamma
        i_vv = 0.25 * (trigamma(1, v / 2.0) - trigamma(1, (v + 1.0) / 2.0)) - (v + 5.0) / (
            2.0 * v * (v + 1.0) * (v + 3.0)
        )
        return info_matrix([[i_vv, 0.0, i_vs], [0.0, i_ll, 0.0], [i_vs, 0.0, i_ss]])

    def cdf(self, params, y):
        z = (y - params["loc"]) / params["scale"]
        return scipy_elementwise(sc.stdtr, params["df"], z)

    def log_cdf(self, params, y):
        z = (y - params["loc"]) / params["scale"]
        return torch.log(stdtr_ad(params["df"], z))

    def log_sf(self, params, y):
        z = (params["loc"] - y) / params["scale"]
        return torch.log(stdtr_ad(params["df"], z))

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        z = scipy_elementwise(sc.stdtrit, params["df"], q)
        return params["loc"] + params["scale"] * z

    def mean(self, params):
        df = params["df"]
        return torch.where(df > 1, params["loc"], torch.full_like(df, float("nan")))


@register
class Cauchy(Family):
    """Cauchy family, density ``1 / (pi s (1 + z^2))``, ``z = (y - loc) / s``; scipy's
    ``cauchy(loc, scale)``.

    The law has no mean and no variance: :meth:`mean` and :meth:`variance` are NaN (as
    scipy's; torch gives an infinite variance).  Its CRPS is finite (the tails of
    ``(F - 1{x >= y})^2`` decay as ``x^-2``) but has no closed form used here: it is the
    numerical integral.  The start values are the median and half the interquartile range,
    refined by the numerical MLE.
    """

    name = "cauchy"
    reference = "`cauchy(loc, scale)`"
    doc_notes = {
        "crps": "numerical (finite; no mean)",
    }
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.cauchy)
    torch_class = D.Cauchy
    param_names = ("loc", "scale")
    support = REAL

    def start_values(self, y, w):
        q1, med, q3 = (weighted_quantile(y, w, q) for q in (0.25, 0.5, 0.75))
        half_iqr = 0.5 * (q3 - q1)
        return {"loc": med, "scale": half_iqr if half_iqr > 0 else 1.0}

    def param_floors(self, y):
        """``1e-6`` times half the interquartile range of ``y`` (its standard deviation, the
        base rule's measure, grows without bound with the sample size for Cauchy data)."""
        y = np.asarray(y, dtype=np.float64)
        y = y[np.isfinite(y)]
        if y.size == 0:
            return {"scale": self.SCALE_FLOOR}
        q1, q3 = np.percentile(y, [25, 75])
        magnitude = float(np.mean(np.abs(y)))
        spread = 0.5 * float(q3 - q1)
        if not spread > 1e-12 * magnitude:
            return super().param_floors(y)
        return {"scale": max(self.SCALE_FLOOR * spread, 1e-12 * magnitude)}

    def fisher_natural(self, params):
        """Diagonal ``(1 / (2 s^2), 1 / (2 s^2))`` (Johnson, Kotz & Balakrishnan 1994,
        ch. 16, sec. 6)."""
        half_inv_var = 0.5 * params["scale"].pow(-2)
        return diagonal_info(half_inv_var, half_inv_var)

    def log_prob(self, params, y):
        scale = params["scale"]
        z = (y - params["loc"]) / scale
        return -math.log(math.pi) - torch.log(scale) - torch.log1p(z * z)

    def cdf(self, params, y):
        """``atan2(1, -z) / pi``: ``1/2 + atan(z) / pi`` without its cancellation in the
        lower tail."""
        z = (y - params["loc"]) / params["scale"]
        return torch.atan2(torch.ones_like(z), -z) / math.pi

    def log_cdf(self, params, y):
        z = (y - params["loc"]) / params["scale"]
        return torch.log(torch.atan2(torch.ones_like(z), -z)) - math.log(math.pi)

    def log_sf(self, params, y):
        z = (y - params["loc"]) / params["scale"]
        return torch.log(torch.atan2(torch.ones_like(z), z)) - math.log(math.pi)

    def icdf(self, params, q):
        """``loc + s tan(pi (q - 1/2))`` in the middle half, ``loc - s / tan(pi q)`` (the same
        value, without the rounding of ``q - 1/2``) in the tails; the support's ends at ``q``
        in ``{0, 1}``."""
        q = as_float64_tensor(q)
        middle = (q - 0.5).abs() < 0.25
        z = torch.where(middle, torch.tan(math.pi * (q - 0.5)),
                        -1.0 / torch.tan(math.pi * torch.where(middle, torch.full_like(q, 0.1),
                                                                q)))
        x = params["loc"] + params["scale"] * z
        x = torch.where(q <= 0, torch.full_like(x, -math.inf), x)
        return torch.where(q >= 1, torch.full_like(x, math.inf), x)

    def mean(self, params):
        """NaN: the Cauchy law has no mean."""
        return torch.full_like(params["loc"], math.nan)

    def variance(self, params):
        """NaN: the Cauchy law has no variance (scipy's convention)."""
        return torch.full_like(params["loc"], math.nan)
