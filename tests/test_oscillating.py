"""Oscillation under Gaussian and rational-quadratic envelopes (transforms/_oscillating.py).

References, independent of the code under test:

* Gaussian envelopes, d <= 3: the Hankel integral mu(rho) = (2 pi)^(-d/2) int k(r) r^(d-1)
  Lambda_(d/2-1)(rho r) dr by mpmath.quad at 30 digits;
* Gaussian envelopes, any d: the power series in rho^2 of the moments,
  mu(rho) = (2 pi)^(-d/2) 2^(-nu) sum_m (-1)^m (rho/2)^(2m) M_(2m+d-1) / (m! Gamma(m+nu+1)), with the
  moments M_j = int_0^inf r^j exp(-a r^2) osc(b r) dr in closed form (1F1, Gradshteyn-Ryzhik 3.952 and
  6.631), summed in mpmath at 150 digits (the series cancels like exp(rho^2/(4a)));
* rational-quadratic envelopes: mpmath.quadosc of the Hankel integral (d = 1, 3), and the dimension
  walk mu_(d+2) = -(1/(2 pi rho)) d mu_d/d rho by mpmath.diff of the exact 1-D shift formula
  (F_1 from mpmath.besselk) for higher odd d.
"""

import math
import time
import warnings

import mpmath
import numpy as np
import pytest
import sympy

import spectralkit as sk
from spectralkit.exceptions import TransformError
from spectralkit.kernels import RadialKernel
from spectralkit.sampling import radial_sampler
from spectralkit.transforms import transform_atom
from spectralkit.transforms._oscillating import (
    _accurate,
    _contour_max_d,
    _KinkTable,
    _LaguerreSeries,
    _RQContour,
    _RQHalfStep,
    _RQWalk,
)


def _kummer(a, b, z):
    """1F1(a; b; z) = e^z 1F1(b - a; b; -z) (z < 0: a positive series, exact zeros when b - a is a
    non-positive integer)."""
    a2, y = b - a, -z
    total, term, k = mpmath.mpf(0), mpmath.mpf(1), 0
    while term != 0 and (k < 5 or abs(term) > mpmath.eps * abs(total)):
        total += term
        term = term * (a2 + k) / (b + k) * y / (k + 1)
        k += 1
    return mpmath.exp(z) * total


def _mp_gauss_moment(kind, a, b, j):
    """int_0^inf r^j exp(-a r^2) osc(b r) dr in closed form (mpmath, current precision)."""
    mu = mpmath.mpf(j + 1)
    if kind == "cos":
        return (
            mpmath.gamma(mu / 2) / (2 * a ** (mu / 2)) * _kummer(mu / 2, mpmath.mpf(1) / 2, -(b**2) / (4 * a))
        )
    if kind == "sin/r":  # r^(j-1) sin(b r)
        mu = mpmath.mpf(j)
        return (
            b
            * mpmath.gamma((mu + 1) / 2)
            / (2 * a ** ((mu + 1) / 2))
            * _kummer((mu + 1) / 2, mpmath.mpf(3) / 2, -(b**2) / (4 * a))
        )
    if kind == "j0":
        return mpmath.gamma(mu / 2) / (2 * a ** (mu / 2)) * _kummer(mu / 2, 1, -(b**2) / (4 * a))
    raise ValueError(kind)


_MOMENTS = {}


def _moments(pieces, a, d, dps, n):
    """[M_(2m+d-1) for m < n] of sum_i c_i r^(e_i) osc_i(b_i r) exp(-a r^2) (cached: rho-independent)."""
    got = _MOMENTS.setdefault((pieces, a, d, dps), [])
    with mpmath.workdps(dps):
        am = mpmath.mpf(a)
        for m in range(len(got), n):
            j = 2 * m + d - 1
            got.append(
                sum(
                    mpmath.mpf(c) * _mp_gauss_moment(kind, am, mpmath.mpf(b), j + e)
                    for c, e, kind, b in pieces
                )
            )
    return got


def _moment_series(pieces, a, d, rho, dps=None):
    """mu(rho) for sum_i c_i r^(e_i) osc_i(b_i r) exp(-a r^2) (pieces (c, e, kind, b)), by the moment
    series in mpmath; the precision is raised until 30 digits survive the cancellation (measured as
    max |term| / |sum|)."""
    pieces = tuple(tuple(p) for p in pieces)
    if dps is None:
        dps = 50 * math.ceil((40 + rho * rho / (4 * a) / math.log(10)) / 50)
    while True:
        with mpmath.workdps(dps):
            nu = mpmath.mpf(d) / 2 - 1
            x = (mpmath.mpf(rho) / 2) ** 2
            total = biggest = mpmath.mpf(0)
            m = 0
            moms = _moments(pieces, a, d, dps, 64)
            while True:
                if m >= len(moms):
                    moms = _moments(pieces, a, d, dps, 2 * len(moms))
                term = (-1) ** m * x**m * moms[m] / (mpmath.factorial(m) * mpmath.gamma(m + nu + 1))
                total += term
                biggest = max(biggest, abs(term))
                if x == 0 or (m > 10 and m > 2 * x and abs(term) <= mpmath.mpf(10) ** (-dps + 10) * biggest):
                    break
                m += 1
            if total != 0 and biggest / abs(total) < mpmath.mpf(10) ** (dps - 30):
                return (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2) * 2 ** (-nu) * total
        if dps > 400:
            return mpmath.mpf(0)  # an exact zero (e.g. rho = 0 in d = 3 for exp(-r^2/2) cos(r))
        dps += 50


def _hankel_quad(k_mp, d, rho, dps=30):
    with mpmath.workdps(dps):
        nu = mpmath.mpf(d) / 2 - 1
        rho = mpmath.mpf(rho)

        def lam(x):
            return mpmath.besselj(nu, x) / x**nu if x != 0 else 1 / (2**nu * mpmath.gamma(nu + 1))

        f = lambda r: k_mp(r) * r ** (d - 1) * lam(rho * r)
        return (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2) * mpmath.quad(f, [0, 2, 5, 10, 20, mpmath.inf])


def _check_against(tr, rho, ref):
    """|mu - ref| within the stated error: relative where |ref| is above 1e-9 of the local scale."""
    val = tr.mu(np.asarray(rho, dtype=float))
    ref = np.asarray(ref, dtype=float)
    scale = np.max(np.abs(ref))
    for v, r in zip(val, ref):
        if abs(r) > 1e-9 * scale:
            assert abs(v - r) <= max(tr.rel_error, 1e-13) * abs(r) * 4, (v, r, abs(v / r - 1))
        else:
            assert abs(v - r) <= 1e-12 * scale


GAUSS_CASES = [
    # (formula, moment pieces (c, extra power, kind, b), a, mpmath kernel)
    ("exp(-r**2/2)*cos(r)", [(1, 0, "cos", 1)], 0.5, lambda r: mpmath.exp(-(r**2) / 2) * mpmath.cos(r)),
    (
        "exp(-r**2)*sin(3*r)/r",
        [(1, 0, "sin/r", 3)],
        1.0,
        lambda r: mpmath.exp(-(r**2)) * (mpmath.sin(3 * r) / r if r else 3),
    ),
    (
        "(1 + r**2)*exp(-r**2/2)*besselj(0, 2*r)",
        [(1, 0, "j0", 2), (1, 2, "j0", 2)],
        0.5,
        lambda r: (1 + r**2) * mpmath.exp(-(r**2) / 2) * mpmath.besselj(0, 2 * r),
    ),
]


LOW_D_RHO = (0.0, 0.3, 1.0, 1.7, 2.5, 4.0, 6.0)
#: d = 256 for one case (each case is checked in d = 64; a d = 256 case costs 11-17 s)
HIGH_D_CASES = [(c, d) for c in range(len(GAUSS_CASES)) for d in (3, 16, 64)] + [(0, 256)]


def _high_d_rho(case, dim):
    width = math.sqrt(2 * GAUSS_CASES[case][2] * dim)
    return [0.0, 0.1, 0.5 * width, width, 1.3 * width + 1] if dim < 256 else [0.1, width, 1.2 * width]


def gauss_hankel_reference(formula, d, rho):
    """The Hankel integral (2 pi)^(-d/2) int_0^inf k(r) r^(d-1) Lambda_(d/2-1)(rho r) dr of the Gaussian
    oscillation case ``formula`` (its mpmath kernel in GAUSS_CASES) by mpmath.quad at 30 digits on
    [0, 2, 5, 10, 20, inf]."""
    k_mp = next(c[3] for c in GAUSS_CASES if c[0] == formula)
    return _hankel_quad(k_mp, d, rho)


def gauss_moment_reference(formula, d, rho):
    """mu of the Gaussian oscillation case ``formula`` by the moment series in mpmath (module
    docstring), 30 digits after the measured cancellation."""
    _, pieces, a, _ = next(c for c in GAUSS_CASES if c[0] == formula)
    return _moment_series(pieces, a, d, rho)


@pytest.mark.parametrize("case", range(len(GAUSS_CASES)))
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_gaussian_oscillation_low_d_against_hankel_quadrature(case, dim, stored_reference):
    formula = GAUSS_CASES[case][0]
    tr = transform_atom(RadialKernel.from_string(formula), dim)
    assert tr.method == "closed-form:gaussian-oscillation"
    refs = stored_reference("oscillating_gauss_hankel")
    _check_against(tr, LOW_D_RHO, [refs(formula=formula, d=dim, rho=r) for r in LOW_D_RHO])


@pytest.mark.parametrize("case,dim", HIGH_D_CASES)
def test_gaussian_oscillation_high_d_against_moment_series(case, dim, stored_reference):
    formula = GAUSS_CASES[case][0]
    tr = transform_atom(RadialKernel.from_string(formula), dim)
    rho = _high_d_rho(case, dim)
    refs = stored_reference("oscillating_gauss_moments")
    ref = [mpmath.mpf(refs.text(formula=formula, d=dim, rho=r)) for r in rho]
    # compare in logs where the values are beyond float range of each other (high d)
    la, sg = tr.log_abs_mu(np.array(rho))
    for l_, s_, r in zip(la, sg, ref):
        if r == 0:
            continue
        assert s_ == (1.0 if r > 0 else -1.0)
        assert abs(l_ - float(mpmath.log(abs(r)))) <= 4 * tr.rel_error + 1e-13, (l_, r)


@pytest.mark.parametrize(
    "formula, k_mp, dim",
    [
        ("besselj(1, 2*r)/r*exp(-r**2)", lambda r: mpmath.besselj(1, 2 * r) / r * mpmath.exp(-(r**2)), 3),
        (
            "besselj(1.5, r)/r**1.5*exp(-r**2/2)",
            lambda r: mpmath.besselj(1.5, r) / r**1.5 * mpmath.exp(-(r**2) / 2),
            2,
        ),
        (
            "r**2*besselj(2, 3*r)*exp(-r**2)",
            lambda r: r**2 * mpmath.besselj(2, 3 * r) * mpmath.exp(-(r**2)),
            1,
        ),
    ],
)
def test_gaussian_envelope_takes_bessel_factors_of_any_order(formula, k_mp, dim):
    """r^m J_nu(b r) exp(-a r^2) with m + nu even and >= 0 (J_nu(x) = x^nu times an even entire
    function): the Laguerre series of the Gaussian route, against the Hankel integral in mpmath (only
    J0 was taken; J_1(2r)/r exp(-r^2) in d = 64 took 24 s by quadrature)."""
    tr = transform_atom(RadialKernel.from_string(formula), dim)
    assert tr.method == "closed-form:gaussian-oscillation"
    rho = [0.0, 0.5, 1.5, 3.0, 5.0]
    _check_against(tr, rho, [_hankel_quad(k_mp, dim, r) for r in rho])


def test_products_of_trigonometric_factors_under_a_gaussian_are_sums_of_frequencies():
    """cos(r) cos(2r) e^(-r^2) = (cos r + cos 3r) e^(-r^2)/2 (product to sum before matching): the
    Laguerre series, against the Hankel integral in d = 3 and the masses of the quadrature route in
    d = 16 (m+ = 1.98349621391 +- 4.5e-10, m- = 0.983496213915 +- 2.7e-10; stored: 21 s)."""
    formula = "exp(-r**2)*cos(r)*cos(2*r)"
    tr = transform_atom(RadialKernel.from_string(formula), 3)
    assert tr.method == "closed-form:gaussian-oscillation"
    rho = [0.0, 0.5, 1.5, 3.0, 5.0]
    k_mp = lambda r: mpmath.exp(-(r**2)) * mpmath.cos(r) * mpmath.cos(2 * r)
    _check_against(tr, rho, [_hankel_quad(k_mp, 3, r) for r in rho])
    rep = sk.check_rkks(RadialKernel.from_string(formula), 16)
    assert rep.method == "closed-form:gaussian-oscillation"
    # within both stated errors, plus half a unit in the last printed digit of the stored value
    assert abs(rep.mass_plus.value - 1.98349621391) <= rep.mass_plus.error + 4.5e-10 + 5e-12
    assert abs(rep.mass_minus.value - 0.983496213915) <= rep.mass_minus.error + 2.7e-10 + 5e-13


#: products of oscillating factors under a Gaussian: (formula, mpmath kernel, k(0))
GAUSS_PRODUCTS = [
    (
        "exp(-r**2/2)*besselj(0, r)*cos(r)",
        lambda r: mpmath.exp(-(r**2) / 2) * mpmath.besselj(0, r) * mpmath.cos(r),
        1.0,
    ),
    ("exp(-r**2)*besselj(0, r)**2", lambda r: mpmath.exp(-(r**2)) * mpmath.besselj(0, r) ** 2, 1.0),
    (
        "exp(-r**2)*cos(r)*besselj(1, 2*r)/r",
        lambda r: mpmath.exp(-(r**2)) * mpmath.cos(r) * (mpmath.besselj(1, 2 * r) / r if r else 1),
        1.0,
    ),
    (
        "exp(-r**2)*sin(r)*besselj(1, r)",
        lambda r: mpmath.exp(-(r**2)) * mpmath.sin(r) * mpmath.besselj(1, r),
        0.0,
    ),
    # two sines: as a sum of frequencies (cos r - cos 3r)/(2 r^2) its terms are not entire, as a product
    # they are (r^-2 r r)
    (
        "exp(-r**2)*sin(r)*sin(2*r)/r**2",
        lambda r: mpmath.exp(-(r**2)) * (mpmath.sin(r) * mpmath.sin(2 * r) / r**2 if r else 2),
        2.0,
    ),
    # hyperbolic factors (series without alternating signs); cos(r) cosh(r) = sum (-4)^k r^(4k)/(4k)!
    # has every other coefficient 0 (the series' truncation must not stop at a zero)
    ("exp(-r**2)*cosh(r)", lambda r: mpmath.exp(-(r**2)) * mpmath.cosh(r), 1.0),
    ("exp(-r**2)*besseli(0, r)", lambda r: mpmath.exp(-(r**2)) * mpmath.besseli(0, r), 1.0),
    (
        "exp(-r**2/2)*cosh(r)*cos(r)",
        lambda r: mpmath.exp(-(r**2) / 2) * mpmath.cosh(r) * mpmath.cos(r),
        1.0,
    ),
    (
        "exp(-r**2)*sin(r)*sinh(r)/r**2",
        lambda r: mpmath.exp(-(r**2)) * (mpmath.sin(r) * mpmath.sinh(r) / r**2 if r else 1),
        1.0,
    ),
]
PRODUCT_RHO = (0.0, 1.0, 3.0, 6.0)
#: the product cases checked by Bochner's identity in d = 256 (1-1.5 s each) rather than live in d = 3:
#: the two named as refused there before (J0 cos, J0^2), a sine with k(0) = 0 (the masses cancel) and a
#: hyperbolic series with zero coefficients (cosh cos); the other five are checked in d = 3
PRODUCTS_256 = (0, 1, 3, 7)


def gauss_product_hankel_reference(formula, d, rho):
    """The Hankel integral of the product case ``formula`` (GAUSS_PRODUCTS) by mpmath.quad at 30 + d
    digits (the integrand's cancellation grows with d; 60 + d digits agree to all 30 stored)."""
    k_mp = next(c[1] for c in GAUSS_PRODUCTS if c[0] == formula)
    return _hankel_quad(k_mp, d, rho, dps=30 + d)


@pytest.mark.parametrize("case", range(len(GAUSS_PRODUCTS)))
def test_products_of_oscillating_factors_under_a_gaussian(case, stored_reference):
    """exp(-a r^2) r^m prod_i osc_i(b_i r) with Bessel factors among the oscillations (J0(r) cos(r),
    J0(r)^2, ...: refused in d = 256 before, Hankel quadrature below): the Laguerre series of the
    factors' product, against the Hankel integral in d = 16, 64 (stored) for every case, and either
    Bochner's identity m+ - m- = k(0) in d = 256 (the four cases of PRODUCTS_256) or the Hankel
    integral in d = 3 (the other five; all references stored): each case in three dimensions, d = 3 in five cases and
    d = 256 in four, one per feature (the named refusals, k(0) = 0, a hyperbolic series)."""
    formula, _, k0 = GAUSS_PRODUCTS[case]
    kernel = RadialKernel.from_string(formula)
    refs = stored_reference("oscillating_gauss_products")
    for d in (16, 64) if case in PRODUCTS_256 else (3, 16, 64):
        tr = transform_atom(kernel, d)
        assert tr.method == "closed-form:gaussian-oscillation"
        _check_against(tr, PRODUCT_RHO, [refs(formula=formula, d=d, rho=r) for r in PRODUCT_RHO])
    if case in PRODUCTS_256:
        rep = sk.check_rkks(kernel, 256)
        assert rep.method == "closed-form:gaussian-oscillation"
        assert (
            abs(rep.mass_plus.value - rep.mass_minus.value - k0) <= rep.mass_plus.error + rep.mass_minus.error
        )


def test_gaussian_bessel_masses_in_d64_match_the_quadrature_route():
    """J_1(2r)/r exp(-r^2) in d = 64: the masses of the numeric Hankel route (steepest descent,
    m+ = 1.17258417917 +- 2.8e-10, m- = 0.17258417917 +- 5.2e-11; stored: 24 s)."""
    rep = sk.check_rkks(RadialKernel.from_string("besselj(1, 2*r)/r*exp(-r**2)"), 64)
    assert rep.method == "closed-form:gaussian-oscillation"
    # within both stated errors, plus half a unit in the last printed digit of the stored value
    assert abs(rep.mass_plus.value - 1.17258417917) <= rep.mass_plus.error + 2.8e-10 + 5e-12
    assert abs(rep.mass_minus.value - 0.17258417917) <= rep.mass_minus.error + 5.2e-11 + 5e-12


def gauss_cos_d64_mass(part):
    """The mass m+ (part "plus") or m- ("minus") of exp(-r^2/2) cos(r) in d = 64: S_63 int (mu)_+- rho^63
    over the lobes of the moment series (110 digits), sign changes located by bisection on its sign on
    a 49-point grid of [1e-3, 16], each lobe by 40-point Gauss-Legendre in float64."""
    plus, minus = _gauss_cos_d64_masses()
    return mpmath.mpf(plus if part == "plus" else minus)


def _gauss_cos_d64_masses():
    pieces, a, d = [(1, 0, "cos", 1)], 0.5, 64
    log_s = math.log(2) + (d / 2) * math.log(math.pi) - math.lgamma(d / 2)
    ref = lambda r: _moment_series(pieces, a, d, r, dps=110)
    grid = np.linspace(1e-3, 16.0, 49)
    vals = np.array([ref(r) for r in grid])
    edges = [0.0]
    for i in np.nonzero(np.sign(vals[1:]) != np.sign(vals[:-1]))[0]:
        lo, hi = grid[i], grid[i + 1]
        for _ in range(30):  # bisection on the reference's sign
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.sign(ref(mid)) == np.sign(vals[i]) else (lo, mid)
        edges.append(0.5 * (lo + hi))
    edges.append(16.0)
    plus = minus = 0.0
    x, w = np.polynomial.legendre.leggauss(40)  # each lobe is smooth: 40 Gauss points
    for lo, hi in zip(edges[:-1], edges[1:]):
        nodes = 0.5 * (hi - lo) * x + 0.5 * (hi + lo)
        v = 0.5 * (hi - lo) * sum(wi * ref(float(r)) * float(r) ** (d - 1) for r, wi in zip(nodes, w))
        v *= math.exp(log_s)
        plus, minus = (plus + v, minus) if v > 0 else (plus, minus - v)
    return plus, minus


def test_gaussian_cos_d64_masses_and_time(stored_reference):
    """The refusal of issue 15 (exp(-r^2/2) cos(r) in d = 64): now answered; Bochner holds within the
    stated errors and the masses agree with an independent integral of the moment series."""
    k = RadialKernel.from_string("exp(-r**2/2)*cos(r)")
    t0 = time.process_time()
    rep = sk.check_rkks(k, 64)
    assert time.process_time() - t0 < 60  # generous guard (target: seconds)
    assert rep.verdict in ("PD", "RKKS")
    mp_, mm_ = rep.mass_plus, rep.mass_minus
    assert abs(mp_.value - mm_.value - 1.0) <= mp_.error + mm_.error + 1e-12
    masses = stored_reference("oscillating_gauss_d64_masses")
    plus, minus = masses(part="plus"), masses(part="minus")
    assert abs(mp_.value - plus) <= max(1e-4 * plus, mp_.error)
    assert abs(mm_.value - minus) <= max(1e-4 * max(minus, 1e-12), mm_.error, 1e-10)


def test_gaussian_oscillation_pd_case_masses():
    rep = sk.check_rkks(RadialKernel.from_string("exp(-r**2/2)*cos(r)"), 1)
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - 1.0) <= max(1e-12, rep.mass_plus.error)


def test_the_monomial_form_builds_one_table_for_growing_cuts():
    """The monomial form's coefficient table (O(N^2) at 120 digits) is built for the longest cut asked
    for and serves the shorter ones (28 tables of 0.4 s each for exp(-r^2/4) cos(4 r) in d = 128
    before, one per 32-term step now); the longer sums agree with the double-double Laguerre sum."""
    series = _LaguerreSeries(sympy.Integer(1), (((("cos", 2.0),), 0, 1.0),), 256)
    xs = (120.0, 0.01, 1.0, 5.0, 20.0, 60.0)  # the longest cut first: one table serves them all
    for x in xs:
        la, sg, ok = series._monomial(np.array([x]))
        ld, sd, okd, _ = series._dd(np.array([x]))
        assert ok[0] and okd[0] and sg[0] == sd[0] and abs(la[0] - ld[0]) <= 1e-12, x
    assert len(series._mono_cache) == 1


def test_the_fixed_point_laguerre_sum_against_mpmath_where_digits_cancel():
    """exp(-r^2/4) cos(4 r) in d = 128: the Laguerre series S(x) = sum_n q_n L_n^nu(x) cancels
    about 40 digits where the measure lives. The exact-integer sum (its bounds from the compiled
    loop, the integer recurrence in gmpy2) agrees with the sum at 200 digits to its 1e-13."""
    series = _LaguerreSeries(sympy.Rational(1, 4), (((("cos", 4.0),), 0, 1.0),), 128)
    xs = np.array([0.5, 20.0, 63.0, 90.0, 140.0, 260.0])
    la, sg = series._fixed(xs, np.zeros(xs.size))
    with mpmath.workdps(200):
        q = series._q_mp(200, 1200)
        nu = mpmath.mpf(63)
        for x, l_, s_ in zip(xs, la, sg):
            x = mpmath.mpf(x)
            lp, lc, total = mpmath.mpf(0), mpmath.mpf(1), q[0]
            for n in range(1, 1200):
                lp, lc = lc, ((2 * n - 1 + nu - x) * lc - (n - 1 + nu) * lp) / n
                total += q[n] * lc
            ref = s_ * mpmath.exp(l_)
            assert abs(ref / total - 1) <= 1e-13, (x, ref, total)


# ---------------------------------------------------------------------------------------------
# rational-quadratic envelopes
# ---------------------------------------------------------------------------------------------
def _rq_f1(alpha, s, t):
    """1-D transform of (1 + r^2/s)^-alpha at t (mpmath)."""
    m = alpha - mpmath.mpf(1) / 2
    t = abs(t)
    c1 = 2 * (s / 2) ** alpha / (mpmath.gamma(alpha) * mpmath.sqrt(2 * mpmath.pi))
    return c1 * s ** (-m / 2) * t**m * mpmath.besselk(m, mpmath.sqrt(s) * t)


def _walk_reference(alpha, s, b, d, rho, dps=40):
    """mu_d of cos(b r) (1 + r^2/s)^-alpha, d odd, by the dimension walk with mpmath.diff."""
    with mpmath.workdps(dps):
        alpha, s, b = mpmath.mpf(alpha), mpmath.mpf(s), mpmath.mpf(b)

        def mu(n, x):
            if n == 1:
                return (_rq_f1(alpha, s, x - b) + _rq_f1(alpha, s, x + b)) / 2
            return -mpmath.diff(lambda y: mu(n - 2, y), x) / (2 * mpmath.pi * x)

        return float(mu(d, mpmath.mpf(rho)))


def _quadosc_reference(kind, alpha, s, b, d, rho):
    """mu of cos(b r) g or sin(b r)/r g in d = 1, 3 (Lambda_(d/2-1) elementary): the products of
    trigonometric functions split into single frequencies |rho -+ b|, each integrated by quadosc."""
    with mpmath.workdps(30):
        rho, b, s, alpha = (mpmath.mpf(v) for v in (rho, b, s, alpha))
        g = lambda r: (1 + r**2 / s) ** (-alpha)

        def osc_int(power, trig, omega):
            f = lambda r: g(r) * r**power * trig(omega * r)
            if omega == 0:
                return mpmath.quad(f, [0, mpmath.inf])
            return mpmath.quadosc(f, [0, mpmath.inf], omega=abs(omega))

        c, sn = mpmath.cos, mpmath.sin
        if rho == 0:  # Lambda(0) = sqrt(2/pi) / Gamma(d/2 + 1/2) * ... : use the d-dim moment directly
            nu = mpmath.mpf(d) / 2 - 1
            lam0 = 1 / (2**nu * mpmath.gamma(nu + 1))
            val = osc_int(d - 1, c, b) if kind == "cos" else osc_int(d - 2, sn, b)
            return (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2) * lam0 * val
        k = mpmath.sqrt(2 / mpmath.pi)
        if d == 1 and kind == "cos":
            val = k * (osc_int(0, c, rho - b) + osc_int(0, c, rho + b)) / 2
        elif d == 3 and kind == "cos":
            val = k * (osc_int(1, sn, rho + b) + osc_int(1, sn, rho - b)) / (2 * rho)
        elif d == 1 and kind == "sin":  # sin(b r)/r cos(rho r) = (sin((b+rho) r) + sin((b-rho) r))/(2 r)
            val = k * (osc_int(-1, sn, b + rho) + osc_int(-1, sn, b - rho)) / 2
        elif d == 3 and kind == "sin":
            val = k * (osc_int(0, c, rho - b) - osc_int(0, c, rho + b)) / (2 * rho)
        else:
            raise ValueError((kind, d))
        return (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2) * val


RQ_LOW = [
    ("cos(r)/(1 + r**2)", "cos", 1.0, 1.0, 1.0, 1),
    ("cos(2*r)/(1 + r**2/3)**2", "cos", 2.0, 3.0, 2.0, 1),
    ("cos(r)/(1 + r**2)**2", "cos", 2.0, 1.0, 1.0, 3),
    ("sin(2*r)/(r*(1 + r**2))", "sin", 1.0, 1.0, 2.0, 3),
    ("cos(r)/(1 + r**2)**1.5", "cos", 1.5, 1.0, 1.0, 3),  # a jump at rho = b (gamma = 0)
]


RQ_RHO = (0.0, 0.2, 0.7, 0.97, 1.03, 1.6, 3.0)  # times b


def rq_quadosc_reference(formula, rho):
    """mu of the rational-quadratic case ``formula`` (RQ_LOW) at rho by the product-to-sum split and
    mpmath.quadosc at 30 digits (_quadosc_reference)."""
    _, kind, alpha, s, b, dim = next(c for c in RQ_LOW if c[0] == formula)
    return _quadosc_reference(kind, alpha, s, b, dim, rho)


@pytest.mark.parametrize("formula,kind,alpha,s,b,dim", RQ_LOW)
def test_rq_oscillation_against_quadosc(formula, kind, alpha, s, b, dim, stored_reference):
    tr = transform_atom(RadialKernel.from_string(formula), dim)
    assert tr.method == "closed-form:rq-oscillation"
    assert tr.singular_points == (b,)
    rho = [t * b for t in RQ_RHO]
    refs = stored_reference("oscillating_rq_quadosc")
    _check_against(tr, rho, [refs(formula=formula, rho=r) for r in rho])


@pytest.mark.parametrize("dim,alpha", [(5, 2.5), (9, 3.0)])
def test_rq_oscillation_higher_odd_d_against_the_walk(dim, alpha):
    tr = transform_atom(RadialKernel.from_string(f"cos(r)/(1 + r**2)**{alpha}"), dim)
    rho = [0.05, 0.6, 0.9, 1.1, 2.0, 4.0]
    _check_against(tr, rho, [_walk_reference(alpha, 1.0, 1.0, dim, r) for r in rho])


@pytest.mark.parametrize("dim,alpha", [(3, 0.75), (5, 1.75)])
def test_rq_oscillation_odd_d_infinite_at_the_kink_against_the_walk(dim, alpha):
    """p = 2 alpha between (d-1)/2 and (d+1)/2: mu ~ |rho - 1|^(p - (d+1)/2) is infinite at the
    kink, where the walk's terms cancel (this used to evaluate mpmath at every point and ran for
    minutes); values near the kink against the mpmath walk, masses against k(0)."""
    tr = transform_atom(RadialKernel.from_string(f"cos(r)/(1 + r**2)**{alpha}"), dim)
    rho = [0.6, 0.9, 1 - 1e-3, 1 - 1e-6, 1 + 1e-6, 1 + 1e-3, 1.1, 2.0]
    _check_against(tr, rho, [_walk_reference(alpha, 1.0, 1.0, dim, r, dps=60) for r in rho])
    t0 = time.process_time()
    rep = sk.check_rkks(RadialKernel.from_string(f"cos(r)/(1 + r**2)**{alpha}"), dim)
    assert time.process_time() - t0 < 30  # generous (measured 0.5-2 s)
    assert rep.verdict == "RKKS"
    diff = rep.mass_plus.value - rep.mass_minus.value - 1.0
    assert abs(diff) <= rep.mass_plus.error + rep.mass_minus.error + 1e-12


def test_rq_oscillation_even_d_is_fast():
    """cos(r)/(1 + r^2)^2.5 in d = 6: the contour on the imaginary axis (0.7 s CPU; the half step was
    10-18 s while its odd neighbour was summed in mpmath at every point)."""
    t0 = time.process_time()
    rep = sk.check_rkks(RadialKernel.from_string("cos(r)/(1 + r**2)**2.5"), 6)
    assert time.process_time() - t0 < 6.0
    assert rep.verdict == "RKKS"
    diff = rep.mass_plus.value - rep.mass_minus.value - 1.0
    assert abs(diff) <= rep.mass_plus.error + rep.mass_minus.error + 1e-12


def test_rq_oscillation_sign_change_at_a_continuous_kink():
    """cos(2 r)/(1 + r^2)^2.7 in d = 9: mu is continuous at rho = 2 with an infinite slope and
    changes sign there (no answer in minutes before); a node rounded onto the kink must not get an
    infinite density (that gave PD with m+ = inf)."""
    rep = sk.check_rkks(RadialKernel.from_string("cos(2*r)/(1 + r**2)**2.7"), 9)
    assert rep.verdict == "RKKS"
    assert np.isfinite(rep.mass_plus.value) and rep.mass_minus.value > 0.1
    diff = rep.mass_plus.value - rep.mass_minus.value - 1.0
    assert abs(diff) <= rep.mass_plus.error + rep.mass_minus.error + 1e-12


def test_rq_oscillation_next_to_a_root_of_mu_uses_the_stated_absolute_floor(monkeypatch):
    """cos(r)/(1 + r^2)^1.5 in d = 3 changes sign at rho = 0.8983: next to that root every form of
    the walk cancels, and the sampler's table asked mpmath for 1,195 values there (16 s of its fit).
    The transform now states an absolute floor of 1e-13 max|mu| and takes the float sum where its
    bound is under it: few mpmath values, and the values next to the root still within the stated
    errors of the mpmath-only walk (floor 0)."""
    tr = transform_atom(RadialKernel.from_string("cos(r)/(1 + r**2)**1.5"), 3)
    assert tr.abs_error == 1e-13
    calls = []
    original = _RQWalk._mp_point

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(_RQWalk, "_mp_point", counting)
    rho = RQ_D3_ZERO + np.linspace(-3e-4, 3e-4, 41)
    fast = tr.mu(rho)
    assert len(calls) <= 2  # only the points closest to the root
    exact_walk = _RQWalk(1.0, "cos", 1.0, 1.5, 1.0, 3)  # floor 0: mpmath wherever digits cancel
    la, sg = exact_walk.log_abs_and_sign(rho)
    exact = sg * np.exp(la)
    assert len(calls) > 10  # the floor-0 walk needs mpmath here (else the check below is vacuous)
    peak = float(np.max(np.abs(tr.mu(np.linspace(0.01, 5.0, 400)))))
    assert np.all(np.abs(fast - exact) <= tr.rel_error * np.abs(exact) + tr.abs_error * peak)
    calls.clear()
    sampler = radial_sampler(sk.SpectralMeasure(RadialKernel.from_string("cos(r)/(1 + r**2)**1.5"), 3), +1)
    assert sampler.u_error <= sampler.tol
    assert len(calls) < 100  # 1,195 before


@pytest.mark.parametrize(
    "formula, dim, refs",
    [
        # mu by mpmath (25 digits, Gauss-Legendre on 0.05-wide pieces to r = 20, 0.5-wide to 80)
        (
            "cos(2*r)/(1 + r**2)**40",
            64,
            {0.05: -6.741169977894842e-79, 0.7: -6.69047863316825e-79, 2.5: -6.074394929565245e-79},
        ),
        (
            "cos(r)/(1 + r**2)**30",
            16,
            {0.05: 7.587394480269933e-21, 0.7: 7.545202335149649e-21, 2.5: 7.06483122730033e-21},
        ),
    ],
)
def test_rq_oscillation_under_a_high_power_in_even_d(formula, dim, refs):
    """Finite measures in high d need alpha > (d - 1)/4. Below the kink the imaginary axis passes g's
    pole of order alpha, where its pieces cancel by 1e10 (the table stated 1e-3 and the kernel was
    refused); the real segment alone, its tail beyond T bounded, answers there."""
    rep = sk.check_rkks(formula, dim)
    assert rep.verdict in ("PD", "RKKS")
    assert abs(rep.mass_plus.value - rep.mass_minus.value - 1.0) <= rep.mass_plus.error + rep.mass_minus.error
    m = sk.SpectralMeasure(formula, dim=dim)
    ((_, transform),) = m.transforms
    rho = np.array(list(refs))
    sphere = 2 * math.pi ** (dim / 2) / math.gamma(dim / 2)
    mu = m.radial_density(rho) / (sphere * rho ** (dim - 1))
    assert np.max(np.abs(mu / np.array(list(refs.values())) - 1)) <= transform.rel_error


def test_rq_oscillation_passes_a_pole_below_the_kink_on_a_wide_arc():
    """cos(3r)/(1 + r^2/10)^20 in d = 64 (|k| r^63 is not integrable: the contour must answer).
    Below the kink the imaginary axis passes g's pole of order 20 at i sqrt(10); on an arc of radius
    min(sqrt(s)/2, 1/(b - rho)) the pieces beside it were ~3e12 times the result (stated 4e-4 at
    rho = 0.5: refused). On an arc of 0.9 sqrt(s) they are not; references: the ray
    t e^(i pi/4) in mpmath at 50 digits."""
    contour = _RQContour("cos", 3.0, 20.0, 10.0, 64)
    rho = np.array([0.1, 0.5])
    val, err = contour._axis_below(rho, rho - 3.0)
    ref = np.array([-2.6245992123996634e-11, -2.6808254988040644e-11])
    assert np.all(err <= 1e-12 * np.abs(val))
    assert np.max(np.abs(val / ref - 1)) <= 1e-13
    rep = sk.check_rkks("cos(3*r)/(1 + r**2/10)**20", 64)
    assert rep.verdict == "RKKS"
    assert abs(rep.mass_plus.value - rep.mass_minus.value - 1.0) <= rep.mass_plus.error + rep.mass_minus.error


@pytest.mark.parametrize(
    "formula,dim,plus,minus",
    [
        ("cos(r)/(1 + r**2)**2", 1, 1.0, 0.0),  # mu_1 = (F(rho - 1) + F(rho + 1))/2 >= 0
        ("cos(2*r)/(1 + r**2)", 1, 1.0, 0.0),
    ],
)
def test_rq_oscillation_pd_masses(formula, dim, plus, minus):
    rep = sk.check_rkks(RadialKernel.from_string(formula), dim)
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - plus) <= max(1e-4 * plus, rep.mass_plus.error)


#: cos(r)/(1 + r^2)^1.5 in d = 3: the zero of mu below the jump at rho = 1 and the masses, from
#: _walk_reference at 30 digits (mpmath.findroot, then mpmath.quad of 4 pi rho^2 mu over
#: [0, z], [z, 1], [1, 4], [4, 30], [30, 60]; stored: 30 s)
RQ_D3_ZERO, RQ_D3_MINUS, RQ_D3_PLUS = 0.8983318255846622, 0.013552405070809646, 1.0135524050708096


def test_rq_oscillation_d3_masses_against_the_walk():
    """m+- of cos(r)/(1 + r^2)^1.5 in d = 3 (negative below a zero, a jump at rho = 1)."""
    k = RadialKernel.from_string("cos(r)/(1 + r**2)**1.5")
    rep = sk.check_rkks(k, 3)
    assert rep.verdict == "RKKS"
    # the zero: a root of a density known to rel_error, where its slope is O(mu): to ~1e-10 of rho
    assert rep.sign_changes[0] == pytest.approx(RQ_D3_ZERO, rel=1e-9)
    # the stored masses are float64 roundings of 30-digit integrals: 1e-15 of them besides the stated
    assert abs(rep.mass_plus.value - RQ_D3_PLUS) <= rep.mass_plus.error + 1e-15 * RQ_D3_PLUS
    assert abs(rep.mass_minus.value - RQ_D3_MINUS) <= rep.mass_minus.error + 1e-15 * RQ_D3_PLUS
    # the density the masses came from, on both sides of the zero, within its stated error
    tr = transform_atom(k, 3)
    for x in (0.2, 0.5, 0.95):
        assert tr.mu(np.array([x]))[0] == pytest.approx(
            _walk_reference(1.5, 1.0, 1.0, 3, x, dps=20), rel=tr.rel_error
        )


#: mu_1 at rho = (0, 0.2, 0.7, 0.97, 1.03, 1.6, 3) b from _quadosc_reference("sin", alpha, s, b, 1, rho)
#: (the product-to-sum split of sin(b r)/r cos(rho r), mpmath.quadosc at 30 digits; stored: slow)
RQ_SIN_D1 = [
    (
        "sin(2*r)/(r*(1 + r**2)**3)",
        2.0,
        [0.31391398554965755, 0.3098720671651228, 0.2670429082569481, 0.22935444262691226]
        + [0.22023633776925455, 0.13480336061503634, 0.024009884274350708],
    ),
    (  # F_1 ~ c0 + c1 |x|^(1/2) at 0
        "sin(r)/(r*(1 + r**2/2)**0.75)",
        1.0,
        [0.4069176091425454, 0.4021508376936541, 0.3400906027079216, 0.25481458188606093]
        + [0.2249584191478506, 0.0836052207767203, 0.00958086752623409],
    ),
]


@pytest.mark.parametrize("formula,b,ref", RQ_SIN_D1)
def test_rq_sin_over_r_in_d1_against_quadosc(formula, b, ref):
    """mu_1 of sin(b r)/r g = (1/2) int_(rho-b)^(rho+b) F_1: kink at rho = b, finite everywhere."""
    tr = transform_atom(RadialKernel.from_string(formula), 1)
    assert tr.method == "closed-form:rq-oscillation"
    assert tr.rel_error <= 1e-7
    _check_against(tr, [0.0, 0.2 * b, 0.7 * b, 0.97 * b, 1.03 * b, 1.6 * b, 3.0 * b], ref)


#: mu_d(rho) of even-d cases, from the Hankel integral (2 pi)^(-d/2) rho^(-nu) int g osc J_nu r^(nu+1)
#: dr by mpmath.quadosc at 25 digits with the slower frequency |rho - b| (slow, so stored). An
#: earlier split into exponentials times Re H1_nu was 3e-10 off in d = 2 (the imaginary-axis routes
#: of the contour found it)
RQ_EVEN = [
    (
        "cos(r)/(1 + r**2)**2",
        2,
        [0.3, 0.9, 1.2, 2.5],
        [0.028907908800498194288, 0.033868461853913845133, 0.03425190102722378429, 0.016852741897363200343],
    ),
    (
        "cos(r)/(1 + r**2)**3",
        4,
        [0.3, 0.8, 1.3, 2.5],
        [
            0.00020839628739523099484,
            0.00040185110851085527716,
            0.00062934130670145771287,
            0.00047298009761908594725,
        ],
    ),
    # the projection 2 int_0^inf mu_3(sqrt(rho^2 + v^2)) dv by mpmath.quad (split at the kink) of the
    # d = 3 walk, itself checked against quadosc above (the Hankel-integral split is not accurate
    # for sin: its two log-singular halves cancel)
    (
        "sin(2*r)/(r*(1 + r**2)**3)",
        2,
        [0.5, 1.5, 2.5, 4.0],
        [0.049562501580733456, 0.042189998701952745, 0.029618442172491738, 0.01297062795345823],
    ),
]


@pytest.mark.parametrize("formula,dim,rho,ref", RQ_EVEN)
def test_rq_oscillation_even_d_against_hankel_references(formula, dim, rho, ref):
    tr = transform_atom(RadialKernel.from_string(formula), dim)
    assert tr.method == "closed-form:rq-oscillation"
    assert tr.rel_error <= 1e-7
    _check_against(tr, rho, ref)


@pytest.mark.parametrize(
    "formula,dim,k0",
    [("cos(r)/(1 + r**2)**2", 2, 1.0), ("sin(2*r)/(r*(1 + r**2)**3)", 1, 2.0)],
)
def test_rq_oscillation_new_routes_masses_sum_to_k0(formula, dim, k0):
    """m+ - m- = k(0) (the total signed mass), within the stated errors."""
    rep = sk.check_rkks(RadialKernel.from_string(formula), dim)
    assert rep.verdict in ("PD", "RKKS")
    diff = rep.mass_plus.value - rep.mass_minus.value - k0
    assert abs(diff) <= rep.mass_plus.error + rep.mass_minus.error + 1e-12


#: mpmath references (40 digits, a rotated Hankel contour from 0: another contour and precision
#: than the library's) at rho = 0.5, 0.99, 1 - 1e-6 and 2 in the band (d-1)/2 < p < (d+1)/2
#: (mu infinite at the kink from one side or both). Just above the kink that reference does not
#: converge; there the two routes of the library (contour, and the projection of the
#: (d+1)-dimensional walk) are checked against each other.
RQ_BAND = [
    ("cos(r)/(1 + r**2)**1.2", 4,
     [-0.012769172936333292, -0.045830873538875591, -0.23143966924341305, 0.0023456354485190558]),
    ("cos(r)/(1 + r**2)**0.6", 2,
     [-0.054147822466208474, 0.092173596692871953, 3.5611865942136683, 0.024940636376362276]),
]  # fmt: skip


@pytest.mark.parametrize("formula,dim,ref", RQ_BAND)
def test_rq_oscillation_even_d_band_against_references(formula, dim, ref):
    """p = 2 alpha in ((d-1)/2, (d+1)/2), even d: the (d+1)-dimensional density is not locally
    integrable, so the projection holds only above the kink; the contour gives the rest."""
    k = RadialKernel.from_string(formula)
    tr = transform_atom(k, dim)
    assert tr.method == "closed-form:rq-oscillation"
    _check_against(tr, np.array([0.5, 0.99, 1 - 1e-6, 2.0]), np.array(ref))
    # at exact offsets from the kink too (what the measure layer integrates the last stretch with)
    assert np.allclose(
        tr.mu_at_offset(tr.singular_points[0], np.array([-1e-6])), ref[2], rtol=4 * tr.rel_error, atol=0
    )
    alpha = float(formula.split("**")[-1])
    contour = _RQContour("cos", 1.0, alpha, 1.0, dim)
    half = _RQHalfStep("cos", 1.0, alpha, 1.0, dim, projection=True)
    rho = np.array([1 + 1e-6, 1 + 1e-3, 1.01, 1.5])
    (cv, ce), (hv, he) = contour(rho, rho - 1), half(rho, rho - 1)
    assert np.all(np.abs(cv - hv) <= ce + he)
    assert np.all(np.abs(cv - hv) <= 1e-8 * np.abs(cv))
    _check_against(tr, rho, cv)


def test_rq_oscillation_even_d_band_masses_sum_to_k0():
    """cos(r)/(1 + r^2)^0.6 in d = 2: mu ~ |rho - 1|^-0.3 at the kink; m+ - m- = k(0) = 1."""
    rep = sk.check_rkks(RadialKernel.from_string("cos(r)/(1 + r**2)**0.6"), 2)
    assert rep.verdict == "RKKS"
    diff = rep.mass_plus.value - rep.mass_minus.value - 1.0
    assert abs(diff) <= rep.mass_plus.error + rep.mass_minus.error


@pytest.mark.parametrize(
    "alpha,m_plus",
    # mpmath (30 digits): f_3 = -2 rho mu_1'(rho) integrated by parts on each lobe, where mu_1 (the
    # shifted 1-D density, t^nu K_nu(t) closed form) is continuous: no singular integrand at all
    [(0.55, 3.97276702874066), (0.52, 8.74624753430912)],
)
def test_rq_oscillation_masses_with_a_near_nonintegrable_kink(alpha, m_plus):
    """mu_3 ~ |rho - 1|^gamma with gamma = 2 alpha - 2 near -1: most of a lobe's mass lies within
    1e-10 of the kink, below what float rho resolves (the masses were 0.11 off, beyond their
    stated 0.01, before the last stretch was integrated at exact offsets with its power law)."""
    measure = sk.SpectralMeasure(RadialKernel.from_string(f"cos(r)/(1 + r**2)**{alpha}"), 3)
    rep = measure.check_rkks()
    assert rep.verdict == "RKKS"
    assert abs(rep.mass_plus.value - m_plus) <= rep.mass_plus.error
    assert rep.mass_plus.error <= 1e-6 * m_plus
    assert abs(rep.mass_minus.value - (m_plus - 1.0)) <= rep.mass_minus.error
    if alpha == 0.55:
        # the sampler's tables next to the kink, in y with rho = 1 -+ L y^8 (in rho: 270 s, the
        # knot budget exhausted at a u-error of 2e-2, lobe masses 3 % off)
        for sign in (1, -1):
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                sampler = radial_sampler(measure, sign)
            assert sampler.u_error <= 1e-10 and sampler.mass_discrepancy <= 1e-9


def test_rq_oscillation_d1_sliver_is_in_the_mass():
    """cos(r)/(1 + r^2)^0.05 in d = 1 is PD with m+ = 1: mu_1 ~ |rho - 1|^-0.9, and the mass within
    an ulp of the kink alone is 3 % of it (the Bochner check refused it before)."""
    rep = sk.check_rkks(RadialKernel.from_string("cos(r)/(1 + r**2)**0.05"), 1)
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - 1.0) <= rep.mass_plus.error <= 1e-8


def test_odd_walk_at_exact_offsets_is_smooth_to_the_last_float():
    """The neighbour table of the even-d half step (d = 5, mu ~ |rho - 1|^-0.4): the walk clamped
    exact offsets below 4 ulps, which froze its values there (table error 4e-6, now 1e-10)."""
    walk = _accurate(_RQWalk(1.0, "cos", 1.0, 1.3, 1.0, 5))
    table = _KinkTable(walk, 1.0, 70.0, noise=5e-11, dim=5)
    assert table.error <= 1e-9


def test_rq_oscillation_divergent_below_the_threshold():
    """cos(r)/(1 + r^2) decays like r^-2: a finite measure only for 2 > (d - 1)/2, i.e. d < 5."""
    rep = sk.check_rkks(RadialKernel.from_string("cos(r)/(1 + r**2)"), 7)
    assert rep.verdict == "DIVERGENT"
    assert "not integrable" in rep.reason and "|rho - 1|^-2" in rep.reason


def test_rq_oscillation_threshold_and_unsupported_are_refused_with_the_reason():
    k = RadialKernel.from_string("cos(r)/(1 + r**2)")
    with pytest.raises(TransformError, match="not absolutely continuous at rho = 1"):
        transform_atom(k, 5)
    assert transform_atom(k, 2).method == "closed-form:rq-oscillation"  # even d: the half step
    # J0 under the same envelope: tests/test_bessel_mixture.py
    rep = sk.check_rkks(RadialKernel.from_string("besselj(0, r)/(1 + r**2)"), 9)
    assert rep.verdict == "DIVERGENT"


#: the mpmath references of this module are stored (tests/reference/oscillating_*.json: about 2 min of
#: mpmath); tests/test_references.py recomputes the cheapest entry live
REFERENCE_SETS = {
    "oscillating_gauss_hankel": (
        gauss_hankel_reference,
        30,
        [{"formula": c[0], "d": d, "rho": r} for c in GAUSS_CASES for d in (1, 2, 3) for r in LOW_D_RHO],
    ),
    "oscillating_gauss_moments": (
        gauss_moment_reference,
        30,
        [
            {"formula": GAUSS_CASES[c][0], "d": d, "rho": r}
            for c, d in HIGH_D_CASES
            for r in _high_d_rho(c, d)
        ],
    ),
    "oscillating_gauss_products": (
        gauss_product_hankel_reference,
        30,
        [
            {"formula": c[0], "d": d, "rho": r}
            for i, c in enumerate(GAUSS_PRODUCTS)
            for d in ((16, 64) if i in PRODUCTS_256 else (3, 16, 64))
            for r in PRODUCT_RHO
        ],
    ),
    "oscillating_gauss_d64_masses": (gauss_cos_d64_mass, 17, [{"part": "plus"}, {"part": "minus"}]),
    "oscillating_rq_quadosc": (
        rq_quadosc_reference,
        30,
        [{"formula": c[0], "rho": t * c[4]} for c in RQ_LOW for t in RQ_RHO],
    ),
}


def test_contour_far_above_the_kink_in_high_d_against_the_walk():
    """cos(r)/(1 + r^2)^12 in d = 41: above the kink the answer is the residue of a 12th-order pole,
    taken on the full circle of radius (alpha - 1)/(rho - b) (the half-arc's 64 Gauss-Legendre nodes
    stated 10-80 relative and the real axis 2e2 at rho - b = 60, where d = 40 keeps its mass), against
    the odd walk."""
    walk = _accurate(_RQWalk(1.0, "cos", 1.0, 12.0, 1.0, 41))
    contour = _RQContour("cos", 1.0, 12.0, 1.0, 41)
    off = np.array([3.0, 10.0, 30.0, 60.0])
    (wv, we), (cv, ce) = walk(1 + off, off), contour(1 + off, off)
    assert np.all(np.abs(cv - wv) <= ce + we)
    assert np.all(ce <= 1e-9 * np.abs(cv))


@pytest.mark.parametrize("kind,alpha", [("cos", 20.3), ("sin", 18.4)])
def test_contour_and_walk_agree_in_d65(kind, alpha):
    """Two independent routes in d = 65 (m = 31.5), fractional alpha: the contour's branch-cut bank
    below the kink carries y^(m + power - 2 alpha) e^(-(b - rho) y), whose peak lies far beyond the
    46/(b - rho) that bounds the exponential alone (the contour was 1e-4 off at small rho, stating
    1e-10), and the walk's small-rho series needs its Taylor coefficients to more than 40 digits
    (6e-9 off, stating 1e-10). Each now agrees with the other within the stated errors (rho < b/2:
    where both defects were; further out the walk's mpmath polynomials take seconds, and the
    routes' agreement above the kink in high d is checked in d = 41 above)."""
    walk = _accurate(_RQWalk(1.0, kind, 1.0, alpha, 1.0, 65))
    contour = _RQContour(kind, 1.0, alpha, 1.0, 65)
    rho = np.array([1e-6, 0.05, 0.3, 0.45])
    with np.errstate(all="ignore"):
        (wv, we), (cv, ce) = walk(rho, rho - 1), contour(rho, rho - 1)
    assert np.all(np.abs(cv - wv) <= ce + we), np.abs(cv - wv) / np.abs(wv)
    assert np.all(ce + we <= 1e-7 * np.abs(wv))


def test_contour_in_d64_satisfies_the_dimension_walk():
    """cos(r)/(1 + r^2)^20 (integer alpha: computed up to d = 64): mu_64 = -(1/(2 pi rho)) d mu_62/d rho
    (the derivative by a 5-point stencil, h = 1e-4: ~1e-11), below and above the kink."""
    c62, c64 = _RQContour("cos", 1.0, 20.0, 1.0, 62), _RQContour("cos", 1.0, 20.0, 1.0, 64)
    rho, h = np.array([0.3, 0.6, 0.9, 1.2, 1.5, 3.0, 5.0]), 1e-4
    with np.errstate(all="ignore"):
        (v1p, _), (v1m, _), (v2p, _), (v2m, _) = (c62(rho + k * h) for k in (1, -1, 2, -2))
        v64, e64 = c64(rho)
    walked = -(8 * (v1p - v1m) - (v2p - v2m)) / (12 * h) / (2 * math.pi * rho)
    assert np.all(np.abs(walked - v64) <= 1e-10 * np.abs(v64) + e64)


def test_contour_beyond_its_dimensions_is_refused_with_the_reason():
    # up to d = 64 for cos and sin(r)/r under an integer power, 48 otherwise (the d = 64 derivation
    # itself takes 6-8 s: the contour there is checked above against the dimension walk)
    assert _contour_max_d("cos", 20.0) == _contour_max_d("sin", 3.0) == 64
    assert _contour_max_d("cos", 20.3) == _contour_max_d("bessel", 20.0) == 48
    for formula, d in (("cos(r)/(1 + r**2)**20.3", 64), ("cos(r)/(1 + r**2)**40", 66)):
        with pytest.raises(TransformError, match="does not use beyond d = 48"):
            transform_atom(RadialKernel.from_string(formula), d)


@pytest.mark.parametrize("formula", ["r**2*cos(2*r)/(1 + r**2)", "(1 + r**2)*cos(r)/(2 + r**2)"])
def test_an_envelope_with_a_polynomial_part_is_split(formula):
    # r^2 cos(2 r)/(1 + r^2) = cos(2 r) - cos(2 r)/(1 + r^2) (the band-limited split's partial
    # fractions): in d = 1 two atoms at +-2 and a density; in d >= 2 an oscillation that does not
    # decay is slower than every finite radial measure's: DIVERGENT with that reason (refused before,
    # "power-law envelope r^-nan")
    kernel = RadialKernel.from_string(formula)
    rep = sk.check_rkks(kernel, 1)
    assert rep.method.startswith("sum[")
    assert abs(rep.mass_plus.value - rep.mass_minus.value - float(kernel(0.0))) <= (
        rep.mass_plus.error + rep.mass_minus.error
    )
    rep3 = sk.check_rkks(kernel, 3)
    assert rep3.verdict == "DIVERGENT" and "without decaying" in rep3.reason
