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
rational, else 120-digit mpmath numbers), so the pieces carry no rounding; they are evaluated
in logarithms (no overflow in high d) with a running error bound,
and where that bound exceeds ``_FLOAT_TOL`` of the value (cancellation between the pieces of
several frequencies near a knot), again at the working precision the measured cancellation
requires (mpmath).

Even d: the projection of the (d + 1)-dimensional measure,
mu_d(rho) = 2 int_0^inf mu_(d+1)(sqrt(rho^2 + v^2)) dv, plus 2 C b / sqrt(b^2 - rho^2) for each
shell of mu_(d+1). With v = rho sinh t the integrand is smooth between the knots
t_b = acosh(b / rho); Gauss-Legendre of two orders on panels of width <= 1/2 in t, the difference
of the orders and the pieces' rounding bounds being the stated error. mu_d is a measure exactly
when mu_(d+1) is (the local exponent at a knot changes by 1/2 per dimension).
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from fractions import Fraction

import mpmath
import numpy as np
import sympy
from sympy.simplify.fu import TR8

from .._numerics.special import log_sphere_area
from ..exceptions import TransformError
from ..kernels._parse import R
from ._forms import log_form, not_a_measure, vectorised
from ._registry import MATCH_FAILURES, builder, exact_rationals, matcher
from ._types import RadialTransform

__all__: list[str] = []  # private module

#: digits of the pieces' coefficients when the formula has irrational numbers (else exact rationals)
_DPS = 120
#: relative rounding bound of a float evaluation above which the exact (mpmath) evaluation is used
_FLOAT_TOL = 1e-12
_EPS = np.finfo(np.float64).eps
#: the smallest relative error stated in even d: the projection is a quadrature (its two orders agree
#: to ~1e-14 on smooth stretches; next to the knots' singularities the rounding of rho moves it more)
_EVEN_FLOOR = 1e-11
#: the widest panel in t of the projection (the integrand is analytic in t, with e^(-a t) decay)
_PANEL = 1.5
#: largest total power max(m) accepted (the walk's pieces grow like m * n terms)
_MAX_POWER = 200


def trig_terms(expr):
    """``expr`` as terms ``(kind, b, m, c)`` meaning c cos(b r)/r^m ("cos") or c sin(b r)/r^m ("sin"),
    b >= 0 and m an integer, after products of sines and cosines are turned into sums; None when it
    is not such a sum."""
    if not expr.has(sympy.sin, sympy.cos):
        return None
    # floats as their exact binary values: the pieces are then exact rationals (see _pieces)
    rewritten = _sum_of_frequencies(exact_rationals(expr))
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
                b = f.args[0] / R
                if not (b.is_number and b.is_real):
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
    rewritten = _sum_of_frequencies(expr)
    if rewritten is None:
        return None
    band, others = [], []
    for part in sympy.Add.make_args(rewritten):
        trig = [f for f in sympy.Mul.make_args(part) if isinstance(f, (sympy.sin, sympy.cos))]
        if len(trig) > 1:
            return None
        rest = part / trig[0] if trig else part
        if not rest.is_rational_function(R):
            return None
        for piece in sympy.Add.make_args(sympy.apart(sympy.together(rest), R)):
            coef, power = piece.as_coeff_exponent(R)
            target = band if coef.is_number and power.is_Integer and power < 0 else others
            target.append(piece * trig[0] if trig else piece)
    if not band and len(others) < 2:
        return None
    return ([sympy.Add(*band)] if band else []) + others


def _sum_of_frequencies(expr):
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


def _log_abs(x):
    """log|x| of a nonzero Fraction or mpf as a float (no overflow for huge or tiny values)."""
    if isinstance(x, Fraction):
        return math.log(abs(x.numerator)) - math.log(x.denominator)
    return float(mpmath.log(abs(x)))


def _mp(x):
    """A Fraction or mpf as an mpf at the working precision."""
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)


class _OddDensity:
    """(2 pi)^-n sum_(b > rho) sum coef rho^-a (b - rho)^c: mu_(2n+1) from the walked pieces."""

    def __init__(self, pieces, n):
        self.n = n
        self.knots = np.array([float(b) for b in pieces], dtype=np.float64)
        self.exact = [(b, list(p.items())) for b, p in pieces.items()]
        self.rows = []
        for b, piece in pieces.items():
            keys = list(piece)
            self.rows.append(
                (
                    float(b),
                    np.array([a for a, _ in keys], dtype=np.float64),
                    np.array([c for _, c in keys], dtype=np.float64),
                    np.array([_log_abs(piece[k]) for k in keys]),
                    np.array([1.0 if piece[k] > 0 else -1.0 for k in keys]),
                )
            )
        self.log_front = -n * math.log(2 * math.pi)

    def log_terms(self, rho, point=None, off=None):
        """(log|term|, sign) of every term at every rho (-inf beyond its knot): shape (len(rho), T);
        b - rho is the exact -off for the knot b = ``point``."""
        logs, signs = [], []
        with np.errstate(divide="ignore", invalid="ignore"):
            log_rho = np.log(rho)[:, None]
            for b, a, c, log_coef, sign in self.rows:
                diff = -off if b == point else b - rho
                inside = (diff > 0)[:, None]
                gap = np.log(np.where(inside, diff[:, None], 1.0))
                la = log_coef - a * log_rho + np.where(c > 0, c * gap, 0.0)
                logs.append(np.where(inside, la, -np.inf))
                signs.append(np.broadcast_to(sign, la.shape))
        if not logs:  # every piece vanished: only shells
            return np.full((rho.size, 1), -np.inf), np.zeros((rho.size, 1))
        return np.concatenate(logs, axis=1), np.concatenate(signs, axis=1)

    def __call__(self, rho, exact=True, point=None, off=None):
        """(log|mu|, sign, log of the absolute error bound) for rho > 0 (not at a knot); ``exact``:
        re-evaluate in mpmath where the float bound exceeds ``_FLOAT_TOL`` of the value; ``off``: the
        exact rho - point for a knot ``point`` (see :meth:`log_terms`)."""
        rho = np.asarray(rho, dtype=np.float64)
        la, sg = self.log_terms(rho, point, off)
        top = np.max(la, axis=1)
        safe = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(under="ignore"):
            w = np.exp(la - safe[:, None])
        total = np.sum(sg * w, axis=1)
        size = np.sum(w, axis=1)
        bound = 4 * _EPS * la.shape[1] * size + 1e-300
        redo = exact & np.isfinite(top) & (bound > _FLOAT_TOL * np.abs(total))
        for i in np.flatnonzero(redo):
            total[i], bound[i] = self._exact(float(rho[i]), size[i], total[i], safe[i])
        with np.errstate(divide="ignore"):
            log_abs = np.where(np.isfinite(top), np.log(np.abs(total)) + safe + self.log_front, -np.inf)
            log_err = np.where(np.isfinite(top), np.log(bound) + safe + self.log_front, -np.inf)
        return log_abs, np.sign(total) * np.isfinite(top), log_err

    def _exact(self, rho, size, total, shift):
        """The value at rho (scaled by exp(-shift)) in mpmath, at the precision its cancellation needs:
        the digits lost, log10(size / |total|) from the float pass, plus 25, raised until two precisions
        30 digits apart agree to 1e-15."""
        lost = math.log10(size / abs(total)) if total != 0 else 40.0
        digits = int(25 + max(lost, 0.0))
        previous = None
        for _ in range(6):
            with mpmath.workdps(max(_DPS, digits)):
                x = mpmath.mpf(rho)
                value = mpmath.mpf(0)
                for b, terms in self.exact:
                    bm = _mp(b)
                    if x < bm:
                        for (a, c), coef in terms:
                            value += _mp(coef) * x ** (-a) * (bm - x) ** c
                value = float(value * mpmath.exp(-shift))
            if previous is not None and abs(value - previous) <= 1e-15 * abs(value):
                return value, 1e-15 * abs(value) + 1e-300
            previous, digits = value, digits + 30
        raise TransformError(f"the band-limited density at rho = {rho!r} cancels beyond {digits} digits")


class _EvenDensity:
    """mu_(2n) as the projection of mu_(2n+1) (and of its shells), by Gauss-Legendre in t."""

    _ORDERS = (12, 20)

    def __init__(self, odd, shells, knots):
        self.odd = odd
        self.shells = shells  # [(b, C)]: C delta(rho - b) in d + 1
        self.knots = sorted(knots)  # where the pieces of mu_(d+1) end (some may have walked to 0)
        self.top = float(max(knots))
        self.rules = [np.polynomial.legendre.leggauss(k) for k in self._ORDERS]

    def _panels(self, rho, point, off):
        """The panels (owner, lo, hi) in t for every rho < top, split at t_b = acosh(b / rho) and no wider
        than ``_PANEL``; acosh(1 + u) = log1p(u + sqrt(u (2 + u))) with u = -off / rho exactly for the
        knot ``point``."""
        knots = np.asarray(self.knots, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = (knots[None, :] - rho[:, None]) / rho[:, None]  # b - rho exact near b (Sterbenz)
            if point is not None:
                u[:, self.knots.index(point)] = -off / rho
            t = np.where(u > 0, np.log1p(u + np.sqrt(np.maximum(u, 0.0) * (2.0 + u))), 0.0)
        cuts = np.maximum.accumulate(np.concatenate([np.zeros((rho.size, 1)), t], axis=1), axis=1)
        lens = np.diff(cuts, axis=1)
        counts = np.where(lens > 0, np.ceil(lens / _PANEL), 0).astype(np.intp).ravel()
        rows = np.repeat(np.arange(counts.size), counts)
        j = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
        width = lens.ravel()[rows] / counts[rows]
        lo = cuts[:, :-1].ravel()[rows] + j * width
        return rows // len(knots), lo, lo + width

    def __call__(self, rho, point=None, off=None):
        """(log|mu|, sign, log of the absolute error bound) for rho > 0 (not at a knot); ``off``: the
        exact rho - point for a knot ``point``."""
        rho = np.asarray(rho, dtype=np.float64)
        off = np.zeros(rho.shape) if off is None else np.asarray(off, dtype=np.float64)
        vals = np.zeros(rho.shape)
        errs = np.zeros(rho.shape)
        inside = np.flatnonzero((rho > 0) & ((rho < self.top) if point != self.top else (off < 0)))
        if inside.size and self.odd.rows:
            x = rho[inside]
            owner, lo, hi = self._panels(x, point, off[inside])
            starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
            sums = []
            for nodes, weights in self.rules:
                t = 0.5 * (hi + lo)[:, None] + 0.5 * (hi - lo)[:, None] * nodes[None, :]
                xs = x[owner][:, None]
                s = xs * np.cosh(t)  # v = x sinh t: dv = x cosh t dt = s dt
                la, sg, le = self.odd(s.ravel(), exact=False)
                lw = np.log(0.5 * (hi - lo)[:, None] * weights[None, :] * s).ravel()
                la, le = (la + lw).reshape(t.shape), (le + lw).reshape(t.shape)
                sg = sg.reshape(t.shape)
                shift = np.maximum.reduceat(np.max(np.maximum(la, le), axis=1), starts)
                sp = shift[np.searchsorted(starts, np.arange(len(owner)), side="right") - 1][:, None]
                with np.errstate(invalid="ignore", under="ignore"):
                    value = np.add.reduceat(np.sum(sg * np.exp(la - sp), axis=1), starts)
                    bound = np.add.reduceat(np.sum(np.exp(le - sp), axis=1), starts)
                sums.append((2 * value * np.exp(shift), 2 * bound * np.exp(shift)))
            (v0, _), (v1, b1) = sums
            vals[inside] = v1
            errs[inside] = np.abs(v1 - v0) + b1 + 8 * _EPS * np.abs(v1)
        for b, coef in self.shells:
            gap = -off if b == point else b - rho
            near = gap > 0
            with np.errstate(divide="ignore"):
                part = 2 * coef * b / np.sqrt(gap[near] * (b + rho[near]))
            vals[near] += part
            errs[near] += 4 * _EPS * np.abs(part)
        with np.errstate(divide="ignore"):
            return np.log(np.abs(vals)), np.sign(vals), np.log(errs + 1e-300)


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
    odd = _OddDensity(walked, n)
    shell_list = [(float(b), float(_mp(c)) * math.exp(odd.log_front)) for b, c in shells.items()]
    if d % 2:
        density = odd
        log_area = log_sphere_area(d)
        shell_masses = tuple((b, c * math.exp(log_area) * b ** (d - 1)) for b, c in shell_list)
    else:
        density = _EvenDensity(odd, shell_list, [float(b) for b in pieces])
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
        rel_error=max(1e-13 if d % 2 else _EVEN_FLOOR, 10 * rel),
        abs_error=min(1.0, floor),
        shells=shell_masses,
        ac_mass=ac_mass,
        mu_at_offset=mu_at_offset,
        **common,
    )
