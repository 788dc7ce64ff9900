"""Fit time of every family against LightGBM growing the same number of trees a round.

Part of ``benchmarks/speed.py --families all`` (issue 30, item 1): for each family with ``K``
parameters, ``DistributionalRegressor(family=...)`` (its default step, no early stopping, no
calibration, no linear start, 31 leaves, learning rate 0.1, 2 threads) against raw LightGBM
``multiclass`` with ``K`` classes (``regression`` for ``K = 1``) on the same ``n x 20`` rows,
same leaves and rounds (200 rounds; 100 on float32 X from 1,000,000 rows).  Each fit runs in
a fresh child process (:func:`benchmarks.speed.run_child`); the two are interleaved and the
best of ``--repeat`` kept, so the machine's load hits both alike.  Each row gives the wall-clock
and the CPU seconds (user + system of the child) of both fits: on a machine shared with other
work the CPU ratio is the steadier one (``--threads 1`` removes thread waiting from it).
Target: ratio <= 1.25.

The target of each family is the synthetic ``y`` of :func:`benchmarks.speed.make_data`
mapped into its support (see :func:`family_target`); the fitted values do not matter here,
only that each family fits a target of its own kind.
"""

from __future__ import annotations

import numpy as np

#: Ratio target of issue 30, item 1.
TARGET = 1.25
#: Wrapped twins measured besides the registered families.
WRAPPERS = ("censored_normal", "censored_lognormal", "censored_weibull", "censored_gamma",
            "truncated_normal")


def family_names(spec: str) -> list[str]:
    """``"all"``: every registered family a ``DistributionalRegressor`` fits by name with a
    1-D target, and :data:`WRAPPERS`; else the comma-separated names."""
    import distboost as db

    if spec != "all":
        return [s for s in spec.split(",") if s]
    names = []
    for name in db.families.available():
        try:
            fam = db.families.get(name)
            skip = fam.multivariate or fam.classification
        except ValueError:  # needs its number of classes (the classifier's)
            skip = True
        if not skip and name != "ordinal_logit":
            names.append(name)
    return names + list(WRAPPERS)


def make_family(name: str):
    import distboost as db

    if name == "truncated_normal":
        return db.families.Truncated("normal", low=0.0)
    return db.families.get(name)


def family_target(name: str, y: np.ndarray, seed: int = 0) -> np.ndarray:
    """The synthetic target ``y`` mapped into the support of family ``name``."""
    rng = np.random.default_rng(seed + 1)
    z = (y - y.mean()) / y.std()
    positive = np.exp(0.5 * z)
    zeros = rng.uniform(size=y.size) < 0.3
    counts = rng.poisson(np.exp(0.5 * np.tanh(z) + 1.0)).astype(np.float64)
    if name.startswith("censored_"):
        inner = name[len("censored_"):]
        t = family_target(inner, y, seed)
        c = np.quantile(t, 0.7) * rng.uniform(0.8, 1.5, size=y.size)  # ~30 % censored
        return np.column_stack([np.minimum(t, c), np.where(t <= c, t, np.inf)])
    if name in ("truncated_normal", "half_normal"):
        return np.abs(z)
    if name in ("poisson", "negative_binomial"):
        return counts
    if name.startswith("zero_inflated"):
        return np.where(zeros, 0.0, counts)
    if name.startswith("zero_adjusted") or name == "tweedie":
        return np.where(zeros, 0.0, positive)
    if name == "beta":
        return 1.0 / (1.0 + np.exp(-z))
    fam = make_family(name)
    return positive if fam.support.low >= 0 else z


def n_outputs(name: str, X, y) -> int:
    """``K``: the ensembles the family's fit grows (the histogram's from its encoded target)."""
    import distboost as db

    fam = make_family(name)
    if name == "histogram":
        model = db.DistributionalRegressor(family=fam, n_estimators=1, early_stopping=False,
                                           calibrate=False, linear_start=False)
        model.fit(X[:2000], y[:2000])
        return model.family_.n_params
    return fam.n_params


def lightgbm_floor(X, y, k: int, rounds: int, threads: int):
    """Raw LightGBM growing ``k`` trees a round with a built-in objective."""
    import lightgbm as lgb

    params = {"num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20, "verbosity": -1,
              "num_threads": threads, "deterministic": True, "force_row_wise": True}
    score = y[:, 0] if y.ndim == 2 else y
    if k == 1:
        params["objective"] = "regression"
        label = score
    else:
        params.update(objective="multiclass", num_class=k)
        label = np.searchsorted(np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]), score)
    return lgb.train(params, lgb.Dataset(X, label=label), num_boost_round=rounds)


def family_fit(name: str, X, y, rounds: int, threads: int):
    import distboost as db

    model = db.DistributionalRegressor(
        family=make_family(name), early_stopping=False, calibrate=False, linear_start=False,
        n_estimators=rounds, learning_rate=0.1, num_leaves=31, min_child_samples=20,
        n_jobs=threads)
    return model.fit(X, y)


def bench_families(names, sizes, repeat: int, run_child, rounds_for) -> dict:
    """Print one table row per family and size; returns ``{(name, n): (seconds, floor)}``."""
    out = {}
    print("| family | K | rows | fit s | floor s | ratio (wall) | fit CPU s | floor CPU s "
          "| ratio (CPU) |\n|---|---|---|---|---|---|---|---|---|", flush=True)
    for n in sizes:
        rounds = rounds_for(n)
        for name in names:
            best = {w: {"seconds": float("inf"), "cpu": float("inf")}
                    for w in ("floor", "family")}
            k = None
            try:
                for _ in range(repeat):
                    r = run_child(f"family:{name}", n, rounds)
                    k = r["k"]
                    for key in ("seconds", "cpu"):
                        best["family"][key] = min(best["family"][key], r[key])
                    r = run_child(f"floor:{k}:{name}", n, rounds)
                    for key in ("seconds", "cpu"):
                        best["floor"][key] = min(best["floor"][key], r[key])
            except RuntimeError as err:
                print(f"| {name} | failed: {str(err).splitlines()[-1][:120]} |", flush=True)
                continue
            fam, ref = best["family"], best["floor"]
            wall, cpu = fam["seconds"] / ref["seconds"], fam["cpu"] / ref["cpu"]
            flag = "" if cpu <= TARGET else " (> 1.25)"  # CPU: the steadier on a shared machine
            print(f"| {name} | {k} | {n:,} | {fam['seconds']:.2f} | {ref['seconds']:.2f} | "
                  f"{wall:.2f} | {fam['cpu']:.2f} | {ref['cpu']:.2f} | {cpu:.2f}{flag} |",
                  flush=True)
            out[(name, n)] = best
    return out


def child(what: str, X, y, rounds: int, threads: int) -> dict:
    """One timed fit in a child process: ``family:<name>`` or ``floor:<K>:<name>``."""
    import resource
    import time

    def cpu():
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_utime + u.ru_stime

    kind, *rest = what.split(":")
    name = rest[-1]
    target = family_target(name, y)
    k = None
    if kind == "family":
        k = n_outputs(name, X, target)
        t0, c0 = time.perf_counter(), cpu()
        family_fit(name, X, target, rounds, threads)
    else:
        k = int(rest[0])
        t0, c0 = time.perf_counter(), cpu()
        lightgbm_floor(X, target, k, rounds, threads)
    return {"seconds": time.perf_counter() - t0, "cpu": cpu() - c0, "k": k}
