"""Polynomials with odd powers times a Gaussian: k(r) = sum_m c_m r^m exp(-b r^2), some m odd.

Each term has the exact d-dimensional transform (Weber's integral of r^(m + d/2) exp(-b r^2)
J_(d/2-1)(rho r), then Kummer's transformation)

    mu_m(rho) = K_m exp(-x) M(-m/2, d/2, x),   x = rho^2 / (4 b),
    K_m = (4 pi)^(-d/2) Gamma((d+m)/2) / (Gamma(d/2) b^((d+m)/2)),

M Kummer's confluent hypergeometric function. For even m the series of M stops at k = m/2 (a
Laguerre polynomial: the even terms are the ``poly_gaussian`` closed form); for odd m the terms
t_k = (-m/2)_k x^k / ((d/2)_k k!) alternate for k <= (m-1)/2 and keep one sign beyond, where they
peak near k = x - d/2 with a width ~ sqrt(x): the sum is formed in logs over the window of terms
within e^-45 of the largest (no overflow in d = 256: exp(-x) times terms of size exp(x)), and its
rounding is bounded by 4 eps times the sum of the moduli (counted as lost digits, as elsewhere).
Beyond x_a = max(16 (d/2 + m)(1 + m), 400) the asymptotic expansion takes over,

    exp(-x) M(-m/2, d/2, x) ~ Gamma(d/2)/Gamma(-m/2) x^(-m/2-d/2) sum_j (d/2+m/2)_j (1+m/2)_j / (j! x^j)

(its other part is exp(-x) times a polynomial: below every power there), summed until a term falls
below 1e-17 of the sum (at x >= x_a its terms fall by 8x or more each for the first d/2 of them). An odd power r^m is a
kink at the origin: mu ~ rho^-(d+m) far out (the smallest odd m sets the tail).

The density is read through a verified log interpolant (:func:`._forms.log_interpolant`) on
rho in [1e-6, 1e4] / sqrt(b) and directly outside. Method "closed-form:odd-polynomial-gaussian".
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
import sympy

from .._numerics.special import log_sphere_area
from ..kernels._parse import R
from ._forms import log_form, log_interpolant, vectorised
from ._registry import builder
from ._types import RadialTransform

__all__ = []  # private module

_EPS = np.finfo(np.float64).eps
_WINDOW = 45.0  # terms below e^-45 of the largest are dropped (1e-19 each, a few thousand at most)
_REL_ERROR = 1e-11  # stated where the sum loses fewer than 2 digits (the rounding bound counts beyond)
_BLOCK = 64  # rho values per vectorised block
_ROUNDING = 4.0 * _EPS  # per term summed, times the number of terms and the sum of their moduli


def _log_poch_sign(a, n):
    """log|(a)_k| and its sign for k = 0, ..., n, (a)_k = a (a + 1) ... (a + k - 1) as running sums of
    log|a + i| (exact for a non-positive integer a while (a)_k != 0, where Gamma(a) is infinite)."""
    steps = a + np.arange(n, dtype=np.float64)
    with np.errstate(divide="ignore"):
        lp = np.concatenate([[0.0], np.cumsum(np.log(np.abs(steps)))])
    sp = np.concatenate([[1.0], np.cumprod(np.sign(steps))])
    return lp, sp


class _Term:
    """exp(-x) M(-m/2, B, x) for one power m, in logs: for even m the finite alternating sum k <= m/2;
    for odd m the series below x_a, the asymptotic expansion above."""

    def __init__(self, m, half_d):
        self.m, self.B = m, half_d
        self.a = -0.5 * m
        self.even = m % 2 == 0
        self.x_a = math.inf if self.even else max(16.0 * (half_d + m) * (1.0 + m), 400.0)
        if not self.even:  # Gamma(-m/2): log|.| and sign
            self.log_ga = float(sc.gammaln(self.a))
            self.sign_ga = float(sc.gammasgn(self.a))

    def series(self, x):
        """(log|S|, sign, log of the sum of moduli times the number of terms) for x < x_a: blocks of sorted x, each
        summing the alternating head k <= (m+1)/2 and, for odd m, the window of k around the peak
        k* ~ x - B (the terms outside are below e^-45 of the peak: a Poisson-like spread of
        12 sqrt(x + B)); for even m the head k <= m/2 is the whole (finite) sum."""
        out = [np.empty(x.shape) for _ in range(3)]
        order = np.argsort(x, kind="stable")
        head = self.m // 2 if self.even else (self.m + 1) // 2
        for s in range(0, x.size, _BLOCK):
            idx = order[s : s + _BLOCK]
            xb = x[idx]
            if self.even:
                k_hi = head
                k = np.arange(head + 1, dtype=np.float64)
            else:
                width = 12.0 * math.sqrt(float(xb[-1]) + self.B) + 60.0
                k_lo = max(0, int(float(xb[0]) - self.B - width))
                k_hi = int(max(float(xb[-1]) - self.B, 0.0) + width)
                k = np.unique(np.concatenate([np.arange(head + 1), np.arange(k_lo, k_hi + 1)])).astype(
                    np.float64
                )
            lp_all, sp_all = _log_poch_sign(self.a, k_hi)
            lp, sp = lp_all[k.astype(np.intp)], sp_all[k.astype(np.intp)]
            lb = sc.gammaln(self.B + k) - sc.gammaln(self.B) + sc.gammaln(k + 1.0)
            with np.errstate(divide="ignore"):
                lx = np.log(xb)[:, None]
                lt = lp[None, :] - lb[None, :] + np.where(k[None, :] > 0, k[None, :] * lx, 0.0)
            lt = lt - xb[:, None]
            peak = np.max(lt, axis=1)
            keep = lt >= peak[:, None] - _WINDOW
            e = np.where(keep, np.exp(lt - peak[:, None]), 0.0)
            total = e @ sp
            size = e.sum(axis=1)
            with np.errstate(divide="ignore"):
                out[0][idx] = peak + np.log(np.abs(total))
            out[1][idx] = np.sign(total)
            # rounding size: the moduli's sum times the number of terms summed
            out[2][idx] = peak + np.log(size) + np.log(keep.sum(axis=1))
        return out

    def asymptotic(self, x):
        """(log|S|, sign, log rounding size) for x >= x_a (the terms fall: the sum, times their number)."""
        lx = np.log(x)
        total = np.ones(x.shape)
        term = np.ones(x.shape)
        for j in range(200):
            term = term * ((self.B - self.a + j) * (1.0 - self.a + j) / ((j + 1.0) * x))
            total = total + term
            if np.all(np.abs(term) <= 1e-17 * np.abs(total)):
                break
        la = math.lgamma(self.B) - self.log_ga + (self.a - self.B) * lx + np.log(np.abs(total))
        return la, np.full(x.shape, self.sign_ga) * np.sign(total), la + math.log(j + 2.0)

    def __call__(self, x):
        la, sg, ls = (np.empty(x.shape) for _ in range(3))
        low = x < self.x_a
        if np.any(low):
            la[low], sg[low], ls[low] = self.series(x[low])
        if np.any(~low):
            la[~low], sg[~low], ls[~low] = self.asymptotic(x[~low])
        return la, sg, ls


@builder("odd_poly_gaussian", rel_error=_REL_ERROR)
def _odd_poly_gaussian(coeffs, b, dim):
    d = dim
    half_d = 0.5 * d
    b = float(b)
    cs = [(m, float(c)) for m, c in enumerate(coeffs) if c != 0]
    if not any(m % 2 for m, _ in cs):
        return None
    series = {m: _Term(m, half_d) for m, _ in cs}
    log_pre = -half_d * math.log(4.0 * math.pi)

    def log_km(m):
        return (
            log_pre + math.lgamma(half_d + 0.5 * m) - math.lgamma(half_d) - (half_d + 0.5 * m) * math.log(b)
        )

    def direct(rho):
        """(log|mu|, sign, log rounding size) at rho (flat), every term in logs."""
        x = rho * rho / (4.0 * b)
        parts = []
        for m, c in cs:
            lk = log_km(m) + math.log(abs(c))
            sgn = 1.0 if c > 0 else -1.0
            la, sg, ls = series[m](x)
            parts.append((la + lk, sg * sgn, ls + lk))
        la = np.stack([p[0] for p in parts])
        sg = np.stack([p[1] for p in parts])
        ls = np.stack([p[2] for p in parts])
        top = np.max(ls, axis=0)
        with np.errstate(under="ignore", invalid="ignore"):
            total = np.sum(sg * np.exp(la - top), axis=0)
            size = np.sum(np.exp(ls - top), axis=0)
        with np.errstate(divide="ignore"):
            # the sum over the powers adds one rounding per part
            return (
                top + np.log(np.abs(total)),
                np.sign(total),
                top + np.log(size) + math.log(1.0 + len(parts)),
            )

    def direct_logs(rho):
        la, sg, _ = direct(np.asarray(rho, dtype=np.float64).ravel())
        return la.reshape(np.shape(rho)), sg.reshape(np.shape(rho))

    scale = 1.0 / math.sqrt(b)
    lo, hi = math.log(1e-6 * scale), math.log(1e4 * scale)
    evaluate, mass_error = log_interpolant(direct_logs, lo, hi, signed=True, dim=d)

    # the rounding of the sums: 4 eps per term times the sum of the terms' moduli, absolute. It is
    # within _REL_ERROR of |mu| where the terms do not cancel; where they do (next to mu's zeros,
    # and across the bulk for high odd powers, r^9 exp(-r^2) in d = 256, whose alternating head
    # cancels 8 digits there) it is stated as a floor in units of the largest |mu| and, weighted by
    # the radial volume S_(d-1) rho^(d-1), as a mass error
    t_probe = np.linspace(lo, hi, 4001)
    la, sg, ls = direct(np.exp(t_probe))
    peak_log = float(np.max(la[np.isfinite(la)]))
    log_bound = math.log(_ROUNDING) + ls
    abs_error = max(float(np.max(np.exp(log_bound - peak_log))), 1e-300)
    with np.errstate(over="ignore", under="ignore"):
        radial = np.exp(log_sphere_area(d) + d * t_probe + log_bound)  # drho = rho dt
    rounding_mass = float(np.sum(0.5 * (radial[1:] + radial[:-1]) * np.diff(t_probe)))
    min_m = min(m for m, _ in cs if m % 2)
    return RadialTransform(
        mu=vectorised(evaluate),
        log_abs_mu=log_form(evaluate),
        method="closed-form:odd-polynomial-gaussian",
        rel_error=_REL_ERROR + 2e-12,
        abs_error=min(1.0, abs_error),
        scale=math.sqrt(2.0 * b),
        tail_exponent=d + min_m,
        tail_oscillation=0.0,
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
        mass_error=mass_error + rounding_mass,
    )


def odd_poly_coeffs(prefactor):
    """[c_0, c_1, ...] of a polynomial in r with at least one odd power and numeric coefficients, or
    None."""
    if not prefactor.is_polynomial(R):
        return None
    poly = sympy.Poly(prefactor, R)
    coeffs = poly.all_coeffs()[::-1]
    if not all(c.is_number and c.is_real for c in coeffs):
        return None
    if not any(c != 0 for c in coeffs[1::2]):
        return None
    return coeffs
