"""Small fits on a busy machine (issue 25, item 5): quiet against beside busy processes.

The workload is issue 25's: three default gamma fits (``DistributionalRegressor(family=
"gamma", random_state=i)``, i = 0, 1, 2) on scikit-learn's diabetes data (442 rows, 10
columns), each in a fresh child process per setting.  Each setting is timed once quiet and
once beside ``--busy`` CPU-bound processes (``python -c "while True: pass"``); the ratio of
the two wall times is what a notebook user feels when something else runs.  ``--cpus 0,1``
pins the children and the busy processes to those cores (``os.sched_setaffinity``), so that
a many-core machine behaves like the 2-core development machine.

Settings (``--settings``): ``default`` (the package as installed), ``passive``
(``OMP_WAIT_POLICY=PASSIVE`` in the child's environment, read when the OpenMP runtime
starts), ``torch1`` (``torch.set_num_threads(1)`` before the fits), ``omp1``
(``OMP_NUM_THREADS=1``).

Prints one line per setting: quiet and busy wall seconds (CPU seconds in brackets) and their
ratio, plus the number of torch and LightGBM threads the child saw.

Run: ``python benchmarks/contention.py [--fits 3] [--busy 2] [--cpus 0,1] [--repeat 1]
[--settings default passive torch1 omp1]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SETTINGS = {
    "default": {},
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "torch1": {},
    "omp1": {"OMP_NUM_THREADS": "1"},
}


def child(fits: int, torch_threads: int | None) -> None:
    """The workload: ``fits`` default gamma fits on diabetes; prints wall and CPU seconds."""
    import warnings

    import torch
    from sklearn.datasets import load_diabetes

    import distboost as db

    if torch_threads:
        torch.set_num_threads(torch_threads)
    X, y = load_diabetes(return_X_y=True)
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(fits):
            db.DistributionalRegressor(family="gamma", random_state=i).fit(X, y)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                      "torch_threads": torch.get_num_threads()}))


def run_child(setting: str, fits: int, cpus: list[int] | None) -> dict:
    env = {**os.environ, **SETTINGS[setting]}
    cmd = [sys.executable, __file__, "--child", "--fits", str(fits)]
    if setting == "torch1":
        cmd += ["--torch-threads", "1"]
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
    ap.add_argument("--fits", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--cpus", default=None, help="e.g. 0,1: pin everything to these cores")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--settings", nargs="+", default=["default", "passive"],
                    choices=sorted(SETTINGS))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--torch-threads", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.fits, args.torch_threads)
        return
    cpus = None if args.cpus is None else [int(c) for c in args.cpus.split(",")]
    print(f"{args.fits} default gamma fits on diabetes (442 rows); busy = {args.busy} x "
          f"'while True: pass'; cores {'all' if cpus is None else cpus}; "
          f"{os.cpu_count()} cores in the machine")
    for setting in args.settings:
        for _ in range(args.repeat):
            quiet = run_child(setting, args.fits, cpus)
            procs = start_busy(args.busy, cpus)
            try:
                time.sleep(0.5)
                busy = run_child(setting, args.fits, cpus)
            finally:
                stop_busy(procs)
            print(f"{setting:8s} quiet {quiet['wall']:6.1f} s ({quiet['cpu']:5.1f} s CPU)  "
                  f"busy {busy['wall']:6.1f} s ({busy['cpu']:5.1f} s CPU)  "
                  f"ratio {busy['wall'] / quiet['wall']:5.2f}  "
                  f"torch threads {quiet['torch_threads']}", flush=True)


if __name__ == "__main__":
    main()
