"""Kernel-learning benchmark: fit time and memory of spectralkit.learn against the number of points m.

Data: the first m rows of ijcnn1's training file (d = 22, labels +-1, min-max scaled; real
data), learning from the ideal kernel (all m^2 ordered pairs enter the objective). Solvers:

* ``exact``        Gaussian hyper-KRR on all distinct pairs (only m <= 70: 2,485 pairs);
* ``nystroem``     Gaussian hyper-KRR, 30 landmark points (465 landmark pairs) per subset,
                   divide-and-conquer with v = ceil(m / 500) subsets (about 500 points each);
* ``nystroem_svr`` the same with hyper-SVR (C = 1e3);
* ``wishart``      Wishart hyper-KRR, as ``nystroem``;
* ``radial``       radial hyper-KRR on all m(m+1)/2 pairs (one binned distance pass);
* ``radial_svr``   radial hyper-SVR on all pairs.

``--million``: the radial hyper-KRR and hyper-SVR with their default (scaling) settings on 10^6
synthetic points in d = 10 (standard normal inputs, labels sign(x_1 x_2 + x_3^2 - 1); ijcnn1 has
50,000 rows): beyond 2^27 distinct pairs the learners sample 2^24 ordered pairs (two independent
halves whose spread gives ``sampling_error_``), a cost independent of m; the m = 10^6 fit must
stay under 60 s wall on the 2-core machine. Each row also records the intercept and, per decile
of the pair distance (10^5 sampled pairs), the target's mean E[Y | r] and the fit k*(r) + b: the
SVR's epsilon-insensitive loss fits a conditional median, for +-1 targets the sign of E[Y | r],
so where one sign holds at every distance its learned kernel is (nearly) zero and b carries the
fit. Writes results/learn_million.json.

``--end-to-end``: on ijcnn1 and cod-rna, learn a radial kernel from the ideal kernel of the
training labels (``HyperKernelRidge("radial")``, lambda and the scale by 3-fold CV on held-out
pairs; beyond 16,384 points on 2^24 sampled pairs), featurize it with
``RandomFeatures(k.as_kernel(), n_components=W)`` (signed features [Phi+ | Phi-]) and fit a
linear model (``RidgeClassifierCV``); against the same linear model on Gaussian random features
of the same width whose lengthscale is chosen by 3-fold CV over {1/8, 1/4, 1/2, 1, 2} times the
median pairwise distance. Test accuracy on the whole test set. Writes
results/learn_end_to_end.json.

Each (solver, m) runs in a fresh subprocess (so compilation caches are warm from a first
throw-away case but memory is measured per case): wall-clock fit time, and peak resident memory
of the process minus its resident memory just before ``fit`` (data loaded, modules imported).
The load average before and after each case is recorded: the machine is shared.

Usage::

    python benchmarks/bench_learn.py              # full run, writes results/learn.json and learn.md
    python benchmarks/bench_learn.py --quick      # m in {500, 1000}, prints only
    python benchmarks/bench_learn.py --report     # rewrite learn.md from learn.json
"""

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
SIZES = (500, 1000, 2000, 5000, 10000, 20000)
SOLVERS = ("exact", "nystroem", "nystroem_svr", "wishart", "radial", "radial_svr")
#: largest m per solver (beyond: hours on the shared box, or impossible for exact)
MAX_M = {
    "exact": 70,
    "nystroem": 20000,
    "nystroem_svr": 5000,
    "wishart": 5000,
    "radial": 20000,
    "radial_svr": 20000,
}


LENGTH_MULTIPLIERS = (0.125, 0.25, 0.5, 1.0, 2.0)


def _linear(F_tr, y_tr):
    from sklearn.linear_model import RidgeClassifierCV

    return RidgeClassifierCV(alphas=np.logspace(-3, 3, 7)).fit(F_tr, y_tr)


def end_to_end(name, width, seed=0):
    """One dataset of ``--end-to-end`` (see the module docstring); returns the record."""
    sys.path.insert(0, str(ROOT))
    from sklearn.model_selection import StratifiedKFold

    from benchmarks.papers import datasets as D
    from spectralkit import RandomFeatures, kernels
    from spectralkit.learn import HyperKernelRidge

    ds = D.load(name, seed=seed)
    Xtr, ytr, Xte, yte = ds.X_train, ds.y_train, ds.X_test, ds.y_test
    out = {"dataset": name, "n_train": int(len(ytr)), "n_test": int(len(yte)), "dim": int(Xtr.shape[1])}
    out["majority"] = float(max(np.mean(yte == c) for c in np.unique(yte)))

    t0 = time.perf_counter()
    est = HyperKernelRidge("radial", alpha=[1e-6, 1e-5, 1e-4, 1e-3], cv=3, random_state=seed).fit(Xtr, ytr)
    out["learn_s"] = time.perf_counter() - t0
    print(f"{name}: learned in {out['learn_s']:.0f} s", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    kernel = est.kernel_.as_kernel()
    rf = RandomFeatures(kernel, dim=kernel.dim, n_components=width, random_state=seed).fit()
    out["featurize_fit_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = _linear(rf.transform(Xtr), ytr)
    out["learned_acc"] = float(model.score(rf.transform(Xte), yte))
    out["learned_linear_s"] = time.perf_counter() - t0
    print(
        f"{name}: learned kernel {out['learned_acc']:.4f} ({out['learned_linear_s']:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    mp, mm = est.kernel_.masses()
    out["learned"] = {
        "alpha": est.alpha_,
        "lengthscale": est.lengthscale_,
        "n_pairs": int(est.n_pairs_),
        "sampling_error": est.sampling_error_,
        "binning_error": est.binning_error_,
        "mass_plus": mp.value,
        "mass_minus": mm.value,
    }

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    sub = rng.choice(len(ytr), min(2000, len(ytr)), replace=False)
    d2 = np.sum((Xtr[sub][:, None] - Xtr[sub][None]) ** 2, axis=-1)
    median = float(np.sqrt(np.median(d2[np.triu_indices(len(sub), 1)])))
    folds = list(StratifiedKFold(3, shuffle=True, random_state=seed).split(Xtr, ytr))
    cv = {}
    for mult in LENGTH_MULTIPLIERS:
        g = RandomFeatures(
            kernels.gaussian(mult * median), dim=Xtr.shape[1], n_components=width, random_state=seed
        )
        g.fit()
        F = g.transform(Xtr)
        cv[mult] = float(np.mean([_linear(F[a], ytr[a]).score(F[b], ytr[b]) for a, b in folds]))
        print(f"{name}: Gaussian x{mult}: CV {cv[mult]:.4f}", file=sys.stderr, flush=True)
    best = max(cv, key=cv.get)
    g = RandomFeatures(
        kernels.gaussian(best * median), dim=Xtr.shape[1], n_components=width, random_state=seed
    ).fit()
    model = _linear(g.transform(Xtr), ytr)
    out["gaussian_acc"] = float(model.score(g.transform(Xte), yte))
    out["gaussian_s"] = time.perf_counter() - t0
    out["gaussian"] = {"lengthscale": best * median, "multiplier": best, "cv": cv}
    return out


def _child(solver, m):
    """Run one case in this process; print a JSON line."""
    sys.path.insert(0, str(ROOT))

    from benchmarks.papers import datasets as D
    from spectralkit.learn import HyperKernelRidge, HyperKernelSVR

    if solver.endswith("_million"):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(m, 10))
        y = np.where(X[:, 0] * X[:, 1] + X[:, 2] ** 2 > 1.0, 1, -1)
    else:
        ds = D.load("ijcnn1")
        X, y = ds.X_train[:m], ds.y_train[:m]
    v = max(1, math.ceil(m / 500))
    est = {
        "exact": lambda: HyperKernelRidge(alpha=1e-4, solver="exact"),
        "nystroem": lambda: HyperKernelRidge(
            alpha=1e-4, solver="nystroem", n_landmarks=30, n_partitions=v, random_state=0
        ),
        "nystroem_svr": lambda: HyperKernelSVR(
            C=1e3, solver="nystroem", n_landmarks=30, n_partitions=v, random_state=0
        ),
        "wishart": lambda: HyperKernelRidge(
            "wishart", alpha=1e-4, solver="nystroem", n_landmarks=30, n_partitions=v, random_state=0
        ),
        "radial": lambda: HyperKernelRidge("radial", alpha=1e-4),
        "radial_svr": lambda: HyperKernelSVR("radial", C=1e3),
        "radial_million": lambda: HyperKernelRidge("radial", alpha=1e-4, random_state=0),
        "radial_svr_million": lambda: HyperKernelSVR("radial", C=1e3, random_state=0),
    }[solver]()
    rss0 = _rss_mb()
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out = {
        "solver": solver,
        "m": m,
        "seconds": seconds,
        "peak_mb": peak,
        "rss_before_mb": rss0,
        "extra_mb": max(0.0, peak - rss0),
        "n_pairs": int(est.n_pairs_),
        "partitions": est.n_partitions_,
        "load_before": load0,
        "load_after": os.getloadavg(),
        "solver_used": est.solver_,
        "binning_error": getattr(est, "binning_error_", None),
        "sampling_error": getattr(est, "sampling_error_", None),
        "k0": float(est.kernel_.value_at_zero()) if hasattr(est.kernel_, "value_at_zero") else None,
        "n_landmarks": est.n_landmarks if est.solver_ == "nystroem" else None,
        "n_partitions": est.n_partitions_,
        "intercept": float(est.intercept_),
    }
    if solver.endswith("_million"):
        out.update(_distance_profile(est, X, y))
    print(json.dumps(out))


def _distance_profile(est, X, y, n=100_000):
    """What the learned radial kernel fits, per decile of the pair distance (10^5 sampled pairs).

    The ideal kernel's conditional mean E[Y | r] = 2 P(same class | r) - 1 is what hyper-KRR
    estimates; the epsilon-insensitive loss of hyper-SVR estimates a conditional median, which
    for +-1 targets is the sign of E[Y | r]: constant wherever one sign holds for every r.
    """
    rng = np.random.default_rng(1)
    I, J = rng.integers(len(y), size=n), rng.integers(len(y), size=n)
    r = np.linalg.norm(X[I] - X[J], axis=1)
    edges = np.quantile(r, np.linspace(0.0, 1.0, 11))
    mid = 0.5 * (edges[:-1] + edges[1:])
    which = np.clip(np.searchsorted(edges, r, side="right") - 1, 0, 9)
    same = (y[I] == y[J]).astype(float)
    mean_y = [float(2.0 * same[which == k].mean() - 1.0) for k in range(10)]
    return {
        "decile_mid_distance": mid.tolist(),
        "target_mean_per_decile": mean_y,
        "fit_per_decile": (np.asarray(est.kernel_(mid)) + est.intercept_).tolist(),
    }


def _rss_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024.0
    return float("nan")


def _run_case(solver, m):
    proc = subprocess.run(
        [sys.executable, __file__, "--child", solver, str(m)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=7200,
    )
    if proc.returncode != 0:
        return {"solver": solver, "m": m, "error": proc.stderr.strip().splitlines()[-1][:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_report(info, rows):
    """Write results/learn.md from the rows of a run (also ``--report``: from results/learn.json)."""
    lines = [
        (
            f"Kernel-learning fit time and memory on ijcnn1 rows (d = 22), {info['date_utc']} UTC, "
            f"{info['cpus']} logical CPUs (1-min load average per case below; a case's own subprocess "
            "counts). `pairs` = the distinct pairs entering the solve: m(m+1)/2 "
            "for the all-pairs solvers, the sum over the subsets for divide-and-conquer."
        ),
        "",
        "| solver | m | pairs | subsets | fit s | extra memory MB | load before → after (1 min) | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['solver']} | {r['m']} | — | — | — | — | — | error: {r['error']} |")
            continue
        note = f"binning error ≤ {r['binning_error']:.1g}" if r.get("binning_error") is not None else ""
        lines.append(
            f"| {r['solver']} | {r['m']} | {r['n_pairs']:,} | {r['n_partitions']} | "
            f"{r['seconds']:.2f} | {r['extra_mb']:.0f} | {r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} | "
            f"{note} |"
        )
    (RESULTS / "learn.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--child", nargs=2, metavar=("SOLVER", "M"))
    p.add_argument("--solvers", nargs="+", choices=SOLVERS, default=list(SOLVERS))
    p.add_argument("--sizes", nargs="+", type=int, default=None)
    p.add_argument("--report", action="store_true", help="rewrite results/learn.md from results/learn.json")
    p.add_argument("--million", action="store_true", help="the radial learners on 10^6 points in d = 10")
    p.add_argument(
        "--end-to-end", action="store_true", help="learned radial + signed RF vs tuned Gaussian RF"
    )
    p.add_argument("--datasets", nargs="+", default=["ijcnn1", "cod-rna"])
    p.add_argument("--width", type=int, default=2000)
    args = p.parse_args(argv)
    if args.report:
        saved = json.loads((RESULTS / "learn.json").read_text())
        write_report(saved["info"], saved["rows"])
        return 0
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    if args.end_to_end:
        rows = []
        for name in args.datasets:
            rows.append(end_to_end(name, args.width))
            print(json.dumps(rows[-1]), flush=True)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "learn_end_to_end.json").write_text(
            json.dumps({"width": args.width, "rows": rows}, indent=1)
        )
        return 0
    if args.million:
        _run_case("radial_million", 2000)  # compile / warm the numba caches once
        rows = []
        for solver in ("radial_million", "radial_svr_million"):
            row = _run_case(solver, 10**6)
            rows.append(row)
            print(json.dumps(row), flush=True)
        RESULTS.mkdir(exist_ok=True)
        info = {"date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "cpus": os.cpu_count()}
        (RESULTS / "learn_million.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
        return 0
    sizes = args.sizes or ((500, 1000) if args.quick else SIZES)
    _run_case("radial", 500)  # compile / warm the numba caches once
    _run_case("nystroem_svr", 500)
    rows = []
    for solver in args.solvers:
        ms = [m for m in sizes if m <= MAX_M[solver]] or ([MAX_M[solver]] if solver == "exact" else [])
        for m in ms:
            row = _run_case(solver, m)
            rows.append(row)
            print(json.dumps(row), flush=True)
    info = {
        "python": platform.python_version(),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }
    if args.quick:
        return 0
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "learn.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    write_report(info, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
