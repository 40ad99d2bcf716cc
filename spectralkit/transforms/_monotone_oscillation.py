"""Oscillation under a completely monotone envelope: Bernstein mixtures of damped oscillations.

k(r) = T(b r)/r^q E(r), T = cos (q = 0) or sin (q = 0, 1), E(r) = int exp(-t r) nu(dt) a completely
monotone envelope (or a signed sum of such) as :func:`._monotone.bernstein_terms` reads it, or a
stretched exponential C exp(-c r^alpha), 0.2 <= alpha < 1 (nu: C times the positive alpha-stable
density, Kanter's integral): (1 + r)^-3 cos(r), cos(2 r)/(1 + r)^4, (1 - exp(-r))/r cos(r),
exp(-sqrt(r)) cos(r) (docs/theory.md section 23). Each exp(-t r) T(b r)/r^q is the real or imaginary
part of exp(-A r)/r^q at A = t - i b, whose d-dimensional transform is closed (m = (d+1)/2):

    G_0(A) = Gamma(m) pi^-m A (A^2 + rho^2)^-m,   G_1(A) = Gamma(m - 1) pi^-m (A^2 + rho^2)^-(m-1) / 2,

(G_1 in d = 1: -log(A^2 + rho^2)/(2 pi) up to a real constant), so mu(rho) = int nu(dt) P G_q(t - i b),
P = Re (cos) or Im (sin). nu is real, so every node's value P G is formed in polar form without
cancellation: A^2 + rho^2 = t^2 + (rho - b)(rho + b) - 2 i b t (the offset rho - b exact near the
frequency), its modulus and argument from hypot and atan2, the weights' signs apart from the phases.

At rho = b the envelope's slow decay shows: for nu ~ t^(beta - 1) at t -> 0 (E ~ r^-beta) the
integrand behaves like t^(beta - 1 - m_q), m_0 = m, m_1 = m - 1, near |A^2 + rho^2| ~ 2 b t, so the
density behaves like |rho - b|^(beta - m_q) there (a logarithm at beta = m_q): a finite measure iff
beta - m_q > -1, DIVERGENT below, refused at the threshold (a sphere shell or |rho - b|^-1 by the
phase). Shifted envelopes (t >= s > 0) and stretched exponentials are smooth at b.

Quadrature in y = log(t - s), per shift (the terms of one shift summed as one nu, :class:`._monotone._Group`,
with the compact pieces of r^-n terms, :class:`._monotone._Piece`; atoms of nu are single nodes):
Gauss-Legendre panels of at most ``_WIDTH`` with 16 nodes, from where the integrand is e^-40 below its
rise (x^beta up to x ~ |rho - b|, then x^(beta - m_q)) to where nu is e^-60 below its peak; a stretched
exponential on fixed nodes (panels of ``_WIDTH_STABLE`` over the double-exponential rise of nu at its
lower end), extended for rho beyond the table to rho e^45 with nu from the stable density's convergent
expansion. Error: the difference to 12 nodes plus 1e-15 (10 |P| + |phase|) of the nodes' moduli.
Everything is summed in logs. The density is tabulated in log|rho - b| up to ``_TABLE_END`` b
(:class:`._oscillating._KinkTable`), the mixture itself beyond. A probe error above
``_MAX_REL_ERROR`` (cancellation between nodes), a table error above ``_MAX_TABLE_ERROR`` or values
beyond float64 leave the kernel to the other routes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import mpmath
import numpy as np
import sympy

from .._numerics.quadrature import gauss_legendre, panel_rule
from ..exceptions import TransformError
from ..kernels._parse import R
from ._forms import log_interpolant, not_a_measure
from ._mixture import _kanter_log_density, _stable_form
from ._monotone import _DPS, _compact_pieces, _Group, _Piece, _reconstructs, bernstein_terms
from ._oscillating import _MIN_OFFSET, _KinkTable, _number, _osc_factor, kink_table_transform
from ._registry import BUILDERS, MATCH_FAILURES, builder, exact_rationals, matcher
from ._types import RadialTransform

__all__: list[str] = []  # private module

_METHOD = "closed-form:monotone-oscillation"
_NODES, _CHECK_NODES = 16, 12  # Gauss-Legendre nodes per panel, and of the error's comparison rule
_PANELS = 24  # at least; panels of at most _WIDTH in y
_WIDTH = 1.5
_WIDTH_STABLE = 0.25
_STABLE_TERMS = 12
_STABLE_RISE = 8.0  # the stretch above the lower end with panels of _WIDTH_STABLE
_MIN_ALPHA = 0.2  # exp(-c r^alpha) below: Kanter's lower end and the tail series need more range
_MAX_REL_ERROR = 1e-8  # of the mixture on a probe grid
#: of the table (stated): the mixture's own error estimates near b (|rho - b| down to 2^-40 b) enter it
_MAX_TABLE_ERROR = 1e-6
_LOG_RANGE = 600.0
_TABLE_END = 1e4  # the table covers rho <= _TABLE_END b; the mixture itself beyond
_TAIL_LOG_SPAN = 12.0  # the tail interpolant spans rho_max .. e^12 rho_max (1.6e5 table ends)
_PROBE = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 61)])


def _stretched(envelope):
    """(C, c, alpha) for envelope = C exp(-c r^alpha) with C != 0, c > 0, 0 < alpha < 1 (completely
    monotone: the Bernstein density is the positive alpha-stable one), else None."""
    for sign in (1, -1):
        form = _stable_form(sign * envelope)
        if form is not None and _MIN_ALPHA <= 2 * form[2] < 1.0:
            return sign * form[0], form[1], 2 * form[2]
    return None


@matcher(priority=24)
def _match_monotone_oscillation(expr, support):
    """T(b r)/r^q E(r) with E completely monotone (a sum of w (r + p)^-beta exp(-s r), p > 0, and
    exponentials), T = cos (q = 0) or sin (q = 0, 1)."""
    if support is not None or not expr.has(sympy.cos, sympy.sin):
        return None
    split = _osc_factor(exact_rationals(expr))
    if split is None or split[2] is None or split[2][0] not in ("cos", "sin"):
        return None
    coef, power, (kind, b), rest = split
    q = 1 if kind == "sin" and power <= -1 else 0
    if not isinstance(power, int):
        return None
    envelope = coef * R ** (power + q) * sympy.Mul(*rest)
    if not envelope.has(R):
        return None  # a pure oscillation: the Bessel family
    try:
        b = _number(b)
        if b == 0:
            return None
        sign = -1 if (b < 0 and kind == "sin") else 1  # sin(-b r) = -sin(b r)
        stable = _stretched(envelope)
        if stable is not None:
            C, c, alpha = stable
            return "monotone_oscillation", {
                "kind": kind,
                "q": q,
                "b": abs(b),
                "terms": (),
                "atoms": (),
                "stable": ((sign * C, c, alpha),),
            }
        with mpmath.workdps(_DPS):
            # a sum's split may hand over the envelope expanded: 1/(r^2 sqrt(r + 1) + ... + sqrt(r + 1))
            data = bernstein_terms(envelope)
            if data is None:
                envelope = sympy.factor(envelope)
                data = bernstein_terms(envelope)
            if data is None:
                return None
            c0, terms, atoms, bessel, logs = data
            if c0 != 0 or bessel or logs or not _reconstructs(envelope, c0, terms, atoms):
                return None
    except (TypeError, *MATCH_FAILURES):
        return None
    # mpmath numbers: the r^-n terms of (1 - exp(-r))/r must cancel beyond their last shift at 50 digits
    terms = tuple((sign * w, beta, p, s) for w, beta, p, s in terms)
    atoms = tuple((sign * float(w), float(s)) for w, s in atoms)
    return "monotone_oscillation", {"kind": kind, "q": q, "b": abs(b), "terms": terms, "atoms": atoms}


class _Stable:
    """The Bernstein density of E = C exp(-c r^alpha), 0 < alpha < 1: nu(t) = C c^(-1/alpha)
    f_alpha(t c^(-1/alpha)), f_alpha the positive alpha-stable density (E exp(-s X) = exp(-s^alpha)) by
    Kanter's integral of positive terms (:func:`._mixture._kanter_log_density`), on fixed nodes in
    y = log t: from where f_alpha(x) ~ exp(-k x^(-alpha/(1-alpha))), k = (1-alpha) alpha^(alpha/(1-alpha)),
    is e^-60, to e^45 beyond the scale (the integrand nu t G falls like t^-(1+alpha) or faster)."""

    def __init__(self, C, c, alpha, nodes, rho_end):
        scale = c ** (1.0 / alpha)  # t = scale x
        k = (1.0 - alpha) * alpha ** (alpha / (1.0 - alpha))
        lo = math.log(scale) + (1.0 - alpha) / alpha * math.log(k / 60.0)
        # up to e^45 beyond the scale and beyond the table's end (mu's tail: nu t^-(1+alpha) meets G's
        # turnover at t ~ rho)
        hi = max(math.log(scale), math.log(rho_end)) + 45.0
        # nu rises double-exponentially in y over the first few units above lo: narrow panels there,
        # the groups' width beyond
        mid = lo + _STABLE_RISE
        breaks = np.concatenate(
            [
                np.linspace(lo, mid, math.ceil(_STABLE_RISE / _WIDTH_STABLE) + 1),
                np.linspace(mid, hi, math.ceil(hi - mid) + 1)[1:],
            ]
        )
        self.nodes, self.sign = {}, math.copysign(1.0, C)
        for name, n in zip(("fine", "coarse"), nodes):
            y, wy = (v[None, :] for v in panel_rule(breaks, n))
            x = np.exp(y[0])
            log_f, reached = _kanter_log_density(x / scale, alpha, 24, float(np.max(x / scale)))
            if not np.all(reached):
                raise TransformError("internal: Kanter's nodes do not reach the stable density's tail")
            log_nu = math.log(abs(C)) - math.log(scale) + log_f
            self.nodes[name] = (x[None, :], (log_nu + y[0] + np.log(wy[0]))[None, :])
        self.hi, self.C, self.scale, self.alpha = hi, C, scale, alpha

    def log_nu(self, t):
        """log |nu(t)| beyond the fixed nodes (t >= e^45 scale) from the stable density's convergent
        expansion f(x) = (1/(pi x)) sum_k (-1)^(k+1) Gamma(k alpha + 1)/k! sin(k pi alpha) x^(-k alpha):
        with x^-alpha <= e^(-45 alpha) <= e^-9 (alpha >= 0.2) its terms fall by 1e-4 each."""
        log_x = np.log(np.asarray(t, dtype=np.float64)) - math.log(self.scale)
        u = np.exp(-self.alpha * log_x)
        series = np.zeros_like(u)
        for k in range(_STABLE_TERMS, 0, -1):  # Horner in u
            c = (-1) ** (k + 1) * math.exp(math.lgamma(k * self.alpha + 1) - math.lgamma(k + 1))
            series = (series + c * math.sin(k * math.pi * self.alpha)) * u
        return math.log(abs(self.C)) - math.log(self.scale) - math.log(math.pi) - log_x + np.log(series)


class _Mixture:
    """The module docstring's integral in d dimensions: ``mix(rho, off)`` -> (log|mu|, sign, None);
    with ``with_error`` (log|mu|, sign, log of its absolute error, log of the nodes' moduli)."""

    def __init__(self, kind, q, b, terms, atoms, d, stable=()):
        self.imag, self.q, self.b, self.atoms = kind == "sin", q, b, atoms
        m = 0.5 * (d + 1)
        self.power = m - q
        # log of G_q's constant (q = 1 in d = 1: the logarithm's form in _log_node)
        lg = 0.0 if q == 0 else (-math.log(2.0) if d == 1 else math.lgamma(m - 1) - math.log(2.0))
        self.log_c = (math.lgamma(m) if q == 0 else lg) - (
            0.0 if q == 1 and d == 1 else m * math.log(math.pi)
        )
        self.fine = gauss_legendre(_NODES)
        self.coarse = gauss_legendre(_CHECK_NODES)
        # terms of one shift s form one Bernstein density nu_s (its cancellation at small t - s
        # resolved by a power series: 1/(1 + r) - 1/(2 + r) has nu = e^-t - e^-2t ~ t)
        # and r^-n exp(-s r) terms (p = 0) the compact pieces of nu ((1 - exp(-r))/r: nu = 1 on [0, 1])
        shifts = sorted({s for _, _, p, s in terms if p > 0})
        with mpmath.workdps(_DPS):
            terms = [tuple(mpmath.mpf(v) for v in term) for term in terms]
            self.groups = [
                _Group(s, [(w, beta, p) for w, beta, p, t in terms if t == s and p > 0]) for s in shifts
            ]
            if any(p == 0 for _, _, p, _ in terms):
                self.groups += [_Piece(s, length, coeffs) for s, length, coeffs in _compact_pieces(terms)]
        self.stable = [_Stable(C, c, alpha, (_NODES, _CHECK_NODES), _TABLE_END * b) for C, c, alpha in stable]

    @property
    def slow_decay(self):
        """beta with E ~ r^-beta at infinity from the unshifted terms (after their cancellation), or inf."""
        return min((g.lead + 1.0 for g in self.groups if g.s == 0), default=math.inf)  # (stable: inf)

    def _log_node(self, t, r, off):
        """log G_q(t - i b) (complex, principal) at nodes t (rows of ``r``)."""
        b = self.b
        zr = t * t + off * (r + b)
        zi = -2.0 * b * t
        arg = np.arctan2(zi, zr)
        if self.power == 0:
            # q = 1 in d = 1: G_1 = const - log(A^2 + rho^2) / (2 pi) (the limit m -> 1; the divergent
            # constant is real), so Im G_1 = -arg(A^2 + rho^2) / (2 pi), written as a log of i times it
            with np.errstate(divide="ignore"):
                return np.log(-0.5j / math.pi * arg)
        out = -self.power * (np.log(np.hypot(zr, zi)) + 1j * arg)
        if self.q == 0:
            out = out + 0.5 * np.log(t * t + b * b) + 1j * np.arctan2(-b, t)
        return out + self.log_c

    @staticmethod
    def _rule(rule, lo, hi, panels):
        """Nodes (rows x nodes) and weights in y on ``panels`` equal panels of [lo, hi] per row."""
        x, w = rule
        width = (hi - lo) / panels
        left = lo[:, None] + width[:, None] * np.arange(panels)[None, :]
        y = (left[:, :, None] + 0.5 * width[:, None, None] * (x[None, None, :] + 1.0)).reshape(lo.size, -1)
        wy = np.broadcast_to(0.5 * width[:, None, None] * w[None, None, :], (lo.size, panels, x.size))
        return y, wy.reshape(lo.size, -1)

    def __call__(self, rho, off=None, with_error=False):
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        r, o = rho[:, None], off[:, None]
        # complex logs of the nodes' values and their real signs apart: a phase pi for a negative
        # weight would round the small phases of P = Im near rho >> b (relative 1e-16 / phase)
        logs = {"fine": [], "coarse": []}
        signs = {"fine": [], "coarse": []}
        for g in self.stable:
            # fixed nodes (nu vanishes faster than any power at 0: no peak that follows |rho - b|),
            # and for rho beyond e^-40 of their end the stretch up to rho e^45: there nu's heavy tail
            # t^-(1+alpha) meets G's turnover at t ~ rho, which makes mu's tail rho^-(d+alpha)
            with np.errstate(divide="ignore"):
                top = np.log(rho) + 45.0
            far = top > g.hi
            for name, rule in (("fine", self.fine), ("coarse", self.coarse))[: 2 if with_error else 1]:
                x, base = g.nodes[name]
                logs[name].append(base + self._log_node(x, r, o))
                signs[name].append(np.full((rho.size, x.size), g.sign))
                if np.any(far):
                    lo, hi = np.full(int(far.sum()), g.hi), top[far]
                    panels = math.ceil(float(np.max(hi - lo)))  # (nu is a smooth power law out there)
                    y, wy = self._rule(rule, lo, hi, panels)
                    x = np.exp(y)
                    ext = np.full((rho.size, y.shape[1]), -np.inf, dtype=complex)
                    ext[far] = g.log_nu(x) + y + np.log(wy) + self._log_node(x, r[far], o[far])
                    logs[name].append(ext)
                    signs[name].append(np.full(ext.shape, g.sign))
        for g in self.groups:
            # below x0 the integrand is e^-40 of its peak: it rises like x^beta up to x ~ |rho - b|
            # (s = 0), then like x^(beta - m_q) where that is positive
            beta = g.lead + 1.0
            near = np.abs(off) / (2 * self.b)
            gamma = beta - self.power
            if g.s == 0 and gamma > 0:
                near = np.maximum(near, math.exp(-40.0 / gamma))
            x0 = np.minimum(1.0, near if g.s == 0 else 1.0) * math.exp(-40.0 / beta)
            lo = np.log(np.maximum(x0, 1e-300))
            hi = np.full(rho.size, math.log(g.x_cut))
            lo = np.minimum(lo, hi - 1.0)
            panels = max(_PANELS, math.ceil(float(np.max(hi - lo)) / _WIDTH))
            for name, rule in (("fine", self.fine), ("coarse", self.coarse))[: 2 if with_error else 1]:
                y, wy = self._rule(rule, lo, hi, panels)
                x = np.exp(y)
                log_nu, sign, _, _ = g.log_nu(x.ravel())
                logs[name].append(log_nu.reshape(x.shape) + y + np.log(wy) + self._log_node(g.s + x, r, o))
                signs[name].append(sign.reshape(x.shape))
        for w, s in self.atoms:
            val = math.log(abs(w)) + self._log_node(np.full((rho.size, 1), s), r, o)
            for name in logs:
                logs[name].append(val)
                signs[name].append(np.full(val.shape, math.copysign(1.0, w)))
        part = (lambda z: z.imag) if self.imag else (lambda z: z.real)
        fine = np.concatenate(logs["fine"], axis=1)
        shift = np.max(fine.real, axis=1)
        vf = np.concatenate(signs["fine"], axis=1) * np.exp(fine - shift[:, None])
        total = part(np.sum(vf, axis=1))
        with np.errstate(divide="ignore"):
            log_abs = np.log(np.abs(total)) + shift
        if not with_error:
            return log_abs, np.sign(total), None
        vc = np.concatenate(signs["coarse"], axis=1) * np.exp(
            np.concatenate(logs["coarse"], axis=1) - shift[:, None]
        )
        # a node's P-part in polar form: relative error ~1e-15 (10 |P| + |phi|) of its modulus (the
        # phase phi ~ m arg z carries ~1e-16 |phi|)
        phase = fine.imag
        moduli = np.sum(np.abs(vf) * (10 * np.abs(part(np.exp(1j * phase))) + np.abs(phase)), axis=1)
        err = np.abs(total - part(np.sum(vc, axis=1))) + 1e-15 * moduli
        with np.errstate(divide="ignore"):
            return log_abs, np.sign(total), np.log(err) + shift, np.log(moduli) + shift


def _tail_table(direct, rho_max, d):
    """rho -> (log|mu|, sign) beyond the table's end ``rho_max``: a verified Chebyshev interpolant of
    log|mu| in log rho (:func:`._forms.log_interpolant`, 2e-12) over ``_TAIL_LOG_SPAN`` natural
    log units, built on the first call, and ``direct`` (8 ms per rho) outside it. The sampler's last
    lobe reaches far into the power tail (rho = 5.9e5 for exp(-sqrt(r)) cos(r) in d = 2, 58 table
    ends): read pointwise its tables cost 14 s. Where the interpolant meets a zero of mu (none in the
    tail so far) the direct values are kept (its zero panels' mass error has no place to go)."""

    @functools.cache
    def fitted():
        fn, mass_error = log_interpolant(
            direct, math.log(rho_max), math.log(rho_max) + _TAIL_LOG_SPAN, signed=True, dim=d
        )
        return fn if mass_error == 0 else direct

    def evaluate(rho):
        return fitted()(rho)

    return evaluate


@builder("monotone_oscillation", rel_error=1e-9)
def _monotone_oscillation(kind, q, b, terms, atoms, dim, stable=()):
    """mu of T(b r)/r^q E(r) (module docstring), tabulated in log|rho - b| up to ``_TABLE_END`` b
    (:class:`._oscillating._KinkTable`: a few hundred evaluations of the mixture, whose nodes cost a
    few thousand complex powers per rho) and the mixture itself beyond (the power tail
    rho^-(d+1)); None where a probe of the mixture does not reach ``_MAX_REL_ERROR`` (strong
    cancellation between nodes). DIVERGENT below the threshold of the exponents, TransformError at it
    (the amplitude decays exactly like r^-(d-1)/2: mu ~ |rho - b|^-1 or a sphere shell at b, by the
    phase: cos(r) in d = 1 is two atoms)."""
    d = dim
    # mu ~ rho^-(d+1) from the r^1 term of k at 0, rho^-(d+alpha) from C exp(-c r^alpha) ~ C - C c r^alpha
    tail = float(d + min([1.0] + [alpha for _, _, alpha in stable]))
    m_q = 0.5 * (d + 1) - q
    mix = _Mixture(kind, q, b, terms, atoms, d, stable)
    # E ~ r^-beta at infinity from the unshifted terms: mu ~ |rho - b|^(beta - m_q) at b
    gamma = mix.slow_decay - m_q
    amplitude = f"T({b:g} r) E(r) with E ~ r^-{mix.slow_decay:g}" + (" and T = sin/r" if q else "")
    if abs(gamma + 1) <= 1e-12:
        raise TransformError(
            f"{amplitude} decays exactly like an oscillating r^-{0.5 * (d - 1):g} in d = {d}: its spectral "
            f"measure is not absolutely continuous at rho = {b:g} (a |rho - {b:g}|^-1 density or a sphere "
            "shell, by the phase), which spectralkit does not compute"
        )
    if gamma < -1:
        reason = (
            f"{amplitude} decays slower than the r^-{0.5 * (d - 1):g} of every finite radial measure on "
            f"R^{d}: its density behaves like |rho - {b:g}|^{gamma:g} at rho = {b:g}, not integrable"
        )
        return RadialTransform(
            mu=not_a_measure(reason),
            divergent=reason,
            method=_METHOD,
            rel_error=0.0,
            abs_error=0.0,
            scale=b,
            tail_exponent=tail,
        )
    probe = b * _PROBE
    probe = probe[np.abs(probe - b) > 1e-9 * b]
    la, _, log_err, log_mod = mix(probe, with_error=True)
    if not np.all(np.abs(la[np.isfinite(la)]) < _LOG_RANGE):
        return None  # (high d) values beyond float64, which the table holds its values in
    # relative to max(|mu|, 1e-3 of the nodes' moduli): near the zeros of mu
    worst = float(np.max(np.exp(log_err - np.maximum(la, log_mod + math.log(1e-3)))))
    if not worst <= _MAX_REL_ERROR:
        return None

    def direct(rho, off=None):
        la, sg, log_err, _ = mix(rho, off, with_error=True)
        with np.errstate(over="ignore", under="ignore"):
            return sg * np.exp(la), np.exp(log_err)

    direct.takes_offset = True
    rho_max = _TABLE_END * b
    table = _KinkTable(direct, b, rho_max, tol=1e-10, noise=max(1e-13, worst), dim=d, min_offset=_MIN_OFFSET)
    if not table.error <= _MAX_TABLE_ERROR:
        return None

    def beyond_direct(rho):  # the power tail rho^-tail beyond the table: the mixture itself
        la, sg, _ = mix(rho)
        return la, sg

    beyond = _tail_table(beyond_direct, rho_max, d)
    tr = kink_table_transform(table, 1.0, b, d, rho_max, b, _METHOD, beyond=beyond, tail_exponent=tail)
    return replace(tr, rel_error=max(BUILDERS["monotone_oscillation"].rel_error, tr.rel_error))
