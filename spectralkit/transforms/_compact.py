"""Piecewise-polynomial kernels in their normal form: the exact transform of several pieces.

A formula with max/min/abs/Heaviside/sign/Piecewise whose pieces are polynomials in r is
normalised by the kernels layer (``kernels/_piecewise.py``) to a sympy ``Piecewise((P_1, r <= b_1),
..., (P_m, True))`` with support b_m. This matcher reads the pieces back and hands them to the
exact compact-polynomial transform (``_polynomial.py``), which accepts a list of pieces
(b_(i-1), b_i, coefficients) and transforms the jumps at every breakpoint exactly.
"""

from collections.abc import Sequence

import sympy

from ..exceptions import TransformError
from ..kernels._parse import R
from ._polynomial import compact_polynomial_transform
from ._registry import builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module (pieces_transform and poly_coeffs serve _closed_forms too)


def poly_coeffs(expr):
    """Ascending coefficients of a polynomial in r with numeric coefficients, else None."""
    if not expr.is_polynomial(R):
        return None
    # Poly expands by polynomial arithmetic: (1 - r)^130 in 0.02 s, against 0.2 s through expand()
    coeffs = sympy.Poly(exact_rationals(expr), R).all_coeffs()[::-1]
    if not all(c.is_number for c in coeffs):
        return None
    return coeffs


@matcher(priority=1)
def _match_polynomial_pieces(expr, support):
    """Piecewise((P_1, r <= b_1), ..., (P_m, True)) on [0, support]: polynomial pieces."""
    if support is None or not isinstance(expr, sympy.Piecewise):
        return None
    pieces = []
    lo = sympy.Integer(0)
    for i, (value, cond) in enumerate(expr.args):
        last = i == len(expr.args) - 1
        if last:
            if cond != sympy.true:
                return None
            hi = sympy.Rational(support) if not isinstance(support, sympy.Basic) else support
        else:
            if not isinstance(cond, sympy.LessThan) or cond.lhs != R or not cond.rhs.is_number:
                return None
            hi = cond.rhs
        coeffs = poly_coeffs(value)
        if coeffs is None or not (hi > lo) == sympy.true:
            return None
        pieces.append((lo, hi, coeffs))
        lo = hi
    return "polynomial_pieces", {"pieces": tuple((a, b, tuple(c)) for a, b, c in pieces)}


def pieces_transform(
    pieces: Sequence[tuple[object, object, Sequence[object]]], dim: int, method: str, what: str
) -> RadialTransform:
    """The :class:`RadialTransform` of the exact transform of polynomial ``pieces`` (b_(i-1), b_i,
    coefficients), zero beyond (:mod:`._polynomial`); ``what`` names it in a failed verification."""
    try:
        pt = compact_polynomial_transform([(a, b, list(c)) for a, b, c in pieces], dim)
    except ArithmeticError as exc:
        raise TransformError(
            f"the exact {what} transform failed its own verification in d = {dim}: {exc}"
        ) from exc
    return RadialTransform(
        mu=pt.mu,
        log_abs_mu=pt.log_abs_mu,
        method=method,
        rel_error=pt.rel_error,
        abs_error=pt.abs_error,
        scale=pt.scale,
        tail_exponent=pt.tail_exponent,
        tail_oscillation=max(b for b, _ in pt.oscillations),
        tail_parts=pt.tail_parts_log,  # in log-scaled form: the parts underflow in high d
        tail_start=pt.rho_tail,
        edges=tuple((float(b), float(beta)) for b, beta in pt.oscillations),
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
    )


@builder("polynomial_pieces", rel_error=0.0)  # measured per transform (pt.rel_error)
def _polynomial_pieces(pieces, dim):
    """Exact mu of the piecewise polynomial ``pieces`` (b_(i-1), b_i, coefficients), zero beyond."""
    return pieces_transform(pieces, dim, "closed-form:piecewise-polynomial", "piecewise-polynomial")
