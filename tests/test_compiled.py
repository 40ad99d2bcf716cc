"""Tests of the numba kernels in spectralkit._compiled (and of the output pool of _runtime and
the Gram sums of _krein that they feed).

Accuracy of the polynomial sincos is measured in ulps against exact references (mpmath at
200 bits for float64; float64 libm on the exact float32 argument for float32, whose own error,
< 1 float64 ulp, is 2^-29 float32 ulp); the fused transform is compared with a numpy reference
within a rigorous GEMM rounding bound; determinism is tested bit for bit.
"""

import re
import warnings

import mpmath
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spectralkit import _compiled as C
from spectralkit import _krein, _runtime

EPS64 = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def _ulp_errors_f64(x, values, fn):
    """|values - fn(x)| in ulps of the exact result, fn evaluated by mpmath at 200 bits."""
    errs = np.empty(len(x))
    with mpmath.workprec(200):
        for i, (xi, vi) in enumerate(zip(x, values)):
            exact = fn(mpmath.mpf(float(xi)))
            ulp = np.spacing(abs(float(exact)))
            errs[i] = float(abs(mpmath.mpf(float(vi)) - exact)) / ulp
    return errs


def _ulp_errors_f32(values, ref64):
    ulp = np.spacing(np.abs(ref64).astype(np.float32)).astype(np.float64)
    return np.abs(values.astype(np.float64) - ref64) / ulp


def _near_multiples_of_pio2_f64(rng, count, kmax):
    """Doubles nearest k pi/2 (k log-uniform in [1, kmax]) and their +-1, +-2 ulp neighbours."""
    k = np.unique(np.exp(rng.uniform(0.0, np.log(kmax), count)).astype(np.int64))
    with mpmath.workprec(200):
        base = np.array([float(int(ki) * mpmath.pi / 2) for ki in k])
    xs = [base]
    for j in (1, 2):
        xs.append(np.nextafter(base, np.inf) if j == 1 else np.nextafter(np.nextafter(base, np.inf), np.inf))
        xs.append(
            np.nextafter(base, -np.inf) if j == 1 else np.nextafter(np.nextafter(base, -np.inf), -np.inf)
        )
    x = np.concatenate(xs)
    return np.concatenate([x, -x])


def _reference_features(X, Wp, Wm, sp, sm, bp, bm, feature_map):
    """numpy float64 reference and a rigorous bound on its distance to the compiled result.

    Both GEMMs are within gamma_d sum_k |x_k w_k| (gamma_d ~ d eps) of the exact product, and
    each feature moves by at most scale * (argument error); add 4 ulps for sincos + scaling.
    """
    X64, eps = X.astype(np.float64), np.finfo(X.dtype).eps
    blocks, bounds = [], []
    for W, s, b in ((Wp, sp, bp), (Wm, sm, bm)):
        if W.shape[0] == 0:
            continue
        W64 = W.astype(np.float64)
        A = X64 @ W64.T
        absA = np.abs(X64) @ np.abs(W64).T
        if feature_map == "cos":
            A = A + b.astype(np.float64)
            absA = absA + np.abs(b.astype(np.float64))
        bound = abs(s) * ((X.shape[1] + 2) * eps * absA + 4 * eps)
        if feature_map == "sincos":
            blocks += [s * np.cos(A), s * np.sin(A)]
            bounds += [bound, bound]
        else:
            blocks.append(s * np.cos(A))
            bounds.append(bound)
    return np.hstack(blocks), np.hstack(bounds)


@pytest.fixture(params=[None, 1], ids=["panels-default", "panels-of-16"])
def panel_bytes(request, monkeypatch):
    """The default GEMM panels, and panels of 16 frequencies (ragged last panel) for every width."""
    if request.param is not None:
        monkeypatch.setattr(C, "PANEL_BYTES", request.param)
    return request.param


@pytest.fixture
def restore_threads():
    n = numba.get_num_threads()
    yield
    numba.set_num_threads(n)


# ------------------------------------------------------------------------------------------
# polynomial sincos
# ------------------------------------------------------------------------------------------


def test_sincos_float64_random_arguments_within_1_ulp():
    rng = np.random.default_rng(20261121)
    x = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, 400),
            rng.uniform(-1e3, 1e3, 400),
            rng.uniform(-1e8, 1e8, 400),
            rng.uniform(-1e12, 1e12, 400),
            np.sign(rng.standard_normal(800)) * np.exp(rng.uniform(np.log(1e-12), np.log(1e12), 800)),
            [0.0, -0.0, 1e-300, np.pi / 4, -np.pi / 4, 1e8, -1e8, 1e12, -1e12],
        ]
    )
    s, c = C.sincos(x)
    assert s.dtype == c.dtype == np.float64
    err_s = _ulp_errors_f64(x, s, mpmath.sin)
    err_c = _ulp_errors_f64(x, c, mpmath.cos)
    assert err_s.max() < 1.0, (err_s.max(), x[err_s.argmax()])
    assert err_c.max() < 1.0, (err_c.max(), x[err_c.argmax()])


def test_sincos_float64_near_multiples_of_half_pi_within_1_ulp():
    # Reduced arguments down to ~1e-20 (k up to 1e12 * 2/pi): catastrophic cancellation in a
    # naive reduction; the three-part fma reduction must keep full relative accuracy.
    rng = np.random.default_rng(7)
    x = _near_multiples_of_pio2_f64(rng, 300, C.SINCOS_MAX_ARG[np.dtype(np.float64)] * 2 / np.pi)
    s, c = C.sincos(x)
    err_s = _ulp_errors_f64(x, s, mpmath.sin)
    err_c = _ulp_errors_f64(x, c, mpmath.cos)
    assert err_s.max() < 1.0, (err_s.max(), x[err_s.argmax()])
    assert err_c.max() < 1.0, (err_c.max(), x[err_c.argmax()])


def test_sincos_float64_octant_boundaries_within_1_ulp():
    # Near (k + 1/2) pi/2 the quadrant choice is ambiguous and |r| is largest (~pi/4).
    rng = np.random.default_rng(8)
    k = np.concatenate([rng.integers(0, 60_000_000, 200), rng.integers(0, 600_000_000_000, 200)])
    with mpmath.workprec(200):
        x = np.array([float((int(ki) + mpmath.mpf(1) / 2) * mpmath.pi / 2) for ki in k])
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf), -x])
    s, c = C.sincos(x)
    assert _ulp_errors_f64(x, s, mpmath.sin).max() < 1.0
    assert _ulp_errors_f64(x, c, mpmath.cos).max() < 1.0


def test_sincos_float32_within_2_ulp_up_to_max_arg():
    rng = np.random.default_rng(11)
    lim = C.SINCOS_MAX_ARG[np.dtype(np.float32)]
    x = np.concatenate(
        [
            rng.uniform(-1e4, 1e4, 200_000),
            rng.uniform(-lim, lim, 200_000),
            rng.uniform(-4.0, 4.0, 100_000),
            np.sign(rng.standard_normal(100_000)) * np.exp(rng.uniform(np.log(1e-20), np.log(lim), 100_000)),
        ]
    ).astype(np.float32)
    # float32 neighbours of k pi/2 and (k + 1/2) pi/2: every k up to 1e4, random k up to lim.
    k = np.concatenate([np.arange(1, 6400), rng.integers(6400, int(lim * 2 / np.pi), 50_000)])
    for base in (k * (np.pi / 2), (k + 0.5) * (np.pi / 2)):
        b32 = base.astype(np.float32)
        x = np.concatenate(
            [x, b32, np.nextafter(b32, np.float32(np.inf)), np.nextafter(b32, np.float32(-np.inf)), -b32]
        )
    s, c = C.sincos(x)
    assert s.dtype == c.dtype == np.float32
    x64 = x.astype(np.float64)
    err_s = _ulp_errors_f32(s, np.sin(x64))
    err_c = _ulp_errors_f32(c, np.cos(x64))
    assert err_s.max() <= 2.0, (err_s.max(), x[err_s.argmax()])
    assert err_c.max() <= 2.0, (err_c.max(), x[err_c.argmax()])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sincos_exactly_odd_and_even(dtype):
    # The shifter rounds half to even symmetrically and every step is sign-symmetric, so the
    # exhaustive float32 check over x > 0 (docs/performance.md) covers x < 0 too.
    x = np.random.default_rng(13).uniform(0, C.SINCOS_MAX_ARG[np.dtype(dtype)], 100_000).astype(dtype)
    s, c = C.sincos(x)
    s_neg, c_neg = C.sincos(-x)
    assert np.array_equal(s_neg, -s) and np.array_equal(c_neg, c)


@pytest.mark.parametrize("kernel", ["_store_sincos", "_store_cos"])
def test_the_float32_row_loops_vectorise_without_int64_lanes(kernel):
    # An int64 lane (numba widens integer arithmetic: a quadrant taken as an integer, a counter)
    # held the float32 loop to half the vector width; the quadrant is read in float arithmetic
    # and the range check is a flag. Compiled afresh: cached code cannot be inspected.
    func = numba.njit(fastmath=C._FASTMATH)(getattr(C, kernel).py_func)
    a = np.linspace(-3, 3, 64, dtype=np.float32)
    out = np.empty_like(a)
    if kernel == "_store_sincos":
        func(a, np.float32(1), out, out.copy(), np.float32(1e6))
    else:
        func(a, np.zeros_like(a), np.float32(1), out, np.float32(1e6))
    llvm = func.inspect_llvm(func.signatures[0])
    assert re.search(r"<\d+ x float>", llvm), "the float32 row loop is not vectorised"
    assert not re.search(r"<\d+ x i64>", llvm), re.findall(r"<\d+ x i64>", llvm)[:3]


# ------------------------------------------------------------------------------------------
# fused_features
# ------------------------------------------------------------------------------------------

CASES = [
    # (n, d, s_plus, s_minus, chunk_rows)
    (1, 3, 5, 0, 256),
    (1, 17, 37, 11, 256),
    (1001, 17, 37, 0, 256),
    (1001, 17, 37, 11, 100),
    (777, 54, 131, 29, 64),
    (300, 5, 1, 1, 7),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("feature_map", ["sincos", "cos"])
@pytest.mark.parametrize("n,d,s_plus,s_minus,chunk_rows", CASES)
def test_fused_features_matches_numpy(dtype, feature_map, n, d, s_plus, s_minus, chunk_rows, panel_bytes):
    if panel_bytes is not None and s_plus <= 16:
        pytest.skip("one panel either way")  # nothing for panels of 16 frequencies to cut
    rng = np.random.default_rng(n + 7 * d + 13 * s_plus + s_minus)
    X = rng.uniform(-1, 1, (n, d)).astype(dtype)
    Wp = rng.standard_normal((s_plus, d)).astype(dtype)
    Wm = rng.standard_normal((s_minus, d)).astype(dtype) * 3
    bp = rng.uniform(0, 2 * np.pi, s_plus).astype(dtype)
    bm = rng.uniform(0, 2 * np.pi, s_minus).astype(dtype)
    sp, sm = dtype(0.37), dtype(1.9)
    width = (2 if feature_map == "sincos" else 1) * (s_plus + s_minus)
    out = np.full((n, width), np.nan, dtype=dtype)
    offsets = (bp, bm) if feature_map == "cos" else (None, None)
    res = C.fused_features(X, Wp, Wm, sp, sm, *offsets, out, feature_map, chunk_rows=chunk_rows)
    assert res is out and out.dtype == dtype  # written in place, dtype preserved
    ref, bound = _reference_features(X, Wp, Wm, sp, sm, bp, bm, feature_map)
    assert np.all(np.abs(out - ref) <= bound), np.max(np.abs(out - ref) / bound)


def test_fused_features_detects_a_wrong_layout():
    # The reference comparison distinguishes the blocks: swapping cos and sin fails it.
    rng = np.random.default_rng(1)
    X, Wp, Wm = rng.standard_normal((50, 4)), rng.standard_normal((6, 4)), np.empty((0, 4))
    out = np.empty((50, 12))
    C.fused_features(X, Wp, Wm, 1.0, 0.0, None, None, out, "sincos")
    ref, bound = _reference_features(X, Wp, Wm, 1.0, 0.0, None, None, "sincos")
    assert np.all(np.abs(out - ref) <= bound)
    swapped = np.hstack([out[:, 6:], out[:, :6]])
    assert not np.all(np.abs(swapped - ref) <= bound)


def test_read_only_and_writeable_inputs_share_one_compiled_loop():
    # A read-only input (a memory map) must not compile a second specialisation (~3 s per dtype),
    # and gives the same output as a writeable one.
    rng = np.random.default_rng(2)
    X, Wp, Wm = rng.standard_normal((40, 3)), rng.standard_normal((5, 3)), rng.standard_normal((2, 3))
    frozen = X.copy()
    frozen.flags.writeable = False
    out_w, out_r = np.empty((40, 14)), np.empty((40, 14))
    C.fused_features(X, Wp, Wm, 1.0, 0.5, None, None, out_w, "sincos")
    C.fused_features(frozen, Wp, Wm, 1.0, 0.5, None, None, out_r, "sincos")
    np.testing.assert_array_equal(out_w, out_r)
    assert C.finite_max_abs(X) == C.finite_max_abs(frozen)
    for kernel in (C._fused_kernel, C._finite_max_abs_kernel):
        f64 = [sig for sig in kernel.signatures if sig[0].dtype == numba.float64]
        assert len(f64) == 1 and f64[0][0].mutable is False, kernel.signatures
    assert X.flags.writeable  # the caller's array keeps its flags


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 300),
    d=st.integers(1, 40),
    s_plus=st.integers(1, 70),
    s_minus=st.integers(0, 20),
    chunk_rows=st.integers(1, 400),
    f32=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_fused_features_property(n, d, s_plus, s_minus, chunk_rows, f32, seed):
    dtype = np.float32 if f32 else np.float64
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, d)).astype(dtype)
    Wp = rng.standard_normal((s_plus, d)).astype(dtype)
    Wm = rng.standard_normal((s_minus, d)).astype(dtype)
    out = np.empty((n, 2 * (s_plus + s_minus)), dtype=dtype)
    C.fused_features(X, Wp, Wm, 0.5, 0.25, None, None, out, "sincos", chunk_rows=chunk_rows)
    ref, bound = _reference_features(X, Wp, Wm, 0.5, 0.25, None, None, "sincos")
    assert np.all(np.abs(out - ref) <= bound)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("feature_map", ["sincos", "cos"])
def test_fused_features_bit_identical_across_threads_and_chunks(
    dtype, feature_map, restore_threads, panel_bytes
):
    rng = np.random.default_rng(5)
    n, d, s_plus, s_minus = 1001, 23, 45, 13
    X = rng.standard_normal((n, d)).astype(dtype)
    Wp = rng.standard_normal((s_plus, d)).astype(dtype)
    Wm = rng.standard_normal((s_minus, d)).astype(dtype)
    bp = rng.uniform(0, 6, s_plus).astype(dtype)
    bm = rng.uniform(0, 6, s_minus).astype(dtype)
    width = (2 if feature_map == "sincos" else 1) * (s_plus + s_minus)
    results = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        for chunk_rows in (1, 63, 64, 100, 256, 1000, 5000):
            out = np.empty((n, width), dtype=dtype)
            C.fused_features(X, Wp, Wm, 0.3, 0.7, bp, bm, out, feature_map, chunk_rows=chunk_rows)
            results.append(out)
    for r in results[1:]:
        assert np.array_equal(r, results[0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("byte_shift", [0, 4, 8, 1])
def test_fill_writes_every_element_whatever_the_alignment(dtype, stream, byte_shift):
    # 64-byte lines in the middle, plain stores before the first boundary and after the last,
    # and a view at an odd byte offset (not aligned to its elements) stored plainly throughout
    size = np.dtype(dtype).itemsize
    for n in (0, 1, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 77):
        raw = np.zeros(n * size + 64 + byte_shift, dtype=np.uint8)
        base = (-raw.ctypes.data) % 64 + byte_shift  # 64-aligned, then shifted
        view = raw[base : base + n * size].view(dtype)
        C.fill(view, 2.5, stream=stream)
        assert np.all(view == 2.5)
        assert not raw[:base].any() and not raw[base + n * size :].any()  # nothing outside


def test_column_block_panels_fit_the_budget_and_cover_the_frequencies(monkeypatch):
    for dtype in (np.float32, np.float64):
        rows, size = C.GEMM_ROWS[np.dtype(dtype)], np.dtype(dtype).itemsize
        for s in (1, 15, 16, 17, 100, 128, 129, 511, 1024, 4097):
            c = C.column_block(dtype, s)
            assert 1 <= c <= s
            if rows * s * size <= C.PANEL_BYTES:
                assert c == s  # narrow maps are not cut
            else:
                assert c % 16 == 0 and rows * c * size <= C.PANEL_BYTES
    monkeypatch.setattr(C, "PANEL_BYTES", 1)
    assert C.column_block(np.float64, 37) == 16  # the smallest panel; the last one is ragged (5)


@pytest.mark.parametrize("dtype,w_max", [(np.float64, 2**50), (np.float32, 2**21)])
def test_fused_features_fallback_beyond_max_arg(dtype, w_max):
    # Integer data and frequencies make X W^T exact in the dtype, with |arguments| up to 4 w_max
    # (float64: 4.5e15, float32: 8.4e6), far beyond SINCOS_MAX_ARG and, at the top, beyond the
    # range where the polynomial reduction works: the wrapper must warn and take its accurate
    # fallback, which matches numpy on the exact arguments to a few ulps.
    rng = np.random.default_rng(9)
    X = rng.integers(-2, 3, (300, 2)).astype(dtype)
    Wp = rng.integers(-w_max, w_max, (16, 2)).astype(dtype)
    Wm = rng.integers(-w_max, w_max, (3, 2)).astype(dtype)
    out = np.empty((300, 38), dtype=dtype)
    with pytest.warns(RuntimeWarning, match="exceed"):
        C.fused_features(X, Wp, Wm, 1.0, 1.0, None, None, out, "sincos")
    A = np.hstack([X.astype(np.float64) @ W.astype(np.float64).T for W in (Wp, Wm)])
    assert np.abs(A).max() > 2 * C.SINCOS_MAX_ARG[np.dtype(dtype)]
    ref = np.hstack([np.cos(A[:, :16]), np.sin(A[:, :16]), np.cos(A[:, 16:]), np.sin(A[:, 16:])])
    assert np.max(np.abs(out - ref)) <= 4 * np.finfo(dtype).eps


def test_fused_features_no_warning_within_range():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((100, 3))
    W = rng.standard_normal((8, 3)) * 1e6
    out = np.empty((100, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C.fused_features(X, W, np.empty((0, 3)), 1.0, 0.0, None, None, out, "sincos")


def _layout_args(n=4, d=3, s=2):
    X = np.ones((n, d))
    return dict(
        X=X,
        W_plus=np.ones((s, d)),
        W_minus=np.empty((0, d)),
        scale_plus=1.0,
        scale_minus=0.0,
        offsets_plus=None,
        offsets_minus=None,
        out=np.empty((n, 2 * s)),
        feature_map="sincos",
    )


@pytest.mark.parametrize(
    "change,exc,match",
    [
        (
            dict(X=np.ones((4, 3), dtype=np.float32)),
            ValueError,
            "W_plus must have dtype float32, got float64",
        ),
        (dict(X=np.ones((4, 3), dtype=np.int64)), ValueError, "X must be float32 or float64, got int64"),
        (dict(X=np.ones((3, 4)).T), ValueError, "X must be C-contiguous"),
        (dict(X=np.ones(3)), ValueError, r"X must be 2-D, got shape \(3,\)"),
        (dict(W_plus=np.ones((2, 5))), ValueError, r"W_plus must have shape \(2, 3\), got \(2, 5\)"),
        (dict(out=np.empty((4, 5))), ValueError, r"out must have shape \(4, 4\), got \(4, 5\)"),
        (
            dict(out=np.empty((4, 4), dtype=np.float32)),
            ValueError,
            "out must have dtype float64, got float32",
        ),
        (dict(out=[[0.0] * 4] * 4), TypeError, "out must be a numpy array, got list"),
        (dict(feature_map="tan"), ValueError, "feature_map must be one of 'sincos', 'cos', got 'tan'"),
    ],
)
def test_fused_features_rejects_a_bad_layout_with_a_message(change, exc, match):
    # real exceptions, not asserts: they must hold under python -O, the compiled loop relies on them
    args = dict(_layout_args(), **change)
    with pytest.raises(exc, match=match):
        C.fused_features(**args)


def test_fused_features_rejects_read_only_output_and_bad_chunk_rows():
    args = _layout_args()
    args["out"].flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        C.fused_features(**args)
    with pytest.raises(ValueError, match="chunk_rows must be an integer >= 1, got 0"):
        C.fused_features(**_layout_args(), chunk_rows=0)
    with pytest.raises(ValueError, match=r"sincos: out_cos must have shape \(5,\), got \(4,\)"):
        C.sincos(np.ones(5), np.empty(5), np.empty(4))
    with pytest.raises(ValueError, match="inverse_cdf_lookup: u must have dtype float64, got float32"):
        C.inverse_cdf_lookup(
            np.ones(3, dtype=np.float32), np.array([0.0, 1.0]), np.zeros(2), np.ones(2), np.empty(3)
        )


# ------------------------------------------------------------------------------------------
# output_array: recycled output memory
# ------------------------------------------------------------------------------------------

BIG = _runtime.OUTPUT_POOL_MIN_BYTES // 8 + 1000  # float64 elements: just above the pool threshold


@pytest.fixture
def empty_pool():
    _runtime.release_output_memory()
    yield
    _runtime.release_output_memory()


def test_output_array_is_a_plain_writeable_c_array(empty_pool):
    for dtype in (np.float32, np.float64):
        a = _runtime.output_array((BIG // 100, 100), dtype)
        assert a.shape == (BIG // 100, 100) and a.dtype == dtype
        assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
        a[...] = 1.5
        assert a.sum() == 1.5 * a.size
    small = _runtime.output_array((10, 3), np.float64)
    assert small.flags.owndata  # below the threshold: numpy.empty


def test_output_array_recycles_only_dead_arrays(empty_pool):
    a = _runtime.output_array((BIG,), np.float64)
    addr = a.ctypes.data
    b = _runtime.output_array((BIG,), np.float64)
    assert b.ctypes.data != addr  # a is alive: its memory is not handed out again
    a[...] = 7.0
    view = a[10:20]
    del a
    c = _runtime.output_array((BIG,), np.float64)
    assert c.ctypes.data != addr  # a view keeps the memory in use
    c[...] = -1.0
    assert np.all(view == 7.0)
    del view
    d = _runtime.output_array((BIG,), np.float64)
    assert d.ctypes.data == addr  # now it is free: recycled
    # a request less than half the free block's size takes a new mapping instead
    del d
    assert _runtime.output_array((BIG // 3,), np.float64).ctypes.data != addr
    assert _runtime.release_output_memory() >= BIG * 8


def test_output_pool_keeps_a_bounded_number_of_free_blocks(empty_pool):
    arrays = [_runtime.output_array((BIG,), np.float64) for _ in range(7)]
    del arrays
    assert _runtime._output_pool.free_bytes() <= 4 * (-(-BIG * 8 // (2 << 20)) * (2 << 20))


def test_recycled_output_is_overwritten_completely(empty_pool):
    # a transform into recycled memory must not leak the previous contents
    rng = np.random.default_rng(3)
    n, d, s = 5000, 7, 300  # 5000 x 600 float64 = 24 MB: pooled
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((s, d))
    junk = _runtime.output_array((n, 2 * s), np.float64)
    junk[...] = np.nan
    del junk
    out = _runtime.output_array((n, 2 * s), np.float64)
    assert np.isnan(out).all()  # the same memory came back, contents untouched
    C.fused_features(X, W, np.empty((0, d)), 0.5, 0.0, None, None, out, "sincos")
    ref, bound = _reference_features(X, W, np.empty((0, d)), 0.5, 0.0, None, None, "sincos")
    assert np.all(np.abs(out - ref) <= bound)


# ------------------------------------------------------------------------------------------
# GramSums: streaming ridge sums
# ------------------------------------------------------------------------------------------


def test_gram_sums_merge_is_exact_where_the_one_pass_formula_cancels():
    # features with mean 1e4 and spread 1e-2: sum phi phi^T - n mean mean^T loses ~12 digits;
    # the blockwise-centred sums merged by Chan's update keep the rounding level
    rng = np.random.default_rng(0)
    n, s = 3000, 5
    Phi = 1e4 + 1e-2 * rng.standard_normal((n, s))
    Y = 1e3 + rng.standard_normal((n, 2))
    Pc, Yc = Phi - Phi.mean(0), Y - Y.mean(0)  # two-pass reference (means of 3000 rows: accurate)
    ref_G, ref_C = Pc.T @ Pc, Pc.T @ Yc
    sums = _krein.GramSums(s, 2, center=True)
    for a, b in ((0, 700), (700, 701), (701, 2000), (2000, 3000)):  # uneven blocks, one of 1 row
        sums.add(Phi[a:b].copy(), Y[a:b])
    # the same rows in another order and grouping, merged as a tree
    left, right = _krein.GramSums(s, 2, True), _krein.GramSums(s, 2, True)
    left.add(Phi[1500:].copy(), Y[1500:])
    right.add(Phi[:1500].copy(), Y[:1500])
    tree = left.merge(right)
    # rounding of the centring, eps |Phi| per entry, times the centred factor, over n rows (worst
    # case; both sides of the comparison carry it)
    tol_G = 2 * n * EPS64 * np.abs(Phi).max() * np.abs(Pc).max()
    tol_C = 2 * n * EPS64 * np.abs(Phi).max() * np.abs(Yc).max()
    for got in (sums, tree):
        assert got.n == n
        assert np.max(np.abs(got.gram_matrix() - ref_G)) <= tol_G  # ~1e-9 of the entries
        assert np.max(np.abs(got.cross - ref_C)) <= tol_C
        np.testing.assert_allclose(got.mean, Phi.mean(0), rtol=1e-14)
    # negative control: the one-pass formula misses the same bound by orders of magnitude
    naive = Phi.T @ Phi - n * np.outer(Phi.mean(0), Phi.mean(0))
    assert np.max(np.abs(naive - ref_G)) > 1e4 * tol_G


def test_gram_sums_without_centring_are_the_raw_sums():
    rng = np.random.default_rng(1)
    Phi, Y = rng.standard_normal((300, 4)), rng.standard_normal((300, 1))
    sums = _krein.GramSums(4, 1, center=False).add(Phi[:100].copy(), Y[:100]).add(Phi[100:].copy(), Y[100:])
    np.testing.assert_allclose(sums.gram_matrix(), Phi.T @ Phi, rtol=1e-13)
    np.testing.assert_allclose(sums.cross, Phi.T @ Y, rtol=1e-13)
    assert not sums.mean.any() and sums.n == 300


# ------------------------------------------------------------------------------------------
# inverse_cdf_lookup
# ------------------------------------------------------------------------------------------


def _hermite_reference(u, uk, xk, mk):
    """Plain numpy cubic Hermite (searchsorted + Hermite basis), in float64."""
    j = np.clip(np.searchsorted(uk, u, side="right") - 1, 0, len(uk) - 2)
    h = uk[j + 1] - uk[j]
    t = (u - uk[j]) / h
    h00 = 2 * t**3 - 3 * t**2 + 1
    h10 = t**3 - 2 * t**2 + t
    h01 = -2 * t**3 + 3 * t**2
    h11 = t**3 - t**2
    return h00 * xk[j] + h10 * h * mk[j] + h01 * xk[j + 1] + h11 * h * mk[j + 1]


def _table(rng, K, clustered=False):
    if clustered:  # knots crowded near 0 and 1 (as for heavy-tailed laws), some 1e-12 apart
        v = np.sort(
            np.concatenate(
                [rng.uniform(0, 1, K - 1 - 20), 0.3 + 1e-12 * np.arange(1, 11), 1 - 1e-9 * np.arange(1, 11)]
            )
        )
    else:
        v = np.sort(rng.uniform(0, 1, K - 1))
    uk = np.concatenate([[0.0], v, [1.0]])
    # A smooth increasing quantile function x(u) = tan(1.4 (u - 1/2)) and its derivative.
    xk = np.tan(1.4 * (uk - 0.5))
    mk = 1.4 / np.cos(1.4 * (uk - 0.5)) ** 2
    return uk, xk, mk


@pytest.mark.parametrize("K,clustered", [(1, False), (2, False), (37, False), (1000, False), (500, True)])
def test_inverse_cdf_lookup_matches_hermite_reference(K, clustered):
    rng = np.random.default_rng(K)
    uk, xk, mk = _table(rng, K, clustered)
    u = np.concatenate(
        [
            rng.uniform(0, 1, 100_000),
            [0.0, 1.0, np.nextafter(1.0, 0.0)],
            np.nextafter(uk, 0.0)[1:],
            np.nextafter(uk, 1.0)[:-1],
        ]
    )
    out = np.full_like(u, np.nan)
    assert C.inverse_cdf_lookup(u, uk, xk, mk, out) is out
    ref = _hermite_reference(u, uk, xk, mk)
    scale = np.abs(xk).max() + np.abs(mk).max() * np.diff(uk).max()
    assert np.max(np.abs(out - ref)) <= 16 * EPS64 * scale


def test_inverse_cdf_lookup_exact_at_knots():
    rng = np.random.default_rng(3)
    for K, clustered in ((1, False), (10, False), (777, True)):
        uk, xk, mk = _table(rng, K, clustered)
        out = np.empty_like(uk)
        C.inverse_cdf_lookup(uk.copy(), uk, xk, mk, out)
        assert np.array_equal(out, xk)


def test_inverse_cdf_lookup_reproduces_cubics_exactly():
    # Cubic Hermite interpolation is exact for a cubic x(u): the error is rounding only.
    rng = np.random.default_rng(4)
    uk = np.concatenate([[0.0], np.sort(rng.uniform(0, 1, 50)), [1.0]])
    x = np.polynomial.Polynomial([0.1, 2.0, -0.5, 3.0])
    u = rng.uniform(0, 1, 200_000)
    out = np.empty_like(u)
    C.inverse_cdf_lookup(u, uk, x(uk), x.deriv()(uk), out)
    assert np.max(np.abs(out - x(u))) <= 32 * EPS64 * 5.0


def test_inverse_cdf_lookup_detects_wrong_interval():
    # A lookup that used the neighbouring interval would fail the reference comparison.
    rng = np.random.default_rng(6)
    uk, xk, mk = _table(rng, 100)
    u = rng.uniform(0, 1, 1000)
    ref = _hermite_reference(u, uk, xk, mk)
    shifted = _hermite_reference(np.clip(u + 0.02, 0, 1), uk, xk, mk)
    assert np.max(np.abs(shifted - ref)) > 1e3 * 16 * EPS64 * np.abs(xk).max()


def test_inverse_cdf_lookup_threads_identical(restore_threads):
    rng = np.random.default_rng(12)
    uk, xk, mk = _table(rng, 300)
    u = rng.uniform(0, 1, 50_000)
    outs = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        outs.append(C.inverse_cdf_lookup(u, uk, xk, mk, np.empty_like(u)))
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_finite_max_abs_counts_nan_and_inf_and_finds_the_peak(dtype, restore_threads):
    rng = np.random.default_rng(11)
    X = rng.standard_normal((3001, 7)).astype(dtype)  # more entries than one worker's minimum
    X[1234, 3] = -1e4  # the peak is an absolute value
    for threads in (1, 2):
        numba.set_num_threads(threads)
        assert C.finite_max_abs(X) == (0, float(np.abs(X).max())) == (0, 1e4)
    Y = X.copy()
    Y[0, 0], Y[17, 2], Y[-1, -1] = np.nan, np.inf, -np.inf
    n_bad, peak = C.finite_max_abs(Y)
    assert n_bad == 3 and peak == 1e4  # the peak of the finite entries
    assert C.finite_max_abs(np.full((2, 2), np.nan, dtype=dtype)) == (4, 0.0)
    assert C.finite_max_abs(np.zeros((0, 5), dtype=dtype)) == (0, 0.0)
    assert C.finite_max_abs(np.array([[-0.0, 0.0]], dtype=dtype)) == (0, 0.0)


def test_finite_max_abs_requires_a_contiguous_float_array():
    with pytest.raises(ValueError, match="C-contiguous"):
        C.finite_max_abs(np.ones((4, 4))[:, ::2])
    with pytest.raises(ValueError, match="float32 or float64"):
        C.finite_max_abs(np.ones((2, 2), dtype=np.int64))


@pytest.mark.parametrize("advice", ["free", "dontneed", None])
def test_output_pool_advice_on_give_back(advice):
    # bench_featurize --allocation compares the pool's advice on give-back; each keeps recycling
    pool = _runtime._OutputPool(_runtime.OUTPUT_POOL_MIN_BYTES, 1 << 30, 2, advice=advice)
    a = pool.empty((BIG,), np.float64)
    addr = a.ctypes.data
    a[...] = 2.0
    del a
    b = pool.empty((BIG,), np.float64)
    assert b.ctypes.data == addr
    b[...] = 3.0
    assert np.all(b == 3.0)
    del b
    pool.clear()
    assert pool.free_bytes() == 0


def test_output_pool_rejects_an_unknown_advice():
    with pytest.raises(ValueError, match=r"advice must be one of \[.*'free'.*\], got 'sometimes'"):
        _runtime._OutputPool(1, 1, 1, advice="sometimes")


# ------------------------------------------------------------------------------------------
# exp_sums (the Gaussian-rational rays' panel sums)
# ------------------------------------------------------------------------------------------


def test_exp_sums_against_mpmath_and_the_numpy_formula():
    rng = np.random.default_rng(5)
    k = 3000
    rho = np.array([0.0, 0.7, 3.0])
    base = rng.normal(0, 3, k) + 1j * rng.normal(0, 40, k)  # wild phases: the sum cancels
    inv = -rng.uniform(0.1, 1, k) + 1j * rng.normal(0, 1, k)
    abs_base, abs_inv = np.abs(base) + 8.0, np.abs(inv)
    total, amp, round_w, top = C.exp_sums(rho, base, inv, abs_base, abs_inv)
    L = base[None, :] + (rho**2)[:, None] * inv[None, :]
    assert np.array_equal(top, L.real.max(axis=1))
    f = np.exp(L - top[:, None])
    assert np.allclose(amp, np.abs(f).sum(axis=1), rtol=1e-13, atol=0)
    assert np.allclose(round_w, np.abs(f) @ abs_base + rho**2 * (np.abs(f) @ abs_inv), rtol=1e-13, atol=0)
    with mpmath.workdps(40):
        for i in range(rho.size):
            exact = mpmath.fsum(
                mpmath.exp(mpmath.mpc(b) + mpmath.mpf(rho[i]) ** 2 * mpmath.mpc(v) - mpmath.mpf(top[i]))
                for b, v in zip(base, inv)
            )
            # compensated: O(eps) of sum |f| whatever k (a plain sum allows ~k eps), plus the
            # rounding of each term's exp, cos and sin (a few eps of |f| each)
            assert abs(complex(exact) - total[i]) <= 8 * np.finfo(float).eps * amp[i], i
    with pytest.raises(ValueError, match=r"exp_sums: abs_inv must have shape \(3000,\), got \(2999,\)"):
        C.exp_sums(rho, base, inv, abs_base, abs_inv[:-1])
