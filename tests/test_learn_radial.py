"""The radial hyper-kernel: learned kernels with exact signed spectral measures, binned solvers."""

import pickle

import numpy as np
import pytest
import scipy.integrate
import scipy.special

pytest.importorskip("sklearn")

from spectralkit.learn import HyperKernelRidge, HyperKernelSVR, LearnedRadialKernel
from spectralkit.learn._pairs import LabelTarget
from spectralkit.learn._radial import ridge_stats


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] ** 2 + X[:, 1] > 0.8).astype(int)
    return X, y


@pytest.fixture(scope="module")
def learned():
    """Learned radial kernels (d = 2, 3, 5) from labels: indefinite."""
    out = {}
    for d in (2, 3, 5):
        X, y = _data(d=d, seed=d)
        out[d] = HyperKernelRidge("radial", alpha=1e-3).fit(X, y).kernel_
    return out


def _hankel_mu(k, rho):
    """mu(rho) = (2 pi)^(-d/2) rho^(1 - d/2) int_0^inf k(r) r^(d/2) J_(d/2-1)(rho r) dr, by quad."""
    d = k.dim
    nu = d / 2 - 1
    val, err = scipy.integrate.quad(
        lambda r: k(r) * r ** (d / 2) * scipy.special.jv(nu, rho * r),
        0,
        k.support_radius,
        limit=800,
        epsabs=1e-13,
    )
    c = (2 * np.pi) ** (-d / 2) * rho ** (1 - d / 2)
    return c * val, c * err


@pytest.mark.parametrize("d", [2, 3, 5])
def test_measure_equals_the_numeric_hankel_transform(learned, d):
    k = learned[d]
    scale = np.max(np.abs(k.mu(np.linspace(0, 5 / k.lengthscale, 200))))
    for rho in (0.4 / k.lengthscale, 1.1 / k.lengthscale, 2.3 / k.lengthscale):
        ref, err = _hankel_mu(k, rho)
        assert abs(k.mu(rho) - ref) <= 10 * err + 1e-9 * scale
    # negative control: the transform in the wrong dimension does not match
    wrong = LearnedRadialKernel(d + 1, k.lengthscale, k.nodes, k.coef)
    rho = 1.1 / k.lengthscale
    assert abs(wrong.mu(rho) - _hankel_mu(k, rho)[0]) > 1e-3 * scale


@pytest.mark.parametrize("d", [2, 3, 5])
def test_density_integrates_to_k0_and_masses(learned, d):
    k = learned[d]
    _lo, hi = k._frequency_range()
    total = scipy.integrate.quad(k.radial_density, 0, hi, limit=800, epsabs=1e-13)[0]
    k0 = k.value_at_zero()
    assert total == pytest.approx(k0, abs=1e-9 * k.envelope_mass)
    assert k0 == pytest.approx(float(k(0.0)), rel=1e-12)
    mp, mm = k.masses()
    assert mm.value > 0, "a kernel learned from labels here is indefinite"
    assert abs(mp.value - mm.value - k0) <= mp.error + mm.error + 1e-12 * k.envelope_mass
    assert mp.value + mm.value <= k.envelope_mass * (1 + 1e-12)
    # the masses against a dense Simpson rule of max(+-f, 0)
    grid = np.linspace(0, hi, 40_001)
    f = k.radial_density(grid)
    ref_p = scipy.integrate.simpson(np.maximum(f, 0), x=grid)
    ref_m = scipy.integrate.simpson(np.maximum(-f, 0), x=grid)
    assert mp.value == pytest.approx(ref_p, rel=1e-6) and mm.value == pytest.approx(ref_m, rel=1e-6)
    assert mp.error < 1e-10 * k.envelope_mass


def test_envelope_and_tail_bounds_hold(learned):
    k = learned[3]
    rho = np.linspace(0, 12 / k.lengthscale, 5000)
    assert np.all(np.abs(k.radial_density(rho)) <= k.density_envelope(rho) * (1 + 1e-12) + 1e-300)
    for R in (2.0 / k.lengthscale, 4.0 / k.lengthscale):
        tail = scipy.integrate.quad(lambda x: abs(k.radial_density(x)), R, 40 / k.lengthscale, limit=800)[0]
        assert tail <= k.tail_mass_bound(R)
    assert k.mu(0.7) * 4 * np.pi * 0.7**2 == pytest.approx(k.radial_density(0.7), rel=1e-12)


def test_gram_uses_the_kernel_within_its_interpolation_error(learned):
    k = learned[3]
    X = np.random.default_rng(7).normal(size=(60, 3))
    r = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    G = k.gram(X)
    assert np.max(np.abs(G - k(r))) <= 2 * k.interpolation_error + 1e-14
    assert k.interpolation_error < 1e-9 * k.envelope_mass
    k2 = pickle.loads(pickle.dumps(k))
    np.testing.assert_array_equal(k2.gram(X), G)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"dim": 0}, r"dim must be an integer in \[1, 4096\], got 0"),
        ({"lengthscale": -1.0}, "lengthscale must be a finite number > 0"),
        ({"nodes": [0.0, 1.0]}, "same length"),
        ({"nodes": [-1.0]}, "finite distances >= 0"),
    ],
)
def test_learned_radial_kernel_validates(bad, match):
    args = {"dim": 2, "lengthscale": 1.0, "nodes": [0.5], "coef": [1.0]}
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        LearnedRadialKernel(**args)


def test_binned_ridge_matches_the_exact_solve_within_its_error_estimate():
    X, y = _data(n=50, d=4, seed=1)
    exact = HyperKernelRidge("radial", alpha=1e-3, solver="exact").fit(X, y).kernel_
    binned = HyperKernelRidge("radial", alpha=1e-3).fit(X, y)
    r = np.linspace(0, 8 * exact.lengthscale, 400)
    actual = np.max(np.abs(binned.kernel_(r) - exact(r)))
    est = binned.binning_error_
    assert actual <= 3 * est + 1e-12
    assert est <= 10 * actual + 1e-12, "the estimate is informative, not just an upper bound"
    # negative control: coarse bins are far off, and far beyond the default's estimate
    coarse = HyperKernelRidge("radial", alpha=1e-3, bin_width=exact.lengthscale / 2).fit(X, y)
    off = np.max(np.abs(coarse.kernel_(r) - exact(r)))
    assert off > 30 * est
    assert off <= 3 * coarse.binning_error_


def test_binned_svr_matches_the_exact_solve_within_its_error_estimate():
    X, y = _data(n=40, d=3, seed=2)
    exact = HyperKernelSVR("radial", C=100.0, solver="exact").fit(X, y)
    binned = HyperKernelSVR("radial", C=100.0).fit(X, y)
    r = np.linspace(0, 8 * exact.kernel_.lengthscale, 400)
    actual = np.max(np.abs(binned.kernel_(r) - exact.kernel_(r)))
    assert actual <= 3 * binned.binning_error_ + 1e-9
    assert binned.intercept_ == pytest.approx(exact.intercept_, abs=3 * binned.binning_error_ + 1e-6)


def test_fold_tables_sum_to_the_all_pairs_statistics():
    X, y = _data(n=37, d=3, seed=3)
    t = LabelTarget(y)
    one = ridge_stats(X, t, 0.05)
    fold = np.arange(37) % 4
    many = ridge_stats(X, t, 0.05, fold, 4)
    for key in ("nd", "no", "s"):
        np.testing.assert_allclose(many[key].sum(axis=1), one[key][:, 0], rtol=1e-12, atol=1e-9)
    assert many["wt"].sum() == pytest.approx(37.0**2)
    # pairs within fold 0 (table 0): 10 points -> 100 ordered pairs
    assert many["wt"][many["tab"][0, 0]] == pytest.approx(np.sum(fold == 0) ** 2)


def test_radial_cv_chooses_from_the_grid_in_one_pass():
    X, y = _data(n=60, d=3, seed=4)
    est = HyperKernelRidge("radial", alpha=[1e-4, 1e-2], cv=3, random_state=0).fit(X, y)
    res = est.cv_results_
    assert res["mse"].shape == (10,) and set(res["alpha"]) == {1e-4, 1e-2}
    best = int(np.argmin(res["mse"]))
    assert est.alpha_ == res["alpha"][best]
    assert est.lengthscale_ == pytest.approx(
        np.sqrt(2 * res["scale_multiplier"][best] * np.mean(np.sum((X - X.mean(0)) ** 2, axis=1)))
    )


def test_radial_learns_a_given_gaussian_similarity():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 3))
    r = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    K = np.exp(-(r**2) / 4.0)
    est = HyperKernelRidge("radial", alpha=1e-6).fit(X, target_kernel=K)
    Xt = rng.normal(size=(30, 3))
    rt = np.sqrt(((Xt[:, None] - X[None]) ** 2).sum(-1))
    rmse = np.sqrt(np.mean((est.transform(Xt) - np.exp(-(rt**2) / 4.0)) ** 2))
    assert rmse < 0.01
    svr = HyperKernelSVR("radial", C=1e4, epsilon=0.01).fit(X, target_kernel=K)
    assert svr.target_rounding_ == pytest.approx(0.0025)
    assert np.sqrt(np.mean((svr.transform(Xt) + svr.intercept_ - np.exp(-(rt**2) / 4.0)) ** 2)) < 0.05


@pytest.fixture(scope="module")
def wide():
    """A learned kernel in d = 10 with a few hundred nodes (the regime of real data)."""
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(150, 10))
    y = (X[:, 0] + X[:, 1] ** 2 - X[:, 2] > 0.4).astype(int)
    return HyperKernelRidge("radial", alpha=1e-5).fit(X, y).kernel_


def test_tabulated_density_is_within_its_stated_error(wide):
    k = wide
    assert k.nodes.size > 50
    E = k.density_error
    assert 0 < E < 1e-10 * k.envelope_mass  # a bound, not a vacuous one
    rho = np.random.default_rng(3).uniform(0, 12 / k.lengthscale, 2000)
    f_chi = k.density_envelope(rho) / k.envelope_mass
    tab = k.as_kernel().density(rho)
    exact = k.radial_density(rho)
    assert np.all(np.abs(tab - exact) <= E * f_chi + 1e-300)
    # negative control: the table of a kernel with a perturbed coefficient is outside the bound
    coef = k.coef.copy()
    coef[k.nodes.size // 2] += 1e-6 * k.envelope_mass
    other = LearnedRadialKernel(k.dim, k.lengthscale, k.nodes, coef)
    assert np.any(np.abs(other.as_kernel().density(rho) - exact) > E * f_chi)
    # the masses of the measure carry the table's error
    mp, mm = k.masses()
    assert mp.error >= E and mm.error >= E
    kernel = k.as_kernel()
    assert kernel.mass_error == E
    k2 = pickle.loads(pickle.dumps(kernel))
    np.testing.assert_array_equal(k2.density(rho), tab)


def test_featurizing_a_learned_kernel_is_fast_and_agrees(wide):
    """RandomFeatures(k.as_kernel()).fit() tabulates the density once (it took ~30 CPU s before)."""
    import time

    from spectralkit import RandomFeatures, check_rkks

    k = wide
    kernel = k.as_kernel()
    t0 = time.process_time()
    rf = RandomFeatures(kernel, dim=k.dim, n_components=4000, random_state=0).fit()
    assert time.process_time() - t0 < 5.0  # a generous guard: ~0.5 s on an idle machine
    report = check_rkks(kernel, k.dim)
    mp, mm = k.masses()
    assert report.verdict == "RKKS"
    assert abs(report.mass_plus.value - mp.value) <= report.mass_plus.error + mp.error
    assert abs(report.mass_minus.value - mm.value) <= report.mass_minus.error + mm.error
    assert report.mass_plus.error >= k.density_error
    # the signed features estimate k*: each of the n/2 frequencies contributes a term of
    # magnitude <= m+ + m-, so an entry's standard deviation is <= (m+ + m-) / sqrt(n/2)
    X = np.random.default_rng(4).uniform(size=(40, k.dim))
    K = k.gram(X)
    bound = 5 * (mp.value + mm.value) / np.sqrt(2000)
    assert np.max(np.abs(rf.kernel_approx(X) - K)) <= bound
    # negative control: the positive part alone (a biased estimate of k*) misses by far more
    n_plus = int(np.sum(rf.signature_ > 0))
    Phi = rf.transform(X)
    K_plus = Phi[:, :n_plus] @ Phi[:, :n_plus].T
    assert np.max(np.abs(K_plus - K)) > 2 * bound


def test_sampled_pairs_match_all_pairs_within_the_stated_error():
    X, y = _data(n=3000, d=4, seed=2)
    full = HyperKernelRidge("radial", alpha=1e-4).fit(X, y)
    assert full.sampling_error_ == 0.0 and full.n_pairs_ == 3000 * 3001 // 2
    samp = HyperKernelRidge("radial", alpha=1e-4, n_pair_samples=1_000_000, random_state=0).fit(X, y)
    assert samp.n_pairs_ == 1_000_000 and samp.lengthscale_ == full.lengthscale_
    r = np.linspace(0, 4 * full.lengthscale_, 400)
    scale = np.max(np.abs(full.kernel_(r)))
    err = samp.sampling_error_
    assert 0 < err < 0.05 * scale  # informative
    assert np.max(np.abs(samp.kernel_(r) - full.kernel_(r))) <= 5 * err + 3 * full.binning_error_
    # negative control: pair weights off by a factor 2 (the same as alpha doubled) are outside the bound
    biased = HyperKernelRidge("radial", alpha=2e-4, n_pair_samples=1_000_000, random_state=0).fit(X, y)
    assert np.max(np.abs(biased.kernel_(r) - full.kernel_(r))) > 5 * err + 3 * full.binning_error_
    # the SVR on sampled pairs runs and states its error too
    svr = HyperKernelSVR("radial", C=1e3, n_pair_samples=200_000, random_state=0).fit(X, y)
    assert svr.n_pairs_ == 200_000 and svr.sampling_error_ > 0


def test_sampled_pair_parts_run_on_dask():
    pytest.importorskip("distributed")
    from dask.distributed import Client, LocalCluster

    X, y = _data(n=400, d=3)
    kw = dict(alpha=1e-4, n_pair_samples=20_000, n_partitions=2, random_state=0)
    serial = HyperKernelRidge("radial", **kw).fit(X, y)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster),
    ):
        on_dask = HyperKernelRidge("radial", **kw).fit(X, y)
    assert serial.backend_ == "serial" and on_dask.backend_ == "dask"
    r = np.linspace(0, 3 * serial.lengthscale_, 50)
    np.testing.assert_allclose(on_dask.kernel_(r), serial.kernel_(r), rtol=1e-9, atol=1e-9)
