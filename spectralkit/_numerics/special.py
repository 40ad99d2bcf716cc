"""Special functions of the radial Fourier transform (angular-frequency convention).

For a radial kernel on R^d, nu = d/2 - 1:

- Lambda_nu(x) = x^(-nu) J_nu(x), Lambda_nu(0) = 2^(-nu) / Gamma(nu + 1): the kernel of
  mu(rho) = (2 pi)^(-d/2) int_0^inf k(r) r^(d-1) Lambda_nu(rho r) dr.
- Omega_d(x) = Gamma(d/2) (2/x)^nu J_nu(x) = 2^nu Gamma(nu + 1) Lambda_nu(x) = E cos(x u_1) for u
  uniform on the unit sphere S^(d-1), Omega_d(0) = 1: k(r) = int_0^inf f(rho) Omega_d(rho r) drho
  for the signed radial density f(rho) = S_(d-1) rho^(d-1) mu(rho).
- S_(d-1) = 2 pi^(d/2) / Gamma(d/2), the area of the unit sphere.
"""

import math

import numpy as np
import scipy.special as sc

from .quadrature import gauss_legendre

__all__ = [
    "lambda_nu",
    "omega",
    "series_0f1",
    "sphere_area",
    "log_sphere_area",
    "log_besselk",
    "scaled_bessel",
    "log_origin_coefficient",
    "origin_term_coefficient",
]


def lambda_nu(nu, x):
    """Lambda_nu(x) = x^(-nu) J_nu(x), vectorised and stable at x -> 0 (even in x).

    ``2^(-nu)/Gamma(nu+1) 0F1(; nu+1; -x^2/4)`` for |x| < 1 (no cancellation), ``jv(nu, x) x^(-nu)``
    otherwise; relative accuracy ~1e-15 away from the zeros of J_nu.
    """
    x = np.abs(np.asarray(x, dtype=np.float64))
    out = np.empty(x.shape)
    small = x < 1.0
    out[small] = 2.0 ** (-nu) / sc.gamma(nu + 1.0) * sc.hyp0f1(nu + 1.0, -0.25 * x[small] ** 2)
    xl = x[~small]
    out[~small] = sc.jv(nu, xl) * xl ** (-nu)
    return out


def series_0f1(nu, z, sign=1.0, tol=1e-17):
    """sum_k (sign z)^k / ((nu + 1)_k k!) = 0F1(; nu + 1; sign z) for an array z >= 0.

    Terms are computed in place; the sum stops once every term is negligible and past the peak
    (the term ratio z / ((nu + 1 + k)(k + 1)) is below 1 from there on). With sign = -1 and
    z <= nu + 1 every term is below 1 in magnitude (at most one digit lost to cancellation).
    """
    term = np.ones_like(z)
    total = np.ones_like(z)
    k = 0
    while True:
        term = term * (sign * z) / ((nu + 1.0 + k) * (k + 1.0))
        total = total + term
        k += 1
        if np.all(np.abs(term) <= tol * np.abs(total)) and np.all(z <= (nu + 1.0 + k) * (k + 1.0)):
            return total


def omega(x, dim):
    """Omega_d(x) = Gamma(d/2) (2/x)^(d/2-1) J_(d/2-1)(x) = 0F1(; d/2; -x^2/4), the sphere average of cos(x u_1).

    Vectorised, even in x, |Omega_d| <= 1. d = 1: cos x; d = 3: sin x / x. Otherwise the
    alternating series where x^2/4 <= d/2 (no digit lost beyond one), and
    exp(log Gamma(d/2) + nu log(2/x)) J_nu(x) beyond. Where J_nu(x) underflows (d > ~500, x < nu)
    Gauss-Legendre quadrature of E cos(x u_1) is used. Absolute accuracy ~5e-16 against mpmath
    (tests, d = 2 ... 1000).
    """
    t = np.abs(np.asarray(x, dtype=np.float64))
    if dim == 1:
        return np.cos(t)
    if dim == 3:
        return np.sinc(t / np.pi)
    nu = 0.5 * dim - 1.0
    out = np.empty(t.shape)
    small = t * t <= 4.0 * (nu + 1.0)
    if np.any(small):
        out[small] = series_0f1(nu, 0.25 * t[small] ** 2, sign=-1.0)
    big = ~small
    if np.any(big):
        tb = t[big]
        jv = sc.jv(nu, tb)
        logpre = sc.gammaln(nu + 1.0) + nu * np.log(2.0 / tb)
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
    x, w = gauss_legendre(int(min(20000, 60 + math.ceil(1.5 * float(np.max(t)) * u_max))))
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


def log_sphere_area(dim):
    """log S_(d-1) = log(2 pi^(d/2) / Gamma(d/2))."""
    return math.log(2.0) + 0.5 * dim * math.log(math.pi) - math.lgamma(0.5 * dim)


def log_besselk(order, z, kve=None):
    """log K_order(z) for an array z (Re z > 0), from scipy's scaled K e^z (``kve``: its values, when the
    caller has them). Where those overflow (z small against the order, |m| > 0) the small-z series

        K_m(z) = (1/2) Gamma(m) (z/2)^-m sum_k (-z^2/4)^k / (k! (m - 1) ... (m - k)),   k < m,

    whose terms fall at least like z^2/(4 k (m - k)) there (overflow needs m >~ 100 at z ~ 0.3;
    the leading term alone was 2e-4 off at m = 127); K_0(z) ~ -log(z/2) - gamma_E. Real z beyond
    AMOS's range (|z| > 1e10) through :func:`scaled_bessel`."""
    z = np.asarray(z)
    am = abs(order)
    if kve is None:
        with np.errstate(over="ignore"):
            kve = scaled_bessel("k", am, z) if not np.iscomplexobj(z) else sc.kve(am, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        lk = np.log(kve) - z
    over = np.isinf(kve)  # overflow (nan, from arguments AMOS rejects, stays nan)
    if np.any(over):
        zb = z[over]
        if am > 0:
            q = -0.25 * zb * zb
            term = np.ones(zb.shape, dtype=np.result_type(zb, 1.0))
            total = term.copy()
            k = 1
            while k < am and np.max(np.abs(term)) > 1e-18:
                term = term * q / (k * (am - k))
                total += term
                k += 1
            lk[over] = math.lgamma(am) - math.log(2.0) - am * np.log(0.5 * zb) + np.log(total)
        else:
            lk[over] = np.log(-np.log(zb / 2) - np.euler_gamma)
    return lk


_SCALED = {"i": sc.ive, "k": sc.kve, "h1": sc.hankel1e, "h2": sc.hankel2e}


def scaled_bessel(kind, order, z):
    """scipy's exponentially scaled Bessel functions, ``kind`` "i" (I e^-z), "k" (K e^z), "h1"
    (H1 e^-iz) or "h2" (H2 e^iz), with Hankel's expansion where |z| > 1e5 (1 + order^2): there
    AMOS loses ~ eps |z| in its argument reduction (1e-2 relative at |z| ~ 1e15) and returns nan
    beyond |z| ~ 1e10 (I, K) or 1e12 (H). With a_k = prod_(j=1..k) (4 m^2 - (2j - 1)^2) / (k! 8^k),

        I e^-z ~ (2 pi z)^-1/2 sum (-1)^k a_k z^-k,      K e^z ~ (pi/(2 z))^1/2 sum a_k z^-k,
        H{1,2} e^(-+iz) ~ (2/(pi z))^1/2 e^(-+i (m pi/2 + pi/4)) sum (+-i)^k a_k z^-k

    (I for Re z > 0); with |z| > 1e5 (1 + m^2) the terms fall by at least 10^-5 each, so five reach
    1e-25. Returns complex for complex z or kind h1/h2, float otherwise."""
    real = kind in ("i", "k") and not np.iscomplexobj(z)
    z = np.asarray(z, dtype=np.float64 if real else np.complex128)
    m = float(order)
    big = np.abs(z) > 1e5 * (1.0 + m * m)
    out = np.empty(z.shape, dtype=z.dtype)
    out[~big] = _SCALED[kind](m, z[~big])
    if np.any(big):
        zb = z[big]
        sign = {"i": -1.0, "k": 1.0, "h1": 1j, "h2": -1j}[kind]
        term = np.ones(zb.shape, dtype=z.dtype)
        total = term.copy()
        for k in range(1, 6):
            term = term * sign * (4 * m * m - (2 * k - 1) ** 2) / (8 * k * zb)
            total += term
        if kind == "i":
            out[big] = total / np.sqrt(2 * np.pi * zb)
        elif kind == "k":
            out[big] = np.sqrt(0.5 * np.pi / zb) * total
        else:
            phase = -sign * (m * np.pi / 2 + np.pi / 4)
            out[big] = np.sqrt(2 / (np.pi * zb)) * np.exp(phase) * total
    return out


def sphere_area(dim: int) -> float:
    """Surface area S_(d-1) = 2 pi^(d/2) / Gamma(d/2) of the unit sphere in R^dim."""
    return math.exp(log_sphere_area(dim))


def log_origin_coefficient(alpha, dim):
    """(log|C(alpha)|, sign) of :func:`origin_term_coefficient`'s C for powers r^alpha (no log), in
    logs: C = pi^(-d/2) 2^alpha Gamma((alpha + d)/2)/Gamma(-alpha/2) overflows float64 in high d
    (d = 256). 1/Gamma(-x) = -sin(pi x) Gamma(1 + x)/pi (reflection); C = 0 (log -inf) for even
    integers alpha. ``alpha`` may be an array."""
    a = np.asarray(alpha, dtype=np.float64)
    x = 0.5 * a
    sin_ = np.sin(np.pi * x)
    sin_ = np.where(np.abs(x - np.round(x)) < 1e-13, 0.0, sin_)
    with np.errstate(divide="ignore"):
        log_abs = (
            -0.5 * dim * math.log(math.pi)
            + a * math.log(2.0)
            + sc.gammaln(0.5 * (a + dim))
            + sc.gammaln(1 + x)
            - math.log(math.pi)
            + np.log(np.abs(sin_))
        )
    sign = -np.sign(sin_) * sc.gammasgn(1 + x) * sc.gammasgn(0.5 * (a + dim))
    return log_abs, sign


def origin_term_coefficient(alpha, log_power, dim):
    """Large-rho coefficient of one non-smooth origin term of k.

    A term c r^alpha (alpha > -d, not an even integer) contributes c C(alpha) rho^(-alpha-d) to mu,
    C(alpha) = 2^(alpha+d) pi^(d/2) Gamma((alpha+d)/2) / Gamma(-alpha/2) (2 pi)^(-d) (the Fourier
    transform of |x|^alpha as a generalised function). A term c r^(2n) log r contributes
    c C'(2n) rho^(-2n-d), C'(2n) = 2^(2n+d) pi^(d/2) Gamma(n+d/2) (-1)^(n+1) n!/2 (2 pi)^(-d)
    (the alpha-derivative of C where 1/Gamma(-alpha/2) vanishes).

    Raises
    ------
    ValueError
        For a log term whose power is not an even integer >= 0.
    """
    d = float(dim)
    if log_power == 0:
        log_abs, sign = log_origin_coefficient(alpha, dim)
        return float(sign * np.exp(log_abs))
    if log_power == 1 and alpha >= 0 and float(alpha) / 2 == int(alpha / 2):
        n = int(alpha / 2)
        return float(
            2.0 ** (2 * n + d)
            * math.pi ** (d / 2)
            * sc.gamma(n + d / 2)
            * (-1) ** (n + 1)
            * math.factorial(n)
            / 2
            / (2 * math.pi) ** d
        )
    raise ValueError(
        f"log_power must be 0, or 1 with an even integer alpha; got alpha={alpha!r}, log_power={log_power!r}"
    )
