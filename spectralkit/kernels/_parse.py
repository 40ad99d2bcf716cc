"""Whitelist parser that turns kernel formula text into a sympy expression.

The text is parsed with :mod:`ast` and every node is checked against a fixed whitelist
before anything is built; nothing is ever passed to ``eval``. Allowed are numbers, the
radius ``r``, declared parameter names, the operators ``+ - * / **`` (``^`` is read as a
power, as in most formula languages), unary ``+``/``-``, the constants ``pi`` and ``E``,
and calls of the functions in :data:`FUNCTIONS` with positional arguments.
"""

import ast
import math
from fractions import Fraction

import mpmath
import sympy

from .._numerics.budget import BudgetExceeded, run_with_budget
from ..exceptions import KernelDefinitionError

__all__ = []  # private module

R = sympy.Symbol("r", nonnegative=True, real=True)

#: Functions a formula may call, with their arities.
FUNCTIONS = {
    "exp": (sympy.exp, 1),
    "log": (sympy.log, 1),
    "sqrt": (sympy.sqrt, 1),
    "cos": (sympy.cos, 1),
    "sin": (sympy.sin, 1),
    "tan": (sympy.tan, 1),
    "cosh": (sympy.cosh, 1),
    "sinh": (sympy.sinh, 1),
    "tanh": (sympy.tanh, 1),
    # written out, so that every route sees the functions it knows
    "sech": (lambda x: 1 / sympy.cosh(x), 1),
    "sinc": (lambda x: sympy.sin(x) / x, 1),
    "acos": (sympy.acos, 1),
    "asin": (sympy.asin, 1),
    "atan": (sympy.atan, 1),
    "erf": (sympy.erf, 1),
    "erfc": (sympy.erfc, 1),
    "gamma": (sympy.gamma, 1),
    "besselj": (sympy.besselj, 2),
    "besselk": (sympy.besselk, 2),
    "besseli": (sympy.besseli, 2),
    "abs": (sympy.Abs, 1),
    "min": (sympy.Min, None),
    "max": (sympy.Max, None),
    # sympy's own spellings, as str(expr) prints them (like Heaviside and Piecewise below)
    "Abs": (sympy.Abs, 1),
    "Min": (sympy.Min, None),
    "Max": (sympy.Max, None),
    "sign": (sympy.sign, 1),
    "heaviside": (sympy.Heaviside, 1),
    "Heaviside": (sympy.Heaviside, 1),
    # Piecewise((value, condition), ..., (value, True)): built by _piecewise_call
    "piecewise": (sympy.Piecewise, -1),
    "Piecewise": (sympy.Piecewise, -1),
}
_COMPARE = {
    ast.Lt: sympy.StrictLessThan,
    ast.LtE: sympy.LessThan,
    ast.Gt: sympy.StrictGreaterThan,
    ast.GtE: sympy.GreaterThan,
}
CONSTANTS = {"pi": sympy.pi, "E": sympy.E}

_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_MAX_LENGTH = 2000
#: Constants in a formula are bounded (|x| <= 10^300, |x| >= 10^-300 unless 0): beyond that a
#: float64 kernel cannot be evaluated anyway, and exact arithmetic on such numbers (9^9^9,
#: 10**10**10, gamma(10**7)) takes hours and gigabytes before anything else can reject it.
_MAX_LOG10 = 300
#: Largest integer exponent of a non-constant base: (1 - r)**100000 has 10^5 terms when expanded.
_MAX_POWER = 1000
#: gamma(x) of a larger constant overflows float64 (gamma(171.7) ~ 1.8e308).
_MAX_GAMMA_ARG = 171


def to_sympy_number(value):
    """Exact sympy number for ``value`` when it is an integer or a short fraction, else a Float.

    Exact values keep closed forms exact: ``p=2.0`` gives the polynomial ``(...)**2``, ``nu=1.5``
    gives ``3/2``.
    """
    value = float(value) if not isinstance(value, int) else value
    if isinstance(value, int):
        return sympy.Integer(value)
    if value == int(value) and abs(value) < 2**53:
        return sympy.Integer(int(value))
    frac = Fraction(value).limit_denominator(1000)
    if float(frac) == value:
        return sympy.Rational(frac.numerator, frac.denominator)
    return sympy.Float(repr(value))


def _log10_magnitude(value):
    """log10 |value| of a sympy number (-inf for 0), evaluated at 15 digits (bounded inputs only)."""
    v = sympy.N(value, 15)
    if v.is_zero:
        return -math.inf
    re_, im_ = v.as_real_imag()
    big = max(abs(sympy.Float(re_)), abs(sympy.Float(im_)))
    return float(sympy.log(big, 10).evalf(15)) if big != 0 else -math.inf


#: CPU seconds for evaluating a constant with a special function of a large argument.
_SPECIAL_BUDGET = 2.0
_SPECIALS = (sympy.besselj, sympy.besselk, sympy.besseli, sympy.gamma, sympy.erf, sympy.erfc)


def _slow_special(number):
    """True for a constant applying a special function to a number of magnitude > 1e4 (mpmath's
    series can then run for minutes)."""
    specials = [f for f in number.atoms(sympy.Function) if isinstance(f, _SPECIALS)]
    return any(abs(a) > 10**4 for f in specials for a in f.atoms(sympy.Number) if a.is_finite)


def _check_magnitude(text, value):
    """Reject constants outside [10^-300, 10^300] in magnitude (the invariant of every number built)."""
    if not isinstance(value, sympy.Expr) or value.has(sympy.nan, sympy.zoo):
        return value
    if value.has(sympy.oo, -sympy.oo):
        _reject(text, "a constant is infinite")
    # a constant subexpression as a whole, else the numbers sympy collected in it (exp(-r) * 1e300
    # * 1e300 is 1.0e600*exp(-r))
    for number in [value] if value.is_number else value.atoms(sympy.Number):
        try:
            if _slow_special(number):  # mpmath may need minutes: evaluated under a CPU budget
                lg = run_with_budget(_log10_magnitude, (number,), _SPECIAL_BUDGET)
            else:
                lg = _log10_magnitude(number)
        except BudgetExceeded:
            _reject(
                text, f"the constant {sympy.sstr(number)[:40]} was not evaluated within {_SPECIAL_BUDGET:g} s"
            )
        except (
            ArithmeticError,
            ValueError,
            TypeError,
            RuntimeError,
            RecursionError,
            mpmath.libmp.NoConvergence,
        ) as exc:
            _reject(
                text, f"the constant {sympy.sstr(number)[:40]} cannot be evaluated ({type(exc).__name__})"
            )
        if lg > _MAX_LOG10 or (math.isfinite(lg) and lg < -_MAX_LOG10):
            _reject(
                text,
                f"the constant {sympy.sstr(number)[:40]} has magnitude 10^{lg:.0f}, outside "
                f"[10^-{_MAX_LOG10}, 10^{_MAX_LOG10}]",
            )
    return value


def _check_power(text, base, exponent):
    """Bound a power before sympy evaluates it exactly (9^9^9 would run for hours)."""
    if exponent.is_number and not exponent.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
        e = complex(sympy.N(exponent, 15))
        if base.is_number:
            if base.is_zero or abs(sympy.N(base, 15)) == 1:
                return
            lg = abs(e.real) * abs(_log10_magnitude(base)) if e.real else 0.0
            if lg > _MAX_LOG10:
                _reject(
                    text,
                    f"the power {sympy.sstr(base)[:20]}^{sympy.sstr(exponent)[:20]} has magnitude "
                    f"about 10^{lg:.3g}, beyond 10^{_MAX_LOG10}",
                )
        elif exponent.is_Integer and abs(int(exponent)) > _MAX_POWER:
            _reject(text, f"the integer exponent {int(exponent)} is larger than {_MAX_POWER} in magnitude")


def _reject(text, what):
    raise KernelDefinitionError(
        f"kernel formula {text!r} is not allowed: {what}. A formula may use numbers, r, the declared "
        f"parameters, + - * / ** (or ^), pi, E and the functions {', '.join(sorted(FUNCTIONS))}."
    )


def _condition(text, node, build):
    """A Piecewise condition: True, or a (chained) comparison such as r < 1 or 1 <= r < 2."""
    if isinstance(node, ast.Constant) and node.value is True:
        return sympy.true
    if not isinstance(node, ast.Compare):
        _reject(text, "a Piecewise condition must be True or a comparison such as r < 1 or 1 <= r < 2")
    parts = []
    left = build(node.left)
    for op, right_node in zip(node.ops, node.comparators):
        rel = _COMPARE.get(type(op))
        if rel is None:
            _reject(text, f"the comparison {type(op).__name__} is not allowed (use <, <=, >, >=)")
        right = build(right_node)
        parts.append(rel(left, right))
        left = right
    return sympy.And(*parts)


def _piecewise_call(text, node, build):
    """Piecewise((value, condition), ..., (value, True)) from its call node."""
    if node.keywords or not node.args:
        _reject(text, "Piecewise takes (value, condition) pairs, e.g. Piecewise((1 - r, r < 1), (0, True))")
    branches = []
    for arg in node.args:
        if not isinstance(arg, ast.Tuple) or len(arg.elts) != 2:
            _reject(text, "each Piecewise argument must be a (value, condition) pair, e.g. (1 - r, r < 1)")
        branches.append((build(arg.elts[0]), _condition(text, arg.elts[1], build)))
    try:
        return sympy.Piecewise(*branches)
    except (TypeError, ValueError) as exc:
        _reject(text, f"the Piecewise could not be built ({exc})")


def parse_formula(text, parameters=()):
    """Parse ``text`` into a sympy expression in ``r`` and the parameter symbols.

    Parameters
    ----------
    text : str
        The formula, e.g. ``"exp(-r**2 / (2*l**2))"``.
    parameters : iterable of str
        Names allowed besides ``r``.

    Returns
    -------
    expr : sympy.Expr
    symbols : dict of str to sympy.Symbol
        The parameter symbols used (all declared ones).
    """
    if not isinstance(text, str):
        raise KernelDefinitionError(f"kernel formula must be a string, got {type(text).__name__}")
    if len(text) > _MAX_LENGTH:
        raise KernelDefinitionError(
            f"kernel formula is {len(text)} characters long; at most {_MAX_LENGTH} are allowed"
        )
    if not text.strip():
        raise KernelDefinitionError("kernel formula is empty")
    symbols = {}
    for name in parameters:
        if not isinstance(name, str) or not name.isidentifier():
            raise KernelDefinitionError(f"parameter name {name!r} is not a valid identifier")
        if name == "r" or name in FUNCTIONS or name in CONSTANTS:
            raise KernelDefinitionError(
                f"parameter name {name!r} is reserved (r, the function names and pi, E are taken)"
            )
        symbols[name] = sympy.Symbol(name, real=True)
    try:
        # "^" is a power in formula languages; as Python's XOR it would bind looser than "*"
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise KernelDefinitionError(f"kernel formula {text!r} is not valid syntax: {exc.msg}") from None

    def build(node):
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                _reject(text, f"the constant {value!r} is not a real number")
            if isinstance(value, int) and value.bit_length() > 1000:
                _reject(text, f"the integer constant with {len(str(value))} digits is too large")
            if not math.isfinite(value):
                _reject(text, f"the constant {value!r} is not finite")
            return _check_magnitude(text, to_sympy_number(value))
        if isinstance(node, ast.Name):
            if node.id == "r":
                return R
            if node.id in symbols:
                return symbols[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            if node.id in FUNCTIONS:
                _reject(text, f"the function {node.id!r} must be called")
            _reject(text, f"the name {node.id!r} is unknown (declare parameters with params=...)")
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                _reject(text, f"the operator {type(node.op).__name__} is not allowed")
            left, right = build(node.left), build(node.right)
            if isinstance(node.op, ast.Pow):
                _check_power(text, left, right)
            return _check_magnitude(text, op(left, right))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return -build(node.operand)
            if isinstance(node.op, ast.UAdd):
                return build(node.operand)
            _reject(text, f"the unary operator {type(node.op).__name__} is not allowed")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                _reject(text, "only plain function names may be called (no attributes or expressions)")
            name = node.func.id
            if name not in FUNCTIONS:
                _reject(text, f"the function {name!r} is unknown")
            if node.keywords:
                _reject(text, f"keyword arguments in the call of {name!r}")
            func, arity = FUNCTIONS[name]
            if arity == -1:
                return _piecewise_call(text, node, build)
            if any(isinstance(a, ast.Starred) for a in node.args):
                _reject(text, f"starred arguments in the call of {name!r}")
            if arity is not None and len(node.args) != arity:
                _reject(text, f"{name} takes {arity} argument(s), got {len(node.args)}")
            if arity is None and len(node.args) < 2:
                _reject(text, f"{name} takes at least 2 arguments, got {len(node.args)}")
            args = [build(a) for a in node.args]
            if name == "gamma" and args[0].is_number and abs(complex(sympy.N(args[0], 15))) > _MAX_GAMMA_ARG:
                _reject(
                    text,
                    f"gamma of the constant {sympy.sstr(args[0])[:20]} overflows float64 "
                    f"(the argument must be at most {_MAX_GAMMA_ARG} in magnitude)",
                )
            return _check_magnitude(text, func(*args))
        _reject(text, f"the syntax element {type(node).__name__} is not allowed")

    try:
        expr = build(tree)
    except KernelDefinitionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, RecursionError) as exc:
        raise KernelDefinitionError(f"kernel formula {text!r} could not be built: {exc}") from None
    return sympy.sympify(expr), symbols
