"""sympy's Hankel transform of a radial kernel, run under a time budget (symbolic layer).

With the convention of ``docs/conventions.md`` (docs/theory.md §1), for nu = d/2 - 1,

    mu(rho) = (2 pi)^(-d/2) rho^(1 - d/2) HT(rho),   HT(rho) = int_0^R k(r) r^(d/2 - 1) J_nu(rho r) r dr,

which is sympy's ``hankel_transform(k(r) r^(d/2-1), r, rho, nu)`` for infinite support
(R = inf) and ``integrate(..., (r, 0, R), meijerg=True)`` for the zero extension of a compactly
supported kernel. sympy may hang (the call runs in a forked child under a CPU-time budget, see
:func:`spectralkit._numerics.budget.run_with_budget`), return unevaluated transforms, Meijer-G
functions that cannot be lambdified, or wrong results containing ``oo``; this module rejects the
structurally unusable ones, and the dispatcher (:mod:`._transforms`) accepts a result only after
comparing it with the numeric transform.

Also provides :func:`complex_evaluator`, the vectorised analytic continuation of k used by the
steepest-descent tail of :mod:`._hankel`. Its paths (a ray, a vertical line, a horizontal line
Im z = c) sweep the right half-plane from the positive real axis, so a power P(z)^beta of a
polynomial (or rational function) with complex roots is evaluated as exp(beta sum_k log(z - z_k))
over its linear factors: each principal log cuts the plane along the horizontal half-line left of
its root, away from those paths, while the principal branch of P^beta cuts wherever P(z) < 0,
e.g. along arg z = pi/4 from |z| = 1 outwards for (1 + z^4)^(-1/2), which every vertical path
beyond |z| = 1 crosses (before: 1/sqrt(1 + r^4) was refused in every d).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import mpmath
import numpy as np
import scipy.special as sc
import sympy
from numpy.typing import ArrayLike, NDArray

from .._numerics.budget import run_with_budget
from ..kernels._parse import R

if TYPE_CHECKING:  # annotations only
    from ..kernels import RadialKernel

__all__ = ["complex_evaluator", "complex_formula", "sympy_transform"]

_MODULES = [
    {
        "besselj": sc.jv,
        "besselk": sc.kv,
        "besseli": sc.iv,
        "bessely": sc.yv,
        "gamma": sc.gamma,
        "erf": sc.erf,
        "erfc": sc.erfc,
        "erfcx": sc.erfcx,  # exp(z^2) erfc(z), written by the Gaussian-mixture route
        "erfi": sc.erfi,
        "Si": lambda x: sc.sici(x)[0],
        "Ci": lambda x: sc.sici(x)[1],
        "expint": sc.expn,
    },
    "numpy",
]
# functions whose formula is not the analytic continuation of k off the real axis
_NON_ANALYTIC = (
    sympy.Abs,
    sympy.Min,
    sympy.Max,
    sympy.sign,
    sympy.Piecewise,
    sympy.floor,
    sympy.ceiling,
    sympy.Heaviside,
    sympy.re,
    sympy.im,
)
# results that lambdify cannot evaluate reliably (or that signal a failed evaluation)
_UNUSABLE = (
    sympy.meijerg,
    sympy.hyper,
    sympy.Integral,
    sympy.HankelTransform,
    sympy.Piecewise,
    sympy.Subs,
    sympy.Limit,
)


def complex_evaluator(
    atom: RadialKernel,
) -> Callable[[NDArray[np.complex128]], NDArray[np.complex128]] | None:
    """Vectorised k(z) for complex z (principal branches), or None when the formula uses
    non-analytic functions (abs, min, max, sign, piecewise definitions).

    Parameters
    ----------
    atom : RadialKernel
        An atomic kernel.

    Returns
    -------
    callable or None
        ``f(z) -> complex ndarray``; f agrees with k on the positive real axis (inside the
        support) and is its analytic continuation wherever no branch cut is crossed.
    """
    principal = complex_formula(atom.expr)
    if principal is None:
        return None
    try:
        continued = sympy.lambdify(R, _continued(atom.expr), modules=_MODULES)
        # the same values on the positive real axis (inside the support), or the principal branches
        top = 1e3 if atom.support is None else float(atom.support)
        x = np.geomspace(1e-3 * min(top, 1.0), top, 97).astype(np.complex128)
        with np.errstate(all="ignore"):
            a, b = (
                np.asarray(continued(x), dtype=np.complex128),
                np.asarray(principal(x), dtype=np.complex128),
            )
        if a.shape == b.shape and np.allclose(a, b, rtol=1e-11, atol=1e-300, equal_nan=True):
            return continued
    except (ArithmeticError, TypeError, ValueError, sympy.PolynomialError):
        pass  # a formula the factorisation cannot take: the principal branches
    return principal


#: the working digits of the roots of the factored powers
_ROOT_DPS = 40


def _log_factors(poly):
    """log P(z) as log(lead) + sum_k log(z - z_k) (log(z_k - z) for positive real roots, whose cut
    then runs right along the real axis, beyond a support edge), a sympy expression in R."""
    p = sympy.Poly(poly, R)
    if p.degree() < 1:
        return sympy.log(p.as_expr())
    lead = p.LC()
    with mpmath.workdps(_ROOT_DPS):
        roots = mpmath.polyroots(
            [mpmath.mpmathify(sympy.N(c, _ROOT_DPS + 5)) for c in p.all_coeffs()], maxsteps=200, extraprec=200
        )
        tiny = mpmath.mpf(10) ** (10 - _ROOT_DPS)
        out = sympy.Integer(0)
        for z in roots:
            z = mpmath.mpc(z)
            re_, im_ = sympy.Float(z.real, 17), sympy.Float(z.imag, 17)
            if abs(z.imag) <= tiny * (1 + abs(z)):
                if z.real > 0:
                    out += sympy.log(re_ - R)
                    lead = -lead
                else:
                    out += sympy.log(R - re_)
            else:
                out += sympy.log(R - (re_ + sympy.I * im_))
    return out + sympy.log(lead)


def _continued(expr):
    """expr with every non-integer power of a polynomial or rational function of r (numeric
    coefficients) written through the logs of its linear factors (module docstring)."""

    def factored(e):
        if not (isinstance(e, sympy.Pow) and e.exp.is_number and not e.exp.is_Integer and e.base.has(R)):
            return e
        num, den = sympy.fraction(sympy.together(e.base))
        if not (num.is_polynomial(R) and den.is_polynomial(R)):
            return e
        polys = [sympy.Poly(num, R), sympy.Poly(den, R)]
        if not all(c.is_number for q in polys for c in q.all_coeffs()) or max(q.degree() for q in polys) < 1:
            return e
        return sympy.exp(e.exp * (_log_factors(num) - _log_factors(den)))

    return expr.replace(lambda e: isinstance(e, sympy.Pow), factored)


def complex_formula(expr: sympy.Expr) -> Callable[[NDArray[np.complex128]], NDArray[np.complex128]] | None:
    """Vectorised complex evaluator of a formula in r (principal branches), or None when it uses
    non-analytic functions (see :func:`complex_evaluator`)."""
    if any(expr.has(f) for f in _NON_ANALYTIC):
        return None
    return sympy.lambdify(R, expr, modules=_MODULES)


def _derive(expr, support, dim):
    """Child-process body: mu(rho) as a sympy expression (pickled back to the parent), or None."""
    r = sympy.Symbol("r", positive=True)
    rho = sympy.Symbol("rho", positive=True)
    nu = sympy.Rational(dim, 2) - 1
    f = expr.xreplace({R: r})
    f = sympy.nsimplify(f, rational=True) if f.has(sympy.Float) else f
    if support is None:
        ht = sympy.hankel_transform(f * r**nu, r, rho, nu)
    else:
        top = sympy.nsimplify(support, rational=True)
        ht = sympy.integrate(f * r**nu * sympy.besselj(nu, rho * r) * r, (r, 0, top), meijerg=True)
    half = sympy.Rational(dim, 2)
    mu = sympy.simplify((2 * sympy.pi) ** (-half) * rho ** (1 - half) * ht)
    if mu.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) or any(mu.has(u) for u in _UNUSABLE):
        return None
    if mu.free_symbols - {rho}:
        return None
    return mu


def sympy_transform(
    atom: RadialKernel, dim: int, budget: float
) -> tuple[Callable[[ArrayLike], NDArray[np.float64]], str] | None:
    """sympy's transform of ``atom`` on R^dim within ``budget`` seconds.

    Parameters
    ----------
    atom : RadialKernel
        An atomic kernel.
    dim : int
        Dimension d >= 1.
    budget : float
        CPU seconds for the symbolic computation (forked child, stopped at the budget).

    Returns
    -------
    (callable, str) or None
        A vectorised float64 ``mu(rho)`` for rho > 0 (lambdified; may be inaccurate near 0 or
        overflow at large rho: the caller must verify it) and the formula as text; None when
        sympy timed out, failed or returned an unusable expression.
    """
    try:
        mu = run_with_budget(_derive, (atom.expr, atom.support, int(dim)), float(budget))
    except Exception:  # noqa: BLE001 - timeout or any sympy failure: no symbolic result
        return None
    if mu is None:
        return None
    rho = sympy.Symbol("rho", positive=True)
    try:
        fn = sympy.lambdify(rho, mu, modules=_MODULES)
    except Exception:  # noqa: BLE001 - a function numpy cannot print (fresnels): no symbolic result
        return None

    def mu_fn(x):
        """Lambdified mu (NaN where the formula fails or is not real)."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            try:
                val = np.asarray(fn(x.astype(np.complex128)), dtype=np.complex128)
            except (NameError, TypeError, ValueError, ZeroDivisionError, OverflowError):
                return np.full(x.shape, np.nan)
        val = np.broadcast_to(val, x.shape)
        ok = np.abs(val.imag) <= 1e-10 * np.maximum(np.abs(val.real), 1e-300)
        return np.where(ok, val.real, np.nan)

    return mu_fn, str(mu)
