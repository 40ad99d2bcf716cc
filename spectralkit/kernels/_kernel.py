"""Radial kernels k(r) written as formulas, and a library of named kernels.

A :class:`RadialKernel` is an immutable, hashable stationary kernel k(x, y) = k(||x - y||) given
by a sympy expression in the radius ``r``, named parameters with values, an optional support
radius ``R`` (k = 0 for r > R: the zero extension used by the papers for kernels on the sphere)
and a name. Kernels can be added, subtracted and scaled; a linear combination remembers its
terms so that its spectral measure can be assembled term by term (see
:mod:`spectralkit.measures`).

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

import hashlib
import numbers
from collections.abc import Mapping

import numpy as np
import scipy.special
import sympy
import sympy.tensor.tensor  # noqa: F401  (imported for its side effect, see below)
from sympy.core.function import AppliedUndef

from ._parse import FUNCTIONS, R, parse_formula, to_sympy_number
from .exceptions import KernelDefinitionError

# sympy imports sympy.tensor.tensor lazily inside the first Add of a process (25-45 ms measured).
# Importing it with spectralkit counts that one-time cost as import time (~0.6 s in all) instead
# of charging it to the first kernel built, which made a disk-cache hit cost 20-50 ms.

__all__ = [
    "RadialKernel",
    "gaussian",
    "laplacian",
    "matern",
    "exponential_power",
    "rational_quadratic",
    "delta_gaussian",
    "spherical_polynomial",
    "ntk_relu_sphere",
    "arccos0_sphere",
    "arccos1_sphere",
    "log_kernel",
    "LIBRARY",
    "from_spec",
    "r",
]

#: The radius symbol used in every kernel expression.
r = R

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


def _check_params(params):
    """Validate ``params``: a mapping of identifier strings to finite real numbers (copied)."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise KernelDefinitionError(f"params must be a mapping of names to numbers, got {type(params).__name__}")
    out = {}
    for key_, value in params.items():
        if not isinstance(key_, str) or not key_.isidentifier():
            raise KernelDefinitionError(f"parameter names must be identifier strings, got {key_!r}")
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(float(value)):
            raise KernelDefinitionError(
                f"parameter {key_!r} must be a finite real number, got {type(value).__name__} {value!r}")
        out[key_] = value
    return out


def _check_positive(name, value, allow_zero=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise KernelDefinitionError(f"{name} must be a finite real number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise KernelDefinitionError(f"{name} must be {bound}, got {value!r}")
    return float(value)


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

    def __init__(self, expr, params=None, support=None, name=None, family=None):
        params = _check_params(params)
        # exactly two input types: text goes through the whitelist parser; a sympy expression is
        # taken as built. Anything else (tuples, lists, dicts, sets of strings...) is refused here:
        # sympify would parse strings inside containers with eval.
        if isinstance(expr, str):
            expr, _ = parse_formula(expr, params)
        elif not isinstance(expr, sympy.Expr):
            raise KernelDefinitionError(
                "kernel expression must be a formula string or a sympy expression, got "
                f"{type(expr).__name__}")
        undefined = sorted({type(f).__name__ for f in expr.atoms(AppliedUndef)})
        if undefined:
            raise KernelDefinitionError(
                f"kernel expression uses undefined functions {', '.join(undefined)}: only sympy's "
                "elementary and special functions can be evaluated")
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
        self._expr = expr
        self._params = tuple(sorted((k_, float(v)) for k_, v in params.items()))
        self._support = support
        self._family = None if family is None else (family[0], tuple(sorted(dict(family[1]).items())))
        self._terms = None
        self._cache = {}
        numeric = self.expr
        if numeric.has(sympy.I) or numeric.has(sympy.zoo) or numeric.has(sympy.nan):
            raise KernelDefinitionError(f"kernel expression {numeric} is not real-valued")
        if not numeric.has(R):
            raise KernelDefinitionError(
                f"kernel expression {numeric} does not depend on r; a constant kernel has the "
                "spectral measure k * delta_0, which spectralkit does not sample"
            )
        self._name = str(name) if name is not None else str(numeric)
        self._frozen = True

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_string(cls, text, params=None, support=None, name=None):
        """Build a kernel from formula text, parsed through a whitelist.

        Allowed: numbers, ``r``, names declared in ``params``, ``+ - * / **`` (``^`` means
        power), unary minus, ``pi``, ``E`` and calls of ``exp, log, sqrt, cos, sin, tan, cosh,
        sinh, tanh, acos, asin, atan, erf, erfc, gamma, besselj(nu, x), besselk(nu, x),
        besseli(nu, x), abs, min, max``. Anything else (attribute access, subscripts, lambdas,
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
    def is_combination(self):
        """True when the kernel is a linear combination of two or more terms."""
        return self._terms is not None

    @property
    def terms(self):
        """The terms ``((coef, atomic_kernel), ...)``; a single kernel is ``((1.0, self),)``."""
        return self._terms if self._terms is not None else ((1.0, self),)

    @property
    def name(self):
        """Display name."""
        return self._name

    @property
    def support(self):
        """Support radius R (k = 0 beyond it), or None for unbounded support.

        For a combination: the largest support of its terms (None if any term is unbounded).
        """
        return self._support

    @property
    def params(self):
        """Parameter values as a dict (empty for combinations)."""
        return dict(self._params)

    @property
    def family(self):
        """``(family_name, {param: value})`` for library kernels, else None."""
        if self._family is None:
            return None
        return self._family[0], dict(self._family[1])

    @property
    def symbolic_expr(self):
        """The expression with parameter symbols (atomic kernels only)."""
        self._require_atomic("symbolic_expr")
        return self._expr

    @property
    def expr(self):
        """The sympy expression in ``r`` with parameter values substituted.

        For a combination: the sum of the terms' expressions. Note that this sum ignores the
        terms' supports; use :meth:`piecewise_expr` for the exact function.
        """
        if "expr" not in self._cache:
            if self._terms is not None:
                value = sympy.Add(*[to_sympy_number(c) * a.expr for c, a in self._terms])
            else:
                subs = {sympy.Symbol(k_, real=True): to_sympy_number(v) for k_, v in self._params}
                subs.update({s: subs[sympy.Symbol(s.name, real=True)]
                             for s in self._expr.free_symbols
                             if s != R and sympy.Symbol(s.name, real=True) in subs})
                value = self._expr.xreplace(subs)
            self._cache["expr"] = value
        return self._cache["expr"]

    def piecewise_expr(self):
        """The kernel as a sympy ``Piecewise`` that is 0 beyond each term's support."""
        out = []
        for c, a in self.terms:
            e = a.expr if a.support is None else sympy.Piecewise(
                (a.expr, R <= to_sympy_number(a.support)), (0, True))
            out.append(to_sympy_number(c) * e)
        return sympy.Add(*out)

    @property
    def key(self):
        """Canonical text identifying the kernel (used for hashing, equality and caching)."""
        if "key" not in self._cache:
            if self._terms is not None:
                self._cache["key"] = " + ".join(f"{c!r}*[{a.key}]" for c, a in self._terms)
            else:
                self._cache["key"] = f"{sympy.srepr(self.expr)}|support={self._support!r}"
        return self._cache["key"]

    @property
    def digest(self):
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
        except (ValueError, TypeError, ZeroDivisionError):
            v = sympy.limit(expr, R, 0, "+")
            if v.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
                return float("inf") if v == sympy.oo else float("nan")
            v = complex(sympy.N(v))
        return float(v.real)

    def value_at_zero(self):
        """k(0) = lim_{r -> 0+} k(r) (``inf`` if k is unbounded at 0)."""
        if self._terms is not None:
            return float(sum(c * a.value_at_zero() for c, a in self._terms))
        return self._value_at_zero

    def _numeric(self):
        fn = self._cache.get("fn")
        if fn is None:
            fn = sympy.lambdify(R, self.expr, modules=_LAMBDIFY_MODULES)
            self._cache["fn"] = fn
        return fn

    def __call__(self, radius):
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
            val = np.asarray(self._numeric()(rr), dtype=np.complex128)
            if np.any(val.imag != 0):
                ok = np.abs(val.imag) <= 1e-12 * np.maximum(1.0, np.abs(val.real))
                if not np.all(ok):
                    raise ValueError(f"kernel {self.name} is not real at some of the radii")
            val = np.broadcast_to(val.real, rr.shape).astype(np.float64, copy=True)
        bad = ~np.isfinite(val) & (rr <= 1e-6 * (self._support or 1.0))
        if np.any(bad) | np.any(rr == 0):
            fix = bad | (rr == 0)
            val[fix] = self._value_at_zero
        if self._support is not None:
            val[rr > self._support] = 0.0
        return val if val.ndim else float(val)

    # -- arithmetic ---------------------------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, RadialKernel):
            return NotImplemented
        return RadialKernel._combination([(1.0, self), (1.0, other)])

    def __sub__(self, other):
        if not isinstance(other, RadialKernel):
            return NotImplemented
        return RadialKernel._combination([(1.0, self), (-1.0, other)])

    def __mul__(self, c):
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not np.isfinite(c):
            return NotImplemented
        if c == 0:
            raise KernelDefinitionError("multiplying a kernel by 0 gives the zero kernel")
        return RadialKernel._combination([(float(c), self)])

    __rmul__ = __mul__

    def __neg__(self):
        return RadialKernel._combination([(-1.0, self)])

    def __truediv__(self, c):
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

    # -- measures (defined in spectralkit.measures; imported lazily: kernels is the bottom layer)
    def spectral_measure(self, dim, **options):
        """The signed spectral measure of this kernel on R^dim; see :class:`spectralkit.SpectralMeasure`."""
        from .measures import SpectralMeasure

        return SpectralMeasure(self, dim, **options)

    def check_rkks(self, dim, **options):
        """Verdict PD / RKKS / DIVERGENT on R^dim; see :func:`spectralkit.check_rkks`."""
        from .measures import check_rkks

        return check_rkks(self, dim, **options)


def _rebuild(expr, params, support, name, family):
    return RadialKernel(expr, params=params, support=support, name=name, family=family)


# ---------------------------------------------------------------------------------------------
# library
# ---------------------------------------------------------------------------------------------
_L = sympy.Symbol("l", real=True)


def gaussian(lengthscale=1.0):
    """Gaussian kernel exp(-r^2 / (2 l^2)); PD in every dimension, spectral mass 1."""
    l = _check_positive("lengthscale", lengthscale)
    return RadialKernel(sympy.exp(-R**2 / (2 * _L**2)), {"l": l}, name=f"gaussian(l={l:g})",
                        family=("gaussian", {"lengthscale": l}))


def laplacian(lengthscale=1.0):
    """Laplacian (exponential) kernel exp(-r / l) = Matérn nu = 1/2; PD, mass 1."""
    l = _check_positive("lengthscale", lengthscale)
    return RadialKernel(sympy.exp(-R / _L), {"l": l}, name=f"laplacian(l={l:g})",
                        family=("matern", {"nu": 0.5, "lengthscale": l}))


def matern(nu=1.5, lengthscale=1.0):
    """Matérn kernel 2^(1-nu)/Gamma(nu) (sqrt(2 nu) r / l)^nu K_nu(sqrt(2 nu) r / l); PD, mass 1.

    Half-integer nu (1/2, 3/2, 5/2, ...) use the elementary form exp(-x) * polynomial(x).
    """
    nu = _check_positive("nu", nu)
    l = _check_positive("lengthscale", lengthscale)
    nu_s = to_sympy_number(nu)
    x = sympy.sqrt(2 * nu_s) * R / _L
    if (2 * nu) == int(2 * nu) and int(2 * nu) % 2 == 1 and nu < 20:
        n = int(nu - 0.5)
        poly = sum(sympy.factorial(n + k) / (sympy.factorial(k) * sympy.factorial(n - k))
                   * (2 * x) ** (n - k) for k in range(n + 1))
        expr = sympy.exp(-x) * sympy.factorial(n) / sympy.factorial(2 * n) * poly
    else:
        expr = 2 ** (1 - nu_s) / sympy.gamma(nu_s) * x**nu_s * sympy.besselk(nu_s, x)
    return RadialKernel(expr, {"l": l}, name=f"matern(nu={nu:g}, l={l:g})",
                        family=("matern", {"nu": nu, "lengthscale": l}))


def exponential_power(alpha=1.5, lengthscale=1.0):
    """Exponential power (stable) kernel exp(-(r / l)^alpha), 0 < alpha <= 2; PD, mass 1.

    Its spectral measure has no elementary closed form; it is heavy-tailed,
    mu(rho) ~ rho^(-d-alpha) for alpha < 2.
    """
    alpha = _check_positive("alpha", alpha)
    if alpha > 2:
        raise KernelDefinitionError(
            f"alpha must be in (0, 2] (exp(-r^alpha) is not positive definite for alpha > 2), got {alpha!r}"
        )
    l = _check_positive("lengthscale", lengthscale)
    expr = sympy.exp(-(R / _L) ** to_sympy_number(alpha))
    return RadialKernel(expr, {"l": l}, name=f"exponential_power(alpha={alpha:g}, l={l:g})",
                        family=("exponential_power", {"alpha": alpha, "lengthscale": l}))


def rational_quadratic(alpha=1.0, lengthscale=1.0):
    """Rational quadratic kernel (1 + r^2 / (2 alpha l^2))^(-alpha); a Gaussian scale mixture, PD."""
    alpha = _check_positive("alpha", alpha)
    l = _check_positive("lengthscale", lengthscale)
    a = to_sympy_number(alpha)
    expr = (1 + R**2 / (2 * a * _L**2)) ** (-a)
    return RadialKernel(expr, {"l": l}, name=f"rational_quadratic(alpha={alpha:g}, l={l:g})",
                        family=("rational_quadratic", {"alpha": alpha, "lengthscale": l}))


def delta_gaussian(sigma1=1.0, sigma2=10.0):
    """Delta-Gaussian exp(-r^2/(2 sigma1^2)) - exp(-r^2/(2 sigma2^2)): indefinite, k(0) = 0."""
    s1 = _check_positive("sigma1", sigma1)
    s2 = _check_positive("sigma2", sigma2)
    if s1 == s2:
        raise KernelDefinitionError(f"sigma1 and sigma2 must differ (both are {s1!r}): the kernel is 0")
    return gaussian(s1) - gaussian(s2)


def spherical_polynomial(a=2.0, p=2):
    """Spherical polynomial kernel (1 - r^2 / a^2)^p on r <= 2, zero extension beyond (support 2).

    On l2-normalised data ``||x - y||^2 = 2 - 2 <x, y>``, so this is the polynomial dot-product
    kernel (1 - 2/a^2 + 2 <x, y>/a^2)^p. Requires a >= 2 (the base must be >= 0 on [0, 2]) and
    an integer p >= 1.
    """
    a = _check_positive("a", a)
    if a < 2:
        raise KernelDefinitionError(f"a must be >= 2 so that 1 - r^2/a^2 >= 0 on [0, 2], got {a!r}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or p != int(p) or p < 1:
        raise KernelDefinitionError(f"p must be an integer >= 1, got {p!r}")
    p = int(p)
    A = sympy.Symbol("a", real=True)
    expr = (1 - R**2 / A**2) ** p
    return RadialKernel(expr, {"a": a}, support=2.0, name=f"spherical_polynomial(a={a:g}, p={p})",
                        family=("spherical_polynomial", {"a": a, "p": p}))


def _u():
    return 1 - R**2 / 2  # <x, y> for unit vectors at distance r


def arccos0_sphere():
    """Zero-order arc-cosine kernel on the unit sphere, kappa0(u) = 1 - arccos(u)/pi, u = 1 - r^2/2.

    Support [0, 2]; square-root edge at r = 2.
    """
    u = _u()
    return RadialKernel(1 - sympy.acos(u) / sympy.pi, support=2.0, name="arccos0_sphere",
                        family=("arccos0_sphere", {}))


def arccos1_sphere():
    """First-order arc-cosine kernel on the unit sphere,
    kappa1(u) = (u (pi - arccos u) + sqrt(1 - u^2)) / pi, u = 1 - r^2/2. Support [0, 2]."""
    u = _u()
    expr = (u * (sympy.pi - sympy.acos(u)) + R * sympy.sqrt(4 - R**2) / 2) / sympy.pi
    return RadialKernel(expr, support=2.0, name="arccos1_sphere", family=("arccos1_sphere", {}))


def ntk_relu_sphere():
    """NTK of a two-layer ReLU network on the unit sphere (AISTATS 2021, Theorem 4):

    k(r) = (2 - r^2)/pi * arccos(r^2/2 - 1) + r/(2 pi) * sqrt(4 - r^2),  0 <= r <= 2,

    i.e. u kappa0(u) + kappa1(u) with u = 1 - r^2/2; k(0) = 2; zero beyond r = 2.
    """
    expr = (2 - R**2) / sympy.pi * sympy.acos(R**2 / 2 - 1) + R / (2 * sympy.pi) * sympy.sqrt(4 - R**2)
    return RadialKernel(expr, support=2.0, name="ntk_relu_sphere", family=("ntk_relu_sphere", {}))


def log_kernel(sigma=1.0):
    """Log kernel -log(1 + r / sigma): conditionally PD, does not decay; no finite spectral measure."""
    s = _check_positive("sigma", sigma)
    S = sympy.Symbol("sigma", real=True)
    return RadialKernel(-sympy.log(1 + R / S), {"sigma": s}, name=f"log_kernel(sigma={s:g})",
                        family=("log_kernel", {"sigma": s}))


#: Library constructors by name (used by :func:`from_spec` and the CLI).
LIBRARY = {
    "gaussian": gaussian,
    "laplacian": laplacian,
    "matern": matern,
    "exponential_power": exponential_power,
    "rational_quadratic": rational_quadratic,
    "delta_gaussian": delta_gaussian,
    "spherical_polynomial": spherical_polynomial,
    "ntk_relu_sphere": ntk_relu_sphere,
    "arccos0_sphere": arccos0_sphere,
    "arccos1_sphere": arccos1_sphere,
    "log_kernel": log_kernel,
}


def _parse_number(name, text):
    try:
        value = float(text)
    except ValueError:
        raise KernelDefinitionError(f"parameter {name!r} must be a number, got {text!r}") from None
    return int(value) if value == int(value) and "." not in text and "e" not in text.lower() else value


def from_spec(spec, params=None, support=None):
    """Build a kernel from a library spec or a formula.

    Parameters
    ----------
    spec : str or RadialKernel
        ``"name"`` or ``"name:key=value,key=value"`` for a library kernel (e.g.
        ``"matern:nu=1.5"``, ``"spherical_polynomial:a=2,p=2"``), or a formula in ``r`` (parsed
        through the whitelist, with ``params`` declaring its parameters).
    params : mapping, optional
        Parameter values: keyword arguments for a library kernel, or the formula's parameters.
    support : float, optional
        Support radius for a formula (library kernels fix their own).
    """
    if isinstance(spec, RadialKernel):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise KernelDefinitionError(f"kernel spec must be a non-empty string, got {spec!r}")
    text = spec.strip()
    head, _, tail = text.partition(":")
    if head.strip() in LIBRARY and (":" in text or text == head):
        kwargs = {}
        for item in filter(None, (t.strip() for t in tail.split(","))):
            key_, eq, val = item.partition("=")
            if not eq:
                raise KernelDefinitionError(f"kernel spec item {item!r} must look like name=value")
            kwargs[key_.strip()] = _parse_number(key_.strip(), val.strip())
        kwargs.update(params or {})
        ctor = LIBRARY[head.strip()]
        if support is not None:
            raise KernelDefinitionError(f"support cannot be set for the library kernel {head!r}")
        try:
            return ctor(**kwargs)
        except TypeError as exc:
            import inspect

            allowed = ", ".join(inspect.signature(ctor).parameters)
            raise KernelDefinitionError(
                f"kernel {head!r} got unknown parameters {sorted(kwargs)}; allowed: {allowed or 'none'}"
            ) from exc
    if text.replace("_", "").isalnum() and text.isidentifier() and text != "r" and text not in FUNCTIONS:
        raise KernelDefinitionError(
            f"unknown kernel {text!r}; library kernels: {', '.join(LIBRARY)} (or write a formula in r)"
        )
    return RadialKernel.from_string(text, params=params, support=support)
