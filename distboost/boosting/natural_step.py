"""The damped natural step: ``(F + lambda diag F)^{-1} g`` for every row.

The natural gradient of NGBoost (Duan et al. 2020, Alg. 1), damped in the Levenberg-Marquardt
way (``lambda =`` :data:`NATURAL_RIDGE`) so that a nearly singular Monte Carlo Fisher estimate
cannot blow the step up: a diagonal Fisher is a division (:func:`divide`), a 2 x 2 or 3 x 3
one an adjugate per row (:func:`_solve_small`), a larger one a batched LU solve
(:func:`_solve_lu`), which also serves the rows the adjugate cannot.
"""

from __future__ import annotations

import torch

__all__ = ["NATURAL_RIDGE", "divide", "natural"]

#: Levenberg-Marquardt damping of the natural step: ``F + NATURAL_RIDGE * diag(F)``.
NATURAL_RIDGE = 0.1


def natural(g: torch.Tensor, fisher: torch.Tensor) -> torch.Tensor:
    """The damped natural gradient ``(F + lambda diag F)^{-1} g`` of every row."""
    if fisher.dim() == 2:  # diagonal: a division, no solve
        return divide(g, fisher)
    # Levenberg-Marquardt damping F + lambda diag(F): bounds the condition number by about
    # 1 / lambda (a Monte Carlo Fisher of nearly redundant parameters is close to singular)
    # and leaves a diagonal Fisher's step unchanged up to 1 / (1 + lambda).
    if fisher.shape[1] in (2, 3):
        return _solve_small(fisher, g)
    return _solve_lu(fisher, g)


def _solve_lu(fisher: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """``(F + lambda diag F)^{-1} g`` by ``torch.linalg.solve`` (batched LU)."""
    diag = torch.diagonal(fisher, dim1=1, dim2=2).clamp_min(1e-300)
    damped = fisher + torch.diag_embed(NATURAL_RIDGE * diag)
    return torch.linalg.solve(damped, g[..., None])[..., 0]


def _solve_small(fisher: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """``(F + lambda diag F)^{-1} g`` row by row for ``F`` of shape (n, K, K), ``K`` 2 or
    3, by the adjugate of the damped matrix (Cramer's rule): elementwise passes over the
    ``K * K`` entries instead of a batched LU factorisation, which costs more than the
    arithmetic on the CPU and a kernel launch per small matrix group on a GPU (the entries
    are contiguous vectors when ``F`` comes from
    :func:`distboost.families.base.info_matrix`).  Rows whose determinant is not positive
    or a diagonal entry is not positive, or whose answer is not finite, take
    ``torch.linalg.solve``'s.

    Returns
    -------
    Tensor of shape (n, K): the (n, K) view of a contiguous (K, n) tensor.
    """
    k = fisher.shape[1]
    if g.shape[0] == 0:  # no rows (the reductions below need one)
        return torch.zeros_like(g)
    a = [[fisher[:, i, j] for j in range(k)] for i in range(k)]
    # The smallest diagonal entry: K reductions instead of K masks, checked with the
    # determinant and the answer in one host sync (on a GPU).
    lowest = torch.stack([a[i][i].min() for i in range(k)]).min()
    for i in range(k):
        a[i][i] = a[i][i].clamp_min(1e-300).mul_(1.0 + NATURAL_RIDGE)
    gs = [g[:, i] for i in range(k)]
    if k == 2:
        adj = [[a[1][1], -a[0][1]], [-a[1][0], a[0][0]]]
    else:  # adj[i][j] = cofactor (j, i)
        def minor(r0, r1, c0, c1):
            return a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0]
        adj = [[minor(1, 2, 1, 2), -minor(0, 2, 1, 2), minor(0, 1, 1, 2)],
               [-minor(1, 2, 0, 2), minor(0, 2, 0, 2), -minor(0, 1, 0, 2)],
               [minor(1, 2, 0, 1), -minor(0, 2, 0, 1), minor(0, 1, 0, 1)]]
    det = sum(a[0][j] * adj[j][0] for j in range(k))
    out = torch.empty((k, g.shape[0]), dtype=g.dtype, device=g.device)
    for i in range(k):
        torch.mul(adj[i][0], gs[0], out=out[i])
        for j in range(1, k):
            out[i].add_(adj[i][j] * gs[j])
        out[i].div_(det)
    out = out.T
    if bool((lowest > 0) & (det.min() > 0) & torch.isfinite(out.sum())):
        return out
    positive = det > 0
    for i in range(k):
        positive &= fisher[:, i, i] > 0
    bad = ~positive | ~torch.isfinite(out).all(dim=1)
    if bool(bad.any()):
        idx = torch.nonzero(bad)[:, 0]
        out[idx] = _solve_lu(fisher[idx], g[idx])
    return out


def divide(g: torch.Tensor, fisher_diag: torch.Tensor) -> torch.Tensor:
    """The natural step of a diagonal Fisher: ``g / ((1 + lambda) F)``."""
    return g / (fisher_diag.clamp_min(1e-300) * (1.0 + NATURAL_RIDGE))
