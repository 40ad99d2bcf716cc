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

__all__ = ["BUILDERS", "MATCHERS", "MATCH_FAILURES", "Builder", "builder", "matcher"]

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
    """A registered closed-form builder and the relative accuracy its tests verify."""

    name: str
    build: Callable
    rel_error: float


#: name -> Builder
BUILDERS: dict[str, Builder] = {}
#: [(priority, name, matcher)], kept sorted by priority
MATCHERS: list[tuple[int, str, Callable]] = []


def builder(name: str, *, rel_error: float) -> Callable:
    """Register ``fn`` as the builder of closed-form kind ``name`` with verified accuracy ``rel_error``."""

    def register(fn):
        if name in BUILDERS:
            raise RuntimeError(f"closed-form builder {name!r} registered twice")
        BUILDERS[name] = Builder(name, fn, float(rel_error))
        return fn

    return register


def matcher(*, priority: int) -> Callable:
    """Register ``fn(expr, support) -> (kind, params) | None``; lower priorities are tried first."""

    def register(fn):
        MATCHERS.append((priority, fn.__name__, fn))
        MATCHERS.sort(key=lambda item: (item[0], item[1]))
        return fn

    return register
