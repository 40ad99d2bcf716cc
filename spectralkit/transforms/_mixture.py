"""Spectral densities of Gaussian scale mixtures, stable in every dimension.

A radial kernel k(r) = F(r^2) whose F is a Laplace transform (Schoenberg's representation),

    k(r) = int_0^inf psi(t) e^(-t r^2) dt,

has, in the convention of ``docs/conventions.md``, the density

    mu_d(rho) = int_0^inf psi(t) g_d(rho, t) dt,   g_d(rho, t) = (4 pi t)^(-d/2) e^(-rho^2 / (4 t)),

a mixture of Gaussian densities, each of total mass 1 in every d. This is the route for smooth
kernels of infinite support in high d, where the Hankel integral int k r^(d-1) Lambda_nu(rho r) dr
cancels to e^(-rho^2/4) of its terms in the region that holds the mass.

* A Gaussian factor exp(-a r^2) of the formula (a read from its exponentials) is a shift,
  psi(t) = psi_0(t - a) (t > a) with G(s) = F(s) e^(a s) = int_0^inf psi_0(u) e^(-s u) du.
* psi_0(u) is computed on Talbot's contour (:mod:`.._numerics.laplace`) at the nodes of a
  composite Gauss-Legendre rule in x = log u (panels of width min(1/2, 2/sqrt(d)), 1 where
  u < a/(16 d): g_d is a
  bump of width ~sqrt(2/d) in log t); mu_d is then the finite sum sum_i W_i psi_0(u_i) g_d(rho, a
  + u_i), evaluated in logs (no under- or overflow in d = 256).
* Errors. Talbot with 24 and 32 nodes gives |delta psi_i|; each Gaussian has mass 1, so the mass
  error of mu_d is at most int |delta psi| du in *every* d (the total variation of the error). The
  representation is verified: sum_i W_i psi_0(u_i) e^(-(a + u_i) r^2) must reproduce k(r) to 1e-9
  of int |psi| on a grid of r (a missed pole or an atom of psi fails here), and the defect at r = 0
  (the mass outside the rule's range, exact for a one-signed psi there) is added to the mass error.
  With a Gaussian factor, the mass of psi_0 below the rule's smallest u (it may decay like
  1/|log u|) is one Gaussian at t = a: k(0) - sum_i W_i psi_0(u_i) (less the power tail's mass).
  The density error is measured at test frequencies against a second rule (24 against 16 points
  per panel) plus sum_i W_i |delta psi_i| g_d, relative to the local amplitude sum_i W_i |psi_i| g_d
  and then to |mu| (times amplitude / |mu| where a signed psi cancels, except next to mu's zeros,
  where the absolute floor covers it), where the radial density is within 1e-3 of its peak; beyond,
  the rule difference is integrated
  with the radial weight S_(d-1) rho^(d-1) into the mass error. Values of psi_0 not above 10 times
  their error are noise and dropped (their bound counts in the mass error). Every component is
  reported with a margin of 10.

Kernels not smooth at 0 (k = k(0) + sum_j c_j r^(beta_j) + ..., e.g. exp(-r^1.5),
(1 + r^1.5)^-2, exp(-r^1.5)/(1 + r)): F(s) = k(0) + sum_j c_j s^(gamma_j) + ..., gamma_j = beta_j/2,
so psi has the power tail sum_j A_j t^(-1-gamma_j), A_j = c_j / Gamma(-gamma_j) (and mu the tail
rho^-(d + beta_1)).

* Tail. Beyond a join T (a panel end where Talbot's psi and the expansion agree best over the
  decade below, to 1e-7 at worst) psi is the expansion; its share of mu is the closed form
  :func:`_log_tail_density`, of k :func:`_tail_kernel`, of the mass sum_j A_j T^(-gamma_j) /
  gamma_j; the agreement at T is its stated relative error (the expansion's error falls beyond T).
* Head. G = exp(-s^(3/4)) grows on the contour: the terms are formed in logs, values come from 32
  nodes (24 as the check), and where psi is small the rule is redone with more nodes
  (:func:`_psi`). What stays unresolved at the smallest u is dropped; its mass m_head is bounded by
  the defect at r = 0 (or, psi >= 0 there, by k at large r) and its density, m_head max_(t <=
  t_head) g_d(rho, t), is added to the pointwise error. Values dropped as noise above the head
  count pointwise.

Exponential powers C exp(-c r^a) themselves (psi = C times the positive (a/2)-stable density at
scale c^(2/a)) take psi from Kanter's integral of positive terms (:func:`_kanter_log_density`)
instead of Talbot: exact to rounding from the left tail exp(-A(0) z) to the power tail, for a/2
up to 0.995 (a density that sharpens towards a point mass, on a rule that starts where it is below
e^-800 and has panels 2(1 - beta)/beta wide across its peak).

A Gaussian times a rational function of r^2 with poles off the real axis, all in Re s < 0, takes
the exact psi_0 of its partial fractions (:func:`_rational_poles`): Talbot's contour misses such
poles.

Applies to analytic formulas without compact support that are smooth at 0 (mu decays faster than
any power), or not smooth at 0 with a power tail of psi and no log terms: a Gaussian factor
(explicit, or read from the decay: :func:`_hidden_gaussian_factor`) only where psi > 0 at infinity
(A_1 > 0). Anything the checks do not confirm returns None: the caller falls back to
the Hankel route (which then answers or refuses).
"""

import math
from collections.abc import Sequence

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._numerics.laplace import talbot_invert
from .._numerics.quadrature import panel_rule
from .._numerics.special import log_sphere_area
from ..kernels import RadialKernel
from ..kernels._parse import R
from ._forms import log_form, log_interpolant
from ._partial import partial_fractions
from ._rational import _T, _in_r2
from ._symbolic import complex_formula
from ._types import RadialTransform

__all__ = ["FIRM_REL_ERROR", "gaussian_mixture_transform"]

_EPS = np.finfo(np.float64).eps
#: a density at most this far off (relative) is taken without a second route (see _dispatch)
FIRM_REL_ERROR = 1e-6
_SPAN = 1e14  # u from scale / SPAN to scale * SPAN
_RECONSTRUCT = 1e-9  # the mixture must reproduce k to this fraction of int |psi|
_MARGIN = 10.0
#: the interpolant of log|mu| (2e-12 in log, plus the logs' own rounding 8 eps |log mu| < 2e-12)
_INTERP_ERROR = 4e-12
_KANTER_HALVINGS = 12  # Kanter's panels on theta in (0, pi/2] halve down to pi 2^-13
_KANTER_STEP = 0.75  # and change log A by at most this much each beyond
_KANTER_BLOCK = 1024  # x values per block of Kanter's sums
_POLE_DIGITS = 40  # the poles of a rational G (psi_0 from its partial fractions)
_MP_POINTS = 2000  # at most this many non-finite contour values are redone in mpmath
_CLEAN = 10.0  # psi values below this multiple of their error are dropped (noise)
_HEAD_RUN = 16  # resolved nodes in a row that end the dropped head (k not smooth at 0)
# the head's rules: three node counts each (two can agree by chance where neither converged:
# 429 and 435 at u = 0.077 for exp(-s^(3/4)), whose psi is ~1e-100 there)
_HEAD_RULES = ((32, 48, 64), (64, 96, 128), (128, 160, 200))
_TAIL_FIT = 1e-7  # the power tail must meet Talbot's psi to this relative discrepancy
_TAIL_SPAN = 1e8  # test frequencies reach the tail's Gaussians up to t = T * _TAIL_SPAN


def _gaussian_factor(expr):
    """a >= 0 with expr = exp(-a r^2) * (the rest), read from the factors exp(p(r)) and b^p(r) with p
    a polynomial of degree 2 in r (0 when there is none)."""
    a = sympy.Integer(0)
    for f in sympy.Mul.make_args(expr):
        base, exp_ = f.as_base_exp()
        if not exp_.has(R) or base.has(R) or not base.is_positive:
            continue
        poly = sympy.Poly(exp_, R) if exp_.is_polynomial(R) else None
        if poly is None or poly.degree() != 2:
            continue
        a -= poly.coeff_monomial(R**2) * sympy.log(base)
    a = sympy.nsimplify(a) if a.has(sympy.Float) else a
    return a if a.is_positive else sympy.Integer(0)


#: what evaluating a lambdified formula in mpmath may raise (a special function outside its domain,
#: an overflow, a name mpmath does not know)
MP_EVAL_ERRORS = (TypeError, ValueError, ZeroDivisionError, ArithmeticError, NameError, AttributeError)

#: radii (units of the length scale) of the two fits of a Gaussian rate (the second doubles the first)
_RATE_RADII = (40.0, 50.0, 60.0, 70.0, 80.0, 100.0)
#: the two fits must agree to this (relative), and the rate must be a rational p/q (q <= 1000) as close
_RATE_AGREE = 1e-7


def _hidden_gaussian_factor(expr, length):
    """a > 0 with k = exp(-a r^2) h, h decaying slower than any Gaussian, for a formula that does not
    show the factor (erfc(r) ~ e^(-r^2) / (sqrt(pi) r), erfc(r)^2).

    log|k| = -a r^2 + e r + b log r + c + c1 / r + c2 / r^2 + O(r^-3) is fitted exactly at six radii
    in mpmath (k underflows float64 there), and again at twice the radii; the result is a rational
    number both fits agree on, else 0 (k decays like exp(-r^p) with p != 2, or the fit has not
    converged). A wrong rate cannot pass: the caller's representation is checked against k itself."""
    try:
        kf = sympy.lambdify(R, expr, modules="mpmath")
        fits = []
        with mpmath.workdps(30):
            for scale in (1.0, 2.0):
                rows, rhs = [], []
                for x in _RATE_RADII:
                    r = mpmath.mpf(scale * x * length)
                    v = kf(r)
                    if not isinstance(v, mpmath.mpf) or v == 0:
                        return sympy.Integer(0)
                    rows.append([-(r**2), r, mpmath.log(r), 1, 1 / r, r**-2])
                    rhs.append(mpmath.log(abs(v)))
                fits.append(float(mpmath.lu_solve(mpmath.matrix(rows), mpmath.matrix(rhs))[0]))
    except MP_EVAL_ERRORS:
        return sympy.Integer(0)
    a0, a1 = fits
    if not (a1 > 0 and abs(a1 - a0) <= _RATE_AGREE * a1):
        return sympy.Integer(0)
    frac = sympy.Rational(a1).limit_denominator(1000)
    return frac if abs(float(frac) - a1) <= _RATE_AGREE * a1 else sympy.Integer(0)


#: exp(z^2) erfc(z), bounded on the right half-plane where its two factors over- and underflow
_ERFCX = sympy.Function("erfcx")
_ERFCX_MPMATH = {"erfcx": lambda z: mpmath.exp(z * z) * mpmath.erfc(z)}


def _scaled_erfc(expr):
    """expr with each factor erfc(c r)^p (c > 0, p a positive integer) and p c^2 r^2 of the
    exponential factors' exponent written as erfcx(c r)^p = (exp(c^2 r^2) erfc(c r))^p, so that
    G(s) = F(s) e^(a s) is evaluated without overflow on Talbot's contour."""
    factors = sympy.Mul.make_args(expr)
    expo = sympy.Add(*[f.args[0] for f in factors if isinstance(f, sympy.exp)])
    rest = [f for f in factors if not isinstance(f, sympy.exp)]
    out = []
    for f in rest:
        base, p = f.as_base_exp()
        if isinstance(base, sympy.erfc) and p.is_Integer and p > 0:
            c = sympy.cancel(base.args[0] / R)
            if c.is_number and c.is_positive:
                cand = sympy.expand(expo - p * c**2 * R**2)
                if cand.is_polynomial(R) and sympy.Poly(cand, R).coeff_monomial(R**2) <= 0:
                    expo = cand
                    out.append(_ERFCX(base.args[0]) ** p)
                    continue
        out.append(f)
    return sympy.Mul(*out) * sympy.exp(expo)


class _Mixture:
    """mu_d(rho) = sum_i w_i g_d(rho, t_i) + (power tail) + (low part) in logs, with the local
    amplitude and error sums. ``tail`` = (A, gamma, T, delta): the components A_j int_T^inf
    t^(-1-gamma_j) g_d(rho, t) dt (:func:`_log_tail_density`); ``low`` = (B, delta_j, T_low,
    delta): the components B_j int_0^T_low t^(delta_j - 1) g_d(rho, t) dt (:func:`_log_low_density`);
    each stated to its delta of their moduli."""

    def __init__(self, t, w, err, dim, tail=None, low=None):
        self.dim = dim
        self.log_t = np.log(t)
        self.inv4t = 0.25 / t
        base = -(dim / 2.0) * np.log(4.0 * math.pi * t)
        with np.errstate(divide="ignore"):
            self.lw = base + np.log(np.abs(w))
            self.le = base + np.log(err)
        self.sign = np.sign(w)
        # the closed-form parts: (coefficients, log-density of rho, stated relative error)
        self.extras = []
        if tail is not None:
            A, gam, T, delta = tail
            self.extras.append((A, lambda r, gam=gam, T=T: _log_tail_density(r, gam, T, dim), delta))
        if low is not None:
            B, dl, T_low, delta = low
            self.extras.append((B, lambda r, dl=dl, T=T_low: _log_low_density(r, dl, T, dim), delta))
        for coef, _, _ in self.extras:
            self.sign = np.r_[self.sign, np.sign(coef)]

    def _extra_terms(self, rho):
        """Log-moduli of the closed-form parts at the frequencies rho (flat): one column each."""
        with np.errstate(divide="ignore"):
            parts = [np.log(np.abs(c))[None, :] + fn(rho) for c, fn, _ in self.extras]
        return np.hstack(parts) if parts else np.empty((rho.size, 0))

    def _terms(self, r, keep=slice(None), extra=None):
        """Log-moduli of the terms at the frequencies r (a column): the Gaussians ``keep``, then
        the closed-form parts (``extra``: their rows, computed beforehand for many r at once)."""
        lt = self.lw[None, keep] - r**2 * self.inv4t[None, keep]
        if not self.extras:
            return lt
        return np.hstack([lt, self._extra_terms(r[:, 0]) if extra is None else extra])

    def values(self, rho, block=64):
        """(log|mu|, sign) at rho (flat float64 array).

        The frequencies are taken in ascending blocks; a Gaussian whose term is below e^-50 of
        another's over the whole block (its upper bound lw_i - rho_lo^2 / (4 t_i) against the lower
        bound max_j lw_j - rho_hi^2 / (4 t_j)) is skipped: in high d each rho sees a few hundred
        of the thousands of nodes (g_d is a bump of width ~sqrt(2/d) in log t)."""
        la, sg = np.empty(rho.size), np.empty(rho.size)
        order = np.argsort(rho, kind="stable")
        extra = self._extra_terms(rho) if self.extras else None  # vectorised over all rho at once
        for s in range(0, rho.size, block):
            idx = order[s : s + block]
            r = rho[idx, None]
            lo_, hi_ = float(r[0, 0]), float(r[-1, 0])
            keep = np.flatnonzero(
                self.lw - lo_**2 * self.inv4t >= np.max(self.lw - hi_**2 * self.inv4t) - 50.0
            )
            lt = self._terms(r, keep, None if extra is None else extra[idx])
            sign = self.sign[np.r_[keep, np.arange(self.lw.size, self.sign.size)]]
            top = np.max(lt, axis=1)
            with np.errstate(invalid="ignore"):
                sm = np.exp(lt - top[:, None]) @ sign
            # the low part is infinite at rho = 0 (mu ~ rho^(2 delta_1 - d)): its sign there
            pole = np.isposinf(top)
            if np.any(pole):
                sm[pole] = np.where(np.isposinf(lt[pole]), 1.0, 0.0) @ sign
            with np.errstate(divide="ignore"):
                la[idx] = top + np.log(np.abs(sm))
            sg[idx] = np.sign(sm)
        return la, sg

    def evaluate(self, rho, block=512):
        """(log|mu|, sign, log amplitude, log error) at rho (flat float64 array)."""
        out = [np.empty(rho.size) for _ in range(4)]
        n = self.lw.size
        for s in range(0, rho.size, block):
            r = rho[s : s + block, None]
            lt = self._terms(r)
            top = np.max(lt, axis=1)
            e = np.exp(lt - top[:, None])
            sm = e @ self.sign
            amp = e.sum(axis=1)
            le = [self.le[None, :] - r**2 * self.inv4t[None, :]]
            col = n
            for coef, _, delta in self.extras:
                with np.errstate(divide="ignore"):
                    le.append(math.log(delta) + lt[:, col : col + coef.size])
                col += coef.size
            le = np.hstack(le)
            etop = np.max(le, axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[0][s : s + block] = top + np.log(np.abs(sm))
                out[3][s : s + block] = etop + np.log(np.exp(le - etop[:, None]).sum(axis=1))
            out[1][s : s + block] = np.sign(sm)
            out[2][s : s + block] = top + np.log(amp)
        return out


def _power_tail(origin_terms):
    """(A, gamma) of the tail psi(t) ~ sum_j A_j t^(-1-gamma_j) (t -> inf) from the non-smooth
    terms c_j r^(beta_j) of k at 0: F(s) = k(sqrt s) has the terms c_j s^(gamma_j), gamma_j =
    beta_j / 2, and the inverse Laplace transform of s^gamma (gamma not an integer) is
    t^(-1-gamma) / Gamma(-gamma). None for log terms (r^(2n) log r)."""
    if not origin_terms or any(lp != 0 for _, _, lp in origin_terms):
        return None
    gam = np.array([b / 2.0 for _, b, _ in origin_terms])
    A = np.array([c * float(sc.rgamma(-g)) for (c, _, _), g in zip(origin_terms, gam, strict=True)])
    keep = A != 0
    return (A[keep], gam[keep]) if np.any(keep) else None


def _log_tail_density(rho, gam, T, dim):
    """log int_T^inf t^(-1-gamma) g_d(rho, t) dt for each rho (rows) and gamma (columns).

    With a = gamma + d/2 and V = rho^2 / (4 T) the integral is (4 pi)^(-d/2) (rho^2/4)^(-a)
    gamma_lower(a, V) = (4 pi)^(-d/2) T^(-a) e^(-V) M(1, a + 1, V) / a (Kummer's series
    M = sum_k V^k / ((a+1)...(a+k)), all terms positive; used for V <= a / 2, where 60 terms reach
    2^-60, and where gamma_lower would underflow), else scipy's regularised P(a, V).
    """
    a = gam[None, :] + dim / 2.0
    V = (rho[:, None] ** 2 / (4.0 * T)) * np.ones_like(a)
    out = np.empty(V.shape)
    low = V <= 0.5 * a
    if np.any(low):
        aa, vv = np.broadcast_to(a, V.shape)[low], V[low]
        term, m = np.ones_like(vv), np.ones_like(vv)
        for k in range(1, 61):
            term = term * vv / (aa + k)
            m += term
        out[low] = -aa * math.log(T) - vv - np.log(aa) + np.log(m)
    if np.any(~low):
        aa, vv = np.broadcast_to(a, V.shape)[~low], V[~low]
        with np.errstate(divide="ignore"):
            out[~low] = -aa * np.log(vv * T) + np.log(sc.gammainc(aa, vv)) + sc.gammaln(aa)
    return out - (dim / 2.0) * math.log(4.0 * math.pi)


def _upper_gamma_negative(g, x):
    """Gamma(-g, x) for g > 0 (not an integer) and x > 0 (arrays): from Gamma(b, x), b = m - g in
    (0, 1), by Gamma(b - 1, x) = (Gamma(b, x) - x^(b-1) e^(-x)) / (b - 1). Where x is small the power
    dominates the difference; where x is large both are ~x^(b-1) e^(-x) and the result loses ~eps x
    relative, against k's tail part e^(-x) (absolute: negligible)."""
    b = math.ceil(g) - g if g != math.floor(g) else 1.0
    b = b if b > 0 else 1.0
    out = sc.gammaincc(b, x) * sc.gamma(b)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        while b > -g + 0.5:
            out = (out - x ** (b - 1.0) * np.exp(-x)) / (b - 1.0)
            b -= 1.0
    return out


def _tail_kernel(r, A, gam, T):
    """The tail's part of k: sum_j A_j int_T^inf t^(-1-gamma_j) e^(-t r^2) dt = sum_j A_j r^(2 gamma_j)
    Gamma(-gamma_j, T r^2) (upper incomplete gamma), A_j T^(-gamma_j) / gamma_j at r = 0."""
    r = np.asarray(r, dtype=np.float64)
    out = np.zeros(r.size)
    pos = r > 0
    for a_, g in zip(A, gam, strict=True):
        out[~pos] += a_ * T ** (-g) / g
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            out[pos] += a_ * r[pos] ** (2 * g) * _upper_gamma_negative(float(g), T * r[pos] ** 2)
    return out


def _power_sum(coef, expo, u):
    """sum_j coef_j u^(expo_j - 1) at each u: the expansions of psi (tail: expo = -gamma; low
    part: expo = delta)."""
    return np.sum(coef[None, :] * u[:, None] ** (expo[None, :] - 1.0), axis=1)


def _low_terms(far_terms, dim):
    """(B, delta) of psi(t) ~ sum_j B_j t^(delta_j - 1) (t -> 0) from the terms c_j r^(-e_j) of k at
    infinity: F(s) = k(sqrt s) ~ c_j s^(-delta_j), delta_j = e_j / 2, whose inverse Laplace
    transform is t^(delta_j - 1) / Gamma(delta_j); None when no term is left."""
    if not far_terms:
        return None
    dl = np.array([e / 2.0 for _, e in far_terms])
    B = np.array([c * float(sc.rgamma(g)) for (c, _), g in zip(far_terms, dl, strict=True)])
    keep = B != 0
    return (B[keep], dl[keep]) if np.any(keep) else None


def _log_upper_gamma(a, x):
    """log Gamma(a, x) for a >= 0, x >= 0 (arrays of one shape): scipy's regularised Q where x <= a + 1
    (it does not underflow there; E_1(x) for a = 0), else Legendre's continued fraction for
    e^x x^-a Gamma(a, x) (modified Lentz; it converges fast for x > a + 1, a = 0 included)."""
    out = np.empty(x.shape)
    near = x <= a + 1.0
    zero = near & (a == 0)
    near &= a != 0
    with np.errstate(divide="ignore"):
        out[near] = sc.gammaln(a[near]) + np.log(sc.gammaincc(a[near], x[near]))
        out[zero] = np.log(sc.exp1(x[zero]))
    near |= zero
    if np.any(~near):
        aa, xx = a[~near], x[~near]
        tiny = 1e-300
        b = xx + 1.0 - aa
        c = np.full(xx.shape, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        live = np.arange(xx.size)  # the fractions not yet converged (each stops on its own)
        for i in range(1, 500):
            an = -i * (i - aa[live])
            b[live] += 2.0
            dl_ = an * d[live] + b[live]
            dl_ = np.where(np.abs(dl_) < tiny, tiny, dl_)
            cl_ = b[live] + an / c[live]
            cl_ = np.where(np.abs(cl_) < tiny, tiny, cl_)
            dl_ = 1.0 / dl_
            step = dl_ * cl_
            h[live] *= step
            d[live], c[live] = dl_, cl_
            live = live[np.abs(step - 1.0) > 4 * _EPS]
            if live.size == 0:
                break
        out[~near] = -xx + aa * np.log(xx) + np.log(h)
    return out


def _log_low_density(rho, dl, T, dim):
    """log int_0^T t^(delta-1) g_d(rho, t) dt for each rho (rows) and delta (columns): with
    a = d/2 - delta >= 0 and V = rho^2 / (4 T) it is (4 pi)^(-d/2) (rho^2/4)^(-a) Gamma(a, V) (v =
    rho^2 / (4 t)); +inf at rho = 0 (mu ~ rho^(2 delta - d) there, ~ log(1/rho) for a = 0)."""
    a = dim / 2.0 - dl[None, :]
    r2 = rho[:, None] ** 2 * np.ones_like(a)
    a = np.broadcast_to(a, r2.shape)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        # log(rho^2 / 4) from log rho: rho^2 underflows for rho < 1e-154; no power for a = 0
        power = np.where(a == 0, 0.0, -a * (2.0 * np.log(rho[:, None]) - math.log(4.0)))
        out = power + _log_upper_gamma(a, r2 / (4.0 * T))
    return out - (dim / 2.0) * math.log(4.0 * math.pi)


def _low_kernel(r, B, dl, T):
    """The low part's share of k: sum_j B_j int_0^T t^(delta_j - 1) e^(-t r^2) dt = sum_j B_j
    Gamma(delta_j) P(delta_j, T r^2) r^(-2 delta_j), B_j T^delta_j / delta_j at r = 0."""
    r = np.asarray(r, dtype=np.float64)
    out = np.zeros(r.size)
    pos = r > 0
    for b_, g in zip(B, dl, strict=True):
        out[~pos] += b_ * T**g / g
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            out[pos] += b_ * sc.gamma(g) * sc.gammainc(g, T * r[pos] ** 2) * r[pos] ** (-2.0 * g)
    return out


def _rule(lo, hi, width, n, flat=-math.inf, flat_width=1.0):
    """Gauss-Legendre panels in x = log u on [lo, hi]: nodes u, weights du, the breaks. Panels have width <=
    ``width``, or <= ``flat_width`` below x = ``flat`` (1 by default: there u << a, g_d(rho, a + u)
    hardly depends on u and psi_0 is smooth in log u)."""
    mid = min(max(flat, lo), hi)
    breaks = np.concatenate(
        [
            np.linspace(lo, mid, int(math.ceil((mid - lo) / flat_width)) + 1),
            np.linspace(mid, hi, int(math.ceil((hi - mid) / width)) + 1)[1:],
        ]
    )
    x, w = panel_rule(breaks, n)
    u = np.exp(x)
    return u, w * u, breaks


def _rule_with_ends(lo, ends, width, n, flat=-math.inf, flat_width=1.0):
    """:func:`_rule` on [lo, ends[-1]] with panel breaks at each of the ascending ``ends`` too (where
    psi jumps: the rule integrates each smooth piece)."""
    pieces = [_rule(a_, b_, width, n, flat, flat_width) for a_, b_ in zip([lo, *ends[:-1]], ends)]
    breaks = np.concatenate([pieces[0][2]] + [b_[1:] for _, _, b_ in pieces[1:]])
    return np.concatenate([p_[0] for p_ in pieces]), np.concatenate([p_[1] for p_ in pieces]), breaks


def _mp_complex(fn, z, tiny=False):
    """complex(fn(z)) in mpmath: NaN where it fails or overflows float64; with ``tiny``, 0 for
    values below 1e-300 in modulus and NaN for every other value (an underflow test)."""
    try:
        v = fn(mpmath.mpc(z.real, z.imag))
        if tiny:
            return 0.0 if abs(v) < 1e-300 else complex(math.nan, math.nan)
        v = complex(v)
    except (ArithmeticError, ValueError, TypeError):
        return complex(math.nan, math.nan)
    return v if math.isfinite(v.real) and math.isfinite(v.imag) else complex(math.nan, math.nan)


def _talbot_rules(G, u, log_g, ns):
    """psi at u by Talbot with ns[-1] nodes, its error (the largest difference to the rules with
    the other node counts ns, plus rounding) and whether every value is finite. The first counts
    are the checks: (32, 24) states the 24-node value, (24, 32) the more accurate 32-node one."""
    runs = [talbot_invert(G, u, n, log_g=log_g) for n in ns]
    psi = runs[-1][0]
    with np.errstate(invalid="ignore"):
        err = 8.0 * _EPS * sum(size for _, size in runs)
        err = err + np.max([np.abs(p - psi) for p, _ in runs[:-1]], axis=0)
    finite = np.all([np.isfinite(p) for p, _ in runs], axis=0)
    return psi, err, finite, 8.0 * _EPS * sum(size for _, size in runs)


def _psi(G, u, w=None, log_g=None):
    """psi_0 at the nodes u (Talbot, 24 nodes), its error (against 32 nodes, plus rounding), what
    was set to zero, and the number of head nodes dropped. Values not above 10 times their error
    are noise (psi_0 far below the rounding of the contour sum); they are dropped and their bound
    |psi| + err is returned.

    With ``log_g`` (a logarithm of G: the terms are formed in logs, G may overflow on the contour
    where G e^(s u) does not; ``w`` the weights) the small u are treated apart: G = exp(-s^(3/4))
    grows on the contour and the 24-node rule misses psi ~ exp(-c u^-3) by far more than its size
    (10% at u = 0.2, measured), the contour needs more nodes as u falls. Below the first run of 16
    resolved nodes, windows of 48 nodes are redone with (48, 64), (96, 128), (160, 200) nodes (the
    terms shrink as the contour widens, the rounding stays below psi) until one is resolved or
    negligible, down to a window where every node is negligible (w (|psi| + err) < 1e-25 of the
    mass) or none resolves; the nodes below are the head, dropped (the caller bounds its mass by
    the defect at r = 0 and its density by that mass in Gaussians of t <= the head's end)."""
    # G that grows on the contour (log_g) converges slower: 4e-8 relative at u = 0.3 with 24 nodes,
    # 5e-13 with 32, for exp(-s^(3/4)); there the 32-node value is stated (48 nodes would round
    # worse at large u, where the tail is joined)
    psi, err, finite, rounding = _talbot_rules(G, u, log_g, (32, 24) if log_g is None else (24, 32))
    head = 0
    if log_g is not None:
        resolved = finite & (np.abs(psi) > _CLEAN * err)
        run = np.convolve(resolved.astype(float), np.ones(_HEAD_RUN), mode="valid") == _HEAD_RUN
        if not np.any(run):
            return None, None, None, 0
        head = int(np.argmax(run))
        scale = float(np.sum((w * np.abs(psi))[head:][resolved[head:]]))
        while head > 0:
            lo_ = max(0, head - 48)
            p_, e_, f_ = np.zeros(head - lo_), np.zeros(head - lo_), np.zeros(head - lo_, dtype=bool)
            acc = np.zeros(head - lo_, dtype=bool)
            for ns in _HEAD_RULES:
                todo = np.flatnonzero(~acc)
                p_[todo], e_[todo], f_[todo], _ = _talbot_rules(G, u[lo_:head][todo], log_g, ns)
                with np.errstate(invalid="ignore"):
                    tiny = w[lo_:head] * (np.abs(p_) + e_) < 1e-25 * scale
                    acc |= f_ & ((np.abs(p_) > _CLEAN * e_) | tiny)
                if np.all(acc):
                    break
            # the accepted nodes next to the head (a contiguous run down from it) join the table
            k = int(np.argmin(acc[::-1])) if not np.all(acc) else acc.size
            if k == 0:
                break
            new = head - k
            psi[new:head], err[new:head], finite[new:head] = p_[-k:], e_[-k:], f_[-k:]
            head = new
            if k < acc.size or np.all(tiny[-k:]):
                break
        # above the head, values whose error is the rule's (not rounding) and not negligible
        # (1e-4 relative next to the head): redone with more nodes where that is more accurate
        with np.errstate(invalid="ignore"):
            poor = (err > 1e-10 * np.abs(psi)) & (err > 10.0 * rounding) & (w * err > 1e-25 * scale)
        poor = np.flatnonzero(poor & (np.arange(u.size) >= head))
        for ns in _HEAD_RULES[:2]:
            if poor.size == 0:
                break
            p_, e_, f_, _ = _talbot_rules(G, u[poor], log_g, ns)
            better = f_ & (e_ < err[poor])
            psi[poor[better]], err[poor[better]] = p_[better], e_[better]
            poor = poor[~better | (e_ > 1e-10 * np.abs(p_))]
    bad = ~finite
    if np.any(bad[head:]):
        return None, None, None, 0
    psi, err = psi.copy(), err.copy()
    psi[:head], err[:head] = 0.0, 0.0
    keep = np.abs(psi) > _CLEAN * err
    dropped = np.where(keep, 0.0, np.abs(psi) + err)
    return np.where(keep, psi, 0.0), np.where(keep, err, 0.0), dropped, head


def _continued_cosh_powers(expr):
    """cosh(x)^p with p not an integer as exp(p (x + log(1 + e^(-2x)) - log 2)) (sech likewise).

    G(s) is evaluated at z = sqrt(s), Re z > 0, on Talbot's contour, where cosh(z) takes negative
    values: its principal power jumps there, and the inversion misses the branch that is analytic
    off the negative real axis. With Re x > 0, |e^(-2x)| < 1 and the principal log(1 + e^(-2x))
    is that branch (1/cosh(0.3 r)^2.5 in d = 256 failed the reconstruction check before)."""

    def continued(e):
        x, p = e.base.args[0], (e.exp if isinstance(e.base, sympy.cosh) else -e.exp)
        return sympy.exp(p * (x + sympy.log(1 + sympy.exp(-2 * x)) - sympy.log(2)))

    return expr.replace(
        lambda e: (
            isinstance(e, sympy.Pow) and isinstance(e.base, (sympy.cosh, sympy.sech)) and not e.exp.is_integer
        ),
        continued,
    )


def rational_fractions(g_expr):
    """(polynomial part [p_0, p_1, ...], partial fractions [(c, n, z)]) (mpmath, _POLE_DIGITS digits)
    of G(s) = g(sqrt(s)) = sum p_j s^j + sum c (s - z)^-n when G is a rational function of s = r^2
    with at least one pole (:func:`._partial.partial_fractions`); None otherwise."""
    pq = _in_r2(g_expr)
    if pq is None:
        return None
    with mpmath.workdps(_POLE_DIGITS):
        pf = partial_fractions(pq[0] / pq[1], _T, _POLE_DIGITS)
    if pf is None or not pf[1]:
        return None
    return pf


def _rational_poles(g_expr):
    """(coefficients c, orders n, poles z) when G(s) = g(sqrt(s)) is a strictly proper rational
    function of s = r^2 with some pole off the real axis and every pole in Re z < 0: its partial
    fractions sum c (s - z)^-n are the Laplace transform of psi_0(u) = Re sum c u^(n-1)/(n-1)!
    e^(z u), exactly (Talbot's contour misses poles off the negative real axis). None otherwise
    (Talbot inverts poles on the negative axis)."""
    pf = rational_fractions(g_expr)
    if pf is None or any(c != 0 for c in pf[0]):
        return None
    fracs = pf[1]
    with mpmath.workdps(_POLE_DIGITS):
        poles = np.array([complex(z) for _, _, z in fracs])
        if np.max(poles.real) >= 0 or not any(isinstance(z, mpmath.mpc) for _, _, z in fracs):
            return None
        coefs = np.array([complex(c) for c, _, _ in fracs])
    return coefs, np.array([n for _, n, _ in fracs], dtype=float), poles


def _rational_psi(coefs, orders, poles, u, with_error=True):
    """psi_0(u) = Re sum c u^(n-1)/(n-1)! e^(z u) (real for real G: conjugate pairs), its rounding
    bound (8 eps sum |term| (n + |z| u)), as _psi returns them (nothing dropped, no head)."""
    zu = np.outer(u, poles)
    terms = coefs * u[:, None] ** (orders - 1.0) / sc.gamma(orders) * np.exp(zu)
    psi = terms.sum(axis=1).real
    err = np.zeros_like(psi)
    if with_error:
        err = 8.0 * _EPS * (np.abs(terms) * (orders + np.abs(zu))).sum(axis=1)
    return psi, err, np.zeros_like(psi), 0


def _erf_terms(g_expr):
    """(coefficients c_j, rates b_j > 0) when g(r) = sum c_j erf(b_j r)/r: then, from
    erf(b r)/r = pi^(-1/2) int_0^(b^2) u^(-1/2) e^(-u r^2) du, psi_0(u) = pi^(-1/2) u^(-1/2)
    sum_(b_j^2 > u) c_j exactly, with jumps at u = b_j^2 that Talbot's inversion cannot hold
    (erf(r)/r in d = 3 was refused so). None otherwise."""
    terms = {}
    for term in sympy.Add.make_args(sympy.expand(g_expr * R)):
        coef, rest = term.as_independent(R, as_Add=False)
        if not isinstance(rest, sympy.erf):
            return None
        rate, lin = rest.args[0].as_independent(R, as_Add=False)
        if lin != R or not rate.is_Number or not coef.is_Number or rate == 0:
            return None
        # erf is odd: c erf(-b r) = -c erf(b r)
        b, c = abs(float(rate)), float(coef) * (1.0 if rate > 0 else -1.0)
        terms[b] = terms.get(b, 0.0) + c
    terms = {b: c for b, c in terms.items() if c != 0.0}
    if not terms or not all(math.isfinite(b) and math.isfinite(c) for b, c in terms.items()):
        return None
    rates = np.array(sorted(terms))
    return np.array([terms[b] for b in rates]), rates


def _erf_psi(coefs, rates, u, with_error=True):
    """psi_0(u) = pi^(-1/2) u^(-1/2) sum_(b_j^2 > u) c_j of :func:`_erf_terms` (a node never lies on a
    jump: the rule has a break there), its rounding bound, as _psi returns them."""
    live = u[:, None] < rates[None, :] ** 2
    psi = (live * coefs[None, :]).sum(axis=1) / np.sqrt(math.pi * u)
    err = np.zeros_like(psi)
    if with_error:
        err = 4.0 * _EPS * (live * np.abs(coefs)[None, :]).sum(axis=1) / np.sqrt(math.pi * u)
    return psi, err, np.zeros_like(psi), 0


def _stable_form(expr):
    """(C, c, beta) when ``expr`` is C exp(-c r^alpha) with C, c > 0 and 0 < alpha < 2 (beta =
    alpha/2): psi is then C times the positive beta-stable density at scale c^(1/beta), computed
    by :func:`_kanter_psi` instead of Talbot. None otherwise."""
    coef, rest = expr.as_independent(R, as_Add=False)
    if not isinstance(rest, sympy.exp):
        return None
    c, power = (-rest.args[0]).as_independent(R, as_Add=False)
    if not (isinstance(power, sympy.Pow) and power.base == R and power.exp.is_Number):
        return None
    try:
        C, c, alpha = float(coef), float(c), float(power.exp)
    except TypeError:
        return None
    if not (C > 0 and c > 0 and 0.0 < alpha < 2.0 and math.isfinite(C * c)):
        return None
    return C, c, alpha / 2.0


def _kanter_log_a(theta, sin_theta, beta):
    """log A(theta) of Kanter's representation, A = (sin(beta theta)/sin theta)^(beta/(1-beta))
    (sin((1-beta) theta)/sin theta): ratios of order 1 (no cancellation between large logs), with
    sin theta given apart (from theta near 0, from pi - theta near pi: each exact where small)."""
    return beta / (1.0 - beta) * np.log(np.sin(beta * theta) / sin_theta) + np.log(
        np.sin((1.0 - beta) * theta) / sin_theta
    )


def _kanter_nodes(beta, n, x_max):
    """Nodes (log A, weights) of Kanter's integral over theta in (0, pi), ascending in A.

    n-point Gauss-Legendre panels: on theta in (0, pi/2] halving towards 0 (at small x the
    integrand is a narrow bump there), and in log w, w = pi - theta, from pi/2 down to where A z
    exceeds e^6 for x up to ``x_max``, with breaks at equal steps of log A (A grows like
    w^(-1/(1-beta))): each panel holds a bounded change of the integrand A e^(-A z), whatever beta.
    """
    tu, wu = panel_rule(math.pi / 2.0 * np.r_[0.0, 2.0 ** -np.arange(_KANTER_HALVINGS, -1, -1.0)], n)
    w_min = min(1e-3, 1e-3 * x_max**-beta)
    ly = np.linspace(math.log(math.pi / 2.0), math.log(w_min), 4001)  # descending log w
    dense = _kanter_log_a(math.pi - np.exp(ly), np.sin(np.exp(ly)), beta)  # ascending
    steps = int(math.ceil((dense[-1] - dense[0]) / _KANTER_STEP))
    breaks = np.interp(np.linspace(dense[0], dense[-1], steps + 1), dense, ly)
    y, wy = panel_rule(breaks[::-1], n)
    ww = np.exp(y[::-1])
    log_a = _kanter_log_a(np.r_[tu, math.pi - ww], np.sin(np.r_[tu, ww]), beta)
    return log_a, np.r_[wu, (wy * np.exp(y))[::-1]]


def _kanter_log_density(x, beta, n, x_max):
    """log f_beta(x) of the positive beta-stable density (E exp(-s X) = exp(-s^beta)) by Kanter's
    representation f(x) = beta/(1-beta) x^(-1/(1-beta)) (1/pi) int_0^pi A e^(-A z) dtheta,
    z = x^(-beta/(1-beta)), A(theta) = sin(beta theta)^(beta/(1-beta)) sin((1-beta) theta) /
    sin(theta)^(1/(1-beta)): a positive integrand (no cancellation), summed in logs over the nodes
    where A z lies in [e^-38, max(e^6, A(0) z + 45)] (beyond, the terms are below e^-36 of the
    largest). Returns the logs and whether the nodes reach far enough for each x."""
    g = 1.0 / (1.0 - beta)
    log_a, wt = _kanter_nodes(beta, n, x_max)
    log_z = -beta * g * np.log(x)
    # A z from where A e^(-A z) ~ A (A z < e^-38: negligible) to e^6, or to 45 beyond its smallest
    # value A(0) z where that exceeds e^6 (small x: a narrow bump at theta = 0)
    top_az = np.maximum(math.exp(6.0), np.exp(log_a[0] + log_z) + 45.0)
    i0 = np.maximum(np.searchsorted(log_a, -log_z - 38.0) - n, 0)
    i1 = np.minimum(np.searchsorted(log_a, np.log(top_az) - log_z) + n, log_a.size)
    out = np.full(x.shape, -np.inf)
    for b0 in range(0, x.size, _KANTER_BLOCK):  # bounded temporaries (block x span nodes)
        blk = slice(b0, b0 + _KANTER_BLOCK)
        span = int(np.max(i1[blk] - i0[blk], initial=1))
        idx = i0[blk, None] + np.arange(span)[None, :]
        la = np.r_[log_a, np.full(span, -np.inf)][idx]
        e = la - np.exp(la + log_z[blk, None])
        e = np.where(np.isfinite(e), e, -np.inf)
        top = np.max(e, axis=1)
        live = np.isfinite(top)  # else A z overflows at every node: the density underflows to 0
        total = np.sum(np.exp(e[live] - top[live, None]) * np.r_[wt, np.zeros(span)][idx[live]], axis=1)
        xb = x[blk][live]
        out[b0 + np.flatnonzero(live)] = (
            math.log(beta * g / math.pi) - g * np.log(xb) + top[live] + np.log(total)
        )
    return out, log_a[-1] >= np.log(top_az) - log_z


def _kanter_psi(C, c, beta, u, with_error=True):
    """psi(u) = C c^(-1/beta) f_beta(u c^(-1/beta)) of C exp(-c s^beta) (24-point panels), its
    error (against 16-point panels, plus the rounding of logs of size |log psi|; with
    ``with_error`` False, none), as _psi returns them (nothing dropped, no head)."""
    scale = c ** (-1.0 / beta)
    x = u * scale
    x_max = float(np.max(x))
    fine, reached = _kanter_log_density(x, beta, 24, x_max)
    lead = math.log(C * scale)
    psi = np.exp(fine + lead)
    err = np.zeros_like(psi)
    if with_error:
        coarse, _ = _kanter_log_density(x, beta, 16, x_max)
        # logs of size |log psi|, and log A's ratios taken to the power beta/(1-beta)
        rounding = 8.0 * _EPS * (np.abs(fine) + abs(lead) + 16.0 + 1.0 / (1.0 - beta)) * psi
        err = np.where(reached, np.abs(psi - np.exp(coarse + lead)) + rounding, np.inf)
    return psi, err, np.zeros_like(psi), 0


def gaussian_mixture_transform(
    atom: RadialKernel,
    dim: int,
    *,
    length: float,
    smooth_at_origin: bool,
    origin_terms: Sequence[tuple[float, float, int]] = (),
    far_terms: Sequence[tuple[float, float]] = (),
    max_rel_error: float = FIRM_REL_ERROR,
) -> RadialTransform | None:
    """mu_d of ``atom`` from its Gaussian scale-mixture representation (module docstring), or None.

    Parameters
    ----------
    atom : RadialKernel
        An atomic kernel without compact support.
    dim : int
        Dimension d >= 1.
    length : float
        A characteristic length of k (sets the range of t around 1 / length^2).
    smooth_at_origin : bool
        The analysis' verdict that k is analytic in r^2 at 0. When False, k(r) = k(0) + sum_j c_j
        r^(beta_j) + ... (``origin_terms``) and psi has the power tail sum_j A_j t^(-1-beta_j/2)
        (:func:`_power_tail`), taken analytically beyond the join T (module docstring).
    origin_terms : sequence of (float, float, int)
        The analysis' non-smooth terms (coef, exponent, log power) of k at 0 (with
        ``smooth_at_origin`` False).
    far_terms : sequence of (float, float)
        The terms (coef, exponent) of k(r) ~ sum coef r^-exponent at infinity, for a kernel that
        decays like a power: psi(t) ~ sum_j B_j t^(e_j/2 - 1) at small t (:func:`_low_terms`) is
        taken analytically below a join T_low (the widest Gaussians: mu ~ rho^(e_1 - d) at 0).
    max_rel_error : float, default ``FIRM_REL_ERROR`` (1e-6)
        The largest stated relative error of the density returned; beyond it, None.

    Returns
    -------
    RadialTransform or None
        ``method = "numeric:gaussian-mixture+talbot"`` (``+kanter`` for C exp(-c r^a), ``+poles``
        for a rational G with complex poles: psi exact, not inverted); None when the representation
        does not apply or is not confirmed to the stated accuracy.
    """
    if atom.support is not None:
        return None
    tail_terms = None
    if not smooth_at_origin:
        tail_terms = _power_tail(origin_terms)
        if tail_terms is None:  # a log term at 0
            return None
    a = _gaussian_factor(atom.expr)
    # psi_0 exact for sums of erf(b r)/r (its jumps would defeat Talbot); their compact psi_0 may
    # start away from 0 (erf(r)/r - erf(r/2)/r, whose decay reads as a hidden factor e^(-r^2/4))
    erf = None if tail_terms is not None else _erf_terms(sympy.powsimp(atom.expr * sympy.exp(a * R**2)))
    if a == 0 and erf is None:
        a = _hidden_gaussian_factor(atom.expr, length)
    if tail_terms is not None and tail_terms[0][0] < 0 and a != 0:
        # psi < 0 at infinity under a Gaussian factor: the lump at t = a then holds a signed head
        # whose distance bound is not small (m+ = 1.43 +- 0.26 for exp(-r^2/2) (2 - exp(-r)) in d = 3)
        return None
    low_terms = _low_terms(far_terms, dim) if a == 0 else None
    # b^p(r) as exp(p log b), so that the factor cancels symbolically (no e^(-a s) e^(a s) in floats)
    base_exp = [p for p in atom.expr.atoms(sympy.Pow) if p.exp.has(R) and not p.base.has(R)]
    expr = atom.expr.xreplace({p: sympy.exp(p.exp * sympy.log(p.base)) for p in base_exp})
    expr = _continued_cosh_powers(expr)
    g_expr = sympy.powsimp(expr * sympy.exp(a * R**2))
    if g_expr.has(sympy.erfc):
        g_expr = _scaled_erfc(g_expr)
    gz = complex_formula(g_expr)
    if gz is None:
        return None
    a = float(a)
    log_g = None
    if tail_terms is not None:
        lg = complex_formula(sympy.expand_log(sympy.log(g_expr), force=True))
        if lg is None:
            return None

        def log_g(s):
            return np.asarray(lg(np.sqrt(s)), dtype=np.complex128) * np.ones(s.shape)

    gm = sympy.lambdify(R, g_expr, modules=[_ERFCX_MPMATH, "mpmath"])

    def G(s):
        z = np.sqrt(s)
        with np.errstate(all="ignore"):
            out = np.asarray(gz(z), dtype=np.complex128) * np.ones(z.shape)
        # float64 over- or underflow of intermediate values (cosh(z) in 1/cosh(z) at large |z|):
        # those points again in mpmath, whose exponent range is unbounded
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size > _MP_POINTS:
            # many: a spread sample decides whether they are all float64 underflow (then 0); any
            # other value leaves them NaN and the route declines. The reconstruction of k and the
            # 24/32-node agreement check the outcome.
            sample = [_mp_complex(gm, zz, tiny=True) for zz in z.ravel()[bad[:: bad.size // 256 + 1]]]
            out.ravel()[bad] = 0.0 if all(v == 0 for v in sample) else math.nan
        elif bad.size:
            out.ravel()[bad] = [_mp_complex(gm, zz) for zz in z.ravel()[bad]]
        return out

    t_s = 1.0 / length**2
    lo, hi = math.log(t_s / _SPAN), math.log(t_s * _SPAN)
    width = min(0.5, 2.0 / math.sqrt(dim))
    # u < a / (16 d): g_d(rho, a + u) / g_d(rho, a) - 1 = O(d u / a) over the bulk of rho
    flat, flat_width = (math.log(a / (16.0 * dim)) if a > 0 else -math.inf), 1.0
    stable = _stable_form(atom.expr)
    if stable is not None:
        # the stable density rises like exp(-A(0) x^(-beta/(1-beta))), A(0) = beta^(beta/(1-beta))
        # (1 - beta), x = u c^(-1/beta): below e^-800 under x_low (the rule starts there), with slope ~
        # beta/(1-beta) in log x up to its peak near x = A(0)^((1-beta)/beta) (panels narrower than
        # the Gaussians' bump there where beta -> 1; one e-fold beyond, a power tail)
        _, c, beta = stable
        a0 = beta ** (beta / (1.0 - beta)) * (1.0 - beta)
        log_c = math.log(c) / beta
        lo = log_c - (1.0 - beta) / beta * math.log(800.0 / a0)  # below or above the default
        flat = min(hi, log_c + (1.0 - beta) / beta * math.log(a0) + 1.0)
        flat_width = min(width, 2.0 * (1.0 - beta) / beta)
    if erf is not None:
        # psi_0 = 0 beyond the largest b_j^2: the rule ends there, with a break at each jump
        ends = 2.0 * np.log(erf[1])
        lo = min(lo, float(ends[0]) - 2.0 * width)
        u, w, breaks = _rule_with_ends(lo, ends, width, 24, flat, flat_width)
        uc, wc, _ = _rule_with_ends(lo, ends, width, 16, flat, flat_width)
    else:
        u, w, breaks = _rule(lo, hi, width, 24, flat, flat_width)
        uc, wc, _ = _rule(lo, hi, width, 16, flat, flat_width)
    rational = _rational_poles(g_expr) if stable is None and erf is None and tail_terms is None else None
    with np.errstate(all="ignore"):
        if erf is not None:
            erf_coefs, erf_rates = erf
            psi, err, dropped, head = _erf_psi(erf_coefs, erf_rates, u)
            psic, _, _, _ = _erf_psi(erf_coefs, erf_rates, uc, with_error=False)
        elif stable is not None:
            C, c, beta = stable
            psi, err, dropped, head = _kanter_psi(C, c, beta, u)
            psic, _, _, _ = _kanter_psi(C, c, beta, uc, with_error=False)
        elif rational is not None:
            coefs, orders, poles = rational
            psi, err, dropped, head = _rational_psi(coefs, orders, poles, u)
            psic, _, _, _ = _rational_psi(coefs, orders, poles, uc, with_error=False)
        else:
            psi, err, dropped, head = _psi(G, u, w, log_g)
            psic, _, _, _ = _psi(G, uc, wc, log_g)
    if psi is None or psic is None:
        return None
    tail, tail_mass = None, 0.0
    if tail_terms is not None:
        # the join T: a panel end where Talbot's psi and the power tail agree best over the decade
        # below (Talbot's rounding grows like t^gamma_1, the tail's truncation error falls like
        # t^-(gamma_4 - gamma_1)); beyond T the tail's error only falls
        A, gam = tail_terms
        with np.errstate(all="ignore"):
            # psi(t) = psi_0(t - a): the expansion is in t
            asym = _power_sum(A, -gam, float(a) + u)
            mis = np.where(asym * A[0] > 0, (np.abs(psi - asym) + err + dropped) / np.abs(asym), np.inf)
        per_panel = np.max(mis.reshape(-1, 24), axis=1)
        k_win = int(math.ceil(math.log(10.0) / (breaks[-1] - breaks[-2])))  # the panels at large t
        windowed = np.array([np.max(per_panel[max(0, p - k_win + 1) : p + 1]) for p in range(per_panel.size)])
        windowed[breaks[1:] < math.log(100.0 * t_s)] = np.inf
        p_join = int(np.argmin(windowed))
        delta = float(windowed[p_join])
        if not delta <= _TAIL_FIT:
            return None
        T = a + float(math.exp(breaks[p_join + 1]))
        n_keep, nc_keep = 24 * (p_join + 1), 16 * (p_join + 1)
        u, w, psi, err, dropped = u[:n_keep], w[:n_keep], psi[:n_keep], err[:n_keep], dropped[:n_keep]
        uc, wc, psic = uc[:nc_keep], wc[:nc_keep], psic[:nc_keep]
        tail = (A, gam, T, _MARGIN * delta)
        tail_mass = float(np.sum(A * T ** (-gam) / gam))
        # noise dropped inside the range: a pointwise error of the density (in d = 256 a
        # density error where psi is tiny is not small against mu there)
        err, dropped = err + dropped, np.zeros_like(dropped)
        t_head = float(u[head])  # the head: u below the first resolved node, psi set to 0 there
    low, joined_low = None, False
    if low_terms is not None:
        # the join T_low: a panel start where Talbot's psi and the expansion from k's decay agree
        # best over the decade above (the expansion's truncation error falls like
        # u^(delta_2 - delta_1) towards 0); below T_low psi is the expansion. Not met: the rule's
        # range alone (the defect at r = 0 then decides)
        B, dl = low_terms
        with np.errstate(all="ignore"):
            asym = _power_sum(B, dl, u)
            mis = np.where(asym > 0, (np.abs(psi - asym) + err + dropped) / asym, np.inf)
        per_panel = np.max(mis.reshape(-1, 24), axis=1)
        k_win = int(math.ceil(math.log(10.0) / (breaks[1] - breaks[0])))
        windowed = np.array([np.max(per_panel[p : p + k_win]) for p in range(per_panel.size)])
        windowed[breaks[: per_panel.size] > math.log(t_s / 100.0)] = np.inf
        windowed[24 * np.arange(per_panel.size) < head] = np.inf
        p_low = int(np.argmin(windowed))
        delta_low = float(windowed[p_low])
        if delta_low <= _TAIL_FIT:
            joined_low = True
            T_low = float(math.exp(breaks[p_low]))
            u, w, psi, err, dropped = (v[24 * p_low :] for v in (u, w, psi, err, dropped))
            uc, wc, psic = (v[16 * p_low :] for v in (uc, wc, psic))
            err, dropped = err + dropped, np.zeros_like(dropped)
            # terms with delta_j <= d/2 (mu ~ rho^(2 delta_j - d) at 0, or log(1/rho) at equality) in
            # closed form; the others (finite at 0) as nodes of the same rule below T_low, down to
            # where they hold 1e-18 of the mass
            closed = dl <= dim / 2.0
            if not np.all(closed):
                tv = float(np.sum(np.abs(w * psi)))
                Br, dr = B[~closed], dl[~closed]
                x_lo = max(float(np.min(np.log(1e-18 * tv * dr / np.abs(Br)) / dr)), breaks[p_low] - 200.0)
                # psi is a sum of powers there: panels as wide as the Gaussians' bump in log t allows
                w_low = min(2.0, 2.0 / math.sqrt(dim))
                x_lo = min(x_lo, breaks[p_low] - w_low)
                extra = []
                for n_ in (24, 16):
                    ur, wr, _ = _rule(x_lo, breaks[p_low], w_low, n_)
                    pr = _power_sum(Br, dr, ur)
                    extra.append((ur, wr, pr))
                (ur, wr, pr), (urc, wrc, prc) = extra
                er = delta_low * _power_sum(np.abs(B), dl, ur)
                u, w, psi, err = np.r_[ur, u], np.r_[wr, w], np.r_[pr, psi], np.r_[er, err]
                dropped = np.r_[np.zeros(ur.size), dropped]
                uc, wc, psic = np.r_[urc, uc], np.r_[wrc, wc], np.r_[prc, psic]
            if np.any(closed):
                low = (B[closed], dl[closed], T_low, _MARGIN * delta_low)
                low_mass = float(np.sum(B[closed] * T_low ** dl[closed] / dl[closed]))
    wpsi, werr = w * psi, w * err
    total = float(np.sum(np.abs(wpsi)))
    if not total > 0:
        return None
    # nodes that carry less than 1e-18 of int |psi| (tiny u, far tails): dropped, counted as dropped
    tiny = w * (np.abs(psi) + err) < 1e-18 * total
    dropped_tv = float(np.sum(w * dropped) + np.sum((w * (np.abs(psi) + err))[tiny]))
    u, w, psi, err = u[~tiny], w[~tiny], psi[~tiny], err[~tiny]
    wpsi, werr = w * psi, w * err
    small = wc * np.abs(psic) < 1e-18 * total
    uc, wc, psic = uc[~small], wc[~small], psic[~small]
    k0 = float(np.asarray(atom(np.zeros(1)), dtype=np.float64)[0])
    lump_err = 0.0
    if a > 0:
        # psi_0 may keep mass arbitrarily close to u = 0 (G ~ 1/log s: int_0^u psi_0 ~ 1/|log u|):
        # the mass below the rule, k(0) - sum W psi, is one Gaussian at t = a (each t in
        # [a, a + u_min] gives the same Gaussian to TV distance sqrt(d/8) u_min / a)
        # (with a power tail: the tail's mass is its own; the head's nodes, set to 0, join the lump)
        lump = k0 - float(np.sum(wpsi)) - tail_mass
        u_min = float(math.exp(lo)) if tail is None else max(float(math.exp(lo)), t_head)
        lump_err = abs(lump) * math.sqrt(dim / 8.0) * u_min / a
        u, w, psi, err = np.r_[0.0, u], np.r_[1.0, w], np.r_[lump, psi], np.r_[0.0, err]
        wpsi, werr = w * psi, w * err
    # the representation reproduces k (a missed pole or an atom of psi does not)
    r = length * np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 121)])
    with np.errstate(all="ignore"):
        kr = np.asarray(atom(r), dtype=np.float64)
        rec = np.exp(-np.outer(r**2, a + u)) @ wpsi
        if tail is not None:
            rec = rec + _tail_kernel(r, A, gam, T)
        if low is not None:
            rec = rec + _low_kernel(r, *low[:3])
    defect = np.abs(rec - kr)
    if not np.all(np.isfinite(defect)) or float(np.max(defect)) > _RECONSTRUCT * total:
        return None
    t, tc = a + u, a + uc
    mix = _Mixture(t, wpsi, werr, dim, tail, low)
    if a > 0:
        uc, wc, psic = np.r_[0.0, uc], np.r_[1.0, wc], np.r_[k0 - float(np.sum(wc * psic)) - tail_mass, psic]
        tc = a + uc
    coarse = _Mixture(tc, wc * psic, np.ones(tc.size), dim, tail, low)
    # test frequencies: where the Gaussians of the mixture put their radial mass, sqrt(2 d t) for the
    # t that carry psi, and beyond (with a power tail, up to t = T * _TAIL_SPAN)
    heavy = t[np.abs(wpsi) > 1e-16 * total]
    t_top = heavy.max() if tail is None else T * _TAIL_SPAN
    rho = np.geomspace(
        1e-2 * math.sqrt(2.0 * dim * heavy.min()),
        8.0 * math.sqrt(2.0 * dim * t_top),
        400 if tail is None else 800,
    )
    lm, sg, la, le = mix.evaluate(rho)
    lc, sc_, _, _ = coarse.evaluate(rho)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        quad = np.abs(sg * np.exp(lm - la) - sc_ * np.exp(lc - la))  # relative to the amplitude
        rel = quad + np.exp(le - la)
    extra_mass = 0.0 if low is None else low[3] * abs(low_mass)
    if tail is not None:
        extra_mass += tail[3] * abs(tail_mass)
    if tail is not None and not joined_low and a == 0:
        # the head (u < t_head, set to 0) and the mass below the rule: at most m_head, the defect at
        # r = 0 plus what the other errors may hide in it, in Gaussians of t <= t_head, whose
        # density is at most m_head max_(t <= t_head) g_d(rho, t) (the maximum at t = rho^2 / (2 d))
        m_head = float(defect[0]) + float(np.sum(werr)) + extra_mass + _EPS * total
        if np.all(psi[:_HEAD_RUN] >= 0):
            # psi >= 0 on the head (as where it starts): k(r) - (the rest) >= m_head e^(-t_head r^2)
            # for every r, a far sharper bound where k decays fast (e^-90 for exp(-sqrt(r)))
            rh = length * np.geomspace(1e-1, 1e6, 57)
            with np.errstate(all="ignore"):
                eh = np.exp(-np.outer(rh**2, u))
                tk = _tail_kernel(rh, A, gam, T)
                kh = np.asarray(atom(rh), dtype=np.float64)
                resid = np.abs(kh - eh @ wpsi - tk) + eh @ werr + tail[3] * np.abs(tk)
                resid = resid + 4.0 * _EPS * (np.abs(kh) + eh @ np.abs(wpsi))
                bound = np.nanmin(resid * np.exp(t_head * rh**2))
            if bound < m_head:
                m_head = float(bound)
        t_star = np.minimum(rho**2 / (2.0 * dim), t_head)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            lg_head = -(dim / 2.0) * np.log(4.0 * math.pi * t_star) - rho**2 / (4.0 * t_star)
            rel = rel + np.exp(np.log(m_head) + lg_head - la)
    rel = np.where(np.isfinite(rel), rel, np.inf)
    # the relative error is stated where the radial density is within 1e-3 of its peak; beyond,
    # the quadrature's error is integrated with the radial weight into the mass error (the errors
    # of psi count everywhere there, as their total variation)
    lrad = la + (dim - 1) * np.log(rho)
    core = lrad >= float(np.max(lrad)) + math.log(1e-3)
    # rel is relative to the amplitude sum |W psi| g_d; where a signed psi cancels, |mu| is smaller:
    # relative to |mu| except next to mu's zeros (cancelled by more than 10), where the absolute
    # floor (psi's errors, in units of max |mu|) already covers it
    max_log = float(np.max(lm[np.isfinite(lm)])) if np.any(np.isfinite(lm)) else -math.inf
    abs_error = _MARGIN * max(_EPS, float(np.max(np.exp(le - max_log))))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        covered = (la - lm > math.log(10.0)) & (_MARGIN * rel * np.exp(la - max_log) <= abs_error)
        counted = core & ~covered
        rel_mu = rel[counted] * np.exp(la[counted] - lm[counted])
    rel_error = _MARGIN * max(float(np.max(rel_mu)) if rel_mu.size else 0.0, 1e-14)
    if not rel_error <= max_rel_error:
        return None
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # |fine - coarse| with the radial weight in each exponent: the sphere's area, rho^(d-1) and
        # mu over- or underflow apart in high d (d = 256), and so does the difference relative to
        # the amplitude where the Gaussians of the fine rule underflow far out
        lw = log_sphere_area(dim) + (dim - 1) * np.log(rho)
        dens = np.abs(sg * np.exp(lw + lm) - sc_ * np.exp(lw + lc))
        dens = np.where(core, 0.0, dens)
    outside = float(np.sum(0.5 * (dens[1:] + dens[:-1]) * np.diff(rho)))
    if not math.isfinite(outside):
        return None
    mass_error = _MARGIN * (
        float(np.sum(werr)) + dropped_tv + float(defect[0]) + outside + lump_err + extra_mass
    )

    # the sampler's tables read mu at ~650,000 points (erfc(r) in d = 64: 11 s of node sums at ~16 us
    # a point); a verified interpolant of log|mu| in log rho over the test range costs a few thousand
    log_abs_and_sign, interp_mass = log_interpolant(
        mix.values, math.log(rho[0]), math.log(rho[-1]), signed=True, dim=dim
    )
    mass_error += _MARGIN * interp_mass
    rel_error += _INTERP_ERROR

    log_abs_mu = log_form(log_abs_and_sign)

    def mu(x):
        la_, sg_ = log_abs_mu(x)
        with np.errstate(over="ignore", under="ignore"):
            return sg_ * np.exp(la_)

    return RadialTransform(
        mu=mu,
        method="numeric:gaussian-mixture+"
        + (
            "kanter"
            if stable is not None
            else "poles"
            if rational is not None
            else "erf"
            if erf is not None
            else "talbot"
        ),
        rel_error=rel_error,
        abs_error=float(abs_error),
        scale=1.0 / length,
        tail_exponent=math.inf if tail is None else dim + 2.0 * float(np.min(gam)),
        log_abs_mu=log_abs_mu,
        mass_error=mass_error,
    )
