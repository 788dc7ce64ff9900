"""What a default fit costs beyond its trees (issue 51, item 2): the parts of one default
``DistributionalRegressor`` fit, one thread, against LightGBM growing the trees it kept.

For each row count (synthetic: ``benchmarks/speed.make_data(n, p=9)``, a heteroscedastic
Normal-like target):

1. the CPU seconds of a default fit (``n_jobs=1``; ``time.process_time``), its validation
   mode, rounds run and each parameter's kept rounds;
2. the reference: raw LightGBM (``objective="regression"``, one thread, the fit's tree size
   and learning rate) growing each parameter's kept trees on the fit's training rows, CPU
   seconds summed over the parameters; the ratio ``fit / reference`` is the acceptance
   figure of issue 51 (target <= 2);
3. where the fit's time goes: a second, profiled fit (``cProfile``; the profiler's own
   overhead is spread over the parts), its internal time grouped into the parts named below;
   each part's share is applied to the unprofiled CPU seconds:

   * ``trees``: LightGBM growing every round's trees (kept or not);
   * ``tree predictions``: LightGBM predicting rows during the fit (validation rows, the
     refit's or the start's scores);
   * ``datasets``: LightGBM building its binned datasets;
   * ``derivatives``: the family's gradients and Hessians (and the step rule's solves);
   * ``dispersion search``: the per-round dispersion shift on the validation rows;
   * ``engine``: the engine's own bookkeeping (line search, early stopping, buffers);
   * ``other``: everything else (validation of inputs, start values, torch glue).

Rounds grown past a parameter's kept round (patience, per-parameter continuation) are part
of ``trees``: ``trees grown`` against ``trees kept`` says how much.

Run: ``python benchmarks/fit_parts.py [--rows 40000 400000] [--out FILE.json]``
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speed import make_data  # noqa: E402  (benchmarks/speed.py: the synthetic rows)

#: (part, predicate on (file, function name)) in order: the first match takes the time.
PARTS = (
    ("trees", lambda f, n: f.endswith("lightgbm/basic.py") and n == "__boost"),
    ("tree predictions", lambda f, n: f.endswith("lightgbm/basic.py") and "predict" in n),
    ("datasets", lambda f, n: f.endswith("lightgbm/basic.py")
     and ("init_from" in n or "construct" in n or "_lazy_init" in n)),
    ("derivatives", lambda f, n: "/distboost/families/" in f
     or f.endswith("boosting/derivatives.py") or f.endswith("boosting/natural_step.py")
     or f.endswith("distboost/objective.py")),
    ("dispersion search", lambda f, n: f.endswith("estimators/dispersion_shift.py")),
    ("engine", lambda f, n: "/distboost/boosting/" in f),
)


def fit(X, y):
    import distboost as db

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return db.DistributionalRegressor(random_state=0, n_jobs=1).fit(X, y)


def reference(X, y, model) -> float:
    """CPU seconds of raw LightGBM growing each parameter's kept trees on the fit's
    training rows (the held-out split's, under "holdout")."""
    import lightgbm as lgb

    n_train = model.fit_plan_.training_rows
    rows = np.random.default_rng(0).permutation(len(y))[:n_train]
    params = {"objective": "regression", "num_leaves": int(model.num_leaves_),
              "min_child_samples": int(model.min_child_samples_),
              "learning_rate": model.learning_rate, "num_threads": 1, "verbosity": -1,
              "deterministic": True}
    total = 0.0
    for kept in model.best_iterations_.values():
        data = lgb.Dataset(X[rows], label=y[rows])
        cpu = time.process_time()
        lgb.train(params, data, num_boost_round=max(int(kept), 1))
        total += time.process_time() - cpu
    return total


def _part(file: str, name: str) -> str:
    for part, match in PARTS:
        if match(file, name):
            return part
    return "other"


def parts(stats: pstats.Stats) -> dict:
    """Internal seconds of the profiled fit, by part; a built-in (a torch or NumPy kernel)
    counts for the part of its caller that spent most time in it."""
    out = {name: 0.0 for name, _ in PARTS} | {"other": 0.0}
    for (file, _, name), (_, _, tottime, _, callers) in stats.stats.items():
        if file == "~" and callers:
            (file, _, name) = max(callers, key=lambda c: callers[c][2])
        out[_part(file, name)] += tottime
    return out


def measure(n: int) -> dict:
    X, y = make_data(n, p=9)
    cpu = time.process_time()
    model = fit(X, y)
    fit_cpu = time.process_time() - cpu
    ref = reference(X, y, model)
    profile = cProfile.Profile()
    profile.enable()
    fit(X, y)
    profile.disable()
    seconds = parts(pstats.Stats(profile))
    total = sum(seconds.values())
    kept = {k: int(v) for k, v in model.best_iterations_.items()}
    return {"rows": n, "validation": model.fit_plan_.validation, "fit_cpu_s": fit_cpu,
            "reference_cpu_s": ref, "ratio": fit_cpu / ref, "rounds": int(model.n_iter_),
            "trees_grown": int(model.n_iter_) * len(kept),
            "trees_kept": int(sum(kept.values())), "kept": kept,
            "parts_cpu_s": {k: fit_cpu * v / total for k, v in seconds.items()}}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="+", type=int, default=[40_000, 400_000])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    fit(*make_data(2_000, p=9))  # the imports and a first fit's one-time costs, untimed
    rows = []
    for n in args.rows:
        r = measure(n)
        rows.append(r)
        print(f"{n:,} rows ({r['validation']}): fit {r['fit_cpu_s']:.2f} CPU s, LightGBM "
              f"growing the {r['trees_kept']:,} kept trees {r['reference_cpu_s']:.2f} s: "
              f"{r['ratio']:.2f} x; {r['rounds']} rounds, {r['trees_grown']:,} trees grown, "
              f"kept {r['kept']}", flush=True)
        for part, s in r["parts_cpu_s"].items():
            print(f"    {part:<18} {s:7.2f} s  {s / r['fit_cpu_s']:6.1%}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
