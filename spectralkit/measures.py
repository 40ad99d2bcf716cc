"""Signed spectral measures of radial kernels: Jordan split, masses and the RKKS verdict."""

from dataclasses import dataclass

__all__ = ["Estimate", "Lobe", "TailModel", "SpectralMeasure", "RKKSReport", "check_rkks"]


@dataclass(frozen=True)
class Estimate:
    """A numerical value with its estimated absolute error."""

    value: float
    error: float

    def __float__(self):
        return float(self.value)

    def __str__(self):
        return f"{self.value:.12g} ± {self.error:.2g}"


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
class TailModel:
    """The measure beyond ``rho_c``: an envelope ``|f(rho)| <= bound * rho^-exponent`` and masses.

    ``oscillation`` is R for the oscillating tails of compactly supported kernels, 0 for
    one-signed power tails.
    """

    rho_c: float
    exponent: float
    bound: float
    mass_plus: Estimate
    mass_minus: Estimate
    oscillation: float = 0.0
