"""The negative binomial's information about ``total_count`` at a fixed mean, from a table.

The natural step of the negative binomial needs, on every row and every round,
``I_rr|mean`` (:func:`~distboost.families.numerics.special.nb_information`): a quadrature of 48
nodes per row that costs about 25 times LightGBM's two trees of the round.  It is a smooth function
of ``(log r, log mean)``, so :func:`nb_orth_information` interpolates ``log I_rr|mean`` on a
grid of step :data:`STEP` by bicubic convolution (Keys 1981, IEEE Trans. ASSP 29(6), ``a =
-1/2``), the grid's values computed by the same quadrature with :data:`TABLE_NODES` nodes
(more precise than the per-row rule).  The grid is filled lazily in blocks of
:data:`BLOCK` x :data:`BLOCK` values, the first time a row needs them, so a fit computes the
few blocks its parameters visit (each a fixed function of its cells: the same values
whatever the order, the rows or the process).  Rows outside the grid use the quadrature,
rows in the Poisson limit its expansion, as :func:`nb_information` does.
"""

from __future__ import annotations

import math
import threading

import torch

from .special import NB_POISSON_LIMIT, nb_information, nb_poisson_limit

__all__ = ["nb_orth_information", "LOG_R", "LOG_MEAN", "STEP"]

#: The grid's range of ``log r`` and of ``log mean``, and its step in both.
LOG_R = (-10.0, 16.0)
LOG_MEAN = (-14.0, 14.0)
STEP = 0.1
#: Values of a block along each axis (the unit in which the grid is filled).
BLOCK = 16
#: Quadrature nodes of the grid's values.
TABLE_NODES = 128


class _Grid:
    """``log I_rr|mean`` on the grid, filled block by block (thread-safe)."""

    def __init__(self):
        self.shape = (round((LOG_R[1] - LOG_R[0]) / STEP) + 1,
                      round((LOG_MEAN[1] - LOG_MEAN[0]) / STEP) + 1)
        self.values = torch.full(self.shape, math.nan, dtype=torch.float64)
        self.filled = torch.zeros(tuple(math.ceil(s / BLOCK) for s in self.shape),
                                  dtype=torch.bool)
        #: Cells whose 4 x 4 neighbourhood (``i - 1 .. i + 2``, ``j - 1 .. j + 2``) is
        #: filled, flat (one lookup per point tells whether a fill is needed).  Replaced,
        #: not changed in place, after a fill: a reader sees the old mask or the new one.
        self.ready = torch.zeros(self.shape[0] * self.shape[1], dtype=torch.bool)
        self.lock = threading.Lock()
        self._copies: dict = {}  # device -> (fill count, values there, ready there)
        self._fills = 0

    def _on(self, device) -> tuple[torch.Tensor, torch.Tensor]:
        """The values and the ready mask on ``device`` (a GPU's copies refreshed after a
        fill)."""
        if torch.device(device).type == "cpu":
            return self.values, self.ready
        with self.lock:  # a fill of another thread is either all in the copy or not at all
            kept = self._copies.get(device)
            if kept is None or kept[0] != self._fills:
                kept = self._copies[device] = (self._fills, self.values.to(device),
                                               self.ready.to(device))
        return kept[1], kept[2]

    def on(self, device) -> torch.Tensor:
        """The values on ``device`` (a GPU's copy refreshed after a fill)."""
        return self._on(device)[0]

    def _update_ready(self) -> None:
        """Recompute :attr:`ready` from the filled blocks (under the lock)."""
        ends = []
        for size in self.shape:
            cells = torch.arange(size)
            ends.append(((cells - 1).clamp_min(0) // BLOCK,
                         (cells + 2).clamp_max(size - 1) // BLOCK))
        ready = torch.ones(self.shape, dtype=torch.bool)
        for bi in ends[0]:
            for bj in ends[1]:
                ready &= self.filled[bi[:, None], bj[None, :]]
        self.ready = ready.view(-1)

    def fill(self, i: torch.Tensor, j: torch.Tensor, flat: torch.Tensor | None = None) -> None:
        """Fill the blocks holding the 4 x 4 cells around each ``(i, j)`` (1-D int tensors
        of the cells at the points' lower left): ``i - 1 .. i + 2``, ``j - 1 .. j + 2``.
        ``flat``: the cells' flat indices ``i * shape[1] + j``, when the caller has them."""
        flat = i * self.shape[1] + j if flat is None else flat
        if bool(self._on(i.device)[1].take(flat).all()):
            return  # every point's neighbourhood is there
        needed = torch.zeros(self.filled.shape, dtype=torch.bool, device=i.device)
        for di in (-1, 2):  # a block holds 16 cells: the corners' blocks cover the 4 x 4
            for dj in (-1, 2):
                needed[(i + di) // BLOCK, (j + dj) // BLOCK] = True
        needed = needed.cpu()  # the blocks' mask (a few hundred flags) to the host
        with self.lock:
            blocks = torch.nonzero(needed & ~self.filled)
            if len(blocks) == 0:
                return
            offsets = torch.arange(BLOCK)
            i = (blocks[:, 0, None, None] * BLOCK + offsets[None, :, None]).expand(
                -1, BLOCK, BLOCK).reshape(-1)
            j = (blocks[:, 1, None, None] * BLOCK + offsets[None, None, :]).expand(
                -1, BLOCK, BLOCK).reshape(-1)
            keep = (i < self.shape[0]) & (j < self.shape[1])
            i, j = i[keep], j[keep]
            log_r = LOG_R[0] + STEP * i.to(torch.float64)
            log_mean = LOG_MEAN[0] + STEP * j.to(torch.float64)
            _, orth = nb_information(torch.exp(log_r), torch.exp(log_mean - log_r),
                                     nodes=TABLE_NODES)
            self.values[i, j] = torch.log(orth.clamp_min(torch.finfo(torch.float64).tiny))
            self.filled[blocks[:, 0], blocks[:, 1]] = True
            self._update_ready()
            self._fills += 1


_GRID = _Grid()


def _keys_weights(t: torch.Tensor) -> torch.Tensor:
    """Keys' cubic convolution weights (``a = -1/2``) of the 4 cells around a point at
    fraction ``t`` in ``[0, 1)`` of its cell, shape (4, n): ``(-t^3 + 2 t^2 - t) / 2``,
    ``(3 t^3 - 5 t^2 + 2) / 2``, ``(-3 t^3 + 4 t^2 + t) / 2``, ``(t^3 - t^2) / 2``, written
    with ``h = (t^3 - t^2) / 2`` (the last weight)."""
    out = torch.empty((4,) + tuple(t.shape), dtype=t.dtype, device=t.device)
    t2 = t * t
    h = torch.mul(t2, t - 1.0, out=out[3]).mul_(0.5)
    torch.sub(t2, t, out=out[0]).mul_(0.5).sub_(h)
    torch.sub(1.0, t2, out=out[1]).add_(h, alpha=3.0)
    torch.add(t2, t, out=out[2]).mul_(0.5).sub_(h, alpha=3.0)
    return out


def _interpolate(grid: _Grid, base, u, v) -> torch.Tensor:
    """``exp`` of the bicubic convolution of the grid's 4 x 4 values around each point (flat
    cell index ``base``, fractions ``(u, v)``), summed row of 4 by row of 4 (16 gathers of
    n values from the flat grid)."""
    ncol = grid.shape[1]
    flat = grid.on(base.device).view(-1)
    wi, wj = _keys_weights(u), _keys_weights(v)
    acc = torch.zeros_like(u)
    for di in range(4):
        row = torch.zeros_like(u)
        for dj in range(4):
            row.addcmul_(wj[dj], flat.take(base + ((di - 1) * ncol + dj - 1)))
        acc.addcmul_(wi[di], row)
    return torch.exp(acc)


def nb_orth_information(r: torch.Tensor, odds: torch.Tensor,
                        grid: _Grid | None = None) -> torch.Tensor:
    """``I_rr|mean`` of ``NegativeBinomial(r, p)`` with ``odds = p / (1 - p)``, as the second
    value of :func:`~distboost.families.numerics.special.nb_information` (relative difference below
    ``1e-5`` where it exceeds ``1e-250``, tested): from the table inside its range, the
    quadrature outside it, the Poisson-limit expansion where ``r >= NB_POISSON_LIMIT (2 mean
    + 1)``.

    Parameters
    ----------
    r, odds : Tensor of shape (n,)
    grid : _Grid, optional
        The table (default: the process's one).

    Returns
    -------
    Tensor of shape (n,), non-negative, no gradient.
    """
    grid = _GRID if grid is None else grid
    with torch.no_grad():
        r = r.detach().to(torch.float64)
        odds = odds.detach().to(torch.float64)
        mean = r * odds
        x = (torch.log(r) - LOG_R[0]) / STEP
        y = (torch.log(mean) - LOG_MEAN[0]) / STEP
        inside = ((x >= 1.0) & (x < grid.shape[0] - 2.0) & (y >= 1.0)
                  & (y < grid.shape[1] - 2.0))
        todo = r < NB_POISSON_LIMIT * (2.0 * mean + 1.0)
        table = todo & inside
        if bool(table.all()):  # the usual case: no row outside the table or in the limit
            return _from_table(grid, x, y)
        out = nb_poisson_limit(r, mean).clamp_min(0.0)
        if table.any():
            out[table] = _from_table(grid, x[table], y[table])
        rest = todo & ~inside
        if rest.any():
            out[rest] = nb_information(r[rest], odds[rest])[1]
        return out


def _from_table(grid: _Grid, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The interpolated information at grid coordinates ``(x, y)`` (inside the table),
    filling the blocks they need first."""
    i, j = x.floor(), y.floor()
    u, v = x - i, y - j
    i, j = i.long(), j.long()
    base = i * grid.shape[1] + j
    grid.fill(i, j, base)
    return _interpolate(grid, base, u, v)
