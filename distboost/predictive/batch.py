"""``Predictive``: a batch of ``n`` predictive distributions, numpy in and numpy out.

A ``Predictive`` holds a family and its natural-scale parameters (one value per row) and
answers moments, ``cdf``, ``sf``, ``log_prob``, quantiles (exact ``icdf`` where torch or scipy
has one, a vectorised numerical inversion otherwise; see :meth:`Family.icdf`), central
intervals, seeded samples, and the per-row CRPS (the family's closed form, else numerical;
both in :mod:`distboost.families`), NLL and PIT, with no import from :mod:`distboost.metrics`.
Row ``i`` of every output belongs to distribution ``i``; all torch work is float64 and
loop-free over rows.

Values outside the support are answered here, once for every family: ``cdf`` is 0 below and 1
above the support, ``log_prob`` is ``-inf`` outside it (the open end of a support such as the 0
of ``(0, inf)`` included, as in :meth:`Support.contains`, and at non-integer values of a count
family), so that families only ever see values inside their support.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch

from .. import families as _families
from ..families.base import Family
from .censored_scores import bounds_of, censored_log_likelihood
from .numerical_crps import crps_of

__all__ = ["Predictive", "quantile_columns"]


def quantile_columns(q) -> list[str]:
    """Column names of quantile levels: ``[0.05, 0.5] -> ["q0.05", "q0.5"]``."""
    return [f"q{float(v):g}" for v in np.atleast_1d(np.asarray(q, dtype=np.float64))]


def _check_index(index, n: int):
    """``index`` as a pandas Index of length ``n`` (None stays None)."""
    if index is None:
        return None
    if not isinstance(index, pd.Index):  # pd.Index(a MultiIndex) would flatten it to tuples
        index = pd.Index(index)
    if len(index) != n:
        raise ValueError(f"index has {len(index)} entries but the Predictive holds {n} "
                         "distributions; give one label per distribution.")
    return index


def _float_array(x, what: str) -> np.ndarray:
    """``x`` as a float64 ndarray, with a ValueError naming ``what`` when it is not numeric."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be numeric; got {type(x).__name__} ({err}).") from err


#: The scores of censored (n, 2) bounds, named in the error for exact-observation scores.
SURVIVAL_SCORES = ("censored_nll", "survival_crps", "concordance_index", "d_calibration")


def exact_observations(n: int, y, what: str = "This score") -> np.ndarray:
    """``y`` as a float64 array of shape (n,), one exact observation per distribution.

    A scalar broadcasts to all ``n`` rows.  ``what`` names the calling score in the errors:
    (n, 2) bounds of a censored target get their own message naming the survival scores.
    """
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 0:
        y = np.full(n, float(y))
    if y.ndim == 2 and y.shape == (n, 2):
        raise ValueError(
            f"{what} needs exact observations, y of shape ({n},); got shape {y.shape}, "
            "the (lower, upper) bounds of a censored target. Score censored targets with "
            + ", ".join(f"db.metrics.{f}" for f in SURVIVAL_SCORES)
            + " (scorers: get_scorer('censored_nll'), 'survival_crps', 'concordance_index')."
        )
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(
            f"y has shape {y.shape} but the Predictive holds {n} distributions; "
            "give one observation per distribution."
        )
    n_bad = int((~np.isfinite(y)).sum())
    if n_bad:
        raise ValueError(f"y has {n_bad} of {y.size} rows that are NaN or infinite.")
    return y


def _interior_point(low: float, high: float, *, integer: bool) -> float:
    """A point strictly inside ``(low, high)`` (an integer one for a count support)."""
    if math.isfinite(low) and math.isfinite(high):
        mid = 0.5 * (low + high)
        return math.floor(mid) if integer and math.floor(mid) > low else mid
    if math.isfinite(low):
        return low + 1.0
    if math.isfinite(high):
        return high - 1.0
    return 0.0


class Predictive:
    """A batch of ``n`` predictive distributions of one family.

    Parameters
    ----------
    family : str or Family
        A registered family name or a :class:`~distboost.families.Family` instance; a vector
        family (``multivariate_normal``, ``dirichlet``) gives a
        :class:`~distboost.MultivariatePredictive`.
    params : dict of str to array_like
        Natural-scale parameters named as in ``family.param_names``, each of shape (n,);
        scalars broadcast against the others (all scalars give ``n = 1``).
    index : pandas Index or array_like of length n, optional
        Row labels (the estimators' ``predict_dist`` passes the index of a DataFrame X);
        used by :meth:`to_frame` and kept by indexing.

    Attributes
    ----------
    family : Family
        The family of every row.
    index : pandas Index or None
        The row labels given, else None.

    Raises
    ------
    ValueError
        For missing or unknown parameter names (the message lists the expected names),
        lengths that do not broadcast, or values that are not finite or lie outside a
        parameter's link domain (the message names the parameter and counts the rows).

    Examples
    --------
    >>> import distboost as db
    >>> d = db.Predictive.from_params("normal", loc=[0.0, 1.0], scale=[1.0, 2.0])
    >>> d.quantile([0.5, 0.975]).round(3)
    array([[0.  , 1.96],
           [1.  , 4.92]])
    >>> d.interval(0.9).shape, d.sample(5, random_state=0).shape
    ((2, 2), (5, 2))
    """

    #: The subclass that holds a vector family's distributions (``MultivariatePredictive``,
    #: which sets itself here when its module is imported, as ``distboost`` does).
    _vector_class: type | None = None

    def __new__(cls, *args, **kwargs):
        if cls is Predictive and (args or "family" in kwargs):
            family = _families.get(args[0] if args else kwargs["family"])
            if family.multivariate and Predictive._vector_class is not None:
                return object.__new__(Predictive._vector_class)
        return object.__new__(cls)

    def __init__(self, family: str | Family, params: Mapping[str, object], index=None):
        family = _families.get(family)
        if not isinstance(params, Mapping):
            raise TypeError(
                f"params must be a mapping name -> array; got {type(params).__name__}."
            )
        names, given = set(family.param_names), set(params)
        if names != given:
            raise ValueError(
                f"Family {family.name!r} takes parameters {list(family.param_names)}; "
                f"missing {sorted(names - given)}, unknown {sorted(given - names)}."
            )
        arrays = [np.atleast_1d(_float_array(params[p], f"Parameter {p!r}"))
                  for p in family.param_names]
        try:
            arrays = np.broadcast_arrays(*arrays)
        except ValueError as err:
            shapes = {p: a.shape for p, a in zip(family.param_names, arrays, strict=True)}
            raise ValueError(f"Parameter arrays have incompatible shapes {shapes}.") from err
        checked = {}
        for p, a in zip(family.param_names, arrays, strict=True):
            if a.ndim != 1:
                raise ValueError(f"Parameter {p!r} must be 1-D, got shape {a.shape}.")
            low, high = family.links[p].domain
            bad = ~np.isfinite(a) | (a <= low) | (a >= high)
            if bad.any():
                raise ValueError(
                    f"Parameter {p!r} of family {family.name!r} has {int(bad.sum())} of {a.size} "
                    f"rows outside its domain ({low}, {high}) or not finite."
                )
            a = a.copy()
            a.flags.writeable = False
            checked[p] = a
        self.family = family
        self._params = checked
        self.index = _check_index(index, len(self))

    @classmethod
    def from_params(cls, family: str | Family, **params) -> Predictive:
        """Build from natural-scale parameter arrays.

        Parameters
        ----------
        family : str or Family
        **params : array_like of shape (n,) or scalar
            One keyword per name in ``family.param_names``.

        Examples
        --------
        >>> import distboost as db
        >>> len(db.Predictive.from_params("gamma", concentration=[1.0, 2.0], rate=3.0))
        2
        """
        return cls(family, params)

    # ------------------------------------------------------------------ container
    @property
    def params(self) -> dict[str, np.ndarray]:
        """Natural-scale parameters: dict name -> read-only ndarray of shape (n,)."""
        return dict(self._params)

    def __len__(self) -> int:
        return next(iter(self._params.values())).shape[0]

    def __getitem__(self, index) -> Predictive:
        """Rows as a new ``Predictive``: an int gives length 1; also a slice, a boolean mask
        of length n, or an integer array.  Out-of-range indices raise IndexError."""
        n = len(self)
        if isinstance(index, int | np.integer) and not isinstance(index, bool | np.bool_):
            i = int(index)
            if not -n <= i < n:
                raise IndexError(f"Index {i} is out of range for a Predictive of length {n}.")
            index = slice(i % n, i % n + 1)
        elif not isinstance(index, slice):
            index = np.asarray(index)
            if index.dtype == bool:
                if index.shape != (n,):
                    raise IndexError(
                        f"Boolean mask has shape {index.shape}; expected ({n},) to match the "
                        "Predictive."
                    )
            elif index.size == 0:
                index = index.astype(np.intp)
            elif not np.issubdtype(index.dtype, np.integer) or index.ndim != 1:
                raise IndexError(
                    "A Predictive is indexed by an int, a slice, a boolean mask or a 1-D "
                    f"integer array; got an array of dtype {index.dtype} and shape "
                    f"{index.shape}."
                )
            elif ((index < -n) | (index >= n)).any():
                n_bad = int(((index < -n) | (index >= n)).sum())
                raise IndexError(
                    f"{n_bad} of {index.size} indices are out of range for a Predictive of "
                    f"length {n}."
                )
        return Predictive(self.family, {p: v[index] for p, v in self._params.items()},
                          index=None if self.index is None else self.index[index])

    def __repr__(self) -> str:
        if not getattr(self.family, "params_in_frame", True):  # the draws of an Empirical
            return f"Predictive({self.family!r}, n={len(self)})"
        head = ", ".join(
            f"{p}={np.array2string(v[:3], precision=4)}{'...' if len(v) > 3 else ''}"
            for p, v in self._params.items()
        )
        return f"Predictive({self.family.name!r}, n={len(self)}, {head})"

    def _torch_params(self) -> dict[str, torch.Tensor]:
        # Fresh float64 copies: outputs that alias a parameter (e.g. Normal.mean is loc) and
        # in-place changes to a returned torch object then never reach the stored arrays.
        return {p: torch.from_numpy(np.array(v)) for p, v in self._params.items()}

    def to_torch(self) -> torch.distributions.Distribution:
        """The ``torch.distributions`` object: float64 parameters, batch shape (n,).

        Built by ``family.distribution``; for a censored family it is the latent law.
        """
        return self.family.distribution(self._torch_params())

    # ------------------------------------------------------------------ values
    def _values(self, y, name: str = "y") -> tuple[torch.Tensor, bool]:
        """``y`` as a tensor of shape (n,) or (m, n) (torch's batch-last layout).

        Accepts a scalar, (n,) or (n, m); a length-1 first axis broadcasts to all n rows.
        The flag says whether the output must be transposed back to (n, m).
        """
        arr = _float_array(y, name)
        n = len(self)
        if arr.ndim > 2:
            raise ValueError(f"{name} must be a scalar, (n,) or (n, m); got shape {arr.shape}.")
        if arr.ndim >= 1 and arr.shape[0] not in (n, 1):
            raise ValueError(
                f"{name} has {arr.shape[0]} rows but the Predictive has {n}; give one row per "
                "distribution (shape (n,) or (n, m)) or a scalar."
            )
        nan = np.isnan(arr)
        if nan.any():
            what = (f"has {int(nan.any(axis=-1).sum()) if arr.ndim == 2 else int(nan.sum())} "
                    f"of {arr.shape[0]} rows with NaN values" if arr.ndim else "is NaN")
            raise ValueError(f"{name} {what}; use -inf or inf for an unbounded end.")
        if arr.ndim == 2:
            return torch.from_numpy(np.broadcast_to(arr, (n, arr.shape[1])).T.copy()), True
        return torch.from_numpy(np.broadcast_to(arr, (n,)).copy()), False

    @staticmethod
    def _out(t: torch.Tensor, transpose: bool) -> np.ndarray:
        a = t.detach().numpy()
        return np.ascontiguousarray(a.T) if transpose else a

    def _locate(self, v: torch.Tensor, *, floor: bool):
        """Split values by where they lie relative to the support.

        Returns ``(safe, below, above, inside)``: ``below`` / ``above`` mark values under /
        over the support (an open end counts as outside, ``-inf`` / ``inf`` always do),
        ``inside`` the values the family must evaluate (in the support, integers for a count
        family unless ``floor`` first rounds them down), and ``safe`` equals ``v`` there and
        a point inside the support elsewhere, so that the family never sees a value it
        was not built for.
        """
        s = self.family.support
        if self.family.discrete and floor:
            v = torch.floor(v)
        below = ((v <= s.low) if not s.low_closed else (v < s.low)) | (v == -math.inf)
        above = ((v >= s.high) if not s.high_closed else (v > s.high)) | (v == math.inf)
        inside = ~(below | above)
        if self.family.discrete:
            inside &= torch.floor(v) == v
        fill = _interior_point(s.low, s.high, integer=self.family.discrete)
        safe = torch.where(inside, v, torch.full_like(v, fill))
        return safe, below, above, inside

    def cdf(self, y) -> np.ndarray:
        """Cumulative distribution function ``P(Y <= y)``.

        Parameters
        ----------
        y : float, array_like of shape (n,) or (n, m)
            Row ``i`` is evaluated under distribution ``i``; ``-inf`` and ``inf`` are allowed.

        Returns
        -------
        ndarray of shape (n,), or (n, m) for 2-D ``y``
        """
        v, tr = self._values(y)
        safe, below, above, _ = self._locate(v, floor=True)
        with torch.no_grad():
            f = self.family.cdf(self._torch_params(), safe).clamp(0.0, 1.0)
        f = torch.where(below, torch.zeros_like(f), torch.where(above, torch.ones_like(f), f))
        return self._out(f, tr)

    def sf(self, y) -> np.ndarray:
        """Survival function ``P(Y > y) = 1 - cdf(y)``, same shapes as :meth:`cdf`.

        Computed as ``exp(family.log_sf(y))``, which keeps full relative accuracy in the upper
        tail for the families that override ``log_sf`` (the base ``log_sf`` is
        ``log1p(-cdf)``, so it is never less accurate than ``1 - cdf``).
        """
        v, tr = self._values(y)
        safe, below, above, _ = self._locate(v, floor=True)
        with torch.no_grad():
            s = torch.exp(self.family.log_sf(self._torch_params(), safe)).clamp(0.0, 1.0)
        s = torch.where(below, torch.ones_like(s), torch.where(above, torch.zeros_like(s), s))
        return self._out(s, tr)

    def log_prob(self, y) -> np.ndarray:
        """Log density (continuous families) or log mass (count families), same shapes as
        :meth:`cdf`; ``-inf`` outside the support and at non-integer counts.

        For a censored family (``censored_<name>``) ``y`` of shape (n, 2) holds the bounds
        ``[lower, upper]`` of :mod:`distboost.censored`, scored by their log-likelihood,
        shape (n,): ``log f(y)`` for an exact row, ``log(F(upper) - F(lower))`` otherwise
        (:func:`~distboost.predictive.censored_scores.censored_log_likelihood`).
        """
        bounds = bounds_of(self.family, len(self), y)
        if bounds is not None:
            return censored_log_likelihood(self.family, self._params, bounds)
        v, tr = self._values(y)
        safe, _, _, inside = self._locate(v, floor=False)
        with torch.no_grad():
            lp = self.family.log_prob(self._torch_params(), safe)
        lp = torch.where(inside, lp, torch.full_like(lp, -math.inf))
        return self._out(lp, tr)

    def pdf(self, y) -> np.ndarray:
        """Density (or mass) ``exp(log_prob(y))``, same shapes as :meth:`cdf`."""
        return np.exp(self.log_prob(y))

    def quantile(self, q) -> np.ndarray:
        """Quantile function (inverse cdf).

        Exact where the family has an inverse cdf, else a vectorised numerical inversion of
        the cdf (relative accuracy about 1e-10, ``invert_cdf``).  A count family gives the
        smallest integer ``k`` with ``cdf(k) >= q``; ``q = 0`` and ``1`` give the support's ends.

        Parameters
        ----------
        q : float, 1-D array_like of m levels, or 2-D array_like (n, m)
            Levels in [0, 1]: the same for every row, or a row of levels per distribution.

        Returns
        -------
        ndarray of shape (n,) for a scalar ``q``, (n, m) for a sequence or a 2-D ``q``
        """
        q_arr = _float_array(q, "q")
        if q_arr.ndim > 2 or (q_arr.ndim == 2 and q_arr.shape[0] != len(self)):
            raise ValueError(f"q must be a scalar, a 1-D sequence of levels or (n, m) levels "
                             f"with n = {len(self)} rows; got shape {q_arr.shape}.")
        bad = ~((q_arr >= 0) & (q_arr <= 1))
        if np.any(bad):
            raise ValueError(f"Quantile levels must lie in [0, 1]; got {q_arr[bad][:5].tolist()}.")
        levels = torch.from_numpy(np.ascontiguousarray(q_arr.T) if q_arr.ndim == 2 else
                                  np.broadcast_to(np.atleast_1d(q_arr)[:, None],
                                                  (q_arr.size, len(self))).copy())
        s = self.family.support
        with torch.no_grad():
            x = self.family.icdf(self._torch_params(), levels)
        x = torch.where(levels <= 0, torch.full_like(x, s.low), x)
        x = torch.where(levels >= 1, torch.full_like(x, s.high), x).numpy()
        return np.ascontiguousarray(x[0]) if q_arr.ndim == 0 else np.ascontiguousarray(x.T)

    ppf = quantile

    def interval(self, level: float = 0.9) -> np.ndarray:
        """Central interval holding probability ``level``: the quantiles at
        ``(1 - level) / 2`` and ``(1 + level) / 2``, shape (n, 2)."""
        level = float(level)
        if not 0.0 < level < 1.0:
            raise ValueError(f"Interval level must lie in (0, 1); got {level}.")
        alpha = 1.0 - level
        return self.quantile([alpha / 2, 1 - alpha / 2])

    def restricted_mean(self, tau: float) -> np.ndarray:
        """Restricted mean ``E[min(Y, tau)] = low + int_low^tau S(t) dt`` (Royston & Parmar
        2013, BMC Med. Res. Methodol. 13:152) for a support with a finite lower end (survival
        times), shape (n,); 32-point Gauss-Legendre on each of two panels split at the
        median."""
        low = self.family.support.low
        if not np.isfinite(low):
            raise ValueError("restricted_mean needs a support with a finite lower end.")
        tau = float(tau)
        if tau <= low:
            raise ValueError(f"tau must exceed the support's lower end {low}; got {tau}.")
        nodes, weights = np.polynomial.legendre.leggauss(32)
        u, w = 0.5 * (nodes + 1.0), 0.5 * weights
        mid = np.clip(self.median, low, tau)
        total = np.zeros(len(self))
        for a, b in ((np.full(len(self), low), mid), (mid, np.full(len(self), tau))):
            x = a[:, None] + (b - a)[:, None] * u[None, :]
            total += ((b - a)[:, None] * w[None, :] * self.sf(x)).sum(axis=1)
        return low + total

    # ------------------------------------------------------------------ moments
    @property
    def median(self) -> np.ndarray:
        """Median ``quantile(0.5)``, shape (n,)."""
        return self.quantile(0.5)

    @property
    def mean(self) -> np.ndarray:
        """Mean, shape (n,) (NaN or inf where it does not exist, as in torch)."""
        with torch.no_grad():
            return self.family.mean(self._torch_params()).numpy()

    @property
    def variance(self) -> np.ndarray:
        """Variance, shape (n,) (inf or NaN where it does not exist, as in torch)."""
        with torch.no_grad():
            return self.family.variance(self._torch_params()).numpy()

    @property
    def probs(self) -> np.ndarray:
        """Class probabilities of a classification family (``bernoulli``: columns
        ``P(y = 0), P(y = 1)``; ``categorical``: the softmax of the logits), shape
        (n, n_classes); a ValueError for any other family."""
        class_probs = getattr(self.family, "class_probs", None)
        if class_probs is None:
            raise ValueError(
                f"probs is defined for the classification families (bernoulli, categorical), "
                f"not for family {self.family.name!r}; use pdf or cdf."
            )
        with torch.no_grad():
            return class_probs(self._torch_params()).numpy()

    @property
    def stddev(self) -> np.ndarray:
        """Standard deviation ``sqrt(variance)``, shape (n,)."""
        return np.sqrt(self.variance)

    def to_frame(self, quantiles=(0.05, 0.5, 0.95), index=None) -> pd.DataFrame:
        """The predictions as a table, one row per distribution.

        Parameters
        ----------
        quantiles : sequence of float in [0, 1], default=(0.05, 0.5, 0.95)
            Levels of the quantile columns (``()`` or None for none).
        index : array_like of length n, optional
            Row labels; default the Predictive's ``index`` (the index of the DataFrame X it
            was predicted from), else ``0..n-1``.

        Returns
        -------
        DataFrame of shape (n, 2 + K + len(quantiles))
            ``mean``, ``sd``, the K natural-scale parameters (torch's names; a parameter
            named ``mean`` or ``sd`` becomes ``param_mean`` / ``param_sd``; none for the
            draws of a :class:`~distboost.families.Empirical`) and one column
            per level named ``q0.05``, ... .  For an unordered classification family
            (``categorical``), which has no mean nor quantiles, the columns are the
            parameters and the class probabilities ``prob_0``, ``prob_1``, ... .

        Examples
        --------
        >>> import distboost as db
        >>> d = db.Predictive.from_params("normal", loc=[0.0, 1.0], scale=1.0)
        >>> d.to_frame([0.5], index=["a", "b"]).round(3)
           mean   sd  loc  scale  q0.5
        a   0.0  1.0  0.0    1.0   0.0
        b   1.0  1.0  1.0    1.0   1.0
        """
        index = _check_index(index, len(self)) if index is not None else self.index
        try:
            mean = self.mean
        except ValueError:  # unordered classes: no mean, no quantiles
            mean = None
        ordered = mean is not None
        columns: dict[str, np.ndarray] = {}
        if ordered:
            columns["mean"], columns["sd"] = mean, self.stddev
        if getattr(self.family, "params_in_frame", True):  # not the draws of an Empirical
            for p, v in self._params.items():
                columns[f"param_{p}" if p in ("mean", "sd") else p] = np.array(v)
        if not ordered:
            for k, col in enumerate(self.probs.T):
                columns[f"prob_{k}"] = col
        elif quantiles is not None and np.size(quantiles):
            values = self.quantile(np.atleast_1d(np.asarray(quantiles, dtype=np.float64)))
            columns.update(zip(quantile_columns(quantiles), values.T, strict=True))
        return pd.DataFrame(columns, index=index)

    def sample(self, m: int = 1, random_state=None) -> np.ndarray:
        """``m`` independent draws from every distribution.

        Parameters
        ----------
        m : int
            Number of draws per row (non-negative).
        random_state : None, int, numpy Generator or RandomState
            An int gives reproducible draws; a Generator is advanced, so repeated calls
            differ.  A seed drawn from it drives ``family.sample`` (torch's global random
            state is left untouched).

        Returns
        -------
        ndarray of shape (m, n)
        """
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 0:
            raise ValueError(f"m must be a non-negative integer number of draws; got {m!r}.")
        if isinstance(random_state, np.random.RandomState):
            seed = int(random_state.randint(2**63 - 1, dtype=np.int64))
        else:
            seed = int(np.random.default_rng(random_state).integers(2**63 - 1))
        with torch.no_grad():
            x = self.family.sample(self._torch_params(), int(m), seed)
        return np.ascontiguousarray(x.to(torch.float64).numpy())

    # ------------------------------------------------------------------ scores
    def nll(self, y) -> np.ndarray:
        """Negative log-likelihood ``-log_prob(y)`` per observation, shape (n,) (or (n, m));
        for a censored family and (n, 2) bounds the censored NLL, shape (n,) (as
        :func:`distboost.metrics.censored_nll`; see :meth:`log_prob`)."""
        return -self.log_prob(y)

    def crps(self, y, method: str = "auto") -> np.ndarray:
        """Continuous ranked probability score per observation, shape (n,).

        The family's closed form (:meth:`Family.crps`, where ``family.closed_form_crps``)
        or an accurate numerical integral otherwise
        (:func:`distboost.predictive.numerical_crps.crps_numerical`).

        Parameters
        ----------
        y : float or array_like of shape (n,)
            Exact observations.  Censored (n, 2) bounds are refused with a ValueError
            naming :func:`distboost.metrics.survival_crps` (a different score, not proper
            under censoring: Rindt et al. 2022, AISTATS).
        method : {"auto", "closed", "numerical"}
            "closed" raises a ValueError for a family without a closed form.
        """
        y = exact_observations(len(self), y, "crps")
        return crps_of(self.family, self._params, y, method)

    def pit(self, y, random_state=0) -> np.ndarray:
        """Probability integral transform ``F(y)`` per observation, shape (n,).

        For a count family the randomised PIT ``F(y - 1) + V (F(y) - F(y - 1))`` with
        ``V ~ Uniform(0, 1)`` drawn from ``random_state`` (Czado, Gneiting & Held 2009,
        Biometrics 65, Section 2.1), exactly uniform for a calibrated forecast; the default
        ``random_state=0`` makes repeated calls equal (see :func:`distboost.metrics.pit`).
        """
        y = exact_observations(len(self), y, "pit")
        upper = self.cdf(y)
        if not self.family.discrete:
            return upper
        lower = self.cdf(np.ceil(y) - 1.0)
        v = np.random.default_rng(random_state).uniform(size=y.shape[0])
        return lower + v * (upper - lower)
