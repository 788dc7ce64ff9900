"""Which family fits? Cross-validated comparison of conditional models on real data.

On the UCI yacht data (positive resistance; ``../shared/data/uci``) when it is beside the
checkout, otherwise on scikit-learn's bundled diabetes data: compares families by 5-fold
cross-validated NLL, CRPS and 90% coverage of the full boosted model, and draws the comparison.

Run: ``.venv/bin/python examples/compare_families.py [--out DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import load_diabetes, load_uci  # noqa: E402

YACHT = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci" / "yacht"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output")
    args = parser.parse_args(argv)
    if YACHT.is_dir():
        X, y = load_uci(YACHT)
        name = "UCI yacht"
    else:
        X, y = load_diabetes()
        name = "diabetes"
    table = db.compare_families(X, y, families=["normal", "lognormal", "gamma", "weibull",
                                                "laplace", "studentt"],
                                cv=5, early_stopping=True, learning_rate=0.05, num_leaves=7,
                                min_child_samples=5)
    print(f"{name}: {len(y)} rows\n")
    print(table.drop(columns=["skipped"]).to_string(index=False, float_format="{:.3f}".format))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    db.plot.compare(table, "nll", ax=ax)
    ax.set_title(f"{name}: cross-validated NLL by family")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "compare_families.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"\nfigure written to {out / 'compare_families.png'}")
    return table


if __name__ == "__main__":
    main()
