"""Speed and memory of distboost against references measured in the same run.

Prints one line per measurement with the ratio to its reference:

1. fit, 100,000 x 20 synthetic rows, Normal, 500 rounds, 31 leaves, no early stopping, against
   raw LightGBM growing the same number of trees (2 per round) with a built-in objective
   (``multiclass`` with 2 classes; ``regression`` with 1,000 rounds printed too).  Target <= 1.5.
2. fit against NGBoost (same 500 rounds, its default depth-3 trees, 20,000 rows), where
   installed.  Target >= 20 x faster.
3. fit against LightGBMLSS (Gaussian, same rounds, leaves and learning rate, 20,000 rows),
   where installed.  Target <= 0.8 x its time.
4. ``predict_dist`` plus three quantiles on 100,000 rows against LightGBM's raw predict of
   the same trees.  Target <= 3 x.
5. peak resident memory of a fit on 1,000,000 x 20 float32 rows, 100 rounds (a child
   process).  Target <= 4 GB.

Run: ``.venv/bin/python benchmarks/speed.py [--quick]`` (``make bench`` installs the peers).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def make_data(n: int, p: int = 20, seed: int = 0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(dtype)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.normal(size=n) * np.exp(0.5 * X[:, 2])
    return X, y


def timed(fn, repeat: int = 1):
    """Best wall-clock time of ``repeat`` runs (this machine's timings vary by ~30%)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_fit_vs_lightgbm(n: int, rounds: int) -> dict:
    import lightgbm as lgb

    import distboost as db

    X, y = make_data(n)
    common = {"num_leaves": 31, "learning_rate": 0.05, "verbosity": -1, "deterministic": True,
              "force_row_wise": True}
    labels = (y > np.median(y)).astype(int)
    t_multi, _ = timed(lambda: lgb.train({**common, "objective": "multiclass", "num_class": 2},
                                         lgb.Dataset(X, label=labels), num_boost_round=rounds),
                       repeat=2)
    t_reg, _ = timed(lambda: lgb.train({**common, "objective": "regression"},
                                       lgb.Dataset(X, label=y), num_boost_round=2 * rounds),
                     repeat=2)
    model = db.DistributionalRegressor(n_estimators=rounds, num_leaves=31, learning_rate=0.05,
                                       early_stopping=False, random_state=0)
    t_db, _ = timed(lambda: model.fit(X, y), repeat=2)
    print(f"[1] fit {n:,} x 20, Normal, {rounds} rounds, 31 leaves (best of 2): "
          f"distboost {t_db:.2f} s; "
          f"LightGBM multiclass (2 trees/round) {t_multi:.2f} s -> ratio {t_db / t_multi:.2f} "
          f"(target <= 1.5); LightGBM regression {2 * rounds} trees {t_reg:.2f} s -> ratio "
          f"{t_db / t_reg:.2f}", flush=True)

    booster = model.ensemble_.model.booster
    t_raw, _ = timed(lambda: booster.predict(X, raw_score=True), repeat=2)
    t_pred, _ = timed(lambda: model.predict_dist(X).quantile([0.05, 0.5, 0.95]), repeat=2)
    print(f"[4] predict_dist + 3 quantiles on {n:,} rows: {t_pred:.2f} s; LightGBM raw predict "
          f"of the same trees {t_raw:.2f} s -> ratio {t_pred / t_raw:.2f} (target <= 3)",
          flush=True)
    return {"fit_distboost": t_db, "fit_lgb_multiclass": t_multi, "fit_lgb_regression": t_reg,
            "predict_distboost": t_pred, "predict_lgb_raw": t_raw}


def bench_vs_peers(n: int, rounds: int) -> dict:
    import distboost as db

    X, y = make_data(n, seed=1)
    out = {}
    try:
        from ngboost import NGBRegressor
    except ImportError:
        print("[2] NGBoost not installed (make bench): skipped", flush=True)
    else:
        ngb = NGBRegressor(n_estimators=rounds, learning_rate=0.05, verbose=False,
                           random_state=0)
        t_ngb, _ = timed(lambda: ngb.fit(X, y))
        small = db.DistributionalRegressor(n_estimators=rounds, max_depth=3, num_leaves=8,
                                           learning_rate=0.05, early_stopping=False,
                                           random_state=0)
        t_small, _ = timed(lambda: small.fit(X, y))
        default = db.DistributionalRegressor(n_estimators=rounds, early_stopping=False,
                                             random_state=0)
        t_def, _ = timed(lambda: default.fit(X, y))
        print(f"[2] fit {n:,} x 20, {rounds} rounds: NGBoost (depth-3 trees) {t_ngb:.1f} s; "
              f"distboost depth-3 trees {t_small:.2f} s -> {t_ngb / t_small:.0f} x faster; "
              f"distboost 31 leaves {t_def:.2f} s -> {t_ngb / t_def:.0f} x faster (target >= 20)",
              flush=True)
        out.update(ngboost=t_ngb, distboost_depth3=t_small, distboost_31=t_def)
    try:
        import lightgbm as lgb
        from lightgbmlss.distributions.Gaussian import Gaussian
        from lightgbmlss.model import LightGBMLSS
    except ImportError:
        print("[3] LightGBMLSS not installed (make bench): skipped", flush=True)
    else:
        params = {"eta": 0.05, "num_leaves": 31, "verbose": -1, "seed": 0}
        model = db.DistributionalRegressor(n_estimators=rounds, num_leaves=31,
                                           learning_rate=0.05, early_stopping=False,
                                           random_state=0)
        t_lss, t_db = float("inf"), float("inf")
        for _ in range(3):  # interleaved, best of three each
            t, _ = timed(lambda: LightGBMLSS(Gaussian()).train(
                params, lgb.Dataset(X, label=y), num_boost_round=rounds))
            t_lss = min(t_lss, t)
            t, _ = timed(lambda: model.fit(X, y))
            t_db = min(t_db, t)
        print(f"[3] fit {n:,} x 20, {rounds} rounds, 31 leaves (best of 3): LightGBMLSS "
              f"{t_lss:.2f} s; "
              f"distboost {t_db:.2f} s -> ratio {t_db / t_lss:.2f} (target <= 0.8)", flush=True)
        out.update(lightgbmlss=t_lss, distboost_vs_lss=t_db)
    return out


def _memory_child(n: int, rounds: int) -> None:
    import distboost as db

    X, y = make_data(n, dtype=np.float32)
    db.DistributionalRegressor(n_estimators=rounds, early_stopping=False,
                               random_state=0).fit(X, y)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_gb": peak_kb / 1024**2}))


def bench_memory(n: int, rounds: int) -> dict:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, __file__, "--memory-child", str(n), str(rounds)],
                         capture_output=True, text=True, check=True)
    peak = json.loads(res.stdout.strip().splitlines()[-1])["peak_gb"]
    print(f"[5] fit {n:,} x 20 float32, {rounds} rounds: peak resident memory {peak:.2f} GB "
          f"(target <= 4 GB; {time.perf_counter() - t0:.0f} s incl. data generation)",
          flush=True)
    return {"peak_gb": peak}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--memory-child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        _memory_child(*args.memory_child)
        return {}
    scale = 10 if args.quick else 1
    out = {}
    out.update(bench_fit_vs_lightgbm(100_000 // scale, 500 // scale))
    out.update(bench_vs_peers(20_000 // scale, 500 // scale))
    out.update(bench_memory(1_000_000 // scale, 100 // scale))
    return out


if __name__ == "__main__":
    main()
