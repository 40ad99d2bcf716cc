"""Independent high-precision Jordan masses of radial kernels (reference values for the tests).

Nothing here imports spectralkit: the values are meant to test the library, so they are computed
from scratch with mpmath (and sympy for exact formulas).

Conventions. A radial kernel k(r) on R^d, nu = d/2 - 1,

    mu(rho) = (2 pi)^(-d/2) rho^(1 - d/2) int_0^inf k(r) r^(d/2) J_nu(rho r) dr,
    f(rho)  = S_(d-1) rho^(d-1) mu(rho),   S_(d-1) = 2 pi^(d/2) / Gamma(d/2),   int_0^inf f = k(0),
    m+ = int_0^inf max(f, 0) drho,   m- = int_0^inf max(-f, 0) drho,   m+ - m- = k(0).

Method, for a polynomial kernel k(r) = sum_j c_j r^j on [0, R]:

1. mu exactly, two ways that must agree (checked at sample points, together with a third,
   direct quadrature of the Hankel integrand):
   - "hyp": term by term, int_0^R r^(j + d/2) J_nu(rho r) dr
     = R^(j+d) (rho/2)^nu / ((j + d) Gamma(d/2)) 1F2((j+d)/2; d/2, (j+d)/2 + 1; -(rho R/2)^2)
     (mpmath.hyp1f2; valid in every d, no cancellation at small rho);
   - "closed": sympy's term-by-term integral (elementary in sin/cos for odd d, where J_(n+1/2) is
     built by the exact recurrence; Bessel functions plus at most 1F2 terms for even d).
     For the spherical polynomial (1 - r^2/4)^2 also Sonine's integral,
     mu = (2 pi)^(-d/2) 2^(d/2+1) rho^(-2-d/2) J_(d/2+2)(2 rho).
2. The sign changes of mu: a scan with a step of 1/16 of the asymptotic lobe width pi/R, each
   bracket refined by mpmath.findroot (Anderson); the head of the spectrum (the first 20 lobe widths)
   is rescanned with a step 16 times finer and must give the same zeros.
3. Lobe masses L_n = int over the n-th lobe of f by mpmath.quad (Gauss-Legendre, its error estimate is
   kept), computed on demand; the quadrature nodes must all carry the lobe's sign.
4. m+ = sum of the positive lobes and m- = sum of the negative lobes, each accelerated on its own
   (the identity m+ - m- = k(0) is therefore a genuine check) by two unrelated methods:
   - "richardson": the tail has the asymptotic form S - S_n = n^(-g) sum_i c_i n^(-i delta), with g and
     delta read off the kernel (edge exponent beta at r = R: |mu| ~ rho^(-(d+1)/2 - beta); lowest odd
     power alpha at r = 0: mu ~ rho^(-d-alpha); g = beta - (d-1)/2; delta = 1, or 1/2 when the two
     exponents differ by a half-integer); the c_i and S solve a linear system on J+1 partial sums
     spread over [N, Nmax];
   - "levin": the Levin u-transform (mpmath.levin, theta = first index) when delta = 1, and a
     generalised Levin transform S_n = S + n a_n sum_i c_i n^(-i delta) (remainder estimate from the
     terms, no exponent g) otherwise.
   Each method runs on two windows. The error bound is 10 times the largest spread of all these
   estimates around the best one, plus the propagated data error: (relative disagreement of the mu
   evaluators + 1e-55) x mass + summed quadrature error estimates, times the amplification sum |w_n| of
   the best estimate's linear weights; never below 1e-38.
   For a positive definite case (no sign change) positivity of mu is proven instead (Taylor series at
   small rho, interval arithmetic in the middle, an explicit bound of the asymptotic form beyond), so
   m- = 0 and m+ = k(0) exactly.

Gaussian mixtures (case E) have mu in closed form; their masses are exact erf expressions (sympy),
checked by quadrature.

Run:  python tests/reference/mass_references.py [--only NAME ...] [--json PATH]
Prints a Python dict (and writes the JSON if --json is given); the stored values come from
    python tests/reference/mass_references.py --json tests/reference/mass_references.json
The full run needs about 11 minutes of CPU on one core with mpmath 1.3 + gmpy2 (B_d4 alone 8.5 minutes:
800 lobes of each sign with 1F2 evaluations; C_d4 1.5 minutes; every other case under 20 s); without
gmpy2 it is slower. Per-case CPU seconds are recorded in the output.
"""

import argparse
import json
import math
import os
import time

import mpmath as mp
import sympy as sp

DPS = 60  # working precision of mu and of the lobe masses; the results are given to 40 digits
OUT_DIGITS = 40
ERROR_FLOOR = mp.mpf("1e-38")
SAFETY = 10

r_, rho_ = sp.symbols("r rho", positive=True)

# name: (kernel (sympy text, in r), support R (None: infinite), dimension, windows)
# windows: richardson [(N, Nmax, J), ...]; levin [(N0, K), ...] for mpmath's Levin u (delta = 1) or
# [(N, Nmax, J), ...] for the generalised Levin (delta = 1/2); N, Nmax, N0 count lobes of one sign.
_INT_WINDOWS = dict(richardson=[(50, 200, 30), (80, 320, 30)], levin=[(10, 44), (20, 40)])
_HALF_WINDOWS = dict(richardson=[(50, 400, 30), (100, 800, 30)], levin=[(50, 400, 30), (100, 800, 30)])
CASES = {
    "A_d3": ("(1 - r)**4*(1 + 4*r)", 1, 3, None),
    "A_d5": ("(1 - r)**4*(1 + 4*r)", 1, 5, _INT_WINDOWS),
    "A_d7": ("(1 - r)**4*(1 + 4*r)", 1, 7, _INT_WINDOWS),
    "B_d4": ("(1 - r)**2", 1, 4, _HALF_WINDOWS),
    "C_d3": ("(1 - r**2/4)**2", 2, 3, _INT_WINDOWS),
    "C_d4": ("(1 - r**2/4)**2", 2, 4, _INT_WINDOWS),
    "D_d5": ("(1 - r)**3*(1 + 2*r)", 1, 5, _INT_WINDOWS),
    "E_d1": ("exp(-r**2/2) - exp(-r**2/8)/2", None, 1, None),
    "E_d3": ("exp(-r**2/2) - exp(-r**2/8)/2", None, 3, None),
}

WHY_D = (
    "(1 - r)^3 (1 + c r) has edge exponent beta = 3 and, for c != 3, lowest odd power alpha = 1 at r = 0; "
    "the edge tail rho^(-(d+1)/2-beta) and the origin tail rho^(-d-alpha) have the same order iff "
    "d = 2 beta + 1 - 2 alpha = 5, where the mass is finite (d < 1 + 2 beta = 7). There "
    "rho^6 mu -> b + a_cos cos(rho) + a_sin sin(rho) with b = -2 c_1 / pi^3 = 2 (3 - c) / pi^3 "
    "(one-signed) and "
    "|a| = 3 (1 + c) / (2 pi^3) (oscillating): infinitely many sign changes iff |b| < |a|, i.e. "
    "9/7 < c < 15. c = 0 (Askey's (1 - r)^3, |b|/|a| = 4) is positive definite in d = 5; c = 2 gives "
    "|b|/|a| = 4/9: RKKS, with unequal positive and negative lobes all the way out. The suggested "
    "(1 - r)^3 (1 + 3 r) (Wendland phi_(1,1), alpha = 3) has the equal-order property only in d = 1, "
    "where |b|/|a| = 2 and it is positive definite, so it is not an RKKS case."
)


def _mpq(q):
    q = sp.Rational(q)
    return mp.mpf(q.p) / q.q


# ----------------------------------------------------------------------------------------------------
# mu of a polynomial kernel


def _half_order_bessel(nu, x):
    """J_nu(x) for nu = n + 1/2 as an exact sympy expression (upward recurrence from J_(-1/2), J_(1/2))."""
    lo, hi = sp.sqrt(2 / (sp.pi * x)) * sp.cos(x), sp.sqrt(2 / (sp.pi * x)) * sp.sin(x)
    order = sp.Rational(-1, 2)
    while order < nu:
        lo, hi = hi, sp.expand(2 * (order + 1) / x * hi - lo)
        order += 1
    return lo


class PolyKernel:
    """k(r) = sum_j c_j r^j on [0, R], zero beyond, in dimension d."""

    def __init__(self, text, R, d):
        self.text, self.R, self.d = text, sp.Integer(R), d
        self.expr = sp.expand(sp.sympify(text, locals={"r": r_}))
        self.coeffs = sp.Poly(self.expr, r_).all_coeffs()[::-1]
        self.k0 = self.coeffs[0]
        self.nu = sp.Rational(d, 2) - 1
        self.S = 2 * sp.pi ** sp.Rational(d, 2) / sp.gamma(sp.Rational(d, 2))
        # tail exponents: edge (R - r)^beta, lowest odd power r^alpha at the origin
        self.beta = sp.roots(sp.Poly(self.expr, r_))[self.R]
        odd = [j for j, c in enumerate(self.coeffs) if c != 0 and j % 2 == 1]
        self.alpha = odd[0] if odd else None
        self.edge_exp = sp.Rational(d + 1, 2) + self.beta  # |mu| ~ rho^-edge_exp
        self.origin_exp = d + self.alpha if odd else None  # mu ~ rho^-origin_exp
        self.g = self.beta - sp.Rational(d - 1, 2)  # S - S_n ~ n^-g
        half = self.origin_exp is not None and (self.origin_exp - self.edge_exp).q == 2
        self.delta = sp.Rational(1, 2) if half else sp.Integer(1)
        self._closed = None
        self._hyp_terms = None

    # -- exact amplitudes of the two tails (for the notes; checked against the closed form)
    def tail_amplitudes(self):
        d, R, beta = self.d, self.R, self.beta
        K = sp.cancel(self.expr / (R - r_) ** beta).subs(r_, R)
        a = (
            (2 * sp.pi) ** sp.Rational(-d, 2)
            * K
            * R ** sp.Rational(d - 1, 2)
            * sp.sqrt(2 / sp.pi)
            * sp.gamma(beta + 1)
        )
        if self.alpha is None:
            return sp.nsimplify(a), sp.Integer(0)
        al = self.alpha
        b = (
            self.coeffs[al]
            * (2 * sp.pi) ** (-d)
            * 2 ** (al + d)
            * sp.pi ** sp.Rational(d, 2)
            * sp.gamma(sp.Rational(al + d, 2))
            / sp.gamma(sp.Rational(-al, 2))
        )
        return sp.simplify(a), sp.simplify(b)

    # -- method "hyp"
    def mu_hyp(self, rho):
        d = self.d
        if self._hyp_terms is None or self._hyp_terms[0] != mp.mp.prec:
            R = _mpq(self.R)
            terms = []
            for j, c in enumerate(self.coeffs):
                if c == 0:
                    continue
                pref = _mpq(c) * R ** (j + d) * 2 ** (1 - mp.mpf(d) / 2) / ((j + d) * mp.gamma(mp.mpf(d) / 2))
                terms.append((pref, mp.mpf(j + d) / 2))
            self._hyp_terms = (mp.mp.prec, terms)
        z = -((rho * _mpq(self.R) / 2) ** 2)
        s = mp.fsum(p * mp.hyp1f2(a, mp.mpf(d) / 2, a + 1, z) for p, a in self._hyp_terms[1])
        return (2 * mp.pi) ** (-mp.mpf(d) / 2) * s

    # -- method "closed"
    def closed_form(self):
        if self._closed is None:
            d, nu = self.d, self.nu
            total = 0
            for j, c in enumerate(self.coeffs):
                if c == 0:
                    continue
                if d % 2:
                    integrand = sp.expand(r_ ** (j + sp.Rational(d, 2)) * _half_order_bessel(nu, rho_ * r_))
                    piece = sum(sp.integrate(t, (r_, 0, self.R)) for t in sp.Add.make_args(integrand))
                else:
                    integrand = r_ ** (j + sp.Rational(d, 2)) * sp.besselj(nu, rho_ * r_)
                    piece = sp.integrate(integrand, (r_, 0, self.R))
                if piece.has(sp.Integral, sp.oo, sp.nan, sp.zoo):
                    raise RuntimeError(f"sympy failed on r^{j} in d = {d}: {piece}")
                total += c * piece
            expr = sp.expand((2 * sp.pi) ** (-sp.Rational(d, 2)) * rho_ ** (1 - sp.Rational(d, 2)) * total)
            self._closed = (expr, sp.lambdify(rho_, expr, "mpmath"))
        return self._closed

    def mu_closed(self, rho):
        # the closed forms are sums of rho^-k terms that cancel at small rho: extra digits
        extra = 20 + int(max(0, 16 * math.log10(1 / float(rho)))) if rho < 1 else 20
        with mp.workdps(mp.mp.dps + extra):
            v = self.closed_form()[1](mp.mpf(rho))
        return +v

    # -- direct quadrature of the Hankel integrand (check only)
    def mu_quad(self, rho):
        d, R = self.d, _mpq(self.R)
        kf = sp.lambdify(r_, self.expr, "mpmath")
        nu = mp.mpf(d) / 2 - 1
        pieces = max(2, int(rho * R / mp.pi) + 2)
        I = mp.quad(
            lambda r: kf(r) * r ** (mp.mpf(d) / 2) * mp.besselj(nu, rho * r), mp.linspace(0, R, pieces + 1)
        )
        return (2 * mp.pi) ** (-mp.mpf(d) / 2) * rho ** (1 - mp.mpf(d) / 2) * I

    def mu_sonine(self, rho):
        """Only for (1 - r^2/4)^2 on [0, 2]: Sonine's first finite integral."""
        d = mp.mpf(self.d)
        return (
            (2 * mp.pi) ** (-d / 2) * 2 ** (d / 2 + 1) * rho ** (-2 - d / 2) * mp.besselj(d / 2 + 2, 2 * rho)
        )

    def is_sonine_case(self):
        return self.R == 2 and sp.expand(self.expr - (1 - r_**2 / 4) ** 2) == 0

    # -- the evaluator used for zeros and lobes: hyp at small rho (no cancellation), closed beyond
    def mu(self, rho):
        return self.mu_hyp(rho) if rho < 4 else self.mu_closed(rho)

    def f(self, rho):
        h = mp.mpf(self.d) / 2
        return 2 * mp.pi**h / mp.gamma(h) * rho ** (self.d - 1) * self.mu(rho)


def check_mu(kern, rhos=("0.7", "6.1", "45.3", "233.7")):
    """Largest relative disagreement between the mu evaluators at sample points."""
    rows = []
    for x in rhos:
        x = mp.mpf(x)
        ref = kern.mu_hyp(x)
        row = {
            "rho": str(x),
            "mu": mp.nstr(ref, 20),
            "closed": mp.nstr(abs(kern.mu_closed(x) / ref - 1), 3),
            "quad": mp.nstr(abs(kern.mu_quad(x) / ref - 1), 3),
        }
        if kern.is_sonine_case():
            row["sonine"] = mp.nstr(abs(kern.mu_sonine(x) / ref - 1), 3)
        rows.append(row)
    worst = max(mp.mpf(v) for row in rows for k, v in row.items() if k not in ("rho", "mu"))
    if worst > mp.mpf("1e-40"):
        raise RuntimeError(f"mu evaluators disagree: {rows}")
    return rows, worst


# ----------------------------------------------------------------------------------------------------
# zeros and lobes


class Lobes:
    """Sign changes of mu and signed lobe masses of f, computed on demand."""

    def __init__(self, kern):
        self.kern = kern
        self.width = mp.pi / _mpq(kern.R)  # asymptotic distance between zeros
        self.step = self.width / 16
        self.zeros = []
        self.x, self.mx = mp.mpf(0), kern.mu(mp.mpf(0))
        if self.mx <= 0:
            raise RuntimeError("mu(0) <= 0: the scan assumes a positive first lobe")
        self.masses = []  # signed lobe masses
        self.qerr = []  # quadrature error estimates
        self.pos, self.neg = [], []  # indices into masses

    def _next_zero(self):
        mu = self.kern.mu
        while True:
            y = self.x + self.step
            my = mu(y)
            if self.mx * my < 0:
                z = mp.findroot(mu, (self.x, y), solver="anderson")
                if not self.x <= z <= y:
                    raise RuntimeError(f"findroot left its bracket [{self.x}, {y}]: {z}")
                self.zeros.append(z)
                self.x, self.mx = y, my
                return
            self.x, self.mx = y, my

    def _add_lobe(self):
        n = len(self.masses)
        while len(self.zeros) < n + 1:
            self._next_zero()
        a = self.zeros[n - 1] if n else mp.mpf(0)
        b = self.zeros[n]
        sign = 1 if n % 2 == 0 else -1
        bad = []

        def g(x):
            v = self.kern.f(x)
            if v * sign < 0:
                bad.append(x)
            return v

        m, e = mp.quad(g, [a, b], method="gauss-legendre", error=True)
        if bad or m * sign <= 0:
            raise RuntimeError(f"lobe {n} on [{a}, {b}] is not of one sign (missed zeros?)")
        self.masses.append(m)
        self.qerr.append(e)
        (self.pos if sign > 0 else self.neg).append(n)

    def positive(self, count):
        while len(self.pos) < count:
            self._add_lobe()
        return [self.masses[i] for i in self.pos[:count]]

    def negative(self, count):
        while len(self.neg) < count:
            self._add_lobe()
        return [-self.masses[i] for i in self.neg[:count]]

    def check_head(self, widths=20):
        """Rescan the head with a 16 times finer step: the zeros found must be the same."""
        top = self.width * widths
        mu, h = self.kern.mu, self.step / 16
        x, mx, found = mp.mpf(0), mu(mp.mpf(0)), 0
        while x < top:
            y = x + h
            my = mu(y)
            found += mx * my < 0
            x, mx = y, my
        coarse = sum(1 for z in self.zeros if z < top)
        if found != coarse:
            raise RuntimeError(f"head rescan found {found} sign changes below {top}, the scan {coarse}")
        return found


# ----------------------------------------------------------------------------------------------------
# accelerations


def _psums(terms):
    out, s = [], mp.mpf(0)
    for t in terms:
        s += t
        out.append(s)
    return out


def _spread(N, Nmax, J):
    return [int(round(N + (Nmax - N) * i / J)) for i in range(J + 1)]


def _solve_for_limit(S, ns, basis):
    """S from S_n = S + sum_i c_i basis(n)_i on the points ns, and the amplification sum |w_n| of
    the linear weights that map the S_n to S (errors in the S_n reach S multiplied by at most it)."""
    m = len(ns)
    with mp.workdps(2 * DPS):
        A = mp.matrix(m, m)
        for row, n in enumerate(ns):
            A[row, 0] = 1
            for i, v in enumerate(basis(n)):
                A[row, i + 1] = v
        w = mp.inverse(A)
        value = mp.fsum(w[0, c] * S[n - 1] for c, n in enumerate(ns))
        amplification = mp.fsum(abs(w[0, c]) for c in range(m))
    return +value, +amplification


def richardson(terms, window, g, delta):
    """S from S_n = S + sum_{i<J} c_i n^-(g + i delta) on J+1 partial sums spread over [N, Nmax]."""
    N, Nmax, J = window
    return _solve_for_limit(
        _psums(terms[:Nmax]),
        _spread(N, Nmax, J),
        lambda n: [mp.mpf(n) ** (-(g + i * delta)) for i in range(J)],
    )


def levin_u(terms, window):
    """mpmath's Levin u-transform of the terms N0, ..., N0+K-1 (theta = N0), plus the head."""
    N0, K = window
    with mp.workdps(3 * DPS):
        L = mp.levin(method="levin", variant="u")
        L.theta = N0
        v, _ = L.update(terms[N0 - 1 : N0 - 1 + K])
        v += mp.fsum(terms[: N0 - 1])
    return +v, None


def levin_general(terms, window, delta):
    """Generalised Levin: S_n = S + n a_n sum_{i<J} c_i n^(-i delta) on J+1 sums spread over [N, Nmax]."""
    N, Nmax, J = window
    return _solve_for_limit(
        _psums(terms[:Nmax]),
        _spread(N, Nmax, J),
        lambda n: [n * terms[n - 1] * mp.mpf(n) ** (-i * delta) for i in range(J)],
    )


def accelerate(terms_of, windows, g, delta):
    """All estimates (value, amplification or None) of one Jordan mass; terms_of(count) returns the
    first count lobe masses. The best estimate is the Richardson one with the larger window."""
    est = {}
    for w in windows["richardson"]:
        est[f"richardson N={w[0]} Nmax={w[1]} J={w[2]}"] = richardson(terms_of(w[1]), w, g, delta)
    for w in windows["levin"]:
        if delta == 1:
            est[f"levin-u (mpmath) N0={w[0]} K={w[1]}"] = levin_u(terms_of(w[0] + w[1]), w)
        else:
            est[f"levin-general N={w[0]} Nmax={w[1]} J={w[2]}"] = levin_general(terms_of(w[1]), w, delta)
    best_key = [k for k in est if k.startswith("richardson")][-1]
    return est, best_key


# ----------------------------------------------------------------------------------------------------
# positive definite polynomial case: proof that mu > 0


def prove_positive(kern):
    """Prove mu(rho) > 0 for all rho >= 0 (odd d: elementary closed form). Returns a description."""
    d, nu = kern.d, kern.nu
    # 1) small rho: mu = C sum_m (-1)^m t_m rho^(2m), t_m = 2^(-2m-nu) M_(2m+d-1) / (m! Gamma(m+nu+1)),
    #    M_p = int_0^R k r^p dr. With k >= 0 on [0, R], M_p > 0 and M_(p+2) <= R^2 M_p, so
    #    t_(m+1) rho^2 / t_m <= (R rho)^2 / (4 (m+1) (m+nu+1)): the terms decrease from m0 on, and a
    #    partial sum ending with a negative term at an odd index >= m0 is a lower bound.
    if any(kern.expr.subs(r_, sp.Rational(i, 100) * kern.R) < 0 for i in range(101)):
        raise RuntimeError("k < 0 on its support: the Taylor bound below does not apply")

    def t(m):
        M = sp.integrate(kern.expr * r_ ** (2 * m + d - 1), (r_, 0, kern.R))
        return sp.Rational(1, 2) ** (2 * m + nu) * M / (sp.factorial(m) * sp.gamma(m + nu + 1))

    rho_s = sp.Integer(3)
    m0 = 0
    while 4 * (m0 + 1) * (m0 + nu + 1) < (kern.R * rho_s) ** 2:
        m0 += 1
    m_end = m0 + 1 if m0 % 2 == 0 else m0
    m_end += 2  # two more terms: a tighter bound
    low_small = min(
        sp.N(sum((-1) ** m * t(m) * x ** (2 * m) for m in range(m_end + 1)), 30)
        for x in [rho_s * sp.Rational(i, 64) for i in range(65)]
    )
    # the lower bound polynomial itself must stay positive on [0, rho_s]: checked on a grid and, as
    # it is a polynomial in rho^2 with at most m_end + 1 terms, by its exact real roots
    poly = sp.Poly(sum((-1) ** m * t(m) * rho_ ** (2 * m) for m in range(m_end + 1)), rho_)
    roots = [z for z in sp.Poly(sp.N(poly.as_expr(), 50), rho_).nroots(n=40) if z.is_real and 0 <= z <= rho_s]
    if not (low_small > 0 and not roots):
        raise RuntimeError("Taylor lower bound not positive on [0, rho_s]")
    # 2) far: rho^e mu = const + a cos + b sin at the leading order e; lower powers bounded by |coeff|
    expr = kern.closed_form()[0]
    by_power = {}
    for term in sp.Add.make_args(expr):
        c, rest = term.as_independent(rho_, sp.sin(rho_ * kern.R), sp.cos(rho_ * kern.R))
        p = sp.degree(sp.together(1 / rest.subs({sp.sin(rho_ * kern.R): 1, sp.cos(rho_ * kern.R): 1})), rho_)
        kind = "sin" if rest.has(sp.sin) else "cos" if rest.has(sp.cos) else "1"
        by_power.setdefault(p, {}).setdefault(kind, 0)
        by_power[p][kind] += c
    e = min(by_power)
    lead = by_power[e]
    margin = lead.get("1", 0) - sp.sqrt(lead.get("cos", 0) ** 2 + lead.get("sin", 0) ** 2)
    if not margin > 0:
        raise RuntimeError("leading asymptotic term is not one-signed")

    def far_bound(x):
        rest = sum(sum(abs(c) for c in row.values()) * x ** (e - p) for p, row in by_power.items() if p != e)
        return margin - rest

    rho_L = sp.Integer(1)
    while not far_bound(rho_L) > 0:
        rho_L += 1
    # 3) middle [rho_s, rho_L]: interval arithmetic on the closed form over small subintervals
    fn = sp.lambdify(rho_, expr, modules=[{"sin": mp.iv.sin, "cos": mp.iv.cos, "pi": mp.iv.pi}, "mpmath"])
    mp.iv.dps = 40
    lo, hi = float(rho_s), float(rho_L)
    n_int, x, width = 0, lo, 1e-2
    while x < hi:
        y = min(hi, x + width)
        v = fn(mp.iv.mpf([x, y]))
        if v.a <= 0:
            if width < 1e-7:
                raise RuntimeError(f"cannot prove mu > 0 on [{x}, {y}]")
            width /= 2
            continue
        n_int += 1
        x, width = y, min(width * 2, 0.05)
    return (
        f"mu > 0 proven: Taylor lower bound on [0, {rho_s}] (alternating series through m = {m_end}, "
        f"mu >= {float(low_small):.3e} C), interval "
        f"arithmetic on [{rho_s}, {rho_L}] ({n_int} subintervals), explicit bound beyond {rho_L} "
        f"(rho^{e} mu >= {float(margin):.4g} - sum |c_p| rho^(e-p) > 0)"
    )


# ----------------------------------------------------------------------------------------------------
# drivers


def _s(x):
    return mp.nstr(x, OUT_DIGITS, strip_zeros=False)


def run_poly(name, text, R, d, windows):
    t0 = time.process_time()
    kern = PolyKernel(text, R, d)
    rows, worst = check_mu(kern)
    a, b = kern.tail_amplitudes()
    out = {
        "kernel": f"{text} on [0, {R}]",
        "dim": d,
        "k0": str(kern.k0),
        "tail": {
            "edge_beta": int(kern.beta),
            "origin_alpha": kern.alpha,
            "edge_decay": f"|mu| ~ rho^-({kern.edge_exp})",
            "origin_decay": f"mu ~ rho^-({kern.origin_exp})" if kern.alpha else "none (even polynomial)",
            "edge_amplitude": str(a),
            "origin_amplitude": str(b),
            "g": str(kern.g),
            "delta": str(kern.delta),
        },
        "mu_check": {"max_relative_disagreement": mp.nstr(worst, 3), "points": rows},
    }
    if windows is None:
        desc = prove_positive(kern)
        out.update(
            {
                "m_plus": str(kern.k0),
                "m_minus": "0",
                "m_plus_error": "0",
                "m_minus_error": "0",
                "sign_changes": [],
                "method": "exact: positive definite, " + desc,
            }
        )
        out["cpu_seconds"] = round(time.process_time() - t0, 1)
        return out
    lobes = Lobes(kern)
    res = {}
    for label, terms_of in (("m_plus", lobes.positive), ("m_minus", lobes.negative)):
        res[label] = accelerate(terms_of, windows, kern.g, kern.delta)
    head = lobes.check_head()
    qerr = mp.fsum(lobes.qerr)
    k0 = _mpq(kern.k0)
    for label, (est, best_key) in res.items():
        best, amplification = est[best_key]
        spread = max(abs(v - best) for v, _ in est.values())
        # the partial sums carry the evaluators' relative error and the quadrature errors
        data_err = (worst + mp.mpf(10) ** (5 - DPS)) * best + qerr
        err = max(ERROR_FLOOR, SAFETY * spread + amplification * data_err)
        out[label] = _s(best)
        out[label + "_error"] = mp.nstr(err, 2)
        out[label + "_estimates"] = {k: _s(v) for k, (v, _) in est.items()}
        out[label + "_best"] = best_key
        out[label + "_error_parts"] = {
            "spread_of_estimates": mp.nstr(spread, 2),
            "amplification_of_best": mp.nstr(amplification, 2),
            "data_error_of_partial_sums": mp.nstr(data_err, 2),
        }
    (mp_, _), (mm, _) = (res[lab][0][res[lab][1]] for lab in ("m_plus", "m_minus"))
    out["check_m_plus_minus_m_minus_minus_k0"] = mp.nstr(mp_ - mm - k0, 3)
    if abs(mp_ - mm - k0) > mp.mpf(out["m_plus_error"]) + mp.mpf(out["m_minus_error"]):
        raise RuntimeError(f"{name}: m+ - m- - k(0) = {mp_ - mm - k0} exceeds the error bounds")
    out["sign_changes"] = [_s(z) for z in lobes.zeros[:5]]
    out["lobes_computed"] = len(lobes.masses)
    out["head_sign_changes_confirmed"] = head
    out["quadrature_error_sum"] = mp.nstr(qerr, 2)
    out["method"] = (
        "mu: hyp1f2 sums (rho < 4) and sympy closed form (rho >= 4), checked against each other and "
        "against direct quadrature"
        + (" and Sonine's Bessel formula" if kern.is_sonine_case() else "")
        + "; zeros: scan + mpmath.findroot; lobes: mpmath.quad Gauss-Legendre; "
        f"tails: Richardson with known exponents (g = {kern.g}, delta = {kern.delta}) and "
        + ("mpmath Levin u" if kern.delta == 1 else "generalised Levin (remainder n a_n, steps n^-1/2)")
        + f", two windows each; error = {SAFETY} x largest spread + quadrature errors"
    )
    out["cpu_seconds"] = round(time.process_time() - t0, 1)
    return out


def run_gauss(name, text, d):
    """exp(-r^2/2) - exp(-r^2/8)/2: mu = (2 pi)^(-d/2) (exp(-rho^2/2) - 2^(d-1) exp(-2 rho^2))."""
    t0 = time.process_time()
    x = rho_
    mu = (2 * sp.pi) ** sp.Rational(-d, 2) * (sp.exp(-(x**2) / 2) - 2 ** (d - 1) * sp.exp(-2 * x**2))
    S = 2 * sp.pi ** sp.Rational(d, 2) / sp.gamma(sp.Rational(d, 2))
    f = S * x ** (d - 1) * mu
    k0 = sp.Rational(1, 2)
    assert sp.simplify(sp.integrate(f, (x, 0, sp.oo)) - k0) == 0
    fn = sp.lambdify(x, f, "mpmath")
    out = {"kernel": text, "dim": d, "k0": str(k0), "mu": str(mu)}
    if d == 1:
        # exp(-rho^2/2) > exp(-2 rho^2) for rho > 0: mu > 0 (a double zero at rho = 0 is no sign change)
        out.update(
            {
                "m_plus": "1/2",
                "m_minus": "0",
                "m_plus_error": "0",
                "m_minus_error": "0",
                "sign_changes": [],
                "method": "exact: mu = (2 pi)^(-1/2) (exp(-rho^2/2) - exp(-2 rho^2)) > 0 for rho > 0",
            }
        )
    else:
        # zero: exp(3 rho^2/2) = 2^(d-1)
        z = sp.sqrt(sp.Rational(2, 3) * (d - 1) * sp.log(2))
        m_minus = sp.simplify(-sp.integrate(f, (x, 0, z)))
        m_plus = sp.simplify(m_minus + k0)
        with mp.workdps(DPS):
            vm = sp.N(m_minus, DPS)
            qm = -mp.quad(fn, [0, sp.N(z, DPS)])
            qp = mp.quad(fn, [sp.N(z, DPS), mp.inf])
            diff = max(abs(mp.mpf(str(vm)) - qm), abs(mp.mpf(str(sp.N(m_plus, DPS))) - qp))
        if diff > mp.mpf("1e-45"):
            raise RuntimeError(f"{name}: exact masses and quadrature disagree by {diff}")
        out.update(
            {
                "m_plus": str(sp.N(m_plus, OUT_DIGITS)),
                "m_minus": str(sp.N(m_minus, OUT_DIGITS)),
                "m_plus_exact": str(m_plus),
                "m_minus_exact": str(m_minus),
                "m_plus_error": "1e-40",
                "m_minus_error": "1e-40",
                "quadrature_check": mp.nstr(diff, 3),
                "sign_changes": [str(sp.N(z, OUT_DIGITS))],
                "sign_change_exact": str(z),
                "method": "exact: erf closed form (sympy) of int f over [0, zero], checked by "
                "mpmath.quad; error = rounding to 40 digits",
            }
        )
    out["cpu_seconds"] = round(time.process_time() - t0, 1)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(CASES), help="cases to run (default: all)")
    ap.add_argument("--json", help="write the results to this JSON file")
    args = ap.parse_args(argv)
    mp.mp.dps = DPS
    results = {}
    for name in args.only or CASES:
        text, R, d, windows = CASES[name]
        results[name] = run_gauss(name, text, d) if R is None else run_poly(name, text, R, d, windows)
        if name.startswith("D"):
            results[name]["why"] = WHY_D
        print(f"# {name}: {results[name]['cpu_seconds']} s", flush=True)
    print(results)
    if args.json:
        with open(args.json + ".tmp", "w") as fh:
            json.dump(results, fh, indent=1)
            fh.write("\n")
        os.replace(args.json + ".tmp", args.json)
    return results


if __name__ == "__main__":
    main()
