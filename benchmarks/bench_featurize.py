"""Featurization benchmark: spectralkit's fused random-feature transform vs scikit-learn RBFSampler.

For a Gaussian kernel exp(-r^2/2) (frequencies W ~ N(0, I_d)) and n rows of d-dimensional data,
for every (dtype, d, s, threads) this times, in the same process and run:

* ``ours``         ``spectralkit.features.RandomFeatures(gaussian(1), n_components=2 s,
                   method="rff").transform(X, out=buf)``: width 2 s ``[cos | sin]``, one GEMM
                   n x d x s (includes the public wrapper's input validation);
* ``ours_kernel``  the compiled kernel alone (``spectralkit._compiled.fused_features``);
* ``rbf_width``    ``sklearn.kernel_approximation.RBFSampler(gamma=0.5, n_components=2 s)``:
                   the same output width, a GEMM twice as large (n x d x 2 s);
* ``rbf_gemm``     ``RBFSampler(n_components=s)``: the same GEMM size, half the output width;
* the lower-bound ingredients: ``gemm`` (numpy ``matmul`` n x d x s into a preallocated
  buffer, BLAS at the same thread count), ``sincos`` (spectralkit's polynomial sincos of n x s
  values, parallel; ``numpy_sincos`` is reported for reference) and ``store`` (a parallel fill of
  the n x 2 s output). ``lower_bound = max(gemm + sincos, store)``.

Medians over ``--repeats`` timings after one warm-up call (numpy and scikit-learn: at most two
timings, no warm-up: nothing to compile, and they dominate the run time); ratios ``ours / lower_bound`` and
``rbf / ours``. RBFSampler allocates its output at every call (that is how it is used); ours
writes into a reused buffer (``out=``), as the library recommends.

Usage::

    python benchmarks/bench_featurize.py            # full run (minutes), writes results/
    python benchmarks/bench_featurize.py --quick    # tiny smoke run, prints only

Results: ``benchmarks/results/featurize.json`` and ``featurize.md``.
"""

import argparse
import gc
import json
import os
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np
import scipy
import sklearn
from sklearn.kernel_approximation import RBFSampler
from threadpoolctl import ThreadpoolController

from spectralkit import _compiled, kernels
from spectralkit.features import RandomFeatures

RESULTS = Path(__file__).resolve().parent / "results"


def machine_info():
    """CPU, core count, library versions, BLAS and load, for the record."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break  # first processor block only
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    cpu = fields.get("model name", platform.processor() or "unknown")
    if "cpu family" in fields:
        cpu += f" (family {fields['cpu family']}, model {fields.get('model', '?')})"
    flags = fields.get("flags", "").split()
    blas = [{k: v for k, v in lib.items() if k in ("internal_api", "version", "filepath",
                                                     "architecture", "num_threads")}
            for lib in ThreadpoolController().info() if lib.get("user_api") == "blas"]
    return {
        "cpu": cpu,
        "avx512f": "avx512f" in flags,
        "logical_cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "numba": numba.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "blas": blas,
        "loadavg_start": os.getloadavg(),
    }


CLOCK = time.perf_counter


def timeit(fn, repeats, warmup=True):
    """Median time of ``fn()`` over ``repeats`` calls (after one warm-up call: JIT, caches).

    The clock is wall time, or the process's CPU time with ``--clock cpu`` (one thread only: a
    per-core measure that time slicing by other processes on a shared machine does not inflate).
    """
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return float(np.median(times)), [float(t) for t in times]


def bench_case(n, d, s, dtype, threads, repeats, controller, rng):
    X = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(dtype)
    numba.set_num_threads(threads)
    row = {"n": n, "d": d, "s": s, "dtype": np.dtype(dtype).name, "threads": threads}
    times = {}
    with controller.limit(limits=threads, user_api="blas"):
        rf = RandomFeatures(kernels.gaussian(1.0), dim=d, n_components=2 * s, method="rff",
                            random_state=0).fit()
        out = np.empty((n, 2 * s), dtype=dtype)
        times["ours"] = timeit(lambda out=out: rf.transform(X, out=out), repeats)
        W = np.ascontiguousarray(rf.W_plus_, dtype=dtype)
        Wm = np.empty((0, d), dtype=dtype)
        sp = dtype(rf.scale_plus_)
        times["ours_kernel"] = timeit(
            lambda out=out: _compiled.fused_features(X, W, Wm, sp, 0.0, None, None, out, "sincos"),
            repeats)
        ref = np.hstack([np.cos(X[:64].astype(np.float64) @ rf.W_plus_.T),
                         np.sin(X[:64].astype(np.float64) @ rf.W_plus_.T)]) * rf.scale_plus_
        row["max_abs_error_first_rows"] = float(np.abs(out[:64] - ref).max())
        # Lower-bound ingredients (lambdas bind their buffers as defaults: they are del'd below).
        G = np.empty((n, s), dtype=dtype)
        WT = np.ascontiguousarray(W.T)
        times["gemm"] = timeit(lambda G=G: np.matmul(X, WT, out=G), repeats)
        flat = G.reshape(-1)
        S = np.empty_like(flat)
        Cc = np.empty_like(flat)
        times["sincos"] = timeit(lambda flat=flat, S=S, Cc=Cc: _compiled.sincos(flat, S, Cc), repeats)
        # Slow references (numpy, scikit-learn): no JIT to warm up, at most 2 timed calls.
        slow_reps = max(1, min(repeats, 2))
        times["numpy_sincos"] = timeit(lambda flat=flat, S=S, Cc=Cc: (np.sin(flat, out=S), np.cos(flat, out=Cc)),
                                       slow_reps, warmup=False)
        del S, Cc, G, flat
        times["store"] = timeit(lambda out=out: _compiled.fill(out, 1.0), repeats)
        del out
        gc.collect()
        # scikit-learn: same output width (GEMM 2x larger) and same GEMM size (half width).
        for key, m in (("rbf_width", 2 * s), ("rbf_gemm", s)):
            rbf = RBFSampler(gamma=0.5, n_components=m, random_state=0).fit(X[:10])
            assert rbf.random_weights_.dtype == dtype
            times[key] = timeit(lambda: rbf.transform(X), slow_reps, warmup=False)
            gc.collect()
    for k, (med, all_t) in times.items():
        row[k] = med
        row[k + "_all"] = all_t
    row["lower_bound"] = max(row["gemm"] + row["sincos"], row["store"])
    row["ours_over_bound"] = row["ours"] / row["lower_bound"]
    row["kernel_over_bound"] = row["ours_kernel"] / row["lower_bound"]
    row["speedup_same_width"] = row["rbf_width"] / row["ours"]
    row["speedup_same_gemm"] = row["rbf_gemm"] / row["ours"]
    row["gflops_ours"] = 2.0 * n * d * s / row["ours"] / 1e9
    row["loadavg"] = os.getloadavg()
    return row


def markdown(rows, info):
    lines = [
        f"Machine: {info['cpu']}, {info['logical_cpus']} logical CPUs, AVX-512: "
        f"{info['avx512f']}; numpy {info['numpy']}, numba {info['numba']}, scipy {info['scipy']}, "
        f"scikit-learn {info['sklearn']}. Load average at start {info['loadavg_start']}, at end "
        f"{info.get('loadavg_end')}.",
        "",
        f"Times in ms (medians, {info.get('clock', 'wall')} clock). `ours` = RandomFeatures.transform(X, out=) with width 2s "
        "[cos|sin]; `kernel` = the compiled kernel alone; `bound` = max(GEMM + sincos, store); "
        "`RBF 2s` = RBFSampler with the same output width (GEMM twice as large); `RBF s` = "
        "RBFSampler with the same GEMM size (half the width).",
        "",
        "| dtype | d | s | thr | ours | kernel | GEMM | sincos | store | bound | ours/bound "
        "| RBF 2s | RBF s | speedup (same width) | speedup (same GEMM) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ms = {k: 1e3 * r[k] for k in ("ours", "ours_kernel", "gemm", "sincos", "store",
                                       "lower_bound", "rbf_width", "rbf_gemm")}
        lines.append(
            f"| {r['dtype']} | {r['d']} | {r['s']} | {r['threads']} | {ms['ours']:.1f} | "
            f"{ms['ours_kernel']:.1f} | {ms['gemm']:.1f} | {ms['sincos']:.1f} | {ms['store']:.1f} | "
            f"{ms['lower_bound']:.1f} | {r['ours_over_bound']:.2f} | {ms['rbf_width']:.1f} | "
            f"{ms['rbf_gemm']:.1f} | {r['speedup_same_width']:.1f}x | {r['speedup_same_gemm']:.1f}x |")
    return "\n".join(lines) + "\n"


def write(out, rows, info):
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    out.with_suffix(".md").write_text(markdown(rows, info))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny smoke run; writes nothing")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dims", type=int, nargs="+", default=[16, 54, 256])
    ap.add_argument("--s", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "featurize")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: process CPU time, forces one thread (robust on a shared machine)")
    ap.add_argument("--no-write", action="store_true", help="print the table, write nothing")
    args = ap.parse_args(argv)
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.process_time
        args.threads = [1]
    if args.quick:
        args.n, args.dims, args.s, args.repeats = 4000, [16], [64], 2
    args.threads = [t for t in args.threads if t <= numba.config.NUMBA_NUM_THREADS]
    info = machine_info()
    controller = ThreadpoolController()
    rng = np.random.default_rng(20261121)
    rows = []
    for dtype in args.dtypes:
        for d in args.dims:
            for s in args.s:
                for threads in args.threads:
                    row = bench_case(args.n, d, s, np.dtype(dtype).type, threads, args.repeats,
                                     controller, rng)
                    rows.append(row)
                    print(f"{dtype} d={d} s={s} threads={threads}: ours {1e3 * row['ours']:.1f} ms, "
                          f"bound {1e3 * row['lower_bound']:.1f} ms ({row['ours_over_bound']:.2f}x), "
                          f"RBF same width {row['speedup_same_width']:.1f}x slower, "
                          f"same GEMM {row['speedup_same_gemm']:.1f}x slower", flush=True)
                    if not (args.quick or args.no_write):  # keep partial results of long runs
                        write(args.out, rows, dict(info, loadavg_end=os.getloadavg(), n=args.n))
    info["loadavg_end"] = os.getloadavg()
    info["n"] = args.n
    info["feature_path"] = "spectralkit.features.RandomFeatures.transform (and the raw kernel)"
    info["clock"] = args.clock
    if not (args.quick or args.no_write):
        write(args.out, rows, info)
        print(f"wrote {args.out.with_suffix('.json')} and {args.out.with_suffix('.md')}")
    else:
        print(markdown(rows, info))
    return rows


if __name__ == "__main__":
    main()
