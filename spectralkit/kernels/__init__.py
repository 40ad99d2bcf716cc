"""Radial kernels k(r) written as formulas, and the library of named kernel families.

A :class:`RadialKernel` is an immutable, hashable stationary kernel k(x, y) = k(||x - y||) given
by a sympy expression in the radius ``r`` (text is parsed through a whitelist, never evaluated),
named parameters with values, an optional support radius R (k = 0 for r > R: the zero extension
used by the papers for kernels on the sphere) and a name. Kernels can be added, subtracted and
scaled; a linear combination remembers its terms so that its spectral measure can be assembled
term by term (see :mod:`spectralkit.measures`).

The library families (``gaussian``, ``matern``, ...) are records of one registry
(:data:`REGISTRY`); their constructors validate the parameters and label the kernel with its
family, which the upper layers use for closed-form measures and exact samplers.

Examples
--------
>>> from spectralkit import kernels
>>> k = kernels.RadialKernel.from_string("(1 - r**2/a**2)**p", params={"a": 2, "p": 2}, support=2)
>>> float(k(1.0))
0.5625
>>> dg = kernels.delta_gaussian(1.0, 10.0)
>>> [c for c, _ in dg.terms]
[1.0, -1.0]
"""

from ._density import DensityKernel
from ._families import LIBRARY, REGISTRY, Family, Param, from_spec
from ._kernel import RadialKernel, r

#: The public constructors (``kernels.gaussian``, ...), one per registered family: adding a
#: Family record to the registry is all it takes to publish its constructor here.
globals().update(LIBRARY)

__all__ = [
    "RadialKernel",
    "DensityKernel",
    *LIBRARY,
    "LIBRARY",
    "REGISTRY",
    "Family",
    "Param",
    "from_spec",
    "r",
]
