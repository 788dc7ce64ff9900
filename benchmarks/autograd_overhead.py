"""Where a round's derivative time goes: the fixed per-call cost against the per-row work.

Times :class:`distboost.boosting.derivatives.StepComputer` (the engine's per-round
derivatives and step rule, written into LightGBM's float32 buffers) at 100 and 200,000 rows
for a few families, with the forward pass of the loss alone beside it; CPU seconds
(``time.process_time``) on one thread.  The 100-row time bounds what a batched autograd path
without a per-round graph rebuild (``torch.func.vmap`` over the per-row loss) could save
(issue 30, item 1).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/autograd_overhead.py``
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import torch

import distboost as db
from distboost.boosting.derivatives import StepComputer
from distboost.objective import FamilyObjective

warnings.filterwarnings("ignore")

START = {"tweedie": {"mean": 1.0, "dispersion": 1.0, "power": 1.5},
         "gamma": {"concentration": 5.0, "rate": 5.0},
         "studentt": {"df": 5.0, "loc": 1.0, "scale": 0.3}}


def main() -> None:
    torch.set_num_threads(1)
    for name, init in START.items():
        for n in (100, 200_000):
            rng = np.random.default_rng(0)
            y = np.exp(0.3 * rng.normal(size=n))
            if name == "tweedie":
                y = y * (rng.uniform(size=n) > 0.3)
            fam = db.families.get(name)
            obj = FamilyObjective(fam, y, init_params=init, warn=False)
            step = fam.default_step
            cal = obj.engine_callables(step, 0)
            sc = StepComputer(cal["loss"], obj.data(None, y), step, cal.get("fisher"),
                              derivatives=cal.get("derivatives"))
            raw = np.asfortranarray(np.tile(obj.init_raw, (n, 1))
                                    + 0.1 * rng.normal(size=(n, obj.n_outputs)))
            sc(raw, dtype=np.float32, order="F")
            reps = 20 if n == 100 else 3
            t = time.process_time()
            for _ in range(reps):
                sc(raw, dtype=np.float32, order="F")
            per = (time.process_time() - t) / reps
            t = time.process_time()
            for _ in range(reps):
                sc.loss_value(raw)
            fwd = (time.process_time() - t) / reps
            print(f"{name} n={n:,} closed form={'derivatives' in cal}: round {1e3 * per:.2f} ms "
                  f"CPU, forward pass alone {1e3 * fwd:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
