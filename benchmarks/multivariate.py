"""Vector targets: does a joint model pay off against independent ones, and what does the
natural step cost?

Four parts, all on simulated data with a known truth, every random draw seeded.

a. Bivariate Normal whose correlation depends on x.  ``X ~ U[-1, 1]^5`` and, for ``d`` parts
   (``d = 2`` here),

       mu_j(x)    = sin(pi x1 + j) + (-1)^j x0,
       sigma_j(x) = exp((-1)^j x2 / 2),
       Corr[j, k] = rho(x)^|j - k|,   rho(x) = tanh(2 x0)   (an AR(1) correlation),

   drawn as ``e_0 = z_0``, ``e_j = rho e_{j-1} + sqrt(1 - rho^2) z_j`` (``z`` iid standard
   Normal), ``y_j = mu_j + sigma_j e_j``; x3 and x4 are noise columns.  Training sets of
   ``n_train`` in {1,000, 5,000} rows, 5 seeds, an independent test set of 5,000 rows per
   seed.  Models: the boosted ``multivariate_normal`` (estimator defaults: natural step,
   early stopping on a 10% split); two independent boosted ``normal`` models, one per part
   (their joint NLL is the sum of the two, the density of the product distribution); the
   marginal (unconditional) multivariate Normal (the training rows' MLE); and the true
   distribution (oracle, for reference).  Reported: held-out NLL per row (mean ± standard
   error over seeds), the paired difference MVN minus independent (the target of issue 17:
   below -0.1 nats per row), the energy score (``db.metrics.energy_score`` when the library
   has it), the mean absolute error of the predicted correlation against the true rho(x) on
   the test rows, overall and by bins of |rho| ([0, 0.3), [0.3, 0.6), [0.6, 1)), and fit
   seconds.  The independent models' predicted correlation is 0, so their error is the
   mean |rho|.

b. Dirichlet compositions, ``d = 3``: ``y ~ Dirichlet(alpha(x))`` with

       log alpha_0 = 1 + x0,  log alpha_1 = 0.5 + sin(pi x1),
       log alpha_2 = 1 + x2 / 2 - x0 x1,

   the same sizes and seeds.  Models: the boosted ``dirichlet``; independent boosted
   ``beta`` models for the first ``d - 1`` parts; the marginal Dirichlet (the training rows'
   MLE); the oracle.  The Dirichlet density is a density of the first ``d - 1`` parts (with
   respect to Lebesgue measure on R^(d-1); the last part is 1 minus their sum), and the
   product of the ``d - 1`` Beta densities is a density on the same space (it puts mass
   outside the simplex too, which it pays for), so the two NLLs are comparable.  Energy
   score: on all ``d`` parts, the Betas' draws of the first ``d - 1`` parts taken
   independently and the last part set to 1 minus their sum (a draw off the simplex is then
   a vector with a negative last part, which the score penalises).

c. The cost of the natural step, ``d`` in {2, 3, 4, 5}: seconds per boosting round of
   ``multivariate_normal`` with ``step="natural"`` (the full Fisher matrix of the
   ``K = d (d + 3) / 2`` outputs, one K x K solve per row) against ``step="fisher"`` (its
   diagonal) and against ``d`` independent ``normal`` models (seconds summed), on 5,000 rows
   of the generator of (a), ``early_stopping=False``, ``n_estimators=100``, best of 2
   interleaved fits in this process.

d. Held-out NLL of the natural against the fisher step for ``d`` in {2, 4} on the generator
   of (a) (5,000 training rows, 5 seeds, estimator defaults otherwise): does the full step
   earn its cost?

Writes a markdown section into ``--out`` between ``<!-- multivariate:start -->`` and
``<!-- multivariate:end -->`` (other sections of ``docs/benchmarks.md`` stay).  ``--quick``
is a reduced run (small sizes, few rounds) for smoke tests.

Run: ``python benchmarks/multivariate.py [--quick] [--out docs/benchmarks.md]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import _sections  # noqa: E402  (benchmarks/_sections.py: the page's section)
import torch  # noqa: E402

import distboost as db  # noqa: E402

warnings.filterwarnings("ignore")
START, END = "<!-- multivariate:start -->", "<!-- multivariate:end -->"
RHO_BINS = (0.0, 0.3, 0.6, 1.0)
P = 5  # features


# ----------------------------------------------------------------------------- data
def simulate_mvn(n: int, d: int, rng: np.random.Generator):
    """Rows of the generator of part (a): X (n, 5), Y (n, d), rho (n,), loc (n, d) and the
    true Cholesky factor (n, d, d)."""
    X = rng.uniform(-1.0, 1.0, size=(n, P))
    rho = np.tanh(2.0 * X[:, 0])
    sign = (-1.0) ** np.arange(d)
    loc = np.sin(np.pi * X[:, [1]] + np.arange(d)) + sign * X[:, [0]]
    sigma = np.exp(sign * X[:, [2]] / 2.0)
    # Cholesky factor of the AR(1) correlation: C[j, k] = rho^(j-k) c for k >= 1, with
    # c = sqrt(1 - rho^2), and C[j, 0] = rho^j.
    c = np.sqrt(1.0 - rho ** 2)
    j, k = np.tril_indices(d)
    chol = np.zeros((n, d, d))
    chol[:, j, k] = rho[:, None] ** (j - k) * np.where(k == 0, 1.0, c[:, None])
    tril = sigma[:, :, None] * chol
    Y = loc + np.einsum("nij,nj->ni", tril, rng.normal(size=(n, d)))
    return X, Y, rho, loc, tril


def log_alpha(X: np.ndarray) -> np.ndarray:
    """The true log concentration of part (b), shape (n, 3)."""
    return np.column_stack([1.0 + X[:, 0], 0.5 + np.sin(np.pi * X[:, 1]),
                            1.0 + X[:, 2] / 2.0 - X[:, 0] * X[:, 1]])


def simulate_dirichlet(n: int, rng: np.random.Generator):
    X = rng.uniform(-1.0, 1.0, size=(n, P))
    alpha = np.exp(log_alpha(X))
    G = rng.gamma(alpha)
    return X, G / G.sum(axis=1, keepdims=True), alpha


# ----------------------------------------------------------------------------- helpers
def fit_timed(model, X, y):
    t0 = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - t0


def repeat(params: dict, n: int) -> dict:
    return {p: np.full(n, float(v)) for p, v in params.items()}


def corr01(dist) -> np.ndarray:
    return dist.correlation[:, 0, 1]


def corr_errors(pred: np.ndarray, rho: np.ndarray) -> dict:
    err = np.abs(pred - rho)
    out = {"corr_mae": float(err.mean())}
    for lo, hi in zip(RHO_BINS[:-1], RHO_BINS[1:], strict=True):
        sel = (np.abs(rho) >= lo) & (np.abs(rho) < hi)
        out[f"mae_{lo:.1f}"] = float(err[sel].mean()) if sel.any() else np.nan
    return out


def energy(dist, Y, args, seed) -> float:
    """Mean energy score, or NaN when the library has no ``db.metrics.energy_score``."""
    if not hasattr(db.metrics, "energy_score"):
        return np.nan
    return float(np.mean(db.metrics.energy_score(dist, Y, n_samples=args.es_samples,
                                                 random_state=seed)))


def regressor(args, seed, **kw):
    return db.DistributionalRegressor(random_state=seed, n_estimators=args.n_estimators,
                                      early_stopping=args.early_stopping, **kw)


# ----------------------------------------------------------------------------- part a
def run_mvn(n_train: int, seed: int, args) -> list[dict]:
    rng = np.random.default_rng([1, n_train, seed])
    X, Y, _, _, _ = simulate_mvn(n_train, 2, rng)
    Xt, Yt, rho, loc, tril = simulate_mvn(args.n_test, 2, rng)
    rows = []

    mvn, s = fit_timed(regressor(args, seed, family="multivariate_normal"), X, Y)
    dist = mvn.predict_dist(Xt)
    rows.append({"model": "multivariate_normal", "nll": -mvn.score(Xt, Yt),
                 "energy": energy(dist, Yt, args, seed), **corr_errors(corr01(dist), rho),
                 "rounds": mvn.best_iteration_, "seconds": s})

    parts, s = [], 0.0
    for j in range(2):
        m, sj = fit_timed(regressor(args, seed, family="normal"), X, Y[:, j])
        parts.append(m)
        s += sj
    marg = [m.predict_dist(Xt) for m in parts]
    nll = -sum(m.score(Xt, Yt[:, j]) for j, m in enumerate(parts))
    # The product of the two Normals is the multivariate Normal with a diagonal factor.
    loc_i = np.column_stack([g.params["loc"] for g in marg])
    tril_i = np.stack([np.diag(r) for r in np.column_stack([g.params["scale"] for g in marg])])
    indep = db.Predictive.from_params("multivariate_normal", loc=loc_i, scale_tril=tril_i)
    check = -float(np.mean(indep.log_prob(Yt)))
    if not np.isclose(check, nll, rtol=1e-8, atol=1e-8):
        raise RuntimeError(f"the product of the two Normals scores {check} as a diagonal "
                           f"multivariate Normal and {nll} as two Normals")
    rows.append({"model": "independent normals", "nll": nll,
                 "energy": energy(indep, Yt, args, seed),
                 **corr_errors(np.zeros(len(rho)), rho),
                 "rounds": np.mean([m.best_iteration_ for m in parts]), "seconds": s})

    t0 = time.perf_counter()
    family = db.families.get("multivariate_normal").with_dim(2)
    start = family.init(Y)
    s = time.perf_counter() - t0
    flat = db.Predictive(family, repeat(start, len(Yt)))
    rows.append({"model": "marginal MVN", "nll": -float(np.mean(flat.log_prob(Yt))),
                 "energy": energy(flat, Yt, args, seed), **corr_errors(corr01(flat), rho),
                 "rounds": 0, "seconds": s})

    truth = torch.distributions.MultivariateNormal(torch.as_tensor(loc),
                                                   scale_tril=torch.as_tensor(tril))
    oracle = db.Predictive.from_params("multivariate_normal", loc=loc, scale_tril=tril)
    rows.append({"model": "oracle", "nll": -float(truth.log_prob(torch.as_tensor(Yt)).mean()),
                 "energy": energy(oracle, Yt, args, seed), **corr_errors(rho, rho),
                 "rounds": 0, "seconds": 0.0})
    return [{"n_train": n_train, "seed": seed, **r} for r in rows]


# ----------------------------------------------------------------------------- part b
def run_dirichlet(n_train: int, seed: int, args) -> list[dict]:
    rng = np.random.default_rng([2, n_train, seed])
    X, Y, _ = simulate_dirichlet(n_train, rng)
    Xt, Yt, alpha = simulate_dirichlet(args.n_test, rng)
    rows = []

    model, s = fit_timed(regressor(args, seed, family="dirichlet"), X, Y)
    dist = model.predict_dist(Xt)
    rows.append({"model": "dirichlet", "nll": -model.score(Xt, Yt),
                 "energy": energy(dist, Yt, args, seed),
                 "rounds": model.best_iteration_, "seconds": s})

    betas, s = [], 0.0
    for j in range(2):
        m, sj = fit_timed(regressor(args, seed, family="beta"), X, Y[:, j])
        betas.append(m)
        s += sj
    nll = -sum(m.score(Xt, Yt[:, j]) for j, m in enumerate(betas))
    es = np.nan
    if hasattr(db.metrics, "energy_score"):
        draws = np.stack([m.predict_dist(Xt).sample(args.es_samples, random_state=seed + j)
                          for j, m in enumerate(betas)], axis=-1)  # (m, n, 2)
        draws = np.concatenate([draws, 1.0 - draws.sum(-1, keepdims=True)], axis=-1)
        es = energy(draws, Yt, args, seed)
    rows.append({"model": "independent betas (first 2 parts)", "nll": nll, "energy": es,
                 "rounds": np.mean([m.best_iteration_ for m in betas]), "seconds": s})

    t0 = time.perf_counter()
    family = db.families.get("dirichlet").with_dim(3)
    start = family.init(Y)
    s = time.perf_counter() - t0
    flat = db.Predictive(family, repeat(start, len(Yt)))
    rows.append({"model": "marginal dirichlet", "nll": -float(np.mean(flat.log_prob(Yt))),
                 "energy": energy(flat, Yt, args, seed), "rounds": 0, "seconds": s})

    truth = torch.distributions.Dirichlet(torch.as_tensor(alpha))
    oracle = db.Predictive.from_params("dirichlet", concentration=alpha)
    rows.append({"model": "oracle", "nll": -float(truth.log_prob(torch.as_tensor(Yt)).mean()),
                 "energy": energy(oracle, Yt, args, seed), "rounds": 0, "seconds": 0.0})
    return [{"n_train": n_train, "seed": seed, **r} for r in rows]


# ----------------------------------------------------------------------------- part c
def speed(d: int, args) -> dict:
    """Seconds per round of the natural and fisher steps and of d independent Normals."""
    X, Y, *_ = simulate_mvn(args.speed_rows, d, np.random.default_rng([3, d]))
    kw = {"n_estimators": args.speed_rounds, "early_stopping": False, "random_state": 0}
    times = {"natural": [], "fisher": [], "independent": []}
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(args.speed_repeats):  # interleaved, so that a change of load hits all
        for step in ("natural", "fisher"):
            model = db.DistributionalRegressor(family="multivariate_normal", step=step, **kw)
            times[step].append(fit_timed(model, X, Y)[1])
        times["independent"].append(sum(
            fit_timed(db.DistributionalRegressor(family="normal", **kw), X, Y[:, j])[1]
            for j in range(d)))
    share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    per = {k: min(v) / args.speed_rounds for k, v in times.items()}
    return {"d": d, "outputs": d * (d + 3) // 2, **per, "cpu_share": share,
            "natural/fisher": per["natural"] / per["fisher"],
            "natural/independent": per["natural"] / per["independent"]}


def profile(d: int, args, top: int = 12) -> str:
    """cProfile of one natural-step fit of part (c) at ``d`` parts: the top entries by own
    time, as text."""
    import cProfile
    import io
    import pstats

    X, Y, *_ = simulate_mvn(args.speed_rows, d, np.random.default_rng([3, d]))
    model = db.DistributionalRegressor(family="multivariate_normal", step="natural",
                                       n_estimators=args.speed_rounds, early_stopping=False,
                                       random_state=0)
    prof = cProfile.Profile()
    prof.runcall(model.fit, X, Y)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


# ----------------------------------------------------------------------------- part d
def run_steps(d: int, seed: int, args) -> list[dict]:
    rng = np.random.default_rng([4, d, seed])
    X, Y, *_ = simulate_mvn(args.step_rows, d, rng)
    Xt, Yt, *_ = simulate_mvn(args.n_test, d, rng)
    rows = []
    for step in ("natural", "fisher"):
        model, s = fit_timed(regressor(args, seed, family="multivariate_normal", step=step),
                             X, Y)
        rows.append({"d": d, "seed": seed, "step": step, "nll": -model.score(Xt, Yt),
                     "rounds": model.best_iteration_, "seconds": s})
    return rows


# ----------------------------------------------------------------------------- report
def ms(values, fmt="{:.3f}") -> str:
    """Mean ± standard error over seeds."""
    v = np.asarray(values, dtype=float)
    if np.isnan(v).all():
        return "n/a"
    se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan
    return f"{fmt.format(v.mean())} ± {fmt.format(se)}"


def paired(df, key, a, b, by, value="nll") -> list[tuple]:
    """Per level of ``by``: mean and standard error of the paired difference a - b."""
    wide = df.pivot_table(index=[by, "seed"], columns=key, values=value, dropna=False)
    out = []
    for level, g in wide.groupby(level=by):
        diff = (g[a] - g[b]).to_numpy()
        se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.nan
        out.append((level, diff.mean(), se, diff.size))
    return out


def table_mvn(df: pd.DataFrame) -> str:
    lines = ["| n_train | model | NLL | energy score | corr MAE | MAE, abs(rho) < 0.3 | "
             "0.3-0.6 | >= 0.6 | rounds | fit s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (n, model), g in df.groupby(["n_train", "model"], sort=False):
        lines.append(f"| {n:,} | {model} | {ms(g['nll'])} | {ms(g['energy'])} | "
                     f"{g['corr_mae'].mean():.3f} | {g['mae_0.0'].mean():.3f} | "
                     f"{g['mae_0.3'].mean():.3f} | {g['mae_0.6'].mean():.3f} | "
                     f"{g['rounds'].mean():.0f} | {g['seconds'].mean():.2f} |")
    return "\n".join(lines)


def table_plain(df: pd.DataFrame, by: str, key: str) -> str:
    score = "energy" in df
    lines = [f"| {by} | {key} | NLL |{' energy score |' if score else ''} rounds | fit s |",
             "|---|---|---|---|---|" + ("---|" if score else "")]
    for (n, model), g in df.groupby([by, key], sort=False):
        energy_col = f" {ms(g['energy'])} |" if score else ""
        lines.append(f"| {n:,} | {model} | {ms(g['nll'])} |{energy_col} "
                     f"{g['rounds'].mean():.0f} | {g['seconds'].mean():.2f} |")
    return "\n".join(lines)


def table_speed(rows: list[dict]) -> str:
    lines = ["| d | outputs K | natural s/round | fisher s/round | d normals s/round | "
             "natural / fisher | natural / d normals |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['d']} | {r['outputs']} | {r['natural']:.4f} | {r['fisher']:.4f} | "
              f"{r['independent']:.4f} | {r['natural/fisher']:.2f} | "
              f"{r['natural/independent']:.2f} |" for r in rows]
    return "\n".join(lines)


def write_section(path: Path, text: str) -> None:
    """This benchmark's section of the page (``_sections.write_section``)."""
    _sections.write_section(path, f"{START}\n{text}\n{END}", START, END)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="reduced run: 300 training rows, 2 seeds, 30 rounds, no early "
                        "stopping")
    parser.add_argument("--sizes", default=None, help="training sizes, default 1000,5000")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--parts", default="a,b,c,d", help="which parts to run")
    parser.add_argument("--out", default=None, help="markdown file to write the section into")
    parser.add_argument("--csv", default=None, help="prefix of CSV files of the raw rows")
    parser.add_argument("--profile", type=int, default=None, metavar="D",
                        help="also print a cProfile of one natural-step fit of part (c) at D "
                        "parts (not written to --out)")
    args = parser.parse_args(argv)
    full = {"sizes": "1000,5000", "seeds": 5, "n_test": 5000, "n_estimators": 1000,
            "es_samples": 500, "speed_rows": 5000, "speed_rounds": 100, "speed_repeats": 2,
            "speed_dims": (2, 3, 4, 5), "step_dims": (2, 4), "step_rows": 5000,
            "early_stopping": "auto"}
    quick = {"sizes": "300", "seeds": 2, "n_test": 300, "n_estimators": 30, "es_samples": 50,
             "speed_rows": 300, "speed_rounds": 5, "speed_repeats": 1, "speed_dims": (2, 3),
             "step_dims": (2,), "step_rows": 300, "early_stopping": False}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    args.sizes = [int(s) for s in str(args.sizes).split(",")]
    args.parts = set(args.parts.split(","))
    return args


def main(argv=None) -> dict:
    """Run the parts asked for; print and (with ``--out``) write the section.  Returns the
    raw rows of each part as DataFrames (``"mvn"``, ``"dirichlet"``, ``"speed"``,
    ``"steps"``)."""
    args = parse(argv)
    torch.manual_seed(0)
    warm = np.random.default_rng(0).normal(size=(200, 2))  # imports and first-call costs
    db.DistributionalRegressor(family="multivariate_normal", n_estimators=3,
                               early_stopping=False).fit(warm, warm)
    out, sections = {}, []
    command = "python benchmarks/multivariate.py" + (" --quick" if args.quick else "")
    es_note = (f"energy score from {args.es_samples} draws per row"
               if hasattr(db.metrics, "energy_score") else
               "energy score n/a: this library has no db.metrics.energy_score")
    sections.append("## Vector targets (`benchmarks/multivariate.py`)")
    sections.append(f"Vector targets on simulated data with a known truth (generators in the "
                    f"module docstring of `benchmarks/multivariate.py`; `{command}`). Held-out "
                    f"scores per row on {args.n_test:,} test rows, mean ± standard error over "
                    f"{args.seeds} seeds; {es_note}.")
    if "a" in args.parts:
        rows = []
        for n in args.sizes:
            for seed in range(args.seeds):
                rows += run_mvn(n, seed, args)
                print(f"(a) n_train={n} seed={seed} done", flush=True)
        df = out["mvn"] = pd.DataFrame(rows)
        lines = [f"- n_train {n:,}: MVN - independent normals, paired NLL difference "
                 f"{m:+.3f} ± {se:.3f} nats per row ({k} seeds): "
                 f"{'meets' if m <= -0.1 else 'misses'} the target (<= -0.1)."
                 for n, m, se, k in paired(df, "model", "multivariate_normal",
                                           "independent normals", "n_train")]
        if df["energy"].notna().all():
            lines += [f"- n_train {n:,}: MVN - independent normals, paired energy score "
                      f"difference {m:+.4f} ± {se:.4f} ({k} seeds)."
                      for n, m, se, k in paired(df, "model", "multivariate_normal",
                                                "independent normals", "n_train", "energy")]
        sections += ["**(a) Bivariate Normal, correlation rho(x) = tanh(2 x0).** Correlation "
                     "errors are mean absolute errors of the predicted correlation against the "
                     "true rho(x), overall and by bins of abs(rho).",
                     table_mvn(df), "\n".join(lines)]
    if "b" in args.parts:
        rows = []
        for n in args.sizes:
            for seed in range(args.seeds):
                rows += run_dirichlet(n, seed, args)
                print(f"(b) n_train={n} seed={seed} done", flush=True)
        df = out["dirichlet"] = pd.DataFrame(rows)
        lines = [f"- n_train {n:,}: Dirichlet - independent Betas, paired NLL difference "
                 f"{m:+.3f} ± {se:.3f} nats per row ({k} seeds)."
                 for n, m, se, k in paired(df, "model", "dirichlet",
                                           "independent betas (first 2 parts)", "n_train")]
        if df["energy"].notna().all():
            lines += [f"- n_train {n:,}: Dirichlet - independent Betas, paired energy score "
                      f"difference {m:+.4f} ± {se:.4f} ({k} seeds)."
                      for n, m, se, k in paired(df, "model", "dirichlet",
                                                "independent betas (first 2 parts)", "n_train",
                                                "energy")]
        sections += ["**(b) Dirichlet compositions, d = 3.** NLL of the first two parts (the "
                     "Betas' product is a density on the same space); energy score on all "
                     "three parts, the Betas' last part 1 minus the sum of their draws.",
                     table_plain(df, "n_train", "model"), "\n".join(lines)]
    if "c" in args.parts:
        rows = []
        for d in args.speed_dims:
            rows.append(speed(d, args))
            print(f"(c) d={d} done", flush=True)
        out["speed"] = pd.DataFrame(rows)
        sections += [f"**(c) Cost of the natural step.** Seconds per round on "
                     f"{args.speed_rows:,} rows, {args.speed_rounds} rounds, "
                     f"`early_stopping=False`, best of {args.speed_repeats} interleaved fits in "
                     f"one process; d normals: the d fits' seconds summed. The machine is "
                     f"shared: this process had {np.mean([r['cpu_share'] for r in rows]):.0%} "
                     f"of a core over these fits (CPU seconds / wall seconds), so compare the "
                     f"ratios, measured side by side, rather than the seconds.",
                     table_speed(rows)]
    if "d" in args.parts:
        rows = []
        for d in args.step_dims:
            for seed in range(args.seeds):
                rows += run_steps(d, seed, args)
                print(f"(d) d={d} seed={seed} done", flush=True)
        df = out["steps"] = pd.DataFrame(rows)
        lines = [f"- d = {d}: natural - fisher, paired NLL difference {m:+.4f} ± {se:.4f} "
                 f"nats per row ({k} seeds)."
                 for d, m, se, k in paired(df, "step", "natural", "fisher", "d")]
        sections += [f"**(d) Natural against fisher step**, generator of (a), "
                     f"{args.step_rows:,} training rows.",
                     table_plain(df, "d", "step"), "\n".join(lines)]
    if args.profile:
        print(profile(args.profile, args))
    if args.csv:
        for name, df in out.items():
            df.to_csv(f"{args.csv}_{name}.csv", index=False)
    section = "\n\n".join(sections)
    print(section)
    if args.out:
        write_section(Path(args.out), section)
    return out


if __name__ == "__main__":
    main()
