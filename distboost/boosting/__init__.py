"""The boosting engine (generic over a torch loss; knows nothing about families).

``fit_boosting`` grows one tree ensemble per raw output against ``loss(raw, data)``; the
step rules and the pure per-row ``step_derivatives`` are in :mod:`.derivatives`, the
tree-backend protocol and registry in :mod:`.backend`, the backends in
:mod:`.lightgbm_backend` and :mod:`.sklearn_backend`; the thread rule of a fit in
:mod:`.threads`.
"""

from .backend import FittedTrees, TreeBackend, available_backends, register_backend
from .derivatives import STEP_RULES, curvature_scale, step_derivatives
from .engine import EngineParams, FittedEnsemble, fit_boosting
from .threads import fit_threads, num_threads

__all__ = ["STEP_RULES", "EngineParams", "FittedEnsemble", "FittedTrees", "TreeBackend",
           "available_backends", "curvature_scale", "fit_boosting", "register_backend",
           "fit_threads", "num_threads", "step_derivatives"]
