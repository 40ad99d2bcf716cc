"""Featurization benchmark: spectralkit's random-feature transform vs scikit-learn's RBFSampler.

Gaussian kernel exp(-r^2/2) (frequencies W ~ N(0, I_d)), n rows of d-dimensional data
X ~ N(0, I/d). For every (dtype, d, threads), with the output width w = 1024 for d <= 54 and
2048 for d >= 128 (s = w/2 frequencies, features [cos | sin]), this times in one process:

* ``plain``      ``RandomFeatures(gaussian(1), n_components=w, method="rff").transform(X)``: the
                 call users make (a new output each call);
* ``buffered``   the same into a reused buffer, ``transform(X, out=buf)``;
* ``kernel``     the compiled kernel alone (``spectralkit._compiled.fused_features``, buffered);
* ``rbf_width``  ``sklearn.kernel_approximation.RBFSampler(gamma=0.5, n_components=w)``: the same
                 output width, a GEMM twice as large (n x d x w);
* ``rbf_gemm``   ``RBFSampler(n_components=s)``: the same GEMM size (n x d x s), half the width;
* the lower-bound ingredients: ``gemm`` (numpy ``matmul`` n x d x s into a preallocated buffer,
  BLAS at the same thread count), ``sincos`` (spectralkit's polynomial sincos of the n x s
  products, parallel) and ``store`` (a parallel fill of an n x w output with plain stores;
  ``store_streaming`` with streaming stores, usually 2-3x faster):
  ``lower_bound = max(gemm + sincos, the faster store)``, and ``gemm_store = gemm + store`` (the
  yardstick of the issue: the parts measured apart; a transform that overlaps them runs under it);
* ``fresh_store``: the same fill into a new ``numpy.empty`` array at every call: the price of
  fresh memory (page faults, zeroing) that any transform allocating its output pays, as
  RBFSampler does at every call (and ``plain`` at its first).

Timing protocol: after one warm-up call of each method (JIT, first touch; the warm-up time of
``plain`` is recorded as ``plain_first``: a first call in a fresh process pays for fresh memory),
``--repeats`` rounds (rounded up to an even number) are run; each round times every method once,
in an order rotated from one pair of rounds to the next and reversed in the second round of a
pair, so slow phases of a shared machine hit all methods alike and each method comes right after
another as often as right before it (the call right after a different method pays 5-10 % more,
whichever it is: an unbalanced order showed as a difference between the paths). Medians over
the rounds are reported, with every timing, the relative spread ``(max - min) / median`` of each
method and the load average before and after each configuration (the machine-noise
indicators). RBFSampler allocates a new output at every call: that is how it is used.

With ``--clock cpu`` every timing is the process's CPU time and only one thread is used: a
per-core measure that time slicing by other processes does not inflate (shared caches and memory
bandwidth still do).

``--peer-threads T...`` times RBFSampler only at those thread counts (its single-threaded cos
dominates a thread sweep). ``--panels BYTES...`` instead times the compiled kernel for several
GEMM panel sizes (``_compiled.PANEL_BYTES``) beside the GEMM and the store, interleaved.

``--allocation`` instead compares, for three configurations (float64 d = 16, float32 and
float64 d = 256; ``--dims``/``--dtypes`` select among them) at the ``--threads`` counts, the
output allocation strategies of ``transform(X)`` that were measured to choose the library's: a
reused buffer, the library's recycled output (pages advised ``MADV_FREE`` when given back), the
same pool advising ``MADV_DONTNEED`` or nothing, ``numpy.empty`` at every call (the previous
behaviour), fresh anonymous mappings with and without transparent huge pages, and with
``MAP_POPULATE``.

``--device NAMESPACE[:DEVICE]`` (``torch:cuda``, ``cupy``, ``jax``, ``array_api_strict``) instead
times the Array API path with the data already on that device, float32 and float64: ``device``
(``transform`` of the device array, output on the device), ``by_hand`` (the same features written
by hand in that namespace: ``X @ W.T``, then ``[s cos | s sin]`` concatenated; the peer users
would write) and ``host`` (numpy in, numpy out: what a call through host memory costs, copies
included). A completed computation is forced by reading one element back after each call (GPU
libraries run asynchronously). Results: ``featurize-device.{json,md}``.

Usage::

    python benchmarks/bench_featurize.py            # full grid (~10 minutes), writes results/
    python benchmarks/bench_featurize.py --quick    # tiny smoke run, prints only
    python benchmarks/bench_featurize.py --threads 2 4 8 16 --dims 16 54 256   # a many-core machine
    python benchmarks/bench_featurize.py --device torch:cuda --n 200000 --dims 16 54 256

Results: ``benchmarks/results/featurize.json`` and ``featurize.md``.
"""

import argparse
import gc
import json
import mmap
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

from spectralkit import _compiled, _runtime, kernels
from spectralkit.features import RandomFeatures

RESULTS = Path(__file__).resolve().parent / "results"
CLOCK = time.perf_counter
METHODS = (
    "plain",
    "buffered",
    "kernel",
    "rbf_width",
    "rbf_gemm",
    "gemm",
    "sincos",
    "store",
    "store_streaming",
    "fresh_store",
)


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
    blas = [
        {
            k: v
            for k, v in lib.items()
            if k in ("internal_api", "version", "filepath", "architecture", "num_threads")
        }
        for lib in ThreadpoolController().info()
        if lib.get("user_api") == "blas"
    ]
    thp = None
    try:
        thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        pass
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
        "transparent_hugepage": thp,
        "loadavg_start": os.getloadavg(),
    }


def width_for(d):
    """Output width of the grid: 1024 for d <= 54, 2048 above (as in the issue's table)."""
    return 1024 if d <= 54 else 2048


def interleaved(calls, repeats, min_time=0.0, max_rounds=60):
    """Warm-up time and timings of every callable, in rounds of rotated order.

    At least ``repeats`` rounds, more (up to ``max_rounds``) until the rounds took ``min_time``
    seconds of wall time (fast configurations get more rounds on a noisy machine); always an even
    number: a rotation forwards, then the same backwards.
    """
    names = list(calls)
    first = {}
    for name in names:
        t0 = CLOCK()
        calls[name]()
        first[name] = CLOCK() - t0
    times = {name: [] for name in names}
    start = time.perf_counter()
    r = 0
    # rounds come in pairs, one rotation forwards then backwards: a call right after a different
    # method runs measurably slower (5-10 % here, whichever method it is), and in a plain
    # rotation "plain" would precede "buffered" in all but one order out of len(names)
    while r < repeats or r % 2 or (time.perf_counter() - start < min_time and r < max_rounds):
        k = (r // 2) % len(names)
        order = names[k:] + names[:k]
        for name in order[::-1] if r % 2 else order:
            gc.collect()
            t0 = CLOCK()
            calls[name]()
            times[name].append(CLOCK() - t0)
        r += 1
    return first, times


def bench_case(n, d, dtype, threads, repeats, min_time, controller, rng, peers=True):
    width = width_for(d)
    s = width // 2
    X = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(dtype)
    numba.set_num_threads(threads)
    row = {
        "n": n,
        "d": d,
        "width": width,
        "s": s,
        "dtype": np.dtype(dtype).name,
        "threads": threads,
        "loadavg_before": os.getloadavg(),
    }
    with controller.limit(limits=threads, user_api="blas"):
        rf = RandomFeatures(
            kernels.gaussian(1.0), dim=d, n_components=width, method="rff", random_state=0
        ).fit()
        buf = np.empty((n, width), dtype=dtype)
        W = np.ascontiguousarray(rf.W_plus_, dtype=dtype)
        Wm = np.empty((0, d), dtype=dtype)
        sp = dtype(rf.scale_plus_)
        WT = np.ascontiguousarray(W.T)
        G = np.empty((n, s), dtype=dtype)
        flat = G.reshape(-1)
        SC = np.empty((2, n * s), dtype=dtype)
        rbf_w = RBFSampler(gamma=0.5, n_components=width, random_state=0).fit(X[:10])
        rbf_g = RBFSampler(gamma=0.5, n_components=s, random_state=0).fit(X[:10])
        if rbf_w.random_weights_.dtype != dtype:
            raise RuntimeError(f"RBFSampler did not keep {np.dtype(dtype).name}")
        calls = {
            "plain": lambda: rf.transform(X),
            "buffered": lambda: rf.transform(X, out=buf),
            "kernel": lambda: _compiled.fused_features(X, W, Wm, sp, 0.0, None, None, buf, "sincos"),
            "rbf_width": lambda: rbf_w.transform(X),
            "rbf_gemm": lambda: rbf_g.transform(X),
            "gemm": lambda: np.matmul(X, WT, out=G),
            "sincos": lambda: _compiled.sincos(flat, SC[0], SC[1]),
            "store": lambda: _compiled.fill(buf, 1.0),
            "store_streaming": lambda: _compiled.fill(buf, 1.0, stream=True),
            "fresh_store": lambda: _compiled.fill(np.empty((n, width), dtype=dtype), 1.0),
        }
        if not peers:  # RBFSampler's single-threaded cos dominates a thread sweep: timed where asked
            del calls["rbf_width"], calls["rbf_gemm"]
        first, times = interleaved(calls, repeats, min_time)
        out = rf.transform(X[:64])
        ref = (
            np.hstack(
                [
                    np.cos(X[:64].astype(np.float64) @ rf.W_plus_.T),
                    np.sin(X[:64].astype(np.float64) @ rf.W_plus_.T),
                ]
            )
            * rf.scale_plus_
        )
        row["max_abs_error_first_rows"] = float(np.abs(out - ref).max())
        row["bit_identical_plain_buffered"] = bool(np.array_equal(rf.transform(X), rf.transform(X, out=buf)))
    for name in METHODS:
        if name not in times:
            row[name] = row[name + "_spread"] = None
            continue
        t = np.array(times[name])
        row[name] = float(np.median(t))
        row[name + "_all"] = [float(v) for v in t]
        row[name + "_spread"] = float((t.max() - t.min()) / np.median(t))
    row["plain_first"] = first["plain"]
    row["lower_bound"] = max(row["gemm"] + row["sincos"], min(row["store"], row["store_streaming"]))
    # the issue's yardstick: the GEMM and a store of the output, measured apart in the same run
    row["gemm_store"] = row["gemm"] + row["store"]
    row["kernel_over_gemm_store"] = row["kernel"] / row["gemm_store"]
    row["plain_over_gemm_store"] = row["plain"] / row["gemm_store"]
    row["buffered_over_gemm_store"] = row["buffered"] / row["gemm_store"]
    row["panel_frequencies"] = _compiled.column_block(dtype, s)
    row["plain_over_buffered"] = row["plain"] / row["buffered"]
    # paired: plain and buffered run next to each other in every round
    paired = np.array(times["plain"]) / np.array(times["buffered"])
    row["plain_over_buffered_paired"] = float(np.median(paired))
    row["rounds"] = len(times["plain"])
    row["plain_over_bound"] = row["plain"] / row["lower_bound"]
    row["buffered_over_bound"] = row["buffered"] / row["lower_bound"]
    row["plain_over_gemm"] = row["plain"] / row["gemm"]
    for kind, peer in (("same_width", "rbf_width"), ("same_gemm", "rbf_gemm")):
        for path in ("plain", "buffered"):
            row[f"speedup_{path}_{kind}"] = None if row[peer] is None else row[peer] / row[path]
    gb = n * width * np.dtype(dtype).itemsize / 1e9
    row["first_touch_per_gb"] = (row["fresh_store"] - row["store"]) / gb
    row["noise"] = max(row[m + "_spread"] for m in ("plain", "buffered", "rbf_width") if row[m] is not None)
    row["loadavg_after"] = os.getloadavg()
    return row


def _mapped_output(shape, dtype, hugepage, populate):
    """A fresh anonymous mapping as an array (the allocation strategies compared by --allocation)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    size = -(-nbytes // (2 << 20)) * (2 << 20)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | (mmap.MAP_POPULATE if populate else 0)
    mm = mmap.mmap(-1, size, flags=flags)
    mm.madvise(mmap.MADV_HUGEPAGE if hugepage else mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(mm, dtype=dtype, count=int(np.prod(shape))).reshape(shape)


def _allocation_calls(rf, X, buf):
    shape, dtype = buf.shape, buf.dtype
    # the library's pool with the other advice on give-back (the default is MADV_FREE)
    pools = {
        advice: _runtime._OutputPool(_runtime.OUTPUT_POOL_MIN_BYTES, 1 << 40, 4, advice=advice)
        for advice in ("dontneed", None)
    }

    def into(out):
        return rf.transform(X, out=out)

    return {
        "reused buffer (out=)": lambda: into(buf),
        "recycled output (library)": lambda: rf.transform(X),
        "recycled, MADV_DONTNEED": lambda: into(pools["dontneed"].empty(shape, dtype)),
        "recycled, no advice": lambda: into(pools[None].empty(shape, dtype)),
        "numpy.empty each call": lambda: into(np.empty(shape, dtype=dtype)),
        "mmap + MADV_HUGEPAGE": lambda: into(_mapped_output(shape, dtype, True, False)),
        "mmap, 4 KiB pages": lambda: into(_mapped_output(shape, dtype, False, False)),
        "mmap + MAP_POPULATE + huge": lambda: into(_mapped_output(shape, dtype, True, True)),
    }


_ALLOCATION_CASES = ((np.float64, 16), (np.float32, 256), (np.float64, 256))


def allocation_study(n, repeats, controller, threads=(1, 2), dims=None, dtypes=None):
    """Where the time of transform(X) without out= went, and what each fix buys (medians, ms)."""
    rows = []
    cases = [
        (dtype, d)
        for dtype, d in _ALLOCATION_CASES
        if (dims is None or d in dims) and (dtypes is None or np.dtype(dtype).name in dtypes)
    ]
    for dtype, d in cases:
        width = width_for(d)
        X = (np.random.default_rng(0).standard_normal((n, d)) / np.sqrt(d)).astype(dtype)
        rf = RandomFeatures(
            kernels.gaussian(1.0), dim=d, n_components=width, method="rff", random_state=0
        ).fit()
        buf = np.empty((n, width), dtype=dtype)
        for t in threads:
            numba.set_num_threads(t)
            with controller.limit(limits=t, user_api="blas"):
                calls = _allocation_calls(rf, X, buf)
                _, times = interleaved(calls, repeats)
            row = {
                "dtype": np.dtype(dtype).name,
                "d": d,
                "width": width,
                "threads": t,
                "loadavg": os.getloadavg(),
            }
            row.update({k: float(np.median(v)) for k, v in times.items()})
            rows.append(row)
            print(row, flush=True)
    names = list(calls)
    lines = [
        "| dtype | d | width | thr | " + " | ".join(names) + " | load |",
        "|---" * (len(names) + 5) + "|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dtype']} | {r['d']} | {r['width']} | {r['threads']} | "
            + " | ".join(f"{1e3 * r[k]:.0f}" for k in names)
            + f" | {r['loadavg'][0]:.1f} |"
        )
    print("\n".join(lines))
    return rows


def _fmt(value, spec, scale=1.0, suffix=""):
    """A table cell: the value formatted, or "-" where it was not measured."""
    return "-" if value is None else f"{scale * value:{spec}}{suffix}"


def markdown(rows, info):
    lines = [
        f"Machine: {info['cpu']}, {info['logical_cpus']} logical CPUs, AVX-512: "
        f"{info['avx512f']}; numpy {info['numpy']}, numba {info['numba']}, scipy {info['scipy']}, "
        f"scikit-learn {info['sklearn']}; transparent huge pages: {info.get('transparent_hugepage')}. "
        f"n = {info.get('n')} rows. Load average (1, 5, 15 min) at start "
        f"{tuple(round(v, 2) for v in info['loadavg_start'])}, at end "
        f"{tuple(round(v, 2) for v in info.get('loadavg_end', ()))}.",
        "",
        f"Times in ms ({info.get('clock', 'wall')} clock), medians of interleaved rounds (at least "
        f"{info.get('repeats')}, more for fast rows); plain/buf (paired) is the median of the "
        "per-round ratios. `plain` = transform(X); `buffered` = "
        "transform(X, out=buf); `GEMM` = numpy's X @ W.T into a buffer (BLAS on the same threads), "
        "`store` = a parallel fill of the output (`stream` = with streaming stores), `G+S` = GEMM + "
        "store (the parts measured apart); `kernel` = the compiled kernel alone (buffered); "
        "`bound` = max(GEMM + sincos, the faster store); `RBF w` = RBFSampler with the "
        "same output width (GEMM twice as large), `RBF s` = with the same GEMM size (half the "
        "width); speed-ups are RBFSampler time / ours, plain (buffered); `-` = not timed "
        "(`--peer-threads`). `fresh memory` = extra "
        "time of writing a new output instead of a reused one, per GB. `noise` = largest "
        "(max - min) / median over plain, buffered and RBF w; `load` = 1-min load average "
        "before/after the row.",
        "",
        "| dtype | d | width | thr | plain | buffered | plain/buf (paired) | kernel | GEMM | sincos "
        "| store (stream) | G+S | plain/(G+S) | kernel/(G+S) | bound | plain/bound | RBF w | RBF s "
        "| speed-up, same width | speed-up, same GEMM | fresh memory | noise | load |",
        "|---" * 23 + "|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dtype']} | {r['d']} | {r['width']} | {r['threads']} | {1e3 * r['plain']:.1f} | "
            f"{1e3 * r['buffered']:.1f} | {r['plain_over_buffered']:.2f} "
            f"({r['plain_over_buffered_paired']:.2f}) | "
            f"{1e3 * r['kernel']:.1f} | "
            f"{1e3 * r['gemm']:.1f} | {1e3 * r['sincos']:.1f} | "
            f"{1e3 * r['store']:.1f} ({1e3 * r['store_streaming']:.1f}) | "
            f"{1e3 * r['gemm_store']:.1f} | {r['plain_over_gemm_store']:.2f} | "
            f"{r['kernel_over_gemm_store']:.2f} | "
            f"{1e3 * r['lower_bound']:.1f} | {r['plain_over_bound']:.2f} | "
            f"{_fmt(r['rbf_width'], '.0f', 1e3)} | {_fmt(r['rbf_gemm'], '.0f', 1e3)} | "
            f"{_fmt(r['speedup_plain_same_width'], '.1f', suffix='x')} "
            f"({_fmt(r['speedup_buffered_same_width'], '.1f', suffix='x')}) | "
            f"{_fmt(r['speedup_plain_same_gemm'], '.1f', suffix='x')} "
            f"({_fmt(r['speedup_buffered_same_gemm'], '.1f', suffix='x')}) | "
            f"{1e3 * r['first_touch_per_gb']:.0f} ms/GB | {100 * r['noise']:.0f}% | "
            f"{r['loadavg_before'][0]:.1f}/{r['loadavg_after'][0]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def panel_study(n, dims, dtypes, threads_list, panels, repeats, controller):
    """Time the compiled kernel for several GEMM panel sizes (``_compiled.PANEL_BYTES``) beside
    the GEMM and the store, interleaved in one process (prints a table, returns the rows)."""
    rng = np.random.default_rng(20261128)
    default = _compiled.PANEL_BYTES
    rows = []
    try:
        for dtype in (np.dtype(t).type for t in dtypes):
            for d in dims:
                s = width_for(d) // 2
                X = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(dtype)
                W = rng.standard_normal((s, d)).astype(dtype)
                Wm, WT = np.empty((0, d), dtype=dtype), np.ascontiguousarray(W.T)
                buf, G = np.empty((n, 2 * s), dtype=dtype), np.empty((n, s), dtype=dtype)
                for threads in threads_list:
                    numba.set_num_threads(threads)
                    with controller.limit(limits=threads, user_api="blas"):

                        def kernel(pb, X=X, W=W, Wm=Wm, buf=buf):
                            def call():
                                _compiled.PANEL_BYTES = pb
                                _compiled.fused_features(X, W, Wm, 1.0, 0.0, None, None, buf, "sincos")

                            return call

                        calls = {f"panel_{pb}": kernel(pb) for pb in panels}
                        calls["gemm"] = lambda X=X, WT=WT, G=G: np.matmul(X, WT, out=G)
                        calls["store"] = lambda buf=buf: _compiled.fill(buf, 1.0)
                        _, times = interleaved(calls, repeats)
                    med = {k: float(np.median(v)) for k, v in times.items()}
                    row = {"dtype": np.dtype(dtype).name, "d": d, "s": s, "threads": threads, "n": n}
                    row.update(med)
                    row["gemm_store"] = med["gemm"] + med["store"]
                    rows.append(row)
                    cells = ", ".join(
                        f"{pb >> 10} KiB {1e3 * med[f'panel_{pb}']:.1f} ms "
                        f"({med[f'panel_{pb}'] / row['gemm_store']:.2f}x)"
                        for pb in panels
                    )
                    print(
                        f"panels {row['dtype']} d={d} s={s} threads={threads}: GEMM {1e3 * med['gemm']:.1f} + "
                        f"store {1e3 * med['store']:.1f} ms; kernel: {cells}",
                        flush=True,
                    )
    finally:
        _compiled.PANEL_BYTES = default
    return rows


def _device_namespace(spec):
    """``(xp, device, to_device, to_host)`` for ``NAMESPACE[:DEVICE]``."""
    name, _, device = spec.partition(":")
    if name == "torch":
        import torch
        from array_api_compat import array_namespace

        dev = torch.device(device or "cpu")
        if dev.type == "cuda":  # the GPU's name in the tables
            dev = torch.device(dev.type, torch.cuda.current_device() if dev.index is None else dev.index)
        xp = array_namespace(torch.zeros(1))
        return xp, dev, lambda a: torch.as_tensor(a, device=dev), lambda a: a.cpu().numpy()
    import importlib

    xp = importlib.import_module({"jax": "jax.numpy"}.get(name, name))
    dev = xp.asarray(np.zeros(1)).device if not device else device
    return xp, dev, lambda a: xp.asarray(a, device=dev), np.asarray


def _device_label(device):
    """The device, with the GPU's name for torch CUDA devices."""
    if getattr(device, "type", None) == "cuda":
        import torch

        return f"{device}, {torch.cuda.get_device_name(device)}"
    return str(device)


def bench_device(spec, n, dims, repeats, min_time):
    """The ``--device`` rows (see the module docstring)."""
    xp, device, to_device, to_host = _device_namespace(spec)
    rng = np.random.default_rng(20261121)
    rows = []
    for dtype in (np.float32, np.float64):
        for d in dims:
            width = width_for(d)
            X = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(dtype)
            rf = RandomFeatures(
                kernels.gaussian(1.0), dim=d, n_components=width, method="rff", random_state=0
            ).fit()
            Xd = to_device(X)
            W_T = to_device(np.ascontiguousarray(rf.W_plus_.T, dtype=dtype))
            scale = float(dtype(rf.scale_plus_))

            def by_hand(Xd=Xd, W_T=W_T, scale=scale):
                phases = xp.matmul(Xd, W_T)
                return xp.concat([scale * xp.cos(phases), scale * xp.sin(phases)], axis=1)

            calls = {
                "device": lambda Xd=Xd, rf=rf: float(rf.transform(Xd)[0, 0]),
                "by_hand": lambda by_hand=by_hand: float(by_hand()[0, 0]),
                "host": lambda X=X, rf=rf, to_device=to_device, to_host=to_host: to_host(
                    rf.transform(to_device(X))
                )[0, 0],
            }
            err = float(np.max(np.abs(to_host(rf.transform(Xd)) - to_host(by_hand()))))
            _, times = interleaved(calls, repeats, min_time)
            row = {
                "device_name": f"{spec} ({_device_label(device)})",
                "dtype": np.dtype(dtype).name,
                "d": d,
                "width": width,
                "n": n,
            }
            row.update({k: float(np.median(v)) for k, v in times.items()})
            row["device_over_by_hand"] = row["device"] / row["by_hand"]
            row["max_abs_difference"] = err
            rows.append(row)
            print(
                f"{spec} {row['dtype']} d={d} w={width}: spectralkit {1e3 * row['device']:.2f} ms, by hand "
                f"{1e3 * row['by_hand']:.2f} ms ({row['device_over_by_hand']:.2f}x), through the host "
                f"{1e3 * row['host']:.1f} ms; max |difference| {err:.2g}",
                flush=True,
            )
    return rows


def device_markdown(rows, info):
    lines = [
        "# Featurize on a device (Array API path)",
        "",
        f"Machine: {info.get('cpu', '?')}; {rows[0]['device_name'] if rows else ''}; n = {rows[0]['n'] if rows else 0} "
        "rows; medians of interleaved rounds (ms).",
        "",
        "| dtype | d | width | spectralkit (device) | by hand | ratio | host round trip | max abs diff |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dtype']} | {r['d']} | {r['width']} | {1e3 * r['device']:.2f} | {1e3 * r['by_hand']:.2f} | "
            f"{r['device_over_by_hand']:.2f} | {1e3 * r['host']:.1f} | {r['max_abs_difference']:.2g} |"
        )
    return "\n".join(lines) + "\n"


def write(out, rows, info):
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    out.with_suffix(".md").write_text(markdown(rows, info))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny smoke run; writes nothing")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dims", type=int, nargs="+", default=[8, 16, 54, 128, 256, 784])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=6, help="interleaved rounds, at least (default 6)")
    ap.add_argument(
        "--min-time",
        type=float,
        default=20.0,
        help="more rounds (up to 60) until the rounds of a configuration took this long (s)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS / "featurize")
    ap.add_argument("--no-write", action="store_true", help="print the table, write nothing")
    ap.add_argument(
        "--allocation",
        action="store_true",
        help="compare output allocation strategies of transform(X) instead (prints only)",
    )
    ap.add_argument(
        "--device",
        metavar="NAMESPACE[:DEVICE]",
        help="time the Array API path on a device instead, e.g. torch:cuda, cupy, array_api_strict",
    )
    ap.add_argument(
        "--peer-threads",
        type=int,
        nargs="+",
        help="time RBFSampler only at these thread counts (default: at every one)",
    )
    ap.add_argument(
        "--panels",
        type=int,
        nargs="+",
        metavar="BYTES",
        help="compare GEMM panel sizes of the compiled kernel (_compiled.PANEL_BYTES) beside GEMM + store "
        "instead (prints only)",
    )
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="cpu: process CPU time, one thread only (robust to time slicing by other jobs)",
    )
    args = ap.parse_args(argv)
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.process_time
        args.threads = [1]
    if args.quick:
        args.n, args.dims, args.repeats, args.min_time = 4000, [16], 2, 0.0
    if args.allocation:
        threads = [t for t in args.threads if t <= numba.config.NUMBA_NUM_THREADS]
        dims = None if args.dims == ap.get_default("dims") else args.dims
        return allocation_study(args.n, args.repeats, ThreadpoolController(), threads, dims, args.dtypes)
    if args.panels:
        threads = [t for t in args.threads if t <= numba.config.NUMBA_NUM_THREADS]
        return panel_study(
            args.n, args.dims, args.dtypes, threads, args.panels, args.repeats, ThreadpoolController()
        )
    if args.device:
        info = machine_info()
        rows = bench_device(args.device, args.n, args.dims, args.repeats, args.min_time)
        out = args.out.with_name(args.out.name + "-device")
        if not (args.quick or args.no_write):
            out.parent.mkdir(parents=True, exist_ok=True)
            out.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
            out.with_suffix(".md").write_text(device_markdown(rows, info))
            print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
        else:
            print(device_markdown(rows, info))
        return rows
    args.threads = [t for t in args.threads if t <= numba.config.NUMBA_NUM_THREADS]
    info = machine_info()
    info["n"] = args.n
    info["clock"] = args.clock
    info["repeats"] = args.repeats
    controller = ThreadpoolController()
    rng = np.random.default_rng(20261121)
    rows = []
    for dtype in args.dtypes:
        for d in args.dims:
            for threads in args.threads:
                peers = args.peer_threads is None or threads in args.peer_threads
                row = bench_case(
                    args.n,
                    d,
                    np.dtype(dtype).type,
                    threads,
                    args.repeats,
                    args.min_time,
                    controller,
                    rng,
                    peers,
                )
                rows.append(row)
                print(
                    f"{dtype} d={d} w={row['width']} threads={threads}: plain {1e3 * row['plain']:.1f} ms "
                    f"({row['plain_over_buffered']:.2f}x buffered, {row['plain_over_gemm_store']:.2f}x "
                    f"GEMM + store, {row['plain_over_bound']:.2f}x bound), RBFSampler same width "
                    f"{_fmt(row['speedup_plain_same_width'], '.1f', suffix='x')} slower, same GEMM "
                    f"{_fmt(row['speedup_plain_same_gemm'], '.1f', suffix='x')}; noise {100 * row['noise']:.0f}%, load "
                    f"{row['loadavg_before'][0]:.1f}/{row['loadavg_after'][0]:.1f}",
                    flush=True,
                )
                if not (args.quick or args.no_write):  # keep partial results of long runs
                    write(args.out, rows, dict(info, loadavg_end=os.getloadavg()))
    info["loadavg_end"] = os.getloadavg()
    if not (args.quick or args.no_write):
        write(args.out, rows, info)
        print(f"wrote {args.out.with_suffix('.json')} and {args.out.with_suffix('.md')}")
    else:
        print(markdown(rows, info))
    return rows


if __name__ == "__main__":
    main()
