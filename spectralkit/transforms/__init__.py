"""The spectral density of one atomic radial kernel in one dimension (Contract 1).

:func:`transform_atom` returns a :class:`RadialTransform`: mu(rho) of the d-dimensional Fourier
transform of k, from a verified closed form (:mod:`._closed_forms`, :mod:`._exp_power`), sympy's
Hankel transform under a CPU-time budget, verified numerically (:mod:`._symbolic`), or the numeric
Hankel transform (:mod:`._hankel`). This layer sees only kernels; measures combine its results.
"""

# the modules of the closed forms register their builders and matchers on import
# (transforms/_registry.py); closed_form consults the registry when it is called
from . import (  # noqa: F401
    _bandlimited,
    _bessel_mixture,
    _compact,
    _edge_power,
    _exp_poly,
    _exp_rational,
    _kbessel_oscillation,
    _monotone,
    _monotone_oscillation,
    _odd_poly_gaussian,
    _oscillating,
    _rational,
    _rational_oscillation,
    _sonine,
)
from ._closed_forms import closed_form, closed_form_is_costly, constant_transform
from ._dispatch import check_atom_and_dim, numeric_transform, transform_atom
from ._terms import closed_form_terms
from ._types import RadialTransform

__all__ = [
    "RadialTransform",
    "transform_atom",
    "numeric_transform",
    "closed_form",
    "closed_form_is_costly",
    "closed_form_terms",
    "constant_transform",
    "check_atom_and_dim",
]
