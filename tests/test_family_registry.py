"""The family registry drives these tests: every registered family gets them automatically.

* closed form versus quadrature: for every family with a closed-form measure, k(r) is rebuilt from
  the closed-form density by quadrature, k(r) = int_0^inf f(rho) Omega_d(r rho) drho + sum of the
  shells m Omega_d(r R) (Omega_d(x) = Gamma(d/2) (2/x)^nu J_nu(x), nu = d/2 - 1), and compared with
  the formula; the truncation error of the quadrature is bounded from the stated tail exponent;
* exact sampler versus tabulated sampler: for every family with an exact law (a Gaussian scale
  mixture or a norm law), the exact norms and the tabulated inverse-CDF norms of the derived measure
  agree (two-sample KS at level 1e-3); a negative control shows that the test sees a 3 % scale bias.

A family added to ``kernels.REGISTRY`` without a record here fails ``test_every_family_is_covered``.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

from spectralkit import kernels
from spectralkit._numerics.quadrature import panel_rule
from spectralkit.kernels import REGISTRY
from spectralkit.measures import SpectralMeasure
from spectralkit.sampling import exact_sampler, radial_sampler
from spectralkit.transforms import closed_form

ALPHA = 1e-3  # level of every KS test

#: Families without a closed-form measure and without an exact sampler, and why.
NO_CLOSED_FORM = {
    "delta_gaussian": "a difference of two Gaussians: its terms are gaussian closed forms",
    "spherical_polynomial": "a compact polynomial recognised from its expression",
    "ntk_relu_sphere": "numeric transform",
    "arccos0_sphere": "numeric transform",
    "arccos1_sphere": "numeric transform",
    "log_kernel": "no finite spectral measure (k does not decay)",
}

CLOSED = sorted(n for n, f in REGISTRY.items() if f.measure is not None)
EXACT = sorted(n for n, f in REGISTRY.items() if f.multiplier is not None or f.norm_law is not None)


#: Parameters other than the defaults for the sampler cross-check (the default bessel nu = 0 in d = 1
#: has an inverse-square-root singularity whose table takes 15 s to build; nu = 1.5 is a smooth law).
SAMPLER_PARAMS = {"bessel": {"nu": 1.5}}


def _default(name, params=None):
    return kernels.LIBRARY[name](**(params or {}))


def test_every_family_is_covered():
    """Each registered family is either checked below or listed (with its reason) as not applicable,
    and kernels/__init__ publishes every registered constructor."""
    for name in REGISTRY:
        assert name in CLOSED or name in EXACT or name in NO_CLOSED_FORM, name
        assert getattr(kernels, name) is kernels.LIBRARY[name]
        assert name in kernels.__all__
    assert {"sinc", "bessel", "gaussian", "matern"} <= set(CLOSED) & set(EXACT)


def _omega(d, x):
    """Omega_d(x) = Gamma(d/2) (2/x)^nu J_nu(x) (the radial characteristic function of the sphere)."""
    nu = d / 2 - 1
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = sp.gamma(d / 2) * (2.0 / x) ** nu * sp.jv(nu, x)
    return np.where(x == 0, 1.0, val)


def _rebuild(t, d, r, rho_max):
    """int_0^rho_max f(rho) Omega_d(r rho) drho + shells by composite Gauss-Legendre (panels of at
    most 1/4 period, graded geometrically towards 0 and the singular points), and a bound on what
    the float grid cannot reach: [p - eps, p + eps] around each singular point p (eps = 1e-13 p),
    bounded by 4 eps |f(p -+ eps)| (an integrable singularity no stronger than |rho - p|^(-3/4))."""
    sing = sorted({float(p) for p in t.singular_points if 0 < p < rho_max})
    pts = [0.0, *sing, rho_max]
    log_s = math.log(2) + d / 2 * math.log(math.pi) - math.lgamma(d / 2)

    def f(x):
        mu = np.asarray(t.mu(x), dtype=np.float64)
        return np.where(mu == 0, 0.0, np.exp(log_s + (d - 1) * np.log(np.maximum(x, 1e-300))) * mu)

    breaks, gap = [], 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        ea = 1e-13 * a if a in sing else 0.0
        eb = 1e-13 * b if b in sing else 0.0
        lo, hi = a + ea, b - eb
        width = min(0.25 * 2 * math.pi / r, (hi - lo) / 4)
        inner = np.arange(lo + width, hi - width / 2, width)
        g = (hi - lo) * 0.5 * np.geomspace(1e-13, 1.0, 60)
        g = g[g < width]
        breaks.append(np.concatenate([[lo], lo + g, inner, hi - g[::-1], [hi]]))
        for e, x in ((ea, lo), (eb, hi)):
            if e:
                gap += 4 * e * abs(float(f(np.array([x]))[0]))
    nodes, weights = panel_rule(np.unique(np.concatenate(breaks)), 24)
    out = float(np.sum(weights * f(nodes) * _omega(d, r * nodes)))
    for radius, mass in t.shells:
        out += mass * float(_omega(d, r * radius))
    return out, gap


def _closed_cases():
    cases = []
    for name in CLOSED:
        for d in (1, 2, 3):
            cases.append((name, d))
    return cases


@pytest.mark.parametrize("name,d", _closed_cases())
def test_closed_form_vs_quadrature(name, d):
    """k(r) rebuilt from the closed-form density by quadrature (module docstring), r in {0.5, 1, 2} l:
    within 1e-8 plus the bound on the density's mass beyond the quadrature's end."""
    kern = _default(name)
    t = closed_form(kern, d)
    assert t is not None, f"{name} has a measure record but no closed form in d = {d}"
    if t.divergent:
        pytest.skip(f"{name} has no finite measure in d = {d}: {t.divergent}")
    scale = t.scale
    q = t.tail_exponent - (d - 1)  # |f| ~ rho^-q
    rho_max = scale * (200.0 if math.isfinite(q) else 60.0)
    if t.edges or t.tail_oscillation or not math.isfinite(q):
        tail = 0.0 if not math.isfinite(q) else None
    else:
        tail = None
    if tail is None:
        # one-signed power tail beyond rho_max: int |f| <= |f(rho_max)| rho_max / (q - 1) (x 2 margin)
        fm = abs(float(SpectralMeasure(kern, d).radial_density(np.array([rho_max]))[0]))
        tail = 2 * fm * rho_max / (q - 1) if q > 1 else math.inf
    assert math.isfinite(tail)
    for r in (0.5, 1.0, 2.0):
        got, gap = _rebuild(t, d, r, rho_max)
        want = float(kern(r))
        assert abs(got - want) <= 1e-9 + tail + gap, (name, d, r, got, want, tail, gap)


def _exact_cases():
    cases = []
    for name in EXACT:
        for d in (1, 3):
            cases.append((name, d))
    return cases


@pytest.mark.parametrize("name,d", _exact_cases())
def test_exact_sampler_vs_tabulated(name, d):
    """The exact norm law of the family against the tabulated inverse CDF of the derived measure."""
    kern = _default(name, SAMPLER_PARAMS.get(name))
    measure = SpectralMeasure(kern, d)
    if measure.check_rkks().verdict != "PD":
        pytest.skip(f"{name} is not PD with a finite measure in d = {d}")
    exact = exact_sampler(kern, d)
    assert exact is not None
    tab = radial_sampler(measure, +1)
    assert tab.mass == pytest.approx(measure.mass_plus.value, abs=1e-10)
    rng = np.random.default_rng(d + 17)
    x = tab.sample(20_000, rng)
    y = exact.sample_norms(20_000, rng)
    assert st.ks_2samp(x, y).pvalue > ALPHA, name


def test_exact_vs_tabulated_negative_control():
    """The KS comparison above rejects a tabulated law scaled by 3 % (power of the check)."""
    kern = kernels.matern(1.5, 1.0)
    tab = radial_sampler(SpectralMeasure(kern, 3), +1)
    rng = np.random.default_rng(5)
    x = tab.sample(20_000, rng) * 1.03
    y = exact_sampler(kern, 3).sample_norms(20_000, rng)
    assert st.ks_2samp(x, y).pvalue < ALPHA
