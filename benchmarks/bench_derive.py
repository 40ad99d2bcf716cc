"""Derivation time of spectral measures per library kernel and dimension (issue: core).

Measures, for each (kernel, d), in a fresh Python process:

- ``cold``: ``check_rkks`` with empty caches (transform + Jordan split + masses + verdict),
- ``disk``: ``check_rkks`` in a second fresh process that finds the JSON disk cache,
- ``memory``: a repeated ``check_rkks`` in the same process.

Targets on the 2-core machine: < 2 s cold for closed forms and < 10 s for numeric ones in d = 16,
< 20 ms from cache. Not a timed test: run ``python benchmarks/bench_derive.py [--quick]``; results go
to ``benchmarks/results/derive.json`` and a markdown table to ``benchmarks/results/derive.md``.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

KERNELS = [
    "gaussian", "laplacian", "matern:nu=1.5", "matern:nu=0.8", "rational_quadratic:alpha=2",
    "exponential_power:alpha=1.5", "exponential_power:alpha=0.5", "delta_gaussian:sigma1=1,sigma2=10",
    "spherical_polynomial:a=2,p=2", "spherical_polynomial:a=3,p=1", "ntk_relu_sphere", "arccos0_sphere",
    "arccos1_sphere", "log_kernel",
]

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import spectralkit as sk
from spectralkit.measures import check_rkks
t_import = time.perf_counter() - t0
spec, dim, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
try:
    rep = check_rkks(spec, dim, cache_dir=cache)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    check_rkks(spec, dim, cache_dir=cache)
    again = time.perf_counter() - t0
    out = {"seconds": first, "memory_seconds": again, "verdict": rep.verdict, "method": rep.method,
           "import_seconds": t_import}
except Exception as exc:  # report, do not crash the benchmark
    out = {"error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""


def run_child(spec, dim, cache_dir):
    proc = subprocess.run([sys.executable, "-c", CHILD, spec, str(dim), cache_dir],
                          capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no output"}
    return json.loads(lines[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two kernels, d = 3 only")
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 3, 16])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    kernels = KERNELS[:2] if args.quick else KERNELS
    dims = [3] if args.quick else args.dims
    rows = []
    for spec in kernels:
        for dim in dims:
            with tempfile.TemporaryDirectory() as cache:
                cold = run_child(spec, dim, cache)
                disk = run_child(spec, dim, cache) if "error" not in cold else {}
            row = {"kernel": spec, "dim": dim, **{f"cold_{k}": v for k, v in cold.items()},
                   "disk_seconds": disk.get("seconds")}
            rows.append(row)
            print(f"{spec:38s} d={dim:3d}  " + (
                f"cold {cold['seconds']:7.3f} s  disk {row['disk_seconds'] * 1e3:8.2f} ms  "
                f"memory {cold['memory_seconds'] * 1e6:8.1f} us  {cold['verdict']:9s} {cold['method']}"
                if "error" not in cold else f"ERROR {cold['error']}"), flush=True)
    meta = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "derive.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    with open(os.path.join(args.out, "derive.md"), "w") as fh:
        fh.write("| kernel | d | verdict | method | cold (s) | from disk cache (ms) | from memory (µs) |\n")
        fh.write("|---|---|---|---|---|---|---|\n")
        for r in rows:
            if "cold_error" in r:
                fh.write(f"| {r['kernel']} | {r['dim']} | error: {r['cold_error']} | | | | |\n")
            else:
                fh.write(f"| {r['kernel']} | {r['dim']} | {r['cold_verdict']} | {r['cold_method']} | "
                         f"{r['cold_seconds']:.3f} | {r['disk_seconds'] * 1e3:.2f} | "
                         f"{r['cold_memory_seconds'] * 1e6:.1f} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
