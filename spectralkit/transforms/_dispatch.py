"""Spectral density of one atomic radial kernel: dispatch over closed forms, sympy and numerics.

``transform_atom(atom, dim)`` returns a :class:`RadialTransform`, the density mu(rho) of the
d-dimensional Fourier transform of k in the convention of ``docs/conventions.md``:
mu(rho) = (2 pi)^(-d/2) int_0^inf k(r) r^(d-1) Lambda_nu(rho r) dr, Lambda_nu(x) = x^-nu J_nu(x),
nu = d/2 - 1. Methods are tried in order: verified closed forms (:mod:`._closed_forms`), then,
for smooth decaying kernels of infinite support, their Gaussian scale-mixture representation
(:mod:`._mixture`, stable in every dimension), then numeric quadrature (:mod:`._hankel`). A
mixture confirmed to 1e-6 (relative) answers; one confirmed only to 1e-4 answers beyond d = 8, and
up to d = 8 unless the quadrature states both a smaller density error and a smaller mass error.

sympy's Hankel transform under a CPU-time budget (:mod:`._symbolic`) is tried only on request
(``symbolic=True``): it is verified against the numeric transform and its stated error is never
smaller than the numeric one's, so a derivation gains no accuracy from it, and where sympy finds
no closed form (most kernels that reach this point) it spent its whole budget (5 s by default,
measured 4.6 of the 5.1 s CPU of such a derivation) for nothing.
A sympy result is accepted only if it agrees with the numeric transform at 41 check points
rho = s * 10^(-3..3) (s the frequency scale) to within 1e-8 relative (or 1e-13 of max |mu| in
absolute value); its reported error is the largest discrepancy observed, never less than the
numeric transform's own error estimate. Below the smallest check point and wherever the
lambdified formula is not finite (0 * inf at rho = 0, overflow at large rho), the numeric
transform is used.
"""

import functools
import math
import numbers

import numpy as np
import sympy

from .._numerics.special import log_sphere_area
from ..exceptions import KernelDefinitionError, TransformError
from ..kernels import REGISTRY, DensityKernel, RadialKernel
from ..kernels._analysis import RATE_MARGIN, analysis_budget, analyze, infinity_terms, origin_terms_to_order
from ..kernels._parse import R
from ._closed_forms import closed_form
from ._gauss_rational import gaussian_rational_rays
from ._hankel import NumericHankel
from ._mixture import FIRM_REL_ERROR, _power_tail, gaussian_mixture_transform
from ._oscillating import _osc_factor
from ._symbolic import complex_evaluator, sympy_transform
from ._types import RadialTransform, check_atom_and_dim

__all__ = []  # private module


def transform_atom(
    atom: RadialKernel | DensityKernel, dim: int, *, sympy_budget: float = 5.0, symbolic: bool = False
) -> RadialTransform:
    """Spectral density of the atomic kernel ``atom`` on R^dim (see module docstring).

    Parameters
    ----------
    atom : RadialKernel
        A single (non-combination) kernel.
    dim : int
        Input dimension d >= 1.
    sympy_budget : float, optional
        CPU seconds granted to sympy: each symbolic expansion of the analysis gets
        ``analysis_budget(sympy_budget)``, the Hankel transform (with ``symbolic``) the budget
        itself (forked child, stopped at the budget); 0 skips the transform.
    symbolic : bool, default False
        Also try sympy's Hankel transform where no closed form matched (verified against the
        numeric transform; see the module docstring).

    Returns
    -------
    RadialTransform
        ``method`` is ``"closed-form:<family>"`` (or ``"series:..."``) from
        :mod:`._closed_forms`, ``"numeric:gaussian-mixture+talbot"`` (``+kanter`` for C exp(-c r^a),
        ``+poles`` for complex poles in r^2, ``+rays`` for poles on the imaginary axis),
        ``"numeric:gauss-legendre+steepest-descent"`` or (with ``symbolic``) ``"sympy"``.

    Raises
    ------
    TypeError
        If ``atom`` is not an atomic RadialKernel.
    ValueError
        If ``dim`` is not an integer >= 1 or ``sympy_budget`` is not a finite number >= 0.
    TransformError
        When mu is not a function (k does not decay: the measure is singular at 0; k unbounded)
        or cannot be computed to the target accuracy (e.g. a non-analytic formula with abs/min/max,
        whose tail cannot be continued into the complex plane).
    """
    dim = check_atom_and_dim(atom, dim, "transform_atom")
    if (
        isinstance(sympy_budget, bool)
        or not isinstance(sympy_budget, numbers.Real)
        or not math.isfinite(sympy_budget)
        or sympy_budget < 0
    ):
        raise ValueError(f"sympy_budget must be a finite number of seconds >= 0, got {sympy_budget!r}")
    if not isinstance(symbolic, bool):
        raise TypeError(f"symbolic must be True or False, got {symbolic!r}")

    cf = closed_form(atom, dim)
    if cf is not None:
        return cf
    mixture = _mixture_route(atom, dim, analysis_budget(sympy_budget))
    if mixture is not None and (mixture.rel_error <= FIRM_REL_ERROR or dim > _SECOND_OPINION_MAX_DIM):
        return mixture
    shifted = _shift_route(atom, dim, sympy_budget)
    if shifted is not None:
        return shifted
    try:
        numeric = numeric_transform(atom, dim, analysis=analysis_budget(sympy_budget))
    except TransformError:
        if mixture is None:
            raise
        return mixture
    if mixture is not None and not _more_accurate(numeric, mixture):
        # a mixture confirmed only to within _LOOSE_REL_ERROR: the Hankel route's second opinion
        # is kept only where it states both a smaller density error and a smaller mass error
        return mixture
    # sympy times out on some families with every method (arc-cosine, NTK) or returns unusable
    # Meijer-G forms (exponential power): their records say so
    family = REGISTRY.get(atom.family[0]) if atom.family else None
    if symbolic and sympy_budget > 0 and (family is None or family.symbolic):
        sym = _verified_sympy(atom, dim, float(sympy_budget), numeric)
        if sym is not None:
            return sym
    return numeric


#: the mixture route's looser acceptance: kept where the Hankel route does no better
_LOOSE_REL_ERROR = 1e-4
#: the Hankel route's second opinion on a loosely confirmed mixture only up to this d: beyond, its
#: cancellation grows with d (tanh(1/(1 + r^2)): 3e-8 in d = 3, a mass error of 0.07 in d = 16,
#: refused from d = 64) and it cost up to 30 s (d = 128)
_SECOND_OPINION_MAX_DIM = 8


def _more_accurate(a, b):
    """Whether transform ``a`` states both a smaller density and a smaller mass error than ``b``."""
    return a.rel_error <= b.rel_error and a.mass_error <= b.mass_error


@functools.lru_cache(maxsize=64)
def _mixture_route(atom, dim, budget):
    """The Gaussian scale-mixture transform (:mod:`._mixture`) of a decaying, bounded,
    non-oscillating kernel of infinite support, or None (not such a kernel, or not confirmed by
    its checks). Kernels not smooth at 0 (exp(-r^1.5), (1 + r^1.5)^-2) bring their origin terms to
    order r^6 (the power tail of psi); kernels that decay like a power bring their terms at
    infinity (psi at small t). A pure function of its arguments, built once per process: the term
    split (:mod:`._terms`) asks for the whole kernel's mixture before ``transform_atom`` does."""
    if not isinstance(atom, RadialKernel) or atom.support is not None:
        return None
    info = analyze(atom, budget=budget)
    if info.oscillating or not info.bounded:
        return None
    if info.smooth_at_origin:
        if info.decay in ("exponential", "super-exponential"):
            # poles of r^2 on the imaginary axis: psi does not decay, Talbot's rule cannot hold it
            rays = gaussian_rational_rays(atom, dim)
            if rays is not None:
                return rays
            return gaussian_mixture_transform(
                atom, dim, length=_length_scale(atom), smooth_at_origin=True, max_rel_error=_LOOSE_REL_ERROR
            )
        if info.decay != "power" or not (math.isfinite(info.decay_rate) and info.decay_rate > 0):
            return None
        # smooth with a power tail (products of rational-quadratic powers, (1 + r^2)^-a (b + r^2)^-c):
        # psi's small-t end from k's terms at infinity, as for the kernels not smooth at 0
        far = infinity_terms(atom, math.ceil(info.decay_rate) + 4, budget) or ()
        if not far:
            return None
        try:
            return gaussian_mixture_transform(
                atom,
                dim,
                length=_length_scale(atom),
                smooth_at_origin=True,
                far_terms=far,
                max_rel_error=_LOOSE_REL_ERROR,
            )
        except (ArithmeticError, ValueError, TypeError):
            return None
    if info.decay not in ("exponential", "super-exponential", "power") or (
        info.decay == "power" and not info.decay_rate > 0
    ):
        return None
    lead = _power_tail(info.origin_terms[:1])
    if lead is None:
        return None  # a log term at 0: no power tail of psi; no series needed
    terms = origin_terms_to_order(atom, _ORIGIN_ORDER, budget) or info.origin_terms
    far = ()
    if info.decay == "power" and math.isfinite(info.decay_rate):
        # the terms of k at infinity to 4 orders beyond its decay: psi at small t (the widest
        # Gaussians, mu ~ rho^(beta - d) at 0), which the rule cannot reach for slow decay
        far = infinity_terms(atom, math.ceil(info.decay_rate) + 4, budget) or ()
    try:
        return gaussian_mixture_transform(
            atom,
            dim,
            length=_length_scale(atom),
            smooth_at_origin=False,
            origin_terms=terms,
            far_terms=far,
            max_rel_error=_LOOSE_REL_ERROR,
        )
    except (ArithmeticError, ValueError, TypeError):
        # a formula the route's symbolic steps (log of the formula, lambdify) or its float64
        # arithmetic cannot take: not confirmed, so the Hankel route answers or refuses
        return None


#: an envelope whose own oscillating component decays slower than r^-100 is not shifted
_OWN_OSCILLATION = 100.0


def _shift_route(atom, dim, sympy_budget):
    """d = 1 only: k = cos(b r) g(r) with g not oscillating has mu_1(rho) = (F(|rho - b|) + F(rho + b))/2,
    F the one-dimensional transform of g by whichever route computes it (the shift formula), with
    the kink or integrable singularity at rho = b evaluated at exact offsets. Pointwise error at most
    rel (|F(|rho - b|)| + |F(rho + b)|)/2: F's relative error where F >= 0; where F changes sign the
    shifts can cancel, and the excess goes into the absolute floor and the masses' error. Covers
    envelopes no closed form pairs with the oscillation (exp(-sqrt(r)), products of rational-quadratic
    powers, a Gaussian times a rational function); an envelope whose transform has singular points or
    an oscillating tail of its own (1/(1 + r^3), not smooth at 0) is declined."""
    if dim != 1 or not isinstance(atom, RadialKernel) or atom.support is not None:
        return None
    split = _osc_factor(atom.expr)  # cos(b r) times factors free of other oscillations
    if split is None or split[2] is None or split[2][0] != "cos":
        return None
    coef, power, (_, b), rest = split
    g_expr = sympy.cancel(coef * R**power * sympy.Mul(*rest))
    if not (b.is_real and b > 0) or g_expr.has(sympy.tan, sympy.bessely) or not g_expr.has(R):
        return None
    b = float(b)
    try:
        g = RadialKernel(g_expr)
    except KernelDefinitionError:
        return None
    info = analyze(g, budget=analysis_budget(sympy_budget))
    if info.oscillating or info.oscillation_rate < _OWN_OSCILLATION:
        return None  # g oscillates itself (a hidden component decaying like a power)
    try:
        tg = transform_atom(g, 1, sympy_budget=sympy_budget)
    except TransformError:
        return None
    if tg.divergent is not None or tg.shells or tg.tail_parts is not None or tg.singular_points:
        return None
    # |error| <= rel (|F(|rho - b|)| + |F(rho + b)|)/2: where F changes sign the two shifts can cancel,
    # so the part of that bound beyond rel |mu| goes into the absolute floor and the masses' error
    t = np.geomspace(1e-8, 1e6, 2801) * max(tg.scale, 1e-300)
    with np.errstate(all="ignore"):
        f_t = np.asarray(tg.mu(t), dtype=np.float64)
    f_abs = np.abs(f_t)
    if not np.all(np.isfinite(f_abs)) or not np.any(f_abs > 0):
        return None
    signed = not tg.nonnegative and bool(np.any(f_t < 0))
    # 2 int_0^inf |F| (the shifts' moduli integrated over rho >= 0, both signs), by the trapezoid rule
    # in log t, doubled for its own error
    abs_mass = 4.0 * float(np.sum(0.5 * (f_abs[1:] * t[1:] + f_abs[:-1] * t[:-1]) * np.diff(np.log(t))))

    def mu(rho):
        rho = np.asarray(rho, dtype=np.float64)
        out = 0.5 * (np.asarray(tg.mu(np.abs(rho - b))) + np.asarray(tg.mu(rho + b)))
        return out if out.ndim else float(out)

    def at_offset(point, off):  # the one singular point: b
        off = np.asarray(off, dtype=np.float64)
        return 0.5 * (np.asarray(tg.mu(np.abs(off))) + np.asarray(tg.mu(2 * b + off)))

    grid = np.linspace(0.0, b + 40.0 / max(tg.scale, 1e-300), 4001)
    peak = float(np.max(np.abs(mu(grid[grid != b]))))
    floor = tg.rel_error * float(np.max(f_abs)) / peak if signed and peak > 0 else 0.0
    return RadialTransform(
        mu=mu,
        method=f"shift:{tg.method}",
        rel_error=tg.rel_error,
        abs_error=min(1.0, max(tg.abs_error, floor)),
        scale=min(b, tg.scale),
        tail_exponent=tg.tail_exponent,
        tail_oscillation=0.0,
        nonnegative=not signed,
        radial_cdf=None,
        zeros=None if signed else np.empty(0),
        singular_points=(b,),
        mu_at_offset=at_offset,
        mass_error=tg.mass_error + (tg.rel_error * abs_mass if signed else 0.0),
    )


#: The order of the expansion of a non-smooth kernel at 0 that the mixture route's tail uses.
_ORIGIN_ORDER = 6


def numeric_transform(atom: RadialKernel, dim: int, *, analysis: float = 20.0) -> RadialTransform:
    """The numeric transform of :mod:`._hankel` as a :class:`RadialTransform` (no closed forms,
    no sympy). Same parameters and errors as :func:`transform_atom`."""
    info = analyze(atom, budget=analysis)
    hidden = not info.oscillating and math.isfinite(info.oscillation_rate)
    if (info.oscillating or hidden) and info.decay == "power" and info.decay_rate == math.inf:
        # a stretched exponential (exp(-sqrt(r)) cos(r)) reads as a power of infinite rate: the
        # measure is smooth at the frequency, but the quadrature below misses it (measured: 0.3 % to
        # 170 % in d = 1 and 3, no answer in a minute in d = 16)
        raise TransformError(
            f"kernel {atom.name} oscillates at infinity under an envelope that decays faster than any "
            "power but slower than an exponential (a stretched exponential such as exp(-sqrt(r))): its "
            "spectral density is smooth, but no closed form covers it and the numeric route cannot reach "
            "its accuracy target on it; no verdict is given"
        )
    if (info.oscillating or hidden) and info.decay in ("power", "none"):
        what = (
            f"has a component that oscillates at infinity with a power-law envelope r^-{max(info.oscillation_rate, 0.0):.3g} "
            "(k itself does not change sign)"
            if hidden
            else (
                f"oscillates at infinity with a power-law envelope r^-{max(info.decay_rate, 0.0):.3g}"
                if info.decay == "power" and not math.isnan(info.decay_rate)
                else "oscillates at infinity without decaying (its envelope tends to a nonzero constant)"
            )
        )
        rate = info.oscillation_rate if hidden else info.decay_rate
        if abs(rate - 0.5 * (dim - 1)) <= RATE_MARGIN:
            # exactly at the threshold of finiteness: mu ~ |rho - b|^-1 next to the frequency, or a
            # uniform measure on the sphere |w| = b there (depending on the phase): not a density
            raise TransformError(
                f"kernel {atom.name} {what}, the threshold r^-{0.5 * (dim - 1):g} of every finite radial "
                f"measure on R^{dim}: its spectral measure is not absolutely continuous at the oscillation's "
                "frequency (a sphere shell or a non-integrable |rho - b|^-1 density, depending on the phase), "
                "which spectralkit does not compute"
            )
        raise TransformError(
            f"kernel {atom.name} {what}: its spectral measure is not smooth at the oscillation's frequency "
            "(a sphere shell, an integrable singularity, a jump or a kink), which the numeric route cannot "
            "resolve; spectralkit computes it exactly for the Bessel family and its sums (sin(a r)/(a r), "
            "cos(a r), besselj(nu, a r)/(a r)^nu: kernels.sinc, kernels.bessel), for band-limited sums "
            "c cos(b r)/r^m, c sin(b r)/r^m and for cos(b r), sin(b r)/r times rational quadratics, but not "
            "for this formula; write it as such a sum if it is one"
        )
    if info.decay in ("none", "growth") or (info.decay == "power" and not info.decay_rate > 0):
        raise TransformError(
            f"kernel {atom.name} does not decay (decay: {info.decay}): its spectral measure is "
            "singular at rho = 0 (not a function), so mu cannot be computed"
        )
    if not info.bounded or not math.isfinite(info.value_at_zero):
        raise TransformError(
            f"kernel {atom.name} is unbounded (k(0+) = {info.value_at_zero!r}, edge exponents "
            f"{[b for _, b in info.edge_terms]}): its Fourier transform is not a bounded density"
        )
    length = _length_scale(atom)
    try:
        hank = NumericHankel(
            atom,
            dim,
            support=atom.support,
            complex_kernel=complex_evaluator(atom),
            length_scale=length,
            decay=info.decay,
            decay_rate=info.decay_rate,
            smooth_at_origin=info.smooth_at_origin,
            origin_terms=info.origin_terms,
            edge_terms=info.edge_terms,
        )
    except ArithmeticError as exc:
        raise TransformError(f"numeric transform of {atom.name} in d = {dim} failed: {exc}") from exc
    if not hank.rel_error <= _MAX_REL_ERROR:
        raise TransformError(
            f"numeric transform of {atom.name} in d = {dim}: its measured relative error "
            f"{hank.rel_error:.2g} "
            f"exceeds {_MAX_REL_ERROR:g} (quadrature and steepest descent disagree: typically a kernel whose "
            "analytic continuation grows, e.g. an oscillation cos(a r) against a slower decay, in high d); "
            "no verdict is given on such numbers"
        )
    return RadialTransform(
        mu=hank,
        method="numeric:gauss-legendre+steepest-descent",
        rel_error=hank.rel_error,
        abs_error=hank.abs_error,
        scale=hank.scale,
        tail_exponent=hank.tail_exponent,
        tail_oscillation=float(hank.tail_oscillation),
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
        tail_parts=hank.tail_parts if (hank.has_ray or hank.has_edge) else None,
        tail_start=hank.rho_x,
        mass_error=hank.mass_error,
    )


def _length_scale(atom):
    """R for compact support, else the radius where |k| first drops below max|k|/e."""
    if atom.support is not None:
        return float(atom.support)
    grid = np.geomspace(1e-4, 1e4, 801)
    with np.errstate(all="ignore"):
        vals = np.abs(np.asarray(atom(grid), dtype=np.float64))
    vals = np.where(np.isfinite(vals), vals, 0.0)
    peak = int(np.argmax(vals))
    below = np.nonzero(vals[peak:] < vals[peak] / math.e)[0]
    return float(grid[peak + below[0]]) if below.size else 1.0


#: A numeric transform less accurate than this is refused (masses and verdicts would be noise).
_MAX_REL_ERROR = 1e-3

_CHECK_DECADES = (-3.0, 3.0)
_CHECK_POINTS = 41
_CHECK_REL = 1e-8
_CHECK_ABS = 1e-13


def _verified_sympy(atom, dim, budget, numeric):
    """sympy's transform if it agrees with ``numeric`` at the check points, else None."""
    res = sympy_transform(atom, dim, budget)
    if res is None:
        return None
    fn, _text = res
    rho = numeric.scale * np.logspace(*_CHECK_DECADES, _CHECK_POINTS)
    ref = numeric.mu(rho)
    val = fn(rho)
    peak = float(np.max(np.abs(ref)))
    tol = _CHECK_REL * np.abs(ref) + _CHECK_ABS * peak
    if not np.all(np.isfinite(val)) or np.any(np.abs(val - ref) > tol):
        return None
    # same split as the numeric transform: relative where |mu| >= 1e-8 max|mu|, absolute below
    diff = np.abs(val - ref)
    big = np.abs(ref) >= 1e-8 * peak
    rel = float(np.max(diff[big] / np.abs(ref[big]))) if np.any(big) else 0.0
    abs_err = float(np.max(diff[~big])) / peak if np.any(~big) else 0.0
    # what the radial weight rho^(d-1) makes of the discrepancies (high d: the absolute part, small
    # against max|mu|, is not small against the mass), with the margin of 10 of the numeric errors
    dens = np.exp(log_sphere_area(dim) + (dim - 1) * np.log(rho)) * diff
    sym_mass = 10.0 * float(np.sum(0.5 * (dens[1:] + dens[:-1]) * np.diff(rho)) + dens[0] * rho[0] / dim)
    rho_lo = float(rho[0])
    num_mu = numeric.mu

    def mu(x):
        x = np.asarray(x, dtype=np.float64)
        out = np.asarray(fn(np.maximum(x, rho_lo)), dtype=np.float64)
        bad = (x < rho_lo) | ~np.isfinite(out)
        if np.any(bad):
            out = np.where(bad, num_mu(x), out)
        return out

    return RadialTransform(
        mu=mu,
        method="sympy",
        rel_error=max(rel, numeric.rel_error),
        abs_error=max(abs_err, numeric.abs_error),
        scale=numeric.scale,
        tail_exponent=numeric.tail_exponent,
        tail_oscillation=numeric.tail_oscillation,
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
        tail_parts=numeric.tail_parts,
        tail_start=numeric.tail_start,
        mass_error=numeric.mass_error + sym_mass,
    )
