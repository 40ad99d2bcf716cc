"""Tests of spectralkit.transforms._polynomial against independent high-precision references.

Convention: mu(rho) = (2 pi)^(-d/2) int_0^R k(r) r^(d-1) Lambda_nu(rho r) dr, Lambda_nu(x) = x^-nu J_nu(x),
nu = d/2 - 1. References, computed here from first principles with mpmath (40-200 digits):

* the monomial closed form int_0^b r^(n+d-1) Lambda_nu(rho r) dr
  = Lambda_nu(0) b^(n+d)/(n+d) 1F2((n+d)/2; d/2, (n+d)/2 + 1; -(rho b)^2/4), summed over the monomials
  of every piece (mpmath's hyp1f2, which switches to its own asymptotic expansion at large argument);
* the defining integral by mpmath.quad, split at the breakpoints and every pi/rho;
* elementary closed forms: d = 1, mu = (1/pi) int k(r) cos(rho r) dr, and d = 3,
  mu = (1/(2 pi^2 rho)) int k(r) r sin(rho r) dr, with exact antiderivatives of r^n exp(i rho r).
"""

import math
import pickle
from fractions import Fraction
from functools import cache

import mpmath
import numpy as np
import pytest
import sympy
from scipy.optimize import brentq

from spectralkit.transforms._polynomial import PolynomialTransform, compact_polynomial_transform

R_SYM = sympy.Symbol("r")


def _coeffs(expr):
    return [sympy.Rational(c) for c in sympy.Poly(sympy.expand(expr), R_SYM).all_coeffs()[::-1]]


r = R_SYM
HALF = sympy.Rational(1, 2)
KERNELS = {
    "triangle": [(0, 1, _coeffs(1 - r))],
    "square": [(0, 1, _coeffs((1 - r) ** 2))],
    "wendland": [(0, 1, _coeffs((1 - r) ** 4 * (1 + 4 * r)))],
    "spherical": [(0, 2, _coeffs((1 - r**2 / 4) ** 2))],
    "jump": [(0, 2, _coeffs(1 - r**2 / 9))],
    "two_piece": [(0, HALF, _coeffs((1 - r) ** 2 + HALF - r)), (HALF, 1, _coeffs((1 - r) ** 2))],
}
DIMS = [1, 2, 3, 5, 8, 16, 32, 64]


def _mp(value):
    f = Fraction(value) if not isinstance(value, sympy.Basic) else Fraction(int(value.p), int(value.q))
    return mpmath.mpf(f.numerator) / f.denominator


def _kernel_value(pieces, x):
    for lo, hi, co in pieces:
        if _mp(lo) <= x <= _mp(hi):
            return mpmath.fsum(_mp(c) * x**n for n, c in enumerate(co))
    return mpmath.mpf(0)


# ---------------------------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------------------------
def ref_hyp(pieces, d, rho, dps):
    """Sum of the monomial 1F2 closed forms (mpmath), one mpf per rho."""
    out = []
    with mpmath.workdps(dps):
        nu = mpmath.mpf(d) / 2 - 1
        lam0 = 2 ** (-nu) / mpmath.gamma(nu + 1)

        def mono(n, b, x):
            a = mpmath.mpf(n + d) / 2
            return (
                lam0
                * b ** (n + d)
                / (n + d)
                * mpmath.hyp1f2(a, mpmath.mpf(d) / 2, a + 1, -((x * b) ** 2) / 4)
            )

        for x in rho:
            x = mpmath.mpf(float(x))
            total = mpmath.mpf(0)
            for lo, hi, co in pieces:
                for n, c in enumerate(co):
                    if c != 0:
                        total += _mp(c) * (mono(n, _mp(hi), x) - (mono(n, _mp(lo), x) if lo != 0 else 0))
            out.append(total * (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2))
    return out


def ref_quad(pieces, d, rho, dps=40):
    """mpmath.quad of the defining integral, split at the breakpoints and every pi/rho."""
    out = []
    with mpmath.workdps(dps):
        nu = mpmath.mpf(d) / 2 - 1

        def lam(y):
            if y < 1:
                return 2 ** (-nu) / mpmath.gamma(nu + 1) * mpmath.hyp0f1(nu + 1, -y * y / 4)
            return mpmath.besselj(nu, y) * y ** (-nu)

        for x in rho:
            x = mpmath.mpf(float(x))
            total = mpmath.mpf(0)
            for lo, hi, co in pieces:
                lo_, hi_ = _mp(lo), _mp(hi)
                cs = [_mp(c) for c in co]
                pts = mpmath.linspace(lo_, hi_, int((hi_ - lo_) * x / mpmath.pi) + 2)
                total += mpmath.quad(
                    lambda t, cs=cs, x=x: mpmath.polyval(cs[::-1], t) * t ** (d - 1) * lam(x * t), pts
                )
            out.append(total * (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2))
    return out


def _int_power_exp(n, x, a, b):
    """int_a^b t^n exp(i x t) dt, exactly (x != 0)."""

    def prim(t):
        return mpmath.exp(1j * x * t) * mpmath.fsum(
            (-1) ** j * mpmath.factorial(n) / mpmath.factorial(n - j) * t ** (n - j) / (1j * x) ** (j + 1)
            for j in range(n + 1)
        )

    return prim(b) - prim(a)


def ref_elementary(pieces, d, rho, dps=80):
    """d = 1: (1/pi) int k cos(rho r) dr; d = 3: (1/(2 pi^2 rho)) int k r sin(rho r) dr."""
    assert d in (1, 3)
    out = []
    with mpmath.workdps(dps):
        for x in rho:
            x = mpmath.mpf(float(x))
            total = mpmath.mpf(0)
            for lo, hi, co in pieces:
                for n, c in enumerate(co):
                    if c == 0:
                        continue
                    m = n + (d - 1) // 2  # power of r in the integrand
                    if x == 0:
                        total += (
                            _mp(c)
                            * (_mp(hi) ** (m + 1) - _mp(lo) ** (m + 1))
                            / (m + 1)
                            * (1 if d == 1 else 0)
                        )
                        continue
                    val = _int_power_exp(m, x, _mp(lo), _mp(hi))
                    total += _mp(c) * (val.real if d == 1 else val.imag)
            if d == 1:
                out.append(total / mpmath.pi)
            elif x == 0:  # the limit rho -> 0 of the d = 3 form: (1/(2 pi^2)) int k r^2 dr
                out.append(
                    mpmath.fsum(
                        _mp(c) * (_mp(hi) ** (n + 3) - _mp(lo) ** (n + 3)) / (n + 3)
                        for lo, hi, co in pieces
                        for n, c in enumerate(co)
                    )
                    / (2 * mpmath.pi**2)
                )
            else:
                out.append(total / (2 * mpmath.pi**2 * x))
    return out


def _ref_dps(pieces, d, rho):
    """Digits for the 1F2 references: the monomials cancel like (rho R)^(degree + 1) and in high d
    the series lose about (rho R)^2/(2 d) / ln 10 digits."""
    deg = max(len(co) for _, _, co in pieces)
    x = float(rho) * float(pieces[-1][1])
    return int(40 + (deg + 2) * math.log10(2 + x) + (min(x, d) ** 2 / (2 * d) / 2.3 if d > 8 else 0))


@cache
def _transform(name, d):
    return compact_polynomial_transform(KERNELS[name], d)


def _grid(tr, n_log=24, n_lin=16, n_zero=4):
    """rho from 0 to 1e6 / R: a log grid, a linear grid over the head and points near zeros of mu."""
    R = tr.support
    head = max(3 * tr.rho_tail, 12 / R)
    rho = [0.0, *np.geomspace(1e-3 / R, 1e6 / R, n_log), *np.linspace(0.3 / R, head, n_lin)]
    fine = np.linspace(0.05 / R, head, 600)
    m = tr.mu(fine)
    zeros = [
        brentq(tr.mu, a, b, xtol=1e-15 * b)
        for a, b, ma, mb in zip(fine[:-1], fine[1:], m[:-1], m[1:])
        if ma * mb < 0
    ][:n_zero]
    rho += [z * (1 + 1e-9) for z in zeros]
    return np.array(sorted(rho))


@cache
def _reference(name, d):
    tr = _transform(name, d)
    rho = _grid(tr)
    ref = []
    for x in rho:
        ref += ref_hyp(KERNELS[name], d, [x], _ref_dps(KERNELS[name], d, x))
    return rho, ref


def _check(tr, rho, ref):
    """The three accuracy statements: the sum form with the stated (rel_error, abs_error), the
    pointwise error_bound, and the relative bound of the log form."""
    got = tr.mu(rho)
    bound = tr.error_bound(rho)
    rel_bound = tr.error_bound(rho, relative=True)
    log_abs, sign = tr.log_abs_mu(rho)
    for i, x in enumerate(rho):
        exact = ref[i]
        err = abs(float(mpmath.mpf(float(got[i])) - exact))
        exact_f = abs(float(exact))
        if exact_f > 1e-290:  # mu itself is representable
            assert err <= tr.rel_error * exact_f + tr.abs_error * tr.max_abs, (x, got[i], exact)
            assert err <= bound[i], (x, got[i], exact, bound[i])
        if exact != 0:
            log_err = abs(float(mpmath.log(abs(exact))) - log_abs[i])
            assert log_err <= rel_bound[i] + 2e-16 * abs(log_abs[i]), (x, log_abs[i], exact, rel_bound[i])
            if rel_bound[i] < 0.5:  # the sign is determined
                assert sign[i] == (1 if exact > 0 else -1), (x, sign[i], exact)


# ---------------------------------------------------------------------------------------------
# accuracy
# ---------------------------------------------------------------------------------------------
def test_triangle_d1_is_one_minus_cos_over_pi_rho_squared():
    tr = _transform("triangle", 1)
    rho = np.concatenate(
        [[0.0, 1e-8, 1e-3], np.geomspace(1e-2, 1e6, 60), 2 * np.pi * np.arange(1, 6) * (1 + 1e-8)]
    )
    with mpmath.workdps(60):
        ref = [
            (1 - mpmath.cos(mpmath.mpf(x))) / (mpmath.pi * mpmath.mpf(x) ** 2)
            if x > 0
            else 1 / (2 * mpmath.pi)
            for x in rho
        ]
    _check(tr, rho, ref)
    assert tr.rel_error <= 2e-14 and tr.abs_error <= 3e-14


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("d", [1, 3])
def test_elementary_closed_forms(name, d):
    tr = _transform(name, d)
    rho = _grid(tr, n_log=30, n_lin=10)
    _check(tr, rho, ref_elementary(KERNELS[name], d, rho))


#: (name, d) against the 1F2 reference: the kernels in turn over DIMS, two per d (each kernel in two or
#: three d, from low to high: the triangle, square, Wendland and spherical kernels reach d = 32 or 64,
#: the jump and the two pieces d = 16)
F12_CASES = [(list(KERNELS)[i % len(KERNELS)], DIMS[i // 2]) for i in range(2 * len(DIMS))]


@pytest.mark.parametrize(("name", "d"), F12_CASES)
def test_against_1f2_closed_form(name, d):
    tr = _transform(name, d)
    assert tr.rel_error <= 1e-12
    assert tr.abs_error <= 1e-12
    _check(tr, *_reference(name, d))


@pytest.mark.parametrize("name,d", [("triangle", 2), ("two_piece", 5), ("spherical", 32)])
def test_references_agree(name, d):
    """The 1F2 reference and mpmath.quad of the defining integral agree (to 1e-30 of the scale)."""
    rho = np.array([0.0, 0.7, 3.0, 11.0, 30.0])
    a = ref_hyp(KERNELS[name], d, rho, 60)
    b = ref_quad(KERNELS[name], d, rho, 45)
    scale = max(abs(v) for v in a)
    for x, u, v in zip(rho, a, b):
        assert abs(u - v) <= 1e-30 * scale + 1e-25 * abs(u), (x, u, v)


@pytest.mark.parametrize("d", [128, 256])
def test_high_dimension_log_form(d):
    """In high d mu underflows float64; the log form stays accurate to its own error bound."""
    tr = compact_polynomial_transform(KERNELS["wendland"], d)
    assert tr.rel_error <= 5e-12
    rho = np.array([0.0, 0.5, 20.0, 60.0, 0.9 * d / 2, d / 2 + 3, d / 2 + 20, 1.5 * d, 1e3, 1e5])
    with mpmath.workdps(30):
        ref = []
        for x in rho:
            ref += ref_hyp(
                KERNELS["wendland"], d, [x], int(40 + 6 * math.log10(2 + x) + min(x, d) ** 2 / (2 * d) / 2.3)
            )
    _check(tr, rho, ref)
    log_abs, _ = tr.log_abs_mu(rho)
    assert np.all(np.isfinite(log_abs))
    assert np.all((tr.mu(rho) == 0) == (log_abs < -746))  # mu underflows exactly where it must


@pytest.mark.slow
@pytest.mark.parametrize("d", [512, 2048])
def test_very_high_dimension(d):
    """Correct (if slower to build) up to d = 2048: the log form against the 1F2 reference (at both
    ends of 512 ... 2048)."""
    tr = compact_polynomial_transform(KERNELS["triangle"], d)
    assert tr.rel_error <= 1e-10
    nu = d / 2 - 1
    rho = np.array([10.0, 0.1 * nu, 0.9 * nu, nu + 5, 1.2 * nu, 3 * nu])
    ref = []
    for x in rho:
        ref += ref_hyp(KERNELS["triangle"], d, [x], int(60 + min(x, d) ** 2 / (2 * d) / 2.3))
    _check(tr, rho, ref)


def test_non_dyadic_support_and_large_rho():
    """Support R = 0.3 (not exact in binary): the phase R rho is formed in double-double, so mu
    stays accurate at rho R ~ 1e6 (a plain product would lose ~1e-10 relative)."""
    pieces = [(0, 0.3, [0.09, -0.6, 1.0])]  # (0.3 - r)^2 with float coefficients
    for d in (1, 4):
        tr = compact_polynomial_transform(pieces, d)
        rho = np.array([1e3, 3.3e5, 1e6, 3.1e6, 1e7])
        _check(tr, rho, [ref_hyp(pieces, d, [x], 60)[0] for x in rho])


def test_sign_changing_kernel_and_leading_zero_piece():
    """(1 - 2r)(1 - r)^2 changes sign; a kernel that is 0 on [0, 1/2] jumps there."""
    cases = [
        [(0, 1, _coeffs((1 - 2 * r) * (1 - r) ** 2))],
        [(0, HALF, [0]), (HALF, 1, _coeffs((1 - r) ** 2))],
    ]
    for pieces in cases:
        for d in (2, 7, 40):
            tr = compact_polynomial_transform(pieces, d)
            rho = _grid(tr, n_log=12, n_lin=10, n_zero=3)
            _check(tr, rho, [ref_hyp(pieces, d, [x], _ref_dps(pieces, d, x))[0] for x in rho])


# ---------------------------------------------------------------------------------------------
# structure: tail, exponents, Bochner's identity
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,d", [("triangle", 1), ("wendland", 3), ("two_piece", 2), ("jump", 16), ("spherical", 64)]
)
def test_tail_parts_reproduce_mu(name, d):
    tr = _transform(name, d)
    rho = tr.rho_tail * np.geomspace(1.0, 1e6, 50)
    a, bs = tr.tail_parts(rho)
    total = a - sum(np.real(np.exp(1j * b * rho) * bb) for b, bb in bs)
    m = tr.mu(rho)
    assert np.all(np.abs(total - m) <= 2 * tr.error_bound(rho) + 1e-300)
    assert [b for b, _ in bs] == [b for b, _ in tr.oscillations]
    with pytest.raises(ValueError, match="rho_tail"):
        tr.tail_parts(0.5 * tr.rho_tail)


@pytest.mark.parametrize(
    "name,d,exponent,origin,osc",
    [
        ("triangle", 1, 2.0, ((1 / math.pi, 1),), ((1.0, 1),)),  # mu = (1 - cos rho)/(pi rho^2)
        ("triangle", 8, 5.5, None, ((1.0, 1),)),
        ("wendland", 1, 4.0, None, ((1.0, 4),)),  # origin r^3 (d + 3) against the edge (d+1)/2 + 4
        ("wendland", 8, 8.5, None, ((1.0, 4),)),
        ("spherical", 3, 4.0, (), ((2.0, 2),)),  # even in r: no origin terms
        ("jump", 3, 2.0, (), ((2.0, 0),)),
        ("two_piece", 1, 2.0, None, ((0.5, 1), (1.0, 2))),
    ],
)
def test_large_rho_exponents(name, d, exponent, origin, osc):
    tr = _transform(name, d)
    assert tr.tail_exponent == exponent
    assert tr.oscillations == osc
    if origin is not None:
        assert len(tr.origin_terms) == len(origin)
        for (c, n), (c0, n0) in zip(tr.origin_terms, origin):
            assert n == n0 and c == pytest.approx(c0, rel=1e-15)
    # the decay of the amplitude |A| + sum |B_i| over two decades matches the exponent and, with a
    # single breakpoint, so does the largest |mu| over one period
    amp, peak = [], []
    for x in (1e4, 1e6):
        a, bs = tr.tail_parts(np.array([x]))
        amp.append(abs(a[0]) + sum(abs(bb[0]) for _, bb in bs))
        rho = x + np.linspace(0, 2 * math.pi / tr.oscillations[0][0], 400)
        peak.append(np.max(np.abs(tr.mu(rho))))
    assert -math.log10(amp[1] / amp[0]) / 2 == pytest.approx(exponent, abs=0.01)
    if len(osc) == 1:
        assert -math.log10(peak[1] / peak[0]) / 2 == pytest.approx(exponent, abs=0.02)


def _mass(tr, d, k0):
    """S_(d-1) int_0^inf rho^(d-1) mu drho: Gauss-Legendre up to rho_c, the tail parts beyond
    (A exactly, the oscillating parts by Gauss-Legendre per half period up to X and one
    integration by parts of the leading term beyond)."""
    log_s = math.log(2) + 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d)
    x, w = np.polynomial.legendre.leggauss(30)

    def panels(a, b, n):
        e = np.linspace(a, b, n + 1)
        lo, hi = e[:-1, None], e[1:, None]
        return (0.5 * (hi - lo) * x + 0.5 * (hi + lo)).ravel(), (0.5 * (hi - lo) * w).ravel()

    rho_c = max(tr.rho_tail, 4 / tr.support)
    t, wt = panels(0.0, rho_c, int(rho_c * tr.support * 2) + 8)
    head = np.sum(wt * t ** (d - 1) * tr.mu(t))
    big_x = 2000.0 / tr.support
    t, wt = panels(rho_c, big_x, int((big_x - rho_c) * tr.support / math.pi * 2) + 1)
    a, bs = tr.tail_parts(t)
    osc = sum(np.real(np.exp(1j * b * t) * bb) for b, bb in bs)
    tail = np.sum(wt * t ** (d - 1) * (a - osc))
    for coef, n in tr.origin_terms:  # int_X^inf a_n rho^(d-1-n-d) = a_n X^-n / n
        tail += coef * big_x ** (-n) / n
    # -int_X^inf Re(e^(i b rho) f) with f = B rho^(d-1) smooth: two integrations by parts,
    # int_X^inf e^(i b rho) f = -e^(i b X) (f/(i b) - f'/(i b)^2) + O(f''/b^3)
    h = 1e-4 * big_x
    _, bs3 = tr.tail_parts(np.array([big_x - h, big_x, big_x + h]))
    for b, bb in bs3:
        f = bb * np.array([big_x - h, big_x, big_x + h]) ** (d - 1)
        df = (f[2] - f[0]) / (2 * h)
        tail += float(np.real(np.exp(1j * b * big_x) * (f[1] / (1j * b) - df / (1j * b) ** 2)))
    return math.exp(log_s) * (head + tail)


@pytest.mark.parametrize(
    "name,d",
    [
        ("triangle", 1),
        ("triangle", 2),
        ("square", 3),
        ("wendland", 3),
        ("wendland", 8),
        ("spherical", 3),
        ("two_piece", 2),
    ],
)
def test_bochner_identity(name, d):
    """S_(d-1) int_0^inf rho^(d-1) mu(rho) drho = k(0) where the integral converges (d < 3 + 2 beta)."""
    tr = _transform(name, d)
    k0 = float(_kernel_value(KERNELS[name], mpmath.mpf(0)))
    assert _mass(tr, d, k0) == pytest.approx(k0, rel=1e-8, abs=1e-8)


def test_mu_at_zero_is_the_weighted_integral():
    """mu(0) = (2 pi)^(-d/2) Lambda_nu(0) int k r^(d-1) dr, exactly (also in log form in high d)."""
    for name, d in [("wendland", 3), ("two_piece", 64), ("jump", 300)]:
        tr = compact_polynomial_transform(KERNELS[name], d)
        with mpmath.workdps(40):
            nu = mpmath.mpf(d) / 2 - 1
            integral = mpmath.fsum(
                _mp(c) * (_mp(hi) ** (n + d) - _mp(lo) ** (n + d)) / (n + d)
                for lo, hi, co in KERNELS[name]
                for n, c in enumerate(co)
            )
            exact = (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2) * 2 ** (-nu) / mpmath.gamma(nu + 1) * integral
            log_exact = float(mpmath.log(exact))
        la, sg = tr.log_abs_mu(0.0)
        assert sg == 1 and la == pytest.approx(log_exact, rel=1e-15, abs=1e-14)


# ---------------------------------------------------------------------------------------------
# interface
# ---------------------------------------------------------------------------------------------
def test_interface_and_shapes():
    tr = _transform("two_piece", 3)
    assert isinstance(tr, PolynomialTransform)
    assert tr.dim == 3 and tr.support == 1.0 and tr.scale == 1.0
    assert tr.zeros_hint is None and tr.build_seconds > 0
    assert tr.rho_series <= tr.rho_tail
    x = np.linspace(0, 20, 12).reshape(3, 4)
    assert tr.mu(x).shape == (3, 4)
    la, sg = tr.log_abs_mu(x)
    assert la.shape == sg.shape == (3, 4)
    assert np.allclose(sg * np.exp(la), tr.mu(x), rtol=1e-13, atol=0)
    assert tr.mu(2.0).shape == () and float(tr.mu(2.0)) == tr.mu(np.array([2.0]))[0]
    assert tr.mu(np.inf) == 0.0 and tr.log_abs_mu(np.inf)[0] == -np.inf
    assert tr(np.array([1.0]))[0] == tr.mu(1.0)
    for bad in (-1.0, np.nan, [0.0, -2.0]):
        with pytest.raises(ValueError, match="rho must be >= 0"):
            tr.mu(bad)


def test_exact_inputs_are_equivalent():
    """sympy rationals, Fractions, ints and floats that are exactly the same numbers give the same
    transform; a float coefficient is taken at its exact binary value."""
    ref = compact_polynomial_transform([(0, 1, [1, -2, 1])], 5)
    rho = np.geomspace(1e-3, 1e5, 50)
    for pieces in (
        [(0, 1, [sympy.Integer(1), sympy.Integer(-2), sympy.Integer(1)])],
        [(Fraction(0), Fraction(1), [Fraction(1), -2, 1.0])],
        [(0.0, 1.0, np.array([1.0, -2.0, 1.0]))],
        [(0, 1, [1, -2, 1, 0, 0])],
    ):
        assert np.array_equal(compact_polynomial_transform(pieces, 5).mu(rho), ref.mu(rho))
    # trailing zero pieces do not change the support
    tr = compact_polynomial_transform([(0, 1, [1, -1]), (1, 3, [0])], 2)
    assert tr.support == 1.0
    # an irrational sympy coefficient is used at 60 digits
    tr = compact_polynomial_transform([(0, 1, [sympy.sqrt(2), -sympy.sqrt(2)])], 1)
    assert float(tr.mu(0.0)) == pytest.approx(math.sqrt(2) / (2 * math.pi), rel=1e-15)


@pytest.mark.parametrize(
    "pieces,dim,exc,match",
    [
        ([(0, 1, [1, -1])], 0, ValueError, r"dim must be an integer in \[1, 4096\], got 0"),
        ([(0, 1, [1, -1])], 4097, ValueError, "dim must be an integer"),
        ([(0, 1, [1, -1])], 2.0, TypeError, "dim must be an integer"),
        ([(0, 1, [1, -1])], True, TypeError, "dim must be an integer"),
        ([], 2, ValueError, "pieces must contain at least one"),
        ("0,1,[1]", 2, TypeError, "pieces must be a sequence"),
        ([(0, 1)], 2, ValueError, r"pieces\[0\] must be a \(b_lo, b_hi, coeffs\) triple"),
        ([(0.5, 1, [1])], 2, ValueError, r"pieces\[0\] must start at b_lo = 0"),
        (
            [(0, 1, [1]), (0.9, 2, [1])],
            2,
            ValueError,
            r"pieces must be contiguous: pieces\[1\] starts at b_lo = 0.9",
        ),
        ([(0, 1, [1]), (1, 1, [1])], 2, ValueError, r"pieces\[1\] needs b_hi > b_lo"),
        ([(0, math.inf, [1])], 2, ValueError, r"pieces\[0\] b_hi must be finite"),
        ([(0, 1, [1, float("nan")])], 2, ValueError, r"pieces\[0\] coeffs\[1\] must be finite"),
        ([(0, 1, [1, 1j])], 2, TypeError, r"pieces\[0\] coeffs\[1\] must be a real number"),
        ([(0, 1, [1, "x"])], 2, TypeError, r"pieces\[0\] coeffs\[1\] must be a real number"),
        ([(0, 1, [1, sympy.Symbol("a")])], 2, TypeError, r"pieces\[0\] coeffs\[1\] must be a number"),
        ([(0, 1, [1, sympy.I])], 2, ValueError, r"pieces\[0\] coeffs\[1\] must be a finite real number"),
        ([(0, 1, "1-r")], 2, TypeError, r"pieces\[0\] coeffs must be a sequence of numbers"),
        ([(0, 1, [0, 0])], 2, ValueError, "the kernel is identically zero"),
        ([(0, 1, [1] * 1002)], 2, ValueError, r"degree at most 1000"),
        ([(0, 1, [True])], 2, TypeError, "got the bool True"),
    ],
)
def test_bad_input_messages(pieces, dim, exc, match):
    with pytest.raises(exc, match=match):
        compact_polynomial_transform(pieces, dim)


def test_pickle_round_trip():
    """A built transform pickles (small: the build-time high-precision caches are dropped) and
    evaluates identically after unpickling."""
    tr = _transform("two_piece", 40)
    blob = pickle.dumps(tr)
    assert len(blob) < 100_000
    back = pickle.loads(blob)
    rho = np.geomspace(1e-3, 1e6, 500)
    assert np.array_equal(back.mu(rho), tr.mu(rho))
    assert np.array_equal(back.error_bound(rho), tr.error_bound(rho))
