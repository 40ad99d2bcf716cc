"""Kernels given by their spectral measure: a signed radial density on R^d, fixed d.

Some kernels are known through their measure rather than a formula: a kernel learned in a
hyper-RKHS (:mod:`spectralkit.learn`), a mixture fitted to data, a density tabulated elsewhere.
:class:`DensityKernel` wraps the signed radial density

    f(rho) = S_(d-1) rho^(d-1) mu(rho),   k(r) = int_0^inf f(rho) Omega_d(rho r) drho,

(Omega_d the sphere average of cos, k(0) = int f) so that ``check_rkks``, ``SpectralMeasure``,
``RandomFeatures``, the scikit-learn estimators and the plots accept it like a formula kernel.
It lives on R^dim only: the measure of a radial kernel depends on the dimension.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._numerics.quadrature import integrate_adaptive, integrate_intervals
from .._numerics.special import omega
from .._validation import check_dim
from ..exceptions import KernelDefinitionError
from ._gram import gram

__all__ = ["DensityKernel"]


def _finite_positive(name, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (math.isfinite(value) and value > 0)
    ):
        raise KernelDefinitionError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


class DensityKernel:
    """A radial kernel on R^dim defined by its signed radial spectral density.

    Parameters
    ----------
    density : callable
        ``f(rho)``: vectorised, float64, the signed radial density S_(d-1) rho^(d-1) mu(rho) for
        rho >= 0 (finite; the Jacobian included).
    dim : int
        The dimension d the density belongs to.
    scale : float
        A characteristic frequency (where most of the mass lies).
    envelope : callable, optional
        ``e(rho) >= |f(rho)|``, vectorised: bounds the mass beyond any radius (default: |f| itself,
        which is then assumed to decay faster than any power).
    kernel : callable, optional
        k(r) in closed form (vectorised); by default k is computed from the density by quadrature.
    value_at_zero : float, optional
        k(0) = int f (computed by quadrature when not given).
    rel_error : float, default 1e-14
        The relative accuracy of ``density`` (enters every stated mass error).
    mass_error : float, default 0
        A bound on int_0^inf |density - f_exact| drho for a density known to within an absolute
        error (a tabulation): added to both stated Jordan masses' errors.
    key : str
        A text that identifies the kernel (caches and equality rely on it): e.g. a hash of the
        parameters of the density.
    name : str, optional

    Notes
    -----
    Sums and multiples of density kernels are not formed (build the density of the sum).
    """

    is_combination = False
    support = None
    family = None

    def __init__(
        self,
        density: Callable[[NDArray[np.float64]], ArrayLike],
        dim: int,
        *,
        scale: float,
        key: str,
        envelope: Callable[[NDArray[np.float64]], ArrayLike] | None = None,
        kernel: Callable[[NDArray[np.float64]], ArrayLike] | None = None,
        value_at_zero: float | None = None,
        rel_error: float = 1e-14,
        mass_error: float = 0.0,
        name: str | None = None,
    ) -> None:
        if not callable(density):
            raise KernelDefinitionError(
                f"density must be a callable rho -> f(rho), got {type(density).__name__}"
            )
        for arg, fn in (("envelope", envelope), ("kernel", kernel)):
            if fn is not None and not callable(fn):
                raise KernelDefinitionError(f"{arg} must be callable or None, got {type(fn).__name__}")
        try:
            dim = check_dim(dim)
        except ValueError as exc:
            raise KernelDefinitionError(str(exc)) from None
        if not isinstance(key, str) or not key:
            raise KernelDefinitionError(
                f"key must be a non-empty string identifying the density, got {key!r}"
            )
        self.density = density
        self.dim = int(dim)
        self.scale = _finite_positive("scale", scale)
        self.envelope = envelope
        self._kernel = kernel
        self.rel_error = _finite_positive("rel_error", rel_error)
        if (
            isinstance(mass_error, bool)
            or not isinstance(mass_error, numbers.Real)
            or not (math.isfinite(mass_error) and mass_error >= 0)
        ):
            raise KernelDefinitionError(f"mass_error must be a finite number >= 0, got {mass_error!r}")
        self.mass_error = float(mass_error)
        # the stated error is part of what the caches store: kernels differing in it are not equal
        suffix = f";mass_error={self.mass_error!r}" if self.mass_error else ""
        self._key = f"density[{self.dim}]:{key}{suffix}"
        self.name = str(name) if name is not None else f"density kernel ({key[:12]}) on R^{self.dim}"
        probe = np.asarray(density(self.scale * np.geomspace(1e-3, 1e3, 61)), dtype=np.float64)
        if probe.shape != (61,) or not np.all(np.isfinite(probe)):
            raise KernelDefinitionError("density must return finite float values of the shape of rho")
        self._k0 = float(value_at_zero) if value_at_zero is not None else None
        if self._k0 is not None and not math.isfinite(self._k0):
            raise KernelDefinitionError(f"value_at_zero must be finite, got {value_at_zero!r}")

    @property
    def terms(self) -> tuple[tuple[float, DensityKernel]]:
        """``((1.0, self),)``: an atom."""
        return ((1.0, self),)

    @property
    def key(self) -> str:
        """Canonical text identifying the kernel (hashing, equality, caching)."""
        return self._key

    @property
    def digest(self) -> str:
        """A short sha256 digest of :attr:`key`."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:20]

    def radial_extent(self) -> float:
        """A radius beyond which the density holds less than 1e-17 of its peak mass density."""
        grid = self.scale * np.geomspace(1e-3, 1e6, 900)
        env = self.envelope if self.envelope is not None else (lambda x: np.abs(self.density(x)))
        vals = np.asarray(env(grid), dtype=np.float64) * grid
        peak = float(np.max(vals))
        big = np.nonzero(vals > 1e-17 * peak)[0]
        return float(grid[min(big[-1] + 1, grid.size - 1)]) if big.size else 10.0 * self.scale

    def value_at_zero(self) -> float:
        """k(0) = int_0^inf f(rho) drho."""
        if self._k0 is None:
            hi = self.radial_extent()
            cuts = np.concatenate([[0.0], np.geomspace(1e-6 * hi, hi, 60)])
            v, _ = integrate_adaptive(self.density, cuts[:-1], cuts[1:], rel_tol=1e-13)
            self._k0 = float(np.sum(v))
        return self._k0

    def __call__(self, radius: ArrayLike) -> NDArray[np.float64] | float:
        """k(r) for radii ``radius`` (array-like, >= 0)."""
        rr = np.asarray(radius, dtype=np.float64)
        if not np.all(np.isfinite(rr)) or np.any(rr < 0):
            raise ValueError("radius must be finite and >= 0")
        if self._kernel is not None:
            out = np.asarray(self._kernel(rr), dtype=np.float64)
        else:
            # k(r) = int f(rho) Omega_d(rho r) drho on panels resolving the oscillation in rho
            hi = self.radial_extent()
            flat = rr.ravel()
            out = np.empty(flat.shape)
            for i, r_ in enumerate(flat):
                n = int(min(20000, max(64, 2 * hi * r_)))
                edges = np.linspace(0.0, hi, n + 1)
                v, _ = integrate_intervals(
                    lambda x, r_=r_: self.density(x) * omega(x * r_, self.dim),
                    edges[:-1],
                    edges[1:],
                    16,
                    None,
                )
                out[i] = float(np.sum(v))
            out = out.reshape(rr.shape)
        return out if out.ndim else float(out)

    def gram(
        self, X: ArrayLike, Y: ArrayLike | None = None, *, shape_matrix: ArrayLike | None = None
    ) -> NDArray[np.float64] | float:
        """The Gram matrix K[i, j] = k(||x_i - y_j||_M), usable where scikit-learn expects a kernel.

        ``SVC(kernel=k.gram)`` and ``sklearn.metrics.pairwise_kernels(X, metric=k.gram)`` work as is
        (two 1-D vectors give a scalar). ``shape_matrix`` M (symmetric positive definite) gives the
        anisotropic distance sqrt((x - y)^T M (x - y)); default the identity. See
        :func:`spectralkit.kernels._gram.gram`.
        """
        return gram(self, X, Y, shape_matrix)

    def __eq__(self, other):
        return isinstance(other, DensityKernel) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"DensityKernel({self.name!r})"
