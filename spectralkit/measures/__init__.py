"""Signed spectral measures of radial kernels: Jordan split, masses and the RKKS verdict.

Conventions (``docs/conventions.md``): angular frequency,
k(z) = int exp(i w.z) mu(w) dw, mu(w) = (2 pi)^-d int k(z) exp(-i w.z) dz. For a radial kernel the
density is radial, mu(w) = mu(rho) with rho = ||w||, and the signed *radial density*
f(rho) = S_{d-1} rho^(d-1) mu(rho), S_{d-1} = 2 pi^(d/2) / Gamma(d/2), integrates to k(0).
The Jordan split mu = mu+ - mu-, mu+- = max(+-mu, 0), has masses m+- = int max(+-f, 0) drho with
k(0) = m+ - m- and ||mu|| = m+ + m-.

Verdicts (per kernel *and* dimension):

- ``PD``: mu >= 0 (Bochner), finite mass m+ = k(0).
- ``RKKS``: mu changes sign and ||mu|| < inf: k = k+ - k- with PD k+- (Theorem 3 of Liu et al. 2021).
- ``DIVERGENT``: ||mu|| = inf: no decomposition into two PD kernels with finite spectral masses; asking
  for masses raises :class:`~spectralkit.DivergentMassError`.

Examples
--------
>>> import spectralkit as sk
>>> report = sk.check_rkks(sk.kernels.delta_gaussian(1, 10), dim=3)
>>> report.verdict
'RKKS'
>>> abs(report.mass_plus.value - report.mass_minus.value) < 1e-9
True
"""

from .._numerics.special import sphere_area
from ._measure import MAX_DIM, SpectralMeasure, check_rkks
from ._results import Estimate, FinitenessReport, Lobe, RKKSReport, Shell, TailModel, TermsSplit

__all__ = [
    "Estimate",
    "Lobe",
    "Shell",
    "TailModel",
    "FinitenessReport",
    "RKKSReport",
    "TermsSplit",
    "SpectralMeasure",
    "check_rkks",
    "sphere_area",
    "MAX_DIM",
]
