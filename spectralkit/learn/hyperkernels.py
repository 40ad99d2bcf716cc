"""Hyper-kernels: positive definite kernels on pairs of points whose sections are kernels.

A hyper-kernel hk((x1, x1'), (x2, x2')) is PD on pairs and, for a fixed pair, a kernel in
(x, x'); kernel learning in its RKHS (the hyper-RKHS) returns k*(x, x') = sum_ij beta_ij
hk((x_i, x_j), (x, x')) (see :mod:`spectralkit.learn`). Three hyper-kernels:

**Gaussian** (Kondor & Jebara's construction). With g_v the normalised Gaussian density of
variance v per coordinate on R^d,

    hk = int int g_s2(x1 - z) g_s2(x1' - z) g_h(z - z') g_s2(x2 - z') g_s2(x2' - z') dz dz'
       = g_{2 s2}(x1 - x1') g_{2 s2}(x2 - x2') g_{s2 + h}((x1 + x1')/2 - (x2 + x2')/2),

s2 = s^2, h = s_h^2 (g_v(x - z) g_v(x' - z) = g_{2v}(x - x') g_{v/2}((x + x')/2 - z); checked by
quadrature in the tests). The source paper writes the same family in other parameters,
g_sigma2(x1 - x1') g_sigma2(x2 - x2') g_{sigma2 + sigma2_h}(midpoint difference): a valid
hyper-kernel, reparametrised here by s^2 = sigma2 / 2, s_h^2 = sigma2 / 2 + sigma2_h
(tested). Dividing by its value at four coincident points gives the
*normalised* hyper-kernel, which the estimators use (the constant only rescales lambda). It
factorises over points with factors in (0, 1] (t = s^2 + s_h^2):

    hk_norm = omega(x1 - x1') omega(x2 - x2') prod_{p in {x1, x1'}, q in {x2, x2'}} gamma(p - q),
    omega(z) = exp(-|z|^2 (1/(4 s^2) - 1/(8 t))),  gamma(z) = exp(-|z|^2 / (8 t)),

so hyper-kernel rows against landmark pairs are products of point-level factor matrices.

**Wishart** (Kondor & Jebara): the Gaussians of the construction share a covariance Sigma drawn
from an inverse Wishart law IW(D, b) on d x d matrices (the paper writes the sample size m where
the dimension d belongs):

    hk = int_{Sigma > 0} int_{R^d} prod_{p in {x1, x1', x2, x2'}} g_Sigma(p - x) dx IW(Sigma; D, b) dSigma
       = pi^(-3d/2) 2^(-d) Gamma_d((b+3)/2) / Gamma_d(b/2) |D|^(b/2) |D + S|^(-(b+3)/2),

S the scatter matrix of the four points. S = E W E^T with E = [x1 - x1', x2 - x2',
(x1 + x1')/2 - (x2 + x2')/2] and W = diag(1/2, 1/2, 1), so |D + S| = |D| det(I_3 + W^(1/2) E^T
D^(-1) E W^(1/2)): a 3 x 3 determinant for any d. Normalised: det(I_3 + ...)^(-(b+3)/2).

**Radial**: H(r, r') = int Omega_d(rho r) Omega_d(rho r') F(d rho) with F the law of chi_d / l,

    H(r, r') = exp(-(r^2 + r'^2) / (2 l^2)) 0F1(; d/2; r^2 r'^2 / (4 l^4))
             = exp(-(r - r')^2 / (2 l^2)) E_(d/2-1)(r r' / l^2),

E_nu(a) = 0F1(; nu + 1; a^2/4) e^(-a) in (0, 1]. On pairs, hk((x1, x1'), (x2, x2')) =
H(|x1 - x1'|, |x2 - x2'|): PD (an integral of products) with radial sections, so every learned
kernel is radial and has an explicit signed spectral measure (:class:`LearnedRadialKernel`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.special
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from .._validation import check_dim
from ._special import log_e0f1

__all__ = ["gaussian_hyperkernel", "radial_hyperkernel", "wishart_hyperkernel"]


def _points(name, x):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        x = x.reshape(1)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite; got NaN or infinite values")
    return x


def _four(x1, x1p, x2, x2p):
    pts = [_points(n, v) for n, v in (("x1", x1), ("x1p", x1p), ("x2", x2), ("x2p", x2p))]
    dims = {p.shape[-1] for p in pts}
    if len(dims) != 1:
        raise ValueError(f"x1, x1p, x2, x2p must have the same last dimension d; got {sorted(dims)}")
    return pts, dims.pop()


def _positive(name, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def gaussian_hyperkernel(
    x1: ArrayLike,
    x1p: ArrayLike,
    x2: ArrayLike,
    x2p: ArrayLike,
    sigma2: float,
    sigma2_h: float,
    *,
    normalize: bool = False,
) -> NDArray[np.float64] | float:
    """Gaussian hyper-kernel g_{2 s^2}(x1 - x1') g_{2 s^2}(x2 - x2') g_{s^2 + s_h^2}(midpoint difference).

    Parameters
    ----------
    x1, x1p, x2, x2p : array-like of shape (..., d)
        The pairs (x1, x1') and (x2, x2'); leading dimensions broadcast.
    sigma2, sigma2_h : float > 0
        s^2 (variance of the per-point Gaussians of the construction) and s_h^2 (the coupling).
    normalize : bool, default False
        False: the construction's value with normalised Gaussians g_v(z) = (2 pi v)^(-d/2)
        exp(-|z|^2 / (2 v)). True: divided by that constant, so four coincident points give 1.

    Returns
    -------
    ndarray (or float)
    """
    (a, ap, b, bp), d = _four(x1, x1p, x2, x2p)
    s2, h = _positive("sigma2", sigma2), _positive("sigma2_h", sigma2_h)
    t = s2 + h
    q = (
        np.sum((a - ap) ** 2, axis=-1) / (4 * s2)
        + np.sum((b - bp) ** 2, axis=-1) / (4 * s2)
        + np.sum((0.5 * (a + ap) - 0.5 * (b + bp)) ** 2, axis=-1) / (2 * t)
    )
    log_c = 0.0 if normalize else -d * math.log(4 * math.pi * s2) - 0.5 * d * math.log(2 * math.pi * t)
    out = np.exp(log_c - q)
    return out if out.ndim else float(out)


def wishart_hyperkernel(
    x1: ArrayLike,
    x1p: ArrayLike,
    x2: ArrayLike,
    x2p: ArrayLike,
    scale: float | ArrayLike,
    dof: float,
    *,
    normalize: bool = False,
) -> NDArray[np.float64] | float:
    """Wishart hyper-kernel in closed form (Kondor & Jebara, with the dimension d).

    Parameters
    ----------
    x1, x1p, x2, x2p : array-like of shape (..., d)
    scale : float > 0 or array of shape (d, d)
        The inverse-Wishart scale matrix D (a float c means c I_d).
    dof : float > d - 1
        Degrees of freedom b of the inverse-Wishart law (its mean D / (b - d - 1) exists for
        b > d + 1).
    normalize : bool, default False
        True: ``det(I_3 + W^(1/2) E^T D^(-1) E W^(1/2))^(-(b+3)/2)`` (1 at four coincident points).

    Returns
    -------
    ndarray (or float)
    """
    (a, ap, b_, bp), d = _four(x1, x1p, x2, x2p)
    a, ap, b_, bp = np.broadcast_arrays(a, ap, b_, bp)
    if isinstance(dof, bool) or not isinstance(dof, numbers.Real) or not math.isfinite(dof) or dof <= d - 1:
        raise ValueError(f"dof must be a finite number > d - 1 = {d - 1}, got {dof!r}")
    b = float(dof)
    if np.ndim(scale) == 0:
        c = _positive("scale", scale)
        Dinv = np.eye(d) / c
        logdet_D = d * math.log(c)
    else:
        D = np.asarray(scale, dtype=np.float64)
        if D.shape != (d, d) or not np.all(np.isfinite(D)) or not np.allclose(D, D.T, rtol=1e-12, atol=0):
            raise ValueError(
                f"scale must be a float > 0 or a finite symmetric ({d}, {d}) matrix; got shape {D.shape}"
            )
        sign, logdet_D = np.linalg.slogdet(D)
        if sign <= 0 or np.linalg.eigvalsh(D).min() <= 0:
            raise ValueError("scale must be positive definite")
        Dinv = np.linalg.inv(D)
    E = np.stack([a - ap, b_ - bp, 0.5 * (a + ap) - 0.5 * (b_ + bp)], axis=-1)  # (..., d, 3)
    w = np.sqrt(np.array([0.5, 0.5, 1.0]))
    G = np.einsum("...ki,kl,...lj->...ij", E, Dinv, E) * w[:, None] * w[None, :]
    _, logdet = np.linalg.slogdet(np.eye(3) + G)
    log_hk = -0.5 * (b + 3) * logdet
    if not normalize:
        log_hk = (
            log_hk
            - 1.5 * d * math.log(math.pi)
            - d * math.log(2.0)
            + scipy.special.multigammaln(0.5 * (b + 3), d)
            - scipy.special.multigammaln(0.5 * b, d)
            - 1.5 * logdet_D
        )
    out = np.exp(log_hk)
    return out if out.ndim else float(out)


def radial_hyperkernel(
    r: ArrayLike, rp: ArrayLike, dim: int, lengthscale: float
) -> NDArray[np.float64] | float:
    """Radial hyper-kernel H(r, r') = exp(-(r^2 + r'^2)/(2 l^2)) 0F1(; d/2; r^2 r'^2/(4 l^4)).

    Evaluated as exp(-(r - r')^2/(2 l^2)) E_(d/2-1)(r r'/l^2) with E in (0, 1] computed in logs,
    so it never overflows (|H| <= exp(-(r - r')^2 / (2 l^2))).

    Parameters
    ----------
    r, rp : array-like of distances >= 0 (broadcast against each other)
    dim : int >= 1
    lengthscale : float > 0

    Returns
    -------
    ndarray (or float)
    """
    dim = check_dim(dim)
    ell = _positive("lengthscale", lengthscale)
    r = np.asarray(r, dtype=np.float64)
    rp = np.asarray(rp, dtype=np.float64)
    for name, v in (("r", r), ("rp", rp)):
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError(f"{name} must contain finite distances >= 0")
    out = _radial_h(*np.broadcast_arrays(r, rp), dim, ell)
    return out if out.ndim else float(out)


def _radial_h(r, rp, dim, ell):
    """H(r, r') for validated arrays of equal shape."""
    a = (r * rp) / (ell * ell)
    log_e = log_e0f1(0.5 * dim - 1.0, a.ravel()).reshape(a.shape)
    return np.exp(log_e - (r - rp) ** 2 / (2 * ell * ell))


# ---------------------------------------------------------------------------------------------
# Blocks of the normalised Gaussian and Wishart hyper-kernels (private: used by the solvers)
# ---------------------------------------------------------------------------------------------
def sq_dists(A, B):
    """|a - b|^2 for the rows of A and B (clipped at 0)."""
    d2 = np.sum(A * A, axis=1)[:, None] + np.sum(B * B, axis=1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d2, 0.0)


class GaussianBlocks:
    """Rows of the normalised Gaussian hyper-kernel between pairs and landmark pairs.

    ``rows(I, J)`` returns hk((x_I, x_J), (z_a, z_b)) for the landmark pairs (a <= b) as a
    (len(I), n_pairs) matrix: omega(x_I - x_J) omega(z_a - z_b) g_a g_b with g = gamma(x_I - z)
    gamma(x_J - z), i.e. an outer product of point factors per row.
    """

    def __init__(self, X, Z, sigma2, sigma2_h, qa, qb):
        t = sigma2 + sigma2_h
        self.kappa = 1.0 / (4 * sigma2) - 1.0 / (8 * t)
        self.X = X
        self.sqx = np.sum(X * X, axis=1)
        self.Gam = np.exp(-sq_dists(X, Z) / (8 * t))
        self.qa, self.qb = qa.astype(np.int64), qb.astype(np.int64)
        self.omega_q = np.exp(-self.kappa * np.sum((Z[qa] - Z[qb]) ** 2, axis=1))

    def rows(self, I, J):
        d2 = np.maximum(self.sqx[I] + self.sqx[J] - 2.0 * np.einsum("ij,ij->i", self.X[I], self.X[J]), 0.0)
        out = np.empty((len(I), len(self.qa)))
        _gaussian_rows(
            np.asarray(I, np.int64),
            np.asarray(J, np.int64),
            self.Gam,
            np.exp(-self.kappa * d2),
            self.qa,
            self.qb,
            self.omega_q,
            out,
        )
        return out


class WishartBlocks:
    """Rows of the normalised Wishart hyper-kernel (isotropic scale c I) between pairs and landmark pairs."""

    def __init__(self, X, Z, scale, dof, qa, qb):
        self.c, self.power = float(scale), 0.5 * (float(dof) + 3.0)
        self.X = X
        self.sqx = np.sum(X * X, axis=1)
        self.P = X @ Z.T
        sqz = np.sum(Z * Z, axis=1)
        self.qa, self.qb = qa.astype(np.int64), qb.astype(np.int64)
        zz = np.sum(Z[qa] * Z[qb], axis=1)
        self.dq = sqz[qa] + sqz[qb] - 2 * zz
        self.sq = sqz[qa] + sqz[qb] + 2 * zz
        self.nq = sqz[qa] - sqz[qb]

    def rows(self, I, J):
        xx = np.einsum("ij,ij->i", self.X[I], self.X[J])
        dp = self.sqx[I] + self.sqx[J] - 2 * xx
        sp = self.sqx[I] + self.sqx[J] + 2 * xx
        np_ = self.sqx[I] - self.sqx[J]
        out = np.empty((len(I), len(self.qa)))
        _wishart_rows(
            np.asarray(I, np.int64),
            np.asarray(J, np.int64),
            self.P,
            self.P,
            dp,
            sp,
            np_,
            self.qa,
            self.qb,
            self.dq,
            self.sq,
            self.nq,
            self.c,
            self.power,
            out,
        )
        return out


@njit(cache=True, inline="always")
def _wishart_entry(pia, pib, pja, pjb, dp, sp, np_, dq, sq, nq, c, power):
    # 3 x 3 Gram of e1 = x_i - x_j, e2 = z_a - z_b, e3 = (x_i + x_j - z_a - z_b) / 2
    g11 = dp
    g22 = dq
    g12 = pia - pib - pja + pjb
    g13 = 0.5 * (np_ - pia - pib + pja + pjb)
    g23 = 0.5 * (pia + pja - pib - pjb - nq)
    g33 = 0.25 * (sp + sq - 2.0 * (pia + pib + pja + pjb))
    # I_3 + W^(1/2) G W^(1/2) / c with W = diag(1/2, 1/2, 1)
    a11 = 1.0 + 0.5 * g11 / c
    a22 = 1.0 + 0.5 * g22 / c
    a33 = 1.0 + g33 / c
    a12 = 0.5 * g12 / c
    s = 0.7071067811865476 / c
    a13 = s * g13
    a23 = s * g23
    det = a11 * (a22 * a33 - a23 * a23) - a12 * (a12 * a33 - a23 * a13) + a13 * (a12 * a23 - a22 * a13)
    det = max(det, 1.0)
    return np.exp(-power * np.log(det))


@njit(parallel=True, cache=True)
def _gaussian_rows(I, J, Gam, omega_p, qa, qb, omega_q, out):
    """out[p, q] = omega_p[p] omega_q[q] g_a g_b with g = Gam[I[p]] Gam[J[p]], (a, b) = (qa[q], qb[q]).

    One pass writing the output (the numpy form gathered two row x landmark-pair temporaries).
    """
    for p in prange(I.shape[0]):
        i = I[p]
        j = J[p]
        g = np.empty(Gam.shape[1])
        for a in range(Gam.shape[1]):
            g[a] = Gam[i, a] * Gam[j, a]
        w = omega_p[p]
        for q in range(qa.shape[0]):
            out[p, q] = ((g[qa[q]] * g[qb[q]]) * w) * omega_q[q]  # the order of the numpy form


@njit(parallel=True, cache=True)
def _wishart_rows(I, J, PA, PB, dp, sp, np_, qa, qb, dq, sq, nq, c, power, out):
    for p in prange(I.shape[0]):
        i = I[p]
        j = J[p]
        for q in range(qa.shape[0]):
            a = qa[q]
            b = qb[q]
            out[p, q] = _wishart_entry(
                PA[i, a], PA[i, b], PB[j, a], PB[j, b], dp[p], sp[p], np_[p], dq[q], sq[q], nq[q], c, power
            )


@njit(parallel=True, cache=True)
def wishart_gram(PA, PB, sqa, sqb, XA, XB, qa, qb, dq, sq, nq, coef, c, power, out):
    """out[i, j] = sum_q coef[q] hk_W((a_i, b_j), landmark pair q) (normalised Wishart)."""
    for i in prange(PA.shape[0]):
        for j in range(PB.shape[0]):
            xx = 0.0
            for k in range(XA.shape[1]):
                xx += XA[i, k] * XB[j, k]
            dp = sqa[i] + sqb[j] - 2.0 * xx
            sp = sqa[i] + sqb[j] + 2.0 * xx
            np_ = sqa[i] - sqb[j]
            acc = 0.0
            for q in range(qa.shape[0]):
                a = qa[q]
                b = qb[q]
                acc += coef[q] * _wishart_entry(
                    PA[i, a], PA[i, b], PB[j, a], PB[j, b], dp, sp, np_, dq[q], sq[q], nq[q], c, power
                )
            out[i, j] = acc
