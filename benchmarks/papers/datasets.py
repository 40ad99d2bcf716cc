"""Offline loaders and the papers' preprocessing for the benchmark datasets.

The data live in ``../shared/data`` relative to the project root (override with the
``data_dir`` argument or the environment variable ``SPECTRALKIT_DATA``). Nothing is ever
downloaded: a missing folder or file raises :class:`DataNotFoundError` naming the path.

Splits (docs/theory.md §8, GORF paper Table I):

========  =====  ==============================  =========================================
name      d      train / test                    source of the split
========  =====  ==============================  =========================================
letter    16     12000 / 6000                    seeded permutation of the 20000 rows
ijcnn1    22     49990 / 91701                   the LIBSVM files ``ijcnn1`` / ``ijcnn1.t``
usps      256    7291 / 2007                     the LIBSVM files ``usps`` / ``usps.t``
cod-rna   8      44651 / 14884 (75 % / 25 %)     seeded split (no test file available here)
housing   13     405 / 101                       seeded split (one per repetition)
========  =====  ==============================  =========================================

Preprocessing: every feature is min-max scaled to [0, 1] with the minimum and range of the
*training* set (the test set gets the same affine map, so it may leave [0, 1] slightly);
constant features map to 0. Kernels defined on the unit sphere additionally use
l2-normalised rows (:func:`l2_normalize`), as the papers' code does for every kernel.
"""

import bz2
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "DATASETS",
    "Dataset",
    "DataNotFoundError",
    "resolve_data_dir",
    "load",
    "minmax_scale",
    "l2_normalize",
]

#: Environment variable that overrides the default data folder.
ENV_VAR = "SPECTRALKIT_DATA"

_PROJECT_ROOT = Path(__file__).resolve().parents[2]
_DEFAULT_DIR = _PROJECT_ROOT.parent / "shared" / "data"

#: name -> (files, input dimension, task)
DATASETS = {
    "letter": (("letter-recognition.data",), 16, "classification"),
    "ijcnn1": (("ijcnn1.bz2", "ijcnn1.t.bz2"), 22, "classification"),
    "usps": (("usps.bz2", "usps.t.bz2"), 256, "classification"),
    "cod-rna": (("cod-rna.bz2",), 8, "classification"),
    "housing": (("housing.data",), 13, "regression"),
}


class DataNotFoundError(FileNotFoundError):
    """The data folder or one of its files is missing (nothing is downloaded)."""


@dataclass
class Dataset:
    """A train/test split after min-max scaling to [0, 1] (fitted on the training set).

    Attributes
    ----------
    name : str
    X_train, X_test : ndarray of float64, shape (n, d)
    y_train, y_test : ndarray (int labels for classification, float targets for regression)
    task : {"classification", "regression"}
    notes : list of str
        What was done to the raw data (split, scaling), for the report.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    task: str
    notes: list = field(default_factory=list)

    @property
    def dim(self):
        """Input dimension d."""
        return self.X_train.shape[1]


def resolve_data_dir(data_dir=None):
    """Return the data folder: ``data_dir``, else ``$SPECTRALKIT_DATA``, else ``../shared/data``.

    Raises
    ------
    DataNotFoundError
        If the folder does not exist (the message names it and how to set it).
    """
    if data_dir is None:
        data_dir = os.environ.get(ENV_VAR) or _DEFAULT_DIR
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise DataNotFoundError(
            f"data folder {str(path)!r} does not exist; pass --data-dir/data_dir= or set "
            f"{ENV_VAR} to the folder holding the benchmark files (nothing is downloaded)"
        )
    return path


def _file(folder, name):
    path = folder / name
    if not path.is_file():
        raise DataNotFoundError(
            f"data file {str(path)!r} is missing (expected in {str(folder)!r}; nothing is downloaded)"
        )
    return path


def minmax_scale(X_train, X_test):
    """Scale every column to [0, 1] with the training minimum and range.

    Constant training columns (range 0) are mapped to 0 in both sets.
    """
    lo = X_train.min(axis=0)
    span = X_train.max(axis=0) - lo
    safe = np.where(span > 0, span, 1.0)
    Xtr = np.where(span > 0, (X_train - lo) / safe, 0.0)
    Xte = np.where(span > 0, (X_test - lo) / safe, 0.0)
    return Xtr, Xte


def l2_normalize(X):
    """Rows divided by their Euclidean norm (points on the unit sphere S^(d-1)).

    Raises
    ------
    ValueError
        If a row is zero (it has no direction; the sphere kernels are undefined there).
    """
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1)
    if np.any(norms == 0):
        raise ValueError(
            f"X has {int(np.sum(norms == 0))} all-zero rows; they cannot be "
            "l2-normalised onto the unit sphere"
        )
    return X / norms[:, None]


def _read_libsvm(paths, n_features):
    from sklearn.datasets import load_svmlight_files

    opened = [bz2.open(p, "rb") for p in paths]
    try:
        parts = load_svmlight_files(opened, n_features=n_features, dtype=np.float64)
    finally:
        for f in opened:
            f.close()
    return [np.asarray(p.toarray()) if i % 2 == 0 else np.asarray(p) for i, p in enumerate(parts)]


def load(name, data_dir=None, seed=0):
    """Load a benchmark dataset with the papers' split and [0, 1] min-max scaling.

    Parameters
    ----------
    name : {"letter", "ijcnn1", "usps", "cod-rna", "housing"}
    data_dir : str or Path, optional
        Folder with the files (default: ``$SPECTRALKIT_DATA`` or ``../shared/data``).
    seed : int
        Seed of the random split (letter, cod-rna, housing); ignored for file splits.

    Returns
    -------
    Dataset
    """
    if name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}, got {name!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    folder = resolve_data_dir(data_dir)
    files, dim, task = DATASETS[name]
    paths = [_file(folder, f) for f in files]
    rng = np.random.default_rng(seed)
    notes = []
    if name == "letter":
        raw = np.loadtxt(paths[0], delimiter=",", dtype=str)
        y = np.array([ord(c) - ord("A") for c in raw[:, 0]])
        X = raw[:, 1:].astype(np.float64)
        perm = rng.permutation(len(y))
        tr, te = perm[:12000], perm[12000:18000]
        notes.append(f"seeded permutation (seed {seed}): 12000 train / 6000 test, 2000 rows unused")
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    elif name in ("ijcnn1", "usps"):
        Xtr, ytr, Xte, yte = _read_libsvm(paths, dim)
        ytr, yte = ytr.astype(int), yte.astype(int)
        notes.append("train/test: the LIBSVM files")
    elif name == "cod-rna":
        (X, y) = _read_libsvm(paths, dim)
        perm = rng.permutation(len(y))
        cut = int(round(0.75 * len(y)))
        tr, te = perm[:cut], perm[cut:]
        Xtr, ytr, Xte, yte = X[tr], y[tr].astype(int), X[te], y[te].astype(int)
        notes.append(f"no test file: seeded 75/25 split (seed {seed})")
    else:  # housing
        raw = np.loadtxt(paths[0])
        X, y = raw[:, :13], raw[:, 13]
        perm = rng.permutation(len(y))
        tr, te = perm[:405], perm[405:]
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
        notes.append(f"seeded split (seed {seed}): 405 train / 101 test")
    if Xtr.shape[1] != dim:
        raise ValueError(f"{name}: expected {dim} features, read {Xtr.shape[1]} from {paths[0]}")
    Xtr, Xte = minmax_scale(Xtr, Xte)
    notes.append("features min-max scaled to [0, 1] with the training minimum/range")
    return Dataset(name, Xtr, ytr, Xte, yte, task, notes)
