"""Library families written out as formulas: normalisation before the matchers, and a check of every match.

The expression matchers of :mod:`._closed_forms` look for one algebraic shape per family. Users
write the same kernels in other shapes: ``2**(-r**2)`` (a Gaussian), ``exp(-r)*exp(-r**2)``,
Matérn with ``besselk``. :func:`normalise` rewrites a formula exactly, without changing its value:

- a power a**x with a numeric base a > 0 and an exponent depending on r becomes exp(x log a);
- products and powers of exponentials are combined (``powsimp(combine="exp")``), exponents expanded.

:func:`_match_normalised` (the last matcher) runs the other matchers on the normalised formula;
:func:`_match_matern_bessel` recognises c r^nu K_nu(a r). Every match found from an expression is
then checked by :func:`validate_match`: the matched family's own formula, rebuilt from the matched
parameters, must equal the kernel at 12 radii to 1e-12 relative (mpmath at 30 digits), so a
formula that a matcher misreads (or a normalisation that changed it) never gets a wrong measure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import mpmath
import sympy

from ..kernels._parse import R
from ._monotone import kernel_value as monotone_value
from ._rational import kernel_value
from ._rational_oscillation import kernel_value as oscillation_value
from ._registry import MATCH_FAILURES, MATCHERS, exact_rationals, matcher

__all__ = []  # private module

_RADII = ("0.03", "0.1", "0.25", "0.5", "0.8", "1", "1.3", "2", "3.5", "5", "8", "13")
_DPS = 30
_TOL = mpmath.mpf("1e-12")


def normalise(expr: sympy.Expr) -> sympy.Expr:
    """An equivalent formula in the shapes the matchers know (see the module docstring)."""

    def to_exp(p):
        return sympy.exp(p.exp * sympy.log(p.base))

    out = expr.replace(
        lambda e: e.is_Pow and e.base.is_number and e.base.is_positive and e.exp.has(R) and e.base != sympy.E,
        to_exp,
    )
    out = sympy.powsimp(out, combine="exp", deep=True)
    out = out.replace(lambda e: isinstance(e, sympy.exp), lambda e: sympy.exp(sympy.expand(e.args[0])))
    return out


@matcher(priority=15)
def _match_matern_bessel(expr, support):
    """c r^nu K_nu(a r) (nu, a > 0): Matérn(nu, l = sqrt(2 nu) / a), k(0) = c 2^(nu-1) Gamma(nu) a^-nu."""
    if support is not None:
        return None
    c, rest = expr.as_coeff_Mul()
    factors = sympy.Mul.make_args(rest)
    bessel = [f for f in factors if isinstance(f, sympy.besselk)]
    if len(bessel) != 1:
        return None
    nu, arg = bessel[0].args
    a, rest_r = arg.as_independent(R, as_Add=False)
    if rest_r != R or not nu.is_number or not a.is_number:
        return None
    others = sympy.Mul(*[f for f in factors if f is not bessel[0]])
    coef, r_part = others.as_independent(R, as_Add=False)
    power = sympy.Integer(0) if r_part == 1 else (r_part.exp if r_part.is_Pow and r_part.base == R else None)
    if r_part == R:
        power = sympy.Integer(1)
    if power is None or not (coef.is_number and power.is_number):
        return None
    nu_f, a_f, power_f = float(nu), float(a), float(power)
    if not (nu_f > 0 and a_f > 0 and abs(power_f - nu_f) <= 1e-14 * nu_f):
        return None
    C = float(sympy.N(c * coef, 20))
    # C r^nu K_nu(a r) = C a^-nu (a r)^nu K_nu(a r) = c' 2^(1-nu)/Gamma(nu) x^nu K_nu(x), x = a r
    scale = C * a_f ** (-nu_f) * math.gamma(nu_f) * 2.0 ** (nu_f - 1.0)
    return "matern", {"c": scale, "nu": nu_f, "lengthscale": math.sqrt(2 * nu_f) / a_f}


@matcher(priority=90)
def _match_normalised(expr, support):
    """The other matchers, on the normalised formula (checked by :func:`validate_match`)."""
    try:
        norm = normalise(expr)
    except MATCH_FAILURES:
        return None
    # an irrational constant factor (2*sqrt(2)/(r**2 + 2)**(3/2)) hides the family's shape from
    # matchers that split off a rational coefficient: match without it, scale the parameters
    coef, rest = norm.as_independent(R, as_Add=False)
    candidates = [(norm, sympy.Integer(1))]
    if coef.is_number and coef != 1 and coef != 0:
        candidates.append((rest, coef))
    for candidate, factor in candidates:
        if candidate == expr:
            continue
        for _priority, _name, match_fn in MATCHERS:
            if match_fn is _match_normalised:
                continue
            try:
                match = match_fn(candidate, support)
                match = None if match is None else _scaled(*match, factor)
            except MATCH_FAILURES:
                continue
            if match is not None and validate_match(expr, support, *match):
                return match
    return None


def _scaled(kind, params, factor):
    """(kind, params) of ``factor`` times the matched kernel, or None for kinds without a scale."""
    if factor == 1:
        return kind, params
    f_num = sympy.N(factor, 30)
    p = dict(params)
    if "c" in p:
        p["c"] = p["c"] * float(f_num)
    elif kind in ("poly_gaussian", "compact_polynomial", "odd_poly_gaussian"):
        p["coeffs"] = [c * factor for c in p["coeffs"]]
    elif kind in ("completely_monotone", "rational_r2", "rational_oscillation"):
        # mpmath parameters: every coefficient (the first entry of each term tuple) times the factor
        f_mp = mpmath.mpf(f_num)

        def times(terms):
            return tuple((w * f_mp, *rest) for w, *rest in terms)

        for key in ("terms", "atoms", "base", "bessel"):
            if key in p:
                p[key] = times(p[key])
        for key in ("c0", "base_lead"):
            if key in p:
                p[key] = p[key] * f_mp
        if "rest_pq" in p:
            p["rest_pq"] = (tuple(c * f_mp for c in p["rest_pq"][0]), p["rest_pq"][1])
    else:
        return None
    return kind, p


# ---------------------------------------------------------------------------------------------
# checking a match
# ---------------------------------------------------------------------------------------------
def _family_value(kind, params, r):
    """The matched family's k(r) (mpmath), or None for kinds checked elsewhere."""
    p = params
    if kind == "odd_poly_gaussian":
        return sum(mpmath.mpf(sympy.N(c, _DPS)) * r**m for m, c in enumerate(p["coeffs"])) * mpmath.exp(
            -mpmath.mpf(p["b"]) * r * r
        )
    if kind == "poly_gaussian":
        b = mpmath.mpf(sympy.N(p["b"], _DPS))
        return sum(
            mpmath.mpf(sympy.N(c, _DPS)) * r ** (2 * j) for j, c in enumerate(p["coeffs"])
        ) * mpmath.exp(-b * r * r)
    if kind == "matern":
        nu, length = mpmath.mpf(p["nu"]), mpmath.mpf(p["lengthscale"])
        x = mpmath.sqrt(2 * nu) * r / length
        return p["c"] * 2 ** (1 - nu) / mpmath.gamma(nu) * x**nu * mpmath.besselk(nu, x)
    if kind == "rational_quadratic":
        a, length = mpmath.mpf(p["alpha"]), mpmath.mpf(p["lengthscale"])
        return p["c"] * (1 + r * r / (2 * a * length**2)) ** (-a)
    if kind == "exponential_power":
        return p["c"] * mpmath.exp(-((r / mpmath.mpf(p["lengthscale"])) ** mpmath.mpf(p["alpha"])))
    if kind == "bessel":
        nu, x = mpmath.mpf(p["nu"]), r / mpmath.mpf(p["lengthscale"])
        return p["c"] * mpmath.gamma(nu + 1) * (2 / x) ** nu * mpmath.besselj(nu, x)
    if kind == "completely_monotone":
        return monotone_value(r, p["c0"], p["terms"], p["atoms"], p.get("bessel", ()), p.get("logs", ()))
    if kind == "rational_r2":
        return kernel_value(r, p["c0"], p["terms"])
    if kind == "rational_oscillation":
        return oscillation_value(r, p["kind"], p["b"], p["terms"], p.get("base", ()))
    if kind == "edge_power":
        x = r / mpmath.mpf(p["b"])
        return (1 - x) ** mpmath.mpf(p["beta"]) * sum(mpmath.mpf(c) * x**i for i, c in enumerate(p["g"]))
    if kind == "circular":
        x = r / mpmath.mpf(p["b"])
        return p["c"] * 2 / mpmath.pi * (mpmath.acos(x) - x * mpmath.sqrt(1 - x * x))
    return None


def validate_match(expr: sympy.Expr, support: float | None, kind: str, params: Mapping[str, Any]) -> bool:
    """True when the family ``kind`` with ``params`` equals ``expr`` at 12 radii (1e-12 relative).

    Kinds without a formula here (compact polynomials, whose matcher expands the formula exactly)
    are accepted as matched.
    """
    exact = exact_rationals(expr)
    with mpmath.workdps(_DPS):
        top = mpmath.mpf(support) if support is not None else None
        pairs = []
        for text in _RADII:
            r = mpmath.mpf(text)
            if top is not None and r > top:
                continue
            try:
                value = _family_value(kind, params, r)
            except (*MATCH_FAILURES, KeyError):
                return False
            if value is None:
                return True
            # floats as their exact binary values (as the matchers read them): sympy's evalf works at
            # a float's 15 digits and loses what cancels ((1 - 2 sin(r/2)/r)/(r^2 (...)) at r = 0.03: 3e-12)
            ref = exact.subs(R, sympy.Rational(text)).evalf(_DPS)
            if not ref.is_number or not ref.is_real:
                return False
            pairs.append((value, mpmath.mpf(ref)))
        # relative, or absolute in units of the kernel's size (near a zero of an oscillating kernel
        # the float parameters of the family round at that level)
        size = max((abs(ref) for _, ref in pairs), default=mpmath.mpf(0))
        return all(abs(v - ref) <= max(_TOL * abs(ref), mpmath.mpf("1e-14") * size) for v, ref in pairs)
