"""Oscillation under a rational envelope, exact in every d where the measure is finite.

k(r) = cos(b r) E(r) or sin(b r)/r E(r), E = P(r^2)/Q(r^2) with deg P < deg Q and no pole at real r
(complex poles allowed: cos(r)/(1 + r^4), cos(2 r)/(1 + r^2 + r^4), r^2 cos(r)/(1 + r^6)). The
envelope's partial fractions (:func:`._rational.rational_parts`) E = Re sum_j c_j (r^2 + a_j)^(-N_j)
have, with z_j = sqrt(a_j) (Re z_j > 0), the 1-dimensional transform

    F_1(s) = Re sum_j e^(-z_j s) sum_l f_(j,l) s^l   (s >= 0),
    f_(j,l) = c_j 2^(-N) z^(-N) (2N - 2 - l)! / (Gamma(N) (N - 1 - l)! l!) (2 z)^(l + 1 - N),

the rational quadratic's K_(N - 1/2) form, which is elementary. The shift formula gives mu_1 of
cos(b r) E as (F_1(|rho - b|) + F_1(rho + b))/2, and sin(b r)/r = int_0^b cos(t r) dt gives
(1/2) int_(rho-b)^(rho+b) F_1(|x|) dx, an antiderivative of the same form. On each side of the kink
rho = b, mu_1 is therefore a finite sum Re sum q (rho - sigma)^k e^(w (rho - sigma)) (sigma in
{b, -b, 0}, w = +-z_j), entire in rho. The dimension walk mu_(n+2) = -(1/(2 pi rho)) d mu_n/d rho keeps
that form with powers u^i of u = 1/rho:

    D[u^i t^k e^(w t)] = (1/(2 pi)) (i u^(i+2) t^k - k u^(i+1) t^(k-1) - w u^(i+1) t^k) e^(w t),

so mu_d for odd d is a closed form on each side, built exactly in mpmath and summed in float64
with a rounding bound (in multiple precision, gmpy2's MPFR, at a point where the bound exceeds
1e-12 of the value and the absolute floor). Next to
rho = 0 the terms cancel like rho^-(2m-1) (d = 2m + 1): below rho_s = min(b, 2/max|z|) the walk of
the Taylor series of mu_1 at 0 (entire, even) is summed instead. Even d: the projection of the
(d+1)-dimensional density, or the Abel form from d - 1 (:class:`._oscillating._RQHalfStep`), tabulated
about the kink (:class:`._oscillating._KinkTable`). Finite iff p > (d - 1)/2 with p = 2 delta (cos)
or 2 delta + 1 (sin/r), E ~ r^(-2 delta) (:func:`._oscillating.power_law_threshold`).

A non-oscillating part A(r) whose poles at r = 0 cancel those of E (Fejér's factor over a rational
function, sin(r)^2/(r^2 (1 + r^2)) = A + cos(2 r) E, :func:`_match_pole_oscillation`) enters the same
walk unshifted (sigma = 0); a pole c r^(-2n) contributes the transform of its finite part,
(-1)^n c s^(2n-1)/(2 (2n-1)!), and after the walk the polynomial pieces of each side are merged
exactly into one Laurent polynomial in rho (:func:`_split_polynomials`). Odd d only.
"""

from __future__ import annotations

import dataclasses
import math

import gmpy2
import mpmath
import numpy as np
import sympy

from .._numerics.bigfloat import to_gmpy
from .._numerics.special import log_sphere_area
from ..exceptions import TransformError
from ..kernels._parse import R
from ._bandlimited import sum_of_frequencies
from ._oscillating import (
    _ACCEPT_TABLE,
    HALF_LEVELS,
    _number,
    _osc_factor,
    _RQHalfStep,
    kink_table_transform,
    kink_transform,
    leveled_table,
    power_law_threshold,
    radial_floor,
)
from ._rational import _digits, rational_parts
from ._registry import BUILDERS, builder, coefficient_of_r, exact_rationals, matcher

__all__ = []  # private module

_METHOD = "closed-form:rational-oscillation"
_EPS = np.finfo(float).eps
#: a float64 sum is accepted where its rounding bound is below this, relative (else multiple precision)
_FLOAT_TOL = 1e-12
_MAX_DPS = 600
#: the float sums' absolute error floor (:meth:`_Walk.floor`), in units of max|mu| or of the radial peak
_FLOOR = 1e-13


@matcher(priority=27)  # after the single rational quadratic (rq_oscillation, 26)
def _match_rational_oscillation(expr, support):
    """c cos(b r) E(r) or c sin(b r)/r E(r), E = P(r^2)/Q(r^2) proper, no pole at real r."""
    if support is not None or expr.has(sympy.Piecewise, sympy.Abs, sympy.Min, sympy.Max):
        return None
    split = _osc_factor(expr)
    if split is None:
        # products of sines and cosines at one frequency in all (sin(r) cos(r) = sin(2r)/2)
        rewritten = sum_of_frequencies(exact_rationals(expr)) if expr.has(sympy.sin, sympy.cos) else None
        if rewritten is None or isinstance(rewritten, sympy.Add):
            return None
        split = _osc_factor(rewritten)
        if split is None:
            return None
    coef, power, osc, rest = split
    if osc is None or osc[0] not in ("cos", "sin"):
        return None
    kind, b = osc
    # sin(b r) r^power = sin(b r)/r r^(power + 1): the envelope takes the power of r
    envelope = coef * R ** (power + (1 if kind == "sin" else 0)) * sympy.Mul(*rest)
    params = rational_parts(envelope)
    if params is None or params["c0"] != 0:
        return None  # a constant part: cos(b r) alone, a sphere shell (other routes)
    try:
        b = _number(b)
    except TypeError:
        return None
    if not b > 0:
        return None
    return "rational_oscillation", {"kind": kind, "b": b, "terms": params["terms"], "delta": params["delta"]}


@matcher(priority=28)
def _match_pole_oscillation(expr, support):
    """A(r) + cos(b r) E(r) or A(r) + sin(b r)/r E(r) with A and E rational in r^2 whose poles at r = 0
    cancel in k: Fejér's factor over a rational function (sin(r)^2/(r^2 (1 + r^2)) = A + cos(2 r) E with
    A = E = 1/(2 r^2 (1 + r^2)) up to sign), where the split into single terms has parts without a measure."""
    if support is not None or expr.has(sympy.Piecewise, sympy.Abs, sympy.Min, sympy.Max):
        return None
    if not expr.has(sympy.sin, sympy.cos):
        return None
    rewritten = sum_of_frequencies(exact_rationals(expr))
    if rewritten is None:
        return None
    a_part, e_part, kind, freq = sympy.Integer(0), sympy.Integer(0), None, None
    for part in sympy.Add.make_args(rewritten):
        trig = [f for f in sympy.Mul.make_args(part) if isinstance(f, (sympy.sin, sympy.cos))]
        if not trig:
            a_part += part
            continue
        if len(trig) > 1:
            return None
        b = coefficient_of_r(trig[0].args[0])
        if b is None or not (b.is_real and b != 0):
            return None
        this = "cos" if isinstance(trig[0], sympy.cos) else "sin"
        sign = -1 if (b.is_negative and this == "sin") else 1
        b = abs(b)
        if freq is None:
            freq, kind = b, this
        elif b != freq or this != kind:
            return None  # several frequencies, or both cos and sin: not this form
        e_part += sign * part / trig[0] * (R if kind == "sin" else 1)
    if kind is None or a_part == 0:
        return None
    base, env = rational_parts(a_part, origin=True), rational_parts(e_part, origin=True)
    if base is None or env is None or base["c0"] != 0 or env["c0"] != 0:
        return None
    if not any(a == 0 for _, _, a in (*base["terms"], *env["terms"])):
        return None  # no pole at r = 0: the single terms have their own routes
    if all(a == 0 for _, _, a in env["terms"]):
        return None  # E a Laurent polynomial in 1/r^2: band-limited (Fejér), its own exact route
    try:
        b = _number(freq)
    except TypeError:
        return None
    # the poles must cancel (k bounded at 0; an unbounded formula is the analysis' DIVERGENT): k at
    # r = 1e-8 within 10 times its size at 1e-4 and 0.1 (a pole left over grows by 1e8 between them)
    with mpmath.workdps(30):
        near, mid, far = (
            abs(kernel_value(mpmath.mpf(x), kind, mpmath.mpf(b), env["terms"], base["terms"]))
            for x in ("1e-8", "1e-4", "0.1")
        )
    if not near <= 10 * max(mid, far):
        return None
    lead = base["rest_pq"][0][0] / base["rest_pq"][1][0]
    return "rational_oscillation", {
        "kind": kind,
        "b": b,
        "terms": env["terms"],
        "delta": env["delta"],
        "base": base["terms"],
        "base_delta": base["delta"],
        "base_lead": lead,
    }


def kernel_value(r, kind, b, terms, base=()):
    """k(r) in mpmath (the matched formula): A(r) + cos(b r) E(r) or A(r) + sin(b r)/r E(r), E and the
    non-oscillating A = Re sum c (r^2 + a)^-n (``base``) in partial fractions."""
    # with poles at r = 0 the parts cancel like r^(-2 n) next to 0: 60 digits more than the caller's
    with mpmath.extradps(60 if base else 0):
        env = mpmath.re(sum(c * (r * r + a) ** (-n) for c, n, a in terms))
        osc = mpmath.cos(b * r) if kind == "cos" else mpmath.sin(b * r) / r
        value = mpmath.re(sum((c * (r * r + a) ** (-n) for c, n, a in base), mpmath.mpf(0))) + env * osc
    return +value


def _f1_coefficients(terms):
    """[(z, [f_0, .., f_(N-1)])] of F_1(s) = Re sum e^(-z s) sum_l f_l s^l (module docstring)."""
    out = []
    for c, n, a in terms:
        if a == 0:
            # c r^(-2n) (a pole at r = 0, cancelled in k by the non-oscillating part): the transform of
            # the finite part, (-1)^n c s^(2n-1) / (2 (2n-1)!)
            tail = c * (-1) ** n / (2 * mpmath.factorial(2 * n - 1))
            out.append((mpmath.mpf(0), [mpmath.mpf(0)] * (2 * n - 1) + [tail]))
            continue
        z = mpmath.sqrt(a)
        f = [
            c
            * mpmath.mpf(2) ** (-n)
            * z ** (-n)
            * mpmath.factorial(2 * n - 2 - k)
            / (mpmath.gamma(n) * mpmath.factorial(n - 1 - k) * mpmath.factorial(k))
            * (2 * z) ** (k + 1 - n)
            for k in range(n)
        ]
        out.append((z, f))
    return out


def _add(groups, key, w, ik, q):
    group = groups.setdefault(key, (w, {}))[1]
    group[ik] = group.get(ik, 0) + q


def _initial_groups(kind, b, f1, base=()):
    """mu_1 on each side of b as {(sigma, j, sign of w): (w, {(i, k): q})}, mu_1 = Re sum q u^i t^k e^(w t),
    t = rho - sigma (i = 0 here); the non-oscillating part A (``base``: the F_1 coefficients of its
    partial fractions) adds F_1^A(rho) on both sides (sigma = 0)."""
    above, below = {}, {}
    bm = mpmath.mpf(b)
    zero = mpmath.mpf(0)
    for j, (z, f) in enumerate(base):
        for k, fk in enumerate(f):
            for side in (above, below):
                _add(side, (zero, -1 - j, -1), -z, (0, k), fk)
    if kind == "cos":
        # (F_1(|rho - b|) + F_1(rho + b))/2
        for j, (z, f) in enumerate(f1):
            for k, fk in enumerate(f):
                _add(above, (bm, j, -1), -z, (0, k), fk / 2)
                _add(above, (-bm, j, -1), -z, (0, k), fk / 2)
                _add(below, (bm, j, 1), z, (0, k), fk / 2 * (-1) ** k)  # F_1(b - rho): s = -t
                _add(below, (-bm, j, -1), -z, (0, k), fk / 2)
        return above, below
    # (1/2) int_(rho-b)^(rho+b) F_1(|x|) dx with G(s) = int_0^s F_1 = G_inf - Re sum e^(-z s) sum_i g_i s^i
    g_inf = mpmath.mpf(0)
    for j, (z, f) in enumerate(f1):
        if z == 0:  # a pole's polynomial: G(s) = sum f_l s^(l+1)/(l+1), no constant
            g = [mpmath.mpf(0)] + [-f[k] / (k + 1) for k in range(len(f))]
        else:
            g = [
                sum(
                    f[k] * mpmath.factorial(k) / (mpmath.factorial(i) * z ** (k - i + 1))
                    for k in range(i, len(f))
                )
                for i in range(len(f))
            ]
            g_inf += mpmath.re(sum(f[k] * mpmath.factorial(k) / z ** (k + 1) for k in range(len(f))))
        for i, gi in enumerate(g):
            # above: (G(rho + b) - G(rho - b))/2
            _add(above, (bm, j, -1), -z, (0, i), gi / 2)
            _add(above, (-bm, j, -1), -z, (0, i), -gi / 2)
            # below: (G(rho + b) + G(b - rho))/2
            _add(below, (-bm, j, -1), -z, (0, i), -gi / 2)
            _add(below, (bm, j, 1), z, (0, i), -gi / 2 * (-1) ** i)
    _add(below, (mpmath.mpf(0), -1, 0), mpmath.mpf(0), (0, 0), g_inf)
    return above, below


def _walk(groups, steps):
    """``steps`` applications of D = -(1/(2 pi rho)) d/drho to Re sum q u^i t^k e^(w t)."""
    two_pi = 2 * mpmath.pi
    for _ in range(steps):
        new = {}
        for key, (w, poly) in groups.items():
            out = {}
            for (i, k), q in poly.items():
                for ik, v in (
                    ((i + 2, k), q * i),
                    ((i + 1, k - 1), -q * k),
                    ((i + 1, k), -q * w),
                ):
                    if v != 0:
                        out[ik] = out.get(ik, 0) + v / two_pi
            out = {ik: v for ik, v in out.items() if v != 0}
            if out:
                new[key] = (w, out)
        groups = new
    return groups


def _split_polynomials(groups, dps):
    """(the groups with w != 0, the groups with w = 0 merged into one Laurent polynomial {e: q} in rho).

    The polynomial pieces of poles at r = 0 (shifted to +-b, and the non-oscillating ones at 0) cancel
    against each other at large rho (k is bounded): merged exactly, the cancellation happens in the
    coefficients (those below 10^(15 - dps) of the largest are exact zeros)."""
    rest, merged = {}, {}
    for key, (w, poly) in groups.items():
        if w != 0:
            rest[key] = (w, poly)
            continue
        sigma = key[0]
        for (i, k), q in poly.items():
            for ell in range(k + 1):
                e = ell - i
                merged[e] = merged.get(e, 0) + q * mpmath.binomial(k, ell) * (-sigma) ** (k - ell)
    if merged:
        top = max(abs(q) for q in merged.values())
        merged = {e: q for e, q in merged.items() if abs(q) > top * mpmath.mpf(10) ** (15 - dps)}
    return rest, merged


class _Walk:
    """mu_n (n odd) of cos(b r) E or sin(b r)/r E (module docstring): float64 with a rounding bound,
    gmpy2's MPFR where the bound is not small, the Taylor series at 0 below ``rho_s``."""

    def __init__(self, kind, b, terms, n, dps, rho_max, base=()):
        self.b, self.n, self.dps = float(b), n, dps
        self.m = (n - 1) // 2
        with mpmath.workdps(dps):
            f1 = _f1_coefficients(terms)
            above, below = _initial_groups(kind, b, f1, _f1_coefficients(base))
            # the series at 0 is of the shifted exponential groups (entire, even); the polynomial ones
            # (poles, constants) are walked exactly as one Laurent polynomial per side, and A's
            # exponentials (sigma = 0: not analytic at 0) are summed as they are
            self._mu1_below = {key: g for key, g in below.items() if g[0] != 0 and key[0] != 0}
            self.mp, self.laurent = {}, {}
            for side, groups in ((True, above), (False, below)):
                self.mp[side], self.laurent[side] = _split_polynomials(_walk(groups, self.m), dps)
            zmax = max([abs(z) for z, _ in f1 if z != 0] + [mpmath.mpf(1e-300)])
        self.rho_s = min(self.b, 2.0 / float(zmax))
        self.float = {side: self._float_groups(groups) for side, groups in self.mp.items()}
        self.laurent_float = {
            side: (np.array(sorted(lau), dtype=float), np.array([complex(lau[e]) for e in sorted(lau)]))
            for side, lau in self.laurent.items()
        }
        self._lists = {}
        self._series = self._series_coefficients()
        #: the absolute error accepted from a float sum, at rho: _FLOOR min(max|mu|, max(t^(n-1) |mu|) /
        #: rho^(n-1)) (next to the zeros of the oscillating tail no form avoids the cancellation, and a
        #: value whose bound is under the floor needs no multiple precision). Relative to the radial density where that
        #: is smaller: in d = 16 a density of 1e-13 of its peak next to 0 carries a negative mass of 1e-7
        #: of the total through rho^(d-1), and its sign decides the verdict. (0 while they are
        #: measured: every point of that grid is certified.)
        self.peak = self.log_radial_peak = 0.0
        grid = np.linspace(0, rho_max, 401)
        grid = grid[(grid != b) & (grid > 0)]
        v = np.abs(self.values(grid)[0])
        self.peak = float(np.max(v))
        with np.errstate(divide="ignore"):
            self.log_radial_peak = float(np.max(np.log(v) + (n - 1) * np.log(grid)))

    def floor(self, rho):
        """The absolute error accepted at rho (see ``__init__``)."""
        return radial_floor(_FLOOR, self.peak, self.log_radial_peak, self.n)(rho)

    @staticmethod
    def _float_groups(groups):
        out = []
        for (sigma, _j, _s), (w, poly) in groups.items():
            keys = sorted(poly)
            out.append(
                (
                    float(sigma),
                    complex(w),
                    np.array([i for i, _ in keys]),
                    np.array([k for _, k in keys]),
                    np.array([complex(poly[ik]) for ik in keys]),
                )
            )
        return out

    # -- the Taylor series at 0 -----------------------------------------------------------------
    def _series_coefficients(self):
        """e_K (mpmath) of mu_n = sum_K e_K rho^(2K) (rho < rho_s), cut where e_K rho_s^(2K) < 1e-25
        of the largest term (and at least 8 terms)."""
        mm = self.m
        with mpmath.workdps(self.dps):
            rs = mpmath.mpf(self.rho_s)
            parts = []
            for (sigma, _j, _s), (w, poly) in self._mu1_below.items():
                scale = mpmath.exp(-w * sigma)
                parts.append((sigma, w, scale, poly))
            coeffs = []
            sizes = []
            big = mpmath.mpf(0)
            kk = 0
            while True:
                order = 2 * kk  # the coefficient of rho^order of mu_1
                a = mpmath.mpc(0)
                for sigma, w, scale, poly in parts:
                    inner = mpmath.mpc(0)
                    for (_i, k), q in poly.items():
                        for ell in range(min(k, order) + 1):
                            inner += (
                                q
                                * mpmath.binomial(k, ell)
                                * (-sigma) ** (k - ell)
                                * w ** (order - ell)
                                / mpmath.factorial(order - ell)
                            )
                    a += scale * inner
                if kk >= mm:
                    e = (
                        mpmath.re(a)
                        * (-1 / mpmath.pi) ** mm
                        * mpmath.factorial(kk)
                        / mpmath.factorial(kk - mm)
                    )
                    coeffs.append(e)
                    size = abs(e) * rs ** (2 * (kk - mm))
                    sizes.append(size)
                    big = max(big, size)
                    if len(coeffs) >= 8 and all(s <= big * mpmath.mpf(10) ** -25 for s in sizes[-3:]):
                        break
                    if len(coeffs) > 4000:
                        raise TransformError(
                            "internal: the Taylor series of the dimension walk does not converge"
                        )
                kk += 1
        self._series_mp = coeffs
        return np.array([float(c) for c in coeffs])

    # -- evaluation ---------------------------------------------------------------------------
    def _float_side(self, above, rho, off, origin_only=False):
        """(Re sum, sum of |terms|, rounding bound) at rho on one side of b; ``off``: rho - b exact;
        ``origin_only``: the non-oscillating groups (sigma = 0) alone, without the Laurent part."""
        u = 1.0 / rho
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        bound = np.zeros(rho.shape)
        for sigma, w, ii, kk, q in self.float[above]:
            if origin_only and sigma != 0:
                continue
            t = off if sigma == self.b else rho - sigma
            wt = w * t
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                e = np.exp(wt)
                terms = q[None, :] * u[:, None] ** ii[None, :] * t[:, None] ** kk[None, :]
                s = terms.sum(axis=1)
                a = np.abs(terms).sum(axis=1) * np.abs(e)
                total += (e * s).real
            absum += a
            bound += a * _EPS * (8.0 + ii.max() + kk.max() + np.abs(wt))
        if origin_only:
            return total, absum, bound
        v, a = self._laurent(above, rho)
        return total + v, absum + a, bound + a * _EPS * 8.0

    def _laurent(self, above, rho):
        """(Re sum q rho^e, sum |q rho^e|) of the merged polynomial groups of one side."""
        exps, coefs = self.laurent_float[above]
        if not exps.size:
            return np.zeros(rho.shape), np.zeros(rho.shape)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            terms = coefs[None, :] * rho[:, None] ** exps[None, :]
        return terms.real.sum(axis=1), np.abs(terms).sum(axis=1)

    def _series_float(self, rho):
        y = rho * rho
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        for e in self._series[::-1]:
            total = total * y + e
            absum = absum * y + abs(e)
        bound = absum * _EPS * (4.0 + len(self._series))
        v, a = self._laurent(False, rho)
        vz, az, bz = self._float_side(False, rho, rho - self.b, origin_only=True)
        return total + v + vz, absum + a + az, bound + a * _EPS * 8.0 + bz

    def values(self, rho, off=None):
        """(mu_n, absolute error bound) at rho > 0 (float arrays); ``off``: the exact rho - b."""
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        # rho = 0 (a sampler's table end): the limit, as the value at 1e-13 rho_s (the series alone is
        # even in rho; a non-oscillating part's terms are singular at 0 and not evaluated there)
        rho = np.where(rho == 0, 1e-13 * self.rho_s, rho)
        val = np.empty(rho.shape)
        err = np.empty(rho.shape)
        series = rho < self.rho_s
        above = (off > 0) & ~series
        below = (off < 0) & ~series
        for mask, fn in ((series, None), (above, True), (below, False)):
            if not np.any(mask):
                continue
            if fn is None:
                v, a, bd = self._series_float(rho[mask])
            else:
                v, a, bd = self._float_side(fn, rho[mask], off[mask])
            bad = ~(bd <= _FLOAT_TOL * np.abs(v)) & ~(bd <= self.floor(rho[mask]))
            for idx in np.flatnonzero(bad):
                lost = math.log10(a[idx] / abs(v[idx])) if v[idx] != 0 else 30.0
                v[idx], bd[idx] = self._mp_point(float(rho[mask][idx]), float(off[mask][idx]), fn, lost)
            val[mask], err[mask] = v, bd
        on = off == 0
        if np.any(on):  # the kink itself (never asked for by the measure layer): the left limit
            val[on], err[on] = self.values(rho[on] * (1 - _EPS), -self.b * _EPS * np.ones(int(on.sum())))
        return val, err

    def _mp_point(self, rho, off, above, lost):
        """(mu_n, error bound) at one point in multiple precision (gmpy2's MPFR: the walk's sums hold
        thousands of terms in high d) with digits for the cancellation ``lost``."""
        top = min(_MAX_DPS, self.dps)  # the digits of the walk's coefficients
        dps = min(top, 20 * math.ceil((30 + min(max(lost, 0.0), 400.0)) / 20))
        while True:
            with gmpy2.context(precision=int(dps * 3.33) + 16):
                # b + off exactly (mpmath's default 53 bits would round the offset away next to the kink)
                x = gmpy2.mpfr(self.b) + gmpy2.mpfr(off) if above is not None else gmpy2.mpfr(rho)
                total = gmpy2.mpfr(0)
                size = gmpy2.mpfr(0)
                if above is None:
                    x2 = x * x
                    power = gmpy2.mpfr(1)
                    for e in self._gmp_series():
                        term = e * power
                        total += term
                        size += abs(term)
                        power *= x2
                u = 1 / x
                for sigma, w, ik, q, q_abs, top_i, top_k in self._gmp_lists(bool(above)):
                    if above is None and sigma != 0:
                        continue  # in the series
                    t = gmpy2.mpfr(off) if sigma == self.b else x - sigma
                    ex = gmpy2.exp(w * t)
                    u_pow, t_pow = [gmpy2.mpfr(1)], [gmpy2.mpfr(1)]
                    for _ in range(top_i):
                        u_pow.append(u_pow[-1] * u)
                    for _ in range(top_k):
                        t_pow.append(t_pow[-1] * t)
                    part = gmpy2.mpc(0)
                    part_size = gmpy2.mpfr(0)
                    for (i, k), qq, qa in zip(ik, q, q_abs):
                        mono = u_pow[i] * t_pow[k]
                        part += qq * mono
                        part_size += qa * abs(mono)
                    total += (part * ex).real
                    size += part_size * abs(ex)
                side = False if above is None else above
                for e, q in self._gmp_laurent(side):
                    term = (q * x**e).real
                    total += term
                    size += abs(term)
                got = float(gmpy2.log10(size / abs(total))) if total != 0 else math.inf
                if dps >= got + 25 or dps >= top:
                    # at the coefficients' precision a value within 10^(5 - dps) of the terms is a zero of
                    # mu to that absolute accuracy (the bound says so)
                    value = float(total)
                    return value, abs(value) * 1e-15 + float(size) * 10.0 ** (-min(dps, top) + 5)
            dps = min(top, 20 * math.ceil((min(got, dps + 100) + 40) / 20))

    def _gmp_series(self):
        """The series' coefficients as mpfr at the context's precision (cached per precision)."""
        key = ("series", gmpy2.get_context().precision)
        if key not in self._lists:
            self._lists[key] = [to_gmpy(e) for e in self._series_mp]
        return self._lists[key]

    def _gmp_laurent(self, above):
        """The merged polynomial of one side as [(e, q)] at the context's precision (cached)."""
        key = ("laurent", above, gmpy2.get_context().precision)
        if key not in self._lists:
            self._lists[key] = [(e, to_gmpy(q)) for e, q in sorted(self.laurent[above].items())]
        return self._lists[key]

    def _gmp_lists(self, above):
        """Per group of one side: (sigma, w, [(i, k)], [q], [|q|], max i, max k) as mpfr/mpc at the context's
        precision (cached per precision), for :meth:`_mp_point`."""
        key = (above, gmpy2.get_context().precision)
        if key not in self._lists:
            out = []
            for (sigma, _j, _s), (w, poly) in self.mp[above].items():
                ik = list(poly)
                q = [to_gmpy(poly[key_]) for key_ in ik]
                q_abs = [abs(v) for v in q]
                out.append(
                    (float(sigma), to_gmpy(w), ik, q, q_abs, max(i for i, _ in ik), max(k for _, k in ik))
                )
            self._lists[key] = out
        return self._lists[key]

    def at_zero(self):
        """(log|mu(0)|, sign): the series' constant plus the merged polynomial's, or +-inf where that
        polynomial keeps a negative power (the poles' rho^(2j-1-2m): singular at 0)."""
        lau = self.laurent[False]
        neg = [e for e, q in lau.items() if e < 0 and mpmath.re(q) != 0]
        if neg:
            return math.inf, float(mpmath.sign(mpmath.re(lau[min(neg)])))
        v0 = float(self._series_mp[0] + mpmath.re(lau.get(0, 0)))
        return (math.log(abs(v0)) if v0 else -math.inf), float(np.sign(v0))

    def log_abs_and_sign(self, rho, off=None):
        val, _ = self.values(rho, off)
        with np.errstate(divide="ignore"):
            return np.log(np.abs(val)), np.sign(val)


def _at_zero(walk, delta, lead, d):
    """(log|mu(0)|, sign) with a non-oscillating part A ~ lead r^(-2 delta): infinite (its transform
    C rho^(2 delta - d), C of the sign of lead Gamma(d/2 - delta)) for 2 delta <= d, else the walk's value
    at rho = 1e-13 rho_s (mu(rho) - mu(0) = O(rho^min(2, 2 delta - d)): within 1e-13 of mu's scale)."""
    if 2 * delta <= d:
        sign = 1.0 if 2 * delta == d else float(mpmath.sign(mpmath.gamma(mpmath.mpf(d) / 2 - delta)))
        return math.inf, sign * float(mpmath.sign(lead))
    la, sg = walk.log_abs_and_sign(np.array([1e-13 * walk.rho_s]))
    return float(la[0]), float(sg[0])


def _direct(walk):
    """rho -> (mu_n, error bound) for the half step and the kink tables (takes the exact offset)."""

    def direct(rho, off=None):
        return walk.values(rho, off)

    direct.takes_offset = True
    return direct


@builder("rational_oscillation", rel_error=1e-10)
def _rational_oscillation(kind, b, terms, delta, dim, base=(), base_delta=0, base_lead=0.0):
    """mu of A(r) + cos(b r) E(r) or A(r) + sin(b r)/r E(r), E = Re sum c (r^2 + a)^-N and A (``base``) in
    the same partial fractions (poles at r = 0 allowed when they cancel in k; A ~ ``base_lead``
    r^(-2 base_delta) at infinity) (module docstring)."""
    d = dim
    p = 2 * delta + (1 if kind == "sin" else 0)
    name = {"cos": f"cos({b:g} r)", "sin": f"sin({b:g} r)/r"}[kind]
    head = f"k = {'A(r) + ' if base else ''}{name} E(r) (E rational in r^2, ~ r^-{2 * delta})"
    divergent = power_law_threshold(
        head,
        p,
        delta,
        b,
        d,
        _METHOD,
        " (a sphere shell or a non-integrable |rho - b|^-1 density, depending on the phase)",
    )
    if divergent is not None:
        return divergent
    if base and d % 2 == 0:
        # with a non-oscillating part A whose poles at r = 0 cancel those of E the odd neighbour is
        # singular at rho = 0 and the even-d projection is not built: the split into single terms answers
        # where each has a measure (sin(r)^2/(r^2 (1 + r^2)) in d = 2, 4), the other routes otherwise
        return None
    dps = _digits(delta) + 10
    rate = min(float(mpmath.re(mpmath.sqrt(a))) for _, _, a in (*terms, *base) if a != 0)
    n_max = max(n for _, n, _ in (*terms, *base))
    gamma = p - 0.5 * (d + 1)
    rho_max = b + (60.0 + d + 2 * abs(gamma) + 4 * n_max) / rate
    scale = min(b, rate)
    if d % 2 == 1:
        walk = _Walk(kind, b, terms, d, dps, rho_max, base)
        peak = walk.peak
        at_zero = walk.at_zero() if not base else _at_zero(walk, base_delta, base_lead, d)

        def log_abs_and_sign(rho):
            la = np.empty(rho.shape)
            sg = np.empty(rho.shape)
            pos = rho > 0
            la[pos], sg[pos] = walk.log_abs_and_sign(rho[pos])
            la[~pos], sg[~pos] = at_zero
            return la, sg

        def mu_at_offset(point, off):  # the one singular point: b
            off = np.asarray(off, dtype=np.float64)
            return walk.values(b + off, off)[0]

        return kink_transform(
            log_abs_and_sign,
            b,
            method=_METHOD,
            rel_error=BUILDERS["rational_oscillation"].rel_error,
            abs_error=_FLOOR if peak > 0 else 0.0,
            scale=scale,
            mu_at_offset=mu_at_offset,
            # the floor's radial mass: S_(d-1) int_0^rho_max _FLOOR max(t^(d-1) |mu|) drho
            mass_error=_FLOOR * math.exp(walk.log_radial_peak + log_sphere_area(d)) * rho_max,
        )
    # even d: from the odd neighbours; in the band (d - 1)/2 < p < (d + 1)/2 mu_(d+1) is not locally
    # integrable at b, and the projection holds above the kink only: the Abel form below it
    head = f"{head} in d = {d}"

    walks = {}  # n -> the odd walk: mu_(d+1) serves the projection and the Abel form's centre

    def odd(n):
        if n not in walks:
            walks[n] = _direct(_Walk(kind, b, terms, n, dps, rho_max))
        return walks[n]

    def half_step(projection):
        return _RQHalfStep(
            "cos",
            b,
            float(n_max),
            rate * rate,
            d,
            odd=odd,
            p=p,
            noise=1e-13,
            projection=projection,
            level=HALF_LEVELS[0],
            sharpen=True,
        )

    above = half_step(True)
    below = half_step(None) if p < 0.5 * (d + 1) else above
    # one level finer where the table would be refused (a slowly decaying, oscillating F_1: poles of E
    # near the positive real axis), the odd tables shared
    halves = list({id(above): above, id(below): below}.values())
    table = leveled_table(_Sides(b, below, above), halves, b, rho_max, d)
    if not table.error <= _ACCEPT_TABLE:
        raise TransformError(
            f"{head}: its density's table reached a relative accuracy of only {table.error:.1e}"
        )
    cut = _last_lobe(table, b, rho_max)
    out = kink_table_transform(table, 1.0, b, d, rho_max, scale, _METHOD)
    # the lobes cut off: |mu| <= 10 floor_at(rho), radial mass <= 10 radial_floor S_(d-1) (rho_max - cut)
    dropped = 10 * table.radial_floor * math.exp(log_sphere_area(d)) * (rho_max - cut)
    return dataclasses.replace(out, mass_error=out.mass_error + dropped)


def _last_lobe(table, b, rho_max):
    """Cut the table (``table.rho_max``) after the last lobe of its oscillating tail that rises to 10
    times its floor: the lobes beyond only graze the floor, which zeroes all but their tips, and
    those isolated tips slip between the measure layer's grid points (mass it then finds beyond its
    cutoff). Returns the cut."""
    grid = np.linspace(b, rho_max, 20001)[1:]
    g = np.abs(table(grid)) * table.weight(grid)
    strong = np.flatnonzero(g > 10 * table.floor_g)
    if strong.size:
        after = np.flatnonzero((grid > grid[strong[-1]]) & (g == 0))
        if after.size:
            table.rho_max = float(grid[after[0]])
    return table.rho_max


class _Sides:
    """rho -> (mu, error) from ``below`` for rho < b and ``above`` beyond (both take the offset)."""

    takes_offset = True

    def __init__(self, b, below, above):
        self.b, self.below, self.above = b, below, above

    def __call__(self, rho, off=None):
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        if self.below is self.above:
            return self.above(rho, off)
        val, err = np.empty(rho.shape), np.empty(rho.shape)
        for mask, half in ((off < 0, self.below), (off >= 0, self.above)):
            if np.any(mask):
                val[mask], err[mask] = half(rho[mask], off[mask])
        return val, err
