"""The result type of the transform layer (Contract 1 in ``docs/architecture.md``)."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_dim
from ..kernels import DensityKernel, RadialKernel

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
    fast_cdf : callable or None
        An interpolant of ``radial_cdf`` within ``fast_cdf_error`` (absolute), for callers that read
        the CDF at tens of thousands of points (the samplers' tables) where ``radial_cdf`` costs a
        sum over many atoms or a quadrature per point. None: ``radial_cdf`` is cheap.
    fast_cdf_error : float
        The absolute error of ``fast_cdf`` (0 without one).
    zeros : ndarray or None
        Exactly known sign changes of mu.
    log_abs_mu : callable or None
        ``rho -> (log|mu(rho)|, sign(mu(rho)))`` when the method works in logs (the closed forms
        and the exponential-power series). Densities such as the rational quadratic's,
        ``~ rho^(2 alpha - d)`` at small rho, overflow float64 as values in high d although the
        radial density ``rho^(d-1) mu`` is moderate; the measure combines terms in logs with it.
    tail_parts : callable or None
        ``rho -> (A, B)`` (A real, B complex) with mu = A - Re(exp(i R rho) B), R =
        ``tail_oscillation``, for rho >= ``tail_start``: the non-oscillating and the oscillating
        amplitude, both slowly varying. B may also be a list ``[(R_i, B_i), ...]`` (several
        breakpoints), and the result may be log-scaled, ``(log_scale, A_s, B_s)`` with
        (A, B) = exp(log_scale) (A_s, B_s), where the parts underflow (high d). The measure layer
        integrates oscillating tails with it. None for densities without an oscillating tail
        (then A = mu, B = 0).
    tail_start : float
        Where ``tail_parts`` becomes valid.
    shells : tuple of (float, float)
        The singular part of the measure: ``(radius, mass)`` pairs, a uniform measure of total
        ``mass`` (signed) on the sphere ||w|| = radius (radius 0: an atom at w = 0). ``mu`` is the
        absolutely continuous part only.
    singular_points : tuple of float
        Radii where mu is infinite (an integrable singularity) or jumps: never evaluated there,
        lobes end there.
    mu_at_offset : callable or None
        ``(p, off) -> mu(p + off)`` at the exact offsets ``off`` (nonzero) from one of the transform's
        ``singular_points`` p. Near an integrable |rho - p|^gamma singularity
        rho = p + off is not representable to the relative accuracy |rho - p|^gamma needs; the
        measure layer integrates the last stretch towards p in log|off| with it.
    ac_mass : float or None
        int f drho of the absolutely continuous part (what ``radial_cdf`` is normalised by); None:
        the kernel's k(0) (no shells).
    divergent : str or None
        Set when the transform is known analytically not to be a finite measure (the reason);
        ``mu`` must not be used then.
    edges : tuple of (float, float)
        ``(R, beta)``: the kernel behaves like (R - r)^beta at a breakpoint R (beta = 0: a jump), which
        gives the oscillating tail rho^-((d+1)/2+beta) (closed forms of compactly supported kernels).
    mass_error : float
        An absolute error of the masses that ``rel_error`` and ``abs_error`` do not carry: the
        radial mass S_(d-1) int rho^(d-1) |error of mu| drho of the density's absolute noise and of
        what it sets to zero (numeric transforms; 0 for closed forms). In high d the weight
        rho^(d-1) makes an error that is negligible against max|mu| a large share of the mass.
    """

    mu: Callable[[np.ndarray], np.ndarray | float]  # a float for a 0-d rho
    method: str
    rel_error: float
    abs_error: float
    scale: float
    tail_exponent: float
    tail_oscillation: float = 0.0
    nonnegative: bool = False
    radial_cdf: Callable[[np.ndarray], np.ndarray] | None = None
    fast_cdf: Callable[[np.ndarray], np.ndarray] | None = None
    fast_cdf_error: float = 0.0
    zeros: np.ndarray | None = None
    log_abs_mu: Callable[[np.ndarray], tuple] | None = None
    tail_parts: Callable[[np.ndarray], tuple] | None = None
    tail_start: float = 0.0
    shells: tuple = ()
    singular_points: tuple = ()
    mu_at_offset: Callable[[float, np.ndarray], np.ndarray] | None = None
    ac_mass: float | None = None
    divergent: str | None = None
    edges: tuple = ()
    mass_error: float = 0.0


def check_atom_and_dim(atom: object, dim: int, caller: str) -> int:
    """Validate an atomic RadialKernel and a dimension for ``caller``; return ``int(dim)``."""
    if not isinstance(atom, (RadialKernel, DensityKernel)):
        raise TypeError(f"atom must be a RadialKernel or a DensityKernel, got {type(atom).__name__}")
    if atom.is_combination:
        raise TypeError(
            f"{caller} needs an atomic kernel, got the combination {atom.name}; transform its terms"
        )
    return check_dim(dim)
