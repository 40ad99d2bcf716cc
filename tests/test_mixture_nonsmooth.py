"""The Gaussian-mixture route for kernels not smooth at 0 (transforms/_mixture.py): exp(-r^a),
(1 + r^a)^-beta and products, against 20-digit mpmath references stored below.

References (mpmath, 40 digits): in d = 3 the Hankel integral mu(rho) = (2 pi^2 rho)^-1
int_0^inf k(r) r sin(rho r) dr (mpmath.quadosc); in d = 16, 64, 256 the mixture integral
int psi(t) (4 pi t)^(-d/2) exp(-rho^2 / (4 t)) dt with a psi computed independently of spectralkit:
the convergent series of the positive stable density (exp(-r^a): psi(t) = (1/pi) sum_k (-1)^(k+1)
Gamma(k a/2 + 1)/k! sin(k pi a/2) t^(-k a/2 - 1)) or mpmath.invertlaplace (Talbot's classical
contour) for the other two.
"""

import math

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc

import spectralkit as sk
from spectralkit import kernels as K
from spectralkit.kernels._analysis import analyze, origin_terms_to_order
from spectralkit.transforms._dispatch import _length_scale
from spectralkit.transforms._mixture import (
    _kanter_log_density,
    _kanter_psi,
    _log_tail_density,
    _power_tail,
    _stable_form,
    _tail_kernel,
    gaussian_mixture_transform,
)

STABLE_15 = "exp(-r**1.5)"
STABLE_05 = "exp(-sqrt(r))"
CAUCHY = "(1+r**1.5)**(-2)"
PRODUCT = "exp(-r**1.5)/(1+r)"

#: (kernel, d) -> [(rho, mu_d(rho))]
REFERENCES = {
    (STABLE_15, 3): [
        (0.5, "0.030110888779505640428"),
        (3.0, "0.00155673806470982352"),
        (30.0, "2.7682281654279293007e-8"),
    ],
    (STABLE_05, 3): [
        (0.5, "0.097564511661917745854"),
        (3.0, "0.00052804595292009824496"),
        (30.0, "2.6391283426873868209e-7"),
    ],
    (CAUCHY, 3): [
        (0.5, "0.035870029054872337939"),
        (3.0, "0.0014452151728745060743"),
        (30.0, "5.9005222504073461696e-8"),
    ],
    (PRODUCT, 3): [
        (0.5, "0.013357865677669147361"),
        (3.0, "0.001467401102294515339"),
        (30.0, "1.5372148497279373268e-7"),
    ],
    (STABLE_15, 256): [
        (16.0, "2.1411767583740907679e-159"),
        (30.0, "1.2419450715031817711e-229"),
        (3000.0, "6.8022113441463982205e-745"),  # beyond the join T: the analytic power tail
    ],
    (CAUCHY, 16): [
        (5.0, "8.120543161897800283e-13"),
    ],
    (CAUCHY, 256): [
        (20.0, "1.3804572537062576131e-184"),
        (3000.0, "1.3622735881785050305e-744"),
    ],
    (PRODUCT, 256): [
        (16.0, "6.7519490137670868747e-160"),
        (3000.0, "1.1356688298132877611e-743"),
    ],
    (STABLE_05, 256): [
        (20.0, "5.8295000283950175539e-185"),
        (2000.0, "1.2132734707262140622e-697"),
        (2e6, "4.1230433781559715058e-1467"),
    ],
}


def _transform(spec, d):
    k = K.RadialKernel.from_string(spec)
    info = analyze(k)
    terms = origin_terms_to_order(k, 6, 5.0) or info.origin_terms
    return gaussian_mixture_transform(
        k, d, length=_length_scale(k), smooth_at_origin=False, origin_terms=terms
    )


@pytest.mark.parametrize(("spec", "d"), sorted(REFERENCES))
def test_density_within_stated_error(spec, d):
    T = _transform(spec, d)
    # exp(-c r^a): psi is the positive stable density, by Kanter's integral (no Talbot inversion)
    stable = spec in (STABLE_15, STABLE_05)
    assert T is not None and T.method == "numeric:gaussian-mixture+" + ("kanter" if stable else "talbot")
    assert T.rel_error <= 1e-6 and T.mass_error <= 1e-7
    assert (
        T.tail_exponent
        == d + 2 * min(b for _, b, _ in analyze(K.RadialKernel.from_string(spec)).origin_terms) / 2
    )
    rho = np.array([x for x, _ in REFERENCES[(spec, d)]])
    la, sg = T.log_abs_mu(rho)
    for (x, ref), l_, s_ in zip(REFERENCES[(spec, d)], la, sg, strict=True):
        assert s_ == 1.0
        # in logs: the d = 256 values underflow float64
        assert abs(l_ - float(mp.log(mp.mpf(ref)))) <= 1.5 * T.rel_error, (x, l_, ref)


def _tail_ref(d, rho, g, T):
    """int_T^inf t^(-1-g) g_d(rho, t) dt = (4 pi)^(-d/2) (rho^2/4)^(-a) gamma_lower(a, rho^2/(4T)),
    a = g + d/2 (t = rho^2/(4v)), with mpmath's incomplete gamma; T^(-a)/a (4 pi)^(-d/2) at 0."""
    a, rho = mp.mpf(g) + mp.mpf(d) / 2, mp.mpf(rho)
    if rho == 0:
        return (4 * mp.pi) ** (-mp.mpf(d) / 2) * mp.mpf(T) ** (-a) / a
    return (4 * mp.pi) ** (-mp.mpf(d) / 2) * (rho**2 / 4) ** (-a) * mp.gammainc(a, 0, rho**2 / (4 * T))


def test_tail_density_closed_form():
    # both branches (Kummer's series where V = rho^2/(4T) <= a/2, scipy's P beyond)
    gam, T = np.array([0.25, 0.75]), 50.0
    for d, rho in ((3, 0.0), (3, 5.0), (3, 200.0), (256, 100.0), (256, 400.0)):
        got = _log_tail_density(np.array([rho]), gam, T, d)[0]
        for g, val in zip(gam, got, strict=True):
            ref = float(mp.log(_tail_ref(d, rho, g, T)))
            assert abs(val - ref) <= 1e-12 * max(1.0, abs(val)), (d, rho, g)


def test_tail_kernel_incomplete_gamma():
    # sum_j A_j r^(2 g_j) Gamma(-g_j, T r^2) from scipy by recurrence, against mpmath
    A, gam, T = np.array([0.2, -0.05, 0.01]), np.array([0.25, 1.5, 2.75]), 40.0
    r = np.array([0.0, 1e-4, 0.01, 0.1, 0.5])
    got = _tail_kernel(r, A, gam, T)
    for x, v in zip(r, got, strict=True):
        if x == 0:
            ref = sum(a * mp.mpf(T) ** (-g) / g for a, g in zip(A, gam, strict=True))
        else:
            ref = sum(
                a * mp.mpf(x) ** (2 * g) * mp.gammainc(-g, T * mp.mpf(x) ** 2)
                for a, g in zip(A, gam, strict=True)
            )
        assert abs(v - float(ref)) <= 1e-12 * abs(float(ref)), (x, v, ref)


def test_declines_psi_negative_at_infinity():
    # (1 + 2 r) e^-r = 1 + r - ...: the term +r gives psi ~ t^(-3/2) / Gamma(-1/2) < 0 at infinity,
    # not a positive mixture: the route declines (the Hankel route answers)
    k = K.RadialKernel.from_string("(1 + 2*r)*exp(-r)")
    info = analyze(k)
    assert info.origin_terms[0][1] == 1.0 and info.origin_terms[0][0] > 0
    assert (
        gaussian_mixture_transform(
            k, 3, length=_length_scale(k), smooth_at_origin=False, origin_terms=info.origin_terms
        )
        is None
    )


def test_power_tail_coefficient():
    # exp(-r^1.5): psi(t) ~ t^(-7/4) / |Gamma(-3/4)| (the stable density's tail)
    A, gam = _power_tail(((-1.0, 1.5, 0), (0.5, 3.0, 0)))
    assert gam[0] == 0.75 and math.isclose(A[0], -1.0 / sc.gamma(-0.75), rel_tol=1e-14)
    assert _power_tail(((1.0, 2.0, 1),)) is None  # r^2 log r: not a power tail


def test_check_rkks_generalised_cauchy():
    # (1 + r^1.5)^-2 in d = 16 was refused on the Hankel route (its Bochner check caught
    # m+ = 436790): PD, m+ = k(0) = 1
    rep = sk.check_rkks(K.RadialKernel.from_string(CAUCHY), 16)
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - 1.0) <= rep.mass_plus.error <= 1e-7
    assert rep.mass_minus.value <= rep.mass_minus.error <= 1e-7


def test_kanter_density_against_the_levy_law():
    # beta = 1/2: the positive stable law is Levy's, f(x) = x^(-3/2) e^(-1/(4x)) / (2 sqrt(pi))
    x = np.geomspace(1e-2, 1e6, 25)
    exact = -math.log(2 * math.sqrt(math.pi)) - 1.5 * np.log(x) - 1 / (4 * x)
    for n in (16, 24):
        got, reached = _kanter_log_density(x, 0.5, n, float(x.max()))
        assert np.all(reached)
        assert np.max(np.abs(got - exact)) <= 1e-12


@pytest.mark.parametrize("beta", [0.15, 0.5, 0.9, 0.99])
def test_kanter_psi_error_bounds_the_true_error(beta):
    # the stated error (16 against 24 nodes per panel, plus rounding) bounds the distance to a
    # 40-node evaluation, and a 2-node rule is far off (negative control)
    u = np.geomspace(0.05, 1e4, 40)
    psi, err, _, _ = _kanter_psi(1.0, 1.0, beta, u)
    fine, _ = _kanter_log_density(u, beta, 40, float(u.max()))
    live = psi > 1e-300
    assert np.all(np.abs(psi - np.exp(fine))[live] <= err[live])
    crude, _ = _kanter_log_density(u, beta, 2, float(u.max()))
    assert np.max(np.abs(np.expm1(crude - fine)[live])) > 1e-6


def test_stable_form_is_read_from_the_formula():
    assert _stable_form(K.RadialKernel.from_string("3*exp(-0.5*r**1.9)").expr) == pytest.approx(
        (3.0, 0.5, 0.95)
    )
    for spec in ("exp(-r**2)", "exp(-r)*(1+r)", "exp(-r**1.5)/(1+r)", "exp(r**0.5)"):
        assert _stable_form(K.RadialKernel.from_string(spec).expr) is None, spec


@pytest.mark.parametrize(
    ("spec", "d"),
    [("exp(-r**1.8)", 256), ("3*exp(-0.5*r**1.95)", 256), ("exp(-r**0.3)", 64), ("exp(-0.1*r**0.165)", 64)],
)
def test_exponential_powers_beyond_the_series_are_pd_with_mass_k0(spec, d):
    # beyond d = 16 (the series' dimensions): refused (alpha near 2 in d = 256, alpha = 0.165 whose
    # psi reaches below the default rule) or an ArithmeticError (alpha = 0.3 in d = 64) before
    k = K.RadialKernel.from_string(spec)
    k0 = float(k(np.zeros(1))[0])
    rep = sk.check_rkks(k, d)
    assert rep.verdict == "PD" and rep.method == "numeric:gaussian-mixture+kanter"
    assert abs(rep.mass_plus.value - k0) <= rep.mass_plus.error <= 1e-9 * k0
