"""Smoke test of benchmarks/multivariate.py (its ``--quick`` run) and checks of its
simulators against independent references.  Named ``test_bench_*``: tests/metrics and
tests/families hold a ``test_multivariate.py`` of their own (one module name per test file)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as st

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "multivariate.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_multivariate", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_matches_its_definition(bench):
    # Many draws at four fixed rows: the empirical moments are the docstring's.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(4, bench.P))
    rows = np.repeat(X, 20_000, axis=0)

    class Fixed:  # the generator's uniform draw gives the fixed rows
        def uniform(self, lo, hi, size):
            return rows

        def normal(self, size):
            return rng.normal(size=size)

    _, Y, rho, loc, tril = bench.simulate_mvn(len(rows), 3, Fixed())
    np.testing.assert_allclose(rho, np.tanh(2 * rows[:, 0]))
    for i in range(4):
        sel = slice(i * 20_000, (i + 1) * 20_000)
        r = np.tanh(2 * X[i, 0])
        sign = np.array([1.0, -1.0, 1.0])
        sd = np.exp(sign * X[i, 2] / 2)
        cov = np.outer(sd, sd) * r ** np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
        np.testing.assert_allclose(tril[sel][0] @ tril[sel][0].T, cov, atol=1e-12)
        np.testing.assert_allclose(loc[sel][0], np.sin(np.pi * X[i, 1] + np.arange(3))
                                   + sign * X[i, 0], atol=1e-12)
        np.testing.assert_allclose(np.cov(Y[sel].T), cov, atol=0.05 * cov.max())
        # the oracle density is scipy's
        np.testing.assert_allclose(
            st.multivariate_normal(loc[sel][0], cov).logpdf(Y[sel][:5]),
            st.multivariate_normal(loc[sel][0], tril[sel][0] @ tril[sel][0].T).logpdf(
                Y[sel][:5]), rtol=1e-10)


def test_dirichlet_generator(bench):
    X, Y, alpha = bench.simulate_dirichlet(2000, np.random.default_rng(1))
    np.testing.assert_allclose(Y.sum(axis=1), 1.0, atol=1e-12)
    assert (Y > 0).all()
    np.testing.assert_allclose(np.log(alpha), bench.log_alpha(X))
    # E[y_j] = alpha_j / sum(alpha): the mean residual is about zero
    resid = Y - alpha / alpha.sum(axis=1, keepdims=True)
    assert np.abs(resid.mean(axis=0)).max() < 0.02


def test_quick_run_writes_finite_tables(bench, tmp_path):
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\n<!-- other:start -->\nkept\n<!-- other:end -->\n")
    res = bench.main(["--quick", "--out", str(out)])
    text = out.read_text()
    assert "kept" in text and text.count(bench.START) == 1
    for header in ("## Vector targets", "(a) Bivariate Normal", "(b) Dirichlet",
                   "(c) Cost of the natural step", "(d) Natural against fisher"):
        assert header in text
    mvn = res["mvn"].groupby("model")["nll"].mean()
    assert np.isfinite(res["mvn"][["nll", "energy", "corr_mae", "seconds"]].to_numpy()).all()
    assert np.isfinite(res["dirichlet"][["nll", "energy"]].to_numpy()).all()
    # the joint model beats the marginal one; nothing beats the truth
    assert mvn["oracle"] < mvn["multivariate_normal"] < mvn["marginal MVN"]
    dirichlet = res["dirichlet"].groupby("model")["nll"].mean()
    assert dirichlet["oracle"] < dirichlet["dirichlet"] < dirichlet["marginal dirichlet"]
    assert np.isfinite(res["speed"].drop(columns=["d", "outputs"]).to_numpy()).all()
    assert np.isfinite(res["steps"]["nll"]).all()
    # rerunning replaces the section instead of appending a second one
    bench.main(["--quick", "--parts", "c", "--out", str(out)])
    assert out.read_text().count(bench.START) == 1 and "(a) Bivariate" not in out.read_text()
