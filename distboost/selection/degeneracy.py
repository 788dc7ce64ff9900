"""Degenerate fits in a family comparison: counts over held-out rows, and the reason.

:func:`distboost.compare_families` flags a fit whose predictions are degenerate (a floored
parameter at its floor, a continuous distribution collapsed onto a point, ``df <= 1``, a
non-finite mean or score) and ranks it after every sound fit; :class:`Diagnostics` keeps the
counts of one family over its folds and says why.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ATOM_SHARE", "COLLAPSE_RATIO", "COLLAPSE_SHARE", "FLOOR_SHARE", "Diagnostics"]

#: A fit is degenerate when a floored parameter sits at its floor on this share of rows.
FLOOR_SHARE = 0.05
#: ... or when the predictive 50 % interval is narrower than ``COLLAPSE_RATIO`` times the
#: interquartile range of ``y`` on ``COLLAPSE_SHARE`` of the rows (a continuous
#: distribution collapsed onto a point).
COLLAPSE_RATIO = 1e-3
COLLAPSE_SHARE = 0.05
#: ``y`` has a point mass when one value holds this share of the rows: a density's
#: likelihood is then unbounded and densities are ranked by CRPS, not NLL.
ATOM_SHARE = 0.10


class Diagnostics:
    """Counts of degenerate predictions over the held-out rows of every fold."""

    def __init__(self, family, context):
        self.family = family
        self.spread = context["spread"]
        self.atom_value, self.atom_share = context["atom"]
        self.rows = 0
        self.floored: dict[str, int] = {}
        self.collapsed = self.collapsed_at_atom = self.df_low = self.bad_mean = 0
        self.bad_scores: dict[str, int] = {}
        self.folds = 0

    def add(self, model, dist, y_te, fold_scores) -> None:
        """Count this fold's held-out rows at a floor, collapsed, with ``df <= 1``, ...."""
        family = self.family
        params = dist.flat_params if family.multivariate else dist.params
        n = len(dist)
        self.rows += n
        self.folds += 1
        floor = np.asarray(getattr(model, "raw_floor_", []), dtype=np.float64)
        if floor.size == family.n_params and np.isfinite(floor).any():
            raw = family.raw_from_params({p: np.array(v) for p, v in params.items()})
            for k, p in enumerate(family.param_names):
                if np.isfinite(floor[k]):
                    hits = int(np.sum(raw[:, k] <= floor[k] + 1e-6 * max(1.0, abs(floor[k]))))
                    self.floored[p] = self.floored.get(p, 0) + hits
        if "df" in params:
            self.df_low += int(np.sum(params["df"] <= 1.0))
        with np.errstate(all="ignore"):
            finite = np.isfinite(dist.mean)
            self.bad_mean += int(np.sum(~(finite.all(-1) if finite.ndim == 2 else finite)))
            # A point mass (zero-adjusted) legitimately puts both quartiles on the atom.
            if not family.discrete and family.point_mass is None and self.spread > 0 \
                    and not family.multivariate:
                q = dist.quantile([0.25, 0.75])
                narrow = ~(q[:, 1] - q[:, 0] >= COLLAPSE_RATIO * self.spread)
                self.collapsed += int(narrow.sum())
                if y_te.ndim == 1 and self.atom_share >= ATOM_SHARE:
                    self.collapsed_at_atom += int(np.sum(narrow & (y_te == self.atom_value)))
        for m, v in fold_scores.items():
            if m in ("nll", "crps") and not np.isfinite(v):
                self.bad_scores[m] = self.bad_scores.get(m, 0) + 1

    def merge(self, other: Diagnostics) -> None:
        """Add the counts of another fold."""
        self.rows += other.rows
        self.folds += other.folds
        self.collapsed += other.collapsed
        self.collapsed_at_atom += other.collapsed_at_atom
        self.df_low += other.df_low
        self.bad_mean += other.bad_mean
        for mine, theirs in ((self.floored, other.floored),
                             (self.bad_scores, other.bad_scores)):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count

    def reason(self) -> str:
        """Why the fit is degenerate, ``""`` when it is not."""
        n, out = self.rows, []
        for m, count in self.bad_scores.items():
            out.append(f"{m} not finite in {count}/{self.folds} folds")
        if self.df_low:
            out.append(f"df <= 1 on {self.df_low} of {n} rows (no finite mean, infinite CRPS)")
        if self.bad_mean > self.df_low:
            out.append(f"mean infinite or NaN on {self.bad_mean} of {n} rows")
        for p, count in self.floored.items():
            if count >= FLOOR_SHARE * n:
                out.append(f"{p} at its floor on {count / n:.0%} of rows")
        if self.collapsed >= COLLAPSE_SHARE * n:
            text = (f"50% interval < {COLLAPSE_RATIO:g} x IQR of y on "
                    f"{self.collapsed / n:.0%} of rows")
            if self.collapsed_at_atom >= 0.5 * self.collapsed:
                text += (f", collapsed onto y = {self.atom_value:g} ({self.atom_share:.0%} of "
                         "rows): a point mass a density cannot hold")
            out.append(text)
        return "; ".join(out)
