"""Feature maps of non-numpy Array API arrays: computed in the array's namespace and on its device.

array_api_strict (pure Python, every CI run) stands for CuPy / JAX; torch tests run where torch is
installed (on its GPU where CUDA is available) and skip elsewhere. The values are the numpy path's
(which is tested for exactness and unbiasedness elsewhere) to rounding; the unbiasedness of the
Array API path itself is checked in test_unbiasedness.py.
"""

import numpy as np
import pytest

from spectralkit import RandomFeatures, kernels

xp = pytest.importorskip("array_api_strict")

KERNELS = [
    (kernels.delta_gaussian(1.0, 3.0), 5, "gorf"),
    (kernels.matern(1.5, 0.7), 4, "orf"),
    (kernels.spherical_polynomial(2.0, 2), 3, "rff"),
]


def _data(dim, n=40, seed=0):
    return np.random.default_rng(seed).uniform(size=(n, dim))


@pytest.mark.parametrize("feature_map", ["sincos", "cos"])
@pytest.mark.parametrize("kernel, dim, method", KERNELS)
def test_values_equal_the_numpy_path(kernel, dim, method, feature_map):
    rf = RandomFeatures(
        kernel, dim=dim, n_components=64, method=method, feature_map=feature_map, random_state=1
    ).fit()
    X = _data(dim)
    # rounding of the phases (matmuls in another order) and of cos/sin: a few eps of the largest phase
    phase = float(np.abs(X @ np.concatenate([rf.W_plus_, rf.W_minus_]).T).max())
    scale = max(rf.scale_plus_, rf.scale_minus_)
    for dtype in (np.float64, np.float32):
        ref = rf.transform(X.astype(dtype))
        got = rf.transform(xp.asarray(X.astype(dtype)))
        assert type(got).__module__.startswith("array_api_strict")
        assert got.dtype == (xp.float64 if dtype == np.float64 else xp.float32)
        assert got.shape == ref.shape
        tol = 8 * np.finfo(dtype).eps * (1 + phase) * scale
        np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=tol)
    K = rf.kernel_approx(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(K), rf.kernel_approx(X), rtol=0, atol=1e-12 * rf.mass_plus_ * 64)


def test_device_dtype_and_caching():
    rf = RandomFeatures("gaussian", dim=3, n_components=16, random_state=0).fit()
    device = xp.Device("device1")
    X = xp.asarray(_data(3), device=device)
    out = rf.transform(X)
    assert out.device == device
    # the frequencies were moved once for (namespace, device, dtype)
    cached = {k: v for k, v in rf._cast.items() if isinstance(k, tuple)}
    rf.transform(X)
    assert {k: v for k, v in rf._cast.items() if isinstance(k, tuple)} == cached and len(cached) == 1
    rf.transform(xp.astype(X, xp.float32))
    assert len([k for k in rf._cast if isinstance(k, tuple)]) == 2
    # integer input is computed in float64, like the numpy path
    ints = rf.transform(xp.asarray(np.arange(6).reshape(2, 3)))
    assert ints.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(ints), rf.transform(np.arange(6.0).reshape(2, 3)), atol=1e-12)


def test_bad_inputs_name_the_problem():
    rf = RandomFeatures("gaussian", dim=3, n_components=16, random_state=0).fit()
    with pytest.raises(
        ValueError, match=r"X has 2 features \(columns\), but the features were fitted for dim=3"
    ):
        rf.transform(xp.ones((4, 2)))
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        rf.transform(xp.ones(3))
    with pytest.raises(ValueError, match="X contains NaN or infinite values"):
        rf.transform(xp.asarray([[0.0, np.nan, 1.0]]))
    with pytest.raises(ValueError, match="X must be real, got complex dtype"):
        rf.transform(xp.asarray([[1j, 0, 0]]))
    with pytest.raises(TypeError, match="out= is for numpy input"):
        rf.transform(xp.ones((1, 3)), out=np.empty((1, 16)))
    with pytest.raises(ValueError, match="X is too large for the frequencies"):
        rf.transform(xp.asarray([[1e18, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="not fitted"):
        RandomFeatures("gaussian", dim=3).transform(xp.ones((1, 3)))


def test_torch_tensors_stay_on_their_device():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    rf = RandomFeatures(kernels.delta_gaussian(1.0, 3.0), dim=5, n_components=64, random_state=0).fit()
    X = _data(5)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        for dtype, np_dtype in ((torch.float64, np.float64), (torch.float32, np.float32)):
            T = torch.as_tensor(X, dtype=dtype, device=device)
            out = rf.transform(T)
            assert isinstance(out, torch.Tensor) and out.device == T.device and out.dtype == dtype
            tol = 64 * np.finfo(np_dtype).eps * max(rf.scale_plus_, rf.scale_minus_)
            np.testing.assert_allclose(out.cpu().numpy(), rf.transform(X.astype(np_dtype)), atol=tol)


def _gpu_arrays():
    """(name, to_device, to_host, float32, float64) for each GPU library with a usable device."""
    found = []
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        pytest.importorskip("array_api_compat")
        found.append(
            (
                "torch",
                lambda a: torch.as_tensor(a, device="cuda"),
                lambda a: a.cpu().numpy(),
                torch.float32,
                torch.float64,
            )
        )
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append(("cupy", cupy.asarray, cupy.asnumpy, cupy.float32, cupy.float64))
    except Exception:  # noqa: BLE001 - no CuPy, or CuPy without a driver/device: nothing to test
        pass
    return found


@pytest.mark.parametrize("feature_map", ["sincos", "cos"])
def test_gpu_arrays_stay_on_the_gpu_with_the_numpy_values(feature_map):
    """On a machine with a CUDA GPU (torch and/or CuPy): features and the signed Gram estimate are
    computed on the GPU, in the input's dtype, with the numpy path's values; skipped elsewhere."""
    libraries = _gpu_arrays()
    if not libraries:
        pytest.skip("no CUDA GPU with torch or CuPy here")
    rf = RandomFeatures(
        kernels.delta_gaussian(1.0, 3.0), dim=6, n_components=257, feature_map=feature_map, random_state=2
    ).fit()  # an odd width: the extra cos column too
    X = _data(6, n=300, seed=3)
    phase = float(np.abs(X @ np.concatenate([rf.W_plus_, rf.W_minus_]).T).max())
    scale = max(rf.scale_plus_, rf.scale_minus_)
    for name, to_device, to_host, f32, f64 in libraries:
        for np_dtype, dtype in ((np.float32, f32), (np.float64, f64)):
            Xd = to_device(X.astype(np_dtype))
            out = rf.transform(Xd)
            assert type(out).__module__.split(".")[0] == name and out.dtype == dtype
            assert str(out.device) == str(Xd.device)
            tol = 8 * np.finfo(np_dtype).eps * (1 + phase) * scale
            np.testing.assert_allclose(to_host(out), rf.transform(X.astype(np_dtype)), rtol=0, atol=tol)
        K = rf.kernel_approx(to_device(X))
        assert str(K.device) == str(to_device(X).device)
        np.testing.assert_allclose(to_host(K), rf.kernel_approx(X), rtol=0, atol=1e-12 * rf.mass_plus_ * 257)
