"""The Gaussian-mixture route for kernels not smooth at 0 (transforms/_mixture.py): exp(-r^a),
(1 + r^a)^-beta and products, against 20-digit mpmath references stored below.

References (mpmath, 40 digits): in d = 3 the Hankel integral mu(rho) = (2 pi^2 rho)^-1
int_0^inf k(r) r sin(rho r) dr (mpmath.quadosc); in d = 16, 64, 256 the mixture integral
int psi(t) (4 pi t)^(-d/2) exp(-rho^2 / (4 t)) dt with a psi computed independently of spectralkit:
the convergent series of the positive stable density (exp(-r^a): psi(t) = (1/pi) sum_k (-1)^(k+1)
Gamma(k a/2 + 1)/k! sin(k pi a/2) t^(-k a/2 - 1)) or mpmath.invertlaplace (Talbot's classical
contour) for the other two. A Gaussian factor with a power tail of psi, in d = 3, 64 and 256
(:func:`erfc_mixture_mu`, :func:`gauss_product_mixture_mu`): psi in closed form, the mixture integral
in mpmath on 128 panels (g_d is a bump of width ~1/sqrt(d) there); in d = 3 it agrees with the
Hankel integral of k to 1e-34.
"""

import math

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc
import sympy

import spectralkit as sk
from spectralkit import kernels as K
from spectralkit._numerics.special import log_sphere_area
from spectralkit.kernels._analysis import analyze, origin_terms_to_order
from spectralkit.kernels._parse import R
from spectralkit.measures import _cache
from spectralkit.transforms._closed_forms import closed_form
from spectralkit.transforms._dispatch import _length_scale, _mixture_route, numeric_transform
from spectralkit.transforms._mixture import (
    _ERFCX,
    _hidden_gaussian_factor,
    _kanter_log_density,
    _kanter_psi,
    _log_tail_density,
    _Mixture,
    _power_tail,
    _scaled_erfc,
    _stable_form,
    _tail_kernel,
    gaussian_mixture_transform,
)
from spectralkit.transforms._terms import _limit_at_infinity

STABLE_15 = "exp(-r**1.5)"
STABLE_05 = "exp(-sqrt(r))"
CAUCHY = "(1+r**1.5)**(-2)"
PRODUCT = "exp(-r**1.5)/(1+r)"
#: a Gaussian factor under a power tail of psi: explicit, and hidden in erfc(r) = e^(-r^2) erfcx(r)
GAUSS_PRODUCT = "exp(-r**2)/(1+r)"
ERFC = "erfc(r)"

#: (kernel, d) -> [(rho, mu_d(rho))]
REFERENCES = {
    (ERFC, 3): [
        (0.5, "0.009063550021879062083"),
        (3.0, "0.001810987752015427588"),
        (30.0, "1.4178024502981226832e-7"),
    ],
    (ERFC, 64): [
        (8.0, "1.032756089708658735e-43"),
        (11.0, "1.2352365009539376545e-49"),
        (16.0, "2.8400069826278042668e-60"),
    ],
    (GAUSS_PRODUCT, 3): [
        (0.5, "0.010523607062893400592"),
        (3.0, "0.0018984030510739647684"),
        (30.0, "1.2511463940571306692e-7"),
    ],
    (GAUSS_PRODUCT, 64): [
        (8.0, "1.5070291703268756465e-43"),
        (11.0, "1.6331422100561415959e-49"),
        (16.0, "2.4654202579065887899e-60"),
    ],
    (GAUSS_PRODUCT, 256): [
        (16.0, "3.5652977739992295308e-170"),
        (22.0, "1.2945000985767192235e-194"),
        (30.0, "1.6275537445122331585e-229"),
    ],
    (STABLE_15, 3): [
        (0.5, "0.030110888779505640428"),
        (3.0, "0.00155673806470982352"),
        (30.0, "2.7682281654279293007e-8"),
    ],
    (CAUCHY, 16): [
        (5.0, "8.120543161897800283e-13"),
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


def _mixture_integral(psi_v, rho, d):
    """int_0^inf psi_v(v) g_d(rho, 1 + v^2) dv (t = 1 + v^2, psi_v = psi dt/dv) in mpmath, on panels of
    width 1/40 up to v = 3 (g_d is narrow in high d), then wider ones."""
    rho, half = mp.mpf(rho), mp.mpf(d) / 2
    breaks = [mp.mpf(i) / 40 for i in range(121)] + [4, 6, 10, 30, 100, 1000, 1e5, mp.inf]
    return mp.quad(
        lambda v: psi_v(v) * (4 * mp.pi * (1 + v * v)) ** -half * mp.exp(-(rho**2) / (4 * (1 + v * v))),
        breaks,
    )


def erfc_mixture_mu(rho, d):
    """mu_d of erfc(r): erfc(sqrt s) = int_1^inf e^(-s t) dt / (pi t sqrt(t - 1)), t = 1 + v^2."""
    with mp.workdps(40):
        return _mixture_integral(lambda v: 2 / (mp.pi * (1 + v * v)), rho, d)


def gauss_product_mixture_mu(rho, d):
    """mu_d of exp(-r^2)/(1 + r): psi(1 + u) = 1/sqrt(pi u) - erfcx(sqrt u), the inverse Laplace
    transform of 1/(1 + sqrt s); for v > 30 by erfcx's asymptotic series (the difference cancels)."""

    def psi_v(v):
        if v > 30:
            total, term = mp.mpf(0), 1 / (mp.sqrt(mp.pi) * v)
            for k in range(1, 16):
                term = -term * (2 * k - 1) / (2 * v * v)
                total -= term
            return 2 * v * total
        return 2 * v * (1 / (mp.sqrt(mp.pi) * v) - mp.exp(v * v) * mp.erfc(v))

    with mp.workdps(80):
        return _mixture_integral(psi_v, rho, d)


def _hankel_d3(k, rho):
    """mu_3(rho) = int_0^inf k(r) r sin(rho r) dr / (2 pi^2 rho) (mpmath.quadosc)."""
    return mp.quadosc(lambda r: k(r) * r * mp.sin(rho * r), [0, mp.inf], omega=rho) / (2 * mp.pi**2 * rho)


def test_gaussian_factor_references_agree_with_the_hankel_integral():
    # the stored d = 3 values from the mixture integral, against the Hankel integral of k itself
    kernels = {ERFC: mp.erfc, GAUSS_PRODUCT: lambda r: mp.exp(-r * r) / (1 + r)}
    for spec, k in kernels.items():
        with mp.workdps(30):
            stored = mp.mpf(dict(REFERENCES[(spec, 3)])[3.0])
            assert abs(_hankel_d3(k, mp.mpf(3)) / stored - 1) < 1e-18, spec


def test_gaussian_factor_reference_is_reproduced_live():
    stored = mp.mpf(dict(REFERENCES[(ERFC, 64)])[11.0])
    assert abs(erfc_mixture_mu(11.0, 64) / stored - 1) < 1e-18


def test_hidden_gaussian_factor_is_read_from_the_decay():
    # log|k| fitted at large radii: a rational rate both fits agree on, else 0
    cases = {
        "erfc(r)": 1,
        "erfc(r)**2": 2,
        "erfc(2*r)/(1 + r**2)": 4,
        "exp(-r)*erfc(r)": 1,
        "erfc(r/2)*(1 + r)": sympy.Rational(1, 4),
        "exp(-r)": 0,  # exponential: no Gaussian factor
        "exp(-r**3)": 0,  # faster than any Gaussian
        "exp(-r**2.5)": 0,
        "1/(1 + r**2)": 0,
    }
    for spec, a in cases.items():
        k = K.RadialKernel.from_string(spec)
        assert _hidden_gaussian_factor(k.expr, _length_scale(k)) == a, spec


def test_scaled_erfc_rewrites_only_a_matching_exponential():
    r = R
    assert _scaled_erfc(sympy.exp(r**2) * sympy.erfc(r)) == _ERFCX(r)
    assert _scaled_erfc(sympy.exp(2 * r**2 - r) * sympy.erfc(r) ** 2) == _ERFCX(r) ** 2 * sympy.exp(-r)
    # what is left of the exponential may be a Gaussian: bounded either way
    assert _scaled_erfc(sympy.exp(r**2 / 2) * sympy.erfc(r)) == _ERFCX(r) * sympy.exp(-(r**2) / 2)
    # an argument that is not c r: unchanged
    assert _scaled_erfc(sympy.exp(r**2) * sympy.erfc(r + 1)).has(sympy.erfc)


@pytest.mark.parametrize(
    ("spec", "d"),
    [("erfc(r)", 64), ("exp(-r)*erfc(r)", 64), ("erfc(2*r)/(1 + r**2)", 256), (GAUSS_PRODUCT, 256)],
)
def test_gaussian_factor_with_a_power_tail_is_pd_with_mass_k0(spec, d):
    # positive mixtures (psi >= 0): PD in every d with m+ = k(0) = 1; the Hankel route refused
    # these from d = 64 on (each kernel in one d, each of d = 64, 256 with two kernels)
    rep = sk.check_rkks(K.RadialKernel.from_string(spec), dim=d)
    assert rep.verdict == "PD" and rep.method.startswith("numeric:gaussian-mixture")
    assert abs(rep.mass_plus.value - 1.0) <= max(rep.mass_plus.error, 1e-12)
    assert rep.mass_plus.error <= 1e-6


def _transform(spec, d):
    k = K.RadialKernel.from_string(spec)
    info = analyze(k)
    terms = origin_terms_to_order(k, 6, 5.0) or info.origin_terms
    return gaussian_mixture_transform(
        k, d, length=_length_scale(k), smooth_at_origin=False, origin_terms=terms
    )


#: each kernel in one or two d, each of d = 3, 64, 256 with two kernels: Kanter's psi in d = 3 and 256,
#: Talbot's in d = 3, 16, 64, 256, beyond the join T in d = 256 (the d = 3 values of exp(-r^2)/(1 + r)
#: serve the check of the references against the Hankel integral above)
DENSITY_CASES = [key for key in sorted(REFERENCES) if key != (GAUSS_PRODUCT, 3)]


@pytest.mark.parametrize(("spec", "d"), DENSITY_CASES)
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


@pytest.mark.parametrize("d", [3, 64, 256])
def test_psi_negative_at_infinity_against_the_exact_transform(d):
    # (1 + 2 r) e^-r = 1 + r - ...: the term +r gives psi ~ t^(-3/2) / Gamma(-1/2) < 0 at infinity, a
    # signed mixture; its density against the exact exponential-polynomial transform (closed form)
    k = K.RadialKernel.from_string("(1 + 2*r)*exp(-r)")
    info = analyze(k)
    assert info.origin_terms[0][1] == 1.0 and info.origin_terms[0][0] > 0
    T = _transform("(1 + 2*r)*exp(-r)", d)
    exact = closed_form(k, d)
    assert T is not None and exact is not None and T.rel_error <= 1e-6
    rho = math.sqrt(d) * np.array([0.3, 1.0, 2.0])  # where the radial law lives
    la, sg = T.log_abs_mu(rho)
    ref = exact.mu(rho)
    assert np.all(sg == np.sign(ref))
    # in logs: in d = 256 the values underflow float64 only far out, not here
    assert np.max(np.abs(la - np.log(np.abs(ref)))) <= T.rel_error + exact.rel_error


def test_psi_negative_at_infinity_masses_agree_with_the_hankel_route():
    # exp(-r) log(1 + r): k(0) = 0, indefinite; the mixture and the Hankel route (independent) in d = 16
    k = K.RadialKernel.from_string("exp(-r)*log(1 + r)")
    rep = sk.check_rkks(k, dim=16)
    assert rep.verdict == "RKKS" and rep.method.startswith("numeric:gaussian-mixture")
    # m+ = m- = int |f| / 2 (k(0) = 0), f = S_15 rho^15 mu the Hankel route's radial density, by the
    # trapezoid rule in log rho (h = 1e-4) up to 1e8, then its tail f ~ C rho^-2 (mu ~ rho^-(d+1)) in
    # closed form: f(R) R
    hankel = numeric_transform(k, 16)
    x = np.linspace(math.log(1e-4), math.log(1e8), 276_312)
    f = np.abs(hankel.mu(np.exp(x))) * np.exp(log_sphere_area(16) + 16 * x)  # rho^15 d rho = rho^16 dx
    half = 0.5 * (float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x))) + float(f[-1]))
    assert abs(rep.mass_plus.value - half) <= 1e-6 and abs(rep.mass_minus.value - half) <= 1e-6


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


@pytest.mark.parametrize("d", [3, 64, 256])
def test_a_constant_beside_a_part_without_closed_form_is_an_atom(d):
    # 1 + exp(-r^1.5): from d = 64 the exponential power has no closed form, so the sum did not
    # split and the whole was refused as "does not decay"; the constant is the atom delta_0 of mass 1
    # and the rest its own kernel (mass 1: PD)
    rep = sk.check_rkks(K.RadialKernel.from_string("1 + exp(-r**1.5)"), dim=d)
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - 2.0) <= max(rep.mass_plus.error, 1e-12)


def test_a_limit_at_infinity_is_an_atom():
    # 1/(1.5 - e^-r^2) -> 2/3: the atom (2/3) delta_0 and a decaying rest (a positive Gaussian
    # mixture, sum (2/3)^(n+1) e^(-n r^2): PD, m+ = k(0) = 2); before, "does not decay" was the answer
    rep = sk.check_rkks(K.RadialKernel.from_string("1/(1.5 - exp(-r**2))"), dim=3)
    assert rep.verdict == "PD"
    assert abs(rep.mass_plus.value - 2.0) <= rep.mass_plus.error
    assert _limit_at_infinity(K.RadialKernel.from_string("1/(1.05 - exp(-r))").expr) == sympy.Rational(20, 21)
    assert _limit_at_infinity(K.RadialKernel.from_string("atan(r**2)").expr) == sympy.pi / 2
    # no limit, growth, zero, a limit approached too slowly to be read
    for spec in ("cos(r)", "1 + r", "exp(-r)", "atan(r)"):
        assert _limit_at_infinity(K.RadialKernel.from_string(spec).expr) is None, spec


def test_psi_negative_at_infinity_under_a_gaussian_factor_is_declined():
    # the lump at t = a would hold a signed head whose distance bound is poor (m+ = 1.43 +- 0.26 in
    # d = 3): declined, and the Hankel route answers in low d
    k = K.RadialKernel.from_string("exp(-r**2/2)*(2 - exp(-r))")
    assert _transform("exp(-r**2/2)*(2 - exp(-r))", 3) is None
    rep = sk.check_rkks(k, dim=3)
    assert rep.verdict == "RKKS" and not rep.method.startswith("numeric:gaussian-mixture")
    assert rep.mass_plus.error <= 1e-6


def test_the_sampler_reads_an_interpolant_of_the_mixture(monkeypatch):
    """The sampler's tables read mu at ~650,000 points for erfc(r) in d = 64 (11 s of node sums at
    ~16 us a point); the route now hands out a verified interpolant of log|mu| in log rho, which
    agrees with the node sums to 2e-12 relative (its stated error adds 4e-12), and fitting features
    evaluates the node sums at a few thousand points."""
    points, mixtures = [], set()
    real = _Mixture.values

    def counted(self, rho, *args, **kwargs):
        points.append(np.size(rho))
        mixtures.add(self)
        return real(self, rho, *args, **kwargs)

    monkeypatch.setattr(_Mixture, "values", counted)
    _cache.clear_memory()  # an earlier test in this worker may have built it (and its samplers)
    _mixture_route.cache_clear()
    kernel = sk.RadialKernel.from_string("erfc(r)")
    rf = sk.RandomFeatures(kernel, dim=64, n_components=32, method="orf", random_state=0).fit()
    tr = rf.measure_.transforms[0][1]
    assert tr.method == "numeric:gaussian-mixture+talbot"
    assert 0 < sum(points) < 20_000
    (mix,) = mixtures
    rho = np.geomspace(0.5, 60.0, 300)
    la, sg = tr.log_abs_mu(rho)
    ld, sd = real(mix, rho)
    assert np.all(sg == sd) and np.max(np.abs(la - ld)) <= 2e-12
