"""benchmarks/special_costs.py counts, per row and round, the lgamma, digamma and trigamma
evaluations of each family's closed-form derivatives: the counts are those the code makes (a
second derivatives call on the same target, after what depends on the target alone is
remembered)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from family_cases import case

from distboost.families.numerics.special import carry_terms

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _module(name):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


special_costs = _module("special_costs")
speed_families = _module("speed_families")


@pytest.mark.parametrize("name", sorted(special_costs.COUNTS))
def test_the_counts_are_the_evaluations_a_derivatives_call_makes(name, monkeypatch):
    n = 400
    rng = np.random.default_rng(0)
    fam = speed_families.make_family(name)
    # a fit's target (the objective's data), which carries the terms derived from it
    y = carry_terms(torch.as_tensor(speed_families.family_target(name, rng.normal(size=n))))
    typical = case(name.removeprefix("censored_")).params[0]
    raw = torch.as_tensor(fam.raw_from_params(typical)).expand(n, -1).clone()
    raw += 0.1 * torch.as_tensor(rng.normal(size=raw.shape))
    assert fam.raw_derivatives(raw, y) is not None  # the closed form, not autograd
    seen = {"lgamma": 0, "digamma": 0, "trigamma": 0}

    def counting(key, fn, arg):
        def wrapped(*args, **kwargs):
            seen[key] += args[arg].numel()
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(torch, "lgamma", counting("lgamma", torch.lgamma, 0))
    monkeypatch.setattr(torch.special, "digamma", counting("digamma", torch.special.digamma, 0))
    monkeypatch.setattr(torch.special, "polygamma",
                        counting("trigamma", torch.special.polygamma, 1))
    fam.raw_derivatives(raw, y)
    counts, _ = special_costs.COUNTS[name]
    assert (seen["lgamma"] / n, seen["digamma"] / n, seen["trigamma"] / n) == counts
