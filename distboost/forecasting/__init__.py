"""Probabilistic forecasting with one global distributional regressor.

``Forecaster(family=..., horizon=..., lags=...)`` turns one or many series into lag, rolling,
calendar, id, exogenous and static features, fits a
:class:`~distboost.DistributionalRegressor` of any family on them, and forecasts a whole
distribution per future step: exact marginals (direct strategy) or joint sample paths whose
empirical marginals answer quantiles, intervals and CRPS (recursive strategy).
``Forecaster.backtest`` scores rolling-origin forecasts step by step
(:func:`backtest_summary` averages them by step).

Modules: :mod:`.data` (input forms, frequency, checks), :mod:`.features` (the feature rows),
:mod:`.strategies` (recursive paths, direct marginals), :mod:`.backtest`,
:mod:`.forecaster`, :mod:`.cli` (the ``distboost forecast`` command).
"""

from .backtest import backtest_summary
from .forecaster import Forecaster

__all__ = ["Forecaster", "backtest_summary"]
