"""Exponentials times rational functions in every d: the dimension walk (d <= 80) and the ray integrals.

k(r) = Re sum_g exp(-s_g r) R_g(r), Re s_g > 0, R_g rational in r with no pole on (0, inf) (complex
poles allowed, odd powers of r allowed, a simple pole at r = 0 where the sum is bounded there):
exp(-r)/(1 + r^4), exp(-r) (1 + r)/(2 + r^2), exp(-r) cos(2 r)/(1 + r^2), exp(-2 r) sin(r)/(r (1 + r^2))
(cos and sin are rewritten as exponentials: s_g complex). Polynomial R_g are the exponential-polynomial
route's (:mod:`._exp_poly`), positive real poles of R_g times exp the completely monotone one's.

Let L_g(z) = int_0^inf exp(-z r) R_g(r) dr (Re z > 0; the finite part at r = 0 for a 1/r term) and
V_(g,j)(z) = L[r^j R_g](z) = (-d/dz)^j L_g(z). Then

    mu_1(rho) = (1/(2 pi)) Re sum_g [L_g(s_g - i rho) + L_g(s_g + i rho)],

and the dimension walk D = -(1/(2 pi rho)) d/drho, D^k = sum_j c_(k,j) rho^(j-2k) (d/drho)^j with
c_(k+1,j) = ((2k - j) c_(k,j) - c_(k,j-1))/(2 pi), gives in d = 2k + 1

    mu_d(rho) = (1/(2 pi)) Re sum_g sum_(e = +-1) sum_j c_(k,j) rho^(j-2k) (-e i)^j V_(g,j)(s_g + e i rho).

With the partial fractions R = sum_n pi_n r^n + sum_(p,l) c_(p,l) (r - p)^(-l), multiplying by r keeps
the form: r^j R = Poly_j(r) + sum_(p,m) Psi_(j,p,m) (r - p)^(-m) with

    Psi_(j+1,p,m) = p Psi_(j,p,m) + Psi_(j,p,m+1),   Poly_(j+1)(r) = r Poly_j(r) + sum_p Psi_(j,p,1),

so V_j(z) = sum_t Poly_(j,t) t!/z^(t+1) + sum_(p,m) Psi_(j,p,m) psi_m(z; p), where
psi_m(z; p) = int_0^inf exp(-z r) (r - p)^(-m) dr = q^(1-m) e^w E_m(w), q = -p, w = z q, from
phi = e^w E_1(w) by e^w E_(m+1)(w) = (1 - w e^w E_m(w))/m. E_1 is the analytic continuation along
z in the right half-plane: with theta = arg z + arg q (continuous), e^w E_1 = e^w (E_1^pr(w) -
2 pi i kappa), kappa = round((theta - Arg w)/(2 pi)) (where Re p > 0 the ray z q crosses the
principal cut as rho grows). A pole at p = 0 (the 1/r of sin(b r)/r) has psi = -(log z + gamma).

Evaluation in d = 2k + 1 (three regions):

* rho < rho_s = R/2, R = min_g |s_g| (mu_1 is analytic for |rho| < R: L_g is singular at z = 0 only):
  the walk of mu_1's Taylor series at 0, mu_d = sum_(n>=k) a_n (-1/pi)^k n!/(n-k)! rho^(2(n-k)),
  a_n = (1/pi) (-1)^n Re sum_g m_g V_(g,2n)(s_g)/(2n)! (m_g = 2 for a conjugate pair kept once);
  the walk's terms cancel like rho^-(2k-1) there.
* rho >= rho_a: mu's expansion at infinity from k's odd Taylor coefficients at 0,
  mu_d ~ sum_(n odd) k_n T_(d,n) rho^-(d+n), T_(d,n) = 2^n pi^(-d/2) Gamma((n+d)/2)/Gamma(-n/2) (the
  transform of |x|^n), asymptotic; rho_a is where its terms fall below 1e-16 of the first and where it
  agrees with the multiple-precision walk at rho_a 2^i, i = 0..6, to 1e-12.
* between: the walk's sum in float64 (with the digits it loses measured, log10(sum |terms| / |sum|)),
  and in gmpy2's MPFR where more than ``_LOST_FLOAT`` digits cancel and the float bound exceeds 1e-10
  of the table's floor: there V_j comes from the recurrence of R's denominator, sum_i q_i V_(j+i) =
  L[r^j P](z), at two precisions 20 digits apart that must agree.

mu_d is tabulated up to rho_a (:class:`._oscillating._KinkTable`), the expansion beyond. Even d: the
projection mu_d(rho) = 2 int_0^inf mu_(d+1)(sqrt(rho^2 + v^2)) dv of the odd neighbour's table, by the
trapezoidal rule in v = c sinh x at two steps (their difference is the error), tabulated in turn. The
walk serves d <= ``_MAX_D`` (its multiple-precision sums take minutes beyond).

The ray integrals (:class:`_Rays`, every d, nothing walked): each partial fraction is a Laplace mixture
exp(-s r) (r - p)^-l = int t^(l-1)/(l-1)! e^(t p) exp(-(s + t) r) dt along a path in the t-plane (a ray,
or the hyperbola on which (a^2 + rho^2)^-n keeps its phase), and exp(-a r) has the transform
C_d a (a^2 + rho^2)^-n, n = (d+1)/2, for every Re a > 0; one quadrature per pole and rho, with its
bound, tabulated in logs (:func:`_ray_transform`). Up to d = ``_WALK_FIRST_D`` the walk is tried
first, beyond it the rays; each is the other's fallback, and the second opinion where the first states
more than ``_GOOD_ENOUGH`` (docs/theory.md §21).
"""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
import mpmath
import numpy as np
import sympy

from .._numerics.bigfloat import to_gmpy
from .._numerics.chebyshev import _NOISE_GAIN, fit_adaptive
from .._numerics.quadrature import gauss_legendre
from .._numerics.special import log_sphere_area
from ..exceptions import TransformError
from ..kernels._parse import R
from ._exp_poly import _Group as _ExpPolyGroup
from ._exp_poly import _mp
from ._forms import envelope_logs, log_form, vectorised
from ._monotone import _combine
from ._oscillating import _MIN_OFFSET, _KinkTable, kink_peak
from ._registry import builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module: registers the builder and the matcher

_METHOD = "closed-form:exp-rational"
_RAY_METHOD = "closed-form:exp-rational-rays"
_EPS = float(np.finfo(np.float64).eps)
_TINY = 1e-300
_DPS = 50  # digits of the roots, partial fractions and coefficient tables
_MAX_DPS = 600
_LOST_FLOAT = 3.5  # float64 sums that lose more digits than this are redone in MPFR (above the floor)
#: the tables' floor, relative to the (radial) density's peak; float sums are kept 1e-10 below it
_FLOOR = 1e-13
_MAX_DEGREE = 24  # largest degree of a numerator or denominator
_MAX_GROUPS = 8
_ASYM_TERMS = 48  # odd terms of the expansion at infinity
#: the walk's largest d: beyond, its multiple-precision sums take minutes (d = 257: 450 s)
_MAX_D = 80
_WALK_FIRST_D = 17  # up to here the walk first, the rays if it fails; beyond, the other way round
_GOOD_ENOUGH = 1e-4  # a stated relative error above this: the other route is tried as well
_WALK_SECOND_D = 40  # ... the walk only up to here (in d = 64 it took 47 s to fail after the rays)
_ACCEPT_EVEN = 1e-3  # the largest even-d table error stated rather than refused (the masses carry it)


# ---------------------------------------------------------------------------------------------
# recognition
# ---------------------------------------------------------------------------------------------
@matcher(priority=16)  # after the exponential polynomials (15): R polynomial is theirs
def _match_exp_rational(expr, support):
    """Re sum_g exp(-s_g r) R_g(r) with at least one R_g not a Laurent monomial sum."""
    if support is not None or not expr.has(sympy.exp):
        return None
    if expr.has(sympy.besselj, sympy.besselk, sympy.Abs, sympy.Max, sympy.Min, sympy.Piecewise):
        return None
    try:
        return _match(expr)
    except (TypeError, ValueError, ArithmeticError, sympy.PolynomialError):
        return None


def _split_exp(term):
    """(exponent, rest) of a product: the sum of its exponentials' arguments and the other factors."""
    factors = sympy.Mul.make_args(term)
    exps = [f for f in factors if isinstance(f, sympy.exp)]
    rest = sympy.Mul(*[f for f in factors if not isinstance(f, sympy.exp)])
    return sympy.expand(sympy.Add(*[f.args[0] for f in exps])), rest


def _match(expr):
    # one fraction N/D: D = exp(E_D) Q(r), N = sum of exp(E_i) P_i(r) (cos, sin as exponentials)
    e = exact_rationals(expr).rewrite(sympy.exp)
    num, den = sympy.fraction(sympy.together(e))
    den_exp, den_poly = _split_exp(den)
    if not den_poly.is_polynomial(R):
        return None
    groups: dict = {}
    for term in sympy.Add.make_args(sympy.expand(num)):
        arg, rest = _split_exp(term)
        arg = sympy.expand(arg - den_exp)
        const, lin = arg.as_independent(R, as_Add=True)
        s = sympy.expand(-sympy.cancel(lin / R))
        if s.has(R) or not s.is_number or not rest.is_polynomial(R):
            return None  # exp(-sqrt(c + r^2)), exp(-r^2): other routes
        if s == 0:
            return None  # a term without an exponential (a constant, a rational function)
        groups[s] = groups.get(s, 0) + rest * sympy.exp(const) / den_poly
    if not groups or len(groups) > _MAX_GROUPS:
        return None
    out = []
    rational = False
    for s, rest in groups.items():
        if not complex(sympy.N(s, 30)).real > 0:
            return None
        num, den = sympy.fraction(sympy.cancel(sympy.together(rest)))
        pn, pd = sympy.Poly(num, R), sympy.Poly(den, R)
        if pn.is_zero:
            continue
        if max(pn.degree(), pd.degree()) > _MAX_DEGREE:
            return None
        if not all(c.is_number for c in pn.all_coeffs() + pd.all_coeffs()):
            return None
        if len(pd.terms()) > 1:
            rational = True
        out.append((s, tuple(pn.all_coeffs()), tuple(pd.all_coeffs())))
    if not out or not rational:
        return None  # exponential polynomials: the exp-poly route
    return "exp_rational", {"groups": tuple(out)}


# ---------------------------------------------------------------------------------------------
# exact data: partial fractions, pairing of conjugate groups
# ---------------------------------------------------------------------------------------------
class _Group:
    """One exponent s and its rational factor R = P/Q at ``dps`` digits: ``num``, ``den`` (ascending),
    the partial fractions ``poly`` (ascending) and ``poles`` [(p, [c_1, ..., c_M])] (p = 0: the 1/r
    term), ``mult`` 2 for a conjugate pair kept once, ``branches`` [(e, weight)] of z = s + e i rho."""

    def __init__(self, s, num, den, mult, self_conj, dps):
        self.mult = mult
        # a self-conjugate group (s, R real): Re L(s + i rho) = Re L(s - i rho), one branch twice
        self.branches = [(-1, 2 * mult)] if self_conj else [(-1, mult), (1, mult)]
        pn, pd = _poly(num), _poly(den)
        quo, rem = sympy.div(pn, pd)
        with mpmath.workdps(dps):
            self.s = _mp(s, dps)
            self.num = [_mp(c, dps) for c in reversed(pn.all_coeffs())]
            self.den = [_mp(c, dps) for c in reversed(pd.all_coeffs())]
            self.poly = [] if quo.is_zero else [_mp(c, dps) for c in reversed(quo.all_coeffs())]
            self.poles = []
            if not rem.is_zero:
                for factor, mult_p in sympy.sqf_list(pd)[1]:
                    self.poles += _principal_parts(rem, pd, factor, mult_p, dps)
        self._gmpy = None

    def gmpy(self):
        """(Poly_j and Psi_j for j < deg Q, num, den) as gmpy2 numbers at the context's precision (the
        group's ``dps``: its callers set it), for :meth:`_Walk._moments`."""
        if self._gmpy is None:
            dec = _decomposition(self, max(len(self.den) - 2, 0))
            self._gmpy = (
                [([to_gmpy(v) for v in pj], {kk: to_gmpy(v) for kk, v in psj.items()}) for pj, psj in dec],
                [to_gmpy(c) for c in self.num],
                [to_gmpy(c) for c in self.den],
            )
        return self._gmpy


def _principal_parts(rem, den, factor, mult, dps):
    """[(p, [c_1..c_M])] of rem/den at the roots p of the square-free ``factor`` (multiplicity M):
    the Laurent coefficients c_l of (r - p)^-l, from the Taylor series of rem and den at p."""
    coeffs = [_mp(c, dps) for c in sympy.Poly(factor, R).all_coeffs()]
    if len(coeffs) == 2:
        roots = [-coeffs[1] / coeffs[0]]
    else:
        roots = mpmath.polyroots(coeffs, maxsteps=400, extraprec=4 * dps)
    rc = [_mp(c, dps) for c in rem.all_coeffs()]
    dc = [_mp(c, dps) for c in den.all_coeffs()]
    out = []
    for p in roots:
        p = mpmath.mpc(p)
        q_t = _taylor_at(dc, p, mult + mult)  # den(p + x): q_0 .. q_(M-1) vanish
        q_tilde = q_t[mult:]
        r_t = _taylor_at(rc, p, mult)
        # rem/den = x^-M (r_t / q_tilde): its first M coefficients, by series division
        ratio = []
        for i in range(mult):
            acc = r_t[i] - sum(ratio[j] * q_tilde[i - j] for j in range(i))
            ratio.append(acc / q_tilde[0])
        out.append((p, [ratio[mult - l] for l in range(1, mult + 1)]))
    return out


def _taylor_at(coeffs_desc, p, n):
    """The first n Taylor coefficients at p of the polynomial with descending coefficients."""
    c = list(coeffs_desc)
    out = []
    for _ in range(n):
        # synthetic division: value at p, then the quotient (the derivative's Taylor shift)
        if not c:
            out.append(mpmath.mpc(0))
            continue
        acc = mpmath.mpc(0)
        quot = []
        for a in c:
            acc = acc * p + a
            quot.append(acc)
        out.append(quot.pop())
        c = quot
    return out


def _pairs(spec):
    """[(s, num, den, mult, self_conj)]: the matched groups with conjugate pairs merged (exact)."""
    used = set()
    out = []
    for i, (s, num, den) in enumerate(spec):
        if i in used:
            continue
        s_c = sympy.conjugate(s)
        num_c = tuple(sympy.conjugate(c) for c in num)
        den_c = tuple(sympy.conjugate(c) for c in den)
        self_conj = sympy.expand(s_c - s) == 0 and _same_ratio(num, den, num_c, den_c)
        partner = None
        if not self_conj:
            for j in range(i + 1, len(spec)):
                if j not in used and sympy.expand(spec[j][0] - s_c) == 0:
                    if _same_ratio(spec[j][1], spec[j][2], num_c, den_c):
                        partner = j
                        break
        if partner is not None:
            used.add(partner)
        out.append((s, num, den, 2 if partner is not None else 1, self_conj))
    return out


def _same_ratio(n1, d1, n2, d2):
    """P1/Q1 == P2/Q2 exactly (coefficient tuples, descending)."""
    a = _poly(n1) * _poly(d2) - _poly(n2) * _poly(d1)
    return all(sympy.expand(c) == 0 for c in a.all_coeffs())


def _poly(coeffs):
    """The sympy Poly in r of descending coefficients."""
    return sympy.Poly.from_list(list(coeffs), R)


# ---------------------------------------------------------------------------------------------
# e^w E_1(w), continued along z
# ---------------------------------------------------------------------------------------------
_CF_TERMS = 80
_SERIES_TERMS = 140


def _exp_e1(w):
    """e^w E_1(w) (principal branch) for a complex array: the power series where |w| < 40 and
    |w| + Re w <= 2 (its terms reach e^(|w| + Re w) of the value), else the continued fraction
    e^w E_1(w) = 1/(w + 1 - 1/(w + 3 - 4/(w + 5 - ...))) with 80 levels; within 5e-15 of mpmath
    over |w| in [1e-4, 2e3] at every angle (checked in the tests)."""
    w = np.asarray(w, dtype=np.complex128)
    out = np.empty(w.shape, dtype=np.complex128)
    ser = (np.abs(w) < 40.0) & (np.abs(w) + w.real <= 2.0)
    if np.any(ser):
        x = w[ser]
        total = np.zeros(x.shape, dtype=np.complex128)
        term = np.ones(x.shape, dtype=np.complex128)
        for k in range(1, _SERIES_TERMS):
            term = term * (-x) / k
            total = total + term / k
        out[ser] = np.exp(x) * (-np.euler_gamma - np.log(x) - total)
    if np.any(~ser):
        x = w[~ser]
        acc = np.zeros(x.shape, dtype=np.complex128)
        for n in range(_CF_TERMS, 0, -1):
            acc = n * n / (x + 2 * n + 1 - acc)
        out[~ser] = 1.0 / (x + 1.0 - acc)
    return out


def _branch(z, q):
    """kappa of e^w E_1 = e^w (E_1^pr(w) - 2 pi i kappa), w = z q, continued from the positive real
    z-axis along Re z > 0: (arg z + arg q - Arg w)/(2 pi), a whole number up to rounding. Float angles
    suffice (a float of w keeps the sign of its imaginary part: the side of the cut E_1 takes)."""
    z, q = np.asarray(z, dtype=np.complex128), np.asarray(q, dtype=np.complex128)
    return np.round((np.angle(z) + np.angle(q) - np.angle(z * q)) / (2 * np.pi))


def _continued_float(z, q):
    """phi = e^w E_1(w), w = z q, continued from the positive real z-axis along Re z > 0."""
    w = z * q
    kappa = _branch(z, q)
    phi = _exp_e1(w)
    return np.where(kappa != 0, phi - 2j * np.pi * kappa * np.exp(w), phi)


def _continued_mp(z, q):
    """The same in mpmath at its working precision (z, q mpmath numbers), as a gmpy2 mpc."""
    w = z * q
    kappa = int(_branch(complex(z), complex(q)))
    e1 = mpmath.e1(w)
    if kappa:
        e1 -= mpmath.mpc(0, 2 * kappa) * mpmath.pi
    return to_gmpy(mpmath.exp(w) * e1)


# ---------------------------------------------------------------------------------------------
# the dimension walk
# ---------------------------------------------------------------------------------------------
def _walk_rationals(k):
    """[c_(k,j) (2 pi)^k for j = 0..k] (exact): D^k = sum_j c_(k,j) rho^(j-2k) (d/drho)^j."""
    c = [Fraction(1)]
    for step in range(k):
        new = [Fraction(0)] * (len(c) + 1)
        for j in range(len(new)):
            prev = c[j - 1] if j >= 1 else Fraction(0)
            cur = c[j] if j < len(c) else Fraction(0)
            new[j] = (2 * step - j) * cur - prev
        c = new
    return c


def _float_bound(lost):
    """The relative error bound of a float64 sum that lost ``lost`` digits: 64 ulps times 10^lost
    (e^w E_1 itself is within 5e-15)."""
    return 64 * _EPS * 10.0 ** np.minimum(lost, 300.0)


def _decomposition(g, jmax):
    """[(Poly_j ascending, {(pole index, m): Psi_(j,p,m)}) for j = 0..jmax] of r^j R (module docstring)."""
    out = []
    poly = list(g.poly)
    psi = {(pi, m): g.poles[pi][1][m - 1] for pi, m in _funcs(g)}
    for _ in range(jmax + 1):
        out.append((poly, psi))
        const = sum((psi[(pi, 1)] for pi in range(len(g.poles))), mpmath.mpc(0))
        poly = [const, *poly]
        psi = {(pi, m): g.poles[pi][0] * psi[(pi, m)] + psi.get((pi, m + 1), 0) for (pi, m) in psi}
    return out


def _funcs(g):
    """[(pole index, m)] of the functions psi_m(z; p) of the group's poles (the keys of Psi_j)."""
    return [(pi, m) for pi, (_, cs) in enumerate(g.poles) for m in range(1, len(cs) + 1)]


class _Walk:
    """mu_n (n odd) of k = Re sum_g exp(-s_g r) R_g(r): the three regions of the module docstring.
    ``pairs``: the exact groups (:func:`_pairs`)."""

    def __init__(self, pairs, n):
        self.pairs = pairs
        self.k = (n - 1) // 2
        self._groups = {}
        self._cache = {}
        g0 = self.groups(_DPS)
        self.radius = float(min(abs(g.s) for g in g0))  # of mu_1's Taylor series at 0
        self.rho_s = 0.5 * self.radius

    def groups(self, dps):
        if dps not in self._groups:
            self._groups[dps] = [_Group(s, num, den, mult, sc_, dps) for s, num, den, mult, sc_ in self.pairs]
        return self._groups[dps]

    def _walk_coeffs(self, dps):
        """[c_(k,j)] at ``dps`` digits."""
        key = ("walk", dps)
        if key not in self._cache:
            with mpmath.workdps(dps):
                two_pi_k = (2 * mpmath.pi) ** self.k
                self._cache[key] = [
                    mpmath.mpf(c.numerator) / c.denominator / two_pi_k for c in _walk_rationals(self.k)
                ]
        return self._cache[key]

    # -- float64: the partial fractions as matrices ----------------------------------------
    def _float_table(self):
        """Per group and branch: (s, e, B, A, funcs), B[t, j] and A[f, j] the coefficients of
        lambda_t = t!/z^(t+1) and psi_f in the u^(2k-j) column, complex128."""
        if "float" not in self._cache:
            k = self.k
            out = []
            with mpmath.workdps(_DPS + 10):
                walk = self._walk_coeffs(_DPS + 10)
                two_pi = 2 * mpmath.pi
                for g in self.groups(_DPS):
                    dec = _decomposition(g, k)
                    keys = _funcs(g)
                    n_t = max(len(pj) for pj, _ in dec)
                    for e, weight in g.branches:
                        rot = mpmath.mpc(0, -e)
                        coef = [weight / two_pi * walk[j] * rot**j for j in range(k + 1)]
                        b = np.zeros((n_t, k + 1), dtype=np.complex128)
                        a = np.zeros((len(keys), k + 1), dtype=np.complex128)
                        for j, (pj, psj) in enumerate(dec):
                            for t, v in enumerate(pj):
                                b[t, j] = complex(coef[j] * v)
                            for f, key in enumerate(keys):
                                a[f, j] = complex(coef[j] * psj[key])
                        out.append((complex(g.s), e, b, a, [(complex(g.poles[pi][0]), m) for pi, m in keys]))
            self._cache["float"] = out
        return self._cache["float"]

    def walk_float(self, rho):
        """(value, digits lost) of the walk's sum at rho > 0 in float64 (inf lost where not finite)."""
        rho = np.asarray(rho, dtype=np.float64)
        k = self.k
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        with np.errstate(all="ignore"):
            upow = np.exp(np.outer(np.log(1.0 / rho), 2 * k - np.arange(k + 1)))  # u^(2k-j)
            for s, e, b, a, funcs in self._float_table():
                z = s + 1j * e * rho
                lam = np.empty((rho.size, b.shape[0]), dtype=np.complex128)
                cur = 1.0 / z
                for t in range(b.shape[0]):
                    lam[:, t] = cur
                    cur = cur * (t + 1) / z
                psi = _psi_float(z, funcs)
                inner = lam @ b + psi @ a
                inner_abs = np.abs(lam) @ np.abs(b) + np.abs(psi) @ np.abs(a)
                total += np.sum(upow * inner.real, axis=1)
                absum += np.sum(upow * inner_abs, axis=1)
            lost = np.log10(absum / np.abs(total))
        bad = ~np.isfinite(total) | ~np.isfinite(absum)
        lost = np.where(bad | np.isnan(lost), np.inf, lost)
        return np.where(bad, 0.0, total), lost

    # -- multiple precision: V_j by the recurrence of the denominator ------------------------
    def _moments(self, g, z, jmax, dps):
        """[V_j(z) for j = 0..jmax] as gmpy2 mpc at ``dps`` digits (gmpy2's context set by the caller):
        the partial fractions for j < deg Q, then sum_i q_i V_(j+i) = L[r^j P](z). Forward, the
        recurrence follows the dominant solution (V_j ~ j!/z^(j+1)) once j > |p z|; the callers
        compare two precisions."""
        m = len(g.den) - 1
        n_lam = jmax + len(g.num) + 1
        zg = to_gmpy(z)
        lam = []
        cur = 1 / zg
        for t in range(max(n_lam, m + len(g.poly) + 1)):
            lam.append(cur)
            cur = cur * (t + 1) / zg
        dec, num, den = g.gmpy()
        psi = {}
        for pi, (p, cs) in enumerate(g.poles):
            chain = _psi_chain_mp(z, p, len(cs))
            for mm in range(1, len(cs) + 1):
                psi[(pi, mm)] = chain[mm - 1]
        out = []
        for j in range(min(m, jmax + 1)):
            pj, psj = dec[j]
            v = gmpy2.mpc(0)
            for t, c in enumerate(pj):
                v += c * lam[t]
            for kk, c in psj.items():
                v += c * psi[kk]
            out.append(v)
        for j in range(jmax + 1 - m):
            rhs = gmpy2.mpc(0)
            for n_, c in enumerate(num):
                rhs += c * lam[n_ + j]
            for i in range(m):
                rhs -= den[i] * out[j + i]
            out.append(rhs / den[m])
        return out

    def _mp_sum(self, rho, dps):
        """(sum, sum of |terms|) of the walk at rho, ``dps`` digits (gmpy2 mpfr)."""
        k = self.k
        with mpmath.workdps(dps), gmpy2.context(precision=int(dps * 3.33) + 32):
            r = mpmath.mpf(rho)
            u = to_gmpy(1 / r)
            key = ("walk-gmpy", dps)
            if key not in self._cache:
                self._cache[key] = (to_gmpy(2 * mpmath.pi), [to_gmpy(c) for c in self._walk_coeffs(dps)])
            two_pi, walk = self._cache[key]
            upow = [gmpy2.mpfr(1)]
            for _ in range(2 * k):
                upow.append(upow[-1] * u)
            total = gmpy2.mpfr(0)
            absum = gmpy2.mpfr(0)
            for g in self.groups(dps):
                for e, weight in g.branches:
                    z = g.s + mpmath.mpc(0, e) * r
                    vs = self._moments(g, z, k, dps)
                    rot = gmpy2.mpc(0, -e)
                    rot_j = gmpy2.mpc(weight) / two_pi
                    for j in range(k + 1):
                        if walk[j] != 0:
                            term = rot_j * vs[j] * (walk[j] * upow[2 * k - j])
                            total += term.real
                            absum += abs(term)
                        rot_j *= rot
            return total, absum

    def walk_mp(self, rho, lost=0.0):
        """The walk's sum at rho in MPFR (float result): at ``dps`` and ``dps`` + 20 digits until they
        agree to 16 digits and ``dps`` exceeds the digits lost by 20."""
        dps = 20 * math.ceil((25 + min(lost, 400.0)) / 20)
        while True:
            lo, _ = self._mp_sum(rho, dps)
            hi, size = self._mp_sum(rho, dps + 20)
            lost_mp = float(gmpy2.log10(size / abs(hi))) if hi != 0 else math.inf
            if hi == 0 and lo == 0:
                return -math.inf, 0.0
            if dps >= lost_mp + 20 and abs(hi - lo) <= 1e-16 * abs(hi):
                return float(gmpy2.log(abs(hi))), (1.0 if hi > 0 else -1.0)
            if dps >= _MAX_DPS:
                raise ArithmeticError(f"the dimension walk needs more than {_MAX_DPS} digits at rho = {rho}")
            dps = min(_MAX_DPS, max(dps + 40, 20 * math.ceil((min(lost_mp, dps + 100) + 30) / 20)))


def _psi_float(z, funcs):
    """[psi_m(z; p) for (p, m) in funcs] as columns (float64)."""
    psi = np.empty((z.size, len(funcs)), dtype=np.complex128)
    cache = {}
    for f, (p, m) in enumerate(funcs):
        if p == 0:
            psi[:, f] = -(np.log(z) + np.euler_gamma)
            continue
        q = -p
        if p not in cache:
            cache[p] = [_continued_float(z, q)]
        chain = cache[p]
        w = z * q
        while len(chain) < m:
            chain.append((1.0 - w * chain[-1]) / len(chain))
        psi[:, f] = q ** (1 - m) * chain[m - 1]
    return psi


def _psi_chain_mp(z, p, m_max):
    """[psi_m(z; p) for m = 1..m_max] as gmpy2 mpc (context precision; z, p mpmath numbers);
    p = 0: -(log z + gamma)."""
    if p == 0:
        return [-(gmpy2.log(to_gmpy(z)) + gmpy2.const_euler())]
    q = -p
    w = to_gmpy(z * q)
    qg = to_gmpy(q)
    chain = [_continued_mp(z, q)]
    while len(chain) < m_max:
        chain.append((1 - w * chain[-1]) / len(chain))
    return [qg ** (1 - m) * chain[m - 1] for m in range(1, m_max + 1)]


class _Series:
    """mu_n(rho) = sum_i e_i (rho/R)^(2i) below rho_s = R/2 (module docstring): the walk of mu_1's
    Taylor series, a_m = (1/pi) (-1)^m Re sum_g mult_g V_(g,2m)(s_g)/(2m)!. The moments come from the
    recurrence at two precisions 30 digits apart; the precision grows until the coefficients agree
    to ``dps`` + 2 digits in their terms at rho_s (relative to the largest)."""

    def __init__(self, walk):
        self.walk = walk
        self._coeffs = {}
        self.n_terms = 64
        while True:
            e = self.coeffs(40)
            with mpmath.workdps(40):
                sizes = [abs(v) * mpmath.mpf(4) ** (-i) for i, v in enumerate(e)]
                top = max(sizes)
            if all(v <= top * mpmath.mpf(10) ** -18 for v in sizes[-6:]) or self.n_terms >= 1024:
                break
            self.n_terms *= 2
        with mpmath.workdps(40):
            big = max(abs(v) for v in e)
            self.log_scale = float(mpmath.log(big)) if big > 0 else 0.0
            self.f = np.array([float(v / big) if big > 0 else 0.0 for v in e])
        self.f_abs = np.abs(self.f)

    def _run(self, wp):
        """e_i (scaled by R^(2i)) at ``wp`` digits."""
        w = self.walk
        k, n_terms = w.k, self.n_terms
        jmax = 2 * (k + n_terms)
        with mpmath.workdps(wp), gmpy2.context(precision=int(wp * 3.33) + 32):
            moments = [gmpy2.mpfr(0)] * (jmax + 1)
            for g in w.groups(wp):
                vs = w._moments(g, g.s, jmax, wp)
                for j in range(0, jmax + 1, 2):
                    moments[j] += g.mult * vs[j].real
            pi = to_gmpy(mpmath.pi)
            rad2 = to_gmpy(mpmath.mpf(w.radius)) ** 2
            fac = gmpy2.mpfr(1)  # (2m)!
            a = []
            for m in range(k + n_terms):
                if m:
                    fac *= (2 * m - 1) * (2 * m)
                a.append(moments[2 * m] * (-1) ** m / (pi * fac))
            scale = (-1 / pi) ** k
            ratio = gmpy2.mpfr(1)  # (k+i)!/i!
            for j in range(1, k + 1):
                ratio *= j
            out = []
            for i in range(n_terms):
                if i:
                    ratio = ratio * (k + i) / i
                out.append(mpmath.mpf(a[k + i] * scale * ratio * rad2**i))
            return out

    def coeffs(self, dps):
        if (dps, self.n_terms) not in self._coeffs:
            runs = {}
            extra = 10
            while True:
                for wp in (dps + extra, dps + extra + 30):
                    if wp not in runs:
                        runs[wp] = self._run(wp)
                lo, hi = runs[dps + extra], runs[dps + extra + 30]
                with mpmath.workdps(dps + extra + 30):
                    quarter = [mpmath.mpf(4) ** (-i) for i in range(len(hi))]
                    top = max(abs(y) * q for y, q in zip(hi, quarter))
                    diff = max(abs(x - y) * q for x, y, q in zip(lo, hi, quarter))
                    rel = diff / top if top > 0 else mpmath.mpf(0)
                if rel <= mpmath.mpf(10) ** -(dps + 2):
                    break
                extra = max(extra + 30, math.ceil(dps + extra + float(mpmath.log10(rel))) + 10)
                if dps + extra > _MAX_DPS:
                    raise ArithmeticError(f"the Taylor series of the walk needs more than {_MAX_DPS} digits")
            self._coeffs[dps, self.n_terms] = hi
        return self._coeffs[dps, self.n_terms]

    def values(self, rho):
        """(value / exp(log_scale), digits lost) in float64."""
        y = (np.asarray(rho, dtype=np.float64) / self.walk.radius) ** 2
        total = np.zeros(y.shape)
        absum = np.zeros(y.shape)
        for c, ca in zip(self.f[::-1], self.f_abs[::-1]):
            total = total * y + c
            absum = absum * y + ca
        with np.errstate(divide="ignore", invalid="ignore"):
            lost = np.where(total != 0, np.log10(absum / np.abs(total)), np.inf)
        return total, lost

    def value_mp(self, rho):
        """(log|mu|, sign) in mpmath at the precision the series' cancellation needs."""
        dps = 40
        while True:
            e = self.coeffs(dps)
            with mpmath.workdps(dps):
                y = (mpmath.mpf(rho) / self.walk.radius) ** 2
                total = mpmath.mpf(0)
                size = mpmath.mpf(0)
                for c in reversed(e):
                    total = total * y + c
                    size = size * y + abs(c)
                lost = float(mpmath.log10(size / abs(total))) if total != 0 else math.inf
            if dps >= lost + 20:
                return float(mpmath.log(abs(total))), (1.0 if total > 0 else -1.0)
            if dps >= _MAX_DPS:
                return -math.inf, 0.0  # an exact zero of mu to 500+ digits of its terms
            dps = min(_MAX_DPS, 20 * math.ceil((min(lost, dps + 100) + 30) / 20))


def _laurent(g, n_max):
    """[k_(-1), k_0, ..., k_(n_max)] of exp(-s r) R(r) at r = 0 (mpmath, current precision)."""
    r_ser = [mpmath.mpc(0)] * (n_max + 2)  # index n + 1 holds r^n
    for n, c in enumerate(g.poly):
        if n <= n_max:
            r_ser[n + 1] += c
    for p, cs in g.poles:
        if p == 0:
            r_ser[0] += cs[0]
            continue
        for m, c in enumerate(cs, start=1):
            # (r - p)^-m = (-p)^-m (1 - r/p)^-m = (-p)^-m sum_i C(m + i - 1, i) (r/p)^i
            lead = c * (-p) ** (-m)
            binom = mpmath.mpf(1)
            for i in range(n_max + 1):
                if i:
                    binom = binom * (m + i - 1) / i
                r_ser[i + 1] += lead * binom * p ** (-i)
    ex = [mpmath.mpc(1)]
    for i in range(1, n_max + 2):
        ex.append(ex[-1] * (-g.s) / i)
    return [sum(r_ser[i + 1] * ex[n - i] for i in range(-1, n + 1)) for n in range(-1, n_max + 1)]


class _Tail:
    """The expansion at infinity mu_d ~ sum_(n odd) k_n T_(d,n) rho^-(d+n) (module docstring), as
    c_0 rho^-(d+n0) sum_i c_i rho^(-2i) (float; c_0 in logs)."""

    def __init__(self, pairs, d, dps=_DPS):
        n_max = 2 * _ASYM_TERMS + 1
        with mpmath.workdps(dps):
            k = [mpmath.mpf(0)] * (n_max + 2)
            size = mpmath.mpf(0)
            for s, num, den, mult, self_conj in pairs:
                g = _Group(s, num, den, mult, self_conj, dps)
                for i, v in enumerate(_laurent(g, n_max)):
                    k[i] += mult * v.real
                    size = max(size, abs(v))
            if abs(k[0]) > mpmath.mpf(10) ** (10 - dps) * size:
                raise ArithmeticError("k is unbounded at r = 0")
            odd = [(n, k[n + 1]) for n in range(1, n_max + 1, 2)]
            tiny = mpmath.mpf(10) ** (15 - dps) * size
            first = next((i for i, (_, v) in enumerate(odd) if abs(v) > tiny), None)
            if first is None:
                raise ArithmeticError("no odd power of r in k at 0 within the expansion's range")
            self.n0 = odd[first][0]
            terms = [
                v
                * 2**n
                * mpmath.pi ** (-mpmath.mpf(d) / 2)
                * mpmath.gamma(mpmath.mpf(n + d) / 2)
                / mpmath.gamma(-mpmath.mpf(n) / 2)
                for n, v in odd[first:]
            ]
            lead = terms[0]
            self.log_lead = float(mpmath.log(abs(lead)))
            self.sign = 1.0 if lead > 0 else -1.0
            self.c = np.array([float(t / lead) for t in terms])
        self.d = d

    def values(self, rho, n_use):
        """(log|mu|, sign, relative error bound) with ``n_use`` terms: the error is twice the first
        term left out."""
        rho = np.asarray(rho, dtype=np.float64)
        y = 1.0 / (rho * rho)
        acc = np.zeros(rho.shape)
        for c in self.c[:n_use][::-1]:
            acc = acc * y + c
        nxt = np.abs(self.c[n_use]) * y**n_use if n_use < self.c.size else np.full(rho.shape, np.inf)
        with np.errstate(divide="ignore"):
            la = self.log_lead - (self.d + self.n0) * np.log(rho) + np.log(np.abs(acc))
        return la, self.sign * np.sign(acc), 2 * nxt / np.abs(acc) + 8 * _EPS

    def n_use(self, rho, target=1e-16):
        """The number of terms at rho whose next term is below ``target`` of the first, the terms
        falling monotonically up to it; 0 where there is none."""
        mags = np.abs(self.c)
        t = mags * (1.0 / (rho * rho)) ** np.arange(mags.size)
        below = np.nonzero(t[1:] <= target)[0]
        if not below.size:
            return 0
        n = int(below[0]) + 1
        return n if np.all(np.diff(t[1 : n + 1]) <= 0) else 0

    def useful_from(self, start, target=1e-16):
        """(rho, n_use): the smallest rho >= ``start`` on a grid of ratio 1.25 where :meth:`n_use`
        finds terms."""
        rho = start
        for _ in range(80):
            n = self.n_use(rho, target)
            if n:
                return rho, n
            rho *= 1.25
        return math.inf, 0


class _OddDensity:
    """mu_n (n odd) in logs: the series below rho_s, the walk between, the expansion at infinity from
    rho_a on (module docstring). ``log_floor``: rho -> log of the absolute error accepted from the
    float sums (None: every sum that loses more than ``_LOST_FLOAT`` digits is redone)."""

    def __init__(self, pairs, n):
        self.n = n
        self.walk = _Walk(pairs, n)
        self.series = _Series(self.walk)
        self.tail = _Tail(pairs, n)
        self.rho_s = self.walk.rho_s
        self.log_floor = None
        # the walk in multiple precision is the reference: 1e-12 at rho_a 2^i, i = 0..6
        self.rho_a, self.n_use, worst = _meet(
            self.tail, 2.0 * self.rho_s, self._walk_logs, 7, 1e-12, "the walk"
        )
        self.tail_error = 10 * worst

    def _walk_logs(self, rho):
        out = np.array([self.walk.walk_mp(float(r)) for r in rho])
        return out[:, 0], out[:, 1], np.zeros(rho.shape)

    def log_abs_and_sign(self, rho):
        la, sg, _ = self.evaluate(rho)
        return la, sg

    def evaluate(self, rho):
        """(log|mu|, sign, relative error bound): the float sums' 64 eps 10^lost (kept where that is
        under the floor), 4 eps for the multiple-precision values (20 digits beyond the loss, two
        precisions agreeing), the expansion's own bound beyond rho_a."""
        rho = np.asarray(rho, dtype=np.float64)
        la = np.full(rho.shape, -np.inf)
        sg = np.zeros(rho.shape)
        lost_all = np.zeros(rho.shape)
        small = rho < self.rho_s
        big = rho >= self.rho_a
        mid = ~small & ~big
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if np.any(small):
                val, lost = self.series.values(rho[small])
                la[small] = np.log(np.abs(val)) + self.series.log_scale
                sg[small] = np.sign(val)
                lost_all[small] = lost
            if np.any(mid):
                val, lost = self.walk.walk_float(rho[mid])
                la[mid] = np.log(np.abs(val))
                sg[mid] = np.sign(val)
                lost_all[mid] = lost
            rel = _float_bound(lost_all)
            if np.any(big):
                la[big], sg[big], rel[big] = self.tail.values(rho[big], self.n_use)
            redo = ~big & (lost_all > _LOST_FLOAT)
            if self.log_floor is not None and np.any(redo):
                # the float sums' bound log(64 eps 10^lost |value|) under the floor: kept (a sum
                # that is not finite is always redone)
                with np.errstate(divide="ignore"):
                    log_bound = la + np.log(rel)
                redo &= ~(log_bound <= self.log_floor(rho)) | ~np.isfinite(lost_all)
        for i in np.nonzero(redo)[0]:
            r = float(rho[i])
            la[i], sg[i] = (
                self.series.value_mp(r) if r < self.rho_s else self.walk.walk_mp(r, float(lost_all[i]))
            )
            rel[i] = 4 * _EPS
        return la, sg, rel


@builder("exp_rational", rel_error=1e-10)
def _exp_rational(groups, dim):
    """mu of Re sum_g exp(-s_g r) R_g(r) on R^dim (module docstring); None where the recognised form
    has a pole on the positive axis or is unbounded at 0 (other routes answer or refuse)."""
    d = dim
    pairs = _pairs(groups)
    if not _admissible(pairs):
        return None
    routes = [("the dimension walk", _walk_transform), ("the ray integrals", _ray_transform)]
    if d > _WALK_FIRST_D:
        routes.reverse()  # the rays are the cheaper in high d
    failures = []
    best = None
    for name, route in routes:
        if route is _walk_transform and d > (_MAX_D if best is None else _WALK_SECOND_D):
            continue
        try:
            tr = route(pairs, d)
        except ArithmeticError as exc:
            failures.append(f"{name}: {exc}")
            continue
        if tr.rel_error <= _GOOD_ENOUGH:
            return tr
        # a poor stated error (the rays' pieces cancelling near poles by the positive axis): the
        # other route too, the better kept
        if best is None or tr.rel_error < best.rel_error:
            best = tr
    if best is not None:
        return best
    raise TransformError(f"the exponential-rational transform in d = {d} failed ({'; '.join(failures)})")


def _walk_transform(pairs, d):
    return _odd_transform(pairs, d) if d % 2 == 1 else _even_transform(pairs, d)


def _admissible(pairs):
    """No pole of R_g on (0, inf), at most a simple pole at 0, and k bounded at 0."""
    zero_part = mpmath.mpf(0)
    with mpmath.workdps(_DPS):
        for s, num, den, mult, self_conj in pairs:
            g = _Group(s, num, den, mult, self_conj, _DPS)
            for p, cs in g.poles:
                if abs(p) <= mpmath.mpf(10) ** (-30):
                    if len(cs) > 1:
                        return False
                    zero_part += mult * cs[0].real
                elif abs(p.imag) <= mpmath.mpf(10) ** (-30) * abs(p) and p.real > 0:
                    return False
        return abs(zero_part) <= mpmath.mpf(10) ** (-25)


def _certified_floor(dens):
    """Set ``dens.log_floor`` from the peaks of |mu| and rho^(n-1) |mu| on a grid up to rho_a (every
    point certified): 1e-10 of the tables' floor (:class:`._oscillating._KinkTable`, 1e-13 of
    min(max|mu|, 100 max(rho^(n-1) |mu|) / rho^(n-1))), so that what the float sums leave below it is
    far under the tables' own resolution."""
    n = dens.n
    top = dens.rho_a
    grid = np.unique(np.concatenate([np.geomspace(1e-3 * dens.rho_s, top, 120), np.linspace(0, top, 61)[1:]]))
    la, _ = dens.log_abs_and_sign(grid)
    log_peak = float(np.max(la))
    log_radial = float(np.max(la + (n - 1) * np.log(grid))) + math.log(100.0)

    def floor(rho):
        with np.errstate(divide="ignore"):
            return math.log(1e-10 * _FLOOR) + np.minimum(log_peak, log_radial - (n - 1) * np.log(rho))

    dens.log_floor = floor


def _direct(dens):
    """rho -> (mu, error bound) for :class:`._oscillating._KinkTable` (the bounds of
    :meth:`_OddDensity.evaluate`; ArithmeticError beyond the float64 range)."""

    def direct(rho):
        la, sg, rel = dens.evaluate(np.asarray(rho, dtype=np.float64))
        if np.any(la > 700.0):
            raise ArithmeticError(f"the density exceeds the float64 range in d = {dens.n}")
        with np.errstate(under="ignore", invalid="ignore"):
            val = sg * np.exp(la)
            return val, np.where(sg != 0, np.maximum(rel, 4 * _EPS) * np.abs(val), 0.0)

    return direct


class _TabulatedDensity:
    """mu as a :class:`._oscillating._KinkTable` up to rho_a (split at b) and the expansion at infinity
    beyond, in logs."""

    def __init__(self, table, tail, rho_a, n_use, b):
        self.table, self.tail, self.rho_a, self.n_use, self.b = table, tail, rho_a, n_use, b

    def _table(self, rho):
        """The table at rho <= rho_a (0 beyond); at the split itself the value one ulp below (a
        quadrature node rounded onto b)."""
        return self.table(np.where(rho == self.b, self.b * (1 - _EPS), rho))

    def _tail(self, rho):
        la, sg, _ = self.tail.values(rho, self.n_use)
        with np.errstate(under="ignore"):
            return sg * np.exp(la)

    def values(self, rho):
        """(mu, error) in float64 (the projection's integrand)."""
        rho = np.asarray(rho, dtype=np.float64)
        out = self._table(rho)
        big = rho > self.rho_a
        out[big] = self._tail(rho[big])
        err = self.table.error * np.maximum(np.abs(out), self.table.floor_at(rho))
        return out, err

    def at_offset(self, off):
        """mu(b + off) at exact offsets from the tables' split (the expansion beyond rho_a)."""
        off = np.asarray(off, dtype=np.float64)
        out = self.table.at_offset(off)
        big = self.b + off > self.rho_a
        out[big] = self._tail(self.b + off[big])
        return out

    def log_abs_and_sign(self, rho):
        # in logs: beyond rho_a the expansion underflows float64 in high d (rho^-(d+1))
        rho = np.asarray(rho, dtype=np.float64)
        big = rho > self.rho_a
        val = self._table(np.where(big, 0.0, rho))
        with np.errstate(divide="ignore"):
            la, sg = np.log(np.abs(val)), np.sign(val)
        if np.any(big):
            la[big], sg[big], _ = self.tail.values(rho[big], self.n_use)
        return la, sg


def _table_transform(dens, tail_error, d, scale):
    """The :class:`RadialTransform` of a :class:`_TabulatedDensity`."""
    table = dens.table
    fn = dens.log_abs_and_sign
    peak = kink_peak(fn, dens.b, dens.rho_a)
    return RadialTransform(
        mu=vectorised(fn),
        log_abs_mu=log_form(fn),
        method=_METHOD,
        rel_error=max(table.error, tail_error, 1e-12),
        abs_error=min(1.0, max(_TINY, 2 * table.floor) / peak) if peak > 0 else 0.0,
        scale=scale,
        tail_exponent=float(d + dens.tail.n0),
        singular_points=(float(dens.b),),  # the tables' split: mu is smooth there
        mu_at_offset=lambda point, off: dens.at_offset(off),
        # the radial mass of the tables' absolute noise (at most 2 floor_at) up to rho_a
        mass_error=2 * table.radial_floor * math.exp(log_sphere_area(d)) * dens.rho_a,
    )


def _odd_table(pairs, n):
    """(:class:`_TabulatedDensity` of mu_n, the expansion's stated error, rho_s), n odd."""
    dens = _OddDensity(pairs, n)
    _certified_floor(dens)
    b = dens.rho_s
    table = _KinkTable(_direct(dens), b, dens.rho_a, tol=1e-10, noise=1e-12, dim=n, min_offset=_MIN_OFFSET)
    return _TabulatedDensity(table, dens.tail, dens.rho_a, dens.n_use, b), dens.tail_error, dens.rho_s


def _odd_transform(pairs, d):
    tab, tail_error, rho_s = _odd_table(pairs, d)
    return _table_transform(tab, tail_error, d, 2 * rho_s)


def _steps(pairs, n):
    """The projection's steps h0 to try, coarsest first: 1/(8 ceil(sqrt(n))) (in high n mu_n varies
    like |t - t_s|^-n near its complex singularities t_s), then, for an oscillation of frequency
    Omega that matters out to t = reach (:func:`_oscillation`, which oscillates in x at up to
    Omega reach), 1/(4 Omega reach), not below 1/1024."""
    h0 = 1.0 / (8 * math.ceil(math.sqrt(n)))
    omega, reach = _oscillation(pairs)
    fine = max(1.0 / (4 * omega * reach), 1.0 / 1024) if omega > 0 else h0
    return [h0] if fine >= h0 / 2 else [h0, fine]


def _oscillation(pairs):
    """(Omega, reach): the largest frequency of mu's oscillations and how far out they matter. mu
    oscillates like exp(i b t - a t) for each exponent s = a - i b (its transform is singular at
    t = +-(b + i a)) and like exp(i Re(p) t - |Im p| t) for each pole p of R; reach = 40 / decay."""
    omega, reach = 0.0, 0.0
    with mpmath.workdps(_DPS):
        for s, num, den, mult, self_conj in pairs:
            g = _Group(s, num, den, mult, self_conj, _DPS)
            parts = [(abs(float(g.s.imag)), float(g.s.real))]
            parts += [(abs(float(p.real)), abs(float(p.imag))) for p, _ in g.poles if p != 0]
            for freq, decay in parts:
                if freq > 0 and decay > 0:
                    omega = max(omega, freq)
                    reach = max(reach, 40.0 / decay)
    return omega, reach


def _projection(odd, rho_s, h0):
    """rho -> (mu_d(rho), error) = 2 int_0^inf mu_(d+1)(sqrt(rho^2 + v^2)) dv from the odd neighbour
    ``odd`` (rho -> (mu, error)): v = c sinh x, c = max(rho, rho_s), the trapezoidal rule in x up to
    v = 1e6 c at the steps h0 and h0/2 (the integrand is analytic and even in x: the rule converges
    geometrically, the difference of the two steps bounds the error of the finer one), plus the
    neighbour's own errors integrated (:func:`_steps` chooses h0)."""

    top = math.asinh(1e6)  # v up to 1e6 c

    def rule(rho, h):
        c = np.maximum(rho, rho_s)[:, None]
        x = np.arange(0.0, top + h, h)[None, :]
        v = c * np.sinh(x)
        t = np.sqrt(rho[:, None] ** 2 + v * v)
        f, fe = odd(t.ravel())
        w = np.full(x.shape, h)
        w[0, 0] = h / 2
        jac = 2.0 * c * np.cosh(x) * w
        return np.sum(f.reshape(t.shape) * jac, axis=1), np.sum(fe.reshape(t.shape) * jac, axis=1)

    def direct(rho):
        rho = np.asarray(rho, dtype=np.float64)
        out, err = np.empty(rho.shape), np.empty(rho.shape)
        block = max(1, int(2e6 * h0 / (2 * top)))  # about 2e6 nodes at a time
        for i in range(0, rho.size, block):
            part = rho[i : i + block]
            coarse, _ = rule(part, h0)
            fine, fine_err = rule(part, h0 / 2)
            out[i : i + block] = fine
            err[i : i + block] = np.abs(fine - coarse) + fine_err
        return out, err

    return direct


def _meet(tail, start, reference, n_checks, tol, name, limit=math.inf):
    """(rho_a, n_use, worst): the smallest rho_a >= ``start`` where the expansion at infinity's terms
    fall below 1e-16 of the first (:meth:`_Tail.useful_from`) and where, with those n_use terms (the
    ones used beyond rho_a), it agrees with ``reference`` (rho -> (log|mu|, sign, relative error)) at
    rho_a 2^i, i < ``n_checks``, to ``tol``; worst: the largest relative difference plus both sides'
    bounds. Past a failed check the search restarts at twice its rho; ArithmeticError where no rho_a
    up to ``limit`` is found."""
    for _ in range(12):
        rho_a, n_use = tail.useful_from(start)
        if not rho_a <= limit:
            break
        rho = rho_a * 2.0 ** np.arange(n_checks)
        la, sg, bound = tail.values(rho, n_use)
        lr, sr, err = reference(rho)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            rel = np.abs(sg * np.exp(la - lr) - sr) + bound + err
        rel = np.where(np.isfinite(rel), rel, np.inf)
        if np.all(rel <= tol):
            return float(rho_a), n_use, float(np.max(rel))
        start = 2.0 * float(rho[np.argmax(rel > tol)])
    raise ArithmeticError(f"its expansion at infinity does not meet {name}")


def _linear_logs(direct):
    """rho -> (log|mu|, sign, relative error) from rho -> (mu, absolute error)."""

    def logs(rho):
        val, err = direct(rho)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(np.abs(val)), np.sign(val), err / np.abs(val)

    return logs


def _even_transform(pairs, d):
    """mu_d, d even: the projection of the tabulated (d+1)-dimensional density, tabulated in turn;
    the expansion at infinity beyond rho_a where it meets the projection."""
    odd, odd_tail_error, rho_s = _odd_table(pairs, d + 1)
    tail = _Tail(pairs, d)
    failure = None
    for h0 in _steps(pairs, d + 1):
        # a finer step only where the coarse one's table or tail fails (oscillations slow to decay)
        try:
            direct = _projection(odd.values, rho_s, h0)
            # the projection is the reference: 1e-9 at rho_a 2^i, i = 0..4, within 1e3 of the odd rho_a
            rho_a, n_use, worst = _meet(
                tail, 2.0 * rho_s, _linear_logs(direct), 5, 1e-9, "the projection", limit=1e3 * odd.rho_a
            )
            table = _KinkTable(direct, rho_s, rho_a, tol=1e-10, noise=1e-12, dim=d, min_offset=_MIN_OFFSET)
            if not table.error <= _ACCEPT_EVEN:
                raise ArithmeticError(
                    f"its density's table reached a relative accuracy of only {table.error:.1e}"
                )
            break
        except ArithmeticError as exc:
            failure = exc
    else:
        raise failure
    even = _TabulatedDensity(table, tail, rho_a, n_use, rho_s)
    return _table_transform(even, max(10 * worst, odd_tail_error), d, 2 * rho_s)


# ---------------------------------------------------------------------------------------------
# high d: the Laplace-mixture integrals along rays
# ---------------------------------------------------------------------------------------------
_RAY_ANGLES = 9  # candidate directions of the rays in [-pi/2, pi/2]
#: the survey in y = log sigma: shifted by log(1 + rho + |s| + |p|) for a ray, by -log n for the hyperbola
_RAY_GRID = np.linspace(-60.0, 15.0, 151)
_RAY_SPAN = 46.0  # the integrand is cut where it is below e^-46 of its peak
_RAY_WORK = 6.0  # int |d log F / dy| dy per panel (12 nodes: error ~ 3^24/24! = 5e-13 for e^(6 i y))
_RAY_WIDTH = 4.0  # the widest panel in y = log sigma (12 nodes: e^y to 1e-16 on it)
_RAY_MAX_PANELS = 400
_RAY_TOL = 1e-11  # the two rules must agree to this, relative to int |f dt|
_RAY_SPLITS = 3
_RAY_NODES, _RAY_CHECK = 12, 16  # Gauss-Legendre nodes per panel: the value's rule is the second
_RAY_BLOCK = 128  # rho values at a time (up to 400 panels x 16 nodes each: ~100 MB of temporaries)


def _ray_angles(p):
    """The candidate angles theta in [-pi/2, pi/2] of rays t = tau e^(i theta) along which exp(t p)
    decays (Re(e^(i theta) p) < 0, with a margin); next to the positive axis only the sliver at
    +-pi/2 is left."""
    theta = np.linspace(-np.pi / 2, np.pi / 2, _RAY_ANGLES)
    ok = np.cos(theta + np.angle(p)) <= -0.05
    if np.any(ok):
        return theta[ok]
    return np.array([math.copysign(np.pi / 2, float(np.angle(p)))])


def _exact_terms(num, den):
    """[(n, c)] (exact) of the exponential-polynomial part of R = P/Q: its polynomial part c r^n and
    the 1/r term (n = -1, the residue at a simple pole r = 0)."""
    pn, pd = _poly(num), _poly(den)
    quo, rem = sympy.div(pn, pd)
    terms = [] if quo.is_zero else [(n, c) for n, c in enumerate(reversed(quo.all_coeffs())) if c != 0]
    if pd.eval(0) == 0 and not rem.is_zero:
        residue = sympy.cancel(rem.as_expr() * R / pd.as_expr()).subs(R, 0)
        if residue != 0:
            terms.append((-1, residue))
    return terms


class _Rays:
    """mu_d by the Laplace-mixture integrals of its partial fractions (docs/theory.md §21):

        exp(-s r) (r - p)^-l = int_0^(inf e^(i theta)) t^(l-1)/(l-1)! exp(t p) exp(-(s + t) r) dt,

    for a ray with Re(e^(i theta) p) < 0 and |theta| <= pi/2 (Re(s + t) > 0 along it), and the
    transform of exp(-a r), Re a > 0, in every d: C_d a (a^2 + rho^2)^-n, n = (d+1)/2,
    C_d = Gamma(n) pi^-n (principal powers of a +- i rho, both in the right half-plane), give

        mu_d(rho) = C_d Re sum [ sum_(p,l) c_(p,l) int t^(l-1)/(l-1)! e^(t p) g(s + t) dt
                                 + sum_j pi_j (-d/ds)^j g(s) + c_0 (s^2 + rho^2)^(1-n) / (2 (n-1)) ],

    g(a) = a (a^2 + rho^2)^-n, the last term from 1/r (d = 1: -c_0 log(s^2 + rho^2) / 2; the
    divergent constants cancel in the bounded sum). The last two are the exponential-polynomial closed
    form (:class:`._exp_poly._Group`, one factored polynomial per exponent). No float cancellation
    grows with d. The path of
    each pole's integral is chosen per rho (:meth:`_choose`) among rays in ``_RAY_ANGLES`` directions
    and the hyperbola of :meth:`_path`, and integrated by Gauss-Legendre panels in log sigma
    (:meth:`_breaks`, :meth:`_ray`) at two orders whose difference, plus the rounding of every
    logarithm (n |log(a^2 + rho^2)| eps), bounds the error. For s and R real the conjugate pole's
    integral is the conjugate: one of the two is computed, doubled."""

    def __init__(self, pairs, d):
        self.expo = (d + 1) / 2  # the exponent n of the docstring
        #: where the hyperbola turns into its continuation: (1 + sigma_1)^-n = e^-50
        self.sigma_1 = math.expm1(min(50.0 / self.expo, 600.0))
        self.log_c = math.lgamma(self.expo) - self.expo * math.log(math.pi)
        self.rays = []  # (s, p, [mult c_l], candidate paths) per pole p != 0
        self.exact = []  # the polynomial and 1/r parts: exponential polynomials (:mod:`._exp_poly`)
        self.exponents = []  # |s_g|
        with mpmath.workdps(_DPS):
            for s, num, den, mult, self_conj in pairs:
                g = _Group(s, num, den, mult, self_conj, _DPS)
                sv = complex(g.s)
                self.exponents.append(abs(sv))
                terms = _exact_terms(num, den)
                if terms:
                    self.exact.append(_ExpPolyGroup(s, terms, d, mult == 2))
                for p, cs in g.poles:
                    cs = [mult * complex(c) for c in cs]
                    if p == 0:
                        continue  # in ``exact``
                    if self_conj and p.imag < 0:
                        continue  # s and R real: the conjugate pole's integral is the conjugate
                    if self_conj and p.imag > 0:
                        cs = [2 * c for c in cs]
                    paths = np.append(_ray_angles(complex(p)), np.nan)  # nan: the hyperbola
                    self.rays.append((sv, complex(p), cs, paths))

    def _weight(self, cs, t, slope=False):
        """w(t) = sum_l c_l t^(l-1)/(l-1)! (and w'(t) with ``slope``)."""
        w = np.full(t.shape, cs[0], dtype=np.complex128)
        dw = np.zeros(t.shape, dtype=np.complex128)
        for l, c in enumerate(cs[1:], 1):
            w = w + c * t**l / math.factorial(l)
            if slope:
                dw = dw + c * t ** (l - 1) / math.factorial(l - 1)
        return w, dw

    def _log_integrand(self, s, p, cs, rho, t):
        """(log of w(t) e^(t p) g(s + t), the size of its parts for rounding). With Re a > 0 both
        a +- i rho lie in the right half-plane: log((a + i rho)(a - i rho)) is the sum of their
        principal logs (the branch of the half-integer powers in even d)."""
        a = s + t
        lq = np.log((a + 1j * rho) * (a - 1j * rho))
        la = np.log(a)
        lw = np.log(self._weight(cs, t)[0]) if len(cs) > 1 else np.log(cs[0])
        size = np.abs(t * p) + self.expo * (np.abs(lq) + 4.0) + np.abs(la) + 4.0
        return lw + t * p + la - self.expo * lq, size

    def _path(self, s, p, th, rho, sigma):
        """(t, dt/dsigma) along the path ``th`` (rows). A number: the ray t = sigma e^(i th). nan: the
        hyperbola a^2 + rho^2 = (1 + sigma)(s^2 + rho^2), a = s + t, on which (a^2 + rho^2)^-n falls
        like (1 + sigma)^-n with a constant phase (t = sigma Q / (sqrt(s^2 + sigma Q) + s),
        Q = s^2 + rho^2: the root is continuous from s, Im(s^2 + sigma Q) keeping the sign of
        Im s^2), up to sigma_1 = e^(50/n) - 1, then a ray from there at the speed reached, in the
        direction along which exp(t p) decays where log|a^2 + rho^2| grows fastest."""
        hyp = np.isnan(th[:, 0])
        t = np.empty(np.broadcast_shapes(sigma.shape, th.shape), dtype=np.complex128)
        dt = np.empty(t.shape, dtype=np.complex128)
        ray = np.nonzero(~hyp)[0]
        if ray.size:
            e = np.exp(1j * th[ray])
            t[ray] = sigma[ray] * e
            dt[ray] = e
        rows = np.nonzero(hyp)[0]
        if rows.size:
            r = rho[rows]
            q = (s + 1j * r) * (s - 1j * r)
            s1 = self.sigma_1
            sg = sigma[rows]
            past = sg > s1
            root = np.sqrt(s * s + np.minimum(sg, s1) * q)
            t_h = np.minimum(sg, s1) * q / (root + s)
            dt_h = q / (2 * root)
            if np.any(past):
                # the continuation past sigma_1
                root1 = np.sqrt(s * s + s1 * q)
                t1 = s1 * q / (root1 + s)
                grow = 2 * root1 / ((root1 + 1j * r) * (root1 - 1j * r))
                angles = _ray_angles(p)
                best = angles[np.argmax(np.real(np.exp(1j * angles)[None, :] * grow), axis=1)][:, None]
                speed = np.abs(q / (2 * root1)) * np.exp(1j * best)
                t_h = np.where(past, t1 + (sg - s1) * speed, t_h)
                dt_h = np.where(past, speed, dt_h)
            t[rows] = t_h
            dt[rows] = dt_h
        return t, dt

    def _survey(self, s, p, cs, th, rho, slope=False):
        """log sigma on the survey grid, log|sigma f dt/dsigma| there (f the integrand along the path
        ``th``, a column per rho; real arithmetic), and with ``slope`` |d log(f dt/dsigma)/dsigma|."""
        hyp = np.isnan(th)
        y = _RAY_GRID[None, :] + np.where(hyp, -math.log(self.expo), np.log1p(rho + abs(s) + abs(p))[:, None])
        t, dt = self._path(s, p, th, rho[:, None], np.exp(y))
        a = s + t
        r = rho[:, None]
        q = (a + 1j * r) * (a - 1j * r)
        w, dw = self._weight(cs, t, slope)
        with np.errstate(all="ignore"):
            lg = (t * p).real + np.log(np.abs(a * w * dt)) - self.expo * np.log(np.abs(q)) + y
            lg = np.where(np.isfinite(lg), lg, -np.inf)
            if not slope:
                return y, lg
            d_log = (dw / w + p + 1 / a - self.expo * 2 * a / q) * dt - np.where(hyp, dt / a, 0.0)
        return y, lg, np.abs(d_log)

    def _choose(self, s, p, cs, paths, rho):
        """The path per rho (an angle, nan for the hyperbola): among the candidates whose integral of
        |f dt| (from the survey) is within a factor 10 of the least, the one passing farthest from
        the singular points t = -s +- i rho relative to |t| (the hyperbola: never close)."""
        norms, widths = [], []
        for th in paths:
            col = np.full((rho.size, 1), th)
            y, lg = self._survey(s, p, cs, col, rho)
            top = lg.max(axis=1)
            with np.errstate(divide="ignore"):
                norms.append(top + np.log(np.sum(np.exp(lg - top[:, None]), axis=1)))
            width = np.full(rho.shape, 10.0)
            # a path whose integrand is not below the cut by the survey's end is not used
            ended = lg[:, -1] < top - _RAY_SPAN
            norms[-1] = np.where(ended, norms[-1], np.inf)
            if not np.isnan(th):
                for sign in (1.0, -1.0):
                    q = (-s + sign * 1j * rho) * np.exp(-1j * th)  # the singular point, ray's frame
                    with np.errstate(divide="ignore", invalid="ignore"):
                        width = np.minimum(width, np.where(q.real > 0, np.abs(q.imag) / q.real, np.inf))
            widths.append(width)
        norms, widths = np.array(norms), np.array(widths)
        low = norms.min(axis=0)
        if not np.all(np.isfinite(low)):
            raise ArithmeticError("no integration path of the ray integrals decays within its survey")
        good = norms <= low + math.log(10.0)
        return np.asarray(paths)[np.argmax(np.where(good, widths - 1e-3 * (norms - low), -np.inf), axis=0)]

    def _breaks(self, s, p, cs, th, rho):
        """Panel breaks in y = log sigma per rho (rows), over the survey points where sigma |f dt|
        is within e^-46 of its peak (and one point beyond on each side), at equal increments of
        int |d log(sigma f dt/dsigma)/dy| dy (``_RAY_WORK`` per panel, at most ``_RAY_WIDTH`` wide):
        the panels follow the integrand's decay, its oscillation and, graded towards sigma = 0,
        the hyperbola's square root (a branch point at sigma = -s^2/Q)."""
        y, lg, slope = self._survey(s, p, cs, th, rho, slope=True)
        keep = lg >= lg.max(axis=1, keepdims=True) - _RAY_SPAN
        n_grid = keep.shape[1]
        first = np.maximum(np.argmax(keep, axis=1) - 1, 0)
        last = np.minimum(n_grid - np.argmax(keep[:, ::-1], axis=1), n_grid - 1)
        rate = np.abs(1.0 + np.exp(y) * np.where(np.isfinite(slope), slope, 0.0))
        # the larger rate at either end of each survey step (the rate may peak between them)
        steps = np.maximum(rate[:, 1:], rate[:, :-1]) * np.diff(y, axis=1)
        work = np.concatenate([np.zeros((rho.size, 1)), np.cumsum(steps, axis=1)], axis=1)
        rows = np.arange(rho.size)
        span = work[rows, last] - work[rows, first]
        width = y[rows, last] - y[rows, first]
        k = int(
            min(
                max(8, np.ceil(np.max(span) / _RAY_WORK), np.ceil(np.max(width) / _RAY_WIDTH)),
                _RAY_MAX_PANELS,
            )
        )
        grid = np.linspace(0.0, 1.0, k + 1)
        out = np.empty((rho.size, k + 1))
        for i in range(rho.size):
            j0, j1 = first[i], last[i]
            by_work = np.interp(work[i, j0] + grid * span[i], work[i, j0 : j1 + 1], y[i, j0 : j1 + 1])
            by_width = y[i, j0] + grid * width[i]
            # equal work, but no panel wider than _RAY_WIDTH in y: the larger of the two at each step
            out[i] = np.maximum.accumulate(np.maximum(by_work, np.minimum(by_width, by_work + _RAY_WIDTH)))
        # the hyperbola's corner at sigma_1 (its continuation turns there): a break
        hyp = np.nonzero(np.isnan(th[:, 0]))[0]
        if hyp.size:
            y1 = math.log(self.sigma_1)
            inside = hyp[(out[hyp, 0] < y1) & (y1 < out[hyp, -1])]
            j = np.argmin(np.abs(out[inside] - y1), axis=1)
            out[inside, j] = y1
        return out

    def _ray(self, s, p, cs, paths, rho):
        """(value / e^scale, absolute error / e^scale, scale) of one pole's integral per rho:
        Gauss-Legendre panels in y = log sigma (:meth:`_breaks`) at 12 and 16 nodes, the panels of
        the rows where the two differ by more than ``_RAY_TOL`` of the integral of |f dt| halved (up
        to ``_RAY_SPLITS`` times, while under ``_RAY_MAX_PANELS``); the difference bounds the error, with the rounding of the
        logarithms (and sigma < e^y_0 left out: below e^-46 of the peak there, the integrand falling
        like sigma^l towards 0)."""
        th = self._choose(s, p, cs, paths, rho)[:, None]
        brk = self._breaks(s, p, cs, th, rho)
        out = np.zeros(rho.shape, dtype=np.complex128)
        err = np.zeros(rho.shape)
        scale = np.zeros(rho.shape)
        todo = np.arange(rho.size)
        for split in range(_RAY_SPLITS + 1):
            val, e, mag, top = self._panels(s, p, cs, th[todo], rho[todo], brk)
            out[todo], err[todo], scale[todo] = val, e, top
            bad = ~(e <= _RAY_TOL * mag)
            if not np.any(bad) or split == _RAY_SPLITS or brk.shape[1] > _RAY_MAX_PANELS:
                break  # (what is left is in the stated error)
            todo, brk = todo[bad], brk[bad]
            mid = 0.5 * (brk[:, 1:] + brk[:, :-1])
            brk = np.sort(np.concatenate([brk, mid], axis=1), axis=1)
        return out, err, scale

    def _panels(self, s, p, cs, th, rho, brk):
        """(integral, error bound, integral of |f dt|, scale) on the panels ``brk`` (rows)."""
        lo, hi = brk[:, :-1], brk[:, 1:]
        r = rho[:, None]
        sums = []
        for nodes in (_RAY_NODES, _RAY_CHECK):
            x, w = gauss_legendre(nodes)
            y = (0.5 * (hi - lo)[:, :, None] * (x + 1.0) + lo[:, :, None]).reshape(rho.size, -1)
            wt = (0.5 * (hi - lo)[:, :, None] * w).reshape(rho.size, -1)
            t, dt = self._path(s, p, th, r, np.exp(y))
            with np.errstate(all="ignore"):
                lf, size = self._log_integrand(s, p, cs, r, t)
                lf = lf + np.log(dt) + y
                if not sums:
                    top = np.max(np.where(np.isfinite(lf.real), lf.real, -np.inf), axis=1)
                    top = np.where(np.isfinite(top), top, 0.0)
                terms = np.exp(lf - top[:, None]) * wt
            ok = np.isfinite(terms)
            terms = np.where(ok, terms, 0.0)
            size = np.where(ok, size + np.abs(y), 0.0)
            sums.append(
                (terms.sum(axis=1), (np.abs(terms) * (size + 1.0)).sum(axis=1), np.abs(terms).sum(axis=1))
            )
        (coarse, _, _), (fine, rnd, mag) = sums
        return fine, np.abs(fine - coarse) + 4 * _EPS * rnd, mag, top

    def evaluate(self, rho):
        """(log|mu|, sign, relative error bound) at ``rho`` (a flat float array)."""
        la, sg, log_env, log_err = self.parts(rho)
        with np.errstate(over="ignore", invalid="ignore"):
            return la, sg, np.exp(log_err - la)

    def parts(self, rho):
        """(log|mu|, sign, log E, log of the error bound) at ``rho`` (a flat float array), E the sum of
        the moduli of the pieces (|mu| <= E: mu / E is smooth where mu changes sign)."""
        rho = np.asarray(rho, dtype=np.float64)
        out = [np.empty(rho.shape) for _ in range(4)]
        for i in range(0, rho.size, _RAY_BLOCK):
            for o, v in zip(out, self._block(rho[i : i + _RAY_BLOCK])):
                o[i : i + _RAY_BLOCK] = v
        return tuple(out)

    def _block(self, rho):
        pieces = []  # (scale, value / e^scale, |value| / e^scale, error / e^scale): _combine's form
        for s, p, cs, thetas in self.rays:
            val, err, scale = self._ray(s, p, cs, thetas, rho)
            pieces.append((scale, val, np.abs(val), err))
        with np.errstate(divide="ignore", invalid="ignore"):
            for grp in self.exact:  # its logs include C_d, added to all pieces below (-inf on a root)
                la, ph = grp.log_complex(rho * rho)
                rounding = _EPS * grp.rounding(rho * rho)
                pieces.append((la - self.log_c, np.exp(1j * ph), np.ones(rho.shape), rounding))
            shift, total, env, error = _combine(pieces)
            shift = shift + self.log_c
            return (
                np.log(np.abs(total.real)) + shift,
                np.sign(total.real),
                np.log(env) + shift,
                np.log(error) + shift,
            )


def _ray_transform(pairs, d):
    """mu_d from :class:`_Rays` in logs (high d: mu spans 10^+-1000): log E and q = mu / E (or log|mu|
    where mu keeps its sign) interpolated in u = log rho (adaptive piecewise Chebyshev, measured
    error) from 1e-30 R to rho_a, where the expansion at infinity meets the ray integrals (1e-6 at
    rho_a 2^i, i < 3: the pieces' float sum cancels like rho^-(n0-1)
    there), the expansion beyond. Errors: the rays' bounds and the fits' measured errors,
    both relative to E; where mu is small against E (its zeros) they enter ``mass_error``."""
    rays = _Rays(pairs, d)
    tail = _Tail(pairs, d)
    scale = min(rays.exponents)
    rho_a, n_use, worst = _meet(tail, scale, rays.evaluate, 3, 1e-6, "the ray integrals")
    lo, hi = math.log(scale) + math.log(1e-30), math.log(rho_a)
    fit = {"n_init": 8, "degree": 24, "relative": False}
    probe = rays.parts(np.exp(np.linspace(lo, hi, 241)))
    if not np.all(np.isfinite(probe[0]) | (probe[1] == 0)):
        raise ArithmeticError("the ray integrals are not finite")
    one_signed = bool(np.all(probe[1] == probe[1][0]))
    log_e_probe = probe[0] if one_signed else probe[2]
    sign_all = float(probe[1][0])
    la0, sg0, _, _ = rays.parts(np.zeros(1))
    at_zero = (float(la0[0]), float(sg0[0]))

    def noise(v):
        return 32 * _EPS * float(np.max(np.abs(v)))  # the rounding of log values

    def with_errors(values, le, lerr):
        # the rays' bound relative to E, scaled so that fit_adaptive's ve / max(|v|, 1) is it:
        # each panel is not refined below its own values' noise
        with np.errstate(over="ignore", invalid="ignore"):
            return values, np.exp(lerr - le) * np.maximum(np.abs(values), 1.0)

    if one_signed:

        def log_mu(u):
            la, _, _, lerr = rays.parts(np.exp(u))
            return with_errors(la, la, lerr)

        log_env, e_env = fit_adaptive(log_mu, lo, hi, tol=1e-12, noise=noise, with_errors=True, **fit)
        ratio, zeros = None, np.zeros(0)  # one sign: no zeros
    else:

        def env_and_q(u):
            la, sg, le, lerr = rays.parts(np.exp(u))
            return with_errors(le + 1j * (sg * np.exp(la - le)), le, lerr)

        # log E and q = mu / E in one complex fit, both to 1e-12 absolute (relative to E)
        both, e_env = fit_adaptive(env_and_q, lo, hi, tol=1e-12, noise=noise, with_errors=True, **fit)

        def log_env(u):
            return both(u).real

        def ratio(u):
            return both(u).imag

        zeros = _fit_zeros(both, tail, rho_a, n_use)
    # the fits' error relative to E: measured (beyond their values' noise) plus the rounding of the
    # logs; each point adds (1 + the noise gain) times its own values' bound (below)
    eps_e = e_env + 32 * _EPS * (1.0 + float(np.max(np.abs(log_e_probe))))

    def log_abs_and_sign(rho):
        rho = np.asarray(rho, dtype=np.float64)
        out = np.empty(rho.shape)
        sign = np.full(rho.shape, sign_all)
        big = rho > rho_a
        small = rho < math.exp(lo)
        mid = ~big & ~small
        if np.any(mid):
            out[mid], sign[mid] = envelope_logs(log_env, ratio, np.log(rho[mid]), sign_all)
        if np.any(small):  # analytic in rho^2 at 0: the value at 1e-30 R is mu(0) to rounding
            out[small], sign[small] = at_zero
        if np.any(big):
            out[big], sign[big], _ = tail.values(rho[big], n_use)
        return out, sign

    # the error bound relative to E: the rays' own (at the probe points, interpolated in u) and the
    # fits' (measured, and the noise they were allowed). rel_error: its largest share of |mu| on a
    # fine grid of the tables, leaving out a probe step about each sign change of mu; all of it,
    # integrated against the radial weight, is the mass error (those neighbourhoods included)
    la, _, le, lerr = probe
    u_probe = np.linspace(lo, hi, la.size)
    log_e = la if one_signed else le
    with np.errstate(over="ignore", invalid="ignore"):
        own = np.exp(lerr - log_e)
    u = np.linspace(lo, hi, 8 * la.size)
    total = (1.0 + _NOISE_GAIN) * np.exp(np.interp(u, u_probe, np.log(own + _TINY))) + eps_e
    fitted = log_env(u)
    if ratio is not None:
        with np.errstate(divide="ignore"):
            share = total / np.abs(ratio(u))
        if zeros is not None and zeros.size:
            step = u_probe[1] - u_probe[0]
            near = np.min(np.abs(u[:, None] - np.log(zeros)[None, :]), axis=1) <= step
            share = share[~near]
    else:
        share = total
    rel_error = float(np.max(share, initial=0.0))
    radial = np.log(total) + fitted + d * u + log_sphere_area(d)
    peak = float(np.max(radial))
    mass_error = 2 * math.exp(peak) * float(np.sum(np.exp(radial - peak))) * (u[1] - u[0])
    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method=_RAY_METHOD,
        rel_error=max(rel_error, 10 * worst, 1e-12),
        abs_error=0.0,
        scale=2 * scale,
        tail_exponent=float(d + tail.n0),
        mass_error=mass_error,
        zeros=zeros,
    )


def _fit_zeros(both, tail, rho_a, n_use):
    """The sign changes of mu: the real roots of the fit of q = mu / E (the imaginary part of ``both``,
    the complex fit of log E + i q) on each of its panels (in u = log rho) where q changes sign across
    them; None where the expansion beyond rho_a is not of one sign (its sign changes are not located)."""
    roots = []
    for a, b, c in zip(both.edges[:-1], both.edges[1:], both.coefs.imag):
        z = np.polynomial.chebyshev.chebroots(c)
        z = z.real[(np.abs(z.imag) <= 1e-9) & (np.abs(z.real) <= 1.0)]
        roots.extend(0.5 * (b - a) * z + 0.5 * (a + b))
    u = np.unique(np.round(np.array(roots, dtype=np.float64), 12))
    if u.size:
        h = 1e-7 * np.maximum(1.0, np.abs(u))
        u = u[np.sign(both(u - h).imag) * np.sign(both(u + h).imag) < 0]
    far = rho_a * np.geomspace(1.0, 1e6, 200)
    if np.unique(tail.values(far, n_use)[1]).size > 1:
        return None
    return np.exp(u)
