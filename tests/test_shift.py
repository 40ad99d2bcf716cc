"""The shift formula in one dimension (transforms/_dispatch._shift_route): cos(b r) g(r) for any envelope g
that some route transforms, mu_1(rho) = (F(|rho - b|) + F(rho + b))/2.

References for F, independent of the library: (2/pi) int_0^inf u e^-u cos(t u^2) du for exp(-sqrt(r))
(r = u^2: a smooth integrand, mpmath at 30 digits; exp(-sqrt(r)) cos(r) itself is now the Bernstein
mixture's, whose exact offsets are checked here); mpmath.quad of g(r) cos(t r) for envelopes that decay
fast; mpmath's quadosc otherwise, for t >= 0.3 (its extrapolation is unreliable for slower
oscillations, t -> 0).
"""

import math

import mpmath
import numpy as np
import pytest

import spectralkit as sk
from spectralkit.exceptions import TransformError


def _f_stretched(t):
    with mpmath.workdps(30):
        return (
            2
            / mpmath.pi
            * mpmath.quad(
                lambda u: u * mpmath.exp(-u) * mpmath.cos(t * u * u), [*range(0, 81, 2), mpmath.inf]
            )
        )


def _f_quadosc(g):
    def f(t):
        with mpmath.workdps(20):
            return mpmath.quadosc(lambda r: g(r) * mpmath.cos(t * r), [0, mpmath.inf], omega=t) / mpmath.pi

    return f


def _f_quad(g):
    """F(t) = (1/pi) int g(r) cos(t r) dr by mpmath.quad on doubling pieces (30 digits): for envelopes
    that decay fast, where quadosc's extrapolation is off by ~1e-10 at t = 0.3."""

    def f(t):
        with mpmath.workdps(30):
            return (
                mpmath.quad(lambda r: g(r) * mpmath.cos(t * r), [0, 1, 2, 4, 8, 16, 32, mpmath.inf])
                / mpmath.pi
            )

    return f


CASES = [
    # (exp(-sqrt(r)) cos(r), whose envelope is completely monotone, is now the Bernstein mixture's:
    # tests/test_monotone_oscillation.py; the shift formula keeps exponential powers above 1)
    (
        "exp(-r**1.5)*cos(r)",
        1.0,
        _f_quad(lambda r: mpmath.exp(-(r**1.5))),
        "series:exponential-power",
    ),
    # (cos(2r) exp(-r^2)/(1 + r^2) is now split at its pole, an entire Gaussian oscillation plus a
    # Gaussian mixture, in every d: tests/test_gauss_poles.py; poles on the imaginary axis stay here)
    (
        "cos(2*r)*exp(-r**2)/(1 + r**4)",
        2.0,
        _f_quadosc(lambda r: mpmath.exp(-r * r) / (1 + r**4)),
        "numeric:gauss-legendre+steepest-descent",
    ),
    # (cos(r)/(1 + r)^2, a completely monotone envelope, is now the Bernstein mixture's in every d:
    # tests/test_monotone_oscillation.py)
]


@pytest.mark.parametrize("formula,b,f_ref,route", CASES, ids=[c[0] for c in CASES])
def test_density_is_the_shifted_envelope_transform(formula, b, f_ref, route):
    t = sk.SpectralMeasure(sk.RadialKernel.from_string(formula), dim=1).transforms[0][1]
    assert t.method == f"shift:{route}"
    for rho in (1.3 * b, 2.5 * b + 0.3):
        ref = (f_ref(abs(rho - b)) + f_ref(rho + b)) / 2
        assert abs(t.mu(rho) / float(ref) - 1) <= max(t.rel_error, 1e-12), (rho, t.mu(rho), ref)


def test_next_to_the_kink_the_exact_offsets_are_used():
    """mu(b + off) = (F(|off|) + F(2b + off))/2 at offsets far below the resolution of rho itself."""
    t = sk.SpectralMeasure(sk.RadialKernel.from_string("exp(-sqrt(r))*cos(r)"), dim=1).transforms[0][1]
    off = np.array([-1e-12, 1e-12])
    got = t.mu_at_offset(1.0, off)
    near = float(_f_stretched(1e-12))  # F(|off|): the same for both offsets, integrated once
    ref = [(near + float(_f_stretched(2 + o))) / 2 for o in off]
    np.testing.assert_allclose(got, ref, rtol=1e-9)


@pytest.mark.parametrize(
    "formula,verdict,k0",
    [
        ("exp(-r**1.5)*cos(r)", "PD", 1.0),
        ("cos(r)*(1 + r**2)**(-0.7)*(3 + r**2)**(-1.2)", "PD", 3.0**-1.2),
        # (over 1 + r^2 it is now split at the poles: tests/test_gauss_poles.py)
        ("cos(3*r)*exp(-r**2/4)*(1 - 2*r**2)/(1 + r**4)", "RKKS", 1.0),
    ],
)
def test_masses(formula, verdict, k0):
    """F >= 0 gives a PD kernel with m+ = k(0); a signed F (the numeric transform of a Gaussian times a
    rational function) an RKKS one with m+ - m- = k(0)."""
    rep = sk.check_rkks(sk.RadialKernel.from_string(formula), dim=1)
    assert rep.method.startswith("shift:")
    assert rep.verdict == verdict
    assert abs(rep.mass_plus.value - rep.mass_minus.value - k0) <= rep.mass_plus.error + rep.mass_minus.error
    # the signed F here is numeric (stated 1.8e-7 for the masses); the closed-form F's state ~1e-10
    assert rep.mass_plus.error < 1e-6


def test_only_in_one_dimension():
    """d >= 2 needs the dimension walk of the envelope's transforms, built for rational envelopes only
    (tests/test_rational_oscillation.py): a product of fractional powers is still refused."""
    formula = "cos(r)*(1 + r**2)**(-0.7)*(3 + r**2)**(-1.2)"
    with pytest.raises(TransformError, match="not smooth at the oscillation's frequency"):
        sk.check_rkks(sk.RadialKernel.from_string(formula), dim=3)
    assert math.isfinite(sk.check_rkks(sk.RadialKernel.from_string(formula), dim=1).mass_plus.value)
