"""Expected Fisher information of any family on the raw scale, closed form or Monte Carlo.

``I(eta) = E_{y ~ p(.|eta)}[ s s^T ]`` with the score ``s = d log p(y | eta) / d eta``.  When a
family gives no closed form (:meth:`Family.fisher_information` returns None), the expectation
is estimated from ``m`` seeded draws per row, the scores coming from autograd of the family's
own ``nll`` (all rows and draws in one backward pass).
"""

from __future__ import annotations

import torch

__all__ = ["fisher_monte_carlo", "make_fisher_fn"]


def fisher_monte_carlo(family, raw: torch.Tensor, m: int = 32, seed: int = 0) -> torch.Tensor:
    """Monte Carlo estimate of the expected Fisher information on the raw scale.

    Parameters
    ----------
    family : Family
    raw : Tensor of shape (n, K)
    m : int
        Draws per row.
    seed : int
        Seed of the draws.

    Returns
    -------
    Tensor of shape (n, K, K)
    """
    raw = raw.detach().to(torch.float64)
    n, k = raw.shape
    with torch.no_grad():
        ys = family.sample(family.params_from_raw(raw), m, seed)  # (m, n)
    with torch.enable_grad():  # the engine calls this under no_grad
        rep = raw.unsqueeze(0).expand(m, n, k).reshape(m * n, k).clone().requires_grad_(True)
        loss = family.nll(rep, ys.reshape(m * n)).sum()
        (score,) = torch.autograd.grad(loss, rep)
    score = score.reshape(m, n, k)
    return torch.einsum("mni,mnj->nij", score, score) / m


def make_fisher_fn(family, m: int = 32, seed: int = 0):
    """A ``fisher(raw, data)`` callable for the boosting engine.

    Closed form when the family has one; otherwise Monte Carlo with a fresh, deterministic
    seed at every call (``seed``, ``seed + 1``, ...), so that fits stay reproducible.
    """
    probe = family.fisher_information(torch.zeros((1, family.n_params), dtype=torch.float64))
    if probe is not None:
        return lambda raw, data: family.fisher_information(raw)
    calls = {"i": 0}

    def fisher(raw, data):
        calls["i"] += 1
        return fisher_monte_carlo(family, raw, m=m, seed=seed + calls["i"])

    return fisher
