"""``family="auto"`` on a Dask cluster: the family chosen on a seeded sample of the rows.

The in-process regressor chooses its family by cross-validating the candidates read from
the target (:func:`distboost.selection.auto.choose`, reached through the estimators'
chooser slot :func:`distboost.estimators.auto.choose_family`).  That comparison runs on at
most a thousand rows whatever the data's size, so a distributed fit brings a seeded sample
of about :data:`SAMPLE_ROWS` rows to the client (each partition keeps each row with the
same probability, seeded by the partition's number), lets the in-process comparison choose,
and then trains the chosen family on the cluster.  Candidates that learn their layout from
the target before the fit (``histogram``'s bins, ``ordinal_logit``'s levels: the families
with ``encode_target``), which the distributed fit does not take, are not compared.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import families as _families
from ..estimators import DistributionalRegressor, choose_family
from ._data import W_COL, TrainingFrame

__all__ = ["SAMPLE_ROWS", "choose_on_sample", "not_distributed"]

#: Expected rows of the sample brought to the client (the comparison subsamples it again).
SAMPLE_ROWS = 2000


def not_distributed() -> list[str]:
    """Registered families the distributed fit does not take (their layout is read from the
    target before the fit: ``encode_target``), so ``family="auto"`` does not compare them."""
    return sorted(name for name in _families.available()
                  if getattr(_families.get(name), "encode_target", None) is not None)


def _sample_part(part, rate, seed, partition_info=None):
    i = 0 if partition_info is None else partition_info["number"]
    rng = np.random.default_rng([int(seed), int(i), 2])
    return part[rng.random(len(part)) < rate]


def choose_on_sample(estimator, data: TrainingFrame, shared: dict,
                     seed: int) -> tuple[str, pd.DataFrame]:
    """The family for a distributed ``family="auto"`` fit, chosen in-process on a sample.

    Parameters
    ----------
    estimator : DaskDistributionalRegressor
        For its description in errors.
    data : TrainingFrame
        The checked training rows on the cluster.
    shared : dict
        The options shared with :class:`~distboost.DistributionalRegressor` (``family``
        is ``"auto"``).
    seed : int
        Seed of the sample (and of the comparison).

    Returns
    -------
    family : str
    table : DataFrame
        The comparison (``family_table_``); ``attrs["rows"]`` the rows compared,
        ``attrs["sampled_from"]`` the rows of the data.
    """
    rate = min(1.0, SAMPLE_ROWS / max(data.n_rows, 1))
    sample = data.frame.map_partitions(_sample_part, rate, seed,
                                       meta=data.frame._meta).compute()
    X = sample[data.feature_names]
    if not data.from_dataframe:
        X = X.to_numpy(dtype=np.float64)
    y = sample[data.y_columns].to_numpy(dtype=np.float64)
    y = y[:, 0] if y.shape[1] == 1 else y
    w = sample[W_COL].to_numpy(dtype=np.float64) if data.weighted else None
    if w is not None:  # the comparison is unweighted: rows of zero weight do not count
        X, y = (X[w > 0] if isinstance(X, np.ndarray) else X.loc[w > 0]), y[w > 0]
    local = DistributionalRegressor(**{**shared, "random_state": seed})
    try:
        family, table = choose_family(local, X, y, exclude=not_distributed())
    except ValueError as err:
        raise ValueError(f"{type(estimator).__name__}(family='auto'): on a sample of "
                         f"{len(y)} of {data.n_rows} rows: {err}") from err
    table.attrs["sampled_from"] = int(data.n_rows)
    return family, table
