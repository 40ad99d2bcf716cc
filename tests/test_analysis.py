"""Tests of spectralkit._analysis: expansions at 0+, at the support edge, decay at infinity, budget helper.

Expected coefficients are derived by hand (formulas in the comments), not copied from sympy.
"""

import math

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gamma

import spectralkit as sk
from spectralkit import kernels
from spectralkit.kernels import _analysis
from spectralkit.kernels._analysis import KernelAnalysis, analyze
from spectralkit.kernels._parse import R

F = kernels.RadialKernel.from_string
PI = math.pi
# sympy needs 1-7 s for the sphere kernels' acos/sqrt expansions; a generous budget keeps these
# tests symbolic on a loaded machine (the numeric fallback is tested separately below)
SLOW_BUDGET = 120.0


def assert_terms(actual, expected, rtol=1e-12):
    """Compare tuples of terms elementwise (coefficients relative, exponents/log powers exact)."""
    assert len(actual) >= len(expected), (actual, expected)
    for got, want in zip(actual, expected):
        assert got[1:] == pytest.approx(want[1:], abs=1e-12), (actual, expected)
        assert got[0] == pytest.approx(want[0], rel=rtol, abs=1e-300), (actual, expected)


def matern_leading(nu, l):
    # x^nu K_nu(x) = Gamma(nu)Gamma(1-nu)/2 [x^nu I_-nu(x) - x^nu I_nu(x)], x = sqrt(2 nu) r / l;
    # the first odd-power part -x^(2 nu)/(2^nu Gamma(nu+1)) gives -Gamma(1-nu)/Gamma(1+nu) (nu/(2 l^2))^nu r^(2 nu).
    return -gamma(1 - nu) / gamma(1 + nu) * (nu / (2 * l * l)) ** nu


# ---------------------------------------------------------------------------------------------
# library kernels
# ---------------------------------------------------------------------------------------------
def test_gaussian():
    a = analyze(kernels.gaussian(0.7))
    assert isinstance(a, KernelAnalysis)
    assert a.value_at_zero == 1.0 and a.bounded
    assert a.origin_terms == () and a.smooth_at_origin and a.edge_terms == ()
    assert a.decay == "super-exponential" and math.isnan(a.decay_rate)
    assert a.method == "sympy-series"


def test_laplacian():
    # exp(-r/2) = sum (-r/2)^n / n!: odd terms -r/2, -r^3/48, -r^5/3840
    a = analyze(kernels.laplacian(2.0))
    assert_terms(a.origin_terms, [(-0.5, 1.0, 0), (-1 / 48, 3.0, 0), (-1 / 3840, 5.0, 0)])
    assert not a.smooth_at_origin
    assert a.decay == "exponential" and a.decay_rate == pytest.approx(0.5, rel=1e-10)
    assert a.value_at_zero == 1.0 and a.bounded


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, 0.7])
def test_matern_non_integer(nu):
    l = 1.3
    a = analyze(kernels.matern(nu, l))
    assert len(a.origin_terms) == 3
    # exponents 2 nu, 2 nu + 2, 2 nu + 4 (the x^nu I_nu series), all non-even
    assert [t[1] for t in a.origin_terms] == pytest.approx([2 * nu, 2 * nu + 2, 2 * nu + 4], abs=1e-12)
    assert all(t[2] == 0 for t in a.origin_terms)
    assert a.origin_terms[0][0] == pytest.approx(matern_leading(nu, l), rel=1e-12)
    # next term: the series of x^nu I_nu has ratio (x/2)^2 / (nu + 1) between consecutive terms
    ratio = (2 * nu / l**2) / 4 / (nu + 1)
    assert a.origin_terms[1][0] == pytest.approx(matern_leading(nu, l) * ratio, rel=1e-12)
    assert a.decay == "exponential" and a.decay_rate == pytest.approx(math.sqrt(2 * nu) / l, rel=1e-10)
    assert a.value_at_zero == pytest.approx(1.0, rel=1e-14) and a.bounded


def test_matern_half_integer_leading_terms():
    # nu = 3/2: (1 + s r) e^(-s r), s = sqrt 3: r^3 coefficient s^3/3; nu = 5/2: -s^5/45 with s = sqrt 5
    s3, s5 = math.sqrt(3), math.sqrt(5)
    assert_terms(analyze(kernels.matern(1.5)).origin_terms[:1], [(s3**3 / 3, 3.0, 0)])
    assert_terms(analyze(kernels.matern(2.5)).origin_terms[:1], [(-(s5**5) / 45, 5.0, 0)])


def test_matern_integer_nu_has_log_terms():
    # x K_1(x) = 1 + (x^2/2) log(x/2) + ...: with x = sqrt(2) r / l the r^2 log r coefficient is 1/l^2;
    # x K_1(x) = 1 + sum_k x^(2k+2) log(x) / (4^k k! (k+1)!) / 2 * ... -> r^4 log r: x^4/16 = r^4/(4 l^4)
    l = 1.5
    a = analyze(kernels.matern(1.0, l))
    assert_terms(a.origin_terms, [(1 / l**2, 2.0, 1), (1 / (4 * l**4), 4.0, 1)])
    assert a.decay == "exponential" and a.decay_rate == pytest.approx(math.sqrt(2) / l, rel=1e-10)


@pytest.mark.parametrize("alpha", [1.5, 0.5])
def test_exponential_power(alpha):
    l = 2.0
    c = l**-alpha
    # exp(-c r^alpha) = 1 - c r^alpha + c^2 r^(2 alpha)/2 - c^3 r^(3 alpha)/6: all three non-even
    a = analyze(kernels.exponential_power(alpha, l))
    assert_terms(a.origin_terms, [(-c, alpha, 0), (c**2 / 2, 2 * alpha, 0), (-(c**3) / 6, 3 * alpha, 0)])
    if alpha > 1:
        assert a.decay == "super-exponential"
    else:  # stretched exponential: faster than any power, slower than exponential
        assert a.decay == "power" and a.decay_rate == math.inf


def test_user_formula_exponential_power():
    a = analyze(F("exp(-r**1.5)"))
    assert_terms(a.origin_terms, [(-1.0, 1.5, 0), (0.5, 3.0, 0), (-1 / 6, 4.5, 0)])


@pytest.mark.parametrize("alpha,l", [(2.0, 1.0), (0.5, 3.0)])
def test_rational_quadratic(alpha, l):
    a = analyze(kernels.rational_quadratic(alpha, l))
    assert a.smooth_at_origin and a.origin_terms == ()
    assert a.decay == "power" and a.decay_rate == pytest.approx(2 * alpha, rel=1e-10)


@pytest.mark.parametrize(
    "a_,p,expected",
    [
        # (1 - r^2/a^2)^p at r = 2 - t: (1 - 4/a^2 + 4t/a^2 - t^2/a^2)^p
        (3.0, 1, [(5 / 9, 0.0), (4 / 9, 1.0), (-1 / 9, 2.0)]),
        (2.0, 2, [(1.0, 2.0), (-0.5, 3.0), (1 / 16, 4.0)]),  # (t - t^2/4)^2
        (2.0, 3, [(1.0, 3.0), (-0.75, 4.0), (3 / 16, 5.0)]),  # (t - t^2/4)^3
    ],
)
def test_spherical_polynomial_edge(a_, p, expected):
    a = analyze(kernels.spherical_polynomial(a_, p))
    assert a.smooth_at_origin and a.value_at_zero == 1.0 and a.bounded
    assert a.decay == "compact" and math.isnan(a.decay_rate)
    assert len(a.edge_terms) == 3
    for (c, b), (c0, b0) in zip(a.edge_terms, expected):
        assert b == b0 and c == pytest.approx(c0, rel=1e-12)


def test_ntk_relu_sphere():
    # acos(r^2/2 - 1) = pi - 2 asin(r/2): k = 2 - r/pi - r^2 + 19 r^3/(24 pi) + ...
    # at r = 2 - t: acos(1 - 2t + t^2/2) = 2 sqrt(t) + ..., so k = -2 sqrt(t)/pi + 79 t^(3/2)/(12 pi) + ...
    a = analyze(kernels.ntk_relu_sphere(), budget=SLOW_BUDGET)
    assert a.value_at_zero == pytest.approx(2.0, rel=1e-14) and a.bounded
    assert_terms(a.origin_terms, [(-1 / PI, 1.0, 0), (19 / (24 * PI), 3.0, 0)])
    assert_terms(a.edge_terms, [(-2 / PI, 0.5), (79 / (12 * PI), 1.5)])
    k = kernels.ntk_relu_sphere()
    t = 1e-8  # independent numeric check of the square-root edge
    assert k(2 - t) / math.sqrt(t) == pytest.approx(-2 / PI, rel=1e-6)


def test_arccos0_sphere():
    # 1 - acos(1 - r^2/2)/pi = 1 - (2/pi) asin(r/2) = 1 - r/pi - r^3/(24 pi) - ...
    a = analyze(kernels.arccos0_sphere(), budget=SLOW_BUDGET)
    assert_terms(a.origin_terms, [(-1 / PI, 1.0, 0), (-1 / (24 * PI), 3.0, 0)])
    assert_terms(a.edge_terms, [(2 / PI, 0.5), (1 / (12 * PI), 1.5)])


def test_arccos1_sphere_edge_numeric():
    # independent of sympy: k(2 - t) / t^(3/2) -> 8/(3 pi) (beta = 3/2, not 1/2)
    k = kernels.arccos1_sphere()
    for t in (1e-3, 1e-4):
        assert k(2 - t) / t**1.5 == pytest.approx(8 / (3 * PI), rel=2e-3)


@pytest.mark.slow
def test_arccos1_sphere_edge_is_three_halves():
    # u (pi - acos u) + sqrt(1 - u^2) with u -> -1: the two square roots cancel, leaving
    # (8/(3 pi)) t^(3/2): beta = 3/2, not 1/2 (the papers group it with the square-root edges).
    a = analyze(kernels.arccos1_sphere(), budget=SLOW_BUDGET)
    assert_terms(a.origin_terms, [(1 / (3 * PI), 3.0, 0)])
    assert_terms(a.edge_terms, [(8 / (3 * PI), 1.5)])
    k = kernels.arccos1_sphere()
    t = 1e-4
    assert k(2 - t) / t**1.5 == pytest.approx(8 / (3 * PI), rel=1e-3)


def test_log_kernel():
    s = 2.0
    a = analyze(kernels.log_kernel(s))
    # -log(1 + r/s) = -r/s + r^2/(2 s^2) - r^3/(3 s^3) + ...
    assert_terms(a.origin_terms, [(-1 / s, 1.0, 0), (-1 / (3 * s**3), 3.0, 0), (-1 / (5 * s**5), 5.0, 0)])
    assert a.value_at_zero == 0.0
    assert a.decay == "growth" and not a.bounded


# ---------------------------------------------------------------------------------------------
# formulas
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("formula", ["(1 - r**2)*exp(-r**2/2)", "exp(-r**2/2) * cos(r)"])
def test_smooth_super_exponential_formulas(formula):
    a = analyze(F(formula))
    assert a.smooth_at_origin and a.origin_terms == ()
    assert a.decay == "super-exponential" and a.bounded and a.value_at_zero == 1.0


# even and analytic at 0: the expansion is skipped, and must give what the expansion gives
_EVEN_ANALYTIC = [
    "exp(-r**2/2)*cos(3*r)/(1 + r**2)",
    "cos(r)*(1 + r**2)**(-0.7)*(3 + r**2)**(-1.2)",
    "exp(-sqrt(r**2 + 2))*cos(2*r)",
    "r*sin(r)*exp(-r**2)",
    "exp(-r**2)*r*atan(r)",
    "tanh(1/(1 + r**2))",
    "log(2 + r**2)*exp(-r**2)",
    "besselj(1, r)*besselj(3, 2*r)*exp(-r**2)",
    "besseli(0, r)*exp(-r**2)",
    "exp(-r**2)*(1 - r**2)**3/(2 + cosh(r))",
    "sech(r)*erf(r)/erf(1 + r**2)*sinh(r)",
    "sin(r)/r",  # removable at the origin: k(0) from a short expansion
    "exp(-r**2)*sin(r)*sin(2*r)/r**2",
    "besselj(1, r)**3/r**3 + exp(-sqrt(r**2 + 1))*sin(r)/r",
]
# not shown even and analytic (each has a non-smooth term at 0, or a form the predicate declines)
_NOT_SHOWN = [
    "exp(-r)*(1 + r)",
    "r*exp(-r)*sin(2*r)*besselj(1, r)",
    "cos(sqrt(r))",
    "exp(-r**2)*r",
    "besselj(1/2, r)",
    "exp(-r**2.5)",
    "r**2*exp(-r**2)*log(r)",
    "(1 + r)**(-1/2)",
    "exp(-r**2)*erf(r)",
    "sin(r)/r**3",  # a pole of order 2 left
    "sin(r)**2/r**3",
    "(1 - exp(-r))**2/r**2",
    "exp(-sqrt(r**2 + r))",
    "log(r**2)*exp(-r**2)",
]


@pytest.mark.parametrize("formula", _EVEN_ANALYTIC)
def test_even_analytic_kernels_skip_the_expansion_and_agree_with_it(formula, monkeypatch):
    expr = F(formula).expr
    assert _analysis._parity_if_analytic(expr) == _analysis._EVEN
    fast = _analysis._symbolic_origin(expr, None)
    monkeypatch.setattr(_analysis, "_parity_if_analytic", lambda e: None)
    # the cascade to order 10 (a non-smooth term would show by then in every formula here): the
    # order-14 expansions of the first and sixth formulas alone took 3-4 s each
    monkeypatch.setattr(_analysis, "_ORDERS", _analysis._ORDERS[:-1])
    series = _analysis._symbolic_origin(expr, None)
    assert fast == series and fast[1] == ()


@pytest.mark.parametrize("formula", _NOT_SHOWN)
def test_kernels_not_shown_even_and_analytic_are_expanded(formula):
    assert _analysis._parity_if_analytic(F(formula).expr) != _analysis._EVEN


def test_parity_of_odd_and_mixed_forms():
    P = _analysis._parity_if_analytic
    assert P(R) == P(sympy.sin(R) * sympy.cosh(R)) == P(sympy.besselj(3, R)) == _analysis._ODD
    assert P(R**3 * sympy.exp(-(R**2))) == P(sympy.tanh(R**3)) == _analysis._ODD
    assert P(R + R**2) is None and P(sympy.exp(R)) is None and P(sympy.besselj(0, R) + R) is None
    assert P((R**2 - 1) ** sympy.Rational(1, 3)) is None  # a negative base under a cube root
    assert P(1 / (R**2 - 1)) == _analysis._EVEN  # a pole at r = 1, not at the origin
    assert P(sympy.sin(R) ** 3 / R**2) == _analysis._ODD and P(sympy.besselj(3, R) / R) == _analysis._EVEN
    assert P(sympy.sin(R) * sympy.cos(R) / R**2) is None  # vanishes to order 1 only
    # sin(r)/r does not vanish at 0: its square leaves a pole beside r^-2 (kept unflattened)
    nested = sympy.Mul(sympy.Pow(sympy.sin(R) / R, 2, evaluate=False), R**-2, evaluate=False)
    assert P(nested) is None
    assert P(sympy.Mul(sympy.Pow(sympy.sin(R) ** 2 / R, 2, evaluate=False), R**-2, evaluate=False)) == 0


@pytest.mark.parametrize("formula", ["exp(-r**2)*cosh(r)", "exp(-r**2)*besseli(0, r)", "exp(-r**2/2)*exp(r)"])
def test_float_overflow_of_a_factor_is_not_a_pole(formula):
    """cosh(r) overflows float64 beyond r = 710, and exp(-r^2) cosh(r) evaluates to inf * 0 there: a
    bounded kernel (it was called unbounded, and DIVERGENT, before RadialKernel redid such points in
    mpmath)."""
    assert analyze(F(formula)).bounded
    assert F(formula)(800.0) == 0.0  # the kernel itself: float64 gives inf * 0 = nan there
    assert not analyze(F("1/(1 - r)")).bounded  # a real pole still is one
    rep = sk.check_rkks(F(formula), 3)
    assert rep.verdict in ("PD", "RKKS")


def test_one_over_r_is_unbounded():
    a = analyze(F("1/r"))
    assert a.value_at_zero == math.inf and not a.bounded
    assert a.origin_terms == ((1.0, -1.0, 0),)
    assert a.decay == "power" and a.decay_rate == pytest.approx(1.0, rel=1e-10)


@pytest.mark.parametrize(
    ("formula", "rate"),
    [
        ("1 - tanh(r)", 2.0),
        ("log(1 + exp(-r))", 1.0),
        ("1 - erf(r)", None),
        ("(1 - tanh(r))*cos(r)", 2.0),
        ("erf(r)/r - erf(r/2)/r", None),  # (1 - erfc(r))/r - (1 - erfc(r/2))/r: distributed first
    ],
)
def test_cancellation_at_large_r_is_not_a_compact_support(formula, rate):
    """At r = 1e10 these formulas are 1 - 1 or log(1) at any fixed precision: they were called
    compactly supported (and refused from d = 16 on). Rewritten without the cancellation, they decay."""
    a = analyze(F(formula))
    if rate is None:
        assert a.decay == "super-exponential"
    else:
        assert a.decay == "exponential" and a.decay_rate == pytest.approx(rate, rel=1e-6)


def test_a_compact_formula_stays_compact():
    """The decay probes of a formula that is 0 beyond r = 1 (no support declared to the probes): the
    rewrite without cancellation leaves it 0, so it stays compact (a rewrite that did not would
    classify it as decaying)."""
    expr = sympy.sympify("Heaviside(1 - r)*(1 - r)**3", locals={"r": R})
    assert _analysis._decay(expr)[0] == "compact"


@pytest.mark.parametrize("d", [16, 256])
def test_logistic_forms_are_pd_in_high_d(d):
    for formula, k0 in (("1 - tanh(r)", 1.0), ("log(1 + exp(-r))", math.log(2.0))):
        rep = sk.check_rkks(F(formula), d)
        assert rep.verdict == "PD", formula
        assert abs(rep.mass_plus.value - k0) <= rep.mass_plus.error + 1e-12, formula


@pytest.mark.parametrize("formula", ["cos(r)", "1 + exp(-r)"])
def test_no_decay(formula):
    a = analyze(F(formula))
    assert a.decay == "none" and math.isnan(a.decay_rate) and a.bounded


def test_oscillating_power_decay_envelope():
    a = analyze(F("cos(r)/(1 + r**2)"))
    assert a.decay == "power" and a.decay_rate == pytest.approx(2.0, abs=1e-3)


@pytest.mark.parametrize(
    ("formula", "rate"),
    [
        # (1 - cos 2r) / (2 r^4) + O(r^-6): never changes sign, oscillating part ~ r^-4
        ("sin(r)**2/(r**2*(1 + r**2))", 4.0),
        ("(2 + cos(r))/(1 + r**2)**2", 4.0),  # cos(r) / r^4 beside 2 / r^4
        ("(1 + cos(3*r))/(1 + r**2)**1.5", 3.0),  # touches 0, never below
        ("besselj(0, r)/(1 + r**2)", 2.5),  # sign-changing too: J0 ~ r^-1/2
    ],
)
def test_an_oscillating_component_is_seen_whether_or_not_k_changes_sign(formula, rate):
    info = analyze(F(formula))
    assert info.oscillation_rate == pytest.approx(rate, abs=0.02)


@pytest.mark.parametrize(
    "formula",
    [
        "1/(1 + r**2)**2",
        "1/(1 + sqrt(r))",
        "log(1 + r)/(1 + r**2)**2",
        "1/(1 + r)**3.5",
        "(1 - exp(-r**2))/r**2",
    ],
)
def test_smooth_decay_has_no_oscillating_component(formula):
    """Negative controls: a smooth fit follows these to ~1e-12, far below the 1e-8 threshold."""
    assert math.isnan(analyze(F(formula)).oscillation_rate)


def test_support_with_jump_and_interior_pole():
    a = analyze(F("exp(-r**2/2)", support=1.5))
    assert a.edge_terms[0] == (pytest.approx(math.exp(-1.125), rel=1e-12), 0.0)
    assert not analyze(F("1/(1 - r)**2", support=3.0)).bounded  # pole inside the support
    assert not analyze(F("1/cos(r)", support=3.0)).bounded  # pole at pi/2


@settings(max_examples=3, deadline=None)
@given(l=st.floats(0.05, 20.0), alpha=st.floats(0.2, 1.95))
def test_exponential_power_property(l, alpha):
    a = analyze(kernels.exponential_power(alpha, l))
    c, e, lp = a.origin_terms[0]
    assert lp == 0 and e == pytest.approx(alpha, abs=1e-9) and c == pytest.approx(-(l**-alpha), rel=1e-9)


@settings(max_examples=4, deadline=None)
@given(l=st.floats(0.01, 100.0))
def test_laplacian_rate_property(l):
    a = analyze(kernels.laplacian(l))
    assert a.decay == "exponential" and a.decay_rate == pytest.approx(1 / l, rel=1e-8)


# ---------------------------------------------------------------------------------------------
# numeric fallback (sympy forced to fail)
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def sympy_broken(monkeypatch):
    def fail(*args):
        raise NotImplementedError("sympy disabled by the test")

    monkeypatch.setattr(_analysis, "_symbolic_origin", fail)
    monkeypatch.setattr(_analysis, "_symbolic_edge", fail)
    _analysis._analyze_cached.cache_clear()
    yield
    _analysis._analyze_cached.cache_clear()


@pytest.mark.parametrize(
    "kern,origin,edge,tol",
    [
        (kernels.laplacian(2.0), (-0.5, 1.0, 0), None, 1e-9),
        (kernels.matern(0.7, 1.3), (matern_leading(0.7, 1.3), 1.4, 0), None, 1e-6),
        (kernels.matern(1.0, 1.5), (1 / 2.25, 2.0, 1), None, 1e-6),
        (kernels.exponential_power(0.5), (-1.0, 0.5, 0), None, 1e-4),
        (kernels.gaussian(), None, None, 0),
        (kernels.ntk_relu_sphere(), (-1 / PI, 1.0, 0), (-2 / PI, 0.5), 1e-6),
        (kernels.spherical_polynomial(2.0, 2), None, (1.0, 2.0), 1e-6),
        (kernels.spherical_polynomial(3.0, 1), None, (5 / 9, 0.0), 1e-6),
        (F("1/r"), (1.0, -1.0, 0), None, 1e-9),
    ],
)
def test_numeric_fallback(sympy_broken, kern, origin, edge, tol):
    a = analyze(kern)
    assert a.method == "numeric"
    if origin is None:
        assert a.origin_terms == () and a.smooth_at_origin
    else:
        assert len(a.origin_terms) == 1
        c, e, lp = a.origin_terms[0]
        assert (e, lp) == origin[1:]
        assert c == pytest.approx(origin[0], rel=tol)
    if edge is not None:
        ((c, b),) = a.edge_terms
        assert b == edge[1] and c == pytest.approx(edge[0], rel=tol)
    assert a.value_at_zero == pytest.approx(kern.value_at_zero(), rel=1e-9)


@pytest.fixture
def counted_children(monkeypatch):
    """The budget children that analyze starts, by step function name (the analysis cache cleared)."""
    started = []
    real = _analysis.run_with_budget

    def counting(func, args=(), seconds=5.0):
        started.append(func.__name__)
        return real(func, args, seconds)

    monkeypatch.setattr(_analysis, "run_with_budget", counting)
    _analysis._analyze_cached.cache_clear()
    yield started
    _analysis._analyze_cached.cache_clear()


@pytest.mark.parametrize("formula,support", [("exp(-r)*cos(2*r)/(1 + r**2)", None), ("(1 - r)**3", 1.0)])
def test_one_child_for_the_expansion_and_the_decay_or_edge(counted_children, formula, support):
    a = analyze(F(formula, support=support))
    assert counted_children == ["_steps"] and a.method == "sympy-series"


def _spin_forever(*args):
    while True:
        pass


def test_a_step_out_of_time_falls_back_alone(counted_children, monkeypatch):
    """The expansion at 0+ spins past its budget (interrupted by its timer, not by the child's limit):
    numeric evidence for it, the decay still from the same child, no second child."""
    monkeypatch.setattr(_analysis, "_symbolic_origin", _spin_forever)
    a = analyze(kernels.laplacian(2.0), budget=1.0)
    assert counted_children == ["_steps"]
    assert a.method == "numeric" and a.decay == "exponential"
    ((c, e, lp),) = a.origin_terms[:1]
    assert (e, lp) == (1.0, 0) and c == pytest.approx(-0.5, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# analyze: validation and caching
# ---------------------------------------------------------------------------------------------
def test_analyze_rejects_combinations_and_non_kernels():
    with pytest.raises(TypeError, match="combination"):
        analyze(kernels.delta_gaussian())
    with pytest.raises(TypeError, match="RadialKernel"):
        analyze("exp(-r)")
    with pytest.raises(ValueError, match="budget"):
        analyze(kernels.gaussian(), budget=0)


def test_analyze_is_cached():
    k = kernels.gaussian(1.234)
    assert analyze(k) is analyze(kernels.gaussian(1.234))
