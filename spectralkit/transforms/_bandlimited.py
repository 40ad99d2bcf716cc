"""Band-limited kernels: trigonometric polynomials over powers of r, such as Fejér's sin(r)^2/r^2.

A kernel written as a sum of terms c cos(b r) / r^m (m even) and c sin(b r) / r^m (m odd), with
b >= 0 and m >= 1, that is analytic at r = 0 (the poles of its terms cancel) is an even entire
function of exponential type B = max b: sinc powers (sin(r)/r)^M, Fejér's kernel, their differences
and products with cos(b r) (rewritten as sums of single frequencies first). Its measure is supported
in the ball rho <= B. Write k(r) = sum_t gamma_t exp(i lambda_t r) r^(-m_t). The one-dimensional
density (the convention of ``docs/conventions.md``: int mu = k(0)) satisfies
mu_1^(M)(omega) = (-i)^M sum_t gamma_t r^(M - m_t) ^ (omega), and the M-fold antiderivative that
vanishes at +infinity gives, term by term, for omega > 0,

    mu_1(omega) = sum_t gamma_t i^(m_t) (lambda_t - omega)_+^(m_t - 1) / (m_t - 1)!,

so each frequency b > 0 contributes a truncated power on (0, b): with kappa = (c/2) (-1)^(m/2)
/ (m-1)! for c cos(b r)/r^m and kappa = (c/2) (-1)^((m-1)/2) / (m-1)! for c sin(b r)/r^m, the piece
of b is P_b(rho) = sum kappa (b - rho)^(m-1) on 0 < rho < b (b = 0 terms contribute only at
omega < 0). Fejér: mu_1 = (2 - rho)/4 on (0, 2).

Odd d = 2n + 1: the dimension walk mu_(d+2) = -(1/(2 pi rho)) d mu_d / d rho, applied n times.
On the basis rho^-a (b - rho)^c the operator D = -(1/rho) d/drho is closed with integer weights,

    D[rho^-a (b - rho)^c] = a rho^-(a+2) (b - rho)^c + c rho^-(a+1) (b - rho)^(c-1),

and D[f 1_(rho<b)] adds f(b-) / b * delta(rho - b): a jump of mu_(d) at b becomes a shell in d + 2.
A shell after the last step is a uniform measure on the sphere rho = b (mass
C S_(d-1) b^(d-1), C its radial coefficient); a jump before it would become the derivative of a
shell, which is not a measure: then the transform says so (the kernel decays too slowly for R^d).
The coefficients are exact integers times kappa (exact rationals when the formula's numbers are
rational, else 120-digit mpmath numbers), so the pieces carry no rounding. Between two knots they
are also merged, exactly, into one Laurent polynomial (``_merged``): its poles at 0 cancel in the
coefficients, where the factored pieces cancel by tens of digits next to rho = 0 in high d.

Even d = 2n: the projection of the (d + 1)-dimensional measure, term by term and exactly,
mu_d(rho) = 2 int_rho^b s mu_(d+1)(s) (s^2 - rho^2)^-1/2 ds: with (b - s)^c expanded every term is a
multiple of I_k = int_rho^b s^k (s^2 - rho^2)^-1/2 ds, and s = rho cosh t gives (S = sqrt(b^2 - rho^2))

    I_0 = acosh(b / rho), I_1 = S, I_k = b^(k-1) S / k + (k-1)/k rho^2 I_(k-2)               (k >= 2),
    I_-1 = arccos(rho / b) / rho, I_-2 = S / (b rho^2),
    I_-p = S / ((p-1) b^(p-1) rho^2) + (p-2)/(p-1) rho^-2 I_-(p-2)                            (p >= 3),

so the pieces become rho^-a times S^(+-1), acosh(b / rho) or arccos(rho / b) (a shell C delta(s - b)
of mu_(d+1) adds 2 C b / S). Below half the first knot a series replaces them (``_merged_even``).
mu_d is a measure exactly when mu_(d+1) is (the local exponent at a knot changes by 1/2 per
dimension).

Evaluation (``_Density``): in longdouble (extended precision on x86, an exponent range that holds
rho^-a in high d) with a rounding bound per term; the form (factored or merged) with the smaller
bound is kept, and where that bound exceeds ``_FLOAT_TOL`` of the value the sum is redone in MPFR
(gmpy2) at the precision the measured cancellation requires.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from fractions import Fraction

import gmpy2
import mpmath
import numpy as np
import sympy
from sympy.simplify.fu import TR8

from .._numerics.special import log_sphere_area
from ..kernels._parse import R
from ._forms import log_form, not_a_measure, vectorised
from ._rational import _T, _in_r2
from ._registry import MATCH_FAILURES, builder, coefficient_of_r, exact_rationals, matcher
from ._types import RadialTransform

__all__: list[str] = []  # private module

#: digits of the pieces' coefficients when the formula has irrational numbers (else exact rationals)
_DPS = 120
#: relative rounding bound of the longdouble pass above which the sum is redone in MPFR
_FLOAT_TOL = 1e-12
_EPS = np.finfo(np.float64).eps
_BITS_PER_DIGIT = math.log2(10)
#: the float pass's type: x87 extended precision where the hardware has it (64-bit mantissa, and an
#: exponent range that holds rho^-a in high d); elsewhere float64 (longdouble is then either float64
#: or a software quad, far too slow): more sums go to MPFR, none is less accurate, but the sampler's
#: tables of (sin(r)/r)^8 in d = 16 take 74 s instead of 10 s
_LD = np.longdouble if np.finfo(np.longdouble).nmant == 63 else np.float64
_LD_EPS = float(np.finfo(_LD).eps)
#: terms N of the even-d series next to 0 (``_merged_even``): remainder <= 4^-N (8/3) int |M| at b_1 / 2
_SERIES = 40
#: largest total power max(m) accepted (the walk's pieces grow like m * n terms)
_MAX_POWER = 200


def trig_terms(expr):
    """``expr`` as terms ``(kind, b, m, c)`` meaning c cos(b r)/r^m ("cos") or c sin(b r)/r^m ("sin"),
    b >= 0 and m an integer, after products of sines and cosines are turned into sums; None when it
    is not such a sum."""
    if not expr.has(sympy.sin, sympy.cos):
        return None
    # floats as their exact binary values: the pieces are then exact rationals (see _pieces)
    rewritten = sum_of_frequencies(exact_rationals(expr))
    if rewritten is None:
        return None
    out = []
    for part in sympy.Add.make_args(rewritten):
        coef, power, trig = sympy.Integer(1), 0, None
        for f in sympy.Mul.make_args(part):
            if f.is_number:
                coef *= f
            elif f == R:
                power += 1
            elif f.is_Pow and f.base == R and f.exp.is_Integer:
                power += int(f.exp)
            elif isinstance(f, (sympy.cos, sympy.sin)) and trig is None:
                b = coefficient_of_r(f.args[0])  # (r + sqrt(2) r) / r is not simplified by itself
                if b is None or not b.is_real:
                    return None
                trig = (f.func, b)
            else:
                return None
        if trig is None:
            kind, b = "cos", sympy.Integer(0)
        else:
            func, b = trig
            if b.is_negative:
                b = -b
                coef = coef if func is sympy.cos else -coef
            kind = "cos" if func is sympy.cos else "sin"
        out.append((kind, b, -power, coef))
    return out


def split_band_limited(expr):
    """``expr`` as summands: first the band-limited part (the terms whose rational factor has its
    poles at r = 0 only, after partial fractions), then the others, each one frequency times a
    rational function analytic at 0; None when there is nothing to split.
    sin(r)^2/(r^2 (1 + r^2)) = (1 - cos 2r)/(2 r^2) - (1 - cos 2r)/(2 (1 + r^2)) splits into Fejér's
    kernel and two rational-quadratic terms."""
    if not expr.has(sympy.sin, sympy.cos):
        return None
    # fractional powers stay whole through the expansion ((1 + r^2)^(5/2) would become
    # (1 + r^2)^2 sqrt(1 + r^2), multiplied out)
    opaque = {p: sympy.Dummy() for p in expr.atoms(sympy.Pow) if not p.exp.is_Integer and p.base.has(R)}
    rewritten = sum_of_frequencies(expr.xreplace(opaque))
    if rewritten is None:
        return None
    rewritten = rewritten.xreplace({v: k for k, v in opaque.items()})
    band, others = [], []
    for part in sympy.Add.make_args(rewritten):
        trig = [f for f in sympy.Mul.make_args(part) if isinstance(f, (sympy.sin, sympy.cos))]
        if len(trig) > 1:
            return None
        rest = part / trig[0] if trig else part
        if not rest.is_rational_function(R):
            # cos(r)^2 (1 + r^2)^-1.5, r^2 cos(r) (1 + r^2)^-2.5: one frequency times a power of a
            # rational quadratic (with r^(2j), j < alpha, expanded binomially) is a closed form
            pieces = _binomial(rest)
            if pieces is None and trig and isinstance(trig[0], sympy.sin):
                # r sin(b r) (1 + r^2)^-alpha = (sin(b r)/r) r^2 (1 + r^2)^-alpha
                lifted = _binomial(sympy.expand_power_base(rest * R))
                pieces = None if lifted is None else [piece / R for piece in lifted]
            if pieces is None:
                return None
            others.extend(piece * trig[0] if trig else piece for piece in pieces)
            continue
        for piece in _partial_fractions_in_r2(rest):
            coef, power = piece.as_coeff_exponent(R)
            target = band if coef.is_number and power.is_Integer and power < 0 else others
            target.append(piece * trig[0] if trig else piece)
    if not band and len(others) < 2:
        return None
    return ([sympy.Add(*band)] if band else []) + others


def _partial_fractions_in_r2(rest):
    """The partial fractions of a rational function of r, taken in t = r^2 when it is one of r^2 (or
    r times one), so that every piece is a function of r^2 again (1/(1 + r^2 + r^4) factored over
    the rationals in r gives (r + 1)/(r^2 + r + 1) and its mirror, neither even)."""
    for lift in (sympy.Integer(1), R):
        pq = _in_r2(rest * lift)
        if pq is not None:
            pieces = sympy.Add.make_args(sympy.apart(pq[0] / pq[1], _T))
            return [piece.subs(_T, R**2) / lift for piece in pieces]
    return list(sympy.Add.make_args(sympy.apart(sympy.together(rest), R)))


def split_bessel_rational(expr):
    """c r^-nu besselj(nu, b r) R(r^2), R rational with more than one partial fraction over the
    rationals (real poles: 1/((1 + r^2)(2 + r^2))), as the sum of c r^-nu besselj(nu, b r) times each
    fraction (each a Bessel oscillation under one rational-quadratic power, :mod:`._bessel_mixture`);
    None for other forms."""
    bessel = [f for f in sympy.Mul.make_args(expr) if isinstance(f, sympy.besselj)]
    if len(bessel) != 1:
        return None
    rest = expr / bessel[0]
    power = sympy.Integer(0)
    for f in sympy.Mul.make_args(rest):
        if f == R:
            power += 1
        elif f.is_Pow and f.base == R and f.exp.is_number:
            power += f.exp
    rational = sympy.cancel(rest * R ** (-power))
    if not rational.is_rational_function(R) or rational.has(sympy.besselj):
        return None
    pieces = _partial_fractions_in_r2(rational)
    if len(pieces) < 2:
        return None
    return [piece * bessel[0] * R**power for piece in pieces]


def _binomial(rest):
    """c r^(2h) (A + B r^2)^(-alpha) (h >= 0 an integer below alpha) as the sum
    c B^-h sum_i C(h, i) (-A)^(h-i) (A + B r^2)^(i - alpha) of powers of one rational quadratic (each
    decaying no slower than the whole); None for other factors."""
    coef, j, power = sympy.Integer(1), 0, None
    for f in sympy.Mul.make_args(rest):
        if f.is_number:
            coef *= f
        elif f == R:
            j += 1
        elif f.is_Pow and f.base == R and f.exp.is_Integer and f.exp > 0:
            j += int(f.exp)
        elif f.is_Pow and f.base.is_polynomial(R) and f.exp.is_number and power is None:
            power = f
        else:
            return None
    if power is None or j % 2:
        return None
    poly = sympy.Poly(sympy.expand(power.base), R)
    if poly.degree() != 2:
        return None
    b2, b1, a0 = poly.all_coeffs()
    alpha = -power.exp
    if b1 != 0 or not (a0.is_positive and b2.is_positive and alpha.is_positive) or not j // 2 < alpha:
        return None
    half = j // 2
    return [
        coef * b2**-half * sympy.binomial(half, i) * (-a0) ** (half - i) * power.base ** (i - alpha)
        for i in range(half + 1)
    ]


def sum_of_frequencies(expr):
    """``expr`` expanded, with products and powers of sines and cosines turned into sums (repeated
    TR8); None when that does not finish."""
    rewritten = sympy.expand(expr)
    for _ in range(_MAX_POWER):  # TR8 lowers one level of products / powers at a time
        if not _has_trig_product(rewritten):
            return rewritten
        rewritten = sympy.expand(TR8(rewritten))
    return None


def _has_trig_product(expr):
    """True when some product or power holds more than one sine/cosine factor (TR8 is needed)."""
    for node in sympy.preorder_traversal(expr):
        if node.is_Pow and isinstance(node.base, (sympy.sin, sympy.cos)):
            return True
        if node.is_Mul and sum(isinstance(f, (sympy.sin, sympy.cos)) for f in node.args) > 1:
            return True
    return False


def _number(x, exact):
    """A sympy number as a Fraction (``exact``: every number of the formula is rational) or an mpf."""
    if exact:
        x = sympy.Rational(x)
        return Fraction(int(x.p), int(x.q))
    return mpmath.mpf(sympy.N(x, _DPS))


def _rational(terms):
    """True when every frequency and coefficient is rational: the pieces are then exact Fractions."""
    return all(b.is_Rational and c.is_Rational for _, b, _, c in terms)


def _zero(x, size):
    """x == 0 exactly for Fractions; to 10^(20 - _DPS) of ``size`` for mpf."""
    return x == 0 if isinstance(x, Fraction) else abs(x) <= mpmath.mpf(10) ** (20 - _DPS) * size


def _pieces(terms):
    """{b: {(a, c): kappa}} of mu_1 on (0, b) (see the module docstring), or None when a term is odd
    in r (cos over an odd power, sin over an even one), does not decay (m < 1) or the poles at 0 do
    not cancel. Exact rationals when the formula's numbers are rational, else mpf at ``_DPS`` digits:
    the pieces cancel against each other by tens of digits next to rho = 0 in high d."""
    exact = _rational(terms)
    with mpmath.workdps(_DPS):
        pieces = defaultdict(lambda: defaultdict(int))
        if any(m < 1 or m > _MAX_POWER or (m % 2 == 0) != (kind == "cos") for kind, _, m, _ in terms):
            return None
        if not _analytic_at_zero(terms, exact):
            return None
        for kind, b, m, c in terms:
            bm, cm = _number(b, exact), _number(c, exact)
            if bm == 0:
                continue  # contributes only at omega < 0
            half = (m if kind == "cos" else m - 1) // 2
            pieces[bm][(0, m - 1)] += cm / 2 * (-1) ** half / math.factorial(m - 1)
        return {b: {k: v for k, v in p.items() if v != 0} for b, p in sorted(pieces.items())}


def _analytic_at_zero(terms, exact):
    """True when the coefficients of r^-p (p >= 1) of sum c trig(b r)/r^m vanish."""
    top = max(m for _, _, m, _ in terms)
    return all(_zero(*_laurent_coefficient(terms, p, exact)) for p in range(1, top + 1))


def _laurent_coefficient(terms, p, exact):
    """(coefficient of r^-p in sum c trig(b r)/r^m, sum of the sizes of its parts): the Taylor
    coefficients of order m - p of cos(b r) (even orders) and sin(b r) (odd orders)."""
    total, size = 0, 0
    for kind, b, m, c in terms:
        q = m - p  # the order of the Taylor coefficient of trig(b r) that meets r^-m
        if q < 0 or (kind == "cos") != (q % 2 == 0) or (kind == "sin" and b == 0):
            continue
        term = _number(c, exact) * (-1) ** (q // 2) * _number(b, exact) ** q / math.factorial(q)
        total, size = total + term, size + abs(term)
    return total, size


def _walk(pieces, n):
    """The pieces after n steps of D and the shells: (pieces, shells, None), or (None, None, (b, step))
    when the jump at b would be differentiated again at that step (not a measure)."""
    shells = {}
    current = pieces
    with mpmath.workdps(_DPS):
        for step in range(1, n + 1):
            nxt = {}
            for b, piece in current.items():
                jump = sum((coef * b ** (-a) for (a, c), coef in piece.items() if c == 0), 0)
                size = sum((abs(coef) * b ** (-a) for (a, c), coef in piece.items()), 0)
                if not _zero(jump, size):
                    if step < n:
                        return None, None, (b, step)
                    shells[b] = jump / b
                new = defaultdict(int)
                for (a, c), coef in piece.items():
                    if a:
                        new[(a + 2, c)] += a * coef
                    if c:
                        new[(a + 1, c - 1)] += c * coef
                nxt[b] = {key: v for key, v in new.items() if v != 0}
            current = {b: p for b, p in nxt.items() if not _vanishes(p, b)}
    return current, shells, None


def _vanishes(piece, b):
    """True when sum coef rho^-a (b - rho)^c is identically 0 (its Laurent coefficients cancel): the
    ball's indicator (sin r - r cos r)/r^3 walks to 0 inside the ball in d = 5."""
    laurent = defaultdict(int)
    size = defaultdict(int)
    for (a, c), coef in piece.items():
        for j in range(c + 1):
            term = coef * math.comb(c, j) * b ** (c - j) * (-1) ** j
            laurent[j - a] += term
            size[j - a] += abs(term)
    return all(_zero(v, size[k]) for k, v in laurent.items())


def _mp(x):
    """A Fraction or mpf as an mpf at the working precision."""
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)


# kinds of the factor g(rho; b) of a term coef rho^-a g on 0 < rho < b (keys (kind, a, e)):
# (b - rho)^e, sqrt(b^2 - rho^2)^e, acosh(b / rho), arccos(rho / b)
_POW, _ROOT, _ACOSH, _ACOS = range(4)


def _abel_integrals(b, kmin, kmax):
    """{k: I_k} for kmin <= k <= kmax (kmin <= -1, kmax >= 1): I_k(rho) = int_rho^b s^k (s^2 - rho^2)^-1/2 ds
    as {(kind, a, e): coef} (see the module docstring for the recurrences)."""
    one = b / b  # a Fraction or an mpf: the coefficients stay exact
    out = {
        0: {(_ACOSH, 0, 0): one},
        1: {(_ROOT, 0, 1): one},
        -1: {(_ACOS, 1, 0): one},
        -2: {(_ROOT, 2, 1): one / b},
    }
    for k in range(2, kmax + 1):  # I_k = b^(k-1) S / k + (k-1)/k rho^2 I_(k-2)
        nxt = {(kind, a - 2, e): (k - 1) * v / k for (kind, a, e), v in out[k - 2].items()}
        nxt[(_ROOT, 0, 1)] = nxt.get((_ROOT, 0, 1), 0) + b ** (k - 1) / k
        out[k] = nxt
    for p in range(3, -kmin + 1):  # I_-p = S / ((p-1) b^(p-1) rho^2) + (p-2)/(p-1) rho^-2 I_-(p-2)
        nxt = {(kind, a + 2, e): (p - 2) * v / (p - 1) for (kind, a, e), v in out[2 - p].items()}
        nxt[(_ROOT, 2, 1)] = nxt.get((_ROOT, 2, 1), 0) + one / ((p - 1) * b ** (p - 1))
        out[-p] = nxt
    return out


def _project(walked, shells):
    """The pieces of mu_(2n) from those of mu_(2n+1) (and its shells): mu_(2n)(rho) =
    2 int_rho^b s mu_(2n+1)(s) (s^2 - rho^2)^-1/2 ds term by term, exactly."""
    out = {}
    for b in sorted(set(walked) | set(shells)):
        piece = walked.get(b, {})
        lo = min((1 - a for a, _ in piece), default=0)
        hi = max((1 - a + c for a, c in piece), default=0)
        table = _abel_integrals(b, min(lo, -1), max(hi, 1))
        new = defaultdict(int)
        for (a, c), coef in piece.items():
            for j in range(c + 1):  # (b - s)^c expanded
                weight = 2 * coef * math.comb(c, j) * b ** (c - j) * (-1) ** j
                for key, v in table[1 - a + j].items():
                    new[key] += weight * v
        if b in shells:  # a shell C delta(s - b) projects to 2 C b (b^2 - rho^2)^-1/2
            new[(_ROOT, 0, -1)] += 2 * shells[b] * b
        out[b] = {k: v for k, v in new.items() if v != 0}
    return out


def _gap_functions(kind, e, rho, gap, b, b_err):
    """(g(rho; b), a bound on its relative rounding error) in longdouble; gap = b - rho is exact for
    an exact offset (b_err = 0) and else off by |b_ld - b| = b_err and one rounding."""
    cond = b_err / gap + _LD_EPS  # the relative error of gap
    if kind == _POW:
        return (gap**e if e else np.ones_like(rho)), abs(e) * (cond + 2 * _LD_EPS)
    if kind == _ROOT:
        return np.sqrt(gap * (b + rho)) ** e, cond + 6 * _LD_EPS
    if kind == _ACOSH:  # acosh(1 + u), u = gap / rho, without cancellation near the knot
        u = gap / rho
        return np.where(u > 1, np.arccosh(b / rho), np.log1p(u + np.sqrt(u * (2 + u)))), cond + 8 * _LD_EPS
    return 2 * np.arcsin(np.sqrt(gap / (2 * b))), cond + 8 * _LD_EPS  # arccos(1 - w) = 2 asin(sqrt(w / 2))


def _powers(x, inv, a):
    """x^-a for the integer exponents ``a`` (columns), by cumulative products: 2|a| roundings."""
    lo, hi = min(int(a.min()), 0), max(int(a.max()), 0)
    table = np.ones((x.size, hi - lo + 1), dtype=_LD)
    if hi > 0:
        table[:, -lo + 1 :] = np.cumprod(np.broadcast_to(inv[:, None], (x.size, hi)), axis=1)
    if lo < 0:
        table[:, :-lo][:, ::-1] = np.cumprod(np.broadcast_to(x[:, None], (x.size, -lo)), axis=1)
    return table[:, a - lo]


def _gap_functions_gmp(kind, e, x, gap, b):
    """g(rho; b) in gmpy2's mpfr at the context's precision (x = rho, gap = b - rho)."""
    if kind == _POW:
        return gap**e
    if kind == _ROOT:
        return gmpy2.sqrt(gap * (b + x)) ** e
    if kind == _ACOSH:
        return gmpy2.acosh(b / x)
    return 2 * gmpy2.asin(gmpy2.sqrt(gap / (2 * b)))


def _to_gmp(x):
    """A Fraction or an mpf as an mpfr at the context's precision."""
    if isinstance(x, Fraction):
        return gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator))
    return gmpy2.mpfr(mpmath.nstr(x, _DPS + 5))


class _Density:
    """(2 pi)^-n sum_(b > rho) sum coef rho^-a g_(kind, e)(rho; b): the measure from its exact pieces
    (odd d: the walked pieces, g = (b - rho)^e; even d: their projection). Evaluated in extended
    precision (numpy's longdouble: no overflow for rho^-a in high d, and ~3 more digits than float64
    where the terms cancel) with a rounding bound; in mpmath where that bound exceeds
    ``_FLOAT_TOL`` of the value."""

    def __init__(self, pieces, n, merged=(), tail=None):
        self.merged = merged  # [(lo, hi, _Density)]: the same measure on lo < rho < hi
        self.tail = tail  # (log A, b, p): a truncated series, its remainder A (rho / b)^p / (1 - (rho / b)^2)
        self.exact = [(b, list(p.items())) for b, p in pieces.items()]
        self.rows, self.b_err = [], {}
        for b, piece in pieces.items():
            keys = list(piece)
            kinds = sorted({(kind, e) for kind, _, e in keys})
            a = np.array([a for _, a, _ in keys], dtype=np.intp)
            with mpmath.workdps(40):  # correctly rounded to longdouble
                coef = np.array([_LD(mpmath.nstr(_mp(piece[k]), 25)) for k in keys])
            which = np.array([kinds.index((kind, e)) for kind, _, e in keys], dtype=np.intp)
            # b as b_ld + b_lo (longdouble pair): gap = (b_ld - rho) + b_lo is then exact up to one
            # rounding next to the knot (Sterbenz) for any b, and b_err = |b_ld + b_lo - b| ~ eps^2 b
            with mpmath.workdps(60):
                b_ld = _LD(mpmath.nstr(_mp(b), 25))
                rest = _mp(b) - _mp(Fraction(*b_ld.as_integer_ratio()))
                b_lo = _LD(mpmath.nstr(rest, 25))
                self.b_err[float(b)] = float(abs(rest - _mp(Fraction(*b_lo.as_integer_ratio()))))
            self.rows.append((float(b), b_ld, b_lo, kinds, which, a, coef))
        self.log_front = -n * math.log(2 * math.pi)
        # exact rationals: any precision is exact; mpf coefficients carry _DPS digits
        exact = all(isinstance(v, Fraction) for _, terms in self.exact for _, v in terms)
        self.digits = 10**9 if exact else _DPS
        self._cache = {}

    def _float(self, rho, point=None, off=None):
        """The extended-precision pass: (value, rounding bound, sum of |terms|) at every rho, longdouble
        (a non-finite bound where a term overflows); b - rho is the exact -off for the knot
        b = ``point``, and then rho = point + off."""
        r = rho.astype(_LD)
        if point is not None:
            r = np.where(np.isfinite(off), _LD(point) + off.astype(_LD), r)
        value = np.zeros(rho.shape, dtype=_LD)
        bound = np.zeros(rho.shape, dtype=_LD)
        size = np.zeros(rho.shape, dtype=_LD)
        with np.errstate(all="ignore"):
            inv = 1 / r
            for b, b_ld, b_lo, kinds, which, a, coef in self.rows:
                gap = (-off).astype(_LD) if b == point else (b_ld - r) + b_lo
                b_err = 0.0 if b == point else self.b_err[b]
                inside = np.flatnonzero(gap > 0)
                if not inside.size:
                    continue
                x, g_ = r[inside], gap[inside]
                gs, gerr = zip(
                    *(_gap_functions(kind, e, x, g_, b_ld, b_err) for kind, e in kinds), strict=True
                )
                g = np.stack(gs, axis=1)[:, which]
                powers = _powers(x, inv[inside], a)
                terms = coef[None, :] * powers * g
                mag = np.abs(terms)
                # per term: the power table (2|a| roundings), the coefficient, g, the products
                rel = (2 * np.abs(a)[None, :] + 6) * _LD_EPS + np.stack(gerr, axis=1)[:, which]
                value[inside] += np.sum(terms, axis=1)
                size[inside] += np.sum(mag, axis=1)
                bound[inside] += np.sum(rel * mag, axis=1) + terms.shape[1] * _LD_EPS * np.sum(mag, axis=1)
            if self.tail is not None:
                log_a, b, p = self.tail
                x = rho / b
                bound += np.exp(log_a + p * np.log(x) - np.log1p(-(x**2))).astype(_LD)
        bound[~np.isfinite(value) | ~np.isfinite(size)] = np.inf
        return value, bound, size

    def __call__(self, rho, point=None, off=None):
        """(log|mu|, sign, log of the absolute error bound) for rho > 0 (not at a knot); ``off``: the
        exact rho - point for a knot ``point``. Between two knots the merged form (odd d: one Laurent
        polynomial; even d next to 0: a series) is used where its bound is the smaller; the sum is
        re-evaluated in mpmath where the bound exceeds ``_FLOAT_TOL`` of the value."""
        rho = np.asarray(rho, dtype=np.float64)
        if off is not None:
            off = np.asarray(off, dtype=np.float64)
        value, bound, size = self._float(rho, point, off)
        for lo, hi, merged in self.merged:
            sel = np.flatnonzero((rho > lo) & (rho < hi))
            if sel.size:
                v2, b2, _ = merged._float(rho[sel])
                better = b2 < bound[sel]
                value[sel[better]], bound[sel[better]] = v2[better], b2[better]
        with np.errstate(divide="ignore", invalid="ignore"):
            log_abs = np.log(np.abs(value)).astype(np.float64)
            log_err = np.log(bound).astype(np.float64)
            sign = np.sign(value).astype(np.float64)
            redo = ~(bound <= _FLOAT_TOL * np.abs(value)) & (bound > 0)
            lost = np.log10(size / np.abs(value)).astype(np.float64)
        for i in np.flatnonzero(redo):
            gap = None if off is None or point is None else float(-off[i])
            log_abs[i], sign[i], log_err[i] = self._exact(float(rho[i]), gap, point, float(lost[i]))
        return log_abs + self.log_front, sign, log_err + self.log_front

    def _exact(self, rho, gap, point, lost):
        """(log|value|, sign, log of its absolute error bound) at rho in multiple precision (gmpy2's
        mpfr: the same GMP/MPFR arithmetic that backs mpmath, without its Python layer). The
        precision starts at the digits ``lost`` in the float pass plus 30 and is raised (twice at
        most) until the evaluation's own rounding bound (:meth:`_sum`) is under 1e-16 of the value
        (the coefficients are exact, or carry ``_DPS`` digits); a value that stays under its bound
        is 0 to within that bound. Next to the knot ``point`` rho is b - gap exactly."""
        lost = lost if math.isfinite(lost) else 40.0
        digits = 20 * math.ceil((30 + max(lost, 0.0)) / 20)
        for attempt in range(3):
            with gmpy2.context(precision=int(digits * _BITS_PER_DIGIT) + 8):
                value, mass = self._sum(rho, gap, point, digits)
                bound = mass * gmpy2.mpfr(10) ** (-min(digits, self.digits))
                if bound <= 1e-16 * abs(value) or attempt == 2 or digits >= self.digits:
                    break
                lost = float(gmpy2.log10(bound / abs(value))) + 16 if value != 0 else 40.0
                digits = 20 * math.ceil((digits + lost + 10) / 20)
        log_abs = float(gmpy2.log(abs(value))) if value != 0 else -math.inf
        log_err = float(gmpy2.log(bound + abs(value) * _EPS)) if bound or value else -math.inf
        return log_abs, float((value > 0) - (value < 0)), log_err

    def _sum(self, rho, gap, point, digits):
        """(sum of the terms, a bound on its rounding error in units of 10^-digits) at the context's
        precision: per knot, sum_a (sum_kind coef g) rho^-a by Horner's rule in 1/rho (its rounding
        is at most 2 (degree + 4) ulps of sum_a |.| rho^-a)."""
        x = gmpy2.mpfr(rho)
        zero = gmpy2.mpfr(0)
        value = mass = zero
        for b, bm, groups, lo, hi in self._coefficients(digits):
            near = gap is not None and b == point
            xb = bm - gmpy2.mpfr(gap) if near else x
            gb = gmpy2.mpfr(gap) if near else bm - x
            if gb <= 0:
                continue
            inv = 1 / xb
            coefs = [zero] * (hi - lo + 1)
            sizes = [zero] * (hi - lo + 1)
            for kind, e, terms in groups:
                g = _gap_functions_gmp(kind, e, xb, gb, bm)
                for a, coef in terms:
                    coefs[a - lo] += coef * g
                    sizes[a - lo] += abs(coef * g)
            v = m = zero
            for c, z in zip(reversed(coefs), reversed(sizes), strict=True):
                v, m = v * inv + c, m * inv + z
            front = inv**lo
            value += v * front
            mass += m * front * 2 * (hi - lo + 4)
        return value, mass

    def _coefficients(self, digits):
        """The pieces as mpfr at ``digits`` (cached per precision; call inside its context), grouped
        by the factor g, with the range of the powers a."""
        if digits not in self._cache:
            table = []
            for b, terms in self.exact:
                groups = defaultdict(list)
                for (kind, a, e), coef in terms:
                    groups[(kind, e)].append((a, _to_gmp(coef)))
                powers = [a for (_, a, _), _ in terms]
                table.append(
                    (
                        float(b),
                        _to_gmp(b),
                        [(kind, e, ts) for (kind, e), ts in groups.items()],
                        min(powers),
                        max(powers),
                    )
                )
            self._cache[digits] = table
        return self._cache[digits]


def _laurent(walked, knots):
    """{a: coef} of sum coef rho^-a: the pieces of the knots ``knots`` expanded exactly (one Laurent
    polynomial; rho^-a (b - rho)^c = sum_j C(c, j) b^(c-j) (-1)^j rho^(j-a))."""
    poly, size = defaultdict(int), defaultdict(int)
    for b in knots:
        for (a, c), coef in walked.get(b, {}).items():
            for j in range(c + 1):
                term = coef * math.comb(c, j) * b ** (c - j) * (-1) ** j
                poly[a - j] += term
                size[a - j] += abs(term)
    return {k: v for k, v in poly.items() if not _zero(v, size[k])}


def _merged(walked, n):
    """[(lo, hi, _Density)] for odd d: between consecutive knots the pieces as one Laurent polynomial,
    exactly: the poles at 0 cancel in its coefficients (next to 0 the factored pieces cancel by many
    digits), and between knots where the measure vanishes it has no terms."""
    knots = sorted(walked)
    out = []
    for i, hi in enumerate(knots):
        poly = {(_POW, a, 0): v for a, v in _laurent(walked, knots[i:]).items()}
        out.append((float(knots[i - 1]) if i else 0.0, float(hi), _Density({hi: poly} if poly else {}, n)))
    return out


def _merged_even(walked, shells, n):
    """[(0, b_1 / 2, _Density)] for even d = 2n: next to 0 (below half the first knot b_1), mu_(2n) =
    2 int_rho^inf s M(s) (s^2 - rho^2)^-1/2 ds (M: mu_(2n+1) without its factor (2 pi)^-n) split at
    b_1: below, M is one Laurent polynomial (exact projection, its poles cancelled); above,
    (s^2 - rho^2)^-1/2 = s^-1 sum_m beta_m (rho / s)^(2m), beta_m = C(2m, m) / 4^m, gives the series
    2 sum_m beta_m rho^(2m) int_(b_1)^inf M(s) s^(-2m) ds, its moments exact (the shells C delta(s - b)
    add C b^(-2m)). Truncated after N = ``_SERIES`` terms (m < N): the tail is at most
    2 (rho / b_1)^(2N) / (1 - (rho / b_1)^2) int_(b_1)^inf |M|."""
    knots = sorted(set(walked) | set(shells))
    b1 = knots[0]
    pieces = _project({b1: {(a, 0): v for a, v in _laurent(walked, knots).items()}}, {})[b1]
    with mpmath.workdps(2 * _DPS):  # the moments cancel where M does; logs make them mpf
        moments = [sum((c * b ** (-2 * m) for b, c in shells.items()), mpmath.mpf(0)) for m in range(_SERIES)]
        bound = sum((abs(c) for c in shells.values()), mpmath.mpf(0))
        for lo, hi in zip(knots, knots[1:], strict=False):
            for a, q in _laurent(walked, [b for b in knots if b >= hi]).items():
                bound += abs(q) * _power_integral(-a, lo, hi)
                for m in range(_SERIES):
                    moments[m] += q * _power_integral(-a - 2 * m, lo, hi)
        for m in range(_SERIES):
            beta = mpmath.binomial(2 * m, m) / mpmath.mpf(4) ** m
            key = (_POW, -2 * m, 0)
            pieces[key] = pieces.get(key, 0) + 2 * beta * moments[m]
    pieces = {k: v for k, v in pieces.items() if v != 0}
    tail = (float(mpmath.log(2 * bound)) if bound else -math.inf, float(b1), 2 * _SERIES)
    return [(0.0, float(b1) / 2, _Density({b1: pieces}, n, tail=tail))]


def _power_integral(p, lo, hi):
    """int_lo^hi s^p ds, exactly (an mpf logarithm for p = -1)."""
    if p == -1:
        return mpmath.log(_mp(hi) / _mp(lo))
    return (hi ** (p + 1) - lo ** (p + 1)) / (p + 1)


def _value_at_zero(terms):
    """k(0): the r^0 coefficient of sum c trig(b r) / r^m (the poles having cancelled)."""
    exact = _rational(terms)
    with mpmath.workdps(_DPS):
        return float(_mp(_laurent_coefficient(terms, 0, exact)[0]))


def _at_origin(walked, density, top):
    """(log|mu(0)|, sign): +inf where mu_(2n+1) ~ rho^-a with a >= 1 at rho -> 0 (the walked pieces'
    leading coefficient; in even d the projection int mu_(2n+1)(v) dv then diverges too), else the
    value next to 0 (mu is continuous there)."""
    with mpmath.workdps(_DPS):
        lead, size = defaultdict(int), defaultdict(int)
        for b, piece in walked.items():
            for (a, c), coef in piece.items():
                lead[a] += coef * b**c
                size[a] += abs(coef) * b**c
        powers = [a for a in lead if not _zero(lead[a], size[a])]
    a = max(powers, default=0)
    if a >= 1:
        return math.inf, 1.0 if lead[a] > 0 else -1.0
    la, sg, _ = density(np.array([1e-12 * top]))  # continuous at 0: the value next to it
    return float(la[0]), float(sg[0])


@matcher(priority=35)  # after the Bessel family (sin(a r)/r is a sinc)
def _match_band_limited(expr, support):
    """sum of c cos(b r)/r^m and c sin(b r)/r^m, analytic at 0 (see the module docstring)."""
    if support is not None:
        return None
    try:
        terms = trig_terms(expr)
        if not terms or not any(b != 0 for _, b, _, _ in terms) or _pieces(terms) is None:
            return None
    except MATCH_FAILURES:  # e.g. a complex coefficient
        return None
    return "band_limited", {"terms": tuple(terms)}


@builder("band_limited", rel_error=1e-12)
def _band_limited(terms, dim):
    """The measure of a band-limited kernel in R^dim (see the module docstring)."""
    return _transform(terms, int(dim))


@functools.lru_cache(maxsize=64)
def _transform(terms, d):
    pieces = _pieces(terms)
    n = (d - 1) // 2 if d % 2 else d // 2
    walked, shells, bad = _walk(pieces, n)
    top = float(max(pieces))
    common = dict(
        method="closed-form:band-limited" + ("" if d % 2 else "+projection"),
        scale=top,
        tail_exponent=math.inf,
        tail_oscillation=0.0,
        zeros=None,
        singular_points=tuple(float(b) for b in pieces),
    )
    if bad is not None:
        b, step = bad
        reason = (
            f"the kernel is band-limited (frequencies up to {top:g}) and decays too slowly for R^{d}: its "
            f"measure on R^{2 * step - 1} jumps at rho = {float(b):g}, a shell on R^{2 * step + 1}, and "
            f"beyond R^{2 * step + 1} the derivative of a shell, which is not a measure (finite only for "
            f"d <= {2 * step + 1})"
        )
        return RadialTransform(
            mu=not_a_measure(reason), divergent=reason, rel_error=0.0, abs_error=0.0, **common
        )
    if d % 2:
        density = _Density(
            {b: {(_POW, a, c): v for (a, c), v in p.items()} for b, p in walked.items()},
            n,
            _merged(walked, n),
        )
        log_area = log_sphere_area(d)
        shell_masses = tuple(
            (float(b), float(_mp(c)) * math.exp(density.log_front + log_area) * float(b) ** (d - 1))
            for b, c in shells.items()
        )
    else:
        density = _Density(_project(walked, shells), n, _merged_even(walked, shells, n))
        shell_masses = ()

    at_zero = _at_origin(walked, density, top)

    def mu_at_offset(point, off):
        off = np.asarray(off, dtype=np.float64)
        rho = point + off
        la, sg, _ = density(np.where(rho > 0, rho, top), point=point, off=np.where(rho > 0, off, top - point))
        la = np.where(rho > 0, la, at_zero[0])  # the sampler's spans reach rho = 0
        sg = np.where(rho > 0, sg, at_zero[1])
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return np.where(sg == 0, 0.0, sg * np.exp(la))

    def log_abs_and_sign(rho):
        out_la = np.full(rho.shape, -np.inf)
        out_sg = np.zeros(rho.shape)
        inside = (rho > 0) & (rho < top)
        if np.any(inside):
            la, sg, _ = density(rho[inside])
            out_la[inside], out_sg[inside] = la, sg
        zero = rho == 0
        if np.any(zero):
            out_la[zero], out_sg[zero] = at_zero
        return out_la, out_sg

    # the stated errors, from the bounds on a grid inside the support: abs_error (units of max|mu|)
    # covers the points next to the zeros of mu, rel_error the others
    grid = top * np.linspace(0.0, 1.0, 203)[1:-1]
    la, _, le = density(grid)
    peak = float(np.max(la))
    floor = 10 * float(np.exp(np.max(le) - peak)) if np.isfinite(peak) else 0.0
    far = la - peak >= np.log(max(floor, 1e-300))
    rel = float(np.max(np.exp(le[far] - la[far]))) if np.any(far) else 0.0
    ac_mass = _value_at_zero(terms) - sum(m for _, m in shell_masses) if shell_masses else None
    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        rel_error=max(1e-13, 10 * rel),
        abs_error=min(1.0, floor),
        shells=shell_masses,
        ac_mass=ac_mass,
        mu_at_offset=mu_at_offset,
        **common,
    )
