"""Result types of the measure layer: estimates, lobes, tails, finiteness, reports.

Every type is a frozen dataclass of numbers, strings and tuples (no callables), so that the
disk cache can store it as JSON through :mod:`._codec` (no pickle).
"""

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Estimate",
    "Lobe",
    "Shell",
    "TailModel",
    "FinitenessReport",
    "RKKSReport",
    "TermsSplit",
    "Derivation",
]


@dataclass(frozen=True)
class Estimate:
    """A numerical value with its estimated absolute error."""

    value: float
    error: float

    def __float__(self) -> float:
        return float(self.value)

    def __str__(self):
        return f"{self.value:.12g} ± {self.error:.2g}"

    def to_dict(self) -> dict[str, float]:
        """``{"value": ..., "error": ...}`` (JSON-serialisable)."""
        return {"value": float(self.value), "error": float(self.error)}


@dataclass(frozen=True)
class Lobe:
    """An interval [a, b] of the frequency norm on which mu has one sign.

    ``mass`` is ``int_a^b |f(rho)| drho`` with f the signed radial density
    ``S_{d-1} rho^(d-1) mu(rho)``; ``error`` its estimated absolute error.
    """

    a: float
    b: float
    sign: int
    mass: float
    error: float


@dataclass(frozen=True)
class Shell:
    """A singular part of the measure: mass ``mass`` (>= 0) of sign ``sign`` uniformly on the sphere
    ||w|| = ``radius`` (radius 0: an atom at w = 0). Its frequency norms all equal ``radius``."""

    radius: float
    sign: int
    mass: float
    error: float


@dataclass(frozen=True)
class TailModel:
    """The measure beyond ``rho_c``: an envelope ``|f(rho)| <= bound * rho^-exponent`` and masses.

    ``oscillation`` is R for the oscillating tails of compactly supported kernels
    (f ~ A rho^-exponent cos(R rho - phase)), 0 for one-signed power tails. Exact sampling: a
    Pareto proposal with density proportional to ``rho^-exponent`` on ``[rho_c, inf)``, accepted with
    probability ``max(+-f(rho), 0) / (bound * rho^-exponent)``.
    """

    rho_c: float
    exponent: float
    bound: float
    mass_plus: Estimate
    mass_minus: Estimate
    oscillation: float = 0.0


@dataclass(frozen=True)
class FinitenessReport:
    """Whether ``||mu|| < inf``, with the tail exponent that decides it and the evidence.

    Attributes
    ----------
    finite : bool
    tail_exponent : float
        ``|mu(rho)| ~ rho^-tail_exponent`` (``inf``: faster than any power).
    integrand_exponent : float
        Exponent of the mass integrand ``rho^(d-1) |mu|`` at infinity: ``d - 1 - tail_exponent``;
        the mass is finite iff it is < -1 (or mu has no power tail).
    reason : str
        The decision in words.
    evidence : tuple of str
        Numerical confirmation (partial-mass growth), sympy/numeric analysis used.
    partial_masses : tuple of (R, M(R))
        ``M(R) = S_{d-1} int_0^R |mu| rho^(d-1) drho`` at geometric R.
    growth_slope : float
        d log M / d log R over the last decade of ``partial_masses`` (about 0 when finite).
    """

    finite: bool
    tail_exponent: float
    integrand_exponent: float
    reason: str
    evidence: tuple[str, ...] = ()
    partial_masses: tuple[tuple[float, float], ...] = ()
    growth_slope: float = float("nan")


@dataclass(frozen=True, kw_only=True)
class RKKSReport:
    """Result of :func:`check_rkks` for one kernel in one dimension.

    Attributes
    ----------
    kernel : str
        Kernel name.
    dim : int
    verdict : {"PD", "RKKS", "DIVERGENT"}
    mass_plus, mass_minus : Estimate or None
        Jordan masses (None when divergent).
    k0 : float
        k(0).
    k0_residual : float or None
        ``k(0) - (m+ - m-)``: the Bochner identity check (should be within ``k0_tolerance``).
    k0_tolerance : float or None
        The error bound the residual is checked against (sum of the mass errors, at least 1e-12).
    sign_changes : tuple of float
        Zeros of mu in ``[0, rho_c]`` (an oscillating tail has infinitely many; see ``tail``).
    tail_exponent : float
    method : str
        How mu was computed.
    reason : str
    evidence : tuple of str
    seconds : float
        Wall time of the call (a cached derivation answers in milliseconds).
    shells : tuple of Shell
        The singular part: sphere measures (and an atom at 0), included in the masses.
    """

    kernel: str
    dim: int
    verdict: str
    mass_plus: Estimate | None
    mass_minus: Estimate | None
    k0: float
    k0_residual: object
    k0_tolerance: object
    sign_changes: tuple
    tail_exponent: float
    method: str
    reason: str
    evidence: tuple = ()
    seconds: float = 0.0
    shells: tuple = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        out = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, Estimate):
                value = value.to_dict()
            elif name == "shells":
                value = [
                    {"radius": sh.radius, "sign": sh.sign, "mass": sh.mass, "error": sh.error} for sh in value
                ]
            elif isinstance(value, tuple):
                value = [float(v) if isinstance(v, (float, np.floating)) else v for v in value]
            elif isinstance(value, float) and not math.isfinite(value):
                value = str(value)
            out[name] = value
        return out

    def __str__(self):
        lines = [f"kernel     {self.kernel}", f"dimension  {self.dim}", f"verdict    {self.verdict}"]
        if self.mass_plus is not None:
            lines.append(f"mass +     {self.mass_plus}")
            lines.append(f"mass -     {self.mass_minus}")
            lines.append(
                f"k(0)       {self.k0:.12g}  (k(0) - (m+ - m-) = {self.k0_residual:.2g}, "
                f"tolerance {self.k0_tolerance:.2g})"
            )
        for sh in self.shells:
            where = "an atom at w = 0" if sh.radius == 0 else f"the sphere ||w|| = {sh.radius:.6g}"
            lines.append(
                f"shell      mass {'+' if sh.sign > 0 else '-'}{sh.mass:.12g} ± {sh.error:.2g} on {where}"
            )
        zs = ", ".join(f"{z:.6g}" for z in self.sign_changes[:8])
        more = f" ... ({len(self.sign_changes)} in all)" if len(self.sign_changes) > 8 else ""
        lines.append(f"sign changes of mu: {zs or 'none'}{more}")
        if math.isfinite(self.tail_exponent):
            lines.append(f"tail       |mu| ~ rho^-{self.tail_exponent:g}")
        elif self.tail_exponent == math.inf:
            lines.append("tail       |mu| decays faster than any power")
        lines.append(f"method     {self.method}")
        lines.append(f"reason     {self.reason}")
        for e in self.evidence:
            lines.append(f"evidence   {e}")
        lines.append(f"time       {self.seconds:.3f} s")
        return "\n".join(lines)


@dataclass(frozen=True)
class TermsSplit:
    """The split of a linear combination of PD kernels by the signs of its coefficients.

    ``plus`` and ``minus`` are tuples of ``(weight, SpectralMeasure)`` with weight = |coef|; the
    parts' masses are ``sum(weight * k_i(0))``. Valid (each part a positive measure) only when every
    term is PD in this dimension; unbiased but not minimal (the Jordan split has the smallest total mass).
    """

    plus: tuple
    minus: tuple
    mass_plus: Estimate
    mass_minus: Estimate


@dataclass(frozen=True, kw_only=True)
class Derivation:
    """Everything derived for one (kernel, dimension): what the disk cache stores.

    ``mass_plus``/``mass_minus`` are None for a divergent measure; ``seconds`` is the wall time the
    derivation took when it was computed.
    """

    method: str
    verdict: str
    k0: float
    finiteness: FinitenessReport
    roots: tuple[float, ...]
    lobes: tuple[Lobe, ...]
    tail: TailModel | None
    mass_plus: Estimate | None
    mass_minus: Estimate | None
    seconds: float
    shells: tuple[Shell, ...] = ()
