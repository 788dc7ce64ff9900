"""Tests of :mod:`distboost.boosting.row_blocks`: the blocks themselves, and that a round of
:class:`~distboost.boosting.derivatives.StepComputer` evaluated on blocks of rows gives the
values of one call exactly (derivatives, buffers, loss), with fewer full-size
temporaries."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch
from boosting_cases import engine, gaussian_derivatives, gaussian_loss

import distboost.boosting.row_blocks as rb
from distboost.boosting import fit_boosting
from distboost.boosting.derivatives import NonFiniteLoss, StepComputer
from distboost.families import get
from distboost.families.continuous import NUMPY_ROWS
from distboost.objective import FamilyObjective


def test_blocks_cover_the_rows_and_none_below_two():
    assert rb.row_blocks(99, 50) is None
    assert rb.row_blocks(2 * rb.BLOCK_ROWS - 1) is None
    blocks = rb.row_blocks(1234, 100)
    assert [(b.start, b.stop) for b in blocks[:2]] == [(0, 100), (100, 200)]
    assert blocks[-1] == slice(1100, 1234)  # the remainder joins the last block
    assert all(b.stop - b.start >= 100 for b in blocks)
    assert len(rb.row_blocks(200, 100)) == 2


def test_blocks_are_above_the_normal_families_numpy_threshold():
    """Every block takes the implementation the whole batch takes (torch above
    NUMPY_ROWS rows, numpy below)."""
    assert rb.BLOCK_ROWS > NUMPY_ROWS


def test_row_aligned_data_and_their_rows():
    y, off = torch.arange(6.0), torch.zeros(6, 2)
    assert rb.row_aligned({"y": y, "offset": off}, 6)
    assert not rb.row_aligned({"y": y, "scale": torch.tensor(2.0)}, 6)
    assert not rb.row_aligned({"y": y, "k": 3}, 6)
    part = rb.data_rows({"y": y, "offset": off}, slice(2, 4))
    assert part["y"].tolist() == [2.0, 3.0] and part["offset"].shape == (2, 2)
    coef = torch.arange(12.0).reshape(2, 6)
    assert rb.columns(coef, slice(1, 3)).tolist() == [[1.0, 2.0], [7.0, 8.0]]
    same = torch.ones(2, 1)
    assert rb.columns(same, slice(1, 3)) is same and rb.columns(coef, None) is coef


def _problem(family: str, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n) * np.exp(0.3 * x)
    if family == "gamma":
        y = np.exp(0.5 * y)
    obj = FamilyObjective(get(family), y)
    k = obj.init_raw.size
    raw = obj.init_raw + 0.3 * rng.normal(size=(n, k))
    return obj, {"y": torch.as_tensor(y)}, raw, rng.uniform(0.2, 3.0, size=n)


def _steps(obj, data, step, w, raws):
    """(grad, hess) copies, last loss and loss value of a StepComputer at each raw."""
    sc = StepComputer(obj.loss, data, step, obj.fisher(), w,
                      derivatives=obj.derivatives())
    out = []
    for raw in raws:
        raw = np.asfortranarray(raw)  # LightGBM's layout: column-major scores
        g, h = sc(raw, dtype=np.float32, order="F")
        out.append((g.copy(), h.copy(), sc.last_loss, sc.loss_value(raw)))
    return out


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("step", ["natural", "fisher", "gradient"])
@pytest.mark.parametrize("family", ["normal", "gamma", "studentt"])
def test_blocked_rounds_equal_one_call_exactly(monkeypatch, family, step, weighted):
    obj, data, raw, w = _problem(family, 5003)
    w = w if weighted else None
    raws = [raw, raw + 0.1, raw - 0.05]
    whole = _steps(obj, data, step, w, raws)
    monkeypatch.setattr(rb, "BLOCK_ROWS", 1000)
    blocked = _steps(obj, data, step, w, raws)
    for a, b in zip(whole, blocked, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_blocked_normal_at_the_real_block_size_equals_one_call(monkeypatch):
    """Above NUMPY_ROWS the Normal's closed form runs in torch, on each block too."""
    obj, data, raw, _ = _problem("normal", 2 * rb.BLOCK_ROWS + 17)
    blocked = _steps(obj, data, "natural", None, [raw, raw + 0.1])
    monkeypatch.setattr(rb, "BLOCK_ROWS", 10 ** 9)
    whole = _steps(obj, data, "natural", None, [raw, raw + 0.1])
    for a, b in zip(whole, blocked, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def _flat_rows(raw, data):
    """A few rows without gradient or information in the location: 0 / 0 in the fused
    division, a zero step through the clamped one."""
    loss, grad, fisher = gaussian_derivatives(raw, data)
    flat = data["y"] > 2.5
    grad, fisher = grad.clone(), fisher.clone()
    grad[flat, 0] = fisher[flat, 0] = 0.0
    return loss, grad, fisher


def test_a_non_finite_natural_division_takes_the_clamped_path_in_every_block(monkeypatch):
    rng = np.random.default_rng(3)
    n = 4000
    data = {"y": torch.as_tensor(rng.normal(size=n))}
    raw = np.asfortranarray(np.column_stack([rng.normal(size=n), rng.normal(size=n) * 0.2]))

    def run():
        sc = StepComputer(gaussian_loss, data, "natural",
                          derivatives=_flat_rows)
        return sc(raw, dtype=np.float32, order="F")[0].copy()

    whole = run()
    monkeypatch.setattr(rb, "BLOCK_ROWS", 700)
    np.testing.assert_array_equal(run(), whole)
    assert np.isfinite(whole).all() and (whole[data["y"].numpy() > 2.5, 0] == 0).all()


def test_a_non_finite_loss_in_one_block_is_refused(monkeypatch):
    monkeypatch.setattr(rb, "BLOCK_ROWS", 100)
    y = torch.zeros(1000, dtype=torch.float64)
    y[750] = float("inf")
    sc = StepComputer(gaussian_loss, {"y": y}, "natural", derivatives=gaussian_derivatives)
    with pytest.raises(NonFiniteLoss, match="loss is"):
        sc(np.zeros((1000, 2), order="F"), dtype=np.float32, order="F")


def test_blocked_rounds_keep_the_numpy_temporaries_small(monkeypatch):
    """After the first round (which allocates the buffers), a round on blocks allocates
    less than one float64 vector of the rows at a time (numpy's allocations, which
    tracemalloc sees): the Normal's closed form below NUMPY_ROWS allocates five."""
    monkeypatch.setattr(rb, "BLOCK_ROWS", 2000)
    obj, data, raw, _ = _problem("normal", 60_000)
    sc = StepComputer(obj.loss, data, "natural", derivatives=obj.derivatives())
    raw = np.asfortranarray(raw)
    sc(raw, dtype=np.float32, order="F")
    later = raw + 0.1
    tracemalloc.start()
    try:
        sc(later, dtype=np.float32, order="F")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60_000 * 8


def test_blocked_engine_fit_equals_the_whole_batch_fit(monkeypatch):
    """The engine on blocks of rows grows the same trees (LightGBM backend)."""
    rng = np.random.default_rng(5)
    n = 3000
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + rng.normal(size=n) * np.exp(0.4 * X[:, 1])
    obj = FamilyObjective(get("normal"), y)

    def run():
        params = engine(n_estimators=15, learning_rate=0.1, step="natural",
                        n_iter_no_change=None, random_state=0, n_jobs=1)
        fe = fit_boosting(obj.loss, obj.init_raw, X, {"y": torch.as_tensor(y)},
                          params=params, derivatives=obj.derivatives())
        return fe.predict_raw(X), fe.evals_result_

    whole = run()
    monkeypatch.setattr(rb, "BLOCK_ROWS", 512)
    blocked = run()
    np.testing.assert_array_equal(blocked[0], whole[0])
    assert blocked[1] == whole[1]


def test_what_a_block_derives_from_its_target_is_derived_once_not_every_round(monkeypatch):
    # log y! of a Poisson target (the objective's data: a target that carries its terms),
    # per block: each block's data are the same views every round, so the kept value is
    # found again (it was derived every round, for every block, when each round made new
    # views).
    rng = np.random.default_rng(0)
    n, rounds = 3000, 6
    y = rng.poisson(3.0, size=n).astype(np.float64)
    obj = FamilyObjective(get("poisson"), y)
    raw = obj.init_raw + 0.1 * rng.normal(size=(n, 1))
    monkeypatch.setattr(rb, "BLOCK_ROWS", 1000)
    sc = StepComputer(obj.loss, obj.data(None, y), "natural", obj.fisher(),
                      derivatives=obj.derivatives())
    sizes = []
    lgamma = torch.lgamma
    monkeypatch.setattr(torch, "lgamma", lambda x: sizes.append(x.numel()) or lgamma(x))
    for i in range(rounds):
        sc(np.asfortranarray(raw + 0.01 * i), dtype=np.float32, order="F")
        sc.loss_value(np.asfortranarray(raw + 0.01 * i))
    assert sizes == [1000, 1000, 1000]  # one log y! per block
