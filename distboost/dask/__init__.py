"""Distributional regression on a Dask cluster (``pip install 'distboost[dask]'``).

:class:`DaskDistributionalRegressor` trains on Dask collections with XGBoost's distributed
engine (``xgboost.dask``) and predicts Dask collections; ``to_local()`` gives the
in-process :class:`~distboost.DistributionalRegressor` with the same trees.
:class:`DaskForecaster` forecasts a panel held in a Dask DataFrame with one global model
trained on the cluster.  See ``docs/dask.md``.
"""

from __future__ import annotations

try:
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
    import xgboost.dask  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "distboost.dask needs the 'dask' extra: pip install 'distboost[dask]' "
        f"(dask[distributed], xgboost, pyarrow); {err}"
    ) from err

from .estimator import DaskDistributionalRegressor
from .forecaster import DaskForecaster

__all__ = ["DaskDistributionalRegressor", "DaskForecaster"]
