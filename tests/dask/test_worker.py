"""Tests of :mod:`distboost.dask._worker` without a cluster: the target's float32 packing and
the worker objective against the in-process objective."""

from __future__ import annotations

import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

import distboost as db  # noqa: E402
from distboost.dask._worker import (  # noqa: E402
    WorkerObjective,
    pack_target,
    pop_state,
    unpack_target,
)
from distboost.objective import FamilyObjective  # noqa: E402


def dmatrix(y, k, w=None):
    fields = pack_target(y, k)
    return xgb.DMatrix(np.zeros((len(y), 1)), label=fields["label"], weight=w,
                       label_lower_bound=fields["label_lower_bound"],
                       label_upper_bound=fields["label_upper_bound"])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_target_offset_by_1e9_survives_the_float32_fields_exactly(k):
    rng = np.random.default_rng(0)
    y = 1e9 + rng.normal(size=50)
    back = unpack_target(dmatrix(y, k), k, censored=False)
    assert np.max(np.abs(back - y)) < 1e-6  # float32 alone would be off by up to 32
    assert np.max(np.abs(y.astype(np.float32) - y)) > 1.0


@pytest.mark.parametrize("k", [2, 3])
def test_censoring_bounds_with_infinity_round_trip(k):
    """XGBoost refuses an infinite label: the parts that may be infinite (right- and
    left-censored bounds) travel in the interval-bound fields."""
    rng = np.random.default_rng(1)
    t = 1e6 + rng.exponential(size=40)
    bounds = db.censored.right(t, rng.integers(0, 2, 40))
    bounds[:5] = db.censored.left(t[:5], np.zeros(5))  # [-inf, t]
    back = unpack_target(dmatrix(bounds, k), k, censored=True)
    assert np.all(np.isneginf(back[:5, 0]))
    np.testing.assert_allclose(back[5:, 0], bounds[5:, 0], rtol=0, atol=1e-7)
    finite = np.isfinite(bounds[:, 1])
    np.testing.assert_allclose(back[finite, 1], bounds[finite, 1], rtol=0, atol=1e-7)
    assert np.all(np.isinf(back[~finite, 1]))


@pytest.mark.parametrize("family,step", [("normal", "natural"), ("gamma", "fisher"),
                                         ("poisson", "newton"), ("studentt", "gradient")])
def test_the_worker_objective_is_the_engine_pair_at_the_start_plus_the_trees(family, step):
    rng = np.random.default_rng(2)
    n = 200
    y = rng.gamma(2.0, 1.5, n) if family != "poisson" else rng.poisson(3.0, n).astype(float)
    w = rng.uniform(0.5, 2.0, n)
    fam = db.families.get(family)
    objective = FamilyObjective(fam, y, w)
    scale = np.linspace(0.5, 2.0, objective.n_outputs)
    obj = WorkerObjective(objective, step, scale, weight_mean=w.mean(), key="t",
                          censored=False)
    trees = rng.normal(scale=0.1, size=(n, objective.n_outputs))
    g, h = obj(trees.astype(np.float32).ravel(), dmatrix(y, objective.n_outputs, w))
    ref_g, ref_h = objective.grad_hess(y, objective.init_raw + trees.astype(np.float32), step,
                                       sample_weight=w / w.mean(), curvature_scale=scale)
    np.testing.assert_allclose(g, ref_g, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(h, ref_h, rtol=2e-6, atol=1e-7)
    state = pop_state("t")
    assert len(state["train"]) == 1 and np.isfinite(state["train"][0])
