"""Kernel learning in a hyper-RKHS (``003_a4860e3065a00f8a.txt``): Tables 1-3 on the offline data.

* **Table 2** (the ideal kernel): a seeded 40/60 train/test split per trial (10 trials), the kernel
  learned from the ideal kernel of the training labels, then an SVM (``SVC`` on the learned Gram
  matrix, C from 2^-5 .. 2^5 by 5-fold CV on the training set); test accuracy. Beside it the
  paper's SVM-CV baseline: an RBF SVM with sigma in 2^-5 .. 2^5 (gamma = 1 / (2 sigma^2)) and C in
  2^-5 .. 2^5 by 5-fold CV.
* **Table 1** (known kernels, out-of-sample extension): 40 % labelled / 40 % unlabelled / 20 %
  test; the kernel is learned from a known kernel's matrix on the labelled + unlabelled points
  (a Gaussian exp(-gamma r^2) with scikit-learn's gamma = "scale" = 1 / (d Var X) -- the paper
  does not state its width -- and the log kernel -log(1 + r), sigma = 1), the SVM is trained on
  the labelled points and evaluated on the unlabelled and the test points; RMSE of the learned
  kernel (plus the SVR intercept) against the known kernel on the test x test pairs. The known
  kernel itself is the reference row.
* **Table 3** (ijcnn1, 49,990 / 91,701 points, d = 22): divide-and-conquer with Nystrom on each
  subset (v in {5, 10, 20}) and the radial hyper-kernel on all 1.25e9 pairs; the SVM on the
  learned kernel is trained on a seeded subsample (the paper does not say how it trained an SVM
  on 50k points with a learned kernel). The test set is 90.5 % class -1: the majority vote
  scores 90.5 %.

Every method gets the same CV budget: the scale (s_h^2 for the Gaussian hyper-kernel, s^2 for
Wishart and radial) over ``SCALE_GRIDS`` x default and lambda / C over ``ALPHAS`` / ``CS`` by
CV on held-out pairs (:class:`spectralkit.learn.HyperKernelRidge` ``cv``): 5 folds for Table 2,
3 folds for Table 1 (80 % of the points are training pairs there: 2.4x cheaper). Data: the
KEEL copies of the UCI sets in ``../shared/data``, every column min-max scaled to [0, 1] on the
whole set ("normalised to [0, 1]^d in advance", as the paper); for australian this per-column
scaling also undoes the KEEL file's dropped decimal points (columns in other units).

Running: every trial of a dataset (Tables 1-2) and the whole of Table 3 is one task with its own
seeded streams (:func:`learning_tasks`, :func:`run_task`), so ``--jobs`` processes give the same
numbers as one; finished tasks are checkpointed and ``--resume`` skips them after an interruption.
Ctrl-C, SIGTERM or a failed task terminate the worker processes at once (the running tasks are
lost, the checkpointed ones are not).
"""

import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from fractions import Fraction
from pathlib import Path

import numpy as np

from . import datasets as D
from .protocol import task_rng

__all__ = [
    "KEEL",
    "LEARNERS",
    "PUBLISHED_T1",
    "PUBLISHED_T2",
    "PUBLISHED_T3",
    "UNAVAILABLE",
    "collect_ideal",
    "collect_known",
    "findings",
    "ideal_kernel_experiment",
    "ideal_kernel_trial",
    "known_kernel_experiment",
    "known_kernel_trial",
    "large_scale_experiment",
    "learning_plan",
    "learning_tasks",
    "load_keel",
    "report_section",
    "run_learning",
    "run_task",
    "task_key",
    "total_variance",
]

#: dataset -> file (the four datasets of Tables 1-2 available offline)
KEEL = {
    "australian": "keel-australian.dat",
    "wine": "keel-wine.dat",
    "sonar": "keel-sonar.dat",
    "heart": "keel-heart.dat",
}
#: the paper's other datasets, not available offline
UNAVAILABLE = ("fertility", "guide1-t", "covtype", "MNIST")
#: hyper-parameter candidates searched by cross-validation (the paper: log grid 1e-5 .. 1e5)
ALPHAS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
CS = (1e2, 1e3, 1e4, 1e5)
SVM_CS = tuple(2.0 ** np.arange(-5, 6))
SIGMAS = tuple(2.0 ** np.arange(-5, 6))
N_LANDMARKS = 30
#: Table 1 trains on 80 % of the points (australian: 152,076 distinct pairs) and fits 4 learners x 2 kernels:
#: 20 landmark points (210 pairs, a fifth of the Nystrom cost of 30) keep it within hours on the shared box
N_LANDMARKS_T1 = 20

#: method key -> (loss, hyper-kernel, label)
LEARNERS = {
    "krr_gaussian": ("ridge", "gaussian", "hyper-KRR (Gaussian)"),
    "svr_gaussian": ("svr", "gaussian", "hyper-SVR (Gaussian)"),
    "krr_wishart": ("ridge", "wishart", "hyper-KRR (Wishart)"),
    "svr_wishart": ("svr", "wishart", "hyper-SVR (Wishart)"),
    "krr_radial": ("ridge", "radial", "hyper-KRR (radial, ours)"),
    "svr_radial": ("svr", "radial", "hyper-SVR (radial, ours)"),
}

_COLS = ("australian", "wine", "sonar", "heart")


def _row(*cells):
    return dict(zip(_COLS, cells))


#: Table 2 of the paper (test accuracy %, mean, std over 10 trials), the four available columns
PUBLISHED_T2 = {
    "KTA": _row((82.52, 1.55), (96.20, 2.22), (80.41, 2.88), (83.24, 1.62)),
    "BMKL": _row((84.61, 1.56), (95.48, 2.21), (81.68, 2.93), (84.46, 1.88)),
    "RF": _row((82.17, 2.02), (94.88, 2.94), (80.52, 3.58), (82.46, 2.12)),
    "MIKL": _row((86.45, 0.98), (94.78, 2.02), (77.72, 5.57), (82.90, 2.21)),
    "svm_cv": _row((85.14, 0.84), (95.14, 2.32), (80.40, 4.48), (80.43, 3.35)),
    "krr_gaussian": _row((82.82, 4.80), (92.53, 4.83), (77.67, 5.07), (81.11, 3.12)),
    "svr_gaussian": _row((85.68, 3.56), (97.32, 1.82), (82.32, 3.34), (82.65, 2.35)),
    "krr_wishart": _row((81.21, 2.84), (94.83, 2.77), (78.45, 2.24), (80.15, 2.71)),
    "svr_wishart": _row((84.23, 2.27), (96.65, 2.35), (81.13, 2.94), (81.43, 2.52)),
}


def _t1(unlabel, test, rmse=None):
    """{dataset: {"unlabel": (m, s), "test": (m, s)[, "rmse": v]}} over the four available columns."""
    out = {}
    for k, col in enumerate(_COLS):
        out[col] = {"unlabel": unlabel[k], "test": test[k]}
        if rmse is not None:
            out[col]["rmse"] = rmse[k]
    return out


#: Table 1 of the paper: kernel -> method -> dataset -> {"unlabel": (m, s), "test": (m, s), "rmse": v}.
#: The source text lost one cell of the known log kernel's "unlabel" row (five values for six
#: columns); it is read as the first five columns (guide1-t missing).
PUBLISHED_T1 = {
    "gaussian": {
        "known": _t1(
            ((83.92, 1.90), (96.68, 1.93), (75.34, 3.07), (78.63, 4.52)),
            ((82.64, 2.23), (98.02, 1.81), (72.14, 1.38), (80.91, 4.89)),
        ),
        "pan2017": _t1(
            ((81.56, 3.78), (96.89, 1.41), (73.78, 5.67), (81.45, 3.56)),
            ((82.64, 3.60), (96.33, 2.67), (73.83, 8.02), (79.04, 5.11)),
            (0.088, 0.123, 0.165, 0.128),
        ),
        "krr_gaussian": _t1(
            ((81.52, 4.01), (97.33, 1.45), (77.12, 4.21), (80.14, 5.02)),
            ((83.63, 4.20), (96.62, 3.41), (67.82, 8.20), (82.73, 5.22)),
            (0.138, 0.062, 0.085, 0.095),
        ),
        "svr_gaussian": _t1(
            ((82.24, 3.70), (97.13, 1.20), (73.24, 6.13), (81.30, 3.62)),
            ((82.61, 3.93), (98.04, 2.22), (75.54, 6.42), (80.12, 3.20)),
            (0.108, 0.089, 0.143, 0.120),
        ),
    },
    "log": {
        "known": _t1(
            ((84.04, 1.93), (98.04, 1.32), (74.44, 7.32), (80.51, 1.42)),
            ((83.90, 1.92), (96.12, 2.62), (78.33, 6.82), (81.44, 6.50)),
        ),
        "krr_gaussian": _t1(
            ((73.84, 1.92), (97.31, 1.33), (72.34, 5.32), (81.02, 2.21)),
            ((76.64, 5.14), (60.13, 8.08), (65.84, 9.56), (77.63, 7.02)),
            (0.717, 0.748, 0.697, 0.435),
        ),
        "svr_gaussian": _t1(
            ((84.12, 1.73), (97.02, 1.91), (72.72, 4.67), (81.74, 3.12)),
            ((83.42, 3.80), (95.53, 5.12), (66.74, 6.32), (80.93, 4.70)),
            (0.474, 0.138, 0.174, 0.196),
        ),
    },
}

#: Table 3 of the paper, ijcnn1: v -> method -> (accuracy %, seconds)
PUBLISHED_T3 = {
    5: {
        "pan2017": (90.49, 1354.2),
        "krr_gaussian": (90.72, 1375.2),
        "svr_gaussian": (90.22, 1322.4),
        "distributed BMKL": (97.35, 230576.0),
    },
    10: {
        "pan2017": (89.72, 835.8),
        "krr_gaussian": (89.71, 846.8),
        "svr_gaussian": (89.37, 1156.1),
        "distributed BMKL": (97.36, 12020.0),
    },
    20: {
        "pan2017": (90.49, 743.5),
        "krr_gaussian": (90.94, 752.1),
        "svr_gaussian": (90.97, 1035.9),
        "distributed BMKL": (97.34, 5844.8),
    },
}


def load_keel(name, data_dir=None):
    """(X in [0, 1]^d, labels, notes) of a KEEL dataset; every column min-max scaled on the whole set."""
    if name not in KEEL:
        raise ValueError(f"name must be one of {sorted(KEEL)}, got {name!r}")
    folder = D.resolve_data_dir(data_dir)
    path = Path(folder) / KEEL[name]
    if not path.is_file():
        raise D.DataNotFoundError(f"data file {str(path)!r} is missing (nothing is downloaded)")
    rows = [[c.strip() for c in line.split(",")] for line in path.read_text().splitlines() if line.strip()]
    X = np.array([[float(c) for c in r[:-1]] for r in rows])
    y = np.array([r[-1] for r in rows])
    Xs, _ = D.minmax_scale(X, X)
    notes = [
        f"{path.name}: {X.shape[0]} x {X.shape[1]}, classes {dict(zip(*np.unique(y, return_counts=True)))}",
        "every column min-max scaled to [0, 1] on the whole set",
    ]
    if name == "australian":
        notes.append(
            "the KEEL file dropped the decimal points of some continuous columns: per-column scaling "
            "makes the columns comparable again"
        )
    return Xs, y, notes


def total_variance(X):
    """(1/m) sum_i ||x_i - mean||^2: the paper's "variance of data", the s^2 of every learner here.

    The library's default s^2 of the Gaussian and Wishart learners is chosen from the data and the
    target (a multiple of this); the tables follow the paper's protocol and pass it explicitly.
    """
    X = np.asarray(X, dtype=np.float64)
    return float(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))


def _scale_grids():
    from spectralkit.learn import SCALE_GRIDS

    return SCALE_GRIDS


def _learner(key, seed, X, cv=5, n_landmarks=N_LANDMARKS):
    from spectralkit.learn import HyperKernelRidge, HyperKernelSVR

    loss, kind, _ = LEARNERS[key]
    common = {
        "cv": cv,
        "n_landmarks": n_landmarks,
        "n_partitions": 1,
        "random_state": seed,
        "sigma2": total_variance(X),
    }
    if loss == "ridge":
        return HyperKernelRidge(kind, alpha=list(ALPHAS), **common)
    return HyperKernelSVR(kind, C=list(CS), epsilon=0.1, **common)


def _svm_on_gram(K_train, y_train, seed):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    return GridSearchCV(SVC(kernel="precomputed"), {"C": list(SVM_CS)}, cv=cv).fit(K_train, y_train)


def _kernel_facts(est, K_train):
    """Indefiniteness of the learned Gram matrix and, for the radial kernel, its Jordan masses."""
    ev = np.linalg.eigvalsh(0.5 * (K_train + K_train.T))
    out = {
        "neg_eig_fraction": float(np.sum(np.abs(ev[ev < 0])) / np.sum(np.abs(ev))),
        "min_eig": float(ev.min()),
        "max_eig": float(ev.max()),
    }
    if est.hyper_kernel == "radial":
        mp, mm = est.kernel_.masses()
        out.update(
            mass_plus=mp.to_dict(),
            mass_minus=mm.to_dict(),
            k0=est.kernel_.value_at_zero(),
            binning_error=float(est.binning_error_),
        )
    return out


def _chosen(est):
    out = {"scale_multiplier": float(est.cv_results_["scale_multiplier"][np.argmin(est.cv_results_["mse"])])}
    out["alpha" if hasattr(est, "alpha_") else "C"] = float(
        getattr(est, "alpha_", getattr(est, "C_", np.nan))
    )
    return out


def _summary(values):
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def _append_trials(recs, trials_out):
    """Append every trial's output {method: {key: value}} to the per-method lists of ``recs``."""
    for out in trials_out:
        for m, r in recs.items():
            for key, v in out[m].items():
                r[key].append(v)


def ideal_kernel_trial(name, methods, t, seed=0, data_dir=None, progress=None, baseline=True):
    """Trial ``t`` of Table 2 on one dataset: {method: {accuracy, fit_seconds, svm_seconds, chosen, kernel}}
    (with ``baseline``, also the RBF SVM tuned by CV, "svm_cv")."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    X, y, _ = load_keel(name, data_dir)
    n = X.shape[0]
    n_train = round(0.4 * n)
    perm = task_rng(seed, "learning-split", name, t).permutation(n)
    tr, te = perm[:n_train], perm[n_train:]
    out = {}
    for m in methods:
        est = _learner(m, int(task_rng(seed, "learning", name, m, t).integers(2**31 - 1)), X[tr])
        t0 = time.perf_counter()
        est.fit(X[tr], y[tr])
        t1 = time.perf_counter()
        Ktr, Kte = est.transform(X[tr]), est.transform(X[te])
        svm = _svm_on_gram(Ktr, y[tr], seed + t)
        out[m] = {
            "accuracy": float(np.mean(svm.predict(Kte) == y[te])),
            "fit_seconds": t1 - t0,
            "svm_seconds": time.perf_counter() - t1,
            "chosen": dict(_chosen(est), svm_C=float(svm.best_params_["C"])),
            "kernel": _kernel_facts(est, Ktr),
        }
        if progress:
            progress()
    if not baseline:
        return out
    t0 = time.perf_counter()
    cv = StratifiedKFold(5, shuffle=True, random_state=seed + t)
    gs = GridSearchCV(
        SVC(kernel="rbf"), {"C": list(SVM_CS), "gamma": [1 / (2 * s * s) for s in SIGMAS]}, cv=cv
    ).fit(X[tr], y[tr])
    out["svm_cv"] = {
        "accuracy": float(np.mean(gs.predict(X[te]) == y[te])),
        "fit_seconds": time.perf_counter() - t0,
        "chosen": {k: float(v) for k, v in gs.best_params_.items()},
    }
    if progress:
        progress()
    return out


def collect_ideal(name, methods, trials_out, data_dir=None, baseline=True):
    """Table 2 records of one dataset from its trials' outputs (in trial order)."""
    X, _, notes = load_keel(name, data_dir)
    n = X.shape[0]
    n_train = round(0.4 * n)
    recs = {
        m: {
            "dataset": name,
            "method": m,
            "accuracy": [],
            "fit_seconds": [],
            "svm_seconds": [],
            "chosen": [],
            "kernel": [],
            "n_train": n_train,
            "n_test": n - n_train,
            "notes": notes,
        }
        for m in (*methods, *(("svm_cv",) if baseline else ()))
    }
    _append_trials(recs, trials_out)
    for r in recs.values():
        r["mean"], r["std"] = _summary(r["accuracy"])
    return list(recs.values())


def ideal_kernel_experiment(name, methods, trials, seed=0, data_dir=None, progress=None):
    """Table 2 on one dataset: records per method (accuracies per trial, times, chosen parameters)."""
    outs = [ideal_kernel_trial(name, methods, t, seed, data_dir, progress) for t in range(trials)]
    return collect_ideal(name, methods, outs, data_dir)


def known_kernel_matrix(kind, A, B, gamma=None):
    """The known kernels of Table 1: Gaussian exp(-gamma r^2) or the log kernel -log(1 + r)."""
    from scipy.spatial.distance import cdist

    r = cdist(A, B)
    if kind == "gaussian":
        return np.exp(-gamma * r * r)
    if kind == "log":
        return -np.log1p(r)
    raise ValueError(f"kind must be 'gaussian' or 'log', got {kind!r}")


def known_kernel_trial(name, kind, methods, t, seed=0, data_dir=None, progress=None):
    """Trial ``t`` of Table 1 on one dataset and known kernel: {method: {unlabel, test, rmse, fit_seconds[, chosen]}}."""
    X, y, _ = load_keel(name, data_dir)
    n = X.shape[0]
    n_lab, n_unl = round(0.4 * n), round(0.4 * n)
    perm = task_rng(seed, "learning-known-split", name, t).permutation(n)
    lab, unl, te = perm[:n_lab], perm[n_lab : n_lab + n_unl], perm[n_lab + n_unl :]
    train = np.concatenate([lab, unl])
    gamma = 1.0 / (X.shape[1] * X[train].var()) if kind == "gaussian" else None
    K_train = known_kernel_matrix(kind, X[train], X[train], gamma)
    K_test = known_kernel_matrix(kind, X[te], X[te], gamma)
    out = {}
    for m in ("known", *methods):
        t0 = time.perf_counter()
        rec = {}
        if m == "known":

            def gram(A, B, gamma=gamma):
                return known_kernel_matrix(kind, A, B, gamma)

            rmse = 0.0
        else:
            est = _learner(
                m,
                int(task_rng(seed, "learning-known", name, kind, m, t).integers(2**31 - 1)),
                X[train],
                cv=3,
                n_landmarks=N_LANDMARKS_T1,
            )
            if LEARNERS[m][0] == "svr":
                est.set_params(epsilon=0.01)
            est.fit(X[train], target_kernel=K_train)
            gram = est.learned_kernel_
            rmse = float(np.sqrt(np.mean((gram(X[te]) + est.intercept_ - K_test) ** 2)))
            rec["chosen"] = _chosen(est)
        fit_s = time.perf_counter() - t0
        svm = _svm_on_gram(gram(X[lab], X[lab]), y[lab], seed + t)
        rec.update(
            unlabel=float(np.mean(svm.predict(gram(X[unl], X[lab])) == y[unl])),
            test=float(np.mean(svm.predict(gram(X[te], X[lab])) == y[te])),
            rmse=rmse,
            fit_seconds=fit_s,
        )
        out[m] = rec
        if progress:
            progress()
    return out


def collect_known(name, kind, methods, trials_out, data_dir=None):
    """Table 1 records of one dataset and known kernel from its trials' outputs (in trial order)."""
    _, _, notes = load_keel(name, data_dir)
    recs = {
        m: {
            "dataset": name,
            "kernel": kind,
            "method": m,
            "unlabel": [],
            "test": [],
            "rmse": [],
            "fit_seconds": [],
            "chosen": [],
            "notes": notes,
        }
        for m in ("known", *methods)
    }
    _append_trials(recs, trials_out)
    for r in recs.values():
        for key in ("unlabel", "test", "rmse"):
            r[f"{key}_mean"], r[f"{key}_std"] = _summary(r[key])
    return list(recs.values())


def known_kernel_experiment(name, kind, methods, trials, seed=0, data_dir=None, progress=None):
    """Table 1 on one dataset and known kernel: accuracies (unlabelled, test) and test RMSE per method."""
    outs = [known_kernel_trial(name, kind, methods, t, seed, data_dir, progress) for t in range(trials)]
    return collect_known(name, kind, methods, outs, data_dir)


def large_scale_experiment(
    partitions=(5, 10, 20), n_landmarks=12, n_svm=5000, seed=0, data_dir=None, radial=True, progress=None
):
    """Table 3 on ijcnn1: divide-and-conquer Nystrom hyper-KRR (Gaussian) per v, the radial solver on all pairs.

    The SVM on the learned kernel is trained on ``n_svm`` seeded training points (C by 3-fold
    CV on 2^-5 .. 2^5) and evaluated on the full test set; an RBF SVM on the same subsample is
    the reference.
    """
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    from spectralkit.learn import HyperKernelRidge

    ds = D.load("ijcnn1", data_dir, seed=seed)
    Xtr, ytr, Xte, yte = ds.X_train, ds.y_train, ds.X_test, ds.y_test
    sub = np.sort(
        task_rng(seed, "ijcnn1-svm-subsample").choice(len(ytr), size=min(n_svm, len(ytr)), replace=False)
    )
    majority = float(np.max(np.unique(yte, return_counts=True)[1]) / len(yte))
    cv = StratifiedKFold(3, shuffle=True, random_state=seed)
    recs = []

    def svm_eval(gram_fn, label, extra):
        t0 = time.perf_counter()
        Ks = gram_fn(Xtr[sub], Xtr[sub])
        gs = GridSearchCV(SVC(kernel="precomputed"), {"C": list(SVM_CS)}, cv=cv).fit(Ks, ytr[sub])
        pred = np.concatenate(
            [gs.predict(gram_fn(Xte[s : s + 10000], Xtr[sub])) for s in range(0, len(yte), 10000)]
        )
        rec = {
            "dataset": "ijcnn1",
            "method": label,
            "accuracy": float(np.mean(pred == yte)),
            "svm_seconds": time.perf_counter() - t0,
            "svm_C": float(gs.best_params_["C"]),
            "n_svm": int(sub.size),
            "majority": majority,
            **extra,
        }
        recs.append(rec)
        if progress:
            progress()

    for v in partitions:
        est = HyperKernelRidge(
            "gaussian",
            alpha=1e-4,
            solver="nystroem",
            n_landmarks=n_landmarks,
            n_partitions=v,
            sigma2=total_variance(Xtr),
            random_state=int(task_rng(seed, "ijcnn1", v).integers(2**31 - 1)),
        )
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        svm_eval(
            est.learned_kernel_,
            "krr_gaussian",
            {
                "v": v,
                "n_landmarks": n_landmarks,
                "fit_seconds": fit_s,
                "alpha": 1e-4,
                "backend": est.backend_,
            },
        )
    if radial:
        # all pairs (n_pair_samples above m(m+1)/2), as in the recorded run; the default would sample 2^24
        est = HyperKernelRidge("radial", alpha=list(ALPHAS), cv=5, n_pair_samples=2**62, random_state=seed)
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        mp, mm = est.kernel_.masses()
        svm_eval(
            est.learned_kernel_,
            "krr_radial",
            {
                "v": 1,
                "fit_seconds": fit_s,
                "alpha": est.alpha_,
                "lengthscale": est.lengthscale_,
                "binning_error": est.binning_error_,
                "mass_plus": mp.to_dict(),
                "mass_minus": mm.to_dict(),
            },
        )
    gamma = 1.0 / (Xtr.shape[1] * Xtr[sub].var())
    svm_eval(
        lambda A, B: known_kernel_matrix("gaussian", A, B, gamma),
        "svm_rbf_subsample",
        {"v": None, "fit_seconds": 0.0, "gamma": gamma},
    )
    return recs


#: rows of the four KEEL sets: the tasks' cost grows like the squared number of training points
_ROWS = {"australian": 690, "heart": 270, "sonar": 208, "wine": 178}


def task_key(task):
    """The checkpoint key of a task: ``ideal/<dataset>/<trial>``, ``known/<dataset>/<kernel>/<trial>``, ``large``."""
    return "/".join(map(str, task))


def learning_tasks(datasets, trials, tables, quick=False):
    """The independent tasks of a learning run, the most expensive first (a process pool then ends evenly).

    One task is one trial of one dataset (Table 2), one trial of one dataset and known kernel
    (Table 1), or the whole of Table 3.
    """
    tasks = [("large",)] if 3 in tables and not quick else []
    for name in datasets:
        if 1 in tables:
            tasks += [("known", name, kind, t) for kind in ("gaussian", "log") for t in range(trials)]
        if 2 in tables:
            tasks += [("ideal", name, t) for t in range(trials)]

    def cost(task):
        if task[0] == "large":
            return np.inf
        return ((0.8 if task[0] == "known" else 0.4) * _ROWS.get(task[1], 0)) ** 2

    return sorted(tasks, key=cost, reverse=True)


def learning_plan(trials, tables, quick=False, datasets=None, methods=None):
    """(datasets, methods, tasks) of a learning run; ``quick``: heart only, two hyper-KRR learners.

    ``datasets`` (Tables 1-2): a subset of the four to run (None: all; their rows replace those
    datasets' rows when merged into earlier results). ``methods``: likewise a subset of
    :data:`LEARNERS` (None: all, or the quick pair); a run of some learners leaves out the baselines.
    """
    if datasets is None:
        datasets = ("heart",) if quick else _COLS
    if methods is None:
        methods = tuple(LEARNERS) if not quick else ("krr_gaussian", "krr_radial")
    datasets, methods = _subset("datasets", datasets, _COLS), _subset("methods", methods, tuple(LEARNERS))
    return datasets, methods, learning_tasks(datasets, trials, tables, quick)


def _subset(name, chosen, allowed):
    """``chosen`` in the order of ``allowed``; ValueError unless a non-empty subset of it."""
    if not chosen or set(chosen) - set(allowed):
        raise ValueError(f"{name} must be a non-empty subset of {list(allowed)}, got {list(chosen)!r}")
    return tuple(c for c in allowed if c in chosen)


def _known_methods(methods):
    return tuple(m for m in methods if LEARNERS[m][1] != "wishart")


def run_task(task, methods, seed=0, data_dir=None, blas_threads=1, baseline=True):
    """Run one task of :func:`learning_tasks`; returns its JSON-serialisable output.

    Module-level, so a process pool can run it. ``blas_threads`` (None: no limit) bounds BLAS for
    Table 3 (Tables 1-2, many small dense problems, always run BLAS on one thread); with 1, numba
    runs on one thread too (a pool worker).
    """
    import numba
    from threadpoolctl import threadpool_limits

    if blas_threads == 1:
        numba.set_num_threads(1)  # a pool worker: the pool is the parallelism
    with threadpool_limits(1 if task[0] != "large" else blas_threads):
        if task[0] == "ideal":
            out = ideal_kernel_trial(task[1], methods, task[2], seed, data_dir, baseline=baseline)
        elif task[0] == "known":
            out = known_kernel_trial(task[1], task[2], _known_methods(methods), task[3], seed, data_dir)
        elif task[0] == "large":
            out = large_scale_experiment(seed=seed, data_dir=data_dir)
        else:
            raise ValueError(f"unknown task {task!r}")
    return json.loads(json.dumps(out))  # the same types whether computed now or read from a checkpoint


def _run_tasks(todo, methods, seed, data_dir, jobs, done, checkpoint, progress, baseline=True):
    """Run the tasks ``todo`` (serially, or on ``jobs`` processes); fill ``done`` {key: output}."""

    def finished(task, out):
        done[task_key(task)] = out
        if checkpoint:
            checkpoint(done)
        if progress:
            progress()

    if jobs <= 1:
        for task in todo:
            finished(task, run_task(task, methods, seed, data_dir, None, baseline))
        return
    # spawn: fresh interpreters (no forked numba/BLAS thread pools); each task runs on one BLAS thread
    ctx = multiprocessing.get_context("spawn")
    others = set(multiprocessing.active_children())
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = {pool.submit(run_task, task, methods, seed, data_dir, 1, baseline): task for task in todo}
        try:
            for fut in as_completed(futures):
                finished(futures[fut], fut.result())
        except BaseException:
            # Ctrl-C, SIGTERM (run.py makes it an exception) or a failed task: stop the workers
            # now instead of waiting minutes for their tasks; the finished ones are checkpointed
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in set(multiprocessing.active_children()) - others:
                worker.terminate()
                worker.join()
            raise


def run_learning(
    data_dir=None,
    trials=10,
    seed=0,
    quick=False,
    tables=(1, 2, 3),
    progress=None,
    jobs=1,
    checkpoint=None,
    done=None,
    datasets=None,
    methods=None,
):
    """All learning experiments; returns the ``results["learning"]`` dict of the paper suite.

    The work is split into independent tasks (:func:`learning_tasks`) run serially or on ``jobs``
    processes; every task draws from its own seeded streams, so the results do not depend on
    ``jobs`` or on the order of completion. ``done`` ({task key: output}, e.g. from an earlier
    run's checkpoint with the same settings) skips the tasks it holds; ``checkpoint(done)`` is
    called after every finished task.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    subset, some_methods = datasets is not None, methods is not None
    datasets, methods, tasks = learning_plan(trials, tables, quick, datasets, methods)
    done = {} if done is None else dict(done)
    resumed = sum(task_key(t) in done for t in tasks)
    out = {
        "ideal": [],
        "known": [],
        "large": [],
        "config": {
            "trials": trials,
            "alphas": list(ALPHAS),
            "Cs": list(CS),
            "svm_Cs": list(SVM_CS),
            "sigmas": list(SIGMAS),
            "n_landmarks": N_LANDMARKS,
            "cv": 5,
            "unavailable": list(UNAVAILABLE),
            "datasets": list(datasets),
            "jobs": jobs,
            "tasks": len(tasks),
            "tasks_resumed": resumed,
        },
    }
    if subset:
        out["config"]["only_datasets"] = list(datasets)
    if some_methods:
        out["config"]["only_methods"] = list(methods)
    out["config"]["scale_grids"] = {k: list(v) for k, v in _scale_grids().items()}
    t_start = time.time()
    out["config"]["load_average_start"] = list(os.getloadavg())
    todo = [t for t in tasks if task_key(t) not in done]
    _run_tasks(todo, methods, seed, data_dir, jobs, done, checkpoint, progress, not some_methods)
    if 2 in tables:
        for name in datasets:
            outs = [done[task_key(("ideal", name, t))] for t in range(trials)]
            out["ideal"] += collect_ideal(name, methods, outs, data_dir, baseline=not some_methods)
    if 1 in tables:
        for name in datasets:
            for kind in ("gaussian", "log"):
                outs = [done[task_key(("known", name, kind, t))] for t in range(trials)]
                out["known"] += collect_known(name, kind, _known_methods(methods), outs, data_dir)
    if 3 in tables and not quick:
        out["large"] = done["large"]
    out["config"]["seconds"] = time.time() - t_start
    out["config"]["load_average_end"] = list(os.getloadavg())
    out["config"]["blas_threads_tables_1_2"] = 1
    return out


#: config entries that describe one run (kept per run when runs are merged, not in the common config)
_PER_RUN = (
    "seconds",
    "load_average_start",
    "load_average_end",
    "command",
    "git_commit",
    "date_utc",
    "tasks",
    "tasks_resumed",
    "resumed_on",
    "only_datasets",
    "only_methods",
    "scale_grids",
)


def _runs(cfg, learning):
    """Per-run [tables, seconds, load at start, load at end] (older single-run configs included)."""
    if "runs" in cfg:
        return cfg["runs"]
    tables = [t for t, k in ((2, "ideal"), (1, "known"), (3, "large")) if learning.get(k)]
    run = {"tables": tables, "seconds": 0.0, "load_average_start": None, "load_average_end": None}
    run.update({k: cfg[k] for k in (*_PER_RUN, "jobs", "trials") if k in cfg})
    return [run]


def _run_lines(cfg, learning):
    """One line per run: command, commit, date, processes, and the tasks it took from the
    checkpoint of an interrupted run (computed on other commits, perhaps; not in its wall time)."""
    lines = []
    for r in _runs(cfg, learning):
        if not r.get("command"):
            continue
        line = (
            f"- Run: `{r['command']}` on git `{r.get('git_commit')}`, {r.get('date_utc')} UTC, "
            f"{r.get('jobs', 1)} process{'es' if r.get('jobs', 1) > 1 else ''}"
        )
        if r.get("only_datasets"):
            line += f"; datasets {', '.join(r['only_datasets'])} only (their rows replace the earlier run's)"
        if r.get("only_methods"):
            names = ", ".join(LEARNERS[m][2] for m in r["only_methods"])
            line += f"; learners {names} only (their rows replace the earlier run's)"
        line += f"; Gaussian scale grid {_gaussian_grid(r)}"
        if r.get("tasks_resumed"):
            on = ", ".join("not recorded" if c is None else f"`{c}`" for c in r.get("resumed_on") or [None])
            line += (
                f"; {r['tasks_resumed']} of its {r.get('tasks', '?')} tasks resumed from the checkpoint "
                f"of an interrupted run (computed on git {on}; not in the wall time)"
            )
        lines.append(line)
    return lines


_METHOD_ORDER = ("known", *LEARNERS, "svm_cv")
#: the scale multipliers of every learner before the Gaussian hyper-kernel got its own grid
_PAPER_SCALE_GRID = (0.25, 0.5, 1.0, 2.0, 4.0)


def _fractions(grid):
    return "{" + ", ".join(str(Fraction(c).limit_denominator(1024)) for c in grid) + "}"


def _gaussian_grid(run):
    """The Gaussian learners' scale multipliers of one run (runs before they had their own: the paper's)."""
    return _fractions((run.get("scale_grids") or {}).get("gaussian", _PAPER_SCALE_GRID))


def _grid_text(cfg, learning):
    """The scale grids of the runs on the page."""
    paper = _fractions(_PAPER_SCALE_GRID)
    gauss = sorted({_gaussian_grid(r) for r in _runs(cfg, learning)} - {paper})
    if not gauss:
        return paper
    return (
        f"{paper} (Wishart and radial; and the Gaussian learners in runs before they had their own grid) "
        f"and {', '.join(gauss)} (Gaussian: its multiplier scales s_h² only, so a small one does not "
        "degenerate); each run's line below names its Gaussian grid"
    )


def _row_order(r):
    """Rows of Tables 1-2 by dataset, known kernel and method (the order a full run writes)."""
    return (
        _COLS.index(r["dataset"]) if r["dataset"] in _COLS else len(_COLS),
        ("gaussian", "log").index(r["kernel"]) if r.get("kernel") in ("gaussian", "log") else 0,
        _METHOD_ORDER.index(r["method"]) if r["method"] in _METHOD_ORDER else len(_METHOD_ORDER),
    )


def merge_learning(old, new):
    """Combine the learning results of separate runs (e.g. one per table): a non-empty table of
    ``new`` replaces the same table of ``old``; the runs' times and loads are kept side by side.

    A run of ``old`` whose tables are all replaced leaves the page (its line, trials and time
    described results that are gone); one replaced in part keeps its other tables and records
    the replaced ones in ``replaced_tables`` (its wall time covered them too)."""
    if not old:
        return new
    if not new:
        return old
    only = new.get("config", {}).get("only_datasets")
    only_methods = new.get("config", {}).get("only_methods")
    if only or only_methods:
        # a run of some datasets or learners (Tables 1-2): their rows replace the old ones, the
        # others stay (a run of some learners has no baseline rows: the old ones stay)
        def ours(r):
            return (not only or r["dataset"] in only) and (not only_methods or r["method"] in only_methods)

        out = {
            k: sorted(
                [r for r in old.get(k, []) if not ours(r)] + [r for r in new.get(k, []) if ours(r)],
                key=_row_order,
            )
            if new.get(k)
            else old.get(k, [])
            for k in ("ideal", "known")
        }
        out["large"] = old.get("large", [])
        common = {**old.get("config", {}), **new.get("config", {})}
        out["config"] = {k: v for k, v in common.items() if k not in _PER_RUN and k != "datasets"}
        out["config"]["datasets"] = old.get("config", {}).get("datasets", new["config"].get("datasets"))
        out["config"]["runs"] = _runs(old.get("config", {}), old) + _runs(new.get("config", {}), new)
        return out
    out = {k: new.get(k) or old.get(k, []) for k in ("ideal", "known", "large")}
    common = {**old.get("config", {}), **new.get("config", {})}
    out["config"] = {k: v for k, v in common.items() if k not in _PER_RUN}
    new_runs = _runs(new.get("config", {}), new)
    replaced = {t for r in new_runs for t in r["tables"]}
    kept = []
    for r in _runs(old.get("config", {}), old):
        tables = [t for t in r["tables"] if t not in replaced]
        if tables == r["tables"]:
            kept.append(r)
        elif tables:
            gone = sorted({*r.get("replaced_tables", []), *replaced.intersection(r["tables"])})
            kept.append(dict(r, tables=tables, replaced_tables=gone))
    out["config"]["runs"] = kept + new_runs
    return out


def _trials(cfg, learning):
    """The trials of each table, e.g. "10 (tables 2, 3), 3 (table 1)"."""
    per = {}
    for r in _runs(cfg, learning):
        per.setdefault(r.get("trials", cfg.get("trials")), []).extend(r["tables"])
    if len(per) == 1:
        return str(next(iter(per)))
    return ", ".join(
        f"{t} (table{'s' if len(ts) > 1 else ''} {', '.join(map(str, sorted(ts)))})" for t, ts in per.items()
    )


def _run_time(run):
    """ "tables 2, 3: 32 min, (load at start) → (load at end)" for one run."""
    tables = run["tables"]
    text = f"table{'s' if len(tables) > 1 else ''} {', '.join(map(str, tables))}"
    if run.get("replaced_tables"):
        text += (
            f" (its run also computed table {', '.join(map(str, run['replaced_tables']))}, since replaced)"
        )
    return f"{text}: {run['seconds'] / 60:.0f} min, {_loads(run)}"


def _loads(run):
    loads = [run.get(k) for k in ("load_average_start", "load_average_end")]
    if not all(loads):
        return "not recorded"
    return " → ".join("(" + ", ".join(f"{x:.1f}" for x in v) + ")" for v in loads)


def _cell(mean, std, scale=100.0, digits=2):
    return f"{scale * mean:.{digits}f} ± {scale * std:.{digits}f}"


def _pub(v):
    return "—" if v is None else f"{v[0]:.2f} ± {v[1]:.2f}"


def _label(method):
    if method in LEARNERS:
        return LEARNERS[method][2]
    return {
        "svm_cv": "SVM-CV (RBF)",
        "known": "the known kernel",
        "pan2017": "Pan et al. 2017",
        "krr_radial": "hyper-KRR (radial, ours)",
        "svm_rbf_subsample": "RBF SVM on the same subsample",
    }.get(method, method)


def report_section(learning):
    """Markdown lines of the learning experiments (Tables 1-3 side by side with the paper)."""
    if not learning:
        return []
    cfg = learning.get("config", {})
    L = [
        "## Kernel learning in hyper-RKHS (Tables 1–3 of `003`, `spectralkit.learn`)",
        "",
        "Protocol (`benchmarks/papers/learning.py`, run by `python -m benchmarks.papers.run --experiments learning`):",
        "",
        (
            "- Table 2 (the ideal kernel): a seeded 40/60 train/test split per trial; the kernel is learned from the "
            "ideal kernel of the training labels (Y_ij = +1 same class, −1 otherwise; −1/(C − 1) for C > 2 classes; see the note below the tables), then an SVM (`SVC` on the learned "
            "Gram matrix) is trained and tested. Baseline SVM-CV: an RBF SVM with σ ∈ 2^-5 … 2^5 and C ∈ 2^-5 … 2^5 by "
            "5-fold CV, as the paper."
        ),
        (
            "- Table 1 (known kernels, out-of-sample extension): 40 % labelled / 40 % unlabelled / 20 % test; the kernel "
            "is learned from the known kernel's matrix on the labelled + unlabelled points — a Gaussian exp(−γ r²) with "
            "γ = 1/(d Var X) (scikit-learn's `gamma='scale'`; the paper does not state its width) and the log kernel "
            "−log(1 + r) — the SVM is trained on the labelled points and evaluated on the unlabelled and the test points; "
            "RMSE of the learned kernel (plus the SVR intercept) against the known kernel on the test × test pairs."
        ),
        (
            "- Table 3 (ijcnn1): divide-and-conquer with Nyström on each subset (v ∈ {5, 10, 20}) and the radial "
            "hyper-kernel on all pairs; the SVM on the learned kernel is trained on a seeded subsample of the training "
            "set (the paper does not say how it trained an SVM with a learned kernel on 50k points)."
        ),
        (
            "- Data: the KEEL copies of the UCI sets, every column min-max scaled to [0, 1] on the whole set (the paper "
            "normalises to [0, 1]^d in advance); for australian this per-column scaling also undoes the KEEL file's "
            "dropped decimal points. ijcnn1: the LIBSVM files, scaled with the training range."
        ),
        (
            "- Hyper-kernel scales: s² = the total variance of the training inputs (see `docs/guide-learn-kernel.md`), "
            "s_h² = s² × multiplier (Gaussian), Wishart scale (b + 3) s² I with b = d + 2, radial l² = 2 s²; s² is "
            "passed explicitly (the paper's protocol), since the library's default for the Gaussian and Wishart "
            "learners is now a multiple of it chosen by alignment with the target."
        ),
        "",
        (
            f"Hyper-parameters, for every learner alike: CV on held-out pairs (5 folds for Table 2, 3 for Table 1) "
            f"over the scale multipliers {_grid_text(cfg, learning)} and λ ∈ {cfg.get('alphas')} (hyper-KRR) or C ∈ {cfg.get('Cs')} (hyper-SVR, ε = 0.1; "
            f"ε = 0.01 when fitting a known kernel); Nyström with {cfg.get('n_landmarks')} landmark points "
            f"({cfg.get('n_landmarks', 30) * (cfg.get('n_landmarks', 30) + 1) // 2} landmark pairs) for Table 2 and "
            f"{N_LANDMARKS_T1} for Table 1 (80 % of the points train there; cost O(n^2 M^4 / 8)) wherever the "
            "training pairs exceed the exact solver's 2,500. The SVM's C: 2^-5 … 2^5 by 5-fold CV. "
            f"Trials: {_trials(cfg, learning)}. Not available offline (columns omitted): "
            f"{', '.join(cfg.get('unavailable', UNAVAILABLE))}. BLAS limited to one thread for Tables 1–2. Wall "
            "time and load average (1, 5, 15 min, at start → end) on the shared 2-core machine: "
            + "; ".join(_run_time(r) for r in _runs(cfg, learning))
            + "."
        ),
        "",
    ]
    runs = _run_lines(cfg, learning)
    if runs:
        L += [*runs, ""]
    ideal = learning.get("ideal", [])
    if ideal:
        cols = [c for c in _COLS if any(r["dataset"] == c for r in ideal)]
        L += [
            "### Table 2: learning from the ideal kernel (test accuracy %, mean ± std over trials)",
            "",
            "Each cell: ours | the paper. Radial rows are new (the paper has no radial hyper-kernel).",
            "",
            "| method | " + " | ".join(f"{c} ours | {c} paper" for c in cols) + " |",
            "|---|" + "---|---|" * len(cols),
        ]
        by = {(r["method"], r["dataset"]): r for r in ideal}
        for m in ("svm_cv", *LEARNERS):
            if not any((m, c) in by for c in cols):
                continue
            cells = []
            for c in cols:
                r = by.get((m, c))
                ours = _cell(r["mean"], r["std"]) + f" (n={len(r['accuracy'])})" if r else "—"
                cells.append(f"{ours} | {_pub(PUBLISHED_T2.get(m, {}).get(c))}")
            L.append(f"| {_label(m)} | " + " | ".join(cells) + " |")
        for m in ("KTA", "BMKL", "RF", "MIKL"):
            L.append(
                f"| {m} (paper only, not reproduced) | "
                + " | ".join(f"— | {_pub(PUBLISHED_T2[m][c])}" for c in cols)
                + " |"
            )
        L.append("")
        L += [
            (
                "Learned kernels (means over trials): fit time, chosen scale multiplier and λ/C, indefiniteness of the "
                "training Gram matrix (share of |eigenvalue| mass on negative eigenvalues); radial: Jordan masses of "
                "the learned spectral measure and the binning error."
            ),
            "",
            "| dataset | method | fit s | scale ×, λ or C (most frequent) | negative eigen-mass | m+ / m− (radial) |",
            "|---|---|---|---|---|---|",
        ]
        for r in ideal:
            if r["method"] == "svm_cv":
                continue
            ch = r["chosen"]
            hyp = "alpha" if "alpha" in ch[0] else "C"
            mult = max({c["scale_multiplier"] for c in ch}, key=[c["scale_multiplier"] for c in ch].count)
            hv = max({c[hyp] for c in ch}, key=[c[hyp] for c in ch].count)
            neg = np.mean([k["neg_eig_fraction"] for k in r["kernel"]])
            masses = "—"
            if "mass_plus" in r["kernel"][0]:
                mp = np.mean([k["mass_plus"]["value"] for k in r["kernel"]])
                mm = np.mean([k["mass_minus"]["value"] for k in r["kernel"]])
                be = max(k["binning_error"] for k in r["kernel"])
                masses = f"{mp:.3g} / {mm:.3g} (binning error ≤ {be:.1g})"
            L.append(
                f"| {r['dataset']} | {_label(r['method'])} | {np.mean(r['fit_seconds']):.1f} | {mult:g}, "
                f"{hyp} = {hv:g} | {neg:.3f} | {masses} |"
            )
        L.append("")
    known = learning.get("known", [])
    if known:
        cols = [c for c in _COLS if any(r["dataset"] == c for r in known)]
        for kind, title in (
            ("gaussian", "the known Gaussian kernel exp(-γ r²), γ = 1/(d Var X)"),
            ("log", "the known log kernel -log(1 + r)"),
        ):
            recs = {(r["method"], r["dataset"]): r for r in known if r["kernel"] == kind}
            if not recs:
                continue
            ntr = len(next(iter(recs.values())).get("test", ()))
            L += [
                f"### Table 1: out-of-sample extension of {title}",
                "",
                (
                    (f"Mean ± std over {ntr} trials. " if ntr else "")
                    + "Accuracy % on the unlabelled (40 %) and test (20 %) points of an SVM trained on the labelled 40 % "
                    "with the learned kernel; RMSE of the learned kernel against the known one on test × test pairs. "
                    "Each cell: ours | the paper."
                ),
                "",
                "| method | metric | " + " | ".join(f"{c} ours | {c} paper" for c in cols) + " |",
                "|---|---|" + "---|---|" * len(cols),
            ]
            pub = PUBLISHED_T1[kind]
            for m in ("known", *LEARNERS):
                if not any((m, c) in recs for c in cols):
                    continue
                for metric in ("unlabel", "test", "rmse"):
                    if m == "known" and metric == "rmse":
                        continue
                    cells = []
                    for c in cols:
                        r = recs.get((m, c))
                        if r is None:
                            ours = "—"
                        elif metric == "rmse":
                            ours = f"{r['rmse_mean']:.3g} ± {r['rmse_std']:.2g}"
                        else:
                            ours = _cell(r[f"{metric}_mean"], r[f"{metric}_std"])
                        p = pub.get(m, {}).get(c, {}).get(metric)
                        ps = "—" if p is None else (f"{p:.3f}" if metric == "rmse" else _pub(p))
                        cells.append(f"{ours} | {ps}")
                    L.append(f"| {_label(m)} | {metric} | " + " | ".join(cells) + " |")
            if "pan2017" in pub:
                L.append(
                    "| Pan et al. 2017 (paper only) | RMSE | "
                    + " | ".join(f"— | {pub['pan2017'][c]['rmse']:.3f}" for c in cols)
                    + " |"
                )
            L.append("")
    large = learning.get("large", [])
    if large:
        maj = large[0]["majority"]
        L += [
            "### Table 3: ijcnn1 (49,990 train / 91,701 test, d = 22) with divide-and-conquer",
            "",
            (
                f"The test set is {100 * maj:.1f} % one class: that is the accuracy of the majority vote. SVM on the "
                f"learned kernel trained on a seeded subsample of {large[0]['n_svm']} training points (C by 3-fold CV), "
                "evaluated on all 91,701 test points. Times: kernel learning (fit) and SVM (training + the "
                "91,701 x n_svm test Gram + prediction) separately; the paper's are totals on an i7-8700K. The paper "
                "sets M = 0.05 m landmarks (2,500 points: 3.1 million landmark pairs, an M^2 x M^2 system) -- not "
                "computable as written; we use M = 12 points (78 landmark pairs) per subset, whose cost "
                "O(n^2 M^4 / 8) per subset of n points fits the shared 2-core machine."
            ),
            "",
            "| method | v | ours: accuracy % | fit s | SVM s | paper: accuracy % (total s) |",
            "|---|---|---|---|---|---|",
        ]
        for r in large:
            v = r.get("v")
            p = PUBLISHED_T3.get(v, {}).get(r["method"]) if v else None
            extra = ""
            if r["method"] == "krr_radial":
                extra = (
                    f" (all {49990 * 49991 // 2:,} pairs, λ = {r['alpha']:g}, binning error ≤ "
                    f"{r['binning_error']:.1g}, m+ = {r['mass_plus']['value']:.3g}, "
                    f"m− = {r['mass_minus']['value']:.3g})"
                )
            elif r["method"] == "krr_gaussian":
                extra = f" (M = {r['n_landmarks']} landmarks per subset, λ = {r['alpha']:g})"
            L.append(
                f"| {_label(r['method'])}{extra} | {v if v else '—'} | {100 * r['accuracy']:.2f} | "
                f"{r['fit_seconds']:.0f} | {r['svm_seconds']:.0f} | "
                f"{'—' if p is None else f'{p[0]:.2f} ({p[1]:.0f})'} |"
            )
        for v in sorted(PUBLISHED_T3):
            for m in ("pan2017", "svr_gaussian", "distributed BMKL"):
                p = PUBLISHED_T3[v][m]
                L.append(f"| {_label(m)} (paper only) | {v} | — | — | — | {p[0]:.2f} ({p[1]:.0f}) |")
        L.append("")
    facts = findings(learning)
    if facts:
        L += [
            "### Findings (kernel learning; generated from the numbers above)",
            "",
            *[f"- {f}" for f in facts],
            "",
        ]
    if learning.get("large"):
        L += ANOMALIES
    L += end_to_end_section()
    return L


END_TO_END = Path(__file__).resolve().parents[1] / "results" / "learn_end_to_end.json"


def end_to_end_section(path=END_TO_END):
    """The table of ``python benchmarks/bench_learn.py --end-to-end`` (empty when it has not run)."""
    if not Path(path).exists():
        return []
    saved = json.loads(Path(path).read_text())
    rows = saved["rows"]
    L = [
        "### A learned kernel end to end: signed random features and a linear model",
        "",
        (
            "`python benchmarks/bench_learn.py --end-to-end`: the radial kernel is learned from the ideal kernel of "
            'all training labels (`HyperKernelRidge("radial")`, λ and the scale by 3-fold CV on held-out pairs; '
            "beyond 16,384 points on 2^24 sampled pairs), featurized with `RandomFeatures(k.as_kernel(), "
            f"n_components={saved['width']})` (signed features [Φ+ | Φ−]), and a linear model "
            "(`RidgeClassifierCV`) is fitted on them; the baseline is the same linear model on Gaussian random "
            "features of the same width, its lengthscale chosen by 3-fold CV over {1/8, 1/4, 1/2, 1, 2} times the "
            "median pairwise distance. Test accuracy on the whole test set; wall times on the shared 2-core "
            "machine (load average ~10 during the run)."
        ),
        "",
        "| dataset | train / test, d | learned radial kernel + signed RF | CV-tuned Gaussian RF | difference | majority |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        diff = 100 * (r["learned_acc"] - r["gaussian_acc"])
        L.append(
            f"| {r['dataset']} | {r['n_train']:,} / {r['n_test']:,}, {r['dim']} | {100 * r['learned_acc']:.2f} % "
            f"(learn {r['learn_s']:.0f} s, features {r['featurize_fit_s']:.1f} s) | {100 * r['gaussian_acc']:.2f} % "
            f"(l = {r['gaussian']['multiplier']:g} x median) | {diff:+.2f} points | {100 * r['majority']:.2f} % |"
        )
    wins = [r["dataset"] for r in rows if r["learned_acc"] > r["gaussian_acc"]]
    loses = [
        f"{r['dataset']} ({100 * (r['learned_acc'] - r['gaussian_acc']):+.2f})"
        for r in rows
        if r["learned_acc"] <= r["gaussian_acc"]
    ]
    L += [
        "",
        (
            f"The learned kernel wins on {', '.join(wins) or 'none'}; it does not on {', '.join(loses) or 'none'} "
            "points. One seed and one width: differences below about half a point are within the spread of "
            "random features and of the data split (not measured here)."
        ),
        "",
    ]
    return L


#: Causes of the anomalies of the tables, measured separately (not regenerated by a run).
ANOMALIES = [
    "### Why Table 3's Gaussian rows equal the majority vote (measured separately)",
    "",
    (
        "On 5,000 ijcnn1 training points (89.8 % one class) with the Table 3 setting (v = 10 subsets, M = 12 "
        "landmarks, λ = 1e-4, s² = the total variance tv), the learned Gram matrix of 1,000 of them has mean "
        "0.64, standard deviation 0.10 and one eigenvalue of 646 against 23 for the next: k* is mostly a "
        "constant. The ideal kernel of a 90/10 set is +1 on 82 % of the pairs, and the broad hyper-kernel "
        "with 78 landmark pairs per subset represents little more than that mean. An SVM on an almost "
        "constant kernel, with C chosen by CV at the bottom of its grid (2^-5), predicts the majority class "
        "(89.6 % on 2,000 held-out training points). With s² = tv/8 the same fit is not constant (mean 0.14, "
        "standard deviation 0.22), CV picks C = 2^5 and the accuracy is 94.5 % (an RBF SVM: 96.4 %). So the "
        "rows measure the default scale, not a solver failure: on ijcnn1 the scale must be searched (`cv`, or "
        "`sigma2`), which Table 3 does not do (as the paper does not say it did)."
    ),
    "",
    (
        "The library's default s² of the Gaussian and Wishart learners is now chosen by alignment with the "
        "target (`docs/guide-learn-kernel.md`); on 500-point samples of ijcnn1 the alignment grows towards "
        "small scales (0.014 at tv, 0.016 at tv/8), so that rule picks tv/8, the scale that gave 94.5 % above. "
        "The tables keep s² = tv, the paper's protocol, and Table 3 was not re-run."
    ),
    "",
    "### Why Table 1's log kernel with hyper-KRR (Gaussian) is at chance on sonar (measured separately)",
    "",
    (
        "The target −log(1 + r) is negative on every pair (on trial 0's training pairs: mean −1.15, standard "
        "deviation 0.20, 0 on the diagonal), and hyper-KRR has no intercept (the paper's eq. 4–6), so the "
        "learned kernel must carry that offset itself. On trial 0 its Gram matrix on the labelled points has "
        "mean −1.12, one eigenvalue of −95 against at most 3.1 in magnitude for the others, and a diagonal of "
        "−1.28 where the target has 0. The SVM on it scores 45.2 % on the test points, and the same 45.2 % for "
        "λ ∈ {1e-6, 1e-4} and s² ∈ {tv, tv/4}: no hyper-parameter in reach fixes it. Fitted to the centred "
        "target K − mean(K) (a constant added to a kernel changes no SVM), the same learner gives 69–74 %. The "
        "hyper-SVR, which has an intercept, reaches 79 % on this table, and the radial hyper-kernel, which "
        "represents −log(1 + r) itself, 81 %. On the other datasets the same learner is 3.8–17 points below "
        "the known kernel (whether for the same reason was not measured); the paper's own hyper-KRR rows "
        "for this kernel are low as well (sonar 72.3 / 65.8 %)."
    ),
    "",
    "### Hyper-parameters at the edge of their grids (counts in the findings below)",
    "",
    (
        "Table 1 fits a known, noise-free kernel: the least regularisation that stays stable fits it best, "
        "so λ = 1e-6 (the lowest) and C = 1e5 (the highest) win most fits; hyper-KRR (radial)'s test RMSE is "
        "already 8e-6–7e-4 there (Gaussian target). The Gaussian learners' multiplier of s_h² sat at 1/4, the "
        "lower end of the paper's grid {1/4, ..., 4}, in 98 of Table 2's 240 fits; sonar's held-out error "
        "kept falling below it (74.2 % at 1/32, 74.4 % at 2^-12 for hyper-KRR, measured below). The multiplier "
        "scales s_h² only: as it goes to 0 the pair-midpoint Gaussian's variance s² + s_h² tends to s², a valid "
        "hyper-kernel, so a small multiplier does not degenerate (Wishart's and radial's multiplier scales s² "
        "itself: there it does). The library's Gaussian grid is therefore {1/64, 1/16, 1/4, 1, 4} "
        "(`spectralkit.learn.SCALE_GRIDS`), and the Gaussian rows of Table 2 and hyper-KRR (Gaussian)'s of "
        "Table 1 were re-run with it on 2026-11-29 (the run lines above), hyper-SVR (Gaussian)'s of Table 1 on "
        "heart, sonar and wine on 2026-11-30 (52 of its 60 tasks on a 16-core machine, the rest here) and on "
        "australian the same day (its 20 tasks of 8-16 CPU minutes each on one core here, in two resumed "
        "runs against a copy of the results file); its RMSE moved by −0.5 to +0.5 % of its value and the "
        "test accuracy by −0.6 to +0.1 points (heart, Gaussian target: 80.4 → 79.8 %; australian: 84.9 % "
        "both times for the Gaussian target, 84.9 → 85.0 % for the log kernel), and the multiplier chosen "
        "is the top of the grid, 4, in all 20 sonar fits and 15 of the 20 wine fits, as on the paper's grid "
        "(the new grid only adds smaller values); on australian it is 1/4 in 14 of the 20 fits and 1 in "
        "the others, so the values below 1/4 that the new grid adds are never chosen there, and C is 1e5, "
        "the top of its grid, in all 20. "
        "Table 2 moved by −0.1 to +0.5 points on australian, wine "
        "and heart, by +1.4 (hyper-KRR, 73.4 → 74.8 %) and −1.6 points (hyper-SVR, 78.5 → 76.9 %) on sonar "
        "(paired over the 10 splits: +1.4 ± 1.0 and −1.6 ± 0.8); a 7-point grid that adds 1/2 and 2 gives "
        "the same sonar accuracies (neither is ever chosen), so the SVR's loss is the choice among the small "
        "multipliers, not a gap in the grid. The new lower end is still chosen most often (wine 20 of 20 "
        "fits, sonar hyper-KRR 9 of 10); below it little changes (sonar, hyper-KRR, trials 0-4: 74.2 % at "
        "1/32 and 74.4 % at 2^-12). The SVM's C on the learned kernel sits at 2^-5, the lower end of its grid, "
        "in about a third of the fits, most on australian and heart. With its grid extended to 2^-14 (trials "
        "0-4, a one-off run, 2026-11-29) the test accuracy changed by 0 to +0.4 points: australian hyper-KRR "
        "(Gaussian) 85.75 → 85.89 %, (Wishart) 85.56 → 85.80 %, heart (Wishart) 80.12 → 80.49 %, heart "
        "(Gaussian) and sonar (hyper-KRR Gaussian and radial, hyper-SVR Gaussian) unchanged; the chosen C went "
        "down to 2^-7. The paper's grid costs less than half a point there. The Gaussian learner's s² itself "
        "is not searched (the paper's protocol fixes it to tv), and the measurements in the guide show that "
        "s², not s_h², sets the learned kernel's width."
    ),
    "",
    "### The hyper-SVR's iteration cap",
    "",
    (
        "The tables' hyper-SVR (Gaussian, Wishart) rows were computed with the dual coordinate descent "
        "capped at 3,000 epochs; at C = 1e5 the CV folds stopped there (the ConvergenceWarnings). Measured "
        "on Table 2's wine trial 0 (hyper-SVR, Gaussian): 25 capped fits; without the cap they need up to "
        "10,794 epochs (1.3 times the CPU time), the held-out errors at C = 1e5 move by at most 0.9 %, and "
        "the chosen scale and C and the test accuracy are the same. The library now allows 30,000 epochs; "
        "wine's rows were recomputed with it (below), the other datasets' were not. C = 1e5 is the top of "
        "the hyper-SVR's grid and is chosen in about 40 % of Table 2's fits; with 1e6 and 1e7 added "
        "(hyper-SVR Gaussian, sonar trial 2 and heart trials 0-1, a one-off run, 2026-11-29; each such fit "
        "takes minutes at the 30,000-epoch cap) CV never chose beyond 1e5 and the test accuracy was the same."
    ),
    "",
    "### Table 2's wine rows and the multi-class target",
    "",
    (
        "Wine's rows were re-run with the simplex-coded target (−1/(C − 1) = −1/2 between different classes; "
        "`--learning-tables 2 --learning-datasets wine`, all 10 trials, and with the hyper-SVR's 30,000-epoch "
        "cap) on 2026-11-28. Against the earlier rows (±1 target, 3,000 epochs) the means moved by −0.19 "
        "(hyper-KRR Gaussian) to +0.75 points (both radial rows, 96.17 → 96.92 %); the best learned kernel is "
        "still hyper-KRR (Wishart), 97.38 ± 1.06 % (was 97.57 %). The run shared the 2-core machine with other "
        "work at the lowest priority (load average 4–5), so wine's fit times in the table above are 5–25 "
        "times the earlier ones: they measure the load, not the learners."
    ),
    "",
    "### Table 2's sonar rows below the paper (partly explained: landmarks and the scale grid)",
    "",
    (
        "The four Gaussian and Wishart rows are 3.6–6.1 points below the paper's. Ruled out: harder splits "
        "(on our splits our RBF SVM-CV is 1.8 points above the paper's), the scale (with the library's "
        "aligned s² instead of tv, 9 trials: hyper-KRR Gaussian 70.7 % against 72.4 %, Wishart 74.8 % "
        "against 74.7 %: no gain), and the solver (the per-trial accuracies are reproduced exactly by a "
        "re-run; on trial 0 the hyper-SVR (Gaussian) at C = 1e5 converges at every scale of the grid). The "
        "landmarks matter: with 60 landmark points (1,830 of the 3,486 training pairs) instead of 30 (465), "
        "hyper-KRR (Gaussian) on trials 0-4 reached 79.2, 76.0, 75.2, 68.8, 74.4 % against 68.0, 71.2, 76.8, "
        "67.2, 72.8 %: 74.7 % against 71.2 % (paired +3.5 ± 2.2 points, standard error of 5 trials), half of "
        "the gap to the paper's 77.7 %, at 18 times the fit time (143 s against 8 s per trial: the Nyström "
        "system grows like M^4). The tables keep 30 (the cost of 10 trials x 6 learners x 4 datasets); the "
        "other rows were not re-run with 60. In 8 of those 10 fits the scale multiplier was 0.25, the lower "
        "edge of its grid (a one-off run of `ideal_kernel_trial` with the tables' protocol and "
        "`n_landmarks=60`, 2026-11-28). The scale grid matters as much: with the scale multipliers extended "
        "from {0.25, ..., 4} down to 1/32 (30 landmarks, the same trials) hyper-KRR (Gaussian) reached 77.6, "
        "71.2, 76.8, 70.4, 75.2 % (74.2 %), and down to 2^-12 78.4, 71.2, 76.8, 70.4, 75.2 % (74.4 %): +3.0 to "
        "+3.2 points (the library's scale grid patched), with the held-out error smallest at the grid's new "
        "lower edge in every fit. With the library's Gaussian grid now reaching 1/64, the table's hyper-KRR "
        "(Gaussian) row is 74.8 % (10 trials, 30 landmarks); the two causes were not combined. The rest of the "
        "gap (about 3 points) is not explained."
    ),
    "",
]


def findings(learning):
    """Plain statements derived from the learning results (each cites its numbers)."""
    out = []
    ideal = learning.get("ideal", [])
    for c in _COLS:
        here = {r["method"]: r for r in ideal if r["dataset"] == c}
        learned = [r for m, r in here.items() if m in LEARNERS]
        if not learned or "svm_cv" not in here:
            continue
        best = max(learned, key=lambda r: r["mean"])
        paper_best = max((PUBLISHED_T2[m][c] for m in LEARNERS if m in PUBLISHED_T2), key=lambda v: v[0])
        out.append(
            f"Table 2, {c}: best learned kernel {_label(best['method'])} {100 * best['mean']:.2f} ± "
            f"{100 * best['std']:.2f} %, our SVM-CV {100 * here['svm_cv']['mean']:.2f} ± "
            f"{100 * here['svm_cv']['std']:.2f} %; the paper's best hyper-kernel row {paper_best[0]:.2f} ± "
            f"{paper_best[1]:.2f} %, its SVM-CV {PUBLISHED_T2['svm_cv'][c][0]:.2f} %."
        )
    neg = [k["neg_eig_fraction"] for r in ideal if r["method"] in LEARNERS for k in r["kernel"]]
    if neg:
        indefinite = sum(v > 1e-6 for v in neg)
        out.append(
            f"{indefinite} of the {len(neg)} kernels learned from the ideal kernel are indefinite (more than "
            f"1e-6 of the training Gram matrix's |eigenvalue| mass on negative eigenvalues); the negative share "
            f"is {100 * float(np.mean(neg)):.1f} % on average (range {100 * min(neg):.1f}–{100 * max(neg):.1f} %)."
        )
    rad = [k for r in ideal if r["method"] in ("krr_radial", "svr_radial") for k in r["kernel"]]
    if rad:
        ratio = [k["mass_minus"]["value"] / k["mass_plus"]["value"] for k in rad]
        out.append(
            f"The radial learned kernels have finite signed spectral measures (they live in an RKKS) with "
            f"m−/m+ between {min(ratio):.2f} and {max(ratio):.2f}; the largest binning error of the radial "
            f"solver was {max(k['binning_error'] for k in rad):.1g}."
        )
    known = learning.get("known", [])
    for kind in ("gaussian", "log"):
        rows = {(r["method"], r["dataset"]): r for r in known if r["kernel"] == kind}
        for m in ("krr_radial", "krr_gaussian"):
            vals = [rows[(m, c)]["rmse_mean"] for c in _COLS if (m, c) in rows]
            if vals:
                out.append(
                    f"Table 1, {kind} kernel: {_label(m)} test RMSE {min(vals):.3g}–{max(vals):.3g} over the "
                    f"datasets"
                    + (
                        " (the target is itself radial, so the radial hyper-kernel can represent it)"
                        if m == "krr_radial"
                        else ""
                    )
                    + "."
                )
    large = learning.get("large", [])
    if large:
        parts = []
        for r in large:
            tag = f" v={r['v']}" if r["method"] == "krr_gaussian" else ""
            parts.append(f"{_label(r['method'])}{tag} {100 * r['accuracy']:.2f} %")
        out.append(
            f"Table 3, ijcnn1: {'; '.join(parts)} against the majority vote's {100 * large[0]['majority']:.2f} % "
            "(the paper's hyper-kernel rows, 89.4–91.0 %, are within 1.5 points of it)."
        )
    out += _edge_findings(learning)
    return out


def _row_scale_grid(learning, table, r):
    """The scale multipliers the row ``r`` of Table ``table`` was fitted with: those of the last run
    that computed it (a run of some datasets or learners computes only theirs)."""
    grid = _PAPER_SCALE_GRID
    for run in _runs(learning.get("config", {}), learning):
        if table not in run.get("tables", []):
            continue
        if run.get("only_datasets") and r["dataset"] not in run["only_datasets"]:
            continue
        if run.get("only_methods") and r["method"] not in run["only_methods"]:
            continue
        grid = tuple((run.get("scale_grids") or {}).get(LEARNERS[r["method"]][1], _PAPER_SCALE_GRID))
    return grid


def _edge_findings(learning):
    """How often the cross-validated hyper-parameters sit at an end of their grids (Tables 1-2)."""
    grids = {
        "scale_multiplier": None,  # per row: the grid of the run that computed it
        "alpha": (min(ALPHAS), max(ALPHAS)),
        "C": (min(CS), max(CS)),
        "svm_C": (min(SVM_CS), max(SVM_CS)),
    }
    out = []
    for table, key, number in (("Table 2", "ideal", 2), ("Table 1", "known", 1)):
        counts = {name: [0, 0, 0] for name in grids}  # at the low end, at the high end, fits
        for r in learning.get(key, []):
            if r["method"] not in LEARNERS:
                continue  # the RBF SVM baseline has its own grids
            scale = _row_scale_grid(learning, number, r)
            for chosen in r.get("chosen", []):
                for name, ends in grids.items():
                    lo, hi = (min(scale), max(scale)) if ends is None else ends
                    if name in chosen:
                        v = float(chosen[name])
                        c = counts[name]
                        c[0] += bool(np.isclose(v, lo))
                        c[1] += bool(np.isclose(v, hi))
                        c[2] += 1
        parts = [
            f"{name} {lo}/{n} at its lowest and {hi}/{n} at its highest value"
            for name, (lo, hi, n) in counts.items()
            if n
        ]
        if parts:
            out.append(f"{table}, chosen by CV: " + "; ".join(parts) + ".")
    return out
