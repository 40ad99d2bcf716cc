"""Throughput of ``spectralkit._compiled.inverse_cdf_lookup`` (cubic Hermite inverse CDF).

Tables of K + 1 knots of the inverse CDF of the chi distribution with ``df`` degrees of freedom
(the norm law of a d-dimensional Gaussian frequency), in two layouts:

* ``uniform-u``: knots u_j at sorted uniform random positions (nearly equal cells);
* ``log-rho``: knots at the CDF values of log-spaced rho in [1e-3, 1e3] (what a tabulated radial
  law looks like: knots crowded near u = 0 and u = 1, a few wide cells in between).

For n uniform u it reports millions of lookups per second, per wall-clock second and per CPU
second of the process (the second is the per-core rate when other processes share the
machine), with numba limited to 1 and to 2 threads, and the numpy reference (searchsorted +
Hermite basis) for comparison. Target: >= 50 M lookups/s on one core.

Usage::

    python benchmarks/bench_lookup.py [--n 10000000] [--knots 256 2000 20000] [--json PATH]
"""

import argparse
import json
import os
import time

import numba
import numpy as np
import scipy.stats

from spectralkit import _compiled


def table(kind, K, df, rng):
    law = scipy.stats.chi(df)
    if kind == "uniform-u":
        u = np.concatenate([[0.0], np.sort(rng.uniform(0, 1, K - 1)), [1.0]])
        u = u[np.concatenate([[True], np.diff(u) > 0])]
        x = law.ppf(u)
        x[0], x[-1] = 0.0, law.ppf(1 - 1e-16)
    else:
        rho = np.concatenate([[0.0], np.logspace(-3, 3, K - 1)])
        u = law.cdf(rho)
        keep = np.concatenate([[True], np.diff(u) > 0])
        u, x = u[keep], rho[keep]
        u[-1] = 1.0
    pdf = np.maximum(law.pdf(x), 1e-300)
    slopes = 1.0 / pdf
    slopes[~np.isfinite(slopes)] = 1e300
    return u, x, np.minimum(slopes, 1e300)


def numpy_lookup(u, uk, xk, mk):
    j = np.clip(np.searchsorted(uk, u, side="right") - 1, 0, len(uk) - 2)
    h = uk[j + 1] - uk[j]
    t = (u - uk[j]) / h
    t2, t3 = t * t, t * t * t
    return (
        (2 * t3 - 3 * t2 + 1) * xk[j]
        + (t3 - 2 * t2 + t) * h * mk[j]
        + (-2 * t3 + 3 * t2) * xk[j + 1]
        + (t3 - t2) * h * mk[j + 1]
    )


def rate(fn, n, repeats):
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return n / np.median(wall) / 1e6, n / np.median(cpu) / 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--knots", type=int, nargs="+", default=[256, 2000, 20000])
    ap.add_argument("--df", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", type=str, default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    u = rng.uniform(0, 1, args.n)
    out = np.empty_like(u)
    rows = []
    print(f"n = {args.n}, load average {os.getloadavg()}")
    print("layout      K      threads  M/s (wall)  M/s (CPU)   numpy M/s")
    for kind in ("uniform-u", "log-rho"):
        for K in args.knots:
            uk, xk, mk = table(kind, K, args.df, rng)
            ref = numpy_lookup(u[:100_000], uk, xk, mk)
            np_wall, _ = rate(
                lambda uk=uk, xk=xk, mk=mk: numpy_lookup(u[:1_000_000], uk, xk, mk), 1_000_000, 3
            )
            for threads in (1, 2):
                if threads > numba.config.NUMBA_NUM_THREADS:
                    continue
                numba.set_num_threads(threads)
                wall, cpu = rate(
                    lambda uk=uk, xk=xk, mk=mk: _compiled.inverse_cdf_lookup(u, uk, xk, mk, out),
                    args.n,
                    args.repeats,
                )
                err = float(np.max(np.abs(out[:100_000] - ref) / (1 + np.abs(ref))))
                rows.append(
                    {
                        "layout": kind,
                        "knots": len(uk),
                        "threads": threads,
                        "mlookups_per_s_wall": wall,
                        "mlookups_per_s_cpu": cpu,
                        "numpy_mlookups_per_s": np_wall,
                        "max_rel_diff_vs_numpy": err,
                    }
                )
                print(
                    f"{kind:10s} {len(uk):6d}  {threads:5d}   {wall:10.1f}  {cpu:10.1f}  "
                    f"{np_wall:10.1f}   (max rel diff vs numpy {err:.1e})",
                    flush=True,
                )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"n": args.n, "loadavg": os.getloadavg(), "rows": rows}, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
