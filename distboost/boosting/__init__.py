"""The boosting engine (generic over a torch loss; knows nothing about families).

``fit_boosting`` grows one tree ensemble per raw output against ``loss(raw, data)``; the
step rules are in :mod:`.derivatives`, tree backends in :mod:`.lightgbm_backend` and
:mod:`.sklearn_backend`.
"""

from .derivatives import STEP_RULES
from .engine import EngineParams, FittedEnsemble, fit_boosting

__all__ = ["STEP_RULES", "EngineParams", "FittedEnsemble", "fit_boosting"]
