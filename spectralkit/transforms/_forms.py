"""Wrappers that turn a log-form density ``rho -> (log|mu|, sign)`` into validated callables."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._numerics.chebyshev import fit_adaptive
from .._numerics.special import log_sphere_area
from ..exceptions import TransformError

__all__ = ["envelope_logs", "log_form", "log_interpolant", "not_a_measure", "vectorised"]

#: ``rho -> (log|mu|, sign)`` on a flat float64 array
LogAbsAndSign = Callable[[NDArray[np.float64]], tuple[ArrayLike, ArrayLike]]


def log_form(
    log_abs_and_sign: LogAbsAndSign,
) -> Callable[[ArrayLike], tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Wrap ``rho -> (log|mu|, sign)`` on flat arrays into a validated, shape-preserving callable."""

    def log_abs_mu(rho):
        arr = np.asarray(rho, dtype=np.float64)
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError("rho must be finite and >= 0")
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            log_abs, sign = log_abs_and_sign(arr.ravel())
        return (
            np.asarray(log_abs, dtype=np.float64).reshape(arr.shape),
            np.broadcast_to(np.asarray(sign, dtype=np.float64), arr.ravel().shape).reshape(arr.shape),
        )

    return log_abs_mu


def vectorised(log_abs_and_sign: LogAbsAndSign) -> Callable[[ArrayLike], NDArray[np.float64] | float]:
    """Wrap ``rho -> (log|mu|, sign)`` into a validated, vectorised float64 ``mu(rho)``."""
    log_abs_mu = log_form(log_abs_and_sign)

    def mu(rho):
        log_abs, sign = log_abs_mu(rho)
        with np.errstate(over="ignore", under="ignore"):
            out = sign * np.exp(log_abs)
        return out if out.ndim else float(out)

    return mu


def not_a_measure(reason: str) -> Callable[[ArrayLike], NDArray[np.float64]]:
    """The ``mu`` of a transform that is not a finite measure: calling it raises TransformError(reason)."""

    def mu(rho):
        raise TransformError(reason)

    return mu


def envelope_logs(
    log_env: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    ratio: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None,
    u: NDArray[np.float64],
    sign: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(log|mu|, sign) at u = log rho from fitted log E and q = mu / E (E >= |mu|, smooth where mu
    changes sign); ``ratio`` None: ``log_env`` is log|mu| itself, of the one ``sign``."""
    out = log_env(u)
    if ratio is None:
        return out, np.full(u.shape, sign)
    qv = ratio(u)
    with np.errstate(divide="ignore"):
        return out + np.log(np.abs(qv)), np.sign(qv)


#: absolute accuracy (in units of the panel's largest |rho^d mu|) of the panels that hold zeros of mu
_ZERO_TOL = 1e-13


def log_interpolant(log_abs_and_sign, t_lo, t_hi, *, signed=False, dim=None):
    """Piecewise Chebyshev interpolant of ``t -> log|mu(e^t)|`` for a density that is costly to
    evaluate (a series in mpmath, a mixture's node sums) and read at many points (a sampler's tables
    read up to ~6e5). Panels of 21 points, initially 0.5 wide in t = log rho, are bisected until, at
    the midpoints between nodes, the interpolant agrees with ``log_abs_and_sign`` to 2e-12 in
    log|mu| (= relative error of mu) and the last three coefficients are below it too, both beyond
    the rounding noise of the logs (8 eps |log mu|). Panels that do not converge down to a width of
    0.02 and points outside [t_lo, t_hi] are evaluated by ``log_abs_and_sign`` directly. Users:
    the exponential-power series, the Gaussian-mixture route, the monotone oscillation's tail.

    ``signed``: mu may change sign (e.g. the exponential power with alpha > 2). The interpolated function is then the complex
    logarithm log|mu| + i pi [mu < 0]: its imaginary part is constant on a panel without a zero,
    and a panel holding a zero (where log|mu| has a logarithmic singularity) does not converge: it
    is not bisected below 1/8 in t once its values change sign. There rho^d mu, which is analytic
    and, with the radial weight taken in, level across the panel, is interpolated (33 points,
    bisected as needed) to ``_ZERO_TOL`` absolute in units of its largest value on each sub-panel,
    plus the values' own rounding; what still does not converge is evaluated directly. Near a zero
    that error is not relative to mu: its radial mass, S_(d-1) int e^(d t) |error| dt, is returned
    as the mass error (alpha = 3: 1e-11 of the masses in d = 64, 2e-10 in d = 256, where these
    panels at rho = 42-90 cost 8 s of direct series evaluations before and 2.5 s now). Otherwise a
    negative value is never interpolated.

    Returns ``(evaluate, mass_error)``; ``mass_error`` needs ``dim`` (signed only).
    """

    def log_mu(t):
        la, sg = log_abs_and_sign(np.exp(t))
        if signed:
            return la + 1j * np.where(sg < 0, np.pi, 0.0)
        return np.where(sg > 0, la, np.nan)

    eps = np.finfo(float).eps
    interp, _ = fit_adaptive(
        log_mu,
        t_lo,
        t_hi,
        n_init=int(math.ceil((t_hi - t_lo) / 0.5)),
        degree=21,
        tol=2e-12,
        relative=False,
        noise=lambda v: 8 * eps * float(np.max(np.abs(v.real))),
        check_tail=3,
        max_depth=64,
        max_panels=1 << 16,
        min_width=0.02,
        fallback=True,
        # a sign change never converges in log form: such panels go to the zero fits below once
        # 1/8 wide instead of being bisected down to min_width (2,500 of the 5,300 evaluations of
        # alpha = 3 in d = 256, at 1-2 ms each)
        hopeless=(lambda v: bool(np.ptp(v.imag) > 0.5 * np.pi)) if signed else None,
        hopeless_width=0.125,
    )

    zero_panels, mass_error = [], 0.0
    if signed:
        log_area = log_sphere_area(dim)
        for i in np.nonzero(interp.direct)[0]:
            t0, t1 = float(interp.edges[i]), float(interp.edges[i + 1])
            mid = 0.5 * (t0 + t1)
            la_mid = float(log_abs_and_sign(np.array([math.exp(mid)]))[0][0])
            # the radial weight's rho^d = e^(d t) is taken in, so that the function interpolated,
            # rho^d mu e^(-ref), is level across the panel (mu alone falls like rho^-300 in d = 256)
            ref = la_mid + dim * mid

            def weighted(t, ref=ref):
                la, sg = log_abs_and_sign(np.exp(t))
                return sg * np.exp(la + dim * t - ref)

            # the values' own rounding: the logs carry eps (|log mu| + d |t|) each; errors are
            # absolute in units of the panel's largest value (floor)
            own = 8 * eps * (abs(la_mid) + dim * max(abs(t0), abs(t1)) + 1.0)
            lin, _ = fit_adaptive(
                weighted,
                t0,
                t1,
                degree=33,
                tol=_ZERO_TOL,
                relative=False,
                floor=lambda v: float(np.max(np.abs(v))),
                noise=lambda v, own=own: own,
                max_depth=6,
                fallback=True,
            )
            zero_panels.append((t0, t1, ref, lin))
            for j in np.nonzero(~lin.direct)[0]:
                e0, e1 = float(lin.edges[j]), float(lin.edges[j + 1])
                amp = float(np.sum(np.abs(lin.coefs[j])))  # >= max |interpolant| on the panel
                # the radial mass S_(d-1) int rho^(d-1) |error| drho = S_(d-1) int e^(d t) |error| dt,
                # with |error| e^(d t) <= e^ref amp times the tolerance and the values' rounding
                # through the interpolant (Lebesgue constant < 4 for 33 points, plus the test's own)
                mass_error += (_ZERO_TOL + 5 * own) * amp * (e1 - e0) * math.exp(log_area + ref)

    def evaluate(rho):
        rho = np.asarray(rho, dtype=np.float64)
        with np.errstate(divide="ignore"):
            t = np.log(rho)
        inside = (t >= t_lo) & (t <= t_hi)
        log_abs_out = np.empty(rho.shape)
        sign = np.ones(rho.shape)
        in_zero = [inside & (t >= t0) & (t <= t1) for t0, t1, _, _ in zero_panels]
        plain = inside & ~np.logical_or.reduce(in_zero) if in_zero else inside
        if np.any(plain):
            v = interp(t[plain])
            log_abs_out[plain] = v.real
            if signed:
                sign[plain] = np.where(np.abs(v.imag) > 0.5 * np.pi, -1.0, 1.0)
        for sel, (_, _, ref, lin) in zip(in_zero, zero_panels, strict=True):
            if np.any(sel):
                v = lin(t[sel])
                with np.errstate(divide="ignore"):
                    log_abs_out[sel] = ref - dim * t[sel] + np.log(np.abs(v))
                sign[sel] = np.where(v < 0, -1.0, 1.0)
        if np.any(~inside):
            log_abs_out[~inside], sign[~inside] = log_abs_and_sign(rho[~inside])
        return log_abs_out, sign

    return evaluate, mass_error
