"""The result type of the transform layer (Contract 1 in ``docs/architecture.md``)."""

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..kernels import RadialKernel

__all__ = ["RadialTransform", "check_atom_and_dim"]


@dataclass(frozen=True)
class RadialTransform:
    """The signed spectral density of one atomic kernel in one dimension.

    Attributes
    ----------
    mu : callable
        Vectorised float64 density mu(rho), accurate for all rho >= 0.
    method : str
        ``"closed-form:<family>"``, ``"series:exponential-power"``, ``"sympy"`` or
        ``"numeric:<scheme>"``.
    rel_error, abs_error : float
        Estimated maximum relative error where ``|mu| >= abs_error * max|mu|``, and the absolute
        error floor in units of ``max|mu|``.
    scale : float
        Characteristic frequency scale (where the radial law lives), e.g. ``1 / lengthscale``.
    tail_exponent : float
        ``|mu(rho)| = O(rho^-tail_exponent)`` as rho -> inf (``inf``: faster than any power).
    tail_oscillation : float
        R when the tail oscillates like ``cos(R rho - phase)`` (compact support R), else 0.
    nonnegative : bool
        True only when mu >= 0 is known analytically.
    radial_cdf : callable or None
        Exact CDF of the normalised radial law ``rho^(d-1) mu / int``, when known.
    zeros : ndarray or None
        Exactly known sign changes of mu.
    log_abs_mu : callable or None
        ``rho -> (log|mu(rho)|, sign(mu(rho)))`` when the method works in logs (the closed forms
        and the exponential-power series). Densities such as the rational quadratic's,
        ``~ rho^(2 alpha - d)`` at small rho, overflow float64 as values in high d although the
        radial density ``rho^(d-1) mu`` is moderate; the measure combines terms in logs with it.
    """

    mu: Callable[[np.ndarray], np.ndarray]
    method: str
    rel_error: float
    abs_error: float
    scale: float
    tail_exponent: float
    tail_oscillation: float = 0.0
    nonnegative: bool = False
    radial_cdf: Callable[[np.ndarray], np.ndarray] | None = None
    zeros: np.ndarray | None = None
    log_abs_mu: Callable[[np.ndarray], tuple] | None = None


def check_atom_and_dim(atom, dim, caller):
    """Validate an atomic RadialKernel and a dimension for ``caller``; return ``int(dim)``."""
    if not isinstance(atom, RadialKernel):
        raise TypeError(f"atom must be a RadialKernel, got {type(atom).__name__}")
    if atom.is_combination:
        raise TypeError(f"{caller} needs an atomic kernel, got the combination {atom.name}; "
                        "transform its terms")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    return int(dim)
