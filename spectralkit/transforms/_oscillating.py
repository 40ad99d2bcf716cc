"""Oscillating kernels under Gaussian and rational-quadratic envelopes, exact in every d.

Two classes (docs/theory.md, "Oscillation under Gaussian and power-law envelopes"):

* **Gaussian envelope**: k(r) = exp(-a r^2) H(r), H = sum_j c_j r^(m_j) prod_i osc_ji(b_ji r) with
  each osc one of cos, sin, J_nu (nu >= 0) or cosh, sinh, I_nu (the series without alternating
  signs), any number per term (J0(r) cos(r), J0(r)^2), H even and entire (r^m times the factors'
  offsets r^0, r^1, r^nu an even power). With H(r) = sum_n h_n r^(2n)
  (the factors' series multiplied as power series in r^2) and the Laguerre transform
  of r^(2n) exp(-a r^2) (the polynomial-Gaussian closed form),

      mu(rho) = (4 pi a)^(-d/2) exp(-x) S(x),  S(x) = sum_n h_n n! a^(-n) L_n^(d/2-1)(x),  x = rho^2/(4a).

  The series converges like sum (b^2/(4a))^n / n!; its terms alternate and cancel (up to ~10^6 in
  d = 256 for b^2/a = 2). S is summed with the three-term Laguerre recurrence, vectorised in
  double-double with a running majorant of the rounding error (which follows |2n - 1 + nu - x|, not
  the far looser |L_n(x)| <= L_n(-x)); where that bound exceeds the target, the monomial form of
  the same partial sum (coefficients in mpmath once, Horner in double-double: it loses a few
  digits where the Laguerre form loses 15, small x in d = 256); what neither certifies, and calls
  of at most 48 points, in exact-integer fixed point (Python integers), the precision doubling
  until its own bound is met. mu is 0 beyond the radius where Szego's bound puts the radial
  density 40 decades below its peak (that bound: abs_error and mass_error).

* **Rational-quadratic envelope**: k(r) = c cos(b r) g(r) or c sin(b r)/r g(r), g(r) = (1 + r^2/s)^(-alpha).
  Finiteness: the amplitude decays like r^-p (p = 2 alpha, or 2 alpha + 1 for sin/r) and the density
  behaves like |rho - b|^(p - (d+1)/2) at the oscillation's frequency: a finite measure iff
  p > (d-1)/2, absolutely continuous with an integrable singularity, a jump or a kink at rho = b.
  With F_n the n-dimensional transform of g (the rational-quadratic closed form) and the identity
  F_n'(t) = -2 pi t F_(n+2)(t), the 1-D shift formula mu_1 = (F_1(rho - b) + F_1(rho + b))/2 and the
  dimension walk mu_(d+2) = -(1/(2 pi rho)) d mu_d/d rho give, for odd d = 2m + 1,

      mu_d(rho) = (1/2) sum_(sigma = +-b) sum_(j=0..m) P_(j,sigma)(1/rho) F_(2j+1)(|rho - sigma|),

  with polynomials P built exactly by D[P(u) F_n] = (u^3 P'(u)/(2 pi)) F_n + (1 - sigma u) P(u) F_(n+2),
  u = 1/rho. sin(b r)/r = int_0^b cos(t r) dt adds the antiderivative G of F_1, which the walk's first
  step turns back into F_1 (d >= 3). Even d: the Hankel integral turned onto the imaginary axis
  (:class:`_RQContour`); where its table falls short, at each rho the more accurate of it and the
  projection mu_d(rho) = 2 int_0^inf mu_(d+1)(sqrt(rho^2 + v^2)) dv of the odd walk
  (:class:`_RQHalfStep`; above the kink only where mu_(d+1) is not locally integrable,
  p < (d+1)/2) (:class:`_RQEven`); sin(b r)/r in d = 1:
  (1/2) int_(rho-b)^(rho+b) F_1 (:class:`_RQSinD1`); both tabulated in log|rho - b|
  (:class:`_KinkTable`). J_nu(b r)/r^nu factors: cosine mixtures of the same walk
  (:mod:`._bessel_mixture`).
"""

import functools
import itertools
import math
from fractions import Fraction

import gmpy2
import mpmath
import numpy as np
import scipy.special as sc
import sympy
from sympy.simplify.fu import TR8

from .._compiled import laguerre_bound_logs
from .._numerics.bigfloat import int_pair, to_gmpy
from .._numerics.chebyshev import fit_adaptive
from .._numerics.exact import two_product, two_sum
from .._numerics.quadrature import exp_sinh as _exp_sinh
from .._numerics.quadrature import panel_rule, power_law_end, unit_rule
from .._numerics.quadrature import tanh_sinh as _tanh_sinh
from .._numerics.special import log_besselk, log_sphere_area, scaled_bessel
from ..exceptions import TransformError
from ..kernels._parse import R
from ._forms import log_form, not_a_measure, vectorised
from ._mixture import _gaussian_factor
from ._registry import BUILDERS, builder, coefficient_of_r, matcher
from ._types import RadialTransform

__all__ = ["split_gaussian_poles"]

_EPS = np.finfo(float).eps
_TINY = 1e-300
#: double-double sums are accepted when their rounding bound is below this (relative), else mpmath
_FLOAT_TOL = 1e-13
_MAX_TERMS = 4000
_MAX_DPS = 600
_POLY_DPS = 100  # the dimension walk's polynomials are computed at no fewer digits than this
_MAX_BITS = 2048
#: coefficients per window of the bound envelope of |q_n| (zeros of q_n inside a window do not stop
#: the series)
_ENVELOPE = 4
#: the Gaussian-oscillation density is set to 0 where its bound times rho^(d-1) is this many decades
#: below the radial density's peak
_CUT_DECADES = 40
#: calls with at most this many points skip the double-double pass (measured break-even: numpy's
#: per-call overhead over the recurrence's ~100 steps against ~0.2-0.5 ms per fixed-point point)
_FEW_POINTS = 48
#: the double-double rounding-error constant of the Laguerre recurrence (64 units of 2^-106)
_DD_C = 2.0**-100


# ---------------------------------------------------------------------------------------------
# recognition
# ---------------------------------------------------------------------------------------------
def _number(x):
    value = complex(sympy.N(x, 30))
    if value.imag != 0 or not math.isfinite(value.real):
        raise TypeError(f"not a real number: {x}")
    return value.real


def _osc_factors(term, hyperbolic=False):
    """Split a product term into (coef, power of r, oscillations, other factors), or None.

    The oscillations are a tuple of (kind, frequency), kind "cos", "sin", "j0" or "j<nu>" (J_nu, the
    order as a float), one entry per factor (a positive integer power repeats it); with
    ``hyperbolic`` also "cosh", "sinh" and "i<nu>" (I_nu), the same series without alternating signs."""
    coef = sympy.Integer(1)
    power = sympy.Integer(0)
    oscs = []
    rest = []
    for f in sympy.Mul.make_args(term):
        base, times = f, 1
        if isinstance(f, sympy.Pow) and f.exp.is_Integer and f.exp > 0 and f.base.has(R):
            base, times = f.base, int(f.exp)
        if f.is_number:
            coef *= f
        elif f == R:
            power += 1
        elif isinstance(f, sympy.Pow) and f.base == R and f.exp.is_Rational:
            power += f.exp  # a fractional power only pairs with J_nu (r^-nu J_nu)
        elif (kind := _osc_kind(base, hyperbolic)) is not None:
            b = coefficient_of_r(base.args[-1])
            if b is None:
                return None
            oscs += [(kind, b)] * times
        else:
            rest.append(f)
    return coef, (int(power) if power.is_Integer else float(power)), tuple(oscs), rest


#: the oscillating factors by class, and their hyperbolic counterparts (the same series without
#: alternating signs)
_TRIG_KINDS = {sympy.cos: "cos", sympy.sin: "sin", sympy.besselj: "j"}
_HYPERBOLIC_KINDS = {sympy.cosh: "cosh", sympy.sinh: "sinh", sympy.besseli: "i"}


def _osc_kind(f, hyperbolic):
    """The kind of an oscillating factor f ("cos", "sin", "j0", "j<nu>"; with ``hyperbolic`` also
    "cosh", "sinh", "i<nu>"), or None. Bessel kinds carry the order: J_nu(x) = x^nu (even entire),
    "j0" for J_0 and "j" + the float order otherwise."""
    kinds = {**_TRIG_KINDS, **_HYPERBOLIC_KINDS} if hyperbolic else _TRIG_KINDS
    kind = kinds.get(type(f))
    if kind not in ("j", "i"):
        return kind
    order = f.args[0]
    if not (order.is_number and order >= 0):
        return None
    nu = float(order)
    return "j0" if kind == "j" and nu == 0 else f"{kind}{nu!r}"


def _osc_factor(term):
    """Split a product term into (coef, power of r, (osc kind, frequency) or None, other factors);
    None when the term holds more than one oscillating factor (see :func:`_osc_factors`)."""
    split = _osc_factors(term)
    if split is None or len(split[2]) > 1:
        return None
    coef, power, oscs, rest = split
    return coef, power, (oscs[0] if oscs else None), rest


def _trig_count(term):
    """Number of cos/sin factors of a product term (powers counted with their exponent)."""
    n = 0
    for f in sympy.Mul.make_args(term):
        base, e = f.as_base_exp()
        if isinstance(base, (sympy.cos, sympy.sin)):
            n += int(e) if e.is_Integer and e > 0 else 2
    return n


def _bessel_order(kind):
    """The order nu of a Bessel kind ("j0", "j1.5", "i0.0", ...)."""
    return float(kind[1:])


def _offset(kind):
    """osc(b r) = r^offset (even entire function of r): 0 for cos/cosh, 1 for sin/sinh, nu for J_nu/I_nu."""
    if kind in ("sin", "sinh"):
        return 1.0
    return _bessel_order(kind) if kind[0] in "ji" else 0.0


def _entire_even(oscs, power):
    """Whether r^power prod_i osc_i(b_i r) is an even entire function of r."""
    q = power + sum(_offset(kind) for kind, _ in oscs)
    return q >= 0 and q == 2 * round(q / 2)


def _gaussian_terms(expanded):
    """(a, [(oscs, power, coef)]) when every term of the sum ``expanded`` is exp(-a r^2) r^m times
    oscillating factors (one a for all) and is even and entire; else None."""
    a = None
    terms = []
    for term in sympy.Add.make_args(expanded):
        split = _osc_factors(term, hyperbolic=True)
        if split is None:
            return None
        coef, power, oscs, rest = split
        if len(rest) != 1 or not isinstance(rest[0], sympy.exp):
            return None
        g = sympy.expand(rest[0].args[0])
        ca, pa = g.as_coeff_exponent(R)
        if pa != 2 or not ca.is_number or sympy.expand(ca * R**2 - g) != 0:
            return None
        if a is None:
            a = -ca
        elif sympy.expand(a + ca) != 0:
            return None
        if not _entire_even(oscs, power):
            return None
        terms.append((oscs, power, coef))
    return a, terms


def _gaussian_oscillation_terms(expr):
    """(a, terms) of exp(-a r^2) sum_j c_j r^(m_j) prod_i osc_ji(b_ji r) with a > 0, every b > 0 and
    some term with a factor (floats), else None: the parse of both Gaussian-oscillation matchers.
    Products of cos/sin are first turned into sums of single frequencies."""

    def flat(e):
        return sympy.expand(sympy.powsimp(sympy.expand(e), combine="exp"))

    expanded = flat(expr)
    forms = [expanded]
    if any(_trig_count(t) > 1 for t in sympy.Add.make_args(expanded)):
        # products and powers of cos/sin to sums of single frequencies (cos r cos 2r, cos^2 r), tried
        # first (fewer factors); where that leaves terms that are not entire (sin(r) sin(2r)/r^2 is
        # (cos r - cos 3r)/(2 r^2)) the products themselves
        forms.insert(0, flat(TR8(expanded)))
    for form in forms:
        parsed = _gaussian_terms(form)
        if parsed is not None:
            break
    else:
        return None
    a, terms = parsed
    if a is None or not any(oscs for oscs, _, _ in terms):
        return None
    try:
        a_f = _number(a)
        parsed = tuple((tuple((k, _number(b)) for k, b in oscs), p, _number(c)) for oscs, p, c in terms)
    except TypeError:
        return None
    if not a_f > 0 or any(not b > 0 for oscs, _, _ in parsed for _, b in oscs):
        return None
    return a, parsed


@matcher(priority=25)
def _match_gaussian_oscillation(expr, support):
    """exp(-a r^2) sum_j c_j r^(m_j) prod_i osc_ji(b_ji r), osc in {cos, sin, J_nu, cosh, sinh, I_nu},
    some term with a factor (:func:`_gaussian_oscillation_terms`)."""
    parsed = _gaussian_oscillation_terms(expr) if support is None else None
    if parsed is None:
        return None
    return "gaussian_oscillation", {"a": sympy.nsimplify(parsed[0], rational=True), "terms": parsed[1]}


#: s = r^2 in the denominators of :func:`split_gaussian_poles` and its matcher
_S = sympy.Symbol("s", real=True)
#: the poles' part may be at most this many times the kernel (on r <= 3/sqrt(a)): the two parts
#: cancel to the kernel, and their stated errors scale with them
_MAX_POLE_GAIN = 1e3
#: a numerator "vanishes" at D's roots when what the divisions leave out has a mass below this
#: fraction of its largest coefficient (rounded float coefficients leave ~1e-16)
_REMOVABLE = 1e-9


def _coef_scale(terms):
    """The largest |coefficient| of a Gaussian-oscillation numerator (the scale of its defects)."""
    return max(abs(c) for _, _, c in terms)


def _gaussian_over_polynomial(expr):
    """(a, N, D) with expr = exp(-a r^2) N(r) / D(r^2), a > 0 and D a non-constant polynomial in
    s = r^2 (sympy, in ``_S``), else None."""
    if isinstance(expr, sympy.Add):  # a common Gaussian factor of a sum: 2 e^-r^2 cos(2r)/(1+r^2) - e^-r^2
        expr = sympy.factor_terms(expr)
    a = _gaussian_factor(expr)
    if not (a.is_number and a > 0):
        return None
    num, den = sympy.fraction(sympy.together(sympy.powsimp(expr * sympy.exp(a * R**2))))
    if not den.has(R) or not den.is_polynomial(R) or num.has(sympy.exp):
        return None
    # a power of r in D goes to the numerator (sin(2 r) / (r (1 + r^2)): N = sin(2 r)/r)
    low = min(m[0] for m in sympy.Poly(den, R).monoms())
    if low:
        num, den = num / R**low, sympy.cancel(den / R**low)
    if not den.has(R) or any(m[0] % 2 for m in sympy.Poly(den, R).monoms()):
        return None
    return a, num, sympy.expand(den.subs(R, sympy.sqrt(_S)))


def _numerator_terms(a, num):
    """The Gaussian-oscillation terms of exp(-a r^2) N(r) (floats), or None."""
    parsed = _gaussian_oscillation_terms(num * sympy.exp(-a * R**2))
    if parsed is None or sympy.expand(parsed[0] - a) != 0:
        return None
    return parsed[1]


@matcher(priority=25)
def _match_gaussian_removable(expr, support):
    """exp(-a r^2) N(r) / D(r^2) with N a Gaussian-oscillation numerator that vanishes at D's roots
    (an entire function: (cos(3 r) - cosh(3)) / (1 + r^2) exp(-r^2/2), the part
    :func:`split_gaussian_poles` leaves after the poles); D's roots in Re s < 0."""
    if support is not None:
        return None
    parsed = _gaussian_over_polynomial(expr)
    if parsed is None:
        return None
    a, num, den_s = parsed
    den = _den_param(den_s, _S)
    terms = _numerator_terms(a, num) if den is not None else None
    if terms is None or not _removal_defect(terms, den) < _REMOVABLE * _coef_scale(terms):
        return None
    return "gaussian_oscillation", {"a": sympy.nsimplify(a, rational=True), "terms": terms, "den": den}


@functools.lru_cache(maxsize=64)
def split_gaussian_poles(expr):
    """[exp(-a r^2) (N(r) - T(r^2)) / D(r^2), exp(-a r^2) T(r^2) / D(r^2)] for a kernel
    exp(-a r^2) N(r) / D(r^2) with N a Gaussian-oscillation numerator (cos, sin, Bessel factors) and
    D a polynomial in r^2 with roots in Re s < 0, or None.

    T is the polynomial of degree < deg D that agrees with N(sqrt(s)) at D's roots to their
    multiplicities (Hermite interpolation, from the principal parts of N(sqrt(s)) / D(s), exact in
    sympy): the first part is entire, a Gaussian oscillation whose series the Laguerre route sums
    (:func:`_match_gaussian_removable`), the second a Gaussian times a rational function, which the
    Gaussian-mixture route inverts. The whole has neither: its mass lies where the poles put it (mu
    decays like e^(-rho sqrt|z|), far out in high d), beyond the reach of a float quadrature. Not
    split (None) when the poles' part exceeds the kernel by more than ``_MAX_POLE_GAIN``: T ~
    cosh(b sqrt|z|) for cos(b r), and the parts' errors would swamp their sum. Cached per
    expression (its sympy work takes 0.1-1 s, and every measure of the kernel asks again)."""
    parsed = _gaussian_over_polynomial(expr)
    if parsed is None:
        return None
    a, num, den_s = parsed
    den = _den_param(den_s, _S)
    if den is None or _numerator_terms(a, num) is None:
        return None
    roots = den[1]
    if any(not sympy.re(z) < 0 for z, _ in roots):
        return None
    psi = num.subs(R, sympy.sqrt(_S))
    # T = D times the principal parts of psi / D, term by term as exact polynomial quotients
    t_s = sympy.Integer(0)
    for z, mult in roots:
        rest = sympy.quo(den_s, (_S - z) ** mult, _S)
        g = psi / rest
        for i in range(mult):
            c = sympy.diff(g, _S, i).subs(_S, z) / sympy.factorial(i)
            t_s += c * sympy.quo(den_s, (_S - z) ** (mult - i), _S)
    t_s = sympy.simplify(sympy.expand_complex(sympy.expand(t_s)))
    if t_s == 0 or t_s.has(sympy.I) or not t_s.is_polynomial(_S):
        return None
    gauss = sympy.exp(-a * R**2)
    t_r, den_r = t_s.subs(_S, R**2), den_s.subs(_S, R**2)
    # the parts cancel where T is large against the kernel (cos(4 r)/(1 + r^2/100): T = cosh(40),
    # 1e17): their errors would swamp the sum; such kernels are not split
    r = np.linspace(1e-3, 3.0 / math.sqrt(float(a)), 61)  # r > 0: sin(2 r)/r has 0/0 at 0
    with np.errstate(all="ignore"):
        whole = np.abs(
            np.asarray(sympy.lambdify(R, num / den_r, ["scipy", "numpy"])(r), dtype=float) * np.ones(r.size)
        )
        pole = np.abs(
            np.asarray(sympy.lambdify(R, t_r / den_r, ["scipy", "numpy"])(r), dtype=float) * np.ones(r.size)
        )
    if not (np.all(np.isfinite(pole)) and np.max(pole) <= _MAX_POLE_GAIN * np.max(whole)):
        return None
    return [gauss * (num - t_r) / den_r, gauss * t_r / den_r]


@matcher(priority=26)
def _match_rq_oscillation(expr, support):
    """c cos(b r) (A + B r^2)^(-alpha) or c sin(b r)/r (A + B r^2)^(-alpha) (J0: :mod:`._bessel_mixture`)."""
    if support is not None:
        return None
    split = _osc_factor(expr)
    if split is None:
        return None
    coef, power, osc, rest = split
    if osc is None or len(rest) != 1 or not isinstance(rest[0], sympy.Pow):
        return None
    base, expo = rest[0].args
    if not expo.is_number or not base.is_polynomial(R):
        return None
    poly = sympy.Poly(sympy.expand(base), R)
    if poly.degree() != 2:
        return None
    B, zero, A = poly.all_coeffs()
    if zero != 0:
        return None
    kind, b = osc
    if kind.startswith("j") or power != {"cos": 0, "sin": -1}[kind]:
        return None
    try:
        A, B, alpha, c, b = (_number(v) for v in (A, B, -expo, coef, b))
    except TypeError:
        return None
    if not (A > 0 and B > 0 and alpha > 0 and b > 0 and c != 0):
        return None
    # c A^-alpha (1 + r^2/s)^-alpha with s = A/B
    return "rq_oscillation", {"c": c * A ** (-alpha), "kind": kind, "b": b, "alpha": alpha, "s": A / B}


# ---------------------------------------------------------------------------------------------
# double-double arithmetic on numpy arrays (Dekker / Knuth error-free transformations)
# ---------------------------------------------------------------------------------------------
def _norm(s, e):
    t = s + e
    return t, e - (t - s)


def _dd_add(x, y):
    s, e = two_sum(x[0], y[0])
    return _norm(s, e + (x[1] + y[1]))


def _dd_mul(x, y):
    p, e = two_product(x[0], y[0])
    return _norm(p, e + (x[0] * y[1] + x[1] * y[0]))


def _dd_mul_f(x, f):
    p, e = two_product(x[0], f)
    return _norm(p, e + x[1] * f)


def _dd_div_int(x, n):
    q1 = x[0] / n
    p, e = two_product(q1, float(n))
    r = (x[0] - p) - e + x[1]
    return _norm(q1, r / n)


# ---------------------------------------------------------------------------------------------
# Gaussian envelope: the Laguerre series
# ---------------------------------------------------------------------------------------------
def _factor_series(kind, b, n_max):
    """e_0..e_(n_max-1) with osc(b r) = r^offset sum_j e_j r^(2j) (mpmath, current dps)."""
    b = mpmath.mpf(b)
    sign = 1 if kind in ("cosh", "sinh") or kind[0] == "i" else -1  # hyperbolic: no alternation
    if kind in ("cos", "cosh"):
        return [sign**j * b ** (2 * j) / mpmath.factorial(2 * j) for j in range(n_max)]
    if kind in ("sin", "sinh"):
        return [sign**j * b ** (2 * j + 1) / mpmath.factorial(2 * j + 1) for j in range(n_max)]
    # J_nu (I_nu): sum_j (-+1)^j (b/2)^(2j + nu) r^(2j + nu) / (j! Gamma(j + nu + 1))
    nu = mpmath.mpf(_bessel_order(kind))
    return [
        sign**j * (b / 2) ** (2 * j + nu) / (mpmath.factorial(j) * mpmath.gamma(j + nu + 1))
        for j in range(n_max)
    ]


def _envelope(values, n):
    """max(values[j .. j + _ENVELOPE - 1]) for j < n (numpy array)."""
    v = np.asarray(values, dtype=np.float64)
    return np.max(np.lib.stride_tricks.sliding_window_view(v, _ENVELOPE)[:n], axis=1)


def _taylor_mp(terms, n_max, den=None):
    """h_0..h_(n_max-1) of H(r) = sum_j c_j r^(m_j) prod_i osc_ji(b_ji r) = sum_n h_n r^(2n)
    (mpmath, current dps): each term's factor series multiplied as power series in r^2.

    ``den`` (see :func:`_den_param`): H is that sum divided by a polynomial D(r^2) whose roots it
    (nearly) shares, an entire function: the numerator's series is divided by (s - z) once per root
    and multiplicity (:func:`_divide_root`), then by D's leading coefficient."""
    if den is not None:
        lead, roots = _den_values(den)
        extra = n_max // 2 + 64  # the numerator's tail beyond n_max, for the divisions' tails
        f = [mpmath.mpc(v) for v in _taylor_mp(terms, n_max + extra)]
        for z, mult in roots:
            for _ in range(mult):
                f = _divide_root(f, z)
        return [(v / lead).real for v in f[:n_max]]
    h = [mpmath.mpf(0)] * n_max
    for oscs, m, c in terms:
        shift = int(round(m + sum(_offset(kind) for kind, _ in oscs))) // 2
        if shift >= n_max:
            continue
        size = n_max - shift
        series = None
        for kind, b in oscs:
            e = _factor_series(kind, b, size)
            series = e if series is None else [mpmath.fdot(series[: n + 1], e[n::-1]) for n in range(size)]
        series = [mpmath.mpf(c) * v for v in series] if series else [mpmath.mpf(c)] + [0] * (size - 1)
        for n in range(size):
            h[n + shift] += series[n]
    return h


def _divide_root(f, z):
    """The coefficients of (F(s) - F(z)) / (s - z) from those of F (all but the last): q_i =
    sum_(m > i) f_m z^(m-1-i), by q_i = f_(i+1) + z q_(i+1) from the top. F(z) = 0 for the
    removable poles this serves (the part F(z)/(s - z) left out is bounded in the builder)."""
    q = [mpmath.mpc(0)] * (len(f) - 1)
    acc = mpmath.mpc(0)
    for i in range(len(f) - 2, -1, -1):
        acc = f[i + 1] + z * acc
        q[i] = acc
    return q


def _den_param(den_s, s):
    """(lead, ((root, multiplicity), ...)) of a polynomial D(s) in exact sympy numbers, or None when
    sympy does not find all its roots in radicals."""
    poly = sympy.Poly(den_s, s)
    roots = sympy.roots(poly)
    if sum(roots.values()) != poly.degree() or poly.degree() < 1:
        return None
    return poly.LC(), tuple(
        sorted(((z, int(m)) for z, m in roots.items()), key=lambda t: sympy.default_sort_key(t[0]))
    )


def _den_values(den):
    """(lead, [(z, multiplicity)]) of a ``_den_param`` as mpmath numbers at the current precision."""
    dps = mpmath.mp.dps + 5

    def value(x):
        v = sympy.N(x, dps)
        return mpmath.mpc(mpmath.mpf(str(sympy.re(v))), mpmath.mpf(str(sympy.im(v))))

    return value(den[0]).real, [(value(z), m) for z, m in den[1]]


@functools.lru_cache(maxsize=64)
def _removal_defect(terms, den):
    """sum over D's roots z (multiplicity l) of sum_(i<l) |F^(i)(z)/i!| / |Re z|^(l-i), F the
    numerator sum of ``terms`` as a function of s = r^2, over |D's leading coefficient|: the mass of
    what the divisions leave out (F(z) (s - z)^-l e^(-a s) is a mixture of Gaussians of mass at most
    |Re z|^-l), or inf when a root has Re z >= 0. The numerator's series is summed at 60 digits;
    cached (the matcher decides with it, the builder states it)."""
    with mpmath.workdps(60):
        lead, roots = _den_values(den)
        if any(z.real >= 0 for z, _ in roots):
            return math.inf
        n = 64
        top = max(abs(z) for z, _ in roots)
        while True:
            eta = _taylor_mp(terms, n)
            if abs(eta[-1]) * top ** (n - 1) < mpmath.mpf(10) ** -70 * max(abs(v) for v in eta):
                break
            n *= 2
            if n > _MAX_TERMS:
                return math.inf  # the numerator's series does not settle: no bound
        total = mpmath.mpf(0)
        for z, mult in roots:
            for i in range(mult):
                # F^(i)(z)/i! = sum_n eta_n binom(n, i) z^(n - i)
                d_i = mpmath.fsum(eta[k] * mpmath.binomial(k, i) * z ** (k - i) for k in range(i, n))
                total += abs(d_i) / abs(z.real) ** (mult - i)
        return float(total / abs(lead))


class _LaguerreSeries:
    """S(x) = sum_n q_n L_n^nu(x), q_n = h_n n! a^-n: double-double where safe, else mpmath.

    Bounds: |L_n^nu(x)| <= L_n^nu(-x) (the explicit sum with every sign made positive), which the
    same recurrence computes without cancellation; the series is cut at the first n past which
    the bound terms |q_n| L_n^nu(-x) shrink by more than half per step and are below 10^-35 of
    the largest (q_n decays like (b^2/(4a))^n/n!: super-exponentially, so the rest is below twice
    the last bound term).
    """

    def __init__(self, a, terms, dim, den=None):
        self.a, self.terms, self.dim, self.den = a, terms, dim, den
        self.nu = 0.5 * dim - 1
        self._mp_cache = {}
        self._int_cache = {}
        self._mono_cache = {}
        self._bits_hint = 0  # the bits of the last fixed-point sum that met its bound
        self._extend(64)

    def _extend(self, n_max):
        if n_max > _MAX_TERMS:
            raise ArithmeticError("the Laguerre series of the Gaussian oscillation needs too many terms")
        q = self._q_mp(40, n_max + _ENVELOPE)
        self.n_avail = n_max
        q_hi = [float(v) for v in q]
        self.q_dd = (np.array(q_hi[:n_max]), np.array([float(v - h) for v, h in zip(q[:n_max], q_hi)]))
        with np.errstate(divide="ignore"):
            # the bound terms and the truncation use |q_n| raised to the largest of the next few
            # (products such as cos(r) cosh(r) have every other q_n = 0: a zero must not end the sum)
            self.absq = _envelope(np.abs(q_hi), n_max)
            self.log_absq = np.log(self.absq)

    def _q_mp(self, dps, n_max):
        key = (dps, n_max)
        if key not in self._mp_cache:
            with mpmath.workdps(dps + 10):
                h = _taylor_mp(self.terms, n_max, self.den)
                a = (
                    mpmath.mpf(self.a.p) / self.a.q
                    if isinstance(self.a, sympy.Rational)
                    else mpmath.mpf(self.a)
                )
                out, fac = [], mpmath.mpf(1)
                for n in range(n_max):
                    if n:
                        fac = fac * n / a
                    out.append(h[n] * fac)
            self._mp_cache[key] = out
        return self._mp_cache[key]

    def log_abs_and_sign(self, x):
        """log|S(x)| and sign for an array x >= 0: double-double where its bound allows, else fixed
        point; a few points (root searches) go to fixed point directly (cheaper than numpy's
        per-call overhead over the recurrence's steps)."""
        x = np.asarray(x, dtype=np.float64)
        if x.size <= _FEW_POINTS:
            return self._fixed(x.ravel(), np.zeros(x.size))
        out_l = np.empty(x.shape)
        out_s = np.empty(x.shape)
        lf, sf, ok, lost = self._dd(x)
        out_l[ok], out_s[ok] = lf[ok], sf[ok]
        if not np.all(ok):
            bad = np.flatnonzero(~ok)
            ml, ms, mok = self._monomial(x[bad])
            out_l[bad[mok]], out_s[bad[mok]] = ml[mok], ms[mok]
            rest = bad[~mok]
            if rest.size:
                out_l[rest], out_s[rest] = self._fixed(x[rest], lost[rest])
        return out_l, out_s

    def _monomial(self, x):
        """S(x) from its monomial form, for the points the double-double Laguerre sum cannot certify.

        The partial sum S_N = sum_(n<N) q_n L_n^nu(x) is the polynomial sum_(k<N) c_k x^k with
        c_k = ((-1)^k / k!) sum_(n=k..N-1) q_n binom(n + nu, n - k) (from L_n^nu(x) =
        sum_k binom(n + nu, n - k) (-x)^k / k!), computed once in mpmath (120 digits). Where the
        Laguerre form cancels (small x in high d: 15 digits in d = 256) the monomial form loses at
        most a few. Horner's rule in double-double: error at most C (2N + 2) sum |c_k| x^k plus the
        coefficients' rounding 2^-104 sum |c_k| x^k; N and the truncation bound are those of the
        Laguerre cut at max x (the bound terms |q_n| L_n(-x) grow with x). Returns (log|S|, sign,
        accepted) with the acceptance rule of :meth:`_dd`.
        """
        n_terms, log_trunc = self._cut_at(float(np.max(x)), 35 * math.log(10))
        c_hi, c_lo, c_abs = self._monomial_coeffs(n_terms)
        n_terms = len(c_hi)  # at least the cut: more terms only shrink the truncation
        zero = np.zeros(x.size)
        p = (np.full(x.size, c_hi[-1]), np.full(x.size, c_lo[-1]))
        absum = np.full(x.size, c_abs[-1])
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            for k in range(n_terms - 2, -1, -1):
                p = _dd_add(_dd_mul_f(p, x), (np.full(x.size, c_hi[k]), np.full(x.size, c_lo[k])))
                absum = absum * x + c_abs[k]
            s = p[0] + p[1]
            err = 1.01 * absum * (_DD_C * (2 * n_terms + 2) + 2.0**-104) + math.exp(log_trunc)
            ok = np.isfinite(s) & (err <= _FLOAT_TOL * np.abs(s)) & (zero == 0)
            return np.log(np.abs(s)), np.sign(s), ok

    def _cut_at(self, x, depth):
        """(N, log of the truncation bound) at x by the rule of :meth:`_dd`: N terms, cut where the
        bound terms |q_n| L_n^nu(-x) halve per step and are e^-depth below their largest (the tail
        is below twice the last one)."""
        nu = self.nu
        lbp, lbc = -math.inf, 0.0  # log L_(n-1)(-x), log L_n(-x)
        peak = last = -math.inf
        n = 0
        while True:
            if n >= self.n_avail:
                self._extend(2 * self.n_avail)
            if n >= 1:
                c2 = abs(n - 1 + nu)
                new = math.log(2 * n - 1 + nu + x) + lbc
                if c2 > 0 and lbp > -math.inf:
                    new += math.log1p(c2 * math.exp(lbp - new))
                lbp, lbc = lbc, new - math.log(n)
            log_b = float(self.log_absq[n]) + lbc
            peak = max(peak, log_b)
            if n > 1 and log_b - last < -math.log(2) and log_b < peak - depth:
                return n + 1, math.log(2.0) + log_b
            last = log_b
            n += 1
            if n >= _MAX_TERMS:
                raise ArithmeticError("the Laguerre series of the Gaussian oscillation needs too many terms")

    def _monomial_coeffs(self, n_terms):
        """c_k of the monomial form (:meth:`_monomial`) as double-double and |c_k|, for a partial
        sum of at least ``n_terms`` terms. The cut moves with max x; one table of the longest sum
        asked for (in steps of 32 terms) serves every shorter cut, whose tail holds its own, instead
        of an O(N^2) table at 120 digits for each cut (0.4 s each, 28 of them in d = 128)."""
        longest = max(self._mono_cache, default=0)
        if n_terms <= longest:
            return self._mono_cache[longest]
        n_terms = 32 * math.ceil(n_terms / 32)
        if n_terms not in self._mono_cache:
            with mpmath.workdps(120):
                q = self._q_mp(120, n_terms)
                nu = mpmath.mpf(self.dim) / 2 - 1
                coeffs = []
                for k in range(n_terms):
                    # binom(n + nu, n - k) for n = k, k+1, ...: ratio (n + nu) / (n - k) per step
                    term, total = mpmath.mpf(1), mpmath.mpf(0)
                    for n in range(k, n_terms):
                        if n > k:
                            term = term * (n + nu) / (n - k)
                        total += q[n] * term
                    coeffs.append((-1) ** k * total / mpmath.factorial(k))
                hi = [float(v) for v in coeffs]
                lo = [float(v - h) for v, h in zip(coeffs, hi)]
            self._mono_cache[n_terms] = (hi, lo, [abs(v) for v in hi])
        return self._mono_cache[n_terms]

    def _dd(self, x):
        """Vectorised double-double sum (about 31 digits) with a running rounding-error bound.

        The error of the computed L_n obeys the majorant recurrence (c1 = |2n - 1 + nu - x|,
        c2 = |n - 1 + nu|)

            e_n = (c1 e_(n-1) + c2 e_(n-2) + C (c1 |L_(n-1)| + c2 |L_(n-2)|)) / n,

        C = 2^-100 (64 units of the double-double rounding 2^-106; the product, the sloppy sum and the
        division each contribute a few); the sum's error is sum_n |q_n| e_n + C (N + 2) sum_n |q_n L_n|
        over its N terms, plus the truncation bound. Accepted where that is below ``_FLOAT_TOL`` |S|;
        the rest goes to :meth:`_fixed` with the digits lost, log10(error bound / (C |S|)). The
        majorant follows c1 = |2n - 1 + nu - x| rather than the 2n - 1 + nu + x of the bound
        |L_n(x)| <= L_n(-x): in high d, where the measure lives at x ~ nu, it is up to 10^12 tighter.
        The truncation uses L_n(-x): the series is cut at the first n past which the bound terms
        |q_n| L_n(-x) shrink by more than half per step and are below 10^-35 of the largest (q_n
        decays like (b^2/(4a))^n/n!: the rest is below twice the last bound term). The values carry
        a per-point power-of-two scale (exact) so that nothing overflows.
        """
        nu = self.nu
        m = x.size
        zero = np.zeros(m)
        lp, lc = (zero, zero), (np.ones(m), zero)
        ep, ec = zero, zero  # error bounds of lp, lc (same scale)
        bp, bc = zero, np.ones(m)  # L_(n-1)(-x), L_n(-x), same scale
        ls = np.zeros(m, dtype=np.int64)  # true L = lc 2^ls
        acc = (zero, zero)
        acc_e = np.zeros(m, dtype=np.int64)  # acc in units of 2^acc_e
        err_sum = zero.copy()  # sum |q_n| e_n (accumulator units)
        abs_sum = zero.copy()  # sum |q_n L_n| (accumulator units)
        last = np.zeros(m)
        done = np.zeros(m, dtype=bool)
        peak = np.full(m, -np.inf)
        trunc = np.full(m, np.inf)
        n = 0
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            while True:
                if n >= self.n_avail:
                    self._extend(2 * self.n_avail)
                qh, ql = self.q_dd[0][n], self.q_dd[1][n]
                if n >= 1:
                    c1, c2 = np.abs(2 * n - 1 + nu - x), abs(n - 1 + nu)
                    t1 = _dd_mul(two_sum(2 * n - 1 + nu, -x), lc)
                    t2 = _dd_mul_f(lp, n - 1 + nu)
                    e_new = (c1 * ec + c2 * ep + _DD_C * (c1 * np.abs(lc[0]) + c2 * np.abs(lp[0]))) / n
                    lp, lc = lc, _dd_div_int(_dd_add(t1, (-t2[0], -t2[1])), n)
                    ep, ec = ec, e_new
                    bp, bc = bc, ((2 * n - 1 + nu + x) * bc + c2 * bp) / n
                term = _dd_add(_dd_mul_f(lc, qh), (lc[0] * ql, zero))
                # bring the term to the accumulator's scale (both exact powers of two)
                log_b = self.log_absq[n] + np.log(bc) + ls * math.log(2)  # log |q_n| L_n(-x)
                first = ~np.isfinite(peak) & np.isfinite(log_b)
                acc_e = np.where(first, np.floor(log_b / math.log(2)).astype(np.int64), acc_e)
                shift = ls - acc_e
                acc = _dd_add(acc, (np.ldexp(term[0], shift), np.ldexp(term[1], shift)))
                err_sum = err_sum + np.ldexp(abs(qh) * ec, shift)
                abs_sum = abs_sum + np.ldexp(np.abs(term[0]), shift)
                peak = np.maximum(peak, log_b)
                ratio_ok = log_b - last < -math.log(2)
                fresh = ~done & (n > 1) & ratio_ok & (log_b < peak - 35 * math.log(10))
                trunc = np.where(fresh, np.exp(log_b - acc_e * math.log(2)), trunc)
                done |= fresh
                last = log_b
                huge = np.abs(bc) > 2.0**600
                if np.any(huge):
                    down = np.where(huge, -600, 0)
                    lc = (np.ldexp(lc[0], down), np.ldexp(lc[1], down))
                    lp = (np.ldexp(lp[0], down), np.ldexp(lp[1], down))
                    bc, bp = np.ldexp(bc, down), np.ldexp(bp, down)
                    ec, ep = np.ldexp(ec, down), np.ldexp(ep, down)
                    ls = ls - down
                n += 1
                if np.all(done) or n >= _MAX_TERMS:
                    break
            s = acc[0] + acc[1]
            absacc = np.abs(s)
            majorant = 1.01 * (err_sum + _DD_C * (n + 2) * abs_sum)  # 1.01: the bound's own rounding
            err = majorant + 2 * trunc
            ok = done & np.isfinite(s) & (err <= _FLOAT_TOL * absacc)
            lost = np.where(absacc > 0, np.log10(majorant / (_DD_C * absacc)), 40.0)
            return np.log(absacc) + acc_e * math.log(2), np.sign(s), ok, np.nan_to_num(lost, nan=40.0)

    def _fixed(self, x, lost):
        """S at each x (array) by the same recurrence in exact-integer fixed point, point by point.

        L_n is held as the Python integer L_n 2^P, rounded down twice per step (the product x L_(n-1),
        with x exact as m 2^e, and the division by 2n): at most two units, so the error majorant
        is e_n = (c1 e_(n-1) + c2 e_(n-2)) / n + 2 units. q_n enter as integers of P + 64 bits times
        a power of two (relative error 2^(1 - P - 64), bounded with |L_n| <= L_n(-x)); the sum is
        exact. The series is cut by the rule of :meth:`_dd` with the cut 2^(40 - P) below the
        largest bound term. P starts at 3.33 (``lost`` + 20) + 32 bits and doubles until the bound
        is below ``_FLOAT_TOL`` |S|; a sum that stays below its bound once that bound is 10^-80 of
        sum |q_n| L_n^nu(-x) is an exact zero of mu (e.g. rho = 0 in d = 3 for exp(-r^2/2) cos(r)),
        returned as 0. The majorants and bound terms do not depend on P: they are computed once
        per point by a compiled loop (:func:`~spectralkit._compiled.laguerre_bound_logs`), and the
        Python loop does only the integer recurrence (a sixth of the time it took with them).
        """
        out_l, out_s = np.empty(x.size), np.empty(x.size)
        for i, xi in enumerate(x.tolist()):
            bits = 64 * math.ceil((3.33 * (min(lost[i], 600.0) + 20) + 32) / 64)
            # neighbouring points (root searches, quadrature panels) lose about as many digits: start
            # from what the last point needed rather than fail once more at fewer bits
            bits = min(max(bits, self._bits_hint), _MAX_BITS)
            bounds = None
            while True:
                if bits > _MAX_BITS:
                    raise ArithmeticError(
                        f"the Laguerre series needs more than {_MAX_BITS} bits at x = {xi:.6g}"
                    )
                n_cut, bounds = self._fixed_cut(xi, bits, bounds)
                res = self._fixed_point(xi, bits, n_cut, bounds)
                if res is not None:
                    out_l[i], out_s[i] = res
                    self._bits_hint = bits
                    break
                bits *= 2
        return out_l, out_s

    def _fixed_cut(self, x, bits, bounds):
        """(N, bounds): the last index N of the fixed-point sum at ``bits`` bits (cut at the first
        n > 1 past which the bound terms halve and are 2^(40 - bits) below their largest) and the
        bound logs of :func:`~spectralkit._compiled.laguerre_bound_logs` at x, computed (or
        extended with the series) when ``bounds`` is None or too short."""
        while True:
            if bounds is None or bounds[0].size < self.n_avail:
                bounds = laguerre_bound_logs(x, self.nu, self.absq[: self.n_avail])
            lt = bounds[0]
            with np.errstate(invalid="ignore"):
                halving = lt[2:] < lt[1:-1] - math.log(2.0)
                deep = lt[2:] < (40 - bits) * math.log(2.0) + np.maximum.accumulate(lt)[2:]
            hit = np.flatnonzero(halving & deep)
            if hit.size:
                return int(hit[0]) + 2, bounds
            if self.n_avail >= _MAX_TERMS:
                raise ArithmeticError("the Laguerre series of the Gaussian oscillation needs too many terms")
            self._extend(2 * self.n_avail)

    def _q_int(self, bits, n_max):
        """q_n (n < n_max) rounded to ``bits`` bits as q_n ~ m_n 2^(e_n): (m as gmpy2 integers, e,
        the running minimum of e over the nonzero m) (gmpy2: 1.5-2.5x Python's integers here)."""
        key = (bits, n_max)
        if key not in self._int_cache:
            with mpmath.workprec(bits):
                pairs = [int_pair((+v)._mpf_) for v in self._q_mp(math.ceil(bits / 3.3) + 10, n_max)]
            low = itertools.accumulate((e if m else math.inf for m, e in pairs), min)
            self._int_cache[key] = (
                [gmpy2.mpz(m) for m, _ in pairs],
                [e for _, e in pairs],
                [0 if v == math.inf else v for v in low],
            )
        return self._int_cache[key]

    def _fixed_point(self, x, bits, n_cut, bounds):
        """(log|S(x)|, sign) from the terms n <= ``n_cut`` at ``bits`` bits of fixed point
        (:meth:`_fixed`), or None if not enough."""
        d = self.dim
        mant, ex = math.frexp(x)
        xm, up, down = gmpy2.mpz(int(mant * 2.0**53)), max(ex - 53, 0), max(53 - ex, 0)
        qm, qe, low = self._q_int(bits + 64, 64 * 2 ** max(math.ceil(math.log2((n_cut + 1) / 64)), 0))
        acc_e = low[n_cut]  # the sum is held in units of 2^acc_e: every term is an exact integer
        zero = gmpy2.mpz(0)
        lp, lc, acc = zero, gmpy2.mpz(1) << bits, zero
        for n in range(n_cut + 1):
            if n >= 1:
                xl = ((lc * xm) << up) >> down  # floor(x L_(n-1) 2^bits), x = xm 2^up 2^-down
                lp, lc = lc, ((4 * n - 4 + d) * lc - (2 * n - 4 + d) * lp - 2 * xl) // (2 * n)
            if qm[n]:
                acc += (qm[n] * lc) << (qe[n] - acc_e)
        lt, lerr, lbsum = (v[n_cut] for v in bounds)
        if not (lbsum > -math.inf and lerr < math.inf):
            return None
        log2 = math.log(2.0)
        # rounding (with 1% for the float majorant's own rounding), q's rounding, truncation
        parts = [
            v
            for v in (math.log(1.01) + lerr - bits * log2, lbsum - (bits + 63) * log2, log2 + lt)
            if v > -math.inf
        ]
        top = max(parts)
        log_err = top + math.log(sum(math.exp(p - top) for p in parts))
        if acc == 0:
            val_l, val_s = -math.inf, 1.0
        else:
            mag = abs(acc)
            drop = max(mag.bit_length() - 64, 0)
            val_l = math.log(mag >> drop) + (drop + acc_e - bits) * log2
            val_s = -1.0 if acc < 0 else 1.0
        if log_err <= math.log(_FLOAT_TOL) + val_l:
            return val_l, val_s
        if log_err < lbsum - 80 * math.log(10.0) and val_l <= log_err:
            return -math.inf, 1.0
        return None


@builder("gaussian_oscillation", rel_error=1e-11)
def _gaussian_oscillation(a, terms, dim, den=None):
    """mu of exp(-a r^2) sum_j c_j r^(m_j) osc_j(b_j r) (see the module docstring), divided by a
    polynomial D(r^2) whose roots the sum shares (``den``: an entire function, the part of a
    Gaussian-oscillation-rational kernel that :func:`split_gaussian_poles` leaves after its poles)."""
    d = dim
    a_f = float(a)
    defect = 0.0
    if den is not None:
        defect = _removal_defect(terms, den)
        if not defect < _REMOVABLE * _coef_scale(terms):
            return None  # not entire (or a root with Re z >= 0): not this builder's kind
    try:
        series = _LaguerreSeries(a, terms, d, den)
    except ArithmeticError as exc:
        raise TransformError(f"Gaussian-oscillation series in d = {d}: {exc}") from exc
    log_pref = -0.5 * d * math.log(4 * math.pi * a_f)
    b_max = max(sum(b for _, b in oscs) for oscs, _, _ in terms)  # the spectrum's reach
    # |mu| <= (4 pi a)^(-d/2) e^(-x/2) sum |q_n| Bnd_n with |L_n^nu(x)| <= Bnd_n e^(x/2) (Szego:
    # Bnd_n = binom(n + nu, n) for nu >= 0, 2 for -1 < nu < 0): beyond the radius where this bound,
    # times rho^(d-1), is 10^-_CUT_DECADES of the radial density's peak, mu is returned as 0 (the
    # far tail costs the most terms: ~sqrt(x) b / sqrt(a)); the bound's value there is abs_error,
    # its radial mass beyond mass_error
    probe = np.linspace(0.0, 2 * b_max + 6 * math.sqrt(2 * a_f * (d + 10)), 200)[1:]
    la, _ = series.log_abs_and_sign(probe**2 / (4 * a_f))
    log_peak_f = float(np.max(la - probe**2 / (4 * a_f) + (d - 1) * np.log(probe))) + log_pref
    log_floor = log_peak_f - _CUT_DECADES * math.log(10)
    cut_rho = _cut_radius(_log_szego_sum(series) + log_pref, a_f, d, log_floor)
    # beyond cut_rho (>= 1.25 sqrt(4 a (d-1)), >= 1) the bound's log falls with slope at least
    # 0.36 rho / (4 a): its radial mass is below S_(d-1) e^log_floor 4 a / (0.36 cut_rho)
    mass_error = math.exp(log_sphere_area(d) + log_floor) * 4 * a_f / (0.36 * cut_rho)
    abs_beyond = math.exp(log_floor - (d - 1) * math.log(cut_rho))

    def log_abs_and_sign(rho):
        x = rho * rho / (4 * a_f)
        out_l = np.full(rho.shape, -np.inf)
        out_s = np.ones(rho.shape)
        live = rho <= cut_rho
        if np.any(live):
            try:
                ls, ss = series.log_abs_and_sign(x[live])
            except ArithmeticError as exc:  # the fixed-point precision cap: the library's own error
                raise TransformError(f"Gaussian-oscillation series in d = {d}: {exc}") from exc
            out_l[live] = ls - x[live] + log_pref
            out_s[live] = ss
        return out_l, out_s

    mu = vectorised(log_abs_and_sign)
    mu0 = abs(float(mu(0.0)))
    peak = max(mu0, float(np.max(np.abs(mu(probe)))))
    return RadialTransform(
        mu=mu,
        log_abs_mu=log_form(log_abs_and_sign),
        method="closed-form:gaussian-oscillation",
        rel_error=BUILDERS["gaussian_oscillation"].rel_error,
        abs_error=min(1.0, max(_TINY, abs_beyond) / peak) if peak > 0 else 0.0,
        scale=math.sqrt(2 * a_f),
        tail_exponent=math.inf,
        tail_oscillation=0.0,
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
        mass_error=mass_error + defect,
    )


def _log_szego_sum(series):
    """log sum_n |q_n| Bnd_n over all terms (the q_n decay super-exponentially: summed to 10^-30)."""
    nu = series.nu
    n = 0
    total = -math.inf
    prev = math.inf
    while True:
        if n >= series.n_avail:
            series._extend(2 * series.n_avail)
        lb = series.log_absq[n] + (
            sc.gammaln(n + nu + 1) - sc.gammaln(n + 1) - sc.gammaln(nu + 1) if nu >= 0 else math.log(2.0)
        )
        total = np.logaddexp(total, lb)
        if n > 8 and lb < total - 30 * math.log(10) and lb < prev - math.log(2):
            return float(total)
        prev = lb
        n += 1


def _cut_radius(log_bound0, a, d, log_floor):
    """Smallest rho with log_bound0 - rho^2/(8a) + (d-1) log rho < log_floor for all larger rho."""
    # 1.25 times past the maximum of rho^(d-1) e^(-rho^2/(8a)): the log falls with slope >= 0.36 rho/(4a)
    rho = 1.25 * max(1.0, math.sqrt(4 * a * (d - 1)))
    while log_bound0 - rho * rho / (8 * a) + (d - 1) * math.log(rho) >= log_floor:
        rho *= 1.25
    return rho


# ---------------------------------------------------------------------------------------------
# rational-quadratic envelope: shift formula, dimension walk, projection
# ---------------------------------------------------------------------------------------------
def _log_fn_const(alpha, s, j):
    """log of C_n s^(-m/2), n = 2j + 1, m = alpha - n/2: F_n(t) = C_n s^(-m/2) t^m K_m(sqrt(s) t)."""
    m = alpha - (j + 0.5)
    return (
        math.log(2.0)
        + alpha * math.log(s / 2)
        - math.lgamma(alpha)
        - (j + 0.5) * math.log(2 * math.pi)
        - 0.5 * m * math.log(s)
    )


def _walk_terms(m):
    """(j, i, k, q) of Q_(2m+1) = sum q u^i tau^k F_(2j+1): m steps of the dimension walk
    D = -(1/(2 pi rho)) d/drho applied to F_1(|rho - sigma|), in u = 1/rho and tau = (rho - sigma)/rho,

        D[u^i tau^k F_n] = (u^(i+2)/(2 pi)) ((i + k) tau^k - k tau^(k-1)) F_n + u^i tau^(k+1) F_(n+2)

    (F_n'(t) = -2 pi t F_(n+2)(t)); the coefficients are rational times powers of 1/(2 pi) and do not
    depend on sigma. Near sigma = rho every term is of order |rho - sigma|^gamma: no cancellation."""
    state = {(0, 0, 0): Fraction(1)}  # (j, i, k) -> rational; the power of 1/(2 pi) is m - j
    for _ in range(m):
        new = {}
        for (j, i, k), val in state.items():
            if i + k:
                new[j, i + 2, k] = new.get((j, i + 2, k), 0) + val * (i + k)
            if k:
                new[j, i + 2, k - 1] = new.get((j, i + 2, k - 1), 0) - val * k
            new[j + 1, i, k + 1] = new.get((j + 1, i, k + 1), 0) + val
        state = {key: v for key, v in new.items() if v != 0}
    return [(j, i, k, float(val) * (2 * math.pi) ** (j - m)) for (j, i, k), val in sorted(state.items())]


class _ShiftedWalk:
    """Q_n(z, sigma) (:func:`_walk_terms`; c = 1): the walk of the single shifted term F_1(|rho - sigma|)
    of the shift formula, so that cos(b r) g has mu_n = (Q_n(rho, b) + Q_n(rho, -b))/2. Real or complex
    z, vectorised.

    F_n(w) = C_n s^(-m/2) w^m K_m(sqrt(s) w), m = alpha - n/2, C_n = 2 (s/2)^alpha / (Gamma(alpha)
    (2 pi)^(n/2)): the n-dimensional transform of g, continued to Re w > 0 (principal branches).
    """

    def __init__(self, alpha, s, n):
        self.alpha, self.s, self.n = alpha, s, n
        self.m = (n - 1) // 2
        self.terms = _walk_terms(self.m)
        self.sq = math.sqrt(s)

    def log_fs(self, w):
        """[log F_(2j+1)(w) for j = 0..m] (complex logs for complex w; Re w > 0).

        K of the orders |alpha - 1/2 - j| (two classes mod 1: those from alpha - 1/2 down to 0 and
        those below 0) by scipy's kve for the two lowest of each class and the upward recurrence
        K_v = K_(v-2) + (2 (v - 1)/z) K_(v-1) above them (stable: K grows with the order; for real z
        every term is positive)."""
        z = self.sq * w
        orders = [abs(self.alpha - (j + 0.5)) for j in range(self.m + 1)]
        kv = {}
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            needed = sorted(set(orders))

            def have(v):
                return next((u for u in kv if abs(u - v) < 1e-9), None)

            for v in needed:
                if have(v) is not None:
                    continue
                a, c = have(v - 1), have(v - 2)
                if a is not None and c is not None:
                    kv[v] = kv[c] + (2 * (v - 1) / z) * kv[a]
                else:  # the lowest order of its class: it and the next one directly
                    kv[v] = sc.kve(v, z)
                    if any(abs(u - (v + 1)) < 1e-9 for u in needed):
                        kv[v + 1] = sc.kve(v + 1, z)
            out = []
            for j in range(self.m + 1):
                m = self.alpha - (j + 0.5)
                am = abs(m)
                key = min(kv, key=lambda u, am=am: abs(u - am))
                lk = log_besselk(m, z, kv[key])
                out.append(_log_fn_const(self.alpha, self.s, j) + m * np.log(w) + lk)
        return out

    def __call__(self, z, w, tau):
        """(Q, sum of |terms|) at arrays z (rho), w = +-(z - sigma) (Re w > 0) and tau = (z - sigma)/z."""
        u = 1.0 / z
        total = np.zeros(np.broadcast(z, w).shape, dtype=np.result_type(z, w, tau))
        absum = np.zeros(total.shape)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            f = [np.exp(lf) for lf in self.log_fs(w)]
            top_i = max(i for _, i, _, _ in self.terms)
            top_k = max(k for _, _, k, _ in self.terms)
            u_pow = [np.ones(u.shape, dtype=u.dtype)]
            for _ in range(top_i):
                u_pow.append(u_pow[-1] * u)
            t_pow = [np.ones(tau.shape, dtype=tau.dtype)]
            for _ in range(top_k):
                t_pow.append(t_pow[-1] * tau)
            for j, i, k, q in self.terms:
                term = q * u_pow[i] * t_pow[k] * f[j]
                total = total + term
                absum = absum + np.abs(term)
        return total, absum


class _RQWalk:
    """mu_n (n odd) of c cos(b r) g(r) or c sin(b r)/r g(r), g = (1 + r^2/s)^-alpha (module docstring).

    F_n(t) = C_n s^(-m/2) t^m K_m(sqrt(s) t), m = alpha - n/2, C_n = 2 (s/2)^alpha/(Gamma(alpha) (2 pi)^(n/2)):
    the n-dimensional transform of g. Away from rho = 0 the walk's sum is evaluated in float64 with
    the digits it loses measured (log10 of sum |terms| / |sum|); where more than ``_LOST_FLOAT``
    digits cancel, at 20 digits plus the loss (the Bessel factors in mpmath, two per chain of orders and
    the upward recurrence for the rest, :meth:`f_mp_all`; the sum in gmpy2's MPFR). For rho < R/2
    (R = ``series_radius``, b here; the sum cancels like rho^-(2m-1)) the power series
    mu_n = c sum_(k>=m) a_k (-1/pi)^m k!/(k-m)! rho^(2(k-m)) of
    the walk applied to the Taylor series of mu_1 at 0 is used; its coefficients come from the
    Taylor coefficients of t^m K_m(sqrt(s) t) at t = b (the recurrence of its differential equation
    t f'' + (1 - 2m) f' - s t f = 0), summed in mpmath.
    """

    def __init__(self, c, kind, b, alpha, s, n):
        self.c, self.kind, self.b, self.alpha, self.s, self.n = c, kind, b, alpha, s, n
        #: the Taylor series of mu at 0 is summed below half this radius (its convergence radius in
        #: rho: the kink b here; larger for an envelope whose F_1 is smooth at 0)
        self.series_radius = b
        self.m = (n - 1) // 2
        self._polys = {}
        self._f_consts = {}
        self._taylor = {}
        #: absolute error accepted from the float sum (set to _RQ_FLOOR x max|mu| once the peak is
        #: known; or a function of rho): next to a root of mu no form avoids the cancellation, and a
        #: value whose float bound is under the floor needs no mpmath (the transform states the
        #: floor as abs_error)
        self.floor = 0.0

    # -- the walk's polynomials, per shift sigma: {j: [coefficients of u^i]} (mpmath) -------------
    def polys(self, dps):
        # one computation at _POLY_DPS digits serves every request up to it (the recurrence costs
        # about the same at 30 and at 100 digits; in d = 64 each precision took 0.3-1 s)
        dps = max(dps, _POLY_DPS)
        if dps not in self._polys:
            with mpmath.workdps(dps + 10):
                two_pi = 2 * mpmath.pi
                out = []
                b = mpmath.mpf(self.b)
                for sigma, weight in ((b, 1), (-b, 1)) if self.kind == "cos" else ((b, -1), (-b, 1)):
                    if self.kind == "cos":
                        state, steps = {0: [mpmath.mpf(weight) / 2]}, self.m
                    else:  # D G(rho - sigma) = -(u / (2 pi)) F_1
                        state, steps = {0: [mpmath.mpf(0), -mpmath.mpf(weight) / (2 * two_pi)]}, self.m - 1
                    for _ in range(steps):
                        new = {}
                        for j, p in state.items():
                            # (u^3 P'(u) / (2 pi)) F_n
                            dp = [mpmath.mpf(0)] * 2 + [i * p[i] / two_pi for i in range(len(p))]
                            _poly_add(new, j, dp)
                            # (1 - sigma u) P(u) F_(n+2)
                            _poly_add(new, j + 1, [*p, mpmath.mpf(0)])
                            _poly_add(new, j + 1, [mpmath.mpf(0)] + [-sigma * v for v in p])
                        state = new
                    out.append((float(sigma), state))
            self._polys[dps] = out
        return self._polys[dps]

    # -- F_n in logs (float) and in mpmath ----------------------------------------------------
    def log_f(self, j, t):
        """log F_(2j+1)(t), t > 0 (float arrays)."""
        m = self.alpha - (j + 0.5)
        z = math.sqrt(self.s) * t
        lk = log_besselk(m, z)
        return _log_fn_const(self.alpha, self.s, j) + m * np.log(t) + lk

    def _f_const(self, j):
        """C_n s^(-m/2) of F_(2j+1)(t) = C_n s^(-m/2) t^m K_m(sqrt(s) t), m = alpha - j - 1/2, at the
        current precision (cached; :meth:`f_mp_all` evaluates it)."""
        key = (j, mpmath.mp.prec)
        if key not in self._f_consts:
            m = mpmath.mpf(self.alpha) - (j + mpmath.mpf(1) / 2)
            s = mpmath.mpf(self.s)
            cn = (
                2
                * (s / 2) ** self.alpha
                / (mpmath.gamma(self.alpha) * (2 * mpmath.pi) ** (j + mpmath.mpf(1) / 2))
            )
            self._f_consts[key] = cn * s ** (-m / 2)
        return self._f_consts[key]

    def _gmpy_polys(self, dps):
        """:meth:`polys` at ``dps`` digits as flat gmpy2 object arrays, one per shift sigma:
        ``(sigma, js, coef, abs_coef, power, row)`` with the nonzero coefficients only (a third of
        them in d = 64: 529 of 1,617), the power of u and the index into ``js`` of each (cached per
        precision)."""
        key = ("gmpy", dps, gmpy2.get_context().precision)
        if key not in self._polys:
            flat = []
            for sigma, state in self.polys(dps):
                js = sorted(state)
                entries = [(c, i, n) for n, j in enumerate(js) for i, c in enumerate(state[j]) if c != 0]
                coef = np.array([to_gmpy(c) for c, _, _ in entries] or [gmpy2.mpfr(0)], dtype=object)
                power = np.array([i for _, i, _ in entries] or [0], dtype=np.intp)
                row = np.array([n for _, _, n in entries] or [0], dtype=np.intp)
                flat.append((sigma, js, coef, np.abs(coef), power, row))
            self._polys[key] = flat
        return self._polys[key]

    def f_mp_all(self, js, t):
        """{j: F_(2j+1)(t)} for the indices ``js`` at the current precision: the orders
        m_j = alpha - j - 1/2 step by 1, so K of two orders per class of |m_j| mod 1 (mpmath) and the
        rest by the upward recurrence K_(v+1) = K_(v-1) + (2 v / z) K_v (stable: K grows with the
        order) instead of one besselk per order (each ~2 ms at 40 digits; 18 per point in d = 17)."""
        rs = mpmath.sqrt(mpmath.mpf(self.s))
        z = rs * t
        top = max(js)
        orders = {j: mpmath.mpf(self.alpha) - (j + mpmath.mpf(1) / 2) for j in range(top + 1)}
        kv = {}  # j -> K_|m_j|(z)
        # the orders >= 0 grow as j falls, those < 0 as j grows: each chain upwards from its two lowest
        for chain in (
            [j for j in range(top, -1, -1) if orders[j] >= 0],
            [j for j in range(top + 1) if orders[j] < 0],
        ):
            for n, j in enumerate(chain):
                v = abs(orders[j])
                if n < 2:
                    kv[j] = _besselk_mp(v, z)
                else:
                    lower = abs(orders[chain[n - 1]])
                    kv[j] = kv[chain[n - 2]] + (2 * lower / z) * kv[chain[n - 1]]
        return {j: self._f_const(j) * t ** orders[j] * kv[j] for j in js}

    # -- evaluation -------------------------------------------------------------------------
    def log_abs_and_sign(self, rho, t=None):
        """log|mu| and sign: float64 (series below R/2, walk above) where at most ``_LOST_FLOAT``
        digits cancel, else mpmath. ``t``: the exact rho - b where rho is its rounding."""
        rho = np.asarray(rho, dtype=np.float64)
        la, sg, lost = self.float_values(rho, t)
        near = (lost > _LOST_FLOAT) & (rho >= 0.5 * self.series_radius)
        if self.kind == "cos" and np.any(near):
            # near the kink the walk's terms P_j(1/rho) F_(2j+1)(|rho - b|) are singular to different
            # orders and cancel (m log10(1/|rho - b|) digits): the same sum in u = 1/rho and
            # tau = (rho - sigma)/rho has every term of the kink's own order (:class:`_ShiftedWalk`)
            la[near], sg[near], lost[near] = self._shifted(rho[near], None if t is None else t[near])
        with np.errstate(over="ignore", under="ignore"):
            bound = _float_bound(np.exp(la) * abs(self.c), lost)
        floor = self.floor(rho) if callable(self.floor) else self.floor
        bad = np.nonzero((lost > _LOST_FLOAT) & ~(bound <= floor))[0]
        for i in bad:
            r = float(rho[i])
            off = None if t is None else float(t[i])
            la[i], sg[i] = (
                self._series_point(r)
                if r < 0.5 * self.series_radius
                else self._mp_point(r, float(lost[i]), off)
            )
        return la + math.log(abs(self.c)), sg * (1.0 if self.c > 0 else -1.0)

    def _shifted(self, rho, t=None):
        """log|mu|, sign and digits lost of mu_n = (Q_n(rho, b) + Q_n(rho, -b))/2 (c = 1); ``t``: the
        exact rho - b."""
        if not hasattr(self, "_shift_walk"):
            self._shift_walk = _ShiftedWalk(self.alpha, self.s, self.n)
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        for sigma in (self.b, -self.b):
            exact = t is not None and sigma > 0
            diff = t if exact else rho - sigma
            # rho = b only by rounding: the nearest float's distance (as the walk's own form); an
            # exact offset is used as it is, down to the last float
            w = np.maximum(np.abs(diff), _TINY if exact else 4 * _EPS * abs(sigma))
            q, a = self._shift_walk(rho, w, np.copysign(w, diff) / rho)
            total, absum = total + q, absum + a
        with np.errstate(divide="ignore", invalid="ignore"):
            lost = np.where(total != 0, np.log10(absum / np.abs(total)), np.inf)
            return np.log(0.5 * np.abs(total)), np.sign(total), np.nan_to_num(lost, nan=np.inf)

    def values(self, rho, t=None):
        """(mu, absolute error bound) in float64 only (c included): for quadrature nodes. ``t``:
        rho - b computed without cancellation by the caller (the kink's variable)."""
        la, sg, lost = self.float_values(rho, t)
        with np.errstate(over="ignore", under="ignore"):
            val = self.c * sg * np.exp(la)
        return val, _float_bound(val, lost)

    def float_values(self, rho, t=None):
        rho = np.asarray(rho, dtype=np.float64)
        la = np.empty(rho.shape)
        sg = np.empty(rho.shape)
        lost = np.empty(rho.shape)
        small = rho < 0.5 * self.series_radius
        if np.any(small):
            la[small], sg[small], lost[small] = self._series_float(rho[small])
        if np.any(~small):
            la[~small], sg[~small], lost[~small] = self._float(rho[~small], None if t is None else t[~small])
        return la, sg, lost

    def _series_float(self, rho):
        coef = self.series_coeffs()
        y = (rho / self.series_radius) ** 2
        total = np.zeros(rho.shape)
        absum = np.zeros(rho.shape)
        for ck in coef[::-1]:
            total = total * y + ck
            absum = absum * y + abs(ck)
        with np.errstate(divide="ignore", invalid="ignore"):
            lost = np.where(total != 0, np.log10(absum / np.abs(total)), np.inf)
            return np.log(np.abs(total)), np.sign(total), lost

    def series_coeffs(self):
        """Float coefficients of mu_n = sum_i e_i (rho/R)^(2i) (c = 1, R = ``series_radius``), cut where
        e_i 4^-i < 1e-18 max."""
        if not hasattr(self, "_series_f"):
            mm = self.m
            n_terms = 64
            while True:
                a = self._taylor_coeffs(40, n_terms + mm)
                with mpmath.workdps(40):
                    b2 = mpmath.mpf(self.series_radius) ** 2
                    e = [
                        a[k]
                        * (-1 / mpmath.pi) ** mm
                        * mpmath.factorial(k)
                        / mpmath.factorial(k - mm)
                        * b2 ** (k - mm)
                        for k in range(mm, mm + n_terms)
                    ]
                    sizes = [abs(v) * mpmath.mpf(4) ** (-i) for i, v in enumerate(e)]
                    top = max(sizes)
                if all(v < top * mpmath.mpf(10) ** -18 for v in sizes[-6:]) or n_terms >= 2048:
                    break
                n_terms *= 2
            self._series_f = np.array([float(v) for v in e])
        return self._series_f

    def _float(self, rho, t_exact=None):
        u = np.log(1.0 / rho)
        logs, signs = [], []
        for sigma, state in self.polys(30):
            exact = t_exact is not None and sigma > 0
            t = np.abs(t_exact) if exact else np.abs(rho - sigma)
            # rho = b only by rounding: the nearest float (an exact offset is used as it is)
            t = np.maximum(t, _TINY if exact else 4 * _EPS * abs(sigma))
            for j, p in state.items():
                lf = self.log_f(j, t)
                for i, coef in enumerate(p):
                    if coef == 0:
                        continue
                    logs.append(math.log(abs(float(coef))) + i * u + lf)
                    signs.append(1.0 if coef > 0 else -1.0)
        logs = np.array(logs)
        signs = np.array(signs)[:, None]
        top = np.max(logs, axis=0)
        with np.errstate(under="ignore", invalid="ignore"):
            w = np.exp(logs - top)
            total = np.sum(signs * w, axis=0)
            absum = np.sum(w, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lost = np.where(total != 0, np.log10(absum / np.abs(total)), np.inf)
            return np.log(np.abs(total)) + top, np.sign(total), np.nan_to_num(lost, nan=np.inf)

    def _mp_point(self, rho, lost, off=None):
        """mu_n at rho at the precision the cancellation needs; ``off``: the exact rho - b (rho is
        its rounding: a few ulps from the kink the rounding is a large part of |rho - b|)."""
        dps = 20 * math.ceil((25 + min(lost, 400.0)) / 20)
        while True:
            # the Bessel factors in mpmath, the sums (thousands of terms in high d) in gmpy2's MPFR
            with mpmath.workdps(dps), gmpy2.context(precision=mpmath.mp.prec + 16):
                r = mpmath.mpf(rho) if off is None else mpmath.mpf(self.b) + mpmath.mpf(off)
                u = to_gmpy(1 / r)
                total = absum = gmpy2.mpfr(0)
                for sigma, js, coef, abs_coef, power, row in self._gmpy_polys(dps):
                    # the exact offset itself at the kink (b + off rounds to b at this precision
                    # once |off| < b 10^-dps)
                    t = abs(mpmath.mpf(off)) if off is not None and sigma == self.b else abs(r - sigma)
                    f_all = self.f_mp_all(js, t)
                    f = np.array([to_gmpy(f_all[j]) for j in js], dtype=object)
                    # sum_j P_j(u) F_j as one dot product over the nonzero coefficients (numpy's
                    # object loops, not the interpreter's); the sizes sum_i |p_i| u^i |F_j| (u > 0)
                    # measure the digits lost
                    upow = np.empty(int(power.max()) + 1, dtype=object)
                    upow[0] = gmpy2.mpfr(1)
                    for i in range(1, len(upow)):
                        upow[i] = upow[i - 1] * u
                    g = upow[power] * f[row]
                    total += np.dot(coef, g)
                    absum += np.dot(abs_coef, np.abs(g))
                lost_mp = float(gmpy2.log10(absum / abs(total))) if total != 0 else math.inf
                if dps >= lost_mp + 20:
                    return float(gmpy2.log(abs(total))), (1.0 if total > 0 else -1.0)
            if dps > _MAX_DPS:
                raise ArithmeticError(f"the dimension walk needs more than {_MAX_DPS} digits at rho = {rho}")
            dps = 20 * math.ceil((min(lost_mp, dps + 100) + 30) / 20)

    def _taylor_coeffs(self, dps, n_terms):
        """a_k of mu_1(rho) = sum_k a_k rho^(2k) (c = 1) for k < n_terms, each to ``dps`` digits.

        The recurrence for the Taylor coefficients of t^m K_m(sqrt(s) t) at t = b runs forwards and
        loses digits as k grows (31 of 50 in d = 65 with non-integer alpha: mu was 6e-9 off below
        b/2 with a 1e-10 stated error). It is run at two precisions 30 digits apart; their difference
        measures the loss, and the working precision grows until the coefficients the walk uses
        (k >= m) agree to ``dps`` + 2 digits in the series' terms a_k k!/(k - m)! R^(2k) 4^-k (rho <=
        R/2, R = ``series_radius``), relative to the largest; the more precise run is kept."""
        key = (dps, n_terms)
        if key not in self._taylor:
            mm = self.m
            runs = {}  # wp -> coefficients: a retry 30 digits up reuses the last precise run

            def run(wp):
                if wp not in runs:
                    runs[wp] = self._taylor_run(wp, n_terms)
                return runs[wp]

            extra = 10
            while True:
                lo, hi = run(dps + extra), run(dps + extra + 30)
                with mpmath.workdps(dps + extra + 30):
                    w = [
                        mpmath.factorial(k)
                        / mpmath.factorial(k - mm)
                        * (mpmath.mpf(self.series_radius) ** 2 / 4) ** k
                        for k in range(mm, n_terms)
                    ]
                    top = max(abs(y) * wk for y, wk in zip(hi[mm:], w))
                    diff = max(abs(x - y) * wk for x, y, wk in zip(lo[mm:], hi[mm:], w))
                    rel = diff / top if top > 0 else mpmath.mpf(0)
                if rel <= mpmath.mpf(10) ** -(dps + 2):
                    break
                lost = dps + extra + (float(mpmath.log10(rel)) if rel < 1 else 0.0)
                extra = max(extra + 30, math.ceil(lost) + 10)
                if dps + extra > _MAX_DPS:
                    raise ArithmeticError(
                        f"the Taylor coefficients of the dimension walk need more than {_MAX_DPS} digits"
                    )
            self._taylor[key] = hi
        return self._taylor[key]

    def _taylor_run(self, wp, n_terms):
        """The Taylor coefficients of :meth:`_taylor_coeffs` computed at ``wp`` digits."""
        with mpmath.workdps(wp):
            b, s = mpmath.mpf(self.b), mpmath.mpf(self.s)
            m = mpmath.mpf(self.alpha) - mpmath.mpf(1) / 2
            c1 = 2 * (s / 2) ** self.alpha / (mpmath.gamma(self.alpha) * mpmath.sqrt(2 * mpmath.pi))
            cs = c1 * s ** (-m / 2)
            rs = mpmath.sqrt(s)
            n_f = 2 * n_terms + 2
            f = [b**m * mpmath.besselk(m, rs * b), -rs * b**m * mpmath.besselk(m - 1, rs * b)]
            for k in range(n_f):
                prev = f[k - 1] if k >= 1 else 0
                f.append(
                    (s * (b * f[k] + prev) - (k + 1) * (k + 1 - 2 * m) * f[k + 1]) / (b * (k + 2) * (k + 1))
                )
            if self.kind == "cos":
                return [cs * f[2 * k] for k in range(n_terms)]
            # G_k = f_(k-1)/k for the even k (the constant G(b) is killed by the walk, d >= 3)
            return [mpmath.mpf(0)] + [cs * f[2 * k - 1] / (2 * k) for k in range(1, n_terms)]

    def _series_point(self, rho):
        """mu_n(rho) for rho < R/2 (R = ``series_radius``) from the Taylor series (terms shrink at least
        like 4^-k)."""
        mm = self.m
        n_terms = (
            mm
            + 60
            + int(
                40 * math.log(10) / math.log(self.series_radius / max(rho, 1e-300) if rho > 0 else 1e300) + 1
            )
        )
        # rounded up to a multiple of 32: the coefficients are cached per (digits, length)
        n_terms = 32 * math.ceil(min(n_terms, mm + 200) / 32)
        dps = 40
        while True:
            a = self._taylor_coeffs(dps, n_terms + mm + 1)
            with mpmath.workdps(dps):
                x = mpmath.mpf(rho) ** 2
                total = biggest = mpmath.mpf(0)
                fac = (-1 / mpmath.pi) ** mm
                for k in range(mm, mm + n_terms):
                    term = a[k] * fac * mpmath.factorial(k) / mpmath.factorial(k - mm) * x ** (k - mm)
                    total += term
                    biggest = max(biggest, abs(term))
                lost = float(mpmath.log10(biggest / abs(total))) if total != 0 else math.inf
            if dps >= lost + 20:
                return float(mpmath.log(abs(total))), (1.0 if total > 0 else -1.0)
            if dps > _MAX_DPS:
                return -math.inf, 1.0  # an exact zero of mu (to 500+ digits of its terms)
            dps = 20 * math.ceil((min(lost, dps + 100) + 30) / 20)


def _besselk_mp(m, z):
    """K_m(z) in mpmath; for half-integer m = +-(n + 1/2) the finite sum
    K_(n+1/2)(z) = sqrt(pi/(2z)) e^-z sum_(k<=n) (n+k)!/(k! (n-k)!) (2z)^-k (exact, and ~20x cheaper
    than the hypergeometric route; integer alpha makes every order of the walk half-integer)."""
    n2 = 2 * abs(m)
    if n2 == int(n2) and int(n2) % 2 == 1:
        n = (int(n2) - 1) // 2
        term, total = mpmath.mpf(1), mpmath.mpf(1)
        for k in range(1, n + 1):
            term = term * (n + k) * (n - k + 1) / (k * 2 * z)
            total += term
        return mpmath.sqrt(mpmath.pi / (2 * z)) * mpmath.exp(-z) * total
    return mpmath.besselk(m, z)


#: log of the factor 100 by which the kink tables' floor relative to the radial density (1e-11 of its
#: peak) is looser than the one relative to max|mu| (1e-13): tighter cost 3x in d = 6, 8
_RADIAL_SLACK = math.log(100.0)
_MIN_OFFSET = 2.0**-40  # even-d tables start here: closer in, the contour's pieces cancel
_GOOD_TABLE = 1e-6  # a contour table this accurate is taken without the half step
_HALF_MAX_D = 12  # from here on no half step (its odd neighbour in mpmath: minutes)
#: beyond, the contour's scaled Bessel factors I_m, K_m, H_m (m = d/2 - 1) leave the float range
#: where they matter (rho^m at the smallest rho, 1e-9 b, underflows from m = 35 on; at m ~ 60,
#: I_m(rho y)); up to d = 48 every kind is computed, up to d = 64 cos and sin(r)/r with an integer
#: alpha (a pole, no branch cut): beyond d = 48 a fractional alpha's arc and bank cancel near the
#: kink and J_nu's table falls short, in 10-20 s (measured in d = 64 and 70: tables at 1e5-1e7)
_CONTOUR_MAX_D = 48
_CONTOUR_MAX_D_POLE = 64


def _integer_power(alpha):
    """True where the envelope (1 + r^2/s)^-alpha has a pole at r = i sqrt(s), no branch cut."""
    return abs(alpha - round(alpha)) < 1e-12


def _contour_max_d(kind, alpha):
    """The largest d in which the contour is used (``_CONTOUR_MAX_D``, ``_CONTOUR_MAX_D_POLE``)."""
    return _CONTOUR_MAX_D_POLE if kind != "bessel" and _integer_power(alpha) else _CONTOUR_MAX_D


_ACCEPT_TABLE = 1e-5  # the largest table error stated rather than refused (the masses carry it)
_LOST_FLOAT = 3.5  # float64 kve (~2e-14) times 10^3.5: within the stated 1e-10


def _float_bound(value, lost):
    """The absolute error bound of the walk's float sum: 64 ulps of |value| times 10^(digits lost)."""
    return np.abs(value) * 64 * _EPS * 10.0 ** np.minimum(lost, 300.0)


#: absolute error floor of the rq-oscillation walk, in units of max|mu| (its stated abs_error)
_RQ_FLOOR = 1e-13


def _poly_add(state, j, p):
    cur = state.get(j, [])
    if len(cur) < len(p):
        cur = cur + [mpmath.mpf(0)] * (len(p) - len(cur))
    state[j] = [x + (p[i] if i < len(p) else 0) for i, x in enumerate(cur)]


# ---------------------------------------------------------------------------------------------
# rational-quadratic envelope, even d (and sin(b r)/r in d = 1): the half step
# ---------------------------------------------------------------------------------------------
_TS_LEVEL = 4  # tanh-sinh level: 145 nodes per piece; the level-3 subset gives the error estimate


def _ts_symmetric(a, level=_TS_LEVEL):
    """Nodes for int_0^a f of an even integrand f, as half of int_(-a)^a (tanh-sinh: clusters at
    +-a only). Returns (v, a - v, weights, coarse-level weights), shapes (len(a), nodes)."""
    x, xc, w, coarse = _tanh_sinh(level)
    a = a[:, None]
    v = np.abs(a * (2 * x - 1))
    dist = a * np.minimum(2 * xc, 2 * x)  # a - |v| without cancellation
    return v, dist, w[None, :] * a, np.where(coarse, 2 * w, 0.0)[None, :] * a


def _level_down(coarse_weights):
    """The weights of the rule one level below ``coarse_weights`` (those of level - 1 on the nodes of
    level, shape (rows, nodes), node index k + K, k = -K..K): every other node of it, doubled."""
    k = np.arange(coarse_weights.shape[1]) - (coarse_weights.shape[1] - 1) // 2
    return np.where(k % 4 == 0, 2 * coarse_weights, 0.0)


def _es_right(a, scale, level=_TS_LEVEL):
    """Exp-sinh nodes for int_a^inf: (v, v - a, weights, coarse-level weights), shapes (len(a), nodes)."""
    x, w, coarse = _exp_sinh(level)
    off = scale[:, None] * x[None, :]
    return a[:, None] + off, off, scale[:, None] * w, scale[:, None] * np.where(coarse, 2 * w, 0.0)


class _RQHalfStep:
    """mu_d of cos(b r) g(r) or sin(b r)/r g(r) in even d (c = 1) from the odd neighbours.

    The d-dimensional measure is the projection of the (d+1)-dimensional one,

        mu_d(rho) = 2 int_0^inf mu_(d+1)(sqrt(rho^2 + v^2)) dv,

    used when mu_(d+1) ~ |t - b|^(p - (d+2)/2) has an exponent >= -1/2; otherwise (mu_(d+1) not
    locally integrable, or nearly so) the same identity with mu_(d+1) = -(1/(2 pi t)) mu_(d-1)'(t),
    integrated by parts in v (the Abel inversion),

        mu_d(rho) = -(1/pi) int_0^inf (mu_(d-1)(sqrt(rho^2 + v^2)) - mu_(d-1)(rho)) / v^2 dv,

    whose integrand has the integrable |t - b|^(p - d/2) (exponent > -1/2 for a finite measure).
    Both neighbours are odd: the dimension walk (:class:`_RQWalk`). The integral is split at the
    kink v_b = sqrt(b^2 - rho^2) (rho < b) or at sqrt(rho^2 - b^2) (rho > b, the distance of the
    complex singularities): [0, a] as half of the symmetric [-a, a] by tanh-sinh (the integrand is
    even and smooth in v at 0), [a, inf) by exp-sinh (scale max(a, 1/sqrt(s))). The error estimate
    is the difference to the coarser double-exponential level plus the propagated rounding bounds
    of the walk's values. Beyond t = max(rho, b) + (60 + 2 alpha + d)/sqrt(s) the neighbour is
    negligible (it decays like e^(-sqrt(s) t)) and taken as 0 (the Abel integrand is then the exact
    mu_(d-1)(rho)/(pi v^2)).
    """

    def __init__(
        self,
        kind,
        b,
        alpha,
        s,
        d,
        odd=None,
        p=None,
        noise=5e-11,
        projection=None,
        level=_TS_LEVEL,
        sharpen=False,
    ):
        """``odd(n)``: the n-dimensional density (n odd) as rho -> (mu, error bound), ``p`` the
        kernel's decay exponent and ``noise`` the relative error of ``odd``'s values, for other
        oscillations (default: the walk of cos or sin/r). ``projection``: force the projection
        (True: valid above the kink only where mu_(d+1) is not locally integrable) or the Abel
        form; default by the exponent as above. ``level``: of the double-exponential rules (the
        error estimate is the difference to the level below, which overstates the error of the
        finer level by orders of magnitude: one level more where the caller's odd density is cheap
        and its own accuracy is to be kept). ``sharpen``: estimate the finer level's error from three
        levels (d1^2/d2 where the levels converge) instead."""
        if p is None:
            p = 2 * alpha + (1.0 if kind == "sin" else 0.0)
        if odd is None:

            def odd(n):
                return _accurate(_RQWalk(1.0, kind, b, alpha, s, n))

        self.b, self.s, self.d, self.level, self.sharpen = b, s, d, level, sharpen
        self.projection = p - 0.5 * (d + 2) >= -0.5 if projection is None else projection
        n = d + 1 if self.projection else d - 1
        if n == 1 and kind == "sin":  # p = 2 alpha + 1 > d/2 = 1 always: never here
            raise TransformError("internal: the half step of sin(b r)/r in d = 2 needs mu_3")
        self.width = 1.0 / math.sqrt(s)  # the decay length of F_n: the exp-sinh scale
        # beyond max(rho, b) + reach the neighbour is below e^-60 of its values near b: set to 0
        self.reach = (60.0 + 2.0 * alpha + d) / math.sqrt(s)
        self.table = _KinkTable(odd(n), b, b + self.reach, noise=noise, dim=n)
        self.centre = None if self.projection else odd(d + 1)

    takes_offset = True

    def __call__(self, rho, off=None):
        """(mu_d(rho), absolute error estimate) for an array of rho >= 0, rho != b; ``off``: the exact
        rho - b where rho is its rounding (:class:`_KinkTable`: near the kink, |rho - b|^gamma with a
        fractional gamma would jitter with the rounding of rho)."""
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        b = self.b
        below = off < 0
        # split point: the kink v_b (rho < b), or the distance of the complex singularities
        a0 = np.sqrt(np.abs(off) * (b + rho))
        # above b the integrand falls off like exp(-sqrt(s) v^2/(2 rho)): a shorter first piece
        a = np.where(below, a0, np.minimum(a0, np.sqrt(rho * self.width)))
        v1, d1, w1, c1 = _ts_symmetric(a, self.level)
        v2, l2, w2, c2 = _es_right(a, np.maximum(a, self.width), self.level)
        v = np.concatenate([v1, v2], axis=1)
        w = np.concatenate([w1, w2], axis=1)
        wc = np.concatenate([c1, c2], axis=1)
        r = rho[:, None]
        t = np.sqrt(r * r + v * v)
        # t - b without cancellation: (v - v_b)(v + v_b)/(t + b) below b, (a^2 + v^2)/(t + b) above
        signed = np.concatenate([-d1, l2], axis=1)  # v - a
        tb = np.where(below[:, None], signed * (v + a[:, None]), a0[:, None] ** 2 + v * v) / (t + b)
        f = self.table.at_offset(tb)
        fe = self.table.error * np.where(
            tb <= self.reach, np.maximum(np.abs(f), self.table.floor_at(b + tb)), 0.0
        )
        if self.projection:
            g, ge = 2 * f, 2 * fe
        else:
            f0 = self.table.at_offset(off)
            f0e = self.table.error * np.maximum(np.abs(f0), self.table.floor_at(rho))
            with np.errstate(divide="ignore", invalid="ignore"):
                g = -(f - f0[:, None]) / (np.pi * v * v)
                ge = (fe + f0e[:, None] + _EPS * (np.abs(f) + np.abs(f0[:, None]))) / (np.pi * v * v)
            # v = 0 (the middle node of the symmetric piece): the limit -mu_(d-1)'(rho)/(2 pi rho) = mu_(d+1)(rho)
            zero = v == 0
            if np.any(zero):
                lim, lim_e = self.centre(rho)
                g = np.where(zero, lim[:, None], g)
                ge = np.where(zero, lim_e[:, None], ge)
        val = np.sum(g * w, axis=1)
        coarse = np.sum(g * wc, axis=1)
        d1 = np.abs(val - coarse)
        if self.sharpen:
            # the level difference d1 measures the coarser rule's error; where the levels converge
            # (double-exponentially: each level about doubles the digits) the finer rule's error is
            # about d1^2 / d2, d2 the difference one level further down (never more than d1)
            w2 = np.concatenate([_level_down(c1), _level_down(c2)], axis=1)
            d2 = np.abs(coarse - np.sum(g * w2, axis=1))
            with np.errstate(divide="ignore", invalid="ignore"):
                sharp = np.where(d2 > d1, d1 * d1 / d2, d1)
            d1 = sharp + 8 * _EPS * np.sum(np.abs(g * w), axis=1)
        err = d1 + np.sum(ge * w, axis=1)
        return val, err


def _log_panels(lo, hi, n, f, multiple=4):
    """sum over rows of int_lo^hi f(u, rows) du by Gauss-Legendre (``n`` nodes) on panels of width
    <= 1/2, rows grouped by their panel count (rounded up to a multiple of ``multiple``: one long
    row does not set every row's cost): (complex sums, sums of |f| du)."""
    count = multiple * np.ceil(np.maximum(np.ceil((hi - lo) / 0.5), 1.0) / multiple).astype(int)
    total = np.zeros(lo.shape, dtype=np.complex128)
    size = np.zeros(lo.shape)
    for n_panels in np.unique(count):
        rows = np.flatnonzero(count == n_panels)
        x, w = panel_rule(np.linspace(0.0, 1.0, n_panels + 1), n)
        span = (hi - lo)[rows][:, None]
        with np.errstate(all="ignore"):
            v = f(lo[rows][:, None] + span * x[None, :], rows) * span * w[None, :]
        v = np.where(np.isfinite(v), v, 0.0)
        total[rows] = v.sum(axis=1)
        size[rows] = np.abs(v).sum(axis=1)
    return total, size


class _RQContour:
    """mu_d of cos(b r) g(r), sin(b r)/r g(r) or J_nu(b r)/r^nu g(r) (c = 1) by contour deformation.

    With m = d/2 - 1 and h(r) = g(r) r^(m+1) (cos), g(r) r^m (sin/r) or g(r) r^(m+1-nu) (J_nu), the
    Hankel integral is

        mu_d(rho) = (2 pi)^(-d/2) rho^(-m) {Re, Im, Re} int_0^inf w(r) h(r) J_m(rho r) dr,

    w(r) = e^(i b r) (cos, sin/r) or H1_nu(b r) = J_nu(b r) + i Y_nu(b r) (J_nu), g, J_m real on the
    axis. It converges only conditionally (or, where the measure is finite but k decays slower than
    r^-(d+1)/2, as an Abel limit), so it is not summed on the real axis. The integrand is analytic
    in Re r > 0 (g's poles and branch cuts lie on the imaginary axis), and w(r) ~ e^(i b r) times a
    slowly varying factor (H1_nu(b r) e^(-i b r), bounded beyond r ~ (nu + 2)/b):

    * rho < b/4: the real segment [0, t1] (t1 = 0 for the exponential, (nu + 2)/b for H1_nu, whose
      Y_nu is singular at 0 and not yet a wave), then the ray r = t1 + t e^(i pi/4); w(r) J_m(rho r)
      decays there like e^(-(b - rho) t sin(pi/4)).
    * otherwise: the real segment [0, t0], t0 = max((m + 2)/rho, t1) (Gauss-Legendre panels
      shorter than the oscillation and than the distance sqrt(s) of g's singularities), then
      J_m = (H1 + H2)/2: w(r) H1_m(rho r) ~ e^(i (b + rho) r) on the ray t0 + t e^(i pi/4), and
      w(r) H2_m(rho r) ~ e^(i (b - rho) r) on the ray t0 + t e^(+-i pi/4), upwards for rho < b and
      downwards for rho > b. Beyond t0 the Hankel functions are waves (no cancellation between H1
      and H2, which near 0 are ~ r^-m).

    On the segment w is taken as e^(i b r) (the sine is its imaginary part) or as the real J_nu(b r)
    (the real part of H1_nu, whose Y_nu need not be integrable at 0). Every ray integral has one
    decay rate and is summed by exp-sinh with that length scale (down to |rho - b| = b 2^-52,
    where the H2 ray reaches t ~ 10^16: the |rho - b|^gamma behaviour at the kink, gamma = p -
    (d+1)/2 > -1, comes out of the quadrature as it is). Scaled Bessel functions (jve, hankel1e,
    hankel2e) with the exponentials combined keep every factor finite. Error: the difference of two
    exp-sinh levels and of two Gauss-Legendre orders, plus 1e-14 of the integral of |integrand|
    (rounding and the Bessel functions' own relative accuracy). Any d >= 2 (half-integer m in odd d).
    """

    takes_offset = True  # (:class:`_KinkTable`) evaluated at exactly b + off
    _THETA = math.pi / 4
    _LEVEL = 5  # exp-sinh level (h = 1/32, 289 nodes); level 4 (every other node) for the estimate
    _PANEL_NODES = 16
    _AXIS_GOOD = 1e-10  # the imaginary axis alone where it states this relative accuracy
    _ARC = 0.5  # the largest radius of the arc round the branch point, in sqrt(s)
    _POLE_ARC = 0.9  # the radius of the arc round a pole of g below the kink, in sqrt(s)

    def __init__(self, kind, b, alpha, s, d, nu=0.0):
        """``kind``: "cos", "sin" (sin(b r)/r) or "bessel" (J_nu(b r)/r^nu)."""
        self.kind, self.b, self.alpha, self.s, self.d, self.nu = kind, b, alpha, s, d, nu
        self.m = 0.5 * d - 1
        self.sq = math.sqrt(s)
        self.up, self.down = np.exp(1j * self._THETA), np.exp(-1j * self._THETA)
        self.t1 = (nu + 2.0) / b if kind == "bessel" else 0.0
        self.power = self.m + {"cos": 1.0, "sin": 0.0, "bessel": 1.0 - nu}[kind]

    def _h(self, z):
        """g(z) z^power (class docstring), principal branches (Re z >= 0)."""
        return (1.0 + z * z / self.s) ** (-self.alpha) * z**self.power

    def _wave(self, z):
        """w(z) e^(-i b z): 1, or H1_nu(b z) e^(-i b z) (Hankel's expansion far out)."""
        return scaled_bessel("h1", self.nu, self.b * z) if self.kind == "bessel" else 1.0

    def _ray(self, f, start, direction, scale):
        """int over start + t direction, t in [0, inf), of f: (value, error estimate)."""
        x, w, coarse = _exp_sinh(self._LEVEL)
        t = scale[:, None] * x[None, :]
        with np.errstate(all="ignore"):
            v = f(start[:, None] + t * direction) * direction
        # nodes far beyond the decay length: the exponential factor underflowed to 0 (times inf)
        v = np.where(np.isfinite(v), v, 0.0)
        fine = v @ w * scale
        return fine, np.abs(fine - v @ np.where(coarse, 2 * w, 0.0) * scale) + 1e-14 * (np.abs(v) @ w) * scale

    def _slow_ray(self, f, start, direction, rate):
        """The ray of e^(i (b - rho) z) H2: structure on the scale of g (sqrt(s)) near its start and
        the decay e^(-rate t) with rate -> 0 at the kink. In u = log t, Gauss-Legendre panels of
        width <= 1/2 from t = 1e-3 min(sqrt(s), 1) to 46/rate (e^-46 < 2^-66), plus [0, 1e-3 ...].
        ``f(z, rows)``: the integrand of the given rows. Rows are grouped by their panel count
        (rounded up to a multiple of 8): the slowest ray does not set every row's cost."""
        lo = math.log(1e-3 * min(self.sq, 1.0))
        hi = np.log(46.0 / rate)
        every = np.arange(len(start))
        out = []
        for n in (self._PANEL_NODES, self._PANEL_NODES - 4):
            x0, w0 = unit_rule(n)  # [0, e^lo]
            with np.errstate(all="ignore"):
                v = f(start[:, None] + math.exp(lo) * x0[None, :] * direction, every) * direction
            v = np.where(np.isfinite(v), v, 0.0) * (math.exp(lo) * w0)[None, :]

            def tail(u, rows):
                t = np.exp(u)
                return f(start[rows][:, None] + t * direction, rows) * direction * t

            value, size = _log_panels(np.full(len(start), lo), hi, n, tail, multiple=8)
            out.append((value + v.sum(axis=1), size + np.abs(v).sum(axis=1)))
        (value, size), (coarse, _) = out
        return value, np.abs(value - coarse) + 1e-14 * size

    def _segment(self, rho, t0, scale=None):
        """int_0^t0 w(t) h(t) J_m(rho t) / rho^m dt on the real axis (w: the class docstring's
        segment form) by equal Gauss-Legendre panels no wider than half of ``scale`` (default
        sqrt(s)) and of pi / (b + rho) (the same count for every rho: short segments are only
        finer): (value, error estimate)."""
        b, m = self.b, self.m
        r = rho[:, None]
        step = 0.5 * np.minimum(self.sq if scale is None else scale, math.pi / (b + rho))
        n_panels = int(np.max(np.ceil(t0 / step)))
        for n, slot in ((self._PANEL_NODES, 0), (self._PANEL_NODES - 4, 1)):
            x, w = panel_rule(np.linspace(0.0, 1.0, n_panels + 1), n)
            t = t0[:, None] * x[None, :]
            wave = sc.jv(self.nu, b * t) + 0j if self.kind == "bessel" else np.exp(1j * b * t)
            with np.errstate(all="ignore"):
                v = wave * sc.jv(m, r * t) / r**m * self._h(t.astype(np.complex128))
            seg = v @ w * t0
            if slot == 0:
                value, size = seg, (np.abs(v) @ w) * t0
        return value, np.abs(value - seg) + 1e-14 * size

    def _cut(self, rho, off):
        """mu_d(rho) / norm for rho > b (arrays, ``off`` = rho - b > 0) on the imaginary axis.

        With W(z) = cos(b z), sin(b z) or J_nu(b z) (W h real on the real axis), mu_d is
        norm rho^-m Re int_0^inf W(z) h(z) H1_m(rho z) dz, and W H1_m ~ e^(-(rho - b) Im z) lets the
        path turn onto the imaginary axis z = i y. There W h H1_m dz is i times a real function for
        y < sqrt(s) (Re = 0: that stretch is skipped) and i e^(-i pi alpha) times one beyond, on
        the right bank of g's branch cut: Re = sin(pi alpha) (2/pi) V(y) K_m(rho y) y^power
        (y^2/s - 1)^(-alpha), V = cosh, sinh, I_nu (b y). The branch point is passed on the arc
        z = i sqrt(s) + eps e^(i phi), phi in [-pi/2, pi/2], eps = min(sqrt(s)/2, 1/(rho - b)) (the
        integrand's modulus varies by at most e^2 on it). No term is larger than the result by
        more than a modest factor: relative accuracy where mu is exponentially small, which the
        real-axis pieces reach only by cancelling. Arc: Gauss-Legendre; bank: panels in
        log(y - sqrt(s)) up to e^-46 of the decay; errors as in :meth:`_slow_ray`."""
        b, m, sq, alpha, kind = self.b, self.m, self.sq, self.alpha, self.kind
        r = rho[:, None]
        o = off[:, None]
        # integer alpha: a pole, no cut (sin(pi alpha) = 0: no bank); the real part of the right
        # half-arc is half the full circle's (the integrand is i times real on the axis), and the
        # trapezoid rule on the circle converges geometrically where the half-arc's Gauss-Legendre
        # nodes do not resolve z^(m+1) in high d
        # the radius: e^(i off z) makes the circle's terms vary like e^(off eps), and a pole of order
        # alpha is its (alpha - 1)-th Taylor coefficient: radius (alpha - 1)/off keeps the terms
        # within ~sqrt(2 pi alpha) of the result (1/off, the arc's, only for alpha <= 2)
        pole = _integer_power(alpha)
        eps = np.minimum(self._ARC * sq, (max(1.0, alpha - 1) if pole else 1.0) / off)
        out = []
        for n in (self._PANEL_NODES, self._PANEL_NODES - 4):
            if pole:
                e_phi = np.exp(2j * math.pi * np.arange(4 * n) / (4 * n))
                w = np.full(4 * n, 1.0 / (4 * n))  # 0.5 * 2 pi / N, with the pi below
            else:  # the arc (4 panels in phi)
                x, w = panel_rule(np.linspace(0.0, 1.0, 5), n)
                e_phi = np.exp(1j * math.pi * (x - 0.5))
            z = 1j * sq + eps[:, None] * e_phi[None, :]
            dz = 1j * math.pi * eps[:, None] * e_phi[None, :] * w[None, :]
            # W(z) H1_m(rho z) with the exponentials combined: e^(i rho z) = e^(i off z) e^(i b z)
            ez = np.exp(1j * o * z)
            if kind == "bessel":
                wave = sc.jve(self.nu, b * z) * ez * np.exp(1j * b * z.real)
            else:
                ep, em = ez * np.exp(2j * b * z), ez
                wave = 0.5 * (ep + em) if kind == "cos" else (ep - em) / 2j
            with np.errstate(all="ignore"):
                v = wave * sc.hankel1e(m, r * z) * self._h(z) * dz
            arc = np.sum(v.real, axis=1)
            arc_size = np.sum(np.abs(v), axis=1)
            if pole:
                out.append((arc, arc_size))
                continue
            # the right bank of the cut, y = sqrt(s) + e^u
            lo = np.log(eps)
            hi = np.log(np.maximum(46.0 / off, 2.0 * eps))

            def bank(t, rows):
                u = np.exp(t)
                y = sq + u
                if kind == "bessel":
                    vb = scaled_bessel("i", self.nu, b * y)
                else:
                    vb = 0.5 * (1.0 + (1.0 if kind == "cos" else -1.0) * np.exp(-2 * b * y))
                oo = o[rows]
                return (
                    vb * scaled_bessel("k", m, r[rows] * y) * np.exp(-oo * u - oo * sq) * y**self.power
                    * (u * (y + sq) / self.s) ** (-alpha) * u
                )  # fmt: skip

            v, sz = _log_panels(lo, hi, n, bank)
            scale = (2 / math.pi) * math.sin(math.pi * alpha)
            out.append((arc + scale * v.real, arc_size + abs(scale) * sz))
        (value, size), (coarse, _) = out
        return value / r[:, 0] ** m, (np.abs(value - coarse) + 1e-14 * size) / r[:, 0] ** m

    def _axis_below(self, rho, off):
        """mu_d(rho) / norm for rho < b (``off`` = rho - b < 0) on the imaginary axis.

        W = W+ + W-, W+ = e^(i b z)/2, e^(i b z)/(2i) or H1_nu(b z)/2 (W- its mirror image), and
        int_0^inf W h J_m dz = 2 Re int_0^inf W+ h J_m dz, whose integrand decays like
        e^(-(b - rho) Im z) upwards: on z = i y it is e^(i pi (m + power)/2) i A(y) y^power G(y), A
        real (the scaled I_m(rho y) times e^(-b y)/2 or K_nu(b y)/pi), G = (1 - y^2/s)^(-alpha)
        below the branch point and |.|^(-alpha) e^(-i pi alpha) on the cut's right bank. Pieces:
        [0, sqrt(s)/2] in log y, [sqrt(s)/2, sqrt(s) - eps] in log(sqrt(s) - y), the arc of
        :meth:`_cut` and the bank in log(y - sqrt(s)); eps = min(sqrt(s)/2, 1/(b - rho)). Each piece
        has one sign: no oscillation cancels (the real-axis pieces of the contour cancel in high d)."""
        b, m, sq, alpha, kind, pw = self.b, self.m, self.sq, self.alpha, self.kind, self.power
        r = np.maximum(rho, 1e-9 * b)[:, None]
        o = np.where(rho < r[:, 0], r[:, 0] - b, off)[:, None]  # (r - b) where rho is raised to r
        pole = _integer_power(alpha)
        # a pole of order alpha: the pieces next to it are ~ (2 eps / sqrt(s))^-alpha, so the arc
        # is as wide as the origin allows (its e^((b - rho) eps) variation is resolved by panels)
        eps = np.full(rho.shape, self._POLE_ARC * sq) if pole else np.minimum(self._ARC * sq, 1.0 / -off)
        arc_panels = 4 * max(1, math.ceil(float(np.max((b - rho) * eps)) / 2)) if pole else 4
        phase = np.exp(0.5j * math.pi * (m + pw)) * 1j
        if kind == "bessel":
            phase *= np.exp(-0.5j * math.pi * (self.nu + 1)) * 2 / math.pi
        elif kind == "sin":
            phase /= 1j

        def axis(y, bank, rows):
            """2 W+ h J_m i / rho^m on z = i y, without the phase; y^power G(y)."""
            with np.errstate(all="ignore"):
                rr = r[rows]
                a = scaled_bessel("i", m, rr * y) / rr**m * np.exp(o[rows] * y)
                if kind == "bessel":
                    a = a * scaled_bessel("k", self.nu, b * y)
                g = np.abs(1.0 - y * y / self.s) ** (-alpha) * (
                    np.exp(-1j * math.pi * alpha) if bank else 1.0
                )
                return a * y**pw * g

        # the bank's end: I_m(rho y) e^(-rho y) <= (rho y / 2)^m / m! bounds the integrand by
        # y^q e^(-(b - rho) y), q = m + power - 2 alpha; beyond (92 + 2 q)/(b - rho) it is below
        # e^-46 of its peak at q/(b - rho) (in high d q reaches ~ m and the peak lies far beyond
        # the 46/(b - rho) that bounds the exponential alone: 1e-4 of mu was cut off in d = 65)
        q = max(m + pw - 2.0 * alpha, 0.0)
        y_end = (92.0 + 2.0 * q) / -off
        ones = np.ones(rho.shape)
        out = []
        for n in (self._PANEL_NODES, self._PANEL_NODES - 4):
            tiny = 1e-6 * sq
            x0, w0 = unit_rule(n)
            v0 = axis(tiny * x0[None, :], False, slice(None)) * tiny * w0[None, :]
            total, size = v0.sum(axis=1), np.abs(v0).sum(axis=1)
            pieces = [
                (math.log(tiny) * ones, math.log(0.5 * sq) * ones, lambda u, k: axis(np.exp(u), False, k) * np.exp(u)),
                (np.log(eps), math.log(0.5 * sq) * ones, lambda u, k: axis(sq - np.exp(u), False, k) * np.exp(u)),
                (np.log(eps), np.log(np.maximum(y_end, 2.0 * eps)),
                 lambda u, k: axis(sq + np.exp(u), True, k) * np.exp(u)),
            ]  # fmt: skip
            for lo, hi, f in pieces:
                v, sz = _log_panels(lo, hi, n, f)
                total = total + v
                size = size + sz
            # the arc, with the functions of complex argument
            x, w = panel_rule(np.linspace(0.0, 1.0, arc_panels + 1), n)
            e_phi = np.exp(1j * math.pi * (x - 0.5))
            z = 1j * sq + eps[:, None] * e_phi[None, :]
            dz = 1j * math.pi * eps[:, None] * e_phi[None, :] * w[None, :]
            with np.errstate(all="ignore"):
                # W+ J_m(rho z): e^(i b z) e^(|Im rho z|) = e^(i b Re z) e^((rho - b) Im z)
                ez = np.exp(1j * b * z.real + o * z.imag)
                wave = {"cos": 1.0, "sin": -1j, "bessel": None}[kind]
                wave = sc.hankel1e(self.nu, b * z) if wave is None else wave
                v = wave * ez * sc.jve(m, r * z) / r**m * self._h(z) * dz
            arc = np.where(np.isfinite(v), v, 0.0)
            total = total * phase + arc.sum(axis=1)
            size = size * abs(phase) + np.abs(arc).sum(axis=1)
            out.append((total.real, size))
        (value, size), (coarse, _) = out
        return value, np.abs(value - coarse) + 1e-14 * size

    @functools.cached_property
    def _plain_end(self):
        """(T, tail, M) for :meth:`_plain`, or None where |k| r^(d-1) is not integrable at infinity.

        |W| <= 1 (e^(i b r), J_nu with nu >= 0) and |J_m(rho t)| / rho^m <= t^m / (2^m Gamma(m + 1))
        bound the integrand by C t^q g(t), q = power + m, so that past T the integral is at most
        C s^alpha T^(q + 1 - 2 alpha) / (2 alpha - q - 1). T: where that is 1e-17 of
        C int_0^inf t^q g(t) dt = C s^((q+1)/2) B((q+1)/2, alpha - (q+1)/2) / 2, at least 4 sqrt(s)."""
        q = self.power + self.m
        if not (2 * self.alpha > q + 1 and q > -1):
            return None
        log_c = -self.m * math.log(2.0) - math.lgamma(self.m + 1)
        h = 0.5 * (q + 1)
        log_total = log_c + h * math.log(self.s) + math.lgamma(h) + math.lgamma(self.alpha - h)
        log_total -= math.lgamma(self.alpha) + math.log(2.0)
        k = 2 * self.alpha - q - 1
        # C s^alpha T^-k / k = 1e-17 total
        log_t = (log_c + self.alpha * math.log(self.s) - math.log(k) - log_total + 17 * math.log(10)) / k
        t_end = max(math.exp(log_t), 4 * self.sq)
        tail = math.exp(log_c + self.alpha * math.log(self.s) - k * math.log(t_end) - math.log(k))
        return t_end, tail, math.exp(log_total)

    def _plain(self, rho, off=None):
        """mu_d(rho) / norm by Gauss-Legendre panels on the real segment [0, T] alone, the rest
        bounded (:meth:`_plain_end`): for envelopes that decay fast enough (cos(r) (1 + r^2)^-30 in
        d = 16), where the imaginary axis passes a pole of high order (its pieces, ~(1 - y^2/s)^-alpha,
        cancel by 1e10 below the kink) and the rays cancel too. No cancellation where the integrand
        keeps its sign over most of [0, T]; where it does not, the stated error (the difference of two
        rules plus 1e-14 of the integral of the moduli) says so, and another route wins. ``off`` is
        not needed (the routes' common signature)."""
        t_end, tail, _ = self._plain_end
        r1 = np.maximum(rho, 1e-9 * self.b)  # rho^-m J_m(rho t) -> (t/2)^m / m!: see _real_axis
        value = np.empty(r1.shape, dtype=np.complex128)
        err = np.empty(r1.shape)
        # rows by octave of b + rho: the panel count (set by the largest rho) is not every row's
        octave = np.floor(np.log2((self.b + r1) / self.b)).astype(np.int64)
        for k in np.unique(octave):
            sel = octave == k
            # panels on the envelope's own scale: (1 + t^2/s)^-alpha falls by e per sqrt(s / alpha)
            value[sel], err[sel] = self._segment(
                r1[sel], np.full(int(sel.sum()), t_end), self.sq / math.sqrt(max(self.alpha, 1.0))
            )
        return (value.imag if self.kind == "sin" else value.real), err + tail

    def _real_axis(self, rho, off):
        """mu_d(rho) / norm from the real segment and the rays (class docstring)."""
        b, m, th, t1 = self.b, self.m, self._THETA, self.t1
        total = np.zeros(rho.shape, dtype=np.complex128)
        err = np.zeros(rho.shape)
        low = rho < 0.25 * b
        if np.any(low):
            # rho^-m J_m(rho z) -> (z/2)^m/m! as rho -> 0: at 1e-9 b the difference is below 1e-16
            r1 = np.maximum(rho[low], 1e-9 * b)
            r = r1[:, None]

            def f(z, rows):
                rr = r[rows]
                return (
                    np.exp(1j * b * z + np.abs(z.imag) * rr)
                    * self._wave(z)
                    * sc.jve(m, rr * z)
                    / rr**m
                    * self._h(z)
                )

            rate = -off[low] * math.sin(th)
            start = np.full(r1.shape, t1)
            total[low], err[low] = self._slow_ray(f, start, self.up, rate)
            if t1 > 0:
                seg, seg_err = self._segment(r1, start)
                total[low] += seg
                err[low] += seg_err
        high = ~low
        if np.any(high):
            r1 = rho[high]
            o1 = off[high]
            r = r1[:, None]
            t0 = np.maximum((m + 2.0) / r1, t1)
            value, seg_err = self._segment(r1, t0)
            sin_th = math.sin(th)

            def f1(z):
                return (
                    0.5 * np.exp(1j * (b + r) * z) * self._wave(z) * sc.hankel1e(m, r * z) / r**m * self._h(z)
                )

            v1, e1 = self._ray(f1, t0, self.up, np.minimum(1.0 / ((b + r1) * sin_th), self.sq))
            v2 = np.zeros(r1.shape, dtype=np.complex128)
            e2 = np.zeros(r1.shape)
            for mask, direction in ((o1 < 0, self.up), (o1 > 0, self.down)):
                if np.any(mask):
                    rr = r1[mask][:, None]
                    oo = o1[mask][:, None]

                    def f2(z, rows, rr=rr, oo=oo):
                        rr, oo = rr[rows], oo[rows]
                        return (
                            0.5
                            * np.exp(-1j * oo * z)
                            * self._wave(z)
                            * scaled_bessel("h2", m, rr * z)
                            / rr**m
                            * self._h(z)
                        )

                    v2[mask], e2[mask] = self._slow_ray(
                        f2, t0[mask], direction, np.abs(b - r1[mask]) * sin_th
                    )
            total[high] = value + v1 + v2
            err[high] = seg_err + e1 + e2
        return (total.imag if self.kind == "sin" else total.real), err

    def __call__(self, rho, off=None):
        """(mu_d(rho), absolute error estimate) for an array of rho >= 0, rho != b; ``off``: the
        exact rho - b where rho is its rounding (near the kink). The imaginary axis first
        (:meth:`_cut`, :meth:`_axis_below`); where its stated error exceeds ``_AXIS_GOOD`` of the
        value, the real axis (:meth:`_real_axis`) too, and the smaller error wins."""
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        val = np.zeros(rho.shape)
        err = np.full(rho.shape, np.inf)
        routes = [(off > 0, self._cut), (off < 0, self._axis_below)]
        if self.kind == "bessel" and 2 * self.nu >= self.d:
            # W+ = H1_nu(b z)/2 is ~ z^-nu at 0, and the axis integrand ~ y^(d - 1 - 2 nu) is not
            # integrable there: turning the path at the origin leaves out the arc round it (mu was
            # 1/(2 pi) short below b for J_1(r)/r (1 + r^2)^-1 in d = 2). The real axis only.
            routes = routes[:1]
        for side, route in routes:
            if np.any(side):
                val[side], err[side] = route(rho[side], off[side])

        def improve(redo, route):
            """Where ``redo``, the value of ``route`` (rho, off) -> (value, error) whose error is smaller."""
            if np.any(redo):
                v, e = route(rho[redo], off[redo])
                better = e < err[redo]
                val[redo] = np.where(better, v, val[redo])
                err[redo] = np.where(better, e, err[redo])

        improve(~(err <= self._AXIS_GOOD * np.abs(val)), self._real_axis)
        cut = self._plain_end
        if cut is not None:
            # the segment alone states at least 1e-14 of the integral of the moduli, which is below
            # the bound M of _plain_end: rows whose error is already below 1e-13 M are left as they are
            improve(~(err <= self._AXIS_GOOD * np.abs(val)) & (err > 1e-13 * cut[2]), self._plain)
        norm = (2 * math.pi) ** (-0.5 * self.d)
        return val * norm, err * norm


class _RQEven:
    """mu_d in even d (c = 1): at each rho the more accurate (by the stated error) of the contour
    (:class:`_RQContour`) and the half step (:class:`_RQHalfStep`), for kernels where the contour's
    table alone falls short (its pieces cancel in high d near the kink). The half step is accurate
    far out; near the kink only where its neighbour's singularity is mild, and below the kink it
    exists only outside the band (where (d-1)/2 < p < (d+1)/2, mu_(d+1) is not locally integrable
    at b: the projection holds above the kink only, where t = sqrt(rho^2 + v^2) > b never meets
    it). Takes the exact offset rho - b (:class:`_KinkTable`)."""

    takes_offset = True

    def __init__(self, contour, half, band):
        self.b = contour.b
        self.contour, self.half = contour, half
        self.half_below = not band
        self.table = half.table  # the neighbour's table (its error is the half step's noise)

    def __call__(self, rho, off=None):
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        val, err = self.contour(rho, off)
        use = off > 0 if not self.half_below else np.ones(rho.shape, dtype=bool)
        if np.any(use):
            hv, he = self.half(rho[use], off[use])
            better = he < err[use]
            val[use] = np.where(better, hv, val[use])
            err[use] = np.where(better, he, err[use])
        return val, err


class _RQSinD1:
    """mu_1 of sin(b r)/r g(r) (c = 1): (1/2) int_(rho-b)^(rho+b) F_1(|x|) dx, by tanh-sinh on the
    pieces between 0 and the ends (F_1 ~ const + |x|^(2 alpha - 1) at 0: an end-point singularity)."""

    def __init__(self, b, alpha, s):
        self.b = b
        self.f1 = _RQWalk(1.0, "cos", b, alpha, s, 1)

    def _piece(self, lo, hi):
        x, xc, w, coarse = _tanh_sinh(_TS_LEVEL)
        h = (hi - lo)[:, None]
        t = lo[:, None] + h * x[None, :]  # lo >= 0: F_1 smooth inside, singular at 0 only
        with np.errstate(over="ignore", under="ignore"):
            f = np.exp(self.f1.log_f(0, np.maximum(t, _TINY).ravel())).reshape(t.shape)
        return (f @ w) * h[:, 0], (f @ np.where(coarse, 2 * w, 0.0)) * h[:, 0]

    def __call__(self, rho):
        rho = np.asarray(rho, dtype=np.float64)
        b = self.b
        below = rho < b
        lo1 = np.where(below, 0.0, rho - b)
        hi1 = np.where(below, b - rho, rho + b)
        v1, c1 = self._piece(lo1, hi1)
        v2, c2 = self._piece(np.zeros(rho.shape), np.where(below, rho + b, 0.0))
        val = 0.5 * (v1 + v2)
        err = 0.5 * (np.abs(v1 - c1) + np.abs(v2 - c2)) + 1e-14 * np.abs(val)  # kve's ~1e-15 relative
        return val, err


#: the half step's double-exponential levels in even d (the walks are cheap in float64); the next is
#: tried where the table would be refused (error above _ACCEPT_TABLE)
HALF_LEVELS = (6, 7)


def leveled_table(direct, halves, b, rho_max, dim):
    """The :class:`_KinkTable` of ``direct`` (the even-d density from the half steps ``halves``) at the
    first of ``HALF_LEVELS`` whose table is accepted (error <= ``_ACCEPT_TABLE``), else the best one:
    one level finer where the envelope's singularities lie near the real axis."""
    table = None
    for level in HALF_LEVELS:
        for half in halves:
            half.level = level
        trial = _KinkTable(
            direct,
            b,
            rho_max,
            tol=1e-9,
            noise=max(1e-13, *(2 * half.table.error for half in halves)),
            dim=dim,
            min_offset=_MIN_OFFSET,
        )
        table = trial if table is None or trial.error < table.error else table
        if table.error <= _ACCEPT_TABLE:
            break
    return table


def radial_floor(unit, peak, log_radial_peak, n):
    """rho -> unit min(peak, exp(log_radial_peak) / rho^(n-1)): the absolute error accepted from an odd
    walk's float sums, relative to max|mu| (``peak``) or to the radial density's peak max(t^(n-1) |mu|)
    where that is smaller (in high d max|mu| sits at rho ~ 0 and a floor relative to it alone lets
    float errors into the masses through rho^(n-1))."""

    def floor(rho):
        with np.errstate(divide="ignore", over="ignore"):
            return unit * np.minimum(peak, np.exp(log_radial_peak - (n - 1) * np.log(rho)))

    return floor


def _accurate(walk):
    """rho -> (mu_n(rho), error bound) from the walk's own evaluation (float64 where at most
    ``_LOST_FLOAT`` digits cancel, mpmath otherwise): relative error ``1e-10`` (its stated accuracy)."""

    def direct(rho, off=None):
        rho = np.asarray(rho, dtype=np.float64)
        la, sg = walk.log_abs_and_sign(rho, None if off is None else np.asarray(off, dtype=np.float64))
        with np.errstate(over="ignore", under="ignore"):
            val = sg * np.exp(la)
        return val, 1e-10 * np.abs(val)

    direct.takes_offset = True  # (:class:`_KinkTable`) the walk at exactly b + off
    return direct


class _KinkTable:
    """mu on both sides of the kink rho = b as piecewise Chebyshev tables in u = log|rho - b|.

    In u the density A(rho) |rho - b|^gamma + B(rho) (A, B analytic) is smooth. What is tabulated
    is the weighted g = w mu, w(rho) = 1 + rho^(dim-1) / (100 R) with R = max(rho^(dim-1) |mu|) /
    max|mu| (smooth, and max|g| <= 1.01 max|mu|), so that the floor 1e-13 max|g| / w is about
    min(1e-13 max|mu|, 1e-11 max(rho^(dim-1) |mu|) / rho^(dim-1)): relative to the radial density where
    the smaller. The masses are integrals of rho^(dim-1) mu: a floor relative to max|mu| alone let
    noise below it grow by rho^(dim-1) into them (cos(2 r)/(1 + r^2)^5 in d = 16 missed the Bochner
    identity by 7e-6 so). The adaptive panels (:func:`fit_adaptive`,
    relative tolerance ``tol`` above a floor of 1e-13 of max|g|, less the values' own relative
    error ``noise`` and without chasing the errors ``direct`` states for its values) reach every
    float rho with |rho - b| >= ``min_offset`` b (closer: A |rho - b|^gamma + B fitted at the
    first three doublings, :func:`power_law_end`) with a few
    hundred evaluations of the pointwise route ``direct`` (rho -> (value, error estimate)); beyond
    ``rho_max`` (where the caller knows mu to be below e^-60 of its scale, the radial weight
    included) and where |g| is below its floor mu is returned as 0. ``error``: the tables'
    measured error plus ``noise`` plus 6 times the largest error estimate of ``direct`` at the
    points they were fitted to (see ``with_errors`` of :func:`fit_adaptive`), all relative to
    max(|mu|, ``floor_at(rho)``) with floor_at = 1e-13 max|g| / w. The scale of the floor leaves
    out an infinite spike at the kink (it carries no mass to speak of, and would raise the floor).
    """

    def __init__(self, direct, b, rho_max, tol=1e-10, noise=5e-11, dim=1, min_offset=2.0**-52):
        self.direct, self.b, self.rho_max, self.dim = direct, b, rho_max, dim
        probe = np.concatenate(
            [np.linspace(0.0, rho_max, 97), b * (1 + np.array([-1e-6, -1e-3, 1e-3, 1e-6]))]
        )
        probe = probe[probe != b]
        pv, _ = direct(probe)
        near = np.abs(probe - b) <= 1e-3 * b
        closest = np.abs(probe - b) < 1e-5 * b
        if np.max(np.abs(pv[closest])) > 2 * np.max(np.abs(pv[near & ~closest])):
            # mu infinite at the kink: its spike would set the scale (and the floor) of the whole
            # density, whose mass it does not carry (the floor's radial mass is a mass error)
            probe, pv = probe[~near], pv[~near]
        with np.errstate(divide="ignore"):
            la = np.log(np.abs(pv))
            self.log_r = float(np.max(la + (dim - 1) * np.log(np.maximum(probe, _TINY))) - np.max(la))
        self.floor_g = 1e-13 * float(np.max(np.abs(pv) * self.weight(probe)))
        #: the largest absolute error floor of mu (w >= 1)
        self.floor = self.floor_g
        #: a bound on rho^(dim-1) floor_at(rho) (rho^(dim-1) / w <= 100 R)
        self.radial_floor = self.floor_g * math.exp(self.log_r + _RADIAL_SLACK)
        self.quad_error = 0.0
        # closer than min_offset b to the kink: the power law fitted at the tables' start
        self.u_min = lo = math.log(b * min_offset)
        opts = {
            "degree": 24,
            "tol": tol,
            "floor": lambda v: self.floor_g,
            "noise": lambda v: noise,
            "max_panels": 400,
            "with_errors": True,  # (value noise of the direct route is not chased)
        }
        self.left, e_left = fit_adaptive(
            lambda u: self._eval(b - np.exp(u), -np.exp(u)), lo, math.log(b), n_init=8, **opts
        )
        self.right, e_right = fit_adaptive(
            lambda u: self._eval(b + np.exp(u), np.exp(u)), lo, math.log(rho_max - b), n_init=8, **opts
        )
        # the fits do not chase the values' own errors (up to 5 quad_error): see fit_adaptive
        self.error = max(e_left, e_right) + noise + 6 * self.quad_error
        # closer than min_offset b: A |rho - b|^gamma + B fitted at the tables' first three doublings
        u3 = lo + math.log(2.0) * np.arange(3)
        self._ends = [power_law_end(*side(u3), self.error) for side in (self.left, self.right)]
        self._ends = [m if m is not None and m[0] > -1 else None for m in self._ends]

    def _side(self, which, u):
        """The left (0) or right (1) table at u = log|rho - b|, its power law below u_min."""
        fit = self.left if which == 0 else self.right
        out = fit(np.maximum(u, self.u_min))
        below = u < self.u_min
        model = self._ends[which]
        if model is not None and np.any(below):
            gamma, a, c = model
            out = np.where(below, a * np.exp(gamma * (np.minimum(u, self.u_min) - self.u_min)) + c, out)
        return out

    def weight(self, rho):
        """w(rho) = 1 + rho^(dim-1) / (100 R) (inf far out: mu is returned as 0 there anyway)."""
        with np.errstate(divide="ignore", over="ignore"):
            return np.exp(
                np.logaddexp(
                    0.0, (self.dim - 1) * np.log(np.maximum(rho, _TINY)) - self.log_r - _RADIAL_SLACK
                )
            )

    def floor_at(self, rho):
        """The absolute error floor of mu at rho: 1e-13 max|g| / w(rho)."""
        return self.floor_g / self.weight(rho)

    def _eval(self, rho, off):
        rho = np.maximum(rho, 0.0)
        # a direct route that takes the offset rho - b itself (``takes_offset``) is evaluated at
        # exactly b + off, not at the rounded rho: |rho - b|^gamma with a fractional gamma would
        # otherwise jitter by the rounding of rho (relative 2^-52 b / |rho - b| in |rho - b|)
        val, err = self.direct(rho, off) if getattr(self.direct, "takes_offset", False) else self.direct(rho)
        w = self.weight(rho)
        scale = np.maximum(np.abs(val), self.floor_g / w)
        self.quad_error = max(self.quad_error, float(np.max(err / scale)))
        return val * w, err * w

    def at_offset(self, off):
        """mu(b + off) for offsets off = rho - b computed without cancellation (0 beyond rho_max)."""
        off = np.asarray(off, dtype=np.float64)
        out = np.zeros(off.shape)
        left = (off < 0) & (off >= -self.b)
        right = (off > 0) & (off <= self.rho_max - self.b)
        if np.any(left):
            out[left] = self._side(0, np.log(-off[left]))
        if np.any(right):
            out[right] = self._side(1, np.log(off[right]))
        return out / self.weight(self.b + off)

    def __call__(self, rho):
        rho = np.asarray(rho, dtype=np.float64)
        out = np.zeros(rho.shape)
        b = self.b
        left = rho < b
        right = (rho > b) & (rho <= self.rho_max)
        if np.any(left):
            out[left] = self._side(0, np.log(b - rho[left]))
        if np.any(right):
            out[right] = self._side(1, np.log(rho[right] - b))
        # below the floor the tables carry no relative accuracy: 0 there (also what keeps the measure
        # layer's tail integrals from chasing the tables' noise)
        out[np.abs(out) < self.floor_g] = 0.0
        out = out / self.weight(rho)
        out[rho == b] = np.nan
        return out


def _even_or_sin_table(head, kind, b, alpha, s, d, rho_max, nu=0.0, mixture=None, noise=0.0):
    """The :class:`_KinkTable` of mu_d for even d, for sin(b r)/r in d = 1 (:class:`_RQSinD1`) and
    for J_nu(b r)/r^nu in odd d where its cosine mixture does not apply.

    The contour (:class:`_RQContour`) first; where its table does not reach ``_GOOD_TABLE`` and
    d < ``_HALF_MAX_D`` (beyond, the half step's odd neighbour is summed in mpmath: minutes), even d
    adds the half step (:class:`_RQEven`) and keeps the more accurate table. J_nu: the half step
    projects the caller's ``mixture`` (the (d+1)-dimensional density as rho -> (mu, error),
    relative error ``noise``; None where it does not exist). Refused where the measured error
    exceeds ``_ACCEPT_TABLE``, and beyond d = ``_CONTOUR_MAX_D`` (``_CONTOUR_MAX_D_POLE`` for an
    integer alpha and kinds cos, sin)."""
    p = 2 * alpha + {"cos": 0.0, "sin": 1.0, "bessel": nu + 0.5}[kind]
    band = p < 0.5 * (d + 1)

    def table_of(direct, noise):
        return _KinkTable(direct, b, rho_max, tol=1e-9, noise=noise, dim=d, min_offset=_MIN_OFFSET)

    if d > _contour_max_d(kind, alpha):
        raise TransformError(
            f"{head}: spectralkit computes it on a deformed Hankel contour, which it does not use beyond "
            f"d = {_CONTOUR_MAX_D} (d = {_CONTOUR_MAX_D_POLE} for cos(b r) and sin(b r)/r under an "
            "integer power): its pieces cancel near the kink and its Bessel factors of order d/2 - 1 "
            "leave the float range: not computed"
        )
    try:
        if d == 1 and kind == "sin":
            table = _KinkTable(_RQSinD1(b, alpha, s), b, rho_max, tol=1e-9, noise=1e-13, dim=d)
        else:
            contour = _RQContour(kind, b, alpha, s, d, nu=nu)
            table = table_of(contour, 1e-13)
            if table.error > _GOOD_TABLE and d % 2 == 0 and d < _HALF_MAX_D:
                if kind != "bessel":
                    half = _RQHalfStep(kind, b, alpha, s, d, projection=True if band else None)
                elif mixture is not None:
                    half = _RQHalfStep(
                        "cos", b, alpha, s, d, odd=lambda n: mixture, p=p, noise=noise, projection=True
                    )
                else:
                    half = None
                if half is not None:
                    even = table_of(_RQEven(contour, half, band), max(noise, 2 * half.table.error))
                    table = even if even.error < table.error else table
    except ArithmeticError as exc:
        raise TransformError(f"{head}: {exc}") from exc
    if not table.error <= _ACCEPT_TABLE:
        raise TransformError(
            f"{head}: its density's table reached a relative accuracy of only {table.error:.1e}"
        )
    return table


@builder("rq_oscillation", rel_error=1e-10)
def _rq_oscillation(c, kind, b, alpha, s, dim):
    """mu of c cos(b r) (1 + r^2/s)^-alpha, c sin(b r)/r (1 + r^2/s)^-alpha (module docstring)."""
    d = dim
    p = 2 * alpha + {"cos": 0.0, "sin": 1.0}[kind]
    name = {"cos": f"cos({b:g} r)", "sin": f"sin({b:g} r)/r"}[kind]
    gamma = p - 0.5 * (d + 1)  # mu ~ |rho - b|^gamma at the oscillation's frequency
    divergent = power_law_threshold(
        f"k = {name} (1 + r^2/{s:g})^-{alpha:g}",
        p,
        alpha,
        b,
        d,
        "closed-form:rq-oscillation",
        " (a sphere shell or a non-integrable |rho - b|^-1 density, depending on the phase)",
    )
    if divergent is not None:
        return divergent
    sq = math.sqrt(s)
    rho_max = b + (60.0 + d + 2 * abs(gamma)) / sq
    if d % 2 == 0 or (kind == "sin" and d == 1):
        head = f"k = {name} (1 + r^2/{s:g})^-{alpha:g} in d = {d}"
        table = _even_or_sin_table(head, kind, b, alpha, s, d, rho_max)
        return kink_table_transform(table, c, b, d, rho_max, min(b, 1.0 / sq), "closed-form:rq-oscillation")
    # a quadrature node rounded onto the kink gets the walk's value at the nearest float: finite for
    # a continuous density, a finite stand-in at an integrable singularity (inf made a lobe's mass inf)
    walk = _RQWalk(c, kind, b, alpha, s, d)
    log_abs_and_sign = walk.log_abs_and_sign

    def mu_at_offset(point, off):  # the one singular point: b
        off = np.asarray(off, dtype=np.float64)
        la, sg = walk.log_abs_and_sign(b + off, off)
        with np.errstate(over="ignore", under="ignore"):
            return sg * np.exp(la)

    peak = kink_peak(log_abs_and_sign, b, rho_max)
    walk.floor = _RQ_FLOOR * peak
    return kink_transform(
        log_abs_and_sign,
        b,
        method="closed-form:rq-oscillation",
        rel_error=BUILDERS["rq_oscillation"].rel_error,
        abs_error=_RQ_FLOOR if peak > 0 else 0.0,
        scale=min(b, 1.0 / sq),
        mu_at_offset=mu_at_offset,
    )


def kink_peak(log_abs_and_sign, b: float, rho_max: float) -> float:
    """max|mu| on 401 points of [0, rho_max] (the kink b left out)."""
    grid = np.linspace(0, rho_max, 401)
    return float(np.max(np.abs(vectorised(log_abs_and_sign)(grid[grid != b]))))


def kink_transform(
    log_abs_and_sign,
    b: float,
    *,
    method,
    rel_error,
    abs_error,
    scale,
    mu_at_offset,
    mass_error=0.0,
    tail_exponent=math.inf,
) -> RadialTransform:
    """The :class:`RadialTransform` of a density given as rho -> (log|mu|, sign) that decays like
    rho^-``tail_exponent`` (default: faster than any power) and has one singular point, the kink b
    (evaluated at exact offsets by ``mu_at_offset``)."""
    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method=method,
        rel_error=rel_error,
        abs_error=abs_error,
        scale=scale,
        tail_exponent=tail_exponent,
        tail_oscillation=0.0,
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
        singular_points=(float(b),),
        mu_at_offset=mu_at_offset,
        mass_error=mass_error,
    )


def kink_table_transform(
    table: _KinkTable,
    c: float,
    b: float,
    d: int,
    rho_max: float,
    scale: float,
    method: str,
    beyond=None,
    tail_exponent: float = math.inf,
) -> RadialTransform:
    """The :class:`RadialTransform` of c mu with mu tabulated by ``table`` (a :class:`_KinkTable` with the
    singular point b, mu = 0 beyond ``rho_max``): its relative error, absolute floor and the radial
    mass of its noise (``mass_error``). ``beyond``: rho -> (log|mu|, sign) of mu itself for
    rho > rho_max in place of 0 (a power tail, decaying like rho^-``tail_exponent``)."""
    sign_c = 1.0 if c > 0 else -1.0

    def log_abs_and_sign(rho):
        val = table(rho)
        on_kink = rho == b
        if np.any(on_kink):
            # a quadrature node rounded onto the kink: the value one ulp below (finite where mu is
            # continuous, a finite stand-in at an integrable singularity; inf there made a lobe's
            # mass inf: PD with m+ = inf)
            val = np.where(on_kink, table.at_offset(np.array([-_EPS * b]))[0], val)
        with np.errstate(divide="ignore"):
            la, sg = np.log(np.abs(val)), np.sign(val)
        far = rho > rho_max
        if beyond is not None and np.any(far):
            la[far], sg[far] = beyond(rho[far])
        return la + math.log(abs(c)), sg * sign_c

    def at_offset(point, off):  # point: the kink b
        off = np.asarray(off, dtype=np.float64)
        out = table.at_offset(off)
        far = b + off > rho_max
        if beyond is not None and np.any(far):
            la, sg = beyond(b + off[far])
            out[far] = sg * np.exp(la)
        return c * out

    # the radial mass of the tables' absolute noise (at most 2 floor_at):
    # S_(d-1) int_0^rho_max rho^(d-1) 2 floor_at drho <= S_(d-1) 2 radial_floor rho_max
    mass_error = 2 * abs(c) * table.radial_floor * math.exp(log_sphere_area(d)) * rho_max
    peak = kink_peak(log_abs_and_sign, b, rho_max)
    return kink_transform(
        log_abs_and_sign,
        b,
        method=method,
        rel_error=max(table.error, 1e-12),
        abs_error=min(1.0, max(_TINY, 2 * table.floor * abs(c)) / peak) if peak > 0 else 0.0,
        scale=scale,
        mu_at_offset=at_offset,
        mass_error=mass_error,
        tail_exponent=tail_exponent,
    )


def power_law_threshold(
    head: str, p: float, alpha: float, b: float, d: int, method: str, shell: str = ""
) -> RadialTransform | None:
    """The verdict of an oscillation at frequency b under an envelope decaying like r^-p (amplitude),
    envelope power alpha, in d dimensions, where the exponents alone decide it: a DIVERGENT
    :class:`RadialTransform` below the threshold p = (d-1)/2 (mu ~ |rho - b|^(p - (d+1)/2), not
    integrable), :class:`TransformError` at it (not absolutely continuous; ``shell`` says what the
    measure has there), None above (a finite measure, computed by the caller). ``head``: the
    kernel as the reasons name it."""
    gamma = p - 0.5 * (d + 1)
    if p < 0.5 * (d - 1) - 1e-12:
        reason = (
            f"{head} decays like an oscillating r^-{p:g}, slower than the r^-{(d - 1) / 2:g} of every finite "
            f"radial measure on R^{d}: its Fourier transform behaves like |rho - {b:g}|^{gamma:g} at "
            f"rho = {b:g}, not integrable (not a finite measure; finite for 2 alpha > {(d - 1) / 2 - p + 2 * alpha:g})"
        )
        return RadialTransform(
            mu=not_a_measure(reason),
            method=method,
            rel_error=0.0,
            abs_error=0.0,
            scale=b,
            tail_exponent=math.inf,
            divergent=reason,
        )
    if abs(p - 0.5 * (d - 1)) <= 1e-12:
        raise TransformError(
            f"{head} decays exactly like an oscillating r^-{(d - 1) / 2:g} in d = {d}: its spectral measure is "
            f"not absolutely continuous at rho = {b:g}{shell}, which spectralkit does not compute"
        )
    return None
