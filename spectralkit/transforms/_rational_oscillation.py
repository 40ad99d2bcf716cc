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
or 2 delta + 1 (sin/r), k - 0 ~ r^(-2 delta) (:func:`._oscillating.power_law_threshold`).
"""

from __future__ import annotations

import dataclasses
import math

import gmpy2
import mpmath
import numpy as np
import sympy

from .._numerics.special import log_sphere_area
from ..exceptions import TransformError
from ..kernels._parse import R
from ._forms import log_form, vectorised
from ._oscillating import (
    _ACCEPT_TABLE,
    _MIN_OFFSET,
    _KinkTable,
    _number,
    _osc_factor,
    _RQHalfStep,
    kink_table_transform,
    power_law_threshold,
)
from ._rational import _digits, rational_parts
from ._registry import BUILDERS, builder, matcher
from ._types import RadialTransform

__all__ = []  # private module

_METHOD = "closed-form:rational-oscillation"
_EPS = np.finfo(float).eps
#: a float64 sum is accepted where its rounding bound is below this, relative (else multiple precision)
_FLOAT_TOL = 1e-12
_MAX_DPS = 600
#: the float sums' absolute error floor (:meth:`_Walk.floor`), in units of max|mu| or of the radial peak
_FLOOR = 1e-13
_TINY = 1e-300
#: the half step's double-exponential levels in even d (the walk is cheap in float64: 577 nodes a piece
#: at level 6); the next is tried where the table would be refused (error above _ACCEPT_TABLE)
_HALF_LEVELS = (6, 7)


@matcher(priority=27)  # after the single rational quadratic (rq_oscillation, 26)
def _match_rational_oscillation(expr, support):
    """c cos(b r) E(r) or c sin(b r)/r E(r), E = P(r^2)/Q(r^2) proper, no pole at real r."""
    if support is not None or expr.has(sympy.Piecewise, sympy.Abs, sympy.Min, sympy.Max):
        return None
    split = _osc_factor(expr)
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


def kernel_value(r, kind, b, terms):
    """k(r) in mpmath (the matched formula): cos(b r) E(r) or sin(b r)/r E(r)."""
    env = mpmath.re(sum(c * (r * r + a) ** (-n) for c, n, a in terms))
    return env * (mpmath.cos(b * r) if kind == "cos" else mpmath.sin(b * r) / r)


def _f1_coefficients(terms):
    """[(z, [f_0, .., f_(N-1)])] of F_1(s) = Re sum e^(-z s) sum_l f_l s^l (module docstring)."""
    out = []
    for c, n, a in terms:
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


def _initial_groups(kind, b, f1):
    """mu_1 on each side of b as {(sigma, j, sign of w): (w, {(i, k): q})}, mu_1 = Re sum q u^i t^k e^(w t),
    t = rho - sigma (i = 0 here)."""
    above, below = {}, {}
    bm = mpmath.mpf(b)
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


class _Walk:
    """mu_n (n odd) of cos(b r) E or sin(b r)/r E (module docstring): float64 with a rounding bound,
    gmpy2's MPFR where the bound is not small, the Taylor series at 0 below ``rho_s``."""

    def __init__(self, kind, b, terms, n, dps, rho_max):
        self.kind, self.b, self.n, self.dps = kind, float(b), n, dps
        self.m = (n - 1) // 2
        with mpmath.workdps(dps):
            f1 = _f1_coefficients(terms)
            above, below = _initial_groups(kind, b, f1)
            self._mu1_below = below
            self.mp = {True: _walk(above, self.m), False: _walk(below, self.m)}
            zmax = max(abs(z) for z, _ in f1)
        self.rho_s = min(self.b, 2.0 / float(zmax))
        self.float = {side: self._float_groups(groups) for side, groups in self.mp.items()}
        self._lists = {}
        self._series = self._series_coefficients()
        #: the absolute error accepted from a float sum, at rho: _FLOOR min(max|mu|, max(t^(n-1) |mu|) /
        #: rho^(n-1)) (next to the zeros of the oscillating tail no form avoids the cancellation, and a
        #: value whose bound is under the floor needs no multiple precision). Relative to the radial density where that
        #: is smaller: in d = 16 a density of 1e-13 of its peak next to 0 carries a negative mass of 1e-7
        #: of the total through rho^(d-1), and its sign decides the verdict.
        self.peak = self.log_radial_peak = 0.0
        grid = np.linspace(0, rho_max, 401)
        grid = grid[(grid != b) & (grid > 0)]
        v = np.abs(self.values(grid)[0])
        self.peak = float(np.max(v))
        with np.errstate(divide="ignore"):
            self.log_radial_peak = float(np.max(np.log(v) + (n - 1) * np.log(grid)))

    def floor(self, rho):
        """The absolute error accepted at rho (see ``__init__``)."""
        with np.errstate(divide="ignore", over="ignore"):
            radial = np.exp(self.log_radial_peak - (self.n - 1) * np.log(rho))
        return _FLOOR * np.minimum(self.peak, radial)

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
    def _float_side(self, above, rho, off):
        """(Re sum, sum of |terms|, rounding bound) at rho on one side of b; ``off``: rho - b exact."""
        u = 1.0 / rho
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        bound = np.zeros(rho.shape)
        for sigma, w, ii, kk, q in self.float[above]:
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
        return total, absum, bound

    def _series_float(self, rho):
        y = rho * rho
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        for e in self._series[::-1]:
            total = total * y + e
            absum = absum * y + abs(e)
        return total, absum, absum * _EPS * (4.0 + len(self._series))

    def values(self, rho, off=None):
        """(mu_n, absolute error bound) at rho > 0 (float arrays); ``off``: the exact rho - b."""
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
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
                else:
                    u = 1 / x
                    for sigma, w, ik, q, q_abs, top_i, top_k in self._gmp_lists(above):
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
            self._lists[key] = [_gmp(e) for e in self._series_mp]
        return self._lists[key]

    def _gmp_lists(self, above):
        """Per group of one side: (sigma, w, [(i, k)], [q], [|q|], max i, max k) as mpfr/mpc at the context's
        precision (cached per precision), for :meth:`_mp_point`."""
        key = (above, gmpy2.get_context().precision)
        if key not in self._lists:
            out = []
            for (sigma, _j, _s), (w, poly) in self.mp[above].items():
                ik = list(poly)
                q = [_gmp(poly[key_]) for key_ in ik]
                q_abs = [abs(v) for v in q]
                out.append(
                    (float(sigma), _gmp(w), ik, q, q_abs, max(i for i, _ in ik), max(k for _, k in ik))
                )
            self._lists[key] = out
        return self._lists[key]

    def log_abs_and_sign(self, rho, off=None):
        val, _ = self.values(rho, off)
        with np.errstate(divide="ignore"):
            return np.log(np.abs(val)), np.sign(val)


def _gmp(x):
    """An mpmath number (real or complex) as gmpy2's mpfr or mpc at the context's precision."""
    if isinstance(x, mpmath.mpc):
        return gmpy2.mpc(_gmp(x.real), _gmp(x.imag))
    # the mpf's own digits (mpmath.mpf(x) would round them to the working precision)
    sign, man, exp, _ = (x if isinstance(x, mpmath.mpf) else mpmath.mpf(x))._mpf_
    if not man:
        return gmpy2.mpfr(0)
    return gmpy2.mul_2exp(gmpy2.mpfr(-man if sign else man), exp)


def _direct(walk):
    """rho -> (mu_n, error bound) for the half step and the kink tables (takes the exact offset)."""

    def direct(rho, off=None):
        return walk.values(np.maximum(np.asarray(rho, dtype=np.float64), _TINY), off)

    direct.takes_offset = True
    return direct


@builder("rational_oscillation", rel_error=1e-10)
def _rational_oscillation(kind, b, terms, delta, dim):
    """mu of cos(b r) E(r) or sin(b r)/r E(r), E = Re sum c (r^2 + a)^-N (module docstring)."""
    d = dim
    p = 2 * delta + (1 if kind == "sin" else 0)
    name = {"cos": f"cos({b:g} r)", "sin": f"sin({b:g} r)/r"}[kind]
    head = f"k = {name} E(r) (E rational in r^2, ~ r^-{2 * delta})"
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
    dps = _digits(delta) + 10
    rate = min(float(mpmath.re(mpmath.sqrt(a))) for _, _, a in terms)
    n_max = max(n for _, n, _ in terms)
    gamma = p - 0.5 * (d + 1)
    rho_max = b + (60.0 + d + 2 * abs(gamma) + 4 * n_max) / rate
    scale = min(b, rate)
    if d % 2 == 1:
        walk = _Walk(kind, b, terms, d, dps, rho_max)
        peak = walk.peak

        def log_abs_and_sign(rho):
            la = np.empty(rho.shape)
            sg = np.empty(rho.shape)
            pos = rho > 0
            la[pos], sg[pos] = walk.log_abs_and_sign(rho[pos])
            if np.any(~pos):
                v0 = float(walk._series_mp[0])
                la[~pos], sg[~pos] = (math.log(abs(v0)) if v0 else -math.inf), np.sign(v0)
            return la, sg

        def mu_at_offset(point, off):  # the one singular point: b
            off = np.asarray(off, dtype=np.float64)
            return walk.values(b + off, off)[0]

        return RadialTransform(
            mu=vectorised(log_abs_and_sign),
            log_abs_mu=log_form(log_abs_and_sign),
            method=_METHOD,
            rel_error=BUILDERS["rational_oscillation"].rel_error,
            abs_error=_FLOOR if peak > 0 else 0.0,
            scale=scale,
            tail_exponent=math.inf,
            tail_oscillation=0.0,
            nonnegative=False,
            radial_cdf=None,
            zeros=None,
            singular_points=(float(b),),
            mu_at_offset=mu_at_offset,
            # the floor's radial mass: S_(d-1) int_0^rho_max _FLOOR max(t^(d-1) |mu|) drho
            mass_error=_FLOOR * math.exp(walk.log_radial_peak + log_sphere_area(d)) * rho_max,
        )
    # even d: from the odd neighbours; in the band (d - 1)/2 < p < (d + 1)/2 mu_(d+1) is not locally
    # integrable at b, and the projection holds above the kink only: the Abel form below it
    head = f"{head} in d = {d}"

    def half_step(projection):
        return _RQHalfStep(
            "cos",
            b,
            float(n_max),
            rate * rate,
            d,
            odd=lambda n: _direct(_Walk(kind, b, terms, n, dps, rho_max)),
            p=p,
            noise=1e-13,
            projection=projection,
            level=_HALF_LEVELS[0],
            sharpen=True,
        )

    above = half_step(True)
    below = half_step(None) if p < 0.5 * (d + 1) else above
    table = None
    for level in _HALF_LEVELS:
        # one level finer where the table would be refused (a slowly decaying, oscillating F_1: poles
        # of E near the positive real axis), the odd tables shared
        for half in {id(above): above, id(below): below}.values():
            half.level = level
        trial = _KinkTable(
            _Sides(b, below, above),
            b,
            rho_max,
            tol=1e-9,
            noise=max(1e-13, 2 * above.table.error, 2 * below.table.error),
            dim=d,
            min_offset=_MIN_OFFSET,
        )
        table = trial if table is None or trial.error < table.error else table
        if table.error <= _ACCEPT_TABLE:
            break
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
