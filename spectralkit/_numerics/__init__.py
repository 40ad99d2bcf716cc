"""Numerical building blocks shared by every layer (one implementation each).

- :mod:`.quadrature`: Gauss–Legendre rules, composite panel rules, graded break points, vectorised
  integration over many intervals with an error estimate.
- :mod:`.chebyshev`: Chebyshev points, coefficients, Clenshaw evaluation, adaptive piecewise
  interpolants with measured error.
- :mod:`.special`: Lambda_nu(x) = x^-nu J_nu(x), the sphere average Omega_d, sphere areas.
- :mod:`.exact`: error-free sums and products (double-double building blocks).
- :mod:`.budget`: run a call in a child process under a CPU-time budget.
- :mod:`.random`: positive stable variables (Kanter).

This package imports nothing from the rest of spectralkit except :mod:`spectralkit.exceptions`.
"""

__all__ = []  # private package
