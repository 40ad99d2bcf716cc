"""Normal form of piecewise formulas: max/min/abs/Heaviside/sign/Piecewise -> pieces and a support.

A formula such as ``max(1 - r, 0)**3``, ``Heaviside(1 - r) * (1 - r)**2`` or
``Piecewise((1 - 1.5*r + 0.5*r**3, r < 1), (0, True))`` is one analytic expression on each of
finitely many intervals of r. :func:`normal_form` finds those intervals and expressions:

1. the *switching points* of the innermost non-analytic node (where two arguments of a max/min
   cross, where the argument of abs/sign/Heaviside vanishes, where a Piecewise condition flips)
   are located exactly (real roots of polynomials, exact algebraic numbers) or, for
   non-polynomial arguments, by sign changes on a dense grid refined by bisection in mpmath at
   50 digits;
2. on each interval between them the node is replaced by its branch at the interval's midpoint
   (exact rational), and the procedure recurses until no node is left;
3. adjacent equal pieces are merged; trailing zero pieces become the support R (the smaller of
   it and a given ``support``).

The result is one of three normal forms, which every downstream path (evaluation, analysis,
transform) then sees:

* one analytic expression on [0, R] (R finite or not): ``max(1 - r, 0)**3`` becomes the kernel
  ``(1 - r)**3`` with support 1, the same kernel as the one written with ``support=1``;
* polynomial pieces on [0, b_1], ..., [b_(m-1), R]: a sympy ``Piecewise((P_1, r <= b_1), ...,
  (P_m, True))`` with support R, transformed exactly as a whole (``transforms/_polynomial.py``);
* other pieces: the linear combination sum_i (e_i - e_(i+1)) 1[r <= b_i] (e_(m+1) = 0 when R is
  finite, the last term without support otherwise) of analytic kernels with supports. Each term
  is the continuation of analytic pieces to [0, b_i]; one that is not finite there is refused.

Refused, with the reason: switching points that cannot be located, more than :data:`MAX_PIECES`
pieces (``abs(cos(r))`` switches infinitely often: not piecewise-analytic), a kernel that is
identically zero.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import sympy

from ..exceptions import KernelDefinitionError
from ._parse import R

__all__ = []  # private module

#: The non-analytic node types that are normalised away.
NODE_TYPES = (sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside, sympy.sign, sympy.Piecewise)
#: At most this many pieces (as the exact polynomial transform).
MAX_PIECES = 64
_GRID_TOP = 1e8  # switching points of non-polynomial arguments are searched on [0, 1e8]
_ROOT_DPS = 50


def has_piecewise(expr):
    """True when ``expr`` holds a max/min/abs/Heaviside/sign/Piecewise node depending on r."""
    return any(isinstance(node, NODE_TYPES) and node.has(R) for node in sympy.preorder_traversal(expr))


def _exact(expr):
    floats = expr.atoms(sympy.Float)
    return expr.xreplace({f: sympy.Rational(f) for f in floats}) if floats else expr


def _innermost(expr):
    """A non-analytic node depending on r whose arguments hold no such node, or None."""
    for node in sympy.postorder_traversal(expr):
        if isinstance(node, NODE_TYPES) and node.has(R):
            return node
    return None


def _arguments_of_switch(node):
    """The functions of r whose zeros are the node's switching points."""
    if isinstance(node, (sympy.Max, sympy.Min)):
        args = list(node.args)
        return [a - b for i, a in enumerate(args) for b in args[i + 1 :]]
    if isinstance(node, sympy.Piecewise):
        out = []
        for _, cond in node.args:
            for rel in cond.atoms(sympy.core.relational.Relational):
                out.append(rel.lhs - rel.rhs)
        return out
    return [node.args[0]]  # Abs, sign, Heaviside (its optional second argument is H(0))


def _as_number(x):
    """A root as a short exact rational when it is one (to 40 digits), else as it is."""
    if x.is_Rational:
        return x
    value = sympy.N(x, _ROOT_DPS)
    frac = Fraction(str(value)).limit_denominator(10**6)
    if abs(sympy.Rational(frac.numerator, frac.denominator) - value) < sympy.Float(10) ** -40:
        return sympy.Rational(frac.numerator, frac.denominator)
    return x


def _roots(f, lo, hi, text):
    """Zeros of f (a function of r) in the open interval (lo, hi), sorted, exact where possible."""
    f = _exact(f)
    num = sympy.numer(sympy.together(f)) if f.is_rational_function(R) else f
    if not num.has(R):
        return []
    if num.is_polynomial(R):
        poly = sympy.Poly(num, R)
        if all(c.is_number for c in poly.all_coeffs()):
            out = []
            for root in set(sympy.real_roots(poly)):
                if (root > lo) == sympy.true and (hi == sympy.oo or (root < hi) == sympy.true):
                    out.append(_as_number(root))
            return sorted(out, key=lambda x: float(x))
    return _numeric_roots(num, lo, hi, text)


def _numeric_roots(f, lo, hi, text):
    """Sign changes of f on a dense grid of (lo, min(hi, 1e8)), refined by bisection at 50 digits."""
    top = float(hi) if hi != sympy.oo else _GRID_TOP
    a = float(lo)
    grid = np.unique(
        np.concatenate(
            [
                np.linspace(a, min(top, a + 50.0), 20001),
                np.geomspace(max(a, 1e-8), top, 20001) if top > max(a, 1e-8) else [],
            ]
        )
    )
    grid = grid[(grid > a) & (grid < top)]
    fn = sympy.lambdify(R, f, modules="numpy")
    with np.errstate(all="ignore"):
        vals = np.broadcast_to(np.asarray(fn(grid), dtype=np.float64), grid.shape)
    if np.any(np.isnan(vals)):
        raise KernelDefinitionError(
            f"kernel formula {text}: cannot locate where {f} changes sign (it is not defined at "
            f"r = {float(grid[np.argmax(np.isnan(vals))]):.6g})"
        )
    sg = np.sign(vals)
    cross = np.nonzero(sg[:-1] * sg[1:] < 0)[0]
    zero = np.nonzero(sg == 0)[0]
    if cross.size + zero.size > MAX_PIECES:
        raise KernelDefinitionError(
            f"kernel formula {text} is not piecewise analytic with at most {MAX_PIECES} pieces: "
            f"{f} changes sign more than {MAX_PIECES} times on r > 0"
        )
    fm = sympy.lambdify(R, f, modules="mpmath")
    out = [sympy.Rational(Fraction(float(grid[j]))) for j in zero]
    with mpmath.workdps(_ROOT_DPS + 10):
        for j in cross:
            x0, x1 = mpmath.mpf(float(grid[j])), mpmath.mpf(float(grid[j + 1]))
            s0 = mpmath.sign(fm(x0))
            for _ in range(400):
                mid = (x0 + x1) / 2
                sm = mpmath.sign(fm(mid))
                if sm == 0:
                    x0 = x1 = mid
                    break
                x0, x1 = (mid, x1) if sm == s0 else (x0, mid)
                if x1 - x0 < mpmath.mpf(10) ** (-_ROOT_DPS) * max(1, abs(x0)):
                    break
            out.append(_as_number(sympy.Float(mpmath.nstr((x0 + x1) / 2, _ROOT_DPS), _ROOT_DPS)))
    return sorted(set(out), key=lambda x: float(x))


def _value(expr, t):
    v = sympy.N(expr.subs(R, t), 30)
    if not v.is_real or v.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    return v


def _branch(node, t, text):
    """The node's active branch at r = t (its arguments are analytic)."""
    if isinstance(node, (sympy.Max, sympy.Min)):
        vals = [_value(a, t) for a in node.args]
        if any(v is None for v in vals):
            raise KernelDefinitionError(f"kernel formula {text}: {node} is not real at r = {float(t):.6g}")
        pick = max if isinstance(node, sympy.Max) else min
        return node.args[vals.index(pick(vals))]
    if isinstance(node, sympy.Piecewise):
        for value, cond in node.args:
            c = cond.subs(R, t)
            if c not in (sympy.true, sympy.false):
                c = sympy.true if bool(c.evalf(30)) else sympy.false
            if c == sympy.true:
                return value
        raise KernelDefinitionError(
            f"kernel formula {text}: the Piecewise {node} has no branch for r = {float(t):.6g} "
            "(end it with (value, True))"
        )
    v = _value(node.args[0], t)
    if v is None:
        raise KernelDefinitionError(f"kernel formula {text}: {node} is not real at r = {float(t):.6g}")
    if isinstance(node, sympy.Abs):
        return node.args[0] if v >= 0 else -node.args[0]
    s = 1 if v > 0 else (-1 if v < 0 else 0)
    if isinstance(node, sympy.sign):
        return sympy.Integer(s)
    if s == 0:  # Heaviside of an argument that vanishes on a whole interval
        h0 = node.args[1] if len(node.args) > 1 else None
        if h0 is None:
            raise KernelDefinitionError(
                f"kernel formula {text}: Heaviside({node.args[0]}) is Heaviside(0) on a whole interval"
            )
        return h0
    return sympy.Integer(1 if s > 0 else 0)


def _midpoint(lo, hi):
    """An exact rational point inside (lo, hi) (hi may be oo)."""
    if hi == sympy.oo:
        return sympy.Rational(Fraction(float(lo))) + 1 if lo.is_Rational else sympy.ceiling(lo) + 1
    a, b = sympy.N(lo, 40), sympy.N(hi, 40)
    return sympy.Rational(Fraction(str(sympy.N((a + b) / 2, 40))).limit_denominator(10**12))


def _split(expr, lo, hi, text, depth=0):
    """[(lo, hi, analytic expression), ...] covering (lo, hi)."""
    node = _innermost(expr)
    if node is None:
        return [(lo, hi, expr)]
    if depth > 200:
        raise KernelDefinitionError(f"kernel formula {text} nests too many max/min/abs/Piecewise nodes")
    points = set()
    for f in _arguments_of_switch(node):
        points.update(_roots(f, lo, hi, text))
    cuts = [lo] + sorted(points, key=lambda x: float(x)) + [hi]
    if len(cuts) - 1 > MAX_PIECES:
        raise KernelDefinitionError(
            f"kernel formula {text} has more than {MAX_PIECES} pieces; at most {MAX_PIECES} are supported"
        )
    out = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        t = _midpoint(a, b)
        sub = expr.xreplace({node: _branch(node, t, text)})
        out += _split(sub, a, b, text, depth + 1)
        if len(out) > 4 * MAX_PIECES:
            raise KernelDefinitionError(
                f"kernel formula {text} has more than {MAX_PIECES} pieces; at most {MAX_PIECES} are supported"
            )
    return out


def _is_zero(expr, lo, hi):
    e = sympy.expand(expr)
    if e == 0:
        return True
    if e.is_polynomial(R) or not e.has(R):
        return False
    top = hi if hi != sympy.oo else lo + 10
    for w in (0.1, 0.3, 0.5, 0.7, 0.9):
        v = _value(e, lo + (top - lo) * sympy.Rational(str(w)))
        if v is None or abs(v) > 1e-25:
            return False
    return True


def _same(e1, e2):
    return sympy.expand(e1 - e2) == 0


def _is_poly(expr):
    if not expr.is_polynomial(R):
        return False
    return all(c.is_number for c in sympy.Poly(sympy.expand(_exact(expr)), R).all_coeffs())


def normal_form(expr, support, text):
    """The normal form of a piecewise formula (module docstring).

    Returns
    -------
    ("single", expr, support) or ("piecewise", Piecewise, support) or ("sum", [(expr_i, b_i)])
        b_i = None for a last term without support.
    """
    hi = sympy.oo if support is None else sympy.Rational(Fraction(float(support)))
    pieces = _split(_exact(expr) if expr.atoms(sympy.Float) else expr, sympy.Integer(0), hi, text)
    merged = []
    for a, b, e in pieces:
        e = sympy.simplify(e) if e.has(sympy.Abs, sympy.sign) else e
        if merged and _same(merged[-1][2], e):
            merged[-1] = (merged[-1][0], b, merged[-1][2])
        else:
            merged.append((a, b, e))
    while merged and _is_zero(merged[-1][2], merged[-1][0], merged[-1][1]):
        merged.pop()
    if not merged:
        raise KernelDefinitionError(f"kernel formula {text} is identically zero on r >= 0")
    top = merged[-1][1]
    new_support = None if top == sympy.oo else float(top)
    if len(merged) == 1:
        return "single", merged[0][2], new_support
    if new_support is not None and all(_is_poly(e) for _, _, e in merged):
        branches = [(e, R <= b) for _, b, e in merged[:-1]] + [(merged[-1][2], sympy.true)]
        return "piecewise", sympy.Piecewise(*branches, evaluate=False), new_support
    terms = []
    for i, (_, b, e) in enumerate(merged):
        nxt = merged[i + 1][2] if i + 1 < len(merged) else sympy.Integer(0)
        terms.append((sympy.expand(e - nxt) if _is_poly(e) else e - nxt, None if b == sympy.oo else float(b)))
    return "sum", terms, new_support


def check_continuation(atom, index, text):
    """Refuse a term of the ``"sum"`` form that is not finite on [0, b] (its continuation)."""
    top = atom.support if atom.support is not None else 1e3
    grid = np.concatenate([np.linspace(0.0, top, 2001), np.geomspace(1e-8, top, 200)])
    with np.errstate(all="ignore"):
        vals = np.asarray(atom(grid), dtype=np.float64)
    if not np.all(np.isfinite(vals)) or not math.isfinite(atom.value_at_zero()):
        bad = grid[np.argmax(~np.isfinite(vals))] if not np.all(np.isfinite(vals)) else 0.0
        raise KernelDefinitionError(
            f"kernel formula {text}: its pieces are analytic, but the piece ending at r = "
            f"{atom.support if atom.support is not None else 'inf'} continued to smaller r as the term "
            f"{atom.expr} of the normal form sum_i (e_i - e_(i+1)) 1[r <= b_i] is not finite at "
            f"r = {float(bad):.6g} (term {index}); spectralkit transforms piecewise kernels term by term"
        )
