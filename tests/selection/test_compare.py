"""compare_families: full conditional models cross-validated on the same folds."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import distboost as db


def test_picks_the_generating_family_and_explains_skips():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(1500, 2))
    y = rng.gamma(2.0, np.exp(0.5 * X[:, 0]))  # gamma with x-dependent scale
    # Each fold's model stops on a held-out split (its 1,000 rows' default adds a refit on
    # all of them, twice the time): the gamma's NLL is the lower by 0.20-0.25 on seeds 0-4.
    table = db.compare_families(X, y, families=["gamma", "normal", "beta"], cv=3,
                                n_estimators=60, num_leaves=4, learning_rate=0.1,
                                early_stopping="holdout")
    assert list(table["family"][:2]) == ["gamma", "normal"]
    assert table.loc[0, "nll_mean"] < table.loc[1, "nll_mean"]
    beta = table.set_index("family").loc["beta"]
    assert "outside the support" in beta["skipped"] and np.isnan(beta["nll_mean"])
    assert {"crps_mean", "crps_std", "coverage_90_mean", "fit_seconds"} <= set(table.columns)


def test_censored_targets():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 2))
    t = np.exp(0.5 * X[:, 0] + 0.5 * rng.normal(size=600))
    c = rng.exponential(3.0, size=600)
    y = db.censored.right(np.minimum(t, c), t <= c)
    table = db.compare_families(X, y, families=["censored_lognormal", "censored_exponential"],
                                cv=3, metrics=("nll", "c_index"), n_estimators=40,
                                num_leaves=4, early_stopping=False, linear_start=False)
    assert table.loc[0, "family"] == "censored_lognormal"
    assert (table["c_index_mean"] > 0.6).all()


FAST = dict(cv=2, n_estimators=10, early_stopping=False)


def test_default_candidates_hold_y_and_never_classify():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 2))
    real = db.compare_families(X, rng.normal(size=120), metrics=("nll",), **FAST)
    assert set(real["family"]) == {"normal", "laplace", "logistic", "gumbel", "studentt", "cauchy",
                                   "histogram"}
    assert (real["skipped"] == "").all()
    assert "classification" in real.attrs["excluded"]["bernoulli"]
    assert "outside the support" in real.attrs["excluded"]["poisson"]
    from distboost.selection.compare import _default_candidates

    binary = (rng.uniform(size=120) < 0.4).astype(float)  # integer y: counts allowed, not labels
    names, excluded = _default_candidates(binary, "scalar")
    names = set(names)
    assert {"poisson", "negative_binomial", "normal", "exponential"} <= names
    assert "classification" in excluded["bernoulli"] and "support" in excluded["gamma"]
    assert not names & {"bernoulli", "categorical", "gamma", "lognormal", "weibull", "beta"}


def test_densities_and_mass_functions_are_ranked_by_crps():
    # Poisson counts with mean ~1: the exponential density scores a lower NLL (1.00 against
    # 1.30) though the Poisson is the true model; CRPS, on one scale for both, ranks it first.
    # All 20 rounds (early_stopping=False): the ranking, not the stopping, is tested here; the
    # ranking holds, by 0.04 in CRPS and 0.3 in NLL, for seeds 0-4.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = rng.poisson(np.exp(0.3 * X[:, 0])).astype(float)
    table = db.compare_families(X, y, families=["exponential", "poisson"], cv=2,
                                metrics=("nll",), n_estimators=20, early_stopping=False)
    assert table.attrs["ranked_by"] == "crps_mean" and "CRPS" in table.attrs["note"]
    assert list(table["family"]) == ["poisson", "exponential"]
    assert list(table["kind"]) == ["mass", "density"]
    exp_row = table.set_index("family").loc["exponential"]
    assert exp_row["nll_mean"] < table.loc[0, "nll_mean"]  # the NLL alone would mislead
    assert table.attrs["best"] == "poisson"


def test_one_kind_is_ranked_by_nll_and_censored_families_are_mixed():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    t = np.exp(0.5 * X[:, 0] + 0.5 * rng.normal(size=300))
    y = db.censored.right(np.minimum(t, 2.0), t <= 2.0)
    table = db.compare_families(X, y, families=["censored_lognormal", "censored_exponential"],
                                metrics=("nll", "crps"), **FAST)
    assert set(table["kind"]) == {"mixed"} and table.attrs["ranked_by"] == "nll_mean"
    assert table["nll_mean"].is_monotonic_increasing


@pytest.mark.filterwarnings("ignore:compare_families. family 'studentt'")
def test_degenerate_fit_is_flagged_and_never_best():
    # 66 % exact zeros: the Student t's likelihood is unbounded at the point mass; it "wins"
    # on NLL (about -5.7 against 2.0) with df < 1, a NaN mean and an infinite CRPS.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    zero = rng.uniform(size=300) < 1 / (1 + np.exp(-(0.9 + X[:, 0])))
    y = np.where(zero, 0.0, rng.gamma(2.0, np.exp(0.5 * X[:, 1])))
    table = db.compare_families(X, y, families=["studentt", "normal"], **FAST)
    assert list(table["family"]) == ["normal", "studentt"]
    t = table.set_index("family").loc["studentt"]
    assert t["nll_mean"] < table.loc[0, "nll_mean"]
    assert "df <= 1" in t["degenerate"] and "crps not finite" in t["degenerate"]
    assert table.loc[0, "degenerate"] == "" and table.attrs["best"] == "normal"
    assert "point mass" in table.attrs["note"] and table.attrs["ranked_by"] == "crps_mean"
    with pytest.warns(UserWarning, match="every fitted family"):
        alone = db.compare_families(X, y, families=["studentt"], **FAST)
    assert alone.attrs["best"] is None


class _NoisyNormal(db.families.get("normal").__class__):
    name = "noisy_normal"

    def init(self, y, sample_weight=None):
        warnings.warn("noisy init", UserWarning, stacklevel=2)
        return super().init(y, sample_weight)


def test_fold_warnings_name_the_family_and_the_fold():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(80, 2)), rng.normal(size=80)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = db.compare_families(X, y, families=[_NoisyNormal()], metrics=("nll",), **FAST)
    messages = [str(w.message) for w in caught]
    assert table.loc[0, "family"] == "noisy_normal"
    assert any(re.fullmatch(r"compare_families: family 'noisy_normal', folds? [\d,]+/2: "
                            r"noisy init", m) for m in messages), messages
    assert "noisy init" not in messages  # never re-raised without its context


class _FailingNormal(db.families.get("normal").__class__):
    name = "failing_normal"

    def init(self, y, sample_weight=None):
        raise FloatingPointError("diverged")


def test_a_family_whose_fit_fails_is_skipped_with_a_warning():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(80, 2)), rng.normal(size=80)
    with pytest.warns(RuntimeWarning, match="family 'failing_normal', fold 1/2 failed"):
        table = db.compare_families(X, y, families=[_FailingNormal(), "normal"],
                                    metrics=("nll",), **FAST)
    assert list(table["family"]) == ["normal", "failing_normal"]
    assert "FloatingPointError: diverged" in table.loc[1, "skipped"]
    assert table.attrs["best"] == "normal"


def test_unknown_metric_is_an_error():
    with pytest.raises(ValueError, match="Unknown metric"):
        db.compare_families(np.arange(20.0)[:, None], np.arange(20.0), metrics=("nlll",))


def test_compare_plot_uses_the_ranking_metric_and_greys_degenerate_fits():
    import matplotlib

    matplotlib.use("Agg")
    table = pd.DataFrame({
        "family": ["poisson", "exponential", "studentt"], "kind": ["mass", "density", "density"],
        "nll_mean": [1.3, 1.0, -5.0], "nll_std": [0.1] * 3, "crps_mean": [0.5, 0.6, np.inf],
        "crps_std": [0.1, 0.1, np.nan], "degenerate": ["", "", "df <= 1"], "skipped": [""] * 3,
    })
    table.attrs["ranked_by"] = "crps_mean"
    ax = db.plot.compare(table)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["poisson", "exponential"]
    assert ax.get_xlabel().startswith("crps")
    ax = db.plot.compare(table, "nll")
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "studentt (degenerate)"


def _parallel_case():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.uniform(-2, 2, 120), "b": rng.normal(size=120)})
    y = rng.gamma(2.0, np.exp(0.5 * X["a"]))
    return X, y, dict(families=["gamma", "lognormal", "beta"], cv=2, n_estimators=15,
                      early_stopping="holdout")


def test_progress_bar_counts_the_fits(capsys):
    X, y, kw = _parallel_case()
    db.compare_families(X, y, progress=True, **kw)
    err = capsys.readouterr().err
    assert "compare_families" in err and "4/4" in err  # 2 families that hold y x 2 folds
    assert "lognormal, fold 2/2" in err


@pytest.mark.slow  # starts two worker processes (about 10 s)
def test_parallel_table_equals_the_serial_one():
    X, y, kw = _parallel_case()
    serial = db.compare_families(X, y, **kw)
    parallel = db.compare_families(X, y, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(serial.drop(columns="fit_seconds"),
                                  parallel.drop(columns="fit_seconds"), check_exact=True)
    assert serial.attrs == parallel.attrs


def test_zero_adjusted_families_are_mixed_and_ranked_by_crps_against_densities():
    # 40 % exact zeros, covariate-dependent: the zero-adjusted gamma's likelihood mixes a
    # probability (zeros) and a density, so it is compared with densities by CRPS only.
    # All 20 rounds (early_stopping=False): the zero-adjusted gamma's CRPS is the lower by
    # 0.04-0.06 for seeds 0-4.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    zero = rng.uniform(size=400) < 1 / (1 + np.exp(-(X[:, 0] - 0.4)))
    y = np.where(zero, 0.0, rng.gamma(2.0, np.exp(0.3 * X[:, 1])))
    table = db.compare_families(X, y, families=["exponential", "zero_adjusted_gamma"],
                                metrics=("nll",), cv=2, n_estimators=20, early_stopping=False)
    kinds = dict(zip(table["family"], table["kind"], strict=True))
    assert kinds == {"exponential": "density", "zero_adjusted_gamma": "mixed"}
    assert table.attrs["ranked_by"] == "crps_mean" and "zero-adjusted" in table.attrs["note"]
    assert table.attrs["best"] == "zero_adjusted_gamma"
    za = table.set_index("family").loc["zero_adjusted_gamma"]
    assert za["degenerate"] == ""  # both quartiles at the atom are not a collapse


def test_two_columns_are_bounds_or_parts_and_an_ambiguous_pair_asks():
    from distboost.selection.compare import _target_kind

    rng = np.random.default_rng(0)
    lo = rng.uniform(1, 2, size=20)
    assert _target_kind(np.c_[lo, np.where(lo > 1.5, np.inf, lo)], None, None) == "censored"
    assert _target_kind(np.c_[lo, lo - 0.5 * (lo > 1.5)], None, None) == "vector"
    assert _target_kind(rng.normal(size=(20, 3)), None, None) == "vector"
    assert _target_kind(np.c_[lo, lo + 1], ["multivariate_normal"], None) == "vector"
    assert _target_kind(np.c_[lo, lo + 1], ["censored_normal"], None) == "censored"
    with pytest.raises(ValueError, match="pass multivariate=True for 2 parts or "
                                         "multivariate=False for censored bounds"):
        _target_kind(np.c_[lo, lo + 1], None, None)


def test_a_vector_target_compares_the_vector_families():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(150, 2))
    Y = np.c_[X[:, 0], X[:, 1]] + rng.multivariate_normal([0, 0], [[1, 0.7], [0.7, 1]], 150)
    table = db.compare_families(X, Y, metrics=("nll",), multivariate=True, **FAST)
    assert table["family"].tolist() == ["multivariate_normal"]
    assert "family 'dirichlet' needs every part positive" in table.attrs["excluded"]["dirichlet"]
    assert np.isfinite(table.loc[0, "nll_mean"]) and table.attrs["best"] == "multivariate_normal"
    assert "normal" in table.attrs["excluded"]


def _wine(n=400):
    from pathlib import Path

    from distboost.datasets import load_uci

    folder = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci" / "wine-quality-red"
    if not folder.is_dir():
        folder = Path("/work/shared/data/uci/wine-quality-red")
    X, y = load_uci(folder)
    idx = np.random.default_rng(0).permutation(len(y))[:n]
    return X[idx], y[idx]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_degenerate_mixture_on_a_discrete_target_is_flagged_and_never_best():
    # Wine quality (integers 3..8): a 3-normal mixture puts components on the atoms, its
    # scales at their floor; its NLL is far below the Normal's, its CRPS worse.
    X, y = _wine()
    table = db.compare_families(X, y, families=[db.families.Mixture("normal", 3), "normal"],
                                cv=2, n_estimators=3, early_stopping=False)
    rows = table.set_index("family")
    mix = rows.loc["mixture(normal, 3)"]
    assert re.search(r"scale_\d at its floor on \d+% of rows", mix["degenerate"])
    assert mix["nll_mean"] < rows.loc["normal", "nll_mean"] - 1.0  # NLL alone would pick it
    assert table.attrs["best"] == "normal" and list(table["family"])[-1] == "mixture(normal, 3)"
    assert table.attrs["ranked_by"] == "crps_mean"
    # family="auto"'s rule never chooses it, even were its CRPS the best by far.
    from distboost.selection.auto import one_se_choice

    n_params = {"normal": 2, "mixture(normal, 3)": 8}
    assert one_se_choice(table.copy(), n_params) == "normal"
    table.loc[table["family"] == "mixture(normal, 3)", "crps_mean"] = 0.0
    assert one_se_choice(table, n_params) == "normal"
    assert not table.set_index("family").loc["mixture(normal, 3)", "within_1se"]


def test_integer_target_reads_ordinal_classes_and_histogram_bins_from_y():
    from distboost.selection.compare import _default_candidates

    X, y = _wine(200)
    names, excluded = _default_candidates(y, "scalar")
    assert {"ordinal_logit", "histogram"} <= set(names), excluded
    table = db.compare_families(X, y, families=["ordinal_logit", "histogram"], cv=2,
                                n_estimators=3, early_stopping=False)
    assert (table["skipped"] == "").all() and set(table["kind"]) == {"mass"}
    assert table.attrs["best"] in {"ordinal_logit", "histogram"}
