"""DistributionalClassifier against scikit-learn's HistGradientBoostingClassifier (and LightGBM).

Data: scikit-learn's bundled breast-cancer (569 rows, 2 classes) and digits (1,797 rows,
10 classes).  For each of ``--splits`` seeded stratified splits (25 % test rows), fit

* ``DistributionalClassifier(random_state=seed)``: distboost's defaults (100 rounds at
  learning rate 0.1, 31 leaves, 20 rows per leaf, L2 penalty 3 on the unit-mean curvature
  scale, early stopping with patience 10 on a stratified 10 % split of the training rows);
* ``HistGradientBoostingClassifier(early_stopping=True, random_state=seed)``: its defaults
  with early stopping turned on (the same 100 iterations, 0.1, 31 leaves, 20 rows per leaf,
  patience 10, 10 % stratified validation split; its "auto" would switch it off below
  10,000 rows);
* ``lightgbm.LGBMClassifier`` with the same settings (early stopping on a stratified 10 %
  split), the tree learner distboost delegates to, as a second reference;

and print the held-out log-loss and accuracy (means over splits), the ratio of mean
log-losses (ours / reference: below 1 is better) with the standard error of the per-split
paired difference (the split-to-split noise), and the mean fit seconds.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/classification.py [--splits 10]``
"""

from __future__ import annotations

import argparse
import time
import warnings

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from distboost.estimators.classifier import DistributionalClassifier

DATASETS = {"breast_cancer": load_breast_cancer, "digits": load_digits}


def _lightgbm(X, y, seed):
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.1, stratify=y,
                                                  random_state=seed)
    model = lgb.LGBMClassifier(n_estimators=100, learning_rate=0.1, num_leaves=31,
                               min_child_samples=20, random_state=seed, n_jobs=1, verbose=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LightGBM's eval_set deprecation notice
        model.fit(X_fit, y_fit, eval_set=[(X_val, y_val)],
                  callbacks=[lgb.early_stopping(10, verbose=False)])
    return model


def _models(seed):
    return {
        "distboost": lambda X, y: DistributionalClassifier(random_state=seed).fit(X, y),
        "hgb": lambda X, y: HistGradientBoostingClassifier(
            early_stopping=True, validation_fraction=0.1, random_state=seed).fit(X, y),
        "lightgbm": lambda X, y: _lightgbm(X, y, seed),
    }


def run(splits: int = 10) -> pd.DataFrame:
    """Per dataset, model and split: test log-loss, accuracy and fit seconds."""
    rows = []
    for name, loader in DATASETS.items():
        X, y = loader(return_X_y=True)
        for seed in range(splits):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, stratify=y,
                                                      random_state=seed)
            for model_name, fit in _models(seed).items():
                t0 = time.perf_counter()
                model = fit(X_tr, y_tr)
                seconds = time.perf_counter() - t0
                proba = model.predict_proba(X_te)
                rows.append({
                    "dataset": name, "model": model_name, "split": seed,
                    "log_loss": log_loss(y_te, proba, labels=model.classes_),
                    "accuracy": accuracy_score(y_te, model.classes_[proba.argmax(axis=1)]),
                    "fit_seconds": seconds,
                })
    return pd.DataFrame(rows)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--splits", type=int, default=20)
    args = parser.parse_args(argv)
    results = run(args.splits)
    table = results.groupby(["dataset", "model"])[["log_loss", "accuracy", "fit_seconds"]].mean()
    with pd.option_context("display.float_format", "{:.4f}".format):
        print(f"Held-out means over {args.splits} stratified splits (25 % test):")
        print(table.to_string())
    wide = results.pivot_table(index=["dataset", "split"], columns="model", values="log_loss")
    for name in DATASETS:
        t = table.loc[name]
        ours = t.loc["distboost", "log_loss"]
        for ref in ("hgb", "lightgbm"):
            diff = (wide.loc[name, "distboost"] - wide.loc[name, ref]).to_numpy()
            se = diff.std(ddof=1) / np.sqrt(diff.size)
            print(f"{name}: log-loss ratio distboost / {ref} = {ours / t.loc[ref, 'log_loss']:.3f}"
                  f" (difference {diff.mean():+.4f} +- {se:.4f} s.e.; fit seconds "
                  f"{t.loc['distboost', 'fit_seconds']:.2f} vs {t.loc[ref, 'fit_seconds']:.2f})")
    return results


if __name__ == "__main__":
    main()
