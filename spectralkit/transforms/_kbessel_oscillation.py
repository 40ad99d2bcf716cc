"""Oscillation under a K-Bessel envelope, exact in every d.

k(r) = w cos(b r) g(r) or w sin(b r)/r g(r), g(r) = (c^2 + r^2)^(-e/2) exp(-a sqrt(c^2 + r^2)),
e in {0, 1}, a, b, c > 0: exp(-sqrt(1 + r^2)) cos(r), exp(-2 sqrt(4 + r^2)) sin(3 r)/r. The
envelope's n-dimensional transform (subordination to Gaussians, :mod:`._exp_poly`) is

    F_n(t) = A_n (a^2 + t^2)^(-v/2) K_v(c sqrt(a^2 + t^2)),   v = (n + 1)/2 - e,
    A_n = 2^(-(n-1)/2) pi^(-(n+1)/2) a^(1-e) c^v,

even and analytic in t on the real axis (singular at t = +-i a only), with F_n'(t) = -2 pi t F_(n+2)(t).
The shift formula gives mu_1 = (F_1(rho - b) + F_1(rho + b))/2 for cos(b r) g (for sin(b r)/r g the
integral of F_1 over [rho - b, rho + b], halved), and the dimension walk mu_(n+2) = -(1/(2 pi rho))
d mu_n/d rho keeps the form sum_j P_j(1/rho) F_(2j+1)(rho -+ b) with polynomials P_j: the walk of
:class:`._oscillating._RQWalk`, whose evaluation (float64 with the digits lost measured; gmpy2/mpmath
at the precision the cancellation needs; below rho = b/2 the walk of mu_1's Taylor series at 0) is
reused with this family of F_n. The Taylor coefficients of y(t) = (a^2 + t^2)^(-v/2) K_v(c sqrt(a^2 +
t^2)) at t = b come from its differential equation

    t (a^2 + t^2) y'' + ((2 v + 1) t^2 - a^2) y' - c^2 t^3 y = 0

(from z g'' + (2 v + 1) g' - z g = 0 for g(z) = z^(-v) K_v(z), z = c sqrt(a^2 + t^2)), run forwards at
two precisions 30 digits apart until they agree. Unlike the rational-quadratic envelope, F_n is smooth
at t = 0: mu has no kink at rho = b, but the walk's form cancels near it (multiple precision within
~1e-3 of b), so odd d too is tabulated in log|rho - b| (:class:`._oscillating._KinkTable`, a few
hundred walk evaluations) and the sampler reads the table. Even d: the projection of the odd
(d+1)-dimensional density (:class:`._oscillating._RQHalfStep`;
the envelope decays exponentially, so mu_(d+1) is locally integrable everywhere), tabulated. The
measure is finite in every d (k is smooth and decays exponentially). sin(b r)/r in d = 1 needs the
antiderivative of F_1 and is left to the numeric routes.
"""

from __future__ import annotations

import math

import gmpy2
import mpmath
import numpy as np
import sympy

from .._numerics.bigfloat import to_gmpy
from .._numerics.special import log_besselk
from ..exceptions import TransformError
from ._bandlimited import sum_of_frequencies
from ._exp_poly import _parse_term
from ._oscillating import (
    _RQ_FLOOR,
    HALF_LEVELS,
    _accurate,
    _KinkTable,
    _number,
    _osc_factor,
    _RQHalfStep,
    _RQWalk,
    kink_table_transform,
    leveled_table,
    radial_floor,
)
from ._registry import builder, exact_rationals, matcher

__all__ = []  # private module

_METHOD = "closed-form:kbessel-oscillation"
#: the largest table error stated rather than refused (odd d: 1e-10 to 1e-9). Where the envelope's singularities
#: t = +-i a lie close to the real axis against b, the projection's error estimate near the zeros of mu
#: at small rho (|mu| ~ 1e-4 of its peak) is ~1e-6 relative, and the table states 6 times that:
#: 4e-5 for exp(-sqrt(2 + r^2)/2) cos(5 r/2) in d = 8, whose densities are within 1e-3 of that
#: statement against 38-digit Hankel integrals and whose masses meet k(0) = m+ - m-; 3.5e-4 for
#: exp(-sqrt(2 + r^2)) cos(2 r) in d = 64 (m+ = 651.37 +- 0.23, where m+ - m- meets k(0) to 2e-8:
#: a loose bound, but a bound, is stated rather than no answer). Above 1e-3: refused.
_ACCEPT = 1e-3


@matcher(priority=29)
def _match_kbessel_oscillation(expr, support):
    """w cos(b r) g(r) or w sin(b r)/r g(r), g = (c^2 + r^2)^(-e/2) exp(-a sqrt(c^2 + r^2))."""
    if support is not None or not expr.has(sympy.exp) or not expr.has(sympy.cos, sympy.sin):
        return None
    exact = exact_rationals(expr)
    split = _osc_factor(exact)
    if split is None:
        # products of sines and cosines at one frequency in all (sin(r) cos(r) = sin(2r)/2)
        rewritten = sum_of_frequencies(exact)
        if rewritten is None or isinstance(rewritten, sympy.Add):
            return None
        split = _osc_factor(rewritten)
    if split is None or split[2] is None or split[2][0] not in ("cos", "sin"):
        return None
    coef, power, (kind, b), rest = split
    if power != (-1 if kind == "sin" else 0) or not rest:
        return None
    try:
        parsed = _parse_term(sympy.Mul(*rest))
    except (TypeError, ValueError, ArithmeticError, sympy.PolynomialError):
        return None
    if parsed is None or parsed[0] != "kb":
        return None
    _, a, c2, e, w = parsed
    try:
        a, c, w, b, coef = _number(a), math.sqrt(_number(c2)), _number(w), _number(b), _number(coef)
    except TypeError:
        return None
    if not (a > 0 and c > 0 and b != 0 and w != 0 and coef != 0):
        return None
    sign = -1.0 if (b < 0 and kind == "sin") else 1.0  # sin(-b r) = -sin(b r)
    return "kbessel_oscillation", {
        "w": coef * w * sign,
        "kind": kind,
        "b": abs(b),
        "a": a,
        "c": c,
        "e": int(e),
    }


class _KBesselWalk(_RQWalk):
    """:class:`._oscillating._RQWalk` with the K-Bessel family F_n of the module docstring."""

    def __init__(self, w, kind, b, a, c, e, n):
        super().__init__(w, kind, b, 0.0, c * c, n)
        self.a, self.cc, self.e = a, c, e
        self._consts = {}
        # mu_1 is analytic for |rho| < sqrt(a^2 + b^2) (F_1 is singular at t = +-i a only)
        self.series_radius = math.hypot(a, b)

    def _order(self, j):
        return j + 1 - self.e

    def log_f(self, j, t):
        """log F_(2j+1)(t) (float arrays)."""
        v = self._order(j)
        q = self.a * self.a + np.asarray(t, dtype=np.float64) ** 2
        log_a = (
            -j * math.log(2.0)
            - (j + 1) * math.log(math.pi)
            + (1 - self.e) * math.log(self.a)
            + v * math.log(self.cc)
        )
        return log_a - 0.5 * v * np.log(q) + log_besselk(v, self.cc * np.sqrt(q))

    def _f_const(self, j):
        key = (j, mpmath.mp.prec)
        if key not in self._consts:
            a, c = mpmath.mpf(self.a), mpmath.mpf(self.cc)
            self._consts[key] = (
                mpmath.mpf(2) ** (-j) * mpmath.pi ** (-(j + 1)) * a ** (1 - self.e) * c ** self._order(j)
            )
        return self._consts[key]

    def f_mp_all(self, js, t):
        """{j: F_(2j+1)(t)} as gmpy2 numbers at gmpy2's context precision (the walk's multiple-precision
        sums run there): K of the two lowest orders (:func:`_besselk_pair`), the rest by the upward
        recurrence K_(v+1) = K_(v-1) + (2 v / z) K_v (stable: K grows with the order)."""
        q = to_gmpy(mpmath.mpf(self.a)) ** 2 + to_gmpy(mpmath.mpf(t)) ** 2
        z = to_gmpy(mpmath.mpf(self.cc)) * gmpy2.sqrt(q)
        top = self._order(max(js))
        low = self._order(0)
        kv = dict(zip((low, low + 1), _besselk_pair(low, z)))
        for v in range(low + 1, top):
            kv[v + 1] = kv[v - 1] + (2 * v / z) * kv[v]
        root = gmpy2.sqrt(q)
        return {j: self._f_gmpy(j) * kv[self._order(j)] / root ** self._order(j) for j in js}

    def _f_gmpy(self, j):
        key = ("gmpy", j, gmpy2.get_context().precision)
        if key not in self._consts:
            with mpmath.workprec(gmpy2.get_context().precision):
                self._consts[key] = to_gmpy(self._f_const(j))
        return self._consts[key]

    def _shifted(self, rho, t=None):
        # F_n is smooth at t = 0: no kink to rewrite; the values keep their measured loss and the
        # points that lose too much go to multiple precision
        return self._float(rho, t)

    def _taylor_run(self, wp, n_terms):
        """a_k of mu_1(rho) = sum_k a_k rho^(2k) (w = 1) at ``wp`` digits: the Taylor coefficients of
        F_1 at t = b by the recurrence of its differential equation (module docstring)."""
        with mpmath.workdps(wp):
            a, b, c = mpmath.mpf(self.a), mpmath.mpf(self.b), mpmath.mpf(self.cc)
            v = self._order(0)
            qb = a * a + b * b
            zb = c * mpmath.sqrt(qb)
            f = [
                qb ** (-mpmath.mpf(v) / 2) * mpmath.besselk(v, zb),
                -c * b * qb ** (-mpmath.mpf(v + 1) / 2) * mpmath.besselk(v + 1, zb),
            ]
            # t = b + x: t (a^2 + t^2) = p2(x), (2v + 1) t^2 - a^2 = p1(x), -c^2 t^3 = p0(x)
            p2 = [b * qb, a * a + 3 * b * b, 3 * b, mpmath.mpf(1)]
            p1 = [(2 * v + 1) * b * b - a * a, 2 * (2 * v + 1) * b, mpmath.mpf(2 * v + 1)]
            p0 = [-c * c * b**3, -3 * c * c * b * b, -3 * c * c * b, -c * c]

            def get(k):
                return f[k] if 0 <= k < len(f) else mpmath.mpf(0)

            for n in range(2 * n_terms + 2):
                acc = mpmath.mpf(0)
                for i in range(1, 4):
                    acc += p2[i] * (n - i + 2) * (n - i + 1) * get(n - i + 2)
                for i in range(3):
                    acc += p1[i] * (n - i + 1) * get(n - i + 1)
                for i in range(4):
                    acc += p0[i] * get(n - i)
                f.append(-acc / (p2[0] * (n + 2) * (n + 1)))
            cs = self._f_const(0)
            if self.kind == "cos":
                return [cs * f[2 * k] for k in range(n_terms)]
            # the antiderivative's even coefficients f_(2k-1)/(2k) (its constant is killed by the walk)
            return [mpmath.mpf(0)] + [cs * f[2 * k - 1] / (2 * k) for k in range(1, n_terms)]


def _besselk_pair(v, z):
    """(K_v(z), K_(v+1)(z)) for a gmpy2 z > 0 at gmpy2's context precision: the trapezoidal rule on
    K_v(z) = int_0^inf exp(-z cosh t) cosh(v t) dt, whose integrand is entire and decays doubly
    exponentially: relative to K_v(z) e^z ~ 1 the error of step h is about exp(-pi^2 / h + z) (the
    strip |Im t| < pi/2, where |exp(-z cosh t)| grows to 1); the step is chosen for 10 digits beyond
    the precision. About 100x cheaper than mpmath.besselk at 30-150 digits (checked against it in
    the tests)."""
    prec = gmpy2.get_context().precision
    with gmpy2.context(gmpy2.get_context(), precision=prec + 32):  # guard bits: z cosh t ~ z
        k0, k1 = _besselk_pair_at(v, z, gmpy2.mpfr(prec + 34) * gmpy2.log(2))
    return +k0, +k1  # rounded to the caller's precision


def _besselk_pair_at(v, z, big):
    pi = gmpy2.const_pi()
    h = pi**2 / (big + z)
    n = int(gmpy2.acosh(1 + big / z) / h) + 1
    step = gmpy2.exp(h)
    e = gmpy2.mpfr(1)  # e^(k h)
    s0 = s1 = gmpy2.mpfr(0)
    for k in range(n + 1):
        inv = 1 / e
        g = gmpy2.exp(-z * ((e + inv) / 2 - 1))
        # cosh(v t) and cosh((v + 1) t) from powers of e^t (v an integer)
        ev = e**v
        inv_ev = 1 / ev
        c0 = (ev + inv_ev) / 2
        c1 = (ev * e + inv * inv_ev) / 2
        if k == 0:
            g /= 2
        s0 += g * c0
        s1 += g * c1
        e *= step
    scale = h * gmpy2.exp(-z)
    return s0 * scale, s1 * scale


@builder("kbessel_oscillation", rel_error=1e-10)
def _kbessel_oscillation(w, kind, b, a, c, e, dim):
    """mu of w cos(b r) g(r) or w sin(b r)/r g(r), g = (c^2 + r^2)^(-e/2) exp(-a sqrt(c^2 + r^2))."""
    d = dim
    if kind == "sin" and d == 1:
        return None  # the antiderivative of F_1 is not built: the numeric routes answer
    # F_n(t) ~ t^(-v - 1/2) e^(-c t): beyond b + (60 + 2 d)/c the neighbour is below e^-60 of its scale
    rho_max = b + (60.0 + 2.0 * d) / c
    scale = min(b, c)
    if d % 2 == 1:
        walk = _KBesselWalk(1.0, kind, b, a, c, e, d)
        # the float sums' accepted error, relative to the radial density where that is smaller (max|mu|
        # sits at rho ~ 0 in high d, 1e9 in d = 65: a floor relative to it alone let the float sums'
        # errors into the masses at rho ~ 3); measured with every grid point certified (floor 0)
        grid = np.linspace(0, rho_max, 401)[1:]
        grid = grid[grid != b]
        la, _ = walk.log_abs_and_sign(grid)
        log_radial = float(np.max(la + (d - 1) * np.log(grid)))
        walk.floor = radial_floor(_RQ_FLOOR, float(np.exp(np.max(la))), log_radial, d)
        # mu is analytic at b, but the walk's form cancels near it (multiple precision within ~1e-3
        # of b): tabulated in log|rho - b| like the even d below, so that the sampler reads a table
        # (evaluated pointwise, its tables took 159,000 multiple-precision points, 250 s in d = 17)
        table = _KinkTable(_accurate(walk), b, rho_max, dim=d)
    else:
        walks = {}

        def odd(n):
            if n not in walks:
                walks[n] = _accurate(_KBesselWalk(1.0, kind, b, a, c, e, n))
            return walks[n]

        half = _RQHalfStep(
            kind,
            b,
            0.0,
            c * c,
            d,
            odd=odd,
            p=math.inf,
            noise=1e-13,
            projection=True,
            level=HALF_LEVELS[0],
            sharpen=True,
        )
        table = leveled_table(half, [half], b, rho_max, d)
    if not table.error <= _ACCEPT:
        raise TransformError(
            f"k = w {kind}({b:g} r) exp(-{a:g} sqrt({c * c:g} + r^2)) in d = {d}: its density's table reached "
            f"a relative accuracy of only {table.error:.1e}"
        )
    return kink_table_transform(table, w, b, d, rho_max, scale, _METHOD)
