"""A small torch network whose last-layer weights are boosted per input, on 8x8 digits.

scikit-learn's bundled digits (offline), classes 0 and 1, 30% held out.  A tiny network maps
an image to ``h(x)`` in R^m (one 3x3 convolution, max-pooling, a linear layer, tanh); instead
of fixed last-layer weights, the coefficients ``w(x)`` in R^m and the bias ``b(x)`` are
gradient-boosted trees on the 64 pixels:

    logit(x) = w(x) . h(x) + b(x),        loss = binary cross-entropy.

``Booster`` grows the ``K = m + 1`` ensembles from autograd derivatives of that loss with the
network output held fixed (``data["h"]``); after each round a ``callback`` takes a few Adam
steps on the network weights with the trees' raw scores held fixed, then writes the new
``h(x)`` into ``data["h"]`` in place.  Trees and network thus train together, round by round.

Prints held-out accuracy and log-loss (and, for comparison, those of the same trees on top of
the network frozen at its random start); saves an image of the pixels the trees split on (total
split gain per pixel, summed over the ``K`` ensembles) beside the mean 0 and mean 1.

Run: ``.venv/bin/python examples/digits_hybrid.py [--out DIR]`` (default: a new temp dir).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from matplotlib.colors import PowerNorm  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.metrics import log_loss  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from distboost.estimators.booster import Booster  # noqa: E402

M = 2  # width of h(x), as in the write-up's penultimate layer


class TinyNet(torch.nn.Module):
    """Image (1, 8, 8) -> h(x) in (-1, 1)^M."""

    def __init__(self, m: int = M):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.fc = torch.nn.Linear(4 * 4 * 4, m)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        z = F.max_pool2d(torch.relu(self.conv(images)), 2)
        return torch.tanh(self.fc(z.flatten(1)))


def hybrid_loss(raw: torch.Tensor, data: dict) -> torch.Tensor:
    """Per-row BCE of ``logit = w . h + b`` with ``raw = [w_1..w_M, b]``, shape (n, M + 1)."""
    logit = (raw[:, :M] * data["h"]).sum(dim=1) + raw[:, M]
    return F.binary_cross_entropy_with_logits(logit, data["y"], reduction="none")


def fit_hybrid(X_tr, y_tr, X_te, rounds: int, adam_steps: int, seed: int = 0):
    """Fit trees and network together; ``adam_steps=0`` keeps the network at its random
    initialisation (trees only on top of fixed random features).

    Returns
    -------
    model : Booster
    proba : ndarray of shape (n_test,)
        Held-out probability of a 1.
    """
    images_tr = torch.as_tensor(X_tr.reshape(-1, 1, 8, 8))
    images_te = torch.as_tensor(X_te.reshape(-1, 1, 8, 8))
    y_tr_t = torch.as_tensor(y_tr)
    torch.manual_seed(seed)
    net = TinyNet().double()
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    with torch.no_grad():
        data = {"y": y_tr_t, "h": net(images_tr)}

    def callback(round_: int, raw: np.ndarray) -> None:
        raw_t = torch.as_tensor(raw)  # the trees' w(x), b(x), held fixed
        for _ in range(adam_steps):
            opt.zero_grad()
            hybrid_loss(raw_t, {"y": y_tr_t, "h": net(images_tr)}).mean().backward()
            opt.step()
        with torch.no_grad():
            data["h"].copy_(net(images_tr))  # the next round's trees see the new h(x)

    # Gradient steps: on separable classes the Newton step of the logistic loss stays of
    # order one as p -> y (grad / hess ~ 1 / h), so logits grow without bound and a rare
    # mistake becomes a confident one; the gradient step shrinks with p - y.
    model = Booster(hybrid_loss, n_outputs=M + 1, step="gradient", n_estimators=rounds,
                    learning_rate=0.5, num_leaves=4, min_child_samples=10,
                    callback=callback if adam_steps > 0 else None, random_state=seed)
    model.fit(X_tr, data)
    with torch.no_grad():
        raw_te = torch.as_tensor(model.predict_raw(X_te))
        logit = (raw_te[:, :M] * net(images_te)).sum(dim=1) + raw_te[:, M]
    return model, torch.sigmoid(logit).numpy()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=None, help="folder for the figure (default: temp dir)")
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds")
    parser.add_argument("--adam-steps", type=int, default=2, help="network steps per round")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="digits_hybrid_"))

    digits = load_digits()
    keep = digits.target <= 1
    X = digits.data[keep] / 16.0  # 64 pixels in [0, 1]
    y = digits.target[keep].astype(np.float64)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)

    result = {"n_train": len(y_tr), "n_test": len(y_te)}
    print(f"digits 0 vs 1: {len(y_tr)} training and {len(y_te)} held-out images")
    for name, steps in (("frozen_network", 0), ("hybrid", args.adam_steps)):
        model, proba = fit_hybrid(X_tr, y_tr, X_te, args.rounds, steps)
        acc = float(np.mean((proba > 0.5) == y_te))
        ll = float(log_loss(y_te, proba, labels=[0, 1]))
        prefix = "" if name == "hybrid" else "frozen_network_"
        result[prefix + "accuracy"], result[prefix + "log_loss"] = acc, ll
        label = (f"network trained ({steps} Adam steps per round)" if name == "hybrid"
                 else "network frozen at its random start")
        print(f"{label:>40}: held-out accuracy {acc:.4f}, log-loss {ll:.4f}")

    train = model.evals_result_["train"]["loss"]  # the hybrid fit (last in the loop)
    print(f"hybrid training loss {train[0]:.4f} (round 1) -> {train[-1]:.4f} "
          f"(round {model.n_iter_})")

    gain = model.feature_importances_.sum(axis=0).reshape(8, 8)
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.6))
    for ax, digit in zip(axes[:2], (0, 1), strict=True):
        ax.imshow(X[y == digit].mean(axis=0).reshape(8, 8), cmap="gray_r")
        ax.set_title(f"mean image of a {digit}")
    # One central pixel (ink in a 1, a hole in a 0) carries most of the gain: a power-law
    # colour scale shows the other pixels the trees use as well.
    im = axes[2].imshow(gain / gain.sum(), cmap="Greens", norm=PowerNorm(gamma=0.4))
    axes[2].set_title("split gain per pixel\n(share; all K ensembles)")
    fig.colorbar(im, ax=axes[2], fraction=0.046, pad=0.04)
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"Network + boosted last layer: held-out accuracy {result['accuracy']:.3f}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "digits_hybrid_importance.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    result["figure"] = str(path)
    result["top_pixel_gain_share"] = float(gain.max() / gain.sum())
    print(f"figure written to {path}")
    return result


if __name__ == "__main__":
    main()
