"""Every documented command line runs, and docs/cli.md names every flag (issue 25 item 6).

The ``distboost ...`` lines of README.md and docs/*.md (```bash blocks and inline code) are all
parsed, and one line of each distinct (command, flags) combination is run in-process with
``main([...])`` on tiny CSV files named as in the docs. For speed the fits are cut to 2 rounds
without early stopping and ``compare_families`` is replaced by a recorder returning a fixed
table (its own tests cross-validate; the flags' values reaching it are checked here), that of
``fit --family auto`` by a table ranking the candidates it asks for in order (the choice from
a real comparison: tests/selection/test_auto.py).
``distboost demo`` is parsed here and run in the slow tier (tests/test_cli.py).
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost.estimators
import distboost.selection
import distboost.selection.auto
from distboost.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMANDS = ("demo", "fit", "predict", "compare")
CALLS: list[dict] = []  # the keyword arguments compare_families got


def documented_lines() -> list[tuple[str, list[str]]]:
    """``(page, argv)`` of every ``distboost <command> ...`` line of the docs: the lines of
    ```bash blocks and inline code spans (which may wrap), trailing comments dropped; a bare
    ``distboost predict`` in prose names the command and is not a command line."""
    out = []
    for page in PAGES:
        text = page.read_text()
        blocks = re.findall(r"^```bash\n(.*?)^```", text, flags=re.M | re.S)
        lines = [ln for b in blocks for ln in b.splitlines()]
        prose = re.sub(r"^```.*?^```|^#[^\n]*", "", text, flags=re.M | re.S)  # and headings
        lines += [" ".join(m.split()) for m in re.findall(r"`(distboost [^`]+)`", prose)]
        for line in lines:
            if not line.startswith("distboost ") or " / " in line:  # "demo / fit": names
                continue
            argv = shlex.split(line.split(" #")[0])
            if argv[1] in COMMANDS and (len(argv) > 2 or argv[1] == "demo"):
                out.append((page.name, argv[1:]))
    return out


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _flags(sub: argparse.ArgumentParser) -> set[str]:
    return {s for a in sub._actions for s in a.option_strings if s not in ("-h", "--help")}


def test_docs_cli_page_names_every_flag_of_every_command():
    text = (ROOT / "docs" / "cli.md").read_text()
    sections = dict(re.findall(r"^## `distboost (\w+)[^\n]*\n(.*?)(?=^## |\Z)", text,
                               flags=re.M | re.S))
    for command, sub in _subparsers().items():
        table = set(re.findall(r"^\| `(--[a-z-]+)", sections[command], flags=re.M))
        assert table == _flags(sub), (command, table ^ _flags(sub))
        # --no-progress works on every command (the README says so)
        required = {"fit": ["d.csv", "--target", "y", "--out", "m"], "predict": ["m", "d"],
                    "compare": ["d.csv", "--target", "y"],
                    "forecast": ["d.csv", "--time", "t", "--target", "y", "--horizon", "2",
                                 "--out", "f.csv"]}.get(command, [])
        assert build_parser().parse_args([command, *required, "--no-progress"]).progress is False


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    n = 40
    x = rng.normal(size=n)
    data = pd.DataFrame({
        "x": x, "g": rng.choice(["a", "b"], size=n),
        "y": np.exp(0.5 * x + 0.3 * rng.normal(size=n)),
        "patient_id": [f"p{i}" for i in range(n)], "id": np.arange(n),
        "notes": rng.choice(["ok", "check"], size=n), "visit_date": ["2024-01-01"] * n,
        "load1": x + rng.normal(size=n), "load2": -x + rng.normal(size=n)})
    data.to_csv(tmp_path / "data.csv", index=False)
    data.to_csv(tmp_path / "new.csv", index=False)
    time = np.round(365 * rng.weibull(1.5, size=n) * np.exp(0.3 * x) + 1)
    pd.DataFrame({"x": x, "pid": np.arange(n), "time": time,
                  "event": (rng.random(n) < 0.7).astype(int)}).to_csv(tmp_path / "gbsg2.csv",
                                                                    index=False)
    monkeypatch.chdir(tmp_path)
    real_fit = distboost.estimators.DistributionalRegressor

    def quick_model(**params):
        return real_fit(**{**params, "n_estimators": 2, "early_stopping": False})

    def recorded_compare(X, y, **kwargs):
        CALLS.append({"columns": list(X.columns), **kwargs})
        table = pd.DataFrame({"family": ["normal"], "kind": ["density"], "nll_mean": [1.0],
                              "nll_std": [0.1], "degenerate": [""], "skipped": [""]})
        table.attrs.update(ranked_by="nll_mean", excluded=[], best="normal")
        return table

    def ranked_candidates(X, y, families, **kwargs):  # family="auto"'s comparison
        n = len(families)
        table = pd.DataFrame({"family": families, "kind": ["density"] * n,
                              "crps_mean": np.linspace(1.0, 2.0, n), "crps_std": [0.01] * n,
                              "degenerate": [""] * n, "skipped": [""] * n})
        table.attrs.update(ranked_by="crps_mean", note="", excluded={}, best=families[0])
        return table

    CALLS.clear()
    monkeypatch.setattr(distboost.estimators, "DistributionalRegressor", quick_model)
    monkeypatch.setattr(distboost.selection, "compare_families", recorded_compare)
    monkeypatch.setattr(distboost.selection.auto, "compare_families", ranked_candidates)
    return tmp_path


def test_every_documented_command_line_runs(workdir, capsys):
    lines = documented_lines()
    commands = {argv[0] for _, argv in lines}
    assert commands == set(COMMANDS), commands
    flags = {f for _, argv in lines for f in argv if f.startswith("--")}
    assert {"--id", "--drop", "--no-progress", "--times", "--event", "--n-jobs"} <= flags
    for _, argv in lines:
        build_parser().parse_args(argv)  # every line parses (demo runs in the slow tier)
    # Run the lines that exercise something not run yet (a flag of the command, or a vector
    # target); vector-target fits first, so that the last fit of model.json is the scalar one
    # the predict lines expect.
    order = {"compare": 0, "fit": 1, "predict": 2}

    def features(argv):
        target = argv[argv.index("--target") + 1] if "--target" in argv else ""
        return {(argv[0], f) for f in argv if f.startswith("--")} | (
            {(argv[0], "vector")} if "," in target else set())

    done: set = set()
    for argv in sorted((a for _, a in lines if a[0] != "demo"),
                       key=lambda a: (order[a[0]], (a[0], "vector") not in features(a))):
        if features(argv) - done:
            done |= features(argv)
            assert main(argv) == 0, (argv, capsys.readouterr().err)
    preds = pd.read_csv(workdir / "preds.csv")
    assert list(preds.columns[:1]) == ["patient_id"] and len(preds) == 40
    assert {"S(365)", "S(730)"} <= set(pd.read_csv(workdir / "surv.csv").columns)
    assert pd.read_csv(workdir / "table.csv")["family"].tolist() == ["normal"]
    # The flags' values reached compare_families; --id and --drop columns are not features.
    seen = {(c["cv"], tuple(c.get("families") or ()), c.get("n_jobs"), c["progress"])
            for c in CALLS}
    assert (3, ("normal", "gamma"), None, True) in seen
    assert (5, (), 1, False) in seen  # compare gbsg2.csv ... --n-jobs 1 --no-progress
    assert all("patient_id" not in c["columns"] for c in CALLS if c["cv"] == 3)
    assert all("pid" not in c["columns"] for c in CALLS if c.get("n_jobs") == 1)


def test_fit_keeps_id_and_dropped_columns_out_of_the_features(workdir, capsys):
    import distboost as db

    assert main(["fit", "data.csv", "--target", "y", "--id", "patient_id", "--drop", "notes",
                 "visit_date", "load1", "load2", "id", "--out", "m.json", "--no-progress"]) == 0
    assert list(db.load("m.json").feature_names_in_) == ["x", "g"]
    capsys.readouterr()
    assert main(["predict", "m.json", "new.csv", "--id", "patient_id", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("patient_id,mean,sd,")
    # Without --id, a text column with a different value on every row gets a note.
    assert main(["fit", "data.csv", "--target", "y", "--out", "m2.json"]) == 0
    assert "column 'patient_id' has a different value on every row" in capsys.readouterr().err
    assert main(["fit", "data.csv", "--target", "y", "--drop", "nope", "--out", "m.json"]) == 2
    assert ("Column 'nope' (--drop) is not in the data; columns are ['x', 'g', 'y', "
            in capsys.readouterr().err)
    assert main(["compare", "data.csv", "--target", "y", "--id", "y"]) == 2
    assert "Column(s) ['y'] are both the target (or --event) and --id/--drop." in (
        capsys.readouterr().err)
    assert main(["fit", "gbsg2.csv", "--target", "time", "--event", "event", "--drop", "x",
                 "pid", "--out", "m.json"]) == 2
    assert "No feature columns are left after --target, --event, --id and --drop." in (
        capsys.readouterr().err)


def test_cli_reads_a_numeric_column_with_a_token_as_numbers(workdir, capsys):
    import distboost as db

    data = pd.read_csv("data.csv")
    data["x"] = data["x"].round(3).astype(str)
    data.loc[5, "x"] = "?"
    data[["x", "g", "y"]].to_csv("tokens.csv", index=False)
    assert main(["fit", "tokens.csv", "--target", "y", "--out", "t.json"]) == 0
    assert ("note: Column 'x' of X is text holding numbers in 39 of 40 rows and the non-numeric "
            "value(s) '?' in 1 row, read as missing (NaN)") in capsys.readouterr().err
    model = db.load("t.json")
    # numeric in fit: numbers at predict time are accepted (a categorical 'x' refuses them)
    assert np.isfinite(model.predict(pd.DataFrame({"x": [0.5, np.nan], "g": ["a", "b"]}))).all()
