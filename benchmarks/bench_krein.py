"""Krein ridge training speed against n and s, beside scikit-learn.

Synthetic binary classification in d = 22 (the dimension of ijcnn1; the timings depend on n, d
and s, not on the values): X ~ U[0, 1]^d, y = sign(sin(2 pi x_0) + x_1 - 0.5 + 0.3 e). For every
(n, s) this times ``fit`` of

* ``krein_pd``      ``KreinRidgeClassifier("gaussian:lengthscale=2", n_components=s,
                    method="rff")``: streaming fit (row blocks of ~16 MB of features; Phi^T Phi
                    and Phi^T y accumulated, never the n x s matrix) and the spectral solve;
* ``krein_indef``   the same with the indefinite ``delta_gaussian:sigma1=2,sigma2=8``
                    (same cost: the solve does not depend on the signature);
* ``materialised``  the previous implementation, for before/after: ``Phi = transform(X)`` in
                    float64, centred, ``A = Phi^T Phi + alpha J`` and LU (scipy ``lu_factor``);
* ``sk_rbf_ridge``  scikit-learn ``make_pipeline(RBFSampler(gamma, n_components=s),
                    RidgeClassifier(alpha))`` (the same width s; the n x s matrix in memory);
* ``sk_kernel_ridge``  ``KernelRidge(kernel="rbf", gamma)`` on +-1 targets (the exact kernel:
                    O(n^3) time, n^2 memory; only for n <= ``--kernel-ridge-max``).

Every method gets one warm-up fit and ``--repeats`` interleaved rounds (median reported, with
the spread and the load average). With ``--clock cpu`` the times are process CPU time with
numba and BLAS on one thread (a per-core measure that time slicing by other jobs does not
inflate). Peak memory is the peak of numpy allocations traced by
``tracemalloc`` during one extra, untimed fit. Methods whose n x s (or n x n) float64 matrix
would exceed ``--max-gb`` are skipped (recorded as such). Test accuracy on 20000 held-out rows
shows that the models compared are comparable.

Usage::

    python benchmarks/bench_krein.py           # full grid, writes results/krein.json and .md
    python benchmarks/bench_krein.py --quick   # smoke run, prints only
"""

import argparse
import contextlib
import gc
import json
import os
import time
import tracemalloc
from pathlib import Path

import numba
import numpy as np
import scipy.linalg
from sklearn.kernel_approximation import RBFSampler
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import RidgeClassifier
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from spectralkit.sklearn import KreinRidgeClassifier, SpectralFeatures

RESULTS = Path(__file__).resolve().parent / "results"
CLOCK = time.perf_counter
D = 22
GAMMA = 0.125  # exp(-gamma r^2) = exp(-r^2 / (2 l^2)) with l = 2 (about the median distance)
ALPHA = 1.0


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, D))
    y = np.sign(np.sin(2 * np.pi * X[:, 0]) + X[:, 1] - 0.5 + 0.3 * rng.standard_normal(n))
    return X, np.where(y == 0, 1.0, y)


class Materialised:
    """The previous Krein ridge fit: the whole feature matrix, then LU of Phi^T Phi + alpha J."""

    def __init__(self, kernel, s):
        self.kernel, self.s = kernel, s

    def fit(self, X, y):
        sf = SpectralFeatures(self.kernel, n_components=self.s, method="rff", random_state=0, lengthscale=1.0)
        sf.fit(X)
        Phi = np.asarray(sf.transform(X), dtype=np.float64)
        mean, ym = Phi.mean(axis=0), y.mean()
        Phi -= mean
        A = Phi.T @ Phi
        A[np.diag_indices_from(A)] += ALPHA * sf.signature_
        coef = scipy.linalg.lu_solve(scipy.linalg.lu_factor(A, check_finite=False), Phi.T @ (y - ym))
        self.sf, self.coef, self.intercept = sf, coef, ym - mean @ coef
        return self

    def predict(self, X):
        return np.sign(self.sf.transform(X) @ self.coef + self.intercept)


def models(n, s, max_gb, kernel_ridge_max):
    """name -> (factory or None, reason when skipped)."""
    ns_gb = 8 * n * s / 1e9
    out = {
        "krein_pd": (
            lambda: KreinRidgeClassifier(
                "gaussian:lengthscale=2",
                n_components=s,
                method="rff",
                alpha=ALPHA,
                random_state=0,
                lengthscale=1.0,  # the kernel's own l = 2, as RBFSampler(GAMMA)
            ),
            None,
        ),
        "krein_indef": (
            lambda: KreinRidgeClassifier(
                "delta_gaussian:sigma1=2,sigma2=8", n_components=s, method="rff", alpha=ALPHA, random_state=0
            ),
            None,
        ),
        "materialised": (lambda: Materialised("gaussian:lengthscale=2", s), None),
        "sk_rbf_ridge": (
            lambda: make_pipeline(
                RBFSampler(gamma=GAMMA, n_components=s, random_state=0), RidgeClassifier(alpha=ALPHA)
            ),
            None,
        ),
        "sk_kernel_ridge": (lambda: KernelRidge(alpha=ALPHA, kernel="rbf", gamma=GAMMA), None),
    }
    for name in ("materialised", "sk_rbf_ridge"):
        if 2 * ns_gb > max_gb:  # the feature matrix and a centred / intermediate copy
            out[name] = (None, f"needs ~{2 * ns_gb:.1f} GB")
    nn_gb = 8 * n * n / 1e9
    if n > kernel_ridge_max or 2 * nn_gb > max_gb:
        out["sk_kernel_ridge"] = (None, f"n > {kernel_ridge_max} (O(n^3) time, {nn_gb:.1f} GB Gram)")
    return out


def bench_case(n, s, repeats, max_gb, kernel_ridge_max, X_test, y_test):
    X, y = data(n, seed=1)
    row = {"n": n, "s": s, "loadavg_before": os.getloadavg()}
    todo = {k: f for k, (f, why) in models(n, s, max_gb, kernel_ridge_max).items() if f is not None}
    for k, (f, why) in models(n, s, max_gb, kernel_ridge_max).items():
        if f is None:
            row[k] = None
            row[k + "_skipped"] = why
    fitted = {}
    for name, make in todo.items():  # warm-up (JIT, first touch) and the accuracy
        fitted[name] = make().fit(X, y)
        pred = np.sign(fitted[name].predict(X_test))  # labels, or KernelRidge's real values
        row[name + "_test_accuracy"] = float(np.mean(pred == y_test))
    fitted.clear()
    times = {name: [] for name in todo}
    names = list(todo)
    for r in range(repeats):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            gc.collect()
            t0 = CLOCK()
            todo[name]().fit(X, y)
            times[name].append(CLOCK() - t0)
    for name in names:
        t = np.array(times[name])
        row[name] = float(np.median(t))
        row[name + "_all"] = [float(v) for v in t]
        row[name + "_spread"] = float((t.max() - t.min()) / np.median(t))
        gc.collect()
        tracemalloc.start()
        todo[name]().fit(X, y)
        row[name + "_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    row["loadavg_after"] = os.getloadavg()
    return row


def markdown(rows, info):
    lines = [
        f"{info['cpu_count']} logical CPUs, numba threads: {info['threads']}, {info.get('clock', 'wall')} "
        f"clock; load average "
        f"at start {tuple(round(v, 2) for v in info['loadavg_start'])}, at end "
        f"{tuple(round(v, 2) for v in info.get('loadavg_end', ()))}.",
        "",
        "Fit time in s (median of interleaved rounds) / peak traced memory in MB / test accuracy. "
        "`Krein` = KreinRidgeClassifier (streaming; PD Gaussian, and the indefinite delta-Gaussian), "
        "`materialised` = the previous fit (n x s features + LU), `RBF+Ridge` = scikit-learn "
        "RBFSampler + RidgeClassifier (same width), `KernelRidge` = the exact kernel.",
        "",
        "| n | s | Krein (PD) | Krein (indefinite) | materialised | RBF+Ridge | KernelRidge | load |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def cell(r, k):
        if r.get(k) is None:
            return f"skipped ({r.get(k + '_skipped', '')})"
        return f"{r[k]:.2f} s / {r[k + '_peak_mb']:.0f} MB / {r[k + '_test_accuracy']:.3f}"

    for r in rows:
        lines.append(
            f"| {r['n']} | {r['s']} | "
            + " | ".join(
                cell(r, k)
                for k in ("krein_pd", "krein_indef", "materialised", "sk_rbf_ridge", "sk_kernel_ridge")
            )
            + f" | {r['loadavg_before'][0]:.1f}/{r['loadavg_after'][0]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run; writes nothing")
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 400_000])
    ap.add_argument("--s", type=int, nargs="+", default=[256, 1024, 2048])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-gb", type=float, default=4.0, help="skip methods needing more memory")
    ap.add_argument("--kernel-ridge-max", type=int, default=10_000)
    ap.add_argument("--out", type=Path, default=RESULTS / "krein")
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="cpu: process CPU time, numba and BLAS on one thread (robust on a shared machine)",
    )
    args = ap.parse_args(argv)
    global CLOCK
    limiter = contextlib.nullcontext()
    if args.clock == "cpu":
        CLOCK = time.process_time
        numba.set_num_threads(1)
        limiter = threadpool_limits(1)
    if args.quick:
        args.n, args.s, args.repeats = [2000], [64], 1
    info = {
        "cpu_count": os.cpu_count(),
        "threads": numba.get_num_threads(),
        "clock": args.clock,
        "loadavg_start": os.getloadavg(),
    }
    X_test, y_test = data(20_000, seed=2)
    with limiter:
        rows = _run(args, info, X_test, y_test)
    info["loadavg_end"] = os.getloadavg()
    print(markdown(rows, info))
    return rows


def _run(args, info, X_test, y_test):
    rows = []
    for n in args.n:
        for s in args.s:
            row = bench_case(n, s, args.repeats, args.max_gb, args.kernel_ridge_max, X_test, y_test)
            rows.append(row)
            print(
                f"n={n} s={s}: "
                + ", ".join(
                    f"{k} {row[k]:.2f} s"
                    for k in ("krein_pd", "krein_indef", "materialised", "sk_rbf_ridge", "sk_kernel_ridge")
                    if row.get(k) is not None
                )
                + f"; load {row['loadavg_before'][0]:.1f}/{row['loadavg_after'][0]:.1f}",
                flush=True,
            )
            if not args.quick:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                info_now = dict(info, loadavg_end=os.getloadavg())
                args.out.with_suffix(".json").write_text(
                    json.dumps({"machine": info_now, "rows": rows}, indent=1)
                )
                args.out.with_suffix(".md").write_text(markdown(rows, info_now))
    return rows


if __name__ == "__main__":
    main()
