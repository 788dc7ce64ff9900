"""Fits on a busy machine (issue 25, item 5; issue 51, item 1): quiet against beside busy
processes.

Two workloads, each timed in a fresh child process per setting, once quiet and once beside
``--busy`` CPU-bound processes (``python -c "while True: pass"``, as ``yes > /dev/null``);
the ratio of the two wall times is what a notebook user feels when something else runs:

- ``--rows N [N ...]``: one default ``DistributionalRegressor()`` (Normal) fit on N synthetic
  rows of 9 features (``speed.make_data``), issue 51's workload;
- otherwise issue 25's: ``--fits`` default gamma fits (``random_state=i``) on scikit-learn's
  diabetes data (442 rows, 10 columns).

``--cpus 0,1`` pins the children and the busy processes to those cores
(``os.sched_setaffinity``), so that a many-core machine behaves like the 2-core development
machine.

Settings (``--settings``): ``default`` (the package as installed), ``all_cores`` (``n_jobs``
= every usable core: the default before issue 51, which left the libraries' thread counts
alone above 10,000 rows), ``one`` (``n_jobs=1``), ``passive`` (``OMP_WAIT_POLICY=PASSIVE``
in the child's environment, read when the OpenMP runtime starts), ``torch1``
(``torch.set_num_threads(1)`` before the fits), ``omp1`` (``OMP_NUM_THREADS=1``).

Prints one line per setting and workload: quiet and busy wall seconds (CPU seconds in
brackets), their ratio, and the threads the fit ran (``n_jobs`` seen by the backend).

Run: ``python benchmarks/contention.py --rows 30000 200000 --settings default all_cores one
[--busy 2] [--cpus 0,1] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

SETTINGS = {
    "default": {},
    "all_cores": {},
    "one": {},
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "torch1": {},
    "omp1": {"OMP_NUM_THREADS": "1"},
}


def child(rows: int | None, fits: int, setting: str) -> None:
    """The workload; prints wall and CPU seconds and the fit's thread count as JSON."""
    import warnings

    import torch

    import distboost as db
    import distboost.estimators.base as base
    from distboost.boosting import threads

    if setting == "torch1":
        torch.set_num_threads(1)
    n_jobs = {"all_cores": threads.usable_cores(), "one": 1}.get(setting)
    seen = []  # the threads each fit ran (torch's count inside the fit)
    original = base.fit_threads

    @contextlib.contextmanager
    def recording(n_jobs_, n):
        with original(n_jobs_, n):
            seen.append(torch.get_num_threads())
            yield

    base.fit_threads = recording
    if rows is None:
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
        models = [db.DistributionalRegressor(family="gamma", random_state=i, n_jobs=n_jobs)
                  for i in range(fits)]
    else:
        sys.path.insert(0, os.path.dirname(__file__))
        from speed import make_data

        X, y = make_data(rows, p=9)
        models = [db.DistributionalRegressor(random_state=0, n_jobs=n_jobs)]
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in models:
            model.fit(X, y)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                      "threads": seen[0] if seen else None,
                      "rounds": int(models[0].n_iter_)}))


def run_child(setting: str, rows: int | None, fits: int, cpus: list[int] | None) -> dict:
    env = {**os.environ, **SETTINGS[setting]}
    cmd = [sys.executable, __file__, "--child", "--fits", str(fits), "--settings", setting]
    if rows is not None:
        cmd += ["--rows", str(rows)]
    pre = None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                         preexec_fn=pre)
    return json.loads(out.stdout.strip().splitlines()[-1])


def start_busy(count: int, cpus: list[int] | None) -> list[subprocess.Popen]:
    pre = None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pre)
            for _ in range(count)]


def stop_busy(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=None,
                    help="default Normal fits on this many synthetic rows (issue 51)")
    ap.add_argument("--fits", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--cpus", default=None, help="e.g. 0,1: pin everything to these cores")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--settings", nargs="+", default=["default", "passive"],
                    choices=sorted(SETTINGS))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(None if args.rows is None else args.rows[0], args.fits, args.settings[0])
        return
    cpus = None if args.cpus is None else [int(c) for c in args.cpus.split(",")]
    workloads = [None] if args.rows is None else args.rows
    print(f"busy = {args.busy} x 'while True: pass'; cores {'all' if cpus is None else cpus}; "
          f"{os.cpu_count()} cores in the machine; load average {os.getloadavg()[0]:.2f}")
    for rows in workloads:
        what = (f"{args.fits} default gamma fits on diabetes (442 rows)" if rows is None
                else f"one default fit on {rows:,} synthetic rows")
        print(what)
        for setting in args.settings:
            for _ in range(args.repeat):
                quiet = run_child(setting, rows, args.fits, cpus)
                procs = start_busy(args.busy, cpus)
                try:
                    time.sleep(0.5)
                    busy = run_child(setting, rows, args.fits, cpus)
                finally:
                    stop_busy(procs)
                print(f"  {setting:9s} quiet {quiet['wall']:6.2f} s ({quiet['cpu']:5.2f} s CPU, "
                      f"{quiet['threads']} threads)  busy {busy['wall']:6.2f} s "
                      f"({busy['cpu']:5.2f} s CPU, {busy['threads']} threads)  "
                      f"ratio {busy['wall'] / quiet['wall']:5.2f}", flush=True)


if __name__ == "__main__":
    main()
