"""Rational functions of r^2, exact in every d, complex poles included.

A kernel k(r) = P(r^2)/Q(r^2) (numeric coefficients, deg P <= deg Q, Q without roots t >= 0, so that
k is bounded on [0, inf)) splits into partial fractions in t = r^2 (:func:`._partial.partial_fractions`,
with the digits the cancellation next to rho = 0 takes (:func:`_digits`); checked against the formula)

    k(r) = c_0 + sum_j c_j (r^2 + a_j)^(-n_j),  a_j complex, not in (-inf, 0],

the complex poles in conjugate pairs (1/(1 + r^2 + r^4), 1/(1 + r^4): oscillating Matérn-like
kernels; real poles: sums of rational quadratics of several scales), kept once with their
coefficient doubled (c X + conj(c X) = 2 Re(c X)). Each term continues the rational-quadratic
transform analytically in a (z = sqrt(a), Re z > 0):

    mu_j(rho) = c_j (2 pi)^(-d/2) 2^(1-n) / Gamma(n) (rho/z)^(n - d/2) K_(d/2 - n)(z rho),

and mu = Re sum_j mu_j (c_0: an atom c_0 at w = 0). The terms are summed in logs with scipy's
complex ``kve`` (relative accuracy about 4e-15 (1 + |order|), measured against mpmath up to order
128), the phase and magnitude of exp(-z rho) in double-double; each point carries the rounding
bound sum_j |mu_j| eps_j. Below rho_s, where the terms cancel as a whole (each ~ rho^(2 n - d),
their sum ~ rho^(2 delta - d), delta = deg Q - deg P), mu rho^-gamma is interpolated from mpmath
values with digits for the measured cancellation (the expansion at 0 below _RHO_LO/|z|); beyond rho_s
small values of mu are zeros of its oscillation, accurate to the bound in units of the terms'
moduli (the stated relative error: 10 times the largest such bound). mu(0) is the integral of k
(finite iff 2 delta > d) at 30 digits, else +-inf (an integrable singularity rho^(2 delta - d), log
for 2 delta = d). docs/theory.md, section 17.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._numerics.chebyshev import fit_adaptive
from .._numerics.exact import two_product
from .._numerics.special import log_besselk
from ..exceptions import TransformError
from ..kernels._parse import R
from ._forms import log_form, vectorised
from ._partial import partial_fractions
from ._registry import builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module

_DPS = 60  # digits of the partial fractions beyond those the cancellation next to rho = 0 takes
#: k - c_0 ~ r^(-2 delta) with delta above this: not matched (the partial fractions would cancel by
#: more than 16 (delta - 1) digits next to rho = 0)
_MAX_DELTA = 16
#: below rho_lo the expansion at 0 replaces the sum, by the next order rho^p it keeps: its own error
#: is of the order after it, (rho_lo |z|)^2 relative for p = 1 and for the logarithm, ^4 for p = 2
_RHO_LO = {0.0: 1e-7, 1.0: 1e-7, 2.0: 1e-5}
#: pointwise relative rounding bound above which a point is recomputed in mpmath
_FLOAT_TOL = 1e-12
_MAX_DPS = 400
#: beyond the first rho where the terms' moduli sum to less than this times |mu|, float64 is used
#: (the relative error there is at most this times the rounding bound, except near mu's zeros)
_CALM = 10.0
_TINY = 1e-300
_T = sympy.Symbol("t", positive=True)


def _digits(delta):
    """Digits of the partial fractions of a kernel with k - c_0 ~ r^(-2 delta): near rho = 0 the terms
    (r^2 + a)^-1 cancel like rho^(2 - 2 delta) against their sum, by 14 (delta - 1) digits at
    rho = 1e-7/|z| (the smallest rho they are summed at, _RHO_LO) plus constants."""
    return _DPS + 16 * max(0, delta - 1)


def _in_r2(expr):
    """(P(t), Q(t)) with expr = P(r^2)/Q(r^2), or None."""
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    if not (num.is_polynomial(R) and den.is_polynomial(R)) or not den.has(R):
        return None
    out = []
    for part in (num, den):
        poly = sympy.Poly(part, R)
        if not all(c.is_number for c in poly.all_coeffs()):
            return None
        if any(e % 2 for (e,), c in poly.terms() if c != 0):
            return None
        out.append(sum((c * _T ** (e // 2) for (e,), c in poly.terms()), sympy.Integer(0)))
    return out[0], out[1]


def rational_parts(expr, origin=False):
    """The parameters of ``expr`` = P(r^2)/Q(r^2) (deg P <= deg Q, no pole at real r) as the
    ``rational_r2`` builder takes them: ``c0`` (the constant part), ``terms`` (c, n, a) of
    c (r^2 + a)^-n, one per conjugate pair with its coefficient doubled (k = c0 + Re sum), ``delta``
    (k - c0 ~ r^(-2 delta)) and ``rest_pq`` (numerator and denominator of k - c0 in t = r^2); None
    when ``expr`` is not such a function. Also the envelope of :mod:`._rational_oscillation`, which
    may have poles at r = 0 (``origin``: terms with a = 0)."""
    pq = _in_r2(exact_rationals(expr))
    if pq is None:
        return None
    num, den = pq
    deg_p, deg_q = sympy.degree(num, _T), sympy.degree(den, _T)
    if deg_p > deg_q:
        return None
    # k - c_0 ~ lead t^-delta at infinity (t = r^2)
    rest = num / den
    if deg_p == deg_q:
        rest = rest - sympy.Poly(num, _T).LC() / sympy.Poly(den, _T).LC()
    rnum, rden = sympy.fraction(sympy.cancel(sympy.together(rest)))
    if rnum == 0:
        return None
    delta = int(sympy.degree(rden, _T) - sympy.degree(rnum, _T))
    if delta > _MAX_DELTA:
        return None  # hundreds of digits next to 0: the generic routes
    digits = _digits(delta)
    with mpmath.workdps(digits):
        pf = partial_fractions(num / den, _T, digits)
        if pf is None:
            return None
        poly_part, fracs = pf
        if any(isinstance(z, mpmath.mpf) and (z > 0 or (z == 0 and not origin)) for _, _, z in fracs):
            return None  # a pole at r = sqrt(z) >= 0: k is unbounded
        c0 = mpmath.re(poly_part[0]) if poly_part else mpmath.mpf(0)
        # real coefficients: the poles and their coefficients come in conjugate pairs, and
        # c X + conj(c X) = 2 Re(c X): one term per pair, doubled (half the Bessel evaluations)
        terms = tuple(
            (2 * c if isinstance(z, mpmath.mpc) else mpmath.re(c), n, -z)
            for c, n, z in fracs
            if c != 0 and not (isinstance(z, mpmath.mpc) and z.imag < 0)
        )
        if not terms:
            return None
        # k - c_0 = rnum(t)/rden(t) itself: the partial fractions cancel by 2 (n_max - delta) log10(r)
        # digits at large r (the integral of k for mu(0) runs to infinity)
        rest_pq = tuple(
            tuple(mpmath.mpf(sympy.N(c, digits)) for c in sympy.Poly(part, _T).all_coeffs())
            for part in (rnum, rden)
        )
    return {"c0": c0, "terms": terms, "delta": delta, "rest_pq": rest_pq}


@matcher(priority=22)  # after the single rational quadratic (20)
def _match_rational_r2(expr, support):
    """P(r^2)/Q(r^2) with deg P <= deg Q and no pole at real r: c_0 + sum c (r^2 + a)^-n."""
    if support is not None or expr.has(sympy.Piecewise, sympy.Abs, sympy.Min, sympy.Max):
        return None
    params = rational_parts(expr)
    return None if params is None else ("rational_r2", params)


def kernel_value(r, c0, terms):
    """k(r) = c_0 + Re sum c (r^2 + a)^-n (mpmath; the matched formula, one term per conjugate pair)."""
    return c0 + mpmath.re(sum(c * (r * r + a) ** (-n) for c, n, a in terms))


@builder("rational_r2", rel_error=1e-10)  # stated per d: 10 x the largest rounding bound, >= 1e-11
def _rational_r2(c0, terms, delta, rest_pq, dim):
    """mu of c_0 + sum c (r^2 + a)^-n (module docstring); ``rest_pq``: the coefficients of the
    numerator and denominator of k - c_0 in t = r^2 (highest first)."""
    d = dim
    s = 0.5 * d
    digits = _digits(delta)
    lead = rest_pq[0][0] / rest_pq[1][0]  # k - c_0 ~ lead r^(-2 delta)

    def rest(r):
        return mpmath.polyval(rest_pq[0], r * r) / mpmath.polyval(rest_pq[1], r * r)

    prepared = []
    with mpmath.workdps(30):
        for c, n, a in terms:
            z = mpmath.sqrt(a)
            log_const = (
                mpmath.log(c) - s * mpmath.log(2 * mpmath.pi) + (1 - n) * mpmath.log(2) - mpmath.loggamma(n)
            ) - (n - s) * mpmath.log(z)
            order = abs(s - n)
            z_hi = complex(z)
            prepared.append((complex(log_const), n - s, order, z_hi, complex(z - z_hi)))

    def mp_value(rho, dps):
        """mu(rho) and the sum of the terms' moduli in mpmath at ``dps`` digits."""
        with mpmath.workdps(dps):
            x = mpmath.mpf(rho)
            total, size = mpmath.mpc(0), mpmath.mpf(0)
            for c, n, a in terms:
                z = mpmath.sqrt(a)
                t = (
                    c
                    * (2 * mpmath.pi) ** (-s)
                    * 2 ** (1 - n)
                    / mpmath.gamma(n)
                    * (x / z) ** (n - s)
                    * mpmath.besselk(s - n, z * x)
                )
                total += t
                size += abs(t)
            return mpmath.re(total), size

    def exact_points(rho, guess_lost, gamma_shift=None):
        """(log|mu|, sign) at the points ``rho`` in mpmath, with digits for the cancellation (a
        first guess ``guess_lost``, doubled until 20 digits are left); ``gamma_shift = (gamma, c)``:
        log|mu| - gamma log rho - c instead, the difference taken in mpmath."""
        la, sg = np.empty(rho.shape), np.empty(rho.shape)
        for i, (x, lost) in enumerate(zip(rho, guess_lost)):
            dps = int(min(_MAX_DPS, 25 + max(0.0, lost)))
            while True:
                val, size = mp_value(x, dps)
                cancelled = mpmath.log10(size / abs(val)) if val != 0 else mpmath.inf
                if cancelled < dps - 20 or dps >= _MAX_DPS:
                    break
                dps = min(_MAX_DPS, 2 * dps)
            if cancelled > digits - 15:
                # the coefficients' own digits are used up (never below rho = 1e-7/|z|, which the
                # partial fractions are sized for): an error, not a wrong value
                raise TransformError(
                    f"rational kernel in d = {d}: its partial fractions cancel by {float(cancelled):.0f} digits "
                    f"at rho = {x:g}, more than the {digits} they carry"
                )
            with mpmath.workdps(dps):
                log_val = mpmath.log(abs(val)) if val != 0 else mpmath.ninf
                if gamma_shift is not None:
                    log_val -= gamma_shift[0] * mpmath.log(mpmath.mpf(x)) + gamma_shift[1]
                la[i] = float(log_val)
            sg[i] = float(mpmath.sign(val))
        return la, sg

    def term_logs(x):
        """log mu_j(x) = (log|.| parts, phase) per term, the phase and the magnitude of exp(-z x) in
        double-double (z x reaches 10^3 in the tail: float64's z x alone would lose 10^-13 there), and
        each term's rounding bound (relative)."""
        mags, phases, eps = [], [], []
        for log_const, power, order, z, z_lo in prepared:
            zx = z * x
            rest = np.empty(x.shape, dtype=complex)
            # far out (e^(-z x) < e^-10^4, far below the 1e-300 floor) the leading asymptotic term,
            # where AMOS gives up (|z x| ~ 1e9 and beyond) and would send the point to mpmath
            far = zx.real > 1e4 * (1.0 + order)
            rest[far] = 0.5 * np.log(np.pi / (2 * zx[far]))
            kve = np.ones(x.shape, dtype=complex)
            with np.errstate(over="ignore", invalid="ignore"):
                kve[~far] = sc.kve(order, zx[~far])
            direct = np.isfinite(kve) & (kve != 0) & ~far
            with np.errstate(divide="ignore"):
                rest[direct] = np.log(kve[direct])
            # K overflows for small z x against the order: log K (small-z series), e^(-z x) = O(1) there
            over = ~direct & ~far  # AMOS gives inf or nan there
            rest[over] = log_besselk(order, zx[over], kve=np.full(int(np.sum(over)), np.inf)) + zx[over]
            rest += log_const + power * np.log(x)
            with np.errstate(over="ignore", invalid="ignore"):
                re_hi, re_lo = two_product(-z.real, x)
                im_hi, im_lo = two_product(-z.imag, x)
            # Dekker's split overflows beyond x ~ 1e290; the far points need no low parts
            re_lo, im_lo = np.where(far, 0.0, re_lo), np.where(far, 0.0, im_lo)
            mags.append((re_hi, re_lo - z_lo.real * x + rest.real))
            phases.append((im_hi, im_lo - z_lo.imag * x + rest.imag))
            eps.append(4e-15 * (1 + order) + 4e-16 * (1.0 + np.abs(rest)))
        return mags, phases, eps

    def float_sum(x):
        """(log|mu|, sign, rounding bound, sum of the terms' moduli, log scale) at x > 0 in float64."""
        mags, phases, eps = term_logs(x)
        top = np.max([hi + lo for hi, lo in mags], axis=0)
        val, size, bound = np.zeros(x.shape), np.zeros(x.shape), np.zeros(x.shape)
        for (m_hi, m_lo), (p_hi, p_lo), e in zip(mags, phases, eps):
            scale = np.exp((m_hi - top) + m_lo)
            val += scale * (np.cos(p_hi) * np.cos(p_lo) - np.sin(p_hi) * np.sin(p_lo))
            size += scale
            bound += scale * e
        with np.errstate(divide="ignore"):
            la = np.log(np.abs(val)) + top
        return la, np.sign(val), val, bound, size, top

    def exact_scaled(u):
        """mu(e^u) e^(-gamma u - log_g0) in mpmath (O(1): the interpolated function)."""
        x = np.exp(u)
        _, _, val, _, size, _ = float_sum(x)
        with np.errstate(divide="ignore"):
            lost = np.log10(size / np.maximum(np.abs(val), 1e-300 * size))
        la, sg = exact_points(x, lost, (gamma, log_g0))
        with np.errstate(under="ignore"):
            return sg * np.exp(la)

    def log_abs_and_sign(rho):
        out_la = np.empty(rho.shape)
        out_sg = np.empty(rho.shape)
        pos = rho > 0
        x = rho[pos]
        la, sg, val, bound, size, top = float_sum(x)
        # below rho_s the terms cancel as a whole: the interpolant of mu / rho^gamma, the expansion at 0
        # below its range; beyond rho_s mu's small values are zeros of an oscillation (the bound is relative to
        # the terms' moduli there: abs_error); below the absolute floor 1e-300 nothing is needed
        with np.errstate(invalid="ignore", divide="ignore"):
            bad = (
                ~(bound <= _FLOAT_TOL * np.abs(val)) & (x < rho_s) & ~(np.log(size) + top <= math.log(_TINY))
            )
        bad |= ~np.isfinite(val) | ~np.isfinite(top)
        if np.any(bad):
            xb = x[bad]
            fitted = xb >= rho_lo
            la_b, sg_b = np.empty(xb.shape), np.empty(xb.shape)
            if np.any(fitted):
                g = small(np.log(xb[fitted]))
                with np.errstate(divide="ignore"):
                    la_b[fitted] = np.log(np.abs(g)) + gamma * np.log(xb[fitted]) + log_g0
                sg_b[fitted] = np.sign(g)
            below = ~fitted
            if origin is not None and np.any(below):
                # G(rho) = G0 + (G_lo - G0) (rho/rho_lo)^p: the leading correction of the expansion
                # at 0 (its own error is of the order after it: _RHO_LO)
                g0, p = origin
                if p == 0:  # 2 delta = d: mu(rho) = mu(rho_lo) + A log(rho_lo/rho), g0 = A (scaled)
                    g = g_lo + g0 * np.log(rho_lo / xb[below])
                else:
                    g = g0 + (g_lo - g0) * (xb[below] / rho_lo) ** p
                with np.errstate(divide="ignore"):
                    la_b[below] = np.log(np.abs(g)) + gamma * np.log(xb[below]) + log_g0
                sg_b[below] = np.sign(g)
            elif np.any(below):
                with np.errstate(divide="ignore"):
                    lost = np.log10(size[bad][below] / np.maximum(np.abs(val[bad][below]), 1e-300))
                la_b[below], sg_b[below] = exact_points(xb[below], lost)
            la[bad], sg[bad] = la_b, sg_b
        out_la[pos], out_sg[pos] = la, sg
        out_la[~pos], out_sg[~pos] = at_zero
        return out_la, out_sg

    # rho_s: where the terms stop cancelling as a whole (size / |mu| < _CALM for the first time)
    # rho |z| is what the expansions at 0 are in: the largest |z| sets how small rho_lo must be
    near, reach = 1.0 / max(abs(p[3]) for p in prepared), 1.0 / min(abs(p[3]) for p in prepared)
    grid = np.geomspace(1e-7 * near, 1e3 * reach, 1201)
    g_la, _, g_val, g_bound, g_size, g_top = float_sum(grid)
    calm = np.nonzero(g_size < _CALM * np.abs(g_val))[0]
    rho_s = float(grid[calm[0]]) if calm.size else math.inf
    beyond = grid >= rho_s
    log_floor = float(np.max(np.log(g_bound[beyond]) + g_top[beyond])) if np.any(beyond) else -np.inf
    rel_bound = float(np.max(g_bound[beyond] / g_size[beyond])) if np.any(beyond) else 0.0
    # mu ~ rho^gamma at 0 (gamma = 2 delta - d < 0; 0 where mu(0) is finite or log-singular)
    gamma = float(min(0, 2 * delta - d))
    rho_lo = _RHO_LO[float(min(2, abs(d - 2 * delta)))] * near
    small, log_g0 = None, 0.0
    if rho_s > rho_lo:
        log_g0 = float(exact_points(np.array([rho_lo]), np.full(1, 16.0))[0][0]) - gamma * math.log(rho_lo)
        small, _ = fit_adaptive(
            exact_scaled,
            math.log(rho_lo),
            math.log(rho_s),
            n_init=4,
            tol=1e-13,
            floor=lambda v: 1e-13 * float(np.max(np.abs(v))),
        )

    # mu(0) = (2 pi)^-d int (k - c_0) dx: finite iff 2 delta > d
    if 2 * delta > d:
        with mpmath.workdps(30):
            radial = mpmath.quad(lambda r: rest(r) * r ** (d - 1), [0, 1, 10, mpmath.inf])
            scale = mpmath.quad(lambda r: abs(rest(r)) * r ** (d - 1), [0, 1, 10, mpmath.inf])
            if abs(radial) <= mpmath.mpf("1e-24") * scale:
                radial = mpmath.mpf(0)  # an exact cancellation ((1 - r^2)/(1 + r^2)^3 in d = 2): mu(0) = 0
            area = 2 * mpmath.pi ** (mpmath.mpf(d) / 2) / mpmath.gamma(mpmath.mpf(d) / 2)
            mu0 = radial * area / (2 * mpmath.pi) ** d
        at_zero = (float(mpmath.log(abs(mu0))) if mu0 != 0 else -np.inf, float(mpmath.sign(mu0)))
    else:
        at_zero = (np.inf, 1.0 if lead > 0 else -1.0)

    # below rho_lo: mu rho^-gamma -> G0, the transform of k's leading term lead r^(-2 delta)
    # (C rho^(2 delta - d), C = lead (2 pi)^(-d/2) 2^(d/2 - 2 delta) Gamma(d/2 - delta)/Gamma(delta)),
    # or mu(0) where it is finite; next order rho^p, p = min(2, |d - 2 delta|); mpmath for 2 delta = d (log)
    origin, g_lo = None, 0.0
    if small is not None:
        g_lo = float(small(np.array([math.log(rho_lo)]))[0])
        if 2 * delta == d:
            # k ~ lead r^-d: A = lead S_(d-1) / (2 pi)^d
            with mpmath.workdps(30):
                log_a = (
                    mpmath.log(2 * abs(lead))
                    + s * mpmath.log(mpmath.pi)
                    - mpmath.loggamma(s)
                    - d * mpmath.log(2 * mpmath.pi)
                )
            g0 = float(mpmath.sign(lead)) * math.exp(float(log_a) - log_g0)
        elif 2 * delta < d:
            with mpmath.workdps(30):
                log_c = (
                    mpmath.log(abs(lead))
                    - s * mpmath.log(2 * mpmath.pi)
                    + (s - 2 * delta) * mpmath.log(2)
                    + mpmath.loggamma(s - delta)
                    - mpmath.loggamma(delta)
                )
            g0 = float(mpmath.sign(lead)) * math.exp(float(log_c) - log_g0)
        else:
            g0 = at_zero[1] * math.exp(at_zero[0] - log_g0)
        origin = (g0, float(min(2, abs(d - 2 * delta))))  # p = 0 marks the logarithm
        if 2 * delta > d and not abs(g_lo - g0) <= 1e-4 * abs(g0):
            # mu(0) = 0 or nearly: below rho_lo the model is right to its own size only, |mu(rho_lo)|
            # at most, which the absolute floor then carries
            log_floor = max(log_floor, math.log(abs(g_lo)) + log_g0) if g_lo != 0 else log_floor

    mu = vectorised(log_abs_and_sign)
    # in logs: the densities of high d reach e^4000
    log_peak = max(at_zero[0], float(np.max(g_la[np.isfinite(g_la)])))
    k0 = kernel_value(mpmath.mpf(0), c0, terms)
    return RadialTransform(
        mu=mu,
        log_abs_mu=log_form(log_abs_and_sign),
        method="closed-form:rational_r2",
        rel_error=max(1e-11, _CALM * rel_bound),
        abs_error=math.exp(min(0.0, max(math.log(_TINY), log_floor) - log_peak))
        if math.isfinite(log_peak)
        else 0.0,
        scale=near,
        tail_exponent=math.inf,
        tail_oscillation=0.0,
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
        shells=((0.0, float(c0)),) if c0 != 0 else (),
        ac_mass=float(k0 - c0) if c0 != 0 else None,
    )
