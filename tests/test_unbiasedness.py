"""Unbiasedness and variance of the signed random-feature estimator (docs/theory.md §2, §3), end to end.

Each check refits :class:`RandomFeatures` with seeds 0..R-1 (the samplers are built once and
reused) and computes k^(x, y) = phi(x)^T J phi(y) for a few point pairs.

* Unbiasedness: |mean(k^) - k(|x - y|)| <= 4 SE + (mass errors), SE = std(k^) / sqrt(R) from the
  same draws. Per comparison the false-alarm probability is 6e-5 under the CLT; seeds are fixed.
* Variance: the i.i.d. variance (docs/theory.md §2, GORF Theorem 4)
  Var = (m+^2 / s+) [(1 + k~+(2z)) / 2 - k~+(z)^2] + (m-^2 / s-) [(1 + k~-(2z)) / 2 - k~-(z)^2]
  matches the sample variance within 4 SE of the sample variance, SE = sqrt((m4 - s^4) / R)
  with m4 the sample fourth central moment.

These tests fail on a biased estimator: dropping the Jacobian rho^(d-1) from the sampled density,
or scaling one mass by 1.1, makes them fail (checked once by breaking the code on purpose).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from spectralkit import kernels
from spectralkit.features import RandomFeatures, _omega

RADII = (0.25, 0.8, 1.7)


def _pairs(dim, radii, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((len(radii), dim)) * 0.5
    Z = rng.standard_normal((len(radii), dim))
    Z *= (np.asarray(radii) / np.linalg.norm(Z, axis=1))[:, None]
    return X, X + Z


def _estimates(rf, X, Y, reps):
    """k^(x_i, y_i) for R independent feature maps: array (R, n_pairs).

    Computed from the fitted frequencies in numpy: phi(x)^T J phi(y) equals
    (m+/s+) sum cos(w . (x - y)) - (m-/s-) sum cos(v . (x - y)) for "sincos" and
    (2 m/s) sum cos(w . x + b) cos(w . y + b) (per part) for "cos"; that the compiled transform
    produces exactly these features is tested in test_features.py. (One compiled call per
    refit would cost a parallel-region start each.)
    """
    out = np.empty((reps, len(X)))
    for i in range(reps):
        rf.set_params(random_state=i).fit()
        total = np.zeros(len(X))
        for W, off, scale, sign in ((rf.W_plus_, rf.offsets_plus_, rf.scale_plus_, 1.0),
                                    (rf.W_minus_, rf.offsets_minus_, rf.scale_minus_, -1.0)):
            if len(W) == 0:
                continue
            if off is None:
                total += sign * scale**2 * np.cos((X - Y) @ W.T).sum(axis=1)
            else:
                total += sign * scale**2 * (np.cos(X @ W.T + off) * np.cos(Y @ W.T + off)).sum(axis=1)
        out[i] = total
    return out


def test_estimates_helper_matches_the_features():
    rf = RandomFeatures(kernels.delta_gaussian(1.0, 10.0), dim=3, n_components=16)
    X, Y = _pairs(3, RADII, 0)
    for fmap in ("sincos", "cos"):
        rf.set_params(feature_map=fmap)
        est = _estimates(rf, X, Y, 1)[0]  # leaves rf fitted with random_state=0
        assert np.allclose(est, np.sum(rf.transform(X) * rf.transform(Y) * rf.signature_, axis=1),
                           atol=1e-13)


def _assert_unbiased(kernel, dim, method, reps, n_components=16, split="jordan", seed=0, radii=RADII):
    rf = RandomFeatures(kernel, dim=dim, n_components=n_components, method=method, split=split)
    X, Y = _pairs(dim, radii, seed)
    est = _estimates(rf, X, Y, reps)
    exact = kernel(np.asarray(radii))
    se = est.std(axis=0, ddof=1) / math.sqrt(reps)
    slack = rf.mass_plus_error_ + rf.mass_minus_error_ + 1e-9
    dev = np.abs(est.mean(axis=0) - exact)
    assert np.all(dev <= 4 * se + slack), (kernel.name, dim, method, dev / np.maximum(se, 1e-300))
    return rf


CASES = [
    (kernels.delta_gaussian(1.0, 10.0), 3, "gorf"),
    (kernels.delta_gaussian(1.0, 3.0), 16, "orf"),
    (kernels.spherical_polynomial(2.0, 2), 3, "rff"),
    (kernels.laplacian(1.0) - 0.5 * kernels.gaussian(0.5), 5, "gorf"),
    (kernels.matern(1.5, 1.0), 16, "gorf"),
]


@pytest.mark.parametrize("kernel,dim,method", CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_unbiased_fixed_cases(kernel, dim, method):
    _assert_unbiased(kernel, dim, method, reps=1000, n_components=32)


def test_unbiased_terms_split():
    _assert_unbiased(kernels.delta_gaussian(1.0, 10.0), 3, "gorf", reps=300, split="terms")


def test_unbiased_cos_feature_map():
    rf = RandomFeatures(kernels.delta_gaussian(1.0, 10.0), dim=2, n_components=16, feature_map="cos")
    X, Y = _pairs(2, RADII, 3)
    est = _estimates(rf, X, Y, 400)
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - rf.kernel(np.asarray(RADII))) <= 4 * se + 1e-9)


# random kernels from the library and random finite-mass combinations, random d, random pairs
def _library_kernel(draw):
    which = draw(hst.sampled_from(["gaussian", "laplacian", "matern", "rational_quadratic",
                                   "exponential_power", "delta_gaussian", "spherical_polynomial",
                                   "combination"]))
    ls = draw(hst.floats(0.5, 2.0))
    if which == "gaussian":
        return kernels.gaussian(ls), 64
    if which == "laplacian":
        return kernels.laplacian(ls), 64
    if which == "matern":
        return kernels.matern(draw(hst.sampled_from([0.5, 1.5, 2.5, 0.8])), ls), 64
    if which == "rational_quadratic":
        return kernels.rational_quadratic(draw(hst.sampled_from([0.5, 1.0, 3.0])), ls), 64
    if which == "exponential_power":
        return kernels.exponential_power(draw(hst.sampled_from([0.5, 1.5])), ls), 64
    if which == "delta_gaussian":
        return kernels.delta_gaussian(ls, ls * draw(hst.floats(1.5, 10.0))), 64
    if which == "spherical_polynomial":
        return kernels.spherical_polynomial(2.0, 2), 4  # finite mass only for d <= 4 (docs/theory.md §5)
    atoms = [kernels.gaussian(ls), kernels.laplacian(2 * ls), kernels.matern(1.5, ls / 2),
             kernels.rational_quadratic(1.0, ls)]
    idx = draw(hst.lists(hst.integers(0, 3), min_size=2, max_size=3, unique=True))
    coefs = draw(hst.lists(hst.floats(-2.0, 2.0).filter(lambda c: abs(c) > 0.1),
                           min_size=len(idx), max_size=len(idx)))
    k = coefs[0] * atoms[idx[0]]
    for c, i in zip(coefs[1:], idx[1:]):
        k = k + c * atoms[i]
    return k, 64


@pytest.mark.slow
@settings(max_examples=10, deadline=None)  # bounded for CI's time budget; HYPOTHESIS_PROFILE has no say here
@given(data=hst.data())
def test_unbiased_random_kernels(data):
    kernel, max_dim = _library_kernel(data.draw)
    dim = data.draw(hst.integers(1, max_dim), label="dim")
    method = data.draw(hst.sampled_from(["rff", "orf", "gorf"]), label="method")
    seed = data.draw(hst.integers(0, 2**16), label="seed")
    radii = tuple(data.draw(hst.lists(hst.floats(0.05, 2.0), min_size=2, max_size=3), label="radii"))
    _assert_unbiased(kernel, dim, method, reps=400, seed=seed, radii=radii)


# ---------------------------------------------------------------------------------------------
# variance
# ---------------------------------------------------------------------------------------------
def _normalised_part_kernel(measure, sign, radii):
    """k~_sign(r) = int max(sign f, 0) Omega_d(rho r) drho / m_sign by Gauss–Legendre on [0, rho_c]."""
    rc = max(lb.b for lb in measure.lobes)
    edges = np.linspace(0.0, rc, 4001)
    t, w = np.polynomial.legendre.leggauss(12)
    lo, hi = edges[:-1, None], edges[1:, None]
    nodes = (lo + (hi - lo) * 0.5 * (t + 1)).ravel()
    weights = ((hi - lo) * 0.5 * w).ravel() * np.maximum(sign * measure.radial_density(nodes), 0.0)
    total = weights.sum()
    return np.array([np.dot(weights, _omega(nodes * r, measure.dim)) for r in radii]) / total


def _iid_variance(mp, mm, sp, sm, kp, kp2, km, km2):
    v = mp**2 / sp * ((1 + kp2) / 2 - kp**2)
    if sm:
        v = v + mm**2 / sm * ((1 + km2) / 2 - km**2)
    return v


def _assert_variance(est, theory):
    R = len(est)
    c = est - est.mean(axis=0)
    var = (c**2).sum(axis=0) / (R - 1)
    m4 = (c**4).mean(axis=0)
    se = np.sqrt(np.maximum(m4 - var**2, 0) / R)
    assert np.all(np.abs(var - theory) <= 4 * se), (var, theory, se)


def test_iid_variance_terms_split_closed_form():
    """Delta-Gaussian, split='terms': k~+ = exp(-r^2/2), k~- = exp(-r^2/200), m+- = 1 (closed forms)."""
    radii = np.array(RADII)
    rf = RandomFeatures(kernels.delta_gaussian(1.0, 10.0), dim=3, n_components=32, method="rff",
                        split="terms")
    X, Y = _pairs(3, radii, 1)
    est = _estimates(rf, X, Y, 3000)
    g = lambda r, s: np.exp(-r**2 / (2 * s**2))  # noqa: E731
    theory = _iid_variance(1.0, 1.0, rf.n_plus_, rf.n_minus_, g(radii, 1), g(2 * radii, 1),
                           g(radii, 10), g(2 * radii, 10))
    _assert_variance(est, theory)


@pytest.mark.parametrize("kernel,dim", [(kernels.delta_gaussian(1.0, 3.0), 3),
                                        (kernels.laplacian(1.0), 5)], ids=["delta_gaussian", "laplacian"])
def test_iid_variance_jordan(kernel, dim):
    radii = np.array(RADII)
    rf = RandomFeatures(kernel, dim=dim, n_components=24, method="rff").fit()
    m = rf.measure_
    kp = _normalised_part_kernel(m, +1, np.r_[radii, 2 * radii])
    km = _normalised_part_kernel(m, -1, np.r_[radii, 2 * radii]) if rf.n_minus_ else np.zeros(6)
    theory = _iid_variance(rf.mass_plus_, rf.mass_minus_, rf.n_plus_, rf.n_minus_,
                           kp[:3], kp[3:], km[:3], km[3:])
    X, Y = _pairs(dim, radii, 2)
    _assert_variance(_estimates(rf, X, Y, 3000), theory)


@pytest.mark.parametrize("kernel,n_components", [(kernels.gaussian(1.0), 32),
                                                 (kernels.delta_gaussian(1.0, 10.0), 64)],
                         ids=["gaussian", "delta_gaussian"])
def test_orthogonal_variants_reduce_variance(kernel, n_components):
    """d = 16, s = d frequencies per part: Var(ORF), Var(GORF) <= Var(i.i.d.).

    The test is one-sided at 4 SE of the log variance ratio (SE^2 = 2/R + 2/R for near-Gaussian
    estimates), averaged over three radii; for the Gaussian, where ORF's reduction is strong, the
    reduction itself must be significant.
    """
    dim, reps = 16, 1500
    X, Y = _pairs(dim, RADII, 4)
    var = {}
    for method in ("rff", "orf", "gorf"):
        rf = RandomFeatures(kernel, dim=dim, n_components=n_components, method=method)
        var[method] = _estimates(rf, X, Y, reps).var(axis=0, ddof=1)
    se_log = math.sqrt(4.0 / reps)
    for method in ("orf", "gorf"):
        log_ratio = np.log(var[method] / var["rff"])
        assert np.all(log_ratio <= 4 * se_log), (method, var)
    if kernel.name.startswith("gaussian"):
        assert np.log(var["orf"] / var["rff"]).mean() < -4 * se_log
