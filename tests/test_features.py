"""Tests of spectralkit.features.RandomFeatures (Contract 5): layout, masses, dtypes, determinism, errors.

Deterministic identities are checked exactly or to rounding; nothing here is statistical except
the float32/float64 comparison (a rounding bound). Unbiasedness and variance are in
``test_unbiasedness.py``.
"""

import math
import warnings

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from spectralkit import _compiled, kernels
from spectralkit.exceptions import DivergentMassError
from spectralkit.features import RandomFeatures
from spectralkit.measures import SpectralMeasure
from spectralkit.sampling import ExactSampler, RadialSampler

DG = kernels.delta_gaussian(1.0, 10.0)


@pytest.fixture(scope="module")
def dg_features():
    return RandomFeatures(DG, dim=5, n_components=64, method="gorf", random_state=0).fit()


def _points(n, dim, seed=0, scale=0.5):
    return np.random.default_rng(seed).standard_normal((n, dim)) * scale


def test_attributes_and_layout(dg_features):
    rf = dg_features
    assert rf.n_features_in_ == 5
    assert rf.n_plus_ + rf.n_minus_ == 32 and rf.n_plus_ >= 1 and rf.n_minus_ >= 1
    assert rf.W_plus_.shape == (rf.n_plus_, 5) and rf.W_minus_.shape == (rf.n_minus_, 5)
    assert rf.W_plus_.dtype == np.float64
    assert list(rf.signature_) == [1] * (2 * rf.n_plus_) + [-1] * (2 * rf.n_minus_)
    assert isinstance(rf.measure_, SpectralMeasure) and isinstance(rf.random_state_, np.random.Generator)
    assert all(isinstance(s, RadialSampler) for s in rf.samplers_)
    X = _points(7, 5)
    phi = rf.transform(X)
    assert phi.shape == (7, 64) and phi.dtype == np.float64
    a = math.sqrt(rf.mass_plus_ / rf.n_plus_)
    b = math.sqrt(rf.mass_minus_ / rf.n_minus_)
    A, B = X @ rf.W_plus_.T, X @ rf.W_minus_.T
    ref = np.hstack([a * np.cos(A), a * np.sin(A), b * np.cos(B), b * np.sin(B)])
    assert np.allclose(phi, ref, rtol=0, atol=1e-14)


def test_masses_identity_and_signature(dg_features):
    """phi(x)^T J phi(x) = m+ - m- exactly (cos^2 + sin^2 = 1), and m+ - m- = k(0) within the mass errors."""
    rf = dg_features
    K = rf.kernel_approx(_points(6, 5))
    assert np.allclose(np.diag(K), rf.mass_plus_ - rf.mass_minus_, rtol=0, atol=1e-13)
    assert (
        abs((rf.mass_plus_ - rf.mass_minus_) - DG.value_at_zero())
        <= rf.mass_plus_error_ + rf.mass_minus_error_ + 1e-12
    )
    m = rf.measure_
    assert rf.mass_plus_ == m.mass_plus.value and rf.mass_minus_ == m.mass_minus.value
    # Jordan masses of the delta-Gaussian in d = 5 are below 1 each (the spectra overlap)
    assert 0.9 < rf.mass_plus_ < 1.0
    # signed Gram = Phi+ Phi+^T - Phi- Phi-^T
    X = _points(4, 5, seed=1)
    phi = rf.transform(X)
    plus, minus = phi[:, rf.signature_ > 0], phi[:, rf.signature_ < 0]
    assert np.allclose(rf.kernel_approx(X), plus @ plus.T - minus @ minus.T, atol=1e-14)
    Y = _points(3, 5, seed=2)
    assert rf.kernel_approx(X, Y).shape == (4, 3)


def test_pd_kernel_has_no_minus_block_and_uses_the_exact_law():
    rf = RandomFeatures(kernels.gaussian(1.0), dim=4, n_components=20, random_state=1).fit()
    assert rf.n_minus_ == 0 and rf.n_plus_ == 10 and rf.mass_minus_ == 0.0
    assert (rf.signature_ == 1).all() and rf.W_minus_.shape == (0, 4)
    assert isinstance(rf.samplers_[0], ExactSampler)
    assert rf.transform(_points(3, 4)).shape == (3, 20)


def test_allocation_proportional_to_masses():
    k = 3.0 * kernels.gaussian(1.0) - kernels.gaussian(0.3)  # masses about 3 : 1 in d = 1
    rf = RandomFeatures(k, dim=1, n_components=80, method="rff", random_state=0).fit()
    share = rf.mass_plus_ / (rf.mass_plus_ + rf.mass_minus_)
    assert rf.n_plus_ == round(40 * share) and rf.n_minus_ == 40 - rf.n_plus_
    tiny = RandomFeatures(DG, dim=3, n_components=4, random_state=0).fit()
    assert (tiny.n_plus_, tiny.n_minus_) == (1, 1)


def test_terms_split_masses_one_and_one():
    rf = RandomFeatures(DG, dim=3, n_components=40, split="terms", random_state=0).fit()
    assert rf.mass_plus_ == pytest.approx(1.0, abs=1e-12) and rf.mass_minus_ == pytest.approx(1.0, abs=1e-12)
    assert (rf.n_plus_, rf.n_minus_) == (10, 10)
    jordan = RandomFeatures(DG, dim=3, n_components=40, random_state=0).fit()
    assert jordan.mass_plus_ < 0.99  # the Jordan split has the smaller masses (REFERENCE §5)


def test_spec_string_and_measure_inputs():
    a = RandomFeatures(
        "delta_gaussian:sigma1=1,sigma2=10", n_components=16, random_state=3, lengthscale=1.0
    ).fit(_points(2, 3))
    m = SpectralMeasure(DG, 3)
    b = RandomFeatures(m, n_components=16, random_state=3).fit()
    assert a.n_features_in_ == b.n_features_in_ == 3
    assert np.array_equal(a.W_plus_, b.W_plus_) and np.array_equal(a.W_minus_, b.W_minus_)
    assert b.measure_ is m


def test_cos_feature_map():
    rf = RandomFeatures(DG, dim=3, n_components=30, feature_map="cos", random_state=0).fit()
    assert rf.n_plus_ + rf.n_minus_ == 30 and len(rf.signature_) == 30
    X = _points(5, 3)
    A = X @ rf.W_plus_.T + rf.offsets_plus_
    ref = math.sqrt(2 * rf.mass_plus_ / rf.n_plus_) * np.cos(A)
    assert np.allclose(rf.transform(X)[:, : rf.n_plus_], ref, atol=1e-14)


def test_float32_preserved_and_close_to_float64(dg_features):
    rf = dg_features
    X = _points(50, 5)
    f64 = rf.transform(X)
    f32 = rf.transform(X.astype(np.float32))
    assert f32.dtype == np.float32
    # float32 rounding of W, X and of w.x (|w.x| <= ~15 here): a few 1e-6 absolute, times the scale
    bound = 1e-5 * max(rf.scale_plus_, rf.scale_minus_) * max(1.0, np.abs(X @ rf.W_plus_.T).max())
    assert np.abs(f32 - f64).max() <= bound
    ints = rf.transform(np.ones((2, 5), dtype=np.int64))
    assert ints.dtype == np.float64


def test_chunking_and_batch_invariance(dg_features):
    rf = dg_features
    X = _points(1000, 5, seed=4)
    full = rf.transform(X)
    parts = np.vstack([rf.transform(X[:333]), rf.transform(X[333:])])
    assert np.array_equal(full, parts)
    for chunk in (1, 64, 1000):
        out = np.empty_like(full)
        _compiled.fused_features(
            X,
            rf.W_plus_,
            rf.W_minus_,
            rf.scale_plus_,
            rf.scale_minus_,
            None,
            None,
            out,
            "sincos",
            chunk_rows=chunk,
        )
        assert np.array_equal(out, full)


def test_determinism_across_thread_counts():
    """Same seed: bit-identical frequencies and features with 1 or 2 numba / BLAS threads."""
    X = _points(600, 24, seed=5)
    results = []
    old = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            with threadpool_limits(threads):
                rf = RandomFeatures(DG, dim=24, n_components=96, method="gorf", random_state=11).fit()
                results.append((rf.W_plus_.copy(), rf.W_minus_.copy(), rf.transform(X)))
    finally:
        numba.set_num_threads(old)
    for a, b in zip(*results):
        assert np.array_equal(a, b)


def test_same_seed_same_features_and_refit():
    a = RandomFeatures(DG, dim=4, n_components=24, random_state=7).fit()
    b = RandomFeatures(DG, dim=4, n_components=24, random_state=7).fit()
    assert np.array_equal(a.W_plus_, b.W_plus_) and np.array_equal(a.W_minus_, b.W_minus_)
    samplers = a.samplers_
    a.set_params(random_state=8).fit()  # reuses the samplers, new frequencies
    assert a.samplers_[0] is samplers[0] and not np.array_equal(a.W_plus_, b.W_plus_)
    g = np.random.default_rng(7)
    c = RandomFeatures(DG, dim=4, n_components=24, random_state=g).fit()
    assert c.random_state_ is g


def test_out_buffer(dg_features):
    rf = dg_features
    X = _points(10, 5)
    buf = np.empty((10, 64))
    res = rf.transform(X, out=buf)
    assert res is buf and np.array_equal(buf, rf.transform(X))
    with pytest.raises(ValueError, match=r"out must have shape \(10, 64\) and dtype float64"):
        rf.transform(X, out=np.empty((10, 64), dtype=np.float32))
    with pytest.raises(ValueError, match="out must have shape"):
        rf.transform(X, out=np.empty((9, 64)))
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        rf.transform(X, out=np.empty((64, 10)).T)
    with pytest.raises(TypeError, match="out must be a numpy array"):
        rf.transform(X, out=[[0.0] * 64] * 10)


def test_plain_transform_outputs_are_independent_and_equal_the_buffered_ones():
    # large outputs come from recycled memory: a live result must never be handed out again,
    # and a recycled one must be overwritten completely
    rf = RandomFeatures(DG, dim=5, n_components=256, random_state=1).fit()
    Xs = [_points(4000, 5, seed=k) for k in range(3)]  # 4000 x 256 float64: 8 MB outputs
    refs = []
    for X in Xs:
        buf = np.empty((4000, 256))
        refs.append(rf.transform(X, out=buf))
    first = rf.transform(Xs[0])
    second = rf.transform(Xs[1])
    assert np.array_equal(first, refs[0]) and np.array_equal(second, refs[1])
    del first
    third = rf.transform(Xs[2])
    assert np.array_equal(third, refs[2]) and np.array_equal(second, refs[1])


def test_input_errors(dg_features):
    rf = dg_features
    X = _points(3, 5)
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or infinite values \(first at row 1, column 2\)"):
        rf.transform(X)
    X[1, 2] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or infinite"):
        rf.transform(X)
    with pytest.raises(
        ValueError, match=r"X must be a 2-D array \(n_samples, n_features\), got shape \(5,\)"
    ):
        rf.transform(np.zeros(5))
    with pytest.raises(
        ValueError, match=r"X has 4 features \(columns\), but the features were fitted for dim=5"
    ):
        rf.transform(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="X must be a numeric array"):
        rf.transform(np.array([["a"] * 5]))
    with pytest.raises(RuntimeError, match="not fitted yet"):
        RandomFeatures(DG, dim=5).transform(np.zeros((1, 5)))


def test_parameter_errors():
    with pytest.raises(
        ValueError, match="method must be one of 'rff', 'orf', 'gorf', 'gorf_paper', got 'sorf'"
    ):
        RandomFeatures(DG, dim=3, method="sorf").fit()
    with pytest.raises(ValueError, match="split must be one of"):
        RandomFeatures(DG, dim=3, split="pca").fit()
    with pytest.raises(ValueError, match="feature_map must be one of"):
        RandomFeatures(DG, dim=3, feature_map="relu").fit()
    with pytest.raises(ValueError, match="n_components must be an integer >= 1, got 0"):
        RandomFeatures(DG, dim=3, n_components=0).fit()
    with pytest.raises(ValueError, match=r"too small for an indefinite kernel.*>= 3 with 'sincos'"):
        RandomFeatures(DG, dim=3, n_components=2).fit()
    with pytest.raises(ValueError, match="dim is None and no X was given"):
        RandomFeatures(DG).fit()
    with pytest.raises(ValueError, match="X has 4 features but dim=3"):
        RandomFeatures(DG, dim=3).fit(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="differs from the measure's dim=3"):
        RandomFeatures(SpectralMeasure(DG, 3), dim=4).fit()
    with pytest.raises(ValueError, match="truncation must be None or a finite number > 0"):
        RandomFeatures(DG, dim=3, truncation=-1.0).fit()
    with pytest.raises(
        ValueError, match="random_state must be None, a non-negative int or a numpy Generator"
    ):
        RandomFeatures(DG, dim=3, random_state="seed").fit()
    with pytest.raises(
        TypeError, match="kernel must be a RadialKernel, a DensityKernel, a SpectralMeasure or a spec string"
    ):
        RandomFeatures(3.0, dim=3).fit()
    with pytest.raises(ValueError, match="invalid parameter 'sigma'"):
        RandomFeatures(DG, dim=3).set_params(sigma=1.0)
    with pytest.raises(ValueError, match=r"dim must be None or an integer in \[1, 4096\], got 0"):
        RandomFeatures(DG, dim=0).fit()
    with pytest.raises(TypeError, match="takes from 1 to 2 positional arguments"):
        RandomFeatures(DG, 3)  # everything after kernel is keyword-only
    with pytest.raises(ValueError, match="split='terms' needs every term to be PD"):
        k = kernels.RadialKernel.from_string("(1 - r**2) * exp(-r**2 / 2)") - kernels.gaussian(3.0)
        RandomFeatures(k, dim=3, split="terms").fit()


def test_divergent_kernel():
    """Spherical polynomial with a = 3 jumps at r = 2: ||mu|| = inf in every d (REFERENCE §5)."""
    k = kernels.spherical_polynomial(3.0, 1)
    with pytest.raises(DivergentMassError, match="infinite mass") as info:
        RandomFeatures(k, dim=3, n_components=16).fit()
    assert info.value.reason and "truncation=rho_max" in str(info.value)
    # its bias at r = 0 (-0.181 with k(0) = 1) exceeds the default tolerance: refused unless asked
    with pytest.raises(
        DivergentMassError, match=r"truncation=50 is refused .* bias at r = 0 is .* = -0\.181"
    ):
        RandomFeatures(k, dim=3, n_components=16, truncation=50.0, random_state=0).fit()
    with pytest.raises(DivergentMassError, match="truncation_tolerance = 0.1 x"):
        RandomFeatures(k, dim=3, n_components=16, truncation=50.0, truncation_tolerance=0.1).fit()
    with pytest.warns(RuntimeWarning, match="BIASED"):
        rf = RandomFeatures(
            k, dim=3, n_components=16, truncation=50.0, truncation_tolerance=0.2, random_state=0
        ).fit()
    assert abs(rf.truncation_bias_) <= 0.2
    with pytest.warns(RuntimeWarning, match="BIASED"):
        rf = RandomFeatures(
            k, dim=3, n_components=16, truncation=50.0, truncation_tolerance=float("inf"), random_state=0
        ).fit()
    assert rf.measure_.truncation == 50.0
    assert rf.truncation_bias_ == pytest.approx(k.value_at_zero() - (rf.mass_plus_ - rf.mass_minus_))
    assert rf.truncation_bias_max_ >= abs(rf.truncation_bias_) - 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        finite = RandomFeatures(DG, dim=3, n_components=16, truncation=50.0, random_state=0).fit()
    assert finite.truncation_bias_ is None  # truncation applies only to infinite measures
