"""Exact frequency samplers of the library families whose law is a Gaussian scale mixture.

Every such family draws w = t g / l with g ~ N(0, I_d) and an independent radial multiplier t shared
by the whole row (per-coordinate draws would be wrong for d > 1); the family's registry record
(:data:`spectralkit.kernels.REGISTRY`) provides the law of t:

- Gaussian exp(-r^2 / (2 l^2)): t = 1.
- Matérn (nu; nu = 1/2 is the Laplacian exp(-r/l)): t = sqrt(2 nu / c), c ~ chi^2_(2 nu)
  (multivariate t with 2 nu degrees of freedom; multivariate Cauchy for nu = 1/2).
- exponential power exp(-(r/l)^alpha): t = sqrt(2 A), A positive (alpha/2)-stable with
  E exp(-s A) = exp(-s^(alpha/2)) (Kanter's representation; alpha = 2 gives A = 1).
- rational quadratic (1 + r^2 / (2 alpha l^2))^(-alpha): t = sqrt(tau), tau ~ Gamma(shape alpha,
  rate alpha), so that E exp(-tau s^2 / 2) = (1 + s^2 / (2 alpha))^(-alpha).

The Bessel family (``sinc``, ``bessel``) has an exact norm law instead: (rho l)^2 ~ Beta(d/2,
nu - d/2 + 1), or rho = 1/l on the sphere shell (nu = d/2 - 1); its directions are uniform.

These samplers are also the independent cross-check of the tabulated sampler (KS tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_count, check_dim, check_rng
from ..kernels import REGISTRY

__all__ = ["ExactSampler", "exact_sampler", "EXACT_FAMILIES"]

#: Families with an exact frequency law (keys of ``kernel.family``).
EXACT_FAMILIES = frozenset(
    name for name, f in REGISTRY.items() if f.multiplier is not None or f.norm_law is not None
)


class ExactSampler:
    """Exact frequency law of a library family (a scale mixture of Gaussians), on R^dim.

    With a shape matrix M (symmetric positive definite) the kernel is k(||z||_M), ||z||_M =
    sqrt(z^T M z), and the frequencies are w = M^(1/2) w_iso.

    Parameters
    ----------
    family : str
        A family of :data:`EXACT_FAMILIES`.
    params : dict
        The family's parameters as in ``kernel.family`` (validated by the family record).
    dim : int
    shape : array_like, optional
        Shape matrix M (dim x dim).

    Attributes
    ----------
    mass : float
        Total mass k(0) = 1 (these families are positive definite and normalised).
    """

    def __init__(
        self, family: str, params: Mapping[str, Any], dim: int, shape: ArrayLike | None = None
    ) -> None:
        if family not in EXACT_FAMILIES:
            raise ValueError(f"family must be one of {sorted(EXACT_FAMILIES)}, got {family!r}")
        self.dim = check_dim(dim)
        self.family = family
        self._record = REGISTRY[family]
        self.params = self._record.values(**dict(params))
        self.lengthscale = float(self.params["lengthscale"])
        self.mass = 1.0
        self.shape = None
        self._sqrt_shape = None
        if shape is not None:
            M = np.asarray(shape, dtype=np.float64)
            if M.shape != (self.dim, self.dim) or not np.all(np.isfinite(M)):
                raise ValueError(
                    f"shape must be a finite {self.dim} x {self.dim} matrix, got shape {M.shape}"
                )
            if not np.allclose(M, M.T, rtol=1e-12, atol=1e-12 * np.abs(M).max()):
                raise ValueError("shape must be symmetric")
            ev, V = np.linalg.eigh(M)
            if ev.min() <= 0:
                raise ValueError(f"shape must be positive definite, smallest eigenvalue {ev.min():.3g}")
            self.shape = M
            self._sqrt_shape = (V * np.sqrt(ev)) @ V.T

    def __repr__(self):
        return f"ExactSampler({self.family!r}, {self.params}, dim={self.dim})"

    def _multiplier(self, n, rng):
        return self._record.multiplier(n, rng, self.params)

    def sample_norms(self, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """``n`` i.i.d. norms ||w_iso|| of the isotropic law (t * chi_dim / l, or the family's norm law)."""
        n = check_count("n", n)
        check_rng(rng)
        if self._record.norm_law is not None:
            return self._record.norm_law(n, rng, self.params, self.dim)
        t = self._multiplier(n, rng)
        return t * np.sqrt(rng.chisquare(self.dim, n)) / self.lengthscale

    def sample(self, n: int, rng: np.random.Generator) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``n`` i.i.d. frequency vectors; returns ``(W, norms)``.

        ``W`` has shape (n, dim) (with the shape matrix applied, ``W = W_iso M^(1/2)``) and
        ``norms = ||w_iso||`` row-wise.
        """
        n = check_count("n", n)
        check_rng(rng)
        if self._record.norm_law is not None:
            g = rng.standard_normal((n, self.dim))
            norms = self._record.norm_law(n, rng, self.params, self.dim)
            W = g / np.linalg.norm(g, axis=1, keepdims=True) * norms[:, None]
        else:
            t = self._multiplier(n, rng)
            W = rng.standard_normal((n, self.dim)) * (t / self.lengthscale)[:, None]
            norms = np.linalg.norm(W, axis=1)
        if self._sqrt_shape is not None:
            W = W @ self._sqrt_shape
        return W, norms

    def kernel(self, r: ArrayLike) -> NDArray[np.float64] | float:
        """The family's kernel k(r) (r = ||z||_M), for cross-checks."""
        return self._record.create(**self.params)(np.asarray(r, dtype=np.float64))


def exact_sampler(kernel: object, dim: int, shape: ArrayLike | None = None) -> ExactSampler | None:
    """The exact frequency sampler of ``kernel`` on R^dim, or None when its law is not known exactly.

    Keyed by ``kernel.family`` (library kernels; combinations have no family): Gaussian, Matérn and
    Laplacian, exponential power, rational quadratic. See :class:`ExactSampler`.
    """
    family = getattr(kernel, "family", None)
    if family is None or family[0] not in EXACT_FAMILIES:
        return None
    return ExactSampler(family[0], family[1], dim, shape=shape)
