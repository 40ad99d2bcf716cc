"""Verified closed forms (and a convergent/asymptotic series) for the spectral density of known kernels.

Convention (docs/theory.md §1): k(z) = int exp(i w.z) mu(w) dw, so for radial k

    mu(rho) = (2 pi)^(-d/2) rho^(1-d/2) int_0^inf k(r) r^(d/2) J_(d/2-1)(rho r) dr.

:func:`closed_form` recognises a kernel by ``atom.family`` (checked numerically against the
expression, so a mislabelled family cannot give a wrong measure) or by the pattern of its
expression, and returns a :class:`~spectralkit._transforms.RadialTransform`:

=================================  ===========================================================
kernel                             mu(rho)
=================================  ===========================================================
c exp(-b r^2)                      c (4 pi b)^(-d/2) exp(-x),  x = rho^2/(4b)
P(r^2) exp(-b r^2)                 (4 pi b)^(-d/2) exp(-x) Q(x),
                                   Q = sum_j p_j j! b^(-j) L_j^(d/2-1)(x) (Laguerre)
c Matérn(nu, l), c exp(-b r)       c Gamma(nu+d/2)/(Gamma(nu) pi^(d/2)) (l^2/(2nu))^(d/2)
                                   (1 + rho^2 l^2/(2 nu))^(-(nu+d/2))   (Student t)
c (1 + r^2/(2 a l^2))^(-a)         c 2 (a l^2)^a/(Gamma(a)(2 pi)^(d/2)) (z/(2 a l^2))^(a-d/2)
                                   K_(a-d/2)(z),  z = rho l sqrt(2 a)
P(r^2) on [0, R] (zero beyond)     (4 pi)^(-d/2) R^d sum_q c_q q! R^(2q)/Gamma(q+d/2+1)
                                   0F1(; q+d/2+1; -(rho R)^2/4),  P = sum_q c_q (R^2 - r^2)^q
c exp(-(r/l)^alpha), alpha != 1,2  power series in rho^2 / in rho^(-alpha) (mpmath when needed)
=================================  ===========================================================

Derivations: r^(2j) e^(-b r^2) = (-d/db)^j e^(-b r^2) gives the Laguerre form; the Matérn
spectrum is the multivariate t density; the rational quadratic is the Gaussian scale mixture
E exp(-tau r^2/2), tau ~ Gamma(a, rate a l^2), and int tau^(s-1) exp(-A/tau - B tau) dtau =
2 (A/B)^(s/2) K_s(2 sqrt(A B)); the truncated polynomial uses Sonine's first finite integral
int_0^R (R^2 - r^2)^q r^(d/2) J_(d/2-1)(rho r) dr = 2^q q! R^(q+d/2) rho^(-(q+1)) J_(q+d/2)(rho R)
(note rho^(-(q+1)); together with the prefactor rho^(1-d/2) this is rho^(-(q+d/2))), and
x^(-n) J_n(x) = 2^(-n) 0F1(; n+1; -x^2/4)/Gamma(n+1) is evaluated with ``hyp0f1`` (stable at
rho -> 0, docs/theory.md §6). Every formula is checked against independent mpmath references in
``tests/test_closed_forms.py``; the accuracies stored in ``rel_error`` are what those tests verify.
"""

import functools
import math

import numpy as np
import scipy.special as sc
import sympy

from .._numerics.special import log_besselk, log_sphere_area
from ..exceptions import TransformError
from ..kernels import REGISTRY, DensityKernel, RadialKernel
from ..kernels._parse import R, to_sympy_number
from ._compact import pieces_transform, poly_coeffs
from ._exp_power import REL_ERROR as EXP_POWER_REL_ERROR
from ._exp_power import exponential_power
from ._forms import log_form, not_a_measure, vectorised
from ._normalise import validate_match
from ._odd_poly_gaussian import odd_poly_coeffs
from ._registry import BUILDERS, MATCHERS, builder, coefficient_of_r, exponential_factor, matcher
from ._types import RadialTransform, check_atom_and_dim

__all__ = ["closed_form", "constant_transform"]

_TINY = 1e-300

# Builders are registered with the accuracy that tests/test_closed_forms.py verifies against
# mpmath references (transforms/_registry.py).


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------
def closed_form(atom: RadialKernel | DensityKernel, dim: int) -> RadialTransform | None:
    """Closed-form (or dedicated series) spectral density of an atomic kernel on R^dim, or None.

    Parameters
    ----------
    atom : RadialKernel
        A single (non-combination) kernel.
    dim : int
        Input dimension d >= 1.

    Returns
    -------
    RadialTransform or None
        None when no verified closed form applies (the caller then uses sympy or numerics),
        also for the exponential power kernel with alpha too close to 1 for the series to reach
        the accuracy target (see :func:`_exponential_power`).

    Raises
    ------
    TypeError
        If ``atom`` is not an atomic RadialKernel.
    ValueError
        If ``dim`` is not an integer >= 1.
    """
    check_atom_and_dim(atom, dim, "closed_form")
    return _closed_form_cached(atom, int(dim))


def closed_form_is_costly(atom: RadialKernel | DensityKernel) -> bool:
    """Whether ``atom``'s closed form (if any) takes seconds to build: the exponential-power series
    (0.1-18 s), against milliseconds for the others. Recognition only: nothing is built."""
    if isinstance(atom, DensityKernel):
        return False
    match = _recognise(atom)
    return match is not None and BUILDERS[match[0]].costly


@functools.lru_cache(maxsize=512)
def _closed_form_cached(atom, dim):
    """Closed forms are pure functions of (kernel, d): built once per process (the exponential-power
    interpolant and the polynomial tables take 0.1-5 s)."""
    if isinstance(atom, DensityKernel):
        return _given_density(atom, dim)
    match = _recognise(atom)
    if match is None:
        return None
    kind, params = match
    return BUILDERS[kind].build(dim=dim, **params)


# ---------------------------------------------------------------------------------------------
# recognition
# ---------------------------------------------------------------------------------------------
def _num(x):
    """sympy number -> float (raises TypeError for non-numbers)."""
    value = complex(sympy.N(x, 30))
    if value.imag != 0:
        raise TypeError(f"complex number {x}")
    return value.real


def _family_match(atom):
    """The closed-form builder of a library kernel, from its family record, or None.

    A family label is trusted only if the family's own constructor builds the same kernel (the
    same expression and support): a mislabelled kernel cannot get a wrong measure.
    """
    if atom.family is None:
        return None
    name, params = atom.family
    family = REGISTRY.get(name)
    if family is None or family.measure is None:
        return None
    try:
        if family.create(**params).key != atom.key:
            return None
    except Exception:  # noqa: BLE001 - an invalid label is simply not trusted
        return None
    return family.measure(params)


def _recognise(atom):
    match = _family_match(atom)
    if match is not None:
        return match
    try:
        return _match_expression(atom)
    except (TypeError, ValueError, sympy.PolynomialError):
        return None


def _match_expression(atom):
    forms = [atom.expr]
    if isinstance(atom.expr, sympy.Add):
        # a sum with a common factor is tried as a product too: A exp(-r) sin(r) J0(r) (1 + 1/r) is
        # one exp-Bessel form, while its two terms' transforms cancel in floats far out
        common = sympy.factor_terms(atom.expr)
        if isinstance(common, sympy.Mul):
            forms.append(common)
    for expr in forms:
        for _priority, _name, match_fn in MATCHERS:
            match = match_fn(expr, atom.support)
            # the matched family's formula must reproduce the kernel (a misread formula gets no measure)
            if match is not None and validate_match(atom.expr, atom.support, *match):
                return match
    return None


def _even_poly_coeffs(expr):
    """Coefficients [p_0, p_1, ...] of expr = sum p_j r^(2j), or None."""
    coeffs = poly_coeffs(expr)  # ascending powers of r
    if coeffs is None or any(c != 0 for c in coeffs[1::2]):
        return None
    return [sympy.nsimplify(c, rational=True) if isinstance(c, sympy.Float) else c for c in coeffs[0::2]]


@matcher(priority=0)
def _match_compact_polynomial(expr, support):
    """Any polynomial in r on [0, R] (zero beyond): odd powers allowed."""
    if support is None:
        return None
    coeffs = poly_coeffs(expr)
    if coeffs is None or all(c == 0 for c in coeffs):
        return None
    return "compact_polynomial", {"coeffs": coeffs, "support": to_sympy_number(support)}


@matcher(priority=10)
def _match_poly_exp(expr, support):
    """P(r) exp(g(r)) with g = -b r^gamma; returns a match for the recognised cases, else None."""
    if support is not None:
        return None
    split = exponential_factor(expr)
    if split is None:
        return None
    exponent, prefactor = split
    coef, power = exponent.as_coeff_exponent(R)
    if not coef.is_number or not power.is_number or sympy.expand(coef * R**power - exponent) != 0:
        return None
    b, gam = -_num(coef), _num(power)
    if not (b > 0 and gam > 0) or (gam > 2 and gam % 2 == 0):
        return None  # exp(-b r^4) and the like: the numeric route (see exponential_power)
    if gam == 2:
        coeffs = _even_poly_coeffs(prefactor)
        if coeffs is None:
            # odd powers too: the Weber-Kummer series (transforms/_odd_poly_gaussian.py)
            odd = odd_poly_coeffs(prefactor)
            if odd is None or len(odd) > 40:
                return None
            return "odd_poly_gaussian", {"coeffs": [float(c) for c in odd], "b": float(b)}
        if all(c == 0 for c in coeffs):
            return None
        family = "gaussian" if len(coeffs) == 1 else "polynomial-gaussian"
        return "poly_gaussian", {"coeffs": coeffs, "b": -coef, "family": family}
    if not prefactor.is_number:
        return None
    c = _num(prefactor)
    if c == 0:
        return None
    if gam == 1:  # c exp(-b r): Laplacian = Matérn 1/2 with l = 1/b
        return "matern", {"c": c, "nu": 0.5, "lengthscale": 1.0 / b}
    return "exponential_power", {"c": c, "alpha": gam, "lengthscale": b ** (-1.0 / gam)}


@matcher(priority=20)
def _match_rational_quadratic(expr, support):
    """c (A + B r^2)^(-alpha), A, B, alpha > 0."""
    if support is not None:
        return None
    c, rest = expr.as_coeff_Mul()
    if not isinstance(rest, sympy.Pow):
        return None
    base, expo = rest.args
    if not expo.is_number or _num(expo) >= 0:
        return None
    coeffs = _even_poly_coeffs(base)
    if coeffs is None or len(coeffs) != 2:
        return None
    A, B = _num(coeffs[0]), _num(coeffs[1])
    alpha = -_num(expo)
    if A <= 0 or B <= 0:
        return None
    # c A^-alpha (1 + (B/A) r^2)^-alpha and B/A = 1/(2 alpha l^2)
    return "rational_quadratic", {
        "c": _num(c) * A ** (-alpha),
        "alpha": alpha,
        "lengthscale": math.sqrt(A / (2 * alpha * B)),
    }


@matcher(priority=30)
def _match_bessel(expr, support):
    """c sin(a r)/r, c cos(a r), c r^-nu besselj(nu, a r): the sphere-average (Bessel) family."""
    if support is not None:
        return None
    c, rest = expr.as_coeff_Mul()
    factors = sympy.Mul.make_args(rest)
    osc = [f for f in factors if isinstance(f, (sympy.sin, sympy.cos, sympy.besselj))]
    if len(osc) != 1:
        return None
    f = osc[0]
    others = sympy.Mul(*[g for g in factors if g is not f])
    coef, power = others.as_coeff_exponent(R)
    if not (coef.is_number and power.is_number and sympy.simplify(coef * R**power - others) == 0):
        return None
    nu = (
        sympy.Rational(1, 2)
        if isinstance(f, sympy.sin)
        else (sympy.Rational(-1, 2) if isinstance(f, sympy.cos) else f.args[0])
    )
    a = coefficient_of_r(f.args[-1])
    if a is None or not nu.is_number:
        return None
    a, nu, C = _num(a), _num(nu), _num(c) * _num(coef)
    if not (a > 0 and nu >= -0.5):
        return None
    if isinstance(f, sympy.sin) and power == -1:
        return "bessel", {"c": C * a, "nu": 0.5, "lengthscale": 1.0 / a}
    if isinstance(f, sympy.cos) and power == 0:
        return "bessel", {"c": C, "nu": -0.5, "lengthscale": 1.0 / a}
    if isinstance(f, sympy.besselj) and abs(_num(power) + nu) < 1e-15:
        # r^-nu J_nu(a r) = a^nu (a r)^-nu J_nu(a r) = a^nu Omega(a r) / (Gamma(nu + 1) 2^nu)
        return "bessel", {"c": C * a**nu / (math.gamma(nu + 1) * 2**nu), "nu": nu, "lengthscale": 1.0 / a}
    return None


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# polynomial x Gaussian
# ---------------------------------------------------------------------------------------------
_XS = sympy.Symbol("x", nonnegative=True)


@builder("poly_gaussian", rel_error=1e-12)
def _poly_gaussian(coeffs, b, family, dim):
    """mu for sum_j p_j r^(2j) exp(-b r^2): (4 pi b)^(-d/2) e^(-x) Q(x), x = rho^2/(4 b).

    Q(x) = sum_j p_j j! b^(-j) L_j^(d/2-1)(x) is built exactly (rational arithmetic when the
    inputs are rational), factored into its real roots and complex pairs, and evaluated as
    log|lead| + sum log|x - x_k| + sum log((x - u)^2 + v^2): relative accuracy ~ a few ulp per
    factor for every rho and d (no cancellation among Laguerre coefficients), and the exact
    sign changes are the positive real roots of odd multiplicity.
    """
    d = dim
    b_sym = sympy.nsimplify(b, rational=True) if isinstance(b, sympy.Float) else sympy.sympify(b)
    b_f = _num(b_sym)
    alpha_lag = sympy.Rational(d, 2) - 1
    q_expr = sympy.Add(
        *[
            p * sympy.factorial(j) * b_sym ** (-j) * sympy.assoc_laguerre(j, alpha_lag, _XS)
            for j, p in enumerate(coeffs)
        ]
    )
    poly = sympy.Poly(sympy.expand(q_expr), _XS)
    if poly.is_zero:
        return None
    lead = _num(poly.LC())
    real_roots, pairs = [], []
    for factor, mult in sympy.sqf_list(poly)[1]:
        for root in factor.nroots(n=30, maxsteps=200):
            re_, im_ = (float(v) for v in root.as_real_imag())
            if abs(im_) <= 1e-25 * max(1.0, abs(re_)):
                real_roots.append((re_, mult))
            elif im_ > 0:
                pairs.append((re_, im_, mult))
    real_x = np.array([x for x, _ in real_roots])
    real_m = np.array([m for _, m in real_roots], dtype=float)
    log_pref = -0.5 * d * math.log(4 * math.pi * b_f) + math.log(abs(lead))
    sign_lead = 1.0 if lead > 0 else -1.0

    def log_abs_and_sign(rho):
        x = rho * rho / (4 * b_f)
        log_abs = log_pref - x
        sign = np.full(x.shape, sign_lead)
        for xr, m in zip(real_x, real_m):
            diff = x - xr
            log_abs = log_abs + m * np.log(np.abs(diff))
            if m % 2:
                sign = sign * np.sign(diff)
        for u, v, m in pairs:
            log_abs = log_abs + m * np.log((x - u) ** 2 + v * v)
        return log_abs, sign

    sign_changes = sorted(math.sqrt(4 * b_f * xr) for xr, m in real_roots if xr > 0 and m % 2)
    nonnegative = not sign_changes and lead > 0
    radial_cdf = None
    if nonnegative:
        # f(rho) ~ rho^(d-1) e^(-x) sum_i q_i x^i: a mixture of x ~ Gamma(d/2 + i) laws with
        # weights q_i Gamma(d/2 + i) (some may be negative; the sum is a valid CDF)
        q = [_num(c) for c in poly.all_coeffs()[::-1]]
        logw = np.array([sc.gammaln(0.5 * d + i) for i in range(len(q))])
        w = np.array(q) * np.exp(logw - logw.max())
        total = w.sum()
        shapes = 0.5 * d + np.arange(len(q))

        def radial_cdf(rho):
            arr = np.asarray(rho, dtype=np.float64)
            x = arr[..., None] ** 2 / (4 * b_f)
            out = np.clip((sc.gammainc(shapes, x) * w).sum(axis=-1) / total, 0.0, 1.0)
            return out if out.ndim else float(out)

    mu = vectorised(log_abs_and_sign)
    peak = abs(
        mu(
            np.array(
                [
                    0.0,
                    *[math.sqrt(4 * b_f * max(x, 0.0)) for x in np.linspace(0, 2 * d + 4 * len(coeffs), 64)],
                ]
            )
        ).max()
    )
    return RadialTransform(
        mu=mu,
        log_abs_mu=log_form(log_abs_and_sign),
        method=f"closed-form:{family}",
        rel_error=BUILDERS["poly_gaussian"].rel_error,
        abs_error=min(1.0, _TINY / peak) if peak > 0 else 0.0,
        scale=math.sqrt(2 * b_f),
        tail_exponent=math.inf,
        tail_oscillation=0.0,
        nonnegative=bool(nonnegative),
        radial_cdf=radial_cdf,
        zeros=np.array(sign_changes, dtype=float),
    )


# ---------------------------------------------------------------------------------------------
# Matérn (incl. Laplacian): multivariate Student t
# ---------------------------------------------------------------------------------------------
@builder("matern", rel_error=1e-12)
def _matern(c, nu, lengthscale, dim):
    """c Gamma(nu+d/2)/(Gamma(nu) pi^(d/2)) (l^2/(2 nu))^(d/2) (1 + rho^2 l^2/(2 nu))^(-(nu+d/2)).

    Evaluated in logs with ``log1p`` (any d). Radial law: t = rho^2 l^2/(2 nu) ~ BetaPrime(d/2, nu),
    CDF I_{t/(1+t)}(d/2, nu) (``betainc``). Tail mu ~ rho^(-d-2 nu).
    """
    d, l = dim, lengthscale
    s = l * l / (2 * nu)
    log_c = (
        sc.gammaln(nu + 0.5 * d)
        - sc.gammaln(nu)
        - 0.5 * d * math.log(math.pi)
        + 0.5 * d * math.log(s)
        + math.log(abs(c))
    )
    power = nu + 0.5 * d
    sign = 1.0 if c > 0 else -1.0

    def log_abs_and_sign(rho):
        return log_c - power * np.log1p(s * rho * rho), np.full(rho.shape, sign)

    def radial_cdf(rho):
        arr = np.asarray(rho, dtype=np.float64)
        t = s * arr * arr
        out = sc.betainc(0.5 * d, nu, t / (1 + t))
        return out if out.ndim else float(out)

    name = "laplacian" if nu == 0.5 else "matern"
    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method=f"closed-form:{name}",
        rel_error=BUILDERS["matern"].rel_error,
        abs_error=min(1.0, _TINY / math.exp(min(log_c, 700.0))),
        scale=1.0 / l,
        tail_exponent=d + 2 * nu,
        tail_oscillation=0.0,
        nonnegative=c > 0,
        radial_cdf=radial_cdf,
        zeros=np.empty(0),
    )


# ---------------------------------------------------------------------------------------------
# rational quadratic: Gaussian scale mixture
# ---------------------------------------------------------------------------------------------
@builder("rational_quadratic", rel_error=5e-11)  # scipy kve at orders |a - d/2| ~ 8: ~2e-11 measured
def _rational_quadratic(c, alpha, lengthscale, dim):
    """c 2 (a l^2)^a/(Gamma(a)(2 pi)^(d/2)) (z/(2 a l^2))^(a-d/2) K_(a-d/2)(z), z = rho l sqrt(2a).

    Logs throughout: log K_s(z) (:func:`log_besselk`: the small-z series where ``kve`` overflows,
    tiny z and large |s|). mu(0) = c 2 (a l^2)^a Gamma(s) 2^(s-1) (2 a l^2)^(-s)/(Gamma(a)(2 pi)^(d/2)) for
    s = a - d/2 > 0 and +inf (integrable singularity rho^(2a-d), or log for s = 0) otherwise.
    """
    d, a, l = dim, alpha, lengthscale
    s = a - 0.5 * d
    al2 = a * l * l
    log_c = (
        math.log(2.0) + a * math.log(al2) - sc.gammaln(a) - 0.5 * d * math.log(2 * math.pi) + math.log(abs(c))
    )
    sign = 1.0 if c > 0 else -1.0
    abs_s = abs(s)

    def log_abs_and_sign(rho):
        z = rho * l * math.sqrt(2 * a)
        out = np.empty_like(z)
        pos = z > 0
        zp = z[pos]
        out[pos] = log_c + s * np.log(zp / (2 * al2)) + log_besselk(abs_s, zp)
        if s > 0:
            out[~pos] = log_c + sc.gammaln(s) + (s - 1) * math.log(2.0) - s * math.log(2 * al2)
        else:
            out[~pos] = np.inf
        return out, np.full(rho.shape, sign)

    mu = vectorised(log_abs_and_sign)
    peak = mu(np.array([0.0])) if s > 0 else np.array([np.inf])
    return RadialTransform(
        mu=mu,
        log_abs_mu=log_form(log_abs_and_sign),
        method="closed-form:rational_quadratic",
        rel_error=BUILDERS["rational_quadratic"].rel_error,
        abs_error=min(1.0, _TINY / abs(float(peak[0]))) if np.isfinite(peak[0]) else 0.0,
        scale=1.0 / l,
        tail_exponent=math.inf,
        tail_oscillation=0.0,
        nonnegative=c > 0,
        radial_cdf=None,
        zeros=np.empty(0),
    )


# ---------------------------------------------------------------------------------------------
# polynomials on [0, R] (zero beyond): exact, see _polynomial
# ---------------------------------------------------------------------------------------------
@builder("compact_polynomial", rel_error=0.0)  # measured per transform (pt.rel_error)
def _compact_polynomial(coeffs, support, dim):
    """Exact mu of sum_n c_n r^n on [0, R] (zero beyond) in every d (:mod:`._polynomial`).

    The power series of the moments at small rho, the split A - Re(exp(i R rho) B) (origin terms of
    the odd powers, the edge expansion) at large rho, a verified high-precision table between; each
    with a measured error (``rel_error`` is relative to the local amplitude of mu, see there).
    """
    return pieces_transform([(0, support, coeffs)], dim, "closed-form:compact-polynomial", "polynomial")


# ---------------------------------------------------------------------------------------------
# the Bessel (sphere-average) family: Omega_(2 nu + 2)(r / l), a shell or a Beta law
# ---------------------------------------------------------------------------------------------
@builder("bessel", rel_error=1e-13)
def _bessel(c, nu, lengthscale, dim):
    """c Omega_(2nu+2)(r/l) = c Gamma(nu+1) (2 l/r)^nu J_nu(r/l): the Fourier transform of the uniform
    measure on the sphere of radius a = 1/l in R^(2nu+2), projected to R^d.

    In R^d, with s = nu - d/2: for s > -1 an absolutely continuous law whose radial density is
    f(rho) = c (2/a) t^(d-1) (1 - t^2)^s / B(d/2, s+1), t = rho/a < 1 (t^2 ~ Beta(d/2, s+1):
    exact CDF, an integrable singularity at rho = a for s < 0, a jump for s = 0); for s = -1 the
    shell of mass c on the sphere rho = a; for s < -1 no finite measure (k decays like an
    oscillating r^-(nu+1/2), slower than the r^-(d-1)/2 of every finite radial measure).
    """
    d, a = dim, 1.0 / lengthscale
    s = nu - 0.5 * d
    name = "sinc" if nu == 0.5 else ("cosine" if nu == -0.5 else "bessel")
    common = dict(
        method=f"closed-form:{name}",
        rel_error=BUILDERS["bessel"].rel_error,
        abs_error=0.0,
        scale=a,
        tail_exponent=math.inf,
        tail_oscillation=0.0,
        zeros=np.empty(0),
    )
    if s < -1 - 1e-12:
        reason = (
            f"k = Omega_{2 * nu + 2:g}(r/l) decays like an oscillating r^-{nu + 0.5:g}, slower than the "
            f"r^-{(d - 1) / 2:g} of every finite radial measure on R^{d}: its Fourier transform is not a "
            f"measure (finite only for d <= {2 * nu + 2:g})"
        )
        return RadialTransform(mu=not_a_measure(reason), divergent=reason, **common)
    if abs(s + 1) <= 1e-12:
        return RadialTransform(
            mu=vectorised(lambda rho: (np.full(rho.shape, -np.inf), np.zeros(rho.shape))),
            log_abs_mu=log_form(lambda rho: (np.full(rho.shape, -np.inf), np.zeros(rho.shape))),
            shells=((a, float(c)),),
            ac_mass=0.0,
            nonnegative=c > 0,
            radial_cdf=lambda rho: np.zeros(np.shape(rho)),
            **common,
        )
    log_c = math.log(2 * abs(c)) - d * math.log(a) - log_sphere_area(d) - sc.betaln(0.5 * d, s + 1)
    sign = 1.0 if c > 0 else -1.0

    def log_abs_and_sign(rho):
        t2 = (rho / a) ** 2
        inside = t2 < 1
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.where(inside, log_c + s * np.log1p(-np.minimum(t2, 1.0)), -np.inf)
        return la, np.where(inside, sign, 0.0)

    def radial_cdf(rho):
        t2 = np.minimum((np.asarray(rho, dtype=np.float64) / a) ** 2, 1.0)
        return sc.betainc(0.5 * d, s + 1, t2)

    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        nonnegative=c > 0,
        radial_cdf=radial_cdf,
        singular_points=(a,) if s <= 0 else (),
        ac_mass=float(c),
        **common,
    )


def constant_transform(dim: int) -> RadialTransform:
    """The measure of the constant kernel 1: an atom of mass 1 at w = 0 (a shell of radius 0)."""
    zero = log_form(lambda rho: (np.full(rho.shape, -np.inf), np.zeros(rho.shape)))
    return RadialTransform(
        mu=vectorised(lambda rho: (np.full(rho.shape, -np.inf), np.zeros(rho.shape))),
        log_abs_mu=zero,
        method="closed-form:constant",
        rel_error=0.0,
        abs_error=0.0,
        scale=1.0,
        tail_exponent=math.inf,
        nonnegative=True,
        zeros=np.empty(0),
        radial_cdf=lambda rho: np.zeros(np.shape(rho)),
        shells=((0.0, 1.0),),
        ac_mass=0.0,
    )


def _given_density(atom, dim):
    """The measure of a :class:`~spectralkit.kernels.DensityKernel`: mu = f / (S_(d-1) rho^(d-1))."""
    if dim != atom.dim:
        raise TransformError(
            f"{atom.name} is given by its spectral measure on R^{atom.dim}; it has no "
            f"measure on R^{dim} (the measure of a radial kernel depends on the dimension)"
        )
    log_s = log_sphere_area(dim)

    def log_abs_and_sign(rho):
        f = np.asarray(atom.density(rho), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.log(np.abs(f)) - log_s - (dim - 1) * np.log(rho)
        # f(0) = 0 in d > 1 is a 0/0 for mu: take mu(0+) from a tiny rho
        if dim > 1 and np.any(rho == 0):
            f0 = np.asarray(atom.density(np.array([1e-12 * atom.scale])), dtype=np.float64)[0]
            la = np.where(rho == 0, np.log(abs(f0)) - log_s - (dim - 1) * math.log(1e-12 * atom.scale), la)
            f = np.where(rho == 0, f0, f)
        return la, np.sign(f)

    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method="given:radial-density",
        rel_error=atom.rel_error,
        # a density known to within int |f - f_exact| <= mass_error (e.g. a tabulation): each
        # Jordan mass moves by at most that much
        mass_error=float(atom.mass_error),
        abs_error=0.0,
        scale=atom.scale,
        tail_exponent=math.inf,
        nonnegative=False,
        zeros=None,
    )


builder("exponential_power", rel_error=EXP_POWER_REL_ERROR, costly=True)(exponential_power)
