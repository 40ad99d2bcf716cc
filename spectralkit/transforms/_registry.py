"""Registries of the closed-form transforms: builders (with their verified accuracy) and matchers.

A *builder* ``f(dim=..., **params) -> RadialTransform | None`` computes mu for one closed-form kind;
it is registered with :func:`builder`, which records the relative accuracy that its tests verify
against independent references (``BUILDERS[name].rel_error``). A *matcher* ``m(expr, support) ->
(kind, params) | None`` recognises a kernel's expression; :func:`matcher` registers it with a
priority (lower first). ``_closed_forms.closed_form`` consults the matchers in that order and
calls the builder of the first match. Modules holding builders register on import; the package's
``__init__`` imports them all (``_closed_forms`` registers its own).
"""

from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import sympy

from ..kernels._parse import R

__all__ = [
    "BUILDERS",
    "MATCHERS",
    "MATCH_FAILURES",
    "Builder",
    "builder",
    "coefficient_of_r",
    "exact_rationals",
    "matcher",
]

#: What sympy / mpmath / numpy raise on formulas a matcher cannot read: the matcher then declines
#: (returns None) and the kernel goes to the next route.
MATCH_FAILURES = (
    ArithmeticError,
    TypeError,
    ValueError,
    AttributeError,
    NotImplementedError,
    RecursionError,
    sympy.PolynomialError,
    mpmath.libmp.NoConvergence,
)


@dataclass(frozen=True)
class Builder:
    """A registered closed-form builder and the relative accuracy its tests verify; ``costly`` when
    building takes seconds (a series behind a verified interpolant), not milliseconds."""

    name: str
    build: Callable
    rel_error: float
    costly: bool = False


#: name -> Builder
BUILDERS: dict[str, Builder] = {}
#: [(priority, name, matcher)], kept sorted by priority
MATCHERS: list[tuple[int, str, Callable]] = []


def builder(name: str, *, rel_error: float, costly: bool = False) -> Callable:
    """Register ``fn`` as the builder of closed-form kind ``name`` with verified accuracy ``rel_error``."""

    def register(fn):
        if name in BUILDERS:
            raise RuntimeError(f"closed-form builder {name!r} registered twice")
        BUILDERS[name] = Builder(name, fn, float(rel_error), costly)
        return fn

    return register


def matcher(*, priority: int) -> Callable:
    """Register ``fn(expr, support) -> (kind, params) | None``; lower priorities are tried first."""

    def register(fn):
        MATCHERS.append((priority, fn.__name__, fn))
        MATCHERS.sort(key=lambda item: (item[0], item[1]))
        return fn

    return register


def exact_rationals(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every Float replaced by its exact binary value (a Rational), for matchers.

    Expanding products of floats in sympy rounds at every step: (4 - r^2)^15 with float
    coefficients, expanded, no longer vanishes exactly at r = 2 (a spurious jump of relative size
    1e-16 at the support edge, and the verdict DIVERGENT). In rationals the expansion is exact.
    """
    floats = expr.atoms(sympy.Float)
    return expr.xreplace({f: sympy.Rational(f) for f in floats}) if floats else expr


def coefficient_of_r(arg: sympy.Expr) -> sympy.Expr | None:
    """b with ``arg`` = b r, b a number (sqrt(2) r included, which ``as_coeff_Mul`` keeps whole), else
    None: the frequency of cos(b r), sin(b r), besselj(nu, b r) or the rate of exp(-b r)."""
    b = sympy.cancel(arg / R)
    return b if b.is_number else None


def exponential_factor(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """(g, P) with ``expr`` = P(r) exp(g(r)), one exponential common to every term (products of
    exponentials combined first), or None. The matchers of polynomials times exp(-b r^gamma) read
    their forms from it."""
    expanded = sympy.expand(sympy.powsimp(sympy.expand(expr), combine="exp"))
    exponent = None
    parts = []
    for term in sympy.Add.make_args(expanded):
        exps = [f for f in sympy.Mul.make_args(term) if isinstance(f, sympy.exp)]
        if len(exps) != 1:
            return None
        g = sympy.expand(exps[0].args[0])
        if exponent is None:
            exponent = g
        elif sympy.expand(g - exponent) != 0:
            return None
        parts.append(term / exps[0])
    if exponent is None:
        return None
    return exponent, sympy.expand(sympy.Add(*parts))
