"""The Jordan split of a signed radial density: sign changes, lobes, masses and the tail.

For the signed radial density f(rho) = S_(d-1) rho^(d-1) mu(rho) the masses are
m+- = int_0^inf max(+-f, 0) drho. They are computed in two parts:

**Head** [0, rho_c]. f is evaluated on a grid that resolves every oscillation (16 points per
period of an oscillating tail) and is geometric near 0; all sign changes are located together by
a vectorised Illinois iteration (to ~1 ulp); each constant-sign *lobe* is split into pieces
(geometric for wide lobes) and integrated by vectorised adaptive Gauss–Legendre quadrature
(16- and 24-point rules, bisection until they agree to 1e-13; the error of a lobe is the sum of
the rule differences). Closed forms with an exact radial CDF give exact lobe masses instead. Next to
a singular point p (an integrable |rho - p|^gamma) a quarter of the lobe is integrated in
log|rho - p| with the density at exact offsets, and the last 2^-40 p by its fitted power law
(:func:`_near_singular`).

**Tail** [rho_c, inf), three cases:

* faster than any power: the neglected mass int_(rho_c)^inf |f| is computed (mapped quadrature)
  and, if not below 1e-16 of the mass, rho_c is moved out; it is added to the mass errors.
* a one-signed power tail |f| ~ rho^-q, q > 1: int_(rho_c)^inf f by adaptive quadrature in
  t = (rho_c / rho)^(q-1) (a smooth integrand on (0, 1]).
* an oscillating tail (compact support R): beyond ``tail_start`` the transform provides smooth
  parts with f = a(rho) - b(rho) cos(R rho + phi(rho)) (a, b e^(i phi) = S_(d-1) rho^(d-1) (A, B)).
  Lobes are integrated one by one up to rho_far (R rho_far ~ 2.5e4 rad: thousands of lobes, a
  few vectorised calls). Beyond, the method of averaging: with c = a / b and theta = R rho + phi,
  max(+-f, 0) = b h+-(theta; c), h+ = max(c - cos theta, 0), whose period average is
  H+(c) = (c (pi - theta0) + sin theta0) / pi, theta0 = arccos c (|c| < 1; c for c >= 1, 0 for
  c <= -1), H- = H+ - c. Then int_(rho_far)^inf b h dtheta/theta' =
  int_(rho_far)^inf b H(c) drho - (b / R) P(theta_far; c) + O((R rho_far)^-2 relative), P the
  zero-mean antiderivative of h - H in theta (closed form). The error is estimated by redoing the
  split at an earlier rho_mid (explicit lobes to rho_mid, averaging beyond) and taking the
  difference, plus the quadrature errors.

Every lobe and tail mass also carries the transform's own relative error (``rel_error``) times the
mass. The sampler's tail envelope |f(rho)| <= bound rho^-q is measured on a logarithmic grid from
rho_c to 1e8 rho_c (the scaled envelope tends to a constant beyond).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._numerics.quadrature import integrate_adaptive, integrate_intervals, power_law_end
from .._numerics.special import log_sphere_area
from ..exceptions import TransformError
from ._results import Estimate, Lobe, TailModel

__all__ = ["JordanInput", "jordan", "integrate_abs", "head_limit"]

_TAIL_SHARE = 1e-3  # a power tail starts where it holds less than this share of the mass
_HEAD_PERIODS = 64  # the head of an oscillating density holds at least this many periods
_FAR_PHASE = 2.5e4  # explicit tail lobes up to R rho_far ~ this many radians
_NEGLIGIBLE = 1e-16  # relative mass that may be neglected beyond rho_c (super-exponential)
_REL_TOL = 1e-13  # target of the adaptive quadrature (relative per piece)
_PER_PERIOD = 16  # grid points per period of an oscillation
_MIN_STEPS = 4  # a lobe narrower than this many grid steps: the grid is refined around it


@dataclass(frozen=True)
class JordanInput:
    """What the Jordan split needs of a measure, given explicitly.

    Attributes
    ----------
    name : str
        The kernel's name (for messages).
    dim : int
        Dimension d.
    k0 : float
        k(0) (the mass scale).
    transforms : tuple
        ``((coef, RadialTransform), ...)``: the terms' transforms.
    density : callable
        The signed radial density f(rho) = S_(d-1) rho^(d-1) mu(rho) (vectorised).
    density_near : callable or None
        ``(p, off) -> f(p + off)`` at exact offsets from a singular point p (see
        :func:`_near_singular`), else None.
    cumulative : callable or None
        The exact cumulative signed mass int_0^rho f (closed forms with radial CDFs), else None.
    truncation : float or None
        The truncation radius of a truncated measure (no tail), else None.
    """

    name: str
    dim: int
    k0: float
    transforms: tuple
    density: Callable
    density_near: Callable | None = None
    cumulative: Callable | None = None
    truncation: float | None = None


# ---------------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------------
#: the adaptive quadratures of the power tail (see _tail) and of the ends at singular points and at
#: the origin (see _near_singular) stop here
_QUAD_MAX_PANELS = 4096
#: at most this many pairs of close sign changes are refined (see _resolve_lobes)
_MAX_THIN = 256


def find_roots(f, grid, vals):
    """All sign changes of f bracketed by the grid, refined together (vectorised Illinois).

    Each iteration evaluates f once at every open bracket: ~40 vectorised calls locate thousands of
    zeros to ~1 ulp, instead of thousands of scalar root searches.
    """
    idx = np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)[0]
    if idx.size == 0:
        return np.empty(0)
    a, b = grid[idx].copy(), grid[idx + 1].copy()
    fa, fb = vals[idx].copy(), vals[idx + 1].copy()
    side = np.zeros(idx.size, dtype=np.int8)
    for it in range(100):
        # false position, with a bisection every few steps to guarantee bracket shrinkage
        with np.errstate(divide="ignore", invalid="ignore"):  # fb = fa (e.g. both underflowed): bisect
            x = b - fb * (b - a) / (fb - fa) if it % 4 != 3 else 0.5 * (a + b)
        x = np.where((x > a) & (x < b), x, 0.5 * (a + b))
        fx = f(x)
        left = np.sign(fx) == np.sign(fa)
        # Illinois: halve the stale endpoint's value when the same side is kept twice
        fb = np.where(left & (side == 1), 0.5 * fb, fb)
        fa = np.where(~left & (side == -1), 0.5 * fa, fa)
        a, fa = np.where(left, x, a), np.where(left, fx, fa)
        b, fb = np.where(left, b, x), np.where(left, fb, fx)
        side = np.where(left, 1, -1).astype(np.int8)
        done = (b - a <= 4 * np.finfo(float).eps * np.maximum(np.abs(a), np.abs(b))) | (fx == 0)
        if np.all(done):
            break
    return np.where(np.abs(fa) < np.abs(fb), a, b)


def _resolve_lobes(f, grid, vals, rounds=6):
    """``(grid, vals)`` refined where lobes are narrow against the grid.

    Where consecutive sign changes are fewer than ``_MIN_STEPS`` grid steps apart, the density
    oscillates at about the grid's resolution, and pairs of sign changes between two grid points go
    unseen (lobes of opposite sign merged into one, their masses summed with one sign: mu_256 of
    exp(-r/2) sin(2 r) J_1(r)/r has lobes of width 0.0125 near rho = 3, where the grid's step is
    0.01-0.03). There the grid gets 16 points per lobe, over the narrow lobes and two lobe widths
    beyond, until every lobe spans ``_MIN_STEPS`` steps (``rounds`` at most). The sign changes are
    read from the grid's brackets (no root refinement: that comes once, afterwards).
    """
    for _ in range(rounds):
        idx = np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)[0]
        thin = np.nonzero(np.diff(idx) < _MIN_STEPS)[0]
        if thin.size == 0 or thin.size > _MAX_THIN:
            # hundreds of narrow lobes are rounding noise (two terms whose tails cancel), not a
            # density: refining them would evaluate it at 81 points each, round after round
            break
        lo, hi = grid[idx[thin]], grid[idx[thin + 1] + 1]
        width = hi - lo
        extra = [
            np.linspace(max(a - 2 * w, grid[0]), min(b + 2 * w, grid[-1]), 81)
            for a, b, w in zip(lo, hi, width)
        ]
        new = np.setdiff1d(np.concatenate(extra), grid)
        if new.size == 0:
            break
        grid = np.concatenate([grid, new])
        order = np.argsort(grid)
        grid, vals = grid[order], np.concatenate([vals, f(new)])[order]
    return grid, vals


def _pieces(lo, hi, max_ratio=4.0, max_width=np.inf):
    """Split intervals into pieces with hi/lo <= max_ratio (geometric) and width <= max_width.

    Returns (piece_lo, piece_hi, owner): owner[i] is the interval of piece i.
    """
    out_lo, out_hi, owner = [], [], []
    for i, (a, b) in enumerate(zip(lo, hi)):
        if not b > a:
            continue
        start = a if a > 0 else b * 1e-12
        cuts = [a] if a > 0 else [0.0]
        if b / start > max_ratio:
            n = int(math.ceil(math.log(b / start) / math.log(max_ratio)))
            cuts += list(np.geomspace(start, b, n + 1)[1 if a > 0 else 0 :])
        else:
            cuts.append(b)
        cuts = np.asarray(cuts)
        if np.isfinite(max_width):
            extra = [
                np.linspace(c0, c1, int(math.ceil((c1 - c0) / max_width)) + 1)
                for c0, c1 in zip(cuts[:-1], cuts[1:])
            ]
            cuts = np.unique(np.concatenate(extra))
        out_lo.append(cuts[:-1])
        out_hi.append(cuts[1:])
        owner.append(np.full(len(cuts) - 1, i))
    if not out_lo:
        return np.empty(0), np.empty(0), np.empty(0, dtype=int)
    return np.concatenate(out_lo), np.concatenate(out_hi), np.concatenate(owner)


def _integrate_lobes(f, lo, hi, scale, period=np.inf, rel=0.0):
    """Signed integrals of f over [lo_i, hi_i] and their errors (adaptive, vectorised).

    ``rel``: the density's own relative accuracy; asking the rules to agree much beyond it only
    makes them chase its noise.
    """
    pl, ph, owner = _pieces(lo, hi, max_width=0.5 * period if np.isfinite(period) else np.inf)
    values = np.zeros(len(lo))
    errors = np.zeros(len(lo))
    if pl.size:
        v, e = integrate_adaptive(
            f, pl, ph, rel_tol=max(_REL_TOL, 0.1 * rel), abs_tol=1e-17 * scale, max_panels=64 * pl.size + 1024
        )
        np.add.at(values, owner, v)
        np.add.at(errors, owner, e)
    return values, errors


def _numeric_methods(src):
    """The methods of the transforms that are not closed forms: their failure, not the measure, may be
    what a refusal sees."""
    return sorted({t.method for _, t in src.transforms if not t.method.startswith("closed-form")})


def _density_name(src):
    """How refusals name the radial density (with its numeric methods, :func:`_numeric_methods`)."""
    name = f"the radial density of {src.name} in d = {src.dim}"
    numeric = _numeric_methods(src)
    if numeric:
        name += f" (as computed by {', '.join(numeric)}, which may have failed there rather than the measure)"
    return name


def _near_singular(src, edges, singular, scale, rel, origin=False):
    """Lobes trimmed by a quarter of their width at singular points, and the trimmed ends' integrals.

    Near a singular point p the density behaves like A |rho - p|^gamma + B (gamma > -1), and the
    float rho = p + off cannot resolve it: at a few ulps from p the rounding of rho changes f by
    O(1), yet for gamma near -1 most of a lobe's mass lies there (the mass within |off| < x is
    ~ x^(1+gamma)). The trimmed end [p - delta, p] (or [p, p + delta]) is integrated in
    u = log|off| with the density at exact offsets (``density_near``) from x_0 = 2^-40 p to delta,
    and [0, x_0] from the power law fitted at x_0, 2 x_0, 4 x_0 (:func:`_power_law_sliver`).
    With ``origin`` the first lobe's end at rho = 0 is treated alike (f ~ A rho^gamma, -1 < gamma < 0,
    when k decays like r^-beta with beta < d: mu ~ rho^(beta - d)) by :func:`_origin_end`.
    Returns ``(lo, hi, values, errors)``: the trimmed lobes and the ends' contributions per lobe.
    """
    lo, hi = edges[:-1].copy(), edges[1:].copy()
    values, errors = np.zeros(lo.size), np.zeros(lo.size)
    if origin:
        delta = 0.25 * (edges[1] - edges[0])
        # transforms evaluated in logs (closed forms, mixtures) hold their accuracy at any rho; a
        # direct quadrature is trusted no closer to 0 than 2^-40 of the lobe
        deep = all(t.log_abs_mu is not None for _, t in src.transforms)
        end = _origin_end(src.density, delta, rel, scale, _density_name(src), deep)
        if end is not None:
            values[0] += end[0]
            errors[0] += end[1]
            lo[0] = delta
    if src.density_near is None or singular.size == 0:
        return lo, hi, values, errors
    at = set(singular.tolist())
    for i in range(lo.size):
        width = edges[i + 1] - edges[i]
        for p, side in ((edges[i + 1], -1.0), (edges[i], 1.0)):
            x0 = p * 2.0**-40
            delta = 0.25 * width
            if p not in at or not delta > 16 * x0:
                continue

            def h(u, p=p, side=side):
                x = np.exp(u)
                return src.density_near(p, side * x) * x

            v, e = integrate_adaptive(
                h,
                np.array([math.log(x0)]),
                np.array([math.log(delta)]),
                rel_tol=max(_REL_TOL, 0.1 * rel),
                abs_tol=1e-17 * scale,
                max_panels=_QUAD_MAX_PANELS,
            )
            sv, se = _power_law_sliver(
                lambda x, p=p, side=side: src.density_near(p, side * x),
                x0,
                rel,
                _density_name(src),
            )
            values[i] += float(v[0]) + sv
            errors[i] += float(e[0]) + se
            if side < 0:
                hi[i] = p - delta
            else:
                lo[i] = p + delta
    return lo, hi, values, errors


def _origin_end(f, delta, rel, scale, what, deep):
    """(int_0^delta f, error) for a density f ~ A rho^gamma (gamma > -1) at 0: [x_0, delta] in
    u = log rho, [0, x_0] from the power law (:func:`_power_law_sliver`), x_0 the smallest 2^-k delta
    (k in 1000, 500, ..., 10 with ``deep``, else from 40) at which f is finite; None if there is none.
    The sliver holds ~x_0^beta of the mass: a slow decay needs a tiny x_0, which only a density
    evaluated in logs reaches (a numeric mu overflows at tiny rho in high d)."""
    for k in (1000, 500, 200, 100, 40, 20, 10) if deep else (40, 20, 10):
        x0 = delta * 2.0**-k
        if np.all(np.isfinite(f(x0 * 2.0 ** np.arange(4)))):
            v, e = integrate_adaptive(
                lambda u: f(np.exp(u)) * np.exp(u),
                np.array([math.log(x0)]),
                np.array([math.log(delta)]),
                rel_tol=max(_REL_TOL, 0.1 * rel),
                abs_tol=1e-17 * scale,
                # a density whose rounding noise sits above rel_tol would have its panels
                # bisected up to 2^20 (83 million evaluations, 25 s, for (1 + r)^-4 (1 + 4r) in
                # d = 16, whose whole mass lies in this end); unconverged panels keep their estimates
                max_panels=_QUAD_MAX_PANELS,
            )
            sv, se = _power_law_sliver(f, x0, rel, what)
            return float(v[0]) + sv, float(e[0]) + se
    return None


def _origin_singular(f, edges):
    """True when the radial density grows towards rho = 0 (or is not finite there), i.e. mu has an
    integrable singularity at 0 (k ~ r^-beta, beta < d: f ~ rho^(beta - 1)) that a bisection towards 0
    would chase into float overflow."""
    x = 0.25 * edges[1] * 2.0 ** -np.arange(20.0, 24.0)  # ~1e-7 of the first lobe, downwards
    v = np.abs(f(x))
    # growth by 1e-4 over a factor 8 (f ~ rho^gamma, gamma < -5e-5); a smooth f changes by ~1e-13
    return bool(not np.all(np.isfinite(v)) or v[-1] > (1.0 + 1e-4) * v[0] > 0)


def _power_law_sliver(F, x0, rel, what):
    """(int_0^x0 F, error) for F(x) = A x^gamma + B (+ O(x^(gamma+1))), gamma > -1: gamma from
    F(x0), F(2 x0), F(4 x0) (2^gamma = (F(2x0) - F(4x0))/(F(x0) - F(2x0)), exact for the model),
    then A x0^(1+gamma)/(1 + gamma) + B x0. The error: the difference to the same fit at 2 x0,
    4 x0, 8 x0 (integrated over [0, x0]) plus the change when the values move by their relative
    error ``rel`` (the fit amplifies it by ~ log(1/x0)/(1 + gamma) for gamma near -1)."""
    f = np.asarray(F(x0 * 2.0 ** np.arange(4)), dtype=np.float64)

    def fit(f0, f1, f2, scale):
        """int_0^x0 of the model through F at scale, 2 scale, 4 scale."""
        model = power_law_end(f0, f1, f2, bump)
        if model is None:
            # flat at this resolution (gamma >= 1, no power law on this side, or differences
            # within the values' own error): the sliver is x0 F(x0), to within its own size
            return x0 * f0
        gamma, a, b = model
        if not gamma > -1:
            raise TransformError(
                f"{what} behaves like |rho - p|^{gamma:.3g} at a singular point p: not integrable"
            )
        return a * (x0 / scale) ** gamma * x0 / (1.0 + gamma) + b * x0

    bump = max(rel, 1e-15)
    value = fit(f[0], f[1], f[2], x0)
    moved = max(
        abs(fit(*(f[:3] * (1 + bump * np.array(sgn))), x0) - value)
        for sgn in ((1, -1, 1), (-1, 1, -1), (1, 1, -1), (-1, -1, 1))
    )
    return value, abs(value - fit(f[1], f[2], f[3], 2 * x0)) + moved + bump * abs(value)


def integrate_abs(f, a, b, oscillation, rel=1e-10):
    """int_a^b |f| (partial masses): f's sign changes located on a resolving grid, lobes integrated.

    ``rel``: the accuracy asked of the quadrature (partial masses are evidence, not results).
    """
    if b <= a:
        return 0.0
    if oscillation:
        n = int(min(2_000_000, max(2000, _PER_PERIOD * (b - a) * oscillation / (2 * math.pi))))
        grid = np.linspace(a, b, n)
    else:
        grid = np.unique(np.concatenate([[a], np.geomspace(max(a, 1e-8 * b, 1e-300), b, 600), [b]]))
    grid = grid[(grid >= a) & (grid <= b)]
    vals = f(grid)
    edges = np.concatenate([[a], find_roots(f, grid, vals), [b]])
    finite = np.isfinite(vals)
    scale = float(np.max(np.abs(vals[finite]), initial=0.0) * (b - a)) or 1.0
    near0 = 0.0
    if a == 0 and _origin_singular(f, edges):
        # a density singular at 0 (slow decay of k): bisection towards 0 would chase it to overflow
        end = _origin_end(f, 0.25 * edges[1], rel, scale, "the radial density", False)
        if end is not None:
            near0, edges = abs(end[0]), edges.copy()
            edges[0] = 0.25 * edges[1]
    v, _ = _integrate_lobes(
        f, edges[:-1], edges[1:], scale, 2 * math.pi / oscillation if oscillation else np.inf, rel
    )
    total = near0 + float(np.sum(np.abs(v)))
    return total if math.isfinite(total) else math.inf


# ---------------------------------------------------------------------------------------------
# the tail in parts
# ---------------------------------------------------------------------------------------------
class _TailParts:
    """a(rho) and b(rho) e^(i phi) = S_(d-1) rho^(d-1) (A, B) summed over the measure's terms.

    Oscillations of several frequencies R are kept apart: ``amplitudes[R]`` is the complex
    amplitude of the frequency R. Computed in logs (rho^(d-1) overflows where mu underflows).
    """

    def __init__(self, src):
        self.dim = src.dim
        self.items = []
        for c, t in src.transforms:
            R = float(t.tail_oscillation or 0.0)
            if t.tail_parts is not None:
                self.items.append((c, R, t.tail_parts))
            elif R == 0.0:
                self.items.append((c, 0.0, lambda rho, t=t: (np.asarray(t.mu(rho), dtype=np.float64), None)))
            else:
                raise TransformError(
                    f"the oscillating tail of {src.name} has no smooth parts ({t.method}); "
                    "its masses cannot be integrated"
                )
        self.start = max([t.tail_start for _, t in src.transforms] + [0.0])
        self.frequencies = sorted(
            {R for _, R, _ in self.items if R > 0} | {float(b) for _, t in src.transforms for b, _ in t.edges}
        )

    def __call__(self, rho):
        rho = np.asarray(rho, dtype=np.float64)
        log_pref = log_sphere_area(self.dim) + (self.dim - 1) * np.log(rho)
        a = np.zeros(rho.shape)
        amps = {R: np.zeros(rho.shape, dtype=np.complex128) for R in self.frequencies}
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            for c, R, parts in self.items:
                out = parts(rho)
                lp = log_pref + out[0] if len(out) == 3 else log_pref  # log-scaled parts
                A, B = out[-2:]
                A = np.asarray(A, dtype=np.float64)
                a += np.where(A != 0, np.sign(A) * np.exp(np.log(np.abs(A)) + lp), 0.0) * c
                # one amplitude, or several ((R_i, B_i), ...) for several breakpoints
                for Ri, Bi in [] if B is None else B if isinstance(B, list) else [(R, B)]:
                    Bi = np.asarray(Bi, dtype=np.complex128)
                    mag = np.where(Bi != 0, np.exp(np.log(np.abs(Bi)) + lp), 0.0)
                    amps.setdefault(float(Ri), np.zeros(rho.shape, dtype=np.complex128))
                    amps[float(Ri)] += c * mag * np.exp(1j * np.angle(Bi))
        return a, amps


def _avg_plus(a, b):
    """b H+(a/b): the period average of max(a - b cos theta, 0) (b >= 0)."""
    # a / b overflows for b at the bottom of the double range (far tail of a compact kernel):
    # the clip makes that c = +-1, which is what it means
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        c = np.clip(np.where(b > 0, a / b, np.sign(a) * 2.0), -1.0, 1.0)
        th = np.arccos(c)
        mid = (a * (math.pi - th) + b * np.sqrt(1.0 - c * c)) / math.pi
    return np.where(a >= b, a, np.where(a <= -b, 0.0, mid))


def _boundary_p(theta, c):
    """P+(theta; c) and P-(theta; c): zero-mean antiderivatives of h+- - H+- over a period."""
    theta = np.mod(theta, 2 * math.pi)
    if c >= 1.0:
        p_plus = -math.sin(theta)
    elif c <= -1.0:
        p_plus = 0.0
    else:
        th0 = math.acos(c)
        s0 = math.sqrt(1.0 - c * c)
        h = (c * (math.pi - th0) + s0) / math.pi
        length = 2 * math.pi - 2 * th0
        if theta < th0:
            g = 0.0
        elif theta <= 2 * math.pi - th0:
            g = c * (theta - th0) - math.sin(theta) + s0
        else:
            g = 2 * math.pi * h
        mean = (c * length**2 / 2 + length * s0 + 2 * math.pi * h * th0) / (2 * math.pi) - h * math.pi
        p_plus = g - h * theta - mean
    return p_plus, p_plus + math.sin(theta)


def _averaged_beyond(parts, rho_far, q, R, scale=0.0):
    """(m+, m-) of [rho_far, inf) by averaging (module docstring), one dominant frequency R.

    ``scale`` (the mass scale) sets an absolute floor 1e-17 scale: a part that is zero up to
    rounding (the negative part of a positive tail) would otherwise be bisected to 2^20 panels."""
    s = 1.0 / (q - 1.0)

    def integrand(which):
        def g(t):
            rho = rho_far * t ** (-s)
            a, amps = parts(rho)
            b = np.abs(amps[R]) if R else np.zeros(rho.shape)
            avg = _avg_plus(a, b) if which > 0 else _avg_plus(a, b) - a
            return avg * rho_far * s * t ** (-s - 1.0)

        return g

    out = []
    for which in (1, -1):
        v, e = integrate_adaptive(
            integrand(which), np.array([0.0]), np.array([1.0]), rel_tol=1e-12, abs_tol=1e-17 * scale
        )
        out.append((float(v[0]), float(e[0])))
    if R:
        a, amps = parts(np.array([rho_far]))
        b = float(np.abs(amps[R][0]))
        theta = R * rho_far + float(np.angle(amps[R][0]))
        c = float(a[0]) / b if b > 0 else math.copysign(2.0, float(a[0]))
        p_plus, p_minus = _boundary_p(theta, c)
        w = b / R
        out = [(out[0][0] - w * p_plus, out[0][1]), (out[1][0] - w * p_minus, out[1][1])]
    return out


# ---------------------------------------------------------------------------------------------
# rho_c
# ---------------------------------------------------------------------------------------------
def _continuous(src):
    """The transforms with an absolutely continuous part (pure shells and atoms set no scales)."""
    ts = [t for _, t in src.transforms]
    return [t for t in ts if t.ac_mass != 0.0] or ts


def head_limit(src, f, k0):
    """rho_c: where the head ends (see the module docstring), the tail exponent and the frequency."""
    ts = _continuous(src)
    scale_hi = max(t.scale for t in ts)
    scale_lo = min(t.scale for t in ts)
    tail_exp = min(t.tail_exponent for t in ts)
    osc = max(t.tail_oscillation for t in ts)
    if src.truncation is not None:
        return src.truncation, tail_exp, osc
    start = max([t.tail_start for t in ts] + [0.0])
    if osc > 0:
        return max(start * 1.01, _HEAD_PERIODS * 2 * math.pi / osc, 40.0 * scale_hi), tail_exp, osc
    grid = np.geomspace(1e-3 * scale_lo, 1e8 * scale_hi, 1100)
    vals = f(grid)
    mass_density = np.abs(vals) * grid  # mass per log-interval
    peak = float(np.max(mass_density))
    if not math.isfinite(peak):
        raise TransformError(f"the spectral density of {src.name} in d = {src.dim} is not finite on its grid")
    if math.isfinite(tail_exp):
        q = tail_exp - (src.dim - 1)
        share = mass_density / max(q - 1.0, 1e-3) / max(k0, peak)
        big = np.nonzero(share > _TAIL_SHARE)[0]
        rc = grid[min(big[-1] + 1, grid.size - 1)] if big.size else grid[0]
        rc = max(rc, 10.0 * scale_lo, start * 1.01)
        # no sign change may remain beyond rho_c: the tail is integrated as one-signed
        beyond = grid >= rc
        sg = np.sign(vals[beyond])
        changes = np.nonzero(sg[:-1] * sg[1:] < 0)[0]
        if changes.size:
            rc = float(grid[beyond][changes[-1] + 1]) * 2.0
        return float(rc), tail_exp, 0.0
    big = np.nonzero(mass_density > 1e-20 * peak)[0]
    rc = grid[min(big[-1] + 1, grid.size - 1)] if big.size else 10.0 * scale_hi
    return float(rc), tail_exp, 0.0


# ---------------------------------------------------------------------------------------------
# the split
# ---------------------------------------------------------------------------------------------
def _lobe_masses_exact(src, edges):
    """Signed integrals over [edges[i], edges[i+1]] from the exact cumulative mass, when available."""
    if src.cumulative is None:
        return None
    cum = src.cumulative(np.asarray(edges, dtype=np.float64))
    return None if cum is None else np.diff(cum)


def _signs(f, edges, grid, vals):
    """The sign of f on each lobe between consecutive sign changes: the sign of its largest value
    on the grid inside the lobe (at the lobe's midpoint when no grid point falls inside).

    Not the midpoint alone: f may touch zero inside a lobe (a double root, e.g. (1 - cos rho) / rho^2
    of the triangle kernel), and a midpoint on such a root gives the sign of rounding noise.
    """
    mid = f(0.5 * (edges[:-1] + edges[1:]))
    signs = np.where(mid >= 0, 1, -1)
    lobe = np.searchsorted(edges, grid, side="right") - 1
    inside = (lobe >= 0) & (lobe < len(signs)) & (grid > edges[np.clip(lobe, 0, len(edges) - 1)])
    if np.any(inside):
        idx, v = lobe[inside], vals[inside]
        order = np.lexsort((np.abs(v), idx))  # by lobe, then by |f|: each lobe's largest comes last
        idx, v = idx[order], v[order]
        last = np.r_[idx[1:] != idx[:-1], True]
        lobes_, peak = idx[last], v[last]
        use = np.abs(peak) > np.abs(mid[lobes_])
        signs[lobes_[use]] = np.where(peak[use] >= 0, 1, -1)
    return signs


def _term_error_density(src):
    """rho -> sum_i rel_i |c_i| S_(d-1) rho^(d-1) |mu_i(rho)|: the density error of a sum of terms
    (in logs where the terms have a log form: rho^(d-1) and mu overflow separately in high d)."""
    log_s = log_sphere_area(src.dim)

    def g(rho):
        rho = np.asarray(rho, dtype=np.float64)
        out = np.zeros(rho.shape)
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            lw = log_s + (src.dim - 1) * np.log(rho)
            for c, t in src.transforms:
                if c == 0 or t.rel_error == 0:
                    continue
                if t.log_abs_mu is not None:
                    la, sg = t.log_abs_mu(rho)
                    val = np.where(sg == 0, 0.0, np.exp(la + lw))
                else:
                    val = np.abs(np.asarray(t.mu(rho), dtype=np.float64)) * np.exp(lw)
                out += t.rel_error * abs(c) * np.where(np.isfinite(val), val, 0.0)
        if src.truncation is not None:
            out[rho > src.truncation] = 0.0
        return out

    return g


def _merge(lobes, keep=()):
    """Merge touching lobes of equal sign (a double root or a spurious bracket), except at the points
    ``keep`` (singular points: a lobe must end where the density is infinite or jumps)."""
    merged = []
    for lb in lobes:
        if merged and merged[-1].sign == lb.sign and lb.a not in keep:
            p = merged.pop()
            lb = Lobe(p.a, lb.b, lb.sign, p.mass + lb.mass, p.error + lb.error)
        merged.append(lb)
    return merged


def jordan(src):
    """``(roots, lobes, tail, neglected)`` of ``measure``: the split described in the module docstring.

    ``neglected`` is a bound on mass left out beyond rho_c (super-exponential tails), to be added to
    both mass errors.
    """
    f = src.density
    k0 = abs(src.k0)
    rc, tail_exp, osc = head_limit(src, f, k0)
    scale_lo = min(t.scale for t in _continuous(src))
    rel = max(t.rel_error for _, t in src.transforms)
    singular = np.array(
        sorted({float(p) for _, t in src.transforms for p in t.singular_points if 0 < p < rc})
    )
    n_uni = int(min(4_000_000, max(4000, _PER_PERIOD * rc * osc / (2 * math.pi)))) if osc else 1000
    grid = np.unique(np.concatenate([np.geomspace(1e-6 * scale_lo, rc, 3000), np.linspace(0.0, rc, n_uni)]))
    grid = grid[(grid > 0) & ~np.isin(grid, singular)]
    vals = f(grid)
    if not np.all(np.isfinite(vals)):
        bad = grid[~np.isfinite(vals)]
        numeric = _numeric_methods(src)
        cause = (
            f"its numeric transform ({', '.join(numeric)}) gave no finite value there: a failure of that "
            "transform or a singular part of the measure; no verdict is given"
            if numeric
            else "its spectral measure has a singular part that this kernel's transform does not represent"
        )
        raise TransformError(
            f"the radial density of {src.name} in d = {src.dim} is not finite at "
            f"rho = {bad[0]:.6g} ({bad.size} of {grid.size} grid points); {cause}"
        )
    known = [t.zeros for _, t in src.transforms]
    if len(known) == 1 and known[0] is not None:
        roots = np.array(sorted(float(z) for z in known[0] if 0 < z < rc))
    else:
        grid, vals = _resolve_lobes(f, grid, vals)
        roots = find_roots(f, grid, vals)
    edges = np.concatenate([[0.0], roots, [rc]])
    if singular.size:  # lobes end at singular points (a jump or an integrable singularity)
        # a sign change at the point itself (mu ~ -+|rho - p|^gamma) is found a few ulps away:
        # the point is the edge, not that root
        close = np.min(np.abs(edges[:, None] - singular[None, :]), axis=1) <= 64 * np.finfo(float).eps * edges
        edges = np.unique(np.concatenate([edges[~close | (edges == 0) | (edges == rc)], singular]))
        edges = edges[np.r_[True, np.diff(edges) > 4 * np.finfo(float).eps * edges[1:]]]
    signs = _signs(f, edges, grid, vals)
    exact = _lobe_masses_exact(src, edges)
    scale = max(k0, float(np.max(np.abs(vals) * grid)), 1e-300)
    if exact is not None:
        values = exact
        errors = 1e-15 * np.abs(exact) + 1e-16 * scale
    else:
        period = 2 * math.pi / osc if osc else np.inf
        lo, hi, near_v, near_e = _near_singular(src, edges, singular, scale, rel, _origin_singular(f, edges))
        values, errors = _integrate_lobes(f, lo, hi, scale, period, rel)
        values, errors = values + near_v, errors + near_e
        if len(src.transforms) > 1:
            # terms that cancel: each term's relative error applies to its own size, not to the
            # sum's, so a lobe's density error is bounded by the sum over terms of rel_i |c_i f_i|
            g = _term_error_density(src)
            bound, _ = _integrate_lobes(g, lo, hi, scale, period, 1e-6)
            errors = errors + np.maximum(np.abs(bound), rel * np.abs(values))
        else:
            errors = errors + rel * np.abs(values)
    lobes = _merge(
        [
            Lobe(float(a), float(b), int(sg), abs(float(v)), float(e))
            for a, b, sg, v, e in zip(edges[:-1], edges[1:], signs, values, errors)
        ],
        set(singular),
    )
    roots = [lb.a for lb in lobes[1:]]
    tail, neglected = (
        (None, 0.0) if src.truncation is not None else _tail(src, f, rc, tail_exp, osc, scale, rel)
    )
    return roots, lobes, tail, neglected


def _tail(src, f, rc, tail_exp, osc, scale, rel):
    d = src.dim
    if not math.isfinite(tail_exp):
        # faster than any power: bound what is left out
        # a bound, not a value: an absolute tolerance far below what may be neglected (a relative one
        # chased the zeros of an oscillating tail of 1e-30 of the mass: 500,000 density evaluations)
        val, err = integrate_adaptive(
            lambda t: np.abs(f(rc / t)) * rc / t**2,
            np.array([0.0]),
            np.array([1.0]),
            rel_tol=1e-6,
            abs_tol=1e-2 * _NEGLIGIBLE * scale,
        )
        neglected = float(val[0] + err[0])
        if neglected > _NEGLIGIBLE * scale:
            raise TransformError(
                f"{src.name}: mass {neglected:.3g} beyond rho_c = {rc:.4g} could not "
                "be neglected (its density decays slower than its transform claims)"
            )
        return None, neglected
    q = tail_exp - (d - 1)
    if not q > 1:
        raise TransformError(
            f"the tail exponent {q:g} of the radial density of {src.name} is <= 1: "
            "the mass is infinite, but the finiteness analysis said finite"
        )
    parts = _TailParts(src)
    R = max(parts.frequencies) if parts.frequencies else 0.0
    if len(parts.frequencies) > 1:
        # the dominant oscillation decays slowest; the others are bounded below
        R = _dominant_frequency(parts, rc)
    if osc:
        mp, mm = _oscillating_tail(src, f, parts, rc, q, R, scale, rel)
    else:
        s = 1.0 / (q - 1.0)
        v, e = integrate_adaptive(
            lambda t: f(rc * t ** (-s)) * rc * s * t ** (-s - 1.0),
            np.array([0.0]),
            np.array([1.0]),
            # as for the lobes: agreement far beyond the density's own accuracy is noise-bound
            rel_tol=max(1e-12, 0.1 * rel),
            # a smooth power tail needs tens of panels; a noisy one (terms whose tails cancel in
            # floats) would bisect for hours: stop, and the unconverged panels' estimates enter the
            # error
            max_panels=_QUAD_MAX_PANELS,
        )
        exact = _lobe_masses_exact(src, np.array([rc, np.inf]))
        if exact is not None:
            v, e = exact, 1e-15 * np.abs(exact) + 1e-16 * scale
        m = Estimate(abs(float(v[0])), float(e[0]) + rel * abs(float(v[0])))
        zero = Estimate(0.0, 0.0)
        mp, mm = (m, zero) if v[0] >= 0 else (zero, m)
    # envelope |f| <= bound rho^-q on [rho_c, inf) for the rejection sampler
    probe = np.unique(
        np.concatenate(
            [
                np.geomspace(rc, 1e8 * rc, 4000),
                np.linspace(rc, rc + 40 * 2 * math.pi / osc, 4000) if osc else [],
            ]
        )
    )
    if osc:
        a, amps = parts(probe)
        env = np.abs(a) + sum(np.abs(b) for b in amps.values())
    else:
        env = np.abs(f(probe))
    # in logs: probe^q alone overflows for high tail exponents (d = 64, (1 - r^2)^80: q ~ 50)
    with np.errstate(divide="ignore"):
        log_env = np.log(env) + q * np.log(probe)
    bound = 1.05 * math.exp(float(np.max(log_env)))
    return TailModel(float(rc), float(q), bound, mp, mm, float(osc)), 0.0


def _dominant_frequency(parts, rc):
    a, amps = parts(np.array([1e6 * rc]))
    return max(amps, key=lambda R: float(np.abs(amps[R][0])))


def _tail_intervals(f, lo, hi, R, scale, cuts, rel=0.0):
    """Signed integrals of f over the intervals between its sign changes on [lo, hi], further cut at
    every half period and at ``cuts`` (each interval lies in one lobe and is short: one rule each)."""
    n = int(_PER_PERIOD * (hi - lo) * R / (2 * math.pi)) + 2
    grid = np.linspace(lo, hi, n)
    roots = find_roots(f, grid, f(grid))
    edges = np.unique(np.concatenate([grid[:: _PER_PERIOD // 2], roots, cuts, [lo, hi]]))
    v, e = integrate_intervals(f, edges[:-1], edges[1:], 16, 24)
    tol = max(_REL_TOL, 0.1 * rel)  # beyond the density's own accuracy the rules chase its noise
    bad = e > tol * np.abs(v) + 1e-17 * scale
    if np.any(bad):  # rare: a near-tangency
        v2, e2 = integrate_adaptive(
            f,
            edges[:-1][bad],
            edges[1:][bad],
            rel_tol=tol,
            abs_tol=1e-17 * scale,
            max_panels=64 * int(np.count_nonzero(bad)) + 1024,
        )
        v[bad], e[bad] = v2, e2
    return edges, v, e


def _oscillating_tail(src, f, parts, rc, q, R, scale, rel):
    """(m+, m-) of [rho_c, inf) for an oscillating density (module docstring)."""
    period = 2 * math.pi / R
    far = max(rc + 200 * period, _FAR_PHASE / R)
    mid = math.sqrt(rc * far)
    edges, v, e = _tail_intervals(f, rc, far, R, scale, np.array([mid]), rel)
    ends = edges[1:]
    extra = _other_frequencies_bound(parts, R, far, q)
    totals = []
    for start in (far, mid):
        keep = ends <= start * (1 + 1e-15)
        (ap, ep), (am, em) = _averaged_beyond(parts, start, q, R, scale)
        totals.append(
            (
                float(np.sum(v[keep & (v > 0)])) + ap,
                float(-np.sum(v[keep & (v < 0)])) + am,
                float(np.sum(e[keep])) + ep + em,
            )
        )
    (mp, mm, err), (mp2, mm2, _) = totals
    mp, mm = max(mp, 0.0), max(mm, 0.0)
    err_p = err + abs(mp - mp2) + extra + rel * mp
    err_m = err + abs(mm - mm2) + extra + rel * mm
    return Estimate(mp, err_p), Estimate(mm, err_m)


def _other_frequencies_bound(parts, R, start, q):
    """int_start^inf of the amplitudes of the non-dominant frequencies (an error bound)."""
    others = [Rj for Rj in parts.frequencies if Rj != R]
    if not others:
        return 0.0
    s = 1.0 / (q - 1.0)

    def g(t):
        rho = start * t ** (-s)
        _, amps = parts(rho)
        return sum(np.abs(amps[Rj]) for Rj in others) * start * s * t ** (-s - 1.0)

    v, e = integrate_adaptive(g, np.array([0.0]), np.array([1.0]), rel_tol=1e-6)
    return float(v[0] + e[0])
