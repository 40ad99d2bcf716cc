"""Completely monotone kernels through their Bernstein (Laplace-mixture) representation.

A kernel k(r) = int exp(-t r) nu(dt) (Bernstein: k completely monotone iff nu >= 0; a signed nu
for linear combinations) has, in every dimension d, the density

    mu(rho) = int nu(dt) g_d(t, rho),  g_d(t, rho) = Gamma((d+1)/2) pi^(-(d+1)/2) t (t^2 + rho^2)^(-(d+1)/2),

g_d the transform of exp(-t r) (the Student t / Matérn 1/2 density). Recognised kernels (matcher
:func:`_match_monotone`):

    w (r + p)^(-beta) exp(-s r)  ->  nu(dt) = w (t - s)^(beta-1) exp(-p (t - s)) / Gamma(beta) dt, t > s
    w exp(-s r)                  ->  nu = w delta_s
    c (a constant)               ->  an atom c at w = 0 of the spectral measure

    w r^-n exp(-s r), integer n  ->  nu = w (t - s)^(n-1) / (n-1)!, t > s: only in sums whose
                                    densities cancel beyond the last shift (nu a piecewise
                                    polynomial of compact support, k bounded: (1 - exp(-r))/r)

    w r^(m - nu) I_nu(b r) exp(-s r), s >= b, nu > m - 1/2, m = 0, 1, ...
                                 ->  nu(dt) = the m-th t-derivative of w w_nu (b^2 - (s - t)^2)^(nu - 1/2)
                                    on s - b < t < s + b (Poisson's integral; :func:`_bessel_term`)

    R(exp(-a r)), R rational with poles outside |q| <= 1
                                 ->  atoms c_n at t = n a (R's Taylor coefficients; :func:`_exp_rational_atoms`)

    w log(1 + r/p) exp(-s r) / r ->  nu(dt) = w E_1(p (t - s)) dt, t > s (E_1's Laplace transform is
                                    log(1 + r)/r; log(a + b r)/r less log(a)/r alike): logarithmic
                                    at t = s, so mu(0) is infinite for s = 0 (k ~ log(r)/r)

and their sums: (a + b r)^(-beta) = b^(-beta) (r + a/b)^(-beta); rational functions of r whose poles
are negative reals are split into partial fractions sum c_(k,n) (r + p_k)^(-n) (numerically at 50
digits, then checked against the formula), times an optional exp(-s r). Terms with equal shift s
form one group whose Bernstein density is evaluated as one function: where its terms cancel at
small t - s (e.g. 1/(1+r) - 1/(2+r), nu = e^-t - e^-2t ~ t) a power series with coefficients
summed at 50 digits is used, so that nu keeps its relative accuracy.

Quadrature (:mod:`spectralkit._numerics.quadrature`, Gauss-Legendre panels) in y = log(t - s): the
integrand nu(x) x g_d(s + x, rho) is smooth in y; ladders of panels of doubling width start where its
logarithm bends (nu's peak and cut, the decay of g_d(s + x) at x ~ s/d, g_d's turnover between
t = rho/sqrt(d+1) and rho, covered by panels of width 2/sqrt(d+1): curvature ~ d there), with
widening panels towards x -> 0 (an exp(beta y) tail) and a cut where nu is below e^-60 of its
peak. Everything is in logs (high d: g_d spans 10^+-1000). log|mu| (or log of the envelope
int |nu| g and mu / envelope when mu changes sign) is interpolated in log rho (adaptive piecewise
Chebyshev, measured error). The relative error is measured when the transform is built (what is
returned against a second rule with halved panels and 24 nodes, at 150 rho over 36 decades) and
includes the cancellation between positive and negative parts of a signed nu (8 eps int |nu| g /
|mu|); a signed kernel whose cancellation is too strong is left to the generic route (None).

Where that sum cancels at large rho (a signed nu with k'(0) = 0), mu is summed from its expansion in
odd moments of nu, mu = C_d sum_j binom(-(d+1)/2, j) M_(2j+1) rho^(-(d+1)-2j) (:func:`_tail_series`),
and a measure that changes sign is interpolated through its envelope and ratio only between its
outermost sign changes, through log|mu| beyond them.

rho -> 0: mu(0) = C int nu t^-d is finite iff k decays faster than r^-d; otherwise mu has the
integrable singularity ~ rho^(beta - d) (k ~ r^-beta), marked as a singular point. rho -> inf:
mu ~ C rho^(-d-1) int t nu(dt) = -C k'(0) rho^(-d-1) (the odd power r^1 at the origin). For nu >= 0
the exact radial CDF F(rho) = int nu(dt) I_(rho^2/(rho^2+t^2))(d/2, 1/2) / m (the Laplacian's Beta
law mixed over t) gives exact masses: m = int nu = k(0) minus the atom.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._numerics.chebyshev import fit_adaptive
from .._numerics.quadrature import gauss_legendre
from ..kernels._parse import R
from ._forms import envelope_logs, log_form, vectorised
from ._partial import partial_fractions
from ._registry import MATCH_FAILURES, builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module

_DPS = 50  # working digits of the partial fractions, moments and series coefficients
_NODES = 16  # Gauss-Legendre nodes per panel
_CHECK_NODES = 24
_SERIES_TERMS = 64
_MAX_REL_ERROR = 1e-9  # beyond this (strong cancellation of a signed nu) the generic route is used
_LOG_CUT = 60.0  # nu is cut where it is below e^-60 of its peak


# ---------------------------------------------------------------------------------------------
# recognition
# ---------------------------------------------------------------------------------------------
def _mpf(x):
    return mpmath.mpf(sympy.N(x, _DPS + 10))


def _linear(expr):
    """(a0, a1) with expr = a0 + a1 r (numbers), or None."""
    poly = sympy.Poly(sympy.expand(expr), R) if expr.is_polynomial(R) else None
    if poly is None or poly.degree() > 1 or not all(c.is_number for c in poly.all_coeffs()):
        return None
    coeffs = poly.all_coeffs()
    return (coeffs[-1], coeffs[0] if len(coeffs) == 2 else sympy.Integer(0))


def _summands(expr):
    """The summands of expr, products distributed over sums that hold exponentials (not over
    denominators: sympy's expand would multiply out 1/((r + 1) exp(r)))."""
    out = []
    for part in sympy.Add.make_args(expr):
        factors = [
            sympy.expand(f, deep=False)
            if f.is_Pow and f.exp.is_Integer and f.exp > 0 and f.base.is_Add
            else f
            for f in sympy.Mul.make_args(part)
        ]
        sums = [f for f in factors if f.is_Add and f.has(sympy.exp)]
        if not sums:
            out.append(part)
            continue
        rest = sympy.Mul(*[f for f in factors if f is not sums[0]])
        out.extend(term for a in sympy.Add.make_args(sums[0]) for term in _summands(rest * a))
    return out


def _split_term(term):
    """term = coef * rational(r) * prod (linear)^gamma (gamma not an integer) * exp(-s r), times at
    most one I_nu(b r).

    Returns (coef, rational, [(base, gamma)], s, bessel) with bessel = (nu, b) or None; or None.
    """
    coef, factors = sympy.Integer(1), []
    rational = sympy.Integer(1)
    s = sympy.Integer(0)
    bessel = None
    for f in sympy.Mul.make_args(term):
        if f.is_number:
            coef *= f
        elif isinstance(f, sympy.besseli) and bessel is None:
            lin = _linear(f.args[1])
            if lin is None or lin[0] != 0 or not f.args[0].is_number:
                return None
            bessel = (f.args[0], lin[1])
        elif isinstance(f, sympy.exp) or (f.is_Pow and isinstance(f.base, sympy.exp)):
            arg = f.args[0] if isinstance(f, sympy.exp) else f.base.args[0] * f.exp
            lin = _linear(arg)
            if lin is None:
                return None
            coef *= sympy.exp(lin[0])
            s -= lin[1]
        elif f == R or (f.is_Add and not f.has(sympy.exp) and f.is_rational_function(R)):
            rational *= f
        elif f.is_Pow and f.exp.is_number and f.base.is_polynomial(R):
            if f.exp.is_Integer and (f.exp > 0 or _linear(f.base) is None):
                rational *= f
            else:  # (a + b r)^gamma kept whole: (1 + r)**-1000 is not expanded
                factors.append((f.base, f.exp))
        else:
            return None
    return coef, rational, factors, s, bessel


def _partial_fractions(rational):
    """[(c, n, p)] with rational = c0 + sum c (r + p)^-n (p > 0), plus the polynomial part; or None
    (:func:`._partial.partial_fractions`; the poles must be real and negative)."""
    pf = partial_fractions(rational, R, _DPS)
    if pf is None:
        return None
    poly_part, fracs = pf
    if any(not (isinstance(z, mpmath.mpf) and z < 0) for _, _, z in fracs):
        return None  # complex poles (an oscillating kernel) or a pole on r >= 0
    return poly_part, [(c, n, -z) for c, n, z in fracs]


def _log_term(part):
    """(w, p, s, rest) for part = w log(a + b r) exp(-s r) / r, a, b > 0: w log(1 + r/p) exp(-s r) / r
    with p = a / b, and ``rest`` = w log(a) exp(-s r) / r (0 when a = 1), which the caller reads as an
    ordinary term; None when ``part`` has no log factor, False when it has one of another form."""
    logs = [f for f in sympy.Mul.make_args(part) if isinstance(f, sympy.log) and f.has(R)]
    if not logs:
        return None
    lin = _linear(logs[0].args[0]) if len(logs) == 1 else None
    if lin is None or not (lin[0] > 0 and lin[1] > 0):
        return False
    rest = part / logs[0]
    split = _split_term(rest)
    if split is None:
        return False
    coef, rational, factors, s, bes = split
    rational *= sympy.Mul(*[base**g for base, g in factors])  # 1/r may come as a factor r^-1
    if bes is not None or sympy.cancel(rational * R) != 1 or not coef.is_number:
        return False
    if not s.is_number or _mpf(s) < 0 or sympy.im(sympy.N(coef, 30)) != 0:
        return False
    return _mpf(coef), _mpf(lin[0]) / _mpf(lin[1]), _mpf(s), rest * sympy.log(lin[0])


def bernstein_terms(expr: sympy.Expr) -> tuple[Any, tuple, tuple, tuple, tuple] | None:
    """The Bernstein data of ``expr``: ``(c0, terms, atoms, bessel, logs)`` or None.

    ``terms``: ((w, beta, p, s), ...) for w (r + p)^(-beta) exp(-s r), beta > 0, p > 0, s >= 0;
    ``atoms``: ((w, s), ...) for w exp(-s r), s > 0; ``bessel``: ((w, nu, b, s, m), ...) for
    w r^(m - nu) I_nu(b r) exp(-s r) (:func:`_bessel_term`); ``logs``: ((w, p, s), ...) for
    w log(1 + r/p) exp(-s r) / r, whose Bernstein density is w E_1(p (t - s)) on t > s; ``c0`` the
    constant (mpmath numbers).
    Returns ``(c0, terms, atoms, bessel, logs)``.
    """
    expr = exact_rationals(expr)
    if expr.has(sympy.Piecewise, sympy.Abs, sympy.Min, sympy.Max):
        return None
    series = _exp_rational_atoms(expr)
    if series is not None:
        return series[0], (), series[1], (), ()
    parts = _summands(expr)
    rational_by_s: dict[Any, Any] = {}
    terms, atoms, bessel, logs = [], [], [], []
    c0 = mpmath.mpf(0)
    todo = list(parts)
    parts = []
    for part in todo:
        lg = _log_term(part)
        if lg is False:
            return None
        if lg is None:
            parts.append(part)
            continue
        logs.append(lg[:3])
        if lg[3] != 0:
            parts.append(lg[3])
    for part in parts:
        split = _split_term(part)
        if split is None:
            return None
        coef, rational, factors, s, bes = split
        if not (coef.is_number and s.is_number) or _mpf(s) < 0 or sympy.im(sympy.N(coef, 30)) != 0:
            return None
        if bes is not None:  # r^e I_nu(b r) exp(-s r) monomial by monomial
            rational *= sympy.Mul(*[base**g for base, g in factors])
            for mono in sympy.Add.make_args(sympy.expand(rational)):
                c, e = mono.as_coeff_exponent(R)
                if c.has(R) or not e.is_number:
                    return None
                term = _bessel_term(_mpf(coef) * _mpf(c), bes[0], bes[1], s, e)
                if term is None:
                    return None
                bessel.append(term)
            continue
        if len(factors) > 1 or (factors and not rational.is_polynomial(R)):
            if not all(g.is_Integer for _, g in factors):
                return None  # non-integer powers of several bases: nu is a convolution
            rational *= sympy.Mul(*[b**g for b, g in factors])
            factors = []
        if not factors:
            rational_by_s[s] = rational_by_s.get(s, 0) + coef * rational
            continue
        base, gamma = factors[0]
        lin = _linear(base)
        if lin is None:
            # lc (a + b r)^m, e.g. (1 + 2 r + r^2)^(-3/4) = (1 + r)^(-3/2)
            lc, flist = sympy.factor_list(sympy.expand(base), R)
            if len(flist) != 1 or not (lc.is_number and lc > 0):
                return None
            ((factor, mult),) = flist
            lin = _linear(factor)
            if lin is None:
                return None
            coef *= lc**gamma
            gamma = gamma * mult
        a, b = _mpf(lin[0]), _mpf(lin[1])
        g = _mpf(gamma)
        # r^-n (a = 0, integer n) only inside bounded combinations such as (1 - exp(-r))/r
        if not (a >= 0 and b > 0) or (a == 0 and not sympy.sympify(gamma).is_Integer):
            return None
        p = a / b
        # rational * (b (r + p))^gamma with rational a polynomial: expand in u = r + p
        if not rational.is_polynomial(R):
            return None
        u = sympy.Symbol("u")
        poly = sympy.Poly(
            sympy.expand(rational.subs(R, u - sympy.Rational(lin[0]) / sympy.Rational(lin[1]))), u
        )
        w0 = _mpf(coef) * b**g
        for (n,), c in poly.terms():
            beta = -(g + n)
            if beta == 0:  # (r + p)^0: a constant (s = 0) or an exponential (an atom of nu at s)
                if _mpf(s) == 0:
                    c0 += w0 * _mpf(c)
                else:
                    atoms.append((w0 * _mpf(c), _mpf(s)))
                continue
            if not beta > 0:
                return None
            terms.append((w0 * _mpf(c), beta, p, _mpf(s)))
    for s, rational in rational_by_s.items():
        pf = _partial_fractions(rational)
        if pf is None:
            return None
        poly_part, fracs = pf
        s_m = _mpf(s)
        if len(poly_part) > 1 and any(c != 0 for c in poly_part[1:]):
            return None  # polynomial growth, or polynomial x exp (another closed form)
        if poly_part and poly_part[0] != 0:
            if s_m == 0:
                c0 += poly_part[0]
            else:
                atoms.append((poly_part[0], s_m))
        terms.extend((w, mpmath.mpf(n), p, s_m) for w, n, p in fracs)
    terms = [t for t in terms if t[0] != 0]
    bessel = [t for t in bessel if t[0] != 0]
    logs = [t for t in logs if t[0] != 0]
    if not terms and not bessel and not logs:
        return None  # sums of exponentials alone: the Matérn closed form, term by term
    if any(p == 0 for _, _, p, _ in terms) and _compact_pieces(terms) is None:
        return None  # r^-n terms whose Bernstein densities do not cancel beyond the last shift
    return c0, tuple(terms), tuple(atoms), tuple(bessel), tuple(logs)


_Q = sympy.Symbol("q")
_MAX_ATOMS = 6000  # each atom is one more term per rho: |q_1| >= 1.01 fits
_CDF_FIT_ATOMS = 64  # with this many atoms or more (or any quadrature) the samplers read an interpolant
#: of the radial CDF of this absolute accuracy: they ask 1e-10 of their inverse CDF, and 1e-13 took
#: 300,000 quadrature points for (1 + r)^-1/2 in d = 16 (the quadrature's own noise), 1e-11 2,800
_CDF_TOL = 1e-11
_CDF_SPAN = 30.0  # natural-log units either side of the scale that it covers


def _exp_rational_atoms(expr):
    """(c0, atoms) for k = R(exp(-a r)), R a rational function with a non-constant denominator whose
    poles all lie outside the closed unit disc: k = sum_n c_n exp(-n a r) (R's Taylor series at
    q = 0, convergent at q = 1 and geometric), an atomic Bernstein measure; e.g. 1/(2 - exp(-r)).

    The atoms are cut where the remaining coefficients' bound c |q_1|^-n n^(mult-1) falls below
    1e-24 of their largest (float64 sees none of the rest), at most ``_MAX_ATOMS``. None otherwise:
    poles on the unit circle (sech(r), tanh(r): weights that do not decay), formulas that are not
    such a function, plain sums of exponentials.
    """
    exps = [e for e in expr.atoms(sympy.exp) if e.args[0].has(R)]
    if not exps:
        return None
    lins = [_linear(e.args[0]) for e in exps]
    if any(lin is None or not lin[1].is_Rational or lin[1] == 0 for lin in lins):
        return None
    a = sympy.Integer(0)
    for lin in lins:
        a = sympy.gcd(a, abs(lin[1]))
    sub = {e: sympy.exp(lin[0]) * _Q ** (-lin[1] / a) for e, lin in zip(exps, lins)}
    ratio = sympy.together(expr.xreplace(sub))
    if ratio.has(R) or not ratio.is_rational_function(_Q):
        return None
    num, den = sympy.fraction(ratio)
    num, den = sympy.Poly(num, _Q), sympy.Poly(den, _Q)
    if den.degree() < 1 or not all(c.is_number for c in num.all_coeffs() + den.all_coeffs()):
        return None
    dc = [_mpf(c) for c in reversed(den.all_coeffs())]  # ascending powers of q
    nc = [_mpf(c) for c in reversed(num.all_coeffs())]
    if dc[0] == 0:
        return None
    # roots of the square-free factors (polyroots does not converge on repeated roots)
    moduli = []
    try:
        for factor, mult in sympy.sqf_list(den)[1]:
            fc = [_mpf(c) for c in factor.all_coeffs()]
            if len(fc) > 1:
                roots = mpmath.polyroots(fc, maxsteps=200, extraprec=100)
                moduli += [(abs(z), mult) for z in roots]
    except mpmath.libmp.NoConvergence:
        return None
    smallest = min(m for m, _ in moduli)
    if not smallest > 1 + mpmath.mpf(10) ** -6:
        return None
    mult = max(k for m, k in moduli if abs(m - smallest) < mpmath.mpf(10) ** -20)
    # series division num / den; |c_n| <= C n^(mult-1) |q_1|^-n (the window spans the recurrence's
    # period, deg den + 1): cut when the bound is 1e-24 below the largest
    coeffs, largest, cut = [], mpmath.mpf(0), mpmath.mpf(10) ** -24
    for n in range(_MAX_ATOMS):
        acc = (nc[n] if n < len(nc) else 0) - mpmath.fsum(
            dc[j] * coeffs[n - j] for j in range(1, min(n, len(dc) - 1) + 1)
        )
        coeffs.append(acc / dc[0])
        largest = max(largest, abs(coeffs[-1]))
        if n >= 2 * len(dc) + 10:
            bound = max(abs(c) for c in coeffs[-len(dc) - 1 :]) * (n + 1) ** (mult - 1)
            if bound < cut * largest:
                break
    else:
        return None  # |q_1| too close to 1 for _MAX_ATOMS atoms
    a_m = _mpf(a)
    atoms = tuple((c, n * a_m) for n, c in enumerate(coeffs) if n > 0 and c != 0)
    return coeffs[0], atoms


def _bessel_term(w, nu, b, s, e):
    """(w, nu, b, s, m) for w r^e I_nu(b r) exp(-s r) = w r^(m - nu) I_nu(b r) exp(-s r), or None.

    Poisson's integral I_nu(b r) / r^nu = w_nu int_(-b)^b exp(sigma r) (b^2 - sigma^2)^(nu - 1/2)
    d sigma (nu > -1/2) makes r^-nu I_nu(b r) exp(-s r) a Laplace mixture over t = s - sigma in
    [s - b, s + b] (decaying iff s >= b); the factor r^m, m a non-negative integer, is the m-th
    derivative of that density (integration by parts), whose boundary terms vanish iff
    nu - 1/2 > m - 1, which is also the condition for the derivative to be integrable.
    """
    nu_m, b_m, s_m = _mpf(nu), _mpf(b), _mpf(s)
    m = e + nu
    if not (sympy.sympify(m).is_number and float(m) == int(round(float(m)))):
        return None
    m = int(round(float(m)))
    if not (nu_m > -0.5 and b_m > 0 and s_m >= b_m and m >= 0 and nu_m - 0.5 > m - 1):
        return None
    return (w, nu_m, b_m, s_m, m)


def _compact_pieces(terms):
    """The p = 0 terms w r^-n exp(-s r) as a piecewise polynomial density: nu(t) = sum w (t - s)^(n-1) /
    (n-1)! on t > s. Returns [(s_k, L_k, coeffs in x = t - s_k)] over consecutive shifts, or None unless
    the sum vanishes identically beyond the last shift (then nu has compact support and k is bounded)."""
    flat = [(w, int(beta), s) for w, beta, p, s in terms if p == 0]
    shifts = sorted({s for _, _, s in flat})
    pieces = []
    for k, s_k in enumerate(shifts):
        deg = max(n for _, n, _ in flat) - 1
        coeffs = [mpmath.mpf(0)] * (deg + 1)
        sizes = [mpmath.mpf(0)] * (deg + 1)
        for w, n, s in flat:
            if s > s_k:
                continue
            # (t - s)^(n-1) = (x + s_k - s)^(n-1), x = t - s_k
            for i in range(n):
                c = w * mpmath.binomial(n - 1, i) * (s_k - s) ** (n - 1 - i) / mpmath.factorial(n - 1)
                coeffs[i] += c
                sizes[i] += abs(c)
        clean = [
            mpmath.mpf(0) if abs(c) <= mpmath.mpf(10) ** (-_DPS + 8) * sz else c
            for c, sz in zip(coeffs, sizes)
        ]
        if k + 1 == len(shifts):
            return pieces if all(c == 0 for c in clean) else None
        if any(c != 0 for c in clean):
            pieces.append((s_k, shifts[k + 1] - s_k, clean))
    return None


# before the polynomial x exp matcher (10), whose expansion of (1 + r)**-60 takes seconds; this one
# declines polynomial x exp and pure exponentials
@matcher(priority=5)
def _match_monotone(expr, support):
    """Sums of w (a + b r)^(-beta) exp(-s r), rational functions with negative real poles (times exp)."""
    if support is not None or not expr.has(R):
        return None
    try:
        with mpmath.workdps(_DPS):
            data = bernstein_terms(expr)
            if data is None:
                return None
            c0, terms, atoms, bessel, logs = data
            if not _reconstructs(expr, c0, terms, atoms, bessel, logs):
                return None
    except MATCH_FAILURES:  # a formula this matcher cannot read is simply not matched
        return None
    return "completely_monotone", {"c0": c0, "terms": terms, "atoms": atoms, "bessel": bessel, "logs": logs}


def bessel_value(r, w, nu, b, s, m):
    """w r^(m - nu) I_nu(b r) exp(-s r) (mpmath), its limit at r = 0 included."""
    if r == 0:
        return w * (b / 2) ** nu / mpmath.gamma(nu + 1) if m == 0 else mpmath.mpf(0)
    return w * r ** (m - nu) * mpmath.besseli(nu, b * r) * mpmath.exp(-s * r)


def log_value(r, w, p, s):
    """w log(1 + r/p) exp(-s r) / r (mpmath), its limit w / p at r = 0 included."""
    if r == 0:
        return w / p
    return w * mpmath.log1p(r / p) * mpmath.exp(-s * r) / r


def kernel_value(r, c0, terms, atoms, bessel=(), logs=()):
    """k(r) of the Bernstein data (mpmath)."""
    out = c0
    for w, beta, p, s in terms:
        out += w * (r + p) ** (-beta) * mpmath.exp(-s * r)
    out += _atoms_value(r, atoms)
    for term in bessel:
        out += bessel_value(r, *term)
    for term in logs:
        out += log_value(r, *term)
    return out


def _atoms_value(r, atoms):
    """sum w exp(-s r) (mpmath). Atoms on a lattice s = n s_1 (a rational function of exp(-a r) has
    thousands) take exp(-n s_1 r) as a running product: one multiplication each, not one exp."""
    lattice = _lattice(atoms) if len(atoms) > 16 else None
    if lattice is None:
        return mpmath.fsum(w * mpmath.exp(-s * r) for w, s in atoms)
    s1, weights = lattice
    base = mpmath.exp(-s1 * r)
    power, out = mpmath.mpf(1), mpmath.mpf(0)
    for w in weights:  # weights[n - 1] belongs to s = n s_1
        power *= base
        out += w * power
    return out


@functools.lru_cache(maxsize=32)
def _lattice(atoms):
    """(s_1, [w_1, w_2, ...]) when the atoms' s are n s_1, n = 1, 2, ... (zero weights filling the
    gaps, at most 4 in a row), else None."""
    s1 = atoms[0][1]
    if not s1 > 0:
        return None
    weights = []
    for w, s in atoms:
        n = int(mpmath.nint(s / s1))
        if n <= len(weights) or n - len(weights) > 5 or abs(s - n * s1) > 4 * mpmath.eps * s:
            return None
        weights += [mpmath.mpf(0)] * (n - len(weights) - 1) + [w]
    return s1, weights


def _reconstructs(expr, c0, terms, atoms, bessel=(), logs=()):
    """The Bernstein data reproduce the formula at 9 radii to 1e-20 of the terms' sizes (the formula
    read as :func:`bernstein_terms` reads it: a float's binary value, not its 15 digits)."""
    expr = exact_rationals(expr)
    with mpmath.workdps(_DPS):
        for r in ("0", "0.125", "0.7", "1.5", "3.25", "10", "47", "300", "5000"):
            rv = mpmath.mpf(r)
            if rv == 0 and (bessel or logs or any(p == 0 for _, _, p, _ in terms)):
                continue  # r^-n exp(-s r), I_nu(b r) / r^nu, log(1 + r/p) / r: 0 / 0 in the formula
            val = kernel_value(rv, c0, terms, atoms, bessel, logs)
            size = abs(c0) + sum(abs(w) * (rv + p) ** (-beta) for w, beta, p, _ in terms)
            size += sum(abs(w) for w, _ in atoms)
            size += sum(abs(bessel_value(rv, *t)) for t in bessel)
            size += sum(abs(log_value(rv, *t)) for t in logs)
            ref = expr.subs(R, sympy.Rational(r)).evalf(_DPS)
            if not ref.is_real:
                return False
            if abs(val - mpmath.mpf(ref)) > mpmath.mpf(10) ** -20 * size:
                return False
    return True


# ---------------------------------------------------------------------------------------------
# the Bernstein density of one group (one shift s)
# ---------------------------------------------------------------------------------------------
class _Group:
    """nu_s(x) = sum_j w_j x^(beta_j - 1) exp(-p_j x) / Gamma(beta_j), x = t - s > 0, in logs.

    Small x (< 0.5 / max p): a power series per class of exponents beta_j - 1 (mod 1), coefficients
    summed at 50 digits (the terms' cancellation is resolved there); elsewhere the terms are
    summed in float64 (their condition number is measured by the transform's error check).
    """

    def __init__(self, s, terms):
        self.s = float(s)
        self.w = np.array([float(w) for w, _, _ in terms])
        self.beta = np.array([float(b) for _, b, _ in terms])
        self.p = np.array([float(p) for _, _, p in terms])
        self.logc = np.array([math.log(abs(float(w))) - math.lgamma(float(b)) for w, b, _ in terms])
        self.sign = np.sign(self.w)
        self.x_switch = 0.5 / float(np.max(self.p))
        self.series_ok = True
        # series classes: exponent e (the smallest beta - 1 of the class) and coefficients a_n of x^(e + n)
        classes = {}
        with mpmath.workdps(_DPS):
            for w, b, p in terms:
                frac = float(mpmath.frac(b))
                key = round(frac, 12)
                classes.setdefault(key, []).append((w, b, p))
            self.series = []
            p_max = max(p for _, _, p in terms)
            lead = []
            for members in classes.values():
                e = min(b for _, b, _ in members) - 1
                coeffs = [mpmath.mpf(0)] * _SERIES_TERMS
                sizes = [mpmath.mpf(0)] * _SERIES_TERMS
                for w, b, p in members:
                    m = int(mpmath.nint(b - 1 - e))
                    for n in range(m, _SERIES_TERMS):
                        # coefficient of z^n, z = p_max x (bounded: (p / p_max)^n / n!)
                        c = (
                            w
                            * (-p / p_max) ** (n - m)
                            * p_max ** (-m)
                            / (mpmath.factorial(n - m) * mpmath.gamma(b))
                        )
                        coeffs[n] += c
                        sizes[n] += abs(c)
                # a coefficient that cancels to below the working precision is zero
                clean = [
                    0.0 if abs(c) <= mpmath.mpf(10) ** (-_DPS + 8) * sz else float(c)
                    for c, sz in zip(coeffs, sizes)
                ]
                nonzero = np.nonzero(clean)[0]
                if nonzero.size:
                    # 24 terms beyond the leading one: (z/2)^24 / 24! < 1e-31 of it for z <= 1/2
                    self.series.append((float(e), np.array(clean[: nonzero[0] + 25])))
                    lead.append(float(e) + nonzero[0])
                else:
                    self.series_ok = False
            self.p_max = float(p_max)
        #: nu ~ x^lead as x -> 0 (the leading exponent after cancellation)
        self.lead = float(min(lead)) if lead else 0.0
        self.beta_min = float(np.min(self.beta))
        self.beta_max = float(np.max(self.beta))
        self.p_min = float(np.min(self.p))
        self.x_cut = self._cut()

    def _cut(self):
        """x beyond which every term is below e^-60 of its own peak."""
        cut = 0.0
        for b, p in zip(self.beta, self.p):
            x_ref = max(b - 1.0, 1.0) / p
            x = 2.0 * x_ref
            peak = (b - 1.0) * math.log(x_ref) - p * x_ref
            while (b - 1.0) * math.log(x) - p * x > peak - _LOG_CUT:
                x *= 1.5
            cut = max(cut, x)
        return cut

    def log_nu(self, x):
        """(log|nu(x)|, sign, log env, log err) for x > 0 (arrays): env = sum |terms| (smooth), err the
        size of what was summed (env, or the series' sum |a_n| x^(e+n) where the series is used)."""
        lx = np.log(x)
        la = self.logc[:, None] + (self.beta[:, None] - 1.0) * lx[None, :] - self.p[:, None] * x[None, :]
        peak = np.max(la, axis=0)
        ex = np.exp(la - peak)
        total = np.sum(self.sign[:, None] * ex, axis=0)
        size = np.sum(ex, axis=0)
        with np.errstate(divide="ignore"):
            log_abs = peak + np.log(np.abs(total))
        sign = np.sign(total)
        log_size = peak + np.log(size)
        log_env = log_size.copy()
        small = x < self.x_switch
        if np.any(small) and len(self.series) and self._needs_series():
            xs = x[small]
            vals = np.zeros(xs.shape)
            sizes = np.zeros(xs.shape)
            zs = xs * self.p_max
            for e, a in self.series:
                poly = np.polynomial.polynomial.polyval(zs, a)
                spoly = np.polynomial.polynomial.polyval(zs, np.abs(a))
                vals += xs**e * poly
                sizes += xs**e * spoly
            with np.errstate(divide="ignore"):
                log_abs[small] = np.log(np.abs(vals))
                log_size[small] = np.log(sizes)
            sign[small] = np.sign(vals)
        return log_abs, sign, log_env, log_size

    @functools.cached_property
    def _series_needed(self):
        return bool(np.any(self.w < 0)) and self.series_ok

    def _needs_series(self):
        return self._series_needed


def _log_exp1(z):
    """log E_1(z) for z > 0 (float arrays): scipy's exp1 up to z = 50, beyond it -z - log z +
    log(sum_(k<20) (-1)^k k! z^-k) (the asymptotic series: its error, below 20! 50^-20 ~ 3e-16,
    is under the rounding; E_1 underflows float64 from z ~ 700 on)."""
    out = np.empty(z.shape)
    near = z <= 50.0
    out[near] = np.log(sc.exp1(z[near]))
    far = z[~near]
    series = np.zeros(far.shape)
    term = np.ones(far.shape)
    for k in range(20):
        series += term
        term = term * (-(k + 1) / far)
    out[~near] = -far - np.log(far) + np.log(series)
    return out


class _ExpIntegralGroup:
    """nu(x) = w E_1(p x), x = t - s > 0: the Bernstein density of w log(1 + r/p) exp(-s r) / r
    (E_1's Laplace transform is log(1 + r)/r); the interface of :class:`_Group`. nu ~ w log(1/(p x))
    at 0 (integrable; mu(0) is infinite when s = 0, as k ~ log(r)/r), ~ w exp(-p x)/(p x) beyond."""

    def __init__(self, s, w, p):
        self.s = float(s)
        self.w = float(w)
        self.p = np.array([float(p)])
        self.p_min = float(p)
        self.lead = 0.0  # a logarithm: below every x^e, e > 0
        self.beta_min = self.beta_max = 1.0
        # E_1(z) < e^-z / z < e^-60 E_1(1) beyond z = 60
        self.x_cut = 60.0 / float(p)

    def log_nu(self, x):
        with np.errstate(divide="ignore"):
            la = math.log(abs(self.w)) + _log_exp1(self.p[0] * x)
        return la, np.full(x.shape, 1.0 if self.w > 0 else -1.0), la, la


class _Piece:
    """nu(x) = sum_i c_i x^i on 0 < x < L (x = t - s), zero beyond: one piece of a compactly supported
    Bernstein density (combinations such as (1 - exp(-r))/r, nu = 1 on [0, 1]); the interface of
    :class:`_Group` (the quadrature stops at x = L)."""

    def __init__(self, s, length, coeffs):
        self.s = float(s)
        nz = [i for i, c in enumerate(coeffs) if c != 0]
        self.coeffs = np.array([float(c) for c in coeffs])
        self.lead = float(nz[0])
        self.beta_min = self.lead + 1.0
        self.beta_max = float(nz[-1]) + 1.0
        self.x_cut = float(length)
        self.p = np.array([1.0 / self.x_cut])
        self.p_min = float(self.p[0])

    def log_nu(self, x):
        vals = np.polynomial.polynomial.polyval(x, self.coeffs)
        sizes = np.polynomial.polynomial.polyval(x, np.abs(self.coeffs))
        with np.errstate(divide="ignore"):
            log_abs = np.where(x < self.x_cut, np.log(np.abs(vals)), -np.inf)
            log_size = np.where(x < self.x_cut, np.log(sizes), -np.inf)
        return log_abs, np.sign(vals), log_size, log_size


# ---------------------------------------------------------------------------------------------
# quadrature in y = log(t - s)
# ---------------------------------------------------------------------------------------------
def _breaks(group, rho, d, refine=1):
    """Panel breakpoints in y = log x for each rho: shape (n_rho, n_panels + 1), rows sorted."""
    y_hi = math.log(group.x_cut)
    sq = math.sqrt(d + 1.0)
    with np.errstate(divide="ignore"):
        lrho = np.log(rho)
    feats = [np.full(rho.shape, math.log(min(1.0, group.beta_min) / float(np.max(group.p))) - 2.0)]
    if group.s > 0:
        feats.append(np.full(rho.shape, math.log(group.s / (d + 1.0)) - 2.0))
    feats.append(np.where(np.isfinite(lrho), lrho - math.log(sq) - 2.0, np.inf))
    y_lo = np.minimum(np.min(np.stack(feats), axis=0), y_hi - 1.0)
    y_lo = np.maximum(y_lo, y_hi - 120.0)
    # left tail: the integrand ~ x^slope as x -> 0 (slope = lead + 1, or lead + 2 - d at rho = 0 ...)
    slope = group.lead + 1.0
    if group.s == 0:
        slope = np.where(rho > 0, slope, group.lead + 1.0 - d)
    slope = np.maximum(np.asarray(slope, dtype=float), 1e-3)
    span = (46.0 + math.log(d + 1.0)) / slope
    span = np.broadcast_to(span, rho.shape)
    n_left = int(math.ceil(math.log2(1.0 + float(np.max(span))))) + 1
    left = y_lo[:, None] - np.minimum(np.cumsum(2.0 ** np.arange(n_left))[None, :], span[:, None])
    # the action region [y_lo, y_hi]: ladders of panels (widths w0, 2 w0, 4 w0, ...) on both sides of
    # every place where the integrand's log bends (nu's peak and cut, g's turnover at t ~ rho, the
    # decay of g(s + x) at x ~ s/d); between them it is exp(linear in y) and wide panels are exact
    x_floor = np.exp(y_lo)
    w_nu = min(1.0, 2.0 / math.sqrt(group.beta_max + 1.0)) / refine
    w_g = min(1.0, 2.0 / sq) / refine
    fixed = [math.log(1.0 / float(np.max(group.p))), math.log(max(group.beta_max, 1.0) / group.p_min)]
    if group.s > 0:
        fixed.append(math.log(group.s / (d + 1.0)))
    fixed.sort()
    kept = [fixed[0]] + [f for a, f in zip(fixed[:-1], fixed[1:]) if f - a > 2 * w_nu]
    centers = [(np.full(rho.shape, f), w_nu, (-1, 1)) for f in kept]
    with np.errstate(divide="ignore", invalid="ignore"):
        # g turns over between t = rho / sqrt(d+1) and t = rho: fine panels between, ladders outwards
        lo_g, hi_g = (np.log(np.maximum(t - group.s, x_floor)) for t in (rho / sq, rho))
    lo_g = np.where(np.isfinite(lo_g), lo_g, y_lo)
    hi_g = np.where(np.isfinite(hi_g), hi_g, y_lo)
    centers += [(lo_g, w_g, (-1,)), (hi_g, w_g, (1,))]
    span_act = float(np.max(y_hi - y_lo)) + 1.0
    parts = [left]
    for c, w0, sides in centers:
        k = int(math.ceil(math.log2(span_act / w0 + 1.0)))
        offs = w0 * (2.0 ** np.arange(k + 1) - 1.0)
        ladder = np.concatenate([-offs[:0:-1], offs]) if len(sides) == 2 else sides[0] * offs
        parts.append(np.clip(c[:, None] + ladder[None, :], y_lo[:, None], y_hi))
    n_fine = int(math.ceil((math.log(sq) + 0.2) / w_g))
    fr = np.linspace(0.0, 1.0, n_fine + 1)[1:-1]
    parts.append(np.clip(lo_g[:, None] + (hi_g - lo_g)[:, None] * fr[None, :], y_lo[:, None], y_hi))
    if refine > 1:
        left_mid = 0.5 * (left[:, 1:] + left[:, :-1])
        parts.append(left_mid)
    return np.sort(np.concatenate(parts, axis=1), axis=1)


class _Integrator:
    """mu (and int |nu| g, and the CDF integrals) of one group by Gauss-Legendre panels in y."""

    def __init__(self, group, d):
        self.g = group
        self.d = d

    def _nodes(self, rho, refine, n):
        br = _breaks(self.g, rho, self.d, refine)
        x, w = gauss_legendre(n)
        a, b = br[:, :-1, None], br[:, 1:, None]
        y = 0.5 * (b - a) * x + 0.5 * (b + a)
        wy = 0.5 * (b - a) * w
        return y.reshape(rho.size, -1), wy.reshape(rho.size, -1)

    def log_integrals(self, rho, kind="mu", refine=1, n=_NODES):
        """(log_scale, I, I_env, I_err) / exp(log_scale) for each rho: I = int nu(x) K(s + x, rho) dx,
        K = g_d ("mu") or the Beta-law CDF ("cdf") or its complement ("ccdf"); I_env and I_err the
        same with the envelope and the rounding size of nu (:meth:`_Group.log_nu`). One scale for the
        three, so that I / I_env is exact to rounding even where the logs are large (high d)."""
        rho = np.asarray(rho, dtype=np.float64)
        y, wy = self._nodes(rho, refine, n)
        x = np.exp(y)
        logs = (v.reshape(x.shape) for v in self.g.log_nu(x.ravel()))
        with np.errstate(divide="ignore"):
            lw = np.log(wy) + y  # dx = x dy (zero-width panels: weight 0)
        return _scaled_sums(*logs, _log_kernel(self.g.s + x, rho[:, None], self.d, kind) + lw)


def _log_kernel(t, rho, d, kind):
    """log K(t, rho): K = g_d ("mu"), the Beta-law CDF ("cdf") or its complement ("ccdf")."""
    if kind == "mu":
        big = np.maximum(t, rho)
        small = np.minimum(t, rho)
        log_c = math.lgamma(0.5 * (d + 1)) - 0.5 * (d + 1) * math.log(math.pi)
        with np.errstate(divide="ignore", invalid="ignore"):
            return log_c + np.log(t) - 0.5 * (d + 1) * (2 * np.log(big) + np.log1p((small / big) ** 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "cdf":
            val = sc.betainc(0.5 * d, 0.5, rho**2 / (rho**2 + t**2))
        else:  # complement, computed without cancellation
            val = sc.betainc(0.5, 0.5 * d, t**2 / (rho**2 + t**2))
        return np.log(val)


def _scaled_sums(ln, sg, lenv, lsize, lkw):
    """(log_scale, I, I_env, I_err) / exp(log_scale) per row from the logs of nu's value, sign,
    envelope and rounding size at the nodes and the log of kernel times weight (one scale for the
    three, so that I / I_env is exact to rounding even where the logs are large: high d)."""
    la = ln + lkw
    le = lenv + lkw
    ls = lsize + lkw
    peak = np.max(np.where(np.isfinite(le), le, -np.inf), axis=1)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        tot = np.sum(np.where(np.isfinite(la), sg * np.exp(la - peak[:, None]), 0.0), axis=1)
        env = np.sum(np.where(np.isfinite(le), np.exp(le - peak[:, None]), 0.0), axis=1)
        size = np.sum(np.where(np.isfinite(ls), np.exp(ls - peak[:, None]), 0.0), axis=1)
    return peak, tot, env, size


# ---------------------------------------------------------------------------------------------
# I-Bessel terms: compactly supported densities with algebraic ends
# ---------------------------------------------------------------------------------------------
def _poisson_weight(nu, b):
    """w_nu = b^-nu / (2^nu sqrt(pi) Gamma(nu + 1/2)): I_nu(b r) / r^nu = w_nu int_(-b)^b
    exp(sigma r) (b^2 - sigma^2)^(nu - 1/2) d sigma (mpmath)."""
    return b ** (-nu) / (2**nu * mpmath.sqrt(mpmath.pi) * mpmath.gamma(nu + mpmath.mpf(0.5)))


def _bessel_density(w, nu, b, m):
    """(C, P, a) with the Bernstein density of w r^(m - nu) I_nu(b r) exp(-s r) equal to
    C P(x) (x (2b - x))^a on 0 < x < 2b, x = t - (s - b): C = w w_nu, w_nu = b^-nu / (2^nu
    sqrt(pi) Gamma(nu + 1/2)) (:func:`_poisson_weight`), P the polynomial (coefficients in x, mpmath) of the m-th derivative,
    d/dx [P q^a] = (P' q + a P q') q^(a-1), q = 2 b x - x^2, and a = nu - 1/2 - m."""
    c = w * _poisson_weight(nu, b)
    poly, a = [mpmath.mpf(1)], nu - mpmath.mpf(0.5)
    for _ in range(m):
        dp = [i * poly[i] for i in range(1, len(poly))] or [mpmath.mpf(0)]
        out = [mpmath.mpf(0)] * (len(poly) + 2)
        for i, ci in enumerate(dp):  # P' q
            out[i + 1] += 2 * b * ci
            out[i + 2] += -ci
        for i, ci in enumerate(poly):  # a P q'
            out[i] += a * 2 * b * ci
            out[i + 1] += -2 * a * ci
        poly, a = out, a - 1
    return c, poly, a


def _reflected(poly, length):
    """Coefficients in z of P(length - z) (mpmath)."""
    out = [mpmath.mpf(0)] * len(poly)
    for i, ci in enumerate(poly):
        for j in range(i + 1):
            out[j] += ci * mpmath.binomial(i, j) * length ** (i - j) * (-1) ** j
    return out


class _AlgebraicHalf:
    """nu(x) = C P(x) (x (2b - x))^a on 0 < x <= b, zero beyond: one half of an I-Bessel term's
    density (the left half with x = t - (s - b), the right one with x = (s + b) - t); the interface
    of :class:`_Group` (the quadrature stops at x = b)."""

    def __init__(self, s, b, c, poly, a):
        self.s = float(s)
        self.b = float(b)
        self.a = float(a)
        self.log_c = float(mpmath.log(abs(c)))
        self.sign = 1.0 if c > 0 else -1.0
        coeffs = [float(x) for x in poly]
        while len(coeffs) > 1 and coeffs[-1] == 0:
            coeffs.pop()
        self.coeffs = np.array(coeffs)
        nz = np.nonzero(self.coeffs)[0]
        self.lead = self.a + float(nz[0] if nz.size else 0)
        self.beta_min = self.lead + 1.0
        self.beta_max = max(1.0, self.a + len(coeffs))
        self.x_cut = self.b
        self.p = np.array([1.0 / self.b])
        self.p_min = float(self.p[0])

    def log_nu(self, x):
        vals = np.polynomial.polynomial.polyval(x, self.coeffs)
        sizes = np.polynomial.polynomial.polyval(x, np.abs(self.coeffs))
        inside = (x > 0) & (x <= self.x_cut)
        with np.errstate(divide="ignore", invalid="ignore"):
            lq = self.a * np.log(x * (2.0 * self.b - x))  # no cancellation for x <= b
            log_abs = np.where(inside, self.log_c + np.log(np.abs(vals)) + lq, -np.inf)
            log_size = np.where(inside, self.log_c + np.log(sizes) + lq, -np.inf)
        return log_abs, self.sign * np.sign(vals), log_size, log_size


class _EndIntegrator:
    """The right half of an I-Bessel term's density, t = t_end - z, 0 < z <= b: panels of width at
    most 4 b/(d + 1) (log g_d changes by at most (d + 1)/b per unit of t there, t >= b), at least 4;
    the first, at the end z = 0 where nu ~ z^a, by Gauss-Jacobi with the weight z^a (exact for the
    algebraic end), the others by Gauss-Legendre."""

    def __init__(self, half, t_end, d):
        self.h = half
        self.t_end = float(t_end)
        self.d = d
        n_lin = max(4, int(math.ceil((d + 1) / 4.0)))
        self.breaks = half.b * np.arange(n_lin + 1) / n_lin
        self._rules = {}  # (refine, n) -> nodes, log weights and log_nu there: independent of rho

    def _rule(self, refine, n):
        if (refine, n) not in self._rules:
            z, lw = self._nodes(refine, n)
            self._rules[refine, n] = (z, lw, self.h.log_nu(z))
        return self._rules[refine, n]

    def _nodes(self, refine, n):
        br = self.breaks
        if refine > 1:
            br = np.sort(np.concatenate([br, 0.5 * (br[1:] + br[:-1])]))
        x, w = gauss_legendre(n)
        a, b = br[1:-1, None], br[2:, None]
        z = (0.5 * (b - a) * x + 0.5 * (b + a)).ravel()
        lw = np.log(0.5 * (b - a) * w).ravel()
        # int_0^z1 nu(z) dz = (z1/2) sum w_j (1 + x_j)^-a nu(z_j): the weight (1 + x)^a is Jacobi's
        xj, wj = sc.roots_jacobi(n, 0.0, self.h.a)
        z1 = br[1]
        zj = 0.5 * z1 * (1.0 + xj)
        lwj = np.log(0.5 * z1 * wj) - self.h.a * np.log1p(xj)
        return np.concatenate([zj, z]), np.concatenate([lwj, lw])

    def log_integrals(self, rho, kind="mu", refine=1, n=_NODES):
        rho = np.asarray(rho, dtype=np.float64)
        z, lw, log_nu = self._rule(refine, n)
        logs = (np.broadcast_to(v, (rho.size, z.size)) for v in log_nu)
        lkw = _log_kernel(self.t_end - z[None, :], rho[:, None], self.d, kind) + lw[None, :]
        return _scaled_sums(*logs, lkw)


def _bessel_parts(w, nu, b, s, m, d):
    """The left half (a group for :class:`_Integrator`) and the right half's integrator of
    w r^(m - nu) I_nu(b r) exp(-s r)."""
    c, poly, a = _bessel_density(w, nu, b, m)
    left = _AlgebraicHalf(s - b, b, c, poly, a)
    right = _AlgebraicHalf(s + b, b, c, _reflected(poly, 2 * b), a)
    return left, _EndIntegrator(right, s + b, d)


def _atoms_log(atoms, rho, d, kind="mu", block=256):
    """The atoms' contributions sum w K(s, rho) as one scaled piece (see :func:`_combine`), summed in
    blocks of atoms (a rational function of exp(-r) near its radius of convergence has thousands)."""
    if not atoms:
        return []
    rho = np.asarray(rho, dtype=np.float64)
    w = np.array([float(w_) for w_, _ in atoms])
    s = np.array([float(s_) for _, s_ in atoms])
    shape = rho.shape
    flat = rho.reshape(1, -1)
    parts = []
    for i in range(0, w.size, block):
        lk = _log_kernel(s[i : i + block, None], flat, d, kind)
        la = np.where(np.isfinite(lk), lk + np.log(np.abs(w[i : i + block]))[:, None], -np.inf)
        top = np.max(la, axis=0)
        none = ~np.isfinite(top)  # K = 0 for every atom (the CDF at rho = 0): envelope 1, as one atom's
        top = np.where(none, 0.0, top)
        f = np.exp(la - top)
        parts.append((top, np.sign(w[i : i + block]) @ f, np.where(none, 1.0, f.sum(axis=0))))
    shift = np.max([p_[0] for p_ in parts], axis=0)
    scale = [np.exp(p_[0] - shift) for p_ in parts]
    value = sum(c * p_[1] for c, p_ in zip(scale, parts, strict=True))
    size = sum(c * p_[2] for c, p_ in zip(scale, parts, strict=True))
    return [(shift.reshape(shape), value.reshape(shape), size.reshape(shape), size.reshape(shape))]


def _moments(terms, atoms, bessel, pieces, orders, logs=()):
    """M_n = int t^n nu(dt) for each n in ``orders`` (c0's atom at t = 0 excluded; M_0 is nu's mass)
    (mpmath, exact formulas per component: Gamma moments of the shifted groups, the atoms' s^n,
    polynomial pieces, and for an I-Bessel term (-1)^m n!/(n-m)! times the (n-m)-th moment of its
    m = 0 density, whose sigma-moments are Beta functions: int sigma^(2i) (b^2 - sigma^2)^(nu - 1/2)
    d sigma = b^(2 nu + 2 i) B(i + 1/2, nu + 1/2))."""
    out = []
    for n in orders:
        total = mpmath.mpf(0)
        for w, beta, p, s in terms:
            if p > 0 and s == 0:
                total += w * mpmath.rf(beta, n) / p ** (beta + n)
            elif p > 0:
                total += w * mpmath.fsum(
                    mpmath.binomial(n, k) * s ** (n - k) * mpmath.rf(beta, k) / p ** (beta + k)
                    for k in range(n + 1)
                )
        total += mpmath.fsum(w * s**n for w, s in atoms)
        for s_k, length, coeffs in pieces:
            total += mpmath.fsum(
                c * mpmath.binomial(n, k) * s_k ** (n - k) * length ** (i + k + 1) / (i + k + 1)
                for i, c in enumerate(coeffs)
                for k in range(n + 1)
            )
        for w, nu, b, s, m in bessel:
            if n < m:
                continue
            q = n - m
            c = w * _poisson_weight(nu, b)
            inner = mpmath.fsum(
                mpmath.binomial(q, 2 * i)
                * s ** (q - 2 * i)
                * b ** (2 * nu + 2 * i)
                * mpmath.beta(i + 0.5, nu + 0.5)
                for i in range(q // 2 + 1)
            )
            total += (-1) ** m * mpmath.factorial(n) / mpmath.factorial(q) * c * inner
        # w E_1(p (t - s)): int x^k E_1(p x) dx = k! / ((k + 1) p^(k + 1))
        for w, p, s in logs:
            total += w * mpmath.fsum(
                mpmath.binomial(n, k) * s ** (n - k) * mpmath.factorial(k) / ((k + 1) * p ** (k + 1))
                for k in range(n + 1)
            )
        out.append(total)
    return out


_SERIES_TERMS_TAIL = 60


def _tail_series(terms, atoms, bessel, pieces, d, logs=()):
    """(log|a_j|, sign a_j) of mu(rho) = sum_j a_j rho^-(2h + 2j), h = (d+1)/2: the expansion of
    g_d(t, rho) = C_d t rho^-2h (1 + t^2/rho^2)^-h in powers of t^2/rho^2 integrated against nu, so
    a_j = C_d binom(-h, j) M_(2j+1) with the odd moments M_n = int t^n nu(dt) = -k^(n)(0) of nu (the
    odd Taylor terms of k). Convergent for rho above nu's support, asymptotic
    otherwise; used only where it converges numerically (:func:`_with_series`)."""
    with mpmath.workdps(_DPS):
        h = mpmath.mpf(d + 1) / 2
        log_c = mpmath.loggamma(h) - h * mpmath.log(mpmath.pi)
        log_a, signs = [], []
        odd = range(1, 2 * _SERIES_TERMS_TAIL, 2)
        for j, mom in enumerate(_moments(terms, atoms, bessel, pieces, odd, logs)):
            a = mpmath.binomial(-h, j) * mom
            log_a.append(float(log_c + mpmath.log(abs(a))) if a != 0 else -math.inf)
            signs.append(float(mpmath.sign(a)))
    return np.array(log_a), np.array(signs), float(2 * h)


def _with_series(series, rho, la, sg, ls):
    """Replace (log|mu|, sign, log rounding size) by the tail series (``series()``: the coefficients
    of :func:`_tail_series`, computed on first use) where the quadrature has lost
    more than 3 digits to cancellation and the series has converged (its last three terms below
    1e-17 of the sum and decreasing, the sum's own cancellation under 1e3)."""
    bad = (ls - la > math.log(1e3)) | ~np.isfinite(la)
    bad &= rho > 0
    if not np.any(bad):
        return la, sg, ls
    logs, signs, two_h = series()
    r = rho[bad]
    j = np.arange(logs.size)
    with np.errstate(invalid="ignore", over="ignore"):
        lt = logs[None, :] - (two_h + 2.0 * j[None, :]) * np.log(r)[:, None]
        peak = np.max(np.where(np.isfinite(lt), lt, -np.inf), axis=1)
        peak = np.where(np.isfinite(peak), peak, 0.0)
        t = signs[None, :] * np.exp(lt - peak[:, None])
        total = np.sum(t, axis=1)
        size = np.sum(np.abs(t), axis=1)
        tail = np.abs(t[:, -3:])
    ok = (
        np.all(tail <= 1e-17 * np.abs(total)[:, None], axis=1)
        & np.all(np.diff(tail, axis=1) <= 0, axis=1)
        & (size <= 1e3 * np.abs(total))
    )
    if not np.any(ok):
        return la, sg, ls
    la, sg, ls = la.copy(), sg.copy(), ls.copy()
    idx = np.flatnonzero(bad)[ok]
    with np.errstate(divide="ignore"):
        la[idx] = peak[ok] + np.log(np.abs(total[ok]))
        sg[idx] = np.sign(total[ok])
        ls[idx] = peak[ok] + np.log(size[ok])
    return la, sg, ls


def _combine(pieces):
    """Sum of scaled pieces (log_scale_i, I_i, E_i, S_i) -> (log_scale, I, E, S) with one scale."""
    logs = np.stack([p[0] for p in pieces])
    shift = np.max(logs, axis=0)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        factors = np.exp(logs - shift)
        return (shift, *(np.sum(factors * np.stack([p[k] for p in pieces]), axis=0) for k in (1, 2, 3)))


# ---------------------------------------------------------------------------------------------
# the builder
# ---------------------------------------------------------------------------------------------
@builder("completely_monotone", rel_error=1e-12)  # per transform: measured (see the module docstring)
def _completely_monotone(c0, terms, atoms, dim, bessel=(), logs=()):
    d = dim
    by_s = {}
    for w, beta, p, s in terms:
        if p > 0:
            by_s.setdefault(s, []).append((w, beta, p))
    with mpmath.workdps(_DPS):
        groups = [_Group(s, members) for s, members in sorted(by_s.items())]
        pieces = _compact_pieces(terms) if any(p == 0 for _, _, p, _ in terms) else []
        groups += [_Piece(s_k, length, coeffs) for s_k, length, coeffs in pieces]
        halves = [_bessel_parts(*term, d) for term in bessel]
        groups += [_ExpIntegralGroup(s, w, p) for w, p, s in logs]
    groups += [left for left, _ in halves]
    integrators = [_Integrator(g, d) for g in groups] + [right for _, right in halves]
    nonneg = (
        all(w > 0 for w, *_ in terms)
        and all(w >= 0 for w, _ in atoms)
        and all(w > 0 and m == 0 for w, *_, m in bessel)
        and all(w > 0 for w, _, _ in logs)
        and c0 >= 0
    )
    with mpmath.workdps(_DPS):
        mass = _moments(terms, atoms, bessel, pieces, (0,), logs)[0]
    # mu(0) is infinite when a group at s = 0 decays like x^lead with lead + 1 <= d
    singular0 = any(g.s == 0 and g.lead + 1.0 <= d for g in groups)
    scale = float(min([g.p_min + g.s for g in groups] + [float(s) for _, s in atoms]))

    def parts(rho, kind="mu", refine=1, n=_NODES):
        """(log_scale, I, I_env, I_err) summed over the groups and the atoms (one scale)."""
        pieces = [it.log_integrals(rho, kind, refine, n) for it in integrators]
        return _combine(pieces + _atoms_log(atoms, rho, d, kind))

    @functools.cache
    def series():  # only where the quadrature cancels (60 moments at 50 digits: ~0.5 s)
        return _tail_series(terms, atoms, bessel, pieces, d, logs)

    def direct(rho):
        """(log|mu|, sign, log E, log err, mu / E) by quadrature at rho > 0 (E = int env g), by the
        odd-moment series where the quadrature cancels and the series converges."""
        shift, tot, env, size = parts(rho)
        with np.errstate(divide="ignore", invalid="ignore"):
            la, sg, ls = shift + np.log(np.abs(tot)), np.sign(tot), shift + np.log(size)
            la, sg, ls = _with_series(series, rho, la, sg, ls)
            le = shift + np.log(env)
            return la, sg, le, ls, sg * np.exp(la - le)

    # mu is interpolated in u = log rho (adaptive piecewise Chebyshev with a measured error) on 42
    # decades, by quadrature beyond: log|mu| when mu keeps its sign, else log E and q = mu / E
    lo, hi = math.log(scale) + math.log(1e-30), math.log(scale) + math.log(1e12)
    u_probe = np.linspace(lo, hi, 361)
    probe = direct(np.exp(u_probe))
    one_signed = bool(np.all(probe[1] == probe[1][0]))
    sign_all = float(probe[1][0])
    fit = dict(n_init=16, degree=24, relative=False, fallback=True)

    def noise(v):
        return 32 * np.finfo(float).eps * float(np.max(np.abs(v)))  # the rounding of log values

    def fit_log_abs(a, b):
        return fit_adaptive(lambda u: direct(np.exp(u))[0], a, b, tol=1e-13, noise=noise, **fit)[0]

    # pieces (u_end, log_env, ratio, sign): log|mu| where mu keeps its sign, else log E and the ratio
    # q = mu / E, whose fit has an absolute error: beyond the outermost sign changes (where |q| may
    # become small: mu decays faster than E when k'(0) = 0) log|mu| is fitted again
    if one_signed:
        pieces_u = [(math.inf, fit_log_abs(lo, hi), None, sign_all)]
    else:
        flips = np.flatnonzero(probe[1][1:] != probe[1][:-1])
        u_head, u_tail = u_probe[max(flips[0] - 2, 0)], u_probe[min(flips[-1] + 3, u_probe.size - 1)]
        # q = I / I_env carries the rounding of the logs of the nodes (~ eps |log|, large in high d)
        log_size = float(np.max(np.abs(probe[2])))
        tol_q = max(1e-14, 64 * np.finfo(float).eps * log_size)
        # where |q| stays above 1e11 tol_q the ratio's absolute error is a relative one below 1e-11:
        # no split there
        if np.min(np.abs(probe[4][u_probe <= u_head])) > 1e11 * tol_q:
            u_head = lo
        if np.min(np.abs(probe[4][u_probe >= u_tail])) > 1e11 * tol_q:
            u_tail = hi
        log_env, _ = fit_adaptive(
            lambda u: direct(np.exp(u))[2], u_head, u_tail, tol=1e-13, noise=noise, **fit
        )
        ratio, _ = fit_adaptive(lambda u: direct(np.exp(u))[4], u_head, u_tail, tol=tol_q, **fit)
        pieces_u = [(u_head, fit_log_abs(lo, u_head), None, float(probe[1][0]))] if u_head > lo else []
        if u_tail < hi:
            pieces_u += [
                (u_tail, log_env, ratio, 0.0),
                (math.inf, fit_log_abs(u_tail, hi), None, float(probe[1][-1])),
            ]
        else:
            pieces_u.append((math.inf, log_env, ratio, 0.0))

    def log_abs_and_sign(rho):
        out = np.empty(rho.shape)
        sign = np.full(rho.shape, sign_all)
        zero = rho == 0
        pos = ~zero
        if np.any(pos):
            u = np.log(rho[pos])
            vals, sgns = np.empty(u.shape), np.empty(u.shape)
            start = -math.inf
            for u_end, fn, q, sg in pieces_u:
                sel = (u > start) & (u <= u_end)
                if np.any(sel):
                    vals[sel], sgns[sel] = envelope_logs(fn, q, u[sel], sg)
                start = u_end
            out[pos], sign[pos] = vals, sgns
        if np.any(zero):
            if singular0:
                out[zero], sign[zero] = np.inf, sign0
            else:
                la, sg, *_ = direct(np.zeros(1))
                out[zero], sign[zero] = la[0], sg[0]
        return out, sign

    def direct_fine(rho):
        shift, tot, _, size = parts(rho, refine=2, n=_CHECK_NODES)
        with np.errstate(divide="ignore"):
            la, sg, _ = _with_series(
                series, rho, shift + np.log(np.abs(tot)), np.sign(tot), shift + np.log(size)
            )
            return la, sg

    sign0 = float(direct(np.array([1e-9 * scale]))[1][0])
    # measured error of what is returned: against a finer rule (halved panels, 24 nodes) at points
    # between the interpolation nodes, plus the cancellation eps * int |nu| g / |mu|
    check = scale * np.logspace(-25.03, 11.51, 150)
    la1, sg1 = log_abs_and_sign(check)
    ls1 = direct(check)[3]
    la2, sg2, *_ = direct_fine(check)
    with np.errstate(invalid="ignore", over="ignore"):
        quad = np.abs(np.expm1(la1 - la2))
        quad = np.where(sg1 == sg2, quad, np.inf)
        cancel = 8 * np.finfo(float).eps * np.exp(ls1 - la2)
    measured = float(np.max(quad + cancel))
    if not np.isfinite(measured) or measured > _MAX_REL_ERROR:
        return None
    rel_error = max(4.0 * measured, 1e-14)

    radial_cdf = fast_cdf = None
    if nonneg and mass > 0:
        log_mass = math.log(float(mass))

        def exact_cdf(flat):
            sc_, tot, _, _ = parts(flat, "cdf")
            scc, totc, _, _ = parts(flat, "ccdf")
            lo = tot * np.exp(sc_ - log_mass)
            hi = 1.0 - totc * np.exp(scc - log_mass)
            return np.clip(np.where(lo < 0.5, lo, hi), 0.0, 1.0)

        def radial_cdf(rho, read=exact_cdf):
            arr = np.asarray(rho, dtype=np.float64)
            flat = arr.ravel()
            out = np.zeros(flat.shape)
            pos = flat > 0
            if np.any(pos):
                out[pos] = read(flat[pos])
            out = out.reshape(arr.shape)
            return out if out.ndim else float(out)

        # the samplers read the CDF at every table point (tens of thousands): a Beta-law CDF per atom
        # and point (1/(1.05 - exp(-r)), ~1,150 atoms: 32 s in d = 3) or a quadrature over a
        # continuous Bernstein measure ((1 + r)^-1/2: 24 s in d = 3, 39 s in d = 64), so they read
        # a verified interpolant in log rho (absolute _CDF_TOL) built on first use, the exact CDF
        # outside it and on the panels it cannot resolve
        if integrators or len(atoms) >= _CDF_FIT_ATOMS:

            @functools.cache
            def cdf_fit():
                lo_t, hi_t = math.log(scale) - _CDF_SPAN, math.log(scale) + _CDF_SPAN
                fn, _ = fit_adaptive(
                    lambda t: exact_cdf(np.exp(t)),
                    lo_t,
                    hi_t,
                    n_init=int(hi_t - lo_t),
                    degree=24,
                    tol=_CDF_TOL,
                    relative=False,
                    noise=lambda v: 8 * np.finfo(float).eps,
                    max_panels=4096,
                    fallback=True,
                )
                return fn

            def interpolated(flat):
                return np.clip(cdf_fit()(np.log(flat)), 0.0, 1.0)

            fast_cdf = functools.partial(radial_cdf, read=interpolated)

    peak_log = log_abs_and_sign(np.array([0.0]))[0][0]
    abs_error = 0.0 if not np.isfinite(peak_log) else min(1.0, math.exp(min(700.0, -690.0 - peak_log)))
    # mu ~ C (-k'(0)) rho^(-d-1); when k'(0) = 0 the tail is faster and the bound still holds (the
    # cancellation check above refuses such a signed nu: its float sum cancels at large rho)
    tail = d + 1.0
    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method="closed-form:completely-monotone",
        rel_error=rel_error,
        abs_error=abs_error,
        scale=scale,
        tail_exponent=tail,
        tail_oscillation=0.0,
        nonnegative=bool(nonneg),
        radial_cdf=radial_cdf,
        fast_cdf=fast_cdf,
        fast_cdf_error=_CDF_TOL if fast_cdf is not None else 0.0,
        zeros=np.empty(0) if nonneg else None,
        shells=((0.0, float(c0)),) if c0 != 0 else (),
        singular_points=(0.0,) if singular0 else (),
        ac_mass=float(mass),
    )
