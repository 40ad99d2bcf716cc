"""Special functions of the radial hyper-kernel, evaluated without overflow.

- ``log_e0f1(nu, a)``: log of E_nu(a) = 0F1(; nu + 1; a^2 / 4) exp(-a) = Gamma(nu + 1) (2/a)^nu I_nu(a) e^-a,
  a value in (0, 1] for a >= 0 and nu >= -1/2 (E_nu(a) = E[exp(a (u_1 - 1))] over the sphere).
- ``omega(t, dim)``: Omega_d(t) = Gamma(d/2) (2/t)^(d/2-1) J_(d/2-1)(t) = 0F1(; d/2; -t^2/4) = E cos(t u_1),
  u uniform on S^(d-1); |Omega_d| <= 1.
- ``log_chi_pdf(rho, dim, lengthscale)``: log density of chi_d / l.
"""

import math

import numpy as np
import scipy.special

__all__ = ["log_chi_pdf", "log_e0f1", "omega"]

# series of 0F1 up to this argument (no overflow: the sum is <= e^a); beyond it ive is used
_SERIES_MAX = 700.0


def _series_0f1(nu, z, sign=1.0, tol=1e-17):
    """sum_k (sign z)^k / ((nu + 1)_k k!) for an array z >= 0 (terms computed in place)."""
    term = np.ones_like(z)
    total = np.ones_like(z)
    k = 0
    while True:
        term = term * (sign * z) / ((nu + 1.0 + k) * (k + 1.0))
        total = total + term
        k += 1
        # stop once every term is negligible and past the peak (ratio < 1 from here on)
        if np.all(np.abs(term) <= tol * np.abs(total)) and np.all(z <= (nu + 1.0 + k) * (k + 1.0)):
            return total


def log_e0f1(nu, a):
    """log E_nu(a), E_nu(a) = 0F1(; nu + 1; a^2/4) e^(-a), for a >= 0 (vectorised; never overflows).

    Series for a <= 30 (and up to a = 700 when nu > 150, where ``ive`` would underflow), else
    ``log(Gamma(nu + 1)) + nu log(2/a) + log(ive(nu, a))``. Relative accuracy ~1e-15 against mpmath
    (tests). Where E underflows double precision (huge nu, huge a) the result is ``-inf``.
    """
    a = np.asarray(a, dtype=np.float64)
    out = np.empty(a.shape)
    limit = 30.0 if nu <= 150 else _SERIES_MAX
    small = a <= limit
    if np.any(small):
        z = 0.25 * a[small] ** 2
        out[small] = np.log(_series_0f1(nu, z)) - a[small]
    big = ~small
    if np.any(big):
        ab = a[big]
        with np.errstate(divide="ignore"):
            iv = np.log(scipy.special.ive(nu, ab))
        val = scipy.special.gammaln(nu + 1.0) + nu * np.log(2.0 / ab) + iv
        # ive underflows for nu^2 / (2 a) > ~700: use the (bounded) series where it is in range
        bad = ~np.isfinite(val) & (ab <= _SERIES_MAX)
        if np.any(bad):
            z = 0.25 * ab[bad] ** 2
            val[bad] = np.log(_series_0f1(nu, z)) - ab[bad]
        out[big] = val
    return out


def omega(t, dim):
    """Omega_d(t) = E cos(t u_1) = 0F1(; d/2; -t^2/4) for t >= 0 (vectorised, |Omega_d| <= 1).

    d = 1: cos t; d = 3: sin t / t. Otherwise the alternating series where t^2/4 <= d/2 (every
    term is below 1 in magnitude, so at most one digit is lost), and
    exp(log Gamma(d/2) + nu log(2/t)) J_nu(t) beyond. Where J_nu(t) underflows (d > ~500 and
    t < nu) Gauss-Legendre quadrature of E cos(t u_1) is used (absolute accuracy ~1e-15).
    """
    t = np.asarray(t, dtype=np.float64)
    if dim == 1:
        return np.cos(t)
    if dim == 3:
        return np.sinc(t / np.pi)
    nu = 0.5 * dim - 1.0
    out = np.empty(t.shape)
    small = t * t <= 4.0 * (nu + 1.0)
    if np.any(small):
        out[small] = _series_0f1(nu, 0.25 * t[small] ** 2, sign=-1.0)
    big = ~small
    if np.any(big):
        tb = t[big]
        jv = scipy.special.jv(nu, tb)
        logpre = scipy.special.gammaln(nu + 1.0) + nu * np.log(2.0 / tb)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            val = np.sign(jv) * np.exp(logpre + np.log(np.abs(jv)))
        bad = (jv == 0.0) | ~np.isfinite(val) | (np.abs(jv) < 1e-290)
        if np.any(bad):
            val[bad] = _omega_quadrature(tb[bad], nu)
        out[big] = val
    return out


def _omega_quadrature(t, nu):
    """E cos(t u_1), u_1 of density prop. to (1 - u^2)^(nu - 1/2), by Gauss-Legendre quadrature.

    Used for large nu only, where the density is concentrated: it is below 1e-18 of its peak
    beyond |u| = U = sqrt(42 / nu), so the rule runs on [-U, U] with enough nodes for both the
    weight and cos(t u) (the normaliser uses the same rule, so the result is an exact average of
    values of cos, absolute accuracy ~1e-15).
    """
    u_max = min(1.0, math.sqrt(42.0 / max(nu, 1.0)))
    n = int(min(20000, 60 + math.ceil(1.5 * float(np.max(t)) * u_max)))
    x, w = np.polynomial.legendre.leggauss(n)
    x = x * u_max
    with np.errstate(divide="ignore"):
        logw = (nu - 0.5) * np.log1p(-x * x)
    w = w * np.exp(logw - logw.max())
    w = w / w.sum()
    out = np.empty(t.shape)
    flat = t.ravel()
    for s in range(0, flat.size, 4096):  # bounded memory
        out.flat[s : s + 4096] = np.cos(np.multiply.outer(flat[s : s + 4096], x)) @ w
    return out


def log_chi_pdf(rho, dim, lengthscale):
    """log density of chi_d / l at rho >= 0: l (rho l)^(d-1) e^(-(rho l)^2/2) / (2^(d/2-1) Gamma(d/2))."""
    rho = np.asarray(rho, dtype=np.float64)
    x = rho * lengthscale
    with np.errstate(divide="ignore"):
        return (
            math.log(lengthscale)
            + (dim - 1) * np.log(x)
            - 0.5 * x * x
            - (0.5 * dim - 1.0) * math.log(2.0)
            - scipy.special.gammaln(0.5 * dim)
        )
