"""Rational functions of r^2 (transforms/_rational.py): partial fractions with complex poles, exact in every d.

References: d = 1 and d = 3 by QUADPACK's Fourier-integral rule (QAWF)
(mu_1 = (1/pi) int k(r) cos(rho r) dr, mu_3 = (1/(2 pi^2 rho)) int k(r) r sin(rho r) dr: independent
of the closed form), every d by the closed form evaluated term by term in mpmath with digits for the cancellation
(no float64, no interpolation), and the masses of kernels known to be PD (Gaussian scale mixtures with positive
weights: m+ = k(0), m- = 0) or with m+ - m- = k(0).
"""

import math

import mpmath
import numpy as np
import pytest
import sympy
from scipy.integrate import quad

import spectralkit as sk
from spectralkit.transforms import closed_form
from spectralkit.transforms._closed_forms import _recognise
from spectralkit.transforms._normalise import _family_value, _scaled
from spectralkit.transforms._partial import partial_fractions
from spectralkit.transforms._rational import _T, _in_r2
from spectralkit.transforms._registry import MATCHERS, exact_rationals

#: kernels of the class: complex poles (oscillating, indefinite), several real poles, multiplicities,
#: a constant part (an atom at w = 0)
COMPLEX = ["1/(1 + r**2 + r**4)", "1/(1 + r**4)", "(1 - r**2)/(1 + r**2)**3", "1/(1 + r**4)**2"]
REAL = ["1/((1 + r**2)*(4 + r**2))", "(3 + r**2)/((1 + r**2)**2*(2 + r**2))"]


def _terms(formula):
    kind, params = _recognise(sk.RadialKernel.from_string(formula))
    assert kind == "rational_r2", (formula, kind)
    return params


def _terms_300(formula):
    """The partial fractions recomputed at 300 digits (the reference must not inherit the cancellation
    limit of the library's own coefficients)."""
    num, den = _in_r2(exact_rationals(sk.RadialKernel.from_string(formula).expr))
    with mpmath.workdps(300):
        _, fracs = partial_fractions(num / den, _T, 300)
    return {"terms": tuple((c, n, -z) for c, n, z in fracs)}


def _closed_form_mp(params, dim, rho):
    """sum_j c_j (2 pi)^(-d/2) 2^(1-n) / Gamma(n) (rho/z)^(n - d/2) K_(d/2 - n)(z rho) in mpmath, the
    digits doubled from 60 until two evaluations agree to 1e-16 (the terms cancel by hundreds of
    digits at rho = 1e-25 in high d)."""

    def at(dps):
        with mpmath.workdps(dps):
            s, x = mpmath.mpf(dim) / 2, mpmath.mpf(rho)
            total = 0
            for c, n, a in params["terms"]:
                z = mpmath.sqrt(a)
                total += (
                    c
                    * (2 * mpmath.pi) ** (-s)
                    * 2 ** (1 - n)
                    / mpmath.gamma(n)
                    * (x / z) ** (n - s)
                    * mpmath.besselk(s - n, z * x)
                )
            return +mpmath.re(total)

    dps, prev = 60, None
    while True:
        cur = at(dps)
        if prev is not None and abs(cur - prev) <= mpmath.mpf("1e-16") * abs(cur):
            return cur
        prev, dps = cur, 2 * dps


def _fourier(formula, dim, rho):
    """mu_1 = (1/pi) int_0^inf k cos(rho r) dr, mu_3 = (1/(2 pi^2 rho)) int_0^inf k r sin(rho r) dr by
    QUADPACK's Fourier-integral rule (QAWF)."""
    k = sk.RadialKernel.from_string(formula)
    if dim == 1:
        val, err = quad(lambda r: float(k(r)), 0, np.inf, weight="cos", wvar=rho, epsabs=1e-15, limlst=200)
        return val / math.pi, err / math.pi
    val, err = quad(lambda r: float(k(r)) * r, 0, np.inf, weight="sin", wvar=rho, epsabs=1e-15, limlst=200)
    return val / (2 * math.pi**2 * rho), err / (2 * math.pi**2 * rho)


@pytest.mark.parametrize(
    "formula",
    COMPLEX + REAL + ["(2 + r**2)/(1 + r**2)"],
)
def test_matched_as_rational_in_r2(formula):
    params = _terms(formula)
    k = sk.RadialKernel.from_string(formula)
    for r in (0.0, 0.3, 1.7, 12.0):
        assert float(
            mpmath.re(params["c0"] + sum(c * (r * r + a) ** (-n) for c, n, a in params["terms"]))
        ) == (pytest.approx(float(k(r)), rel=1e-13))


@pytest.mark.parametrize(
    "formula,why",
    [
        ("1/(1 + r**3)", "odd power of r"),
        ("1/(r**2 - 1)", "a pole at r = 1: unbounded"),
        ("r**4/(1 + r**2)", "grows"),
        ("1/(1 + r**2)**2", "a single rational quadratic: its own closed form"),
    ],
)
def test_not_matched(formula, why):
    match = _recognise(sk.RadialKernel.from_string(formula))
    assert match is None or match[0] != "rational_r2", why


@pytest.mark.parametrize("formula,dim", [(COMPLEX[0], 1), (COMPLEX[1], 3), (REAL[0], 1), (REAL[0], 3)])
def test_density_against_fourier_quadrature(formula, dim):
    """Each of the three kernels in d = 1 or 3, each d with two of them (the real poles in both)."""
    t = closed_form(sk.RadialKernel.from_string(formula), dim)
    for rho in (0.05, 0.7, 2.3, 6.0):
        ref, err = _fourier(formula, dim, rho)
        # the stated error plus the reference's: QAWF's own estimate (x 10: it is an estimate) and a
        # few ulps of its float64 sum of cycles
        assert abs(t.mu(rho) - ref) <= t.rel_error * abs(ref) + 10 * err + 1e-14, (
            formula,
            dim,
            rho,
            t.mu(rho),
            ref,
        )


CLOSED_FORM_CASES = [
    ("1/(1 + r**4)", 2),
    ("1/(1 + r**4)", 16),
    ("1/((1 + r**2)*(4 + r**2))", 256),
    ("1/(1 + r**4)**2", 5),  # mu(0) finite (2 delta = 8 > d), rho^3 next to it
    ("1/(1 + r**4)**2", 7),
    ("1/(1 + r**4)**2", 8),  # 2 delta = d: mu ~ log(1/rho)
    ("1/(1 + r**4)**2", 64),
]
#: from rho = 1e-25 (below 1e-9: the expansion at 0; up to rho_s the terms cancel as a whole: the
#: interpolated mpmath region) through the float64 region to the tail rho = 120
CLOSED_FORM_RHO = (1e-25, 1e-12, 1e-7, 3e-4, 0.02, 0.4, 1.3, 4.0, 120.0)


def closed_form_reference(formula, d, rho):
    """mu_d(rho) of the rational kernel ``formula``: the closed form summed term by term in mpmath
    (_closed_form_mp) from partial fractions recomputed at 300 digits (_terms_300)."""
    return _closed_form_mp(_terms_300(formula), d, rho)


REFERENCE_SETS = {
    "rational_closed_form": (
        closed_form_reference,
        30,
        [{"formula": f, "d": d, "rho": x} for f, d in CLOSED_FORM_CASES for x in CLOSED_FORM_RHO],
    )
}


@pytest.mark.parametrize("formula,dim", CLOSED_FORM_CASES)
def test_density_against_the_closed_form_in_mpmath(formula, dim, stored_reference):
    """The expansion at 0, the interpolated mpmath region, the float64 region and the tail
    (CLOSED_FORM_RHO), in logs: the values span 10^+-3000 in high d. The references are stored (the
    mpmath Bessel functions of complex argument cost seconds a point in the tail)."""
    t = closed_form(sk.RadialKernel.from_string(formula), dim)
    refs = stored_reference("rational_closed_form")
    la, sg = t.log_abs_mu(np.array(CLOSED_FORM_RHO))
    for x, l_, s_ in zip(CLOSED_FORM_RHO, la, sg):
        ref = mpmath.mpf(refs.text(formula=formula, d=dim, rho=x))
        assert s_ == mpmath.sign(ref), (x, s_)
        assert abs(l_ - float(mpmath.log(abs(ref)))) <= t.rel_error, (x, l_, ref)


@pytest.mark.parametrize("dim", [1, 3, 64, 256])
def test_gaussian_scale_mixture_is_pd_with_mass_k0(dim):
    """1/((1 + r^2)(4 + r^2)) = int e^(-s r^2) (e^-s - e^-4s)/3 ds: PD in every d, m+ = k(0) = 1/4."""
    report = sk.check_rkks(sk.RadialKernel.from_string("1/((1 + r**2)*(4 + r**2))"), dim=dim)
    assert report.verdict == "PD"
    assert abs(report.mass_plus.value - 0.25) <= report.mass_plus.error + 1e-15
    assert report.mass_minus.value <= report.mass_minus.error


@pytest.mark.parametrize("formula,dim", [("1/(1 + r**2 + r**4)", 2), ("(1 - r**2)/(1 + r**2)**3", 256)])
def test_indefinite_masses_differ_by_k0(formula, dim):
    report = sk.check_rkks(sk.RadialKernel.from_string(formula), dim=dim)
    assert report.verdict == "RKKS"
    diff = report.mass_plus.value - report.mass_minus.value
    assert abs(diff - 1.0) <= report.mass_plus.error + report.mass_minus.error


def test_constant_part_is_an_atom_at_zero():
    m = sk.SpectralMeasure(sk.RadialKernel.from_string("(2 + r**2)/(1 + r**2)"), dim=3)
    assert m.shells == ((0.0, 1.0),)
    report = sk.check_rkks(sk.RadialKernel.from_string("(2 + r**2)/(1 + r**2)"), dim=3)
    assert report.verdict == "PD"
    assert math.isclose(report.mass_plus.value, 2.0, rel_tol=1e-10)


def test_negative_control_a_perturbed_pole_is_seen():
    """The mpmath comparison detects a pole moved by 1e-7 (the test is not vacuous)."""
    params = _terms("1/(1 + r**4)")
    moved = dict(params, terms=tuple((c, n, a * (1 + mpmath.mpf("1e-7"))) for c, n, a in params["terms"]))
    t = closed_form(sk.RadialKernel.from_string("1/(1 + r**4)"), 16)
    la, _ = t.log_abs_mu(np.array([1.3]))
    assert abs(la[0] - float(mpmath.log(abs(_closed_form_mp(moved, 16, 1.3))))) > 100 * t.rel_error


def _first_match(formula):
    expr = sk.RadialKernel.from_string(formula).expr
    return next(m for _, _, fn in MATCHERS if (m := fn(expr, None)) is not None)


def _ratio(kind, scaled, params, r):
    with mpmath.workdps(30):
        x = mpmath.mpf(r)
        return _family_value(kind, scaled, x) / _family_value(kind, params, x)


@pytest.mark.parametrize(
    "formula",
    [
        "1/(1 + r**4)",  # rational_r2
        "(1 + r)**-2 - 0.5*(1 + 2*r)**-1",  # completely_monotone
        "cos(r)/(1 + r**4)",  # rational_oscillation
        "sin(r)**2/(r**2*(1 + r**2))",  # rational_oscillation with a non-oscillating part
    ],
)
def test_scaled_parameters_are_the_kernel_times_the_factor(formula):
    """_normalise._scaled (a match found without an irrational factor, scaled back): every coefficient
    of the mpmath-parametrised kinds carries the factor."""
    kind, params = _first_match(formula)
    kind2, scaled = _scaled(kind, params, sympy.sqrt(3))
    assert kind2 == kind
    for r in ("0.3", "1.7", "4"):
        assert abs(_ratio(kind, scaled, params, r) / mpmath.sqrt(3) - 1) < 1e-20


def test_scaled_negative_control_a_coefficient_left_out():
    """The same check fails when the non-oscillating part's coefficients are not scaled."""
    kind, params = _first_match("sin(r)**2/(r**2*(1 + r**2))")
    _, scaled = _scaled(kind, params, sympy.sqrt(3))
    scaled = {**scaled, "base": params["base"]}
    assert abs(_ratio(kind, scaled, params, "1.7") / mpmath.sqrt(3) - 1) > 1e-3
