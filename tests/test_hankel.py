"""Numeric Hankel transforms (spectralkit._hankel via _transforms.numeric_transform) against
independent references: mpmath quadrature (30 digits), Sonine's closed form for truncated
polynomials, the multivariate Student-t density for Matérn-3/2 written by hand, and elementary
transforms of 1/(1 + r^2)^2.

Accuracy target (docs/theory.md §6 / task): relative 1e-7 where |mu| >= 1e-8 max|mu|, absolute
1e-12 max|mu| everywhere, on 2000 log-spaced rho in [1e-3, 1e3] (plus rho = 0), and the
reported ``rel_error`` / ``abs_error`` must bound the measured errors.

The mpmath quadratures up to rho = 1000 (minutes each) are stored in tests/reference/*.json by
tests/reference/make_references.py from ``REFERENCE_SETS`` below; the small-rho cases still run
the same quadrature live on every run.
"""

import functools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spectralkit import kernels as K
from spectralkit._numerics.special import lambda_nu, origin_term_coefficient
from spectralkit.transforms import numeric_transform

RHO = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 2000)])
REL, ABS = 1e-7, 1e-12


def assert_accurate(T, rho, ref, rel=REL, abs_=ABS):
    """Every point within max(rel |ref|, abs_ max|ref|), and within the transform's own claim
    max(rel_error |ref|, abs_error max|ref|)."""
    val = T.mu(rho)
    peak = float(np.max(np.abs(ref)))
    diff = np.abs(val - ref)
    bound = np.maximum(rel * np.abs(ref), abs_ * peak)
    worst = int(np.argmax(diff / bound))
    assert diff[worst] <= bound[worst], (
        f"rho = {rho[worst]:.6g}: mu = {val[worst]!r}, reference {ref[worst]!r}"
    )
    claim = np.maximum(T.rel_error * np.abs(ref), T.abs_error * peak)
    worst = int(np.argmax(diff / claim))
    assert diff[worst] <= claim[worst], (
        f"rho = {rho[worst]:.6g}: error {diff[worst]:.3g} exceeds the claimed "
        f"max({T.rel_error:.3g} |mu|, {T.abs_error:.3g} max|mu|)"
    )


# -- references ----------------------------------------------------------------------------------
def sonine(rho, d, p, R=2.0):
    """mu of (1 - r^2/R^2)^p on [0, R] by Sonine's first finite integral:
    (2 pi)^(-d/2) R^d 2^p p! x^-n J_n(x), x = rho R, n = nu + p + 1, nu = d/2 - 1, with
    x^-n J_n(x) = 2^-n 0F1(; n+1; -x^2/4) / Gamma(n+1) for x < 5 (no cancellation at 0)."""
    from scipy.special import gamma, hyp0f1, jv

    n = d / 2 + p
    x = np.asarray(rho, dtype=np.float64) * R
    small = x < 5
    lam = np.empty(x.shape)
    lam[small] = 2.0**-n * hyp0f1(n + 1, -(x[small] ** 2) / 4) / gamma(n + 1)
    lam[~small] = jv(n, x[~small]) * x[~small] ** -n
    return (2 * math.pi) ** (-d / 2) * R**d * 2**p * math.factorial(p) * lam


def mu_mpmath(kfun, d, rho, top, dps=20):
    """(2 pi)^(-d/2) int_0^top k(r) r^(d-1) Lambda_nu(rho r) dr by mpmath (tanh-sinh on panels
    shorter than 3/rho, so that endpoint singularities at r = top are handled)."""
    return float(mu_mpmath_mp(kfun, d, rho, top, dps))


def mu_mpmath_mp(kfun, d, rho, top, dps=20):
    """mu_mpmath with all the digits (an mpmath number)."""
    with mp.workdps(dps):
        nu = mp.mpf(d) / 2 - 1
        rho = mp.mpf(float(rho))

        def f(r):
            if rho == 0:
                return kfun(r) * r ** (d - 1) * 2 ** (-nu) / mp.gamma(nu + 1)
            return kfun(r) * r ** (mp.mpf(d) / 2) * mp.besselj(nu, rho * r) * rho ** (-nu)

        n = int(max(4, float(rho * top / 3)))
        val = mp.quad(f, [top * mp.mpf(i) / n for i in range(n + 1)])
        return val * (2 * mp.pi) ** (-mp.mpf(d) / 2)


def ntk_mp(r):
    return (2 - r**2) / mp.pi * mp.acos(r**2 / 2 - 1) + r / (2 * mp.pi) * mp.sqrt(4 - r**2)


def arccos0_mp(r):
    return 1 - mp.acos(1 - r**2 / 2) / mp.pi


def arccos1_mp(r):
    u = 1 - r**2 / 2
    return (u * (mp.pi - mp.acos(u)) + r * mp.sqrt(4 - r**2) / 2) / mp.pi


# constructor, mpmath formula, edge exponent beta (k ~ (2 - r)^beta) and lowest odd origin power
SPHERE = {
    "ntk_relu_sphere": (K.ntk_relu_sphere, ntk_mp, 0.5, 1),
    "arccos0_sphere": (K.arccos0_sphere, arccos0_mp, 0.5, 1),
    "arccos1_sphere": (K.arccos1_sphere, arccos1_mp, 1.5, 3),
}


#: kernels whose numeric transform several tests read (the sphere kernels, the spherical polynomial
#: (1 - r^2/4)^2, exp(-r^1.5)): derived once per (kernel, d) by :func:`shared_transform`
SHARED = {
    **{name: ctor for name, (ctor, _, _, _) in SPHERE.items()},
    "spherical_polynomial(2, 2)": lambda: K.spherical_polynomial(2.0, 2),
    "exp(-r**1.5)": lambda: K.RadialKernel.from_string("exp(-r**1.5)"),
}


@functools.cache
def shared_transform(name, d):
    """numeric_transform of SHARED[name] in d, built once for the tests that read it."""
    return numeric_transform(SHARED[name](), d)


# -- building blocks ------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 20), x=st.floats(0.0, 200.0))
def test_lambda_nu_matches_mpmath(d, x):
    nu = d / 2 - 1
    with mp.workdps(30):
        ref = mp.mpf(2) ** (-nu) / mp.gamma(nu + 1) if x == 0 else mp.besselj(nu, x) * mp.mpf(x) ** (-nu)
        # envelope: Lambda_nu(0) near 0, sqrt(2/pi) x^(-nu-1/2) (Hankel asymptotics) beyond
        scale = mp.mpf(2) ** (-nu) / mp.gamma(nu + 1)
        if x > 0:
            scale = min(scale, mp.sqrt(2 / mp.pi) * mp.mpf(x) ** (-nu - 0.5))
    got = lambda_nu(nu, np.array([x]))[0]
    # relative to the envelope of Lambda_nu (absolute near its zeros)
    assert abs(got - float(ref)) <= 1e-13 * float(scale) + 1e-15 * abs(float(ref))


@pytest.mark.parametrize("d", [1, 2, 3, 5, 16])
def test_origin_coefficient_laplacian_leading_term(d):
    # exp(-r) = 1 - r + ...: mu ~ -C(1) rho^(-1-d) = Gamma((d+1)/2) / pi^((d+1)/2) rho^(-1-d)
    expected = math.gamma((d + 1) / 2) / math.pi ** ((d + 1) / 2)
    assert -origin_term_coefficient(1.0, 0, d) == pytest.approx(expected, rel=1e-13)


def test_origin_coefficient_log_term():
    # FT of log|x| in d = 1 is -1/(2|w|) away from 0 (convention mu = (2 pi)^-1 int k e^(-iwx))
    assert origin_term_coefficient(0.0, 1, 1) == pytest.approx(-0.5, rel=1e-14)
    with pytest.raises(ValueError, match="log_power"):
        origin_term_coefficient(1.0, 1, 3)


# -- compactly supported kernels ---------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 3, 5, 16])
def test_spherical_polynomial_a2_p2_against_sonine(d):
    T = shared_transform("spherical_polynomial(2, 2)", d)
    assert T.tail_oscillation == 2.0
    assert T.tail_exponent == pytest.approx((d + 1) / 2 + 2)
    assert_accurate(T, RHO, sonine(RHO, d, 2))


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_spherical_polynomial_a3_p1_against_sonine(d):
    # 1 - r^2/9 = 5/9 + (4/9)(1 - r^2/4): a jump at r = 2 (beta = 0)
    T = numeric_transform(K.spherical_polynomial(3.0, 1), d)
    ref = 5 / 9 * sonine(RHO, d, 0) + 4 / 9 * sonine(RHO, d, 1)
    assert T.tail_exponent == pytest.approx((d + 1) / 2)
    assert_accurate(T, RHO, ref)


SPHERE_RHO = np.array([0.0, 0.013, 0.7, 2.9, 11.3])


@pytest.mark.parametrize("name", ["ntk_relu_sphere", "arccos0_sphere", "arccos1_sphere"])
@pytest.mark.parametrize("d", [1, 3])
def test_sphere_kernels_against_mpmath(name, d, stored_reference):
    _, _, beta, alpha = SPHERE[name]
    T = shared_transform(name, d)
    stored = stored_reference("hankel_sphere_mpmath")
    ref = np.array([stored(kernel=name, d=d, rho=x, top=2, dps=20) for x in SPHERE_RHO])
    # these few points include rho = 0, where |mu| is largest for these kernels
    assert_accurate(T, SPHERE_RHO, ref)
    assert T.tail_exponent == pytest.approx(min((d + 1) / 2 + beta, d + alpha))
    assert T.tail_oscillation == 2.0


LARGE_RHO = (0.0, 0.0021, 0.7, 5.3, 41.0, 97.0, 433.0, 1000.0)
LARGE_RHO_DIMS = [1, 2, 3, 5]
#: every kernel in d = 1 and 3 (the transforms test_sphere_kernels_against_mpmath builds); d = 2 and 5
#: each for two kernels (arccos1, edge exponent 3/2, in both; ntk and arccos0, both edge exponent 1/2,
#: in one each) instead of all three
LARGE_RHO_PARAMS = [
    (name, d)
    for name in sorted(SPHERE)
    for d in LARGE_RHO_DIMS
    if (name, d) not in {("ntk_relu_sphere", 2), ("arccos0_sphere", 5)}
]


@pytest.mark.parametrize("name,d", LARGE_RHO_PARAMS)
def test_sphere_kernels_against_mpmath_large_rho(name, d, stored_reference):
    T = shared_transform(name, d)
    stored = stored_reference("hankel_mpmath")
    ref = np.array([stored(kernel=name, d=d, rho=x, top=2, dps=20) for x in LARGE_RHO])
    assert_accurate(T, np.array(LARGE_RHO), ref)


# -- infinite support ------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 3, 5, 8, 16])
def test_matern32_by_hand_against_student_t(d):
    # (1 + r) e^(-r) = Matérn-3/2 with l = sqrt(3): multivariate t density, 2 nu = 3
    T = numeric_transform(K.RadialKernel.from_string("exp(-r)*(1 + r)"), d)
    ref = math.gamma((d + 3) / 2) / (math.gamma(1.5) * math.pi ** (d / 2)) * (1 + RHO**2) ** (-(d + 3) / 2)
    assert T.tail_exponent == pytest.approx(d + 3)
    assert_accurate(T, RHO, ref)


@pytest.mark.slow
@pytest.mark.parametrize("d", [4, 6, 7, 9, 10, 11, 12, 13, 14, 15])
def test_matern32_by_hand_all_dims(d):
    test_matern32_by_hand_against_student_t(d)


def test_rational_power_decay_against_elementary_forms():
    k = K.RadialKernel.from_string("1/(1 + r**2)**2")
    refs = {
        1: (1 + RHO) * np.exp(-RHO) / 4,
        3: np.exp(-RHO) / (8 * math.pi),
    }
    from scipy.special import kv

    with np.errstate(all="ignore"):
        refs[2] = np.where(RHO > 0, RHO * kv(1, RHO) / (4 * math.pi), 1 / (4 * math.pi))
    for d, ref in refs.items():
        T = numeric_transform(k, d)
        assert T.tail_exponent == math.inf
        assert_accurate(T, RHO, ref)


def test_power_decay_slower_than_d_is_singular_at_zero():
    # 1/(1 + r)^3 in d = 3: int k r^2 dr diverges (log): mu(0) = inf, mu finite for rho > 0
    T = numeric_transform(K.RadialKernel.from_string("1/(1 + r)**3"), 3)
    v = T.mu(np.array([0.0, 1e-6, 1e-4]))
    assert v[0] == math.inf
    assert np.all(np.isfinite(v[1:])) and v[1] > v[2] > 0
    # logarithmic growth: mu(1e-6) - mu(1e-4) = c log(100), c = (2 pi)^(-3/2) Lambda_(1/2)(0)
    c = (2 * math.pi) ** -1.5 * math.sqrt(2 / math.pi)
    assert v[1] - v[2] == pytest.approx(c * math.log(100), rel=1e-3)


@pytest.mark.parametrize("d", [1, 3, 16])
def test_gaussian_times_cosine_against_mpmath(d):
    k = K.RadialKernel.from_string("exp(-r**2/2)*cos(r)")
    T = numeric_transform(k, d)
    # next to 0, the peak at rho = 1 (the frequency) and the far side of the bulk
    rho = np.array([0.0, 0.001, 1.0, 7.0])
    ref = np.array([mu_mpmath(lambda r: mp.exp(-(r**2) / 2) * mp.cos(r), d, x, 14, dps=18) for x in rho])
    assert T.tail_exponent == math.inf  # smooth at 0: faster than any power beyond rho_x
    assert_accurate(T, rho, ref)
    # beyond the crossover mu is set to 0 with the stated absolute bound
    assert np.all(np.abs(T.mu(np.array([60.0, 1e4]))) <= T.abs_error * np.max(np.abs(ref)))


@pytest.mark.parametrize("d", [3, 16])
def test_pole_in_the_rotated_sector(d):
    """exp(-r)/(1 + r^4) has poles at arg z = pi/4: the ray of the tail must not sweep past them (the
    pi/3 ray left out their residues; in d = 16 quadrature and ray then disagreed by 0.5 %)."""
    T = numeric_transform(K.RadialKernel.from_string("exp(-r)/(1 + r**4)"), d)
    rho = np.array([0.5, 2.0, 8.0])
    # exp(-45) = 3e-20: the integral beyond r = 45 is negligible
    ref = np.array([mu_mpmath(lambda r: mp.exp(-r) / (1 + r**4), d, x, 45, dps=20) for x in rho])
    assert_accurate(T, rho, ref)


@pytest.mark.parametrize("d", [1, 3])
def test_exponential_power_against_mpmath(d):
    T = shared_transform("exp(-r**1.5)", d)
    # rho = 0 and next to it, the bulk and the power tail rho^-(d + 1.5) (further out: the stored
    # references of test_exponential_power_against_mpmath_larger_rho at 20 and 60, the series beyond)
    rho = np.array([0.0, 0.002, 1.0, 5.0])
    # exp(-12^1.5) = 1e-18: the integral beyond r = 12 is negligible
    ref = np.array([mu_mpmath(lambda r: mp.exp(-(r**1.5)), d, x, 12, dps=18) for x in rho])
    assert T.tail_exponent == pytest.approx(d + 1.5)
    assert_accurate(T, rho, ref)


@pytest.mark.parametrize("d", [1, 3, 16])
def test_exponential_power_tail_against_origin_series(d):
    # far in the tail mu = sum_j c_j C(alpha_j) rho^(-alpha_j - d), from exp(-r^1.5) = 1 - r^1.5
    # + r^3/2 - r^4.5/6 + r^6/24 - ... (r^6 is smooth: C(6) = 0; the next term is O(rho^-6) smaller)
    T = shared_transform("exp(-r**1.5)", d)
    rho = np.array([1e3, 1e5, 1e8])
    series = sum(
        c * origin_term_coefficient(a, 0, d) * rho ** (-a - d)
        for c, a in [(-1.0, 1.5), (0.5, 3.0), (-1 / 6, 4.5), (1 / 24, 6.0)]
    )
    np.testing.assert_allclose(T.mu(rho), series, rtol=1e-7)


LARGER_RHO = (20.0, 60.0)


@pytest.mark.parametrize("d", [1, 3])
def test_exponential_power_against_mpmath_larger_rho(d, stored_reference):
    T = shared_transform("exp(-r**1.5)", d)
    ref = [
        stored_reference("hankel_mpmath")(kernel="exp(-r**1.5)", d=d, rho=x, top=30, dps=20)
        for x in LARGER_RHO
    ]
    np.testing.assert_allclose(T.mu(np.array(LARGER_RHO)), ref, rtol=1e-7)


# ---------------------------------------------------------------------------------------------
# stored references: python tests/reference/make_references.py (name: (function, digits, cases))
# ---------------------------------------------------------------------------------------------
HANKEL_KERNELS = {
    "ntk_relu_sphere": ntk_mp,
    "arccos0_sphere": arccos0_mp,
    "arccos1_sphere": arccos1_mp,
    "exp(-r**1.5)": lambda r: mp.exp(-(r**1.5)),
}


def mu_mpmath_named(kernel, d, rho, top, dps):
    """(2 pi)^(-d/2) int_0^top k(r) r^(d-1) Lambda_nu(rho r) dr, nu = d/2 - 1, for the kernel k written in
    mpmath under its name in HANKEL_KERNELS: mpmath tanh-sinh quadrature at dps digits on panels shorter
    than 3/rho (so that the square-root edge singularities at r = top are integrated accurately)."""
    return mu_mpmath_mp(HANKEL_KERNELS[kernel], d, rho, top, dps)


REFERENCE_SETS = {
    "hankel_mpmath": (
        mu_mpmath_named,
        20,
        [
            {"kernel": name, "d": d, "rho": x, "top": 2, "dps": 20}
            for name, d in LARGE_RHO_PARAMS
            for x in LARGE_RHO
        ]
        + [
            {"kernel": "exp(-r**1.5)", "d": d, "rho": x, "top": 30, "dps": 20}
            for d in (1, 3)
            for x in LARGER_RHO
        ],
    ),
    "hankel_sphere_mpmath": (
        mu_mpmath_named,
        20,
        [
            {"kernel": name, "d": d, "rho": x, "top": 2, "dps": 20}
            for name in sorted(SPHERE)
            for d in (1, 3)
            for x in SPHERE_RHO
        ],
    ),
}


def test_interpolant_matches_direct_evaluation():
    T = shared_transform("ntk_relu_sphere", 3)
    rho = np.geomspace(1e-3, 1e4, 97)
    direct = T.mu.direct(rho)
    np.testing.assert_allclose(T.mu(rho), direct, rtol=T.rel_error, atol=T.abs_error * T.mu.max_abs)


def test_vectorised_shapes():
    T = shared_transform("spherical_polynomial(2, 2)", 3)
    x = np.array([[0.0, 1.0], [10.0, 1e6]])
    assert T.mu(x).shape == (2, 2)
    assert T.mu(x)[0, 1] == T.mu(np.array([1.0]))[0]


def test_evaluation_validates_rho_and_pickles():
    import pickle

    T = shared_transform("spherical_polynomial(2, 2)", 3)
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="rho must be >= 0"):
            T.mu(np.array([0.5, bad]))
    x = np.array([0.0, 0.5, 30.0, 1e9, np.inf])
    mu2 = pickle.loads(pickle.dumps(T.mu))
    np.testing.assert_array_equal(mu2(x), T.mu(x))
    assert T.mu(np.array([np.inf]))[0] == 0.0


def test_line_tables_lift_the_absolute_floor_where_their_error_exceeds_the_relative_one():
    # the stated error is max(rel |mu|, abs max|mu|): a line table's error (10 err env) that exceeds
    # rel |mu| (far tail, mu far below its rounding envelope) must lie under the absolute floor
    tr = numeric_transform(K.RadialKernel("exp(-r**2)/(1+r**2)"), 10)
    h = tr.mu
    assert h.has_line and h._line_panels
    assert h._line_floor(1.0) == 0.0  # every panel within 1x |mu|: nothing to lift
    worst = max(
        float(np.max(10.0 * err * np.exp(P(np.linspace(a, b, 17))))) for a, b, _, P, _, err in h._line_panels
    )
    assert h._line_floor(0.0) == pytest.approx(worst / h.max_abs)  # any error beyond rel = 0 counts
    assert tr.abs_error >= h._line_floor(tr.rel_error)
