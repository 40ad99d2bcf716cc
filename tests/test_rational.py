"""Rational functions of r^2 (transforms/_rational.py): partial fractions with complex poles, exact in every d.

References: d = 1 and d = 3 by QUADPACK's Fourier-integral rule (QAWF)
(mu_1 = (1/pi) int k(r) cos(rho r) dr, mu_3 = (1/(2 pi^2 rho)) int k(r) r sin(rho r) dr: independent
of the closed form), every d by the closed form evaluated term by term at 60 digits (no float64,
no interpolation), and the masses of kernels known to be PD (Gaussian scale mixtures with positive
weights: m+ = k(0), m- = 0) or with m+ - m- = k(0).
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.integrate import quad

import spectralkit as sk
from spectralkit.transforms import closed_form
from spectralkit.transforms._closed_forms import _recognise

#: kernels of the class: complex poles (oscillating, indefinite), several real poles, multiplicities,
#: a constant part (an atom at w = 0)
COMPLEX = ["1/(1 + r**2 + r**4)", "1/(1 + r**4)", "(1 - r**2)/(1 + r**2)**3", "1/(1 + r**4)**2"]
REAL = ["1/((1 + r**2)*(4 + r**2))", "(3 + r**2)/((1 + r**2)**2*(2 + r**2))"]


def _terms(formula):
    kind, params = _recognise(sk.RadialKernel.from_string(formula))
    assert kind == "rational_r2", (formula, kind)
    return params


def _closed_form_mp(params, dim, rho, dps=60):
    """sum_j c_j (2 pi)^(-d/2) 2^(1-n) / Gamma(n) (rho/z)^(n - d/2) K_(d/2 - n)(z rho) at ``dps`` digits."""
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
        return mpmath.re(total)


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


@pytest.mark.parametrize("formula", COMPLEX[:2] + REAL[:1])
@pytest.mark.parametrize("dim", [1, 3])
def test_density_against_fourier_quadrature(formula, dim):
    t = closed_form(sk.RadialKernel.from_string(formula), dim)
    for rho in (0.05, 0.7, 2.3, 6.0):
        ref, err = _fourier(formula, dim, rho)
        assert abs(t.mu(rho) - ref) <= t.rel_error * abs(ref) + 10 * err + 1e-14, (
            formula,
            dim,
            rho,
            t.mu(rho),
            ref,
        )


@pytest.mark.parametrize("formula", ["1/(1 + r**4)", "1/((1 + r**2)*(4 + r**2))"])
@pytest.mark.parametrize("dim", [2, 16, 256])
def test_density_against_the_closed_form_at_60_digits(formula, dim):
    """From rho = 1e-7 (the terms cancel like rho^-2 there: the interpolated mpmath region) through
    the float64 region to the tail; in logs (the values span 10^+-1900 in d = 256)."""
    params = _terms(formula)
    t = closed_form(sk.RadialKernel.from_string(formula), dim)
    rho = np.array([1e-7, 3e-4, 0.02, 0.4, 1.3, 4.0, 25.0, 120.0])
    la, sg = t.log_abs_mu(rho)
    for x, l_, s_ in zip(rho, la, sg):
        ref = _closed_form_mp(params, dim, x)
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
    """The 60-digit comparison detects a pole moved by 1e-7 (the test is not vacuous)."""
    params = _terms("1/(1 + r**4)")
    moved = dict(params, terms=tuple((c, n, a * (1 + mpmath.mpf("1e-7"))) for c, n, a in params["terms"]))
    t = closed_form(sk.RadialKernel.from_string("1/(1 + r**4)"), 16)
    la, _ = t.log_abs_mu(np.array([1.3]))
    assert abs(la[0] - float(mpmath.log(abs(_closed_form_mp(moved, 16, 1.3))))) > 100 * t.rel_error
