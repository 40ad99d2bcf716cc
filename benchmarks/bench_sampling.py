"""Benchmark: tabulated norm sampling (throughput, 1 core) and table build time per library kernel.

For every library kernel and d in {3, 16}: build the spectral measure, then the RadialSampler of
each Jordan part with mass > 0 (time = ``build_time``: adaptive knots + quadrature + checks), and
measure the throughput of ``sample_from_uniforms`` on 10^7 uniforms with numba limited to one
thread (median of 5 runs; the head lookup is the compiled cubic Hermite table, tail draws by
rejection are included when the law has a tail). The exact family samplers' ``sample_norms`` are
timed for comparison. Kernels whose measure has infinite mass in that d are listed with their
verdict and skipped.

Writes ``benchmarks/results/sampling.json``. Run: ``python benchmarks/bench_sampling.py [--quick]``.
"""

import argparse
import json
import os
import platform
import statistics
import time

import numba
import numpy as np

from spectralkit import kernels
from spectralkit.exceptions import DivergentMassError
from spectralkit.measures import SpectralMeasure
from spectralkit.sampling import RadialSampler, exact_sampler

KERNELS = [
    kernels.gaussian(1.0),
    kernels.laplacian(1.0),
    kernels.matern(1.5, 1.0),
    kernels.matern(2.5, 1.0),
    kernels.exponential_power(1.5, 1.0),
    kernels.rational_quadratic(1.0, 1.0),
    kernels.delta_gaussian(1.0, 10.0),
    kernels.spherical_polynomial(2.0, 2),
    kernels.spherical_polynomial(3.0, 1),
    kernels.ntk_relu_sphere(),
    kernels.arccos0_sphere(),
    kernels.arccos1_sphere(),
]


def _median_rate(fn, n, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return n / statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^6 uniforms, 3 repeats")
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        help="kernel name prefixes to skip (e.g. exponential_power: its measure takes minutes)",
    )
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "sampling.json"))
    args = parser.parse_args()
    n = 10**6 if args.quick else 10**7
    repeats = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    u = rng.random(n)
    numba.set_num_threads(1)
    rows = []
    for kernel in KERNELS:
        if any(kernel.name.startswith(p) for p in args.skip):
            print(f"{kernel.name:40s} skipped (--skip)")
            continue
        for dim in (3, 16):
            row = {"kernel": kernel.name, "dim": dim}
            t0 = time.perf_counter()
            measure = SpectralMeasure(kernel, dim)
            try:
                masses = {+1: measure.mass_plus.value, -1: measure.mass_minus.value}
            except DivergentMassError as exc:
                row.update(verdict="DIVERGENT", reason=exc.reason)
                rows.append(row)
                print(f"{kernel.name:40s} d={dim:2d}  DIVERGENT")
                continue
            row["measure_seconds"] = time.perf_counter() - t0
            row["mass_plus"], row["mass_minus"] = masses[+1], masses[-1]
            for sign in (+1, -1):
                if masses[sign] <= 0:
                    continue
                s = RadialSampler(measure, sign)
                s.sample_from_uniforms(u[:10_000], rng)  # JIT warm-up
                rate = _median_rate(lambda s=s: s.sample_from_uniforms(u, rng), n, repeats)
                key = "plus" if sign > 0 else "minus"
                row[key] = {
                    "build_seconds": s.build_time,
                    "n_knots": s.n_knots,
                    "u_error": s.u_error,
                    "lobes": len(s.lobes),
                    "tail_weight": float(s.weights[-1]),
                    "norms_per_second": rate,
                }
                print(
                    f"{kernel.name:40s} d={dim:2d} {key:5s} build {s.build_time:6.3f} s  knots {s.n_knots:6d}  "
                    f"u_error {s.u_error:.1e}  lobes {len(s.lobes):4d}  tail {s.weights[-1]:.1e}  "
                    f"{rate / 1e6:7.1f} M norms/s"
                )
            ex = exact_sampler(kernel, dim)
            if ex is not None:
                ex.sample_norms(1000, rng)
                row["exact_norms_per_second"] = _median_rate(
                    lambda ex=ex: ex.sample_norms(n, rng), n, repeats
                )
                print(f"{'':40s}        exact sampler {row['exact_norms_per_second'] / 1e6:7.1f} M norms/s")
            rows.append(row)
    result = {
        "description": "RadialSampler build time and sample_from_uniforms throughput (numba 1 thread)",
        "n_uniforms": n,
        "repeats": repeats,
        "numba_threads": 1,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "numba": numba.__version__,
            "cpu_count": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
        "rows": rows,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
