"""``family="auto"``: the family a ``DistributionalRegressor`` chooses inside ``fit``.

:func:`candidates` reads a short list of families from the target: its support (real,
positive, the unit interval), whether every value is an integer, whether it has a point mass
at zero, and how many ordered levels it has; the nonparametric ``histogram`` is always among
them.  :func:`choose` compares them with :func:`~distboost.selection.compare_families` on a
subsample, with few rounds (the comparison's cost is bounded, not the data's), by CRPS, a
proper score on one scale for densities and probability mass functions alike (Gneiting &
Raftery 2007, section 4.2), and applies the one-standard-error rule (Hastie, Tibshirani &
Friedman 2009, section 7.10): among the sound fits whose mean CRPS is within one standard
error of the best one's, the family with the fewest parameters.  A degenerate fit (the
``degenerate`` column: a scale at its floor, a law collapsed onto the atoms of a discrete
target, ...) is never chosen.  The estimator then fits the chosen family on all rows.

The estimators sit one layer below this module: :func:`choose` reaches ``fit`` through
:func:`distboost.estimators.auto.set_family_chooser` (called when this module is imported).

References
----------
Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and
estimation. *JASA* 102(477), 359-378.
Hastie, T., Tibshirani, R. & Friedman, J. (2009). *The Elements of Statistical Learning*, 2nd
ed., Springer, section 7.10 (the one-standard-error rule).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .. import families as _families
from ..boosting import fit_threads
from ..estimators import set_family_chooser
from ..estimators.policy import FAMILY_AUTO_MAX_ROWS as MAX_ROWS
from ..estimators.policy import round_cap as resolve_n_estimators
from .compare import _default_candidates, _target_kind, compare_families
from .degeneracy import ATOM_SHARE

__all__ = ["CV", "MAX_LEVELS", "MAX_ROUNDS", "MAX_ROWS", "candidates", "choose"]

#: Folds of the comparison.
CV = 3
#: Rounds of each comparison fit (at ``COMPARE_RATE``, early stopping on held-out rows).
MAX_ROUNDS = 50
COMPARE_RATE = 0.2
#: Patience of the comparison's early stopping, in rounds (at most the estimator's).
PATIENCE = 5
#: An integer target with at most this many distinct values (and at least 3) is also tried
#: as ordered levels (``ordinal_logit``), when its labels are at least 0 and below
#: ``2 * MAX_LEVELS``: the family reads ``max(y) + 1`` classes from integer labels, so the
#: empty classes below the lowest label are at most ``MAX_LEVELS`` (wine scores 3 .. 8: 9
#: classes; a target offset by 1e9 would make a billion).
MAX_LEVELS = 10
#: Options of the estimator that the comparison fits share (the tree shape, the data
#: handling); the family-specific ones (``links``, ``param_options``) cannot apply to every
#: candidate, and the rounds are the comparison's own.
SHARED = ("scoring_rule", "step", "num_leaves", "max_depth", "min_child_samples", "subsample",
          "colsample", "reg_lambda", "max_bin", "min_split_gain", "extra_trees", "path_smooth",
          "max_cat_to_onehot", "monotone_constraints", "interaction_constraints",
          "linear_start", "validation_fraction", "n_iter_no_change", "base_learner", "backend",
          "n_jobs")


def candidates(y) -> list[str]:
    """The families ``family="auto"`` compares for a 1-D target ``y``, simplest first.

    Parameters
    ----------
    y : array_like of shape (n,), finite

    Returns
    -------
    list of str
        * integers >= 0: ``poisson``, ``negative_binomial`` (and
          ``zero_inflated_negative_binomial`` when 10 % (``ATOM_SHARE``) or more of the rows
          are 0);
        * integers from 0 to ``2 * MAX_LEVELS - 1`` with 3 to ``MAX_LEVELS`` distinct
          values: ``ordinal_logit``;
        * other integers (some negative, many levels): ``normal``;
        * real values: ``normal``, with ``beta`` in (0, 1), ``lognormal`` and
          ``gamma`` above 0, ``zero_adjusted_gamma`` for ``y >= 0`` with 10 % of zeros;
        * always ``histogram`` last (a law on the integers for an integer target).
    """
    y = np.asarray(y, dtype=np.float64)
    integer = bool(np.all(y == np.round(y)))
    zeros = float(np.mean(y == 0)) >= ATOM_SHARE
    if integer:
        names = []
        if y.min() >= 0:
            names += ["poisson", "negative_binomial"]
            names += ["zero_inflated_negative_binomial"] if zeros and y.max() > 0 else []
        if 3 <= np.unique(y).size <= MAX_LEVELS and 0 <= y.min() and y.max() < 2 * MAX_LEVELS:
            names.append("ordinal_logit")
        names = names or ["normal"]
    else:
        names = ["normal"]
        if y.min() > 0 and y.max() < 1:
            names.append("beta")
        elif y.min() > 0:
            names += ["lognormal", "gamma"]
        elif y.min() == 0 and zeros:
            names.append("zero_adjusted_gamma")
    return names + ["histogram"]


def _n_params(name: str, y: np.ndarray, kind: str) -> int:
    """Number of free parameters (ensembles) of family ``name`` built for ``y``.

    ``ordinal_logit`` reads ``K = max(y) + 1`` classes from integer labels; the cutpoints
    of the classes below ``min(y)``, which no row holds, are driven to their bound and carry
    no information, so they are not counted: a target on the levels 3 .. 8 counts 5
    cutpoints and the location, not 8 and the location.
    """
    family = _families.get(name)
    if kind == "scalar" and hasattr(family, "encode_target"):
        codes = family.encode_target(y)
        if name == "ordinal_logit":
            return int(np.max(codes) - np.min(codes)) + 1
    elif kind == "vector" and family.multivariate and family.dim is None:
        family = family.with_dim(y.shape[1])
    return len(family.param_names)


def _check_y(y) -> np.ndarray:
    if y is None:
        raise ValueError("This estimator requires y to be passed, but the target y is None.")
    y = np.asarray(y.to_numpy() if isinstance(y, pd.DataFrame | pd.Series) else y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"Target y must be numeric, got dtype {y.dtype}.") from err
    bad = ~np.isfinite(y) if y.ndim == 1 else np.isnan(y).any(axis=1)
    if bad.any():
        raise ValueError(f"Target y has {int(bad.sum())} of {len(y)} rows that are NaN or "
                         "infinite; family='auto' needs finite values.")
    if len(y) < 2 * CV or (y.ndim == 1 and np.unique(y).size < 2):
        raise ValueError(
            f"family='auto' cross-validates the candidate families on {CV} folds: it needs "
            f"at least {2 * CV} rows and 2 distinct values of y; got {len(y)} rows. Choose "
            "a family by name.")
    return y


def choose(estimator, X, y, exclude=()) -> tuple[str, pd.DataFrame]:
    """Choose the family of ``estimator`` (a ``DistributionalRegressor`` with
    ``family="auto"``) for the data ``X, y``.

    Compares :func:`candidates` (for a censored or vector target: ``compare_families``'
    default candidates; a DataFrame ``y`` of two or more columns is a vector of parts) with
    :func:`~distboost.selection.compare_families` on at most ``MAX_ROWS`` rows (a seeded
    subsample), ``CV`` folds, at most ``MAX_ROUNDS`` rounds at learning rate
    ``COMPARE_RATE`` with early stopping on held-out rows (patience ``PATIENCE``), one torch
    thread, and the estimator's tree options.
    Among the sound fits (not skipped, not degenerate), the best has the lowest mean CRPS
    (energy score for a vector target); the chosen family is the one with the fewest
    parameters whose mean is within one standard error (``std / sqrt(CV)`` of the best's
    fold scores) of the best's.

    Parameters
    ----------
    estimator : DistributionalRegressor
    X : array_like or DataFrame of shape (n, p)
    y : array_like of shape (n,), (n, 2) censored bounds or (n, d) parts
    exclude : collection of str, default=()
        Families not to compare (a caller that cannot fit them, such as the distributed
        regressor); the Normal stands in when every candidate is excluded.

    Returns
    -------
    family : str
    table : DataFrame
        ``compare_families``' table with the columns ``n_params``, ``se`` and ``within_1se``;
        ``attrs`` adds ``chosen``, ``rows`` (of the subsample), ``learning_rate`` and
        ``max_rounds`` (of the comparison's fits), ``folds``, ``rule`` and
        ``warnings`` (the candidates' warnings during the comparison, not shown: the
        chosen family's own fit warns about itself).

    Raises
    ------
    ValueError
        ``links`` or ``param_options`` given (they name one family's parameters), a target
        that is not finite, too few rows, or no sound fit among the candidates.
    """
    for option in ("links", "param_options"):
        if getattr(estimator, option, None):
            raise ValueError(
                f"{option} names the parameters of one family; family='auto' chooses the "
                f"family in fit: give a family by name to use {option}.")
    parts = isinstance(y, pd.DataFrame) and y.shape[1] >= 2  # a DataFrame of parts
    y = _check_y(y)
    kind = _target_kind(y, None, True if parts else None)
    names = candidates(y) if kind == "scalar" else _default_candidates(y, kind)[0]
    dropped = [f for f in names if f in set(exclude)]
    names = [f for f in names if f not in dropped] or ["normal"]
    seed = estimator.random_state if isinstance(estimator.random_state, int) else 0
    rng = np.random.default_rng(seed)
    rows = (np.sort(rng.choice(len(y), MAX_ROWS, replace=False)) if len(y) > MAX_ROWS
            else np.arange(len(y)))
    X_sub = X.iloc[rows] if isinstance(X, pd.DataFrame) else np.asarray(X)[rows]
    params = {k: getattr(estimator, k) for k in SHARED if hasattr(estimator, k)}
    rounds = resolve_n_estimators(estimator.n_estimators, True, len(rows))
    params.update(n_estimators=min(rounds, MAX_ROUNDS),
                  learning_rate=max(float(estimator.learning_rate), COMPARE_RATE),
                  n_iter_no_change=min(int(estimator.n_iter_no_change), PATIENCE),
                  early_stopping="holdout", verbose=0, progress=False)
    metric = "energy_score" if kind == "vector" else "crps"
    # The comparison runs by the fit's thread rule for its own rows (at most MAX_ROWS: one
    # thread): torch's thread pool fighting LightGBM's made a 100-round histogram fit on
    # 1,333 rows 17 x slower (63 s against 3.7 s on 2 cores shared with other jobs).
    # The candidates' warnings (a zero-inflated family finding no inflation to fit, ...) are
    # about models the user did not ask for: kept in the table, not shown; the chosen
    # family's final fit on all rows warns about itself.
    with fit_threads(None, len(rows)), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = compare_families(X_sub, y[rows], families=names, cv=CV,
                                 metrics=(metric,), random_state=seed,
                                 multivariate=kind == "vector", **params)
    table.attrs["warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
    table.attrs["rows"] = len(rows)
    table.attrs["learning_rate"] = params["learning_rate"]
    table.attrs["max_rounds"] = params["n_estimators"]
    table.attrs["not_compared"] = dropped
    return one_se_choice(table, {f: _n_params(f, y, kind) for f in names}, metric), table


def one_se_choice(table: pd.DataFrame, n_params: dict, metric: str = "crps") -> str:
    """The one-standard-error choice from a ``compare_families`` table.

    Parameters
    ----------
    table : DataFrame
        ``compare_families``' table over ``CV`` folds (columns ``family``, ``skipped``,
        ``degenerate``, ``<metric>_mean``, ``<metric>_std``); gains the columns
        ``n_params``, ``se`` and ``within_1se`` and ``attrs["chosen"]``, ``attrs["rule"]``
        (in place).
    n_params : dict of str to int
        Each family's number of parameters, in the order of preference among equals.
    metric : str
        The score (lower is better).

    Returns
    -------
    str
        The sound family (not skipped, not degenerate, finite score) with the fewest
        parameters whose mean score is within one standard error of the best sound one's.

    Raises
    ------
    ValueError
        No sound family.
    """
    names = list(n_params)
    table["n_params"] = [n_params[f] for f in table["family"]]
    table["se"] = table[f"{metric}_std"] / np.sqrt(CV)
    sound = (table["skipped"] == "") & (table["degenerate"] == "")
    sound &= np.isfinite(table[f"{metric}_mean"])
    if not sound.any():
        bad = table[table["degenerate"] != ""]
        why = (f"; e.g. {bad.iloc[0]['family']}: {bad.iloc[0]['degenerate']}" if len(bad)
               else "; e.g. " + str(table.iloc[0]["family"]) + ": "
               + str(table.iloc[0]["skipped"]))
        raise ValueError(
            f"family='auto': no candidate fits this target soundly ({len(bad)} of "
            f"{len(table)} fits degenerate, {int((table['skipped'] != '').sum())} skipped"
            f"{why}). Choose a family by name.")
    best = table.loc[sound, f"{metric}_mean"].idxmin()
    bound = table.loc[best, f"{metric}_mean"] + table.loc[best, "se"]
    table["within_1se"] = sound & (table[f"{metric}_mean"] <= bound)
    order = {name: i for i, name in enumerate(names)}
    pool = table[table["within_1se"]]
    chosen = min(pool["family"], key=lambda f: (pool.loc[pool["family"] == f,
                                                         "n_params"].iloc[0],
                                                order.get(f, len(order))))
    table.attrs.update(chosen=str(chosen), folds=CV, rule=(
        f"one standard error: the fewest parameters among the sound fits within "
        f"{table.loc[best, 'se']:.4g} of the best {metric}_mean "
        f"({table.loc[best, 'family']}, {table.loc[best, f'{metric}_mean']:.4g})"))
    return str(chosen)


set_family_chooser(choose)
