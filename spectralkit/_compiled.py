"""Compiled (numba) hot loops: fused random-feature transform, polynomial sincos, inverse-CDF lookup,
and the float sums of two derivation routes.

Every numba kernel of spectralkit lives here, with its thin wrapper. Every kernel is
module-level, compiled with ``cache=True`` and works on explicit dtypes (float32 or float64; the dtype of the inputs is the
dtype of the computation and of the output). The wrappers check only what the memory safety
of the compiled loops needs (dtypes, shapes, contiguity, writeability; ``ValueError`` /
``TypeError`` otherwise): the callers (:mod:`spectralkit.features`, :mod:`spectralkit.sampling`)
validate the values (finiteness, ranges) and give the user-facing messages.

Contract
--------
``fused_features(X, W_plus, W_minus, scale_plus, scale_minus, offsets_plus, offsets_minus, out,
feature_map, chunk_rows=256) -> out``

    ``X`` (n, d), ``W_plus`` (s_plus, d), ``W_minus`` (s_minus, d) (``s_minus`` may be 0), all
    C-contiguous and of one dtype (float32 or float64); ``scale_plus`` / ``scale_minus`` scalars
    (converted to that dtype); ``out`` (n, width) C-contiguous of that dtype, written in place and
    returned. With A = X W_plusᵀ and B = X W_minusᵀ:

    * ``feature_map="sincos"``: width = 2 (s_plus + s_minus), columns
      ``[scale_plus cos A | scale_plus sin A | scale_minus cos B | scale_minus sin B]``;
      the offsets are ignored (pass ``None`` or empty arrays).
    * ``feature_map="cos"``: width = s_plus + s_minus, columns
      ``[scale_plus cos(A + b+) | scale_minus cos(B + b-)]`` with ``offsets_plus`` (s_plus,) and
      ``offsets_minus`` (s_minus,) of the same dtype, broadcast over the rows.

    One parallel numba region: the rows are cut into chunks of ``chunk_rows`` (rounded up to a
    multiple of ``g = GEMM_ROWS[dtype]``: 256 rows in float64, 512 in float32) dealt round-robin
    to the workers. Each worker owns a buffer of ``g x c`` elements, ``c = column_block(dtype,
    max(s_plus, s_minus))`` (at most ``PANEL_BYTES``, 4 MiB), and for each g-row block and each
    panel of c frequencies (one panel up to 2048 float64 / 2048 float32 frequencies) computes the
    product with the panel's Wᵀ by a single-threaded BLAS GEMM (``np.dot``; BLAS is limited to
    one thread for the duration of the call with a cached ``threadpoolctl.ThreadpoolController``),
    then applies the polynomial sincos, the scaling and the store in one vectorised pass over
    0-based row slices while the block is still in cache. No n x s temporary other than ``out``
    is created (plain stores: streaming ones measured slower, see :func:`fill`).

    Deterministic: the output is bit-identical whatever the number of numba threads and whatever
    ``chunk_rows`` (tested). OpenBLAS sums in an order that depends on the shape of the GEMM
    and on a row's position inside it (measured: float32 rows change in the last bits between
    64-, 100- and 256-row GEMMs), so the GEMM blocks are fixed per dtype: rows [g b, g b + g)
    of X, whatever the chunking. A row's features can still differ in the last bits between two
    calls in which it sits at different positions (e.g. transforming X[5:6] alone).

    Range: the polynomial sincos is accurate for |argument| <= ``SINCOS_MAX_ARG[dtype]`` (1e12
    in float64, 1e6 in float32; see below). The kernel flags arguments beyond that bound at
    no measurable cost; if there are any, the wrapper issues a ``RuntimeWarning`` and recomputes
    the whole output by an accurate fallback: float32 inputs are transformed in float64 and
    rounded to float32, float64 inputs use numpy's ``cos``/``sin`` (full-range argument
    reduction) on row blocks. The fallback is correct but several times slower. Such arguments
    mean badly scaled data or frequencies (the spacing of float32 numbers at 1e6 is 0.06 rad).

``inverse_cdf_lookup(u, u_knots, x_knots, slopes, out) -> out``

    Cubic Hermite interpolation of an inverse CDF given at knots 0 = u_0 < u_1 < ... < u_K = 1
    with values ``x_knots`` (the quantiles) and derivatives ``slopes`` = dx/du at the knots (all
    float64, length K + 1). For u in [u_j, u_{j+1}), h = u_{j+1} - u_j, t = (u - u_j)/h:
    x = h00(t) x_j + h10(t) h m_j + h01(t) x_{j+1} + h11(t) h m_{j+1} (Hermite basis),
    evaluated as c0 + t (c1 + t (c2 + t c3)) with per-interval coefficients computed once per
    call (O(K) numpy). A guide table (Chen & Asau) of ``GUIDE_FACTOR * K`` equal u-cells
    brackets each u exactly; a fixed number of branchless bisection steps (ceil(log2) of the
    largest bracket: 1-3 for evenly spread knots, more when knots crowd into a few cells)
    finishes the search, in passes over blocks of 2048 u (no data-dependent branches).
    Exact at the knots (x(u_j) = x_j bit for bit, including u = 1). Parallel over blocks of u;
    bit-identical for any thread count. u in [0, 1] is the caller's responsibility (values
    outside are clamped to the end intervals and extrapolated by the end cubics, u >= 1 gives
    x_K). Measured (``benchmarks/bench_lookup.py``, K = 2000): ~150 M lookups per CPU-second
    with evenly spread knots, ~75 M with knots at log-spaced quantiles.

``laguerre_bound_logs(x, nu, qa) -> (lt, lerr, lbsum)``

    The float bookkeeping of the exact-integer Laguerre sums of the Gaussian oscillation
    (:mod:`spectralkit.transforms._oscillating`): per term n, the logs of the bound term
    qa_n L_n^nu(-x), of the running sum of qa_j times the rounding majorant e_j, and of the
    running sum of the bound terms. They do not depend on the working precision, so a point
    retried at more bits reuses them; the integer recurrence stays in Python (gmpy2).

``exp_sums(rho, base, inv, abs_base, abs_inv) -> (total, amp, round_w, top)``

    The panel sums of the Gaussian-rational rays (:mod:`spectralkit.transforms._gauss_rational`):
    per frequency rho_i, L_ij = base_j + rho_i^2 inv_j (complex128, length k), top_i = max_j Re L_ij,
    f_ij = exp(L_ij - top_i); total_i = sum_j f_ij (compensated: its rounding is O(eps) sum_j |f_ij|
    whatever k), amp_i = sum_j |f_ij|, round_w_i = sum_j |f_ij| (abs_base_j + rho_i^2 abs_inv_j).
    The calls are many (thousands per kernel) and small (1-5 frequencies, 100-2000 nodes).

Polynomial sincos
-----------------
``sincos(x, out_sin, out_cos)`` (elementwise, 1-D, float32 or float64) exposes the same scalar
routine that the fused kernel inlines.

* float64: k = rint(x 2/π) (round-to-nearest by the 1.5·2^52 shifter), then a Cody–Waite
  reduction by π/2 with a three-part constant P1 + P2 + P3 (P1 = fl(π/2), 161 significant
  bits in all) evaluated with fused multiply-adds: r1 = fma(-k, P1, x) is exact for
  |x| < 2^51, k·P2 is split exactly into head and tail by an fma, and TwoSum gives the reduced
  argument as an unevaluated sum hi + lo with |hi| <= π/4 + a few ulp. The fdlibm (FreeBSD msun)
  minimax kernels ``__kernel_sin`` (degree 13) and ``__kernel_cos`` (degree 14) take the tail
  ``lo`` into account; the quadrant selects and signs the results by blends. Measured maximum
  error 0.75 ulp (``tests/test_compiled.py``: exact mpmath reference on random arguments up to
  1e12 and on the doubles nearest to k π/2 and (k + 1/2) π/2); the documented bound is 2 ulp
  (the tests assert < 1 ulp) for |x| <= ``SINCOS_MAX_ARG[float64]`` = 1e12. The three-part
  constant leaves an absolute error ~ |k| 2^-161 in the reduced argument; at |x| = 1e15 this
  already costs ~2.5 ulp at the worst arguments, hence the bound.
* float32: the same structure in single precision (three-part float32 π/2 with fmas,
  shifter 1.5·2^23) with cephes-style minimax kernels (``sinf`` degree 7, ``cosf`` degree 8).
  Exhaustive check over every float32 in [2^-30, 1e6] (the results are exactly odd/even in x)
  against float64 libm: max error 1.56 ulp for |x| <= 1e5 and 1.81 ulp for |x| <= 1e6;
  documented bound 2 ulp for |x| <= ``SINCOS_MAX_ARG[float32]`` = 1e6.
  Beyond ~4e6 the reduction breaks down (4.7 ulp at 4e6, garbage beyond 2^22 where the
  shifter rounding fails).

The fmas are LLVM ``llvm.fma`` intrinsics (exact fused operations, not a contraction that the
optimiser may or may not perform). All kernels use the fast-math flags ``_FASTMATH``
(no ``reassoc``: re-association would destroy the compensated reduction and the shifter trick).

Thread and memory control (the parallel-region lock, BLAS thread limits, the output pool) live
in :mod:`spectralkit._runtime`.
"""

import numbers
import platform
import warnings

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ._runtime import blas_single_thread, parallel_region

__all__ = [
    "GEMM_ROWS",
    "GUIDE_FACTOR",
    "PANEL_BYTES",
    "SINCOS_MAX_ARG",
    "column_block",
    "fill",
    "finite_max_abs",
    "fused_features",
    "inverse_cdf_lookup",
    "exp_sums",
    "laguerre_bound_logs",
    "sincos",
]

# Fast-math flags for every kernel: everything that helps vectorisation except ``reassoc``.
_FASTMATH = {"nnan", "ninf", "nsz", "arcp", "contract", "afn"}

#: Largest |argument| for which the polynomial sincos is guaranteed to 2 ulp, per dtype.
SINCOS_MAX_ARG = {np.dtype(np.float64): 1.0e12, np.dtype(np.float32): 1.0e6}

#: Rows of every BLAS GEMM block in :func:`fused_features`, per dtype (``chunk_rows`` is rounded
#: up to a multiple of it). Fixed so that the summation order, hence the output, does not depend
#: on ``chunk_rows`` or on the thread count. Larger blocks amortise OpenBLAS's packing of the
#: d x s frequency matrix, which it repeats at every call. Measured (process CPU time, one
#: thread, n = 5e4, width 1024 for d <= 54 and 2048 above, loaded machine): float64 with
#: 64/256 rows d = 16 71/70 ms, d = 54 114/109, d = 256 713/642, d = 784 2154/1744; float32
#: with 256/512 rows d = 16 34/33, d = 54 53/53, d = 256 317/302, d = 784 892/843. Wide blocks
#: are cut into column panels (:data:`PANEL_BYTES`).
GEMM_ROWS = {np.dtype(np.float64): 256, np.dtype(np.float32): 512}


#: Largest GEMM output block (bytes) of one worker in :func:`fused_features`: wider maps are cut
#: into panels of ``column_block(dtype, s)`` frequencies (a row slice of the C-contiguous W, whose
#: transpose is a contiguous BLAS operand: no copy), so that a worker's buffer stays bounded
#: whatever ``n_components`` is. Not smaller: measured on 16 cores (Xeon, 2 MiB L2 per core;
#: ``bench_featurize.py --panels``, n = 2e5, the kernel over GEMM + store), panels always cost:
#: d = 256, s = 1024 at 16 threads float64 0.98x whole / 1.03x in 1 MiB panels / 1.17x in
#: 256 KiB / 1.29x in 128 KiB, float32 1.04x / 1.02x / 1.17x / 1.41x; at 4 threads float64
#: 1.25x / 1.36x / 1.71x / 2.04x; d = 16 and 54 likewise (whole blocks 0.74-0.91x). Each
#: extra GEMM call repacks the block of X, and a 2 MiB block already stays in L2. Read at every
#: call (the benchmark sweeps it); the panels fix the summation blocks, so the output is
#: deterministic for a given value.
PANEL_BYTES = 4 << 20


def column_block(dtype, s):
    """Frequencies per GEMM panel for ``s`` frequencies of ``dtype``: all of them when the block
    fits :data:`PANEL_BYTES`, else equal panels (multiples of 16) that do."""
    dtype = np.dtype(dtype)
    rows = GEMM_ROWS[dtype]
    s = max(int(s), 1)
    n_panels = -(-(rows * s * dtype.itemsize) // max(int(PANEL_BYTES), 1))
    if n_panels <= 1:
        return s
    per_panel = -(-s // n_panels)  # ceil: equal panels, the last one at most as wide
    return min(s, -(-per_panel // 16) * 16)


#: Guide-table cells per knot interval in :func:`inverse_cdf_lookup`.
GUIDE_FACTOR = 2

_FEATURE_MAPS = {"sincos": 0, "cos": 1}


# ----------------------------------------------------------------------------------------------
# Exact fused multiply-add
# ----------------------------------------------------------------------------------------------


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c with a single rounding (LLVM ``llvm.fma``; vectorisable)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.fma", [args[0].type] * 3)
        return builder.call(fn, args)

    return a(a, b, c), codegen


_I64 = ir.IntType(64)
_LINE = 64  # bytes per streaming store: one cache line, one AVX-512 register
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


@intrinsic
def _stream_copy(typingctx, src, dst):
    """dst[:] = src[:] (1-D contiguous, one float dtype, len(src) >= len(dst)) with streaming stores.

    The elements before the first 64-byte boundary of ``dst`` and after the last whole line are
    stored plainly; the lines in between by aligned vector stores marked ``!nontemporal`` (LLVM
    lowers them to ``movntps``/``movntpd`` on x86 and to non-temporal pairs on AArch64). A
    ``dst`` not aligned to its element size (a view at an odd byte offset) is stored plainly.
    Streaming stores are weakly ordered: the writer calls :func:`_store_fence` before its work
    is read by another thread.
    """
    ok = (
        isinstance(src, types.Array)
        and isinstance(dst, types.Array)
        and src.ndim == dst.ndim == 1
        and src.layout == dst.layout == "C"
        and src.dtype == dst.dtype
        and isinstance(dst.dtype, types.Float)
    )
    if not ok:
        return None

    def codegen(context, builder, signature, args):
        src_ty, dst_ty = signature.args
        sp = context.make_array(src_ty)(context, builder, args[0]).data
        dst = context.make_array(dst_ty)(context, builder, args[1])
        dp = dst.data
        n = builder.extract_value(dst.shape, 0)
        el = context.get_data_type(dst_ty.dtype)
        size = context.get_abi_sizeof(el)
        lanes = _LINE // size
        vec = ir.VectorType(el, lanes).as_pointer()
        addr = builder.ptrtoint(dp, _I64)
        head = builder.udiv(builder.and_(builder.sub(_I64(0), addr), _I64(_LINE - 1)), _I64(size))
        whole = builder.icmp_unsigned("==", builder.urem(addr, _I64(size)), _I64(0))
        head = builder.select(whole, head, n)
        head = builder.select(builder.icmp_signed("<", head, n), head, n)
        with cgutils.for_range_slice(builder, _I64(0), head, _I64(1)) as (i, _):
            builder.store(builder.load(builder.gep(sp, [i])), builder.gep(dp, [i]))
        n_lines = builder.sdiv(builder.sub(n, head), _I64(lanes))
        nontemporal = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        with cgutils.for_range(builder, n_lines) as loop:
            p = builder.add(head, builder.mul(loop.index, _I64(lanes)))
            v = builder.load(builder.bitcast(builder.gep(sp, [p]), vec), align=size)
            st = builder.store(v, builder.bitcast(builder.gep(dp, [p]), vec), align=_LINE)
            st.set_metadata("nontemporal", nontemporal)
        tail = builder.add(head, builder.mul(n_lines, _I64(lanes)))
        with cgutils.for_range_slice(builder, tail, n, _I64(1)) as (i, _):
            builder.store(builder.load(builder.gep(sp, [i])), builder.gep(dp, [i]))
        return context.get_dummy_value()

    return types.none(src, dst), codegen


@intrinsic
def _store_fence(typingctx):
    """Orders this thread's streaming stores before its later stores (x86 ``sfence``; a full
    fence elsewhere), so that whoever sees the worker done sees its output."""

    def codegen(context, builder, signature, args):
        if _X86:
            fn = builder.module.declare_intrinsic(
                "llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), [])
            )
            builder.call(fn, [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen


# ----------------------------------------------------------------------------------------------
# Quadrant selection, in the argument's own float type
# ----------------------------------------------------------------------------------------------


_F32_QUARTER = np.float32(0.25)
_F32_HALF = np.float32(0.5)
_F32_THREE_QUARTERS = np.float32(0.75)


@njit(fastmath=_FASTMATH, cache=True)
def _quadrant(k, s, c):
    """(sin x, cos x) from the quadrant k (an integer-valued float, x = k pi/2 + r) and
    (s, c) = (sin r, cos r): (s, c), (c, -s), (-s, -c), (-c, s) for k mod 4 = 0, 1, 2, 3.

    The quadrant is read as t = k/4 - floor(k/4) in {0, 1/4, 1/2, 3/4} (exact: k is an integer
    far below 2**mantissa bits) rather than from an integer k. numba widens integer arithmetic
    to int64, and int64 lanes (with no vector int64 -> float conversion before AVX-512) held the
    float32 loop to 4 lanes instead of 8 and scalarised part of the float64 one.
    """
    # float32 constants: exact, and they keep float32 arithmetic in float32 (a Python float
    # would widen it to float64)
    quarter = k * _F32_QUARTER
    t = quarter - np.floor(quarter)
    odd = (t == _F32_QUARTER) | (t == _F32_THREE_QUARTERS)
    sin_x = c if odd else s
    cos_x = s if odd else c
    sin_x = -sin_x if t >= _F32_HALF else sin_x
    cos_x = -cos_x if (t == _F32_QUARTER) | (t == _F32_HALF) else cos_x
    return sin_x, cos_x


# ----------------------------------------------------------------------------------------------
# float64 sincos
# ----------------------------------------------------------------------------------------------

_TWO_OVER_PI = 0.6366197723675814
_SHIFT64 = 6755399441055744.0  # 1.5 * 2**52: (t + S) - S = rint(t) for |t| < 2**51
_PIO2_1 = 1.5707963267948966  # 0x1.921fb54442d18p+0  = fl(pi/2)
_PIO2_2 = 6.123233995736766e-17  # 0x1.1a62633145c07p-54 = fl(pi/2 - P1)
_PIO2_3 = -1.4973849048591698e-33  # -0x1.f1976b7ed8fbcp-110 = fl(pi/2 - P1 - P2)

# fdlibm k_sin.c / k_cos.c (FreeBSD msun) minimax coefficients on [-pi/4, pi/4].
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


@njit(fastmath=_FASTMATH, cache=True)
def _sincos_f64(x):
    """(sin x, cos x) of a float64, error < 1 ulp measured for |x| <= 1e8 (see module doc)."""
    kd = (x * _TWO_OVER_PI + _SHIFT64) - _SHIFT64
    # x - k*pi/2 as hi + lo: r1 exact; k*P2 = th + tl exactly; TwoSum(r1, -th).
    r1 = _fma(-kd, _PIO2_1, x)
    th = kd * _PIO2_2
    tl = _fma(kd, _PIO2_2, -th)
    tl = _fma(kd, _PIO2_3, tl)
    r = r1 - th
    bb = r - r1
    e = (r1 - (r - bb)) + (-th - bb)
    y = e - tl
    hi = r + y
    lo = y - (hi - r)
    # __kernel_sin(hi, lo, 1) and __kernel_cos(hi, lo).
    z = hi * hi
    w = z * z
    rs = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * hi
    s = hi - ((z * (0.5 * lo - v * rs) - lo) - v * _S1)
    rc = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    wc = 1.0 - hz
    c = wc + (((1.0 - wc) - hz) + (z * rc - hi * lo))
    return _quadrant(kd, s, c)


# ----------------------------------------------------------------------------------------------
# float32 sincos (numpy scalars keep the arithmetic in single precision)
# ----------------------------------------------------------------------------------------------

_F32_TWO_OVER_PI = np.float32(0.63661975)
_F32_SHIFT = np.float32(12582912.0)  # 1.5 * 2**23
_F32_PIO2_1 = np.float32(1.5707964)  # 0x1.921fb6p+0
_F32_PIO2_2 = np.float32(-4.371139e-08)  # -0x1.777a5cp-25
_F32_PIO2_3 = np.float32(-1.7151245e-15)  # -0x1.ee59dap-50
# cephes sinf.c / cosf.c minimax coefficients on [-pi/4, pi/4].
_F32_S1 = np.float32(-1.6666654611e-1)
_F32_S2 = np.float32(8.3321608736e-3)
_F32_S3 = np.float32(-1.9515295891e-4)
_F32_C1 = np.float32(4.166664568298827e-2)
_F32_C2 = np.float32(-1.388731625493765e-3)
_F32_C3 = np.float32(2.443315711809948e-5)
_F32_ONE = np.float32(1.0)


@njit(fastmath=_FASTMATH, cache=True)
def _sincos_f32(x):
    """(sin x, cos x) of a float32, error <= 2 ulp for |x| <= 1e4 (see module doc)."""
    kf = (x * _F32_TWO_OVER_PI + _F32_SHIFT) - _F32_SHIFT
    r = _fma(-kf, _F32_PIO2_1, x)
    r = _fma(-kf, _F32_PIO2_2, r)
    r = _fma(-kf, _F32_PIO2_3, r)
    z = r * r
    s = r + r * z * (_F32_S1 + z * (_F32_S2 + z * _F32_S3))
    c = (_F32_ONE - _F32_HALF * z) + z * z * (_F32_C1 + z * (_F32_C2 + z * _F32_C3))
    return _quadrant(kf, s, c)


def _sincos_scalar(x):  # pragma: no cover - dispatched by the overload below
    raise NotImplementedError


@overload(_sincos_scalar, jit_options={"fastmath": _FASTMATH})
def _sincos_scalar_overload(x):
    if x == types.float64:
        return lambda x: _sincos_f64(x)
    if x == types.float32:
        return lambda x: _sincos_f32(x)
    return None


# ----------------------------------------------------------------------------------------------
# Row kernels (0-based slices only: computed offsets would block vectorisation)
# ----------------------------------------------------------------------------------------------


@njit(fastmath=_FASTMATH, cache=True)
def _store_sincos(a, scale, out_cos, out_sin, limit):
    """out_cos = scale cos(a), out_sin = scale sin(a); returns whether any |a| > limit.

    A flag, not a count: an integer counter would be int64 lanes, which halve the float32
    vector width."""
    bad = False
    for j in range(a.shape[0]):
        x = a[j]
        bad |= abs(x) > limit
        s, c = _sincos_scalar(x)
        out_cos[j] = scale * c
        out_sin[j] = scale * s
    return bad


@njit(fastmath=_FASTMATH, cache=True)
def _store_cos(a, offsets, scale, out_cos, limit):
    """out_cos = scale cos(a + offsets); returns whether any |a + offsets| > limit."""
    bad = False
    for j in range(a.shape[0]):
        x = a[j] + offsets[j]
        bad |= abs(x) > limit
        _, c = _sincos_scalar(x)
        out_cos[j] = scale * c
    return bad


@njit(fastmath=_FASTMATH, cache=True)
def _chunk_part(Xc, W, scale, offsets, buf, out, r0, col0, mode, limit, col_block):
    """One (row block, sign part): per panel of ``col_block`` frequencies, a GEMM into ``buf``
    (small enough to stay in the core's cache) then the fused sincos + scale + store."""
    m = Xc.shape[0]
    s = W.shape[0]
    bad = False
    for c0 in range(0, s, col_block):
        c1 = min(s, c0 + col_block)
        sb = c1 - c0
        B = buf[: m * sb].reshape((m, sb))
        # a row slice of the C-contiguous W: its transpose is an F-contiguous operand, no copy
        np.dot(Xc, W[c0:c1].T, B)
        for i in range(m):
            row = out[r0 + i]
            if mode == 0:
                bad |= _store_sincos(
                    B[i], scale, row[col0 + c0 : col0 + c1], row[col0 + s + c0 : col0 + s + c1], limit
                )
            else:
                bad |= _store_cos(B[i], offsets[c0:c1], scale, row[col0 + c0 : col0 + c1], limit)
    return bad


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def _fused_kernel(
    X,
    W_plus,
    W_minus,
    scale_plus,
    scale_minus,
    off_plus,
    off_minus,
    out,
    mode,
    chunk_rows,
    gemm_rows,
    col_block,
    n_workers,
    limit,
    any_bad,
):
    n = X.shape[0]
    s_plus = W_plus.shape[0]
    n_chunks = (n + chunk_rows - 1) // chunk_rows
    col_minus = 2 * s_plus if mode == 0 else s_plus
    # Static round-robin of chunks over workers; each worker reuses one buffer (no allocation
    # and no page faults per chunk). Every GEMM covers the fixed block of rows
    # [g, min(g + gemm_rows, n)) with g a multiple of gemm_rows (chunk_rows is one too) and of
    # frequencies [c, min(c + col_block, s)) with c a multiple of col_block: BLAS sums in an
    # order that depends on the block shape, so fixing the blocks makes the output independent
    # of chunk_rows and of the worker that computes a block.
    for w in prange(n_workers):
        buf = np.empty(gemm_rows * col_block, dtype=X.dtype)
        bad = False
        for c in range(w, n_chunks, n_workers):
            c1 = min(n, (c + 1) * chunk_rows)
            for r0 in range(c * chunk_rows, c1, gemm_rows):
                Xc = X[r0 : min(c1, r0 + gemm_rows)]
                for part in range(2):  # one call site: a single compiled _chunk_part
                    W = W_plus if part == 0 else W_minus
                    if W.shape[0] > 0:
                        bad |= _chunk_part(
                            Xc,
                            W,
                            scale_plus if part == 0 else scale_minus,
                            off_plus if part == 0 else off_minus,
                            buf,
                            out,
                            r0,
                            0 if part == 0 else col_minus,
                            mode,
                            limit,
                            col_block,
                        )
        any_bad[w] = bad


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def _sincos_kernel(x, out_sin, out_cos):
    for j in prange(x.shape[0]):
        s, c = _sincos_scalar(x[j])
        out_sin[j] = s
        out_cos[j] = c


# ----------------------------------------------------------------------------------------------
# Public wrappers
# ----------------------------------------------------------------------------------------------


def _check_arrays(func, dtype=None, **arrays):
    """C-contiguous numpy arrays of one float dtype (``dtype``, or that of the first), outputs writeable."""
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{func}: {name} must be a numpy array, got {type(a).__name__}")
        if dtype is None:
            dtype = a.dtype
            if dtype not in (np.float32, np.float64):
                raise ValueError(f"{func}: {name} must be float32 or float64, got {dtype}")
        if a.dtype != dtype:
            raise ValueError(f"{func}: {name} must have dtype {dtype}, got {a.dtype}")
        if not a.flags.c_contiguous:
            raise ValueError(f"{func}: {name} must be C-contiguous")
        if name.startswith("out") and not a.flags.writeable:
            raise ValueError(f"{func}: {name} must be writeable")


def _check_shape(func, name, a, shape):
    if a.shape != tuple(shape):
        raise ValueError(f"{func}: {name} must have shape {tuple(shape)}, got {a.shape}")


def _read_only(a):
    """A read-only view of ``a`` (no copy): the compiled loops take their inputs as read-only arrays
    whatever the caller's flags, so a read-only input (a memory map, a joblib argument) and a
    writeable one share one compiled specialisation instead of two (about 3 s of compilation
    per dtype for the transform)."""
    view = a.view()
    view.flags.writeable = False
    return view


def _offsets_or_zeros(offsets, size, dtype):
    """The phases, or zeros when absent (the "sincos" map ignores them; the kernel's types don't)."""
    if offsets is None or len(offsets) == 0:
        return np.zeros(size, dtype=dtype)
    return offsets


def fused_features(
    X,
    W_plus,
    W_minus,
    scale_plus,
    scale_minus,
    offsets_plus,
    offsets_minus,
    out,
    feature_map,
    chunk_rows=256,
    extra_columns=0,
):
    """Fused random-feature transform ``out = [scale± cos/sin(X W±ᵀ (+ b±))]`` in place.

    See the module docstring for the exact layout, the determinism guarantee and the range
    fallback. The caller validates the values; here only the dtypes, shapes and layouts are
    checked (ValueError / TypeError), which the compiled loop relies on.

    Parameters
    ----------
    X : ndarray, shape (n, d), float32 or float64, C-contiguous
    W_plus : ndarray, shape (s_plus, d), dtype of X, C-contiguous
    W_minus : ndarray, shape (s_minus, d), dtype of X, C-contiguous; s_minus may be 0
    scale_plus, scale_minus : float
        Multipliers of the + and - blocks (e.g. sqrt(m±/s±)); rounded to the dtype of X.
    offsets_plus, offsets_minus : ndarray of shape (s_plus,), (s_minus,) or None
        Phases b± for ``feature_map="cos"``; ignored for ``"sincos"``.
    out : ndarray, shape (n, width + extra_columns), dtype of X, C-contiguous
        Written in place; width = 2 (s_plus + s_minus) for "sincos", s_plus + s_minus for "cos".
        The last ``extra_columns`` columns are left untouched (the caller fills them).
    feature_map : {"sincos", "cos"}
    chunk_rows : int, default 256
        Rows per GEMM chunk (64-2048 are within ~10% of each other); does not change the output.
    extra_columns : int, default 0
        Columns of ``out`` after the blocks that are not written.

    Returns
    -------
    out : ndarray
        The same array, filled.
    """
    if feature_map not in _FEATURE_MAPS:
        raise ValueError(
            f"fused_features: feature_map must be one of {', '.join(map(repr, _FEATURE_MAPS))}, "
            f"got {feature_map!r}"
        )
    mode = _FEATURE_MAPS[feature_map]
    _check_arrays("fused_features", X=X, W_plus=W_plus, W_minus=W_minus, out=out)
    for name, a in (("X", X), ("W_plus", W_plus), ("W_minus", W_minus)):
        if a.ndim != 2:
            raise ValueError(f"fused_features: {name} must be 2-D, got shape {a.shape}")
    dtype = X.dtype
    n, d = X.shape
    s_plus, s_minus = W_plus.shape[0], W_minus.shape[0]
    width = (2 if mode == 0 else 1) * (s_plus + s_minus)
    _check_shape("fused_features", "W_plus", W_plus, (s_plus, d))
    _check_shape("fused_features", "W_minus", W_minus, (s_minus, d))
    if (
        isinstance(extra_columns, bool)
        or not isinstance(extra_columns, numbers.Integral)
        or extra_columns < 0
    ):
        raise ValueError(f"fused_features: extra_columns must be an integer >= 0, got {extra_columns!r}")
    _check_shape("fused_features", "out", out, (n, width + int(extra_columns)))
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, numbers.Integral) or chunk_rows < 1:
        raise ValueError(f"fused_features: chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    if n == 0 or width == 0:
        return out
    off_p = _offsets_or_zeros(offsets_plus, s_plus, dtype)
    off_m = _offsets_or_zeros(offsets_minus, s_minus, dtype)
    _check_arrays("fused_features", offsets_plus=off_p, offsets_minus=off_m, dtype=dtype)
    if mode == 1:
        _check_shape("fused_features", "offsets_plus", off_p, (s_plus,))
        _check_shape("fused_features", "offsets_minus", off_m, (s_minus,))
    limit = dtype.type(SINCOS_MAX_ARG[np.dtype(dtype)])
    n_workers = numba.get_num_threads()
    any_bad = np.zeros(n_workers, dtype=np.bool_)
    gemm_rows = GEMM_ROWS[np.dtype(dtype)]
    chunk_rows = -(-int(chunk_rows) // gemm_rows) * gemm_rows
    col_block = column_block(dtype, max(s_plus, s_minus))
    with parallel_region(), blas_single_thread():
        _fused_kernel(
            _read_only(X),
            _read_only(W_plus),
            _read_only(W_minus),
            dtype.type(scale_plus),
            dtype.type(scale_minus),
            _read_only(off_p),
            _read_only(off_m),
            out,
            mode,
            chunk_rows,
            gemm_rows,
            col_block,
            n_workers,
            limit,
            any_bad,
        )
    if any_bad.any():
        _fallback(X, W_plus, W_minus, scale_plus, scale_minus, off_p, off_m, out, mode, chunk_rows)
    return out


def _fallback(X, W_plus, W_minus, scale_plus, scale_minus, off_p, off_m, out, mode, chunk_rows):
    """Accurate path for arguments beyond SINCOS_MAX_ARG (see the module docstring)."""
    lim = SINCOS_MAX_ARG[np.dtype(X.dtype)]
    warnings.warn(
        f"fused_features: some arguments w.x exceed {lim:g}, the range of the fast {X.dtype} "
        "sincos; recomputing with the accurate slow path (check the scaling of the data and "
        "of the frequencies)",
        RuntimeWarning,
        stacklevel=3,
    )
    if X.dtype == np.float32:
        out64 = np.empty(out.shape, dtype=np.float64)
        width = (2 if mode == 0 else 1) * (W_plus.shape[0] + W_minus.shape[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fused_features(
                X.astype(np.float64),
                W_plus.astype(np.float64),
                W_minus.astype(np.float64),
                scale_plus,
                scale_minus,
                off_p.astype(np.float64),
                off_m.astype(np.float64),
                out64,
                "sincos" if mode == 0 else "cos",
                chunk_rows,
                extra_columns=out.shape[1] - width,
            )
        out[:, :width] = out64[:, :width]
        return
    s_plus = W_plus.shape[0]
    col_minus = 2 * s_plus if mode == 0 else s_plus
    block = 4096
    for r0 in range(0, X.shape[0], block):
        Xb = X[r0 : r0 + block]
        for W, scale, off, col0 in ((W_plus, scale_plus, off_p, 0), (W_minus, scale_minus, off_m, col_minus)):
            s = W.shape[0]
            if s == 0:
                continue
            A = Xb @ W.T
            if mode == 0:
                out[r0 : r0 + block, col0 : col0 + s] = scale * np.cos(A)
                out[r0 : r0 + block, col0 + s : col0 + 2 * s] = scale * np.sin(A)
            else:
                out[r0 : r0 + block, col0 : col0 + s] = scale * np.cos(A + off)


def sincos(x, out_sin=None, out_cos=None):
    """Elementwise polynomial (sin x, cos x) of a 1-D float32/float64 array (parallel).

    Accuracy: <= 2 ulp for |x| <= ``SINCOS_MAX_ARG[x.dtype]`` (module docstring); beyond it the
    result degrades (this function has no fallback). Returns ``(out_sin, out_cos)``.
    """
    _check_arrays("sincos", x=x)
    _check_shape("sincos", "x", x, (x.shape[0],))
    out_sin = np.empty_like(x) if out_sin is None else out_sin
    out_cos = np.empty_like(x) if out_cos is None else out_cos
    _check_arrays("sincos", out_sin=out_sin, out_cos=out_cos, dtype=x.dtype)
    _check_shape("sincos", "out_sin", out_sin, x.shape)
    _check_shape("sincos", "out_cos", out_cos, x.shape)
    with parallel_region():
        _sincos_kernel(x, out_sin, out_cos)
    return out_sin, out_cos


@njit(parallel=True, cache=True)  # no fast-math flags: NaN and inf must be seen, not assumed away
def _finite_max_abs_kernel(flat, n_workers, n_bad, peak):
    n = flat.shape[0]
    per = (n + n_workers - 1) // n_workers
    for w in prange(n_workers):
        bad = 0
        top = 0.0
        for i in range(w * per, min(n, (w + 1) * per)):
            a = abs(flat[i])
            if not a < np.inf:  # NaN fails every comparison
                bad += 1
            elif a > top:
                top = a
        n_bad[w] = bad
        peak[w] = top


def finite_max_abs(X):
    """``(count of NaN/inf entries, max |finite entry|)`` of a C-contiguous float32/float64 array.

    One parallel pass over the data and no temporary array: the validation of ``transform``'s
    input (finiteness, and the largest |x| that bounds the phases) costs a read of X, which
    numpy's ``isfinite(X).all()`` and ``abs(X).max()`` (each a full-size temporary and a
    single-threaded pass) made 40-80 % of the whole transform on 16 cores at d = 256.
    """
    _check_arrays("finite_max_abs", X=X)
    flat = _read_only(X.reshape(-1))
    if flat.size == 0:
        return 0, 0.0
    n_workers = max(1, min(numba.get_num_threads(), flat.size // 65536))
    n_bad = np.zeros(n_workers, dtype=np.int64)
    peak = np.zeros(n_workers, dtype=np.float64)
    with parallel_region():
        _finite_max_abs_kernel(flat, n_workers, n_bad, peak)
    return int(n_bad.sum()), float(peak.max())


_FILL_BLOCK = 4096


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def _fill_kernel(flat, value, n_workers, stream):
    n = flat.shape[0]
    n_blocks = (n + _FILL_BLOCK - 1) // _FILL_BLOCK
    for w in prange(n_workers):
        src = np.full(_FILL_BLOCK, value, dtype=flat.dtype)
        for b in range(w, n_blocks, n_workers):
            dst = flat[b * _FILL_BLOCK : min(n, (b + 1) * _FILL_BLOCK)]
            if stream:
                _stream_copy(src, dst)
            else:
                for i in range(dst.shape[0]):
                    dst[i] = value
        if stream:
            _store_fence()


def fill(out, value, stream=False):
    """Parallel ``out[...] = value`` (numba threads): the store-bandwidth floor of a transform.

    Used by ``benchmarks/bench_featurize.py`` for the lower bound "write the output once".
    ``stream``: streaming (non-temporal) stores instead of plain ones: aligned 64-byte vector
    stores that bypass the caches (x86 ``movntps``/``movntpd``), with no read for ownership of
    the output's cache lines. A parallel fill runs 2.4-3x faster so (16-core Xeon: 115 against
    53 GB/s; 2-core EPYC: 23-28 against 10-12 GB/s). :func:`fused_features` stores plainly: a
    variant that computed each row slice into a cached buffer and streamed it out measured slower
    in 21 of 24 configurations of ``bench_featurize.py`` on the Xeon (n = 2e5, d = 16/54/256,
    float32/float64, 2-16 threads: +2 to +35 %; 10 % faster only for float64 d = 256 at 8-16
    threads), as it is bound by its GEMM and sincos there, and it cost 2 s more compilation per
    dtype; it was removed.
    """
    _check_arrays("fill", out=out)
    with parallel_region():
        _fill_kernel(out.reshape(-1), out.dtype.type(value), numba.get_num_threads(), bool(stream))
    return out


_LOOKUP_BLOCK = 2048


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def _lookup_kernel(u, u_knots, inv_h, c0, c1, c2, c3, x_last, first, depth, n_workers, out):
    n = u.shape[0]
    K = u_knots.shape[0] - 1
    n_cells = first.shape[0] - 1
    n_blocks = (n + _LOOKUP_BLOCK - 1) // _LOOKUP_BLOCK
    # Three vectorised passes per block of u (AVX-512 gathers): guide cell -> bracket, a
    # fixed number of branchless bisection steps, Hermite evaluation. Per-worker index buffers.
    for w in prange(n_workers):
        lo = np.empty(_LOOKUP_BLOCK, dtype=np.int64)
        size = np.empty(_LOOKUP_BLOCK, dtype=np.int64)
        for b in range(w, n_blocks, n_workers):
            i0 = b * _LOOKUP_BLOCK
            m = min(n, i0 + _LOOKUP_BLOCK) - i0
            ub = u[i0 : i0 + m]
            ob = out[i0 : i0 + m]
            # Knots before first[cell] are < u and knots from first[cell + 1] on are > u (the
            # cell map is the same monotone float expression as in _guide_table), so the
            # answer, the last j with u_j <= u, lies in [lo, lo + size).
            for i in range(m):
                cell = min(max(np.int64(ub[i] * n_cells), 0), n_cells - 1)
                start = max(first[cell] - 1, 0)
                lo[i] = start
                size[i] = first[cell + 1] - start
            # Branchless bisection: depth = ceil(log2(max size)) steps bring every size to 1.
            for _ in range(depth):
                for i in range(m):
                    half = size[i] >> 1
                    mid = lo[i] + half
                    lo[i] = mid if u_knots[mid] <= ub[i] else lo[i]
                    size[i] -= half
            for i in range(m):
                j = min(lo[i], K - 1)
                t = (ub[i] - u_knots[j]) * inv_h[j]
                # Horner form c0 + t (c1 + t (c2 + t c3)) is exactly x_j = c0 at t = 0.
                val = c0[j] + t * (c1[j] + t * (c2[j] + t * c3[j]))
                ob[i] = x_last if ub[i] >= 1.0 else val


@njit(cache=True)
def _guide_table(u_knots, n_cells):
    """first[c] = first knot index j with cell(u_j) >= c, cell(u) = int(u n_cells), c = 0..n_cells.

    Uses the same floating-point cell map as the lookup, so the bracketing is exact.
    """
    K = u_knots.shape[0] - 1
    first = np.empty(n_cells + 1, dtype=np.int64)
    j = 0
    for c in range(n_cells + 1):
        while j < K and np.int64(u_knots[j] * n_cells) < c:
            j += 1
        first[c] = j
    return first


def inverse_cdf_lookup(u, u_knots, x_knots, slopes, out):
    """Cubic Hermite inverse CDF ``out[i] = x(u[i])`` from a knot table (float64, parallel).

    Parameters
    ----------
    u : ndarray, shape (n,), float64, values in [0, 1]
    u_knots : ndarray, shape (K + 1,), float64, strictly increasing, u_0 = 0, u_K = 1, K >= 1
    x_knots : ndarray, shape (K + 1,), float64, the quantiles x(u_j)
    slopes : ndarray, shape (K + 1,), float64, dx/du at the knots
    out : ndarray, shape (n,), float64, written in place

    Returns
    -------
    out : ndarray

    Notes
    -----
    On [u_j, u_{j+1}] the interpolant is the cubic Hermite polynomial matching x and dx/du at
    both ends; its accuracy is that of the table (the interpolation error is
    O(h^4 max |x''''|)). At the knots the result is x_j exactly. The caller validates the
    table (sorted, finite, monotone slopes) and u.
    """
    _check_arrays(
        "inverse_cdf_lookup",
        u=u,
        u_knots=u_knots,
        x_knots=x_knots,
        slopes=slopes,
        out=out,
        dtype=np.dtype(np.float64),
    )
    _check_shape("inverse_cdf_lookup", "u", u, (u.shape[0],))
    _check_shape("inverse_cdf_lookup", "out", out, u.shape)
    if u_knots.ndim != 1 or u_knots.shape[0] < 2:
        raise ValueError(
            f"inverse_cdf_lookup: u_knots must be 1-D with at least 2 knots, got shape {u_knots.shape}"
        )
    _check_shape("inverse_cdf_lookup", "x_knots", x_knots, u_knots.shape)
    _check_shape("inverse_cdf_lookup", "slopes", slopes, u_knots.shape)
    K = u_knots.shape[0] - 1
    first = _guide_table(u_knots, GUIDE_FACTOR * K)
    start = np.maximum(first[:-1] - 1, 0)
    depth = int(np.ceil(np.log2(np.max(first[1:] - start))))
    # Per-interval cubic coefficients in t = (u - u_j) / h_j (O(K) numpy, once per call).
    h = np.diff(u_knots)
    x0, x1 = x_knots[:-1], x_knots[1:]
    m0, m1 = h * slopes[:-1], h * slopes[1:]
    dx = x1 - x0
    c2 = 3.0 * dx - 2.0 * m0 - m1
    c3 = m0 + m1 - 2.0 * dx
    # a zero-width interval (a flat stretch of the CDF) is never the one a u falls in
    inv_h = np.divide(1.0, h, out=np.zeros_like(h), where=h > 0)
    with parallel_region():
        _lookup_kernel(
            u,
            u_knots,
            inv_h,
            np.ascontiguousarray(x0),
            m0,
            c2,
            c3,
            float(x_knots[-1]),
            first,
            depth,
            numba.get_num_threads(),
            out,
        )
    return out


@njit(cache=True)
def _exp_sums_kernel(rho, base, inv, abs_base, abs_inv, total, amp, round_w, top):
    m, k = rho.shape[0], base.shape[0]
    for i in range(m):
        r2 = rho[i] * rho[i]
        peak = -np.inf
        for j in range(k):
            peak = max(peak, base[j].real + r2 * inv[j].real)
        # the signed sum compensated (Kahan, per component): its rounding stays O(eps) sum |f|
        # whatever k, below the callers' log2(k) allowance for numpy's pairwise sum
        sr, si, cr, ci = 0.0, 0.0, 0.0, 0.0
        acc_abs, acc_b, acc_i = 0.0, 0.0, 0.0
        for j in range(k):
            af = np.exp(base[j].real + r2 * inv[j].real - peak)  # |f|
            phase = base[j].imag + r2 * inv[j].imag
            y = af * np.cos(phase) - cr
            t = sr + y
            cr = (t - sr) - y
            sr = t
            y = af * np.sin(phase) - ci
            t = si + y
            ci = (t - si) - y
            si = t
            acc_abs += af
            acc_b += af * abs_base[j]
            acc_i += af * abs_inv[j]
        total[i] = complex(sr, si)
        amp[i], round_w[i], top[i] = acc_abs, acc_b + r2 * acc_i, peak


def exp_sums(rho, base, inv, abs_base, abs_inv):
    """Per frequency rho_i, with L_ij = base_j + rho_i^2 inv_j (complex) and top_i = max_j Re L_ij:
    ``(sum_j f_ij, sum_j |f_ij|, sum_j |f_ij| (abs_base_j + rho_i^2 abs_inv_j), top)``,
    f_ij = exp(L_ij - top_i). One pass per row, no m x k temporaries (float64 / complex128)."""
    rho = np.ascontiguousarray(rho, dtype=np.float64)
    base = np.ascontiguousarray(base, dtype=np.complex128)
    inv = np.ascontiguousarray(inv, dtype=np.complex128)
    abs_base = np.ascontiguousarray(abs_base, dtype=np.float64)
    abs_inv = np.ascontiguousarray(abs_inv, dtype=np.float64)
    _check_shape("exp_sums", "rho", rho, (rho.size,))
    _check_shape("exp_sums", "base", base, (base.size,))
    for name, a in (("inv", inv), ("abs_base", abs_base), ("abs_inv", abs_inv)):
        _check_shape("exp_sums", name, a, base.shape)
    m = rho.shape[0]
    total = np.empty(m, dtype=np.complex128)
    amp, round_w, top = np.empty(m), np.empty(m), np.empty(m)
    _exp_sums_kernel(rho, base, inv, abs_base, abs_inv, total, amp, round_w, top)
    return total, amp, round_w, top


@njit(cache=True)
def _laguerre_bound_kernel(x, nu, qa, lt, lerr, lbsum):
    n_terms = qa.shape[0]
    log2 = np.log(2.0)
    ep, ec, bp, bc, err, bsum = 0.0, 0.0, 0.0, 1.0, 0.0, 0.0
    scale = 0.0  # the floats are scaled by 2^-scale (exact) so that nothing overflows
    for n in range(n_terms):
        if n >= 1:
            c2 = abs(n - 1 + nu)
            e_new = (abs(2 * n - 1 + nu - x) * ec + c2 * ep) / n + 2.0 * 2.0**-scale
            b_new = ((2 * n - 1 + nu + x) * bc + c2 * bp) / n
            ep, ec, bp, bc = ec, e_new, bc, b_new
            if bc > 2.0**600:
                f = 2.0**-600
                ep, ec, bp, bc, err, bsum = ep * f, ec * f, bp * f, bc * f, err * f, bsum * f
                scale += 600.0
        err += qa[n] * ec
        bsum += qa[n] * bc
        shift = scale * log2
        t = qa[n] * bc
        lt[n] = np.log(t) + shift if t > 0.0 else -np.inf
        lerr[n] = np.log(err) + shift if err > 0.0 else -np.inf
        lbsum[n] = np.log(bsum) + shift if bsum > 0.0 else -np.inf


def laguerre_bound_logs(x, nu, qa):
    """Bounds that carry the exact fixed-point Laguerre sums of the Gaussian oscillation.

    For S(x) = sum_n q_n L_n^nu(x) computed by the three-term recurrence
    n L_n = (2n - 1 + nu - x) L_(n-1) - (n - 1 + nu) L_(n-2) with two roundings of one unit per
    step, returns, for n = 0 .. len(qa) - 1 (float64 arrays, natural logs):

    * ``lt[n] = log(qa_n L_n^nu(-x))``, the bound term (|L_n^nu(x)| <= L_n^nu(-x));
    * ``lerr[n] = log(sum_(j<=n) qa_j e_j)``, e_j the error majorant of L_j in units,
      e_j = (|2j - 1 + nu - x| e_(j-1) + |j - 1 + nu| e_(j-2)) / j + 2, e_0 = 0;
    * ``lbsum[n] = log(sum_(j<=n) qa_j L_j^nu(-x))``.

    ``qa`` are upper bounds of |q_n| (float64, >= 0). These do not depend on the working
    precision, so one call serves every precision a point is retried at.
    """
    qa = np.ascontiguousarray(qa, dtype=np.float64)
    lt, lerr, lbsum = (np.empty(qa.shape[0]) for _ in range(3))
    _laguerre_bound_kernel(float(x), float(nu), qa, lt, lerr, lbsum)
    return lt, lerr, lbsum
