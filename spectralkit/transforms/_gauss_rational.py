"""A Gaussian times a rational function of r^2 with poles up to the imaginary axis: rotated rays.

k(r) = exp(-a r^2) G(r^2), a > 0, G(s) = P(s) + sum_k c_k (s - z_k)^(-n_k) with every pole in
Re z_k <= 0 (exp(-r^2)/(1 + r^4): z = +-i). The polynomial part P is the polynomial-Gaussian closed
form (a Laguerre sum, :meth:`_Rays._polynomial`). Each fraction is the Laplace transform of
u^(n-1) e^(z u)/(n-1)!, so k is a signed Gaussian scale mixture and

    mu_d(rho) = sum_k c_k/(n_k - 1)! int_0^inf u^(n_k - 1) e^(z_k u) g_d(rho, a + u) du,
    g_d(rho, t) = (4 pi t)^(-d/2) e^(-rho^2/(4 t)).

On the imaginary axis psi_0(u) = Re sum c u^(n-1) e^(z u)/(n-1)! does not decay: the mixture's
integral converges only through g_d's decay |u|^(-d/2), absolutely for d > 2 n_k (the truncated
mixtures then converge to k in L^1, so the limit is the transform), and it oscillates without end
on the real axis. The u-integral is turned onto a ray u = s e^(i phi) inside the sector where
e^(z u) decays (Re(z e^(i phi)) < 0) without crossing the negative axis (|phi| < pi): the integrand
is analytic in between (g_d's only singular point, a + u = 0, lies on the negative axis) and the arc
at infinity contributes O(R^(n - d/2)) -> 0, so every such ray gives the same value (docs/theory.md
section 22). They differ in cancellation: the saddle of z u - (d/2) log(a + u) - rho^2/(4(a + u))
moves out with rho, and a fixed ray at large rho sums terms far larger than the answer. So each
frequency bin (_BINS per e-fold of rho) takes, per pole, the direction with the lowest peak
|integrand| at the bin's two edges among _ANGLES spread over the sector, and a window along it where
either edge's |integrand| is within e^-_DEPTH of its peak (one rule per bin: mu is a function of rho
alone, smooth within a bin).

Quadrature: 24-point Gauss-Legendre on panels over which the bound |z| + (n - 1)/(s + a) +
d/(2|a + u|) + rho^2/(4|a + u|^2) on |d log f/ds| integrates to at most _STEP. Errors per rho: ten
times the 24/16-point difference at the bin's edges relative to the sum of |terms|, times that sum;
the rounding 4 eps sum |f| (|log f| + log2 N + 8); outside the window e^-_DEPTH times its length; the
tail past s_max by a Gamma-function bound. All in logs (no under- or overflow in d = 256). A
conjugate pair of poles is one term (twice its real part).
"""

import cmath
import math

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._compiled import exp_sums
from .._numerics.quadrature import gauss_legendre
from .._numerics.special import log_sphere_area
from ..kernels import RadialKernel
from ..kernels._parse import R
from ._forms import log_form, vectorised
from ._mixture import _POLE_DIGITS, _gaussian_factor, rational_fractions
from ._types import RadialTransform

__all__ = ["gaussian_rational_rays"]

_EPS = np.finfo(np.float64).eps
#: a pole is on the imaginary axis when |Re z| is below this fraction of |z|
_AXIS = 1e-25
#: bound on the change of the log-integrand per panel (16 Gauss points resolve e^(i 8 x) on [-1, 1]
#: to ~1e-15, so the 24/16 difference measures the 16-point rule's own error)
_STEP = 8.0
#: fixed ray directions per pole, spread over its sector; pilot points per ray
_ANGLES = 9
_PILOT = 129
#: the window along the ray: where |integrand| is within e^-_DEPTH of its peak
_DEPTH = 46.0
_BINS = 32  # frequency bins per e-fold of rho, each with its own rays and panels
_CHUNK = 64  # frequencies per vectorised block
_MARGIN = 10.0
#: the radial density is followed out to where its amplitude is this many e-folds below its peak
_RADIAL_DEPTH = 120.0


def _poles(g_expr):
    """(polynomial part [p_j], [(C_k, n_k, z_k, weight_k)]) of a rational G(s) in s = r^2 with every
    pole in Re z <= 0 and some on the imaginary axis (else None): C = c/(n-1)!, one entry per
    conjugate pair (the upper pole, weight 2) or real pole (weight 1)."""
    pf = rational_fractions(g_expr)
    if pf is None:
        return None
    with mpmath.workdps(_POLE_DIGITS):
        out, on_axis = [], False
        for c, n, z in pf[1]:
            z = mpmath.mpc(z)
            if z.real > _AXIS * abs(z) or z == 0:
                return None
            on_axis |= abs(z.real) <= _AXIS * abs(z)
            if z.imag < 0 and abs(z.imag) > _AXIS * abs(z):
                continue  # the conjugate of an upper pole: counted with it
            weight = 2.0 if abs(z.imag) > _AXIS * abs(z) else 1.0
            out.append((complex(c / mpmath.factorial(n - 1)), int(n), complex(z), weight))
        poly = [float(p) for p in pf[0]]
    return (poly, out) if on_axis else None


class _Rays:
    """mu_d(rho) = sum_k weight_k Re C_k int_ray u^(n-1) e^(z_k u) g_d(rho, a + u) du, in logs, each
    pole's ray chosen per rho among fixed directions of its sector (module docstring)."""

    def __init__(self, a, poly, poles, dim):
        self.a, self.poly, self.poles, self.dim = a, poly, poles, dim
        self.x24, self.w24 = gauss_legendre(24)
        self.x16, self.w16 = gauss_legendre(16)
        self._rules = {}
        self.r0 = 1e-3 * math.sqrt(a)  # the first frequency bin is rho <= r0

    def _log_f(self, s, rho, n, z, e):
        """log of u^(n-1) e^(z u) g_d(rho, a + u) e^(i phi) at u = s e (|e| = 1): rows rho, columns s
        (the pilot; the panels keep its rho-free part, :meth:`_sums`)."""
        u = s * e
        with np.errstate(divide="ignore", invalid="ignore"):
            base = (
                ((n - 1) * np.log(u) if n > 1 else 0.0)
                + z * u
                - 0.5 * self.dim * np.log(4.0 * math.pi * (self.a + u))
                + np.log(e)
            )
        return base[None, :] - (rho * rho)[:, None] * (0.25 / (self.a + u))[None, :]

    def _rule(self, k_pole, b):
        """The ray and its panels for the frequency bin b of pole k_pole (cached): the direction of the
        lowest peak |integrand| at the bin's two edges among _ANGLES directions strictly inside the
        sector where e^(z u) decays (and the negative axis is not crossed), the window where either
        edge's |integrand| is within e^-_DEPTH of its peak, and Gauss-Legendre panels over it on which
        the bound on |d log f / ds| integrates to at most _STEP. A fixed rule per bin makes mu a
        function of rho alone (no dependence on the other frequencies of a call)."""
        key = (k_pole, b)
        if key in self._rules:
            return self._rules[key]
        _, n, z, _ = self.poles[k_pole]
        d, a = self.dim, self.a
        edges = self._edges(b)
        alpha = cmath.phase(z)
        lo, hi = max(math.pi / 2 - alpha, -math.pi), min(1.5 * math.pi - alpha, math.pi)
        best = None
        for e in np.exp(1j * np.linspace(lo, hi, _ANGLES + 2)[1:-1]):
            kappa = -(z * e).real
            s_max = (60.0 + 2.0 * n) / kappa + 4.0 * (edges[1] ** 2 / (4.0 * a) + d) / abs(z)
            sp = a * np.expm1(np.linspace(0.0, math.log1p(s_max / a), _PILOT))
            lf = self._log_f(sp, edges, n, z, e).real
            if n > 1:
                lf[:, 0] = lf[:, 1]  # u^(n-1) = 0 at the start
            top = np.max(lf, axis=1)
            if best is None or np.max(top) < best[0]:
                best = (float(np.max(top)), e, kappa, s_max, sp, lf, top)
        _, e, kappa, s_max, sp, lf, top = best
        live = np.flatnonzero(np.any(lf >= top[:, None] - _DEPTH, axis=0))
        s_lo, s_hi = sp[max(live[0] - 1, 0)], sp[min(live[-1] + 1, sp.size - 1)]
        fine = s_lo + a * np.expm1(np.linspace(0.0, math.log1p((s_hi - s_lo) / a), 2049))
        dist = np.abs(a + fine * e)
        rate = abs(z) + (n - 1) / (fine + a) + 0.5 * d / dist + edges[1] ** 2 / (4.0 * dist * dist)
        phase = np.r_[0.0, np.cumsum(0.5 * (rate[1:] + rate[:-1]) * np.diff(fine))]
        n_pan = max(1, math.ceil(phase[-1] / _STEP))
        br = np.interp(np.linspace(0.0, phase[-1], n_pan + 1), phase, fine)
        lo_b, half = br[:-1, None], 0.5 * np.diff(br)[:, None]
        rules = []
        for xg, wg in ((self.x24, self.w24), (self.x16, self.w16)):
            sv = (lo_b + half * (xg + 1.0)).ravel()
            u = sv * e
            with np.errstate(divide="ignore"):
                base = self._log_f(sv, np.zeros(1), n, z, e)[0] + np.log((half * wg).ravel())
            rules.append((base, -0.25 / (a + u)))
        # the 16-point rule on the same panels, at the bin's edges: the quadrature error of the
        # 24-point sums, as a share of their amplitude (times 10 for the frequencies in between)
        (v24, a24, _, t24), (v16, _, _, t16) = (self._sums(edges, *r) for r in rules)
        quad = 10.0 * float(np.max(np.abs(v24 - v16 * np.exp(t16 - t24)) / a24))
        # outside the window: below e^(top - _DEPTH) over its length; past s_max (|a + u| >= s_max - a,
        # |e^(-rho^2/(4(a + u)))| <= e^(rho^2/(4(s_max - a)))) the Gamma-function bound
        far = s_max - a
        log_tail0 = (
            math.log(max(sc.gammaincc(n, kappa * s_max), 1e-300))
            + math.lgamma(n)
            - n * math.log(kappa)
            - 0.5 * d * math.log(4.0 * math.pi * far)
        )
        cut = math.exp(-_DEPTH) * (s_lo + s_max - s_hi)
        base, inv = rules[0]
        self._rules[key] = (
            base,
            inv,
            np.abs(base) + 8.0 + math.log2(base.size),
            np.abs(inv),
            quad,
            far,
            log_tail0,
            cut,
        )
        return self._rules[key]

    @staticmethod
    def _sums(rho, base, inv, abs_base=None, abs_inv=None):
        """(sum f, sum |f|, the rounding weight sum |f| |log f|, top) with f = e^(log f - top) and
        log f = base + rho^2 inv, per frequency (rows); compiled (the calls are many and small)."""
        if abs_base is None:
            abs_base = abs_inv = np.zeros(base.size)
            total, amp, _, top = exp_sums(rho, base, inv, abs_base, abs_inv)
            return total, amp, None, top
        return exp_sums(rho, base, inv, abs_base, abs_inv)

    def _edges(self, b):
        """The frequency bin b: rho in (r0 e^((b-1)/_BINS), r0 e^(b/_BINS)], b = 0 for rho <= r0."""
        r0 = self.r0
        return np.array([0.0 if b == 0 else r0 * math.exp((b - 1) / _BINS), r0 * math.exp(b / _BINS)])

    def _pole(self, rho, k_pole, b):
        """(value, error bound, amplitude) scaled by e^-top, and top, of one pole's term at the
        frequencies rho of bin b."""
        C, _, _, weight = self.poles[k_pole]
        base, inv, abs_base, abs_inv, quad, far, log_tail0, cut = self._rule(k_pole, b)
        s24, a24, round_w, top = self._sums(rho, base, inv, abs_base, abs_inv)
        tail = np.exp(np.minimum(log_tail0 + rho * rho / (4.0 * far) - top, 700.0))
        val = weight * (C * s24).real
        err = weight * abs(C) * (quad * a24 + 4.0 * _EPS * round_w + cut + tail)
        amp = weight * abs(C) * a24
        return val, err, amp, top

    def _polynomial(self, rho):
        """The polynomial part's exp(-a r^2) sum_j p_j r^(2j) (the polynomial-Gaussian closed form):
        (4 pi a)^(-d/2) e^(-x) sum_j p_j j! a^(-j) L_j^(d/2-1)(x), x = rho^2/(4a), as (value, error,
        amplitude) scaled by e^-top and top."""
        d, a = self.dim, self.a
        x = rho * rho / (4.0 * a)
        terms = np.array(
            [
                p * math.factorial(j) * a**-j * sc.eval_genlaguerre(j, 0.5 * d - 1.0, x)
                for j, p in enumerate(self.poly)
            ]
        )
        amp = np.sum(np.abs(terms), axis=0)
        err = 8.0 * _EPS * (len(self.poly) + 1) * amp
        return np.sum(terms, axis=0), err, amp, -0.5 * d * math.log(4.0 * math.pi * a) - x

    def evaluate(self, rho):
        """(log|mu|, sign, log error bound, log amplitude) at an array of frequencies rho >= 0."""
        rho = np.asarray(rho, dtype=np.float64)
        flat = rho.ravel()
        out = np.empty((4, flat.size))
        with np.errstate(divide="ignore"):
            bins = np.where(flat <= self.r0, 0, np.ceil(np.log(flat / self.r0) * _BINS)).astype(int)
        for b in np.unique(bins):
            every = np.flatnonzero(bins == b)
            for start in range(0, every.size, _CHUNK):
                sel = every[start : start + _CHUNK]
                parts = [self._pole(flat[sel], k, b) for k in range(len(self.poles))]
                if any(self.poly):
                    parts.append(self._polynomial(flat[sel]))
                top = np.max([p[3] for p in parts], axis=0)
                scale = [np.exp(p[3] - top) for p in parts]
                val = sum(p[0] * f for p, f in zip(parts, scale))
                err = sum(p[1] * f for p, f in zip(parts, scale))
                amp = sum(p[2] * f for p, f in zip(parts, scale))
                with np.errstate(divide="ignore"):
                    out[0, sel] = np.log(np.abs(val)) + top
                    out[1, sel] = np.where(val < 0, -1.0, 1.0)
                    out[2, sel] = np.log(err) + top
                    out[3, sel] = np.log(amp) + top
        return tuple(v.reshape(rho.shape) for v in out)


def gaussian_rational_rays(atom: RadialKernel, dim: int) -> RadialTransform | None:
    """mu_d of exp(-a r^2) G(r^2), G rational with poles in Re s <= 0 and some on the imaginary
    axis, by the rotated rays of the module docstring; None for any other kernel, or in d <= 2 max n_k
    (the mixture's integral does not converge absolutely there: the Hankel route).

    ``method = "numeric:gaussian-mixture+rays"``. The stated relative error is the largest bound
    relative to |mu| where the radial amplitude (sum_k |C_k| int |integrand|, times rho^(d-1)) is
    within 1e-3 of its peak and |mu| is at least 1e-3 of the amplitude; the radial integral of the
    absolute error bound over the whole range, zeros of mu included, is ``mass_error``.
    """
    if not isinstance(atom, RadialKernel) or atom.support is not None:
        return None
    a = _gaussian_factor(atom.expr)
    if a == 0:
        return None
    parts = _poles(sympy.powsimp(atom.expr * sympy.exp(a * R**2)))
    if parts is None or not dim > 2 * max(n for _, n, _, _ in parts[1]):
        return None
    a = float(a)
    poly, poles = parts
    rays = _Rays(a, poly, poles, dim)
    # where the radial amplitude lives: out from sqrt(2 a d) until it is _RADIAL_DEPTH e-folds down
    center = math.sqrt(2.0 * a * dim)
    top = center * 4.0
    while True:
        grid = np.geomspace(1e-3 * center, top, 400)
        lm, sg, le, la = rays.evaluate(grid)
        lrad = la + (dim - 1) * np.log(grid)
        peak = float(np.max(lrad))
        if lrad[-1] < peak - _RADIAL_DEPTH and lrad[-1] < lrad[-2]:
            break
        top *= 2.0
        if top > 1e4 * center:
            return None
    if not (np.all(np.isfinite(la)) and math.isfinite(peak)):
        return None
    # relative to |mu| where the radial amplitude is within 1e-3 of its peak, except within 1e-3 of
    # the amplitude of a zero of mu (there the absolute bound counts, in mass_error)
    core = (lrad >= peak + math.log(1e-3)) & (lm >= la + math.log(1e-3))
    rel_error = _MARGIN * max(float(np.max(np.exp(le - lm)[core])), 1e-14)
    if not rel_error <= 1e-6:
        return None
    # the radial integral of the error bound (trapezoid in log rho), plus the amplitude beyond the grid
    lw = log_sphere_area(dim) + dim * np.log(grid)
    err_rad = np.exp(le + lw)
    mass_error = float(np.sum(0.5 * (err_rad[1:] + err_rad[:-1]) * np.diff(np.log(grid))))
    # beyond the grid mu is set to 0: the radial amplitude there, falling at least as fast in log rho
    # as over the grid's last step (below its first point it grows like rho^d)
    amp_rad = la + lw
    slope = float((amp_rad[-2] - amp_rad[-1]) / (math.log(grid[-1]) - math.log(grid[-2])))
    if not slope > 0:
        return None
    mass_error += math.exp(amp_rad[-1]) / slope + math.exp(amp_rad[0]) / dim
    mass_error *= _MARGIN
    rho_cut = float(grid[-1])
    max_log = float(np.max(lm))

    def log_abs_and_sign(x):
        lv, sv = np.full(x.shape, -np.inf), np.ones(x.shape)
        live = x <= rho_cut
        if np.any(live):
            lv[live], sv[live], _, _ = rays.evaluate(x[live])
        return lv, sv

    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        method="numeric:gaussian-mixture+rays",
        rel_error=rel_error,
        abs_error=float(_MARGIN * max(_EPS, float(np.max(np.exp(le - max_log))))),
        scale=1.0 / math.sqrt(a),
        tail_exponent=math.inf,
        log_abs_mu=log_form(log_abs_and_sign),
        mass_error=mass_error,
    )
