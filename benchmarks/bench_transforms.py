"""Derivation time of the spectral density mu of one kernel (``transform_atom``) per kernel and d.

For each (kernel, d in {1, 3, 16}) a fresh Python process (cold: no caches) measures

- ``dispatch``: ``transform_atom`` (closed form -> verified sympy -> numeric), summed over the
  atoms of a combination, with the method used and the reported errors;
- ``numeric``: ``numeric_transform`` alone (graded Gauss-Legendre head + steepest-descent tail),
  including the kernel analysis (sympy series, the dominant cost for the sphere kernels), with
  the analysis time reported separately, and the cost of evaluating mu at 10^5 points.

Kernels: the library (except the log kernel, which has no measure) and three formulas that no
closed form covers. Run ``python benchmarks/bench_transforms.py [--quick]``; prints a table and
writes ``benchmarks/results/transforms.json``. Not a timed test.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

KERNELS = [
    "gaussian",
    "laplacian",
    "matern:nu=1.5",
    "rational_quadratic:alpha=2",
    "exponential_power:alpha=1.5",
    "delta_gaussian:sigma1=1,sigma2=10",
    "spherical_polynomial:a=2,p=2",
    "spherical_polynomial:a=3,p=1",
    "ntk_relu_sphere",
    "arccos0_sphere",
    "arccos1_sphere",
    "exp(-r)*(1 + r)",
    "exp(-r**2/2)*cos(r)",
    "1/(1 + r**2)**2",
]
DIMS = [1, 3, 16]

CHILD = r"""
import json, sys, time
import numpy as np
from spectralkit.kernels import from_spec
from spectralkit.transforms import transform_atom, numeric_transform
from spectralkit.kernels._analysis import analyze
spec, dim, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
kernel = from_spec(spec)
out = {}
try:
    if mode == "dispatch":
        t0 = time.perf_counter()
        ts = [transform_atom(atom, dim) for _, atom in kernel.terms]
        out["seconds"] = time.perf_counter() - t0
        out["method"] = ",".join(sorted({t.method for t in ts}))
        out["rel_error"] = max(t.rel_error for t in ts)
        out["abs_error"] = max(t.abs_error for t in ts)
    else:
        t0 = time.perf_counter()
        for _, atom in kernel.terms:
            analyze(atom)
        out["analysis_seconds"] = time.perf_counter() - t0
        ts = [numeric_transform(atom, dim) for _, atom in kernel.terms]
        out["seconds"] = time.perf_counter() - t0
        out["rel_error"] = max(t.rel_error for t in ts)
        out["abs_error"] = max(t.abs_error for t in ts)
        rho = np.geomspace(1e-3, 1e6, 100000)
        t0 = time.perf_counter()
        for t in ts:
            t.mu(rho)
        out["eval_1e5_seconds"] = time.perf_counter() - t0
        out["rho_x"] = min(t.mu.rho_x for t in ts)
except Exception as exc:  # report, do not crash the benchmark
    out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def run_child(spec, dim, mode):
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, spec, str(dim), mode], capture_output=True, text=True, timeout=900
        )
    except subprocess.TimeoutExpired:
        return {"error": "timeout after 900 s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = proc.stderr.strip().splitlines()
        return {"error": tail[-1] if tail else "no output"}
    return json.loads(lines[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d = 3 only, four kernels")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "transforms.json")
    )
    args = parser.parse_args(argv)
    kernels = KERNELS[:4] if args.quick else KERNELS
    dims = [3] if args.quick else DIMS
    rows = []
    meta = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": os.getloadavg(),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)

    def save():  # after every row, so an interrupted run keeps what it measured
        with open(args.out, "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1)

    head = (
        f"{'kernel':38s} {'d':>3s} {'method':44s} {'dispatch s':>10s} {'numeric s':>9s} "
        f"{'analysis s':>10s} {'rel err':>8s} {'eval 1e5':>8s}"
    )
    print(head)
    print("-" * len(head))
    for spec in kernels:
        for dim in dims:
            disp = run_child(spec, dim, "dispatch")
            num = run_child(spec, dim, "numeric")
            rows.append({"kernel": spec, "dim": dim, "dispatch": disp, "numeric": num})

            def f(d, key, fmt):
                return format(d[key], fmt) if key in d else "-"

            print(
                f"{spec:38s} {dim:3d} {disp.get('method', disp.get('error', '?'))[:44]:44s} "
                f"{f(disp, 'seconds', '10.2f')} {f(num, 'seconds', '9.2f')} "
                f"{f(num, 'analysis_seconds', '10.2f')} {f(num, 'rel_error', '8.1e')} "
                f"{f(num, 'eval_1e5_seconds', '8.3f')}"
                + (f"   numeric error: {num['error']}" if "error" in num else ""),
                flush=True,
            )
            save()
    meta["load_average_end"] = os.getloadavg()
    save()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
