"""Error bars of the numeric paths: every stated error must bound the true error (issue 15, item 7).

Kernels without closed forms (Gaussians times rational, log, erf and atan factors, stretched
exponentials over rational envelopes, a compact non-polynomial kernel) in d = 1 ... 64:

* masses: for positive definite kernels (products of PD functions: Gaussian scale mixtures,
  completely monotone functions of r^2 and of r) the truth is exact, m+ = k(0), m- = 0; the stated
  errors of ``mass_plus`` / ``mass_minus`` must cover it and stay useful (<= 1e-3), or the kernel is
  refused with the reason that the masses are not accurate enough (never a confident wrong answer);
* densities: mu(rho) against an independent mpmath Hankel integral at 40 digits (stored in
  tests/reference/error_bars_mpmath.json by tests/reference/make_references.py; test_references.py
  recomputes the cheapest cases live): |mu - ref| <= rel_error |ref| + abs_error max|mu|.

The d = 10 Gaussian-times-rational case is the one the issue reports (m+ = 0.9999998965 +- 2.9e-10
against a true 1): the numeric transform set mu to 0 where its quadrature reached the rounding
floor, and the radial weight rho^(d-1) turned that into a mass error no stated error carried. Now
mu is continued there on a shifted line (docs/theory.md, "Error bars of the numeric transform"),
and ``RadialTransform.mass_error`` states what the radial weight makes of the remaining errors.
"""

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from spectralkit.exceptions import AccuracyWarning, TransformError
from spectralkit.kernels import RadialKernel
from spectralkit.measures import SpectralMeasure
from spectralkit.transforms import numeric_transform

#: PD kernels without closed forms (k(0) = 1, so m+ = 1 and m- = 0 exactly).
PD_KERNELS = [
    "exp(-r**2)/(1 + r**2)",
    "exp(-r**2)/(1 + r**2)**2",
    "exp(-r**2/2)/sqrt(1 + r**2)",
    "exp(-r**1.5)/(1 + r)",
    "exp(-r**2)/(1 + log(1 + r**2))",
]

#: mpmath versions of the kernels whose densities are checked (the references' integrands).
MP_KERNELS = {
    "exp(-r**2)/(1 + r**2)": lambda r: mp.exp(-(r**2)) / (1 + r**2),
    "exp(-r**2)*(1 + r**2)/(2 + r**2)": lambda r: mp.exp(-(r**2)) * (1 + r**2) / (2 + r**2),
    "exp(-r**1.5)/(1 + r)": lambda r: mp.exp(-(r**1.5)) / (1 + r),
    "exp(-r**2)*atan(1 + r**2)": lambda r: mp.exp(-(r**2)) * mp.atan(1 + r**2),
    "exp(-r**2)*erf(1 + r**2)": lambda r: mp.exp(-(r**2)) * mp.erf(1 + r**2),
    "exp(-r**2)/(1 + log(1 + r**2))": lambda r: mp.exp(-(r**2)) / (1 + mp.log(1 + r**2)),
}

DENSITY_DIMS = (1, 3, 10, 16)
DENSITY_RHO = (0.5, 3.0, 10.0)


def _top(kernel):
    """Where the integrand is below 1e-60 of its peak."""
    return 25 if "1.5" in kernel else 13


def mu_error_bars_mpmath(kernel, d, rho, dps):
    """(2 pi)^(-d/2) int_0^top k(r) r^(d-1) Lambda_nu(rho r) dr, nu = d/2 - 1, Lambda_nu(x) = x^-nu J_nu(x),
    for the kernel written in mpmath under its formula in MP_KERNELS: mpmath tanh-sinh quadrature at
    dps digits on panels shorter than 2/rho (top: 13 for Gaussian envelopes, 25 for exp(-r^1.5),
    where the integrand is below 1e-54 of its peak)."""
    with mp.workdps(dps):
        k = MP_KERNELS[kernel]
        nu = mp.mpf(d) / 2 - 1
        rho = mp.mpf(rho)
        top = _top(kernel)

        def lam(x):
            return mp.besselj(nu, x) / x**nu if x != 0 else 1 / (2**nu * mp.gamma(nu + 1))

        n = max(8, int(math.ceil(top * float(rho) / 2)))
        pts = [mp.mpf(top) * i / n for i in range(n + 1)]
        val = mp.quad(lambda r: k(r) * r ** (d - 1) * lam(rho * r), pts)
        return (2 * mp.pi) ** (-mp.mpf(d) / 2) * val


# the whole grid MP_KERNELS x DENSITY_DIMS: tests/test_mixture.py reads three of the kernels in every d,
# test_density_error_bars below a covering subset (_density_cases)
REFERENCE_SETS = {
    "error_bars_mpmath": (
        mu_error_bars_mpmath,
        30,
        [
            {"kernel": kern, "d": d, "rho": x, "dps": 40}
            for kern in sorted(MP_KERNELS)
            for d in DENSITY_DIMS
            for x in DENSITY_RHO
        ],
    ),
}


def _derive(formula, d):
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)  # a stated error that fails Bochner
        m = SpectralMeasure(RadialKernel.from_string(formula), d, sympy_budget=0)
        return m.check_rkks()


#: (formula, d) of the mass checks: every kernel in one or two of d = 1, 10, 16, 64 and every d with two
#: kernels (all take the one numeric route here, the Gaussian mixture with Talbot's psi; the kernel not
#: smooth at 0 in d = 10 and 64; exp(-r^2)/(1 + r^2) in d = 10 is test_issue_case_d10)
PD_MASS_CASES = [
    ("exp(-r**2)/(1 + r**2)", 1),
    ("exp(-r**2)/(1 + log(1 + r**2))", 1),
    ("exp(-r**2)/(1 + r**2)**2", 10),
    ("exp(-r**1.5)/(1 + r)", 10),
    ("exp(-r**2/2)/sqrt(1 + r**2)", 16),
    ("exp(-r**2)/(1 + log(1 + r**2))", 16),
    ("exp(-r**2)/(1 + r**2)", 64),
    ("exp(-r**1.5)/(1 + r)", 64),
]
assert {f for f, _ in PD_MASS_CASES} == set(PD_KERNELS)


@pytest.mark.parametrize(("formula", "d"), PD_MASS_CASES)
def test_pd_masses_are_covered_by_their_error_bars(formula, d):
    """m+ = 1, m- = 0 within the stated errors (which stay <= 1e-3), or an honest refusal in high d."""
    try:
        rep = _derive(formula, d)
    except TransformError as exc:
        # the only acceptable refusal: the masses cannot be stated accurately (never below d = 16)
        assert d > 16, (formula, d, str(exc))
        assert "not accurate enough" in str(exc) or "relative error" in str(exc), str(exc)
        return
    assert rep.verdict == "PD", (formula, d, rep.verdict)
    mp_, mm = rep.mass_plus, rep.mass_minus
    assert abs(mp_.value - 1.0) <= mp_.error, (formula, d, mp_)
    assert mm.value <= mm.error, (formula, d, mm)
    assert mp_.error <= 1e-3 and mm.error <= 1e-3, (formula, d, mp_, mm)


def test_issue_case_d10():
    """The issue's case: exp(-r^2)/(1 + r^2) in d = 10, a true m+ = 1 that was 350 stated errors away."""
    rep = _derive("exp(-r**2)/(1 + r**2)", 10)
    err = abs(rep.mass_plus.value - 1.0)
    assert err <= rep.mass_plus.error <= 1e-8  # covered, and useful


def _density_cases():
    """Every kernel of MP_KERNELS in one or two of DENSITY_DIMS and every d with two kernels (all on
    the one numeric route, the Hankel transform; the issue's exp(-r^2)/(1 + r^2) in its d = 10)."""
    return [
        ("exp(-r**2)*(1 + r**2)/(2 + r**2)", 1),
        ("exp(-r**1.5)/(1 + r)", 1),
        ("exp(-r**2)/(1 + log(1 + r**2))", 3),
        ("exp(-r**2)*erf(1 + r**2)", 3),
        ("exp(-r**2)/(1 + r**2)", 10),
        ("exp(-r**1.5)/(1 + r)", 10),
        ("exp(-r**2)*atan(1 + r**2)", 16),
        ("exp(-r**2)/(1 + r**2)", 16),
    ]


assert {k for k, _ in _density_cases()} == set(MP_KERNELS)


@pytest.mark.parametrize("kernel,d", _density_cases())
def test_density_error_bars(kernel, d, stored_reference):
    """The numeric transform's mu against the stored mpmath references: within its stated errors."""
    ref_set = stored_reference("error_bars_mpmath")
    try:
        t = numeric_transform(RadialKernel.from_string(kernel), d)
    except TransformError:
        pytest.skip("refused")  # a refusal states no error; the mass test covers refusals
    peak = t.mu.max_abs
    for x in DENSITY_RHO:
        ref = ref_set(kernel=kernel, d=d, rho=x, dps=40)
        got = float(t.mu(np.array([x]))[0])
        bound = t.rel_error * abs(ref) + t.abs_error * peak
        assert abs(got - ref) <= bound, (kernel, d, x, got, ref, bound)


@pytest.mark.parametrize("d", [3, 10])
def test_sympy_route_masses_are_covered(d):
    """The sympy-verified route (a Matern-3/2 typed as a formula; sympy's transform checked against
    the numeric one) states mass errors that cover the exact m+ = 1, m- = 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        m = SpectralMeasure(RadialKernel.from_string("(1 + sqrt(3)*r)*exp(-sqrt(3)*r)"), d, sympy_budget=10.0)
        rep = m.check_rkks()
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - 1.0) <= rep.mass_plus.error <= 1e-6
    assert rep.mass_minus.value <= rep.mass_minus.error


def test_cancelling_terms_carry_their_own_errors():
    """A sum of numeric terms that nearly cancel: each term's relative error applies to its own size
    (both are PD with mass 1), not to the small difference, so the stated mass errors are at least
    sum_i |c_i| rel_i."""
    a = RadialKernel.from_string("exp(-r**2)/(1 + r**2)")
    b = RadialKernel.from_string("exp(-1.001*r**2)/(1 + r**2)")
    m = SpectralMeasure(a - 0.999 * b, 3, sympy_budget=0)
    own = sum(abs(c) * t.rel_error for c, t in m.transforms)
    rep = m.check_rkks()
    assert rep.mass_plus.error + rep.mass_minus.error >= 0.9 * own
    assert abs(rep.k0 - (rep.mass_plus.value - rep.mass_minus.value)) <= rep.k0_tolerance
