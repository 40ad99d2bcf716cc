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

__all__ = ["lambda_nu", "omega", "sphere_area", "log_sphere_area", "origin_term_coefficient"]


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


def omega(x, dim):
    """Omega_d(x) = Gamma(d/2) (2/x)^(d/2-1) J_(d/2-1)(x), the sphere average of cos(x u_1)."""
    nu = 0.5 * dim - 1.0
    if dim == 1:
        return np.cos(np.asarray(x, dtype=np.float64))
    return math.exp(math.lgamma(nu + 1.0) + nu * math.log(2.0)) * lambda_nu(nu, x)


def log_sphere_area(dim):
    """log S_(d-1) = log(2 pi^(d/2) / Gamma(d/2))."""
    return math.log(2.0) + 0.5 * dim * math.log(math.pi) - math.lgamma(0.5 * dim)


def sphere_area(dim: int) -> float:
    """Surface area S_(d-1) = 2 pi^(d/2) / Gamma(d/2) of the unit sphere in R^dim."""
    return math.exp(log_sphere_area(dim))


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
        return float(
            2.0 ** (alpha + d)
            * math.pi ** (d / 2)
            * sc.gamma((alpha + d) / 2)
            * sc.rgamma(-alpha / 2)
            / (2 * math.pi) ** d
        )
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
