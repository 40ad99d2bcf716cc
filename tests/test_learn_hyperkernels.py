"""Hyper-kernels of spectralkit.learn: closed forms against their integral constructions, PD-ness, special functions."""

import math

import mpmath
import numpy as np
import pytest
import scipy.integrate
import scipy.special
import scipy.stats

from spectralkit._numerics.special import omega
from spectralkit.learn import gaussian_hyperkernel, radial_hyperkernel, wishart_hyperkernel
from spectralkit.learn._special import log_e0f1
from spectralkit.learn.hyperkernels import GaussianBlocks, WishartBlocks


def _g(z, v):
    return np.exp(-(z**2) / (2 * v)) / np.sqrt(2 * np.pi * v)


# ---------------------------------------------------------------------------------------------
# Gaussian hyper-kernel
# ---------------------------------------------------------------------------------------------
def test_gaussian_closed_form_equals_the_construction_by_quadrature():
    # d = 1: int int g_s2(x1 - z) g_s2(x1' - z) g_h(z - z') g_s2(x2 - z') g_s2(x2' - z') dz dz'
    s2, h = 0.7, 0.4
    x1, x1p, x2, x2p = 0.3, -0.5, 1.1, 0.2

    def integrand(zp, z):
        return _g(x1 - z, s2) * _g(x1p - z, s2) * _g(zp - z, h) * _g(x2 - zp, s2) * _g(x2p - zp, s2)

    val, err = scipy.integrate.dblquad(integrand, -12, 12, -12, 12, epsabs=1e-14, epsrel=1e-12)
    closed = gaussian_hyperkernel([x1], [x1p], [x2], [x2p], s2, h)
    tol = 10 * err + 1e-12 * abs(val)
    assert abs(closed - val) <= tol
    # negative control: the paper's s^2 (instead of 2 s^2) in the first two factors
    paper = _g(x1 - x1p, s2) * _g(x2 - x2p, s2) * _g(0.5 * (x1 + x1p) - 0.5 * (x2 + x2p), s2 + h)
    assert abs(paper - val) > 100 * tol


def test_the_papers_gaussian_hyperkernel_is_a_reparametrisation():
    # the paper's g_sigma2(x1 - x1') g_sigma2(x2 - x2') g_(sigma2 + sigma2_h)(midpoint difference) is the
    # construction with s^2 = sigma2 / 2 and s_h^2 = sigma2 / 2 + sigma2_h: valid, the same family
    rng = np.random.default_rng(8)
    for _ in range(5):
        sigma2, sigma2_h = rng.uniform(0.2, 2.0, size=2)
        x1, x1p, x2, x2p = rng.normal(size=4)
        paper = (
            _g(x1 - x1p, sigma2)
            * _g(x2 - x2p, sigma2)
            * _g(0.5 * (x1 + x1p) - 0.5 * (x2 + x2p), sigma2 + sigma2_h)
        )
        ours = gaussian_hyperkernel([x1], [x1p], [x2], [x2p], sigma2 / 2, sigma2 / 2 + sigma2_h)
        assert ours == pytest.approx(paper, rel=1e-12)
        # negative control: without the reparametrisation the two differ
        assert abs(gaussian_hyperkernel([x1], [x1p], [x2], [x2p], sigma2, sigma2_h) - paper) > 1e-6 * paper


def test_gaussian_hyperkernel_factorises_over_coordinates():
    # the construction is a product over coordinates, so is its d-dimensional normalisation
    rng = np.random.default_rng(1)
    a, ap, b, bp = rng.normal(size=(4, 3))
    full = gaussian_hyperkernel(a, ap, b, bp, 0.8, 0.3)
    prod = np.prod([gaussian_hyperkernel(a[k], ap[k], b[k], bp[k], 0.8, 0.3) for k in range(3)])
    assert full == pytest.approx(prod, rel=1e-13)


def test_gaussian_normalised_and_factorised_forms():
    rng = np.random.default_rng(2)
    X, Z = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))
    s2, h = 0.9, 0.5
    I, J = np.triu_indices(7)
    qa, qb = np.triu_indices(4)
    rows = GaussianBlocks(X, Z, s2, h, qa, qb).rows(I, J)
    direct = gaussian_hyperkernel(
        X[I][:, None], X[J][:, None], Z[qa][None], Z[qb][None], s2, h, normalize=True
    )
    np.testing.assert_allclose(rows, direct, rtol=1e-13, atol=1e-16)
    # normalised = unnormalised / its value at four coincident points
    raw = gaussian_hyperkernel(X[I][:, None], X[J][:, None], Z[qa][None], Z[qb][None], s2, h)
    peak = gaussian_hyperkernel(X[0], X[0], X[0], X[0], s2, h)
    np.testing.assert_allclose(raw / peak, direct, rtol=1e-12)


def _pairs_matrix(fn, P):
    n = len(P)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return fn(P[i, 0], P[i, 1], P[j, 0], P[j, 1])


@pytest.mark.parametrize("kind", ["gaussian", "wishart"])
def test_hyperkernels_are_pd_on_pairs_and_their_sections_are_pd(kind):
    rng = np.random.default_rng(3)
    P = rng.normal(size=(40, 2, 2))  # 40 pairs of points in R^2
    if kind == "gaussian":

        def fn(a, ap, b, bp):
            return gaussian_hyperkernel(a, ap, b, bp, 0.6, 0.3, normalize=True)
    else:

        def fn(a, ap, b, bp):
            return wishart_hyperkernel(a, ap, b, bp, 0.8, 3.0, normalize=True)

    K = _pairs_matrix(fn, P)
    ev = np.linalg.eigvalsh(K)
    assert ev.min() >= -1e-12 * ev.max()
    # a section: the kernel (x, x') -> hk(pair0, (x, x')) on 30 points
    pts = rng.normal(size=(30, 2))
    i, j = np.meshgrid(np.arange(30), np.arange(30), indexing="ij")
    S = fn(P[0, 0], P[0, 1], pts[i], pts[j])
    es = np.linalg.eigvalsh(S)
    assert es.min() >= -1e-12 * es.max()
    # symmetric in the pair order and between the pairs
    assert fn(P[1, 0], P[1, 1], P[2, 0], P[2, 1]) == pytest.approx(
        fn(P[1, 1], P[1, 0], P[2, 0], P[2, 1]), rel=1e-13
    )
    assert fn(P[1, 0], P[1, 1], P[2, 0], P[2, 1]) == pytest.approx(
        fn(P[2, 0], P[2, 1], P[1, 0], P[1, 1]), rel=1e-13
    )


# ---------------------------------------------------------------------------------------------
# Wishart hyper-kernel
# ---------------------------------------------------------------------------------------------
def test_wishart_closed_form_equals_the_construction_by_quadrature_d1():
    # d = 1: IW(D, b) is an inverse gamma law; integrate over x and Sigma numerically
    D, b = 0.9, 3.0
    p = np.array([0.4, -0.3, 0.9, 0.1])

    def iw(v):
        return (
            D ** (b / 2)
            / (2 ** (b / 2) * scipy.special.gamma(b / 2))
            * v ** (-(b + 2) / 2)
            * np.exp(-D / (2 * v))
        )

    def inner(v):
        return scipy.integrate.quad(lambda x: np.prod(_g(p - x, v)), -15, 15, epsabs=1e-15, limit=200)[0]

    val, _err = scipy.integrate.quad(
        lambda v: inner(v) * iw(v), 0, np.inf, limit=400, epsabs=1e-15, epsrel=1e-10
    )
    closed = wishart_hyperkernel(p[0], p[1], p[2], p[3], D, b)
    assert closed == pytest.approx(val, rel=1e-8)


def test_wishart_closed_form_uses_the_dimension_d2_monte_carlo():
    # d = 2: average the (Gaussian) x-integral over Sigma ~ IW(D, b); the closed form must sit
    # within 5 standard errors, and the paper's sample size m in place of d must not
    rng = np.random.default_rng(4)
    d, b = 2, 5.0
    D = np.array([[0.8, 0.2], [0.2, 0.5]])
    p = rng.normal(scale=0.5, size=(4, d))
    S = (p - p.mean(0)).T @ (p - p.mean(0))
    sig = scipy.stats.invwishart(df=b, scale=D).rvs(size=200_000, random_state=rng)
    inv = np.linalg.inv(sig)
    det = np.linalg.det(sig)
    # int prod_k g_Sigma(p_k - x) dx = (2 pi)^(-3d/2) 2^(-d) |Sigma|^(-3/2) exp(-tr(Sigma^-1 S) / 2)
    vals = (2 * np.pi) ** (-1.5 * d) * 2.0 ** (-d) * det**-1.5 * np.exp(-0.5 * np.einsum("nij,ji->n", inv, S))
    mc, se = vals.mean(), vals.std(ddof=1) / np.sqrt(vals.size)
    closed = wishart_hyperkernel(p[0], p[1], p[2], p[3], D, b)
    assert abs(closed - mc) < 5 * se
    m = 10  # a sample size, as the paper writes it
    wrong = (
        np.pi ** (-1.5 * m)
        * 2.0 ** (-m)
        * math.exp(scipy.special.multigammaln((b + 3) / 2, d) - scipy.special.multigammaln(b / 2, d))
        * np.linalg.det(D) ** (b / 2)
        / np.linalg.det(D + S) ** ((b + 3) / 2)
    )
    assert abs(wrong - mc) > 50 * se


def test_wishart_blocks_match_the_pointwise_closed_form():
    rng = np.random.default_rng(5)
    X, Z = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))
    I, J = np.triu_indices(7)
    qa, qb = np.triu_indices(4)
    rows = WishartBlocks(X, Z, 0.9, 6.0, qa, qb).rows(I, J)
    direct = wishart_hyperkernel(
        X[I][:, None], X[J][:, None], Z[qa][None], Z[qb][None], 0.9, 6.0, normalize=True
    )
    np.testing.assert_allclose(rows, direct, rtol=1e-12, atol=1e-15)


def test_wishart_large_dof_approaches_the_gaussian_hyperkernel():
    # scale (b + 3) s^2: b -> inf gives exp(-tr S / (2 s^2)), the Gaussian one with s_h -> 0
    rng = np.random.default_rng(6)
    a, ap, b_, bp = rng.normal(scale=0.4, size=(4, 3))
    s2 = 0.5
    gauss = gaussian_hyperkernel(a, ap, b_, bp, s2, 1e-12, normalize=True)
    errs = [
        abs(wishart_hyperkernel(a, ap, b_, bp, (dof + 3) * s2, dof, normalize=True) - gauss)
        for dof in (10, 1e3, 1e6)
    ]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-5


# ---------------------------------------------------------------------------------------------
# Radial hyper-kernel and its special functions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 5])
def test_radial_hyperkernel_closed_form_equals_the_integral(d):
    ell = 0.8
    nu = d / 2 - 1

    def omega_ref(t):
        return scipy.special.gamma(d / 2) * (2 / t) ** nu * scipy.special.jv(nu, t) if d != 1 else np.cos(t)

    def f_chi(rho):
        return (
            ell
            * (rho * ell) ** (d - 1)
            * np.exp(-((rho * ell) ** 2) / 2)
            / (2 ** (d / 2 - 1) * scipy.special.gamma(d / 2))
        )

    for r, rp in [(1.3, 0.6), (0.2, 2.5), (1.0, 1.0)]:
        val, err = scipy.integrate.quad(
            lambda rho, r=r, rp=rp: omega_ref(rho * r) * omega_ref(rho * rp) * f_chi(rho),
            1e-12,
            60,
            limit=500,
            epsabs=1e-14,
        )
        assert radial_hyperkernel(r, rp, d, ell) == pytest.approx(val, abs=10 * err + 1e-12)


def test_radial_hyperkernel_is_stable_for_large_arguments():
    # 0F1 itself overflows double precision here (argument up to 1e11); H never does
    mpmath.mp.dps = 40
    for d, r, rp, ell in [
        (3, 50.0, 49.0, 0.1),
        (22, 300.0, 301.0, 1.0),
        (256, 6.0, 6.5, 0.2),
        (256, 40.0, 40.5, 0.2),
    ]:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            v = radial_hyperkernel(r, rp, d, ell)
        ref = float(
            mpmath.exp(-(r * r + rp * rp) / (2 * ell * ell))
            * mpmath.hyp0f1(mpmath.mpf(d) / 2, (r * rp) ** 2 / (4 * ell**4))
        )
        assert 0 <= v <= 1
        if ref > 1e-300:
            assert v == pytest.approx(ref, rel=1e-12)
        else:  # below double precision (2.6e-338 in the last case): 0 is the nearest answer
            assert v <= 1e-300


def test_log_e0f1_against_mpmath():
    mpmath.mp.dps = 40
    for nu in (-0.5, 0.0, 1.0, 7.0, 29.0, 127.0, 160.0, 499.0):
        a = np.array([0.0, 1e-300, 1e-8, 0.3, 5.0, 29.9, 30.1, 100.0, 699.0, 701.0, 1e4, 1e6])
        got = log_e0f1(nu, a)
        ref = [0.0] + [float(mpmath.log(mpmath.hyp0f1(nu + 1, mpmath.mpf(x) ** 2 / 4)) - x) for x in a[1:]]
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-14)


def test_omega_against_mpmath_in_every_regime():
    mpmath.mp.dps = 40
    t = np.array([0.0, 1e-9, 0.5, 2.0, 11.0, 45.0, 100.0, 1000.0])
    for d in (1, 2, 3, 4, 16, 60, 256, 1000):  # d = 1000 exercises the quadrature branch
        ref = [float(mpmath.hyp0f1(mpmath.mpf(d) / 2, -(mpmath.mpf(x) ** 2) / 4)) for x in t]
        np.testing.assert_allclose(omega(t, d), ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: gaussian_hyperkernel([0.0], [1.0], [0.0], [0.0, 1.0], 1.0, 1.0), "same last dimension"),
        (
            lambda: gaussian_hyperkernel([0.0], [1.0], [0.0], [1.0], -1.0, 1.0),
            "sigma2 must be a finite number > 0",
        ),
        (lambda: gaussian_hyperkernel([np.nan], [1.0], [0.0], [1.0], 1.0, 1.0), "x1 must be finite"),
        (
            lambda: wishart_hyperkernel([0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 1.0], 1.0, 0.5),
            r"dof must be a finite number > d - 1 = 1",
        ),
        (
            lambda: wishart_hyperkernel([0.0], [1.0], [0.0], [1.0], np.eye(2), 3.0),
            r"scale must be a float > 0 or a finite symmetric \(1, 1\)",
        ),
        (lambda: radial_hyperkernel(-1.0, 1.0, 2, 1.0), "r must contain finite distances >= 0"),
        (lambda: radial_hyperkernel(1.0, 1.0, 0, 1.0), r"dim must be an integer in \[1, 4096\], got 0"),
        (lambda: radial_hyperkernel(1.0, 1.0, 2, 0.0), "lengthscale must be a finite number > 0"),
    ],
)
def test_bad_input_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()
