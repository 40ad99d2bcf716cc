"""Learned kernels: the output of hyper-kernel learning, as Gram-matrix callables.

:class:`LearnedKernel` (Gaussian / Wishart hyper-kernels) and :class:`LearnedRadialKernel`
(radial hyper-kernel; a radial kernel with an explicit signed spectral measure).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Literal

import numpy as np
import scipy.interpolate
import scipy.optimize
import scipy.special
from numpy.typing import ArrayLike, NDArray

from .._numerics.chebyshev import fit_adaptive
from .._numerics.quadrature import gauss_legendre
from .._numerics.special import omega
from .._validation import check_dim
from ..kernels import DensityKernel
from ..measures import Estimate
from ._special import log_chi_pdf
from .hyperkernels import _radial_h, sq_dists, wishart_gram

__all__ = ["LearnedKernel", "LearnedRadialKernel"]

# The table of a(rho) = sum_j c_j Omega_d(rho r_j): a is entire of exponential type max r_j, so
# Chebyshev panels of width 16 / max r_j (a phase span of 8 radians each side of the centre) with
# 32 points converge to rounding (the Chebyshev coefficients of cos(8 x) fall to 1e-16 by k = 32).
_TABLE_DEGREE = 32
_TABLE_PHASE = 16.0
_TABLE_TOL = 1e-14  # accepted interpolation error, in units of sum_j |c_j|


def _check_points(name, X, dim):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if X.shape[1] != dim:
        raise ValueError(f"{name} has {X.shape[1]} features but the kernel was learned in dimension {dim}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} must be finite; got NaN or infinite values")
    return X


class LearnedKernel:
    """A kernel learned with the Gaussian or Wishart hyper-kernel: k*(x, x') = sum_q c_q hk(q, (x, x')).

    The sum runs over landmark pairs q = (z_a, z_b), a <= b (all training pairs for the exact
    solver), of one or several parts (divide-and-conquer averages the parts' kernels; the 1/v is
    folded into the coefficients). hk is the *normalised* hyper-kernel (1 at four coincident
    points; see :mod:`spectralkit.learn.hyperkernels`). Calling the object returns the Gram
    matrix, so it can be passed to ``sklearn.svm.SVC(kernel=...)``.

    Parameters
    ----------
    hyper_kernel : {"gaussian", "wishart"}
    params : dict
        ``{"sigma2", "sigma2_h"}`` (Gaussian) or ``{"scale", "dof"}`` (Wishart, scale matrix c I).
    parts : list of (Z, qa, qb, coef)
        Landmarks Z (M, d), the landmark pairs (qa[q], qb[q]) and their coefficients.
    offset : ndarray of shape (d,)
        Subtracted from every input first (the hyper-kernels are translation invariant; the
        solvers centre the data for accuracy).

    Attributes
    ----------
    dim : int
    n_terms : int
        Total number of landmark pairs.
    """

    def __init__(
        self,
        hyper_kernel: Literal["gaussian", "wishart"],
        params: Mapping[str, float],
        parts: Iterable[tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike]],
        offset: ArrayLike,
    ) -> None:
        if hyper_kernel not in ("gaussian", "wishart"):
            raise ValueError(f"hyper_kernel must be 'gaussian' or 'wishart', got {hyper_kernel!r}")
        self.hyper_kernel = hyper_kernel
        self.params = dict(params)
        self.parts = [
            (
                np.asarray(Z, np.float64),
                np.asarray(qa, np.int64),
                np.asarray(qb, np.int64),
                np.asarray(c, np.float64),
            )
            for Z, qa, qb, c in parts
        ]
        self.offset = np.asarray(offset, dtype=np.float64)
        self.dim = int(self.offset.size)

    @property
    def n_terms(self) -> int:
        """Number of (landmark pair, coefficient) terms over all parts."""
        return int(sum(len(c) for _, _, _, c in self.parts))

    def gram(self, X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
        """Gram matrix k*(X, Y), shape (n_X, n_Y) (Y = X when None)."""
        X = _check_points("X", X, self.dim) - self.offset
        Y = X if Y is None else _check_points("Y", Y, self.dim) - self.offset
        out = np.zeros((X.shape[0], Y.shape[0]))
        if self.hyper_kernel == "gaussian":
            s2, h = self.params["sigma2"], self.params["sigma2_h"]
            t = s2 + h
            kappa = 1.0 / (4 * s2) - 1.0 / (8 * t)
            for Z, qa, qb, c in self.parts:
                ct = c * np.exp(-kappa * np.sum((Z[qa] - Z[qb]) ** 2, axis=1))
                GY = np.exp(-sq_dists(Y, Z) / (8 * t))
                QY = GY[:, qa] * GY[:, qb]
                for s in range(0, X.shape[0], 2048):  # bounded memory: (rows, n_pairs) at a time
                    GX = np.exp(-sq_dists(X[s : s + 2048], Z) / (8 * t))
                    out[s : s + 2048] += ((GX[:, qa] * GX[:, qb]) * ct) @ QY.T
            out *= np.exp(-kappa * sq_dists(X, Y))
        else:
            c0, power = self.params["scale"], 0.5 * (self.params["dof"] + 3.0)
            sqa, sqb = np.sum(X * X, axis=1), np.sum(Y * Y, axis=1)
            for Z, qa, qb, c in self.parts:
                sqz = np.sum(Z * Z, axis=1)
                zz = np.sum(Z[qa] * Z[qb], axis=1)
                part = np.empty_like(out)
                wishart_gram(
                    np.ascontiguousarray(X @ Z.T),
                    np.ascontiguousarray(Y @ Z.T),
                    sqa,
                    sqb,
                    X,
                    Y,
                    qa,
                    qb,
                    sqz[qa] + sqz[qb] - 2 * zz,
                    sqz[qa] + sqz[qb] + 2 * zz,
                    sqz[qa] - sqz[qb],
                    c,
                    c0,
                    power,
                    part,
                )
                out += part
        return out

    __call__ = gram

    def __repr__(self):
        return f"LearnedKernel({self.hyper_kernel!r}, dim={self.dim}, parts={len(self.parts)}, terms={self.n_terms})"


class LearnedRadialKernel:
    """A radial kernel learned with the radial hyper-kernel, with its exact signed spectral measure.

    k*(r) = sum_j c_j H(r_j, r), H(r, r') = int Omega_d(rho r) Omega_d(rho r') F(d rho), F the law
    of chi_d / l (:func:`~spectralkit.learn.radial_hyperkernel`). In the convention
    k(z) = int exp(i w.z) mu(w) dw (docs/conventions.md) its spectral measure has the signed
    radial density (integrating to k*(0))

        f(rho) = a(rho) f_F(rho),   a(rho) = sum_j c_j Omega_d(rho r_j),
        mu(rho) = f(rho) / (S_(d-1) rho^(d-1)) = a(rho) (l^2 / (2 pi))^(d/2) exp(-rho^2 l^2 / 2),

    with f_F the density of chi_d / l. Since |Omega_d| <= 1, |f| <= (sum_j |c_j|) f_F: the total
    mass m+ + m- is at most sum_j |c_j| < inf, so k* lives in an RKKS (a difference of two PD
    kernels), PD exactly when a >= 0.

    :meth:`as_kernel` hands the learned kernel to the rest of the library as a
    :class:`~spectralkit.kernels.DensityKernel` (density f, envelope ``sum|c_j| f_F``, k* in
    closed form), so ``check_rkks``, ``SpectralMeasure`` and ``RandomFeatures`` accept it.

    Parameters
    ----------
    dim : int >= 1
        The input dimension d (the measure is on R^d).
    lengthscale : float > 0
        l of the hyper-kernel.
    nodes : array-like of shape (n,)
        Distances r_j >= 0.
    coef : array-like of shape (n,)
        Coefficients c_j.
    """

    def __init__(self, dim: int, lengthscale: float, nodes: ArrayLike, coef: ArrayLike) -> None:
        dim = check_dim(dim)
        if (
            isinstance(lengthscale, bool)
            or not isinstance(lengthscale, numbers.Real)
            or not math.isfinite(lengthscale)
            or lengthscale <= 0
        ):
            raise ValueError(f"lengthscale must be a finite number > 0, got {lengthscale!r}")
        nodes = np.asarray(nodes, dtype=np.float64).ravel()
        coef = np.asarray(coef, dtype=np.float64).ravel()
        if nodes.shape != coef.shape:
            raise ValueError(f"nodes and coef must have the same length, got {nodes.size} and {coef.size}")
        if not (np.all(np.isfinite(nodes)) and np.all(nodes >= 0) and np.all(np.isfinite(coef))):
            raise ValueError("nodes must be finite distances >= 0 and coef finite")
        self.dim = int(dim)
        self.lengthscale = float(lengthscale)
        self.nodes = nodes
        self.coef = coef
        self._table = None
        self._weights = None

    # -- the kernel ------------------------------------------------------------------------------
    def __call__(self, r: ArrayLike) -> NDArray[np.float64] | float:
        """k*(r) at distances r >= 0 (vectorised, exact sum over the nodes)."""
        r = np.asarray(r, dtype=np.float64)
        if not np.all(np.isfinite(r)) or np.any(r < 0):
            raise ValueError("r must contain finite distances >= 0")
        out = self._node_sum(
            r,
            lambda x: _radial_h(
                *np.broadcast_arrays(x[:, None], self.nodes[None, :]), self.dim, self.lengthscale
            ),
        )
        return out if out.ndim else float(out)

    def _node_sum(self, x, basis):
        """sum_j c_j basis(x)[:, j] for an array x, in chunks of ~1e6 (value, node) entries."""
        flat = x.ravel()
        out = np.empty(flat.size)
        step = max(1, (1 << 20) // max(1, self.nodes.size))
        for s in range(0, flat.size, step):
            out[s : s + step] = basis(flat[s : s + step]) @ self.coef
        return out.reshape(x.shape)

    def value_at_zero(self) -> float:
        """k*(0) = sum_j c_j exp(-r_j^2 / (2 l^2)) = int f(rho) d rho."""
        return float(np.sum(self.coef * np.exp(-(self.nodes**2) / (2 * self.lengthscale**2))))

    @property
    def support_radius(self) -> float:
        """Beyond this distance |k*(r)| <= sum|c| exp(-40.5) (~2.6e-18 sum|c|) and is taken as 0."""
        return float((self.nodes.max() if self.nodes.size else 0.0) + 9.0 * self.lengthscale)

    def _interpolant(self):
        """Cubic spline of k* on [0, support_radius] (spacing l/128) and its measured error."""
        if self._table is None:
            h = self.lengthscale / 128.0
            R = self.support_radius
            grid = np.linspace(0.0, R, math.ceil(R / h) + 1)
            spline = scipy.interpolate.CubicSpline(grid, self(grid))
            mid = 0.5 * (grid[1:] + grid[:-1])
            err = float(np.max(np.abs(spline(mid) - self(mid)))) if mid.size else 0.0
            self._table = (spline, R, err)
        return self._table

    @property
    def interpolation_error(self) -> float:
        """Max |spline - k*| measured at the midpoints of the table used by :meth:`gram`."""
        return self._interpolant()[2]

    def gram(self, X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
        """Gram matrix k*(|x - y|) for the rows of X and Y (Y = X when None).

        Distances are mapped through a cubic spline of k* (error :attr:`interpolation_error`,
        typically ~1e-12 sum|c|); beyond :attr:`support_radius` the value is 0.
        """
        X = _check_points("X", X, self.dim)
        Y = X if Y is None else _check_points("Y", Y, self.dim)
        spline, R, _ = self._interpolant()
        out = np.empty((X.shape[0], Y.shape[0]))
        for s in range(0, X.shape[0], 2048):
            r = np.sqrt(sq_dists(X[s : s + 2048], Y))
            block = spline(np.minimum(r, R))
            block[r > R] = 0.0
            out[s : s + 2048] = block
        return out

    # -- the spectral measure ------------------------------------------------------------------
    def _a(self, rho):
        rho = np.asarray(rho, dtype=np.float64)
        if not np.all(np.isfinite(rho)) or np.any(rho < 0):
            raise ValueError("rho must contain finite frequency norms >= 0")
        return self._a_exact(rho)

    def _a_exact(self, rho):
        """a(rho) by the node sum: n_nodes evaluations of Omega_d per point."""
        return self._node_sum(rho, lambda x: omega(np.multiply.outer(x, self.nodes), self.dim))

    def _weight_table(self):
        """``(interpolant, top, error)``: piecewise Chebyshev table of a on [0, top] and its error bound.

        Beyond top, F's tail times sum|c_j| is below 1e-300: the tabulated f is 0 there. The error
        bound is twice the interpolation error measured between the Chebyshev points (and on the
        last coefficients), plus the rounding of the node sum, n_nodes 2^-53 sum|c_j| (recursive
        summation) + 1e-15 sum|c_j| (Omega_d's absolute accuracy), plus the mass beyond top.
        Panels that do not converge use the node sum itself.
        """
        if getattr(self, "_weights", None) is None:  # (absent from pickles of older versions)
            env = self.envelope_mass
            scale = max(env, np.finfo(float).tiny)
            top = self._frequency_range(min(1e-17, max(1e-300 / scale, 1e-305)))[1]
            rmax = float(self.nodes.max()) if self.nodes.size else 0.0
            n_init = max(1, math.ceil(top * rmax / _TABLE_PHASE))
            table, worst = fit_adaptive(
                self._a_exact,
                0.0,
                top,
                n_init=n_init,
                degree=_TABLE_DEGREE,
                tol=_TABLE_TOL,
                floor=lambda v: scale,
                relative=False,
                max_depth=6,
                max_panels=4 * n_init + 64,
                fallback=True,
                check_tail=4,
            )
            rounding = (self.nodes.size * 2.0**-53 + 1e-15) * env
            self._weights = (table, top, 2.0 * worst * env + rounding + self.tail_mass_bound(top))
        return self._weights

    @property
    def density_error(self) -> float:
        """Bound E on int |f_table - f| for the tabulated density of :meth:`as_kernel` and :meth:`masses`.

        Where the table is used (f_F's range up to where its tail times sum|c_j| is below 1e-300),
        |f_table - f| <= E f_F(rho); beyond, f_table = 0 and the mass left out is part of E. So
        each Jordan mass, and k* itself (|k*_table(r) - k*(r)| <= E), move by at most E.
        """
        return self._weight_table()[2]

    def _tabulated_density(self, rho):
        """f(rho) from the table of a (error :attr:`density_error` times f_F(rho))."""
        rho = np.asarray(rho, dtype=np.float64)
        table, top, _ = self._weight_table()
        out = table(np.minimum(rho, top)) * np.exp(log_chi_pdf(rho, self.dim, self.lengthscale))
        out[rho > top] = 0.0
        return out

    def signed_weight(self, rho: ArrayLike) -> NDArray[np.float64] | float:
        """a(rho) = sum_j c_j Omega_d(rho r_j): the density of the measure relative to F."""
        out = self._a(rho)
        return out if out.ndim else float(out)

    def radial_density(self, rho: ArrayLike) -> NDArray[np.float64] | float:
        """Signed radial density f(rho) = a(rho) f_F(rho) = S_(d-1) rho^(d-1) mu(rho); int f = k*(0)."""
        a = self._a(rho)
        out = a * np.exp(log_chi_pdf(rho, self.dim, self.lengthscale))
        return out if out.ndim else float(out)

    def mu(self, rho: ArrayLike) -> NDArray[np.float64] | float:
        """Signed spectral density mu(rho) = a(rho) (l^2 / (2 pi))^(d/2) exp(-rho^2 l^2 / 2)."""
        a = self._a(rho)
        rho = np.asarray(rho, dtype=np.float64)
        ell = self.lengthscale
        out = a * np.exp(0.5 * self.dim * math.log(ell * ell / (2 * math.pi)) - 0.5 * (rho * ell) ** 2)
        return out if out.ndim else float(out)

    @property
    def envelope_mass(self) -> float:
        """sum_j |c_j|: |f(rho)| <= envelope_mass * f_F(rho), so m+ + m- <= envelope_mass."""
        return float(np.sum(np.abs(self.coef)))

    def density_envelope(self, rho: ArrayLike) -> NDArray[np.float64] | float:
        """The bound (sum_j |c_j|) f_F(rho) >= |f(rho)| (for rejection sampling and tail bounds)."""
        out = self.envelope_mass * np.exp(log_chi_pdf(rho, self.dim, self.lengthscale))
        return out if np.ndim(out) else float(out)

    def tail_mass_bound(self, R: float) -> float:
        """Bound on int_R^inf |f|: (sum_j |c_j|) P(chi_d / l > R)."""
        if not np.isfinite(R) or R < 0:
            raise ValueError(f"R must be a finite frequency norm >= 0, got {R!r}")
        return float(
            self.envelope_mass * scipy.special.gammaincc(0.5 * self.dim, 0.5 * (R * self.lengthscale) ** 2)
        )

    def _frequency_range(self, tol=1e-17):
        """[lo, hi] outside which F has probability <= tol on each side."""
        d, ell = self.dim, self.lengthscale
        hi = math.sqrt(2.0 * scipy.special.gammainccinv(0.5 * d, tol)) / ell
        lo = math.sqrt(2.0 * scipy.special.gammaincinv(0.5 * d, tol)) / ell
        return lo, hi

    def masses(self, order: int = 24) -> tuple[Estimate, Estimate]:
        """Jordan masses m+ = int max(f, 0), m- = int max(-f, 0) as :class:`~spectralkit.Estimate`.

        f (from the table of a, :attr:`density_error`) is integrated by Gauss-Legendre on its sign
        intervals (sign changes located on a grid of 16 points per quarter oscillation of the
        fastest node, then by ``brentq``) over the range where F holds all but 2e-17 of its mass;
        the error is the difference to the rule of half the order, plus the envelope's tail bound
        outside that range, plus :attr:`density_error` (int |f_table - f| <= density_error).
        """
        lo, hi = self._frequency_range()
        table, _, table_error = self._weight_table()
        rmax = float(self.nodes.max()) if self.nodes.size else 0.0
        width = hi - lo if rmax == 0 else min(hi - lo, 0.5 * math.pi / rmax)
        n_panels = max(8, math.ceil((hi - lo) / width))
        grid = np.linspace(lo, hi, 16 * n_panels + 1)
        vals = table(grid)
        cuts = [lo]
        for k in np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)[0]:
            cuts.append(
                scipy.optimize.brentq(
                    lambda x: float(table(np.array([x]))[0]),
                    grid[k],
                    grid[k + 1],
                    xtol=1e-14 * max(1.0, hi),
                    rtol=1e-15,
                )
            )
        cuts.append(hi)
        # sub-divide long sign intervals into panels so the rule resolves the oscillation
        cuts = np.asarray(cuts)
        counts = np.maximum(1, np.ceil(np.diff(cuts) / width).astype(np.int64))
        owner = np.repeat(np.arange(counts.size), counts)
        step = np.diff(cuts)[owner] / counts[owner]
        first = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
        mid = cuts[:-1][owner] + (first + 0.5) * step
        half = 0.5 * step
        sums = []
        for n in (order, order // 2):
            xg, wg = gauss_legendre(n)
            pts = (mid[:, None] + half[:, None] * xg[None, :]).ravel()
            panel = (self._tabulated_density(pts).reshape(-1, n) @ wg) * half
            sums.append(np.bincount(owner, weights=panel, minlength=counts.size))
        hi_rule, lo_rule = sums
        positive = hi_rule >= 0
        pos, neg = float(np.sum(hi_rule[positive])), -float(np.sum(hi_rule[~positive]))
        pos_lo, neg_lo = float(np.sum(lo_rule[positive])), -float(np.sum(lo_rule[~positive]))
        tail = self.tail_mass_bound(hi) + self.envelope_mass * scipy.special.gammainc(
            0.5 * self.dim, 0.5 * (lo * self.lengthscale) ** 2
        )
        return (
            Estimate(pos, abs(pos - pos_lo) + tail + table_error),
            Estimate(neg, abs(neg - neg_lo) + tail + table_error),
        )

    def as_kernel(self) -> DensityKernel:
        """This kernel as a :class:`~spectralkit.kernels.DensityKernel` on R^dim.

        The density is f = a f_F with a read from a piecewise Chebyshev table built once (a few
        thousand node sums; evaluating it costs ~32 operations per point instead of n_nodes
        Bessel functions). Its error is carried honestly: ``mass_error`` = :attr:`density_error`
        bounds int |f_table - f| and is added to both mass errors of the measure. The envelope is
        :meth:`density_envelope`, k* itself the closed-form node sum, k*(0) exact; the key is a
        sha256 of (dim, l, nodes, coef), so equal learned kernels share caches.
        """
        blob = np.concatenate([[self.dim, self.lengthscale], self.nodes, self.coef]).astype("<f8")
        return DensityKernel(
            self._tabulated_density,
            self.dim,
            scale=math.sqrt(self.dim) / self.lengthscale,
            key="learned-radial:" + hashlib.sha256(blob.tobytes()).hexdigest(),
            envelope=self.density_envelope,
            kernel=self,
            value_at_zero=self.value_at_zero(),
            mass_error=self.density_error,
            name=f"learned radial kernel ({self.nodes.size} nodes, l = {self.lengthscale:.4g})",
        )

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_table"] = None  # the spline and the density table are rebuilt on demand
        state["_weights"] = None
        return state

    def __repr__(self):
        return (
            f"LearnedRadialKernel(dim={self.dim}, lengthscale={self.lengthscale:.6g}, "
            f"n_nodes={self.nodes.size}, k(0)={self.value_at_zero():.6g})"
        )
