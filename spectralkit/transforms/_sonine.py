"""Truncated powers in r^2: k(r) = c (1 - r^2/b^2)^nu on [0, b], zero beyond, any real nu > 0.

Sonine's first finite integral, int_0^1 (1 - t^2)^nu t^(m+1) J_m(x t) dt = 2^nu Gamma(nu + 1)
J_(m+nu+1)(x) / x^(nu+1) (m = d/2 - 1, real nu > -1), gives in the convention of
``docs/conventions.md``, with mu_ = d/2 + nu and x = b rho,

    mu(rho) = c (2 pi)^(-d/2) 2^nu Gamma(nu + 1) b^d J_mu_(x) / x^mu_,

a Bessel function of order d/2 + nu: exact in every d, for integer nu (the polynomials
(1 - r^2)^80, (4 - r^2)^3 of any degree) and non-integer nu ((1 - r^2)^2.5, the truncated powers
of fractional order) alike. Its tail oscillates with the edge exponent beta = nu,
|mu| ~ rho^-((d+1)/2 + nu): the mass is finite iff d < 1 + 2 nu (``measures/_finiteness.py``
reads this from ``edges``).

Evaluation (log form, no under- or overflow in high d): J_mu_(x)/x^mu_ =
2^-mu_ / Gamma(mu_ + 1) 0F1(; mu_ + 1; -x^2/4), summed as its alternating series
(``_numerics.special.series_0f1``; every term below 1, at most one digit lost) for
x^2 <= 4 (mu_ + 1), scipy's ``jv`` up to x = mu_ (J is positive and monotone there) and
Re(exp(i x) hankel1e(mu_, x)) beyond (relative to the local amplitude |H1_mu_(x)| near the zeros
of J; ``jv`` itself loses ~1e-11 there at orders ~200). Orders mu_ above 260 are declined (the
kernel goes to the next route): the accuracy was measured up to there (1e-12 at mu_ ~ 300, and
``jv`` underflows at x = 2 sqrt(mu_ + 1) beyond ~350). Beyond rho_t = (mu_ + 4 mu_^(1/3) + 8) / b
the tail is given in parts, mu = exp(s) (A - Re(exp(i b rho) B)), A = 0,
B = -sign(c) hankel1e(mu_, x), s = log|C| - mu_ log x (``tail_parts``; hankel1e from the table of
:class:`_Hankel`).
"""

import math

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._numerics.chebyshev import fit_adaptive
from .._numerics.exact import two_product
from .._numerics.special import series_0f1
from ..kernels._parse import R
from ._forms import log_form, vectorised
from ._registry import MATCH_FAILURES, builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module

#: verified against mpmath besselj at 30 digits (tests/test_compact_forms.py: d = 1 ... 256,
#: nu = 0.5 ... 80, relative to the local amplitude near the zeros of J)
_REL_ERROR = 2e-12
_UNDERFLOW = 1e-290
_MAX_ORDER = 260.0  # d/2 + nu: measured up to ~300 (1e-12), jv underflows near x = 2 sqrt(mu_) beyond ~350
_EPS = float(np.finfo(np.float64).eps)
_TABLE_TOL = 1e-13  # the Hankel table's accuracy (relative to |g| ~ 1), else g is called


@matcher(priority=-1)
def _match_truncated_power_r2(expr, support):
    """c (alpha - gamma r^2)^nu, alpha, gamma > 0, nu > 0 real, support sqrt(alpha/gamma).

    Tried before the compact polynomials: for an integer nu it is the same kernel, computed here
    from one Bessel function instead of the polynomial's tables."""
    if support is None:
        return None
    try:
        return _read_truncated_power(expr, support)
    except MATCH_FAILURES:  # a formula sympy cannot take apart is not of this kind
        return None


def _read_truncated_power(expr, support):
    e = exact_rationals(expr)
    c, rest = e.as_coeff_Mul()
    if not isinstance(rest, sympy.Pow) or not rest.exp.is_number or not rest.exp.is_real:
        return None
    nu = rest.exp
    base = sympy.expand(rest.base)
    if not (nu > 0) == sympy.true or not base.is_polynomial(R):
        return None
    poly = sympy.Poly(base, R)
    if poly.degree() != 2:
        return None
    a2, a1, a0 = poly.all_coeffs()
    if not (a1 == 0 and a0.is_number and a2.is_number and (a0 > 0) == sympy.true and (a2 < 0) == sympy.true):
        return None
    b2 = sympy.nsimplify(-a0 / a2, rational=True) if isinstance(-a0 / a2, sympy.Float) else -a0 / a2
    sup = sympy.Rational(support) if not isinstance(support, sympy.Basic) else support
    # the support must be the zero b of the base: a support below it leaves a jump (another kernel).
    # A float support within 4 ulp of an irrational b (max(1 - r**2/3, 0)**2.5 has support
    # float(sqrt(3))) is that b: the float cannot represent it
    b = sympy.sqrt(b2)
    if sympy.simplify(sup - b) != 0 and not abs(sympy.N(sup / b - 1, 30)) <= 4 * _EPS:
        return None
    coef = c * a0**nu
    if not coef.is_number or coef == 0:
        return None
    return "truncated_power_r2", {"c": float(coef), "b": float(sympy.N(b, 30)), "nu": float(nu)}


class _Hankel:
    """hankel1e(mu_, x) for x > 0, tabulated beyond x_t: g(u) = sqrt(pi x / 2) e^(i (mu_ pi/2 + pi/4))
    hankel1e(mu_, x), u = 1/x, is smooth and non-oscillating on [0, 1/x_t] (g(0) = 1; Hankel's
    expansion), so a piecewise Chebyshev table of it (``_numerics.chebyshev.fit_adaptive``, error
    measured between the nodes) replaces scipy's ~5 us per point at orders ~100 by ~0.3 us."""

    def __init__(self, mu_, x_t):
        self.mu_ = mu_
        self.x_t = x_t
        self.phase = mu_ * math.pi / 2 + math.pi / 4
        self.u_series = 1.0 / max(mu_ * mu_, 64.0)
        self.table, self.error = fit_adaptive(
            self._g, 0.0, 1.0 / x_t, n_init=8, tol=_TABLE_TOL, max_depth=20, max_panels=256
        )
        if not self.error <= _TABLE_TOL:
            self.table = None  # not resolved: scipy itself everywhere

    def _g(self, u):
        u = np.asarray(u, dtype=np.float64)
        out = np.empty(u.shape, dtype=np.complex128)
        series = u <= self.u_series
        if np.any(series):
            out[series] = self._g_series(u[series])
        if not np.all(series):
            x = 1.0 / u[~series]
            out[~series] = np.sqrt(0.5 * math.pi * x) * np.exp(1j * self.phase) * sc.hankel1e(self.mu_, x)
        return out

    def _g_series(self, u):
        """Hankel's expansion sum_k i^k a_k(mu_) u^k, a_k = prod_(j<=k) (4 mu_^2 - (2j-1)^2) / (k! 8^k):
        for x >= max(mu_^2, 64) the terms fall at least like 2^-k / k! down to e^(-2x) (scipy's
        hankel1e returns 0 or nan beyond x ~ 1e12)."""
        term = np.ones(u.shape, dtype=np.complex128)
        total = term.copy()
        four_mu2 = 4.0 * self.mu_ * self.mu_
        for k in range(1, 200):
            term = term * (1j * (four_mu2 - (2 * k - 1) ** 2) / (8.0 * k)) * u
            total += term
            if np.all(np.abs(term) <= 1e-17 * np.abs(total)):
                break
        return total

    def __call__(self, x):
        out = np.empty(x.shape, dtype=np.complex128)
        far = x >= self.x_t if self.table is not None else np.zeros(x.shape, dtype=bool)
        if np.any(far):
            xf = x[far]
            out[far] = self.table(1.0 / xf) * np.sqrt(2.0 / (math.pi * xf)) * np.exp(-1j * self.phase)
        if not np.all(far):
            xn = x[~far]
            g = self._g(1.0 / xn)
            out[~far] = g * np.sqrt(2.0 / (math.pi * xn)) * np.exp(-1j * self.phase)
        return out


def _log_bessel_ratio(mu_, hankel, b, rho):
    """(log|J_mu_(x) / x^mu_|, sign), x = b rho, for an array rho >= 0 (module docstring).

    The series for x^2 <= 4 (mu_ + 1); ``jv`` up to x = mu_ (monotone there); beyond,
    Re(exp(i x) hankel1e(mu_, x)) (~1e-14 of the envelope at mu_ ~ 200, where ``jv`` loses 1e-11)
    with the rounding of x = b rho carried into the phase (a plain product loses ~ulp(x) radians)."""
    x, x_lo = two_product(b, rho)
    out = np.empty(x.shape)
    sign = np.ones(x.shape)
    small = x * x <= 4.0 * (mu_ + 1.0)
    osc = x >= mu_
    mid = ~(small | osc)
    lead = -mu_ * math.log(2.0) - math.lgamma(mu_ + 1.0)
    if np.any(small):
        s = series_0f1(mu_, 0.25 * x[small] ** 2, sign=-1.0)
        out[small] = lead + np.log(np.abs(s))
        sign[small] = np.sign(s)
    with np.errstate(divide="ignore"):
        if np.any(mid):
            j = sc.jv(mu_, x[mid])
            out[mid] = np.log(np.abs(j)) - mu_ * np.log(x[mid])
            sign[mid] = np.sign(j)
        if np.any(osc):
            xo = x[osc]
            j = (np.exp(1j * xo) * np.exp(1j * x_lo[osc]) * hankel(xo)).real
            out[osc] = np.log(np.abs(j)) - mu_ * np.log(xo)
            sign[osc] = np.sign(j)
    return out, sign


@builder("truncated_power_r2", rel_error=_REL_ERROR)
def _truncated_power_r2(c, b, nu, dim):
    """Exact mu of c (1 - r^2/b^2)^nu on [0, b] (module docstring), or None where scipy's ``jv``
    would underflow or the accuracy was not measured (orders d/2 + nu above 260)."""
    d = dim
    mu_ = 0.5 * d + nu
    x_switch = 2.0 * math.sqrt(mu_ + 1.0)
    if mu_ > _MAX_ORDER or not abs(float(sc.jv(mu_, x_switch))) >= _UNDERFLOW:
        return None
    with mpmath.workdps(30):
        log_c = float(
            mpmath.log(abs(mpmath.mpf(c)))
            - mpmath.mpf(d) / 2 * mpmath.log(2 * mpmath.pi)
            + nu * mpmath.log(2)
            + mpmath.loggamma(mpmath.mpf(nu) + 1)
            + d * mpmath.log(mpmath.mpf(b))
        )
    sgn = 1.0 if c > 0 else -1.0
    x_t = mu_ + 4.0 * mu_ ** (1.0 / 3.0) + 8.0
    hankel = _Hankel(mu_, x_t)

    def log_abs_and_sign(rho):
        la, sg = _log_bessel_ratio(mu_, hankel, b, rho)
        return log_c + la, sgn * sg

    def tail_parts(rho):
        rho = np.asarray(rho, dtype=np.float64)
        x, x_lo = two_product(b, rho)
        with np.errstate(divide="ignore"):
            log_scale = log_c - mu_ * np.log(x)
        # exp(i b rho) is formed by the caller from the float product: the rounding goes into B
        return log_scale, np.zeros(rho.shape), -sgn * np.exp(1j * x_lo) * hankel(x)

    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method="closed-form:truncated-power-r2",
        rel_error=_REL_ERROR,
        abs_error=0.0,
        scale=1.0 / b,
        tail_exponent=(d + 1) / 2 + nu,
        tail_oscillation=b,
        tail_parts=tail_parts,
        tail_start=x_t / b,
        edges=((b, nu),),
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
    )
