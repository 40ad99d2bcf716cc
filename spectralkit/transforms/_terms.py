"""The terms of a kernel as the transform layer sees them: sums of closed forms split.

A user formula that is a sum of closed forms ("exp(-r**2/2) - exp(-r**2/8)/2") is one atom to the
kernels layer but several terms to the transforms: each is transformed exactly, which avoids the
cancellation between numerically computed transforms of the whole expression in high d.
"""

from __future__ import annotations

import mpmath
import sympy

from ..exceptions import KernelDefinitionError, TransformError
from ..kernels import DensityKernel, RadialKernel
from ..kernels._analysis import analysis_budget, analyze
from ..kernels._parse import R
from ._bandlimited import split_band_limited, split_bessel_rational, sum_of_frequencies
from ._closed_forms import closed_form
from ._dispatch import _mixture_route
from ._mixture import FIRM_REL_ERROR, MP_EVAL_ERRORS
from ._oscillating import split_gaussian_poles

__all__: list[str] = []  # private module

#: (coefficient, atom): an atom of None is the constant c (an atom c delta_0 of the measure)
_Term = tuple[float, RadialKernel | DensityKernel | None]


def closed_form_terms(kernel: RadialKernel | DensityKernel, dim: int) -> list[_Term]:
    """The kernel's terms, with user formulas that are sums of closed forms split into them.

    "exp(-r**2/2) - exp(-r**2/8)/2" is one atom to the user but two Gaussians to the transform:
    transforming each exactly avoids cancellation between numerically computed transforms. A
    product of sines and cosines over a rational function is first written as a sum of frequencies
    and split by partial fractions (:func:`._bandlimited.split_band_limited`). A
    constant summand c (an atom c delta_0 of the measure) becomes the term ``(c, None)``. A sum
    whose parts each have a closed form, or are smooth and decay exponentially
    (:func:`_smooth_and_decaying`), is split.
    """
    out: list[_Term] = []
    for c, atom in kernel.terms:
        if isinstance(atom, DensityKernel):
            out.append((c, atom))
            continue
        unmatched = atom.family is None and atom.support is None and closed_form(atom, dim) is None
        # exp(-r^2/2) cos(3 r) / (1 + r^2): an entire Gaussian oscillation plus a Gaussian times the
        # poles' rational part (neither float route reaches the whole in high d); tried before the
        # frequency splits, whose parts (cos(r) cos(3 r) = (cos 2r + cos 4r)/2) keep the poles
        poles = split_gaussian_poles(atom.expr) if unmatched else None
        # sin(r)^2/(r^2 (1 + r^2)): Fejér's kernel and rational quadratics (partial fractions)
        band = (
            (split_band_limited(atom.expr) or split_bessel_rational(atom.expr) or _frequency_sum(atom.expr))
            if unmatched and not poles
            else None
        )
        parts = (
            band
            or poles
            or sympy.Add.make_args(
                sympy.expand(
                    atom.expr,
                    deep=False,
                    mul=True,
                    power_exp=False,
                    power_base=False,
                    log=False,
                    multinomial=False,
                )
            )
        )
        split: list[_Term] | None = None
        numeric_parts = False
        divergent_parts, oscillating_finite = 0, 0
        if atom.family is None and len(parts) > 1 and closed_form(atom, dim) is None:
            split = []
            for part in parts:
                coef, rest = part.as_coeff_Mul()
                if rest.is_number:
                    if atom.support is not None:  # a constant on [0, R] is a polynomial, not an atom
                        split = None
                        break
                    split.append((c * float(coef * rest), None))
                    continue
                try:
                    sub = RadialKernel(rest, support=atom.support)
                except KernelDefinitionError:
                    split = None
                    break
                try:
                    sub_form = closed_form(sub, dim)
                except TransformError:
                    if not band:
                        raise
                    sub_form = None
                # the parts of a band-limited split can each be singular where their sum is not
                # (sin(r)^2/(r^2 (1 + r^2)): in d = 8 Fejér's part and cos(2r)/(1 + r^2) alone have
                # no measure, in d = 5 the latter cancels Fejér's shell at the same frequency); one
                # divergent part beside parts that do not oscillate makes the sum divergent
                # (1/(1 + r^2) + cos(r)/(1 + r^2)^3 in d = 16): nothing can cancel its singularity
                if band and sub_form is not None and sub_form.divergent is not None:
                    divergent_parts += 1
                elif rest.has(sympy.sin, sympy.cos, sympy.besselj):
                    oscillating_finite += 1
                if sub_form is None and (band or not _smooth_and_decaying(sub)):
                    split = None
                    break
                numeric_parts |= sub_form is None
                split.append((c * float(coef), sub))
        if divergent_parts > 1 or (divergent_parts and oscillating_finite):
            split = None
        if split and numeric_parts and not poles and _firm_mixture(atom, dim):
            # one mixture for the whole (exp(-r^2) (1 - r^2)/(1 + r^2): psi = 2 e^-u - delta(u))
            # is more accurate than the sum of its parts' (whose masses partly cancel); a kernel
            # split at its poles oscillates and has no mixture (its analysis costs seconds)
            split = None
        if not split and not band and not poles and atom.support is None:
            # a kernel that does not decay: a constant summand beside parts that do not split
            # (1 + exp(-r^1.5) in d = 64, where the exponential power has no closed form) or a limit
            # at infinity (1/(1.5 - e^(-r^2))) is the atom c delta_0, the rest one kernel (not for
            # 1 - tanh(r), which decays while its parts -tanh(r) and 1 do not)
            if not atom.family and analyze(atom, budget=analysis_budget(5.0)).decay == "none":
                const = sympy.Add(*[p for p in parts if p.is_number])
                split = _constant_and_rest(
                    c, atom.expr, const if const != 0 else _limit_at_infinity(atom.expr)
                )
        out.extend(split if split else [(c, atom)])
    return out


def _constant_and_rest(c, expr, const):
    """[(c * const, None), (c, expr - const)], or None (const zero or not a real number, or a rest
    that does not decay either)."""
    if const is None or const == 0 or not const.is_real:
        return None
    try:
        rest = RadialKernel(sympy.expand(expr - const, deep=False))
    except KernelDefinitionError:
        return None
    if not rest.expr.has(R) or analyze(rest, budget=analysis_budget(5.0)).decay in ("none", "growth"):
        return None
    return [(c * float(const), None), (c, rest)]


#: radii where the limit of k at infinity is read (mpmath: k - L may underflow float64 long before)
_LIMIT_RADII = (1e20, 1e30)


def _limit_at_infinity(expr):
    """lim k(r) as r -> inf as an exact number (a rational, or a rational multiple of pi or e), or None:
    k at the radii in mpmath (40 digits) must agree to 1e-30 with each other and with the number."""
    try:
        kf = sympy.lambdify(R, expr, modules="mpmath")
        with mpmath.workdps(40):
            v1, v2 = (kf(mpmath.mpf(x)) for x in _LIMIT_RADII)
            if not (isinstance(v1, mpmath.mpf) and isinstance(v2, mpmath.mpf) and abs(v1 - v2) <= 1e-30):
                return None
            limit = sympy.nsimplify(sympy.Float(str(v2), 40), [sympy.pi, sympy.E], tolerance=1e-28)
            if abs(v2 - mpmath.mpf(sympy.N(limit, 40))) > 1e-30 * max(1, abs(v2)):
                return None
    except MP_EVAL_ERRORS:
        return None
    return limit if limit.is_number and limit != 0 else None


def _smooth_and_decaying(part):
    """Whether a part without a closed form is a bounded, non-oscillating kernel of infinite
    support, smooth at 0 and decaying exponentially or faster: on its own it has a finite measure
    that the Gaussian-mixture route computes in every d, while a sum of such parts with different
    Gaussian factors (exp(-r^2) - exp(-r^2/2)/(2 (1 + r^2))) is no single mixture the route can
    invert, and the Hankel route cancels for it in high d."""
    if part.support is not None:
        return False
    info = analyze(part, budget=analysis_budget(5.0))
    return (
        info.bounded
        and not info.oscillating
        and info.smooth_at_origin
        and info.decay in ("exponential", "super-exponential")
    )


def _firm_mixture(atom, dim):
    """Whether the Gaussian-mixture route confirms the whole ``atom`` to ``FIRM_REL_ERROR``."""
    try:
        whole = _mixture_route(atom, dim, analysis_budget(5.0))
    except (TransformError, ArithmeticError, ValueError):
        return False
    return whole is not None and whole.rel_error <= FIRM_REL_ERROR


def _frequency_sum(expr):
    """A product of sines and cosines at several frequencies times other factors, written as a sum of
    single frequencies (exp(-sqrt(1 + r^2)) cos(r)^2 = g/2 + cos(2 r) g/2), or None: each part may have
    a closed form where the product has none."""
    if not expr.has(sympy.sin, sympy.cos):
        return None
    rewritten = sum_of_frequencies(expr)
    parts = sympy.Add.make_args(rewritten) if rewritten is not None else ()
    return parts if len(parts) > 1 else None
