"""Asymptotic analysis of an atomic radial kernel: behaviour at r = 0+, at the support edge, at infinity.

The tail of the spectral density mu is set by the least smooth point of k: a term
c r^alpha at the origin (alpha not an even integer) gives mu ~ rho^(-d-alpha); a boundary term
c (R - r)^beta at the support radius R gives an oscillating |mu| ~ rho^(-(d+1)/2-beta); and the
behaviour of k at infinity decides whether mu is a function at all near rho = 0 (no decay: no finite
measure). :func:`analyze` extracts these facts (Contract 4 in ``docs/architecture.md``):

* the non-smooth terms of the expansion of k at 0+ and the expansion at the edge come from
  ``sympy.series`` run in a forked process under a CPU-time budget
  (:func:`spectralkit._numerics.budget.run_with_budget`);
  when sympy fails or runs out of time a high-precision numeric estimate of the *leading* term
  (mpmath) takes over and the result records ``method="numeric"``;
* the decay at infinity is classified numerically from the envelope of |k| evaluated with mpmath
  (50 digits) at r = 1e2 ... 1e12, so very small values (e^(-10^24)) do not underflow.
"""

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
import sympy
from sympy.calculus.util import continuous_domain
from sympy.codegen.cfunctions import log1p

from .._numerics.budget import BudgetExceeded, cpu_time_limit, run_with_budget
from ..exceptions import TransformError
from ._kernel import RadialKernel
from ._parse import R, to_sympy_number

__all__ = []  # private module


@dataclass(frozen=True)
class KernelAnalysis:
    """Asymptotic facts about one atomic radial kernel k(r) (Contract 4).

    Attributes
    ----------
    value_at_zero : float
        k(0+); ``+inf`` or ``-inf`` when k is unbounded at 0 (sign of the leading term).
    bounded : bool
        True when k is bounded on its support: finite at 0+, no growth at infinity, no
        negative edge exponent, no singularity inside the support found by sympy's
        ``continuous_domain`` (the formula language has no jumps, so a discontinuity is a pole)
        and finite on a scan of the support.
    origin_terms : tuple of (float, float, int)
        ``(coef, exponent, log_power)``: the non-smooth terms of k at 0+,
        k(r) = (power series in r^2) + sum coef r^exponent log(r)^log_power, where either the
        exponent is not an even integer (``log_power = 0``) or the term is r^(2n) log r
        (``log_power = 1``). Ascending in exponent (at equal exponents the log term first, it
        dominates); at least the leading three when they exist (only the leading one when
        ``method == "numeric"``).
    smooth_at_origin : bool
        True when ``origin_terms`` is empty (k analytic in r^2 near 0).
    edge_terms : tuple of (float, float)
        ``(coef, beta)``: k(r) = sum coef (R - r)^beta as r -> R- with R the support radius,
        ascending beta, the first three non-zero terms (leading only for ``"numeric"``);
        beta = 0 is a jump. Empty without support.
    decay : str
        ``"compact"`` (support given, or k vanishes identically at large r), ``"super-exponential"``
        (faster than any e^(-c r), e.g. Gaussian), ``"exponential"`` (|k| ~ e^(-rate r) up to powers
        of r), ``"power"`` (|k| ~ r^(-rate); ``rate = inf`` for stretched exponentials
        e^(-c r^q), 0 < q < 1, which decay faster than any power but slower than exponentially),
        ``"none"`` (bounded, not tending to 0) or ``"growth"`` (unbounded as r -> inf).
    decay_rate : float
        The rate for ``"power"`` and ``"exponential"``, else nan.
    oscillating : bool
        True when k changes sign in the windows at r = 10^8 ... 10^12 (it oscillates at infinity; its
        spectral measure then has singular points or parts at nonzero frequencies).
    oscillation_rate : float
        The envelope rate of a component of k that oscillates at infinity, whether or not k changes
        sign (sin(r)^2/(r^2 (1 + r^2)) = (1 - cos 2r)/(2 r^4) + ...: 4), or nan when none is seen:
        the part of k that a smooth fit (Chebyshev, degree 8) over the windows [r, 1.1 r] cannot
        follow, when it exceeds 1e-8 of max |k| there at r = 1e8 and at 1e12; the rate is the slope
        of its size (sqrt(2) times its rms) between the two, good to about 0.01.
    method : str
        ``"sympy-series"`` when both expansions are symbolic, ``"numeric"`` when at least one of
        them fell back to the numeric estimate.
    """

    value_at_zero: float
    bounded: bool
    origin_terms: tuple
    smooth_at_origin: bool
    edge_terms: tuple
    decay: str
    decay_rate: float
    method: str
    oscillating: bool = False
    oscillation_rate: float = math.nan


# ---------------------------------------------------------------------------------------------
# symbolic expansions (run in the budget child)
# ---------------------------------------------------------------------------------------------
_T = sympy.Symbol("t", positive=True)
# series orders tried in turn until enough terms are found (high orders are slow on the sphere
# kernels' acos/sqrt edges: start low there). Order 1 first: a stretched exponential
# exp(-r^q) has its leading terms r^q, r^2q, r^3q below r^1, and its expansion to O(r^6) takes
# 6/q terms of the exponential's series (27 s of sympy for q = 1/20, 5 s to O(r))
_ORDERS = (1, 6, 10, 14)
_EDGE_ORDERS = (3, 5, 8)
_N_TERMS = 3


def _acos_to_asin(expr):
    # sympy cannot expand acos at its branch point 1 (PoleError); acos(u) = 2 asin(sqrt((1-u)/2))
    # holds on [-1, 1] and expands as a Puiseux series.
    return expr.replace(sympy.acos, lambda u: 2 * sympy.asin(sympy.sqrt((1 - u) / 2)))


def _prepare_edge(expr, var):
    """Rewrite k(R - t) so that sympy expands it quickly at t = 0+.

    Non-integer powers get a factored base (sqrt(4t - t^2) -> sqrt(t) sqrt(4 - t), t > 0), and
    acos(u) with u(0) = -1 becomes pi - acos(-u): sympy's expansion at the branch point -1 is
    5-10x slower than at +1 (the arc-cosine sphere kernels).
    """

    def fix(node):
        if isinstance(node, sympy.Pow) and not node.exp.is_Integer:
            return sympy.Pow(sympy.factor(sympy.expand(node.base)), node.exp)
        if isinstance(node, sympy.acos):
            arg = sympy.expand(node.args[0])
            if arg.subs(var, 0) == -1:
                return sympy.pi - sympy.acos(-arg)
            return sympy.acos(arg)
        return node

    return sympy.bottom_up(expr, fix)


def _series_terms(expr, var, order):
    """Terms ``(coef, exponent, log_power)`` of the expansion of ``expr`` at var = 0+ to O(var^order)."""
    try:
        ser = sympy.series(expr, var, 0, order)
    except (sympy.PoleError, NotImplementedError, ValueError, TypeError):
        ser = sympy.series(_acos_to_asin(expr), var, 0, order)
    ser = sympy.expand(sympy.expand_log(ser.removeO(), force=True))
    if ser.has(sympy.Order):
        raise ValueError(f"sympy left an Order term in the expansion of {expr}")
    acc = {}
    for term in sympy.Add.make_args(ser):
        if term == 0:
            continue
        coef, dep = term.as_independent(var, as_Add=False)
        exponent, log_power = sympy.Integer(0), 0
        for base, power in dep.as_powers_dict().items():
            if base == var:
                exponent += power
            elif base == sympy.log(var) and power.is_Integer and power > 0:
                log_power += int(power)
            elif base != 1:
                raise ValueError(f"unexpected factor {base}**{power} in the expansion of {expr}")
        if not exponent.is_number or not coef.is_number:
            raise ValueError(f"non-numeric term {term} in the expansion of {expr}")
        value = complex(sympy.N(coef, 30))
        if abs(value.imag) > 1e-12 * max(1.0, abs(value.real)):
            raise ValueError(f"complex coefficient {coef} in the expansion of {expr}")
        key = (float(exponent), log_power)
        acc[key] = acc.get(key, 0.0) + value.real
    return sorted(((c, e, lp) for (e, lp), c in acc.items() if c != 0.0), key=lambda x: (x[1], -x[2]))


def _is_smooth(exponent, log_power):
    return log_power == 0 and exponent >= 0 and exponent == 2 * round(exponent / 2)


# Proven smooth without a series: k analytic at r = 0 and even in r has a Taylor series in r^2
# alone, so no non-smooth term. The predicate is structural and conservative: None ("not shown")
# sends the kernel to the series.
_EVEN, _ODD = 0, 1
_ENTIRE = (sympy.exp, sympy.sin, sympy.cos, sympy.sinh, sympy.cosh, sympy.erf, sympy.erfc)
# analytic on the whole real line (their poles lie off it)
_REAL_ANALYTIC = (*_ENTIRE, sympy.tanh, sympy.atan, sympy.sech)
_EVEN_FUNCTIONS = (sympy.cos, sympy.cosh, sympy.sech)
_ODD_FUNCTIONS = (sympy.sin, sympy.sinh, sympy.erf, sympy.tanh, sympy.atan)


def _real_value_at_zero(expr):
    """expr(0) as a float when it is a finite real number, else None."""
    value = expr.xreplace({R: sympy.Integer(0)})
    if not value.is_number or value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    value = complex(sympy.N(value, 30))
    if value.imag != 0 or not math.isfinite(value.real):
        return None
    return value.real


def _power_of_r(expr):
    """n when ``expr`` is r^n with n an integer, else None."""
    base, exponent = expr.as_base_exp()
    return int(exponent) if base == R and exponent.is_Integer else None


def _vanishing_order(expr):
    """A lower bound on the order at which ``expr`` (analytic at 0, parity known) vanishes there:
    r^n to order n (n < 0 too, inside a product), an odd factor to order >= 1, a product to the
    sum of its factors' orders."""
    power = _power_of_r(expr)
    if power is not None:
        return power
    base, exponent = expr.as_base_exp()
    if exponent.is_Integer and exponent > 1:
        return int(exponent) * _vanishing_order(base)
    if expr.is_Mul:
        return sum(_vanishing_order(f) for f in expr.args)
    return 1 if _parity_if_analytic(expr) == _ODD else 0


@functools.lru_cache(maxsize=1024)  # _vanishing_order asks again for the same factors
def _parity_if_analytic(expr):
    """``_EVEN`` or ``_ODD`` when ``expr`` is analytic at r = 0 and even or odd in r, else None.

    Structural: numbers and r; sums and products (r^-n only beside factors that vanish to order
    >= n at 0, :func:`_vanishing_order`); powers with an r-free exponent (a non-integer
    or negative one only of a base that is even and positive at 0, or non-zero at 0); the
    functions of ``_REAL_ANALYTIC`` and log (argument positive at 0); J_n and I_n of integer n
    (entire, of parity n in their argument). Anything else: None.
    """
    if not expr.has(R):
        return _EVEN if expr.is_number and _real_value_at_zero(expr) is not None else None
    if expr == R:
        return _ODD
    if expr.is_Add:
        parities = {_parity_if_analytic(a) for a in expr.args}
        return parities.pop() if len(parities) == 1 else None
    if expr.is_Mul:
        # r^-n beside factors that vanish at 0 to order >= n is analytic (sin(r)/r)
        total, pole, vanishing = 0, 0, 0
        for factor in expr.args:
            power = _power_of_r(factor)
            if power is not None and power < 0:
                pole -= power
                continue
            p = _parity_if_analytic(factor)
            if p is None:
                return None
            total += p
            vanishing += _vanishing_order(factor)
        return (total + pole) % 2 if pole <= vanishing else None
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.has(R):
            return None
        p = _parity_if_analytic(base)
        if p is None:
            return None
        if exponent.is_Integer:
            if exponent < 0 and not _real_value_at_zero(base):
                return None
            return (p * int(exponent)) % 2
        b0 = _real_value_at_zero(base)
        return _EVEN if p == _EVEN and b0 is not None and b0 > 0 and exponent.is_real else None
    if isinstance(expr, (sympy.besselj, sympy.besseli)):
        order, arg = expr.args
        p = _parity_if_analytic(arg)
        if order.has(R) or not order.is_Integer or p is None:
            return None
        return _EVEN if p == _EVEN else int(order) % 2
    if isinstance(expr, sympy.log):
        arg = expr.args[0]
        a0 = _real_value_at_zero(arg)
        return _EVEN if _parity_if_analytic(arg) == _EVEN and a0 is not None and a0 > 0 else None
    if isinstance(expr, _REAL_ANALYTIC) and len(expr.args) == 1:
        p = _parity_if_analytic(expr.args[0])
        if p is None:
            return None
        if p == _EVEN or isinstance(expr, _EVEN_FUNCTIONS):
            return _EVEN
        return _ODD if isinstance(expr, _ODD_FUNCTIONS) else None
    return None


def _symbolic_origin(expr, support):
    """(value_at_zero, origin_terms, continuous) from sympy at r = 0+ (raising the order as needed).

    ``continuous`` is True when sympy's ``continuous_domain`` contains the open interval
    (0, R) (R = support or inf), False when it finds a singularity inside, None when it cannot tell.
    """
    value = None
    if _parity_if_analytic(expr) == _EVEN:
        value = _real_value_at_zero(expr)
        if value is None:  # removable at 0 (sin(r)/r): the constant of a short expansion
            terms = _series_terms(expr, R, 1)
            if all(_is_smooth(e, lp) for _, e, lp in terms):
                value = sum(c for c, e, lp in terms if e == 0 and lp == 0)
    if value is not None:
        rough = ()  # a series in r^2: every term smooth (what the expansion below would find)
    else:
        for order in _ORDERS:
            terms = _series_terms(expr, R, order)
            rough = [t for t in terms if not _is_smooth(t[1], t[2])]
            if len(rough) >= _N_TERMS:
                break
        rough = tuple((float(c), float(e), int(lp)) for c, e, lp in rough[:_N_TERMS])
        singular = [t for t in terms if t[1] < 0 or (t[1] == 0 and t[2] > 0)]
        if singular:
            value = math.copysign(math.inf, singular[0][0] * (-1.0 if singular[0][2] % 2 else 1.0))
        else:
            value = sum(c for c, e, lp in terms if e == 0 and lp == 0)
    top = sympy.oo if support is None else to_sympy_number(support)
    try:
        domain = continuous_domain(expr, R, sympy.Interval(0, top))
        continuous = bool(sympy.Interval.open(0, top).is_subset(domain))
    except Exception:  # noqa: BLE001 - NotImplementedError for Bessel functions etc.
        continuous = None
    return float(value), rough, continuous


def _symbolic_edge(expr, support):
    """edge_terms from the Puiseux expansion of k(R - t) at t = 0+."""
    shifted = _prepare_edge(expr.xreplace({R: to_sympy_number(support) - _T}), _T)
    for order in _EDGE_ORDERS:
        terms = _series_terms(shifted, _T, order)
        if len(terms) >= _N_TERMS:
            break
    if any(lp for _, _, lp in terms):
        raise ValueError("log factors at the support edge are not representable in edge_terms")
    return tuple((float(c), float(e)) for c, e, _ in terms[:_N_TERMS])


# ---------------------------------------------------------------------------------------------
# numeric fallbacks (mpmath)
# ---------------------------------------------------------------------------------------------
_DPS = 60
_ORIGIN_DPS = 150


def _mp_function(expr):
    return sympy.lambdify(R, expr, modules="mpmath")


_HYPERBOLIC = (sympy.tanh, sympy.coth, sympy.sech, sympy.csch, sympy.cosh, sympy.sinh)


def _without_cancellation(expr):
    """``expr`` rewritten so that it does not cancel to 0 at large r: 1 - tanh(r) (1 - 1 at any
    fixed precision for r = 1e10) is 2/(e^(2r) + 1), log(1 + e^(-r)) is log1p(e^(-r)), 1 - erf(r) is
    erfc(r). The hyperbolic functions become exponentials over one denominator with the numerator
    expanded (the cancelling terms drop out symbolically)."""
    # erf(r)/r - erf(r/2)/r: the constants of 1 - erfc cancel once the products are distributed
    e = sympy.expand_mul(expr.rewrite(sympy.erfc)) if expr.has(sympy.erf) else expr
    hyperbolic = e.atoms(*_HYPERBOLIC)
    if hyperbolic:
        e = e.xreplace({h: h.rewrite(sympy.exp) for h in hyperbolic})
        num, den = sympy.fraction(sympy.together(e))
        e = sympy.expand(num) / den
    return e.replace(
        lambda x: isinstance(x, sympy.log) and x.args[0].is_Add and sympy.S.One in x.args[0].args,
        lambda x: log1p(x.args[0] - 1),
    )


def _mp_real(value):
    value = mpmath.mpmathify(value)
    if isinstance(value, mpmath.mpc):
        return value.real
    return value


def _nice(x, tol=1e-6, max_den=24):
    """Snap ``x`` to a fraction with a small denominator when within ``tol`` (exponents)."""
    frac = Fraction(x).limit_denominator(max_den)
    return float(frac) if abs(float(frac) - x) <= tol else float(x)


# Nodes of the even-killing stencil: sum_j w_j f(lambda_j r) annihilates 1, r^2, ..., r^10.
_LAMBDAS = tuple(range(1, 8))


def _even_killing_weights():
    lam2 = [mpmath.mpf(l) ** 2 for l in _LAMBDAS]
    # divided-difference weights of order 6 in s = r^2 (kill polynomials of degree <= 5 in s)
    w = []
    for j, sj in enumerate(lam2):
        prod = mpmath.mpf(1)
        for i, si in enumerate(lam2):
            if i != j:
                prod *= sj - si
        w.append(1 / prod)
    return w


def _numeric_origin(expr):
    """Leading non-smooth term at 0+ by the log-slope of an even-killing combination.

    E(r) = sum_j w_j k(lambda_j r) removes the r^(2n) terms, n <= 5; what remains is
    c r^a sum_j w_j lambda_j^a for the leading non-smooth term c r^a, or
    c r^(2n) sum_j w_j lambda_j^(2n) log(lambda_j) for a term c r^(2n) log r. The slope of
    log|E| between r = 1e-9 and 1e-10 gives a (error ~ r^delta for a next term r^(a+delta));
    an even a (< 12) signals a log term; a slope of 12 or more, or |E| at the rounding level of
    the 150-digit arithmetic, means no non-smooth term below r^12.
    """
    f = _mp_function(expr)
    with mpmath.workdps(_ORIGIN_DPS):
        w = _even_killing_weights()

        def comb(rr):
            return mpmath.fsum(wj * _mp_real(f(mpmath.mpf(l) * rr)) for wj, l in zip(w, _LAMBDAS))

        r1, r2 = mpmath.mpf("1e-9"), mpmath.mpf("1e-10")
        e1, e2 = comb(r1), comb(r2)
        k0 = _mp_real(f(mpmath.mpf("1e-60")))
        noise = mpmath.mpf(10) ** (15 - _ORIGIN_DPS) * max(1, abs(k0)) * sum(abs(wj) for wj in w)
        if abs(e1) <= noise or abs(e2) <= noise:
            return float(k0), ()
        slope = float(mpmath.log(abs(e1 / e2)) / mpmath.log(r1 / r2))
        if slope > 11.5:
            return float(k0), ()
        a = _nice(slope, tol=1e-4)
        if a == 2 * round(a / 2) and abs(a - slope) < 1e-4:
            n2 = int(round(a))
            den = mpmath.fsum(wj * mpmath.mpf(l) ** n2 * mpmath.log(l) for wj, l in zip(w, _LAMBDAS))
            coef = e1 / (r1**n2 * den)
            terms = ((float(coef), float(a), 1),)
        else:
            den = mpmath.fsum(wj * mpmath.mpf(l) ** a for wj, l in zip(w, _LAMBDAS))
            coef = e1 / (r1**a * den)
            terms = ((float(coef), float(a), 0),)
        value = float(k0) if a > 0 else math.copysign(math.inf, float(coef))
        return value, terms


def _numeric_edge(expr, support):
    """Leading edge term c (R - t)^beta from the log-slope of |k(R - t)| at t = 1e-10, 1e-11."""
    f = _mp_function(expr)
    with mpmath.workdps(_DPS):
        rr = mpmath.mpf(to_sympy_number(support).evalf(_DPS))
        t1, t2 = mpmath.mpf("1e-10"), mpmath.mpf("1e-11")
        v1, v2 = _mp_real(f(rr - t1)), _mp_real(f(rr - t2))
        if v1 == 0 or v2 == 0:
            return ()
        beta = _nice(float(mpmath.log(abs(v1 / v2)) / mpmath.log(t1 / t2)), tol=1e-4)
        if abs(beta) < 1e-4:
            beta = 0.0
        return ((float(v2 / t2**beta), float(beta)),)


# ---------------------------------------------------------------------------------------------
# decay at infinity (numeric envelope in mpmath)
# ---------------------------------------------------------------------------------------------
_DECAY_EXPONENTS = tuple(range(2, 13))  # r = 10^j
_WINDOW = tuple([0.0] + [((j * 0.6180339887498949) % 1.0) * 0.1 for j in range(1, 400)])
_DENSE = (8, 12)  # decades of the power-rate slope: full window; elsewhere the first 25 points
#: relative size of the part of k a smooth fit over a window cannot follow, above which k has an
#: oscillating component (the fit leaves ~1e-12 of smooth kernels)
_WIGGLE = 1e-8
#: the measured ``oscillation_rate`` is good to ~0.01 (the size of a sampled sinusoid's residual);
#: within this margin of a threshold such as (d - 1)/2 it is read as the threshold itself
RATE_MARGIN = 0.05
#: growth of the local power rate between the decades 8-10 and 10-12 read as a stretched exponential
_STRETCHED_GROWTH = 1.15


def _unfit_part(values, env):
    """sqrt(2) rms(k - smooth fit) / max |k| over a dense window (Chebyshev least squares of degree 8 in
    the window's coordinate): ~1e-12 for a kernel smooth at this scale, the relative amplitude of an
    oscillating component otherwise (its many periods per window defeat the fit)."""
    u = np.array([float(x) for x in _WINDOW])
    v = np.array([float(x / env) for x in values])
    basis = np.polynomial.chebyshev.chebvander(20.0 * u - 1.0, 8)
    coef = np.linalg.lstsq(basis, v, rcond=None)[0]
    return float(np.sqrt(2.0 * np.mean((v - basis @ coef) ** 2)))  # rms: a sinusoid's amplitude


def _decay_logs(expr):
    """log max|k| over the windows at r = 10^j (``_DECAY_EXPONENTS``), as a list and a dict by j,
    the number of windows from 1e8 on where k changes sign, and the wiggle of the dense windows."""
    f = _mp_function(expr)
    with mpmath.workdps(50):
        logs = []
        sign_changes = 0
        wiggle = {}
        for j in _DECAY_EXPONENTS:
            rr = mpmath.mpf(10) ** j
            window = _WINDOW if j in _DENSE else _WINDOW[:25]
            values = [_mp_real(f(rr * (1 + mpmath.mpf(u)))) for u in window]
            env = max(abs(v) for v in values)
            logs.append(mpmath.log(env) if env > 0 else -mpmath.inf)
            if j >= 8 and min(values) < 0 < max(values):
                sign_changes += 1
            if j in _DENSE and env > 0:
                wiggle[j] = (_unfit_part(values, env), env)
        y = dict(zip(_DECAY_EXPONENTS, logs, strict=True))
    return logs, y, sign_changes, wiggle


def _decay(expr):
    """``(decay, rate, oscillating, oscillation_rate)``: classify the decay of k at infinity from
    log max|k| over windows [r, 1.1 r], r = 1e2..1e12 (``oscillation_rate``: see
    :class:`KernelAnalysis`).

    The window (quasi-random points plus r itself; 400 at the decades used for the power rate,
    so an oscillation's envelope is missed by < 1e-4 in log) catches the envelope of oscillating kernels;
    for monotone kernels the maximum is k(r) itself, so rates are exact up to O(1/r) corrections:
    power rate from the slope of log|k| in log r between 1e8 and 1e12 (4 decades dilute the
    envelope error of oscillating kernels); exponential rate from the exact
    fit log|k| = -a r + b log r + c at 1e10, 1e11, 1e12.
    """
    logs, y, sign_changes, wiggle = _decay_logs(expr)
    if all(v == -mpmath.inf for v in logs[-3:]):
        # exact zeros at r = 1e10..1e12 from an analytic formula: cancellation (1 - tanh(r)), not a
        # compact support; the same formula without it (a truly compact one stays 0)
        free = _without_cancellation(expr)
        if free != expr:
            logs, y, sign_changes, wiggle = _decay_logs(free)
    with mpmath.workdps(50):
        osc = math.nan
        if len(wiggle) == 2 and all(w > _WIGGLE for w, _ in wiggle.values()):
            (w8, e8), (w12, e12) = wiggle[8], wiggle[12]
            osc = float(-mpmath.log10((w12 * e12) / (w8 * e8)) / 4)
        if all(v == -mpmath.inf for v in logs[-3:]):
            return "compact", math.nan, False, math.nan
        if any(not mpmath.isfinite(v) for v in logs):
            raise ValueError("kernel is not finite at large r")
        ln10 = mpmath.log(10)
        if y[12] - y[6] > mpmath.log(1.2):
            return "growth", math.nan, sign_changes >= 3, osc
        if y[12] - y[6] > -mpmath.log(1.2):
            return "none", math.nan, sign_changes >= 3, osc
        power_rate = float(-(y[12] - y[8]) / (4 * ln10))
        if y[11] >= 0:  # decays, but still >= 1 at 1e11: too slow to classify further
            return "power", power_rate, sign_changes >= 3, osc
        q = float((mpmath.log(-y[12]) - mpmath.log(-y[11])) / ln10)
        if q > 1 + 1e-3:
            return "super-exponential", math.nan, sign_changes >= 3, osc
        if q >= 1 - 1e-3:
            rs = [mpmath.mpf(10) ** j for j in (10, 11, 12)]
            mat = mpmath.matrix([[-x, mpmath.log(x), 1] for x in rs])
            sol = mpmath.lu_solve(mat, mpmath.matrix([y[10], y[11], y[12]]))
            return "exponential", float(sol[0]), sign_changes >= 3, osc
        if q >= 0.2:  # e^(-c r^q), 0 < q < 1: faster than any power
            return "power", math.inf, sign_changes >= 3, osc
        # e^(-c r^a) with a small a (e^(-r^0.1): q is blurred by the constant c) still has a local power
        # rate a c r^a that keeps growing: by 10^(2a) between the decades 8-10 and 10-12 (1.58 for
        # a = 0.1, 1.26 for 0.05), where a power law r^-p log(r)^m moves by ~1 % (it was called a power
        # law of rate ~1 and DIVERGENT in high d)
        # (the same factor over both steps: a power law that sets in near 1e6, 1/(1 + 1e-6 r)^3, has
        # rates growing by very different factors)
        rates = [float(-(y[j + 2] - y[j]) / (2 * ln10)) for j in (6, 8, 10)]
        if rates[0] > 0:
            g1, g2 = rates[1] / rates[0], rates[2] / rates[1]
            if min(g1, g2) > _STRETCHED_GROWTH and max(g1, g2) < 1.3 * min(g1, g2):
                return "power", math.inf, sign_changes >= 3, osc
        return "power", power_rate, sign_changes >= 3, osc


def _finite_on_grid(atom):
    top = atom.support if atom.support is not None else 1e6
    grid = np.concatenate([np.geomspace(1e-6 * top, top, 400), np.linspace(0.0, top, 401)])
    if atom.support is not None:
        grid = np.minimum(grid, top * (1 - 1e-12))
    with np.errstate(all="ignore"):
        try:
            vals = np.asarray(atom(grid), dtype=float)
        except ValueError:
            return False
    return bool(np.all(np.isfinite(vals)))


# ---------------------------------------------------------------------------------------------
# public entry (private module)
# ---------------------------------------------------------------------------------------------
def analysis_budget(sympy_budget):
    """CPU seconds for each symbolic expansion of k, given the derivation's ``sympy_budget``:
    four times it, between 2 and 20 (the sphere kernels' expansions take 2-15 s)."""
    return min(20.0, max(2.0, 4.0 * float(sympy_budget)))


def analyze(atom, *, budget=20.0):
    """Asymptotic analysis of an atomic radial kernel (Contract 4); cached per (kernel, budget).

    Parameters
    ----------
    atom : RadialKernel
        A single (non-combination) kernel.
    budget : float, optional
        Seconds granted to each sympy expansion (origin, edge) before the numeric fallback.

    Returns
    -------
    KernelAnalysis

    Raises
    ------
    TypeError
        If ``atom`` is not a RadialKernel or is a linear combination (analyse its terms).
    ValueError
        If ``budget`` is not a finite number > 0.
    TransformError
        If the decay at infinity cannot be classified within ``budget`` CPU seconds.
    """
    if not isinstance(atom, RadialKernel):
        raise TypeError(f"atom must be a RadialKernel, got {type(atom).__name__}")
    if atom.is_combination:
        raise TypeError(f"analyze needs an atomic kernel, got the combination {atom.name}; analyse its terms")
    if (
        isinstance(budget, bool)
        or not isinstance(budget, (int, float))
        or not math.isfinite(budget)
        or budget <= 0
    ):
        raise ValueError(f"budget must be a finite number of seconds > 0, got {budget!r}")
    return _analyze_cached(atom, float(budget))


def _steps(expr, support, budget):
    """The symbolic steps of the analysis in one budget child, each under its own ``budget`` of CPU
    time: the expansion at 0+, then the edge expansion (compact support) or the decay at infinity.

    Returns ``[(status, value), ...]``, status "ok", "budget" (the step ran out of time) or "error"
    (it raised: the expansions fall back to numeric evidence, the decay step is repeated alone to
    raise its own exception).
    """
    steps = [(_symbolic_origin, (expr, support))]
    steps.append((_symbolic_edge, (expr, support)) if support is not None else (_decay, (expr,)))
    out = []
    for func, args in steps:
        try:
            with cpu_time_limit(budget):
                out.append(("ok", func(*args)))
        except BudgetExceeded:
            out.append(("budget", None))
        except Exception:  # noqa: BLE001 - any sympy / mpmath failure is the caller's to handle
            out.append(("error", None))
    return out


def _step_result(step, func, args, budget):
    """A step's value from the joint child, or from a child of its own where the joint child died
    ("retry"); None where the step failed or ran out of time (the caller's numeric fallback)."""
    status, value = step
    if status == "retry":
        try:
            return run_with_budget(func, args, budget)
        except Exception:  # noqa: BLE001 - timeout or any sympy failure
            return None
    return value if status == "ok" else None


@functools.lru_cache(maxsize=256)
def _analyze_cached(atom, budget):
    expr = atom.expr
    method = "sympy-series"
    try:
        # one fork for both steps: a fork of a large process costs tens of milliseconds
        steps = run_with_budget(_steps, (expr, atom.support, budget), 2 * budget + 1)
    except Exception:  # noqa: BLE001 - the child died (a step stuck in one C call): each step alone
        steps = [("retry", None), ("retry", None)]
    result = _step_result(steps[0], _symbolic_origin, (expr, atom.support), budget)
    if result is not None:
        value, origin, continuous = result
    else:  # timeout or any sympy failure: numeric evidence instead
        value, origin = _numeric_origin(expr)
        continuous = None
        method = "numeric"
    edge = ()
    if atom.support is not None:
        edge = _step_result(steps[1], _symbolic_edge, (expr, atom.support), budget)
        if edge is None:
            edge = _numeric_edge(expr, atom.support)
            method = "numeric"
        decay, rate, oscillating, osc_rate = "compact", math.nan, False, math.nan
    else:
        # mpmath at 50 digits on r = 1e2..1e12: fast for the usual functions, minutes for special
        # functions of degenerate arguments (besselk(r, r), besselj(10**9, r)): under the budget
        status, found = steps[1]
        try:
            if status == "budget":
                raise BudgetExceeded
            if status != "ok":  # the step's own exception (a kernel not finite at large r), or a retry
                found = run_with_budget(_decay, (expr,), budget)
        except BudgetExceeded:
            raise TransformError(
                f"the decay of {atom.name} at infinity could not be classified within {budget:g} CPU seconds "
                "(its evaluation at r = 1e2 .. 1e12 is too slow)"
            ) from None
        decay, rate, oscillating, osc_rate = found
    bounded = (
        math.isfinite(value)
        and decay != "growth"
        and continuous is not False
        and not any(beta < 0 for _, beta in edge)
        and _finite_on_grid(atom)
    )
    return KernelAnalysis(
        value_at_zero=float(value),
        bounded=bool(bounded),
        origin_terms=tuple(origin),
        smooth_at_origin=not origin,
        edge_terms=tuple(edge),
        decay=decay,
        decay_rate=float(rate),
        method=method,
        oscillating=bool(oscillating),
        oscillation_rate=float(osc_rate),
    )


def _rough_terms(expr, order):
    """The non-smooth terms of the expansion of ``expr`` at r = 0+ to O(r^order) (budget child)."""
    terms = _series_terms(expr, R, order)
    return tuple((float(c), float(e), int(lp)) for c, e, lp in terms if not _is_smooth(e, lp))


@functools.lru_cache(maxsize=64)
def origin_terms_to_order(atom, order, budget):
    """Every non-smooth term ``(coef, exponent, log_power)`` of k at 0+ with exponent < ``order``
    (sympy's series under ``budget`` CPU seconds), or None when sympy fails or runs out of time.

    ``analyze`` keeps the leading three; the Gaussian-mixture route of non-smooth kernels takes
    the power tail of psi from all of them (its error falls like the first omitted term's).
    """
    try:
        return run_with_budget(_rough_terms, (atom.expr, order), budget)
    except Exception:  # noqa: BLE001 - timeout or any sympy failure: the caller keeps its terms
        return None


def _erf_limits(expr):
    """``expr`` with erf(p(r)) and erfc(p(r)) replaced by their limits at r = inf (+-1; 0 or 2), p a
    polynomial of positive degree with a real leading coefficient: each differs from its limit by
    O(exp(-p^2)), below every power of r, and sympy cannot expand exp(-1/x^2) at x = 0."""
    repl = {}
    for f in expr.atoms(sympy.erf, sympy.erfc):
        arg = f.args[0]
        if not arg.is_polynomial(R) or sympy.degree(arg, R) < 1:
            continue
        lead = sympy.Poly(arg, R).LC()
        if not (lead.is_real and lead.is_number):
            continue
        up = bool(lead > 0)
        repl[f] = (1 if up else -1) if isinstance(f, sympy.erf) else (0 if up else 2)
    return expr.xreplace(repl)


def _far_terms(expr, order):
    """The terms c r^-e of the expansion of ``expr`` at r = inf to O(r^-order) (budget child)."""
    x = sympy.Symbol("x", positive=True)
    terms = _series_terms(_erf_limits(expr).subs(R, 1 / x), x, order)
    if any(lp != 0 or not e > 0 for _, e, lp in terms):
        return None  # logarithms or a constant limit: not a pure power expansion
    return tuple((float(c), float(e)) for c, e, _ in terms)


@functools.lru_cache(maxsize=64)
def infinity_terms(atom, order, budget):
    """The terms ``(coef, exponent)`` of k(r) ~ sum coef r^-exponent at r -> inf with exponent <
    ``order`` (sympy's series of k(1/x) at 0+ under ``budget`` CPU seconds), ascending; None when
    the expansion has logarithms or a constant term, when sympy fails or runs out of time, and ()
    when k decays faster than every power.

    The Gaussian-mixture route takes psi(t) near t = 0 (the Gaussians of the widest scales, the
    mass at small frequencies) from these terms when k decays slowly.
    """
    try:
        return run_with_budget(_far_terms, (atom.expr, order), budget)
    except Exception:  # noqa: BLE001 - timeout or any sympy failure: the route declines
        return None
