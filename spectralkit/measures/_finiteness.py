"""Is the total mass ||mu|| finite? The rule from the exponents, confirmed numerically.

The tail of mu is set by the least smooth point of k: a term r^alpha at the origin gives
|mu| ~ rho^-(d+alpha); an edge term (R - r)^beta at the support radius gives an oscillating
|mu| ~ rho^-((d+1)/2+beta); an unbounded kernel has no finite signed measure (|k| <= ||mu||); a
kernel that oscillates at infinity with an envelope r^-gamma, gamma < (d-1)/2, has none either (every
finite radial measure has a Fourier transform decaying at least like r^-(d-1)/2 apart from its atom at
0), nor has one whose oscillating component alone decays that slowly (sin(r)^2/(r^2 (1 + r^2)) =
(1 - cos 2r)/(2 r^4) + ... never changes sign; its oscillation comes from the mass next to rho = 2,
whose transform decays like r^-(d-1)/2 at most). The mass integrand rho^(d-1)|mu| must decay faster than 1/rho.

Closed forms state their exponent and whether they are measures at all; other terms are analysed
(sympy series at 0 and at the support edge, the envelope at infinity), and edge terms of several
terms with the same support are added first (they may cancel). The partial masses
M(R) = int_0^R |f| over a few decades confirm the verdict numerically.
"""

import math

import numpy as np

from ..exceptions import TransformError
from ..kernels._analysis import RATE_MARGIN, analysis_budget, analyze
from ..transforms import closed_form
from ._results import FinitenessReport

__all__ = ["finiteness"]


def _unbounded_where(an):
    """Where k is unbounded, in words, from its analysis (the first cause that holds)."""
    if not math.isfinite(an.value_at_zero):
        return "at r = 0"
    if an.decay == "growth":
        return "as r -> infinity"
    if any(beta < 0 for _, beta in an.edge_terms):
        return "at the edge of its support"
    return "inside its domain (a pole or a non-finite value for some r > 0)"


def _fmt_exp(x):
    return f"{x:g}" if math.isfinite(x) else "inf"


def _edge_text(R, beta, coef, d, e):
    sing = f"jump at r = {R:g}" if beta == 0 else f"boundary singularity (R - r)^{beta:g} at r = R = {R:g}"
    return f"{sing} gives |mu| ~ rho^(-(d+{2 * beta + 1:g})/2) = rho^-{_fmt_exp(e)}"


def _is_closed_form(t):
    return t.method.startswith(("closed-form", "series", "given"))


def finiteness(*, dim, terms, sympy_budget, transform_terms, partial_masses, truncation=None):
    """:class:`FinitenessReport` of a measure given by its terms (module docstring).

    Parameters
    ----------
    dim : int
        Dimension d.
    terms : tuple
        ``((coef, atom), ...)`` (atom None: a constant).
    sympy_budget : float
        The derivation's sympy budget (sets the analysis budget).
    transform_terms : callable
        ``() -> ((coef, atom, RadialTransform), ...)``; called only once the analysis has not
        refused the kernel (unbounded or slowly oscillating kernels have no transform).
    partial_masses : callable
        ``radii -> M(R)`` for the numeric evidence.
    truncation : float or None
        The truncation radius of a truncated measure.
    """
    d = dim
    closed = {atom: closed_form(atom, d) for _, atom in terms if atom is not None}
    for t in closed.values():
        if t is not None and t.divergent:
            return FinitenessReport(False, math.nan, math.nan, t.divergent, (f"closed form ({t.method})",))
    # the analysis decides before any numeric transform is attempted: unbounded or slowly oscillating
    # kernels have no finite measure, and their transforms do not exist
    budget = analysis_budget(sympy_budget)
    analyses = {
        atom: analyze(atom, budget=budget) for _, atom in terms if atom is not None and closed[atom] is None
    }
    evidence = []
    for a, an in analyses.items():
        if not an.bounded or an.decay == "growth":
            where = _unbounded_where(an)
            reason = (
                f"k is unbounded {where} ({a.name}), but |k(z)| <= ||mu|| for every finite signed "
                "measure: mu is a generalized function (singular at rho = 0 for growth at infinity) "
                "and ||mu|| = inf"
            )
            return FinitenessReport(
                False,
                math.nan,
                math.nan,
                reason,
                (f"analysis ({an.method}): decay '{an.decay}', bounded {an.bounded}",),
            )
        flat = an.oscillating and an.decay == "none" and d >= 2
        if flat or (an.oscillating and an.decay == "power" and an.decay_rate < (d - 1) / 2):
            envelope = "without decaying" if flat else f"with an envelope r^-{an.decay_rate:.3g}"
            reason = (
                f"k oscillates at infinity {envelope} ({a.name}), slower than "
                f"the r^-{(d - 1) / 2:g} of every finite radial measure on R^{d}: its Fourier transform "
                "is not a measure, ||mu|| = inf"
            )
            return FinitenessReport(
                False,
                math.nan,
                math.nan,
                reason,
                (
                    f"analysis ({an.method}): oscillating, {'no decay' if flat else f'decay r^-{an.decay_rate:.3g}'}",
                ),
            )
        rate = an.oscillation_rate
        if (
            not an.oscillating
            and an.decay == "power"
            and math.isfinite(rate)
            and rate < (d - 1) / 2 - RATE_MARGIN
        ):
            reason = (
                f"k has a component that oscillates at infinity with an envelope r^-{rate:.3g} ({a.name}; "
                f"k itself need not change sign), slower than the r^-{(d - 1) / 2:g} of every finite radial "
                f"measure away from rho = 0 on R^{d}: its Fourier transform is not a measure, ||mu|| = inf"
            )
            return FinitenessReport(
                False,
                math.nan,
                math.nan,
                reason,
                (
                    f"analysis ({an.method}): an oscillating component decaying like r^-{rate:.3g}",
                    OSCILLATION_ONLY_EVIDENCE,
                ),
            )
    early = _edge_divergence(d, terms, closed, analyses)
    if early is not None:
        return early
    try:
        terms = transform_terms()
        failure = None
    except TransformError as exc:
        # the exponents need only the closed forms (computed above) and the analyses: a divergent
        # verdict stands without a density (e.g. a kink at r0 > 0 in d = 256, where the numeric
        # transform of the compact piece fails); a finite one needs the transforms
        terms = tuple((c, atom, closed.get(atom)) for c, atom in terms)
        failure = exc
    analysed = [(c, atom, t, analyses[atom]) for c, atom, t in terms if atom in analyses]
    tail_exp = math.inf
    causes = []
    # closed forms: their exponents are exact (a single compact term per support; several compact
    # closed-form terms with one support go through the analysis so that their edges can cancel)
    supports = [atom.support for _, atom, t in terms if atom is not None and atom.support is not None]
    leading_closed = {}
    for c, atom, t in terms:
        if atom is None or t is None or not _is_closed_form(t):
            continue
        if atom.support is not None and supports.count(atom.support) > 1:
            analysed.append((c, atom, t, analyze(atom, budget=budget)))
            continue
        for R, beta in t.edges:
            leading_closed[R] = beta
            e = (d + 1) / 2 + beta
            tail_exp = min(tail_exp, e)
            causes.append((e, _edge_text(R, beta, c * 1.0, d, e)))
        if math.isfinite(t.tail_exponent) and not t.edges:
            tail_exp = min(tail_exp, t.tail_exponent)
            causes.append(
                (
                    t.tail_exponent,
                    f"the closed form of {atom.name} decays like rho^-{_fmt_exp(t.tail_exponent)}",
                )
            )
    # boundary singularities of analysed terms: combine equal supports and equal beta (cancellation)
    edge = {}
    for c, a, _, an in analysed:
        if a.support is not None:
            for coef, beta in an.edge_terms:
                edge.setdefault((a.support, round(beta, 12)), 0.0)
                edge[(a.support, round(beta, 12))] += c * coef
    leading = {}
    for (R, beta), coef in edge.items():
        if abs(coef) > 1e-12 and (R not in leading or beta < leading[R][0]):
            leading[R] = (beta, coef)
    for R, (beta, coef) in leading.items():
        e = (d + 1) / 2 + beta
        tail_exp = min(tail_exp, e)
        causes.append((e, _edge_text(R, beta, coef, d, e)))
    for *_, an in analysed:
        for _, alpha, logp in an.origin_terms[:1]:
            e = d + alpha
            tail_exp = min(tail_exp, e)
            term = f"r^{alpha:g}" + (" log r" if logp else "")
            causes.append(
                (e, f"the term {term} of k at r = 0 gives |mu| ~ rho^-(d+{alpha:g}) = rho^-{_fmt_exp(e)}")
            )
    integrand = d - 1 - tail_exp
    if not causes:
        reason = (
            "k is smooth (analytic in r^2) at 0 with no support edge: mu decays faster than any "
            "power, ||mu|| < inf"
        )
        finite = True
    else:
        causes.sort()
        e_main, text = causes[0]
        finite = integrand < -1
        verdict = "finite" if finite else "divergent"
        extra = ""
        for beta in [b for b, _ in leading.values()] + list(leading_closed.values()):
            if (d + 1) / 2 + beta == e_main:
                extra = f" (finite iff d < 1 + 2*beta = {1 + 2 * beta:g})"
        reason = (
            f"{text}; mass integrand rho^(d-1)|mu| ~ rho^{_fmt_exp(integrand)} in d = {d}: {verdict}{extra}"
        )
    methods = sorted(
        {an.method for *_, an in analysed}
        | {t.method for _, a, t in terms if t is not None and _is_closed_form(t)}
    )
    evidence.append(
        "exponents from "
        + ", ".join(methods)
        + (" (k at r = 0, at the support edge and at infinity)" if analysed else "")
        + (", at the support edge" if leading or leading_closed else "")
    )
    if failure is not None:
        if finite:
            raise failure
        evidence.append(f"partial masses not computed (no density: {failure})")
        return FinitenessReport(finite, tail_exp, integrand, reason, tuple(evidence))
    scale = max(t.scale for _, _, t in terms)
    pm, slope = _partial_mass_evidence(scale, partial_masses, truncation, finite, integrand, evidence)
    return FinitenessReport(finite, tail_exp, integrand, reason, tuple(evidence), pm, slope)


#: the evidence of a DIVERGENT verdict decided by an oscillating component of k alone (no transform)
OSCILLATION_ONLY_EVIDENCE = (
    "an oscillating component of k at infinity decides the verdict alone, no transform was computed"
)

#: the evidence of a DIVERGENT verdict decided by :func:`_edge_divergence` (no transform computed)
EDGE_ONLY_EVIDENCE = (
    "exponents from sympy-series (k at the support edge); the edge decides the verdict alone, "
    "no transform was computed"
)


def _edge_divergence(d, terms, closed, analyses):
    """The DIVERGENT report of a kernel whose support edges alone prove ||mu|| = inf, else None.

    Only when no term has a closed form and every exponent comes from sympy's series (exact): the
    edge terms of equal support and exponent are added first (as below), and a leading edge
    (R - r)^beta with d >= 1 + 2 beta makes the mass integrand rho^(d-1)|mu| ~ rho^((d-3)/2 - beta)
    non-integrable whatever the rest of the kernel does (an oscillation at frequency R cannot be
    cancelled by terms at other radii or by the non-oscillating origin terms). No transform is
    computed: the numeric transform of such a kernel in high d is the costliest one and the least
    accurate (circular covariance, Askey (1 - r)^2.5 in d = 256)."""
    if any(closed[atom] is not None for _, atom in terms if atom is not None):
        return None
    if any(an.method != "sympy-series" for an in analyses.values()):
        return None
    edge = {}
    for c, a in terms:
        if a is not None and a.support is not None:
            for coef, beta in analyses[a].edge_terms:
                key = (a.support, round(beta, 12))
                edge[key] = edge.get(key, 0.0) + c * coef
    leading = {}
    for (R, beta), coef in edge.items():
        if abs(coef) > 1e-12 and (R not in leading or beta < leading[R][0]):
            leading[R] = (beta, coef)
    if not leading:
        return None
    R, (beta, coef) = min(leading.items(), key=lambda item: item[1][0])
    e = (d + 1) / 2 + beta
    integrand = d - 1 - e
    if integrand < -1:
        return None
    reason = (
        f"{_edge_text(R, beta, coef, d, e)}; mass integrand rho^(d-1)|mu| ~ rho^{_fmt_exp(integrand)} "
        f"in d = {d}: divergent (finite iff d < 1 + 2*beta = {1 + 2 * beta:g})"
    )
    return FinitenessReport(False, e, integrand, reason, (EDGE_ONLY_EVIDENCE,))


def _partial_mass_evidence(scale, partial_masses, truncation, finite, integrand, evidence):
    """Partial masses M(R) at R = (10, 30, 100, 300, 1000) x scale and the growth of their increments."""
    pm, slope = (), float("nan")
    try:
        radii = scale * np.array([10.0, 30.0, 100.0, 300.0, 1000.0])
        if truncation is not None:
            radii = radii[radii < truncation]
        if len(radii) < 2:
            return pm, slope
        vals = partial_masses(radii)
        pm = tuple((float(r_), float(v)) for r_, v in zip(radii, vals))
        with np.errstate(invalid="ignore"):
            inc = np.diff(vals)
        ok = inc > 0
        if np.count_nonzero(ok) >= 2:
            # increments over equal log-steps scale like R^(e + 1), e the integrand exponent
            lr = np.log(radii[1:])[ok]
            slope = float(np.polyfit(lr[-3:], np.log(inc[ok][-3:]), 1)[0])
        rel = inc[-1] / vals[-1] if vals[-1] > 0 else float("nan")
        if not np.isfinite(slope) and finite and not rel > 1e-12:
            note = "consistent with convergence (all mass inside the first radius)"
        elif np.isfinite(slope):
            agrees = (slope < -0.15) if finite else (slope > -0.15)
            note = (
                ("consistent with " + ("convergence" if finite else "divergence"))
                if agrees
                else "INCONCLUSIVE against the analysis"
            )
            if math.isfinite(integrand):
                note += f" (predicted {integrand + 1:.3g})"
        else:
            note = "INCONCLUSIVE"
        evidence.append(
            "partial masses M(R) = S_{d-1} int_0^R |mu| rho^(d-1): "
            + ", ".join(f"M({r_:.3g}) = {v:.6g}" for r_, v in pm)
            + (f"; increments scale like R^{slope:.3g}" if np.isfinite(slope) else "; no increments to fit")
            + f" — {note}"
        )
    except (TransformError, ValueError, FloatingPointError, ZeroDivisionError) as exc:
        evidence.append(f"partial masses not computed: {exc}")
    return pm, slope
