"""Proper scoring rules and calibration diagnostics (CRPS, NLL, PIT, coverage, interval and
pinball scores, calibration error, sharpness), multivariate scores (energy and variogram
scores; the NLL of (n, d) targets), survival scores (censored NLL and CRPS,
concordance, D-calibration, IPCW Brier scores and time-dependent AUC), the scaled forecast
scores of the M4 and M5 competitions (MASE, MSIS, scaled and weighted scaled pinball losses,
CRPS skill, the seasonal naive reference) and scikit-learn scorers.

Closed-form CRPS functions are public (``crps_normal(y, loc, scale)``, ...); ``crps(dist, y)``
picks the closed form when the family has one and the numerical path otherwise.
"""

from .closed_form import (
    CLOSED_FORMS,
    crps_beta,
    crps_exponential,
    crps_gamma,
    crps_gumbel,
    crps_half_normal,
    crps_laplace,
    crps_logistic,
    crps_lognormal,
    crps_negative_binomial,
    crps_normal,
    crps_poisson,
    crps_studentt,
    crps_zero_adjusted_gamma,
    crps_zero_adjusted_lognormal,
    crps_zero_inflated_negative_binomial,
    crps_zero_inflated_poisson,
)
from .forecast import crps_skill, mase, msis, scaled_pinball, seasonal_naive, wspl
from .multivariate import (
    energy_score,
    mean_energy_score,
    mean_variogram_score,
    variogram_score,
)
from .numerical import crps_numerical
from .scorers import available_scorers, get_scorer, predict_dist
from .scores import (
    calibration_error,
    coverage,
    crps,
    interval_score,
    mean_crps,
    mean_interval_score,
    mean_nll,
    mean_pinball,
    nll,
    pinball,
    pit,
    pit_cdf,
    sharpness,
)
from .survival import censored_nll, concordance_index, d_calibration, survival_crps
from .time_dependent import brier_score, cumulative_dynamic_auc, integrated_brier_score

__all__ = [
    "CLOSED_FORMS", "crps_beta", "crps_exponential", "crps_gamma", "crps_gumbel",
    "crps_laplace", "crps_logistic", "crps_lognormal", "crps_negative_binomial", "crps_normal",
    "crps_poisson", "crps_studentt", "crps_half_normal", "crps_zero_inflated_poisson",
    "crps_zero_inflated_negative_binomial", "crps_zero_adjusted_gamma",
    "crps_zero_adjusted_lognormal", "crps_numerical", "available_scorers", "get_scorer",
    "predict_dist",
    "calibration_error", "coverage", "crps", "interval_score", "mean_crps",
    "mean_interval_score", "mean_nll", "mean_pinball", "nll", "pinball", "pit", "pit_cdf",
    "sharpness",
    "energy_score", "variogram_score", "mean_energy_score", "mean_variogram_score",
    "censored_nll", "concordance_index", "d_calibration", "survival_crps",
    "brier_score", "integrated_brier_score", "cumulative_dynamic_auc",
    "mase", "msis", "scaled_pinball", "wspl", "crps_skill", "seasonal_naive",
]
