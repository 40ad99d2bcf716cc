"""Whitelist parser that turns kernel formula text into a sympy expression.

The text is parsed with :mod:`ast` and every node is checked against a fixed whitelist
before anything is built; nothing is ever passed to ``eval``. Allowed are numbers, the
radius ``r``, declared parameter names, the operators ``+ - * / **`` (``^`` is read as a
power, as in most formula languages), unary ``+``/``-``, the constants ``pi`` and ``E``,
and calls of the functions in :data:`FUNCTIONS` with positional arguments.
"""

import ast

import sympy

from .exceptions import KernelDefinitionError

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
    from fractions import Fraction

    frac = Fraction(value).limit_denominator(1000)
    if float(frac) == value:
        return sympy.Rational(frac.numerator, frac.denominator)
    return sympy.Float(repr(value))


def _reject(text, what):
    raise KernelDefinitionError(
        f"kernel formula {text!r} is not allowed: {what}. A formula may use numbers, r, the declared "
        f"parameters, + - * / ** (or ^), pi, E and the functions {', '.join(sorted(FUNCTIONS))}."
    )


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
            return to_sympy_number(value)
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
            return op(build(node.left), build(node.right))
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
            if any(isinstance(a, ast.Starred) for a in node.args):
                _reject(text, f"starred arguments in the call of {name!r}")
            if arity is not None and len(node.args) != arity:
                _reject(text, f"{name} takes {arity} argument(s), got {len(node.args)}")
            if arity is None and len(node.args) < 2:
                _reject(text, f"{name} takes at least 2 arguments, got {len(node.args)}")
            return func(*[build(a) for a in node.args])
        _reject(text, f"the syntax element {type(node).__name__} is not allowed")

    try:
        expr = build(tree)
    except KernelDefinitionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, RecursionError) as exc:
        raise KernelDefinitionError(f"kernel formula {text!r} could not be built: {exc}") from None
    return sympy.sympify(expr), symbols
