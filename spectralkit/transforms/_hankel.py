"""Numeric d-dimensional Hankel transforms of radial kernels, accurate for every rho >= 0.

Convention (``docs/conventions.md``): for a radial kernel k on R^d, nu = d/2 - 1,

    mu(rho) = (2 pi)^(-d/2) int_0^inf k(r) r^(d-1) Lambda_nu(rho r) dr,
    Lambda_nu(x) = x^(-nu) J_nu(x),  Lambda_nu(0) = 2^(-nu) / Gamma(nu + 1).

Two complementary evaluations are combined:

* **Head** (0 <= rho <= rho_x): composite Gauss-Legendre quadrature of the real integral on
  panels that resolve the oscillation of Lambda_nu(rho r) (rho h <= 16 per 16-node panel), graded
  geometrically towards r = 0 and towards the support edge r = R, so that non-smooth origin
  terms r^alpha and edge singularities (R - r)^beta are integrated to full accuracy without
  knowing alpha or beta. Kernels with power-law decay have their tail [r_c, inf) computed on a
  complex contour (below). The head is tabulated once as a piecewise Chebyshev interpolant in
  log(rho), with the interpolation error measured against direct quadrature at test points.

* **Tail** (rho >= rho_x): numerical steepest descent. With F(z) = k(z) z^(d/2) analytically
  continued from the real axis, J_nu = (H1_nu + H2_nu)/2 and the Schwarz reflection
  F(conj z) = conj F(z), the real integral equals, for compact support R,

      int_0^R F(r) J_nu(rho r) dr = Re int_ray F H1_nu(rho z) dz - Re int_R^(R + i inf) F H1_nu(rho z) dz,

  with the ray z = t e^(i theta)/rho from the origin. Both path integrals are non-oscillatory and
  decay like e^(-t): they carry the *whole* asymptotic expansion of mu (the origin terms
  c r^alpha log(r)^m give the non-oscillating power tail rho^(-d-alpha); the edge terms
  (R - r)^beta give the oscillating tail rho^(-(d+1)/2-beta) cos(R rho - phase)) to all orders,
  with no cancellation: each path integral has the size of the result, so the accuracy does not
  degrade with rho or d (direct quadrature loses eps * rho^((d+1)/2+beta), docs/theory.md §6). For
  infinite support only the ray remains. The tail is tabulated as two smooth functions of
  log(rho), A(rho) rho^p_A (non-oscillating) and B(rho) rho^p_B (complex, oscillation e^(iR rho)
  factored out): mu = A - Re(e^(i R rho) B). At large rho the paths only see the neighbourhood of
  r = 0 and r = R, where the kernel formula itself is ill-conditioned (e.g. acos(r^2/2 - 1) loses
  eps/r^2 near 0, (1 - r^2/4) loses eps R/(R - r) near the edge); from the rho where they agree
  with it, the analysis' expansions take over: A = sum_j c_j C(alpha_j) rho^(-alpha_j-d) exactly
  (``origin_term_coefficient``), B from the vertical path with k replaced by its edge expansion
  sum c (R - z)^beta. Beyond rho_max = 1e8 rho_x, rho^p_B B is extrapolated linearly in 1/rho.

The crossover rho_x is the smallest rho of a log grid from which the two evaluations agree
(relative 1e-9 or absolute 1e-15 max|mu|) on a window of consecutive grid points; that
agreement, the interpolation errors and a two-resolution check of each quadrature give the
reported error (relative where |mu| >= 1e-8 max|mu|, absolute below; both with a margin of 10
because they are measured at sample points). Kernels that are smooth at 0 (analytic in r^2)
and do not have compact support have mu decaying faster than any power: their ray contribution
vanishes and mu is set to 0 beyond rho_x, with the absolute bound max |mu| over the agreeing
grid points (reported in abs_error).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sc
from numpy.typing import ArrayLike, NDArray

from .._numerics.chebyshev import fit_adaptive
from .._numerics.quadrature import graded_breaks, interval_breaks, panel_rule
from .._numerics.special import lambda_nu, log_sphere_area, origin_term_coefficient

__all__ = ["NumericHankel"]

_EPS = np.finfo(np.float64).eps
_TOL_REL = 1e-10  # target relative accuracy of the interpolants
_TOL_ABS = 1e-15  # absolute accuracy floor, in units of max |mu|
#: heights (units of the length scale) of the lines Im z = c tried for smooth kernels, lowest first
_LINE_HEIGHTS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)


def _path_rule(t_max, n=16):
    """Nodes and weights on [0, t_max] for the steepest-descent paths: graded at t = 0 (where
    H1 and the edge singularity are non-smooth), panels of width <= 4 beyond t = 1."""
    breaks = np.concatenate([graded_breaks(1.0), [2.0, 4.0], np.arange(8.0, t_max + 4.0, 4.0)])
    return panel_rule(breaks, n)


def _cheb_fit(func, a, b, n_init, scale_of, max_depth=12, tol=_TOL_REL, max_panels=256):
    """Adaptive piecewise Chebyshev fit, 24 points per panel, error relative to max(|f|, scale_of)."""
    return fit_adaptive(
        func,
        a,
        b,
        n_init=n_init,
        degree=24,
        tol=tol,
        floor=scale_of,
        max_depth=max_depth,
        max_panels=max_panels,
    )


# ---------------------------------------------------------------------------------------------
# the transform
# ---------------------------------------------------------------------------------------------
class NumericHankel:
    """mu(rho) of one radial kernel on R^dim by quadrature (head) and steepest descent (tail).

    Parameters
    ----------
    kernel : callable
        k(r) for real r >= 0 (vectorised, float64), zero beyond the support.
    dim : int
        Dimension d >= 1.
    support : float or None
        Support radius R (k = 0 for r > R), or None.
    complex_kernel : callable or None
        The analytic continuation of k (vectorised on complex arrays), or None when the formula
        is not analytic (abs, min, max): the tail cannot then use steepest descent and the
        construction raises ArithmeticError (no silent loss of accuracy).
    length_scale : float
        A characteristic length of k (R for compact support); sets the frequency scale 1/length.
    decay : str
        ``"compact"``, ``"super-exponential"``, ``"exponential"`` or ``"power"`` (analysis).
    decay_rate : float
        For ``"power"``: |k| ~ r^-rate.
    smooth_at_origin : bool
        k analytic in r^2 near 0 (no origin terms): the non-oscillating tail vanishes.
    origin_terms, edge_terms : tuple
        The analysis' non-smooth terms ``(c, alpha, log_power)`` and ``(c, beta)``: the exact
        large-rho origin series, the edge expansion used on the vertical path at large rho, and
        the tail exponent.

    Attributes
    ----------
    rho_x : float
        Crossover between the head interpolant and the tail.
    rel_error, abs_error : float
        Estimated maximum relative error (where |mu| >= abs_error * max|mu|) and absolute floor.
    max_abs : float
        max |mu| (attained at rho = 0 for PD kernels).
    tail_exponent, tail_oscillation : float
        |mu| = O(rho^-tail_exponent); R for an oscillating tail, else 0.
    timings : dict
        Seconds spent in each stage.

    Raises
    ------
    ArithmeticError
        When the kernel is not finite at quadrature nodes, a power-law kernel has no analytic
        continuation, or quadrature and steepest descent never agree to 1e-4 (the caller turns
        this into :class:`~spectralkit.exceptions.TransformError`).
    """

    def __init__(
        self,
        kernel: Callable[[NDArray[np.float64]], Any],
        dim: int,
        *,
        support: float | None = None,
        complex_kernel: Callable[[NDArray[np.complex128]], Any] | None = None,
        length_scale: float = 1.0,
        decay: str = "exponential",
        decay_rate: float = math.nan,
        smooth_at_origin: bool = False,
        origin_terms: tuple = (),
        edge_terms: tuple = (),
    ) -> None:
        t0 = time.perf_counter()
        self.kernel = kernel
        self.dim = int(dim)
        self.nu = self.dim / 2.0 - 1.0
        self.support = None if support is None else float(support)
        self.kc = complex_kernel
        self.length = float(support) if support is not None else float(length_scale)
        self.scale = 1.0 / self.length
        self.decay = decay
        self.decay_rate = float(decay_rate)
        self.smooth_at_origin = bool(smooth_at_origin)
        self.origin_terms = tuple(origin_terms)
        self.edge_terms = tuple(edge_terms)
        self.cd = (2 * math.pi) ** (-self.dim / 2.0)
        self.timings = {}
        self._setup_real_domain()
        self._setup_paths()
        self.timings["setup"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._find_crossover()
        self.timings["crossover"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._build_head()
        self.timings["head"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._build_tail()
        self.timings["tail"] = time.perf_counter() - t0

    # -- real-axis quadrature ------------------------------------------------------------------
    def _setup_real_domain(self):
        """Integration interval [0, r_end] (+ a complex tail from r_end for power decay)."""
        if self.support is not None:
            self.r_end = self.support
            self.vertical_tail = False
            return
        # truncate where |k| r^(d-1) is negligible (decay faster than any power, also when the
        # analysis reports "power" with an infinite rate), else (a finite power rate) integrate
        # the tail on the vertical contour
        grid = self.length * np.geomspace(1e-3, 1e6, 600)
        with np.errstate(all="ignore"):
            vals = np.abs(np.asarray(self.kernel(grid), dtype=np.float64)) * grid ** (self.dim - 1)
        vals = np.where(np.isfinite(vals), vals, 0.0)
        peak = vals.max()
        power = self.decay == "power" and math.isfinite(self.decay_rate)
        if not power and vals[-1] < 1e-18 * peak:
            above = np.nonzero(vals > 1e-18 * peak)[0]
            self.r_end = float(grid[min(above[-1] + 1, len(grid) - 1)]) if len(above) else self.length
            self.vertical_tail = False
        else:
            if self.kc is None:
                raise ArithmeticError(
                    "a kernel with power-law decay needs its analytic continuation for the "
                    "tail integral; the formula is not analytic (abs/min/max)"
                )
            self.r_end = 8.0 * self.length
            self.vertical_tail = True

    def _real_rule(self, rho_max, rule=16):
        h = min(16.0 / max(rho_max, 1e-300), self.r_end / 4.0)
        grade_right = self.support is not None
        breaks = interval_breaks(0.0, self.r_end, h, True, grade_right)
        r, w = panel_rule(breaks, rule)
        with np.errstate(all="ignore"):
            kv = np.asarray(self.kernel(r), dtype=np.float64)
        if not np.all(np.isfinite(kv)):
            raise ArithmeticError("the kernel is not finite at some quadrature nodes on its support")
        with np.errstate(over="ignore", invalid="ignore"):  # r^(d-1) overflows far out in high d
            return r, w * kv * r ** (self.dim - 1)

    def _quad(self, rho, rule_data, block=256):
        """Direct quadrature of mu at rho (array); returns (mu, rounding-error estimate)."""
        r, wk = rule_data
        rho = np.asarray(rho, dtype=np.float64)
        out = np.empty(rho.shape)
        cond = np.empty(rho.shape)
        for s in range(0, rho.size, block):
            rb = rho.ravel()[s : s + block]
            with np.errstate(over="ignore", invalid="ignore"):  # non-finite sums never agree with the tail
                terms = wk[None, :] * lambda_nu(self.nu, rb[:, None] * r[None, :])
                out.ravel()[s : s + block] = terms.sum(axis=1)
                cond.ravel()[s : s + block] = np.abs(terms).sum(axis=1)
        out *= self.cd
        cond *= self.cd * 2 * _EPS  # typical rounding of the sum (pairwise summation: far less)
        if self.vertical_tail:
            pos = rho > 0
            tail = np.zeros(rho.shape)
            with np.errstate(over="ignore", invalid="ignore"):  # non-finite values never agree (refused)
                tail[pos] = (
                    self.cd
                    * rho[pos] ** (-self.nu)
                    * np.real(np.exp(1j * rho[pos] * self.r_end) * self._vertical(rho[pos], self.r_end))
                )
            if np.any(~pos):
                with np.errstate(over="ignore", invalid="ignore"):  # as above: refused downstream
                    tail[~pos] = self.cd * lambda_nu(self.nu, 0.0) * self._tail_at_zero()
            out += tail
        return out, cond

    def _tail_at_zero(self):
        """int_(r_end)^inf k r^(d-1) dr via r = r_end / u (inf when the integral diverges)."""
        if not (self.decay_rate > self.dim):
            return math.inf
        u, w = panel_rule(graded_breaks(1.0))
        rr = self.r_end / u
        return float(np.sum(w * self.kernel(rr) * rr ** (self.dim - 1) * self.r_end / u**2))

    # -- steepest-descent paths ---------------------------------------------------------------
    def _setup_paths(self):
        # ray angle: near-vertical for compact support (valid from small rho); for infinite
        # support the largest angle in (pi/3, pi/4, pi/5, pi/6, pi/8) whose sector k neither grows
        # in (e.g. exp(-r^alpha) grows beyond pi/(2 alpha)) nor has a pole in (1/(1 + r^4) at pi/4),
        # probed out to the radius the ray reaches at rho = 2/length
        self.theta = (math.pi / 2 - 0.1) if self.support is not None else self._ray_angle()
        # |H1(t e^(i theta))| ~ e^(-t sin theta) against F ~ t^(d/2): truncate where the
        # product is below 1e-16 of the integral's scale (t_max grows with d)
        t_max = (40.0 + 2.0 * self.dim) / math.sin(self.theta)
        self._ray = _path_rule(t_max)
        self._ray2 = _path_rule(t_max, 24)
        self._vert = _path_rule(40.0 + 2.0 * self.dim)
        self._vert2 = _path_rule(40.0 + 2.0 * self.dim, 24)
        e = np.exp(1j * self.theta)
        self._ray_h1 = [w * sc.hankel1(self.nu, t * e) * e for t, w in (self._ray, self._ray2)]
        self.has_ray = self.kc is not None and (not self.smooth_at_origin or self.support is not None)
        self.has_edge = self.kc is not None and self.support is not None
        # smooth (analytic in r^2) kernels of infinite support: mu beyond the quadrature's floor from
        # a horizontal line Im z = c below k's nearest complex singularity (see _line)
        self.has_line = (
            self.kc is not None and not self.has_ray and self.support is None and not self.vertical_tail
        )
        self._line_heights = ()
        self._line_panels = ()

    def _ray_angle(self):
        if self.kc is None:
            return math.pi / 3
        k0 = max(float(np.max(np.abs(self.kernel(self.length * np.geomspace(1e-3, 10, 50))))), 1e-300)
        for theta in (math.pi / 3, math.pi / 4, math.pi / 5, math.pi / 6, math.pi / 8):
            reach = (40.0 + 2.0 * self.dim) / math.sin(theta) * self.length / 2
            # the whole sector 0 < arg z <= theta that the rotation sweeps, not the ray alone: a pole
            # inside it (exp(-r)/(1 + r^4) at arg z = pi/4 under the pi/3 ray) leaves out its residue
            z = np.geomspace(1e-3 * self.length, reach, 400)[:, None] * np.exp(
                1j * np.linspace(0.0, theta, 65)[None, 1:]
            )
            with np.errstate(all="ignore"):
                grow = np.abs(np.asarray(self.kc(z), dtype=np.complex128))
            if (
                np.all(np.isfinite(grow))
                and float(np.max(grow)) <= 10 * k0
                and self._continuous_on(theta, reach)
            ):
                return theta
        return math.pi / 8

    def _continuous_on(self, theta, reach):
        """False when the formula jumps along the ray (a branch cut of sqrt, log, acos... crossed):
        on a grid twice as fine a smooth function's largest step halves, a jump's does not."""
        steps = []
        for n in (4000, 8000):
            z = np.geomspace(1e-3 * self.length, reach, n) * np.exp(1j * theta)
            with np.errstate(all="ignore"):
                v = np.asarray(self.kc(z), dtype=np.complex128)
            d = np.abs(np.diff(v))
            steps.append(float(np.max(np.where(np.isfinite(d), d, 0.0))))
        scale = float(np.max(np.abs(v[np.isfinite(v)]))) if np.any(np.isfinite(v)) else 0.0
        return not (steps[1] > 0.75 * steps[0] and steps[0] > 1e-8 * scale)

    def _F(self, z):
        with np.errstate(all="ignore"):
            return np.asarray(self.kc(z), dtype=np.complex128) * z ** (self.dim / 2.0)

    def _ray_integral(self, rho, fine=False, block=128):
        """int over z = t e^(i theta)/rho of F(z) H1_nu(rho z) dz (complex), and the sum of the
        absolute values of the quadrature terms (for the rounding-error estimate)."""
        t, _ = self._ray2 if fine else self._ray
        h1w = self._ray_h1[1 if fine else 0]
        e = np.exp(1j * self.theta)
        out = np.empty(rho.shape, dtype=np.complex128)
        mag = np.empty(rho.shape)
        for s in range(0, rho.size, block):
            rb = rho[s : s + block, None]
            with np.errstate(all="ignore"):  # non-finite products are dropped just below
                vals = self._F(t[None, :] * e / rb) * h1w[None, :]
            vals = np.where(np.isfinite(vals), vals, 0.0)
            # finite terms can still overflow in the sum (high d): an inf result, rejected by the
            # crossover's agreement test, not a warning on the user's console
            with np.errstate(over="ignore", invalid="ignore"):
                out[s : s + block] = vals.sum(axis=1) / rb[:, 0]
                mag[s : s + block] = np.abs(vals).sum(axis=1) / rb[:, 0]
        return out, mag

    def _vertical(self, rho, x0, fine=False, block=128, series=False):
        """e^(-i rho x0) int_(x0)^(x0 + i inf) F(z) H1_nu(rho z) dz (complex, non-oscillating).

        With ``series=True`` k is replaced by its edge expansion sum c (R - z)^beta, evaluated
        with R - z = -i t/rho exactly (the formula itself loses eps R rho near the edge)."""
        t, w = self._vert2 if fine else self._vert
        out = np.empty(rho.shape, dtype=np.complex128)
        for s in range(0, rho.size, block):
            rb = rho[s : s + block, None]
            h = sc.hankel1e(self.nu, rb * x0 + 1j * t[None, :])
            if series:
                dz = -1j * t[None, :] / rb  # R - z
                kz = sum(c * dz**beta for c, beta in self.edge_terms)
                vals = kz * (x0 - dz) ** (self.dim / 2.0) * h * (w * np.exp(-t))[None, :]
            else:
                with np.errstate(all="ignore"):  # non-finite products are dropped just below
                    vals = self._F(x0 + 1j * t[None, :] / rb) * h * (w * np.exp(-t))[None, :]
            vals = np.where(np.isfinite(vals), vals, 0.0)
            out[s : s + block] = 1j * vals.sum(axis=1) / rb[:, 0]
        return out

    def _tail_parts(self, rho, fine=False, with_rounding=False, series=False):
        """(A, B) with mu = A - Re(exp(i R rho) B) for rho in the tail (and, on request, an
        estimate of the rounding error of A: the ray's real part cancels like rho^-alpha).

        ``series=True``: A from the closed-form origin series and B with the edge series."""
        pre = self.cd * rho ** (-self.nu)
        rnd = np.zeros(rho.shape)
        if series:
            a = self._origin_series(rho)
        elif self.has_ray:
            ray, mag = self._ray_integral(rho, fine)
            a = pre * np.real(ray)
            rnd = pre * mag * 8 * _EPS
        else:
            a = np.zeros(rho.shape)
        if self.has_edge:
            b = pre * self._vertical(rho, self.support, fine, series=series)
        else:
            b = np.zeros(rho.shape, dtype=np.complex128)
        return (a, b, rnd) if with_rounding else (a, b)

    def _origin_series(self, rho):
        """sum_j c_j C(alpha_j) rho^(-alpha_j - d): the origin terms' exact large-rho form (the
        analytic part of k contributes only exponentially small terms)."""
        out = np.zeros(np.shape(rho))
        for c, alpha, m in self.origin_terms:
            out = out + c * origin_term_coefficient(alpha, m, self.dim) * rho ** (-alpha - self.dim)
        return out

    # -- the shifted line (smooth kernels of infinite support) ------------------------------------
    def _line(self, rho, c, fine=False):
        """mu(rho) and the rounding scale env(rho) from the horizontal line Im z = c.

        For k even and real-analytic (a series in r^2) without singularities in 0 <= Im z <= c,
        int_0^inf F J_nu(rho r) dr = Re int_(0 -> ic -> ic + inf) F H1_nu(rho z) dz (the H2 half is
        the mirror image), and on the vertical piece z = iy the integrand is i times a real number
        (the phases of (iy)^(d/2), H1_nu(i rho y) and dz add up to pi/2): only the horizontal line
        remains, mu = cd rho^-nu Re int_0^inf F(x + ic) H1_nu(rho (x + ic)) dx. Its integrand has
        the size e^(-rho c) instead of 1: the cancellation of the real-axis quadrature (mu ~
        e^(-rho a) for a singularity at distance a, e^(-rho^2/4) for a Gaussian) shrinks to
        e^(-rho (a - c)), or disappears for the best c of an entire k. Computed in logs (F and H1
        over- and underflow in high d). ``env``: the rounding error of mu, cd rho^-nu e^(-rho c) sum
        |terms| (64 + |log term|) eps."""
        rho = np.atleast_1d(np.asarray(rho, dtype=np.float64))
        c = np.broadcast_to(np.asarray(c, dtype=np.float64), rho.shape)
        mu, env = np.empty(rho.shape), np.empty(rho.shape)
        x_end = 1.25 * self.r_end
        log_cd = math.log(self.cd)
        for i in range(rho.size):
            r_, c_ = float(rho[i]), float(c[i])
            h = min(16.0 / r_, x_end / 8.0)
            # |H1_nu(rho z)| ~ |z|^-nu peaks at x = 0 with a width ~ c / sqrt(nu): panels graded there
            near = c_ * 2.0 ** np.arange(-6.0, 1.0 + math.log2(max(h / c_, 1.0)))
            near = near[near < h]
            x0 = float(near[-1]) if near.size else 0.0
            breaks = np.concatenate(
                [[0.0], near, np.linspace(x0, x_end, int(math.ceil((x_end - x0) / h)) + 1)[1:]]
            )
            x, w = panel_rule(breaks, 24 if fine else 16)
            z = x + 1j * c_
            with np.errstate(all="ignore"):
                lt = (
                    np.log(np.asarray(self.kc(z), dtype=np.complex128))
                    + (self.dim / 2.0) * np.log(z)
                    + np.log(sc.hankel1e(self.nu, r_ * z))
                    + 1j * r_ * x
                )
            zero = np.isneginf(lt.real)
            if not np.all(np.isfinite(lt) | zero) or np.all(zero):
                mu[i], env[i] = math.nan, math.inf
                continue
            top = float(np.max(lt.real[~zero]))
            with np.errstate(under="ignore"):
                t = np.where(zero, 0.0, w * np.exp(lt - top))
            ls = top - r_ * c_ + log_cd - self.nu * math.log(r_)
            # rounding: each term carries ~eps times the size of its exponent (log, exp round trip,
            # the phase rho x) and the relative error of the Bessel function
            rel = (np.abs(lt - top) + 64.0) * _EPS
            with np.errstate(over="ignore", under="ignore"):
                mu[i] = float(np.real(np.sum(t))) * math.exp(min(ls, 700.0))
                env[i] = float(np.sum(np.abs(t) * rel)) * math.exp(min(ls, 700.0))
        return mu, env

    def _setup_line(self, grid, q, q_err, trusted):
        """The heights c at which the line gives mu: increasing heights (multiples of the length
        scale), each confirmed against the accurate real-axis values (a singularity of k crossed
        adds its residue, an O(1) change where the quadrature is accurate); stops at the first
        disagreement (the last confirmed height may lie just below a singularity: _best_height
        weighs the resolution of each line)."""
        acc = trusted & (np.abs(q) > 1e-6 * self.max_abs)
        if np.count_nonzero(acc) < 3:
            return ()
        heights = []
        for h in _LINE_HEIGHTS:
            c = h * self.length
            n, env = self._line(grid[acc], c)
            n2 = self._line(grid[acc], c, fine=True)[0]
            tol = 1e-8 * np.abs(q[acc]) + 10 * (q_err[acc] + env + np.abs(n - n2))
            if not np.all(np.isfinite(n)) or np.any(np.abs(n - q[acc]) > tol):
                break
            heights.append(c)
        return tuple(heights)

    def _best_height(self, rho):
        """For each rho the validated height with the smallest error: the rounding scale env plus
        the resolution (16 against 24 points per panel; a line just below a pole is not resolved)."""
        rho = np.atleast_1d(np.asarray(rho, dtype=np.float64))
        envs = []
        for c in self._line_heights:
            n, env = self._line(rho, c)
            envs.append(env + np.abs(n - self._line(rho, c, fine=True)[0]))
        envs = np.stack(envs)
        envs = np.where(np.isfinite(envs), envs, np.inf)
        return np.asarray(self._line_heights)[np.argmin(envs, axis=0)]

    def _line_direct(self, rho, fine=False):
        return self._line(rho, self._best_height(rho), fine)[0]

    def _build_line_tail(self, mass_scale):
        """Tabulate mu beyond rho_x from the line: panels of a factor 1.5 in rho, each with one
        height c (the best at its centre), mu = Q(rho) exp(P(rho)) with P a Chebyshev fit of
        log env (any smooth scale will do) and Q (|Q| <~ 1) an adaptive Chebyshev interpolant to
        1e-12 absolute, its error measured. The table ends where the radial mass per log-interval
        S_(d-1) rho^d env falls below 1e-20 of ``mass_scale``."""
        log_s = log_sphere_area(self.dim)
        panels = []
        a = self.rho_x
        cheb = np.polynomial.chebyshev.Chebyshev
        top = math.log(mass_scale)
        for _ in range(400):
            b = 1.5 * a
            c = float(self._best_height(np.array([math.sqrt(a * b)]))[0])
            nodes = 0.5 * (a + b) + 0.5 * (b - a) * np.cos(np.pi * (np.arange(9) + 0.5) / 9)
            _, env = self._line(nodes, c)
            if not np.all(np.isfinite(env) & (env > 0)):
                break
            P = cheb.fit(nodes, np.log(env), 8, domain=[a, b])

            def Q(x, c=c, P=P):
                return self._line(x, c)[0] / np.exp(P(x))

            # Q is known to about 1 (the rounding env = exp(P)); relative accuracy 1e-10 above that
            fit, _ = fit_adaptive(
                Q, a, b, degree=24, tol=1e-10, floor=lambda v: 1e10, max_depth=6, max_panels=64
            )
            # the table's error in units of env: interpolation and resolution (16 against 24 points
            # per panel) at test points between the nodes, plus the rounding itself
            probe = a + (b - a) * np.array([0.13, 0.37, 0.61, 0.89])
            coarse = self._line(probe, c)[0]
            scale = np.exp(P(probe))
            interp = np.abs(fit(probe) - coarse / scale)
            res = np.abs(self._line(probe, c, fine=True)[0] - coarse) / scale
            err = float(np.max(interp + res)) + 1.0
            panels.append((a, b, c, P, fit, err))
            a = b
            # a panel whose own error weighs 1 % of the mass: the measure will refuse; stop here
            x, w = panel_rule(np.array([panels[-1][0], b]), 16)
            if (
                10 * err * float(np.sum(w * np.exp(log_s + (self.dim - 1) * np.log(x) + P(x))))
                > 1e-2 * mass_scale
            ):
                break
            # mass per log-interval S rho^d |mu| <= S rho^d env: stop once it has fallen 1e-20 below
            # its largest value (head or table) and decreases
            # (|mu| <= sum |terms| <= env / (64 eps): env is the rounding estimate)
            lift = -math.log(64 * _EPS)
            here = log_s + self.dim * math.log(b) + float(P(b)) + lift
            before = log_s + self.dim * math.log(a / 1.5) + float(P(a / 1.5)) + lift
            top = max(top, here)
            if here < top + math.log(1e-20) and here < before:
                break
        return tuple(panels)

    def _line_table(self, x):
        out = np.zeros(x.shape)
        for a, b, _, P, fit, _ in self._line_panels:
            m = (x >= a) & (x <= b)
            if np.any(m):
                out[m] = fit(x[m]) * np.exp(P(x[m]))
        return out

    def _tail_direct(self, rho, fine=False):
        if self.has_line and self._line_heights:
            return self._line_direct(rho, fine)
        a, b = self._tail_parts(rho, fine)
        if self.has_edge:
            return a - np.real(np.exp(1j * self.support * rho) * b)
        return a

    # -- crossover ------------------------------------------------------------------------------
    def _find_crossover(self):
        s = self.scale
        # 10 points per decade; a smooth kernel without compact support has no ray and no edge: its mu
        # is taken as 0 where quadrature reaches the floor, which for singularities of k near the real
        # axis (exp(-sqrt(1 + r^2)): mu ~ e^(-rho)) lies far beyond 64 times the scale
        top = 64.0 if (self.has_ray or self.has_edge) else 4096.0
        grid = s * np.geomspace(0.25, top, int(round(10 * math.log10(top / 0.25))) + 1)
        q, cond, q2 = np.empty(grid.size), np.empty(grid.size), np.empty(grid.size)
        for i, rho in enumerate(grid):  # a rule resolving each rho (cost ~ rho, not ~ max rho)
            q[i : i + 1], cond[i : i + 1] = self._quad(grid[i : i + 1], self._real_rule(rho))
            q2[i : i + 1] = self._quad(grid[i : i + 1], self._real_rule(rho, 24))[0]
        mu0 = self._quad(np.zeros(1), self._real_rule(grid[0]))[0][0]
        # power decay r^-a with a <= d: mu(0) = inf (mu ~ rho^(a-d) or log rho near 0)
        self.singular_at_zero = not math.isfinite(mu0)
        # the scale of the absolute floors; mu singular at 0 (~ rho^(a-d)) is measured on the grid
        # only: its value nearer 0 would lift the floor by (1e-3)^(a-d) (1e15 in d = 7 for a = 2),
        # and the density beyond rho ~ 1 would be cut as noise
        self.max_abs = (
            float(np.max(np.abs(q))) if self.singular_at_zero else float(max(np.max(np.abs(q)), abs(mu0)))
        )
        floor = _TOL_ABS * self.max_abs
        q_err = np.abs(q - q2) + cond
        trusted = q_err <= 1e-9 * np.abs(q) + floor
        if self.kc is None:
            raise ArithmeticError("the formula is not analytic (abs/min/max): no tail evaluation")
        if self.has_line:
            self._line_heights = self._setup_line(grid, q, q_err, trusted)
            self.has_line = bool(self._line_heights)
        if self.has_line:
            # agreement is sought where the quadrature is accurate by itself, below 64 times the
            # scale (the line is evaluated only there: elsewhere it states nothing)
            n, n2 = np.full(grid.size, np.nan), np.full(grid.size, np.nan)
            near = (grid <= 64.0 * s) & (np.abs(q) > 1e3 * q_err)
            if np.any(near):
                n[near] = self._tail_direct(grid[near])
                n2[near] = self._tail_direct(grid[near], fine=True)
        else:
            n = self._tail_direct(grid)
            n2 = self._tail_direct(grid, fine=True)
        n_err = np.abs(n - n2)
        diff = np.abs(q - n)
        if self.has_line:
            unknown = ~np.isfinite(diff) | ~np.isfinite(n_err)
            diff, n_err = np.where(unknown, 0.0, diff), np.where(unknown, 0.0, n_err)
            n = np.where(unknown, q, n)  # no claim where the line was not evaluated
        ok = (diff <= 1e-9 * np.abs(q) + floor) & trusted & (n_err <= 1e-9 * np.abs(n) + floor)
        if self.has_line:
            ok &= ~unknown
        window = 4
        start = None
        # the line is best where rho c is large: switch to it at the last agreement window (the
        # real-axis quadrature is used as long as it is accurate), other tails at the first
        if self.has_line:  # and only where the quadrature is accurate by itself (not at its floor)
            ok = ok & (np.abs(q) > 1e3 * q_err)
        order = range(len(grid) - window, -1, -1) if self.has_line else range(len(grid) - window + 1)
        for i in order:
            if np.all(ok[i : i + window]):
                start = i
                break
        if start is None:
            # no clean agreement: take the trusted point with the smallest discrepancy
            rel = np.where(trusted, diff / (np.abs(q) + floor), np.inf)
            i = int(np.argmin(rel))
            if not np.isfinite(rel[i]) or rel[i] > 1e-4:
                raise ArithmeticError(
                    "quadrature and steepest descent do not agree anywhere on "
                    f"[{grid[0]:.3g}, {grid[-1]:.3g}] (best relative discrepancy {rel[i]:.2g})"
                    + (
                        "; the density falls below the quadrature's rounding floor before the shifted "
                        f"line Im z = c becomes well conditioned (rho c > nu = {self.nu:g}), as for smooth "
                        "kernels in very high d"
                        if self.smooth_at_origin and self.support is None
                        else ""
                    )
                )
            start = i
        self.rho_x = float(grid[start])
        # errors: relative where |mu| >= 1e-8 max|mu|, absolute (units of max|mu|) elsewhere
        self._abs_parts = []
        win = slice(start, start + window)
        self.crossover_error = self._split_err(diff[win], q[win])
        sel = slice(start, None)
        good = trusted[sel]
        # discrepancy over every grid point beyond rho_x where quadrature is trusted
        self.overlap_error = self._split_err(diff[sel][good], q[sel][good])
        self.head_quad_error = self._split_err(q_err[: start + 1], q[: start + 1])
        self.tail_resolution_error = self._split_err(n_err[sel], n[sel])
        self._grid_tail_bound = float(np.max(np.abs(q[start : start + window])))
        # kept for the mass error (radial weight rho^(d-1) on the absolute noise and the zeroed tail)
        self._cross = (grid, q, q_err, trusted, start, window)

    def _split_err(self, err, ref):
        """Largest relative error where |ref| >= 1e-8 max|mu|; the absolute errors elsewhere are
        collected (in units of max|mu|) for abs_error."""
        err, ref = np.abs(np.asarray(err)), np.abs(np.asarray(ref))
        big = ref >= 1e-8 * self.max_abs
        if np.any(~big):
            self._abs_parts.append(float(np.max(err[~big])) / self.max_abs)
        return float(np.max(err[big] / ref[big])) if np.any(big) else 0.0

    # -- head interpolant -----------------------------------------------------------------------
    def _build_head(self):
        rule = self._real_rule(self.rho_x)
        self._head_rule = rule
        self.rho_lo = 1e-3 * self.scale
        floor = _TOL_ABS * self.max_abs

        def f_log(x):
            return self._quad(np.exp(x), rule)[0]

        def scale_of(v):
            # relative accuracy down to 1e-12 of the panel's peak (zeros of mu), absolute
            # 1e-15 max|mu| below
            return max(1e-12 * float(np.max(np.abs(v))), floor / _TOL_REL)

        n_init = max(2, int(math.ceil(math.log(self.rho_x / self.rho_lo) / math.log(2.0))))
        self._head, e1 = _cheb_fit(f_log, math.log(self.rho_lo), math.log(self.rho_x), n_init, scale_of)
        if self.singular_at_zero:
            # not polynomial near 0: evaluate directly there (quadrature + complex tail)
            self._near0, e0 = None, 0.0
        else:
            self._near0, e0 = _cheb_fit(
                lambda x: self._quad(x, rule)[0], 0.0, self.rho_lo, 1, scale_of, max_depth=4
            )
        self.head_interp_error = max(e0, e1)

    # -- tail interpolant -----------------------------------------------------------------------
    def _build_tail(self):
        """Tabulate A and B (see the module docstring) on [rho_x, rho_max] in log(rho).

        Near the origin (ray) and the edge (vertical path) the kernel formula itself is
        ill-conditioned (e.g. acos(r^2/2 - 1) near r = 0 loses eps/r^2); at large rho the paths
        only see that region, so from the rho where they agree (relative 1e-9 on three
        consecutive grid points) the analysis' expansions take over: the exact origin series
        for A, the edge series inside the vertical-path integral for B."""
        self.tail_oscillation = self.support if self.has_edge else 0.0
        self.pA = self.dim + min([al for _, al, _ in self.origin_terms], default=0.0)
        self.pB = (self.dim + 1) / 2.0 + min([be for _, be in self.edge_terms], default=0.0)
        # The table's far end: the tail decays like rho^-p (p = pB with an edge, else pA), and in
        # high d (p ~ d / 2) rho^p or |mu| ~ max|mu| (rho / rho_x)^-p leave the float range long
        # before rho_x * 1e8; the table stops inside it (at least rho_x * 1e3).
        p = max(self.pB if self.has_edge else (self.pA if self.has_ray else 1.0), 1.0)
        room = min(250.0 / p - math.log10(self.rho_x), (math.log10(self.max_abs) + 290.0) / p)
        self.rho_max = self.rho_x * 10.0 ** min(8.0, max(3.0, room))
        grid = np.geomspace(self.rho_x, self.rho_max, 57)
        a, b, rnd = self._tail_parts(grid, with_rounding=True)
        a_s, b_s = self._tail_parts(grid, series=True)
        size = np.abs(a) + np.abs(b) * (1 if self.has_edge else 0)
        floor = 10 * rnd + _TOL_ABS * self.max_abs * (grid <= self.rho_x * 4)

        def switch_point(exact, ser, usable):
            if not usable:
                return math.inf, 0.0
            ok = np.abs(exact - ser) <= 1e-9 * size + floor
            for i in range(len(grid) - 2):
                if ok[i] and ok[i + 1] and ok[i + 2]:
                    rel = np.abs(exact - ser)[i : i + 3] / (size + floor)[i : i + 3]
                    return float(grid[i]), float(np.max(rel))
            return math.inf, 0.0

        series_ok = all(m == 0 or (a_ >= 0 and a_ / 2 == int(a_ / 2)) for _, a_, m in self.origin_terms)
        self.rho_sA, errA = switch_point(a, a_s, self.has_ray and series_ok)
        self.rho_sB, errB = switch_point(b, b_s, self.has_edge and bool(self.edge_terms))
        self.series_switch_error = max(errA, errB)
        # rounding of the ray where it is used
        used = grid <= min(self.rho_sA, self.rho_max)
        self.tail_rounding_error = (
            float(np.max((rnd / np.maximum(size, 1e-300))[used])) if np.any(used) else 0.0
        )
        # the tail cannot be interpolated more accurately than it is computed (rounding of the
        # ray, or a late switch to the series when the analysis' expansions are short/inexact)
        tol = max(_TOL_REL, 4 * self.tail_rounding_error, self.series_switch_error)
        lo = math.log(self.rho_x)

        def fA(x):
            rho = np.exp(x)
            return self._tail_parts(rho)[0] * rho**self.pA

        def fB(x):
            rho = np.exp(x)
            out = np.empty(rho.shape, dtype=np.complex128)
            m = rho < self.rho_sB
            if np.any(m):
                out[m] = self._tail_parts(rho[m])[1]
            if np.any(~m):
                out[~m] = self._tail_parts(rho[~m], series=True)[1]
            return out * rho**self.pB

        def fit_log(fn, hi):
            # piecewise Chebyshev in log(rho) from rho_x up to e^hi, panels of a factor 4 in rho
            return _cheb_fit(
                fn,
                lo,
                hi,
                int(math.ceil((hi - lo) / math.log(4.0))),
                lambda v: max(1e-12 * float(np.max(np.abs(v))), 1e-300),
                max_depth=8,
                tol=tol,
            )

        ea = eb = 0.0
        self._A = self._B = None
        if self.has_ray and self.rho_sA > self.rho_x:
            self._A, ea = fit_log(fA, math.log(min(self.rho_sA, self.rho_max)))
        if self.has_edge:
            self._B, eb = fit_log(fB, math.log(self.rho_max))
        self.tail_interp_error = max(ea, eb)
        # beyond rho_max the scaled B is extrapolated linearly in u = 1/rho from
        # (rho_max/2, rho_max) (exact for an expansion a + b/rho, error O(1/rho_max^2)); the error
        # estimate is the change against the extrapolation from (rho_max/4, rho_max/2)
        self._ext = None
        ext = 0.0
        if self._B is not None:
            v4, v2, v1 = self._B(np.log(self.rho_max * np.array([0.25, 0.5, 1.0])))
            slope = (v1 - v2) / (-1.0 / self.rho_max)
            at_inf = v1 - slope / self.rho_max
            at_inf_coarse = v2 - (v2 - v4) / (-2.0 / self.rho_max) * 2.0 / self.rho_max
            self._ext = (v1, slope)
            ext = abs(at_inf - at_inf_coarse) / max(abs(at_inf), 1e-300)
        self.extrapolation_error = float(ext)
        self.tail_exponent = self._tail_exponent()
        self.tail_bound = self._grid_tail_bound if not (self.has_ray or self.has_edge) else 0.0
        if self.has_line:
            grid, q, q_err = self._cross[0], self._cross[1], self._cross[2]
            good = np.abs(q) > 1e3 * q_err  # accurate head values only (noise x rho^d is no scale)
            weight = np.exp(log_sphere_area(self.dim) + self.dim * np.log(grid[good]))
            mass_scale = float(np.max(weight * np.abs(q[good]), initial=1e-300))
            self._line_panels = self._build_line_tail(mass_scale)
            if self._line_panels:
                a, b, _, P, _, _ = self._line_panels[-1]
                self.rho_end = b
                self.tail_bound = float(np.exp(P(b)))
            else:
                self.has_line = False
        # the components are measured at sample points only: report them with a margin of 10
        self.rel_error = 10.0 * float(
            max(
                self.crossover_error,
                self.overlap_error,
                self.head_quad_error,
                self.tail_resolution_error,
                self.head_interp_error,
                self.tail_interp_error,
                self.tail_rounding_error,
                self.series_switch_error,
                self.extrapolation_error,
                1e-13,
            )
        )
        self.abs_error = float(
            max(
                [10 * _TOL_ABS, self.tail_bound / self.max_abs, self._line_floor(self.rel_error)]
                + [10 * e for e in self._abs_parts]
            )
        )
        self.mass_error = self._mass_error()

    def _line_floor(self, rel):
        """The absolute floor (units of max|mu|) that bounds the line tables' errors where they
        exceed ``rel`` |mu|: a panel's error is err env(rho) (margin 10), and where mu is far below
        its rounding envelope env (the line's terms cancel: the far tail) that is more than
        ``rel`` |mu|; the error statement is max(rel |mu|, abs_error max|mu|)."""
        floor = 0.0
        for a, b, _, P, fit, err in self._line_panels if self.has_line else ():
            x = np.linspace(a, b, 17)
            env = np.exp(P(x))
            mu, e = np.abs(fit(x)) * env, 10.0 * err * env
            bad = e > rel * mu
            if np.any(bad):
                floor = max(floor, float(np.max(e[bad])) / self.max_abs)
        return floor

    def _mass_error(self):
        """Absolute mass error that the relative and absolute errors of mu do not carry.

        The radial mass weighs mu by S_(d-1) rho^(d-1): an absolute error eps of mu, negligible
        against max|mu|, is a mass error S_(d-1) int rho^(d-1) eps drho that grows like rho^d, and a
        density set to 0 beyond rho_x (smooth kernels of infinite support, whose quadrature reaches
        its rounding floor there) leaves out S_(d-1) int_(rho_x)^inf rho^(d-1) |mu|. The first is
        integrated from the measured quadrature errors on [0, rho_x] (margin 10, as for rel_error);
        the second from an exponential envelope |mu| <= M exp(-a (rho - rho_x)): M bounds |mu| on the
        crossover window (|q| plus its error), a is the decay rate of the last accurately computed
        values before it (mu of such kernels decays at least exponentially; a faster decay makes the
        envelope conservative). Returns an absolute mass (the units of k(0)); inf when no decay rate
        can be measured.
        """
        grid, q, q_err, trusted, start, window = self._cross
        d = self.dim
        log_s = log_sphere_area(d)
        head = slice(0, start + 1)
        g, noise = grid[head], 10.0 * q_err[head]
        # int_0^g0 rho^(d-1) drho = g0^d / d with the first grid point's noise, then trapezoids
        w = np.exp(log_s + (d - 1) * np.log(g)) * noise
        mass = math.exp(log_s + d * math.log(g[0]) - math.log(d)) * noise[0]
        if g.size > 1:
            mass += float(np.sum(0.5 * (w[1:] + w[:-1]) * np.diff(g)))
        # the head interpolant's error (its tolerance is relative to max|mu|, which the radial
        # weight does not respect in high d), measured between its nodes against direct quadrature
        if self.rho_x > g[0]:
            t = np.geomspace(g[0], self.rho_x, 97)
            t = np.sqrt(t[1:] * t[:-1])
            e = np.abs(self._head(np.log(t)) - self._quad(t, self._head_rule)[0])
            we = np.exp(log_s + (d - 1) * np.log(t)) * 10.0 * e
            mass += float(np.sum(0.5 * (we[1:] + we[:-1]) * np.diff(t))) + float(we[-1]) * (
                self.rho_x - t[-1]
            )
        if self.has_ray or self.has_edge:
            return float(mass)
        if self.has_line:
            # the table's own errors (in units of its scale exp(P)), weighted, and the mass beyond it
            for a, b, _, P, _, err in self._line_panels:
                x, w = panel_rule(np.array([a, b]), 16)
                mass += 10.0 * err * float(np.sum(w * np.exp(log_s + (d - 1) * np.log(x) + P(x))))
            a, b, _, P, _, _ = self._line_panels[-1]
            rate = (float(P(a)) - float(P(b))) / (b - a)
            if not rate > 0:
                return math.inf
            m_bound, x = float(np.exp(P(b))) / (64 * _EPS), rate * b  # |mu| <= env / (64 eps)
            reg = sc.gammaincc(d, x)
            log_tail = (
                log_s
                + math.log(max(m_bound, 1e-300))
                + x
                - d * math.log(rate)
                + (math.log(reg) + sc.gammaln(d) if reg > 0 else (d - 1) * math.log(x) - x + math.log(2.0))
            )
            return float(mass + 2.0 * math.exp(min(log_tail, 700.0)))
        # the zeroed tail beyond rho_x
        win = slice(start, start + window)
        m_bound = float(np.max(np.abs(q[win]) + q_err[win]))
        if m_bound == 0.0:
            return float(mass)
        env = np.maximum.accumulate(np.abs(q[::-1]))[::-1]  # non-increasing envelope of |q| from the right
        good = np.nonzero(trusted[:start] & (np.abs(q[:start]) > 1e3 * (q_err[:start] + 1e-300)))[0]
        if good.size < 2:
            return math.inf
        i1, i2 = int(good[-2]), int(good[-1])
        rate = (math.log(env[i1]) - math.log(env[i2])) / (grid[i2] - grid[i1])
        if not rate > 0:
            return math.inf
        x = rate * self.rho_x
        # S M e^(a rho_x) a^-d Gamma(d, a rho_x), in logs (x large: Gamma(d, x) ~ x^(d-1) e^-x)
        reg = sc.gammaincc(d, x)
        if reg > 0:
            log_tail = log_s + math.log(m_bound) + x - d * math.log(rate) + math.log(reg) + sc.gammaln(d)
        else:
            log_tail = log_s + math.log(m_bound) - d * math.log(rate) + (d - 1) * math.log(x) + math.log(2.0)
        return float(mass + 2.0 * math.exp(min(log_tail, 700.0)))

    def _tail_exponent(self):
        """min over the origin terms (d + alpha) and the edge terms ((d + 1)/2 + beta)."""
        exps = [math.inf]
        if self.has_ray and self.origin_terms:
            exps.append(self.dim + min(a for _, a, _ in self.origin_terms))
        if self.has_edge:
            exps.append(self.pB)
        return float(min(exps))

    # -- evaluation -----------------------------------------------------------------------------
    def __getstate__(self):
        # the lambdified complex continuation is not picklable; evaluation (__call__) does not
        # need it, only `direct` beyond rho_x does
        state = self.__dict__.copy()
        state["kc"] = None
        return state

    def __call__(self, rho: ArrayLike) -> NDArray[np.float64]:
        """mu(rho), vectorised over rho >= 0 (float64 array of the same shape; mu(inf) = 0).

        Raises
        ------
        ValueError
            If ``rho`` contains NaN or negative values.
        """
        rho = np.asarray(rho, dtype=np.float64)
        bad = ~(rho >= 0)  # negative or NaN
        if np.any(bad):
            raise ValueError(f"rho must be >= 0 and not NaN, got {float(rho[bad].ravel()[0])!r}")
        flat = rho.ravel()
        out = np.zeros(flat.shape)
        m0 = flat < self.rho_lo
        if np.any(m0):
            out[m0] = (
                self._near0(flat[m0]) if self._near0 is not None else self._quad(flat[m0], self._head_rule)[0]
            )
        m1 = (flat >= self.rho_lo) & (flat <= self.rho_x)
        out[m1] = self._head(np.log(flat[m1]))
        m2 = (flat > self.rho_x) & np.isfinite(flat)  # mu(inf) = 0
        if np.any(m2):
            x = flat[m2]
            a, b = self.tail_parts(x)
            out[m2] = a - np.real(np.exp(1j * (self.support or 0.0) * x) * b)
        return out.reshape(rho.shape)

    def tail_parts(self, rho: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.complex128]]:
        """``(A, B)`` with mu = A - Re(exp(i R rho) B) for rho > rho_x (R the support, 0 without).

        A (real) is the non-oscillating part (origin terms), B (complex) the slowly varying
        amplitude of the edge oscillation; both are smooth in log(rho).
        """
        x = np.asarray(rho, dtype=np.float64)
        a = np.zeros(x.shape)
        b = np.zeros(x.shape, dtype=np.complex128)
        if self.has_line:
            a = self._line_table(x)
        if self.has_ray:
            ray = x < self.rho_sA
            if np.any(ray):
                a[ray] = self._A(np.log(np.minimum(x[ray], self.rho_max))) * x[ray] ** (-self.pA)
            if np.any(~ray):
                a[~ray] = self._origin_series(x[~ray])
        if self._B is not None:
            sb = self._B(np.log(np.minimum(x, self.rho_max)))
            far = x > self.rho_max
            v1, slope = self._ext
            sb[far] = v1 + slope * (1.0 / x[far] - 1.0 / self.rho_max)
            b = sb * x ** (-self.pB)
        return a, b

    def direct(self, rho: ArrayLike) -> NDArray[np.float64]:
        """mu(rho) without interpolation: quadrature up to rho_x, steepest descent beyond."""
        rho = np.atleast_1d(np.asarray(rho, dtype=np.float64))
        out = np.empty(rho.shape)
        m = rho <= self.rho_x
        out[m] = self._quad(rho[m], self._real_rule(max(self.rho_x, 1e-300)))[0]
        if np.any(~m):
            out[~m] = self._tail_direct(rho[~m]) if (self.has_ray or self.has_edge or self.has_line) else 0.0
        return out
