"""Exact spectral densities of exponential-polynomial and K-Bessel kernels in every dimension.

Kernels (one atom; ``expr`` real):

    k(r) = Re sum_j sum_n c_jn r^n exp(-a_j r)                      (n >= -1 integer, Re a_j > 0)
         + sum_i b_i (c_i^2 + r^2)^(-e_i/2) exp(-a_i sqrt(c_i^2 + r^2))   (e_i in {0, 1}, a_i, c_i > 0)
         + sum_l g_l r^(nu_l) exp(-a_l r) + c_0                     (nu_l > 0 not integer, a_l > 0)

Sign changes: :func:`_phase_zeros` (one group) and :func:`_grid_zeros` (several parts).

cos, sin, cosh and sinh factors are rewritten as exponentials (complex a_j), terms are grouped by
exponent. Routes (``docs/theory.md``, section "Exponential-polynomial and K-Bessel kernels"):

* exp(-a r) on R^d has mu = C_d a (a^2 + rho^2)^(-m), C_d = Gamma(m) pi^(-m), m = (d+1)/2, for every
  Re a > 0 (analytic continuation; principal branch, a^2 + rho^2 never crosses (-inf, 0]);
  r^n exp(-a r) = (-d/da)^n exp(-a r) gives C_d Q_n(a, s) (a^2 + s)^(-m-n), s = rho^2, with
  Q_(n+1) = 2 a (m + n) Q_n - (a^2 + s) dQ_n/da, Q_0 = a, and Q_(-1) = 1/(d - 1) for exp(-a r)/r
  (d >= 2; in d = 1 exp(-a r)/r gives -(1/(2 pi)) log(a^2 + s) up to a constant that cancels in a
  bounded kernel). One group (one a_j) is combined exactly (sympy) into C_d N(s) (a^2 + s)^(-p)
  with N a polynomial, factored into its roots (mpmath, 100 digits) and evaluated as a complex
  logarithm: no cancellation inside a group but the real part (the cosine of the phase).
* exp(-a sqrt(c^2 + r^2)): subordination to Gaussians gives
  mu = 2^(-(d-1)/2) pi^(-(d+1)/2) a c^w (a^2 + s)^(-w/2) K_w(c sqrt(a^2 + s)), w = (d+1)/2, and with
  the factor (c^2 + r^2)^(-1/2) the same without the factor a and with w = (d-1)/2.
* c r^nu exp(-a r), a > 0, nu > 0 not an integer: a 2F1 in u = a / sqrt(a^2 + s), tabulated
  (:class:`_NuPart`); a constant term is an atom at 0 (a shell of radius 0).
* Between parts (groups, K-Bessel terms, powers) digits may cancel: the cancellation
  kappa = sum |T_g| / |sum T_g| is measured at every point and where it exceeds ``_KAPPA`` the point
  is re-evaluated in mpmath at 20 + log10(kappa) digits (raised until the measured cancellation
  leaves 20 digits). One part alone keeps float64 also near its zeros (the real part of a complex
  group): its error is relative to its local amplitude there. For rho >= rho_t the exp-polynomial part is the convergent expansion
  mu = s^(-m) sum_j E_j s^(-j), its coefficients summed over the groups in 60-digit arithmetic
  (the first ones cancel: the tail exponent is d + 1 + 2 j0, i.e. the first odd power of k at 0);
  rho_t is chosen so that the series is well conditioned there.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import sympy
from scipy.optimize import brentq

from .._numerics.chebyshev import fit_adaptive
from .._numerics.special import log_besselk
from ..kernels._parse import R
from ._forms import log_form, vectorised
from ._registry import BUILDERS, builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module: registers the builder and the matcher

_S = sympy.Symbol("s")  # rho^2
_A = sympy.Symbol("a")
_DPS = 100  # digits of the roots and constants
_SERIES_DPS = 60  # digits of the tail-series coefficients
_KAPPA = 1e3  # float64 is kept where at most this factor of the amplitude cancels
_MAX_DPS = 90
_MAX_TERMS = 2000
_MAX_POWER = 60  # largest power of r per group (sympy cost grows with it)
_EPS = np.finfo(float).eps
#: failures of the exact machinery that leave the kernel to the generic routes
_NOT_BUILT = (ArithmeticError, ValueError, mpmath.libmp.NoConvergence)


# ---------------------------------------------------------------------------------------------
# recognition
# ---------------------------------------------------------------------------------------------


def _cnum(x):
    """sympy number -> complex (TypeError if not a number)."""
    if not x.is_number:
        raise TypeError(f"not a number: {x}")
    return complex(sympy.N(x, 30))


def _sqrt_radicand(g):
    """(kappa, B, C) with g = kappa sqrt(B r^2 + C), or None."""
    kappa, rest = g.as_independent(R, as_Add=False)
    if not (isinstance(rest, sympy.Pow) and rest.exp == sympy.Rational(1, 2)):
        return None
    base = sympy.expand(rest.base)
    if not base.is_polynomial(R):
        return None
    poly = sympy.Poly(base, R)
    if poly.degree() != 2:
        return None
    B, lin, C = poly.all_coeffs()
    if lin != 0 or not (B.is_number and C.is_number and kappa.is_number):
        return None
    return kappa, B, C


def _parse_term(term):
    """One additive term -> ("exp", a, n, c) | ("kb", a, c2, e, coef) | None."""
    exps, others = [], []
    for f in sympy.Mul.make_args(term):
        (exps if isinstance(f, sympy.exp) else others).append(f)
    if not exps:
        return None
    g = sympy.expand(sympy.Add(*[f.args[0] for f in exps]))
    g0, grest = g.as_independent(R, as_Add=True)
    coef = sympy.exp(g0)
    power = sympy.Integer(0)
    half = None  # (B, C) of a factor (B r^2 + C)^(-1/2)
    for f in others:
        if f.is_number:
            coef *= f
        elif f == R:
            power += 1
        elif isinstance(f, sympy.Pow) and f.base == R and f.exp.is_number:
            power += f.exp
        elif isinstance(f, sympy.Pow) and f.exp == sympy.Rational(-1, 2) and half is None:
            base = sympy.Poly(sympy.expand(f.base), R) if f.base.is_polynomial(R) else None
            if base is None or base.degree() != 2:
                return None
            B, lin, C = base.all_coeffs()
            if lin != 0:
                return None
            half = (B, C)
        else:
            return None
    if grest == 0:
        return None
    lin = sympy.expand(grest / R)
    if not lin.has(R):
        if half is not None or not (power.is_real and power >= -1):
            return None
        if power.is_integer:
            return ("exp", sympy.expand(-lin), int(power), coef)
        return ("nu", sympy.expand(-lin), power, coef)
    sq = _sqrt_radicand(grest)
    if sq is None or power != 0:
        return None
    kappa, B, C = sq
    if not all(v.is_real for v in (kappa, B, C)) or not (B > 0 and C > 0 and kappa < 0):
        return None
    a = -kappa * sympy.sqrt(B)
    c2 = sympy.nsimplify(C / B)
    if half is None:
        return ("kb", a, c2, 0, coef)
    hb, hc = half
    if not (hb > 0 and hc.is_number) or sympy.simplify(hc / hb - c2) != 0:
        return None
    # (B' r^2 + C')^(-1/2) = B'^(-1/2) (r^2 + c^2)^(-1/2)
    return ("kb", a, c2, 1, coef / sympy.sqrt(hb))


@matcher(priority=15)
def _match_exp_poly(expr, support):
    """sum_j P_j(r) exp(-a_j r) (complex a_j via cos/sin/cosh/sinh) and K-Bessel forms."""
    try:
        return _match(expr, support)
    except (TypeError, ValueError, ArithmeticError, sympy.PolynomialError):
        return None


def _match(expr, support):
    if support is not None or not expr.has(sympy.exp, sympy.cos, sympy.sin, sympy.cosh, sympy.sinh):
        return None
    if expr.has(sympy.besselj, sympy.besselk, sympy.Abs, sympy.Max, sympy.Min, sympy.Piecewise):
        return None
    e = exact_rationals(expr).rewrite(sympy.exp)
    e = sympy.expand(sympy.powsimp(sympy.expand(e), combine="exp"))
    exp_terms, kb_terms, nu_terms, const = {}, [], {}, sympy.Integer(0)
    for term in sympy.Add.make_args(e):
        if term.is_number:
            const += term
            continue
        parsed = _parse_term(term)
        if parsed is None:
            return None
        if parsed[0] == "nu":
            _, a, nu, c = parsed
            if not (a.is_real and a > 0 and c.is_real and nu > 0):
                return None  # r^nu with an oscillating factor, or unbounded (nu < 0): not handled
            key = (a, nu)
            nu_terms[key] = nu_terms.get(key, 0) + c
        elif parsed[0] == "exp":
            _, a, n, c = parsed
            if not sympy.re(a) > 0:
                return None
            group = exp_terms.setdefault(a, {})
            group[n] = group.get(n, 0) + c
        else:
            kb_terms.append(parsed[1:])
    groups = []
    for a, terms in exp_terms.items():
        terms = {n: sympy.expand(c) for n, c in terms.items()}
        terms = {n: c for n, c in terms.items() if c != 0}
        if terms:
            groups.append((a, terms))
    nu_terms = {k: sympy.expand(c) for k, c in nu_terms.items() if sympy.expand(c) != 0}
    if nu_terms:
        # the leading non-integer power must not cancel between exponents (its tail rho^-(d+nu))
        nu_min = min(nu for _, nu in nu_terms)
        if sympy.Add(*[c for (_, nu), c in nu_terms.items() if nu == nu_min]) == 0:
            return None
    if not groups and not kb_terms and not nu_terms:
        return None
    if any(max(t) > _MAX_POWER for _, t in groups):
        return None
    # bounded at 0: the 1/r parts must cancel (Re sum c_(j,-1) = 0)
    inv = sympy.Add(*[t.get(-1, 0) for _, t in groups])
    if inv != 0 and sympy.simplify(sympy.re(sympy.expand_complex(inv))) != 0:
        return None
    try:
        for a, _ in groups:
            _cnum(a)
        for a, c2, _, coef in kb_terms:
            if not (_cnum(a).real > 0 and _cnum(a).imag == 0 and _cnum(c2).real > 0):
                return None
            _cnum(coef)
    except TypeError:
        return None
    if _cnum(const).imag != 0:
        return None
    only_plain = not kb_terms and not nu_terms and len(groups) == 1 and set(groups[0][1]) == {0}
    if only_plain and _cnum(groups[0][0]).imag == 0 and const == 0:
        return None  # c exp(-b r): the Matérn builder
    return "exp_poly", {
        "groups": tuple((a, tuple(sorted(t.items()))) for a, t in groups),
        "kbessel": tuple(kb_terms),
        "powers": tuple((a, nu, c) for (a, nu), c in nu_terms.items()),
        "constant": const,
    }


# ---------------------------------------------------------------------------------------------
# exact group polynomials
# ---------------------------------------------------------------------------------------------
def _q_polys(d, nmax):
    """[Q_-1 (None in d = 1), Q_0, ..., Q_nmax] as sympy expressions in a and s."""
    m = sympy.Rational(d + 1, 2)
    qs = {0: _A}
    if d >= 2:
        qs[-1] = sympy.Rational(1, d - 1)
    for n in range(nmax):
        q = qs[n]
        qs[n + 1] = sympy.expand(2 * _A * (m + n) * q - (_A**2 + _S) * sympy.diff(q, _A))
    return qs


def _mp(x, dps=_DPS):
    """Exact sympy number -> mpmath mpc at ``dps`` digits."""
    v = sympy.N(x, dps + 5)
    re_, im_ = v.as_real_imag()
    with mpmath.workdps(dps + 5):
        return mpmath.mpc(
            mpmath.mpf(sympy.Float(re_, dps + 5)._mpf_), mpmath.mpf(sympy.Float(im_, dps + 5)._mpf_)
        )


class _Group:
    """C_d N(s) (a^2 + s)^(-p) for the terms sum_n c_n r^n exp(-a r) (and the log part in d = 1)."""

    def __init__(self, a, terms, d, doubled):
        self.d = d
        m = sympy.Rational(d + 1, 2)
        mult = 2 if doubled else 1
        poly_terms = {n: c for n, c in terms if n >= 0 or d >= 2}
        self.log_coef = None
        log_c = [c for n, c in terms if n == -1 and d == 1]
        with mpmath.workdps(_DPS):
            self.a = _mp(a)
            self.a2 = self.a**2
            if log_c:
                self.log_coef = _mp(mult * log_c[0]) / (2 * mpmath.pi) * -1
            self.log_cd = mpmath.loggamma(mpmath.mpf(d + 1) / 2) - mpmath.mpf(d + 1) / 2 * mpmath.log(
                mpmath.pi
            )
        self.coeffs = None
        self.real = _cnum(a).imag == 0 and all(_cnum(c).imag == 0 for _, c in terms)
        if poly_terms:
            nmax = max(poly_terms)
            qs = _q_polys(d, nmax)
            num = sympy.Add(
                *[c * qs[n].subs(_A, a) * (a**2 + _S) ** (nmax - n) for n, c in poly_terms.items()]
            )
            poly = sympy.Poly(sympy.expand(mult * num), _S)
            coeffs = [_mp(c) for c in poly.all_coeffs()]  # descending
            while coeffs and coeffs[0] == 0:
                coeffs.pop(0)
            if coeffs:
                self.coeffs = coeffs
                self.p = m + nmax
                self.shift = nmax - (len(coeffs) - 1)  # T = s^-m sum_j t_j s^-(j + shift)
                with mpmath.workdps(_DPS):
                    self.lead = coeffs[0]
                    roots = (
                        mpmath.polyroots(coeffs, maxsteps=400, extraprec=4 * _DPS) if len(coeffs) > 1 else []
                    )
                if self.real:
                    roots = [
                        mpmath.mpc(z.real, 0) if abs(z.imag) <= mpmath.mpf(10) ** (-60) * (1 + abs(z)) else z
                        for z in roots
                    ]
                self.roots = roots
                self.roots_f = np.array([complex(z) for z in roots], dtype=np.complex128)
                self.log_lead = complex(mpmath.log(self.lead) + self.log_cd)
                self.pf = float(self.p)
        self.a2_f = complex(self.a2)

    # -- float64 -----------------------------------------------------------------------------
    def log_complex(self, s):
        """(log|T|, arg T) in float64 (T the group's complex contribution)."""
        la = np.zeros(s.shape)
        ph = np.zeros(s.shape)
        terms = []
        if self.coeffs is not None:
            z = self.log_lead - self.pf * np.log(self.a2_f + s.astype(np.complex128))
            with np.errstate(divide="ignore", invalid="ignore"):  # s on a real root: log 0 = -inf
                for root in self.roots_f:
                    z = z + np.log(s - root)
            terms.append(z)
        if self.log_coef is not None:
            v = complex(self.log_coef) * np.log(self.a2_f + s.astype(np.complex128))
            with np.errstate(divide="ignore"):
                terms.append(np.log(v))
        if len(terms) == 1:
            la, ph = terms[0].real, terms[0].imag
        else:  # d = 1 with both parts: add the complex values (scaled)
            top = np.maximum(terms[0].real, terms[1].real)
            v = np.exp(terms[0] - top) + np.exp(terms[1] - top)
            with np.errstate(divide="ignore"):
                la, ph = top + np.log(np.abs(v)), np.angle(v)
        return la, ph

    def rounding(self, s):
        """A bound on the rounding of :meth:`log_complex`, relative to |T| and in units of eps: the
        sizes of the logarithms it sums (p |log(a^2 + s)| dominates in high d)."""
        log_q = np.abs(np.log(self.a2_f + s.astype(np.complex128)))
        size = np.full(s.shape, 4.0)
        if self.coeffs is not None:
            size = size + self.pf * log_q + abs(self.log_lead)
            for root in self.roots_f:
                # log(s - root), and s - root's own rounding relative to it (large next to a root,
                # where |T| is small: the absolute error stays finite; at the root T = 0)
                reach = _EPS * (np.abs(s) + abs(root))
                gap = np.maximum(np.abs(s - root), reach)
                size = size + np.abs(np.log(gap)) + reach / gap / _EPS
        if self.log_coef is not None:
            size = size + log_q
        return size

    # -- mpmath ------------------------------------------------------------------------------
    def value_mp(self, s):
        out = mpmath.mpc(0)
        if self.coeffs is not None:
            t = self.lead * mpmath.exp(self.log_cd) * mpmath.power(self.a2 + s, -self.p)
            for root in self.roots:
                t *= s - root
            out += t
        if self.log_coef is not None:
            out += self.log_coef * mpmath.log(self.a2 + s)
        return out

    # -- tail series -------------------------------------------------------------------------
    def series(self, nterms):
        """{j: t_j} with T = s^-m sum_j t_j s^-j (complex mp), and (convergence) |a^2|."""
        out = {}
        if self.coeffs is not None:
            # T = C_d s^-m x^shift (sum_i n_(deg-i) x^i) (1 + a^2 x)^-p, x = 1/s
            binom = [mpmath.mpf(1)]
            for k in range(1, nterms + 1):
                binom.append(binom[-1] * (-self.p - k + 1) / k * self.a2)
            cd = mpmath.exp(self.log_cd)
            for i, n_i in enumerate(self.coeffs):
                for k in range(nterms + 1 - i):
                    j = self.shift + i + k
                    out[j] = out.get(j, 0) + cd * n_i * binom[k]
        if self.log_coef is not None:
            # -(c/2pi) log(a^2 + s) = (...) log s + sum_k log_coef (-1)^(k+1) a^(2k) x^k / k, s^-1 x^(k-1)
            for k in range(1, nterms + 1):
                out[k - 1] = out.get(k - 1, 0) + self.log_coef * (-1) ** (k + 1) * self.a2**k / k
        return out


class _KBessel:
    """coef 2^(-(d-1)/2) pi^(-(d+1)/2) [a] c^w (a^2 + s)^(-w/2) K_w(c sqrt(a^2 + s))."""

    def __init__(self, a, c2, e, coef, d):
        with mpmath.workdps(_DPS):
            self.a = mpmath.mpf(_mp(a).real)
            self.c = mpmath.sqrt(mpmath.mpf(_mp(c2).real))
            self.coef = mpmath.mpf(_mp(coef).real)
            self.w = mpmath.mpf(d + 1 - 2 * e) / 2
            self.log_k = (
                -mpmath.mpf(d - 1) / 2 * mpmath.log(2)
                - mpmath.mpf(d + 1) / 2 * mpmath.log(mpmath.pi)
                + (mpmath.log(self.a) if e == 0 else 0)
                + self.w * mpmath.log(self.c)
                + mpmath.log(abs(self.coef))
            )
        self.sign = 1.0 if self.coef > 0 else -1.0
        self.a_f, self.c_f, self.w_f = float(self.a), float(self.c), float(self.w)
        self.log_k_f = float(self.log_k)

    def log_complex(self, s):
        q2 = self.a_f**2 + s
        z = self.c_f * np.sqrt(q2)
        la = self.log_k_f - 0.5 * self.w_f * np.log(q2) + log_besselk(self.w_f, z)
        return la, np.where(self.sign > 0, 0.0, np.pi) + np.zeros(s.shape)

    def value_mp(self, s):
        q2 = self.a**2 + s
        return (
            mpmath.exp(self.log_k)
            * self.sign
            * q2 ** (-self.w / 2)
            * mpmath.besselk(self.w, self.c * mpmath.sqrt(q2))
        )


class _NuPart:
    """coef r^nu exp(-a r), a > 0, nu > -1 not an integer:
    mu = coef K (a^2 + s)^(-(nu+d)/2) 2F1((nu+d)/2, -(nu+1)/2; d/2; 1 - u^2), u = a/sqrt(a^2 + s),
    K = (2 pi)^(-d/2) 2^(1-d/2) Gamma(nu+d)/Gamma(d/2); 2F1(1 - u^2) is analytic in u on [0, 1]
    and tabulated there (piecewise Chebyshev of mpmath values, measured error)."""

    def __init__(self, a, nu, coef, d):
        with mpmath.workdps(_DPS):
            self.a = mpmath.mpf(_mp(a).real)
            self.nu = mpmath.mpf(_mp(nu).real)
            self.coef = mpmath.mpf(_mp(coef).real)
            self.A = (self.nu + d) / 2
            self.b = -(self.nu + 1) / 2
            self.c = mpmath.mpf(d) / 2
            self.log_k = (
                -mpmath.mpf(d) / 2 * mpmath.log(2 * mpmath.pi)
                + (1 - mpmath.mpf(d) / 2) * mpmath.log(2)
                + mpmath.loggamma(self.nu + d)
                - mpmath.loggamma(mpmath.mpf(d) / 2)
                + mpmath.log(abs(self.coef))
            )
        self.sign = 1.0 if self.coef > 0 else -1.0
        self.a_f, self.A_f, self.log_k_f = float(self.a), float(self.A), float(self.log_k)

        def hyp(u):
            with mpmath.workdps(24):
                return np.array(
                    [float(mpmath.hyp2f1(self.A, self.b, self.c, 1 - mpmath.mpf(float(x)) ** 2)) for x in u]
                )

        self.fit, self.fit_error = fit_adaptive(
            hyp,
            0.0,
            1.0,
            n_init=4,
            degree=24,
            tol=1e-13,
            floor=lambda v: 1e-6 * np.max(np.abs(v)),
            check_tail=3,
        )
        self.tail_exponent = float(self.nu) + d

    def log_complex(self, s):
        q2 = self.a_f**2 + s
        f = self.fit(self.a_f / np.sqrt(q2))
        with np.errstate(divide="ignore"):
            la = self.log_k_f - self.A_f * np.log(q2) + np.log(np.abs(f))
        return la, np.where(f * self.sign >= 0, 0.0, np.pi)

    def value_mp(self, s):
        q2 = self.a**2 + s
        u2 = self.a**2 / q2
        return (
            self.sign
            * mpmath.exp(self.log_k)
            * q2 ** (-self.A)
            * mpmath.hyp2f1(self.A, self.b, self.c, 1 - u2)
        )


# ---------------------------------------------------------------------------------------------
# the transform
# ---------------------------------------------------------------------------------------------
def _pair_groups(groups):
    """[(a, terms, doubled)]: a group with Im a < 0 whose conjugate partner exists is dropped and the
    partner doubled (Re T(conj a) = Re T(a) for a real kernel)."""
    num = [(_cnum(a), {n: _cnum(c) for n, c in t}) for a, t in groups]
    used, out = set(), []
    for i, (a, t) in enumerate(groups):
        if i in used:
            continue
        ai, ti = num[i]
        partner = None
        if ai.imag != 0:
            for j in range(len(groups)):
                aj, tj = num[j]
                if j != i and j not in used and abs(aj - ai.conjugate()) <= 1e-14 * abs(ai):
                    if set(tj) == set(ti) and all(
                        abs(tj[n] - ti[n].conjugate()) <= 1e-13 * abs(ti[n]) for n in ti
                    ):
                        partner = j
                        break
        if partner is not None:
            # the exact conjugacy check: a_j = conj(a_i), c_jn = conj(c_in)
            aj, tj = groups[partner]
            exact = sympy.expand(sympy.conjugate(a) - aj) == 0 and all(
                sympy.expand(sympy.conjugate(c) - dict(tj)[n]) == 0 for n, c in t
            )
            if exact:
                used.add(partner)
                out.append((a, t, True))
                continue
        out.append((a, t, False))
    return out


class _ExpPolyDensity:
    def __init__(self, groups, kbessel, powers, d):
        self.d = d
        self.m = (d + 1) / 2
        paired = _pair_groups(groups)
        self.groups = [_Group(a, t, d, dbl) for a, t, dbl in paired]
        k0 = sum((2 if dbl else 1) * (dict(t).get(0, 0) - a * dict(t).get(-1, 0)) for a, t, dbl in paired)
        k0 += sum(
            coef * c2 ** sympy.Rational(-e, 2) * sympy.exp(-a * sympy.sqrt(c2)) for a, c2, e, coef in kbessel
        )
        self._k0 = _cnum(sympy.sympify(k0)).real if not any(nu < 0 for _, nu, _ in powers) else math.inf
        self.kb = [_KBessel(a, c2, e, coef, d) for a, c2, e, coef in kbessel]
        self.nus = [_NuPart(a, nu, coef, d) for a, nu, coef in powers]
        self.others = self.kb + self.nus  # parts evaluated directly at every rho
        self.parts = self.groups + self.others
        self._build_series()

    def value_at_zero(self):
        """k(0) without the constant term."""
        return self._k0

    # -- the tail series ---------------------------------------------------------------------
    def _build_series(self):
        self.rho_t = math.inf
        self.j0 = None
        if not self.groups:
            return
        p_max = max([float(g.p) for g in self.groups if g.coeffs is not None] + [1.0])
        a2_max = max(abs(complex(g.a2)) for g in self.groups)
        nterms = int(min(_MAX_TERMS, 80 + 3 * p_max))
        with mpmath.workdps(_SERIES_DPS):
            coef, size = {}, {}
            for g in self.groups:
                for j, t in g.series(nterms).items():
                    coef[j] = coef.get(j, 0) + t
                    size[j] = size.get(j, 0) + abs(t)
            js = sorted(j for j in coef if j <= min(coef) + nterms)
            tol = mpmath.mpf(10) ** (-(_SERIES_DPS - 15))
            real = {j: (coef[j].real if abs(coef[j].real) > tol * size[j] else mpmath.mpf(0)) for j in js}
            nonzero = [j for j in js if real[j] != 0]
            if not nonzero:
                raise ArithmeticError("the exponential-polynomial part cancels to all orders")
            j0 = nonzero[0]
            self.j0 = j0
            e = [real[j] for j in js if j >= j0]
            # rho_t: the series converges (x |a^2| < 1) and is well conditioned at x_t
            x = mpmath.mpf(1) / (2 * p_max * a2_max)
            for _ in range(200):
                terms = [abs(v) * x**i for i, v in enumerate(e)]
                rest = sum(terms[1:])
                if (
                    terms[0] > 0
                    and rest <= terms[0] / 2
                    and max(terms[-10:]) <= mpmath.mpf(10) ** -22 * terms[0]
                ):
                    break
                x /= 2
            else:
                raise ArithmeticError("no well-conditioned tail expansion found")
            scale = max(abs(v) * x**i for i, v in enumerate(e))
            self.series_mp = (e, x)
            self.series_scaled = [v * x**i for i, v in enumerate(e)]
            self.series_f = np.array([float(v * x**i / scale) for i, v in enumerate(e)])
            self.series_log_scale = float(mpmath.log(scale))
            self.x_t = float(x)
            self.rho_t = float(1 / mpmath.sqrt(x))

    def _series_log(self, s):
        y = (1.0 / s) / self.x_t
        acc = np.zeros(s.shape)
        for c in self.series_f[::-1]:
            acc = acc * y + c
        with np.errstate(divide="ignore"):
            la = -(self.m + self.j0) * np.log(s) + self.series_log_scale + np.log(np.abs(acc)) + 0.0
        # y^i x_t^i = s^-i: the scale carried x_t^i; s^-m s^-j0 remains
        return la, np.where(acc >= 0, 0.0, np.pi)

    def _series_mp(self, s):
        e, x_t = self.series_mp
        y = 1 / (s * x_t)  # <= 1 in the tail; the scaled terms e_i x_t^i y^i fall like y^i
        n = len(e)
        if y < 1:  # the terms beyond n are below 10^-(dps + 5) of the leading ones
            n = min(n, int((mpmath.mp.dps + 5) * math.log(10) / -float(mpmath.log(y))) + 2)
        acc = mpmath.mpf(0)
        for c in self.series_scaled[:n][::-1]:
            acc = acc * y + c
        return acc * mpmath.power(s, -(mpmath.mpf(self.d + 1) / 2 + self.j0))

    # -- evaluation --------------------------------------------------------------------------
    def log_abs_and_sign(self, rho):
        s = rho * rho
        tail = s >= self.rho_t**2
        pieces = []
        for part in self.parts:
            if isinstance(part, _Group):
                la, ph = part.log_complex(np.where(tail, 1.0, s))
                la = np.where(tail, -np.inf, la)
            else:
                la, ph = part.log_complex(s)
            pieces.append((la, ph))
        if self.j0 is not None and np.any(tail):
            la, ph = self._series_log(np.where(tail, s, self.rho_t**2))
            pieces.append((np.where(tail, la, -np.inf), ph))
        las = np.stack([p[0] for p in pieces])
        phs = np.stack([p[1] for p in pieces])
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            shift = np.max(las, axis=0)
            w = np.exp(las - shift)
            total = np.sum(w * np.cos(phs), axis=0)
            amp = np.sum(w, axis=0)
            log_abs = shift + np.log(np.abs(total))
        sign = np.sign(total)
        # one part (one group): its only cancellation is the real part near a zero of mu, where the
        # float64 error stays relative to the local amplitude |T|; several parts: mpmath
        several = np.where(tail, len(self.others) + 1, len(self.parts)) > 1
        bad = (several & ~(np.abs(total) * _KAPPA >= amp)) | ~np.isfinite(log_abs)
        for i in np.nonzero(bad)[0]:
            log_abs[i], sign[i] = self._point_mp(float(rho[i]), bool(tail[i]))
        return log_abs, sign

    def _point_mp(self, rho, tail):
        dps = 30
        while True:
            with mpmath.workdps(dps):
                s = mpmath.mpf(rho) ** 2
                vals = [self._series_mp(s)] if tail else []
                vals += [p.value_mp(s) for p in (self.others if tail else self.parts)]
                total = mpmath.re(mpmath.fsum(vals))
                amp = mpmath.fsum(abs(v) for v in vals)
                if total == 0:
                    if dps >= _MAX_DPS or amp == 0:
                        return -math.inf, 0.0
                elif amp / abs(total) < mpmath.mpf(10) ** (dps - 20) or dps >= _MAX_DPS:
                    return float(mpmath.log(abs(total))), (1.0 if total > 0 else -1.0)
                kappa = amp / abs(total) if total != 0 else mpmath.mpf(10) ** dps
                dps = min(_MAX_DPS, int(20 + float(mpmath.log10(kappa))) + 10)


@builder("exp_poly", rel_error=0.0)  # measured per transform (bound of the float64 path)
def exp_poly(
    groups: tuple[tuple[Any, tuple[tuple[int, Any], ...]], ...],
    kbessel: tuple[tuple[Any, Any, Any, Any], ...],
    dim: int,
    powers: tuple[tuple[Any, Any, Any], ...] = (),
    constant: sympy.Expr | float = 0,
) -> RadialTransform | None:
    """mu of Re sum_j P_j(r) exp(-a_j r) + r^nu exp(-a r) + K-Bessel terms (+ a constant: an atom at
    0) on R^dim (module docstring).

    The arguments are those of the matcher (sympy numbers): ``groups`` ((a_j, ((n, c_(j,n)), ...)),
    ...) for P_j(r) = sum_n c_(j,n) r^n, ``kbessel`` ((a, c2, e, coef), ...), ``powers``
    ((a, nu, coef), ...) and ``constant``. None when a root finder or series does not converge.
    """
    d = dim
    try:
        dens = _ExpPolyDensity(groups, kbessel, powers, d)
    except _NOT_BUILT:  # a root finder or hypergeometric sum that does not converge: no closed form
        return None
    fn = dens.log_abs_and_sign
    mu = vectorised(fn)
    # error of the float64 path relative to the local amplitude, times the cancellation admitted
    rho_ref = dens.rho_t if math.isfinite(dens.rho_t) else 1e3 * _scale(dens)
    log_terms = abs(float(dens.groups[0].log_cd)) if dens.groups else 0.0
    for g in dens.groups:
        if g.coeffs is not None:
            span = abs(math.log(max(abs(complex(g.a2)), rho_ref**2, 1e-300))) + math.pi
            log_terms += (float(g.p) + len(g.roots)) * span
    for k in dens.kb:
        log_terms += abs(k.log_k_f) + k.w_f * (abs(math.log(k.a_f**2 + rho_ref**2)) + 1) + 4 * k.w_f
    fit_error = 0.0
    for nu in dens.nus:
        log_terms += abs(nu.log_k_f) + nu.A_f * (abs(math.log(nu.a_f**2 + rho_ref**2)) + 1)
        fit_error = max(fit_error, nu.fit_error)
    # one part: relative to its local amplitude (the real part near zeros); several parts: float64 is
    # kept where at most _KAPPA of the amplitude cancels (mpmath beyond)
    kappa = _KAPPA if len(dens.parts) + (dens.j0 is not None and bool(dens.others)) > 1 else 4.0
    rel = max(1e-14, 8 * _EPS * (log_terms + 10) * kappa + fit_error * kappa)
    scale = _scale(dens)
    probe = scale * np.geomspace(1e-3, 1e3, 61)
    peak = float(np.max(np.abs(mu(probe))))
    try:
        zeros, nonneg = _known_signs(dens)
    except _NOT_BUILT:
        zeros, nonneg = None, False
    tail_exponent = d + 1 + 2 * dens.j0 if dens.j0 is not None else math.inf
    for nu in dens.nus:
        tail_exponent = min(tail_exponent, nu.tail_exponent)
    c0 = float(_cnum(sympy.sympify(constant)).real)
    atom = {"shells": ((0.0, c0),), "ac_mass": dens.value_at_zero()} if c0 != 0 else {}
    return RadialTransform(
        mu=mu,
        log_abs_mu=log_form(fn),
        method="closed-form:exp-poly" if dens.groups or dens.nus else "closed-form:k-bessel",
        rel_error=max(rel, BUILDERS["exp_poly"].rel_error),
        abs_error=min(1.0, 1e-300 / peak) if peak > 0 else 0.0,
        scale=scale,
        tail_exponent=float(tail_exponent),
        nonnegative=nonneg and c0 >= 0,
        zeros=zeros,
        **atom,
    )


def _scale(dens):
    vals = [abs(complex(g.a)) for g in dens.groups] + [nu.a_f for nu in dens.nus]
    vals += [k.a_f if k.c_f * k.a_f <= 1 else math.sqrt(k.a_f / k.c_f) for k in dens.kb]
    return float(min(vals))


def _known_signs(dens):
    """(zeros, nonnegative): one group (one real exponent or one conjugate pair) from its phase
    (:func:`_phase_zeros`); positive K-Bessel terms alone are positive; otherwise the sign changes of
    mu on a grid that resolves every group's resonance (:func:`_grid_zeros`)."""
    if not dens.groups and not dens.nus and all(k.sign > 0 for k in dens.kb):
        return np.empty(0), True
    g = dens.groups[0] if len(dens.groups) == 1 else None
    if not dens.others and g is not None and g.log_coef is None and g.coeffs is not None:
        zeros = _phase_zeros(g)
        return zeros, bool(zeros.size == 0 and g.real and float(g.lead.real) > 0)
    zeros = _grid_zeros(dens)
    return zeros, False


def _resonance_grid(groups):
    """s-points that move each group factor's argument by at most pi/16 per step (module docstring of
    :func:`_phase_zeros`)."""
    pieces = []
    for g in groups:
        centres = [(-complex(g.a2).real, abs(complex(g.a2).imag), 16 * (float(getattr(g, "p", 0)) + 1))]
        if g.coeffs is not None:
            centres += [(float(z.real), abs(float(z.imag)), 16) for z in g.roots if z.imag != 0]
            pieces.append(np.array([float(z.real) for z in g.roots if z.imag == 0]))
        for c, w, n in centres:
            if w > 0:
                theta = np.linspace(-0.5 * np.pi, 0.5 * np.pi, int(n) + 2)[1:-1]
                pieces.append(c + w * np.tan(theta))
    return pieces


def _grid_zeros(dens):
    """Sign changes of mu (several parts): bracketed on the resonance grid plus a fine grid over the
    range where the parts live, refined together by bisection on the sign of mu (mpmath where the
    parts cancel, as everywhere)."""
    scale = _scale(dens)
    top = 40 * max(
        [abs(complex(g.a)) * math.sqrt(float(g.p)) for g in dens.groups if g.coeffs is not None] + [scale]
    )
    rho = np.unique(
        np.concatenate([np.geomspace(1e-6 * scale, 1e3 * top, 6000), np.linspace(0, top, 6000)[1:]])
    )
    pieces = [rho * rho, *_resonance_grid(dens.groups)]
    grid = np.sqrt(np.unique(np.concatenate([p[(p > 0) & np.isfinite(p)] for p in pieces if p.size])))
    grid = grid[grid <= 1e3 * top]
    _, sign = dens.log_abs_and_sign(grid)
    idx = np.nonzero(sign[:-1] * sign[1:] < 0)[0]
    lo, hi = grid[idx].copy(), grid[idx + 1].copy()
    s_lo = sign[idx].copy()
    for _ in range(200):
        live = hi - lo > 4 * _EPS * hi
        if not np.any(live):
            break
        mid = 0.5 * (lo[live] + hi[live])
        _, sm = dens.log_abs_and_sign(mid)
        same = sm == s_lo[live]
        lo[live] = np.where(same, mid, lo[live])
        hi[live] = np.where(same, hi[live], mid)
    return 0.5 * (lo + hi)


def _phase_zeros(g):
    """Sign changes of Re T for one group T = C_d lead prod(s - s_k) (a^2 + s)^(-p).

    With s real, every factor's argument is continuous and monotone in s (Im s_k and Im a^2 keep
    their signs) except at positive real roots, where the factor changes sign. Re T = |T| cos(phi):
    phi is sampled on a grid that moves each factor's argument by at most pi/16 per step
    (s = c + w tan(theta), theta uniform, around each factor's centre c = Re(-s_k), width |Im s_k|;
    16 p steps for (a^2 + s)^(-p)), so no pair of sign changes falls between two grid points; each
    bracketed change is then refined by Brent's method to rounding.
    """
    pieces = [np.geomspace(1e-300, 1e300, 4000), *_resonance_grid([g])]
    real_roots = np.array([float(z.real) for z in g.roots if z.imag == 0])
    grid = np.unique(np.concatenate(pieces))
    grid = grid[(grid > 0) & np.isfinite(grid)]
    roots_c = np.array([complex(z) for z in g.roots if z.imag != 0])
    a2, pf, lead_arg = complex(g.a2), float(g.p), float(mpmath.arg(g.lead))

    def h(s):
        s = np.asarray(s, dtype=np.float64)
        phi = lead_arg - pf * np.angle(a2 + s.astype(np.complex128))
        for z in roots_c:
            phi = phi + np.angle(s - z)
        out = np.cos(phi)
        for z in real_roots:
            out = out * np.sign(s - z)
        return out

    vals = h(grid)
    idx = np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)[0]
    zeros = [math.sqrt(brentq(h, grid[i], grid[i + 1], xtol=1e-300, rtol=4 * _EPS)) for i in idx]
    # an exact zero on a grid point (a real root) is a sign change too
    for i in np.nonzero(vals == 0)[0]:
        if 0 < i < len(vals) - 1 and vals[i - 1] * vals[i + 1] < 0:
            zeros.append(math.sqrt(grid[i]))
    return np.array(sorted(zeros), dtype=float)
