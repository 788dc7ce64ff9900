"""The families' numerics: what the family definitions compute with, kept apart so that
:mod:`distboost.families` lists the families first.

* closed forms: :mod:`.scores` (the negative log-likelihood and its gradient per row),
  :mod:`.crps` (the CRPS), :mod:`.tails` (censored tails), :mod:`.fisher` and
  :mod:`.information` (the expected Fisher information and its layout),
  :mod:`.one_parameter` (one-parameter families' raw derivatives);
* special functions and tables: :mod:`.special` (differentiable special functions torch
  lacks), :mod:`.nb_table` (the negative binomial's information table),
  :mod:`.tweedie_series` (the Tweedie density's series), :mod:`.torch_extra`
  (distributions torch lacks);
* machinery: :mod:`.inversion` (numerical quantiles), :mod:`.mle` (numerical start
  values), :mod:`.blocks` (row blocks), :mod:`.shapes`, :mod:`.stats`.

Nothing here registers a family.
"""
