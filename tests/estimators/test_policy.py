"""Tests of distboost.estimators.policy: the fit's rules stated once, the plan of a fit, and
the fits themselves unchanged by the move (issue 48)."""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from policy_cases import CASES, PREDICT_ROWS, REFERENCE, frame, predictions

import distboost as db
from distboost.estimators import policy
from distboost.estimators.location_start import LocationPlan
from distboost.estimators.policy import (
    RULES,
    THRESHOLDS,
    FitPlan,
    paired_standard_error,
    plan_fit,
    policy_markdown,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
START, END = "<!-- policy:start -->", "<!-- policy:end -->"


@pytest.mark.filterwarnings("ignore:.*kept 0 boosting rounds:UserWarning")
@pytest.mark.parametrize("case", list(CASES))
def test_fits_equal_those_of_the_code_before_the_policy_moved(case):
    """Predicted parameters equal to 1e-12 to those committed from the code before."""
    reference = json.loads(REFERENCE.read_text())[case]
    got = predictions(CASES[case](), frame(PREDICT_ROWS, seed=99)[0])
    assert got.keys() == reference.keys()
    for name, values in reference.items():
        np.testing.assert_allclose(got[name], values, rtol=1e-12, atol=1e-12, err_msg=name)


def _slug(text: str) -> str:
    """Python-Markdown's heading id (the toc extension's default slugify)."""
    text = unicodedata.normalize("NFKD", text)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_every_rule_links_to_a_heading_and_names_known_thresholds():
    for rule in RULES:
        page, anchor = rule.anchor.split("#")
        headings = [_slug(line.lstrip("#").strip())
                    for line in (DOCS / page).read_text().splitlines()
                    if line.startswith("#")]
        assert anchor in headings, (rule.option, rule.anchor)
        assert set(rule.constants) <= set(THRESHOLDS), rule.option
        for name in rule.constants:  # the text says what the constant decides
            assert name in rule.when + rule.what, (rule.option, name)


def test_every_threshold_is_defined_once_in_the_package():
    defined: dict[str, list[str]] = {}
    for path in (ROOT / "distboost").rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            for t in targets:
                if isinstance(t, ast.Name) and t.id in THRESHOLDS:
                    defined.setdefault(t.id, []).append(str(path.relative_to(ROOT)))
    assert defined.keys() == set(THRESHOLDS)
    for name, where in defined.items():
        home = ("distboost/boosting/threads.py" if name == "SINGLE_THREAD_ROWS"
                else "distboost/estimators/policy.py")
        assert where == [home], (name, where)


def test_the_docs_table_is_generated_from_the_rules():
    text = (DOCS / "engine.md").read_text()
    section = text[text.index(START) + len(START):text.index(END)].strip("\n")
    expected = policy_markdown(db.DistributionalRegressor()).strip("\n")
    assert section == expected, ("docs/engine.md's policy section is stale: run "
                                 "python tools/policy_table.py")


@pytest.mark.parametrize(("n", "mode", "cap", "linear"), [
    (30, "cv", 1000, "compared with the constant on the folds"),
    (300, "cv", 1000, "compared with the constant on the folds"),
    (1_050, "holdout_refit", 1000, "none"),  # the split's 945 rows are under CV_MAX_ROWS
    (3_000, "holdout_refit", 3000, "none"),
    (30_000, "holdout", 3000, "none"),
])
def test_the_plan_at_n_rows(n, mode, cap, linear):
    plan = plan_fit(db.DistributionalRegressor(), n, has_eval_set=False, step="natural",
                    location=None, threads=1)
    assert plan.validation == mode and plan.round_cap == cap and plan.linear_start == linear
    assert plan.training_rows == {"cv": n - -(-n // 5)}.get(mode, n - -(-n // 10))
    assert plan.tree_size == policy.auto_tree_size(plan.training_rows)
    assert plan.calibrate and plan.per_parameter_stopping and plan.fine_leaves
    with_eval = plan_fit(db.DistributionalRegressor(), n, has_eval_set=True, step="natural",
                         location=LocationPlan({}, "identity", 0, None, auto=True),
                         threads=None)
    assert with_eval.validation == "eval_set" and with_eval.training_rows == n
    assert with_eval.compare_location == (n < policy.AUTO_COMPARE_ROWS)
    off = plan_fit(db.DistributionalRegressor(early_stopping=False, n_estimators=7), n,
                   has_eval_set=False, step="fisher", location=None, threads=2)
    assert off.validation == "none" and off.round_cap == 7 and not off.calibrate
    assert not off.per_parameter_stopping and not off.fine_leaves


def test_a_fit_records_its_plan_prints_it_and_saves_it(tmp_path, capsys):
    X, y = frame(300)
    model = db.DistributionalRegressor(n_estimators=20, random_state=0, verbose=1).fit(X, y)
    plan = model.fit_plan_
    assert isinstance(plan, FitPlan) and plan.rows == 300 and plan.validation == "cv"
    assert plan.threads == 1 and plan.step == model.step_
    assert model.early_stopping_ == plan.validation
    out = capsys.readouterr().out
    assert plan.describe() in out
    assert "[CV_MAX_ROWS = 1,000]" in plan.describe()
    model.save(tmp_path / "m.json")
    assert db.load(tmp_path / "m.json").fit_plan_ == plan
    state = model._get_state()
    del state["fit_plan_"]  # a file saved before the plan existed
    old = db.DistributionalRegressor()
    old._set_state(state)
    assert old.fit_plan_ is None


def test_paired_standard_error_by_hand():
    rng = np.random.default_rng(0)
    d = rng.normal(size=40)
    assert paired_standard_error(d) == pytest.approx(np.std(d, ddof=1) / np.sqrt(40))
    w = rng.uniform(0.5, 2.0, size=40)
    p = w / w.sum()
    n_eff = 1 / np.sum(p ** 2)
    mean = p @ d
    expected = np.sqrt(p @ (d - mean) ** 2 / (n_eff - 1))
    assert paired_standard_error(d, w) == pytest.approx(expected)
    table = rng.normal(size=(5, 3))  # folds x candidates: one error per candidate
    np.testing.assert_allclose(paired_standard_error(table),
                               np.std(table, axis=0, ddof=1) / np.sqrt(5))
    assert paired_standard_error(np.array([1.0])) == 0.0  # at least 2 counted


def test_the_thread_count_is_decided_once_per_fit_and_recorded(monkeypatch):
    from distboost.boosting import threads

    calls = []
    monkeypatch.setattr(threads, "free_cores", lambda: calls.append(1) or 1.0)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12_000, 3))
    y = X[:, 0] + rng.normal(size=12_000)
    model = db.DistributionalRegressor(n_estimators=5, random_state=0).fit(X, y)
    assert len(calls) == 1  # the run queue is read once, before the first run
    assert model.fit_plan_.threads == 1 and model.fit_plan_.validation == "holdout"


def test_the_runs_take_the_tree_size_and_round_cap_from_the_plan(monkeypatch):
    """Once planned, no run resolves "auto" sizes or the round cap from its own rows (the
    folds grew trees sized for their rows and the refit for all rows, each computed again;
    issue 48)."""
    from distboost.estimators import options, tree_options

    def fail(n):
        raise AssertionError(f"a run resolved the 'auto' tree size for {n} rows itself")

    seen = []
    engine = options.OptionsMixin._engine_params

    def recording(self, step, n, seed, tree_options=None, auto_sizes=None, **overrides):
        params = engine(self, step, n, seed, tree_options, auto_sizes, **overrides)
        seen.append((n, auto_sizes, params.num_leaves, params.min_child_samples,
                     params.n_estimators))
        return params

    monkeypatch.setattr(options, "auto_tree_size", fail)
    monkeypatch.setattr(tree_options, "auto_tree_size", fail)
    monkeypatch.setattr(options.OptionsMixin, "_engine_params", recording)
    X, y = frame(300)
    model = db.DistributionalRegressor(
        random_state=0, param_options={"scale": {"num_leaves": "auto"}}).fit(X, y)
    plan = model.fit_plan_
    assert plan.tree_size == policy.auto_tree_size(240)  # a fold's 240 training rows
    assert plan.refit_tree_size == policy.auto_tree_size(300) != plan.tree_size
    folds, refit = seen[:-1], seen[-1]
    assert len(folds) >= 5 and all(s[1:4] == (plan.tree_size, *plan.tree_size)
                                   for s in folds)
    assert all(s[4] == plan.round_cap for s in folds)
    assert refit[:4] == (300, plan.refit_tree_size, *plan.refit_tree_size)
    assert (model.num_leaves_, model.min_child_samples_) == plan.refit_tree_size
    seen.clear()
    X, y = frame(3_000)
    model = db.DistributionalRegressor(random_state=0, n_estimators=30).fit(X, y)
    plan = model.fit_plan_
    assert plan.refit_tree_size == plan.tree_size == policy.auto_tree_size(2_700)
    assert {s[1] for s in seen} == {plan.tree_size}  # the split's runs and the refit
    assert seen[0][4] == plan.round_cap == 30
