"""Truncated powers in r^2, c (1 - r^2/b^2)^nu (any real nu > 0), and DIVERGENT verdicts read from
the support edge alone, against independent references.

References: the power series of mu in rho^2 with the exact moments
M_k = int_0^1 (1 - r^2)^nu r^(d-1+2k) dr = B((d+2k)/2, nu+1)/2 summed in mpmath at 150-300 digits
(independent of the Bessel closed form); far in the tail, mpmath's besselj of Sonine's formula
(the evaluation, not the derivation); masses by Gauss-Legendre quadrature between the zeros of
J_mu (integer orders: scipy.special.jn_zeros) with the asymptotic tail beyond the last zero.
"""

import math

import mpmath
import numpy as np
import pytest
import scipy.special as sc

import spectralkit as sk
from spectralkit.kernels import RadialKernel
from spectralkit.kernels._analysis import analysis_budget, analyze
from spectralkit.kernels._parse import R
from spectralkit.measures._finiteness import _edge_divergence
from spectralkit.transforms import closed_form
from spectralkit.transforms._sonine import _match_truncated_power_r2


def _moment_series(nu, dim, x, dps):
    """J-free reference of mu(rho) for (1 - r^2)^nu on [0, 1] at x = rho (module docstring)."""
    with mpmath.workdps(dps):
        nu, x = mpmath.mpf(nu), mpmath.mpf(x)
        m = mpmath.mpf(dim) / 2 - 1
        total, k = mpmath.mpf(0), 0
        while True:
            moment = mpmath.beta(mpmath.mpf(dim + 2 * k) / 2, nu + 1) / 2
            term = (-1) ** k * (x / 2) ** (2 * k) / (mpmath.factorial(k) * mpmath.gamma(m + k + 1)) * moment
            total += term
            if k > 20 and abs(term) < mpmath.mpf(10) ** (-dps + 10) * abs(total):
                break
            k += 1
        return (2 * mpmath.pi) ** (-mpmath.mpf(dim) / 2) * 2 ** (-m) * total


def _amplitude(nu, dim, x, value):
    """The local amplitude of mu near x (|mu| below the turning point, the envelope |H1| beyond)."""
    with mpmath.workdps(30):
        mu_ = mpmath.mpf(dim) / 2 + nu
        if x < mu_:
            return abs(value)
        pre = (2 * mpmath.pi) ** (-mpmath.mpf(dim) / 2) * 2 ** mpmath.mpf(nu) * mpmath.gamma(nu + 1)
        return pre * abs(mpmath.hankel1(mu_, x)) / mpmath.mpf(x) ** mu_


TRUNCATED_POWERS = [
    ("(1 - r**2)**2.5", 1.0, 1.0, 1.0, 2.5),
    ("(1 - r**2)**80", 1.0, 1.0, 1.0, 80),
    ("3*(4 - r**2)**0.75", 2.0, 3 * 4**0.75, 2.0, 0.75),
    ("max(1 - r**2/3, 0)**7.25", None, 1.0, math.sqrt(3.0), 7.25),
]
MOMENT_DIMS = [1, 2, 3, 16, 64, 256]


#: the kernels in turn over MOMENT_DIMS, two per d: each kernel in three d, one low, one middle and one
#: high (the integer-like nu = 2.5, 80 in d = 1, 3, 64; the scaled nu = 0.75, 7.25 in d = 2, 16, 256)
@pytest.mark.parametrize(
    ("text", "support", "c", "b", "nu", "dim"),
    [(*TRUNCATED_POWERS[i % 4], MOMENT_DIMS[i // 2]) for i in range(2 * len(MOMENT_DIMS))],
)
def test_density_against_the_moment_series(text, support, c, b, nu, dim):
    k = RadialKernel.from_string(text, support=support)
    t = closed_form(k, dim)
    assert t.method == "closed-form:truncated-power-r2"
    assert t.edges == ((b, nu),) and t.tail_exponent == (dim + 1) / 2 + nu
    # k(r) = c (1 - (r/b)^2)^nu: mu(rho) = c b^d mu_1(b rho), mu_1 the transform of (1 - r^2)^nu
    for x in (0.0, 2.5, 20.0, 70.0, 160.0):
        ref = _moment_series(nu, dim, x, dps=160 if x < 100 else 260)
        got = float(t.mu(np.array([x / b]))[0])
        la, sg = t.log_abs_mu(np.array([x / b]))
        amp = float(abs(c) * b**dim * _amplitude(nu, dim, x, ref))
        ref = float(c * b**dim * ref)
        assert abs(got - ref) <= t.rel_error * amp, (x, got, ref)
        assert abs(sg[0] * math.exp(la[0]) - ref) <= t.rel_error * amp


@pytest.mark.parametrize(("nu", "dim"), [(2.5, 1), (0.75, 2), (80, 64), (7.25, 256)])
def test_far_tail_against_mpmath_bessel(nu, dim):
    """rho up to 1e12 (scipy's hankel1e returns 0 or nan beyond ~1e12 at orders ~100) and b = 1.5 (the
    phase b rho must not lose ulp(b rho) radians)."""
    k = RadialKernel.from_string(f"(1 - r**2/2.25)**{nu}", support=1.5)
    t = closed_form(k, dim)
    rho = np.array([0.3e3, 7.77e4, 3.3e7, 1.234e10, 5.0e12])
    log_abs, sign = t.log_abs_mu(rho)  # mu itself underflows in d = 64 (1e-442)
    parts = t.tail_parts(rho)
    with mpmath.workdps(40):
        mu_ = mpmath.mpf(dim) / 2 + nu
        pre = (
            (2 * mpmath.pi) ** (-mpmath.mpf(dim) / 2)
            * 2 ** mpmath.mpf(nu)
            * mpmath.gamma(mpmath.mpf(nu) + 1)
            * mpmath.mpf(1.5) ** dim
        )
        for i, r_ in enumerate(rho):
            x = mpmath.mpf(1.5) * mpmath.mpf(float(r_))
            ref = pre * mpmath.besselj(mu_, x) / x**mu_
            amp = pre * abs(mpmath.hankel1(mu_, x)) / x**mu_
            assert abs(sign[i] * mpmath.exp(log_abs[i]) - ref) <= t.rel_error * amp
            # the tail in parts: mu = exp(s) (A - Re(exp(i b rho) B))
            log_s, a, bb = parts[0][i], parts[1][i], parts[2][i]
            val = mpmath.exp(log_s) * (a - mpmath.re(mpmath.exp(1j * x) * complex(bb)))
            assert abs(val - ref) <= 4 * t.rel_error * amp


def test_matcher_reads_the_class_and_only_it():
    def match(expr, support):
        return _match_truncated_power_r2(expr, support)

    kind, p = match((1 - R**2) ** 80, 1.0)
    assert kind == "truncated_power_r2" and p == {"c": 1.0, "b": 1.0, "nu": 80.0}
    _, p = match(3 * (4 - R**2) ** 1.5, 2.0)
    assert p["c"] == pytest.approx(24.0, rel=1e-15) and p["b"] == 2.0 and p["nu"] == 1.5
    # a float support one ulp below an irrational zero (max(...) of an irrational root) is that zero
    _, p = match((1 - R**2 / 3) ** 2.5, math.sqrt(3.0))
    assert p["b"] == math.sqrt(3.0)
    assert match((1 - R**2 / 9) ** 2.5, 2.0) is None  # truncated before its zero: a jump at 2
    assert match((1 - R**2) ** 2.5 * (1 + R), 1.0) is None
    assert match((1 - R) ** 2.5, 1.0) is None
    assert match((1 + R**2) ** -1.5, None) is None
    assert match((1 - R**2) ** -0.5, 1.0) is None  # unbounded at the edge: not a bounded kernel


def _reference_masses(nu, dim, lobes=8000):
    """(m+, m-) of (1 - r^2)^nu on [0, 1] for an integer order mu = d/2 + nu (module docstring)."""
    mu_ = int(dim / 2 + nu)
    assert mu_ == dim / 2 + nu
    pre = (2 * math.pi) ** (-dim / 2) * 2**nu * math.gamma(nu + 1)
    s = 2 * math.pi ** (dim / 2) / math.gamma(dim / 2)
    zeros = np.concatenate([[0.0], sc.jn_zeros(mu_, lobes)])
    t, w = np.polynomial.legendre.leggauss(24)
    a, b = zeros[:-1, None], zeros[1:, None]
    x = 0.5 * (a + b) + 0.5 * (b - a) * t
    f = s * pre * x ** (dim - 1) * sc.jv(mu_, x) / x**mu_
    lobe = (0.5 * (b - a) * f) @ w
    plus, minus = float(np.sum(lobe[lobe > 0])), float(-np.sum(lobe[lobe < 0]))
    # beyond the last zero |f| ~ E x^p |cos|, E = S pre sqrt(2/pi), p = d - 3/2 - mu: each sign takes
    # 1/pi of the envelope's integral, up to Hankel's correction (4 mu^2 - 1)/(8 x) of it
    p = dim - 1.5 - mu_
    tail = s * pre * math.sqrt(2 / math.pi) / math.pi * zeros[-1] ** (p + 1) / (-(p + 1))
    return plus + tail, minus + tail, 2 * tail * (4 * mu_**2 + 1) / (8 * zeros[-1])


@pytest.mark.parametrize(("nu", "dim"), [(2.5, 1), (2.5, 3), (3.0, 2)])
def test_masses_against_lobe_quadrature(nu, dim):
    rep = sk.check_rkks(RadialKernel.from_string(f"(1 - r**2)**{nu}", support=1.0), dim)
    assert rep.verdict == "RKKS"  # J_mu changes sign: never PD
    ref_plus, ref_minus, ref_err = _reference_masses(nu, dim)
    assert abs(rep.mass_plus.value - ref_plus) <= rep.mass_plus.error + ref_err + 1e-12
    assert abs(rep.mass_minus.value - ref_minus) <= rep.mass_minus.error + ref_err + 1e-12
    assert abs(rep.mass_plus.value - rep.mass_minus.value - 1.0) <= rep.mass_plus.error + rep.mass_minus.error


@pytest.mark.parametrize(
    ("text", "dim", "verdict"),
    [
        ("(1 - r**2)**2.5", 5, "RKKS"),  # finite iff d < 1 + 2 nu = 6
        ("(1 - r**2)**2.5", 6, "DIVERGENT"),
        ("(1 - r**2)**2.5", 256, "DIVERGENT"),
        ("(1 - r**2)**80", 64, "RKKS"),
        ("(1 - r**2)**80", 256, "DIVERGENT"),
    ],
)
def test_verdicts_from_the_edge_exponent(text, dim, verdict):
    rep = sk.check_rkks(RadialKernel.from_string(text, support=1.0), dim)
    assert rep.verdict == verdict
    if verdict == "DIVERGENT":
        assert "finite iff d < 1 + 2*beta" in rep.reason
    else:
        assert (
            abs(rep.mass_plus.value - rep.mass_minus.value - 1.0)
            <= rep.mass_plus.error + rep.mass_minus.error
        )


@pytest.mark.parametrize(
    ("text", "dim", "beta"),
    [
        ("(1 - r)**2.5*exp(-r)", 6, 2.5),
        ("(1 - r)**2.5*exp(-r)", 256, 2.5),
        ("(1 - r)**1.5*(1 + 1.5*r)*exp(-r)", 4, 1.5),
    ],
)
def test_divergence_read_from_the_edge_without_a_transform(text, dim, beta):
    """(1 - r)^2.5 e^-r has the edge e^-1 (1 - r)^2.5, (1 - r)^1.5 (1 + 1.5 r) e^-r the edge
    2.5 e^-1 (1 - r)^1.5: DIVERGENT from sympy's exponents alone, no closed form (without the
    exponential these kernels have one, transforms/_edge_power.py, whose edge decides the same way:
    tests/test_compact_fractional.py)."""
    m = sk.SpectralMeasure(RadialKernel.from_string(text, support=1.0), dim)
    rep = m.check_rkks()
    assert rep.verdict == "DIVERGENT"
    assert f"finite iff d < 1 + 2*beta = {1 + 2 * beta:g}" in rep.reason
    assert rep.method.startswith("analysis of k: support-edge exponents")
    assert m._transforms is None  # no transform was computed


def test_edge_shortcut_keeps_finite_cases():
    # negative control: in d = 5 < 1 + 2 * 2.5 the mass of (1 - r)^2.5 is finite, the shortcut must
    # not decide (its full derivation, numeric, is test_compact_forms' Askey case)
    atom = RadialKernel.from_string("(1 - r)**2.5", support=1.0)
    analyses = {atom: analyze(atom, budget=analysis_budget(5.0))}
    assert _edge_divergence(5, ((1.0, atom),), {atom: None}, analyses) is None
    report = _edge_divergence(6, ((1.0, atom),), {atom: None}, analyses)
    assert report is not None and not report.finite and report.integrand_exponent == -1.0
