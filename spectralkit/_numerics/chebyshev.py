"""Piecewise Chebyshev interpolation with a measured error (the one implementation in spectralkit).

:func:`fit_adaptive` tabulates a vectorised function on [a, b] by panels of degree ``degree - 1``
on Chebyshev points of the first kind, bisecting every panel whose interpolant misses the function
at test points between the nodes by more than ``tol`` (relative to a floor chosen by the caller).
Panels that cannot be resolved down to ``min_width`` either stay as they are (their error is
reported) or, with ``fallback=True``, are marked *direct*: :class:`PiecewiseChebyshev` then calls
the function itself there. The interpolant is evaluated by Clenshaw's recurrence, vectorised over
points that each use their own panel's coefficients.
"""

import numpy as np

__all__ = ["nodes", "coefficients", "clenshaw", "clenshaw_panels", "PiecewiseChebyshev", "fit_adaptive"]

_BLOCK = 4096


def nodes(n):
    """The ``n`` Chebyshev points of the first kind on [-1, 1], cos(pi (k + 1/2) / n)."""
    return np.cos(np.pi * (np.arange(n) + 0.5) / n)


def coefficients(values):
    """Chebyshev coefficients from values at the first-kind points (last axis)."""
    n = values.shape[-1]
    mat = np.cos(np.pi * np.outer(np.arange(n), np.arange(n) + 0.5) / n) * (2.0 / n)
    c = values @ mat.T
    c[..., 0] *= 0.5
    return c


def clenshaw(coef, x):
    """sum_k coef[:, k] T_k(x) for per-point coefficient rows ``coef`` (vectorised)."""
    b1 = np.zeros(x.shape, dtype=coef.dtype)
    b2 = np.zeros(x.shape, dtype=coef.dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite coefficients: the caller's checks
        for k in range(coef.shape[1] - 1, 0, -1):
            b1, b2 = coef[:, k] + 2 * x * b1 - b2, b1
        return coef[:, 0] + x * b1 - b2


def clenshaw_panels(coefs, idx, x):
    """sum_k coefs[idx, k] T_k(x): ``clenshaw`` with the coefficient rows of panels ``idx``.

    Points that share a panel are summed together with that panel's row broadcast (the same
    arithmetic, so the same values) instead of one gathered row per point: the far tails of the
    compact transforms put ~10^6 points into a few panels."""
    n = idx.size
    if n < 256:
        return clenshaw(coefs[idx], x)
    order = np.argsort(idx, kind="stable")
    panels, starts = np.unique(idx[order], return_index=True)
    if panels.size * 64 > n:
        return clenshaw(coefs[idx], x)
    out = np.empty(x.shape, dtype=np.result_type(coefs.dtype, x.dtype))
    ends = np.append(starts[1:], n)
    for p, s, e in zip(panels, starts, ends):
        sel = order[s:e]
        c, xs = coefs[p], x[sel]
        b1 = np.zeros(xs.shape, dtype=out.dtype)
        b2 = np.zeros(xs.shape, dtype=out.dtype)
        for k in range(c.size - 1, 0, -1):
            b1, b2 = c[k] + 2 * xs * b1 - b2, b1
        out[sel] = c[0] + xs * b1 - b2
    return out


class PiecewiseChebyshev:
    """Piecewise Chebyshev interpolant on panels [edges[i], edges[i+1]].

    Parameters
    ----------
    edges : ndarray, shape (p + 1,)
    coefs : ndarray, shape (p, n), real or complex
    direct : ndarray of bool, shape (p,), optional
        Panels evaluated by ``func`` instead of the interpolant (unresolved panels).
    func : callable, optional
        The function itself, for direct panels and for points outside [edges[0], edges[-1]]
        (without it, such points are clamped to the end panels: extrapolation).
    """

    def __init__(self, edges, coefs, direct=None, func=None):
        self.edges = np.asarray(edges, dtype=np.float64)
        self.coefs = np.asarray(coefs)
        self.direct = np.zeros(len(self.coefs), dtype=bool) if direct is None else np.asarray(direct, bool)
        self.func = func

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        flat = x.ravel()
        idx = np.clip(np.searchsorted(self.edges, flat, side="right") - 1, 0, len(self.edges) - 2)
        use = ~self.direct[idx]
        if self.func is not None:
            use &= (flat >= self.edges[0]) & (flat <= self.edges[-1])
        out = np.empty(flat.shape, dtype=self.coefs.dtype)
        pos = np.nonzero(use)[0]
        for s in range(0, pos.size, _BLOCK):  # blocks keep the gathered coefficients in cache
            sel = pos[s : s + _BLOCK]
            i = idx[sel]
            a, b = self.edges[i], self.edges[i + 1]
            out[sel] = clenshaw_panels(self.coefs, i, (2 * flat[sel] - a - b) / (b - a))
        if not np.all(use):
            out[~use] = self.func(flat[~use])
        return out.reshape(x.shape)

    def __getstate__(self):
        state = self.__dict__.copy()
        if not self.direct.any():
            state["func"] = None  # not needed for evaluation inside [edges[0], edges[-1]]
        return state


_NOISE_GAIN = 5.0  # (Lambda + 1) for the values' own errors in fit_adaptive(with_errors=True)


def fit_adaptive(
    func,
    a,
    b,
    *,
    n_init=1,
    degree=24,
    tol=1e-10,
    floor=None,
    relative=True,
    noise=None,
    max_depth=12,
    max_panels=256,
    min_width=0.0,
    fallback=False,
    check_tail=0,
    breaks=None,
    with_errors=False,
    hopeless=None,
    hopeless_width=0.0,
):
    """Adaptive piecewise Chebyshev interpolant of ``func`` on [a, b] and its measured error.

    Parameters
    ----------
    func : callable
        Vectorised (real or complex values).
    a, b : float
    n_init : int
        Initial number of equal panels.
    degree : int
        Points per panel (polynomial degree ``degree - 1``).
    tol : float
        Accepted error at the test points, relative to ``max(|f(x)|, floor(values))``.
    floor : callable, optional
        ``floor(values) -> float``: the absolute scale below which errors are measured absolutely
        (e.g. ``1e-12 * max|values|`` of the panel, so zeros of f do not demand relative accuracy).
        Default: 0 (pure relative accuracy).
    relative : bool
        False: errors are absolute (scale ``floor(values)``, default 1), e.g. for log|mu| whose
        absolute error is the relative error of mu.
    noise : callable, optional
        ``noise(values) -> float`` subtracted from the measured error: the function's own rounding
        (an interpolant cannot be asked to be more accurate than the values it interpolates).
    max_depth, max_panels : int
        Bisection depth and a cost cap (panels beyond it are accepted as they are; their error is
        reported).
    min_width : float
        Panels narrower than this are not bisected further.
    fallback : bool
        Mark unresolved panels as direct (see :class:`PiecewiseChebyshev`) instead of accepting them.
    check_tail : int
        Also require the last ``check_tail`` coefficients to be below the tolerance (a convergence
        check that does not rely on the test points alone).
    breaks : array_like, optional
        Initial panel edges (increasing, from ``a`` to ``b``) instead of ``n_init`` equal panels;
        panels are only bisected, so no panel ever straddles a break.
    with_errors : bool
        ``func`` returns ``(values, absolute errors)``: a panel is not bisected to chase errors
        its values carry. With eta their largest error relative to the panel's scale, 5 eta adds
        to ``noise`` (the interpolant of values off by eta is off by at most Lambda eta, Lambda < 4
        for up to 32 Chebyshev points, and the test value itself by eta): the interpolant's true
        error is then within the returned error plus 6 eta.
    hopeless : callable, optional
        ``hopeless(values) -> bool`` (values at the nodes and test points): a panel that misses the
        tolerance and is hopeless is not bisected below ``hopeless_width`` (with ``fallback``, it is
        marked direct at once), e.g. a sign change of a function interpolated through its logarithm.
    hopeless_width : float
        See ``hopeless``.

    Returns
    -------
    interpolant : PiecewiseChebyshev
    error : float
        Largest measured error over the accepted interpolated panels (direct panels are exact).
    """
    pts = nodes(degree)
    tests = np.cos(np.pi * np.arange(1, degree) / degree)  # one between each pair of nodes
    if floor is None:
        floor = (lambda v: 0.0) if relative else (lambda v: 1.0)
    cuts = np.linspace(a, b, n_init + 1) if breaks is None else np.asarray(breaks, dtype=np.float64)
    todo = [(e0, e1, 0) for e0, e1 in zip(cuts[:-1], cuts[1:])]
    done = []
    worst = 0.0
    while todo:
        xs = np.concatenate(
            [0.5 * (e1 - e0) * np.concatenate([pts, tests]) + 0.5 * (e0 + e1) for e0, e1, _ in todo]
        )
        out = func(xs)
        vals = np.asarray(out[0] if with_errors else out).reshape(len(todo), -1)
        errs = np.asarray(out[1]).reshape(len(todo), -1) if with_errors else np.zeros(vals.shape)
        nxt = []
        for (e0, e1, depth), v, ve in zip(todo, vals, errs):
            finite = bool(np.all(np.isfinite(v)))
            if finite:
                # the panel's mean is taken out before the transform and put back into c[0]: the
                # higher coefficients then carry no rounding of |v| itself (log|mu| ~ -2000 in
                # d = 256 has 21-point coefficient noise ~8 eps |v|, a 5e-12 error at the tests)
                mid = v[:degree].mean()
                c = coefficients(v[:degree] - mid)
                approx = clenshaw(np.broadcast_to(c, (len(tests), degree)), tests) + mid
                c[0] += mid
                scale = np.maximum(np.abs(v[degree:]), floor(v)) if relative else floor(v)
                with np.errstate(divide="ignore", invalid="ignore"):
                    err = float(np.max(np.abs(approx - v[degree:]) / scale))
                if check_tail:
                    lead = (
                        max(float(np.max(np.abs(v))), floor(v), np.finfo(float).tiny)
                        if relative
                        else floor(v)
                    )
                    err = max(err, float(np.max(np.abs(c[-check_tail:]))) / lead)
                if noise is not None or with_errors:
                    own = 0.0
                    if with_errors:
                        with np.errstate(divide="ignore", invalid="ignore"):
                            own = float(np.nan_to_num(np.max(ve / np.maximum(np.abs(v), floor(v)))))
                        own *= _NOISE_GAIN
                    err = max(err - (noise(v) if noise is not None else 0.0) - own, 0.0)
                if not np.isfinite(err):
                    err = np.inf
            else:
                c, err = np.zeros(degree, dtype=vals.dtype), np.inf
            splittable = (
                depth < max_depth
                and (e1 - e0) > 2 * min_width
                and len(done) + len(todo) + len(nxt) < max_panels
                and not (hopeless is not None and (e1 - e0) <= hopeless_width and hopeless(v))
            )
            if err > tol and splittable:
                m = 0.5 * (e0 + e1)
                nxt += [(e0, m, depth + 1), (m, e1, depth + 1)]
            elif err > tol and fallback:
                done.append((e0, e1, np.zeros(degree, dtype=vals.dtype), True))
            else:
                done.append((e0, e1, c, False))
                worst = max(worst, err)
        todo = nxt
    done.sort(key=lambda p: p[0])
    edges = np.array([p[0] for p in done] + [done[-1][1]])
    direct = np.array([p[3] for p in done])
    interp = PiecewiseChebyshev(edges, np.array([p[2] for p in done]), direct, func if fallback else None)
    return interp, worst
