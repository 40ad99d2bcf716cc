"""Gauss–Legendre quadrature: rules, composite panels, graded break points, batched integrals.

Every integral in spectralkit goes through these functions. A rule with ``n`` nodes integrates
polynomials of degree 2n - 1 exactly; the error of a batched integral is estimated by comparing
two rules on the same interval (16 and 24 nodes by default), which over-estimates the error of the
finer rule for smooth integrands (it is the error of the coarser one).

:func:`tanh_sinh` and :func:`exp_sinh` are the double-exponential rules on [0, 1] and [0, inf) for
integrands with algebraic or logarithmic end-point singularities (no grading needed).
"""

import functools
import math

import numpy as np

__all__ = [
    "gauss_legendre",
    "power_law_end",
    "unit_rule",
    "panel_rule",
    "graded_breaks",
    "interval_breaks",
    "integrate_intervals",
    "integrate_adaptive",
    "tanh_sinh",
    "exp_sinh",
]


@functools.lru_cache(maxsize=64)
def gauss_legendre(n):
    """Nodes and weights of the ``n``-point Gauss–Legendre rule on [-1, 1] (read-only arrays)."""
    x, w = np.polynomial.legendre.leggauss(int(n))
    x.flags.writeable = False
    w.flags.writeable = False
    return x, w


@functools.lru_cache(maxsize=64)
def unit_rule(n):
    """Nodes and weights of the ``n``-point Gauss–Legendre rule on [0, 1] (read-only arrays)."""
    x, w = gauss_legendre(n)
    t, v = 0.5 * (x + 1.0), 0.5 * w
    t.flags.writeable = False
    v.flags.writeable = False
    return t, v


def panel_rule(breaks, n=16):
    """Composite rule: ``n`` Gauss–Legendre nodes on each panel [breaks[i], breaks[i+1]].

    Returns flat ``(nodes, weights)``.
    """
    x, w = gauss_legendre(n)
    breaks = np.asarray(breaks, dtype=np.float64)
    a, b = breaks[:-1, None], breaks[1:, None]
    return (0.5 * (b - a) * x + 0.5 * (b + a)).ravel(), (0.5 * (b - a) * w).ravel()


def graded_breaks(length, ratio=0.25, depth=1e-16):
    """Break points 0 < length r^K < ... < length r < length, geometric towards 0.

    Panels graded this way integrate an end-point singularity t^s (s > -1) or a kink to full
    accuracy with a fixed number of nodes per panel; K is the smallest with r^K <= depth.
    """
    k = int(math.ceil(math.log(depth) / math.log(ratio)))
    return np.concatenate([[0.0], length * ratio ** np.arange(k, -1, -1)])


def interval_breaks(a, b, h, grade_left=False, grade_right=False):
    """Break points on [a, b]: uniform panels of width <= h, graded (see :func:`graded_breaks`)
    at the chosen ends."""
    span = b - a
    g = min(h, span / 4.0)
    lo = a + (graded_breaks(g) if grade_left else np.array([0.0]))
    hi = b - (graded_breaks(g)[::-1] if grade_right else np.array([0.0]))
    x0, x1 = lo[-1], hi[0]
    n_mid = max(1, int(math.ceil((x1 - x0) / h)))
    return np.concatenate([lo[:-1], np.linspace(x0, x1, n_mid + 1), hi[1:]])


def integrate_intervals(f, lo, hi, n=16, n_check=24, block=1 << 18):
    """Integrals of ``f`` over the intervals [lo_i, hi_i] and an error estimate per interval.

    ``f`` is evaluated once per batch of nodes (vectorised). The estimate is
    ``|I_n - I_n_check|`` (pass ``n_check=None`` to skip it and get zeros).

    Returns
    -------
    values, errors : ndarray
    """
    lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
    hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
    out = np.empty(lo.shape)
    err = np.zeros(lo.shape)
    rules = [unit_rule(n)] + ([unit_rule(n_check)] if n_check else [])
    step = max(1, block // (n + (n_check or 0)))
    for s in range(0, lo.size, step):
        a, b = lo[s : s + step], hi[s : s + step]
        h = b - a
        vals = []
        for t, w in rules:
            x = a[:, None] + h[:, None] * t[None, :]
            vals.append((np.asarray(f(x.ravel()), dtype=np.float64).reshape(x.shape) @ w) * h)
        out[s : s + step] = vals[-1]
        if n_check:
            err[s : s + step] = np.abs(vals[0] - vals[1])
    return out, err


def integrate_adaptive(
    f, lo, hi, *, rel_tol=1e-13, abs_tol=0.0, n=16, n_check=24, max_panels=1 << 20, max_rounds=60
):
    """Adaptive vectorised integration of ``f`` over each [lo_i, hi_i] (bisection of bad panels).

    All panels of all intervals are refined together, so ``f`` is called once per round with every
    pending node. A panel is accepted when the two rules agree to
    ``max(rel_tol |I_panel|, abs_tol * width / total width)``.

    Returns
    -------
    values, errors : ndarray
        Per interval: the sum over its accepted panels, and the sum of their error estimates
        (panels left unconverged when ``max_panels`` or ``max_rounds`` is reached keep their
        estimate, so the error stays honest).
    """
    lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
    hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
    owner = np.arange(lo.size)
    a, b = lo.copy(), hi.copy()
    values = np.zeros(lo.size)
    errors = np.zeros(lo.size)
    span = float(np.sum(np.abs(hi - lo))) or 1.0
    n_panels = a.size
    for _ in range(max_rounds):
        if a.size == 0:
            break
        v, e = integrate_intervals(f, a, b, n, n_check)
        ok = e <= np.maximum(rel_tol * np.abs(v), abs_tol * np.abs(b - a) / span)
        last = n_panels + np.count_nonzero(~ok) > max_panels
        done = ok | last | (np.abs(b - a) <= 64 * np.finfo(float).eps * np.maximum(np.abs(a), np.abs(b)))
        np.add.at(values, owner[done], v[done])
        np.add.at(errors, owner[done], e[done])
        if last:
            break
        keep = ~done
        mid = 0.5 * (a[keep] + b[keep])
        a, b = np.concatenate([a[keep], mid]), np.concatenate([mid, b[keep]])
        owner = np.concatenate([owner[keep], owner[keep]])
        n_panels += np.count_nonzero(keep)
    else:
        if a.size:
            v, e = integrate_intervals(f, a, b, n, n_check)
            np.add.at(values, owner, v)
            np.add.at(errors, owner, e)
    return values, errors


@functools.lru_cache(maxsize=16)
def tanh_sinh(level, t_max=4.5):
    """Tanh–sinh (double-exponential) rule on [0, 1] with step h = 2^-level.

    x(t) = (1 + tanh(pi/2 sinh t))/2, w(t) = h (pi/4) cosh t / cosh^2(pi/2 sinh t), t = k h,
    |t| <= ``t_max``. An integrand analytic inside (0, 1) with integrable algebraic or logarithmic
    singularities at the ends converges like exp(-c/h); the rule of level ``level - 1`` is the
    subset of every other node (weights doubled), so the difference of two levels costs nothing
    extra and estimates the coarser rule's error.

    Returns
    -------
    x, xc, w, coarse : ndarray
        Nodes, their distances to 1 (``xc = 1 - x``, computed without
        cancellation), weights, and a boolean mask of the nodes of level ``level - 1``.
    """
    h = 2.0**-level
    k = np.arange(-int(t_max / h), int(t_max / h) + 1)
    t = k * h
    u = 0.5 * np.pi * np.sinh(t)
    e = np.exp(-2.0 * np.abs(u))
    # 1 + tanh(u) = 2 / (1 + e^(-2u)), 1 - tanh(u) = 2 / (1 + e^(2u)), with e = e^(-2|u|)
    small = e / (1.0 + e)  # the smaller of x, 1 - x
    x = np.where(u < 0, small, 1.0 - small)
    xc = np.where(u < 0, 1.0 - small, small)
    w = h * np.pi * np.cosh(t) * e / (1.0 + e) ** 2  # h (pi/4) cosh t / cosh^2 u
    for a in (x, xc, w):
        a.flags.writeable = False
    coarse = k % 2 == 0
    coarse.flags.writeable = False
    return x, xc, w, coarse


@functools.lru_cache(maxsize=16)
def exp_sinh(level, t_max=4.5):
    """Exp–sinh (double-exponential) rule on [0, inf) with step h = 2^-level.

    x(t) = exp(pi/2 sinh t), w(t) = h (pi/2) cosh t x(t), t = k h, |t| <= ``t_max``: for integrands
    with an integrable singularity at 0 that decay exponentially or algebraically (faster than 1/x)
    at infinity; rescale x by the integrand's length scale. The level ``level - 1`` rule is the
    subset ``coarse`` (weights doubled).

    Returns
    -------
    x, w, coarse : ndarray
    """
    h = 2.0**-level
    k = np.arange(-int(t_max / h), int(t_max / h) + 1)
    t = k * h
    x = np.exp(0.5 * np.pi * np.sinh(t))
    w = h * 0.5 * np.pi * np.cosh(t) * x
    coarse = k % 2 == 0
    for a in (x, w, coarse):
        a.flags.writeable = False
    return x, w, coarse


def power_law_end(f0, f1, f2, noise):
    """F(x) = a (x/x0)^gamma + c through F(x0), F(2 x0), F(4 x0): ``(gamma, a, c)``, exact for that
    form (2^gamma = (F(2x0) - F(4x0))/(F(x0) - F(2x0))); None where the differences are within
    16 ``noise`` (relative) of F(x0) or do not fit the form (no power law resolvable there).

    The behaviour of a density next to an integrable singularity or kink, A|x|^gamma + B, fitted
    where its values are still accurate, to extend it to x -> 0 (masses, sampler tables)."""
    d1, d2 = f0 - f1, f1 - f2
    if d1 == 0 or not d2 / d1 > 0 or abs(d1) <= 16 * noise * abs(f0):
        return None
    r = d2 / d1
    if abs(1.0 - r) < 1e-12:
        return None
    a = d1 / (1.0 - r)
    return math.log2(r), a, f0 - a
