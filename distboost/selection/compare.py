"""Choosing a family: cross-validated scores of the full conditional model of each family.

Families are compared like with like:

* The default candidates are the families whose support holds ``y``; classification
  families (``bernoulli``, ``categorical``) are never default candidates for a regression.
* A density and a probability mass function are not on one negative log-likelihood scale (a
  density is not a probability and can exceed one), nor is a "mixed" likelihood (a
  probability at a point mass and a density elsewhere: zero-adjusted families, tweedie,
  censored families), and a density's likelihood is unbounded at a point mass of ``y``
  (many exact ties, e.g. zeros).  In either case the families are
  ranked by CRPS, a proper score on one scale for every kind of distribution (Gneiting &
  Raftery 2007, section 4.2); otherwise by the first metric (the NLL by default).
* A degenerate fit (a dispersion parameter at its floor, a predictive distribution collapsed
  onto a point, ``df <= 1`` with no finite mean and an infinite CRPS, a non-finite score) is
  flagged in the ``degenerate`` column and ranked after every sound fit.
"""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from .. import families as _families
from .. import metrics as _metrics
from .degeneracy import ATOM_SHARE, Diagnostics

__all__ = ["compare_families", "family_kind"]

_CENSORED_METRICS = {"nll", "crps", "c_index"}
_VECTOR_METRICS = {"nll", "energy_score", "variogram_score"}

_KIND_NOTE = {
    "kinds": ("Ranked by crps_mean: densities, probability mass functions and mixed "
              "likelihoods (a probability at a point mass, a density elsewhere: zero-adjusted "
              "families) are on different NLL scales (a density is not a probability), CRPS "
              "is proper for all of them."),
    "vector": ("Ranked by energy_score_mean: the vector families' densities are over spaces of "
               "different dimension (a Dirichlet's over d - 1 parts), the energy score is "
               "proper for all of them."),
    "atom": ("Ranked by crps_mean: {share:.0%} of rows equal {value:g}, a point mass at which a "
             "density's likelihood is unbounded, so NLLs are not comparable; CRPS is proper "
             "and bounded."),
}


def family_kind(family, y=None) -> str:
    """What a family's likelihood measures: ``"density"``, ``"mass"`` or ``"mixed"``.

    Parameters
    ----------
    family : str or Family
    y : array_like, optional
        The target: a family with a point mass is ``"mixed"`` only when some row of ``y``
        sits on it (otherwise its likelihood is a density on every row).

    Returns
    -------
    str
        ``"mass"`` for a discrete family (its likelihood is a probability),
        ``"mixed"`` for a censored family (a density for exact rows, a probability for
        censored ones) and for a family with a point mass (``Family.point_mass``: the
        zero-adjusted families and tweedie, a probability at zero and a density above) when
        ``y`` is not given or has rows on it,
        ``"density"`` otherwise.  Only families of one kind have
        comparable negative log-likelihoods.
    """
    from ..families.censored import Censored

    family = _families.get(family)
    if isinstance(family, Censored):
        return "mixed"
    if family.point_mass is not None:
        if y is None or np.ndim(y) != 1 or np.any(np.asarray(y) == family.point_mass):
            return "mixed"
        return "density"
    if family.discrete or family.support.integer:
        return "mass"
    return "density"


def _target_kind(y: np.ndarray, families, multivariate: bool | None) -> str:
    """``"scalar"``, ``"censored"`` (an (n, 2) array of bounds) or ``"vector"`` (d parts).

    Two columns are bounds when ``multivariate`` is False or every given family is
    univariate, parts when it is True or every given family is a vector family; otherwise
    they are parts if some row has ``y[:, 0] > y[:, 1]``, bounds if some bound is infinite
    or some row exact (``y[:, 0] == y[:, 1]``), and ambiguous (a clear error) if neither.
    """
    if y.ndim == 1:
        return "scalar"
    if y.ndim != 2:
        raise ValueError(f"y must be 1-D, (n, 2) censored bounds or (n, d) parts; got shape "
                         f"{y.shape}.")
    if multivariate is None and families is not None:
        vector = {bool(_families.get(f).multivariate) for f in families}
        multivariate = vector.pop() if len(vector) == 1 else None
    if multivariate is not None:
        if not multivariate and y.shape[1] != 2:
            raise ValueError(f"multivariate=False needs (n, 2) censored bounds; y has shape "
                             f"{y.shape}.")
        return "vector" if multivariate else "censored"
    if y.shape[1] != 2:
        return "vector"
    with np.errstate(invalid="ignore"):
        if np.any(y[:, 0] > y[:, 1]):
            return "vector"
        if np.isinf(y).any() or np.any(y[:, 0] == y[:, 1]):
            return "censored"
    raise ValueError(
        "y has 2 columns that could be censored bounds [lower, upper] or a target of 2 parts "
        "(every row has y[:, 0] < y[:, 1], no infinite bound, no exact row): pass "
        "multivariate=True for 2 parts or multivariate=False for censored bounds."
    )


def _default_candidates(y: np.ndarray, kind: str) -> tuple[list[str], dict[str, str]]:
    """Registered families whose support holds ``y`` (censored twins for censored ``y``,
    vector families for a target of parts).

    Returns
    -------
    names : list of str
    excluded : dict of str to str
        Every other registered family and why it is not a candidate.
    """
    censored = kind == "censored"
    names = _families.available()
    if censored:  # the censored twins of the families that declare one
        names = [f"censored_{f}" for f in names if _families.get(f).censorable]
    kept, excluded = [], {}
    for name in names:
        family = _with_parts(_families.get(name), y, kind)
        if family.multivariate != (kind == "vector"):
            excluded[name] = ("a vector family (y of shape (n, d))" if family.multivariate
                              else "a family of one value per row")
            continue
        if family.classification:
            excluded[name] = "a classification family (use DistributionalClassifier)"
            continue
        try:
            family.validate_y(y)
        except ValueError as err:
            excluded[name] = str(err)
            continue
        if (family.point_mass is not None and not censored
                and not np.any(np.asarray(y) == family.point_mass)):
            # Without rows at the atom its MLE sits on the boundary (an empty point mass):
            # the family without the atom is already a candidate.
            excluded[name] = f"no rows of y at its point mass {family.point_mass:g}"
            continue
        kept.append(name)
    return kept, excluded


def _with_parts(family, y: np.ndarray, kind: str):
    """A vector family built for the ``d`` parts of ``y``; a family that reads its shape from
    a scalar target (``encode_target``: ``ordinal_logit``'s number of classes, ``histogram``'s
    bins) built from the whole ``y``, as a fit on all rows would build it, so that every fold
    has the same classes or bins (a copy: never the caller's object); others unchanged."""
    if kind == "vector" and family.multivariate and family.dim is None:
        return family.with_dim(y.shape[1])
    if kind == "scalar" and not family.multivariate and hasattr(family, "encode_target"):
        family = copy.deepcopy(family)
        try:
            family.encode_target(y)
        except ValueError:
            pass  # validate_y says why the family cannot hold y (skipped / excluded)
    return family


def _point_mass(y: np.ndarray) -> tuple[float, float]:
    """The most frequent value of ``y`` and the share of rows holding it."""
    values, counts = np.unique(y, return_counts=True)
    k = int(np.argmax(counts))
    return float(values[k]), float(counts[k] / y.size)


def _spread(y: np.ndarray, censored: bool) -> float:
    """Interquartile range of ``y`` (of the lower bounds for censored ``y``), else its std."""
    v = y[:, 0] if censored else y
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0.0
    q25, q75 = np.percentile(v, [25, 75])
    return float(q75 - q25) if q75 > q25 else float(np.std(v))


def compare_families(X, y, families=None, cv=5, metrics=None,
                     random_state=0, progress: bool | None = False, n_jobs: int | None = None,
                     multivariate: bool | None = None, **estimator_params) -> pd.DataFrame:
    """Cross-validate a boosted model of each family on the same folds, like with like.

    Parameters
    ----------
    X : array_like or DataFrame of shape (n, p)
    y : array_like of shape (n,), (n, 2) censored bounds, or (n, d) parts of a vector target
        (the vector families ``multivariate_normal``, ``dirichlet``; metrics ``nll``,
        ``energy_score``, ``variogram_score``, by default ``nll`` and ``energy_score``)
    families : sequence of str or Family, optional
        Default: every registered family whose support holds ``y`` (count families only for
        non-negative integer ``y``, positive families only for positive ``y``, ...; their
        ``censored_`` twins for censored ``y``), never the classification families
        ``bernoulli`` and ``categorical``.  The others are listed with the reason in
        ``table.attrs["excluded"]``.  A family given here whose support does not hold ``y``
        gets a row with the reason in ``skipped``.
    cv : int
        Number of folds (shuffled, seeded by ``random_state``).
    metrics : sequence of str, optional
        Among ``nll``, ``crps``, ``coverage_90`` (any ``coverage_<p>``), ``interval_score_90``,
        for censored ``y``: ``nll`` (censored), ``crps`` (survival CRPS), ``c_index``, and
        for a vector ``y``: ``nll``, ``energy_score``, ``variogram_score``.  Default
        ``("nll", "crps", "coverage_90")``, ``("nll", "energy_score")`` for a vector ``y``.
        ``crps`` (``energy_score``) is added when the ranking needs it (see Returns).
    random_state : int
    progress : bool or None, default=False
        Show a progress bar over the fits (families x folds; ``tqdm.auto``: a widget in a
        notebook, which needs ``ipywidgets``, a text bar on stderr).  None is "auto": a bar
        in a Jupyter notebook or on a terminal, none in logs and CI.
    n_jobs : int, optional
        Fit the families' folds in parallel on ``n_jobs`` processes (joblib; -1: every
        core), each model with one LightGBM thread (``n_jobs=1`` unless given in
        ``estimator_params``).  The table is the same as the serial one's: every fold
        keeps its own seed.  None or 1: serial.  Families given as ``Family`` objects must
        be picklable (classes importable by the worker processes).
    multivariate : bool, optional
        Whether a two-column ``y`` holds two parts (True) or censored bounds (False).  None:
        read from ``families`` when they are all of one kind, else from ``y`` (parts when
        some row has ``y[:, 0] > y[:, 1]``, bounds when a bound is infinite or a row exact;
        otherwise a ValueError asks for it).  Three or more columns are always parts.
    **estimator_params
        Passed to every ``DistributionalRegressor``.

    Returns
    -------
    DataFrame
        One row per family: ``family``; ``kind`` (``density``, ``mass`` for a count family,
        ``mixed`` for a censored one or one with a point mass, e.g. ``zero_adjusted_gamma``
        or ``tweedie``: see :func:`family_kind`); ``<metric>_mean`` and
        ``<metric>_std`` over folds; ``fit_seconds``; ``degenerate`` (why the fit is
        degenerate, else ``""``: a floored parameter such as ``scale`` at its floor on 5 %
        (``FLOOR_SHARE``) of the held-out rows or more, a predictive 50 % interval narrower
        than 1e-3 (``COLLAPSE_RATIO``) x the interquartile range of ``y`` on 5 %
        (``COLLAPSE_SHARE``) of the rows, ``df <= 1`` on any row (no finite mean, infinite
        CRPS), a non-finite mean or NLL / CRPS); and ``skipped`` (why a family was not
        fitted, e.g. its support excludes ``y`` or a fold failed).

        Sound fits come first, then degenerate ones, then skipped ones.  Within each group
        the rows are sorted by ``crps_mean`` when the fitted families are of more than one
        kind, or when they are densities and one value holds 10 % (``ATOM_SHARE``) of ``y`` (a
        density's likelihood is unbounded at a point mass); otherwise by the first metric
        (``c_index`` descending, ``coverage_<p>`` by its distance to ``p``, the others
        ascending).  ``table.attrs`` holds ``ranked_by`` (the column), ``note`` (why, when
        not the first metric), ``best`` (the first sound family, or None) and ``excluded``.

    Warns
    -----
    Every warning raised while fitting a fold is re-emitted with the family and the fold(s),
    e.g. ``"compare_families: family 'gamma', fold 3/5: ..."``.  A ``UserWarning`` when every
    fitted family is degenerate.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and
    estimation. *Journal of the American Statistical Association* 102(477), 359-378.
    """
    y = np.asarray(y, dtype=np.float64)
    target = _target_kind(y, families, multivariate)
    censored = target == "censored"
    excluded: dict[str, str] = {}
    if families is None:
        families, excluded = _default_candidates(y, target)
    if metrics is None:
        metrics = ("nll", "energy_score") if target == "vector" else ("nll", "crps",
                                                                      "coverage_90")
    metrics = tuple(metrics)
    unknown = [m for m in metrics if not _known_metric(m)]
    if unknown or not metrics:
        raise ValueError(f"Unknown metric(s) {unknown} for compare_families; use nll, crps, "
                         "coverage_<p>, interval_score_<p>, c_index, energy_score or "
                         "variogram_score.")
    if censored and not set(metrics) <= _CENSORED_METRICS:
        metrics = tuple(m for m in metrics if m in _CENSORED_METRICS) or ("nll",)
    if target == "vector" and not set(metrics) <= _VECTOR_METRICS:
        metrics = tuple(m for m in metrics if m in _VECTOR_METRICS) or ("nll", "energy_score")

    fams = [_with_parts(_families.get(f), y, target) for f in families]
    names = [f if isinstance(f, str) else fam.name for f, fam in zip(families, fams, strict=True)]
    # Families built from y (classes, bins) go to the folds as built.
    specs = [fam if target == "scalar" and hasattr(fam, "encode_target") else f
             for f, fam in zip(families, fams, strict=True)]
    holds = []
    for fam in fams:
        try:
            fam.validate_y(y)
            holds.append(True)
        except ValueError:
            holds.append(False)
    kinds = {family_kind(fam, y) for fam, ok in zip(fams, holds, strict=True) if ok}
    atom_value, atom_share = (_point_mass(y) if target == "scalar" and y.size
                              else (np.nan, 0.0))
    ranking, note = metrics[0], ""
    if len(kinds) > 1 and target == "vector":
        ranking, note = "energy_score", _KIND_NOTE["vector"]
    elif len(kinds) > 1:
        ranking, note = "crps", _KIND_NOTE["kinds"]
    elif kinds == {"density"} and atom_share >= ATOM_SHARE:
        ranking = "crps"
        note = _KIND_NOTE["atom"].format(share=atom_share, value=atom_value)
    if ranking in ("crps", "energy_score") and ranking not in metrics:
        metrics = metrics + (ranking,)

    context = {"spread": _spread(y, censored), "atom": (atom_value, atom_share)}
    folds = list(KFold(cv, shuffle=True, random_state=random_state).split(np.arange(len(y))))
    results = _run_folds(specs, fams, holds, X, y, folds, metrics, censored, random_state,
                         estimator_params, context, progress, n_jobs, names)
    rows = [_evaluate(name, fam, y, results.get(i, []), len(folds), metrics, context)
            for i, (name, fam) in enumerate(zip(names, fams, strict=True))]
    table = _rank(pd.DataFrame(rows, columns=["family", "kind", "skipped", "degenerate"])
                  if not rows else pd.DataFrame(rows), metrics, ranking)
    fitted = table["skipped"] == ""
    sound = fitted & (table["degenerate"] == "")
    if fitted.any() and not sound.any():
        warnings.warn(
            f"compare_families: every fitted family ({fitted.sum()}) is degenerate on this "
            "target; see the table's 'degenerate' column.", UserWarning, stacklevel=2)
    table.attrs.update(ranked_by=f"{ranking}_mean", note=note, excluded=excluded,
                       best=str(table.loc[sound.idxmax(), "family"]) if sound.any() else None)
    return table


def _run_folds(specs, fams, holds, X, y, folds, metrics, censored, random_state,
               estimator_params, context, progress, n_jobs, names) -> dict[int, list[dict]]:
    """Fit every family that holds ``y`` on every fold, serially or on ``n_jobs`` processes.

    Returns ``{family position: [fold result, ...]}`` in fold order, up to and including a
    family's first failing fold (the serial run stops there; a parallel one drops the folds
    after it, so both give the same table).
    """
    from ..estimators import task_bar

    tasks = [(i, k) for i, ok in enumerate(holds) if ok for k in range(len(folds))]
    parallel = n_jobs is not None and n_jobs != 1
    params = dict(estimator_params)
    if parallel:
        params.setdefault("n_jobs", 1)

    def job(i, k):
        return _fit_fold(specs[i], fams[i], X, y, folds[k], k, metrics, censored,
                         random_state, params, context)

    if parallel:
        from joblib import Parallel, delayed

        stream = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_fit_fold)(specs[i], fams[i], X, y, folds[k], k, metrics, censored,
                               random_state, params, context) for i, k in tasks)
    else:
        failed: set[int] = set()
        stream = (None if i in failed else job(i, k) for i, k in tasks)
    bar = task_bar(progress, len(tasks), "compare_families")
    results: dict[int, list[dict]] = {}
    try:
        for (i, k), res in zip(tasks, stream, strict=True):
            if bar is not None:
                bar.set_postfix_str(f"{names[i]}, fold {k + 1}/{len(folds)}", refresh=False)
                bar.update(1)
            done = results.setdefault(i, [])
            if res is None or (done and done[-1]["error"]):
                continue  # after the family's first failing fold
            done.append(res)
            if res["error"] and not parallel:
                failed.add(i)
    finally:
        if bar is not None:
            bar.close()
    return results


def _fit_fold(spec, family, X, y, fold, k, metrics, censored, random_state, estimator_params,
              context) -> dict:
    """Fit ``family`` (given as ``spec``, a name or a Family) on one fold and score it.

    Returns a dict: ``scores`` (metric -> float), ``seconds``, ``diag`` (this fold's
    :class:`~distboost.selection.degeneracy.Diagnostics`), ``warnings`` (category, message,
    filename, lineno) and ``error``
    (``""``, or the skip reason of a fold the family cannot fit).
    """
    from ..estimators import DistributionalRegressor

    tr, te = fold
    out = {"k": k, "scores": {}, "seconds": np.nan, "diag": Diagnostics(family, context),
           "warnings": [], "error": "", "failed": False}
    model = DistributionalRegressor(family=spec, random_state=random_state + k,
                                    **estimator_params)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            model.fit(_take(X, tr), y[tr])
            out["seconds"] = time.perf_counter() - t0
            X_te = _take(X, te)
            dist = model.predict_dist(X_te)
            out["scores"] = {m: _score(m, model, X_te, y[te], censored) for m in metrics}
            out["diag"].add(model, dist, y[te], out["scores"])
        except ValueError as err:  # a fold whose target the family cannot fit
            out["error"] = f"{err}"
        except ArithmeticError as err:  # the engine's non-finite loss, torch/scipy overflows
            out["error"], out["failed"] = f"{type(err).__name__}: {err}", True
        finally:
            out["warnings"] = [(w.category, str(w.message), w.filename, w.lineno)
                               for w in records]
    return out


def _evaluate(name, family, y, fold_results, n_folds, metrics, context) -> dict:
    """One row of the table from a family's fold results (scores, degeneracy, skip reason).
    """
    row = {"family": name, "kind": family_kind(family, y), "skipped": "", "degenerate": ""}
    try:
        family.validate_y(y)
    except ValueError as err:
        row["skipped"] = str(err)
        return row
    _reemit([(r["k"], w) for r in fold_results for w in r["warnings"]], name, n_folds)
    last = fold_results[-1]
    if last["error"]:
        where = f"fold {last['k'] + 1}/{n_folds}"
        row["skipped"] = (f"{where} failed: {last['error']}" if last["failed"]
                          else f"{where}: {last['error']}")
        if last["failed"]:
            warnings.warn(f"compare_families: family {name!r}, {row['skipped']}; the family "
                          "is skipped.", RuntimeWarning, stacklevel=4)
        return row
    diag = Diagnostics(family, context)
    for r in fold_results:
        diag.merge(r["diag"])
    with np.errstate(invalid="ignore"):  # the std of infinite scores is NaN
        for m in metrics:
            values = [r["scores"][m] for r in fold_results]
            row[f"{m}_mean"] = float(np.mean(values))
            row[f"{m}_std"] = float(np.std(values))
    row["fit_seconds"] = float(np.mean([r["seconds"] for r in fold_results]))
    row["degenerate"] = diag.reason()
    return row


def _reemit(caught, name, n_folds: int) -> None:
    """Warn again with the family and the folds, one warning per distinct message."""
    groups: dict[tuple, list[int]] = {}
    first: dict[tuple, tuple] = {}
    for k, w in caught:  # w: (category, message, filename, lineno)
        key = (w[0], w[1])
        groups.setdefault(key, []).append(k + 1)
        first.setdefault(key, w)
    for key, ks in groups.items():
        category, message, filename, lineno = first[key]
        where = (f"fold {ks[0]}/{n_folds}" if len(ks) == 1
                 else f"folds {','.join(map(str, sorted(set(ks))))}/{n_folds}")
        warnings.warn_explicit(f"compare_families: family {name!r}, {where}: {message}",
                               category, filename, lineno)


def _rank(table: pd.DataFrame, metrics, ranking: str) -> pd.DataFrame:
    """Sound fits first, then degenerate, then skipped; each group by the ranking metric."""
    for m in metrics:
        for stat in ("mean", "std"):
            if f"{m}_{stat}" not in table:
                table[f"{m}_{stat}"] = np.nan
    if "fit_seconds" not in table:
        table["fit_seconds"] = np.nan
    cols = ["family", "kind", *(f"{m}_{s}" for m in metrics for s in ("mean", "std")),
            "fit_seconds", "degenerate", "skipped"]
    table = table[cols]
    key = table[f"{ranking}_mean"]
    if ranking == "c_index":
        key = -key
    elif ranking.startswith("coverage_"):
        key = (key - int(ranking.split("_")[1]) / 100).abs()
    status = np.where(table["skipped"] != "", 2, np.where(table["degenerate"] != "", 1, 0))
    order = pd.DataFrame({"status": status, "key": key.to_numpy()}).sort_values(
        ["status", "key"], na_position="last", kind="stable").index
    return table.iloc[order].reset_index(drop=True)


def _known_metric(m) -> bool:
    """A metric of compare_families: ``nll``, ``crps``, ``c_index``, or ``coverage_<p>`` /
    ``interval_score_<p>`` for a percent ``p`` that :func:`distboost.metrics.get_scorer`
    accepts."""
    if m in ("nll", "crps", "c_index", "energy_score", "variogram_score"):
        return True
    head, _, _ = str(m).rpartition("_")
    if head not in ("coverage", "interval_score"):
        return False
    try:
        _metrics.get_scorer(m)
    except ValueError:
        return False
    return True


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else np.asarray(X)[idx]


# compare_families reports losses as losses (lower is better) and c_index as is: the scorer
# of distboost.metrics (higher is better) and the sign that turns it into the column.
_SCORERS = {
    (False, "nll"): ("nll", -1.0),
    (False, "crps"): ("crps", -1.0),
    (False, "energy_score"): ("energy_score", -1.0),
    (False, "variogram_score"): ("variogram_score", -1.0),
    (True, "nll"): ("censored_nll", -1.0),
    (True, "crps"): ("survival_crps", -1.0),
    (True, "c_index"): ("concordance_index", 1.0),
}


def _score(metric: str, model, X, y, censored: bool) -> float:
    """One fold's score of ``metric`` for a fitted model on held-out rows, through the
    scikit-learn scorers of :mod:`distboost.metrics` (the raw coverage, which no scorer
    returns, through :func:`distboost.metrics.coverage`)."""
    if not censored and metric.startswith("coverage_"):
        return float(_metrics.coverage(_metrics.predict_dist(model, X), y,
                                       int(metric.split("_")[1]) / 100))
    if not censored and metric.startswith("interval_score_"):
        name, sign = metric, -1.0
    elif (censored, metric) in _SCORERS:
        name, sign = _SCORERS[censored, metric]
    else:
        raise ValueError(f"Unknown metric {metric!r} for compare_families.")
    return sign * _metrics.get_scorer(name)(model, X, y)
