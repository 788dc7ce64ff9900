"""Tests of the command-line interface."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from distboost.cli import _marginal_table, _not_applicable_line, main

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_marginal_table_ranks_families_and_explains_skips():
    y = np.random.default_rng(0).gamma(3.0, 2.0, size=2000)
    table = _marginal_table(y)
    assert table.iloc[0]["family"] == "gamma"
    # Only families that can apply are rows; the others are named once with a short reason,
    # never a message cut mid-word.
    assert {"beta", "bernoulli", "categorical", "poisson"}.isdisjoint(table["family"])
    assert table["mean_loglik"].notna().all() and list(table.columns) == [
        "family", "mean_loglik", "params"]
    skipped = table.attrs["not_applicable"]
    assert skipped["beta"] == "support (0, 1) does not hold y"
    assert skipped["bernoulli"] == skipped["categorical"] == "a classification family"
    assert skipped["dirichlet"] == "a vector target (y of shape (n, d))"
    line = _not_applicable_line(skipped)
    assert line.startswith("Not applicable: ")
    assert "bernoulli, categorical (a classification family)" in line


@pytest.mark.slow  # the whole demo: 5-fold comparison of 4 families, 300 rounds each
def test_demo_writes_figures_and_report(tmp_path, capsys):
    families = "normal,gamma,lognormal,weibull"
    assert main(["demo", "--out", str(tmp_path), "--families", families]) == 0
    out = capsys.readouterr().out
    assert "Best family by cross-validated " in out and "coverage_90" in out
    assert "Not applicable: " in out and "outside the support" not in out
    for name in ["intervals.png", "pit.png", "calibration.png", "comparison.png"]:
        assert (tmp_path / name).stat().st_size > 10_000
    report = (tmp_path / "report.md").read_text()
    assert "## Family comparison" in report and "| gamma |" in report


@pytest.fixture
def quick_fits(monkeypatch):
    """``distboost fit`` boosts 5 rounds without early stopping (as tests/test_cli_docs.py's
    fits): for the tests of what the CLI does around the fit (censoring from --event, vector
    targets, the prediction columns), not of the rounds' choice.  The CLI's own options
    (early_stopping=True: the held-out split on 1,000 rows) are fitted by ``model_file``."""
    import distboost.estimators

    real = distboost.estimators.DistributionalRegressor
    monkeypatch.setattr(distboost.estimators, "DistributionalRegressor", lambda **params: real(
        **{**params, "n_estimators": 5, "early_stopping": False}))


@pytest.fixture(scope="module")  # read only: the tests write to their own tmp_path
def csv(tmp_path_factory):
    # 1,000 rows: `fit` early-stops on a held-out tenth of them in half a second; below 1,000
    # rows it cross-validates the rounds and the linear start (5 s).
    rng = np.random.default_rng(0)
    n = 1000
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b"], size=n)})
    df["y"] = np.exp(df["x"] + (df["g"] == "a") + 0.3 * rng.normal(size=n))
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def model_file(csv, tmp_path_factory):
    """`distboost fit` of the CSV, once for the tests that predict from its model file."""
    model = tmp_path_factory.mktemp("model") / "m.json"
    assert main(["fit", str(csv), "--target", "y", "--family", "lognormal", "--out",
                 str(model)]) == 0
    return model


def test_fit_then_predict(csv, model_file, tmp_path, capsys):
    preds = tmp_path / "p.csv"
    assert main(["predict", str(model_file), str(csv), "--quantiles", "0.1,0.9", "--out",
                 str(preds)]) == 0
    out = pd.read_csv(preds)
    assert list(out.columns) == ["mean", "sd", "loc", "scale", "q0.1", "q0.9"]
    assert len(out) == 1000 and (out["q0.1"] < out["q0.9"]).all()


def test_predict_passes_an_id_column_and_writes_survival_probabilities(tmp_path, capsys,
                                                                        quick_fits):
    import distboost as db

    # 300 simulated patients and 5 rounds (quick_fits): the columns and survival
    # probabilities written are tested, not the fit; the CLI's own fit of db.datasets'
    # veterans from the CSV: test_fit_survival_with_event_column (slow tier, 12 s).
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"age": rng.uniform(35.0, 80.0, n),
                      "arm": pd.Categorical(rng.choice(["standard", "test"], n))})
    time = rng.weibull(1.5, n) * np.exp(5.0 - 0.02 * (X["age"] - 60) + 0.3 * (X["arm"] == "test"))
    censor = rng.uniform(0.0, 500.0, n)
    event = time <= censor
    data = X.assign(time=np.minimum(time, censor), event=event.astype(int),
                    patient=[f"p{i}" for i in range(n)])
    csv = tmp_path / "vet.csv"
    data.to_csv(csv, index=False)
    model = tmp_path / "m.json"
    data.drop(columns="patient").to_csv(tmp_path / "train.csv", index=False)
    assert main(["fit", str(tmp_path / "train.csv"), "--target", "time", "--event", "event",
                 "--family", "weibull", "--out", str(model)]) == 0
    assert "censored_weibull" in capsys.readouterr().out  # --event makes it censored
    preds = tmp_path / "p.csv"
    assert main(["predict", str(model), str(csv), "--id", "patient", "--times", "30,365",
                 "--quantiles", "0.5", "--out", str(preds)]) == 0
    out = pd.read_csv(preds)
    assert list(out.columns[:1]) == ["patient"] and list(out.columns[-3:]) == [
        "q0.5", "S(30)", "S(365)"]
    assert out["patient"].tolist() == data["patient"].tolist()
    fitted = db.load(model)
    np.testing.assert_allclose(out["S(365)"], fitted.predict_dist(X).sf(365.0), rtol=1e-6)
    assert (out["S(30)"] >= out["S(365)"]).all()
    # S(median) = 1/2
    dist = fitted.predict_dist(X)
    np.testing.assert_allclose(dist.sf(out["q0.5"].to_numpy()), 0.5, atol=1e-6)


@pytest.mark.slow  # 12 s: --event on the veterans' CSV (--event, fast: the test above)
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not beside the checkout")
def test_fit_survival_with_event_column(tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["fit", str(SHARED / "survival" / "veterans.csv"), "--target", "time",
                 "--event", "event", "--family", "weibull", "--out", str(model)]) == 0
    assert "censored_weibull" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["fit", "missing.csv", "--target", "y", "--out", "m.json"], "No such file: missing.csv"),
    (["fit", "{csv}", "--target", "nope", "--out", "m.json"], "Column 'nope' is not in the data"),
    (["fit", "{csv}", "--target", "x", "--family", "gamma", "--out", "m.json"],
     "outside the support"),
    (["predict", "nomodel.json", "{csv}"], "No such file: nomodel.json"),
    (["predict", "{model}", "{csv}", "--id", "patient"], "Column 'patient' (--id) is not in"),
    (["predict", "{model}", "{csv}", "--times", "1,a"], "--times takes comma-separated numbers"),
    (["compare", "{csv}", "--target", "y", "--families", "normal,nonesuch"],
     "Unknown family 'nonesuch'"),
], ids=["missing-file", "missing-column", "target-unfit", "missing-model", "missing-id",
        "bad-times", "unknown-family"])
def test_user_errors_print_one_line_and_exit_2(argv, message, csv, capsys, tmp_path,
                                                monkeypatch, request):
    monkeypatch.chdir(tmp_path)
    model = request.getfixturevalue("model_file") if "{model}" in argv else None
    capsys.readouterr()
    argv = [a.replace("{csv}", str(csv)).replace("{model}", str(model)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.slow  # cross-validates every candidate family (the table's printing: test_fit_auto_*)
def test_compare(csv, capsys):
    assert main(["compare", str(csv), "--target", "y", "--cv", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "lognormal" in out and " nll " in out and "degenerate" in out and "kind" in out
    assert "(2 folds)" in out
    table, excluded = out.split("Not candidates")
    assert "poisson" in excluded and "bernoulli" in excluded and "poisson" not in table


def _fake_table(rows):
    table = pd.DataFrame(rows, columns=["family", "kind", "crps_mean", "degenerate"])
    table["crps_std"] = 0.01
    table["skipped"] = ""
    table.attrs.update(ranked_by="crps_mean", note="Ranked by crps_mean: a test note.",
                       excluded={}, best=None)
    return table


@pytest.fixture
def counts_csv(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=200)})
    df["y"] = rng.poisson(np.exp(0.5 * df["x"]))
    path = tmp_path / "counts.csv"
    df.to_csv(path, index=False)
    return path


def test_fit_auto_uses_the_estimators_choice_and_never_a_degenerate_one(
        counts_csv, tmp_path, capsys, monkeypatch):
    import distboost as db
    import distboost.selection.auto

    # The best CRPS is a degenerate fit: the sound Poisson is chosen.
    table = _fake_table([("negative_binomial", "mass", 0.50,
                          "total_count at its floor on 60% of rows"),
                         ("poisson", "mass", 0.52, ""), ("histogram", "mass", 0.60, "")])
    monkeypatch.setattr(distboost.selection.auto, "compare_families",
                        lambda *a, **k: table.copy())
    model = tmp_path / "m.json"
    assert main(["fit", str(counts_csv), "--target", "y", "--family", "auto", "--out",
                 str(model)]) == 0
    out = capsys.readouterr().out
    assert "a test note" in out and "Chosen family: poisson" in out and "Fitted poisson" in out
    loaded = db.load(model)
    assert loaded.family == "auto" and loaded.family_.name == "poisson"


def test_fit_auto_refuses_when_every_family_is_degenerate(counts_csv, tmp_path, capsys,
                                                          monkeypatch):
    import distboost.selection.auto

    table = _fake_table([("poisson", "mass", np.inf, "rate at its floor on 90% of rows"),
                         ("histogram", "mass", 0.5, "collapsed on 60% of rows")])
    monkeypatch.setattr(distboost.selection.auto, "compare_families",
                        lambda *a, **k: table.copy())
    model = tmp_path / "m.json"
    assert main(["fit", str(counts_csv), "--target", "y", "--family", "auto", "--out",
                 str(model)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no candidate fits this target soundly" in err[0]
    assert "poisson: rate at its floor" in err[0] and not model.exists()


@pytest.mark.slow  # 3 s: a fresh interpreter
def test_module_entry_point_reports_usage_errors():
    res = subprocess.run([sys.executable, "-m", "distboost", "nonesuch"], capture_output=True,
                         text=True)
    assert res.returncode != 0 and "invalid choice" in res.stderr


def _long_table():
    beta_why = ("Target y has 300 of 300 rows outside the support (0, 1) of family 'beta' "
                "(e.g. [1.5, 2.7, 0.3]). " + "More detail. " * 10)
    table = pd.DataFrame({
        "family": ["lognormal", "gamma", "beta"], "kind": ["density"] * 3,
        "nll_mean": [1.2345678, 1.3, np.nan], "nll_std": [0.05, 0.06, np.nan],
        "crps_mean": [0.41, 0.43, np.nan], "crps_std": [0.02, 0.03, np.nan],
        "coverage_90_mean": [0.9, 0.88, np.nan], "coverage_90_std": [0.01, 0.02, np.nan],
        "fit_seconds": [0.5, 0.6, np.nan], "degenerate": ["", "", ""],
        "skipped": ["", "", beta_why]})
    table.attrs.update(ranked_by="nll_mean", note="", excluded={}, best="lognormal")
    return table


def test_compare_prints_its_folds_takes_families_and_fits_a_terminal(csv, tmp_path, capsys,
                                                                    monkeypatch):
    import distboost.selection

    seen = {}

    def fake(X, y, **kw):
        seen.update(kw)
        return _long_table()

    monkeypatch.setattr(distboost.selection, "compare_families", fake)
    out_csv = tmp_path / "table.csv"
    assert main(["compare", str(csv), "--target", "y", "--cv", "3", "--families",
                 "lognormal,gamma,beta", "--out", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "(3 folds)" in out and "3 families" in out
    assert seen["cv"] == 3 and seen["families"] == ["lognormal", "gamma", "beta"]
    assert seen["progress"] is True  # on by default in the CLI
    assert max(len(line) for line in out.splitlines() if not line.startswith("Wrote")) <= 80
    assert "beta: support (0, 1) does not hold y (300 of 300 rows outside)" in out
    assert "1.235 ± 0.05" in out
    written = pd.read_csv(out_csv, keep_default_na=False)
    assert written.loc[2, "skipped"] == _long_table().loc[2, "skipped"]  # the full text
    assert main(["compare", str(csv), "--target", "y", "--no-progress"]) == 0
    assert seen["progress"] is False and seen["families"] is None and seen["cv"] == 5
    assert "(5 folds)" in capsys.readouterr().out
    assert main(["compare", str(csv), "--target", "y", "--families", "nonesuch"]) == 2
    assert "Unknown family 'nonesuch'" in capsys.readouterr().err


def _two_targets_csv(tmp_path):
    rng = np.random.default_rng(3)
    n = 150
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    e = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], size=n)
    df["load1"], df["load2"] = df["x1"] + e[:, 0], df["x2"] + e[:, 1]
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    return data


def test_several_targets_fit_a_vector_family_and_predict(tmp_path, capsys, quick_fits):
    # 5 rounds (quick_fits): the CLI's default cross-validated the rounds of 150 rows (4 s;
    # the defaults on a vector target: tests/estimators/test_regressor_multivariate.py).  The
    # predicted correlations stay in 0.55-0.76 (0.36-0.76 over data seeds 0-9): from the
    # start value (the marginal correlation, about 0.6) towards the truth given x, 0.8.
    data, model = _two_targets_csv(tmp_path), tmp_path / "m.json"
    assert main(["fit", str(data), "--target", "load1,load2", "--out", str(model),
                 "--no-progress"]) == 0
    assert "Fitted multivariate_normal" in capsys.readouterr().out
    out = tmp_path / "p.csv"
    assert main(["predict", str(model), str(data), "--out", str(out),
                 "--quantiles", "0.1,0.9"]) == 0
    pred = pd.read_csv(out)
    assert {"mean_load1", "sd_load2", "corr_load1_load2", "load2_q0.9"} <= set(pred.columns)
    assert pred["corr_load1_load2"].between(0.3, 0.95).all()
    assert main(["predict", str(model), str(data), "--times", "1"]) == 2
    assert "--times gives survival probabilities of one target" in capsys.readouterr().err


@pytest.mark.slow  # 2 s: cross-validated fits (compare_families' vector path: test_selection)
def test_compare_takes_several_targets(tmp_path, capsys):
    data = _two_targets_csv(tmp_path)
    assert main(["compare", str(data), "--target", "load1,load2", "--cv", "2",
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "multivariate_normal" in printed and "energy_score" in printed
