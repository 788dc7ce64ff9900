"""Command-line interface: ``distboost demo | fit | predict | compare | forecast`` (also
``python -m distboost``; ``forecast`` lives in :mod:`distboost.forecasting.cli`).

Errors a user can fix (a missing file or column, a target the family cannot fit) print one
line to stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .forecasting.cli import add_parser as add_forecast_parser

__all__ = ["main"]

# Settings for the demo's small dataset (442 rows): small trees, early stopping.
DEMO_PARAMS = dict(learning_rate=0.05, num_leaves=4, min_child_samples=10, n_estimators=300)


class UserError(Exception):
    """An input problem reported as one line, exit status 2."""


def _marginal_table(y: np.ndarray) -> pd.DataFrame:
    """Marginal MLE of every registered family whose support holds ``y``, best first.

    Returns
    -------
    DataFrame
        Columns ``family``, ``mean_loglik``, ``params``; ``attrs["not_applicable"]`` maps
        each other registered family to a short reason (a classification family, or its
        support).
    """
    import torch

    from . import families

    rows, skipped = [], {}
    for name in families.available():
        fam = families.get(name)
        if fam.classification:
            skipped[name] = "a classification family"
            continue
        if fam.multivariate:
            skipped[name] = "a vector target (y of shape (n, d))"
            continue
        if getattr(fam, "encode_target", None) is not None:
            skipped[name] = "ordered classes, read from y by an estimator's fit"
            continue
        try:
            fam.validate_y(y)
        except ValueError:
            skipped[name] = f"support {fam.support} does not hold y"
            continue
        if fam.point_mass is not None and not np.any(np.asarray(y) == fam.point_mass):
            # Its marginal MLE sits on the boundary (an empty point mass) and adds nothing
            # to the family without the atom.
            skipped[name] = f"no rows of y at its point mass {fam.point_mass:g}"
            continue
        try:
            params = fam.init(y)
        except ValueError:  # e.g. an all-zero y for a zero-adjusted family
            skipped[name] = "no marginal fit for this y"
            continue
        raw = torch.as_tensor(fam.raw_from_params(params)).reshape(1, -1).expand(len(y), -1)
        with torch.no_grad():
            loglik = -fam.nll(raw, torch.from_numpy(np.array(y))).mean().item()
        desc = ", ".join(f"{k}={v:.4g}" for k, v in params.items())
        rows.append({"family": name, "mean_loglik": loglik, "params": desc})
    table = pd.DataFrame(rows, columns=["family", "mean_loglik", "params"])
    table = table.sort_values("mean_loglik", ascending=False).reset_index(drop=True)
    table.attrs["not_applicable"] = skipped
    return table


def _not_applicable_line(skipped: dict[str, str]) -> str:
    """One line naming the families left out, grouped by reason."""
    groups: dict[str, list[str]] = {}
    for name, why in skipped.items():
        groups.setdefault(why, []).append(name)
    return "Not applicable: " + "; ".join(f"{', '.join(names)} ({why})"
                                          for why, names in groups.items()) + "."


def _fmt(df: pd.DataFrame) -> str:
    return df.to_string(index=False, float_format=lambda v: f"{v:.4f}")


def _markdown(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def demo(args) -> int:
    """Compare families, fit the best, score it and draw its diagnostics (offline)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.model_selection import train_test_split

    from . import metrics, plotting
    from .datasets import load_diabetes
    from .estimators import DistributionalRegressor
    from .selection import compare_families

    t_start = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_diabetes()
    print(f"Dataset: scikit-learn's diabetes data, {X.shape[0]} rows x {X.shape[1]} features; "
          "target: disease progression after one year (positive).\n")
    print("Marginal maximum-likelihood fit of every family (no features):")
    marginal = _marginal_table(y)
    print(_fmt(marginal))
    if marginal.attrs["not_applicable"]:
        print(_not_applicable_line(marginal.attrs["not_applicable"]))

    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    families = args.families.split(",")
    print(f"\nCross-validating boosted models of {len(families)} families (5 folds)...",
          flush=True)
    table = compare_families(X_tr, y_tr, families=families, cv=5, random_state=0,
                             early_stopping=True, progress=args.progress, **DEMO_PARAMS)
    _print_comparison(table)
    best = table.attrs["best"] or table.loc[0, "family"]  # the first sound fit
    ranked = table.attrs["ranked_by"].removesuffix("_mean")
    print(f"\nBest family by cross-validated {ranked.upper()}: {best}. Fitting it on all "
          "training rows...", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = DistributionalRegressor(family=best, early_stopping=True, random_state=0,
                                        **DEMO_PARAMS).fit(X_tr, y_tr)
    dist = model.predict_dist(X_te)
    scores = pd.DataFrame([{
        "family": best,
        "test_nll": metrics.mean_nll(dist, y_te),
        "test_crps": metrics.mean_crps(dist, y_te),
        "coverage_90": metrics.coverage(dist, y_te, 0.9),
        "calibration_error": metrics.calibration_error(dist, y_te),
        "rounds": model.best_iteration_,
    }])
    print("Held-out test set (25% of rows):")
    print(_fmt(scores))

    order = np.argsort(dist.median, kind="stable")  # test rows sorted by predicted median
    figures = {
        "intervals.png": lambda ax: plotting.intervals(dist[order], None, y_te[order], ax=ax),
        "pit.png": lambda ax: plotting.pit_histogram(dist, y_te, ax=ax),
        "calibration.png": lambda ax: plotting.calibration(dist, y_te, ax=ax),
        "comparison.png": lambda ax: plotting.compare(table, ranked, ax=ax),
    }
    for name, draw in figures.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        draw(ax)
        if name == "intervals.png":
            ax.set_xlabel("test patients, sorted by predicted median")
            ax.set_ylabel("disease progression")
        fig.savefig(out / name, dpi=110, bbox_inches="tight")
        plt.close(fig)
    report = [
        "# distboost demo report", "",
        f"Data: scikit-learn's diabetes data ({X.shape[0]} rows); 25% held out for testing.", "",
        "## Family comparison (5-fold cross-validation on the training rows)", "",
        _markdown(table.drop(columns=["skipped"])), "",
        f"## Best family: {best}, on the test set", "", _markdown(scores), "",
        "## Figures", "",
        "![intervals](intervals.png)", "![PIT](pit.png)", "![calibration](calibration.png)",
        "![comparison](comparison.png)", "",
    ]
    (out / "report.md").write_text("\n".join(report))
    print(f"\nWrote {', '.join(figures)} and report.md to {out}/ "
          f"({time.perf_counter() - t_start:.0f} s).")
    return 0


def _read_csv(path: str) -> pd.DataFrame:
    if not Path(path).is_file():
        raise UserError(f"No such file: {path}")
    return pd.read_csv(path)


def _targets(target: str) -> list[str]:
    """The column names of ``--target a`` or ``--target a,b`` (a vector target)."""
    return [t.strip() for t in target.split(",") if t.strip()]


def _not_features(df: pd.DataFrame, id_col: str | None, drop: list[str] | None) -> list[str]:
    """The columns ``--id`` and ``--drop`` keep out of the features (checked to exist)."""
    named = ([id_col] if id_col else []) + list(drop or [])
    for col, flag in [(id_col, "--id")] + [(c, "--drop") for c in drop or []]:
        if col is not None and col not in df.columns:
            raise UserError(f"Column {col!r} ({flag}) is not in the data; columns are "
                            f"{list(df.columns)}.")
    return named


def _feature_types(X: pd.DataFrame) -> pd.DataFrame:
    """Text columns as categories, except numbers with a few missing-value tokens ("?",
    "missing"; pandas reads "n/a", "NA", ... as NaN itself), which become numeric with NaN
    for the tokens; each such decision is printed as a note on stderr."""
    from ._validation import numeric_text

    for col in X.columns:
        if X[col].dtype == object or pd.api.types.is_string_dtype(X[col].dtype):
            values, message = numeric_text(X[col], col)
            if message:
                print(f"note: {message}", file=sys.stderr)
            if values is None and len(X) >= 20 and X[col].nunique() == len(X):
                print(f"note: column {col!r} has a different value on every row, as an "
                      "identifier has; keep it out of the features with --id or --drop.",
                      file=sys.stderr)
            X[col] = values if values is not None else X[col].astype("category")
    return X


def _split_target(df: pd.DataFrame, target: str, event: str | None,
                  id_col: str | None = None, drop: list[str] | None = None):
    """Features and target: y of shape (n,), (n, 2) censored bounds with ``--event``, or a
    DataFrame of the parts for ``--target a,b``; the ``--id`` and ``--drop`` columns are
    never features."""
    from .censored import right

    targets = _targets(target)
    if len(targets) > 1 and event:
        raise UserError(f"--event censors one target; got {len(targets)} targets {targets}.")
    for col in targets + ([event] if event else []):
        if col not in df.columns:
            raise UserError(f"Column {col!r} is not in the data; columns are {list(df.columns)}.")
    excluded = _not_features(df, id_col, drop)
    clash = sorted(set(excluded) & set(targets + ([event] if event else [])))
    if clash:
        raise UserError(f"Column(s) {clash} are both the target (or --event) and --id/--drop.")
    X = _feature_types(df.drop(columns=targets + ([event] if event else []) + excluded))
    if X.shape[1] == 0:
        raise UserError("No feature columns are left after --target, --event, --id and --drop.")
    if len(targets) > 1:
        return X, df[targets].astype(float)
    y = df[targets[0]].to_numpy(dtype=float, copy=True)  # writable (pandas 3: views are read-only)
    if event:
        y = right(y, df[event].to_numpy())
    return X, y


def fit(args) -> int:
    """Fit a model on a CSV file and save it."""
    from .estimators import DistributionalRegressor

    X, y = _split_target(_read_csv(args.data), args.target, args.event, args.id, args.drop)
    vector = np.ndim(y) == 2 and args.event is None
    family = args.family or ("multivariate_normal" if vector else "normal")
    if family == "auto":
        print("Choosing the family by cross-validated CRPS (family='auto')...", flush=True)
    elif args.event and not family.startswith("censored_"):
        family = f"censored_{family}"
    try:
        model = DistributionalRegressor(family=family, early_stopping=True, random_state=0,
                                        verbose=args.verbose,
                                        progress=args.progress).fit(X, y)
    except ValueError as err:
        raise UserError(str(err)) from err
    if family == "auto":
        table = model.family_table_
        _print_comparison(table)
        family = model.family_.name
        print(f"Chosen family: {family} ({table.attrs['rule']}).")
    model.save(args.out)
    print(f"Fitted {family} ({model.best_iteration_} rounds); saved to {args.out}")
    return 0


def _floats(text: str, option: str) -> list[float]:
    """A comma-separated list of numbers, or a UserError naming the option."""
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError as err:
        raise UserError(f"{option} takes comma-separated numbers; got {text!r}.") from err


def predict(args) -> int:
    """Predict the mean, sd, parameters and quantiles (and survival probabilities) for the
    rows of a CSV file."""
    from .persistence import load

    if not Path(args.model).is_file():
        raise UserError(f"No such file: {args.model}")
    try:
        model = load(args.model)
    except ValueError as err:
        raise UserError(str(err)) from err
    df = _read_csv(args.data)
    if args.id is not None and args.id not in df.columns:
        raise UserError(f"Column {args.id!r} (--id) is not in {args.data}; columns are "
                        f"{list(df.columns)}.")
    names = list(getattr(model, "feature_names_in_", []))
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise UserError(f"Column(s) {missing} used by the model are not in {args.data}.")
    X = df[names] if names else df.drop(columns=[args.id] if args.id else [])
    levels = _floats(args.quantiles, "--quantiles")
    dist = model.predict_dist(X)
    out = dist.to_frame(levels)
    if args.times and getattr(model.family_, "multivariate", False):
        raise UserError("--times gives survival probabilities of one target; this model "
                        f"predicts {model.family_.dim} parts.")
    if args.times:  # survival probabilities P(T > t) (of the latent time when censored)
        times = np.asarray(_floats(args.times, "--times"))
        survival = dist.sf(np.broadcast_to(times, (len(dist), times.size)))
        for t, col in zip(times, survival.T, strict=True):
            out[f"S({t:g})"] = col
    if args.id is not None:
        out.insert(0, args.id, df[args.id].to_numpy())
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"Wrote {len(out)} rows to {args.out}")
    else:
        print(out.to_csv(index=False), end="")
    return 0


def compare(args) -> int:
    """Cross-validated comparison of families on a CSV file."""
    from .selection import compare_families

    X, y = _split_target(_read_csv(args.data), args.target, args.event, args.id, args.drop)
    families = None
    if args.families:
        families = [f.strip() for f in args.families.split(",") if f.strip()]
        if args.event:
            families = [f if f.startswith("censored_") else f"censored_{f}" for f in families]
        from . import families as _families

        for f in families:
            try:
                _families.get(f)
            except ValueError as err:
                raise UserError(str(err)) from err
    what = "every candidate family" if families is None else f"{len(families)} families"
    print(f"Cross-validating {what} ({args.cv} folds)...", flush=True)
    vector = np.ndim(y) == 2 and args.event is None
    table = compare_families(X, y, families=families, cv=args.cv, early_stopping=True,
                             progress=args.progress, n_jobs=args.n_jobs,
                             multivariate=True if vector else None)
    _print_comparison(table, full_text_in=args.out)
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"Wrote the table with the full reasons to {args.out}")
    return 0


#: Width of the comparison's reasons on screen (the full text goes to ``--out``).
REASON_WIDTH = 72


def _short_reason(why: str) -> str:
    """A skip or degeneracy reason short enough for a terminal line."""
    import re

    m = re.search(r"(\d+) of (\d+) rows outside the support (.+?) of family", why)
    if m:
        return f"support {m[3]} does not hold y ({m[1]} of {m[2]} rows outside)"
    return textwrap.shorten(why, REASON_WIDTH, placeholder=" ...")


def _comparison_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The table as shown on a terminal: ``mean ± sd`` per metric, seconds, degenerate."""
    shown = table[["family", "kind"]].copy()
    metrics = [c.removesuffix("_mean") for c in table.columns if c.endswith("_mean")]
    for m in metrics:
        mean = table[f"{m}_mean"].to_numpy(dtype=float)
        sd = table.get(f"{m}_std", pd.Series(np.nan, index=table.index)).to_numpy(dtype=float)
        shown[m] = ["" if np.isnan(a) else f"{a:.4g}" if np.isnan(b) else f"{a:.4g} ± {b:.2g}"
                    for a, b in zip(mean, sd, strict=True)]
    if "fit_seconds" in table:
        shown["seconds"] = [f"{v:.2f}" if np.isfinite(v) else "" for v in table["fit_seconds"]]
    shown["degenerate"] = np.where(table["degenerate"] != "", "yes", "")
    return shown


def _print_comparison(table: pd.DataFrame, full_text_in: str | None = None) -> None:
    """The table of ``compare_families`` (narrow enough for a terminal), why it is ranked so
    and which families were left out (reasons shortened; the full text is in the table)."""
    print(_comparison_frame(table).to_string(index=False))
    shortened = False
    for column, title in [("degenerate", "Degenerate fits (ranked last, never chosen)"),
                          ("skipped", "Skipped")]:
        rows = table[table[column] != ""]
        if len(rows):
            print(f"{title}:")
            for name, why in zip(rows["family"], rows[column], strict=True):
                short = _short_reason(why)
                shortened |= short != why
                print(f"  {name}: {short}")
    if shortened and not full_text_in:
        print("(reasons shortened; --out FILE writes the table with the full text)")
    if table.attrs.get("note"):
        print(textwrap.fill(table.attrs["note"], 100))
    if table.attrs.get("excluded"):
        print(f"Not candidates (support does not hold y, or classification): "
              f"{', '.join(table.attrs['excluded'])}.")


def _progress_flag(p) -> None:
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bars (on by default, on stderr)")


def _feature_flags(p) -> None:
    p.add_argument("--id", default=None,
                   help="a row-identifier column: never a feature (give it to predict --id "
                        "to copy it to the predictions)")
    p.add_argument("--drop", nargs="+", default=None, metavar="COL",
                   help="columns that are not features (e.g. --drop date notes)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="distboost", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="offline demo on a bundled dataset")
    p.add_argument("--out", default="demo_output", help="folder for figures and report.md")
    p.add_argument("--families", default="normal,lognormal,gamma,weibull,negative_binomial",
                   help="comma-separated families to compare (default: %(default)s)")
    _progress_flag(p)
    p.set_defaults(func=demo)
    p = sub.add_parser("fit", help="fit a model on a CSV file")
    p.add_argument("data")
    p.add_argument("--target", required=True,
                   help="target column, or several comma-separated (a vector target)")
    p.add_argument("--family", default=None,
                   help="a family name, or 'auto' (default: normal; multivariate_normal for "
                        "several targets)")
    p.add_argument("--event", default=None, help="event column (1 = observed) for survival")
    p.add_argument("--out", required=True, help="model file to write")
    p.add_argument("--verbose", type=int, default=0,
                   help="print the losses every N rounds and why boosting stopped")
    _feature_flags(p)
    _progress_flag(p)
    p.set_defaults(func=fit)
    p = sub.add_parser("predict", help="predict from a saved model")
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--quantiles", default="0.05,0.5,0.95",
                   help="comma-separated quantile levels (default: %(default)s)")
    p.add_argument("--times", default=None,
                   help="comma-separated times t: adds the survival probabilities S(t) = "
                        "P(T > t), e.g. of a censored (survival) model")
    p.add_argument("--id", default=None,
                   help="a column of the data copied to the predictions (row identifiers)")
    p.add_argument("--out", default=None, help="CSV file to write (default: stdout)")
    _progress_flag(p)  # accepted for uniformity: predict draws no bar
    p.set_defaults(func=predict)
    p = sub.add_parser("compare", help="compare families by cross-validation")
    p.add_argument("data")
    p.add_argument("--target", required=True,
                   help="target column, or several comma-separated (a vector target)")
    p.add_argument("--event", default=None)
    p.add_argument("--cv", type=int, default=5, help="folds (default: %(default)s)")
    p.add_argument("--families", default=None,
                   help="comma-separated families to compare (default: every family whose "
                        "support holds the target)")
    p.add_argument("--out", default=None,
                   help="CSV file for the whole table, reasons in full")
    p.add_argument("--n-jobs", type=int, default=None, dest="n_jobs",
                   help="fit folds on this many processes (-1: every core)")
    _feature_flags(p)
    _progress_flag(p)
    p.set_defaults(func=compare)
    add_forecast_parser(sub, UserError)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"distboost {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
