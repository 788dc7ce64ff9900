"""What torch's special functions alone cost a family, against its tree-building floor.

Issue 30, item 1 asks every family to fit within 1.25 x LightGBM growing its ``K`` trees a
round.  The families whose likelihood holds ``lgamma``, ``digamma`` or ``polygamma`` evaluate
them on every row in every round (their value, gradient and Fisher information); this script
measures what that part alone costs, per row and round, against the floor's cost per row and
round, and prints the ratio below which no implementation of the rest can bring the family
as long as these functions run as torch's CPU kernels on one thread:

``ratio >= 1 + (special-function seconds a round) / (floor seconds a round)``.

Measured: the nanoseconds per element of ``torch.lgamma``, ``torch.special.digamma`` and
``torch.special.polygamma(1, .)`` (and of a multiplication, for scale) on float64 vectors
of ``n`` values in ``[0.5, 10.5)``, best of 5; the floor as ``benchmarks/speed.py`` measures
it (:func:`speed_families.lightgbm_floor`: 200 rounds, 31 leaves, one thread, CPU seconds of
the process, ``n x 20`` rows).  The counts per family are those of their closed forms in
``distboost/families`` (a derivatives call computes the NLL, the gradient and the Fisher
information once a round); the Student-t's are those of a batch whose degrees of freedom all
lie on one side of ``STIRLING_MIN`` (a batch with both computes both branches: twice as
many).  What the counts leave out (the negative binomial's table of the information, the
censored gamma's incomplete gamma function, the Tweedie series' 20-40 ``lgamma`` per
positive row) only adds to the bound.

Run: ``python benchmarks/special_costs.py [--sizes 20000,200000]`` (2,000,000 rows: a floor
of about a minute per number of trees).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import make_data  # noqa: E402
from speed_families import lightgbm_floor  # noqa: E402

#: (lgamma, digamma, trigamma) evaluations per row and round, and the number of trees.
COUNTS = {
    "gamma": ((1, 1, 1), 2),
    "beta": ((3, 3, 3), 2),
    "studentt": ((2, 2, 2), 3),
    "negative_binomial": ((2, 2, 0), 2),
    "zero_inflated_negative_binomial": ((2, 2, 0), 3),
    "zero_adjusted_gamma": ((1, 1, 1), 3),
    "censored_gamma": ((1, 1, 1), 2),
}
FUNCTIONS = {
    "lgamma": torch.lgamma,
    "digamma": torch.special.digamma,
    "trigamma": lambda x: torch.special.polygamma(1, x),
    "multiply": lambda x: x * x,
}


def ns_per_element(fn, n: int, repeat: int = 5) -> float:
    """Best of ``repeat`` timings of ``fn`` on ``n`` float64 values, in ns per element."""
    x = torch.rand(n, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 10 + 0.5
    calls = max(1, 2_000_000 // n)
    fn(x)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(x)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best / n * 1e9


def floor_ns(n: int, k: int, rounds: int = 200) -> float:
    """CPU nanoseconds per row and round of LightGBM's ``k``-tree floor on ``n x 20`` rows."""
    X, y = make_data(n, 20, 0)
    t0 = time.process_time()
    lightgbm_floor(X, y, k, rounds, 1)
    return (time.process_time() - t0) / rounds / n * 1e9


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    floor_ns(1000, 2, rounds=2)  # LightGBM's import and first call out of the timings
    for n in (int(s) for s in args.sizes.split(",")):
        cost = {name: ns_per_element(fn, n) for name, fn in FUNCTIONS.items()}
        floors = {k: floor_ns(n, k) for k in sorted({k for _, k in COUNTS.values()})}
        print(f"\n{n:,} rows, one thread: ns per element: "
              + ", ".join(f"{name} {v:.2f}" for name, v in cost.items())
              + "; floor ns per row and round: "
              + ", ".join(f"{k} trees {v:.0f}" for k, v in floors.items()))
        print("\n| family | K | lgamma, digamma, trigamma per row | special functions ns per row "
              "and round | floor ns per row and round | ratio at least |")
        print("|---|---|---|---|---|---|")
        for family, (counts, k) in COUNTS.items():
            special = float(np.dot(counts, [cost["lgamma"], cost["digamma"], cost["trigamma"]]))
            print(f"| {family} | {k} | {', '.join(map(str, counts))} | {special:.0f} | "
                  f"{floors[k]:.0f} | {1.0 + special / floors[k]:.2f} |")


if __name__ == "__main__":
    main()
