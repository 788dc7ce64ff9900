"""GPU against CPU: distboost's XGBoost backend with ``device="cuda"`` (issue 30, item 4).

On ``--n`` (2,000,000) x 20 float32 synthetic rows (``benchmarks/speed.py``'s data; a
positive target for the Gamma), ``--rounds`` (100) rounds, 31 leaves, learning rate 0.1, no
early stopping, the natural step (``--step default``: each family's own), every fit timed in
this one process, one after the other:

- the floor: XGBoost alone growing ``K`` trees a round from a built-in objective
  (``reg:squarederror`` on ``K`` targets, one tree per target, the same tree options), on
  the CPU (all cores) and on the GPU;
- ``DistributionalRegressor(backend="xgboost")`` on the CPU and with ``device="cuda"``
  (the derivatives then run in torch on the GPU);
- the default LightGBM backend on the CPU, for reference.

Each distboost fit's held-out NLL on 100,000 new rows (``--held-out``) is printed beside its
time (the GPU's histogram trees are not bit-equal to the CPU's: the NLLs agree, the trees
differ).  A first
small fit of each family on each device warms it up (CUDA context, kernels, a process's
first calls) and is not timed: its seconds are printed.

Run: ``python benchmarks/gpu.py [--n 2000000] [--rounds 100] [--families normal,gamma]
[--step natural] [--json out.json] [--trace]`` on a machine with a CUDA GPU, torch with
CUDA, XGBoost with CUDA and CuPy.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")

HELD_OUT = 100_000


def make_data(n: int, family: str, seed: int = 0):
    """``n`` x 20 float32 features and a target for ``family`` (positive for gamma)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20)).astype(np.float32)
    mean = X[:, 0] + np.sin(2 * X[:, 1])
    if family == "gamma":
        y = np.exp(0.5 * mean) * rng.gamma(2.0, 0.5, size=n) / np.exp(0.3 * X[:, 2])
    else:
        y = mean + rng.normal(size=n) * np.exp(0.5 * X[:, 2])
    return X, y


def xgboost_floor(X, y, k: int, rounds: int, device: str) -> float:
    """Seconds of XGBoost growing ``k`` trees a round from its own squared error."""
    import xgboost as xgb

    targets = np.repeat(y[:, None], k, axis=1) + np.arange(k)
    params = {"tree_method": "hist", "device": device, "grow_policy": "lossguide",
              "max_leaves": 31, "max_depth": 0, "min_child_weight": 20.0, "lambda": 0.0,
              "eta": 0.1, "max_bin": 255, "objective": "reg:squarederror",
              "multi_strategy": "one_output_per_tree", "verbosity": 0}
    t0 = time.perf_counter()
    dtrain = xgb.DMatrix(X, label=targets)
    xgb.train(params, dtrain, num_boost_round=rounds)
    return time.perf_counter() - t0


class _Trace:
    """Where a fit's seconds go (``--trace``): the XGBoost backend's tree growths (a round
    grown again after a step halving or a natural-step fallback counts twice) and
    rollbacks, each timed after a device synchronisation, and the seconds before its first
    growth (checks, start values, data to the device) and after its last."""

    def __init__(self, device: str):
        import torch

        from distboost.boosting import xgboost_backend as xb

        self.cls, self.grow, self.rollback = xb.XGBoostBackend, None, None
        self.sync = torch.cuda.synchronize if device != "cpu" else (lambda: None)
        self.reset()

    def reset(self) -> None:
        self.grows = self.rollbacks = 0
        self.in_grow = 0.0
        self.first = self.last = None

    def __enter__(self):
        grow, rollback = self.grow, self.rollback = self.cls.grow, self.cls.rollback
        trace = self

        def timed_grow(backend, *args, **kwargs):
            trace.sync()
            t = time.perf_counter()
            trace.first = t if trace.first is None else trace.first
            out = grow(backend, *args, **kwargs)
            trace.sync()
            trace.last = time.perf_counter()
            trace.in_grow += trace.last - t
            trace.grows += 1
            return out

        def counted_rollback(backend):
            trace.rollbacks += 1
            return rollback(backend)

        self.cls.grow, self.cls.rollback = timed_grow, counted_rollback
        return self

    def __exit__(self, *exc):
        self.cls.grow, self.cls.rollback = self.grow, self.rollback

    def row(self, t0: float, t1: float) -> dict:
        if self.first is None:
            return {}
        return {"grows": self.grows, "rollbacks": self.rollbacks,
                "before_first_round_s": self.first - t0, "growing_s": self.in_grow,
                "between_growths_s": (self.last - self.first) - self.in_grow,
                "after_last_round_s": t1 - self.last}


def distboost_fit(X, y, family: str, rounds: int, backend: str, device: str, trace=None,
                  step: str = "natural"):
    """``(seconds, model)`` of one fit (with ``trace``, its breakdown in ``model._trace``;
    ``step="default"``: the family's own step rule)."""
    import distboost as db

    model = db.DistributionalRegressor(
        family=family, step="auto" if step == "default" else step, early_stopping=False,
        calibrate=False,
        linear_start=False, n_estimators=rounds, learning_rate=0.1, num_leaves=31,
        min_child_samples=20, backend=backend, device=device)
    if trace is not None:
        trace.reset()
    t0 = time.perf_counter()
    model.fit(X, y)
    t1 = time.perf_counter()
    if trace is not None:
        model._trace = trace.row(t0, t1)
    return t1 - t0, model


def held_out_nll(model, family: str, n: int = HELD_OUT) -> float:
    X, y = make_data(n, family, seed=1)
    return float(np.mean(model.predict_dist(X).nll(y)))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--families", default="normal,gamma")
    ap.add_argument("--json", default=None)
    ap.add_argument("--held-out", type=int, default=HELD_OUT,
                    help="new rows on which each fit's NLL is measured")
    ap.add_argument("--devices", default="cpu,cuda",
                    help="cpu alone: a dry run on a machine without a GPU; cuda alone: the "
                    "GPU fits and floor only")
    ap.add_argument("--step", default="natural",
                    help="the step rule of every fit, or 'default' for each family's own")
    ap.add_argument("--trace", action="store_true",
                    help="split each XGBoost fit's seconds: before its first round, growing "
                    "trees (with the number of growths and rollbacks), between growths "
                    "(derivatives, line search), after its last round")
    args = ap.parse_args(argv)
    import torch
    import xgboost

    import distboost as db

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print(f"# GPU {gpu}; {os.cpu_count()} CPU cores; xgboost {xgboost.__version__}, "
          f"torch {torch.__version__}, distboost {db.__version__}; n={args.n:,}, "
          f"{args.rounds} rounds", flush=True)
    devices = [d.strip() for d in args.devices.split(",")]
    cuda = "cuda" in devices
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    for device in devices:  # CUDA context, kernels, each family's first calls: not timed
        warm_X, warm_y = make_data(5_000, "normal", seed=2)
        xgboost_floor(warm_X, warm_y, 2, 5, device)
        for family in ["normal"] + families:
            warm_X, warm_y = make_data(5_000, family, seed=2)
            try:
                seconds, _ = distboost_fit(warm_X, warm_y, family, 5, "xgboost", device,
                                           step=args.step)
                print(f"# warm-up on {device}, {family} (5,000 rows, 5 rounds, the "
                      f"process's first fit of it): {seconds:.2f} s", flush=True)
            except Exception as err:
                print(f"# warm-up on {device}, {family}: FAILED {type(err).__name__}: {err}",
                      flush=True)
    rows = []
    for family in families:
        X, y = make_data(args.n, family)
        k = len(db.families.get(family).param_names)
        floor = {d: xgboost_floor(X, y, k, args.rounds, d) for d in devices}
        fits = [("xgboost", "cuda")] if cuda else []
        if "cpu" in devices:
            fits += [("xgboost", "cpu"), ("lightgbm", "cpu")]
        for backend, device in fits:
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            trace = _Trace(device) if args.trace and backend == "xgboost" else None
            try:
                if trace is None:
                    seconds, model = distboost_fit(X, y, family, args.rounds, backend, device,
                                                   step=args.step)
                else:
                    with trace:
                        seconds, model = distboost_fit(X, y, family, args.rounds, backend,
                                                       device, trace, step=args.step)
            except Exception as err:  # one failure does not hide the other figures
                print(f"# {family}, {backend}, {device}: FAILED {type(err).__name__}: {err}",
                      flush=True)
                continue
            row = {"family": family, "backend": backend, "device": device,
                   "seconds": seconds, "rounds": int(model.n_iter_),
                   "floor_seconds": floor[device] if backend == "xgboost" else None,
                   "nll": held_out_nll(model, family, args.held_out),
                   "torch_peak_gpu_gb": torch.cuda.max_memory_allocated() / 1024**3
                   if cuda else None,
                   "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                   / 1024**2,
                   "natural_fallback_rounds": len(model.ensemble_.fallback_rounds_),
                   "step_halvings": int(model.ensemble_.n_backoffs_),
                   **getattr(model, "_trace", {})}
            if trace is not None:  # the start values alone, on the host (in the fit too)
                t_init = time.perf_counter()
                db.families.get(family).init(y)
                row["start_values_s"] = time.perf_counter() - t_init
            if row["floor_seconds"]:
                row["ratio"] = seconds / row["floor_seconds"]
            rows.append(row)
            print(json.dumps(row), flush=True)
            del model
        print(f"# {family}: XGBoost floor ({k} trees a round), seconds: "
              + ", ".join(f"{d} {s:.1f}" for d, s in floor.items()), flush=True)
    print("\n| family | fit | seconds | x its floor | held-out NLL |")
    print("|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else ""
        print(f"| {r['family']} | {r['backend']}, {r['device']} | {r['seconds']:.1f} | "
              f"{ratio} | {r['nll']:.4f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return {"rows": rows}


if __name__ == "__main__":
    main()
