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
stay under 60 s wall on the 2-core machine. Writes results/learn_million.json.

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
    }
    print(json.dumps(out))


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
    args = p.parse_args(argv)
    if args.report:
        saved = json.loads((RESULTS / "learn.json").read_text())
        write_report(saved["info"], saved["rows"])
        return 0
    if args.child:
        _child(args.child[0], int(args.child[1]))
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
