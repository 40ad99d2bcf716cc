"""spectralkit: signed spectral measures of radial kernels and unbiased random features.

Write a radial kernel k(r) as a formula, derive its d-dimensional signed spectral measure,
decide whether it lives in a reproducing kernel Krein space (finite total mass), and build
fast random features whose signed inner product is an unbiased estimate of k.

>>> import spectralkit as sk
>>> sk.check_rkks(sk.kernels.spherical_polynomial(a=2, p=2), dim=5).verdict
'DIVERGENT'
"""

from . import kernels
from ._version import __version__
from .exceptions import (
    AccuracyWarning,
    DivergentMassError,
    KernelDefinitionError,
    SpectralkitError,
    TransformError,
)
from .kernels import RadialKernel
from .measures import Estimate, RKKSReport, SpectralMeasure, check_rkks

__all__ = [
    "kernels",
    "RadialKernel",
    "SpectralMeasure",
    "check_rkks",
    "RKKSReport",
    "Estimate",
    "RandomFeatures",
    "SpectralkitError",
    "KernelDefinitionError",
    "DivergentMassError",
    "TransformError",
    "AccuracyWarning",
    "__version__",
]


def __getattr__(name):
    # the feature layer imports numba: load it on first use only
    if name == "RandomFeatures":
        from .features import RandomFeatures

        return RandomFeatures
    raise AttributeError(f"module 'spectralkit' has no attribute {name!r}")
