"""The library of named kernel families: one registry record per family.

A :class:`Family` holds everything spectralkit knows about a family, so that adding one is one
record (plus its tests):

- its parameters (:class:`Param`: name, default, rule, documentation) and cross-parameter checks;
- the sympy expression of k(r) and the support radius;
- ``measure``: how the transform layer computes its spectral density exactly — a builder name of
  :mod:`spectralkit.transforms` and its arguments — or None (the expression is then recognised or
  transformed numerically);
- ``multiplier``: for PD families whose frequency law is a Gaussian scale mixture
  w = t g / l (g ~ N(0, I_d), t an independent radial multiplier shared by the row), a sampler
  of t; the sampling layer turns it into an exact frequency sampler;
- ``symbolic``: whether sympy's Hankel transform is worth a try (it times out on some families).

The public constructors (``gaussian``, ``matern``, ...) are generated from the records: their
signatures and docstrings come from the parameter tables, and every kernel they build carries the
label ``family = (name, parameters)`` that the upper layers dispatch on.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy

from .._numerics.random import positive_stable
from ..exceptions import KernelDefinitionError
from ._kernel import R, RadialKernel, to_sympy_number

__all__ = ["Param", "Family", "REGISTRY", "LIBRARY", "from_spec"]


@dataclass(frozen=True)
class Param:
    """One parameter of a family: ``rule`` in {"positive", "positive_integer", "real"}."""

    name: str
    default: object
    rule: str
    doc: str
    upper: float | None = None  # inclusive upper bound (e.g. alpha <= 2)
    lower: float | None = None  # inclusive lower bound other than the rule's

    def validate(self, value: float) -> int | float:
        """The validated value (float, or int for integer rules); KernelDefinitionError otherwise."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            raise KernelDefinitionError(
                f"{self.name} must be a finite real number, got {type(value).__name__} {value!r}"
            )
        if self.rule == "positive_integer":
            if value != int(value) or value < 1:
                raise KernelDefinitionError(f"{self.name} must be an integer >= 1, got {value!r}")
            return int(value)
        value = float(value)
        if self.rule == "positive" and not value > 0:
            raise KernelDefinitionError(f"{self.name} must be > 0, got {value!r}")
        if self.lower is not None and value < self.lower:
            raise KernelDefinitionError(f"{self.name} must be >= {self.lower:g}, got {value!r}")
        if self.upper is not None and value > self.upper:
            raise KernelDefinitionError(f"{self.name} must be <= {self.upper:g} ({self.doc}), got {value!r}")
        return value


@dataclass(frozen=True)
class Family:
    """A library kernel family (see the module docstring)."""

    name: str
    doc: str
    params: tuple[Param, ...]
    expression: Callable[[dict], object]
    support: float | None = None
    check: Callable[[dict], None] | None = None
    measure: Callable[[dict], tuple] | None = None
    multiplier: Callable[[int, np.random.Generator, dict], np.ndarray] | None = None
    norm_law: Callable[[int, np.random.Generator, dict, int], np.ndarray] | None = None
    symbolic: bool = True
    display: Callable[[dict], str] | None = None
    label: Callable[[dict], tuple] | None = None  # family label of the built kernel, if not (name, values)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def values(self, **kwargs: float) -> dict[str, int | float]:
        """Validated parameter values (defaults filled in); KernelDefinitionError for unknown ones."""
        allowed = [p.name for p in self.params]
        unknown = sorted(set(kwargs) - set(allowed))
        if unknown:
            raise KernelDefinitionError(
                f"kernel {self.name!r} got unknown parameters {unknown}; "
                f"allowed: {', '.join(allowed) or 'none'}"
            )
        out = {p.name: p.validate(kwargs.get(p.name, p.default)) for p in self.params}
        if self.check is not None:
            self.check(out)
        return out

    def create(self, **kwargs: float) -> RadialKernel:
        """Build the kernel (a RadialKernel labelled with this family)."""
        values = self.values(**kwargs)
        built = self.expression(values)
        if isinstance(built, RadialKernel):  # a combination of other families (delta_gaussian)
            return built
        expr, symbol_values = built if isinstance(built, tuple) else (built, {})
        name = (
            self.display(values)
            if self.display
            else (
                f"{self.name}({', '.join(f'{k}={v:g}' for k, v in values.items())})" if values else self.name
            )
        )
        label = self.label(values) if self.label else (self.name, values)
        return RadialKernel(expr, symbol_values, support=self.support, name=name, family=label)


_L = sympy.Symbol("l", real=True)


#: the range of a family's length scales: beyond it 1/l or l^2 overflow in the derivations (l = 1e-320
#: was "rho must be finite and >= 0", l = 1e308 "math domain error"); the kernel learners' range too
_SCALE_RANGE = {"lower": 1e-100, "upper": 1e100}


def _lengthscale_param(default=1.0):
    return Param("lengthscale", default, "positive", "length scale l in [1e-100, 1e100]", **_SCALE_RANGE)


def _matern_expression(nu, l_symbol):
    """2^(1-nu)/Gamma(nu) x^nu K_nu(x), x = sqrt(2 nu) r / l; exp(-x) x polynomial for half-integer nu."""
    nu_s = to_sympy_number(nu)
    x = sympy.sqrt(2 * nu_s) * R / l_symbol
    if (2 * nu) == int(2 * nu) and int(2 * nu) % 2 == 1 and nu < 20:
        n = int(nu - 0.5)
        poly = sum(
            sympy.factorial(n + k) / (sympy.factorial(k) * sympy.factorial(n - k)) * (2 * x) ** (n - k)
            for k in range(n + 1)
        )
        return sympy.exp(-x) * sympy.factorial(n) / sympy.factorial(2 * n) * poly
    return 2 ** (1 - nu_s) / sympy.gamma(nu_s) * x**nu_s * sympy.besselk(nu_s, x)


def _gaussian_measure(p, b_factor=2):
    return "poly_gaussian", {
        "coeffs": [sympy.Integer(1)],
        "family": "gaussian",
        "b": 1 / (b_factor * to_sympy_number(p["lengthscale"]) ** 2),
    }


def _exp_power_measure(p):
    alpha, l = p["alpha"], p["lengthscale"]
    if alpha == 2.0:  # exp(-(r/l)^2) = exp(-r^2 / (2 (l / sqrt 2)^2))
        return _gaussian_measure(p, b_factor=1)
    if alpha == 1.0:
        return "matern", {"c": 1.0, "nu": 0.5, "lengthscale": l}
    return "exponential_power", {"c": 1.0, "alpha": alpha, "lengthscale": l}


def _sphere_u():
    return 1 - R**2 / 2  # <x, y> for unit vectors at distance r


def _sphere_angle():
    """arccos(1 - r^2/2), the angle between unit vectors at distance r, as 2 atan(r / sqrt(4 - r^2)).

    Equal on [0, 2]; sympy expands the arctangent form at r = 0 and r = 2 in about 1 s, the arccosine
    form in 8-15 s (the branch point of arccos at -1).
    """
    return 2 * sympy.atan(R / sympy.sqrt(4 - R**2))


def _bessel_expression(nu, x):
    """Omega_(2 nu + 2)(x) = Gamma(nu + 1) (2/x)^nu J_nu(x): sin(x)/x for nu = 1/2, cos(x) for -1/2."""
    if nu == 0.5:
        return sympy.sin(x) / x
    if nu == -0.5:
        return sympy.cos(x)
    nu_s = to_sympy_number(nu)
    return sympy.gamma(nu_s + 1) * (2 / x) ** nu_s * sympy.besselj(nu_s, x)


def _bessel_norms(n, rng, p, dim):
    """Exact frequency norms of Omega_(2 nu + 2)(r / l) on R^dim: (rho l)^2 ~ Beta(d/2, nu - d/2 + 1)."""
    s = p["nu"] - 0.5 * dim
    if s < -1:
        raise ValueError(f"bessel(nu={p['nu']:g}) has no finite spectral measure in d = {dim}")
    if s == -1:
        return np.full(n, 1.0 / p["lengthscale"])
    return np.sqrt(rng.beta(0.5 * dim, s + 1.0, n)) / p["lengthscale"]


def _check_delta(p):
    if p["sigma1"] == p["sigma2"]:
        raise KernelDefinitionError(
            f"sigma1 and sigma2 must differ (both are {p['sigma1']!r}): the kernel is 0"
        )


def _check_spherical(p):
    if p["a"] < 2:
        raise KernelDefinitionError(f"a must be >= 2 so that 1 - r^2/a^2 >= 0 on [0, 2], got {p['a']!r}")


_FAMILIES = (
    Family(
        "gaussian",
        "Gaussian kernel exp(-r^2 / (2 l^2)); PD in every dimension, spectral mass 1.",
        (_lengthscale_param(),),
        lambda p: (sympy.exp(-(R**2) / (2 * _L**2)), {"l": p["lengthscale"]}),
        measure=_gaussian_measure,
        multiplier=lambda n, rng, p: np.ones(n),
        display=lambda p: f"gaussian(l={p['lengthscale']:g})",
    ),
    Family(
        "laplacian",
        "Laplacian (exponential) kernel exp(-r / l) = Matérn nu = 1/2; PD, mass 1.",
        (_lengthscale_param(),),
        lambda p: (sympy.exp(-R / _L), {"l": p["lengthscale"]}),
        measure=lambda p: ("matern", {"c": 1.0, "nu": 0.5, "lengthscale": p["lengthscale"]}),
        multiplier=lambda n, rng, p: np.sqrt(1.0 / rng.chisquare(1.0, n)),
        display=lambda p: f"laplacian(l={p['lengthscale']:g})",
        label=lambda p: ("matern", {"nu": 0.5, "lengthscale": p["lengthscale"]}),
    ),
    Family(
        "matern",
        "Matérn kernel 2^(1-nu)/Gamma(nu) (sqrt(2 nu) r / l)^nu K_nu(sqrt(2 nu) r / l); PD, mass 1.\n\n"
        "Half-integer nu (1/2, 3/2, 5/2, ...) use the elementary form exp(-x) * polynomial(x).",
        (
            # nu = 400 warns (overflow in power), nu = 1e6 ran for minutes and 15 GB: nu > 100 is
            # the Gaussian to within the accuracy of the features
            Param(
                "nu", 1.5, "positive", "smoothness nu in (0, 100]; for larger nu use gaussian", upper=100.0
            ),
            _lengthscale_param(),
        ),
        lambda p: (_matern_expression(p["nu"], _L), {"l": p["lengthscale"]}),
        measure=lambda p: ("matern", {"c": 1.0, "nu": p["nu"], "lengthscale": p["lengthscale"]}),
        multiplier=lambda n, rng, p: np.sqrt(2.0 * p["nu"] / rng.chisquare(2.0 * p["nu"], n)),
        display=lambda p: f"matern(nu={p['nu']:g}, l={p['lengthscale']:g})",
    ),
    Family(
        "exponential_power",
        "Exponential power (stable) kernel exp(-(r / l)^alpha), 0 < alpha <= 2; PD, mass 1.\n\n"
        "Its spectral measure has no elementary closed form; it is heavy-tailed,\n"
        "mu(rho) ~ rho^(-d-alpha) for alpha < 2.",
        (
            Param("alpha", 1.5, "positive", "exponent in (0, 2] (not PD for alpha > 2)", upper=2.0),
            _lengthscale_param(),
        ),
        lambda p: (sympy.exp(-((R / _L) ** to_sympy_number(p["alpha"]))), {"l": p["lengthscale"]}),
        measure=_exp_power_measure,
        multiplier=lambda n, rng, p: np.sqrt(2.0 * positive_stable(p["alpha"] / 2.0, n, rng)),
        symbolic=False,  # sympy returns a Meijer-G form that cannot be evaluated beyond rho ~ 60
        display=lambda p: f"exponential_power(alpha={p['alpha']:g}, l={p['lengthscale']:g})",
    ),
    Family(
        "rational_quadratic",
        "Rational quadratic kernel (1 + r^2 / (2 alpha l^2))^(-alpha); a Gaussian scale mixture, PD.",
        (Param("alpha", 1.0, "positive", "shape alpha > 0"), _lengthscale_param()),
        lambda p: (
            (1 + R**2 / (2 * to_sympy_number(p["alpha"]) * _L**2)) ** (-to_sympy_number(p["alpha"])),
            {"l": p["lengthscale"]},
        ),
        measure=lambda p: (
            "rational_quadratic",
            {"c": 1.0, "alpha": p["alpha"], "lengthscale": p["lengthscale"]},
        ),
        multiplier=lambda n, rng, p: np.sqrt(rng.gamma(p["alpha"], 1.0 / p["alpha"], n)),
        display=lambda p: f"rational_quadratic(alpha={p['alpha']:g}, l={p['lengthscale']:g})",
    ),
    Family(
        "sinc",
        "Sinc kernel sin(r / l) / (r / l): the Fourier transform of the uniform measure on the sphere of\n"
        "radius 1/l in R^3. PD with mass 1 in d <= 3 (d = 1: a box, d = 2: an integrable singularity at\n"
        "rho = 1/l, d = 3: the sphere shell itself); no finite spectral measure for d >= 4.",
        (_lengthscale_param(),),
        lambda p: (sympy.sin(R / _L) / (R / _L), {"l": p["lengthscale"]}),
        measure=lambda p: ("bessel", {"c": 1.0, "nu": 0.5, "lengthscale": p["lengthscale"]}),
        norm_law=lambda n, rng, p, dim: _bessel_norms(n, rng, {"nu": 0.5, **p}, dim),
        symbolic=False,
        display=lambda p: f"sinc(l={p['lengthscale']:g})",
    ),
    Family(
        "bessel",
        "Bessel kernel Omega_(2 nu + 2)(r / l) = Gamma(nu + 1) (2 l / r)^nu J_nu(r / l), k(0) = 1: the\n"
        "average of cos(w.z) over the sphere ||w|| = 1/l in R^(2 nu + 2). On R^d its spectral measure is\n"
        "a Beta law of (rho l)^2 (nu > d/2 - 1; singular at rho = 1/l when nu < d/2), the sphere shell\n"
        "(nu = d/2 - 1) or not finite (nu < d/2 - 1). nu = 1/2 is sinc, nu = -1/2 is cos(r / l).",
        (Param("nu", 0.0, "real", "order nu >= -1/2", lower=-0.5), _lengthscale_param()),
        lambda p: (_bessel_expression(p["nu"], R / _L), {"l": p["lengthscale"]}),
        measure=lambda p: ("bessel", {"c": 1.0, "nu": p["nu"], "lengthscale": p["lengthscale"]}),
        norm_law=_bessel_norms,
        symbolic=False,
        display=lambda p: f"bessel(nu={p['nu']:g}, l={p['lengthscale']:g})",
    ),
    Family(
        "delta_gaussian",
        "Delta-Gaussian exp(-r^2/(2 sigma1^2)) - exp(-r^2/(2 sigma2^2)): indefinite, k(0) = 0.",
        (
            Param("sigma1", 1.0, "positive", "length scale of the positive Gaussian", **_SCALE_RANGE),
            Param("sigma2", 10.0, "positive", "length scale of the negative Gaussian", **_SCALE_RANGE),
        ),
        lambda p: (
            REGISTRY["gaussian"].create(lengthscale=p["sigma1"])
            - REGISTRY["gaussian"].create(lengthscale=p["sigma2"])
        ),
        check=_check_delta,
    ),
    Family(
        "spherical_polynomial",
        "Spherical polynomial kernel (1 - r^2 / a^2)^p on r <= 2, zero extension beyond (support 2).\n\n"
        "On l2-normalised data ``||x - y||^2 = 2 - 2 <x, y>``, so this is the polynomial dot-product\n"
        "kernel (1 - 2/a^2 + 2 <x, y>/a^2)^p. Requires a >= 2 (the base must be >= 0 on [0, 2]) and\n"
        "an integer p >= 1.",
        (Param("a", 2.0, "positive", "scale a >= 2"), Param("p", 2, "positive_integer", "degree p >= 1")),
        lambda p: ((1 - R**2 / sympy.Symbol("a", real=True) ** 2) ** p["p"], {"a": p["a"]}),
        support=2.0,
        check=_check_spherical,
        display=lambda p: f"spherical_polynomial(a={p['a']:g}, p={p['p']})",
    ),
    Family(
        "ntk_relu_sphere",
        "NTK of a two-layer ReLU network on the unit sphere (AISTATS 2021, Theorem 4):\n\n"
        "k(r) = (2 - r^2)/pi * arccos(r^2/2 - 1) + r/(2 pi) * sqrt(4 - r^2),  0 <= r <= 2,\n\n"
        "i.e. u kappa0(u) + kappa1(u) with u = 1 - r^2/2; k(0) = 2; zero beyond r = 2.",
        (),
        lambda p: (
            (2 - R**2) / sympy.pi * (sympy.pi - _sphere_angle()) + R / (2 * sympy.pi) * sympy.sqrt(4 - R**2)
        ),
        support=2.0,
        symbolic=False,
    ),
    Family(
        "arccos0_sphere",
        "Zero-order arc-cosine kernel on the unit sphere, kappa0(u) = 1 - arccos(u)/pi, u = 1 - r^2/2.\n\n"
        "Support [0, 2]; square-root edge at r = 2.",
        (),
        lambda p: 1 - _sphere_angle() / sympy.pi,
        support=2.0,
        symbolic=False,
    ),
    Family(
        "arccos1_sphere",
        "First-order arc-cosine kernel on the unit sphere,\n"
        "kappa1(u) = (u (pi - arccos u) + sqrt(1 - u^2)) / pi, u = 1 - r^2/2. Support [0, 2].",
        (),
        lambda p: (_sphere_u() * (sympy.pi - _sphere_angle()) + R * sympy.sqrt(4 - R**2) / 2) / sympy.pi,
        support=2.0,
        symbolic=False,
    ),
    Family(
        "log_kernel",
        "Log kernel -log(1 + r / sigma): conditionally PD, does not decay; no finite spectral measure.",
        (Param("sigma", 1.0, "positive", "scale sigma in [1e-100, 1e100]", **_SCALE_RANGE),),
        lambda p: (-sympy.log(1 + R / sympy.Symbol("sigma", real=True)), {"sigma": p["sigma"]}),
        display=lambda p: f"log_kernel(sigma={p['sigma']:g})",
    ),
)

#: Every library family by name.
REGISTRY: dict[str, Family] = {f.name: f for f in _FAMILIES}


def _param_type(param: Param) -> str:
    return "int" if param.rule == "positive_integer" else "float"


def _constructor(family: Family) -> Callable[..., RadialKernel]:
    """The public constructor of ``family``: typed parameters from its table, its docstring."""

    def build(*args: float, **kwargs: float) -> RadialKernel:
        names = [p.name for p in family.params]
        if len(args) > len(names):
            raise TypeError(f"{family.name}() takes {len(names)} positional arguments, got {len(args)}")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{family.name}() got multiple values for {name!r}")
            kwargs[name] = value
        return family.create(**kwargs)

    build.__name__ = build.__qualname__ = family.name
    build.__module__ = "spectralkit.kernels"
    # postponed annotations (text), like the rest of the package: typing.get_type_hints resolves
    # them in this module, where RadialKernel is defined
    build.__annotations__ = {p.name: _param_type(p) for p in family.params} | {"return": "RadialKernel"}
    build.__signature__ = inspect.Signature(
        [
            inspect.Parameter(
                p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default, annotation=_param_type(p)
            )
            for p in family.params
        ],
        return_annotation="RadialKernel",
    )
    params_doc = "".join(
        f"\n{p.name} : {_param_type(p)}, default {p.default!r}\n    {p.doc}." for p in family.params
    )
    build.__doc__ = (
        family.doc
        + ("\n\nParameters\n----------" + params_doc if family.params else "")
        + "\n\nReturns\n-------\nRadialKernel\n"
    )
    return build


#: Library constructors by name (used by :func:`from_spec` and the CLI).
LIBRARY: dict[str, Callable[..., RadialKernel]] = {name: _constructor(f) for name, f in REGISTRY.items()}


def _parse_number(name, text):
    try:
        value = float(text)
    except ValueError:
        raise KernelDefinitionError(f"parameter {name!r} must be a number, got {text!r}") from None
    if not math.isfinite(value):  # the parameter's validation names it (int(inf) raised OverflowError)
        return value
    return int(value) if value == int(value) and "." not in text and "e" not in text.lower() else value


def from_spec(
    spec: str | RadialKernel, params: Mapping[str, float] | None = None, support: float | None = None
) -> RadialKernel:
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

    Returns
    -------
    RadialKernel
    """
    if isinstance(spec, RadialKernel):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise KernelDefinitionError(f"kernel spec must be a non-empty string, got {spec!r}")
    if params is not None and not hasattr(params, "items"):
        raise KernelDefinitionError(
            f"params must be a mapping of names to numbers, got {type(params).__name__}"
        )
    text = spec.strip()
    head, _, tail = text.partition(":")
    head = head.strip()
    if head in REGISTRY and (":" in text or text == head):
        kwargs = {}
        for item in filter(None, (t.strip() for t in tail.split(","))):
            key_, eq, val = item.partition("=")
            if not eq:
                raise KernelDefinitionError(f"kernel spec item {item!r} must look like name=value")
            kwargs[key_.strip()] = _parse_number(key_.strip(), val.strip())
        kwargs.update(params or {})
        if support is not None:
            raise KernelDefinitionError(f"support cannot be set for the library kernel {head!r}")
        return REGISTRY[head].create(**kwargs)
    if text.isidentifier() and text != "r":
        raise KernelDefinitionError(
            f"unknown kernel {text!r}; library kernels: {', '.join(REGISTRY)} (or write a formula in r)"
        )
    return RadialKernel.from_string(text, params=params, support=support)
