"""Speed and memory of distboost against references measured in the same run.

Prints one line per measurement with the ratio to its reference:

1. fit, n x 20 synthetic rows, Normal, natural step, 31 leaves, learning rate 0.1, no early
   stopping, 2 threads (200 rounds below 1,000,000 rows, else 100 rounds on float32 X),
   against raw LightGBM growing the same 2 trees a round with a built-in objective
   (``multiclass`` with 2 classes).  Best of ``--repeat`` (3), the two interleaved; each fit
   runs in a fresh child process that also reports its peak resident memory.  Targets
   (issue 14): ratio <= 1.10 at 20,000 rows, <= 1.05 at 200,000, <= 1.10 at 2,000,000; peak
   memory at 2,000,000 rows <= 2 x LightGBM's.  ``--what engine`` times the engine with the
   Normal family's closed-form derivatives instead of the estimator (both: ``--what both``).
2. fit against LightGBMLSS (Gaussian, same task, 20,000 rows, 200 rounds), where installed.
   Target <= 0.5 x its time.
3. fit against NGBoost (500 rounds, its default depth-3 trees, 20,000 rows), where installed.
   Target >= 20 x faster.
4. ``predict_dist`` plus three quantiles on 100,000 rows against LightGBM's raw predict of
   the same trees.  Target <= 3 x.

Timings on a shared machine vary a lot: print ``uptime`` with the figures, compare ratios
(each measured in one run), never absolute seconds across runs.

5. ``--families all`` (or a list of names) replaces [1]-[4] with a table of every family's
   fit seconds against LightGBM growing its ``K`` trees a round (issue 30; see
   ``benchmarks/speed_families.py``).  Target: ratio <= 1.25.

Run: ``.venv/bin/python benchmarks/speed.py [--quick] [--sizes 20000,200000,2000000]
[--repeat 3] [--what estimator|engine|both] [--no-peers] [--families all]`` (``make bench``
installs the peers).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")

#: Ratio targets of [1] by number of rows (issue 14, item 7).
TARGETS = {20_000: 1.10, 200_000: 1.05, 2_000_000: 1.10}
#: From this many rows: 100 rounds on float32 X (the out-of-memory-pressure case).
LARGE = 1_000_000
THREADS = int(os.environ.get("DISTBOOST_BENCH_THREADS", "2"))


def make_data(n: int, p: int = 20, seed: int = 0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(dtype)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.normal(size=n) * np.exp(0.5 * X[:, 2])
    return X, y


def timed(fn, repeat: int = 1):
    """Best wall-clock time of ``repeat`` runs."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def rounds_for(n: int) -> int:
    return 100 if n >= LARGE else 200


def estimator(rounds: int):
    """The estimator the targets are about (issue 14, item 7)."""
    import distboost as db

    return db.DistributionalRegressor(
        family="normal", step="natural", early_stopping=False, calibrate=False,
        linear_start=False, n_estimators=rounds, learning_rate=0.1, num_leaves=31,
        min_child_samples=20, n_jobs=THREADS)


def lightgbm_reference(X, y, rounds: int):
    """Raw LightGBM, 2 trees a round from a built-in objective, same tree options."""
    import lightgbm as lgb

    labels = (y > np.median(y)).astype(int)
    params = {"objective": "multiclass", "num_class": 2, "num_leaves": 31,
              "learning_rate": 0.1, "min_data_in_leaf": 20, "verbosity": -1,
              "num_threads": THREADS, "deterministic": True, "force_row_wise": True}
    return lgb.train(params, lgb.Dataset(X, label=labels), num_boost_round=rounds)


def engine_fit(X, y, rounds: int):
    """The engine alone with the Normal family's closed-form derivatives (no estimator
    plumbing: validation, start values and the family objective are not timed apart)."""
    import torch

    import distboost as db
    from distboost.boosting import fit_boosting
    from distboost.estimators.options import engine_params

    fam = db.families.get("normal")
    y_t = torch.as_tensor(y)
    init = [float(np.mean(y)), float(np.log(np.std(y)))]
    params = engine_params(len(y), n_estimators=rounds, learning_rate=0.1, step="natural",
                           num_leaves=31, min_child_samples=20, n_iter_no_change=None,
                           n_jobs=THREADS, random_state=0)
    return fit_boosting(lambda raw, d: fam.nll(raw, d["y"]), init, X, {"y": y_t},
                        params=params, fisher=lambda raw, d: fam.fisher_information(raw),
                        derivatives=lambda raw, d: fam.raw_derivatives(raw, d["y"]))


def _child(what: str, n: int, rounds: int) -> None:
    """One fit in this (fresh) process: prints its seconds and peak resident memory."""
    import lightgbm  # noqa: F401  (imports are not part of a fit's time)

    if what != "lightgbm":
        import distboost  # noqa: F401  (torch too)
    X, y = make_data(n, dtype=np.float32 if n >= LARGE else np.float64)
    if what.startswith(("family:", "floor:")):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from speed_families import child

        r = child(what, X, y, rounds, THREADS)
        r["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        print(json.dumps(r))
        return
    t0 = time.perf_counter()
    if what == "lightgbm":
        lightgbm_reference(X, y, rounds)
    elif what == "estimator":
        estimator(rounds).fit(X, y)
    elif what == "engine":
        engine_fit(X, y, rounds)
    else:
        raise ValueError(what)
    seconds = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_gb": peak_kb / 1024**2}))


def run_child(what: str, n: int, rounds: int) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child", what, str(n), str(rounds)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{what} at n={n} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_fit(sizes, repeat: int, whats) -> dict:
    out = {}
    for n in sizes:
        rounds = rounds_for(n)
        best = {w: {"seconds": float("inf"), "peak_gb": 0.0} for w in ("lightgbm", *whats)}
        for _ in range(repeat):  # interleaved: the machine's load hits both alike
            for w in best:
                r = run_child(w, n, rounds)
                best[w]["seconds"] = min(best[w]["seconds"], r["seconds"])
                best[w]["peak_gb"] = max(best[w]["peak_gb"], r["peak_gb"])
        ref = best["lightgbm"]
        dtype = "float32" if n >= LARGE else "float64"
        target = TARGETS.get(n)
        for w in whats:
            ratio = best[w]["seconds"] / ref["seconds"]
            mem = best[w]["peak_gb"] / ref["peak_gb"]
            ok = "" if target is None else (" ok" if ratio <= target else " MISSED")
            print(f"[1] fit {n:,} x 20 {dtype}, {rounds} rounds, {w}: {best[w]['seconds']:.2f} s;"
                  f" LightGBM 2 trees/round {ref['seconds']:.2f} s -> ratio {ratio:.2f}"
                  + ("" if target is None else f" (target <= {target:.2f}{ok})")
                  + f"; peak memory {best[w]['peak_gb']:.2f} GB vs {ref['peak_gb']:.2f} GB "
                  f"-> {mem:.2f} x" + (" (target <= 2)" if n >= LARGE else ""), flush=True)
            out[f"fit_{w}_{n}"] = best[w]
        out[f"fit_lightgbm_{n}"] = ref
    return out


def bench_lightgbmlss(n: int, rounds: int, repeat: int) -> dict:
    try:
        import lightgbm as lgb
        from lightgbmlss.distributions.Gaussian import Gaussian
        from lightgbmlss.model import LightGBMLSS
    except ImportError:
        print("[2] LightGBMLSS not installed (make bench): skipped", flush=True)
        return {}
    X, y = make_data(n, seed=1)
    params = {"eta": 0.1, "num_leaves": 31, "min_data_in_leaf": 20, "verbose": -1, "seed": 0,
              "num_threads": THREADS}
    model = estimator(rounds)
    t_lss, t_db = float("inf"), float("inf")
    for _ in range(repeat):  # interleaved, best of each
        t, _ = timed(lambda: LightGBMLSS(Gaussian()).train(
            params, lgb.Dataset(X, label=y), num_boost_round=rounds))
        t_lss = min(t_lss, t)
        t, _ = timed(lambda: model.fit(X, y))
        t_db = min(t_db, t)
    print(f"[2] fit {n:,} x 20, {rounds} rounds, 31 leaves (best of {repeat}): LightGBMLSS "
          f"{t_lss:.2f} s; distboost {t_db:.2f} s -> ratio {t_db / t_lss:.2f} (target <= 0.5)",
          flush=True)
    return {"lightgbmlss": t_lss, "distboost_vs_lss": t_db}


def bench_ngboost(n: int, rounds: int) -> dict:
    import distboost as db

    try:
        from ngboost import NGBRegressor
    except ImportError:
        print("[3] NGBoost not installed (make bench): skipped", flush=True)
        return {}
    X, y = make_data(n, seed=1)
    ngb = NGBRegressor(n_estimators=rounds, learning_rate=0.05, verbose=False, random_state=0)
    t_ngb, _ = timed(lambda: ngb.fit(X, y))
    small = db.DistributionalRegressor(n_estimators=rounds, max_depth=3, num_leaves=8,
                                       learning_rate=0.05, early_stopping=False,
                                       random_state=0)
    t_small, _ = timed(lambda: small.fit(X, y))
    print(f"[3] fit {n:,} x 20, {rounds} rounds: NGBoost (depth-3 trees) {t_ngb:.1f} s; "
          f"distboost depth-3 trees {t_small:.2f} s -> {t_ngb / t_small:.0f} x faster "
          "(target >= 20)", flush=True)
    return {"ngboost": t_ngb, "distboost_depth3": t_small}


def bench_predict(n: int, rounds: int) -> dict:
    X, y = make_data(n)
    model = estimator(rounds).fit(X, y)
    booster = model.ensemble_.model.booster
    t_raw, _ = timed(lambda: booster.predict(X, raw_score=True), repeat=2)
    t_pred, _ = timed(lambda: model.predict_dist(X).quantile([0.05, 0.5, 0.95]), repeat=2)
    print(f"[4] predict_dist + 3 quantiles on {n:,} rows: {t_pred:.2f} s; LightGBM raw predict "
          f"of the same trees {t_raw:.2f} s -> ratio {t_pred / t_raw:.2f} (target <= 3)",
          flush=True)
    return {"predict_distboost": t_pred, "predict_lgb_raw": t_raw}


def main(argv=None) -> dict:
    global THREADS
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 20,000 rows, best of 1, no peers")
    parser.add_argument("--sizes", default="20000,200000,2000000",
                        help="comma-separated row counts of [1] (default: the targets')")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many (default 3)")
    parser.add_argument("--what", choices=["estimator", "engine", "both"], default="estimator",
                        help="what [1] times against LightGBM (default: the estimator)")
    parser.add_argument("--no-peers", action="store_true", help="skip [2]-[4]")
    parser.add_argument("--families", default=None,
                        help="'all' or comma-separated family names: a table of fit seconds "
                        "per family against LightGBM growing K trees a round (issue 30); "
                        "replaces [1]-[4]")
    parser.add_argument("--threads", type=int, default=THREADS,
                        help=f"threads per fit (default {THREADS})")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    THREADS = args.threads
    os.environ["DISTBOOST_BENCH_THREADS"] = str(THREADS)  # the children's
    if args.child:
        _child(args.child[0], int(args.child[1]), int(args.child[2]))
        return {}
    sizes = [int(s) for s in args.sizes.split(",") if s]
    repeat = args.repeat
    if args.quick:
        sizes, repeat = [20_000], 1
    whats = ("estimator", "engine") if args.what == "both" else (args.what,)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; "
          f"{THREADS} threads per fit", flush=True)
    if args.families:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from speed_families import bench_families, family_names

        out = bench_families(family_names(args.families), sizes, repeat, run_child, rounds_for)
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
        return out
    out = bench_fit(sizes, repeat, whats)
    if not (args.quick or args.no_peers):
        out.update(bench_lightgbmlss(20_000, 200, repeat))
        out.update(bench_ngboost(20_000, 500))
        out.update(bench_predict(100_000, 200))
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    return out


if __name__ == "__main__":
    main()
