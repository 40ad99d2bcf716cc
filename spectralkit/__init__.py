"""spectralkit: signed spectral measures of radial kernels and unbiased random features.

Write a radial kernel k(r) as a formula, derive its d-dimensional signed spectral measure,
decide whether it lives in a reproducing kernel Krein space (finite total mass), and build
fast random features whose signed inner product is an unbiased estimate of k.
"""

from . import kernels
from .exceptions import DivergentMassError, KernelDefinitionError, SpectralkitError, TransformError
from .kernels import RadialKernel

__version__ = "0.1.0"

__all__ = [
    "kernels",
    "RadialKernel",
    "SpectralkitError",
    "KernelDefinitionError",
    "DivergentMassError",
    "TransformError",
    "__version__",
]
