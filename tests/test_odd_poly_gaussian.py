"""Polynomials with odd powers times a Gaussian (transforms/_odd_poly_gaussian.py) against
independent references: mpmath's hyp1f1 in the Weber-Kummer formula at 40 digits, itself checked
against the Hankel integral of k (mpmath.quad of k(r) r^(d/2) J_(d/2-1)(rho r)) in d = 1, 3, 16."""

import math

import mpmath
import numpy as np
import pytest

from spectralkit import check_rkks, kernels
from spectralkit.transforms import closed_form
from spectralkit.transforms._closed_forms import _recognise

F = kernels.RadialKernel.from_string


def kummer_mu(coeffs, b, d, rho):
    """mu_d(rho) of sum_m c_m r^m exp(-b r^2): sum_m c_m (4 pi)^(-d/2) Gamma((d+m)/2) /
    (Gamma(d/2) b^((d+m)/2)) 1F1((d+m)/2; d/2; -rho^2/(4 b)) (Weber's integral; mpmath's hyp1f1 at
    40 digits, checked against the Hankel integral below)."""
    with mpmath.workdps(40):
        b, x = mpmath.mpf(b), mpmath.mpf(rho) ** 2 / (4 * mpmath.mpf(b))
        half = mpmath.mpf(d) / 2
        total = mpmath.mpf(0)
        for m, c in enumerate(coeffs):
            if c:
                a = half + mpmath.mpf(m) / 2
                # Kummer: 1F1(a; B; -x) = e^-x 1F1(B - a; B; x); for even m a polynomial, summed
                # here (mpmath's hyp1f1 fails on its exact zeros: 1 - x/128 at x = 128)
                if m % 2:
                    poly = mpmath.hyp1f1(half - a, half, x, maxprec=40000, maxterms=10**6)
                else:
                    j = m // 2
                    poly = mpmath.fsum(
                        mpmath.rf(-j, i) * x**i / (mpmath.rf(half, i) * mpmath.factorial(i))
                        for i in range(j + 1)
                    )
                m1 = mpmath.exp(-x) * poly
                total += c * mpmath.gamma(a) / (mpmath.gamma(half) * b**a) * m1
        return total * (4 * mpmath.pi) ** (-half)


def hankel_mu(coeffs, b, d, rho):
    """mu_d(rho) = (2 pi)^(-d/2) rho^(1-d/2) int k(r) r^(d/2) J_(d/2-1)(rho r) dr (mpmath.quad, 40
    digits): no hypergeometric function involved."""
    with mpmath.workdps(40):
        w, nu = mpmath.mpf(rho), mpmath.mpf(d) / 2 - 1

        def k(r):
            return sum(c * r**m for m, c in enumerate(coeffs)) * mpmath.exp(-mpmath.mpf(b) * r * r)

        # to r = 20: r = 12 cut a tail of 1e-24 of the integral for b = 1/2 in d = 16
        val = mpmath.quad(
            lambda r: k(r) * r ** (nu + 1) * mpmath.besselj(nu, w * r), mpmath.linspace(0, 20, 41)
        )
        return (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2) * w ** (-nu) * val


@pytest.mark.parametrize("d", [1, 3, 16])
def test_the_kummer_reference_is_the_hankel_integral(d):
    for coeffs, b, rho in (([1, 1], 1, 0.7), ([0, 0, 0, 2], 0.5, 3.0), ([1, -1, 1], 1, 6.0)):
        ref, hk = kummer_mu(coeffs, b, d, rho), hankel_mu(coeffs, b, d, rho)
        assert abs(ref / hk - 1) < mpmath.mpf(10) ** -25, (coeffs, d, rho)


CASES = [
    # formula, coefficients of r^m, b, dims
    ("(1 + r)*exp(-r**2)", [1, 1], 1.0, (1, 3, 64, 256)),
    ("r*exp(-r**2)", [0, 1], 1.0, (2, 16)),
    ("(1 + r + r**3)*exp(-r**2/2)", [1, 1, 0, 1], 0.5, (3, 16, 64)),
    ("(1 - r + r**2)*exp(-2*r**2)", [1, -1, 1], 2.0, (5, 256)),
]


@pytest.mark.parametrize("formula,coeffs,b,dims", CASES)
def test_odd_powers_under_a_gaussian_in_every_d(formula, coeffs, b, dims, assert_within_stated_error):
    # (1 + r) exp(-r^2) was refused from d = 64 on (quadrature and steepest descent disagree)
    k0 = coeffs[0]
    for d in dims:
        tr = closed_form(F(formula), d)
        assert tr.method == "closed-form:odd-polynomial-gaussian"
        scale = math.sqrt(4 * b * max(d / 2, 1.0))  # the bulk: x = rho^2/(4 b) ~ d/2
        rhos = [0.1 * scale, scale, 2.5 * scale, 40 * scale]  # the last in the power tail
        refs = [(rho, float(kummer_mu(coeffs, b, d, rho))) for rho in rhos]
        assert_within_stated_error(tr, refs, [0.0, *rhos])
        rep = check_rkks(formula, d)
        # signed in general; (1 - r + r^2) exp(-2 r^2) is PD in d = 5 (its reference is > 0 on a grid)
        assert rep.verdict in ("PD", "RKKS")
        gap = rep.mass_plus.value - rep.mass_minus.value - k0
        assert abs(gap) <= rep.mass_plus.error + rep.mass_minus.error <= 1e-8, (d, gap)


def test_the_tail_is_the_smallest_odd_power():
    tr = closed_form(F("(1 + r**3 + r)*exp(-r**2)"), 16)
    assert tr.tail_exponent == 17.0
    rho = np.array([1e3, 2e3])
    la, _ = tr.log_abs_mu(rho)
    assert abs((la[1] - la[0]) / math.log(2.0) + 17.0) < 1e-3  # mu ~ rho^-(d+1)


def test_only_odd_polynomials_times_a_gaussian_are_matched():
    assert _recognise(F("(1 + r)*exp(-r**2)"))[0] == "odd_poly_gaussian"
    assert _recognise(F("(1 + r**2)*exp(-r**2)"))[0] == "poly_gaussian"  # even: the Laguerre form
    for other in (
        "(1 + r)*exp(-r)",
        "(1 + r)*exp(-r**3)",
        "(1 + r)*exp(-r**2) + exp(-r)",
        "sqrt(r)*exp(-r**2)",
    ):
        match = _recognise(F(other))
        assert match is None or match[0] != "odd_poly_gaussian", other


@pytest.mark.parametrize("d", [16, 64])
def test_a_high_odd_power_states_the_cancellation_of_its_sums(d, assert_within_stated_error):
    # r^9 exp(-r^2): k(0) = 0 and m+- ~ 1e2-1e4; the alternating head of its series cancels digits
    # across the bulk (8 of them in d = 256, where the gap was 9e-4 against stated 3e-5 before the
    # rounding was stated as a floor and a mass error): the stated errors cover the Bochner gap
    rep = check_rkks("r**9*exp(-r**2)", d)
    gap = rep.mass_plus.value - rep.mass_minus.value
    assert abs(gap) <= rep.mass_plus.error + rep.mass_minus.error
    tr = closed_form(F("r**9*exp(-r**2)"), d)
    rhos = [1.0, math.sqrt(2 * d), 3 * math.sqrt(2 * d)]
    refs = [(rho, float(kummer_mu([0] * 9 + [1], 1, d, rho))) for rho in rhos]
    assert_within_stated_error(tr, refs, [0.0, *rhos])
