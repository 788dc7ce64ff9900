"""Tests of :mod:`distboost.boosting.derivatives`: the step rules, the per-row purity of a
round, the closed-form fast path (and the Normal family's closed form), gradient clipping."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from boosting_cases import (
    gaussian_derivatives,
    gaussian_fisher,
    gaussian_fisher_full,
    gaussian_loss,
)

import distboost as db
from distboost.boosting.derivatives import (
    NEWTON_FLOOR,
    STEP_RULES,
    StepComputer,
    curvature_scale,
    step_derivatives,
)


def random_problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = torch.as_tensor(rng.normal(size=n) * 2.0 + 1.0)
    raw = np.column_stack([rng.normal(size=n), rng.normal(size=n) * 0.5])
    w = rng.uniform(0.2, 3.0, size=n)
    return raw, {"y": y}, w


def mixed_fisher(raw, data):
    """A full 2 x 2 information with an off-diagonal term (the natural step solves)."""
    f = gaussian_fisher(raw, data)
    off = 0.3 * torch.sqrt(f[:, 0] * f[:, 1])
    return torch.stack([torch.stack([f[:, 0], off], -1), torch.stack([off, f[:, 1]], -1)], -2)


# ------------------------------------------------------------------ per-row purity
CASES = [(step, fisher, derivatives) for step in STEP_RULES
         for fisher, derivatives in [(gaussian_fisher, None), (mixed_fisher, None),
                                     (None, gaussian_derivatives)]
         if not (step in ("gradient", "newton") and fisher is mixed_fisher)]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    "step, fisher, derivatives", CASES,
    ids=[f"{s}-{'closed' if d else f.__name__}" for s, f, d in CASES])
def test_a_round_is_a_pure_function_of_each_row(step, fisher, derivatives, weighted):
    """On a subset or a permutation of the rows (a distributed worker's partition), the
    step rule's (grad, hess) equal the full batch's rows exactly, given the scale."""
    raw, data, w = random_problem()
    w = w / w.mean() if weighted else None
    scale = curvature_scale(gaussian_loss, raw, data, step, fisher=fisher, sample_weight=w,
                            derivatives=derivatives)
    kw = {"fisher": fisher, "curvature_scale": scale, "derivatives": derivatives}
    full = step_derivatives(gaussian_loss, raw, data, step, sample_weight=w, **kw)
    rng = np.random.default_rng(1)
    for rows in (rng.permutation(60), np.sort(rng.choice(60, 17, replace=False)), [5]):
        rows = np.asarray(rows)
        part = step_derivatives(gaussian_loss, raw[rows], {"y": data["y"][rows]}, step,
                                sample_weight=None if w is None else w[rows], **kw)
        for a, b in zip(part, full, strict=True):
            np.testing.assert_array_equal(a, b[rows])


@pytest.mark.parametrize("step", STEP_RULES)
def test_the_scale_is_fixed_at_the_first_call(step):
    """StepComputer computes the curvature scale at its first call (the engine's is at the
    start values) and keeps it: later rounds equal the pure function with that scale."""
    raw, data, w = random_problem(seed=2)
    sc = StepComputer(gaussian_loss, data, step, gaussian_fisher, sample_weight=w)
    sc(raw)
    scale = sc.curvature_scale.copy()
    later = raw + np.random.default_rng(3).normal(size=raw.shape)
    g, h = sc(later)
    np.testing.assert_array_equal(sc.curvature_scale, scale)
    _, g2, h2 = step_derivatives(gaussian_loss, later, data, step, fisher=gaussian_fisher,
                                 sample_weight=w / w.mean(), curvature_scale=scale)
    np.testing.assert_array_equal(g, g2)
    np.testing.assert_array_equal(h, h2)
    # At the start, the weighted curvature has column mean one (leaf values -G/H are
    # unchanged by the scale; LightGBM's min_sum_hessian_in_leaf and lambda are scale-free).
    _, h0 = StepComputer(gaussian_loss, data, step, gaussian_fisher, sample_weight=w)(raw)
    if step == "newton":
        assert np.all(h0.mean(axis=0) >= 1.0 - 1e-12)  # floored entries raise the mean
    else:
        np.testing.assert_allclose(h0.mean(axis=0), 1.0, rtol=1e-12)


def test_the_column_major_buffers_alternate_and_never_overwrite_the_pinned_pair():
    raw, data, _ = random_problem(seed=4)
    sc = StepComputer(gaussian_loss, data, "fisher", gaussian_fisher)
    first = sc(raw, dtype=np.float32, order="F")
    assert first[0].dtype == np.float32 and first[0].flags.f_contiguous
    kept = (first[0].copy(), first[1].copy())
    sc.pin(first)
    for shift in (0.5, 1.0, 1.5):  # the line search's evaluations at shorter steps
        other = sc(raw + shift, dtype=np.float32, order="F")
        assert other[0] is not first[0]
        np.testing.assert_array_equal(first[0], kept[0])
        np.testing.assert_array_equal(first[1], kept[1])
    g64, h64 = StepComputer(gaussian_loss, data, "fisher", gaussian_fisher,
                            curvature_scale=sc.curvature_scale)(raw + 1.5)
    np.testing.assert_allclose(other[0], g64, rtol=1e-6)
    np.testing.assert_allclose(other[1], h64, rtol=1e-6)


# ------------------------------------------------------------------ closed form
@pytest.mark.parametrize("step", STEP_RULES)
def test_closed_form_derivatives_equal_autograd(step):
    raw, data, w = random_problem(seed=5)
    auto = step_derivatives(gaussian_loss, raw, data, step, fisher=gaussian_fisher,
                            sample_weight=w)
    closed = step_derivatives(gaussian_loss, raw, data, step, fisher=None, sample_weight=w,
                              derivatives=gaussian_derivatives)
    for a, b in zip(auto, closed, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_newton_ignores_the_closed_form_fisher():
    """The newton rule needs the Hessian: it differentiates the loss by autograd."""
    raw, data, _ = random_problem(seed=6)

    def wrong(raw, data):
        raise AssertionError("newton must not call derivatives")

    a = step_derivatives(gaussian_loss, raw, data, "newton")
    b = step_derivatives(gaussian_loss, raw, data, "newton", derivatives=wrong)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_full_and_diagonal_fisher_give_the_same_natural_pair():
    raw, data, _ = random_problem(seed=7)
    a = step_derivatives(gaussian_loss, raw, data, "natural", fisher=gaussian_fisher)
    b = step_derivatives(gaussian_loss, raw, data, "natural", fisher=gaussian_fisher_full)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12)


@pytest.mark.parametrize("path", ["numpy", "torch"])
@pytest.mark.parametrize("seed", range(5))
def test_normal_raw_derivatives_equal_autograd_and_the_closed_form_fisher(seed, path,
                                                                          monkeypatch):
    """Both paths of the closed form: numpy up to ``NUMPY_ROWS`` rows, torch above."""
    from distboost.families import continuous

    if path == "torch":
        monkeypatch.setattr(continuous, "NUMPY_ROWS", 0)
    fam = db.families.get("normal")
    rng = np.random.default_rng(seed)
    n = 200
    raw = torch.as_tensor(np.column_stack([rng.normal(size=n) * 5, rng.normal(size=n) * 3]))
    raw[0, 1], raw[1, 1] = 60.0, -70.0  # beyond the clamp of the exp link
    y = torch.as_tensor(rng.normal(size=n) * 4)
    loss, grad, fisher = fam.raw_derivatives(raw, y)
    r = raw.clone().requires_grad_(True)
    nll = fam.nll(r, y)
    (g,) = torch.autograd.grad(nll.sum(), r)
    np.testing.assert_allclose(loss.numpy(), nll.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fisher.numpy(), fam.fisher_information(raw).numpy(), rtol=1e-12)
    assert grad[0, 1] == 0.0 and grad[1, 1] == 0.0
    assert tuple(grad.shape) == tuple(fisher.shape) == (n, 2)


def test_raw_derivatives_of_other_links_and_of_a_family_without_a_formula():
    """Other links take the general chain rule (equal to autograd); a family without a
    ``score_formula`` (a user's Toy family below) has none: the engine uses autograd."""
    rng = np.random.default_rng(0)
    raw = torch.as_tensor(rng.normal(size=(50, 2)))
    y = torch.as_tensor(rng.normal(size=50))
    fam = db.families.get("normal", links={"scale": "softplus"})
    loss, grad, _ = fam.raw_derivatives(raw, y)
    r = raw.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fam.nll(r, y).sum(), r)
    np.testing.assert_allclose(grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-15)

    class Toy(db.families.base.Family):
        name, torch_class, param_names = "toy_normal", torch.distributions.Normal, ("loc", "scale")

    assert Toy().raw_derivatives(raw, y) is None


# ------------------------------------------------------------------ step rules
def test_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    y = torch.as_tensor(rng.normal(size=7))
    raw = rng.normal(size=(7, 2))
    sc = StepComputer(gaussian_loss, {"y": y}, "newton")
    g, h = sc(raw)
    # Undo the per-column division by the curvature scale (the mean absolute curvature at
    # the first call) to compare with raw derivatives.
    eps = 1e-5
    for k in range(2):
        e = np.zeros_like(raw)
        e[:, k] = eps
        f = lambda r: gaussian_loss(torch.as_tensor(r), {"y": y}).numpy()  # noqa: E731
        fd_g = (f(raw + e) - f(raw - e)) / (2 * eps)
        fd_h = (f(raw + e) - 2 * f(raw) + f(raw - e)) / eps**2
        ratio = np.abs(fd_h).mean()
        fd_h = np.maximum(fd_h, NEWTON_FLOOR * ratio)
        np.testing.assert_allclose(g[:, k] * ratio, fd_g, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h[:, k] * ratio, fd_h, rtol=1e-4)


def test_newton_guard_floors_non_positive_curvature():
    def concave(raw, data):  # curvature -2 on column 0 where raw > 0, +2 elsewhere
        return torch.where(raw[:, 0] > 0, -raw[:, 0] ** 2, raw[:, 0] ** 2)

    sc = StepComputer(concave, {}, "newton")
    raw = np.array([[1.0], [-1.0], [2.0], [-2.0]])
    _, h = sc(raw)
    assert (h > 0).all()
    np.testing.assert_allclose(h[[0, 2], 0] / h[1, 0], NEWTON_FLOOR)


def test_unknown_step_and_missing_fisher_raise():
    with pytest.raises(ValueError, match="Unknown step rule 'adam'"):
        StepComputer(gaussian_loss, {}, "adam")
    with pytest.raises(ValueError, match="needs the expected Fisher information"):
        step_derivatives(gaussian_loss, np.zeros((2, 2)), {}, "natural")


# ------------------------------------------------------------------ clipping (global)
def test_clip_gradients_clips_each_column_at_its_own_quantiles():
    rng = np.random.default_rng(14)
    Y = rng.standard_t(df=2, size=(200, 2)) * np.array([1.0, 50.0])
    raw = np.zeros((200, 2))

    def loss(r, d):
        return 0.5 * ((d["Y"] - r) ** 2).sum(dim=1)

    data = {"Y": torch.as_tensor(Y)}
    g, h = StepComputer(loss, data, "gradient", clip_gradients=(0.1, 0.9))(raw)
    expected = np.column_stack([
        np.clip(-Y[:, j], np.quantile(-Y[:, j], 0.1), np.quantile(-Y[:, j], 0.9))
        for j in range(2)
    ])
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    np.testing.assert_array_equal(h, 1.0)
    assert (g[:, 1] == g[:, 1].max()).sum() >= 20  # the top 10% share the clipped value
    # Newton: gradients clipped, curvatures untouched.
    g_n, h_n = StepComputer(loss, data, "newton", clip_gradients=(0.1, 0.9))(raw)
    _, h_plain = StepComputer(loss, data, "newton")(raw)
    np.testing.assert_allclose(g_n, expected, rtol=1e-12)
    np.testing.assert_array_equal(h_n, h_plain)
