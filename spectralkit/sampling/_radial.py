"""Tabulated inverse-CDF samplers of frequency norms for any finite signed radial measure.

Conventions (``docs/conventions.md``, ``docs/architecture.md`` Contract 2): the signed
radial density of a radial spectral measure mu on R^d is f(rho) = S_{d-1} rho^(d-1) mu(rho), with
int_0^inf f = k(0). Its Jordan parts give the two radial laws

    p_plus(rho) ∝ max(f(rho), 0),    p_minus(rho) ∝ max(-f(rho), 0),

with normalising constants the masses m_plus, m_minus (k(0) = m_plus - m_minus).

:class:`RadialSampler` samples p_plus or p_minus for any measure implementing Contract 2. The head
[0, rho_c] is split into the measure's constant-sign lobes; each lobe of the requested sign gets its
own inverse-CDF table (a single table across a zero of f would put samples into lobes of the wrong
sign). A table is a monotone cubic Hermite interpolant of rho(u) on adaptively refined
knots; the CDF at the knots is integrated by Gauss–Legendre quadrature per knot interval. Beyond
rho_c the tail is sampled exactly by rejection from a Pareto proposal (never truncated). The lobe
(or tail) of a draw is picked with probabilities lobe mass / total mass. A lobe with one end at a
singular point p of mu (an integrable |rho - p|^gamma) is tabulated in y with rho = p +- L y^8
(:class:`_MappedEnd`), with the density at exact offsets from p.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import qmc

from .. import _compiled
from .._numerics.chebyshev import PiecewiseChebyshev, fit_adaptive
from .._numerics.quadrature import unit_rule
from .._validation import check_count, check_rng
from ..exceptions import DivergentMassError, TransformError
from ..measures._cache import memory_get_or_compute

if TYPE_CHECKING:  # annotations only
    from ..measures import SpectralMeasure

__all__ = ["RadialSampler", "radial_sampler", "sobol_uniforms"]

# Batches below this size are looked up in numpy (see RadialSampler._lookup).
_SMALL_BATCH = 4096
#: accuracy of the density surrogate (_SurrogateCumulative): |g - g_fit| <= this x max g
_SURROGATE_TOL = 1e-13
_SURROGATE_PANELS = 1024


def _gauss_legendre_points(lo, hi, n):
    """Nodes (len(lo), n), weights (n) and widths of n-point Gauss–Legendre rules on [lo_i, hi_i]."""
    t, w = unit_rule(n)
    h = hi - lo
    return lo[:, None] + h[:, None] * t[None, :], w, h


def _drive(builds, density, cumulative):
    """Run table builds (generators) in lockstep, one batched call per kind of request and round.

    A build yields ``("density", x)`` or ``("cumulative", x)`` and receives the values at the flat
    array ``x``. Each round gathers the requests of all unfinished builds into one call of
    ``density`` (or ``cumulative``): the lobes of an oscillating measure (dozens to hundreds) then
    cost one call per refinement round instead of one per lobe, which matters when a call has a
    large fixed cost (a series, a Chebyshev evaluation per segment). The functions are elementwise,
    so every table is the one a build on its own would give.
    """
    functions = {"density": density, "cumulative": cumulative}
    requests = {}
    for i, build in enumerate(builds):
        requests[i] = next(build)
    while requests:
        replies = {}
        for kind, fn in functions.items():
            ids = [i for i, (k, _) in requests.items() if k == kind]
            if not ids:
                continue
            xs = [np.asarray(requests[i][1], dtype=np.float64).ravel() for i in ids]
            values = np.asarray(fn(np.concatenate(xs)), dtype=np.float64)
            for i, v in zip(ids, np.split(values, np.cumsum([x.size for x in xs])[:-1])):
                replies[i] = v
        requests = {}
        for i, v in replies.items():
            try:
                requests[i] = builds[i].send(v)
            except StopIteration:
                pass


class _SurrogateCumulative:
    """Exact antiderivative of a piecewise Chebyshev fit of one part's radial density.

    A table needs the mass of every knot interval and of every checked sub-interval: by
    Gauss–Legendre quadrature that is hundreds of density evaluations per knot, which dominates the
    build when one evaluation costs microseconds (a mixture of a thousand Gaussians, a Bessel
    series). The fit (degree 23 per panel, panels bisected until the interpolant misses the density
    at the test points between the nodes by at most ``_SURROGATE_TOL`` times the largest density
    value) is integrated exactly, so an interval mass costs two evaluations of a Chebyshev series.
    Its error, ``error`` per unit length in absolute density units, enters the tables' stated
    integration and inverse-CDF errors (end of :meth:`_LobeTable._build`).
    """

    def __init__(self, interp, error):
        edges, coefs = interp.edges, np.real(interp.coefs)
        half = 0.5 * np.diff(edges)
        anti = np.polynomial.chebyshev.chebint(coefs, lbnd=-1, axis=1) * half[:, None]
        self._edges = edges
        self.density = interp  # the fit itself: what the tables of its lobes read as the density
        self._panels = PiecewiseChebyshev(edges, anti)
        self._prefix = np.concatenate([[0.0], np.cumsum(anti.sum(axis=1))])  # T_k(1) = 1
        self.error = float(error)

    def __call__(self, x):
        x = np.clip(np.asarray(x, dtype=np.float64), self._edges[0], self._edges[-1])
        idx = np.clip(np.searchsorted(self._edges, x, side="right") - 1, 0, len(self._edges) - 2)
        return self._prefix[idx] + self._panels(x)


class _FastCumulative:
    """The measure's cumulative mass as the tables read it: ``cumulative(rho, fast=True)``, whose
    interpolated terms carry the absolute error ``abs_error``."""

    def __init__(self, measure):
        self._measure = measure
        self.abs_error = measure.fast_cumulative_error

    def __call__(self, rho):
        return self._measure.cumulative(rho, fast=True)


class _SurrogateDensity:
    """The density as the tables read it when some lobes take their masses from a fitted surrogate
    (:class:`_SurrogateCumulative`): inside those lobes the fit itself (clipped at 0), so that a
    table's knots, slopes and masses describe one law (whose distance from the true density is the
    surrogate's stated error), without a costly evaluation of the route per knot (exp(-r^2/8) cos(r)
    cos(2r) in d = 256: 78 s of multiple-precision Laguerre sums); elsewhere and at the lobes' ends
    the density itself."""

    def __init__(self, density, surrogate, lobes):
        self._density, self._surrogate = density, surrogate
        self.singular = density.singular
        self._edges = np.array(sorted(lobes), dtype=np.float64).ravel()

    def __call__(self, rho):
        rho = np.asarray(rho, dtype=np.float64)
        # inside a used lobe: odd position among its sorted (disjoint) ends, not on an end
        pos = np.searchsorted(self._edges, rho, side="right")
        inside = (pos % 2 == 1) & ~np.isin(rho, self._edges)
        out = np.empty(rho.shape)
        if np.any(inside):
            out[inside] = np.maximum(self._surrogate.density(rho[inside]), 0.0)
        if not np.all(inside):
            out[~inside] = self._density(rho[~inside])
        return out


def _density_surrogate(density, lobes, masses=None, rel_noise=0.0):
    """(surrogate, [uses it per lobe]) for the lobes [(a, b), ...] of one part, or (None, all False).

    One fit over all lobes, their ends as panel breaks; a lobe ending at a singular point of mu, or
    with a panel the fit cannot resolve (noisy values), keeps the quadrature of the density itself.
    So does a lobe whose surrogate mass misses its measured mass ``masses`` = [(mass, error), ...]
    by more than 1e-6 of it plus its error: the fit's nodes can step over a narrow peak at a lobe's
    end (exp(-sqrt(r)) cos(r) in d = 64: a lobe of [1.0148, 10] whose mass sits within 0.01 of its
    left end read as zero, within the fit's stated error, which is relative to the largest density
    of all lobes, 1e9 times this lobe's).

    ``rel_noise``: the density's own stated relative error. The fit is not asked to resolve it
    (exp(-r) J_0(2 r) in d = 2, values good to 1e-9: no panel met 1e-13, and the tables fell back
    to quadrature of the route itself, 30 s); the tables' errors are those of the values, as with
    quadrature of the density.
    """
    ends = np.unique(np.array([e for lb in lobes for e in lb], dtype=np.float64))
    probe = np.concatenate([np.linspace(a, b, 33) for a, b in lobes])
    with np.errstate(all="ignore"):
        values = np.asarray(density(probe), dtype=np.float64)
    scale = float(np.max(values[np.isfinite(values)], initial=0.0))
    if not (np.all(np.isfinite(values)) and scale > 0 and math.isfinite(scale)):
        return None, [False] * len(lobes)
    singular = np.asarray(getattr(density, "singular", ()), dtype=np.float64)
    best = None, [False] * len(lobes)
    # strictly first; where a lobe stays unresolved, again with the values' own error allowed for
    for allowance in (0.0, rel_noise) if rel_noise > 0 else (0.0,):
        try:
            interp, worst = fit_adaptive(
                density,
                float(ends[0]),
                float(ends[-1]),
                degree=24,
                tol=_SURROGATE_TOL,
                floor=lambda v: scale,
                relative=False,
                max_depth=40,
                max_panels=_SURROGATE_PANELS,
                fallback=True,
                breaks=ends,
                # the values' own error, times 4 for the interpolant's Lebesgue constant
                noise=lambda v, e=allowance: 4.0 * e * float(np.max(np.abs(v))) / scale,
            )
        except TransformError:  # a non-finite value off the tables' own points: the direct route decides
            return None, [False] * len(lobes)
        # a lobe ending at a singular point of mu keeps direct quadrature whether or not the fit
        # converged there (the density's value on the point itself is no guide: finite at a kink, a
        # stand-in at an integrable singularity)
        uses = []
        for a, b in lobes:
            inside = (interp.edges[:-1] >= a) & (interp.edges[1:] <= b)
            at_singular = bool(np.isin([a, b], singular).any())
            uses.append(bool(inside.any() and not interp.direct[inside].any() and not at_singular))
        fit = _SurrogateCumulative(interp, worst * scale)
        if masses is not None:
            ab = np.array(lobes, dtype=np.float64)
            fitted = np.abs(fit(ab[:, 1]) - fit(ab[:, 0]))
            uses = [u and abs(f_m - m) <= 1e-6 * m + e for u, f_m, (m, e) in zip(uses, fitted, masses)]
        if sum(uses) > sum(best[1]):
            best = fit, uses
        if all(uses):
            break
    return best


def _hermite_eval(u, u_knots, x_knots, slopes):
    """Pure-numpy cubic Hermite evaluation of x(u) (reference for ``_compiled.inverse_cdf_lookup``)."""
    u = np.asarray(u, dtype=np.float64)
    i = np.clip(np.searchsorted(u_knots, u, side="right") - 1, 0, len(u_knots) - 2)
    h = u_knots[i + 1] - u_knots[i]
    t = (u - u_knots[i]) / h
    t2 = t * t
    t3 = t2 * t
    return (
        (2 * t3 - 3 * t2 + 1) * x_knots[i]
        + (t3 - 2 * t2 + t) * h * slopes[i]
        + (-2 * t3 + 3 * t2) * x_knots[i + 1]
        + (t3 - t2) * h * slopes[i + 1]
    )


def sobol_uniforms(n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``n`` scrambled Sobol points in [0, 1) (one dimension) for quasi-Monte Carlo norms.

    Parameters
    ----------
    n : int
        Number of points (any n; powers of two keep the balance properties of the sequence).
    rng : numpy.random.Generator
        Source of the scrambling.
    """
    n = check_count("n", n)
    if n == 0:
        return np.empty(0)
    engine = qmc.Sobol(d=1, scramble=True, seed=rng)
    m = int(math.ceil(math.log2(max(n, 1))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # balance warning when n is not 2^m
        u = engine.random_base2(m)[:n, 0] if n == 2**m else engine.random(n)[:, 0]
    return np.minimum(u, np.nextafter(1.0, 0.0))


class _LobeTable:
    """Inverse-CDF table of one constant-sign lobe [a, b] of the density g = max(sign f, 0) >= 0.

    Knots x_0 = a < ... < x_K = b, cumulative masses G(x_i) by Gauss–Legendre quadrature (16 nodes
    per knot interval), normalised u_i = G(x_i) / G(b), slopes dx/du = G(b) / g(x_i) limited to
    three times the adjacent secants (Fritsch–Carlson: the cubic Hermite interpolant is then
    monotone). Intervals are bisected until (i) the 8- and 16-node integrals agree to ``tol / 10``
    of the lobe mass and (ii) the table inverts the CDF to ``|G(x(u)) / G(b) - u| <= tol / 4`` at
    five u-points per interval; ``u_error`` is then measured at nine other u-points per interval
    (a failure sends those intervals back to refinement). Densities and integrals are cached per
    interval: only new intervals and their neighbours (whose limited slopes change) are redone.

    The build is a generator of density requests (:func:`_drive`); :meth:`many` builds the tables
    of all lobes of one sign together, one batched density call per refinement round.
    """

    _CHECK_T = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    _DENSE_T = np.linspace(0.05, 0.95, 9) + 0.0137  # offset: not the refinement points

    def __init__(self, density, a, b, tol, cumulative=None):
        """The lobe [a, b] of ``density`` at local tolerance ``tol``; :meth:`many` builds the table."""
        self.a, self.b, self.tol = float(a), float(b), float(tol)
        self._density = density
        self._cumulative = cumulative

    @classmethod
    def many(cls, density, specs, cumulative=None, uses=None, max_knots=100_000):
        """The tables of the lobes ``specs`` = [(a, b, tol), ...], built in lockstep; ``uses``: per
        lobe, whether its masses come from ``cumulative`` (default: all, when it is given)."""
        tables = [
            cls(density, a, b, tol, cumulative if uses is None or uses[j] else None)
            for j, (a, b, tol) in enumerate(specs)
        ]
        _drive([t._build(max_knots) for t in tables], density, cumulative)
        return tables

    def _build(self, max_knots):
        tol = self.tol
        x = self._initial_grid(self.a, self.b)
        g = yield ("density", x)
        i16 = yield from self._mass(x[:-1], x[1:], 16)
        i8 = yield from self._mass(x[:-1], x[1:], 8)
        need = np.ones(len(x) - 1, dtype=bool)
        err = np.zeros(len(x) - 1)
        dense_done = False
        for _ in range(200):
            total = i16.sum()
            if not total > 0:
                raise ValueError(f"the lobe [{self.a:g}, {self.b:g}] has zero mass")
            tol_abs = tol * total
            # near an infinite density (an integrable singularity at a lobe end) one ulp of rho
            # carries a mass that no table can resolve: that is the floor of the u-error there
            floor = 4 * (yield from self._ulp_mass(x, g))
            hm = self._hermite_steps(x, g, i16)
            idx = np.nonzero(need)[0]
            if idx.size:
                err[idx] = (yield from self._errors(x, i16, hm, idx, self._CHECK_T)).max(axis=1)
            bad = (err > np.maximum(tol_abs / 4, floor)) | (np.abs(i16 - i8) > 0.1 * tol_abs)
            if not bad.any():
                dense = (yield from self._errors(x, i16, hm, np.arange(len(i16)), self._DENSE_T)).max(axis=1)
                dense_done = True
                if np.all(dense <= np.maximum(tol_abs, floor)):
                    break
                bad = dense > np.maximum(tol_abs / 4, floor)
                dense_done = False
            if len(x) + bad.sum() > max_knots:
                break
            x, g, i16, i8, err, need = yield from self._split(x, g, i16, i8, err, bad)
        if not dense_done:
            hm = self._hermite_steps(x, g, i16)
            dense = (yield from self._errors(x, i16, hm, np.arange(len(i16)), self._DENSE_T)).max(axis=1)
        self.u_error = float(dense.max() / i16.sum())
        #: the smallest u-error float64 can reach at this lobe's singular end (0 without one)
        self.u_error_floor = float(np.max(4 * (yield from self._ulp_mass(x, g))) / i16.sum())
        self._finalize(x, g, i16, i8)
        # masses from a fitted density (_SurrogateCumulative) carry its error over the lobe, masses
        # from an interpolated CDF (_FastCumulative) that of its two ends
        fit = getattr(self._cumulative, "error", 0.0) * (self.b - self.a)
        fit += 2.0 * getattr(self._cumulative, "abs_error", 0.0)
        self.integration_error += fit
        self.u_error += 2.0 * fit / self.mass
        self.converged = self.u_error <= max(tol, self.u_error_floor)

    def _ulp_mass(self, x, g):
        """Per interval, the mass within one ulp of its ends where the density is infinite (else 0).

        Estimated as g(inside) x ulp, g taken one ulp inside the end: a quadrature rule on a
        one-ulp interval puts its nodes on the ends themselves, where g is infinite, and the
        infinite "mass" it returned accepted any table as converged (an inverse CDF 0.1 off in u
        next to the kink of cos(r)/(1 + r^2)^2 in d = 3, whose density is finite there)."""
        singular = getattr(self._density, "singular", np.empty(0))
        out = np.zeros(len(x) - 1)
        for end, inside in ((0, np.nextafter(x[:-1], np.inf)), (1, np.nextafter(x[1:], -np.inf))):
            ends = x[:-1] if end == 0 else x[1:]
            sing = ~np.isfinite(g[:-1] if end == 0 else g[1:]) | np.isin(ends, singular)
            if sing.any():
                near = (yield ("density", inside[sing])) * np.abs(inside[sing] - ends[sing])
                out[sing] = np.maximum(out[sing], np.where(np.isfinite(near), near, 0.0))
        return out

    def _mass(self, lo, hi, n):
        """The lobe's mass over [lo_i, hi_i]: exact (cumulative mass) when given, else n-point rules."""
        if self._cumulative is not None:
            v = yield ("cumulative", np.concatenate([hi, lo]))
            return np.abs(v[: len(hi)] - v[len(hi) :])
        nodes, w, h = _gauss_legendre_points(lo, hi, n)
        v = yield ("density", nodes)
        return (v.reshape(nodes.shape) @ w) * h

    @staticmethod
    def _initial_grid(a, b):
        grid = np.linspace(a, b, 33)
        lo = a if a > 0 else b * 1e-9
        if b / lo > 100.0:  # wide lobes (heavy tails): add log-spaced knots near the left end
            grid = np.concatenate([grid, np.geomspace(lo, b, 65)])
        return np.unique(np.clip(grid, a, b))

    @staticmethod
    def _hermite_steps(x, g, mass):
        """Per interval, (h m_left, h m_right): mass x limited slopes dx/ds at both ends (s = mass)."""
        dx = np.diff(x)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            secant = np.where(mass > 0, dx / mass, np.inf)
            m = np.where(g > 0, 1.0 / g, np.inf)
            m = np.minimum(m, np.minimum(np.r_[np.inf, 3.0 * secant], np.r_[3.0 * secant, np.inf]))
            left = np.where(mass > 0, mass * m[:-1], 0.0)
            right = np.where(mass > 0, mass * m[1:], 0.0)
        # a zero-mass interval between two zero-density knots: a straight line
        left = np.where(np.isfinite(left), left, dx)
        right = np.where(np.isfinite(right), right, dx)
        return left, right

    def _errors(self, x, mass, hm, idx, t):
        """|G(x(s)) - G(x_i) - s| at s = t mass_i on the intervals ``idx`` (absolute mass units)."""
        x0, x1 = x[idx], x[idx + 1]
        hl, hr = hm[0][idx], hm[1][idx]
        tt = t[None, :]
        t2, t3 = tt * tt, tt * tt * tt
        xx = (
            (2 * t3 - 3 * t2 + 1) * x0[:, None]
            + (t3 - 2 * t2 + tt) * hl[:, None]
            + (-2 * t3 + 3 * t2) * x1[:, None]
            + (t3 - t2) * hr[:, None]
        )
        xx = np.clip(xx, x0[:, None], x1[:, None])
        part = (yield from self._mass(np.repeat(x0, len(t)), xx.ravel(), 16)).reshape(xx.shape)
        return np.abs(part - mass[idx][:, None] * tt)

    def _split(self, x, g, i16, i8, err, bad):
        """Bisect the ``bad`` intervals; new intervals and their neighbours are marked for checking."""
        lo, hi = x[:-1][bad], x[1:][bad]
        mid = 0.5 * (lo + hi)
        gm = yield ("density", mid)
        a16 = yield from self._mass(np.r_[lo, mid], np.r_[mid, hi], 16)
        a8 = yield from self._mass(np.r_[lo, mid], np.r_[mid, hi], 8)
        k = len(lo)
        pos = np.nonzero(bad)[0]
        x = np.insert(x, pos + 1, mid)
        g = np.insert(g, pos + 1, gm)
        # interval pos -> (left half, right half)
        i16 = np.insert(i16, pos + 1, a16[k:])
        i16[pos + np.arange(k)] = a16[:k]
        i8 = np.insert(i8, pos + 1, a8[k:])
        i8[pos + np.arange(k)] = a8[:k]
        err = np.insert(err, pos + 1, 0.0)
        new = np.zeros(len(i16), dtype=bool)
        left_new = pos + np.arange(k)
        new[left_new] = True
        new[left_new + 1] = True
        need = new.copy()
        need[:-1] |= new[1:]
        need[1:] |= new[:-1]
        return x, g, i16, i8, err, need

    def _finalize(self, x, g, i16, i8):
        """Normalised knots, u and slopes dx/du; drop end intervals without resolvable mass."""
        pos = np.nonzero(i16 > 0)[0]
        first, last = pos[0], pos[-1]
        x, g = x[first : last + 2], g[first : last + 2]
        i16, i8 = i16[first : last + 1], i8[first : last + 1]
        total = i16.sum()
        u = np.minimum(np.concatenate([[0.0], np.cumsum(i16) / total]), 1.0)  # rounding may exceed 1
        u[-1] = 1.0
        # Where the density underflows (rho^(d-1) near 0 in high d) u stalls in float64; keep the
        # last knot of each run of equal u (the skipped mass is below float64 resolution of u).
        keep = np.r_[np.diff(u) > 1e-290, True]  # 1e-290: secants dx/du must not overflow
        x, u, g = x[keep], u[keep], g[keep]
        u[0] = 0.0
        pdf = g / total
        with np.errstate(divide="ignore", over="ignore"):  # 1/pdf overflows where pdf underflows
            secant = np.diff(x) / np.diff(u)
            m = np.where(pdf > 0, 1.0 / pdf, np.inf)
        m = np.minimum(m, np.minimum(np.r_[np.inf, 3.0 * secant], np.r_[3.0 * secant, np.inf]))
        self.x, self.u, self.slopes = x, u, m
        self.mass = float(total)
        self.integration_error = float(np.abs(i16 - i8).sum())


class _SignedPart:
    """g(rho) = max(sign f(rho), 0): the density of one Jordan part (a class, so it pickles).

    At the measure's singular points (an integrable singularity, a jump) f may be infinite: g is
    then +inf there (a lobe end), never evaluated inside a lobe.
    """

    def __init__(self, f, sign, singular=()):
        self.f, self.sign = f, sign
        self.singular = np.asarray(singular, dtype=np.float64)

    def __call__(self, rho):
        rho = np.asarray(rho, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            v = np.asarray(self.f(rho), dtype=np.float64)
        at_zero = (rho == 0) & ~np.isfinite(v)
        if at_zero.any():
            # f(0) = lim rho^(d-1) mu(rho) is a 0 * inf form when mu is singular at 0 (e.g. the
            # rational quadratic in d >= 3): use f(0+), evaluated at rho = 1e-300
            v = np.where(at_zero, np.asarray(self.f(np.array([1e-300])), dtype=np.float64)[0], v)
        bad = ~np.isfinite(v)
        if bad.any() and self.singular.size:
            bad &= ~np.isin(rho, self.singular)
            v = np.where(np.isin(rho, self.singular) & ~np.isfinite(v), np.inf, v)
        if bad.any():
            where = rho[bad]
            raise TransformError(
                f"the radial density f(rho) is not finite at rho = {where.ravel()[0]:.6g} "
                f"({where.size} of {v.size} points); cannot tabulate its inverse CDF"
            )
        return np.maximum(self.sign * v, 0.0)


class _MappedEnd:
    """The density of one Jordan part on a lobe with a singular end p, in y in [0, 1] with
    rho = p + span y^q (span = -(lobe length) when p is the right end): g(rho) |span| q y^(q-1).

    Next to an integrable |rho - p|^gamma (gamma > -1) the rho-table cannot be resolved in float64
    (for gamma near -1 most of the lobe's mass lies within a few ulps of p). In y the density is
    ~ y^(q (1 + gamma) - 1), bounded for gamma >= 1/q - 1 and mildly singular below, and y near 0
    has full float resolution; f is evaluated at the exact offsets span y^q
    (``radial_density_near`` of the measure)."""

    Q = 8.0

    def __init__(self, near, sign, p, span):
        self.near, self.sign, self.p, self.span = near, sign, float(p), float(span)
        self.singular = np.array([0.0])

    def __call__(self, y):
        y = np.asarray(y, dtype=np.float64)
        out = np.zeros(y.shape)
        # offsets below 1e-280 (y < 1e-35 for a unit span): no mass to speak of, and not a float
        live = np.abs(self.span) * y**self.Q > 1e-280
        yl = y[live]
        with np.errstate(invalid="ignore", over="ignore", under="ignore"):
            g = np.maximum(self.sign * self.near(self.p, self.span * yl**self.Q), 0.0)
            out[live] = g * abs(self.span) * self.Q * yl ** (self.Q - 1.0)
        return np.where(np.isfinite(out), out, 0.0)

    def to_rho(self, y):
        return self.p + self.span * np.asarray(y) ** self.Q


class RadialSampler:
    """Tabulated inverse-CDF sampler of the radial law p_plus or p_minus of a signed measure.

    Parameters
    ----------
    measure : SpectralMeasure
        Any object implementing Contract 2 of ``docs/architecture.md`` (``dim``,
        ``radial_density``, ``lobes``, ``tail``, ``mass_plus``, ``mass_minus``).
    sign : {+1, -1}
        Which Jordan part to sample: p_sign(rho) ∝ max(sign f(rho), 0).
    tol : float, optional
        Target accuracy of the inverse CDF of p_sign (default 1e-10):
        ``u_error = max_u |F(F_table^-1(u)) - u| <= tol`` in the u of the whole law (the mixture
        of the lobes and the tail). A lobe of probability w_j gets the local tolerance
        ``min(tol / w_j, 1e-4)`` in its own u, which bounds its share of the global error by tol;
        the many tiny lobes of oscillating tails thus need few knots.

    Attributes
    ----------
    mass : float
        Total mass of this sign (the normalising constant of p_sign): the sum of the measure's lobe
        masses of this sign and of its tail mass of this sign.
    weights : ndarray
        Mixture probabilities of the lobes (in order) and of the tail (last entry, 0 without tail).
    lobes : list of (a, b)
        The intervals of the tables.
    u_error : float
        Measured inverse-CDF error in the u of p_sign: max over lobes of w_j times the lobe table's
        error (dense check, nine u-points per knot interval, each against the Gauss–Legendre CDF).
    u_error_local : float
        The largest error of one lobe table in that lobe's own u.
    mass_discrepancy : float
        Max over lobes of |integrated lobe mass - measure's lobe mass| / total mass (a cross-check of
        the quadrature against the measure; large values mean the table misses part of the lobe).
    dropped_mass : float
        Mass of sliver lobes (< 1e-14 of this sign's mass) that are not sampled.
    n_knots : int
        Total number of knots of all tables.
    build_time : float
        Seconds spent building the tables.
    tail_acceptance : float
        Expected acceptance rate of the tail rejection sampler (nan without tail).

    Notes
    -----
    Sampling uses one uniform per norm for the head (so scrambled Sobol uniforms give stratified
    norms, :func:`sobol_uniforms`) and, for draws that fall into the tail, extra uniforms from the
    caller's Generator for the Pareto proposals and the accept/reject steps: density of a proposal
    ∝ rho^-exponent on [rho_c, inf), acceptance max(sign f(rho), 0) / (bound rho^-exponent).
    """

    def __init__(self, measure: SpectralMeasure, sign: int = +1, *, tol: float = 1e-10) -> None:
        if sign not in (1, -1) or isinstance(sign, bool):
            raise ValueError(f"sign must be +1 or -1, got {sign!r}")
        if not (isinstance(tol, (float, int)) and not isinstance(tol, bool) and 1e-14 <= tol < 1e-2):
            raise ValueError(f"tol must be a number in [1e-14, 1e-2), got {tol!r}")
        t0 = time.perf_counter()
        self.measure = measure
        self.sign = int(sign)
        self.tol = float(tol)
        self.dim = measure.dim
        s = self.sign
        density = self._density = _SignedPart(
            measure.radial_density, s, getattr(measure, "singular_points", ())
        )
        # lobes/tail raise DivergentMassError (with the reason) when the mass is infinite
        lobes = [lb for lb in measure.lobes if lb.sign == s and lb.mass > 0]
        tail = measure.tail
        tail_mass = 0.0 if tail is None else float((tail.mass_plus if s > 0 else tail.mass_minus).value)
        # Lobes below 1e-14 of this sign's mass (round-off slivers near zeros of f) are dropped:
        # the bias is below the accuracy of the masses themselves; it is reported as dropped_mass.
        scale = sum(lb.mass for lb in lobes) + tail_mass
        self.dropped_mass = float(sum(lb.mass for lb in lobes if lb.mass <= 1e-14 * scale))
        lobes = [lb for lb in lobes if lb.mass > 1e-14 * scale]
        shells = [
            (float(radius), abs(float(m)))
            for radius, m in getattr(measure, "shells", ())
            if (m > 0) == (s > 0)
        ]
        scale += sum(m for _, m in shells)
        cumulative = None
        if getattr(measure, "has_cumulative", False):
            cumulative = _FastCumulative(measure)
        whole = lobes
        lobes, parent = self._split_doubly_singular(measure, lobes)
        # a half keeps its whole lobe's local tolerance (stricter than its own share would need)
        specs = [(lb.a, lb.b, min(self.tol * scale / lb.mass, 1e-4)) for lb in lobes]
        tables = self._tables_for(measure, density, lobes, specs, cumulative)
        # the halves of a lobe share its mass in the ratio of their tables' integrals
        table_sum = np.bincount(parent, weights=[t.mass for t in tables], minlength=len(whole))
        masses = [float(lb.mass * t.mass / table_sum[j]) for lb, t, j in zip(lobes, tables, parent)]
        discrepancy = [abs(table_sum[j] - lb.mass) for j, lb in enumerate(whole)]
        total = float(np.sum(masses) + sum(m for _, m in shells) + tail_mass)
        if total <= 0:
            which = "positive" if s > 0 else "negative"
            raise ValueError(
                f"the measure of {getattr(measure, 'kernel', measure)!r} in dim={self.dim} has no "
                f"{which} part (mass of sign {s:+d} is 0); nothing to sample"
            )
        self.mass = total
        self.mass_error = float(sum(t.integration_error for t in tables))
        self.mass_discrepancy = float(max(discrepancy, default=0.0) / total)
        self.lobes = [(t.a, t.b) for t in tables]
        self.shells = shells
        self.weights = np.array(masses + [m for _, m in shells] + [tail_mass]) / total
        self._tables = tables
        self.u_error = float(max((w * t.u_error for w, t in zip(self.weights, tables)), default=0.0))
        self.u_error_local = float(max((t.u_error for t in tables), default=0.0))
        self.n_knots = int(sum(len(t.x) for t in tables))
        self.tail = tail if tail_mass > 0 else None
        self.u_error_floor = float(
            max((w * t.u_error_floor for w, t in zip(self.weights, tables)), default=0.0)
        )
        if self.u_error > max(self.tol, self.u_error_floor):
            warnings.warn(
                f"RadialSampler: inverse-CDF error {self.u_error:.2g} exceeds tol={self.tol:g} "
                f"(knot budget exhausted)",
                RuntimeWarning,
                stacklevel=2,
            )
        if self.mass_discrepancy > 1e-6:
            warnings.warn(
                f"RadialSampler: integrated lobe masses differ from the measure's by "
                f"{self.mass_discrepancy:.2g} of the total",
                RuntimeWarning,
                stacklevel=2,
            )
        self._cum = np.concatenate([[0.0], np.cumsum(self.weights)])
        # u in [0, lobes) -> tables; then one share per shell; the rest -> the tail
        self._lobes_end = float(self._cum[len(tables)]) if (shells or self.tail is not None) else 1.0
        self._shell_edges = self._cum[len(tables) : len(tables) + len(shells) + 1]
        self._head = float(self._cum[len(tables) + len(shells)]) if self.tail is not None else 1.0
        self._build_global_table(tables)
        if self.tail is not None:
            e, rc, bnd = self.tail.exponent, self.tail.rho_c, self.tail.bound
            if not e > 1:
                raise DivergentMassError(f"tail exponent {e!r} <= 1: infinite mass beyond rho_c={rc!r}")
            envelope = bnd * rc ** (1.0 - e) / (e - 1.0)
            self.tail_acceptance = float(min(1.0, tail_mass / envelope))
        else:
            self.tail_acceptance = float("nan")
        self.tail_envelope_violations = 0
        self.build_time = time.perf_counter() - t0

    @staticmethod
    def _split_doubly_singular(measure, lobes):
        """(lobes, index of the original lobe per entry): a lobe whose two ends are singular points
        of mu is cut in the middle, so that each half is tabulated in y (:class:`_MappedEnd`) from
        its one singular end (a table in rho does not resolve an integrable singularity: a
        band-limited measure between two knots, (b - rho)^-1/2 at both ends in even d, exhausted
        the knot budget). The halves carry the whole lobe's mass until their tables share it."""
        singular = set(float(p) for p in getattr(measure, "singular_points", ()))
        if getattr(measure, "radial_density_near", None) is None:
            return lobes, np.arange(len(lobes))
        out, parent = [], []
        for j, lb in enumerate(lobes):
            if lb.a > 0 and lb.a in singular and lb.b in singular:
                mid = 0.5 * (lb.a + lb.b)
                out += [dataclasses.replace(lb, b=mid), dataclasses.replace(lb, a=mid)]
                parent += [j, j]
            else:
                out.append(lb)
                parent.append(j)
        return out, np.array(parent, dtype=np.intp)

    def _tables_for(self, measure, density, lobes, specs, cumulative):
        """The lobes' tables: in rho (masses from ``cumulative``, else from a fitted surrogate of f
        where it converges), or in y (:class:`_MappedEnd`) for a lobe with one singular end where
        the measure gives f at exact offsets from it."""
        singular = set(float(p) for p in getattr(measure, "singular_points", ()))
        near = getattr(measure, "radial_density_near", None)
        mapped = {}
        for j, lb in enumerate(lobes):
            ends = [e for e in (lb.b, lb.a) if float(e) in singular and e > 0]
            if near is not None and len(ends) == 1:
                p = ends[0]
                mapped[j] = _MappedEnd(near, self.sign, p, (lb.a - lb.b) if p == lb.b else (lb.b - lb.a))
        plain = [j for j in range(len(lobes)) if j not in mapped]
        tables = [None] * len(lobes)
        if plain:
            uses = None
            if cumulative is None:
                cumulative, uses = _density_surrogate(
                    density,
                    [(lobes[j].a, lobes[j].b) for j in plain],
                    [(lobes[j].mass, lobes[j].error) for j in plain],
                    max((t.rel_error for _, t in getattr(measure, "transforms", ())), default=0.0),
                )
            read = density
            if uses is not None and cumulative is not None:
                used = [(lobes[j].a, lobes[j].b) for j, u in zip(plain, uses) if u]
                read = _SurrogateDensity(density, cumulative, used)
            built = _LobeTable.many(read, [specs[j] for j in plain], cumulative=cumulative, uses=uses)
            for j, t in zip(plain, built):
                tables[j] = t
        for j, dens in mapped.items():
            (t,) = _LobeTable.many(dens, [(0.0, 1.0, specs[j][2])])
            t.a, t.b, t.mapped = float(lobes[j].a), float(lobes[j].b), dens
            tables[j] = t
        return tables

    def __repr__(self):
        return (
            f"RadialSampler(sign={self.sign:+d}, dim={self.dim}, mass={self.mass:.6g}, "
            f"lobes={len(self._tables)}, tail={self.tail is not None}, n_knots={self.n_knots}, "
            f"u_error={self.u_error:.1e})"
        )

    def sample(self, n: int, rng: np.random.Generator, *, qmc: bool = False) -> NDArray[np.float64]:
        """Draw ``n`` norms from p_sign.

        Parameters
        ----------
        n : int
        rng : numpy.random.Generator
            All randomness comes from it.
        qmc : bool, optional
            Use scrambled Sobol uniforms (stratified norms) instead of i.i.d. uniforms for the head.
        """
        n = check_count("n", n)
        check_rng(rng)
        u = sobol_uniforms(n, rng) if qmc else rng.random(n)
        return self.sample_from_uniforms(u, rng)

    def sample_from_uniforms(
        self, u: ArrayLike, rng: np.random.Generator | None = None
    ) -> NDArray[np.float64]:
        """Transform uniforms ``u`` in [0, 1) into norms (one uniform per norm).

        Draws whose uniform falls into the tail's share (u >= 1 - tail weight) are replaced by exact
        tail draws, which need ``rng`` for the rejection steps.
        """
        u = np.asarray(u, dtype=np.float64)
        if u.ndim != 1:
            raise ValueError(f"u must be a 1-D array, got shape {u.shape}")
        if u.size and not (u.min() >= 0 and u.max() < 1):  # NaN fails both comparisons
            raise ValueError("u must lie in [0, 1) (and contain no NaN)")
        out = np.empty_like(u)
        if self._u_knots is not None:
            self._lookup(u, out)
            for lo, hi, mapped in self._mapped:
                inside = (u >= lo) & (u <= hi)
                out[inside] = mapped.to_rho(np.clip(out[inside], 0.0, 1.0))
        for (radius, _), lo, hi in zip(self.shells, self._shell_edges[:-1], self._shell_edges[1:]):
            out[(u >= lo) & (u < hi)] = radius  # a sphere shell: every norm equals its radius
        if self.tail is not None:
            idx = np.flatnonzero(u >= self._head)  # the tail's share of [0, 1): exact tail draws
            if idx.size:
                if rng is None:
                    raise ValueError("rng is required: this law has a tail that is sampled by rejection")
                check_rng(rng)
                out[idx] = self._sample_tail(idx.size, rng)
        return out

    def _build_global_table(self, tables):
        """One knot table for the whole mixture, in the global u of p_sign.

        Lobe j occupies u in [C_j, C_j + w_j] (C_j = cumulative weight): its local knots map to
        C_j + w_j u_local and its slopes to dx/du_local / w_j. Consecutive lobes are separated by
        a gap interval one ulp wide (end of lobe j at C_{j+1}, start of lobe j + 1 at the next
        float), so the jump of the inverse CDF between lobes is never interpolated: a uniform equal
        to C_{j+1} returns the endpoint b_j. With a tail, a last knot at u = 1 closes the table;
        uniforms in [head, 1) are overwritten by tail draws. One compiled lookup serves all lobes.
        """
        if not tables:
            self._u_knots = None
            return
        us, xs, ms = [], [], []
        self._mapped = []  # (u_lo, u_hi, _MappedEnd): lookups in y, mapped back to rho
        for j, t in enumerate(tables):
            c, w = self._cum[j], self.weights[j]
            u = c + w * t.u
            u[-1] = self._cum[j + 1]
            if j:
                u[0] = np.nextafter(us[-1][-1], 2.0)
            if getattr(t, "mapped", None) is not None:
                self._mapped.append((float(u[0]) if j else 0.0, float(u[-1]), t.mapped))
            us.append(u)
            xs.append(t.x)
            ms.append(t.slopes / w)
        if self.tail is not None or self.shells:
            us.append(np.array([1.0]))
            xs.append(np.array([self.tail.rho_c if self.tail is not None else xs[-1][-1]]))
            ms.append(np.array([0.0]))
        u, x, m = np.concatenate(us), np.concatenate(xs), np.concatenate(ms)
        u[0], u[-1] = 0.0, 1.0
        # knots of tiny-weight lobes can collapse in global u: keep the last knot of each run
        keep = np.r_[np.diff(u) > 0, True]
        self._u_knots = np.ascontiguousarray(u[keep])
        self._x_knots = np.ascontiguousarray(x[keep])
        self._slopes = np.ascontiguousarray(np.minimum(m[keep], 1e300))  # finite for the interpolant

    def _lookup(self, v, out):
        # Small batches in numpy: starting a parallel numba region costs ~0.1-20 ms (more on a
        # loaded machine), far more than a few thousand cubic evaluations. Same formula; results
        # may differ from the compiled path in the last bit (fma contraction), never by more.
        if len(v) < _SMALL_BATCH:
            out[...] = _hermite_eval(v, self._u_knots, self._x_knots, self._slopes)
        else:
            _compiled.inverse_cdf_lookup(v, self._u_knots, self._x_knots, self._slopes, out)

    def _sample_tail(self, n, rng):
        e, rc, bnd = self.tail.exponent, self.tail.rho_c, self.tail.bound
        f = self.measure.radial_density
        out = np.empty(n)
        filled = 0
        acc = max(self.tail_acceptance, 1e-4)
        for _ in range(10_000):
            m = int((n - filled) / acc * 1.25) + 16
            rho = rc * (1.0 - rng.random(m)) ** (-1.0 / (e - 1.0))  # Pareto on [rc, inf)
            env = bnd * rho ** (-e)
            g = np.maximum(self.sign * f(rho), 0.0)
            self.tail_envelope_violations += int(np.count_nonzero(g > env * (1 + 1e-9)))
            take = rho[rng.random(m) * env < g][: n - filled]
            out[filled : filled + len(take)] = take
            filled += len(take)
            if filled == n:
                return out
        raise RuntimeError(
            f"tail rejection sampler accepted only {filled} of {n} draws "
            f"(acceptance {self.tail_acceptance:.2g})"
        )


def radial_sampler(measure: SpectralMeasure, sign: int = +1, *, tol: float = 1e-10) -> RadialSampler:
    """The :class:`RadialSampler` of ``measure``'s part ``sign``, built once per process.

    Tables depend only on the measure (kernel, dimension, truncation), the sign and the tolerance:
    refitting features with another seed, width or method reuses them.
    """
    key = (
        "sampler",
        measure.kernel.key,
        measure.dim,
        getattr(measure, "truncation", None),
        getattr(measure, "sympy_budget", None),
        int(sign),
        float(tol),
    )
    return memory_get_or_compute(key, lambda: RadialSampler(measure, sign, tol=tol))
