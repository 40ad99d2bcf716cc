"""RandomFeatures refuses what it cannot compute correctly, and stays correct under threads and pickle.

Each test pins one class of bad input or misuse (issue 10): ``out`` overlapping X, complex X,
phases beyond the precision of the dtype, parameters changed after fit (also under ``python -O``),
outputs or frequency matrices larger than the available memory, concurrent transforms under
numba's ``workqueue`` layer, the caller's BLAS thread count, and pickling to a fresh process.
"""

import ast
import concurrent.futures
import os
import pathlib
import pickle
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from spectralkit import _runtime, features, kernels
from spectralkit.features import PHASE_LIMIT, InsufficientMemoryError, RandomFeatures

DG = kernels.delta_gaussian(1.0, 10.0)
ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rf():
    return RandomFeatures(DG, dim=4, n_components=32, random_state=0).fit()


def _X(n=50, d=4, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def _run(code, env=None, flags=()):
    """Run ``code`` in a fresh interpreter from the repository root; return the completed process."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- item 7: out overlapping X ---------------------------------------------------------------------
@pytest.mark.parametrize("shift", [0, 1, 50 * 4 - 1])
def test_out_sharing_memory_with_X_is_refused(rf, shift):
    n, d, width = 50, 4, 32
    buf = np.zeros(n * width + n * d)
    X = buf[: n * d].reshape(n, d)
    X[...] = _X(n, d)
    before = X.copy()
    out = buf[shift : shift + n * width].reshape(n, width)
    with pytest.raises(
        ValueError,
        match=r"out must not share memory with X \(the features would overwrite the "
        r"input while it is read\)",
    ):
        rf.transform(X, out=out)
    np.testing.assert_array_equal(X, before)  # nothing written
    separate = np.empty((n, width))
    assert rf.transform(X, out=separate) is separate
    np.testing.assert_array_equal(separate, rf.transform(before))


def test_out_sharing_memory_with_a_converted_input_is_refused(rf):
    # int input is converted to a float64 copy; out overlapping the caller's array is still refused
    buf = np.zeros(10 * 32 + 10 * 4)
    Xi = buf[:40].view(np.int64).reshape(10, 4)
    with pytest.raises(ValueError, match="out must not share memory with X"):
        rf.transform(Xi, out=buf[:320].reshape(10, 32))


# -- item 9: complex and huge X --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_X_is_refused_not_truncated(rf, dtype):
    X = _X(3).astype(dtype)
    with pytest.raises(
        ValueError,
        match=rf"X must be real, got complex dtype {np.dtype(dtype)}: refusing to drop "
        r"the imaginary part",
    ):
        rf.transform(X)
    with pytest.raises(ValueError, match="X must be real, got complex dtype"):
        RandomFeatures(DG, n_components=8).fit(X)


@pytest.mark.parametrize("value", [1e308, -1e300, 1e17])
def test_huge_X_is_refused_instead_of_nan_features(rf, value):
    X = _X(3)
    X[1, 2] = value
    with pytest.raises(
        ValueError,
        match=r"X is too large for the frequencies: the phases w \. x reach up to .* "
        r"beyond 4\.5e\+15 = 2\^52, where float64 phases are >= 1 rad apart",
    ):
        rf.transform(X)


def test_float32_phase_limit_and_the_accurate_range_still_works(rf):
    w_max = float(np.abs(np.concatenate([rf.W_plus_, rf.W_minus_])).max())
    X = np.zeros((2, 4), dtype=np.float32)
    X[0, 0] = 4 * PHASE_LIMIT[np.dtype(np.float32)] / w_max
    with pytest.raises(
        ValueError, match=r"beyond 8\.39e\+06 = 2\^23, where float32 phases are >= 1 rad apart"
    ):
        rf.transform(X)
    # beyond the fast sincos range but within the limit: the accurate fallback, finite features
    X64 = _X(3)
    X64[0, 0] = 1e13
    with pytest.warns(RuntimeWarning, match="accurate slow path"):
        Phi = rf.transform(X64)
    assert np.all(np.isfinite(Phi))
    A = X64 @ rf.W_plus_.T
    np.testing.assert_allclose(Phi[:, : rf.n_plus_], rf.scale_plus_ * np.cos(A), rtol=0, atol=1e-12)


# -- item 10: parameters changed after fit -------------------------------------------------------
@pytest.mark.parametrize(
    "change",
    [
        {"n_components": 64},
        {"feature_map": "cos"},
        {"method": "rff"},
        {"split": "terms"},
        {"dim": 5},
        {"kernel": "gaussian"},
        {"random_state": 1},
        {"truncation": 5.0},
        {"lengthscale": 2.0},
        {"shape_matrix": np.eye(4)},
    ],
)
def test_set_params_after_fit_invalidates_the_fit(change):
    rf = RandomFeatures(DG, dim=4, n_components=32, random_state=0).fit()
    name = next(iter(change))
    X = _X(5)
    ref = rf.transform(X)
    old = rf.get_params()[name]
    rf.set_params(**change)
    for call in (rf.transform, rf.kernel_approx):
        with pytest.raises(
            RuntimeError,
            match=rf"RandomFeatures: parameters changed since fit \({name}\); "
            r"call fit again",
        ) as info:
            call(X)
        assert not isinstance(info.value, AssertionError)
    rf.set_params(**{name: old})  # the same values again: the fit is valid again
    np.testing.assert_array_equal(rf.transform(X), ref)


def test_not_fitted_error_is_sklearns_when_installed():
    sklearn_exceptions = pytest.importorskip("sklearn.exceptions")
    with pytest.raises(sklearn_exceptions.NotFittedError, match="not fitted yet") as info:
        RandomFeatures(DG, dim=4).transform(_X(2))
    assert isinstance(info.value, RuntimeError)


def test_no_assert_statements_in_the_package():
    """No assert guards memory or validates input: ``python -O`` strips them, so misuse must raise real
    exceptions. With no assert statement (and no ``__debug__`` branch) anywhere in the package, ``-O``
    changes nothing, and the in-process tests of misuse (changed params, wrong ``out`` layouts,
    malformed tables) hold under it too."""
    found = []
    for path in sorted((ROOT / "spectralkit").rglob("*.py")):
        text = path.read_text()
        if "assert" not in text and "__debug__" not in text:
            continue  # neither can occur without its word (parsing every file took seconds)
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) or (isinstance(node, ast.Name) and node.id == "__debug__"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"assert statements or __debug__ in the package: {found}"


# -- item 13: memory ------------------------------------------------------------------------------
def test_huge_n_components_fails_fast_with_the_memory_it_needs(monkeypatch):
    class NoMeasure(features.SpectralMeasure):
        def __init__(self, *args, **kwargs):
            raise AssertionError("the measure was built before the memory check")

    monkeypatch.setattr(features, "SpectralMeasure", NoMeasure)
    with pytest.raises(
        InsufficientMemoryError,
        match=r"n_components=1000000000 in dim=64: drawing the frequencies \(the 500000000 x 64 "
        r"float64 frequency matrix and the temporaries of its construction\) needs 1040000131072 bytes "
        r"\(969 GiB\), more than the \d+ bytes",
    ):
        RandomFeatures(DG, dim=64, n_components=10**9).fit()


def test_memory_checks_against_the_available_memory(monkeypatch, rf):
    monkeypatch.setattr(_runtime, "available_memory", lambda: 100 << 20)
    with pytest.raises(
        MemoryError,
        match=r"the 5000000 x 8 float64 frequency matrix, drawn and scaled, and the temporaries of its "
        r"construction\) needs 1760002048 bytes",
    ):
        RandomFeatures(DG, dim=8, n_components=10**7, lengthscale=2.0).fit()
    X = np.zeros((500_000, 4))
    with pytest.raises(
        InsufficientMemoryError,
        match=r"the output of transform \(500000 rows x n_components=32, "
        r"float64\) needs 128000000 bytes \(0.119 GiB\), more than "
        r"the 104857600 bytes",
    ):
        rf.transform(X)
    out = np.empty((500_000, 32))  # the caller's buffer: nothing to allocate, so no refusal
    assert rf.transform(X, out=out) is out


def test_memory_check_counts_the_peak_of_the_draw_not_the_matrix_alone(monkeypatch):
    """A frequency matrix that fits, whose construction (about 3.5 times it, measured) does not."""
    matrix = 10**6 * 8 * 8
    monkeypatch.setattr(_runtime, "available_memory", lambda: int(2.5 * matrix))
    with pytest.raises(InsufficientMemoryError, match=r"needs 288002048 bytes"):
        RandomFeatures(DG, dim=8, n_components=2 * 10**6).fit()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux")
def test_memory_checks_honour_the_address_space_limit():
    """Under ``ulimit -v`` the issue's two fits are refused at once with a library error."""
    proc = _run(
        """
        import resource, time
        import numpy as np
        from spectralkit.features import InsufficientMemoryError, RandomFeatures
        from spectralkit.sklearn import SpectralFeatures
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + (3 << 30), resource.RLIM_INFINITY))
        for fit in (
            lambda: RandomFeatures("gaussian", dim=4, n_components=10**9).fit(),
            lambda: SpectralFeatures(n_components=2**20).fit(np.zeros((2, 4096))),
        ):
            t0 = time.perf_counter()
            try:
                fit()
            except InsufficientMemoryError as exc:
                assert "more than the" in str(exc), exc
                print("refused", round(time.perf_counter() - t0, 1))
        """
    )
    assert proc.returncode == 0, proc.stderr
    times = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("refused")]
    assert len(times) == 2 and max(times) < 10, proc.stdout


# -- item 14: threads ------------------------------------------------------------------------------
def test_concurrent_transforms_under_the_workqueue_layer():
    proc = _run(
        """
        import concurrent.futures
        import numba, numpy as np
        from spectralkit.features import RandomFeatures
        rf = RandomFeatures("delta_gaussian", dim=4, n_components=64, random_state=0).fit()
        X = np.random.default_rng(0).standard_normal((3000, 4))
        ref = rf.transform(X).copy()
        def work(i):
            return all(np.array_equal(rf.transform(X), ref) for _ in range(10))
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            ok = all(ex.map(work, range(8)))
        print("ok" if ok else "mismatch", numba.threading_layer())
    """,
        env={"NUMBA_THREADING_LAYER": "workqueue", "NUMBA_NUM_THREADS": "2"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]  # unprotected: the layer aborts the process
    assert proc.stdout.split() == ["ok", "workqueue"]


def test_concurrent_transforms_in_this_process_are_correct(rf):
    X = _X(2000)
    ref = rf.transform(X).copy()
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda _: rf.transform(X), range(8)))
    assert all(np.array_equal(r, ref) for r in results)


def _blas_threads():
    return sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})


@pytest.mark.parametrize("order", ["caller-first", "thread-first", "two-threads"])
def test_blas_thread_count_of_the_caller_is_restored(rf, order):
    """Overlapping calls (A enters, B enters, A leaves, B leaves) leave the caller's count as it was."""
    with threadpool_limits(limits=2, user_api="blas"):
        rf.transform(_X(600))
        assert _blas_threads() == [2]
        a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

        def a():
            with _runtime.blas_single_thread():
                a_in.set()
                b_in.wait(10)
            a_out.set()

        def b():
            a_in.wait(10)
            with _runtime.blas_single_thread():
                b_in.set()
                a_out.wait(10)

        if order == "caller-first":
            threads, inline = [threading.Thread(target=b)], a
        elif order == "thread-first":
            threads, inline = [threading.Thread(target=a)], b
        else:
            threads, inline = [threading.Thread(target=a), threading.Thread(target=b)], None
        for t in threads:
            t.start()
        if inline is not None:
            inline()
        for t in threads:
            t.join(20)
        assert _blas_threads() == [2]


# -- item 15: pickling ---------------------------------------------------------------------------
def test_pickled_features_give_bit_identical_output_in_a_fresh_process(tmp_path):
    """RandomFeatures (and DaskSpectralFeatures when dask is installed) in one fresh interpreter."""
    M = np.array([[2.0, 0.3, 0.0, 0.0], [0.3, 1.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.1], [0.0, 0.0, 0.1, 1.5]])
    X = _X(700)
    fitted = {
        "sincos": RandomFeatures(
            DG, dim=4, n_components=64, random_state=3, shape_matrix=M, lengthscale=1.3
        ).fit(),
        "cos": RandomFeatures(
            "exp(-r**2/2) - 0.5*exp(-r**2/8)",
            dim=4,
            n_components=33,
            feature_map="cos",
            random_state=np.random.default_rng(4),
        ).fit(),
    }
    np.save(tmp_path / "X.npy", X)
    for name, obj in fitted.items():
        (tmp_path / f"{name}.pkl").write_bytes(pickle.dumps(obj))
        np.save(tmp_path / f"{name}_ref.npy", obj.transform(X))
        np.save(tmp_path / f"{name}_ref32.npy", obj.transform(X.astype(np.float32)))
    try:
        import dask.array as da

        from spectralkit.dask import DaskSpectralFeatures
    except ImportError:
        dask_case = False
    else:
        dask_case = True
        dsf = DaskSpectralFeatures("delta_gaussian", n_components=32, random_state=1, lengthscale=1.5)
        dsf.fit(da.from_array(X, chunks=300))
        (tmp_path / "dask.pkl").write_bytes(pickle.dumps(dsf))
        np.save(
            tmp_path / "dask_ref.npy", dsf.transform(da.from_array(X, chunks=300)).compute(scheduler="sync")
        )
    proc = _run(f"""
        import pickle, pathlib, numpy as np
        d = pathlib.Path({str(tmp_path)!r})
        X = np.load(d / "X.npy")
        for name in ("sincos", "cos"):
            rf = pickle.loads((d / f"{{name}}.pkl").read_bytes())
            np.save(d / f"{{name}}_new.npy", rf.transform(X))
            np.save(d / f"{{name}}_new32.npy", rf.transform(X.astype(np.float32)))
            print(name, type(rf).__name__)
        if {dask_case}:
            import dask.array as da
            dsf = pickle.loads((d / "dask.pkl").read_bytes())
            Phi = dsf.transform(da.from_array(X, chunks=300)).compute(scheduler="sync")
            np.save(d / "dask_new.npy", Phi)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["sincos", "RandomFeatures", "cos", "RandomFeatures"]
    stems = [f"{name}_{{}}{suffix}" for name in fitted for suffix in ("", "32")] + (
        ["dask_{}"] if dask_case else []
    )
    for stem in stems:
        new, ref = (np.load(tmp_path / (stem.format(kind) + ".npy")) for kind in ("new", "ref"))
        assert new.dtype == ref.dtype and np.array_equal(new, ref), stem


def test_unpickled_features_rebuild_the_measure_lazily():
    rf = RandomFeatures(DG, dim=3, n_components=16, random_state=0).fit()
    state = rf.__getstate__()
    assert "measure_" not in state and "samplers_" not in state
    clone = pickle.loads(pickle.dumps(rf))
    assert "measure_" not in vars(clone)  # nothing computed until asked
    assert clone.measure_.mass_plus.value == pytest.approx(rf.mass_plus_, rel=1e-12)
    assert type(clone.samplers_[1]) is type(rf.samplers_[1])
    with pytest.raises(AttributeError, match="has no attribute 'measure_'"):
        RandomFeatures(DG, dim=3).measure_  # noqa: B018


def test_scale_rule_refuses_a_variance_that_underflows():
    # 40 distinct rows scaled by 1e-200: Var(X) ~ 1e-401 underflows to 0; the rule used to give
    # l = 1 (the rule for constant data) without a word
    X = np.random.default_rng(0).random((40, 3)) * 1e-200
    with pytest.raises(ValueError, match="the variance of X underflows to 0 although X is not constant"):
        RandomFeatures("gaussian", n_components=8).fit(X)
    assert RandomFeatures("gaussian", n_components=8).fit(np.ones((4, 3))).lengthscale_ == 1.0


@pytest.mark.parametrize(
    "lengthscale, shape_matrix, dtype, zero, match",
    [
        # 1 / l overflows float64: refused by fit (it used to warn "overflow encountered in divide")
        (
            1e-320,
            None,
            np.float64,
            False,
            r"lengthscale=1e-320 is too small: the frequencies w / lengthscale",
        ),
        (1e-300, 1e300, np.float64, False, r"lengthscale=1e-300 with this shape_matrix is too small"),
        # finite in float64, beyond float32: refused by a float32 transform, also of X = 0 (whose
        # phases pass the phase check: inf * 0 used to give NaN features silently)
        (
            1e-300,
            None,
            np.float32,
            True,
            r"frequencies \(largest \|w\| = .*, lengthscale=1e-300\) overflow float32",
        ),
        (1e-300, None, np.float32, False, r"frequencies \(largest \|w\| = .*\) overflow float32"),
    ],
)
def test_tiny_lengthscales_raise_a_library_error_without_a_numpy_warning(
    lengthscale, shape_matrix, dtype, zero, match
):
    X = np.random.default_rng(0).normal(size=(20, 3)) * (0.0 if zero else 1.0)
    M = None if shape_matrix is None else shape_matrix * np.eye(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning before the error fails the test
        with pytest.raises(ValueError, match=match):
            rf = RandomFeatures("gaussian", dim=3, n_components=16, lengthscale=lengthscale, shape_matrix=M)
            rf.fit().transform(X.astype(dtype))


def test_gamma_near_the_float_maximum_is_a_tiny_lengthscale_not_zero():
    # 1 / sqrt(2 gamma) gave l = 0 for gamma = 1e308 (2 gamma = inf), then "divide by zero" warnings;
    # lengthscale 1e-200 with a gamma raised ZeroDivisionError in the "exclusive" message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rf = RandomFeatures("gaussian", dim=3, n_components=8, gamma=1e308).fit()
        assert rf.lengthscale_ == pytest.approx(7.0710678118654755e-155, rel=1e-15)
        with pytest.raises(
            ValueError, match=r"gamma=1.0 is lengthscale=0.707107, lengthscale=1e-200 is gamma=inf"
        ):
            RandomFeatures("gaussian", dim=3, gamma=1.0, lengthscale=1e-200).fit()


def test_x_beyond_float64_and_ragged_rows_are_named():
    rf = RandomFeatures("gaussian", dim=3, n_components=8).fit()
    X = np.ones((2, 3), dtype=np.longdouble)
    if np.finfo(np.longdouble).max > np.finfo(np.float64).max:  # x86 80-bit long double
        X[1, 2] = np.longdouble("1e4000")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # it used to warn "overflow encountered in cast" first
            with pytest.raises(
                ValueError, match=r"X has a value beyond the float64 range at row 1, column 2 \(1e\+4000\)"
            ):
                rf.transform(X)
    with pytest.raises(ValueError, match=r"X must be a 2-D array of rows of equal length \(setting an array"):
        rf.transform([[1.0, 2.0, 3.0], [1.0]])
