"""The radial kernel type: k(r) as a sympy expression, its evaluation, arithmetic and identity.

A :class:`RadialKernel` is an immutable, hashable stationary kernel k(x, y) = k(||x - y||) given
by a sympy expression in the radius ``r``, named parameters with values, an optional support
radius ``R`` (k = 0 for r > R: the zero extension used by the papers for kernels on the sphere)
and a name. Kernels can be added, subtracted and scaled; a linear combination remembers its
terms so that its spectral measure can be assembled term by term (see
:mod:`spectralkit.measures`).

"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping

import mpmath
import numpy as np
import scipy.special
import sympy
import sympy.tensor.tensor
from numpy.typing import ArrayLike, NDArray
from sympy.core.function import AppliedUndef

from .._numerics.budget import BudgetExceeded, run_with_budget
from ..exceptions import KernelDefinitionError, SpectralkitError
from ._gram import gram
from ._parse import R, parse_formula, to_sympy_number
from ._piecewise import check_continuation, has_piecewise, normal_form

# sympy imports sympy.tensor.tensor lazily inside the first Add of a process (25-45 ms measured).
# Importing it with spectralkit counts that one-time cost as import time (~0.6 s in all) instead
# of charging it to the first kernel built, which made a disk-cache hit cost 20-50 ms.

__all__ = ["RadialKernel", "r"]

#: The radius symbol used in every kernel expression.
r = R

# complex-capable versions of the special functions (scipy's accept complex arguments)
_COMPLEX_MODULES = {
    "besselj": scipy.special.jv,
    "besselk": scipy.special.kv,
    "besseli": scipy.special.iv,
    "gamma": scipy.special.gamma,
    "erf": scipy.special.erf,
    "erfc": scipy.special.erfc,
}

#: at most this many points of one call that float64 cannot evaluate are redone in mpmath
_MP_POINTS = 4096
_LAMBDIFY_MODULES = [
    {
        "besselj": scipy.special.jv,
        "besselk": scipy.special.kv,
        "besseli": scipy.special.iv,
        "gamma": scipy.special.gamma,
        "erf": scipy.special.erf,
        "erfc": scipy.special.erfc,
    },
    "numpy",
]


#: CPU seconds for sympy's limit of k(r) at r -> 0+ (in a child process: sympy cannot be interrupted).
_LIMIT_BUDGET = 3.0
#: Integers and rationals beyond this are evaluated as floats: numpy turns larger Python ints into
#: object arrays, on which ufuncs such as sqrt fail.
_EXACT_INT_LIMIT = 2**53


def _limit_value(expr):
    """lim_{r -> 0+} expr as a complex number (inf or nan when it diverges); runs in the budget's child."""
    v = sympy.limit(expr, R, 0, "+")
    if v.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
        return complex(float("inf") if v == sympy.oo else float("nan"))
    return complex(sympy.N(v))


def _float_constants(expr):
    """``expr`` with its huge integer and rational constants as floats (for numeric evaluation)."""
    big = {
        a: sympy.Float(a)
        for a in expr.atoms(sympy.Rational)
        if abs(a.p) > _EXACT_INT_LIMIT or a.q > _EXACT_INT_LIMIT
    }
    return expr.xreplace(big) if big else expr


def _check_params(params):
    """Validate ``params``: a mapping of identifier strings to finite real numbers (copied)."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise KernelDefinitionError(
            f"params must be a mapping of names to numbers, got {type(params).__name__}"
        )
    out = {}
    for key_, value in params.items():
        if not isinstance(key_, str) or not key_.isidentifier():
            raise KernelDefinitionError(f"parameter names must be identifier strings, got {key_!r}")
        try:
            finite = (
                not isinstance(value, bool) and isinstance(value, numbers.Real) and np.isfinite(float(value))
            )
        except OverflowError:  # an int beyond the float range, e.g. 10**400
            finite = False
        if not finite:
            shown = (
                repr(value)
                if len(repr(value)) <= 40
                else f"{repr(value)[:20]}... ({len(repr(value))} characters)"
            )
            raise KernelDefinitionError(
                f"parameter {key_!r} must be a finite real number, got {type(value).__name__} {shown}"
                + (" (beyond the float range, about 1.8e308)" if isinstance(value, numbers.Integral) else "")
            )
        out[key_] = value
    return out


def _check_positive(name, value, allow_zero=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise KernelDefinitionError(f"{name} must be a finite real number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise KernelDefinitionError(f"{name} must be {bound}, got {value!r}")
    return float(value)


def _check_real_valued(expr, support):
    """Refuse formulas that are complex somewhere on 0 <= r <= R (R = support, else r up to 1e8).

    sqrt(r - 5), acos(r) or (r - 1)^(1/3) are complex-valued on part of the half line (principal
    branches); evaluated in real arithmetic they would give NaN there and the derivation a false
    verdict. The formula is evaluated in complex arithmetic on a dense grid; points where it is not
    finite (poles, 0 * inf at r = 0) are left to the analysis of k.
    """
    top = float(support) if support is not None else 1e8
    grid = np.unique(
        np.concatenate([np.linspace(0.0, min(top, 50.0), 2001), np.geomspace(1e-8, top, 2000), [top]])
    )
    fn = sympy.lambdify(R, expr, modules=[_COMPLEX_MODULES, "numpy"])
    with np.errstate(all="ignore"):
        try:
            vals = np.broadcast_to(
                np.asarray(fn(grid.astype(np.complex128)), dtype=np.complex128), grid.shape
            )
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError):
            return  # not evaluable on complex input: the real evaluation will judge it
    ok = np.isfinite(vals)
    bad = ok & (np.abs(vals.imag) > 1e-9 * np.maximum(1.0, np.abs(vals.real)))
    if np.any(bad):
        r0 = float(grid[np.argmax(bad)])
        raise KernelDefinitionError(
            f"kernel expression {expr} is not real-valued at r = {r0:.6g} "
            f"(value {complex(vals[np.argmax(bad)]):.4g}): "
            "a kernel must be real for every r >= 0 (on its support); e.g. take abs() inside roots of "
            "negative numbers, or give support=R where the formula stops being real"
        )


class RadialKernel:
    """An immutable radial kernel k(r), or a linear combination of such kernels.

    Parameters
    ----------
    expr : sympy.Expr or str
        The kernel as a function of the radius ``r`` (the symbol :data:`spectralkit.kernels.r`,
        or any sympy Symbol named ``"r"``). Strings are parsed through a whitelist (see
        :meth:`from_string`); nothing is evaluated.
    params : mapping of str to float, optional
        Values of the free parameters of ``expr``. Every free symbol other than ``r`` must be
        given a value here.
    support : float, optional
        Support radius R: k(r) = 0 for r > R (zero extension). ``None`` (default): no cut-off.
    name : str, optional
        A display name; defaults to the formula.
    family : tuple, optional
        ``(family_name, {parameter: value})`` for library kernels whose spectral measure has a
        verified closed form or a dedicated method (e.g. ``("gaussian", {"lengthscale": 1.0})``).
        Set by the library constructors; users normally leave it out.

    Notes
    -----
    Kernels are hashable and compare equal when their (parameter-substituted) expressions,
    supports and terms are equal; :attr:`key` is the canonical text used for hashing and
    caching. Evaluation ``k(r)`` is vectorised over numpy arrays and returns 0 beyond the
    support radius. At ``r = 0`` the value is the limit r -> 0+ (e.g. for Matérn's
    ``r**nu * besselk(nu, r)`` form).
    """

    __slots__ = ("_expr", "_params", "_support", "_name", "_family", "_terms", "_cache", "_frozen")

    def __init__(
        self,
        expr: sympy.Expr | str,
        params: Mapping[str, float] | None = None,
        support: float | None = None,
        name: str | None = None,
        family: tuple[str, Mapping[str, float]] | None = None,
    ) -> None:
        params = _check_params(params)
        # exactly two input types: text goes through the whitelist parser; a sympy expression is
        # taken as built. Anything else (tuples, lists, dicts, sets of strings...) is refused here:
        # sympify would parse strings inside containers with eval.
        if isinstance(expr, str):
            expr, _ = parse_formula(expr, params)
        elif not isinstance(expr, sympy.Expr):
            raise KernelDefinitionError(
                f"kernel expression must be a formula string or a sympy expression, got {type(expr).__name__}"
            )
        undefined = sorted({type(f).__name__ for f in expr.atoms(AppliedUndef)})
        if undefined:
            raise KernelDefinitionError(
                f"kernel expression uses undefined functions {', '.join(undefined)}: only sympy's "
                "elementary and special functions can be evaluated"
            )
        expr = expr.xreplace({s: R for s in expr.free_symbols if s.name == "r" and s != R})
        names = {s.name: s for s in expr.free_symbols if s != R}
        undeclared = sorted(set(names) - set(params))
        if undeclared:
            raise KernelDefinitionError(
                "kernel must be radial, a function of the radius r and declared parameters only; "
                f"free symbols without a value: {', '.join(undeclared)} (give them in params=...)"
            )
        unused = sorted(set(params) - set(names))
        if unused:
            raise KernelDefinitionError(
                f"parameters {', '.join(unused)} do not appear in the kernel expression {expr}"
            )
        if support is not None:
            support = _check_positive("support", support)
            if support < 1e-100:  # 1e-320 failed inside numpy ("Geometric sequence cannot include zero")
                raise KernelDefinitionError(f"support must be >= 1e-100, got {support!r}")
        self._expr = expr
        self._params = tuple(sorted((k_, float(v)) for k_, v in params.items()))
        self._support = support
        self._family = None if family is None else (family[0], tuple(sorted(dict(family[1]).items())))
        self._terms = None
        self._cache = {}
        numeric = self.expr
        if numeric.has(sympy.I) or numeric.has(sympy.zoo) or numeric.has(sympy.nan):
            raise KernelDefinitionError(f"kernel expression {numeric} is not real-valued")
        if family is None and has_piecewise(numeric):
            # max/min/abs/Heaviside/sign/Piecewise: normalised to analytic pieces and a support
            # (kernels/_piecewise.py); the parameters are substituted into the normal form
            try:
                kind, form, new_support = normal_form(numeric, support, str(numeric))
            except SpectralkitError:
                raise
            except (ArithmeticError, TypeError, ValueError, RecursionError) as exc:
                # sympy / numpy / gmpy failures on degenerate pieces (a 30-digit argument of
                # gamma, a constant branch numpy cannot broadcast): the library's error
                raise KernelDefinitionError(
                    f"kernel formula {numeric} could not be split into analytic pieces "
                    f"({type(exc).__name__}: {exc})"
                ) from exc
            name = str(numeric) if name is None else name
            if kind == "sum":
                self._become_sum(form, name)
                return
            self._expr, self._params, self._support, self._cache = form, (), new_support, {}
            numeric = self.expr
        if not numeric.has(R):
            raise KernelDefinitionError(
                f"kernel expression {numeric} does not depend on r; a constant kernel has the "
                "spectral measure k * delta_0, which spectralkit does not sample"
            )
        _check_real_valued(numeric, self._support)  # the normal form's support
        self._name = str(name) if name is not None else str(numeric)
        self._frozen = True

    def _become_sum(self, form, name):
        """Turn this (unfinished) kernel into the combination sum_i e_i 1[r <= b_i] of ``form``."""
        atoms = []
        for i, (e, b) in enumerate(form):
            atom = RadialKernel(e, support=b)
            check_continuation(atom, i, name)
            atoms.append((1.0, atom))
        self._terms = tuple(atoms)
        self._expr, self._params, self._family, self._cache = None, (), None, {}
        supports = [a.support for _, a in atoms]
        self._support = None if any(s is None for s in supports) else max(supports)
        self._name = str(name)
        self._frozen = True

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_string(
        cls,
        text: str,
        params: Mapping[str, float] | None = None,
        support: float | None = None,
        name: str | None = None,
    ) -> RadialKernel:
        """Build a kernel from formula text, parsed through a whitelist.

        Allowed: numbers, ``r``, names declared in ``params``, ``+ - * / **`` (``^`` means
        power), unary minus, ``pi``, ``E`` and calls of ``exp, log, sqrt, cos, sin, tan, cosh,
        sinh, tanh, sech, sinc, acos, asin, atan, erf, erfc, gamma, besselj(nu, x), besselk(nu, x),
        besseli(nu, x), abs, min, max, sign, Heaviside, Piecewise`` (also ``Abs, Min, Max`` as
        sympy prints them, and ``heaviside, piecewise``; ``sech(x)`` is read as
        ``1/cosh(x)``, ``sinc(x)`` as ``sin(x)/x``, the unnormalised sinc). Anything else (attribute access, subscripts, lambdas,
        comprehensions, unknown names or functions) raises :class:`KernelDefinitionError`
        before anything is built.
        """
        if not isinstance(text, str):
            raise KernelDefinitionError(f"kernel formula must be a string, got {type(text).__name__}")
        return cls(text, params=params, support=support, name=name)

    @classmethod
    def _combination(cls, terms):
        flat = []
        for coef, kern in terms:
            for c2, atom in kern.terms:
                flat.append((float(coef) * c2, atom))
        merged = {}
        order = []
        for coef, atom in flat:
            if atom in merged:
                merged[atom] += coef
            else:
                merged[atom] = coef
                order.append(atom)
        items = tuple((merged[a], a) for a in order if merged[a] != 0.0)
        if not items:
            raise KernelDefinitionError("the linear combination of kernels is identically zero")
        if len(items) == 1 and items[0][0] == 1.0:
            return items[0][1]
        obj = object.__new__(cls)
        obj._terms = items
        obj._expr = None
        obj._params = ()
        supports = [a.support for _, a in items]
        obj._support = None if any(s is None for s in supports) else max(supports)
        obj._family = None
        obj._cache = {}
        parts = []
        for i, (c, a) in enumerate(items):
            sign = "-" if c < 0 else ("+" if i else "")
            mag = abs(c)
            parts.append(f"{sign} {'' if mag == 1 else f'{mag:g}*'}{a.name}".strip())
        obj._name = " ".join(parts)
        obj._frozen = True
        return obj

    # -- properties ---------------------------------------------------------------------------
    @property
    def is_combination(self) -> bool:
        """True when the kernel is a linear combination of two or more terms."""
        return self._terms is not None

    @property
    def terms(self) -> tuple[tuple[float, RadialKernel], ...]:
        """The terms ``((coef, atomic_kernel), ...)``; a single kernel is ``((1.0, self),)``."""
        return self._terms if self._terms is not None else ((1.0, self),)

    @property
    def name(self) -> str:
        """Display name."""
        return self._name

    @property
    def support(self) -> float | None:
        """Support radius R (k = 0 beyond it), or None for unbounded support.

        For a combination: the largest support of its terms (None if any term is unbounded).
        """
        return self._support

    @property
    def params(self) -> dict[str, float]:
        """Parameter values as a dict (empty for combinations)."""
        return dict(self._params)

    @property
    def family(self) -> tuple[str, dict[str, float]] | None:
        """``(family_name, {param: value})`` for library kernels, else None."""
        if self._family is None:
            return None
        return self._family[0], dict(self._family[1])

    @property
    def symbolic_expr(self) -> sympy.Expr:
        """The expression with parameter symbols (atomic kernels only)."""
        self._require_atomic("symbolic_expr")
        return self._expr

    @property
    def expr(self) -> sympy.Expr:
        """The sympy expression in ``r`` with parameter values substituted.

        For a combination: the sum of the terms' expressions. Note that this sum ignores the
        terms' supports; use :meth:`piecewise_expr` for the exact function.
        """
        if "expr" not in self._cache:
            if self._terms is not None:
                value = sympy.Add(*[to_sympy_number(c) * a.expr for c, a in self._terms])
            else:
                subs = {sympy.Symbol(k_, real=True): to_sympy_number(v) for k_, v in self._params}
                subs.update(
                    {
                        s: subs[sympy.Symbol(s.name, real=True)]
                        for s in self._expr.free_symbols
                        if s != R and sympy.Symbol(s.name, real=True) in subs
                    }
                )
                value = self._expr.xreplace(subs)
            self._cache["expr"] = value
        return self._cache["expr"]

    def piecewise_expr(self) -> sympy.Expr:
        """The kernel as a sympy ``Piecewise`` that is 0 beyond each term's support."""
        out = []
        for c, a in self.terms:
            e = (
                a.expr
                if a.support is None
                else sympy.Piecewise((a.expr, R <= to_sympy_number(a.support)), (0, True))
            )
            out.append(to_sympy_number(c) * e)
        return sympy.Add(*out)

    @property
    def key(self) -> str:
        """Canonical text identifying the kernel (used for hashing, equality and caching)."""
        if "key" not in self._cache:
            if self._terms is not None:
                self._cache["key"] = " + ".join(f"{c!r}*[{a.key}]" for c, a in self._terms)
            else:
                self._cache["key"] = f"{sympy.srepr(self.expr)}|support={self._support!r}"
        return self._cache["key"]

    @property
    def digest(self) -> str:
        """A short sha256 digest of :attr:`key` (file-name safe)."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:20]

    def _require_atomic(self, what):
        if self._terms is not None:
            raise TypeError(f"{what} is defined for single kernels, not for the combination {self.name}")

    # -- evaluation ---------------------------------------------------------------------------
    @property
    def _value_at_zero(self):
        if "k0" not in self._cache:
            self._cache["k0"] = self._limit_at_zero()
        return self._cache["k0"]

    def _limit_at_zero(self):
        expr = self.expr
        try:
            v = expr.subs(R, 0)
            if v.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) or not v.is_number:
                raise ValueError
            v = complex(sympy.N(v))
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            try:
                v = run_with_budget(_limit_value, (expr,), _LIMIT_BUDGET)
            except BudgetExceeded:
                raise KernelDefinitionError(
                    f"k(0) of kernel {self.name}: the limit of k(r) as r -> 0+ was not found within "
                    f"{_LIMIT_BUDGET:g} CPU seconds"
                ) from None
            except (
                ArithmeticError,
                ValueError,
                TypeError,
                NotImplementedError,
                RuntimeError,
                RecursionError,
            ) as exc:
                raise KernelDefinitionError(
                    f"k(0) of kernel {self.name}: the limit of k(r) as r -> 0+ could not be computed "
                    f"({type(exc).__name__}: {exc})"
                ) from None
        return float(v.real)

    def value_at_zero(self) -> float:
        """k(0) = lim_{r -> 0+} k(r) (``inf`` if k is unbounded at 0)."""
        if self._terms is not None:
            return float(sum(c * a.value_at_zero() for c, a in self._terms))
        return self._value_at_zero

    def _numeric(self):
        fn = self._cache.get("fn")
        if fn is None:
            fn = sympy.lambdify(R, _float_constants(self.expr), modules=_LAMBDIFY_MODULES)
            self._cache["fn"] = fn
        return fn

    def _mp_value(self, r):
        """k(r) in mpmath at 30 digits as a float (nan where it is not a finite real number there)."""
        fn = self._cache.get("mp")
        if fn is None:
            fn = sympy.lambdify(R, self.expr, modules="mpmath")
            self._cache["mp"] = fn
        with mpmath.workdps(30):
            try:
                v = mpmath.mpmathify(fn(mpmath.mpf(r)))
            except (ArithmeticError, TypeError, ValueError):
                return math.nan
            if isinstance(v, mpmath.mpc):
                if abs(v.imag) > 1e-12 * max(1, abs(v.real)):
                    return math.nan
                v = v.real
            return float(v) if mpmath.isfinite(v) else math.nan

    def __call__(self, radius: ArrayLike) -> NDArray[np.float64] | float:
        """Evaluate k at radii ``radius`` (array-like, >= 0); returns a float64 array (or float).

        Raises
        ------
        ValueError
            If ``radius`` contains NaN, infinite or negative values.
        """
        rr = np.asarray(radius, dtype=np.float64)
        if not np.all(np.isfinite(rr)):
            raise ValueError("radius must be finite; got NaN or infinite values")
        if np.any(rr < 0):
            raise ValueError(f"radius must be >= 0; got minimum {rr.min()!r}")
        if self._terms is not None:
            out = np.zeros(rr.shape)
            for c, a in self._terms:
                out = out + c * a(rr)
            return out if out.ndim else float(out)
        with np.errstate(all="ignore"):
            try:
                val = np.asarray(self._numeric()(rr), dtype=np.complex128)
            except (
                ArithmeticError,
                TypeError,
                ValueError,
                AttributeError,
                RecursionError,
                MemoryError,
            ) as exc:
                raise KernelDefinitionError(
                    f"kernel {self.name} cannot be evaluated numerically ({type(exc).__name__}: {exc})"
                ) from None
            if np.any(val.imag != 0):
                ok = np.abs(val.imag) <= 1e-12 * np.maximum(1.0, np.abs(val.real))
                if not np.all(ok):
                    raise KernelDefinitionError(f"kernel {self.name} is not real at some of the radii")
            val = np.broadcast_to(val.real, rr.shape).astype(np.float64, copy=True)
        far = ~np.isfinite(val) & (rr > 1e-6 * (self._support or 1.0))
        if np.any(far):
            # float64 over- or underflow of a factor (cosh(r) beyond r = 710 in exp(-r^2) cosh(r):
            # inf * 0) is not a pole: those points again in mpmath, whose exponent range is unbounded
            idx = np.flatnonzero(far)[:_MP_POINTS]
            val.ravel()[idx] = [self._mp_value(float(r)) for r in rr.ravel()[idx]]
        bad = ~np.isfinite(val) & (rr <= 1e-6 * (self._support or 1.0))
        if np.any(bad) | np.any(rr == 0):
            fix = bad | (rr == 0)
            val[fix] = self._value_at_zero
        if self._support is not None:
            val[rr > self._support] = 0.0
        return val if val.ndim else float(val)

    def gram(
        self, X: ArrayLike, Y: ArrayLike | None = None, *, shape_matrix: ArrayLike | None = None
    ) -> NDArray[np.float64] | float:
        """The Gram matrix K[i, j] = k(||x_i - y_j||_M), usable where scikit-learn expects a kernel.

        ``SVC(kernel=k.gram)`` and ``sklearn.metrics.pairwise_kernels(X, metric=k.gram)`` work as is
        (two 1-D vectors give a scalar). ``shape_matrix`` M (symmetric positive definite) gives the
        anisotropic distance sqrt((x - y)^T M (x - y)); default the identity. See
        :func:`spectralkit.kernels._gram.gram`.
        """
        return gram(self, X, Y, shape_matrix)

    # -- arithmetic ---------------------------------------------------------------------------
    def __add__(self, other: RadialKernel) -> RadialKernel:
        if not isinstance(other, RadialKernel):
            return NotImplemented
        return RadialKernel._combination([(1.0, self), (1.0, other)])

    def __sub__(self, other: RadialKernel) -> RadialKernel:
        if not isinstance(other, RadialKernel):
            return NotImplemented
        return RadialKernel._combination([(1.0, self), (-1.0, other)])

    def __mul__(self, c: float) -> RadialKernel:
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not np.isfinite(c):
            return NotImplemented
        if c == 0:
            raise KernelDefinitionError("multiplying a kernel by 0 gives the zero kernel")
        return RadialKernel._combination([(float(c), self)])

    __rmul__ = __mul__

    def __neg__(self) -> RadialKernel:
        return RadialKernel._combination([(-1.0, self)])

    def __truediv__(self, c: float) -> RadialKernel:
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or c == 0:
            return NotImplemented
        return self * (1.0 / float(c))

    # -- identity -----------------------------------------------------------------------------
    def __eq__(self, other):
        return isinstance(other, RadialKernel) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError("RadialKernel is immutable")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        if self._terms is not None:
            return (RadialKernel._combination, (list(self._terms),))
        return (_rebuild, (self._expr, dict(self._params), self._support, self._name, self.family))

    def __repr__(self):
        sup = "" if self._support is None else f", support={self._support:g}"
        return f"RadialKernel({self.name!r}{sup})"


def _rebuild(expr, params, support, name, family):
    return RadialKernel(expr, params=params, support=support, name=name, family=family)
