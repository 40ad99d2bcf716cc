"""Numerical inversion of the Laplace transform on Talbot's contour.

For G(s) = int_0^inf e^(-s t) psi(t) dt, analytic in the plane cut along the negative real axis
(poles and branch points on (-inf, 0]) and not growing faster than e^(o(|s|)) there,

    psi(t) = (1 / (2 pi i)) int_C G(s) e^(s t) ds,

with C the Bromwich line deformed into the left half-plane around the cut. Weideman's optimised
Talbot contour (J. A. C. Weideman, "Optimizing Talbot's contours for the inversion of the Laplace
transform", SIAM J. Numer. Anal. 44, 2006)

    s(theta) = (N / t) (sigma + mu theta cot(alpha theta) + i nu theta),  -pi < theta < pi,
    (sigma, mu, alpha, nu) = (-0.6122, 0.5017, 0.6407, 0.2645),

and the N-point midpoint rule in theta converge like e^(-1.36 N); the terms are at most
e^(0.17 N) |G| in size, so rounding costs about e^(0.17 N) eps |G|. The error of each value is
measured by the caller (two values of N); this module only evaluates the rule.
"""

import math

import numpy as np

__all__ = ["talbot_nodes", "talbot_invert"]

_SIGMA, _MU, _ALPHA, _NU = -0.6122, 0.5017, 0.6407, 0.2645


def talbot_nodes(n):
    """``(z, dz)``: the contour points s and derivatives ds/dtheta for t = 1 (divide both by t).

    s_k(t) = z_k / t and ds_k(t) = dz_k / t for the midpoint nodes theta_k = -pi + (k + 1/2) 2 pi / n.
    """
    theta = -math.pi + (np.arange(n) + 0.5) * (2.0 * math.pi / n)
    at = _ALPHA * theta
    z = n * (_SIGMA + _MU * theta / np.tan(at) + 1j * _NU * theta)
    dz = n * (_MU / np.tan(at) - _MU * at / np.sin(at) ** 2 + 1j * _NU)
    return z, dz


def talbot_invert(g, t, n=24, log_g=None):
    """psi(t) from G by the n-point Talbot rule, and the sum of the terms' moduli (rounding scale).

    Parameters
    ----------
    g : callable
        Vectorised G(s) for complex s (principal branches), real on the positive axis.
    log_g : callable, optional
        A logarithm of G (any branch: only exp(log_g) is used). With it the terms are
        exp(log G(s_k) + s_k t) ds_k: G may overflow on the contour (exp(-s^(3/4)) near the
        negative axis) where the product with e^(s t) does not. ``size`` then weights each
        term by max(1, |log G(s_k) + s_k t|), the relative rounding of its exponential in eps.
    t : ndarray
        Times t > 0 (float64).
    n : int
        Number of contour nodes.

    Returns
    -------
    psi, size : ndarray
        Re (1 / (i n)) sum_k G(s_k) e^(s_k t) s_k'(theta_k) with s_k = z_k / t, and
        (1 / n) sum_k |term_k| (the scale against which the rounding error is eps-relative);
        NaN where a term is not finite.
    """
    t = np.asarray(t, dtype=np.float64)
    z, dz = talbot_nodes(n)
    s = z[None, :] / t.ravel()[:, None]
    with np.errstate(all="ignore"):
        if log_g is None:
            vals = np.asarray(g(s), dtype=np.complex128) * np.exp(z)[None, :]
            weight = 1.0
        else:
            expo = np.asarray(log_g(s), dtype=np.complex128) + z[None, :]
            vals = np.exp(expo)
            # exp(w) in float64 is accurate to ~eps |w| (the rounding of w itself): large phases
            # of G (exp(-s^(3/4)) at large |s|) make the terms that inaccurate
            weight = np.maximum(1.0, np.abs(expo))
        vals = vals * (dz[None, :] / t.ravel()[:, None])
    finite = np.all(np.isfinite(vals), axis=1)
    psi = np.where(finite, np.real(vals.sum(axis=1) / (1j * n)), np.nan)
    size = np.where(finite, (np.abs(vals) * weight).sum(axis=1) / n, np.nan)
    return psi.reshape(t.shape), size.reshape(t.shape)
