"""Is the total mass ||mu|| finite? The rule from the kernel's expansions, confirmed numerically.

The tail of mu is set by the least smooth point of k: a term r^alpha at the origin gives
|mu| ~ rho^-(d+alpha); an edge term (R - r)^beta at the support radius gives an oscillating
|mu| ~ rho^-((d+1)/2+beta); an unbounded kernel has no finite signed measure. The mass integrand
rho^(d-1)|mu| must decay faster than 1/rho. The partial masses M(R) over a few decades confirm it.
"""

import math

import numpy as np

from ..exceptions import TransformError
from ..kernels._analysis import analyze
from ._results import FinitenessReport

__all__ = ["finiteness"]


def _fmt_exp(x):
    return f"{x:g}" if math.isfinite(x) else "inf"


def finiteness(measure):
    """:class:`FinitenessReport` of ``measure``: the exponents of its kernel, confirmed numerically."""
    d = measure.dim
    atoms = [(c, a, analyze(a)) for c, a in measure.kernel.terms]
    evidence = []
    # unbounded kernels: |k(z)| <= ||mu|| for a finite signed measure
    for c, a, an in atoms:
        if not an.bounded or an.decay == "growth":
            where = "at r = 0" if not an.bounded else "at infinity"
            reason = (f"k is unbounded {where} ({a.name}), but |k(z)| <= ||mu|| for every finite signed "
                      "measure: mu is a generalized function (singular at rho = 0 for growth at infinity) "
                      "and ||mu|| = inf")
            return FinitenessReport(False, float("nan"), float("nan"), reason,
                                    (f"analysis ({an.method}): decay '{an.decay}', bounded {an.bounded}",))
        if an.decay == "none":
            raise TransformError(
                f"{a.name} does not tend to 0 at infinity: its spectral measure has a singular part "
                "(e.g. point masses or a sphere shell), which spectralkit does not represent; "
                "subtract the limit or use a decaying kernel")
    tail_exp = math.inf
    causes = []
    # boundary singularities: combine equal supports and equal beta (cancellation)
    edge = {}
    for c, a, an in atoms:
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
        if e < tail_exp:
            tail_exp = e
        if beta == 0:
            sing = f"jump of size {abs(coef):.4g} at r = {R:g}"
        else:
            sing = f"boundary singularity (R - r)^{beta:g} at r = R = {R:g}"
        causes.append((e, f"{sing} gives |mu| ~ rho^(-(d+{2 * beta + 1:g})/2) = rho^-{_fmt_exp(e)}"))
    for c, a, an in atoms:
        for coef, alpha, logp in an.origin_terms[:1]:
            e = d + alpha
            if e < tail_exp:
                tail_exp = e
            term = f"r^{alpha:g}" + (" log r" if logp else "")
            causes.append((e, f"the term {term} of k at r = 0 gives |mu| ~ rho^-(d+{alpha:g}) = rho^-{_fmt_exp(e)}"))
    integrand = d - 1 - tail_exp
    if not causes:
        reason = ("k is smooth (analytic in r^2) at 0 with no support edge: mu decays faster than any "
                  "power, ||mu|| < inf")
        finite = True
    else:
        causes.sort()
        e_main, text = causes[0]
        finite = integrand < -1
        verdict = "finite" if finite else "divergent"
        extra = ""
        for (R, (beta, coef)) in leading.items():
            if (d + 1) / 2 + beta == e_main:
                extra = (f" (finite iff d < 1 + 2*beta = {1 + 2 * beta:g})")
        reason = (f"{text}; mass integrand rho^(d-1)|mu| ~ rho^{_fmt_exp(integrand)} in d = {d}: "
                  f"{verdict}{extra}")
    evidence.append("analysis (" + ", ".join(sorted({an.method for _, _, an in atoms})) + ") of k at r = 0"
                    + (", at the support edge" if leading else "") + " and at infinity")
    # numerical confirmation from partial masses over a few decades
    pm, slope = (), float("nan")
    try:
        scale = max(t.scale for _, t in measure.transforms)
        radii = scale * np.array([10.0, 30.0, 100.0, 300.0, 1000.0])
        if measure._truncation is not None:
            radii = radii[radii < measure._truncation]
        if len(radii) >= 2:
            vals = measure.partial_masses(radii)
            pm = tuple((float(r_), float(v)) for r_, v in zip(radii, vals))
            with np.errstate(invalid="ignore"):
                inc = np.diff(vals)
            ok = inc > 0
            if np.count_nonzero(ok) >= 2:
                # increments over equal log-steps scale like R^(e + 1), e the integrand exponent
                lr = np.log(radii[1:])[ok]
                slope = float(np.polyfit(lr[-3:], np.log(inc[ok][-3:]), 1)[0])
            rel = inc[-1] / vals[-1] if vals[-1] > 0 else float("nan")
            if not np.isfinite(slope) and finite and rel < 1e-12:
                note = "consistent with convergence (no growth)"
            elif np.isfinite(slope):
                agrees = (slope < -0.15) if finite else (slope > -0.15)
                note = ("consistent with " + ("convergence" if finite else "divergence")) if agrees else \
                    "INCONCLUSIVE against the analysis"
                if math.isfinite(integrand):
                    note += f" (predicted {integrand + 1:.3g})"
            else:
                note = "INCONCLUSIVE"
            evidence.append(
                "partial masses M(R) = S_{d-1} int_0^R |mu| rho^(d-1): "
                + ", ".join(f"M({r_:.3g}) = {v:.6g}" for r_, v in pm)
                + f"; increments scale like R^{slope:.3g} — {note}")
    except (TransformError, ValueError, FloatingPointError, ZeroDivisionError) as exc:
        evidence.append(f"partial masses not computed: {exc}")
    return FinitenessReport(finite, tail_exp, integrand, reason, tuple(evidence), pm, slope)
