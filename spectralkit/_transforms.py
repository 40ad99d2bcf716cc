"""Spectral density of one atomic radial kernel: dispatch over closed forms, sympy and numerics.

``transform_atom(atom, dim)`` returns a :class:`RadialTransform`, the density mu(rho) of the
d-dimensional Fourier transform of k in the convention of ``docs/conventions.md``:
mu(rho) = (2 pi)^(-d/2) int_0^inf k(r) r^(d-1) Lambda_nu(rho r) dr, Lambda_nu(x) = x^-nu J_nu(x),
nu = d/2 - 1. Methods are tried in order: verified closed forms (:mod:`._closed_forms`), sympy's
Hankel transform under a time budget (:mod:`._symbolic_transform`), numeric quadrature
(:mod:`._hankel`).
"""

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

__all__ = []  # private module


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
    """

    mu: Callable[[np.ndarray], np.ndarray]
    method: str
    rel_error: float
    abs_error: float
    scale: float
    tail_exponent: float
    tail_oscillation: float = 0.0
    nonnegative: bool = False
    radial_cdf: Optional[Callable[[np.ndarray], np.ndarray]] = None
    zeros: Optional[np.ndarray] = None


def transform_atom(atom, dim, *, sympy_budget=5.0):
    """Spectral density of the atomic kernel ``atom`` on R^dim (see module docstring)."""
    raise NotImplementedError  # implemented by the transforms work (see docs/architecture.md)
